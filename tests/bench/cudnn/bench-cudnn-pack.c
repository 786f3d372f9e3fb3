/* bench-cudnn-pack.c — the host cost of a cuDNN variant pack, no GPU needed
 *
 * The backend path of the cuDNN actor's convolutions executes a cached
 * plan with a variant pack (the uids, device pointers and workspace of one
 * call).  A finalized pack cannot be changed (cuDNN answers
 * CUDNN_STATUS_BAD_PARAM to a set after the finalize; checked here), so a
 * new pointer means a new pack: create, three attributes, finalize,
 * destroy.  The actor keeps the last pack of each plan and reuses it while
 * the pointers are the same; this prints what that saves per call.  Only
 * host calls: cuDNN needs no device for them.
 *
 *   build/tests/bench/cudnn/bench-cudnn-pack
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-cudnn-table-private.h"

#include <atomr.h>

#define N 200000

static cudnnBackendDescriptor_t
pack_new (const gint64 *uids, void **ptrs, void *ws)
{
  cudnnBackendDescriptor_t p = NULL;

  if (cudnnBackendCreateDescriptor (CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &p) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendSetAttribute (p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids) ||
      cudnnBackendSetAttribute (p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs) ||
      cudnnBackendSetAttribute (p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws) ||
      cudnnBackendFinalize (p) != CUDNN_STATUS_SUCCESS)
    g_error ("bench-cudnn-pack: cannot build a variant pack");
  return p;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  const gint64 uids[3] = { 1, 2, 3 };
  void *ptrs[3] = { (void *) 0x10000, (void *) 0x20000, (void *) 0x30000 };
  void *ws = (void *) 0x40000;
  gdouble best = G_MAXDOUBLE;
  cudnnBackendDescriptor_t p;
  cudnnStatus_t st;

  if (!atomr_cudnn_load (&error))
    {
      g_print ("bench-cudnn-pack: no cuDNN (%s)\n", error->message);
      return 0;
    }
  for (guint rep = 0; rep < 5; rep++)
    {
      gint64 t0 = g_get_monotonic_time ();

      for (guint i = 0; i < N; i++)
        cudnnBackendDestroyDescriptor (pack_new (uids, ptrs, ws));
      best = MIN (best, (gdouble) (g_get_monotonic_time () - t0) / N);
    }
  p = pack_new (uids, ptrs, ws);
  st = cudnnBackendSetAttribute (p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
  cudnnBackendDestroyDescriptor (p);
  g_print ("# cuDNN %zu\n", (gsize) cudnnGetVersion ());
  g_print ("variant pack of 3 tensors (create, 3 attributes, finalize, destroy): %.3f us per call "
           "(best of 5 x %d); reusing the last pack: 0\n", best, N);
  g_print ("setting an attribute of a finalized pack: %s\n", cudnnGetErrorString (st));
  return 0;
}
