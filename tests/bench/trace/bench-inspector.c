/* bench-inspector.c — what the live-attach server costs a pipeline, against
 * raw CUDA, in one run
 *
 * The pipelined-launch pattern of bench-trace: 1 KiB fills
 * (cuMemsetD32Async), 64 in flight, a barrier every 32.  Rows: the raw
 * loop (one event per fill; the 1.00 baseline), the actor alone, the
 * actor added to a running AtomrInspectorServer with no client (goal: the
 * same as alone), the same with always-record on (every record kept in
 * the recorder: no goal, for information), and with one WebSocket client streaming every record on
 * its own thread (goal: at most 5% slower than alone).  The last column
 * is throughput over the actor alone, measured in the same run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <libsoup/soup.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"

#define N_OPS   30000
#define WINDOW  64
#define BATCH   32
#define N_ELEMS 256

static gdouble
raw_throughput (AtomrDevice *device,
                CUdeviceptr  ptr,
                gboolean     timed)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUstream stream;
  CUevent ends[WINDOW], starts[WINDOW];
  gdouble t0;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  for (guint i = 0; i < WINDOW; i++)
    {
      cu->cuEventCreate (&ends[i], timed ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
      cu->cuEventCreate (&starts[i], CU_EVENT_DEFAULT);
    }
  t0 = bench_now_us ();
  for (guint i = 0; i < N_OPS; i++)
    {
      guint k = i % WINDOW;
      if (i >= WINDOW)
        {
          cu->cuEventSynchronize (ends[k]);
          if (timed)
            {
              float ms;
              cu->cuEventElapsedTime (&ms, starts[k], ends[k]);
            }
        }
      if (timed)
        cu->cuEventRecord (starts[k], stream);
      cu->cuMemsetD32Async (ptr, i, N_ELEMS, stream);
      cu->cuEventRecord (ends[k], stream);
    }
  cu->cuStreamSynchronize (stream);
  t0 = bench_now_us () - t0;
  for (guint i = 0; i < WINDOW; i++)
    {
      cu->cuEventDestroy (ends[i]);
      cu->cuEventDestroy (starts[i]);
    }
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return N_OPS / (t0 / 1e6);
}

typedef struct
{
  guint done;   /* barriers answered */
} Window;

static void
barrier_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Window *w = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error))
    g_error ("barrier: %s", error->message);
  w->done++;
}

static gdouble
actor_throughput (AtomrDevice          *device,
                  AtomrBuffer          *buffer,
                  AtomrInspectorServer *server)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = atomr_copy_actor_new (device, &error);
  Window w = { 0 };
  guint barriers = 0;
  gdouble t0;

  g_assert_no_error (error);
  if (server)
    atomr_inspector_server_add_actor (server, ATOMR_ACTOR (actor));
  t0 = bench_now_us ();
  for (guint i = 0; i < N_OPS; i++)
    {
      atomr_actor_fill_async (ATOMR_ACTOR (actor), buffer, i, NULL, NULL, NULL);
      if ((i + 1) % BATCH == 0)
        {
          atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, barrier_done, &w);
          barriers++;
          while (barriers - w.done > WINDOW / BATCH)
            g_main_context_iteration (NULL, TRUE);
        }
    }
  atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, barrier_done, &w);
  barriers++;
  while (w.done < barriers)
    g_main_context_iteration (NULL, TRUE);
  t0 = bench_now_us () - t0;
  if (server)
    atomr_inspector_server_remove_actor (server, ATOMR_ACTOR (actor));
  return N_OPS / (t0 / 1e6);
}

/* A streaming client on its own thread and context. */
typedef struct
{
  AtomrInspectorServer *server;
  GMainContext         *context;
  gint                  stop;       /* atomic */
  guint64               received;   /* client thread; read after the join */
  guint64               dropped;
  gboolean              connected;
} Client;

static void
on_message (SoupWebsocketConnection *ws, gint type, GBytes *message, gpointer user_data)
{
  Client *c = user_data;
  const gchar *text = g_bytes_get_data (message, NULL);

  if (g_bytes_get_size (message) > 16 && strncmp (text, "{\"type\":\"dropped\"", 17) == 0)
    c->dropped += g_ascii_strtoull (strstr (text, "\"count\":") + 8, NULL, 10);
  else
    c->received++;
}

static void
on_connected (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Client *c = user_data;
  g_autoptr(GError) error = NULL;
  SoupWebsocketConnection *ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &error);

  if (ws == NULL)
    g_error ("stream: %s", error->message);
  g_object_set_data_full (G_OBJECT (source), "ws", ws, g_object_unref);
  g_signal_connect (ws, "message", G_CALLBACK (on_message), c);
  c->connected = TRUE;
}

static gpointer
client_thread (gpointer data)
{
  Client *c = data;
  g_autoptr(SoupSession) session = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/v1/stream", atomr_inspector_server_get_port (c->server));
  g_autofree gchar *auth = g_strdup_printf ("Bearer %s", atomr_inspector_server_get_token (c->server));

  g_main_context_push_thread_default (c->context);
  session = soup_session_new ();
  msg = soup_message_new ("GET", url);
  soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
  soup_session_websocket_connect_async (session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL, on_connected, c);
  while (!g_atomic_int_get (&c->stop))
    g_main_context_iteration (c->context, TRUE);
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
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrInspectorServer) server = NULL;
  g_autofree gchar *runtime = g_dir_make_tmp ("atomr-bench-inspect-XXXXXX", NULL);
  gdouble raw, alone, idle, recording, streaming;
  Client c = { 0 };
  GThread *thread;

  if (device == NULL)
    {
      printf ("bench-inspector: %s (skipped)\n", error->message);
      return 77;
    }
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
  g_assert_no_error (error);
  server = atomr_inspector_server_new ();
  if (!atomr_inspector_server_start (server, &error))
    g_error ("%s", error->message);

  raw_throughput (device, atomr_buffer_get_device_pointer (buffer), FALSE);
  actor_throughput (device, buffer, NULL);

  printf ("# %s, %d fills of %d B, %d in flight\n", atomr_device_get_name (device), N_OPS, N_ELEMS * 4, WINDOW);
  printf ("%-52s %10s %8s %8s\n", "path", "ops/s", "ratio", "vs alone");
  raw = raw_throughput (device, atomr_buffer_get_device_pointer (buffer), FALSE);
  printf ("%-52s %10.0f %8s\n", "raw, an event per fill", raw, "1.00");
  alone = actor_throughput (device, buffer, NULL);
  printf ("%-52s %10.0f %8.2f %8s\n", "actor alone", alone, alone / raw, "1.00");
  idle = actor_throughput (device, buffer, server);
  printf ("%-52s %10.0f %8.2f %8.3f\n", "actor on a running server, no client", idle, idle / raw, idle / alone);
  atomr_inspector_server_set_always_record (server, TRUE);
  recording = actor_throughput (device, buffer, server);
  atomr_inspector_server_set_always_record (server, FALSE);
  printf ("%-52s %10.0f %8.2f %8.3f\n", "actor on a server with always-record, no client", recording,
          recording / raw, recording / alone);

  c.server = server;
  c.context = g_main_context_new ();
  thread = g_thread_new ("bench-client", client_thread, &c);
  while (atomr_inspector_server_get_n_clients (server) == 0)
    g_usleep (1000);
  streaming = actor_throughput (device, buffer, server);
  /* Let the tail of the stream arrive, then stop the client. */
  g_usleep (500000);
  g_atomic_int_set (&c.stop, 1);
  g_main_context_invoke (c.context, wake, NULL);
  g_thread_join (thread);
  g_main_context_unref (c.context);
  printf ("%-52s %10.0f %8.2f %8.3f\n", "actor, one client streaming every record", streaming, streaming / raw,
          streaming / alone);
  printf ("streamed %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT " dropped (of about %d)\n",
          c.received, c.dropped, N_OPS + N_OPS / BATCH + 1);
  printf ("goal: no client >= 0.99, one client >= 0.95 of the actor alone\n");
  atomr_inspector_server_stop (server);
  return 0;
}
