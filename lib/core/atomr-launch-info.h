/* atomr-launch-info.h — what one operation did, for signals and traces
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include <glib-object.h>

G_BEGIN_DECLS

#define ATOMR_TYPE_LAUNCH_INFO (atomr_launch_info_get_type ())

typedef struct _AtomrLaunchInfo AtomrLaunchInfo;

GType            atomr_launch_info_get_type            (void) G_GNUC_CONST;
AtomrLaunchInfo *atomr_launch_info_new                 (const gchar     *actor_name,
                                                        const gchar     *library,
                                                        const gchar     *operation);
AtomrLaunchInfo *atomr_launch_info_ref                 (AtomrLaunchInfo *info);
void             atomr_launch_info_unref               (AtomrLaunchInfo *info);

const gchar     *atomr_launch_info_get_actor_name      (AtomrLaunchInfo *info);
const gchar     *atomr_launch_info_get_library         (AtomrLaunchInfo *info);
const gchar     *atomr_launch_info_get_operation       (AtomrLaunchInfo *info);
guint64          atomr_launch_info_get_sequence        (AtomrLaunchInfo *info);
void             atomr_launch_info_set_sequence        (AtomrLaunchInfo *info,
                                                        guint64          sequence);
guint            atomr_launch_info_get_generation      (AtomrLaunchInfo *info);
void             atomr_launch_info_set_generation      (AtomrLaunchInfo *info,
                                                        guint            generation);
gint             atomr_launch_info_get_device_ordinal  (AtomrLaunchInfo *info);
void             atomr_launch_info_set_device_ordinal  (AtomrLaunchInfo *info,
                                                        gint             ordinal);
guint            atomr_launch_info_get_stream_id       (AtomrLaunchInfo *info);
void             atomr_launch_info_set_stream_id       (AtomrLaunchInfo *info,
                                                        guint            stream_id);
gboolean         atomr_launch_info_get_geometry        (AtomrLaunchInfo *info,
                                                        guint           *grid_x,
                                                        guint           *grid_y,
                                                        guint           *grid_z,
                                                        guint           *block_x,
                                                        guint           *block_y,
                                                        guint           *block_z,
                                                        guint           *shared_mem_bytes);
void             atomr_launch_info_set_geometry        (AtomrLaunchInfo *info,
                                                        guint            grid_x,
                                                        guint            grid_y,
                                                        guint            grid_z,
                                                        guint            block_x,
                                                        guint            block_y,
                                                        guint            block_z,
                                                        guint            shared_mem_bytes);
gint64           atomr_launch_info_get_submit_time     (AtomrLaunchInfo *info);
gint64           atomr_launch_info_get_enqueue_time    (AtomrLaunchInfo *info);
gint64           atomr_launch_info_get_complete_time   (AtomrLaunchInfo *info);
void             atomr_launch_info_set_times           (AtomrLaunchInfo *info,
                                                        gint64           submit_time,
                                                        gint64           enqueue_time,
                                                        gint64           complete_time);
gdouble          atomr_launch_info_get_gpu_duration_ms (AtomrLaunchInfo *info);
void             atomr_launch_info_set_gpu_duration_ms (AtomrLaunchInfo *info,
                                                        gdouble          ms);
const GError    *atomr_launch_info_get_error           (AtomrLaunchInfo *info);
void             atomr_launch_info_set_error           (AtomrLaunchInfo *info,
                                                        const GError    *error);
const gchar     *atomr_launch_info_get_detail          (AtomrLaunchInfo *info);
void             atomr_launch_info_set_detail          (AtomrLaunchInfo *info,
                                                        const gchar     *detail);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrLaunchInfo, atomr_launch_info_unref)

G_END_DECLS
