/* bench-util.h — what the benchmarks share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdlib.h>
#include <time.h>

#include <glib.h>

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
