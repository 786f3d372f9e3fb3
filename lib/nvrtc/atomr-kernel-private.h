/* atomr-kernel-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-cuda-private.h"
#include "atomr-kernel.h"
#include "atomr-kernel-params-private.h"

G_BEGIN_DECLS

struct _AtomrLaunchConfig {
  guint grid[3];
  guint block[3];
  guint shared_mem;
  guint cluster[3];   /* 0: no cluster */
};

typedef struct {
  gsize        size;
  gsize        offset;     /* into AtomrKernelArgs.values */
  AtomrBuffer *buffer;     /* owned; NULL for a scalar */
  gboolean     write;
  AtomrArgKind kind;       /* what the adder says it is */
  gboolean     condition;  /* atomr_kernel_args_add_graph_condition(): the value is
                            * ATOMR_GRAPH_CONDITION_PLACEHOLDER until a graph
                            * puts the conditional node's handle in its place */
} AtomrKernelArg;

/* What a graph-condition argument holds in the launch request and in the
 * captured kernel node, until the graph that embeds the node's graph as
 * the body of a conditional node writes the node's handle over it. */
#define ATOMR_GRAPH_CONDITION_PLACEHOLDER G_GUINT64_CONSTANT (0xa70c0d17c0a7c0d5)

struct _AtomrKernelArgs {
  gint        ref_count;
  GArray     *args;        /* AtomrKernelArg */
  GByteArray *values;      /* scalar values, 16-byte aligned slots */
};

/* Loads @module's @name on @device (context entered here) and reads the
 * parameter table and attributes. */
AtomrKernel *atomr_kernel_new_loaded   (AtomrDevice  *device,
                                        AtomrModule  *module,
                                        const gchar  *name,
                                        GError      **error);
/* The same; *@bad_image tells whether the driver rejected the image itself
 * (CUDA_ERROR_INVALID_IMAGE, INVALID_PTX, NO_BINARY_FOR_GPU), which a
 * cached module heals from by recompiling. */
AtomrKernel *atomr_kernel_new_loaded_full (AtomrDevice  *device,
                                           AtomrModule  *module,
                                           const gchar  *name,
                                           gboolean     *bad_image,
                                           GError      **error);
/* A kernel with a given parameter table and no function: for testing the
 * argument checks on the host test device. */
AtomrKernel *atomr_kernel_new_unloaded (AtomrDevice  *device,
                                        AtomrModule  *module,
                                        const gchar  *name,
                                        const gsize  *param_sizes,
                                        guint         n_params);
/* A kernel with the parameter table a GPU load would take from @module's
 * stored layout (see atomr_module_get_param_layout()), and no function;
 * NULL when the module has no usable layout for @name (a load asks the
 * driver then). */
AtomrKernel *atomr_kernel_new_unloaded_layout (AtomrDevice *device,
                                               AtomrModule *module,
                                               const gchar *name);
CUfunction   atomr_kernel_get_function (AtomrKernel  *self);
/* Count, size and kind of every argument against the parameter table
 * (kinds as far as the mangled name or the PTX tell them). */
gboolean     atomr_kernel_check_args   (AtomrKernel      *self,
                                        AtomrKernelArgs  *args,
                                        GError          **error);

G_END_DECLS
