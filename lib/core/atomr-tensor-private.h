/* atomr-tensor-private.h — what actors need from a view
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-tensor.h"
#include "atomr-actor-private.h"
#include "atomr-buffer-private.h"

G_BEGIN_DECLS

/* Device address (CUDA) of the element at index (0, ..., 0) — with negative
 * strides not the lowest address the view touches. */
CUdeviceptr atomr_tensor_get_ptr        (AtomrTensor *self);
/* Host address of element (0, ..., 0) on the host test device, else NULL. */
gpointer    atomr_tensor_get_host_data  (AtomrTensor *self);

/* The bytes the view can touch, [*begin, *end) relative to the start of its
 * buffer.  Empty views give begin == end == byte offset. */
void        atomr_tensor_get_byte_range (AtomrTensor *self,
                                         guint64     *begin,
                                         guint64     *end);

/* TRUE when the two views may touch a common byte: same allocation (same
 * buffer, or buffers whose address ranges coincide, as foreign memory
 * wrapped twice does) and intersecting byte ranges.  Conservative for
 * interleaved views (a[:, 0::2] and a[:, 1::2] "overlap"): use it to refuse
 * aliasing outputs, never to prove two views disjoint element by element. */
gboolean    atomr_tensor_overlaps       (AtomrTensor *a,
                                         AtomrTensor *b);

/* A 2-D view as a column-major BLAS matrix: element (i, j) of the view is
 * element (j, i) of a cols × rows matrix when @transposed, else (i, j) of a
 * rows × cols matrix, with leading dimension @ld (≥ max (1, rows)).  So a
 * row-major (C order) view is a transposed column-major matrix, and
 * sub-matrices of either keep the parent's ld. */
typedef struct {
  gint64   rows;     /* of the stored column-major matrix */
  gint64   cols;
  gint64   ld;
  gboolean transposed; /* the view is the transpose of the stored matrix */
} AtomrMatrixLayout;

/* Fails with INVALID_ARGUMENT naming @what when @self is not 2-D, or when
 * neither stride is 1 with the other a valid leading dimension (negative,
 * zero (broadcast) or overlapping strides have no BLAS layout). */
gboolean    atomr_tensor_get_matrix_layout (AtomrTensor       *self,
                                            const gchar       *what,
                                            AtomrMatrixLayout *layout,
                                            GError           **error);

/* Declares a view read / written by an operation.  Hazards are tracked per
 * allocation, not per view: writing one half of a buffer orders later
 * readers of the other half too.  Conservative and always correct; two
 * actors that work on disjoint views of one buffer are serialised. */
void        atomr_op_read_tensor        (AtomrOp     *op,
                                         AtomrTensor *tensor);
void        atomr_op_write_tensor       (AtomrOp     *op,
                                         AtomrTensor *tensor);

/* Validation shared by the view entry points of actors: a constructed
 * view (not a bare g_object_new()), of @device, whose buffer is not stale.
 * @what names the argument in the message. */
gboolean    atomr_tensor_check          (AtomrTensor *self,
                                         AtomrDevice *device,
                                         const gchar *what,
                                         GError     **error);

G_END_DECLS
