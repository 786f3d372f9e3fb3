/* bench-envelope-host.c — the envelope's own host cost, without a GPU
 *
 * Runs fills through a copy actor on the host test device, whose fences
 * complete as soon as they are recorded, so what is measured is the
 * library's CPU time per operation (mailbox, validation, hazards, events,
 * signals, reply).  Useful under `valgrind --tool=callgrind`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"

typedef struct {
  AtomrActor  *actor;
  AtomrBuffer *buffer;
  GMainLoop   *loop;
  guint        done, submitted, total;
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

int
main (int argc, char **argv)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  Bench b = { 0 };
  gint64 t0;

  b.total = argc > 1 ? (guint) atoi (argv[1]) : 200000;
  atomr_device_set_host_autocomplete (device, TRUE);
  b.actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, NULL);
  b.buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, NULL);
  atomr_actor_set_completion_mode (b.actor, ATOMR_COMPLETION_POLL);
  b.loop = g_main_loop_new (NULL, FALSE);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < 64 && i < b.total; i++)
    submit (&b);
  g_main_loop_run (b.loop);
  t0 = g_get_monotonic_time () - t0;
  printf ("host envelope: %u operations, %.2f us each, %.0f ops/s\n",
          b.total, (gdouble) t0 / b.total, b.total / (t0 / 1e6));
  g_main_loop_unref (b.loop);
  g_object_unref (b.buffer);
  g_object_unref (b.actor);
  return 0;
}
