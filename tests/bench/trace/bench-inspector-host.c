/* bench-inspector-host.c — what the inspector server costs the
 * application's thread, on the mock device (no GPU needed)
 *
 * The pipelined pattern of bench-inspector (fills without a callback, a
 * barrier every 32, 64 in flight) on a copy actor of the mock device.  For
 * each row: CPU time of this thread (CLOCK_THREAD_CPUTIME_ID: the
 * submitting and completing thread, where the envelope runs) per
 * operation, and its ratio to the actor alone measured in the same run;
 * then the server's debug counters (records observed, queued, serialized)
 * for the idle row, which must be 0.  Rows: alone, a running server with
 * no client, always-record, one WebSocket client streaming on its own
 * thread.  Run it several times: the CPU time is noisy on a shared host;
 * the counters are not.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include <libsoup/soup.h>

#include <atomr.h>
#include "../bench-util.h"
#include "trace/atomr-inspector-server-private.h"

#define N_OPS   20000
#define WINDOW  64
#define BATCH   32

static gdouble
thread_cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
barrier_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error))
    g_error ("barrier: %s", error->message);
  (*(guint *) user_data)++;
}

/* CPU µs of this thread per operation. */
static gdouble
run (AtomrDevice          *device,
     AtomrBuffer          *buffer,
     AtomrInspectorServer *server)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = atomr_copy_actor_new (device, &error);
  guint done = 0, barriers = 0;
  gdouble t0;

  g_assert_no_error (error);
  if (server)
    atomr_inspector_server_add_actor (server, ATOMR_ACTOR (actor));
  t0 = thread_cpu_us ();
  for (guint i = 0; i < N_OPS; i++)
    {
      atomr_actor_fill_async (ATOMR_ACTOR (actor), buffer, i, NULL, NULL, NULL);
      if ((i + 1) % BATCH == 0)
        {
          atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, barrier_done, &done);
          barriers++;
          while (barriers - done > WINDOW / BATCH)
            g_main_context_iteration (NULL, TRUE);
        }
    }
  while (done < barriers)
    g_main_context_iteration (NULL, TRUE);
  t0 = thread_cpu_us () - t0;
  if (server)
    atomr_inspector_server_remove_actor (server, ATOMR_ACTOR (actor));
  return t0 / N_OPS;
}

typedef struct
{
  AtomrInspectorServer *server;
  GMainContext         *context;
  gint                  stop;
  guint64               received;
  SoupWebsocketConnection *ws;
} Client;

static void
on_message (SoupWebsocketConnection *ws, gint type, GBytes *message, gpointer user_data)
{
  ((Client *) user_data)->received++;
}

static void
on_connected (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Client *c = user_data;
  g_autoptr(GError) error = NULL;

  c->ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &error);
  if (c->ws == NULL)
    g_error ("stream: %s", error->message);
  g_signal_connect (c->ws, "message", G_CALLBACK (on_message), c);
}

static gpointer
client_thread (gpointer data)
{
  Client *c = data;
  g_autoptr(SoupSession) session = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autofree gchar *url = g_strdup_printf ("ws://127.0.0.1:%u/v1/stream", atomr_inspector_server_get_port (c->server));
  g_autofree gchar *auth = g_strdup_printf ("Bearer %s", atomr_inspector_server_get_token (c->server));

  g_main_context_push_thread_default (c->context);
  session = soup_session_new ();
  msg = soup_message_new ("GET", url);
  soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
  soup_session_websocket_connect_async (session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL, on_connected, c);
  while (!g_atomic_int_get (&c->stop))
    g_main_context_iteration (c->context, TRUE);
  g_clear_object (&c->ws);
  g_clear_object (&session);
  while (g_main_context_iteration (c->context, FALSE))
    ;
  g_main_context_pop_thread_default (c->context);
  return NULL;
}

static gboolean
wake (gpointer data)
{
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 256, &error);
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autofree gchar *runtime = g_dir_make_tmp ("atomr-bench-inspect-XXXXXX", NULL);
  guint64 observed, published, serialized;
  gdouble alone, idle, recording, streaming;
  Client c = { 0 };
  GThread *thread;

  g_assert_no_error (error);
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  if (!atomr_inspector_server_start (server, &error))
    g_error ("%s", error->message);
  run (device, buffer, NULL);   /* warm-up */

  printf ("# mock device, %d fills, a barrier every %d, %d in flight; CPU of the application's thread\n",
          N_OPS, BATCH, WINDOW);
  printf ("%-48s %12s %10s\n", "path", "CPU µs/op", "vs alone");
  alone = run (device, buffer, NULL);
  printf ("%-48s %12.3f %10s\n", "actor alone", alone, "1.000");
  idle = run (device, buffer, server);
  atomr_inspector_server_get_debug_counters (server, &observed, &published, &serialized, NULL);
  printf ("%-48s %12.3f %10.3f\n", "running server, no client", idle, idle / alone);
  printf ("  idle server saw %" G_GUINT64_FORMAT ", queued %" G_GUINT64_FORMAT ", serialized %" G_GUINT64_FORMAT
          " records (must be 0)\n", observed, published, serialized);
  atomr_inspector_server_set_always_record (server, TRUE);
  recording = run (device, buffer, server);
  atomr_inspector_server_set_always_record (server, FALSE);
  printf ("%-48s %12.3f %10.3f\n", "always-record, no client", recording, recording / alone);

  c.server = server;
  c.context = g_main_context_new ();
  thread = g_thread_new ("bench-client", client_thread, &c);
  while (atomr_inspector_server_get_n_clients (server) == 0)
    g_usleep (1000);
  streaming = run (device, buffer, server);
  g_usleep (300000);
  g_atomic_int_set (&c.stop, 1);
  g_main_context_invoke (c.context, wake, NULL);
  g_thread_join (thread);
  g_main_context_unref (c.context);
  printf ("%-48s %12.3f %10.3f\n", "one client streaming", streaming, streaming / alone);
  printf ("  streamed %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT " dropped\n", c.received,
          atomr_inspector_server_get_n_dropped (server));
  atomr_inspector_server_stop (server);
  return observed == 0 && published == 0 && serialized == 0 ? 0 : 1;
}
