/* inspector-trace-model.h — a trace as tracks of operations, with statistics
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>
#include <gio/gio.h>

G_BEGIN_DECLS

#define INSPECTOR_TYPE_TRACE_MODEL (inspector_trace_model_get_type ())
G_DECLARE_FINAL_TYPE (InspectorTraceModel, inspector_trace_model, INSPECTOR, TRACE_MODEL, GObject)

InspectorTraceModel *inspector_trace_model_new               (void);
void                 inspector_trace_model_set_records       (InspectorTraceModel *self,
                                                              GPtrArray           *records);
gboolean             inspector_trace_model_load              (InspectorTraceModel *self,
                                                              const gchar         *path,
                                                              GError             **error);
gboolean             inspector_trace_model_save              (InspectorTraceModel *self,
                                                              const gchar         *path,
                                                              GError             **error);
void                 inspector_trace_model_set_recorder      (InspectorTraceModel *self,
                                                              AtomrTraceRecorder  *recorder);
AtomrTraceRecorder  *inspector_trace_model_get_recorder      (InspectorTraceModel *self);
void                 inspector_trace_model_refresh           (InspectorTraceModel *self);

guint                inspector_trace_model_get_n_records     (InspectorTraceModel *self);
AtomrLaunchInfo     *inspector_trace_model_get_record        (InspectorTraceModel *self,
                                                              guint                index);
guint                inspector_trace_model_get_n_tracks      (InspectorTraceModel *self);
const gchar         *inspector_trace_model_get_track_label   (InspectorTraceModel *self,
                                                              guint                track);
guint                inspector_trace_model_get_record_track  (InspectorTraceModel *self,
                                                              guint                index);
const guint         *inspector_trace_model_get_track_records (InspectorTraceModel *self,
                                                              guint                track,
                                                              guint               *n);
gint64               inspector_trace_model_get_start_time    (InspectorTraceModel *self);
gint64               inspector_trace_model_get_end_time      (InspectorTraceModel *self);
GListModel          *inspector_trace_model_get_statistics    (InspectorTraceModel *self);

gint64               inspector_launch_info_get_start         (AtomrLaunchInfo     *info);
gdouble              inspector_launch_info_get_duration_us   (AtomrLaunchInfo     *info);
gchar               *inspector_launch_info_get_label         (AtomrLaunchInfo     *info);

G_END_DECLS
