/* test-gpu-inspector.c — attach to a running actor workload through the
 * inspector server: the WebSocket stream receives every completed
 * operation live, and /v1/actors counts them.  Skips without a device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include <atomr.h>

typedef struct
{
  SoupWebsocketConnection *ws;
  GError                  *error;
  const gchar             *actor_name;
  guint                    records;
  guint                    errors;
  guint64                  dropped;
  guint                    frames;   /* messages with records */
} Stream;

/* One record message: this actor's, on device 0, its host times in order
 * (submitted <= enqueued <= seen complete: the completion time is read
 * once per completion pass and never precedes the enqueue). */
static void
check_record (Stream     *s,
              JsonObject *o)
{
  gint64 submit = json_object_get_int_member (o, "submit_us");
  gint64 enqueue = json_object_get_int_member (o, "enqueue_us");
  gint64 complete = json_object_get_int_member (o, "complete_us");

  g_assert_cmpstr (json_object_get_string_member (o, "type"), ==, "record");
  g_assert_cmpstr (json_object_get_string_member (o, "actor"), ==, s->actor_name);
  g_assert_cmpint (json_object_get_int_member (o, "device"), ==, 0);
  g_assert_cmpint (submit, >, 0);
  g_assert_cmpint (submit, <=, enqueue);
  g_assert_cmpint (enqueue, <=, complete);
  if (!json_object_get_null_member (o, "error"))
    s->errors++;
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
  JsonObject *o;

  g_assert_true (json_parser_load_from_data (parser, g_bytes_get_data (message, NULL),
                                             g_bytes_get_size (message), NULL));
  o = json_node_get_object (json_parser_get_root (parser));
  if (g_str_equal (json_object_get_string_member (o, "type"), "dropped"))
    {
      s->dropped += json_object_get_int_member (o, "count");
      return;
    }
  s->frames++;
  if (g_str_equal (json_object_get_string_member (o, "type"), "records"))
    {
      /* /v1/stream?batch=1 */
      JsonArray *a = json_object_get_array_member (o, "records");
      g_assert_cmpuint (json_array_get_length (a), >, 0);
      g_assert_cmpuint (json_array_get_length (a), <=, 64);
      for (guint i = 0; i < json_array_get_length (a); i++)
        check_record (s, json_array_get_object_element (a, i));
      return;
    }
  check_record (s, o);
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
on_barrier (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

static void
test_attach_live (gconstpointer data)
{
  const gchar *path = data;   /* /v1/stream, or with ?batch=1 */
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrInspectorServer) server = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(SoupSession) session = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autoptr(GBytes) body = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree gchar *url = NULL;
  g_autofree gchar *auth = NULL;
  JsonArray *actors;
  JsonObject *a;
  const guint n = 256;
  gboolean done = FALSE;
  Stream s = { 0 };

  if (device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      g_test_skip ("no CUDA device");
      return;
    }
  server = atomr_inspector_server_new ();
  g_assert_true (atomr_inspector_server_start (server, &error));
  g_assert_no_error (error);
  actor = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_actor_set_name (ATOMR_ACTOR (actor), "live-filler");
  s.actor_name = "live-filler";
  atomr_inspector_server_add_actor (server, ATOMR_ACTOR (actor));
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1u << 20, &error);
  g_assert_no_error (error);

  /* Attach as a tool would: token from the server, WebSocket stream. */
  session = soup_session_new ();
  auth = g_strdup_printf ("Bearer %s", atomr_inspector_server_get_token (server));
  url = g_strdup_printf ("http://127.0.0.1:%u%s", atomr_inspector_server_get_port (server), path);
  msg = soup_message_new ("GET", url);
  soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
  soup_session_websocket_connect_async (session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL, on_connected, &s);
  while (s.ws == NULL && s.error == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (s.error);
  for (guint i = 0; i < 10000 && atomr_inspector_server_get_n_clients (server) == 0; i++)
    g_usleep (1000);
  g_assert_cmpuint (atomr_inspector_server_get_n_clients (server), ==, 1);

  /* The workload, running while the client watches. */
  for (guint i = 0; i < n; i++)
    atomr_actor_fill_async (ATOMR_ACTOR (actor), buffer, (gdouble) i, NULL, NULL, NULL);
  atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, on_barrier, &done);
  while (!done || s.records + s.dropped < n)
    g_main_context_iteration (NULL, TRUE);
  g_test_message ("streamed %u records in %u messages, %" G_GUINT64_FORMAT " dropped", s.records, s.frames,
                  s.dropped);
  if (strstr (path, "batch") == NULL)
    g_assert_cmpuint (s.frames, ==, s.records);
  else
    g_assert_cmpuint (s.frames, <=, s.records);
  g_assert_cmpuint (s.records + s.dropped, >=, n);
  g_assert_cmpuint (s.records, >, 0);
  g_assert_cmpuint (s.errors, ==, 0);

  /* The actor as /v1/actors sees it. */
  g_clear_object (&msg);
  g_free (url);
  url = g_strdup_printf ("http://127.0.0.1:%u/v1/actors", atomr_inspector_server_get_port (server));
  msg = soup_message_new ("GET", url);
  soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
  body = soup_session_send_and_read (session, msg, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (soup_message_get_status (msg), ==, 200);
  g_assert_true (json_parser_load_from_data (parser, g_bytes_get_data (body, NULL), g_bytes_get_size (body), &error));
  actors = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "actors");
  g_assert_cmpuint (json_array_get_length (actors), ==, 1);
  a = json_array_get_object_element (actors, 0);
  g_assert_cmpstr (json_object_get_string_member (a, "name"), ==, "live-filler");
  g_assert_cmpint (json_object_get_int_member (a, "completed"), >=, n);
  g_assert_cmpint (json_object_get_int_member (a, "errors"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (a, "in_flight"), ==, 0);

  soup_websocket_connection_close (s.ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
  while (soup_websocket_connection_get_state (s.ws) != SOUP_WEBSOCKET_STATE_CLOSED)
    g_main_context_iteration (NULL, TRUE);
  g_clear_object (&s.ws);
  atomr_inspector_server_remove_actor (server, ATOMR_ACTOR (actor));
  atomr_inspector_server_stop (server);
}

int
main (int argc, char **argv)
{
  g_autofree gchar *runtime = g_dir_make_tmp ("atomr-gpu-inspect-XXXXXX", NULL);

  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/gpu-inspector/attach-live", "/v1/stream", test_attach_live);
  g_test_add_data_func ("/gpu-inspector/attach-live-batched", "/v1/stream?batch=1", test_attach_live);
  return g_test_run ();
}
