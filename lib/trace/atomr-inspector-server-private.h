/* atomr-inspector-server-private.h — the actor's hook for ATOMR_INSPECT
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "core/atomr-actor.h"

G_BEGIN_DECLS

/* Called by every actor once constructed: with ATOMR_INSPECT=1 (not "0" or
 * empty) starts the process's inspector server on first use and adds the
 * actor to it; otherwise one atomic read.  A no-op in builds without
 * libsoup. */
void atomr_inspector_env_attach (AtomrActor *actor);

#ifdef ATOMR_HAVE_SOUP
#include "trace/atomr-inspector-server.h"

/* Debug counters, for tests of what a server costs the application:
 * records the actors' handlers saw, records queued for clients, records
 * turned into JSON, and flushes of the queue.  Any pointer may be NULL. */
void     atomr_inspector_server_get_debug_counters (AtomrInspectorServer *self,
                                                    guint64              *observed,
                                                    guint64              *published,
                                                    guint64              *serialized,
                                                    guint64              *flushes);
/* Serves one connection whose bytes are @data on this thread (a stopped
 * server only), "@TOKEN@" replaced by the token; returns the answer bytes.
 * For the fuzz targets and their seed replay (tests/fuzz). */
GBytes  *atomr_inspector_server_serve_bytes        (AtomrInspectorServer *self,
                                                    const guint8         *data,
                                                    gsize                 size);
/* Appends @info as one `/v1/stream` record message (a JSON object) to
 * @out: the server thread's serializer, for tests.  Any thread. */
void     atomr_inspector_record_append_json         (AtomrLaunchInfo      *info,
                                                    GString              *out);
/* Whether the actors' handlers are connected now. */
gboolean atomr_inspector_server_is_hooked          (AtomrInspectorServer *self);
/* Whether the server thread's 16 ms flush timer runs now (while clients
 * stream or always-record is on; set by the server thread). */
gboolean atomr_inspector_server_is_flushing        (AtomrInspectorServer *self);
#endif

G_END_DECLS
