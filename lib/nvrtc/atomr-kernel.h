/* atomr-kernel.h — a launchable function, its launch geometry and arguments
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "core/atomr-buffer.h"
#include "core/atomr-device.h"
#include "atomr-module.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_KERNEL (atomr_kernel_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrKernel, atomr_kernel, ATOMR, KERNEL, GObject)

ATOMR_AVAILABLE_IN_ALL
const gchar *atomr_kernel_get_name                     (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
const gchar *atomr_kernel_get_lowered_name             (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
AtomrModule *atomr_kernel_get_module                   (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDevice *atomr_kernel_get_device                   (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
guint        atomr_kernel_get_generation               (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_kernel_is_stale                     (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
guint        atomr_kernel_get_n_params                 (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
gsize        atomr_kernel_get_param_size               (AtomrKernel *self,
                                                        guint        index);
ATOMR_AVAILABLE_IN_ALL
gsize        atomr_kernel_get_param_offset             (AtomrKernel *self,
                                                        guint        index);
ATOMR_AVAILABLE_IN_ALL
const gchar *atomr_kernel_get_param_type               (AtomrKernel *self,
                                                        guint        index);
ATOMR_AVAILABLE_IN_ALL
gint         atomr_kernel_get_num_registers            (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
gint         atomr_kernel_get_static_shared_memory     (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
gint         atomr_kernel_get_max_dynamic_shared_memory (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
gint         atomr_kernel_get_max_threads_per_block    (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
gint         atomr_kernel_get_local_memory             (AtomrKernel *self);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_kernel_set_max_dynamic_shared_memory (AtomrKernel *self,
                                                        gint         bytes,
                                                        GError     **error);

#define ATOMR_TYPE_LAUNCH_CONFIG (atomr_launch_config_get_type ())
typedef struct _AtomrLaunchConfig AtomrLaunchConfig;

ATOMR_AVAILABLE_IN_ALL
GType              atomr_launch_config_get_type          (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
AtomrLaunchConfig *atomr_launch_config_new               (guint grid_x,
                                                          guint grid_y,
                                                          guint grid_z,
                                                          guint block_x,
                                                          guint block_y,
                                                          guint block_z);
ATOMR_AVAILABLE_IN_ALL
AtomrLaunchConfig *atomr_launch_config_new_1d            (guint64 n_threads,
                                                          guint   block_size);
ATOMR_AVAILABLE_IN_ALL
AtomrLaunchConfig *atomr_launch_config_copy              (const AtomrLaunchConfig *config);
ATOMR_AVAILABLE_IN_ALL
void               atomr_launch_config_free              (AtomrLaunchConfig *config);
ATOMR_AVAILABLE_IN_ALL
void               atomr_launch_config_set_shared_memory (AtomrLaunchConfig *config,
                                                          guint              bytes);
ATOMR_AVAILABLE_IN_ALL
guint              atomr_launch_config_get_shared_memory (const AtomrLaunchConfig *config);
ATOMR_AVAILABLE_IN_ALL
void               atomr_launch_config_set_cluster       (AtomrLaunchConfig *config,
                                                          guint              x,
                                                          guint              y,
                                                          guint              z);
ATOMR_AVAILABLE_IN_ALL
void               atomr_launch_config_get_cluster       (const AtomrLaunchConfig *config,
                                                          guint             *x,
                                                          guint             *y,
                                                          guint             *z);
ATOMR_AVAILABLE_IN_ALL
void               atomr_launch_config_get_grid          (const AtomrLaunchConfig *config,
                                                          guint             *x,
                                                          guint             *y,
                                                          guint             *z);
ATOMR_AVAILABLE_IN_ALL
void               atomr_launch_config_get_block         (const AtomrLaunchConfig *config,
                                                          guint             *x,
                                                          guint             *y,
                                                          guint             *z);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrLaunchConfig, atomr_launch_config_free)

#define ATOMR_TYPE_KERNEL_ARGS (atomr_kernel_args_get_type ())
typedef struct _AtomrKernelArgs AtomrKernelArgs;

ATOMR_AVAILABLE_IN_ALL
GType            atomr_kernel_args_get_type     (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_new          (void);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_ref          (AtomrKernelArgs *args);
ATOMR_AVAILABLE_IN_ALL
void             atomr_kernel_args_unref        (AtomrKernelArgs *args);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_kernel_args_get_n_args   (AtomrKernelArgs *args);
ATOMR_AVAILABLE_IN_ALL
gsize            atomr_kernel_args_get_arg_size (AtomrKernelArgs *args,
                                                 guint            index);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_buffer   (AtomrKernelArgs *args,
                                                 AtomrBuffer     *buffer);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_buffer_read_only (AtomrKernelArgs *args,
                                                 AtomrBuffer     *buffer);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_scalar   (AtomrKernelArgs *args,
                                                 AtomrDtype       dtype,
                                                 gdouble          real,
                                                 gdouble          imag);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_f16      (AtomrKernelArgs *args,
                                                 gfloat           value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_bf16     (AtomrKernelArgs *args,
                                                 gfloat           value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_f32      (AtomrKernelArgs *args,
                                                 gfloat           value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_f64      (AtomrKernelArgs *args,
                                                 gdouble          value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_c64      (AtomrKernelArgs *args,
                                                 gfloat           real,
                                                 gfloat           imag);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_c128     (AtomrKernelArgs *args,
                                                 gdouble          real,
                                                 gdouble          imag);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_i8       (AtomrKernelArgs *args,
                                                 gint8            value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_u8       (AtomrKernelArgs *args,
                                                 guint8           value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_i32      (AtomrKernelArgs *args,
                                                 gint32           value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_u32      (AtomrKernelArgs *args,
                                                 guint32          value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_i64      (AtomrKernelArgs *args,
                                                 gint64           value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_u64      (AtomrKernelArgs *args,
                                                 guint64          value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_size     (AtomrKernelArgs *args,
                                                 guint64          value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_bytes    (AtomrKernelArgs *args,
                                                 GBytes          *value);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelArgs *atomr_kernel_args_add_graph_condition (AtomrKernelArgs *args);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrKernelArgs, atomr_kernel_args_unref)

G_END_DECLS
