/* bench-util.h — what the benchmarks share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <glib.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

/* stdout line by line, also into a file: a benchmark cut by a timeout
 * (the device runs each under one) keeps the tables it printed before
 * (bench-inspector with 41 rounds lost all of its, block-buffered). */
__attribute__ ((constructor)) static void
bench_stdout_by_line (void)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
}

/* Monotonic time in microseconds with nanosecond resolution:
 * g_get_monotonic_time() rounds to whole microseconds, too coarse for
 * medians of round trips that take a few of them. */
static inline gdouble
bench_now_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int
bench_compare_doubles (const void *a,
                       const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return (x > y) - (x < y);
}

/* The median of @n samples (sorts @v in place). */
static inline gdouble
bench_median (gdouble *v,
              guint    n)
{
  qsort (v, n, sizeof *v, bench_compare_doubles);
  return v[n / 2];
}

/* Removes @path and everything under it (a benchmark's temporary cache). */
static inline void
bench_rm_rf (const gchar *path)
{
  GDir *d = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (d && (name = g_dir_read_name (d)))
    {
      gchar *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        bench_rm_rf (child);
      else
        g_unlink (child);
      g_free (child);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (path);
}

/* A GAsyncReadyCallback that keeps a reference to the result in
 * *(GAsyncResult **) user_data. */
static inline void
bench_store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* Iterates the default main context until bench_store_result() has filled
 * *result. */
static inline void
bench_wait_for (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}
