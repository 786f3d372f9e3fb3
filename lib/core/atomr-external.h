/* atomr-external.h — foreign memory, streams and events
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-actor.h"
#include "atomr-buffer.h"

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrBuffer *atomr_buffer_new_for_device_pointer (AtomrDevice        *device,
                                                  AtomrDtype          dtype,
                                                  guint64             n_elements,
                                                  guint64             device_pointer,
                                                  GDestroyNotify      notify,
                                                  gpointer            user_data,
                                                  GError            **error);

ATOMR_AVAILABLE_IN_ALL
void         atomr_actor_wait_event_async        (AtomrActor         *self,
                                                  guint64             event,
                                                  AtomrBuffer       **buffers,
                                                  guint               n_buffers,
                                                  GCancellable       *cancellable,
                                                  GAsyncReadyCallback callback,
                                                  gpointer            user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_actor_wait_event_finish       (AtomrActor         *self,
                                                  GAsyncResult       *result,
                                                  GError            **error);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_actor_wait_event_sync         (AtomrActor         *self,
                                                  guint64             event,
                                                  AtomrBuffer       **buffers,
                                                  guint               n_buffers,
                                                  GCancellable       *cancellable,
                                                  GError            **error);
ATOMR_AVAILABLE_IN_ALL
void         atomr_actor_signal_stream_async     (AtomrActor         *self,
                                                  guint64             stream,
                                                  AtomrBuffer       **buffers,
                                                  guint               n_buffers,
                                                  GCancellable       *cancellable,
                                                  GAsyncReadyCallback callback,
                                                  gpointer            user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_actor_signal_stream_finish    (AtomrActor         *self,
                                                  GAsyncResult       *result,
                                                  GError            **error);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_actor_signal_stream_sync      (AtomrActor         *self,
                                                  guint64             stream,
                                                  AtomrBuffer       **buffers,
                                                  guint               n_buffers,
                                                  GCancellable       *cancellable,
                                                  GError            **error);

ATOMR_AVAILABLE_IN_ALL
void         atomr_actor_wait_stream_async       (AtomrActor         *self,
                                                  guint64             stream,
                                                  AtomrBuffer       **buffers,
                                                  guint               n_buffers,
                                                  GCancellable       *cancellable,
                                                  GAsyncReadyCallback callback,
                                                  gpointer            user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_actor_wait_stream_finish      (AtomrActor         *self,
                                                  GAsyncResult       *result,
                                                  GError            **error);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_actor_wait_stream_sync        (AtomrActor         *self,
                                                  guint64             stream,
                                                  AtomrBuffer       **buffers,
                                                  guint               n_buffers,
                                                  GCancellable       *cancellable,
                                                  GError            **error);

G_END_DECLS
