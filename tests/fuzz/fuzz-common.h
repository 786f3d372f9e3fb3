/* fuzz-common.h — shared by the libFuzzer targets and their seed replay
 *
 * Each target defines FUZZ_ENTRY: LLVMFuzzerTestOneInput in the fuzzing
 * build (-Dfuzzing=true, clang, -fsanitize=fuzzer), a named function that
 * test-fuzz-replay calls with every file of tests/fuzz/corpus/TARGET in
 * the normal build.  A target aborts (g_error) on a broken invariant;
 * bad input itself must only ever produce a GError.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int FUZZ_ENTRY (const uint8_t *data, size_t size);

/* Once per process: private runtime and cache directories, so that the
 * targets never touch the user's. */
static inline void
fuzz_isolate (void)
{
  static gsize done;

  if (g_once_init_enter (&done))
    {
      gchar *dir = g_dir_make_tmp ("atomr-fuzz-XXXXXX", NULL);
      gchar *cache = g_build_filename (dir, "cache", NULL);

      g_setenv ("XDG_RUNTIME_DIR", dir, TRUE);
      g_setenv ("XDG_CACHE_HOME", dir, TRUE);
      g_setenv ("ATOMR_CACHE_DIR", cache, TRUE);
      g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
      g_free (cache);
      g_free (dir);
      g_once_init_leave (&done, 1);
    }
}
