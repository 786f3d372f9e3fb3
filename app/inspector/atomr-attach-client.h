/* atomr-attach-client.h — a live connection to a process's inspector server
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>
#include <gio/gio.h>

G_BEGIN_DECLS

/* One discovered process (a discovery file of atomr_inspector_list_local()). */
typedef struct {
  gint64  pid;
  gchar  *program;
  gchar  *url;          /* http(s)://ADDRESS:PORT */
  gchar  *stream_url;   /* ws(s)://ADDRESS:PORT/v1/stream */
  gchar  *token;
  gchar  *pin;          /* SHA-256 of the TLS certificate, or NULL */
  gchar  *version;
} AtomrAttachTarget;

void               atomr_attach_target_free   (AtomrAttachTarget *target);
AtomrAttachTarget *atomr_attach_target_parse  (const gchar       *json,
                                               GError           **error);
GPtrArray         *atomr_attach_list_targets  (GError           **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrAttachTarget, atomr_attach_target_free)

/* One message of /v1/stream: a record (returned) or a drop notice
 * (*dropped += count, returns NULL with no error). */
AtomrLaunchInfo   *atomr_attach_parse_message (const gchar       *text,
                                               gsize              length,
                                               guint64           *dropped,
                                               GError           **error);
/* One message of /v1/stream or /v1/stream?batch=1: a record or a batch of
 * them ({"type":"records","records":[...]}) appended to @records, or a
 * drop notice (*dropped += count).  FALSE with @error for a malformed
 * message, and then nothing is appended (a batch is all or nothing). */
gboolean           atomr_attach_parse_messages (const gchar      *text,
                                                gsize             length,
                                                GPtrArray        *records,
                                                guint64          *dropped,
                                                GError          **error);

#define ATOMR_TYPE_ATTACH_CLIENT (atomr_attach_client_get_type ())
G_DECLARE_FINAL_TYPE (AtomrAttachClient, atomr_attach_client, ATOMR, ATTACH_CLIENT, GObject)

AtomrAttachClient  *atomr_attach_client_new            (const gchar          *stream_url,
                                                        const gchar          *token,
                                                        const gchar          *pin);
void                atomr_attach_client_connect_async  (AtomrAttachClient    *self,
                                                        GCancellable         *cancellable,
                                                        GAsyncReadyCallback   callback,
                                                        gpointer              user_data);
gboolean            atomr_attach_client_connect_finish (AtomrAttachClient    *self,
                                                        GAsyncResult         *result,
                                                        GError              **error);
void                atomr_attach_client_disconnect     (AtomrAttachClient    *self);
gboolean            atomr_attach_client_is_connected   (AtomrAttachClient    *self);
AtomrTraceRecorder *atomr_attach_client_get_recorder   (AtomrAttachClient    *self);
guint64             atomr_attach_client_get_n_records  (AtomrAttachClient    *self);
guint64             atomr_attach_client_get_n_dropped  (AtomrAttachClient    *self);
guint64             atomr_attach_client_get_n_invalid  (AtomrAttachClient    *self);

G_END_DECLS
