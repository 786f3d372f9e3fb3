/* atomr-trace-recorder.h — records what actors ran, exports Chrome traces
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
#include "core/atomr-launch-info.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_TRACE_RECORDER (atomr_trace_recorder_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrTraceRecorder, atomr_trace_recorder, ATOMR, TRACE_RECORDER, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrTraceRecorder *atomr_trace_recorder_new              (guint                capacity);
ATOMR_AVAILABLE_IN_ALL
guint               atomr_trace_recorder_get_capacity     (AtomrTraceRecorder  *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_trace_recorder_add_actor        (AtomrTraceRecorder  *self,
                                                           AtomrActor          *actor);
ATOMR_AVAILABLE_IN_ALL
void                atomr_trace_recorder_remove_actor     (AtomrTraceRecorder  *self,
                                                           AtomrActor          *actor);
ATOMR_AVAILABLE_IN_ALL
void                atomr_trace_recorder_add_record       (AtomrTraceRecorder  *self,
                                                           AtomrLaunchInfo     *info);
ATOMR_AVAILABLE_IN_ALL
GPtrArray          *atomr_trace_recorder_get_records      (AtomrTraceRecorder  *self);
ATOMR_AVAILABLE_IN_ALL
guint               atomr_trace_recorder_get_n_records    (AtomrTraceRecorder  *self);
ATOMR_AVAILABLE_IN_ALL
guint64             atomr_trace_recorder_get_n_dropped    (AtomrTraceRecorder  *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_trace_recorder_clear            (AtomrTraceRecorder  *self);
ATOMR_AVAILABLE_IN_ALL
gchar              *atomr_trace_recorder_to_json          (AtomrTraceRecorder  *self);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_trace_recorder_save             (AtomrTraceRecorder  *self,
                                                           const gchar         *path,
                                                           GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_trace_recorder_load_json        (AtomrTraceRecorder  *self,
                                                           const gchar         *json,
                                                           gssize               length,
                                                           GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_trace_recorder_load             (AtomrTraceRecorder  *self,
                                                           const gchar         *path,
                                                           GError             **error);

ATOMR_AVAILABLE_IN_0_2
gboolean            atomr_trace_recorder_load_json_string (AtomrTraceRecorder  *self,
                                                           const gchar         *json,
                                                           GError             **error);

G_END_DECLS
