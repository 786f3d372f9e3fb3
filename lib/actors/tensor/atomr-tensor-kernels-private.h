/* atomr-tensor-kernels-private.h — the Tensor actor's generated CUDA
 * sources, for tests that compile them with NVRTC without a GPU
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "core/atomr-dtype.h"
#include "actors/tensor/atomr-tensor-actor.h"

G_BEGIN_DECLS

/* The source the actor compiles for a plan with @n_free output loops of
 * @n_loops: a reduction (kernels atomr_tensor_reduce_cols and
 * atomr_tensor_reduce_rows, their 16-byte variants reduce_rows_vec,
 * reduce_rows_blk, reduce_cols_vec and reduce_cols_vec_part, the two
 * passes reduce_cols_part and reduce_cols_fin; @reduce_op an
 * AtomrTensorReduceOp; with
 * @op_ab >= 0 a contraction, Σ A·B) or an
 * elementwise kernel (atomr_tensor_elementwise; @op_ab < 0: a
 * permutation, which with @n_free > 1 also gets atomr_tensor_transpose
 * for A densest in loop 0, atomr_tensor_transpose2 but for c128 and
 * atomr_tensor_transpose4 for f16, bf16 and f32; @op_abc >= 0: a trinary operation with @op_c
 * on C). */
gchar *atomr_tensor_kernel_source (gboolean   reduce,
                                   AtomrDtype dtype,
                                   guint      n_free,
                                   guint      n_loops,
                                   gboolean   idx32,
                                   gint       op_a,
                                   gint       op_b,
                                   gint       op_ab,
                                   gint       op_c,
                                   gint       op_abc,
                                   gint       reduce_op);

/* The kernels of 16-byte column reductions (reducing a non-innermost mode
 * of a 16-byte aligned A; see DESIGN-NOTES, "column reduction variants"):
 * 'a' one launch, chunks combined by the block that finishes last
 * (atomr_tensor_reduce_cols_split); 'b' two passes with eight rows in
 * flight per thread and a grid of about two waves
 * (atomr_tensor_reduce_cols_deep_part + reduce_cols_fin); 'c' two passes
 * with four rows in flight and about 2048 blocks (reduce_cols_vec_part +
 * reduce_cols_fin).  An actor starts with $ATOMR_TENSOR_COLS_VARIANT or
 * 'a'; tests and bench-tensor switch it here.  Applies to operations
 * submitted afterwards (any thread).  Returns FALSE, changing nothing,
 * for another letter. */
gboolean atomr_tensor_actor_set_cols_variant (AtomrTensorActor *self,
                                              gchar             variant);
gchar    atomr_tensor_actor_get_cols_variant (AtomrTensorActor *self);

G_END_DECLS
