/* bench-envelope-host.c — the envelope's own host cost, without a GPU
 *
 * Runs fills through a copy actor on the host test device, whose fences
 * complete as soon as they are recorded, so what is measured is the
 * library's CPU time per operation (mailbox, validation, hazards, events,
 * signals, reply).
 *
 *   bench-envelope-host [N [reply|pipeline|owned|thread]]
 *
 * reply:    a reply callback per request, 64 in flight (the default);
 * pipeline: bench-graph's pipelined row on the host device: requests
 *           without a callback from the actor's home thread, which does
 *           not iterate while it submits, and a barrier with a reply after
 *           every 32 (iterated until it replies);
 * owned:    the same, this thread holding the actor's context all along
 *           (g_main_context_acquire(): bench-graph's host-cost row);
 * thread:   N requests without a callback to an actor with a thread of its
 *           own (AtomrActor:own-thread), then one barrier: bench-graph's
 *           own-thread pipelined row.  What the submitting thread pays,
 *           wake-ups of the actor's thread included (count them with
 *           `strace -f -c -e trace=write`).
 *
 * The timed part is the function measure(): under
 * `valgrind --tool=callgrind --toggle-collect=measure` its instruction
 * count is the envelope's; tests/bench/core/envelope-ir.py runs that for
 * two values of N and prints instructions per request (start-up and the
 * first-use costs cancel out).  Never used for an assertion.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"

#define WINDOW 32

typedef struct {
  AtomrActor  *actor;
  AtomrBuffer *buffer;
  GMainLoop   *loop;
  guint        done, submitted, total;
  gboolean     barrier_done;
} Bench;

static void submit (Bench *b);

static void
on_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Bench *b = user_data;
  if (!atomr_actor_fill_finish (b->actor, result, NULL))
    g_error ("fill failed");
  if (++b->done == b->total)
    g_main_loop_quit (b->loop);
  else if (b->submitted < b->total)
    submit (b);
}

static void
submit (Bench *b)
{
  b->submitted++;
  atomr_actor_fill_async (b->actor, b->buffer, 1.0, NULL, on_reply, b);
}

static void
on_barrier (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Bench *b = user_data;
  if (!atomr_actor_barrier_finish (b->actor, result, NULL))
    g_error ("barrier failed");
  b->barrier_done = TRUE;
}

static void G_GNUC_NO_INLINE
measure (Bench *b, gboolean pipeline, gboolean owned, gboolean thread)
{
  if (thread)
    {
      for (guint i = 0; i < b->total; i++)
        atomr_actor_fill_async (b->actor, b->buffer, 1.0, NULL, NULL, NULL);
      atomr_actor_barrier_async (b->actor, NULL, on_barrier, b);
      while (!b->barrier_done)
        g_main_context_iteration (NULL, TRUE);
      return;
    }
  if (!pipeline)
    {
      for (guint i = 0; i < 64 && i < b->total; i++)
        submit (b);
      g_main_loop_run (b->loop);
      return;
    }
  if (owned)
    g_main_context_acquire (NULL);
  for (guint i = 0; i < b->total; )
    {
      for (guint k = 0; k < WINDOW && i < b->total; k++, i++)
        atomr_actor_fill_async (b->actor, b->buffer, 1.0, NULL, NULL, NULL);
      b->barrier_done = FALSE;
      atomr_actor_barrier_async (b->actor, NULL, on_barrier, b);
      while (!b->barrier_done)
        g_main_context_iteration (NULL, TRUE);
    }
  if (owned)
    g_main_context_release (NULL);
}

int
main (int argc, char **argv)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  Bench b = { 0 };
  const gchar *mode = argc > 2 ? argv[2] : "reply";
  gboolean owned = g_str_equal (mode, "owned");
  gboolean pipeline = owned || g_str_equal (mode, "pipeline");
  gboolean thread = g_str_equal (mode, "thread");
  gint64 t0;

  if (!pipeline && !thread && !g_str_equal (mode, "reply"))
    {
      fprintf (stderr, "usage: %s [N [reply|pipeline|owned|thread]]\n", argv[0]);
      return 2;
    }
  b.total = argc > 1 ? (guint) atoi (argv[1]) : 200000;
  atomr_device_set_host_autocomplete (device, TRUE);
  b.actor = thread ? g_initable_new (ATOMR_TYPE_COPY_ACTOR, NULL, NULL, "device", device,
                                     "own-thread", TRUE, NULL)
                   : atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, NULL);
  if (b.actor == NULL)
    g_error ("no actor");
  b.buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, NULL);
  atomr_actor_set_completion_mode (b.actor, ATOMR_COMPLETION_POLL);
  b.loop = g_main_loop_new (NULL, FALSE);
  t0 = g_get_monotonic_time ();
  measure (&b, pipeline, owned, thread);
  t0 = g_get_monotonic_time () - t0;
  printf ("host envelope (%s): %u operations, %.2f us each, %.0f ops/s\n",
          mode, b.total, (gdouble) t0 / b.total, b.total / (t0 / 1e6));
  g_main_loop_unref (b.loop);
  g_object_unref (b.buffer);
  g_object_unref (b.actor);
  return 0;
}
