/* test-mock-device.c — the public mock device, used as an application
 * would: only public API, nobody completes fences by hand.  Every math
 * actor validates for real and answers a valid request with
 * ATOMR_ERROR_NOT_SUPPORTED.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "atomr.h"

static void
done (GObject      *source,
      GAsyncResult *result,
      gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static GAsyncResult *
wait_for (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

#define EXPECT(code, needle, finish, actor, call)                   \
  G_STMT_START {                                                    \
    GAsyncResult *res = NULL;                                       \
    g_autoptr(GError) err = NULL;                                   \
    call;                                                           \
    g_assert_false (finish (actor, wait_for (&res), &err));         \
    g_assert_error (err, ATOMR_ERROR, code);                        \
    if (strstr (err->message, needle) == NULL)                      \
      g_error ("\"%s\" does not mention \"%s\"", err->message, needle); \
    g_object_unref (res);                                           \
  } G_STMT_END

static void
test_mock_device (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) x = NULL;
  g_autoptr(GBytes) back = NULL;
  const gfloat values[4] = { 1, 2, 3, 4 };
  g_autoptr(GBytes) bytes = g_bytes_new (values, sizeof values);

  g_assert_true (atomr_device_is_mock (device));
  g_assert_cmpint (atomr_device_get_ordinal (device), ==, -1);

  /* data round trips work */
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (x, bytes, NULL, &error));
  g_assert_no_error (error);
  back = atomr_buffer_download_sync (x, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (bytes, back));
}

static void
test_mock_actors (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasActor) blas = atomr_blas_actor_new (device, &error);
  g_autoptr(AtomrBlasLtActor) lt = atomr_blas_lt_actor_new (device, &error);
  g_autoptr(AtomrFftActor) fft = atomr_fft_actor_new (device, &error);
  g_autoptr(AtomrRngActor) rng = atomr_rng_actor_new (device, ATOMR_RNG_PHILOX, &error);
  g_autoptr(AtomrSolverActor) solver = atomr_solver_actor_new (device, &error);
  g_autoptr(AtomrBuffer) a = atomr_buffer_new (device, ATOMR_DTYPE_F32, 64, &error);
  g_autoptr(AtomrBuffer) b = atomr_buffer_new (device, ATOMR_DTYPE_F32, 64, &error);
  g_autoptr(AtomrBuffer) c = atomr_buffer_new (device, ATOMR_DTYPE_F32, 64, &error);
  g_autoptr(AtomrBuffer) z = atomr_buffer_new (device, ATOMR_DTYPE_C64, 64, &error);
  g_autoptr(AtomrBuffer) ipiv = atomr_buffer_new (device, ATOMR_DTYPE_I64, 8, &error);

  g_assert_no_error (error);

  /* a bad request: the same error as on a GPU */
  EXPECT (ATOMR_ERROR_INVALID_ARGUMENT, "A and C must be different buffers",
          atomr_blas_actor_gemm_finish, blas,
          atomr_blas_actor_gemm_async (blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, 8, 8, 8, 1, 0, a, 8,
                                       b, 8, 0, 0, a, 8, NULL, done, &res));
  EXPECT (ATOMR_ERROR_INVALID_ARGUMENT, "output C and input A are the same buffer",
          atomr_blas_lt_actor_matmul_finish, lt,
          atomr_blas_lt_actor_matmul_async (lt, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, 8, 8, 8, 1, a, 8,
                                            b, 8, 0, a, 8, ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, 0,
                                            NULL, done, &res));
  /* a valid request: NOT_SUPPORTED, with no GPU */
  EXPECT (ATOMR_ERROR_NOT_SUPPORTED, "cuBLAS", atomr_blas_actor_gemm_finish, blas,
          atomr_blas_actor_gemm_async (blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, 8, 8, 8, 1, 0, a, 8,
                                       b, 8, 0, 0, c, 8, NULL, done, &res));
  EXPECT (ATOMR_ERROR_NOT_SUPPORTED, "cuBLASLt", atomr_blas_lt_actor_matmul_finish, lt,
          atomr_blas_lt_actor_matmul_async (lt, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, 8, 8, 8, 1, a, 8,
                                            b, 8, 0, c, 8, ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, 0,
                                            NULL, done, &res));
  EXPECT (ATOMR_ERROR_NOT_SUPPORTED, "cuFFT", atomr_fft_actor_execute_finish, fft,
          atomr_fft_actor_execute_async (fft, NULL, ATOMR_FFT_FORWARD, z, z, NULL, done, &res));
  EXPECT (ATOMR_ERROR_NOT_SUPPORTED, "cuRAND", atomr_rng_actor_fill_finish, rng,
          atomr_rng_actor_fill_async (rng, a, ATOMR_RNG_UNIFORM, 0, 0, NULL, done, &res));
  EXPECT (ATOMR_ERROR_NOT_SUPPORTED, "cuSOLVER", atomr_solver_actor_lu_finish, solver,
          atomr_solver_actor_lu_async (solver, a, 8, 8, 8, ipiv, NULL, done, &res));
}

/* Bindings can make actors with a bare g_object_new(): the math actors'
 * own properties and setters must answer, never crash. */
static void
test_bare_actors (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) ws = atomr_buffer_new (device, ATOMR_DTYPE_U8, 8192, &error);
  g_autoptr(AtomrBlasLtActor) lt = g_object_new (ATOMR_TYPE_BLAS_LT_ACTOR, NULL);
  g_autoptr(AtomrFftActor) fft = g_object_new (ATOMR_TYPE_FFT_ACTOR, NULL);
  g_autoptr(AtomrRngActor) rng = g_object_new (ATOMR_TYPE_RNG_ACTOR, NULL);
  g_autoptr(AtomrSolverActor) solver = g_object_new (ATOMR_TYPE_SOLVER_ACTOR, NULL);

  g_assert_no_error (error);
  g_assert_false (atomr_blas_lt_actor_set_workspace (lt, ws, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "the actor has no device"));
  g_assert_true (atomr_blas_lt_actor_set_workspace (lt, NULL, NULL));
  atomr_blas_lt_actor_set_cache_capacity (lt, 3);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_capacity (lt), ==, 3);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_evictions (lt), ==, 0);
  g_assert_cmpuint (atomr_blas_lt_actor_get_workspace_size (lt), ==, 32u << 20);
  g_assert_cmpuint (atomr_fft_actor_get_work_area_size (fft), ==, 0);
  atomr_rng_actor_set_seed (rng, 5);
  g_assert_cmpuint (atomr_rng_actor_get_seed (rng), ==, 5);
  g_assert_cmpuint (atomr_solver_actor_get_workspace_size (solver), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mock-device/buffers", test_mock_device);
  g_test_add_func ("/mock-device/math-actors", test_mock_actors);
  g_test_add_func ("/mock-device/bare-actors", test_bare_actors);
  return g_test_run ();
}
