/* atomr-cudnn-norm-private.h — the normalization kernels' source, for the
 * test that compiles it with NVRTC without a GPU
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "core/atomr-dtype.h"
#include "core/atomr-tensor.h"

G_BEGIN_DECLS

/* Kernels atomr_norm_fwd, atomr_norm_bwd_data and atomr_norm_bwd_param
 * for x of @dtype. */
gchar *atomr_cudnn_norm_kernel_source (AtomrDtype dtype);

/* Any thread: whether a layer or RMS norm with first normalized dimension
 * @axis takes the row kernels for operand @t (normalized dimensions packed
 * innermost, rows one stride apart: that stride in @row_stride). */
gboolean atomr_cudnn_norm_rows_layout (AtomrTensor *t,
                                       guint        axis,
                                       gint64      *row_stride);

G_END_DECLS
