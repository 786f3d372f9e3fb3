/* atomr-attach-client.c — a live connection to a process's inspector server
 *
 * Discovery files become targets; a client opens the target's WebSocket
 * stream (with the bearer token, pinning a self-signed TLS certificate to
 * the SHA-256 the discovery file names) and turns every record into an
 * AtomrLaunchInfo in its own AtomrTraceRecorder, which the trace page
 * follows (inspector_trace_page_follow_recorder()) as it would the
 * process's own.  Everything runs on the thread-default context of the
 * thread that called connect (the GTK main thread in the inspector).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "atomr-attach-client.h"

void
atomr_attach_target_free (AtomrAttachTarget *target)
{
  if (target == NULL)
    return;
  g_free (target->program);
  g_free (target->url);
  g_free (target->stream_url);
  g_free (target->token);
  g_free (target->pin);
  g_free (target->version);
  g_free (target);
}

static const gchar *
string_member (JsonObject  *o,
               const gchar *name)
{
  JsonNode *n = json_object_get_member (o, name);

  if (n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
    return json_node_get_string (n);
  return NULL;
}

static gint64
int_member (JsonObject  *o,
            const gchar *name,
            gint64       fallback)
{
  JsonNode *n = json_object_get_member (o, name);

  if (n && JSON_NODE_HOLDS_VALUE (n)
      && (json_node_get_value_type (n) == G_TYPE_INT64 || json_node_get_value_type (n) == G_TYPE_DOUBLE))
    return json_node_get_int (n);
  return fallback;
}

/* A discovery file's text (see atomr_inspector_list_local()). */
AtomrAttachTarget *
atomr_attach_target_parse (const gchar  *json,
                           GError      **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(AtomrAttachTarget) t = g_new0 (AtomrAttachTarget, 1);
  JsonObject *o;
  const gchar *address, *scheme, *token;
  gint64 port;

  if (!json_parser_load_from_data (parser, json, -1, error))
    return NULL;
  if (json_parser_get_root (parser) == NULL || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a discovery file is not a JSON object");
      return NULL;
    }
  o = json_node_get_object (json_parser_get_root (parser));
  address = string_member (o, "address");
  token = string_member (o, "token");
  port = int_member (o, "port", 0);
  if (address == NULL || token == NULL || port <= 0 || port > 65535)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "a discovery file lacks the address, port or token (port %" G_GINT64_FORMAT ")", port);
      return NULL;
    }
  scheme = string_member (o, "scheme");
  if (scheme == NULL)
    scheme = "http";
  t->pid = int_member (o, "pid", 0);
  t->program = g_strdup (string_member (o, "program") ? string_member (o, "program") : "");
  t->version = g_strdup (string_member (o, "atomr_version") ? string_member (o, "atomr_version") : "");
  t->token = g_strdup (token);
  t->pin = g_strdup (string_member (o, "tls_certificate_sha256"));
  if (string_member (o, "url") && string_member (o, "stream_url"))
    {
      t->url = g_strdup (string_member (o, "url"));
      t->stream_url = g_strdup (string_member (o, "stream_url"));
    }
  else
    {
      gboolean v6 = strchr (address, ':') != NULL;
      gboolean tls = g_str_equal (scheme, "https");
      t->url = g_strdup_printf ("%s://%s%s%s:%" G_GINT64_FORMAT, tls ? "https" : "http", v6 ? "[" : "", address,
                                v6 ? "]" : "", port);
      t->stream_url = g_strdup_printf ("%s://%s%s%s:%" G_GINT64_FORMAT "/v1/stream", tls ? "wss" : "ws",
                                       v6 ? "[" : "", address, v6 ? "]" : "", port);
    }
  return g_steal_pointer (&t);
}

/* This user's live processes, as AtomrAttachTarget (malformed files
 * skipped). */
GPtrArray *
atomr_attach_list_targets (GError **error)
{
  g_auto(GStrv) texts = atomr_inspector_list_local (error);
  GPtrArray *targets;

  if (texts == NULL)
    return NULL;
  targets = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_attach_target_free);
  for (guint i = 0; texts[i]; i++)
    {
      AtomrAttachTarget *t = atomr_attach_target_parse (texts[i], NULL);
      if (t)
        g_ptr_array_add (targets, t);
    }
  return targets;
}

/* A record message's object as a launch record, or NULL and @error. */
static AtomrLaunchInfo *
record_from_object (JsonObject  *o,
                    GError     **error)
{
  const gchar *type = string_member (o, "type");
  const gchar *error_text;
  AtomrLaunchInfo *info;
  JsonNode *gpu_ms;

  if (g_strcmp0 (type, "record") != 0 || string_member (o, "operation") == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "unknown stream message type \"%s\"",
                   type ? type : "(none)");
      return NULL;
    }
  info = atomr_launch_info_new (string_member (o, "actor") ? string_member (o, "actor") : "",
                                string_member (o, "library") ? string_member (o, "library") : "",
                                string_member (o, "operation"));
  atomr_launch_info_set_sequence (info, (guint64) MAX (int_member (o, "sequence", 0), 0));
  atomr_launch_info_set_device_ordinal (info, (gint) CLAMP (int_member (o, "device", 0), G_MININT, G_MAXINT));
  atomr_launch_info_set_stream_id (info, (guint) CLAMP (int_member (o, "stream", 0), 0, G_MAXUINT));
  atomr_launch_info_set_mailbox_depth (info, (guint) CLAMP (int_member (o, "mailbox_depth", 0), 0, G_MAXUINT));
  /* µs on the wire, ns in a launch info; out-of-range times are dropped */
  {
    static const struct { const gchar *name; AtomrLaunchEvent event; } times[] = {
      { "submit_us", ATOMR_LAUNCH_SUBMITTED },
      { "enqueue_us", ATOMR_LAUNCH_ENQUEUED },
      { "complete_us", ATOMR_LAUNCH_COMPLETED },
    };
    for (guint i = 0; i < G_N_ELEMENTS (times); i++)
      {
        gint64 us = int_member (o, times[i].name, 0);
        if (us > 0 && us < G_MAXINT64 / 1000)
          atomr_launch_info_set_timestamp (info, times[i].event, us * 1000);
      }
    {
      gint64 start = int_member (o, "gpu_start_ns", 0), end = int_member (o, "gpu_end_ns", 0);
      if (start > 0 && end >= start)
        {
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_START, start);
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_END, end);
        }
    }
  }
  gpu_ms = json_object_get_member (o, "gpu_ms");
  if (gpu_ms && JSON_NODE_HOLDS_VALUE (gpu_ms) && json_node_get_value_type (gpu_ms) == G_TYPE_DOUBLE)
    atomr_launch_info_set_gpu_duration_ms (info, json_node_get_double (gpu_ms));
  error_text = string_member (o, "error");
  if (error_text)
    {
      g_autoptr(GError) e = g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_LIBRARY, error_text);  /* the remote code is not sent */
      atomr_launch_info_set_error (info, e);
    }
  return info;
}


/* The root object of a stream message, or NULL and @error. */
static JsonObject *
message_object (JsonParser   *parser,
                const gchar  *text,
                gsize         length,
                GError      **error)
{
  if (!json_parser_load_from_data (parser, text, (gssize) length, error))
    return NULL;
  if (json_parser_get_root (parser) == NULL || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a stream message is not a JSON object");
      return NULL;
    }
  return json_node_get_object (json_parser_get_root (parser));
}

/* A drop notice: TRUE (and *dropped += count) or FALSE and @error. */
static gboolean
drop_notice (JsonObject  *o,
             guint64     *dropped,
             GError     **error)
{
  gint64 n = int_member (o, "count", -1);

  if (n < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a drop notice without a count");
      return FALSE;
    }
  if (dropped)
    *dropped += (guint64) n;
  return TRUE;
}

AtomrLaunchInfo *
atomr_attach_parse_message (const gchar  *text,
                            gsize         length,
                            guint64      *dropped,
                            GError      **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *o = message_object (parser, text, length, error);

  if (o == NULL)
    return NULL;
  if (g_strcmp0 (string_member (o, "type"), "dropped") == 0)
    {
      drop_notice (o, dropped, error);
      return NULL;
    }
  return record_from_object (o, error);
}

gboolean
atomr_attach_parse_messages (const gchar  *text,
                             gsize         length,
                             GPtrArray    *records,
                             guint64      *dropped,
                             GError      **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *o = message_object (parser, text, length, error);
  JsonNode *list;
  JsonArray *array;
  guint first = records->len;

  if (o == NULL)
    return FALSE;
  if (g_strcmp0 (string_member (o, "type"), "dropped") == 0)
    return drop_notice (o, dropped, error);
  if (g_strcmp0 (string_member (o, "type"), "records") != 0)
    {
      AtomrLaunchInfo *info = record_from_object (o, error);
      if (info)
        g_ptr_array_add (records, info);
      return info != NULL;
    }
  list = json_object_get_member (o, "records");
  if (list == NULL || !JSON_NODE_HOLDS_ARRAY (list))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a batch of records without its \"records\" array");
      return FALSE;
    }
  array = json_node_get_array (list);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *e = json_array_get_element (array, i);
      g_autoptr(GError) local = NULL;
      AtomrLaunchInfo *info = NULL;

      if (JSON_NODE_HOLDS_OBJECT (e))
        info = record_from_object (json_node_get_object (e), &local);
      else
        g_set_error (&local, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "not a JSON object");
      if (info == NULL)
        {
          /* All or nothing: a batch that does not parse adds no record. */
          while (records->len > first)
            atomr_launch_info_unref (g_ptr_array_steal_index (records, records->len - 1));
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "record %u of a batch: %s", i, local->message);
          return FALSE;
        }
      g_ptr_array_add (records, info);
    }
  return TRUE;
}

struct _AtomrAttachClient
{
  GObject                  parent_instance;
  gchar                   *stream_url;
  gchar                   *token;
  gchar                   *pin;
  SoupSession             *session;
  SoupWebsocketConnection *ws;
  AtomrTraceRecorder      *recorder;
  guint64                  n_records;
  guint64                  n_dropped;
  guint64                  n_invalid;
};

G_DEFINE_FINAL_TYPE (AtomrAttachClient, atomr_attach_client, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_CONNECTED,
  PROP_N_RECORDS,
  PROP_N_DROPPED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
on_message (SoupWebsocketConnection *ws,
            gint                     type,
            GBytes                  *message,
            gpointer                 user_data)
{
  AtomrAttachClient *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  gsize n = 0;
  const gchar *text = g_bytes_get_data (message, &n);
  guint64 dropped = self->n_dropped;

  if (type != SOUP_WEBSOCKET_DATA_TEXT)
    {
      self->n_invalid++;
      return;
    }
  /* A record, or a batch of them (we ask for batches: ?batch=1). */
  if (atomr_attach_parse_messages (text, n, records, &dropped, &error) && records->len > 0)
    {
      for (guint i = 0; i < records->len; i++)
        atomr_trace_recorder_add_record (self->recorder, g_ptr_array_index (records, i));
      self->n_records += records->len;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_RECORDS]);
    }
  else if (error)
    {
      g_debug ("attach: ignoring a stream message: %s", error->message);
      self->n_invalid++;
    }
  else if (dropped != self->n_dropped)
    {
      self->n_dropped = dropped;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_DROPPED]);
    }
}

static void
on_closed (SoupWebsocketConnection *ws,
           gpointer                 user_data)
{
  AtomrAttachClient *self = user_data;

  g_signal_handlers_disconnect_by_data (ws, self);
  g_clear_object (&self->ws);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONNECTED]);
}

static gboolean
on_accept_certificate (SoupMessage          *msg,
                       GTlsCertificate      *certificate,
                       GTlsCertificateFlags  errors,
                       gpointer              user_data)
{
  AtomrAttachClient *self = user_data;
  g_autoptr(GByteArray) der = NULL;
  g_autofree gchar *fp = NULL;

  if (self->pin == NULL)
    return FALSE;
  g_object_get (certificate, "certificate", &der, NULL);
  if (der == NULL)
    return FALSE;
  fp = g_compute_checksum_for_data (G_CHECKSUM_SHA256, der->data, der->len);
  return g_ascii_strcasecmp (fp, self->pin) == 0;
}

static void
connected_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  AtomrAttachClient *self = g_task_get_source_object (task);
  GError *error = NULL;
  SoupWebsocketConnection *ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &error);

  if (ws == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  self->ws = ws;
  g_signal_connect (ws, "message", G_CALLBACK (on_message), self);
  g_signal_connect (ws, "closed", G_CALLBACK (on_closed), self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONNECTED]);
  g_task_return_boolean (task, TRUE);
}

AtomrAttachClient *
atomr_attach_client_new (const gchar *stream_url,
                         const gchar *token,
                         const gchar *pin)
{
  AtomrAttachClient *self = g_object_new (ATOMR_TYPE_ATTACH_CLIENT, NULL);

  self->stream_url = g_strdup (stream_url);
  self->token = g_strdup (token);
  self->pin = g_strdup (pin);
  return self;
}

/* Opens the stream; fails with the URL named when it is not a ws:// or
 * wss:// URL, and with libsoup's error (401 included) otherwise. */
void
atomr_attach_client_connect_async (AtomrAttachClient   *self,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(SoupMessage) msg = NULL;
  g_autoptr(GUri) uri = NULL;

  g_task_set_source_tag (task, atomr_attach_client_connect_async);
  if (self->stream_url)
    uri = g_uri_parse (self->stream_url, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || (g_strcmp0 (g_uri_get_scheme (uri), "ws") != 0 && g_strcmp0 (g_uri_get_scheme (uri), "wss") != 0))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               _("“%s” is not a ws:// or wss:// stream address"),
                               self->stream_url ? self->stream_url : "");
      return;
    }
  if (self->ws)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (self->session == NULL)
    self->session = soup_session_new_with_options ("timeout", 15, NULL);
  /* Records in batches (one frame and one message signal per up to 64
   * records); a server that does not know the parameter ignores it and
   * sends one record a message, which on_message() reads as well. */
  if (g_uri_get_query (uri) == NULL)
    {
      GUri *batched = soup_uri_copy (uri, SOUP_URI_QUERY, "batch=1", SOUP_URI_NONE);
      g_uri_unref (uri);
      uri = batched;
    }
  msg = soup_message_new_from_uri ("GET", uri);
  if (self->token && *self->token)
    {
      g_autofree gchar *auth = g_strdup_printf ("Bearer %s", self->token);
      soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
    }
  g_signal_connect (msg, "accept-certificate", G_CALLBACK (on_accept_certificate), self);
  soup_session_websocket_connect_async (self->session, msg, NULL, NULL, G_PRIORITY_DEFAULT, cancellable,
                                        connected_cb, g_steal_pointer (&task));
}

gboolean
atomr_attach_client_connect_finish (AtomrAttachClient  *self,
                                    GAsyncResult       *result,
                                    GError            **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

void
atomr_attach_client_disconnect (AtomrAttachClient *self)
{
  if (self->ws && soup_websocket_connection_get_state (self->ws) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_close (self->ws, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
}

gboolean
atomr_attach_client_is_connected (AtomrAttachClient *self)
{
  return self->ws != NULL;
}

AtomrTraceRecorder *
atomr_attach_client_get_recorder (AtomrAttachClient *self)
{
  return self->recorder;
}

guint64
atomr_attach_client_get_n_records (AtomrAttachClient *self)
{
  return self->n_records;
}

guint64
atomr_attach_client_get_n_dropped (AtomrAttachClient *self)
{
  return self->n_dropped;
}

guint64
atomr_attach_client_get_n_invalid (AtomrAttachClient *self)
{
  return self->n_invalid;
}

static void
atomr_attach_client_dispose (GObject *object)
{
  AtomrAttachClient *self = ATOMR_ATTACH_CLIENT (object);

  if (self->ws)
    {
      g_signal_handlers_disconnect_by_data (self->ws, self);
      if (soup_websocket_connection_get_state (self->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close (self->ws, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
      g_clear_object (&self->ws);
    }
  g_clear_object (&self->session);
  g_clear_object (&self->recorder);
  G_OBJECT_CLASS (atomr_attach_client_parent_class)->dispose (object);
}

static void
atomr_attach_client_finalize (GObject *object)
{
  AtomrAttachClient *self = ATOMR_ATTACH_CLIENT (object);

  g_free (self->stream_url);
  g_free (self->token);
  g_free (self->pin);
  G_OBJECT_CLASS (atomr_attach_client_parent_class)->finalize (object);
}

static void
atomr_attach_client_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  AtomrAttachClient *self = ATOMR_ATTACH_CLIENT (object);

  switch (prop_id)
    {
    case PROP_CONNECTED:
      g_value_set_boolean (value, self->ws != NULL);
      break;
    case PROP_N_RECORDS:
      g_value_set_uint64 (value, self->n_records);
      break;
    case PROP_N_DROPPED:
      g_value_set_uint64 (value, self->n_dropped);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_attach_client_class_init (AtomrAttachClientClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = atomr_attach_client_dispose;
  object_class->finalize = atomr_attach_client_finalize;
  object_class->get_property = atomr_attach_client_get_property;

  properties[PROP_CONNECTED] =
    g_param_spec_boolean ("connected", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_RECORDS] =
    g_param_spec_uint64 ("n-records", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_DROPPED] =
    g_param_spec_uint64 ("n-dropped", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_attach_client_init (AtomrAttachClient *self)
{
  self->recorder = g_object_new (ATOMR_TYPE_TRACE_RECORDER, NULL);
}
