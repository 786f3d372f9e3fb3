/* bench-inspector-client.h — what bench-inspector and bench-inspector-host
 * share: a WebSocket client streaming /v1/stream on its own thread and
 * context, connected for one row and closed after it, and the row order
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

/* Define _GNU_SOURCE before any include in the file including this one
 * (sched_setaffinity). */
#include <sched.h>
#include <string.h>

#include <libsoup/soup.h>

#include <atomr.h>
#include "../bench-util.h"

/* The rows, run in a rotated order in every round so that no row always
 * follows the same one (a row's leftovers: the recorder's ring filling,
 * the server thread turning the last row's records into launch records,
 * a client's socket closing). */
typedef enum
{
  ROW_ALONE,
  ROW_IDLE,
  ROW_RECORD,
  ROW_STREAM,
  ROW_STREAM_BATCH,
  N_ROWS
} BenchRow;

static const gchar *const bench_row_names[N_ROWS] = {
  "actor alone",
  "running server, no client",
  "always-record, no client",
  "one client streaming every record",
  "one client streaming, batched (?batch=1)",
};

/* Whether a row has a streaming client. */
static inline gboolean
bench_row_streams (BenchRow row)
{
  return row == ROW_STREAM || row == ROW_STREAM_BATCH;
}

/* The CPUs the process may run on, saved by bench_save_affinity() before
 * anything pins a thread. */
static cpu_set_t bench_all_cpus;
static gboolean  bench_all_cpus_saved;

static inline void
bench_save_affinity (void)
{
  if (sched_getaffinity (0, sizeof bench_all_cpus, &bench_all_cpus) == 0)
    bench_all_cpus_saved = TRUE;
}

/* Lets this thread run on every CPU again (a thread started by a pinned
 * one inherits its mask). */
static inline void
bench_unpin_thread (void)
{
  if (bench_all_cpus_saved)
    sched_setaffinity (0, sizeof bench_all_cpus, &bench_all_cpus);
}

typedef struct
{
  AtomrInspectorServer    *server;
  GMainContext            *context;
  GThread                 *thread;
  gint                     stop;       /* atomic */
  gint                     received;   /* atomic: records */
  gint                     dropped;    /* atomic: reported as dropped */
  gboolean                 batched;    /* connect to /v1/stream?batch=1 */
  SoupWebsocketConnection *ws;         /* client thread */
} BenchClient;

static void
bench_client_on_message (SoupWebsocketConnection *ws,
                         gint                     type,
                         GBytes                  *message,
                         gpointer                 user_data)
{
  BenchClient *c = user_data;
  gsize size;
  const gchar *text = g_bytes_get_data (message, &size);

  if (size > 17 && strncmp (text, "{\"type\":\"dropped\"", 17) == 0)
    {
      const gchar *count = g_strstr_len (text, size, "\"count\":");
      if (count)
        g_atomic_int_add (&c->dropped, (gint) g_ascii_strtoull (count + 8, NULL, 10));
    }
  else if (size > 17 && strncmp (text, "{\"type\":\"records\"", 17) == 0)
    {
      /* A batch: its record messages ("type":"record" cannot occur
       * inside a JSON string, where quotes are escaped). */
      static const gchar mark[] = "{\"type\":\"record\",";
      gint n = 0;
      for (const gchar *p = text + 17; (p = g_strstr_len (p, (gssize) (size - (gsize) (p - text)), mark)); p += sizeof mark - 1)
        n++;
      g_atomic_int_add (&c->received, n);
    }
  else
    g_atomic_int_inc (&c->received);
}

static void
bench_client_on_connected (GObject      *source,
                           GAsyncResult *result,
                           gpointer      user_data)
{
  BenchClient *c = user_data;
  g_autoptr(GError) error = NULL;

  c->ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &error);
  if (c->ws == NULL)
    g_error ("stream: %s", error->message);
  g_signal_connect (c->ws, "message", G_CALLBACK (bench_client_on_message), c);
}

static gpointer
bench_client_thread (gpointer data)
{
  BenchClient *c = data;
  g_autoptr(SoupSession) session = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autofree gchar *url = g_strdup_printf ("ws://127.0.0.1:%u/v1/stream%s", atomr_inspector_server_get_port (c->server),
                                           c->batched ? "?batch=1" : "");
  g_autofree gchar *auth = g_strdup_printf ("Bearer %s", atomr_inspector_server_get_token (c->server));
  gint64 deadline;

  bench_unpin_thread ();   /* not on the application's pinned CPU */
  g_main_context_push_thread_default (c->context);
  session = soup_session_new ();
  msg = soup_message_new ("GET", url);
  soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
  soup_session_websocket_connect_async (session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL,
                                        bench_client_on_connected, c);
  while (!g_atomic_int_get (&c->stop))
    g_main_context_iteration (c->context, TRUE);
  /* A clean close, so that the server forgets the client (and unhooks
   * the actors) before the next row. */
  if (c->ws && soup_websocket_connection_get_state (c->ws) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_close (c->ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
  deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (c->ws && soup_websocket_connection_get_state (c->ws) != SOUP_WEBSOCKET_STATE_CLOSED &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (c->context, FALSE);
  g_clear_object (&c->ws);
  g_clear_object (&session);
  while (g_main_context_iteration (c->context, FALSE))
    ;
  g_main_context_pop_thread_default (c->context);
  return NULL;
}

static gboolean
bench_client_wake (gpointer data)
{
  return G_SOURCE_REMOVE;
}

/* Waits (at most 5 s) until @server counts @n clients. */
static void
bench_wait_clients (AtomrInspectorServer *server,
                    guint                 n)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  while (atomr_inspector_server_get_n_clients (server) != n)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("the server counts %u clients, not %u, after 5 s",
                 atomr_inspector_server_get_n_clients (server), n);
      g_usleep (1000);
    }
}

/* Connects a client and returns once the server counts it (from then on
 * every operation of the added actors is streamed). */
static void
bench_client_start (BenchClient          *c,
                    AtomrInspectorServer *server)
{
  c->server = server;
  c->stop = 0;
  c->context = g_main_context_new ();
  c->thread = g_thread_new ("bench-client", bench_client_thread, c);
  bench_wait_clients (server, 1);
}

/* Waits (at most 2 s) for @expected records (or drop reports) to arrive,
 * closes the client and returns once the server no longer counts it. */
static void
bench_client_stop (BenchClient *c,
                   gint         expected)
{
  gint64 deadline = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;

  while (g_atomic_int_get (&c->received) + g_atomic_int_get (&c->dropped) < expected &&
         g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_atomic_int_set (&c->stop, 1);
  g_main_context_invoke (c->context, bench_client_wake, NULL);
  g_thread_join (c->thread);
  c->thread = NULL;
  g_clear_pointer (&c->context, g_main_context_unref);
  bench_wait_clients (c->server, 0);
}
