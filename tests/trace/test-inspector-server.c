/* test-inspector-server.c — the live-attach server: token, discovery,
 * JSON API, WebSocket stream with back-pressure, limits.  CPU only; every
 * connection is to 127.0.0.1.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "atomr.h"
#include "core/atomr-actor-private.h"
#include "trace/atomr-inspector-server-private.h"

static gchar *runtime_dir;

static gchar *
url_of (AtomrInspectorServer *server,
        const gchar          *path)
{
  return g_strdup_printf ("http://127.0.0.1:%u%s", atomr_inspector_server_get_port (server), path);
}

/* A request from this thread; returns the status and the body. */
static guint
request (AtomrInspectorServer *server,
         const gchar          *method,
         const gchar          *path,
         const gchar          *token,
         const gchar          *body,
         gchar               **out)
{
  g_autoptr(SoupSession) session = soup_session_new_with_options ("timeout", 20, NULL);
  g_autofree gchar *url = url_of (server, path);
  g_autoptr(SoupMessage) msg = soup_message_new (method, url);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;

  if (token)
    {
      g_autofree gchar *auth = g_strdup_printf ("Bearer %s", token);
      soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
    }
  if (body)
    {
      g_autoptr(GBytes) b = g_bytes_new (body, strlen (body));
      soup_message_set_request_body_from_bytes (msg, "text/plain", b);
    }
  bytes = soup_session_send_and_read (session, msg, NULL, &error);
  g_assert_no_error (error);
  if (out)
    *out = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  return soup_message_get_status (msg);
}

static JsonObject *
parse (JsonParser  *parser,
       const gchar *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_node_get_object (json_parser_get_root (parser));
}

static GSocketConnection *raw_connect (AtomrInspectorServer *server);
static gboolean closed_by_server (GSocketConnection *conn);

static void
test_bare (void)
{
  g_autoptr(AtomrInspectorServer) server = g_object_new (ATOMR_TYPE_INSPECTOR_SERVER, NULL);

  g_assert_cmpuint (atomr_inspector_server_get_port (server), ==, 0);
  g_assert_false (atomr_inspector_server_is_running (server));
  g_assert_null (atomr_inspector_server_get_discovery_path (server));
  g_assert_cmpuint (strlen (atomr_inspector_server_get_token (server)), ==, 64);
  g_assert_nonnull (atomr_inspector_server_get_recorder (server));
  atomr_inspector_server_stop (server);
  atomr_inspector_server_set_max_clients (server, 0);
  g_assert_cmpuint (atomr_inspector_server_get_max_clients (server), ==, 1);
}

/* A stop right after the start (the loop not yet running) must not hang:
 * it did while the server thread used g_main_loop_run(). */
static void
test_start_stop (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();

  for (guint i = 0; i < 50; i++)
    {
      g_autoptr(GError) error = NULL;
      g_assert_true (atomr_inspector_server_start (server, &error));
      g_assert_no_error (error);
      g_assert_true (atomr_inspector_server_start (server, &error));   /* no-op */
      atomr_inspector_server_stop (server);
      atomr_inspector_server_stop (server);                            /* no-op */
      g_assert_false (atomr_inspector_server_is_running (server));
    }
}

static void
test_token_and_api (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(AtomrInspectorServer) other = atomr_inspector_server_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  const gchar *token;
  gchar *body = NULL;
  JsonObject *o;

  g_assert_cmpstr (atomr_inspector_server_get_token (server), !=, atomr_inspector_server_get_token (other));
  atomr_inspector_server_set_idle_timeout (server, 3600);
  g_assert_true (atomr_inspector_server_start (server, &error));
  g_assert_no_error (error);
  token = atomr_inspector_server_get_token (server);
  g_assert_cmpuint (atomr_inspector_server_get_port (server), >, 0);

  /* 401: no token, a wrong one, one of another server, a prefix. */
  g_assert_cmpuint (request (server, "GET", "/v1/process", NULL, NULL, NULL), ==, 401);
  g_assert_cmpuint (request (server, "GET", "/v1/process", "nope", NULL, NULL), ==, 401);
  g_assert_cmpuint (request (server, "GET", "/v1/process", atomr_inspector_server_get_token (other), NULL, NULL), ==, 401);
  {
    g_autofree gchar *prefix = g_strndup (token, 63);
    g_assert_cmpuint (request (server, "GET", "/v1/trace", prefix, NULL, NULL), ==, 401);
  }

  g_assert_cmpuint (request (server, "GET", "/v1/process", token, NULL, &body), ==, 200);
  o = parse (parser, body);
  g_assert_cmpint (json_object_get_int_member (o, "api_version"), ==, ATOMR_INSPECTOR_API_VERSION);
  g_assert_cmpint (json_object_get_int_member (o, "pid"), ==, getpid ());
  g_clear_pointer (&body, g_free);

  g_assert_cmpuint (request (server, "GET", "/v1", token, NULL, &body), ==, 200);
  o = parse (parser, body);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "endpoints")), ==, 6);
  g_clear_pointer (&body, g_free);

  g_assert_cmpuint (request (server, "GET", "/v1/actors", token, NULL, &body), ==, 200);
  o = parse (parser, body);
  g_assert_true (json_object_has_member (o, "actors"));
  g_clear_pointer (&body, g_free);

  g_assert_cmpuint (request (server, "GET", "/v1/devices", token, NULL, &body), ==, 200);
  o = parse (parser, body);
  g_assert_true (json_object_has_member (o, "devices"));
  g_clear_pointer (&body, g_free);

  g_assert_cmpuint (request (server, "GET", "/v1/cache", token, NULL, &body), ==, 200);
  o = parse (parser, body);
  g_assert_true (json_object_has_member (o, "misses"));
  g_assert_true (json_object_has_member (o, "directory"));
  g_clear_pointer (&body, g_free);

  {
    g_autoptr(AtomrLaunchInfo) info = atomr_launch_info_new ("a0", "test", "op");
    atomr_trace_recorder_add_record (atomr_inspector_server_get_recorder (server), info);
  }
  g_assert_cmpuint (request (server, "GET", "/v1/trace", token, NULL, &body), ==, 200);
  {
    g_autoptr(AtomrTraceRecorder) back = atomr_trace_recorder_new (0);
    g_assert_true (atomr_trace_recorder_load_json (back, body, -1, &error));
    g_assert_no_error (error);
    g_assert_nonnull (strstr (body, "traceEvents"));
  }
  g_clear_pointer (&body, g_free);

  g_assert_cmpuint (request (server, "GET", "/v1/nothing", token, NULL, &body), ==, 404);
  o = parse (parser, body);
  g_assert_nonnull (strstr (json_object_get_string_member (o, "error"), "/v1/nothing"));
  g_clear_pointer (&body, g_free);

  g_assert_cmpuint (request (server, "DELETE", "/v1/process", token, NULL, NULL), ==, 405);

  /* A request announcing a body is cut off before the body is read: the
   * idle limit is an hour here, so only the refusal can close it. */
  {
    g_autoptr(GSocketConnection) conn = raw_connect (server);
    g_autofree gchar *head = g_strdup_printf ("POST /v1/process HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                              "Authorization: Bearer %s\r\nContent-Length: 100000000\r\n\r\nabc",
                                              token);
    g_assert_true (g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)),
                                              head, strlen (head), NULL, NULL, &error));
    g_assert_no_error (error);
    g_assert_true (closed_by_server (conn));
  }
}

static void
test_discovery (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree gchar *text = NULL;
  g_autofree gchar *stale = g_build_filename (runtime_dir, "atomr", "inspect-2147483646.json", NULL);
  g_autofree gchar *path = NULL;
  g_auto(GStrv) list = NULL;
  GStatBuf st;
  JsonObject *o;
  guint mine = 0;

  g_assert_true (atomr_inspector_server_start (server, &error));
  g_assert_no_error (error);
  path = g_strdup (atomr_inspector_server_get_discovery_path (server));
  g_assert_true (g_str_has_prefix (path, runtime_dir));
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  o = parse (parser, text);
  g_assert_cmpint (json_object_get_int_member (o, "port"), ==, atomr_inspector_server_get_port (server));
  g_assert_cmpstr (json_object_get_string_member (o, "token"), ==, atomr_inspector_server_get_token (server));
  g_assert_cmpstr (json_object_get_string_member (o, "address"), ==, "127.0.0.1");

  /* An empty discovery file (of a live pid: 1) is skipped without a
   * critical: empty text parses as JSON with no root, which
   * JSON_NODE_HOLDS_OBJECT() refused with a critical (fatal here). */
  {
    g_autofree gchar *empty = g_build_filename (runtime_dir, "atomr", "inspect-1.json", NULL);
    g_auto(GStrv) some = NULL;
    g_assert_true (g_file_set_contents (empty, "", 0, &error));
    some = atomr_inspector_list_local (&error);
    g_assert_no_error (error);
    g_unlink (empty);
  }

  /* A file left by a process that is gone is skipped and removed. */
  g_assert_true (g_file_set_contents (stale, "{\"pid\":2147483646,\"port\":1,\"token\":\"x\"}", -1, &error));
  list = atomr_inspector_list_local (&error);
  g_assert_no_error (error);
  for (guint i = 0; list[i]; i++)
    {
      g_autoptr(JsonParser) p = json_parser_new ();
      JsonObject *e = parse (p, list[i]);
      g_assert_cmpint (json_object_get_int_member (e, "pid"), !=, 2147483646);
      if (json_object_get_int_member (e, "port") == atomr_inspector_server_get_port (server))
        mine++;
    }
  g_assert_cmpuint (mine, ==, 1);
  g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));

  atomr_inspector_server_stop (server);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_null (atomr_inspector_server_get_discovery_path (server));
  g_assert_cmpuint (atomr_inspector_server_get_port (server), ==, 0);
}

typedef struct
{
  SoupWebsocketConnection *ws;
  GError                  *error;
  guint                    records;
  guint64                  dropped;
  guint64                  last_sequence;
  gboolean                 in_order;
  guint                    frames;       /* messages with records */
  guint                    max_batch;    /* most records in one message */
  guint                    notices;      /* drop notices */
} Stream;

static void
stream_record (Stream     *s,
               JsonObject *o)
{
  guint64 seq = json_object_get_int_member (o, "sequence");

  g_assert_cmpstr (json_object_get_string_member (o, "type"), ==, "record");
  g_assert_cmpstr (json_object_get_string_member (o, "actor"), ==, "streamer");
  if (s->records > 0 && seq <= s->last_sequence)
    s->in_order = FALSE;
  s->last_sequence = seq;
  s->records++;
}

static void
on_message (SoupWebsocketConnection *ws,
            gint                     type,
            GBytes                  *message,
            gpointer                 user_data)
{
  Stream *s = user_data;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree gchar *text = g_strndup (g_bytes_get_data (message, NULL), g_bytes_get_size (message));
  JsonObject *o = parse (parser, text);
  const gchar *kind = json_object_get_string_member (o, "type");

  if (g_str_equal (kind, "record"))
    {
      stream_record (s, o);
      s->frames++;
      s->max_batch = MAX (s->max_batch, 1);
    }
  else if (g_str_equal (kind, "records"))
    {
      /* /v1/stream?batch=1: a batch of record messages. */
      JsonArray *a = json_object_get_array_member (o, "records");

      g_assert_cmpuint (json_array_get_length (a), >, 0);
      for (guint i = 0; i < json_array_get_length (a); i++)
        stream_record (s, json_array_get_object_element (a, i));
      s->frames++;
      s->max_batch = MAX (s->max_batch, json_array_get_length (a));
    }
  else if (g_str_equal (kind, "dropped"))
    {
      g_assert_cmpint (json_object_get_int_member (o, "count"), >, 0);
      s->dropped += json_object_get_int_member (o, "count");
      s->notices++;
    }
  else
    g_assert_not_reached ();
}

static void
on_connected (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Stream *s = user_data;

  s->ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &s->error);
  if (s->ws)
    g_signal_connect (s->ws, "message", G_CALLBACK (on_message), s);
}

static void
stream_connect_to (AtomrInspectorServer *server,
                   SoupSession          *session,
                   const gchar          *token,
                   const gchar          *path,
                   Stream               *s)
{
  g_autofree gchar *url = url_of (server, path);
  g_autoptr(SoupMessage) msg = soup_message_new ("GET", url);

  memset (s, 0, sizeof *s);
  s->in_order = TRUE;
  if (token)
    {
      g_autofree gchar *auth = g_strdup_printf ("Bearer %s", token);
      soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
    }
  soup_session_websocket_connect_async (session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL, on_connected, s);
  while (s->ws == NULL && s->error == NULL)
    g_main_context_iteration (NULL, TRUE);
  /* The server thread counts the client a moment after the upgrade. */
  for (guint i = 0; s->ws && i < 10000 && atomr_inspector_server_get_n_clients (server) == 0; i++)
    g_usleep (1000);
  if (s->ws)
    g_assert_cmpuint (atomr_inspector_server_get_n_clients (server), >=, 1);
}

static void
stream_connect (AtomrInspectorServer *server,
                SoupSession          *session,
                const gchar          *token,
                Stream               *s)
{
  stream_connect_to (server, session, token, "/v1/stream", s);
  if (s->ws)
    g_assert_cmpuint (atomr_inspector_server_get_n_clients (server), ==, 1);
}

static void
publish (AtomrInspectorServer *server,
         guint64               sequence,
         const gchar          *operation)
{
  g_autoptr(AtomrLaunchInfo) info = atomr_launch_info_new ("streamer", "test", operation);

  atomr_launch_info_set_sequence (info, sequence);
  atomr_inspector_server_publish (server, info);
}

static void
test_stream (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(GError) error = NULL;
  Stream s;

  g_assert_true (atomr_inspector_server_start (server, &error));

  /* Without the token the upgrade is refused. */
  stream_connect (server, session, NULL, &s);
  g_assert_null (s.ws);
  g_assert_nonnull (s.error);
  g_clear_error (&s.error);

  /* Nobody streams yet: nothing is queued or dropped. */
  publish (server, 0, "ignored");
  g_assert_cmpuint (atomr_inspector_server_get_n_dropped (server), ==, 0);

  stream_connect (server, session, atomr_inspector_server_get_token (server), &s);
  g_assert_no_error (s.error);
  for (guint i = 1; i <= 50; i++)
    publish (server, i, "op");
  while (s.records < 50)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (s.records, ==, 50);
  g_assert_cmpuint (s.dropped, ==, 0);
  g_assert_true (s.in_order);
  g_assert_cmpuint (s.last_sequence, ==, 50);

  /* A streaming client is exempt from the idle limit: silent for longer
   * than it, it still receives. */
  {
    g_autoptr(AtomrInspectorServer) quick = atomr_inspector_server_new ();
    Stream q;
    gint64 until;

    atomr_inspector_server_set_idle_timeout (quick, 1);
    g_assert_true (atomr_inspector_server_start (quick, &error));
    stream_connect (quick, session, atomr_inspector_server_get_token (quick), &q);
    g_assert_no_error (q.error);
    until = g_get_monotonic_time () + 2500 * 1000;
    while (g_get_monotonic_time () < until)
      {
        g_main_context_iteration (NULL, FALSE);
        g_usleep (10000);
      }
    g_assert_cmpint (soup_websocket_connection_get_state (q.ws), ==, SOUP_WEBSOCKET_STATE_OPEN);
    publish (quick, 1, "after-idle");
    while (q.records < 1 && soup_websocket_connection_get_state (q.ws) == SOUP_WEBSOCKET_STATE_OPEN)
      g_main_context_iteration (NULL, TRUE);
    g_assert_cmpuint (q.records, ==, 1);
    atomr_inspector_server_stop (quick);
    while (soup_websocket_connection_get_state (q.ws) != SOUP_WEBSOCKET_STATE_CLOSED)
      g_main_context_iteration (NULL, TRUE);
    g_clear_object (&q.ws);
  }

  /* Stopping closes the stream. */
  atomr_inspector_server_stop (server);
  while (soup_websocket_connection_get_state (s.ws) != SOUP_WEBSOCKET_STATE_CLOSED)
    g_main_context_iteration (NULL, TRUE);
  g_clear_object (&s.ws);
}

/* A client that does not read: records for it are dropped (never queued
 * without bound, never blocking the publisher), and once it reads again
 * it is told how many, so that received + dropped = published. */
/* /v1/stream?batch=1: the same records in the same order, at most 64 to a
 * message, beside clients of one record a message; each gets every record
 * or is told it was dropped (this thread reads all three: a burst can
 * outrun it), exactly.  (How many records share a message depends on the
 * flush ticks: only printed.) */
static void
test_stream_batched (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(GError) error = NULL;
  const guint n = 3000;
  Stream plain, batched, zero;

  g_assert_true (atomr_inspector_server_start (server, &error));
  /* A plain client first: the server serves clients in the order they
   * came, so its records are serialized before the batched client's
   * frames are built from them (a frame once took its last record's end
   * from the end of everything serialized: invalid JSON). */
  stream_connect_to (server, session, atomr_inspector_server_get_token (server), "/v1/stream", &plain);
  g_assert_no_error (plain.error);
  for (guint i = 0; i < 10000 && atomr_inspector_server_get_n_clients (server) < 1; i++)
    g_usleep (1000);
  stream_connect_to (server, session, atomr_inspector_server_get_token (server), "/v1/stream?batch=1", &batched);
  g_assert_no_error (batched.error);
  for (guint i = 0; i < 10000 && atomr_inspector_server_get_n_clients (server) < 2; i++)
    g_usleep (1000);
  /* batch=0 is the plain stream. */
  stream_connect_to (server, session, atomr_inspector_server_get_token (server), "/v1/stream?batch=0", &zero);
  g_assert_no_error (zero.error);
  for (guint i = 0; i < 10000 && atomr_inspector_server_get_n_clients (server) < 3; i++)
    g_usleep (1000);
  g_assert_cmpuint (atomr_inspector_server_get_n_clients (server), ==, 3);

  for (guint i = 1; i <= n; i++)
    {
      publish (server, i, "op");
      if (i % 100 == 0)   /* read as we go */
        while (batched.records + batched.dropped < i || plain.records + plain.dropped < i ||
               zero.records + zero.dropped < i)
          g_main_context_iteration (NULL, TRUE);
    }
  g_test_message ("%u records in %u batched messages (at most %u in one)", batched.records, batched.frames,
                  batched.max_batch);
  for (guint k = 0; k < 3; k++)
    {
      Stream *s = k == 0 ? &batched : k == 1 ? &plain : &zero;
      g_assert_cmpuint (s->records + s->dropped, ==, n);
      g_assert_true (s->in_order);
      g_assert_cmpuint (s->records, >, 0);
    }
  g_assert_cmpuint (plain.frames, ==, plain.records);
  g_assert_cmpuint (plain.max_batch, ==, 1);
  g_assert_cmpuint (zero.frames, ==, zero.records);
  g_assert_cmpuint (zero.max_batch, ==, 1);
  g_assert_cmpuint (batched.max_batch, <=, 64);
  g_assert_cmpuint (batched.frames, >=, (batched.records + 63) / 64);
  g_assert_cmpuint (batched.frames, <=, batched.records);
  /* Each record serialized at most once for all three clients. */
  {
    guint64 serialized = 0;
    atomr_inspector_server_get_debug_counters (server, NULL, NULL, &serialized, NULL);
    g_assert_cmpuint (serialized, <=, n);
    g_assert_cmpuint (serialized, >=, MAX (MAX (plain.records, zero.records), batched.records));
  }
  atomr_inspector_server_stop (server);
  for (guint k = 0; k < 3; k++)
    {
      Stream *s = k == 0 ? &batched : k == 1 ? &plain : &zero;
      while (soup_websocket_connection_get_state (s->ws) != SOUP_WEBSOCKET_STATE_CLOSED)
        g_main_context_iteration (NULL, TRUE);
      g_clear_object (&s->ws);
    }
}

static void
test_slow_client (gconstpointer data)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *big = g_strnfill (2000, 'x');
  const guint n = 20000;
  const gchar *path = data;   /* /v1/stream, or with ?batch=1 */
  gint64 deadline;
  Stream s;

  g_assert_true (atomr_inspector_server_start (server, &error));
  stream_connect_to (server, session, atomr_inspector_server_get_token (server), path, &s);
  g_assert_no_error (s.error);

  /* This thread's context is not iterated: the client reads nothing. */
  for (guint i = 1; i <= n; i++)
    {
      publish (server, i, big);
      if (i % 256 == 0)
        g_usleep (2000);
    }
  g_assert_cmpuint (s.records, ==, 0);
  g_assert_cmpuint (atomr_inspector_server_get_n_dropped (server), >, 0);

  /* The hang guard only: the stream must complete long before. */
  deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (s.records + s.dropped < n && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_test_message ("received %u, told of %" G_GUINT64_FORMAT " dropped", s.records, s.dropped);
  g_assert_cmpuint (s.records + s.dropped, ==, n);
  g_assert_cmpuint (s.dropped, >, 0);
  g_assert_cmpuint (s.dropped, ==, atomr_inspector_server_get_n_dropped (server));
  g_assert_true (s.in_order);
  /* What no client was sent was never turned into JSON: the server does
   * less work for a slow client, not more (it used to serialize all n,
   * then drop most).  It serializes what it sends, plus nothing. */
  {
    guint64 serialized = 0;
    atomr_inspector_server_get_debug_counters (server, NULL, NULL, &serialized, NULL);
    g_test_message ("serialized %" G_GUINT64_FORMAT " of %u", serialized, n);
    if (strstr (path, "batch=1") == NULL)
      g_assert_cmpuint (serialized, ==, s.records);
    else
      {
        /* A batch frame that a record would overflow ends before it; that
         * record, already serialized, leads the next frame, unless the
         * client turned slow just then (once per episode of drops). */
        g_assert_cmpuint (serialized, >=, s.records);
        g_assert_cmpuint (serialized, <=, s.records + s.notices);
      }
    g_assert_cmpuint (serialized, <, n / 2);
  }
  soup_websocket_connection_close (s.ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
  while (soup_websocket_connection_get_state (s.ws) != SOUP_WEBSOCKET_STATE_CLOSED)
    g_main_context_iteration (NULL, TRUE);
  g_clear_object (&s.ws);
}

/* A client that vanishes (its socket closed, no close frame) while the
 * server is in the middle of a batch: the server's first failed write
 * closes the connection, and the rest of the batch must not be sent to it
 * (it was: one libsoup critical per record, fatal here; found by
 * bench-inspector-host), nor may the client be freed under the batch. */
static void
test_client_vanishes (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *big = g_strnfill (1000, 'v');
  gint64 until, closed_at;
  guint64 seq = 0;
  Stream s;

  g_assert_true (atomr_inspector_server_start (server, &error));
  stream_connect (server, session, atomr_inspector_server_get_token (server), &s);
  g_assert_no_error (s.error);
  closed_at = g_get_monotonic_time () + 100 * 1000;
  until = closed_at + 900 * 1000;
  while (g_get_monotonic_time () < until)
    {
      for (guint i = 0; i < 200; i++)
        publish (server, ++seq, big);
      if (s.ws && g_get_monotonic_time () > closed_at)
        {
          g_signal_handlers_disconnect_by_data (s.ws, &s);
          g_io_stream_close (soup_websocket_connection_get_io_stream (s.ws), NULL, NULL);
          g_clear_object (&s.ws);
        }
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  for (guint i = 0; i < 10000 && atomr_inspector_server_get_n_clients (server) > 0; i++)
    g_usleep (1000);
  g_assert_cmpuint (atomr_inspector_server_get_n_clients (server), ==, 0);
  g_assert_false (atomr_inspector_server_is_hooked (server));
  atomr_inspector_server_stop (server);
}

static GSocketConnection *
raw_connect (AtomrInspectorServer *server)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GError) error = NULL;
  GSocketConnection *conn = g_socket_client_connect_to_host (client, "127.0.0.1",
                                                             atomr_inspector_server_get_port (server),
                                                             NULL, &error);
  g_assert_no_error (error);
  /* A hang guard for the reads below, far above the server's limits. */
  g_socket_set_timeout (g_socket_connection_get_socket (conn), 30);
  return conn;
}

/* Reads until the server closes; FALSE if it did not (guard timeout). */
static gboolean
closed_by_server (GSocketConnection *conn)
{
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  guint8 buf[4096];

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      gssize r = g_input_stream_read (in, buf, sizeof buf, NULL, &error);
      if (r == 0)
        return TRUE;
      if (r < 0)
        return !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
    }
}

static void
test_limits (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketConnection) a = NULL;
  g_autoptr(GSocketConnection) b = NULL;
  g_autoptr(GSocketConnection) c = NULL;
  g_autoptr(GSocketConnection) d = NULL;
  const gchar *partial = "GET /v1/process HTTP/1.1\r\nHost: 127.0.0.1\r\n";

  atomr_inspector_server_set_max_clients (server, 2);
  atomr_inspector_server_set_idle_timeout (server, 1);
  g_assert_true (atomr_inspector_server_start (server, &error));

  /* Two silent connections (one stalled in the middle of its headers)
   * take both slots: a third is closed as accepted. */
  a = raw_connect (server);
  b = raw_connect (server);
  g_assert_true (g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (b)),
                                            partial, strlen (partial), NULL, NULL, &error));
  g_assert_no_error (error);
  c = raw_connect (server);
  g_assert_true (closed_by_server (c));

  /* The stalled ones are closed after the idle limit... */
  g_assert_true (closed_by_server (a));
  g_assert_true (closed_by_server (b));
  /* ...and their slots serve again. */
  d = raw_connect (server);
  g_io_stream_close (G_IO_STREAM (d), NULL, NULL);
  {
    g_autofree gchar *body = NULL;
    guint status = 0;
    /* The slot of d is freed once the server sees it closed. */
    for (guint tries = 0; tries < 100 && status != 200; tries++)
      {
        g_autoptr(SoupSession) session = soup_session_new_with_options ("timeout", 20, NULL);
        g_autofree gchar *url = url_of (server, "/v1/process");
        g_autoptr(SoupMessage) msg = soup_message_new ("GET", url);
        g_autofree gchar *auth = g_strdup_printf ("Bearer %s", atomr_inspector_server_get_token (server));
        g_autoptr(GBytes) bytes = NULL;
        g_autoptr(GError) e = NULL;
        soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
        bytes = soup_session_send_and_read (session, msg, NULL, &e);
        status = bytes ? soup_message_get_status (msg) : 0;
        if (status != 200)
          g_usleep (50000);
      }
    g_assert_cmpuint (status, ==, 200);
  }
}

static void
on_barrier_done (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

static void
on_barrier_any (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error);
  *(gboolean *) user_data = TRUE;
}

/* @n fills without a callback, then a barrier, waited for here. */
static void
run_fills (AtomrActor  *actor,
           AtomrBuffer *buffer,
           guint        n)
{
  gboolean done = FALSE;

  for (guint i = 0; i < n; i++)
    atomr_actor_fill_async (actor, buffer, (gdouble) i, NULL, NULL, NULL);
  atomr_actor_barrier_async (actor, NULL, on_barrier_done, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

/* Signal handlers make the actor build a launch record and emit for every
 * operation; the server must never connect any.  Its observer (no record,
 * no emission) is set only while someone looks. */
static gboolean
actor_has_handlers (AtomrActor *actor)
{
  return g_signal_has_handler_pending (actor, g_signal_lookup ("after-complete", ATOMR_TYPE_ACTOR), 0, TRUE)
         || g_signal_has_handler_pending (actor, g_signal_lookup ("after-enqueue", ATOMR_TYPE_ACTOR), 0, TRUE);
}

static gboolean
actor_has_observers (AtomrActor *actor)
{
  return actor_has_handlers (actor) || atomr_actor_has_observer (actor);
}

static guint
wait_records (AtomrInspectorServer *server,
              guint                 n)
{
  AtomrTraceRecorder *recorder = atomr_inspector_server_get_recorder (server);

  for (guint i = 0; i < 10000 && atomr_trace_recorder_get_n_records (recorder) < n; i++)
    g_usleep (1000);
  return atomr_trace_recorder_get_n_records (recorder);
}

/* The bench-inspector bug (0.57 of the actor alone with an idle server on
 * the H100): the server connected after-enqueue and after-complete
 * handlers (its own and its recorder's) to every actor added, so each
 * operation built a launch record and emitted two signals even with
 * nobody attached.  An idle server must connect nothing: the actor then
 * takes its no-observer path (one handler look-up, no record), and the
 * server sees, queues, serializes and flushes nothing.  The counts are of
 * work done, never of time. */
static void
test_idle_costs_nothing (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(AtomrCopyActor) copy = atomr_copy_actor_new (device, &error);
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 64, &error);
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree gchar *body = NULL;
  AtomrActor *actor = ATOMR_ACTOR (copy);
  guint64 observed, published, serialized, flushes;
  JsonObject *a;
  Stream s;

  g_assert_no_error (error);
  atomr_actor_set_name (actor, "streamer");
  g_assert_true (atomr_inspector_server_start (server, &error));
  g_assert_no_error (error);
  atomr_inspector_server_add_actor (server, actor);

  /* Idle: 2000 operations cost the server nothing. */
  g_assert_false (actor_has_observers (actor));
  run_fills (actor, buffer, 2000);
  g_assert_false (actor_has_observers (actor));
  g_assert_false (atomr_inspector_server_is_hooked (server));
  atomr_inspector_server_get_debug_counters (server, &observed, &published, &serialized, &flushes);
  g_assert_cmpuint (observed, ==, 0);
  g_assert_cmpuint (published, ==, 0);
  g_assert_cmpuint (serialized, ==, 0);
  g_assert_cmpuint (flushes, ==, 0);
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (atomr_inspector_server_get_recorder (server)), ==, 0);

  /* /v1/actors still counts them, from the actor's own counters. */
  g_assert_cmpuint (request (server, "GET", "/v1/actors", atomr_inspector_server_get_token (server), NULL, &body),
                    ==, 200);
  a = json_array_get_object_element (json_object_get_array_member (parse (parser, body), "actors"), 0);
  g_assert_cmpint (json_object_get_int_member (a, "completed"), ==, 2001);
  g_assert_cmpint (json_object_get_int_member (a, "in_flight"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (a, "errors"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (a, "mailbox_depth"), ==, 0);

  /* A streaming client hooks the actor: its records arrive, in batches. */
  stream_connect (server, session, atomr_inspector_server_get_token (server), &s);
  g_assert_no_error (s.error);
  g_assert_true (atomr_inspector_server_is_hooked (server));
  g_assert_true (atomr_actor_has_observer (actor));
  g_assert_false (actor_has_handlers (actor));
  run_fills (actor, buffer, 100);
  while (s.records + s.dropped < 101)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (s.records, ==, 101);
  g_assert_true (s.in_order);
  atomr_inspector_server_get_debug_counters (server, &observed, &published, &serialized, &flushes);
  g_assert_cmpuint (observed, ==, 101);
  g_assert_cmpuint (published, ==, 101);
  g_assert_cmpuint (serialized, ==, 101);
  g_assert_cmpuint (flushes, >=, 1);
  g_assert_cmpuint (flushes, <=, 101);
  g_assert_cmpuint (wait_records (server, 101), ==, 101);

  /* The last client gone, the actor is left alone again. */
  soup_websocket_connection_close (s.ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
  while (soup_websocket_connection_get_state (s.ws) != SOUP_WEBSOCKET_STATE_CLOSED)
    g_main_context_iteration (NULL, TRUE);
  g_clear_object (&s.ws);
  for (guint i = 0; i < 10000 && atomr_inspector_server_is_hooked (server); i++)
    g_usleep (1000);
  g_assert_false (atomr_inspector_server_is_hooked (server));
  g_assert_false (actor_has_observers (actor));
  run_fills (actor, buffer, 500);
  atomr_inspector_server_get_debug_counters (server, &observed, &published, &serialized, NULL);
  g_assert_cmpuint (observed, ==, 101);
  g_assert_cmpuint (published, ==, 101);

  /* always-record: recorded with nobody attached (and queued for nobody). */
  atomr_inspector_server_set_always_record (server, TRUE);
  g_assert_true (actor_has_observers (actor));
  run_fills (actor, buffer, 10);
  atomr_inspector_server_get_debug_counters (server, &observed, &published, &serialized, NULL);
  g_assert_cmpuint (observed, ==, 112);
  g_assert_cmpuint (published, ==, 101);
  g_assert_cmpuint (serialized, ==, 101);
  g_assert_cmpuint (wait_records (server, 112), ==, 112);
  atomr_inspector_server_set_always_record (server, FALSE);
  g_assert_false (actor_has_observers (actor));

  atomr_inspector_server_remove_actor (server, actor);
  atomr_inspector_server_stop (server);
}

static gboolean
wait_flushing (AtomrInspectorServer *server,
               gboolean              want)
{
  /* The server thread starts and stops its timer: wait for it (bounded,
   * by polls, never asserting on time). */
  for (guint i = 0; i < 5000 && atomr_inspector_server_is_flushing (server) != want; i++)
    g_usleep (1000);
  return atomr_inspector_server_is_flushing (server);
}

/* Issue 18: with always-record on and no client, the server thread did
 * not run its 16 ms flush: the actors' records waited for the 200 ms
 * housekeeping tick in a queue of 16384, so above about 80 000 operations
 * a second most were dropped (bench-inspector's always-record row
 * measured the dropping path).  The flush timer now runs while
 * always-record is on, whenever it was turned on (before the start too),
 * and stops with it; an idle server still runs none.  On the old code
 * atomr_inspector_server_is_flushing() would stay FALSE after
 * set_always_record (TRUE): its flush timer started only for a client. */
static void
test_always_record_flushes (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(AtomrInspectorServer) early = atomr_inspector_server_new ();
  g_autoptr(AtomrInspectorServer) bare = g_object_new (ATOMR_TYPE_INSPECTOR_SERVER, NULL);
  g_autoptr(AtomrCopyActor) copy = atomr_copy_actor_new (device, &error);
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 64, &error);
  AtomrActor *actor = ATOMR_ACTOR (copy);

  g_assert_no_error (error);
  /* Not started: nothing to flush, nothing to crash. */
  atomr_inspector_server_set_always_record (bare, TRUE);
  g_assert_false (atomr_inspector_server_is_flushing (bare));
  atomr_inspector_server_set_always_record (bare, FALSE);

  g_assert_true (atomr_inspector_server_start (server, &error));
  g_assert_no_error (error);
  atomr_inspector_server_add_actor (server, actor);
  /* Idle: no timer. */
  run_fills (actor, buffer, 100);
  g_assert_false (wait_flushing (server, FALSE));

  atomr_inspector_server_set_always_record (server, TRUE);
  g_assert_true (wait_flushing (server, TRUE));
  run_fills (actor, buffer, 1000);
  g_assert_cmpuint (wait_records (server, 1001), ==, 1001);
  g_assert_cmpuint (atomr_inspector_server_get_n_dropped (server), ==, 0);
  atomr_inspector_server_set_always_record (server, FALSE);
  g_assert_false (wait_flushing (server, FALSE));

  /* Stopped with always-record on: the timer goes with the thread. */
  atomr_inspector_server_set_always_record (server, TRUE);
  g_assert_true (wait_flushing (server, TRUE));
  atomr_inspector_server_stop (server);
  g_assert_false (atomr_inspector_server_is_flushing (server));
  atomr_inspector_server_remove_actor (server, actor);

  /* Turned on before the start. */
  atomr_inspector_server_set_always_record (early, TRUE);
  g_assert_true (atomr_inspector_server_start (early, &error));
  g_assert_no_error (error);
  g_assert_true (wait_flushing (early, TRUE));
  atomr_inspector_server_stop (early);
  g_assert_false (atomr_inspector_server_is_flushing (early));
}

/* The actors' records reach the server through a lock-free ring (many
 * producers, the server thread consumes).  Four actors on four threads,
 * each on its own context, with always-record: every record is either in
 * the recorder or counted as dropped (exactly), each actor's records in
 * its own order, and each record carries its own actor's name. */
#define N_ACTOR_THREADS 4

typedef struct
{
  AtomrActor  *actor;
  AtomrBuffer *buffer;
  guint        n;
} ActorThread;

static gpointer
actor_thread (gpointer data)
{
  ActorThread *t = data;
  GMainContext *context = atomr_actor_get_context (t->actor);

  gboolean done = FALSE;

  /* run_fills() on this thread's own context (it iterates the global
   * default one). */
  g_main_context_push_thread_default (context);
  for (guint i = 0; i < t->n; i++)
    atomr_actor_fill_async (t->actor, t->buffer, (gdouble) i, NULL, NULL, NULL);
  atomr_actor_barrier_async (t->actor, NULL, on_barrier_done, &done);
  while (!done)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  return NULL;
}

static void
test_actor_threads (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(GPtrArray) records = NULL;
  ActorThread t[N_ACTOR_THREADS];
  GThread *threads[N_ACTOR_THREADS];
  guint64 observed = 0, last[N_ACTOR_THREADS] = { 0 }, kept[N_ACTOR_THREADS] = { 0 }, total = 0, dropped;
  gboolean barrier_seen[N_ACTOR_THREADS] = { FALSE };
  /* Slow: more than the server's ring (16384) holds, fewer than its
   * recorder (65536) keeps. */
  guint n = g_test_slow () ? 12000 : 2500;

  g_assert_true (atomr_inspector_server_start (server, &error));
  g_assert_no_error (error);
  atomr_inspector_server_set_always_record (server, TRUE);
  for (guint i = 0; i < N_ACTOR_THREADS; i++)
    {
      g_autoptr(GMainContext) context = g_main_context_new ();
      g_autofree gchar *name = g_strdup_printf ("worker-%u", i);

      t[i].actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, context, &error);
      g_assert_no_error (error);
      atomr_actor_set_name (t[i].actor, name);
      t[i].buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 64, &error);
      g_assert_no_error (error);
      t[i].n = n;
      atomr_inspector_server_add_actor (server, t[i].actor);
      g_assert_true (atomr_actor_has_observer (t[i].actor));
    }
  for (guint i = 0; i < N_ACTOR_THREADS; i++)
    threads[i] = g_thread_new ("actor", actor_thread, &t[i]);
  for (guint i = 0; i < N_ACTOR_THREADS; i++)
    g_thread_join (threads[i]);

  /* n fills and a barrier per actor, every one observed. */
  atomr_inspector_server_get_debug_counters (server, &observed, NULL, NULL, NULL);
  g_assert_cmpuint (observed, ==, (guint64) N_ACTOR_THREADS * (n + 1));
  /* The flush moves them on: wait (bounded) until each is accounted for. */
  for (guint i = 0; i < 10000; i++)
    {
      dropped = atomr_inspector_server_get_n_dropped (server);
      if (atomr_trace_recorder_get_n_records (atomr_inspector_server_get_recorder (server)) + dropped >= observed)
        break;
      g_usleep (1000);
    }
  records = atomr_trace_recorder_get_records (atomr_inspector_server_get_recorder (server));
  for (guint k = 0; k < records->len; k++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, k);
      const gchar *name = atomr_launch_info_get_actor_name (info);
      guint i;

      g_assert_true (g_str_has_prefix (name, "worker-"));
      i = (guint) g_ascii_strtoull (name + 7, NULL, 10);
      g_assert_cmpuint (i, <, N_ACTOR_THREADS);
      if (kept[i] > 0)
        g_assert_cmpuint (atomr_launch_info_get_sequence (info), >, last[i]);
      /* Fills, then the barrier, which is last: no record of this actor
       * after it (drops may have removed any of them). */
      g_assert_false (barrier_seen[i]);
      barrier_seen[i] = g_str_equal (atomr_launch_info_get_operation (info), "barrier");
      if (!barrier_seen[i])
        g_assert_cmpstr (atomr_launch_info_get_operation (info), ==, "fill");
      last[i] = atomr_launch_info_get_sequence (info);
      kept[i]++;
      total++;
    }
  dropped = atomr_inspector_server_get_n_dropped (server);
  g_test_message ("%" G_GUINT64_FORMAT " records kept, %" G_GUINT64_FORMAT " dropped", total, dropped);
  g_assert_cmpuint (total + dropped, ==, observed);
  g_assert_cmpuint (records->len, ==, total);

  atomr_inspector_server_set_always_record (server, FALSE);
  for (guint i = 0; i < N_ACTOR_THREADS; i++)
    {
      atomr_inspector_server_remove_actor (server, t[i].actor);
      g_object_unref (t[i].buffer);
      g_object_unref (t[i].actor);
    }
  atomr_inspector_server_stop (server);
}

/* /v1/actors counts failures and what is still queued, without handlers. */
static void
test_actor_counters (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) copy = atomr_copy_actor_new (device, &error);
  g_autoptr(AtomrBuffer) small = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error);
  g_autoptr(AtomrBuffer) large = atomr_buffer_new (device, ATOMR_DTYPE_F32, 64, &error);
  AtomrActor *actor = ATOMR_ACTOR (copy);
  guint64 requested, completed, in_flight, failed;
  guint mailbox;
  gboolean done = FALSE;

  g_assert_no_error (error);
  /* A copy between buffers of different sizes fails validation. */
  atomr_actor_copy_async (actor, small, large, NULL, NULL, NULL);
  atomr_actor_fill_async (actor, small, 1.0, NULL, NULL, NULL);
  atomr_actor_get_counters (actor, &requested, NULL, NULL, NULL, &mailbox);
  g_assert_cmpuint (requested, ==, 2);
  atomr_actor_barrier_async (actor, NULL, on_barrier_any, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  atomr_actor_get_counters (actor, &requested, &completed, &in_flight, &failed, &mailbox);
  g_assert_cmpuint (requested, ==, 3);
  g_assert_cmpuint (in_flight, ==, 0);
  g_assert_cmpuint (mailbox, ==, 0);
  g_assert_cmpuint (failed, >=, 1);
  g_assert_cmpuint (completed, >=, 1);
}

/* Accepts the server's certificate only when it is the pinned one (the
 * discovery file's SHA-256 of its DER form). */
static gboolean
on_accept_certificate (SoupMessage          *msg,
                       GTlsCertificate      *certificate,
                       GTlsCertificateFlags  errors,
                       gpointer              user_data)
{
  g_autoptr(GByteArray) der = NULL;
  g_autofree gchar *fp = NULL;

  g_object_get (certificate, "certificate", &der, NULL);
  fp = g_compute_checksum_for_data (G_CHECKSUM_SHA256, der->data, der->len);
  return g_str_equal (fp, user_data);
}

/* A TLS request: status, or 0 with *error set when no answer came. */
static guint
tls_request (const gchar  *url,
             const gchar  *token,
             const gchar  *pin,
             GError      **error)
{
  g_autoptr(SoupSession) session = soup_session_new_with_options ("timeout", 20, NULL);
  g_autoptr(SoupMessage) msg = soup_message_new ("GET", url);
  g_autofree gchar *auth = g_strdup_printf ("Bearer %s", token);
  g_autoptr(GBytes) bytes = NULL;

  soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
  if (pin)
    g_signal_connect (msg, "accept-certificate", G_CALLBACK (on_accept_certificate), (gpointer) pin);
  bytes = soup_session_send_and_read (session, msg, NULL, error);
  return bytes ? soup_message_get_status (msg) : 0;
}

static gboolean
make_certificate (const gchar *dir,
                  gchar      **cert,
                  gchar      **key)
{
  g_autofree gchar *openssl = g_find_program_in_path ("openssl");
  g_autoptr(GError) error = NULL;
  gint status = 0;

  if (openssl == NULL)
    return FALSE;
  *cert = g_build_filename (dir, "cert.pem", NULL);
  *key = g_build_filename (dir, "key.pem", NULL);
  {
    const gchar *argv[] = { openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1",
                            "-keyout", *key, "-out", *cert, NULL };
    g_assert_true (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                                 NULL, NULL, NULL, NULL, &status, &error));
  }
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, &error));
  return TRUE;
}

/* TLS from PEM files made at test time (openssl): https:// and wss://
 * with the certificate pinned through the discovery file; plain HTTP and
 * unpinned clients get nothing; bad files and a non-loopback address
 * without TLS are clear errors. */
static void
test_tls (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree gchar *dir = g_dir_make_tmp ("atomr-tls-XXXXXX", NULL);
  g_autofree gchar *cert = NULL;
  g_autofree gchar *key = NULL;
  g_autofree gchar *text = NULL;
  g_autofree gchar *url = NULL;
  g_autofree gchar *api = NULL;
  g_autofree gchar *plain = NULL;
  g_autofree gchar *missing = g_build_filename (dir, "missing.pem", NULL);
  const gchar *pin;
  JsonObject *o;

  if (!make_certificate (dir, &cert, &key))
    {
      g_test_skip ("no openssl to make a certificate with");
      return;
    }

  /* Errors that name what was wrong. */
  g_assert_false (atomr_inspector_server_set_tls_files (server, missing, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);
  g_assert_false (atomr_inspector_server_set_tls_files (server, cert, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "private key"));
  g_clear_error (&error);
  g_assert_null (atomr_inspector_server_get_tls_certificate (server));
  atomr_inspector_server_set_address (server, "0.0.0.0");
  g_assert_false (atomr_inspector_server_start (server, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "0.0.0.0"));
  g_assert_nonnull (strstr (error->message, "TLS"));
  g_clear_error (&error);
  atomr_inspector_server_set_address (server, "localhost");
  g_assert_false (atomr_inspector_server_start (server, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "\"localhost\""));
  g_clear_error (&error);
  g_assert_false (atomr_inspector_server_is_running (server));
  atomr_inspector_server_set_address (server, NULL);
  g_assert_cmpstr (atomr_inspector_server_get_address (server), ==, "127.0.0.1");

  g_assert_true (atomr_inspector_server_set_tls_files (server, cert, key, &error));
  g_assert_no_error (error);
  g_assert_nonnull (atomr_inspector_server_get_tls_certificate (server));
  g_assert_true (atomr_inspector_server_start (server, &error));
  g_assert_no_error (error);

  /* Discovery: the scheme, the URLs, the pin. */
  g_assert_true (g_file_get_contents (atomr_inspector_server_get_discovery_path (server), &text, NULL, &error));
  o = parse (parser, text);
  g_assert_cmpstr (json_object_get_string_member (o, "scheme"), ==, "https");
  url = atomr_inspector_server_dup_url (server);
  g_assert_true (g_str_has_prefix (url, "https://127.0.0.1:"));
  g_assert_cmpstr (json_object_get_string_member (o, "url"), ==, url);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (o, "stream_url"), "wss://127.0.0.1:"));
  pin = json_object_get_string_member (o, "tls_certificate_sha256");
  g_assert_cmpuint (strlen (pin), ==, 64);

  /* Pinned: served.  Unpinned (self-signed, unknown): refused by the
   * client.  Plain HTTP on the TLS port: no answer. */
  api = g_strconcat (url, "/v1/process", NULL);
  g_assert_cmpuint (tls_request (api, atomr_inspector_server_get_token (server), pin, &error), ==, 200);
  g_assert_no_error (error);
  g_assert_cmpuint (tls_request (api, "wrong", pin, &error), ==, 401);
  g_assert_no_error (error);
  g_assert_cmpuint (tls_request (api, atomr_inspector_server_get_token (server), NULL, &error), ==, 0);
  g_assert_error (error, G_TLS_ERROR, G_TLS_ERROR_BAD_CERTIFICATE);
  g_clear_error (&error);
  plain = g_strdup_printf ("http://127.0.0.1:%u/v1/process", atomr_inspector_server_get_port (server));
  g_assert_cmpuint (tls_request (plain, atomr_inspector_server_get_token (server), NULL, &error), !=, 200);
  g_clear_error (&error);

  /* wss:// streams. */
  {
    g_autoptr(SoupSession) session = soup_session_new ();
    g_autofree gchar *stream_url = g_strdup (json_object_get_string_member (o, "stream_url"));
    g_autoptr(SoupMessage) msg = soup_message_new ("GET", stream_url);
    g_autofree gchar *auth = g_strdup_printf ("Bearer %s", atomr_inspector_server_get_token (server));
    Stream st;

    memset (&st, 0, sizeof st);
    st.in_order = TRUE;
    soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
    g_signal_connect (msg, "accept-certificate", G_CALLBACK (on_accept_certificate), (gpointer) pin);
    soup_session_websocket_connect_async (session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL, on_connected, &st);
    while (st.ws == NULL && st.error == NULL)
      g_main_context_iteration (NULL, TRUE);
    g_assert_no_error (st.error);
    for (guint i = 0; i < 10000 && atomr_inspector_server_get_n_clients (server) == 0; i++)
      g_usleep (1000);
    publish (server, 1, "over-tls");
    while (st.records < 1)
      g_main_context_iteration (NULL, TRUE);
    g_assert_cmpuint (st.records, ==, 1);
    soup_websocket_connection_close (st.ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
    while (soup_websocket_connection_get_state (st.ws) != SOUP_WEBSOCKET_STATE_CLOSED)
      g_main_context_iteration (NULL, TRUE);
    g_clear_object (&st.ws);
  }
  atomr_inspector_server_stop (server);
  g_unlink (cert);
  g_unlink (key);
  g_rmdir (dir);
}

static void
test_enable (void)
{
  g_autoptr(GError) error = NULL;
  AtomrInspectorServer *a = atomr_inspector_enable (&error);
  AtomrInspectorServer *b;

  g_assert_no_error (error);
  g_assert_nonnull (a);
  b = atomr_inspector_enable (&error);
  g_assert_true (a == b);
  g_assert_true (atomr_inspector_server_is_running (a));
  g_assert_true (g_file_test (atomr_inspector_server_get_discovery_path (a), G_FILE_TEST_EXISTS));
}

/* ATOMR_INSPECT=1: the first actor starts the process server and every
 * actor is listed; a tool finds it through the discovery file. */
static void
test_env_attach (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(AtomrActor) actor = NULL;
      g_auto(GStrv) list = NULL;
      g_autofree gchar *body = NULL;
      AtomrInspectorServer *server;
      JsonObject *o = NULL;
      JsonArray *actors;

      g_setenv ("ATOMR_INSPECT", "1", TRUE);
      actor = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);   /* bare: no device needed */
      atomr_actor_set_name (actor, "env-actor");
      list = atomr_inspector_list_local (&error);
      g_assert_no_error (error);
      for (guint i = 0; list[i]; i++)
        {
          g_autoptr(JsonParser) p = json_parser_new ();
          JsonObject *e = parse (p, list[i]);
          if (json_object_get_int_member (e, "pid") == getpid ())
            o = json_object_ref (e);
        }
      g_assert_nonnull (o);
      server = atomr_inspector_enable (&error);
      g_assert_cmpint (json_object_get_int_member (o, "port"), ==, atomr_inspector_server_get_port (server));
      g_assert_cmpuint (request (server, "GET", "/v1/actors", json_object_get_string_member (o, "token"), NULL, &body), ==, 200);
      actors = json_object_get_array_member (parse (parser, body), "actors");
      g_assert_cmpuint (json_array_get_length (actors), ==, 1);
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (actors, 0), "name"), ==, "env-actor");
      json_object_unref (o);
      return;
    }
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* The stream's hand-written serializer: every message parses as JSON with
 * the members the JsonBuilder version wrote, strings escaped (quotes,
 * backslashes, control characters), invalid UTF-8 made valid, a whole
 * gpu_ms still a double and a NaN null (not the invalid `nan`). */
static JsonObject *
record_json (AtomrLaunchInfo *info,
             gchar          **text_out)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  GString *out = g_string_new ("prefix:");
  JsonNode *root;

  atomr_inspector_record_append_json (info, out);
  g_assert_true (g_str_has_prefix (out->str, "prefix:{"));   /* appends */
  g_assert_true (g_utf8_validate (out->str, -1, NULL));
  json_parser_load_from_data (parser, out->str + 7, -1, &error);
  g_assert_no_error (error);
  root = json_parser_get_root (parser);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  *text_out = g_string_free (out, FALSE);
  return json_object_ref (json_node_get_object (root));
}

static void
test_record_json (void)
{
  g_autoptr(AtomrLaunchInfo) info = atomr_launch_info_new ("a\"b\\c\nd\x01" "e\xc3\xa9", "blas", "gemm\t2");
  g_autoptr(AtomrLaunchInfo) plain = atomr_launch_info_new ("copy", "core", "fill");
  g_autoptr(GError) failure = g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_LIBRARY, "bad \xff byte \"x\"");
  g_autoptr(JsonObject) o = NULL;
  g_autoptr(JsonObject) p = NULL;
  g_autofree gchar *text = NULL;
  g_autofree gchar *text2 = NULL;
  const gchar *err;

  atomr_launch_info_set_sequence (info, G_GUINT64_CONSTANT (9007199254740993));
  atomr_launch_info_set_device_ordinal (info, 3);
  atomr_launch_info_set_stream_id (info, 7);
  atomr_launch_info_set_mailbox_depth (info, 12);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED, 5000);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, 905000);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_START, 100000);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_END, 800000);
  atomr_launch_info_set_gpu_duration_ms (info, 2.0);
  atomr_launch_info_set_error (info, failure);
  o = record_json (info, &text);
  g_assert_cmpstr (json_object_get_string_member (o, "type"), ==, "record");
  g_assert_cmpstr (json_object_get_string_member (o, "actor"), ==, "a\"b\\c\nd\x01" "e\xc3\xa9");
  g_assert_cmpstr (json_object_get_string_member (o, "library"), ==, "blas");
  g_assert_cmpstr (json_object_get_string_member (o, "operation"), ==, "gemm\t2");
  g_assert_cmpint (json_object_get_int_member (o, "sequence"), ==, G_GINT64_CONSTANT (9007199254740993));
  g_assert_cmpint (json_object_get_int_member (o, "device"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (o, "stream"), ==, 7);
  g_assert_cmpint (json_object_get_int_member (o, "mailbox_depth"), ==, 12);
  g_assert_cmpint (json_object_get_int_member (o, "submit_us"), ==, atomr_launch_info_get_submit_time (info));
  g_assert_cmpint (json_object_get_int_member (o, "complete_us"), ==, atomr_launch_info_get_complete_time (info));
  g_assert_cmpint (json_object_get_int_member (o, "enqueue_us"), ==, atomr_launch_info_get_enqueue_time (info));
  g_assert_cmpint (json_object_get_int_member (o, "gpu_start_ns"), ==, 100000);
  g_assert_cmpint (json_object_get_int_member (o, "gpu_end_ns"), ==, 800000);
  /* 2.0 stays a double for a typed reader. */
  g_assert_cmpint (json_node_get_value_type (json_object_get_member (o, "gpu_ms")), ==, G_TYPE_DOUBLE);
  g_assert_cmpfloat (json_object_get_double_member (o, "gpu_ms"), ==, 2.0);
  err = json_object_get_string_member (o, "error");
  g_assert_true (g_str_has_prefix (err, "bad "));
  g_assert_true (g_str_has_suffix (err, " byte \"x\""));
  g_assert_null (strchr (err, '\xff'));

  /* Success, no GPU times, a NaN duration and a negative number. */
  atomr_launch_info_set_gpu_duration_ms (plain, NAN);
  atomr_launch_info_set_device_ordinal (plain, -1);
  p = record_json (plain, &text2);
  g_assert_true (json_object_get_null_member (p, "error"));
  g_assert_true (json_object_get_null_member (p, "gpu_ms"));
  g_assert_cmpint (json_object_get_int_member (p, "device"), ==, -1);
  g_assert_false (json_object_has_member (p, "gpu_start_ns"));
  g_assert_cmpuint (json_object_get_size (p), ==, 13);
  g_assert_cmpuint (json_object_get_size (o), ==, 15);
}

int
main (int argc, char **argv)
{
  int rc;

  runtime_dir = g_dir_make_tmp ("atomr-inspect-XXXXXX", NULL);
  g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/inspector-server/bare", test_bare);
  g_test_add_func ("/inspector-server/start-stop", test_start_stop);
  g_test_add_func ("/inspector-server/token-and-api", test_token_and_api);
  g_test_add_func ("/inspector-server/discovery", test_discovery);
  g_test_add_func ("/inspector-server/stream", test_stream);
  g_test_add_func ("/inspector-server/record-json", test_record_json);
  g_test_add_data_func ("/inspector-server/slow-client", "/v1/stream", test_slow_client);
  g_test_add_data_func ("/inspector-server/slow-client-batched", "/v1/stream?batch=1", test_slow_client);
  g_test_add_func ("/inspector-server/stream-batched", test_stream_batched);
  g_test_add_func ("/inspector-server/limits", test_limits);
  g_test_add_func ("/inspector-server/client-vanishes", test_client_vanishes);
  g_test_add_func ("/inspector-server/idle-costs-nothing", test_idle_costs_nothing);
  g_test_add_func ("/inspector-server/always-record-flushes", test_always_record_flushes);
  g_test_add_func ("/inspector-server/actor-counters", test_actor_counters);
  g_test_add_func ("/inspector-server/actor-threads", test_actor_threads);
  g_test_add_func ("/inspector-server/tls", test_tls);
  g_test_add_func ("/inspector-server/enable", test_enable);
  g_test_add_func ("/inspector-server/env-attach", test_env_attach);
  rc = g_test_run ();
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GFile) dir = g_file_new_for_path (runtime_dir);
    g_autoptr(GFile) sub = g_file_get_child (dir, "atomr");
    g_autoptr(GFileEnumerator) e = g_file_enumerate_children (sub, G_FILE_ATTRIBUTE_STANDARD_NAME, 0, NULL, NULL);
    GFileInfo *info;
    while (e && (info = g_file_enumerator_next_file (e, NULL, NULL)))
      {
        g_autoptr(GFile) f = g_file_get_child (sub, g_file_info_get_name (info));
        g_file_delete (f, NULL, NULL);
        g_object_unref (info);
      }
  }
  g_free (runtime_dir);
  return rc;
}
