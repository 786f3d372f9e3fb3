/* test-cuda-abi.c — every driver entry point is resolved with the ABI it
 * is called with.  Runs against fake-libcuda.so (ATOMR_CUDA_DRIVER), which
 * answers cuGetProcAddress() like the real driver: the newest variant
 * introduced at or before the version asked for.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dlfcn.h>
#include <glib.h>

#include "core/atomr-cuda-private.h"

/* CUDA 13's cuda.h declares cuCtxSynchronize (void) but cuGetProcAddress
 * for 13000 gives cuCtxSynchronize_v2 (CUcontext).  The loader asked for
 * CUDA_VERSION, so atomr_device_synchronize() called the one-argument
 * variant without its argument and failed on the H100
 * (/gpu/core/pool-cache-reuse). */
static void
test_ctx_synchronize_abi (void)
{
  g_autoptr(GError) error = NULL;
  const AtomrCudaDriver *cu;
  void *fake;
  int *void_calls, *ctx_calls, *requested;

  cu = atomr_cuda_load (&error);
  g_assert_no_error (error);
  g_assert_nonnull (cu);

  fake = dlopen (FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
  g_assert_nonnull (fake);
  void_calls = dlsym (fake, "fake_cuda_sync_void_calls");
  ctx_calls = dlsym (fake, "fake_cuda_sync_ctx_calls");
  requested = dlsym (fake, "fake_cuda_sync_requested_version");
  g_assert_nonnull (void_calls);
  g_assert_nonnull (ctx_calls);
  g_assert_nonnull (requested);

  g_test_message ("cuCtxSynchronize resolved for CUDA %d (built with CUDA %d)",
                  *requested, CUDA_VERSION);
  g_assert_cmpint (*requested, <, 13000);
  g_assert_cmpint (cu->cuCtxSynchronize (), ==, CUDA_SUCCESS);
  g_assert_cmpint (*void_calls, ==, 1);
  g_assert_cmpint (*ctx_calls, ==, 0);
  dlclose (fake);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_unsetenv ("ATOMR_DISABLE_CUDA");
  g_setenv ("ATOMR_CUDA_DRIVER", FAKE_LIBCUDA, TRUE);

  g_test_add_func ("/cuda-abi/ctx-synchronize", test_ctx_synchronize_abi);

  return g_test_run ();
}
