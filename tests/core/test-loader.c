/* test-loader.c — every CUDA library is dlopen()ed on first use, through
 * one loader, and nothing maps one before it is needed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>
#include <string.h>
#include <glib/gstdio.h>

#include "core/atomr-loader-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"
#include "atomr-cublas-table-private.h"
#include "atomr-cublasLt-table-private.h"
#include "atomr-cufft-table-private.h"
#include "atomr-curand-table-private.h"
#include "atomr-cusparse-table-private.h"
#include "atomr-cudnn-table-private.h"
#include "actors/solver/atomr-cusolver-loader-private.h"

/* Names of CUDA libraries as they appear in /proc/self/maps. */
static const gchar *const cuda_libraries[] = {
  "libcuda.so", "libcudart.so", "libcublas.so", "libcublasLt.so", "libcufft.so",
  "libcurand.so", "libcusolver.so", "libcusparse.so", "libcudnn", "libnccl.so",
  "libnvrtc.so", "libnvJitLink.so",
};

static gchar *
mapped_cuda_libraries (void)
{
  g_autofree gchar *maps = NULL;
  GString *found = g_string_new (NULL);

  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (cuda_libraries); i++)
    if (strstr (maps, cuda_libraries[i]))
      g_string_append_printf (found, "%s ", cuda_libraries[i]);
  return g_string_free (found, FALSE);
}

/* Linking libatomr, looking for a device, making a host actor and
 * reading the kernel cache maps no CUDA library at all. */
static void
test_nothing_mapped_at_start (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(GListModel) entries = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("atomr-loader-XXXXXX", NULL);
  g_autofree gchar *mapped = NULL;

  g_assert_null (atomr_loader_get_path (&atomr_cublas_loader));
  g_assert_false (atomr_loader_is_loaded (&atomr_cufft_loader));
  cache = atomr_kernel_cache_new (dir);
  g_assert_nonnull (cache);
  entries = atomr_kernel_cache_list (cache, NULL);
  g_assert_nonnull (entries);
  mapped = mapped_cuda_libraries ();
  g_assert_cmpstr (mapped, ==, "");
  /* Asking for devices loads the driver where there is one, nothing else. */
  (void) atomr_device_get_count ();
  g_free (mapped);
  mapped = mapped_cuda_libraries ();
  g_assert_true (g_str_equal (mapped, "") || g_str_equal (mapped, "libcuda.so "));
  g_remove (dir);
}

typedef gboolean (*LoadFunc) (GError **error);

static void
check_table (const gchar      *library,
             LoadFunc          load,
             AtomrLoaderState *state,
             const gchar      *soname_prefix)
{
  g_autoptr(GError) error = NULL;

  if (!load (&error))
    {
      /* Not installed on this machine: the error says what was tried. */
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_assert_nonnull (strstr (error->message, library));
      g_assert_nonnull (strstr (error->message, "tried"));
      g_test_skip (error->message);
      return;
    }
  /* Every listed entry point resolved against the real library. */
  g_assert_true (atomr_loader_is_loaded (state));
  g_assert_nonnull (strstr (atomr_loader_get_path (state), soname_prefix));
  /* The outcome is remembered. */
  g_assert_true (load (NULL));
}

static gboolean
load_cusolver (GError **error)
{
  return atomr_cusolver_load (error) != NULL;
}

static void
test_tables_resolve (void)
{
  check_table ("cuBLAS", atomr_cublas_load, &atomr_cublas_loader, "libcublas.so.");
  g_assert_true (ATOMR_CUBLAS_HAS (cublasSgemm_v2));
  g_assert_true (ATOMR_CUBLAS_HAS (cublasGemmStridedBatchedEx));
  check_table ("cuBLASLt", atomr_cublasLt_load, &atomr_cublasLt_loader, "libcublasLt.so.");
  check_table ("cuFFT", atomr_cufft_load, &atomr_cufft_loader, "libcufft.so.");
  check_table ("cuRAND", atomr_curand_load, &atomr_curand_loader, "libcurand.so.");
  /* cuSPARSE: every entry point of lib/actors/sparse/cusparse.symbols. */
  check_table ("cuSPARSE", atomr_cusparse_load, &atomr_cusparse_loader, "libcusparse.so.");
  if (load_cusolver (NULL))
    g_assert_nonnull (atomr_cusolver_get ()->cusolverDnXgetrf);
  else
    g_assert_null (atomr_cusolver_get ());
}

/* ATOMR_<LIB>_LIBRARY names the one file to open; a wrong one is a clear
 * NOT_SUPPORTED naming it and the variable, and only that library fails. */
static void
test_override_missing (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) again = NULL;

      g_assert_false (atomr_cufft_load (&error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_assert_nonnull (strstr (error->message, "cuFFT"));
      g_assert_nonnull (strstr (error->message, "/nonexistent/libcufft.so.99"));
      g_assert_nonnull (strstr (error->message, "ATOMR_CUFFT_LIBRARY"));
      /* Remembered, not retried. */
      g_assert_false (atomr_cufft_load (&again));
      g_assert_cmpstr (again->message, ==, error->message);
      g_assert_false (atomr_loader_is_loaded (&atomr_cufft_loader));
      /* Another library is not affected. */
      if (g_file_test ("/usr/local/cuda/lib64/libcurand.so." G_STRINGIFY (CURAND_VER_MAJOR), G_FILE_TEST_EXISTS))
        g_assert_true (atomr_curand_load (NULL));
      return;
    }
  /* The subprocess inherits the environment. */
  g_setenv ("ATOMR_CUFFT_LIBRARY", "/nonexistent/libcufft.so.99", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("ATOMR_CUFFT_LIBRARY");
  g_test_trap_assert_passed ();
}

/* A file that is not the library (wrong entry points) fails the load with
 * the missing entry point named, and leaves no half-filled table. */
static void
test_override_wrong_library (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (atomr_cublas_load (&error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_assert_nonnull (strstr (error->message, "lacks the entry point"));
      g_assert_false (ATOMR_CUBLAS_HAS (cublasCreate_v2));
      g_assert_false (ATOMR_CUBLAS_HAS (cublasSgemm));
      return;
    }
  g_setenv ("ATOMR_CUBLAS_LIBRARY", "libglib-2.0.so.0", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("ATOMR_CUBLAS_LIBRARY");
  g_test_trap_assert_passed ();
}

/* cuDNN is optional (not on every machine): when it loads, every entry
 * point of lib/actors/cudnn/cudnn.symbols resolved.  A cuDNN actor on the
 * host test device never maps it. */
static void
test_cudnn (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
      g_autoptr(AtomrCudnnActor) actor = atomr_cudnn_actor_new (device, &error);
      g_autofree gchar *mapped = NULL;

      g_assert_no_error (error);
      g_assert_nonnull (actor);
      mapped = mapped_cuda_libraries ();
      g_assert_null (strstr (mapped, "libcudnn"));
      g_assert_false (atomr_loader_is_loaded (&atomr_cudnn_loader));
      check_table ("cuDNN", atomr_cudnn_load, &atomr_cudnn_loader, "libcudnn.so.");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* ATOMR_CUDNN_LIBRARY naming a missing file: NOT_SUPPORTED naming it. */
static void
test_cudnn_override_missing (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (atomr_cudnn_load (&error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_assert_nonnull (strstr (error->message, "cuDNN"));
      g_assert_nonnull (strstr (error->message, "/nonexistent/libcudnn.so.99"));
      g_assert_nonnull (strstr (error->message, "ATOMR_CUDNN_LIBRARY"));
      g_assert_false (atomr_loader_is_loaded (&atomr_cudnn_loader));
      return;
    }
  g_setenv ("ATOMR_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.99", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("ATOMR_CUDNN_LIBRARY");
  g_test_trap_assert_passed ();
}

/* The kernel cache keys on the NVRTC file a load would open: with
 * ATOMR_NVRTC_LIBRARY set, that file and no other (it used to name the
 * toolkit's copy while the override was loaded, so two NVRTCs shared keys). */
static void
test_nvrtc_identity_follows_override (void)
{
  if (g_test_subprocess ())
    {
      const gchar *id = atomr_nvrtc_get_identity ();

      g_assert_nonnull (id);
      g_assert_null (strstr (id, "/usr/local/cuda"));
      g_assert_null (strstr (id, ATOMR_CUDA_ROOT "/lib64"));
      g_assert_nonnull (strstr (id, "unavailable"));
      return;
    }
  g_setenv ("ATOMR_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.99", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("ATOMR_NVRTC_LIBRARY");
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/loader/nothing-mapped-at-start", test_nothing_mapped_at_start);
  g_test_add_func ("/loader/tables-resolve", test_tables_resolve);
  g_test_add_func ("/loader/override-missing", test_override_missing);
  g_test_add_func ("/loader/override-wrong-library", test_override_wrong_library);
  g_test_add_func ("/loader/nvrtc-identity-follows-override", test_nvrtc_identity_follows_override);
  g_test_add_func ("/loader/cudnn", test_cudnn);
  g_test_add_func ("/loader/cudnn-override-missing", test_cudnn_override_missing);
  return g_test_run ();
}
