/* atomr-inspector-server.h — live attach: HTTP + WebSocket inspector endpoint
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "core/atomr-actor.h"
#include "trace/atomr-trace-recorder.h"

G_BEGIN_DECLS

/**
 * ATOMR_INSPECTOR_API_VERSION:
 *
 * The version of the inspector server's JSON API, the `N` of its `/vN/`
 * paths and the `api_version` member of every answer.
 *
 * Since: 0.2
 */
#define ATOMR_INSPECTOR_API_VERSION 1

#define ATOMR_TYPE_INSPECTOR_SERVER (atomr_inspector_server_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrInspectorServer, atomr_inspector_server, ATOMR, INSPECTOR_SERVER, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrInspectorServer *atomr_inspector_server_new              (void);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_inspector_server_start            (AtomrInspectorServer *self,
                                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_stop             (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_inspector_server_is_running       (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_inspector_server_get_port         (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
const gchar          *atomr_inspector_server_get_token        (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
const gchar          *atomr_inspector_server_get_discovery_path (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
AtomrTraceRecorder   *atomr_inspector_server_get_recorder     (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_inspector_server_get_max_clients  (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_set_max_clients  (AtomrInspectorServer *self,
                                                               guint                 max_clients);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_inspector_server_get_idle_timeout (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_set_idle_timeout (AtomrInspectorServer *self,
                                                               guint                 seconds);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_inspector_server_get_always_record (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_set_always_record (AtomrInspectorServer *self,
                                                                gboolean              always_record);
ATOMR_AVAILABLE_IN_ALL
const gchar          *atomr_inspector_server_get_address      (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_set_address      (AtomrInspectorServer *self,
                                                               const gchar          *address);
ATOMR_AVAILABLE_IN_ALL
GTlsCertificate      *atomr_inspector_server_get_tls_certificate (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_set_tls_certificate (AtomrInspectorServer *self,
                                                                  GTlsCertificate      *certificate);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_inspector_server_set_tls_files    (AtomrInspectorServer *self,
                                                               const gchar          *cert_file,
                                                               const gchar          *key_file,
                                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
gchar                *atomr_inspector_server_dup_url          (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_add_actor        (AtomrInspectorServer *self,
                                                               AtomrActor           *actor);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_remove_actor     (AtomrInspectorServer *self,
                                                               AtomrActor           *actor);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_inspector_server_publish          (AtomrInspectorServer *self,
                                                               AtomrLaunchInfo      *info);
ATOMR_AVAILABLE_IN_ALL
guint64               atomr_inspector_server_get_n_dropped    (AtomrInspectorServer *self);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_inspector_server_get_n_clients    (AtomrInspectorServer *self);

ATOMR_AVAILABLE_IN_ALL
AtomrInspectorServer *atomr_inspector_enable                  (GError              **error);
ATOMR_AVAILABLE_IN_ALL
gchar               **atomr_inspector_list_local              (GError              **error);

G_END_DECLS
