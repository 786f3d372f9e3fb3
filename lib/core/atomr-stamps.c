/* atomr-stamps.c — where an operation's host time goes (ATOMR_ENVELOPE_STAMPS)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#include "atomr-stamps-private.h"

gint atomr_stamps_state = -1;

static const gchar *const stamp_names[ATOMR_N_STAMPS] = {
  "op_new", "submit", "mailbox", "op_run", "entered", "enqueued", "run_end", "submit_end",
  "done", "completed",
};

/* (previous, this) on one thread: sums of ticks and counts, atomic */
static guint64 sums[ATOMR_N_STAMPS][ATOMR_N_STAMPS];
static guint64 counts[ATOMR_N_STAMPS][ATOMR_N_STAMPS];

static __thread gint tls_prev = -1;
static __thread guint64 tls_prev_ticks;

/* ticks -> ns, measured between the first use and now */
static guint64 ticks0, ns0;

static guint64
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

static inline guint64
ticks (void)
{
#ifdef HAVE_TSC
  return __rdtsc ();
#else
  return mono_ns ();
#endif
}

static gdouble
ns_per_tick (void)
{
#ifdef HAVE_TSC
  guint64 t = ticks (), n = mono_ns ();
  if (t <= ticks0 || n <= ns0)
    return 1.0;
  return (gdouble) (n - ns0) / (gdouble) (t - ticks0);
#else
  return 1.0;
#endif
}

void
atomr_stamps_print (FILE        *out,
                    const gchar *title)
{
  gdouble scale = ns_per_tick ();

  fprintf (out, "# atomr envelope stamps%s%s: mean ns from one step to the next on one thread (count)\n",
           title ? ", " : "", title ? title : "");
  for (guint a = 0; a < ATOMR_N_STAMPS; a++)
    for (guint b = 0; b < ATOMR_N_STAMPS; b++)
      {
        guint64 n = __atomic_load_n (&counts[a][b], __ATOMIC_RELAXED);
        if (n > 0)
          fprintf (out, "#   %-10s -> %-10s %10.1f ns  (%" G_GUINT64_FORMAT ")\n", stamp_names[a],
                   stamp_names[b], scale * (gdouble) __atomic_load_n (&sums[a][b], __ATOMIC_RELAXED) / (gdouble) n,
                   n);
      }
}

static void
print_at_exit (void)
{
  atomr_stamps_print (stderr, NULL);
}

static void
stamps_init (gboolean enabled, gboolean print_at_exit_too)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      ticks0 = ticks ();
      ns0 = mono_ns ();
      if (print_at_exit_too)
        atexit (print_at_exit);
      g_once_init_leave (&once, 1);
    }
  g_atomic_int_set (&atomr_stamps_state, enabled ? 1 : 0);
}

void
atomr_stamp_slow (AtomrStamp stamp)
{
  guint64 now;

  if (G_UNLIKELY (g_atomic_int_get (&atomr_stamps_state) < 0))
    {
      gboolean on = g_strcmp0 (g_getenv ("ATOMR_ENVELOPE_STAMPS"), "1") == 0;
      stamps_init (on, on);
    }
  if (g_atomic_int_get (&atomr_stamps_state) == 0)
    return;
  now = ticks ();
  if (tls_prev >= 0 && now >= tls_prev_ticks)
    {
      __atomic_fetch_add (&sums[tls_prev][stamp], now - tls_prev_ticks, __ATOMIC_RELAXED);
      __atomic_fetch_add (&counts[tls_prev][stamp], 1, __ATOMIC_RELAXED);
    }
  tls_prev = stamp;
  tls_prev_ticks = ticks ();   /* the bookkeeping above is not the next step's */
}

void
atomr_stamps_set_enabled (gboolean enabled)
{
  stamps_init (enabled, FALSE);
  tls_prev = -1;
}

void
atomr_stamps_reset (void)
{
  for (guint a = 0; a < ATOMR_N_STAMPS; a++)
    for (guint b = 0; b < ATOMR_N_STAMPS; b++)
      {
        __atomic_store_n (&sums[a][b], 0, __ATOMIC_RELAXED);
        __atomic_store_n (&counts[a][b], 0, __ATOMIC_RELAXED);
      }
  tls_prev = -1;
}

guint64
atomr_stamps_get_count (AtomrStamp from,
                        AtomrStamp to)
{
  g_return_val_if_fail (from < ATOMR_N_STAMPS && to < ATOMR_N_STAMPS, 0);
  return __atomic_load_n (&counts[from][to], __ATOMIC_RELAXED);
}

gdouble
atomr_stamps_get_mean_ns (AtomrStamp from,
                          AtomrStamp to)
{
  guint64 n;

  g_return_val_if_fail (from < ATOMR_N_STAMPS && to < ATOMR_N_STAMPS, 0.0);
  n = __atomic_load_n (&counts[from][to], __ATOMIC_RELAXED);
  return n ? ns_per_tick () * (gdouble) __atomic_load_n (&sums[from][to], __ATOMIC_RELAXED) / (gdouble) n : 0.0;
}
