/* bench-cache-hits.c — the kernel cache's hit paths on the CPU, no NVRTC
 *
 * Fills a cache with a fake compiled image (random bytes standing in for a
 * CUBIN: nothing here loads it), then times, in nanoseconds per hit:
 *   - memory hits through atomr_nvrtc_compile() (what the NVRTC actor and
 *     bench-nvrtc's "memory-cache hit" do),
 *   - memory hits of atomr_kernel_cache_lookup_request() alone,
 *   - the same with a source including a header (validated by inotify
 *     generation, or by stat() with ATOMR_CACHE_STAT_HEADERS=1),
 *   - disk hits (memory level off) for a small and a 1 MiB image,
 *   - the NVRTC actor's compile_module_async() on the host test device:
 *     memory hit, worker thread, reply on the main context (round trip).
 * Runs anywhere (no GPU, NVRTC never loaded); meant for
 * `valgrind --tool=callgrind build/tests/bench/nvrtc/bench-cache-hits 2000`
 * too, which then counts instructions per hit.
 *
 * Usage: bench-cache-hits [N [memory|disk]]   (N memory hits; disk hits
 * are N/20; the second argument runs only those)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-device-private.h"
#include "nvrtc/atomr-compile-options-private.h"
#include "nvrtc/atomr-kernel-cache-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"

#define SOURCE "extern \"C\" __global__ void empty (void) { }\n"
#define SOURCE_WITH_HEADER "#include \"bench.h\"\nextern \"C\" __global__ void k (int *x) { x[0] = V; }\n"

/* Stores a fake compile of (@source, @options) in @cache exactly under the
 * key atomr_nvrtc_compile() will look up. */
static void
store_fake (AtomrKernelCache    *cache,
            const gchar         *source,
            AtomrCompileOptions *options,
            gsize                image_size)
{
  g_auto(GStrv) flags = atomr_compile_options_get_flags (options);
  AtomrCacheKeyInput input = {
    .source = source,
    .program_name = NULL,
    .kernel_names = atomr_compile_options_get_name_expressions (options),
    .flags = (const gchar * const *) flags,
    .arch = atomr_compile_options_get_arch (options),
    .link_objects = atomr_compile_options_get_link_objects (options),
  };
  g_autoptr(AtomrCacheRequest) request = NULL;
  g_autoptr(AtomrModule) module = atomr_kernel_cache_lookup_request (cache, &input, &request);
  g_autoptr(AtomrModuleContent) content = NULL;
  guint8 *image;

  if (module != NULL || request == NULL)
    g_error ("store_fake: expected a miss that can be keyed");
  content = atomr_module_content_new ();
  image = g_malloc (image_size);
  for (gsize i = 0; i < image_size; i++)
    image[i] = (guint8) g_random_int ();
  content->cubin = g_bytes_new_take (image, image_size);
  content->log = g_strdup ("");
  content->arch = g_strdup (input.arch);
  content->flags = g_strdupv (flags);
  content->kernel_names = g_strdupv ((gchar **) input.kernel_names);
  content->lowered_names = g_strdupv ((gchar **) input.kernel_names);
  content->nvrtc_version = g_strdup ("fake");
  atomr_kernel_cache_store (cache, request, content, source);
}

static void
expect (AtomrModule      *module,
        AtomrCacheStatus  status,
        const gchar      *what)
{
  if (module == NULL || atomr_module_get_cache_status (module) != status)
    g_error ("%s: not a %s", what, status == ATOMR_CACHE_STATUS_MEMORY_HIT ? "memory hit" : "disk hit");
}

static gdouble
compile_hits (const gchar         *source,
              AtomrCompileOptions *options,
              AtomrKernelCache    *cache,
              AtomrCacheStatus     status,
              guint                n)
{
  gdouble t0 = 0;

  for (guint i = 0; i < n + n / 10; i++)
    {
      g_autoptr(AtomrModule) module = NULL;
      if (i == n / 10)
        t0 = bench_now_us ();
      module = atomr_nvrtc_compile (source, NULL, options, cache, NULL);
      expect (module, status, "atomr_nvrtc_compile");
    }
  return (bench_now_us () - t0) * 1000.0 / n;
}

static gdouble
lookup_hits (const gchar         *source,
             AtomrCompileOptions *options,
             AtomrKernelCache    *cache,
             guint                n)
{
  g_auto(GStrv) flags = atomr_compile_options_get_flags (options);
  AtomrCacheKeyInput input = {
    .source = source,
    .kernel_names = atomr_compile_options_get_name_expressions (options),
    .flags = (const gchar * const *) flags,
    .arch = atomr_compile_options_get_arch (options),
    .link_objects = atomr_compile_options_get_link_objects (options),
  };
  gdouble t0 = 0;

  for (guint i = 0; i < n + n / 10; i++)
    {
      g_autoptr(AtomrCacheRequest) request = NULL;
      g_autoptr(AtomrModule) module = NULL;
      if (i == n / 10)
        t0 = bench_now_us ();
      module = atomr_kernel_cache_lookup_request (cache, &input, &request);
      expect (module, ATOMR_CACHE_STATUS_MEMORY_HIT, "lookup_request");
    }
  return (bench_now_us () - t0) * 1000.0 / n;
}

static gdouble
actor_hits (AtomrKernelCache    *cache,
            AtomrCompileOptions *options,
            guint                n)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrNvrtcActor) actor = atomr_nvrtc_actor_new (device, &error);
  gdouble *t = g_new (gdouble, n);
  gdouble median;

  if (actor == NULL)
    g_error ("%s", error->message);
  atomr_nvrtc_actor_set_cache (actor, cache);
  for (guint i = 0; i < n + n / 10; i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(AtomrModule) module = NULL;
      gdouble t0 = bench_now_us ();

      atomr_nvrtc_actor_compile_module_async (actor, SOURCE, options, NULL, bench_store_result, &result);
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);
      module = atomr_nvrtc_actor_compile_module_finish (actor, result, &error);
      expect (module, ATOMR_CACHE_STATUS_MEMORY_HIT, "compile_module_async");
      if (i >= n / 10)
        t[i - n / 10] = (bench_now_us () - t0) * 1000.0;
    }
  median = bench_median (t, n);
  g_free (t);
  return median;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("atomr-bench-hits-XXXXXX", &error);
  g_autofree gchar *inc = NULL;
  g_autofree gchar *header = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrKernelCache) disk_only = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrCompileOptions) big = NULL;
  g_autoptr(AtomrCompileOptions) with_header = NULL;
  guint n = argc > 1 ? (guint) atoi (argv[1]) : 200000;
  guint n_disk = MAX (n / 20, 10);
  const gchar *only = argc > 2 ? argv[2] : "";
  guint loads, compiles;
  gboolean memory = g_strcmp0 (only, "disk") != 0, disk = g_strcmp0 (only, "memory") != 0;

  if (dir == NULL)
    g_error ("%s", error->message);
  if (g_getenv ("ATOMR_CACHE_DISABLE"))
    g_error ("unset ATOMR_CACHE_DISABLE to measure the cache");
  cache = atomr_kernel_cache_new (dir);
  disk_only = atomr_kernel_cache_new (dir);
  atomr_kernel_cache_set_memory_capacity (disk_only, 0);
  atomr_compile_options_set_arch (options, "sm_90");
  atomr_compile_options_add_name_expression (options, "empty");
  big = atomr_compile_options_copy (options);
  atomr_compile_options_add_define (big, "BIG", "1");

  inc = g_build_filename (dir, "include", NULL);
  g_mkdir_with_parents (inc, 0755);
  header = g_build_filename (inc, "bench.h", NULL);
  g_file_set_contents (header, "#define V 7\n", -1, NULL);
  with_header = atomr_compile_options_copy (options);
  atomr_compile_options_add_include_path (with_header, inc);

  store_fake (cache, SOURCE, options, 8 * 1024);
  store_fake (cache, SOURCE, big, 1024 * 1024);
  store_fake (cache, SOURCE_WITH_HEADER, with_header, 8 * 1024);
  /* Storing asks NVRTC its version for the manifest (a real store follows
   * a compile, which loaded it anyway); the hits below must not call it. */
  loads = atomr_nvrtc_get_load_count ();
  compiles = atomr_nvrtc_get_compile_count ();

  printf ("# bench-cache-hits: kernel cache hit paths on the CPU (fake images, no NVRTC)\n");
  printf ("%-58s %10s\n", "path", "ns_per_hit");
  if (memory)
    {
      printf ("%-58s %10.0f\n", "memory hit, atomr_nvrtc_compile()",
              compile_hits (SOURCE, options, cache, ATOMR_CACHE_STATUS_MEMORY_HIT, n));
      printf ("%-58s %10.0f\n", "memory hit, lookup_request() alone",
              lookup_hits (SOURCE, options, cache, n));
      printf ("%-58s %10.0f\n", "memory hit, one header, atomr_nvrtc_compile()",
              compile_hits (SOURCE_WITH_HEADER, with_header, cache, ATOMR_CACHE_STATUS_MEMORY_HIT, n));
      printf ("%-58s %10.0f\n", "memory hit, actor compile_module_async round trip (median)",
              actor_hits (cache, options, MAX (n / 100, 10)));
    }
  if (disk)
    {
      printf ("%-58s %10.0f\n", "disk hit, 8 KiB image, atomr_nvrtc_compile()",
              compile_hits (SOURCE, options, disk_only, ATOMR_CACHE_STATUS_DISK_HIT, n_disk));
      printf ("%-58s %10.0f\n", "disk hit, 1 MiB image, atomr_nvrtc_compile()",
              compile_hits (SOURCE, big, disk_only, ATOMR_CACHE_STATUS_DISK_HIT, n_disk));
    }
  if (atomr_nvrtc_get_load_count () != loads || atomr_nvrtc_get_compile_count () != compiles)
    g_error ("NVRTC was loaded or called by a hit (loads %u -> %u, compiles %u -> %u)",
             loads, atomr_nvrtc_get_load_count (), compiles, atomr_nvrtc_get_compile_count ());

  g_clear_object (&disk_only);
  g_clear_object (&cache);
  bench_rm_rf (dir);
  return 0;
}
