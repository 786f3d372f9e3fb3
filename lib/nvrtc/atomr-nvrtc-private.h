/* atomr-nvrtc-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-device.h"
#include "atomr-nvrtc.h"
#include "atomr-compile-options-private.h"
#include "atomr-kernel.h"

G_BEGIN_DECLS

/* atomr_nvrtc_compile() with "native" resolved against @device (nullable:
 * device 0). */
AtomrModule *atomr_nvrtc_compile_for_device (const gchar         *source,
                                             const gchar         *program_name,
                                             AtomrCompileOptions *options,
                                             AtomrKernelCache    *cache,
                                             AtomrDevice         *device,
                                             GError             **error);

/* The snapshot of @options (nullable: the defaults) the compile path
 * uses; taken when a request is made, it stands for a copy of the
 * options. */
AtomrCompileSnapshot *atomr_nvrtc_snapshot_options (AtomrCompileOptions *options);

/* atomr_nvrtc_compile_for_device() of a snapshot.  @options (nullable) is
 * what the snapshot was taken of: only read when the arch is "native"
 * (resolved against @device on a copy). */
AtomrModule *atomr_nvrtc_compile_snapshot   (const gchar          *source,
                                             const gchar          *program_name,
                                             AtomrCompileSnapshot *snapshot,
                                             AtomrCompileOptions  *options,
                                             AtomrKernelCache     *cache,
                                             AtomrDevice          *device,
                                             GError              **error);

/* With lto, the nvJitLink options that carry out @flags (NVRTC options):
 * -arch, -lto and every code-generation option; NOT_SUPPORTED naming a
 * flag that cannot be forwarded.  Appends gchar* to @out. */
gboolean     atomr_nvrtc_jitlink_options    (const gchar * const *flags,
                                             const gchar         *arch,
                                             GPtrArray           *out,
                                             GError             **error);

/* INVALID_ARGUMENT listing NVRTC's supported architectures unless @arch
 * (sm_/compute_ with optional a/f suffix) is one of them.  Loads NVRTC. */
gboolean     atomr_nvrtc_check_arch         (const gchar         *arch,
                                             GError             **error);
/* int array, ascending. */
GArray      *atomr_nvrtc_get_supported_archs (GError            **error);

/* Graph parameter updates (lib/graph/atomr-graph.c): a recorded launch
 * takes new arguments.  is_launch: @op is an atomr_nvrtc_actor_launch_async()
 * request; check_args: @args fit its kernel's parameter table and live on
 * its device; set_args: replaces the arguments (and the buffers @op reads
 * and writes); get_params: the kernelParams array of the current ones,
 * valid until the next set_args. */
struct _AtomrOp;
gboolean     atomr_nvrtc_op_is_launch       (struct _AtomrOp     *op);
gboolean     atomr_nvrtc_launch_check_args  (struct _AtomrOp     *op,
                                             AtomrKernelArgs     *args,
                                             GError             **error);
void         atomr_nvrtc_launch_set_args    (struct _AtomrOp     *op,
                                             AtomrKernelArgs     *args);
void       **atomr_nvrtc_launch_get_params  (struct _AtomrOp     *op);
/* The launch has an atomr_kernel_args_add_graph_condition() argument. */
gboolean     atomr_nvrtc_launch_takes_condition (struct _AtomrOp *op);
gboolean     atomr_kernel_args_have_condition   (AtomrKernelArgs *args);

G_END_DECLS
