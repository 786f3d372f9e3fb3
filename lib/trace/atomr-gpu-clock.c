/* atomr-gpu-clock.c — GPU timing events on the host's clock
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Calibration: record a timing event on an idle stream of our own and spin
 * on cuEventQuery() until it has passed.  The GPU stamped it between the
 * host times before the record and after the query saw it; the midpoint is
 * the estimate, good to half that window (a few µs on an H100).  The
 * window is kept small by retrying (at most three times) when it is wide.
 * Runs at most once a second per device, on the thread of whichever timed
 * actor needs it first.
 */
#include "config.h"

#include "core/atomr-launch-info.h"
#include "trace/atomr-gpu-clock-private.h"

#define RECALIBRATE_NS   G_GINT64_CONSTANT (1000000000)   /* 1 s */
#define GOOD_WINDOW_NS   20000                              /* 20 µs */
#define GIVE_UP_NS       5000000                            /* 5 ms of spinning */

struct _AtomrGpuClock
{
  gatomicrefcount ref;
  AtomrDevice    *device;      /* strong */
  guint           generation;
  CUevent         event;       /* timing event, stamped at host_ns */
  gint64          host_ns;
};

typedef struct
{
  AtomrDevice   *device;       /* identity only */
  guint          generation;
  CUstream       stream;       /* calibration stream of that generation */
  AtomrGpuClock *clock;
} DeviceClock;

G_LOCK_DEFINE_STATIC (clocks);
static GPtrArray *clocks;      /* DeviceClock*, one per device ever timed */

static AtomrGpuClock *
clock_ref (AtomrGpuClock *clock)
{
  g_atomic_ref_count_inc (&clock->ref);
  return clock;
}

void
atomr_gpu_clock_release (AtomrGpuClock *clock)
{
  if (clock == NULL || !g_atomic_ref_count_dec (&clock->ref))
    return;
  /* Returns to the pool of its generation, or is dropped if that context
   * is gone (the device knows which). */
  atomr_device_return_event (clock->device, clock->generation, clock->event, ATOMR_EVENT_TIMING);
  g_object_unref (clock->device);
  g_free (clock);
}

static AtomrGpuClock *
calibrate (AtomrDevice *device,
           guint        generation,
           CUstream     stream)
{
  AtomrGpuClock *clock;
  CUevent event;
  gint64 t0 = 0, t1 = 0;

  event = atomr_device_take_event (device, ATOMR_EVENT_TIMING, NULL);
  if (event == NULL)
    return NULL;
  for (guint attempt = 0; attempt < 3; attempt++)
    {
      CUresult res;

      t0 = atomr_launch_info_now_ns ();
      if (ATOMR_CU->cuEventRecord (event, stream) != CUDA_SUCCESS)
        goto fail;
      while ((res = ATOMR_CU->cuEventQuery (event)) == CUDA_ERROR_NOT_READY)
        if (atomr_launch_info_now_ns () - t0 > GIVE_UP_NS)
          break;
      t1 = atomr_launch_info_now_ns ();
      if (res == CUDA_ERROR_NOT_READY)
        res = ATOMR_CU->cuEventSynchronize (event);
      if (res != CUDA_SUCCESS)
        goto fail;
      if (t1 - t0 <= GOOD_WINDOW_NS)
        break;
    }

  clock = g_new0 (AtomrGpuClock, 1);
  g_atomic_ref_count_init (&clock->ref);
  clock->device = g_object_ref (device);
  clock->generation = generation;
  clock->event = event;
  clock->host_ns = t0 + (t1 - t0) / 2;
  return clock;

fail:
  atomr_device_return_event (device, generation, event, ATOMR_EVENT_TIMING);
  return NULL;
}

AtomrGpuClock *
atomr_gpu_clock_acquire (AtomrDevice *device,
                         guint        generation)
{
  DeviceClock *dc = NULL;
  AtomrGpuClock *clock = NULL, *old = NULL;
  gint64 now = atomr_launch_info_now_ns ();

  if (atomr_device_is_host (device))
    return NULL;

  /* The lock is held across calibration (rare: once a second): two
   * actors of one device then share the same reference. */
  G_LOCK (clocks);
  if (clocks == NULL)
    clocks = g_ptr_array_new ();
  for (guint i = 0; i < clocks->len; i++)
    if (((DeviceClock *) g_ptr_array_index (clocks, i))->device == device)
      dc = g_ptr_array_index (clocks, i);
  if (dc == NULL)
    {
      /* Devices are per-ordinal singletons that live as long as the
       * process, so the table never needs to forget one. */
      dc = g_new0 (DeviceClock, 1);
      dc->device = device;
      g_ptr_array_add (clocks, dc);
    }
  if (dc->generation != generation || dc->stream == NULL)
    {
      /* A stream of an older generation died with its context. */
      dc->stream = NULL;
      old = g_steal_pointer (&dc->clock);
      if (ATOMR_CU->cuStreamCreate (&dc->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        dc->stream = NULL;
      dc->generation = generation;
    }
  if (dc->clock && now - dc->clock->host_ns < RECALIBRATE_NS)
    clock = clock_ref (dc->clock);
  else if (dc->stream)
    {
      clock = calibrate (device, generation, dc->stream);
      if (clock)
        {
          if (old == NULL)
            old = g_steal_pointer (&dc->clock);
          else
            g_clear_pointer (&dc->clock, atomr_gpu_clock_release);
          dc->clock = clock_ref (clock);
        }
    }
  G_UNLOCK (clocks);
  atomr_gpu_clock_release (old);
  return clock;
}

gboolean
atomr_gpu_clock_convert (AtomrGpuClock *clock,
                         AtomrFence    *fence,
                         gint64        *start_ns,
                         gint64        *end_ns)
{
  float to_start = 0.f, to_end = 0.f;
  gboolean ok;

  if (clock == NULL || fence->start == NULL || fence->event == NULL ||
      fence->generation != clock->generation)
    return FALSE;
  if (!atomr_device_hold (clock->device, clock->generation))
    return FALSE;
  ok = ATOMR_CU->cuEventElapsedTime (&to_start, clock->event, fence->start) == CUDA_SUCCESS &&
       ATOMR_CU->cuEventElapsedTime (&to_end, clock->event, fence->event) == CUDA_SUCCESS;
  atomr_device_release (clock->device);
  if (!ok || to_end < to_start)
    return FALSE;
  *start_ns = clock->host_ns + (gint64) ((gdouble) to_start * 1e6);
  *end_ns = clock->host_ns + (gint64) ((gdouble) to_end * 1e6);
  return TRUE;
}
