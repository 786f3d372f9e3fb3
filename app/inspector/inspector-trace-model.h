/* inspector-trace-model.h — a Chrome trace as lanes of slices, flows and counters
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>
#include <gio/gio.h>

G_BEGIN_DECLS

/* What a lane shows. */
typedef enum {
  INSPECTOR_LANE_GPU,      /* a CUDA stream: GPU execution, serial */
  INSPECTOR_LANE_HOST,     /* an actor's host lifecycles (async b/e), thin */
  INSPECTOR_LANE_THREAD,   /* a thread of a plain Chrome trace (X, B/E) */
  INSPECTOR_LANE_COUNTER,  /* one counter series */
} InspectorLaneKind;

/* What a slice is. */
typedef enum {
  INSPECTOR_SLICE_GPU,     /* GPU execution of an operation (X, cat "gpu") */
  INSPECTOR_SLICE_HOST,    /* submit → reply of an operation (b/e, cat "host") */
  INSPECTOR_SLICE_SPAN,    /* anything else with a duration (X, B/E) */
} InspectorSliceKind;

/* One box of the timeline.  Times are µs after the trace's origin (the
 * smallest timestamp), with nanoseconds in the fraction.  Strings belong
 * to the model.  A slice is immutable once the model has it. */
typedef struct {
  gdouble      start;
  gdouble      dur;
  guint32      lane;
  guint16      depth;      /* row inside the lane: nesting (spans), packing (host) */
  guint8       kind;       /* InspectorSliceKind */
  guint8       failed;
  const gchar *name;
  const gchar *library;    /* args.library, else the category */
  const gchar *actor;      /* args.actor, or "" */
  const gchar *detail;     /* args.detail, or NULL */
  const gchar *error;      /* args.error, or NULL */
  gint64       seq;        /* args.seq (or the async id), -1 if none */
  gint32       device;     /* args.device, -1 if none */
  gint32       stream;     /* args.stream, -1 if none */
  guint32      generation;
  guint32      grid[3], block[3];  /* all 0 if not a kernel launch */
  gint32       peer;       /* GPU slice ↔ host lifecycle of the same operation, -1 */
  gdouble      enqueued, completed, replied;   /* host steps (µs), NAN if none */
} InspectorSlice;

#define INSPECTOR_TYPE_TRACE_MODEL (inspector_trace_model_get_type ())
G_DECLARE_FINAL_TYPE (InspectorTraceModel, inspector_trace_model, INSPECTOR, TRACE_MODEL, GObject)

InspectorTraceModel  *inspector_trace_model_new               (void);
gboolean              inspector_trace_model_load              (InspectorTraceModel  *self,
                                                               const gchar          *path,
                                                               GError              **error);
gboolean              inspector_trace_model_load_data         (InspectorTraceModel  *self,
                                                               const gchar          *data,
                                                               gsize                 length,
                                                               GError              **error);
void                  inspector_trace_model_load_async        (InspectorTraceModel  *self,
                                                               GFile                *file,
                                                               GCancellable         *cancellable,
                                                               GAsyncReadyCallback   callback,
                                                               gpointer              user_data);
gboolean              inspector_trace_model_load_finish       (InspectorTraceModel  *self,
                                                               GAsyncResult         *result,
                                                               GError              **error);
gboolean              inspector_trace_model_save              (InspectorTraceModel  *self,
                                                               const gchar          *path,
                                                               GError              **error);
void                  inspector_trace_model_save_async        (InspectorTraceModel  *self,
                                                               GFile                *file,
                                                               GCancellable         *cancellable,
                                                               GAsyncReadyCallback   callback,
                                                               gpointer              user_data);
gboolean              inspector_trace_model_save_finish       (InspectorTraceModel  *self,
                                                               GAsyncResult         *result,
                                                               GError              **error);
gchar                *inspector_trace_model_to_json           (InspectorTraceModel  *self);
void                  inspector_trace_model_clear             (InspectorTraceModel  *self);
void                  inspector_trace_model_set_recorder      (InspectorTraceModel  *self,
                                                               AtomrTraceRecorder   *recorder);
AtomrTraceRecorder   *inspector_trace_model_get_recorder      (InspectorTraceModel  *self);
void                  inspector_trace_model_refresh           (InspectorTraceModel  *self);

guint                 inspector_trace_model_get_n_slices      (InspectorTraceModel  *self);
const InspectorSlice *inspector_trace_model_get_slice         (InspectorTraceModel  *self,
                                                               guint                 index);
guint                 inspector_trace_model_get_n_gpu_slices  (InspectorTraceModel  *self);
guint                 inspector_trace_model_get_n_operations  (InspectorTraceModel  *self);
guint                 inspector_trace_model_get_n_lanes       (InspectorTraceModel  *self);
const gchar          *inspector_trace_model_get_lane_label    (InspectorTraceModel  *self,
                                                               guint                 lane);
InspectorLaneKind     inspector_trace_model_get_lane_kind     (InspectorTraceModel  *self,
                                                               guint                 lane);
gint64                inspector_trace_model_get_lane_pid      (InspectorTraceModel  *self,
                                                               guint                 lane);
guint                 inspector_trace_model_get_lane_depth    (InspectorTraceModel  *self,
                                                               guint                 lane);
void                  inspector_trace_model_get_lane_range    (InspectorTraceModel  *self,
                                                               guint                 lane,
                                                               guint                *first,
                                                               guint                *n);
guint                 inspector_trace_model_find_visible      (InspectorTraceModel  *self,
                                                               guint                 lane,
                                                               gdouble               from);
guint                 inspector_trace_model_find_start        (InspectorTraceModel  *self,
                                                               guint                 lane,
                                                               gdouble               t);
guint                 inspector_trace_model_get_n_flows       (InspectorTraceModel  *self);
void                  inspector_trace_model_get_flow          (InspectorTraceModel  *self,
                                                               guint                 index,
                                                               guint                *from,
                                                               guint                *to);
GArray               *inspector_trace_model_get_dependencies  (InspectorTraceModel  *self,
                                                               guint                 slice,
                                                               gboolean              producers);
guint                 inspector_trace_model_get_counter_points (InspectorTraceModel *self,
                                                               guint                 lane,
                                                               const gdouble       **times,
                                                               const gdouble       **values);
gdouble               inspector_trace_model_get_duration      (InspectorTraceModel  *self);
gdouble               inspector_trace_model_get_origin        (InspectorTraceModel  *self);
guint64               inspector_trace_model_get_n_ignored     (InspectorTraceModel  *self);
GListModel           *inspector_trace_model_get_statistics    (InspectorTraceModel  *self);
gchar                *inspector_format_duration               (gdouble               us);
gchar                *inspector_slice_get_label               (const InspectorSlice *slice);
gint                  inspector_trace_model_search            (InspectorTraceModel  *self,
                                                               const gchar          *text,
                                                               gint                  after,
                                                               gboolean              forward);

G_END_DECLS
