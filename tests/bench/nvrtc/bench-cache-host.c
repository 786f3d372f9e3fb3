/* bench-cache-host.c — the kernel cache's own cost, without a GPU
 *
 * Memory-cache hits through atomr_nvrtc_compile() (what the actor does
 * before loading a module), on any machine: NVRTC compiles the kernel once,
 * then every lookup must be answered from memory.  Useful under
 * `valgrind --tool=callgrind`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <glib/gstdio.h>

#include <atomr.h>

#define EMPTY_SOURCE "extern \"C\" __global__ void empty (void) { }\n"

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("atomr-bench-cache-XXXXXX", &error);
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  guint n = argc > 1 ? (guint) atoi (argv[1]) : 200000;
  gint64 t0;

  if (dir == NULL)
    g_error ("%s", error->message);
  cache = atomr_kernel_cache_new (dir);
  atomr_compile_options_set_arch (options, "sm_90");
  {
    g_autoptr(AtomrModule) first = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, &error);
    if (first == NULL)
      g_error ("%s", error->message);
  }
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(AtomrModule) module = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, NULL);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_MEMORY_HIT)
        g_error ("lookup %u was not a memory hit", i);
    }
  t0 = g_get_monotonic_time () - t0;
  printf ("memory-cache hit: %.3f us (mean of %u)\n", (gdouble) t0 / n, n);
  atomr_kernel_cache_gc (cache, 0, NULL, NULL, NULL);
  g_rmdir (dir);
  return 0;
}
