/* bench-pool.c — allocate + free of 1 MiB in a loop, in one run:
 *
 *   cuMemAlloc + cuMemFree                  the raw synchronous baseline
 *   cuMemAllocAsync + cuMemFreeAsync        the driver's default pool
 *   cuMemAllocFromPoolAsync + cuMemFreeAsync our pool, raw
 *   atomr_buffer_new + g_object_unref       the whole buffer path
 *
 * Prints the median time of one allocate + free pair and its ratio to the
 * cuMemAlloc baseline.  tests/bench/core/bench_pool_torch.py measures
 * PyTorch's caching allocator against atomr in one process on the device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-device-private.h"
#include "core/atomr-memory-pool-private.h"
#include "core/atomr-stream-private.h"

#define N_ITER 20000
#define N_WARM 200
#define SIZE   (1 << 20)

typedef enum { RAW_SYNC, RAW_DEFAULT_POOL, RAW_OUR_POOL, BUFFER_PATH } Mode;

static gdouble
run (AtomrDevice *device, Mode mode)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  g_autoptr(AtomrStream) utility = NULL;
  gdouble *t = g_new (gdouble, N_ITER);
  gdouble m;
  CUmemoryPool handle;

  atomr_device_enter (device, NULL);
  utility = atomr_device_get_utility_stream (device, NULL);
  handle = atomr_memory_pool_get_handle (atomr_device_get_memory_pool (device), device);
  for (guint i = 0; i < N_ITER + N_WARM; i++)
    {
      gdouble t0 = bench_now_us ();
      CUdeviceptr ptr = 0;

      switch (mode)
        {
        case RAW_SYNC:
          cu->cuMemAlloc (&ptr, SIZE);
          cu->cuMemFree (ptr);
          break;
        case RAW_DEFAULT_POOL:
          cu->cuMemAllocAsync (&ptr, SIZE, utility->handle);
          cu->cuMemFreeAsync (ptr, utility->handle);
          break;
        case RAW_OUR_POOL:
          if (handle)
            cu->cuMemAllocFromPoolAsync (&ptr, SIZE, handle, utility->handle);
          else
            cu->cuMemAllocAsync (&ptr, SIZE, utility->handle);
          cu->cuMemFreeAsync (ptr, utility->handle);
          break;
        case BUFFER_PATH:
          {
            AtomrBuffer *b = atomr_buffer_new (device, ATOMR_DTYPE_U8, SIZE, NULL);
            g_object_unref (b);
          }
          break;
        }
      if (i >= N_WARM)
        t[i - N_WARM] = bench_now_us () - t0;
    }
  cu->cuStreamSynchronize (utility->handle);
  atomr_device_leave (device);
  m = bench_median (t, N_ITER);
  g_free (t);
  return m;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  gdouble base, dflt, pool, buf;
  AtomrMemoryPool *mp;

  if (device == NULL)
    {
      g_print ("bench-pool: no CUDA device (%s)\n", error->message);
      return 0;
    }
  base = run (device, RAW_SYNC);
  dflt = run (device, RAW_DEFAULT_POOL);
  pool = run (device, RAW_OUR_POOL);
  buf = run (device, BUFFER_PATH);
  mp = atomr_device_get_memory_pool (device);
  g_print ("bench-pool: allocate + free of 1 MiB, median of %d (µs and ratio to cuMemAlloc+cuMemFree)\n", N_ITER);
  g_print ("  cuMemAlloc + cuMemFree (baseline)        %8.3f µs  1.000\n", base);
  g_print ("  default pool, cuMemAllocAsync            %8.3f µs  %.3f\n", dflt, dflt / base);
  g_print ("  our pool, cuMemAllocFromPoolAsync (raw)  %8.3f µs  %.3f\n", pool, pool / base);
  g_print ("  atomr_buffer_new + g_object_unref        %8.3f µs  %.3f\n", buf, buf / base);
  g_print ("  atomr / raw pool                        %8s     %.3f\n", "", buf / pool);
  g_print ("  block cache: %" G_GUINT64_FORMAT " of %d buffer allocations reused a cached block\n",
           atomr_memory_pool_get_cache_hits (mp), N_ITER + N_WARM);
  g_print ("  pool: reserved %" G_GUINT64_FORMAT " used %" G_GUINT64_FORMAT " high-water %"
           G_GUINT64_FORMAT " bytes\n", atomr_memory_pool_get_reserved (mp),
           atomr_memory_pool_get_used (mp), atomr_memory_pool_get_high_water (mp));
  return 0;
}
