/* test-gpu-cache-heal.c — the kernel cache heals from images the driver
 * rejects
 *
 * Skips without a device.  A checksummed, well-formed cache entry whose
 * CUBIN was built for another GPU generation (what a cache shared between
 * machines, or an upgrade, can hold) must not break compile_async: the
 * load fails with CUDA_ERROR_NO_BINARY_FOR_GPU / INVALID_IMAGE, the entry
 * is evicted, the source compiled once more and the kernel loaded.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "nvrtc/atomr-kernel-cache-private.h"
#include "nvrtc/atomr-module-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"

#include "nvrtc-test-sources.h"

static AtomrDevice *device;

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree gchar *child = g_build_filename (path, name, NULL);
      g_unlink (child);
    }
  g_rmdir (path);
}

static void
test_rejected_image_heals (void)
{
  g_autofree gchar *dir = NULL;
  g_autofree gchar *arch = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrCompileOptions) native = atomr_compile_options_new ();
  g_autoptr(AtomrCompileOptions) foreign = atomr_compile_options_new ();
  g_autoptr(AtomrModule) good = NULL;
  g_autoptr(AtomrModule) other = NULL;
  g_autoptr(AtomrModuleContent) bad = NULL;
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) stored = NULL;
  g_autoptr(GError) error = NULL;
  AtomrModuleContent *gc;
  const gchar *foreign_arch;
  guint compiles;

  if (device == NULL)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  dir = g_dir_make_tmp ("atomr-gpu-heal-XXXXXX", NULL);
  cache = atomr_kernel_cache_new (dir);
  arch = atomr_device_get_arch (device);
  /* CUBINs run only on their own major generation (and newer minors). */
  foreign_arch = g_str_has_prefix (arch, "sm_9") ? "sm_100" : "sm_90";
  g_test_message ("device %s, foreign CUBIN for %s", arch, foreign_arch);

  atomr_compile_options_add_name_expression (native, "saxpy");
  atomr_compile_options_set_arch (native, arch);
  atomr_compile_options_add_name_expression (foreign, "saxpy");
  atomr_compile_options_set_arch (foreign, foreign_arch);

  good = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, native, cache, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (good), ==, ATOMR_CACHE_STATUS_MISS);
  other = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, foreign, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (atomr_module_get_cubin (other));

  /* The entry of the native request, holding the foreign CUBIN. */
  gc = atomr_module_get_content (good);
  bad = atomr_module_content_new ();
  bad->cubin = g_bytes_ref (atomr_module_get_cubin (other));
  bad->log = g_strdup ("");
  bad->kernel_names = g_strdupv (gc->kernel_names);
  bad->lowered_names = g_strdupv (gc->lowered_names);
  bad->flags = g_strdupv (gc->flags);
  bad->arch = g_strdup (gc->arch);
  bad->nvrtc_version = g_strdup (gc->nvrtc_version);
  g_assert_true (atomr_kernel_cache_write_entry (cache, atomr_module_get_key (good), bad, SAXPY_SOURCE, &error));
  g_assert_no_error (error);
  atomr_kernel_cache_clear_memory (cache);

  actor = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_nvrtc_actor_set_cache (actor, cache);
  compiles = atomr_nvrtc_get_compile_count ();
  atomr_nvrtc_actor_compile_async (actor, SAXPY_SOURCE, "saxpy", native, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  kernel = atomr_nvrtc_actor_compile_finish (actor, result, &error);
  g_assert_no_error (error);
  g_assert_nonnull (kernel);
  g_assert_cmpint (atomr_module_get_cache_status (atomr_kernel_get_module (kernel)), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpuint (atomr_nvrtc_get_compile_count () - compiles, ==, 1);
  g_assert_cmpuint (atomr_kernel_cache_get_n_rejected (cache), ==, 1);

  /* The entry on disk is the native one again. */
  entry = atomr_kernel_cache_lookup (cache, atomr_module_get_key (good), &error);
  g_assert_no_error (error);
  stored = atomr_kernel_cache_entry_load_cubin (entry, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (stored, atomr_module_get_cubin (good)));
  rm_rf (dir);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  device = atomr_device_get (0, &error);
  if (device == NULL)
    g_test_message ("skipping: %s", error->message);
  g_test_add_func ("/gpu/cache/rejected-image-heals", test_rejected_image_heals);
  rc = g_test_run ();
  g_clear_object (&device);
  return rc;
}
