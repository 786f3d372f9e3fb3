/* atomr-launch-info.h — what one operation did, for signals and traces
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * AtomrLaunchEvent:
 * @ATOMR_LAUNCH_SUBMITTED: the request was made (on the caller's thread).
 * @ATOMR_LAUNCH_ENQUEUED: the work was enqueued on the stream.
 * @ATOMR_LAUNCH_COMPLETED: the actor learnt the GPU had finished.
 * @ATOMR_LAUNCH_REPLIED: the reply was handed to the caller's task.
 * @ATOMR_LAUNCH_GPU_START: the GPU started the work (timing events).
 * @ATOMR_LAUNCH_GPU_END: the GPU finished the work (timing events).
 *
 * The moments of an operation's life that an [struct@Atomr.LaunchInfo] records, in
 * nanoseconds on the host's monotonic clock (the clock of
 * g_get_monotonic_time()).  The GPU moments are measured with CUDA timing
 * events and calibrated to that clock; they are known only when the
 * actor's [property@Atomr.Actor:timing] is on.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_LAUNCH_SUBMITTED,
  ATOMR_LAUNCH_ENQUEUED,
  ATOMR_LAUNCH_COMPLETED,
  ATOMR_LAUNCH_REPLIED,
  ATOMR_LAUNCH_GPU_START,
  ATOMR_LAUNCH_GPU_END,
} AtomrLaunchEvent;

/**
 * ATOMR_LAUNCH_N_EVENTS:
 *
 * The number of [enum@Atomr.LaunchEvent] values: the length of an array
 * indexed by them.
 *
 * Since: 0.2
 */
#define ATOMR_LAUNCH_N_EVENTS (ATOMR_LAUNCH_GPU_END + 1)

#define ATOMR_TYPE_LAUNCH_INFO (atomr_launch_info_get_type ())

typedef struct _AtomrLaunchInfo AtomrLaunchInfo;

ATOMR_AVAILABLE_IN_ALL
GType            atomr_launch_info_get_type            (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
AtomrLaunchInfo *atomr_launch_info_new                 (const gchar     *actor_name,
                                                        const gchar     *library,
                                                        const gchar     *operation);
ATOMR_AVAILABLE_IN_ALL
AtomrLaunchInfo *atomr_launch_info_ref                 (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_unref               (AtomrLaunchInfo *info);

ATOMR_AVAILABLE_IN_ALL
const gchar     *atomr_launch_info_get_actor_name      (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
const gchar     *atomr_launch_info_get_library         (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
const gchar     *atomr_launch_info_get_operation       (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_launch_info_get_sequence        (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_sequence        (AtomrLaunchInfo *info,
                                                        guint64          sequence);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_launch_info_get_generation      (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_generation      (AtomrLaunchInfo *info,
                                                        guint            generation);
ATOMR_AVAILABLE_IN_ALL
gint             atomr_launch_info_get_device_ordinal  (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_device_ordinal  (AtomrLaunchInfo *info,
                                                        gint             ordinal);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_launch_info_get_stream_id       (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_stream_id       (AtomrLaunchInfo *info,
                                                        guint            stream_id);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_launch_info_get_geometry        (AtomrLaunchInfo *info,
                                                        guint           *grid_x,
                                                        guint           *grid_y,
                                                        guint           *grid_z,
                                                        guint           *block_x,
                                                        guint           *block_y,
                                                        guint           *block_z,
                                                        guint           *shared_mem_bytes);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_geometry        (AtomrLaunchInfo *info,
                                                        guint            grid_x,
                                                        guint            grid_y,
                                                        guint            grid_z,
                                                        guint            block_x,
                                                        guint            block_y,
                                                        guint            block_z,
                                                        guint            shared_mem_bytes);
ATOMR_AVAILABLE_IN_ALL
gint64           atomr_launch_info_get_submit_time     (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
gint64           atomr_launch_info_get_enqueue_time    (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
gint64           atomr_launch_info_get_complete_time   (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_times           (AtomrLaunchInfo *info,
                                                        gint64           submit_time,
                                                        gint64           enqueue_time,
                                                        gint64           complete_time);
ATOMR_AVAILABLE_IN_ALL
gdouble          atomr_launch_info_get_gpu_duration_ms (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_gpu_duration_ms (AtomrLaunchInfo *info,
                                                        gdouble          ms);
ATOMR_AVAILABLE_IN_ALL
const GError    *atomr_launch_info_get_error           (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_error           (AtomrLaunchInfo *info,
                                                        const GError    *error);
ATOMR_AVAILABLE_IN_ALL
gint64           atomr_launch_info_get_timestamp       (AtomrLaunchInfo *info,
                                                        AtomrLaunchEvent event);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_timestamp       (AtomrLaunchInfo *info,
                                                        AtomrLaunchEvent event,
                                                        gint64           time_ns);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_launch_info_get_gpu_times       (AtomrLaunchInfo *info,
                                                        gint64          *start_ns,
                                                        gint64          *end_ns);
ATOMR_AVAILABLE_IN_ALL
const guint64   *atomr_launch_info_get_dependencies    (AtomrLaunchInfo *info,
                                                        guint           *n_dependencies);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_add_dependency      (AtomrLaunchInfo *info,
                                                        guint64          producer_sequence);
ATOMR_AVAILABLE_IN_ALL
gint64           atomr_launch_info_now_ns              (void);
ATOMR_AVAILABLE_IN_ALL
gint             atomr_launch_info_get_mailbox_depth   (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_mailbox_depth   (AtomrLaunchInfo *info,
                                                        gint             depth);
ATOMR_AVAILABLE_IN_ALL
const gchar     *atomr_launch_info_get_detail          (AtomrLaunchInfo *info);
ATOMR_AVAILABLE_IN_ALL
void             atomr_launch_info_set_detail          (AtomrLaunchInfo *info,
                                                        const gchar     *detail);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrLaunchInfo, atomr_launch_info_unref)

G_END_DECLS
