/* atomr-cudnn-private.h — what the cuDNN actor takes from its parameter
 * objects: plain copies made when an operation is requested.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "actors/cudnn/atomr-cudnn-actor.h"

G_BEGIN_DECLS

typedef struct {
  guint          n_spatial;
  guint          groups;
  AtomrCudnnMath math;
  gint64         padding[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64         stride[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64         dilation[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
} AtomrCudnnConvParams;

typedef struct {
  AtomrPoolingMode mode;
  guint            n_spatial;
  gint64           window[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64           padding[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64           stride[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
} AtomrCudnnPoolParams;

void     atomr_cudnn_conv_params_get    (AtomrConvolution           *self,
                                         AtomrCudnnConvParams       *p);
void     atomr_cudnn_pooling_params_get (AtomrPooling               *self,
                                         AtomrCudnnPoolParams       *p);
/* y's shape from x's and w's (ranks, channel groups, extents checked). */
gboolean atomr_cudnn_conv_output_shape  (const AtomrCudnnConvParams *p,
                                         const gchar                *op,
                                         const gchar                *x_name,
                                         const gint64               *x_shape,
                                         guint                       x_n_dims,
                                         const gchar                *w_name,
                                         const gint64               *w_shape,
                                         guint                       w_n_dims,
                                         gint64                     *y_shape,
                                         GError                    **error);
/* The largest power of two up to 16 that divides the view's address (its
 * byte offset where the buffer has no device address: the mock device):
 * a backend tensor's BYTE_ALIGNMENT, part of plan keys. */
gint32   atomr_cudnn_view_alignment     (AtomrTensor                *view);

G_END_DECLS
