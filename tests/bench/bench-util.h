/* bench-util.h — what the benchmarks share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

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
