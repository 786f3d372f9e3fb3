/* test-guard.h — a per-test time limit for test programs
 *
 * A test that hangs (a wait that never ends) is stopped with a message
 * naming the test instead of taking the runner's whole time limit:
 *
 *   test_guard_start (60);     at the top of a test function
 *   ...
 *   test_guard_stop ();        at its end (also stopped by the next start)
 *
 * The guard is a thread that aborts the process when the limit passes;
 * it never looks at how long a test took otherwise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

typedef struct
{
  GMutex   lock;
  GCond    cond;
  GThread *thread;
  gboolean stop;
  gint64   deadline;      /* monotonic, µs */
  guint    seconds;
  gchar   *path;
} TestGuard;

static TestGuard test_guard;

static gpointer
test_guard_main (gpointer data)
{
  TestGuard *g = data;

  g_mutex_lock (&g->lock);
  while (!g->stop)
    {
      if (!g_cond_wait_until (&g->cond, &g->lock, g->deadline) && !g->stop)
        {
          fprintf (stderr, "Bail out! %s: still running after %u s: it hangs (test guard)\n",
                   g->path, g->seconds);
          fflush (stderr);
          printf ("Bail out! %s: still running after %u s: it hangs (test guard)\n",
                  g->path, g->seconds);
          fflush (stdout);
          abort ();
        }
    }
  g_mutex_unlock (&g->lock);
  return NULL;
}

static inline void
test_guard_stop (void)
{
  if (test_guard.thread == NULL)
    return;
  g_mutex_lock (&test_guard.lock);
  test_guard.stop = TRUE;
  g_cond_signal (&test_guard.cond);
  g_mutex_unlock (&test_guard.lock);
  g_thread_join (test_guard.thread);
  test_guard.thread = NULL;
  g_clear_pointer (&test_guard.path, g_free);
}

/* The limit is multiplied by ATOMR_TEST_GUARD_SCALE when set (valgrind). */
static inline void
test_guard_start (guint seconds)
{
  const gchar *scale = g_getenv ("ATOMR_TEST_GUARD_SCALE");

  test_guard_stop ();
  if (scale != NULL && g_ascii_strtoull (scale, NULL, 10) > 0)
    seconds *= (guint) g_ascii_strtoull (scale, NULL, 10);
  test_guard.stop = FALSE;
  test_guard.seconds = seconds;
  test_guard.deadline = g_get_monotonic_time () + (gint64) seconds * G_USEC_PER_SEC;
  test_guard.path = g_strdup (g_test_get_path ());
  test_guard.thread = g_thread_new ("test-guard", test_guard_main, &test_guard);
}
