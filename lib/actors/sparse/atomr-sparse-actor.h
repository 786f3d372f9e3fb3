/* atomr-sparse-actor.h — cuSPARSE (generic API) as an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "core/atomr-actor.h"
#include "core/atomr-tensor.h"
#include "actors/blas/atomr-blas-actor.h"
#include "actors/sparse/atomr-sparse-matrix.h"
#include "actors/sparse/atomr-sparse-vector.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_SPARSE_ACTOR (atomr_sparse_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrSparseActor, atomr_sparse_actor, ATOMR, SPARSE_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseActor  *atomr_sparse_actor_new                (AtomrDevice          *device,
                                                          GError              **error);
ATOMR_AVAILABLE_IN_ALL
guint64            atomr_sparse_actor_get_workspace_size (AtomrSparseActor     *self);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_check_async        (AtomrSparseActor     *self,
                                                          AtomrSparseMatrix    *matrix,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_check_finish       (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_convert_async      (AtomrSparseActor     *self,
                                                          AtomrSparseMatrix    *matrix,
                                                          AtomrSparseFormat     format,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrSparseMatrix *atomr_sparse_actor_convert_finish     (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_convert_to_bsr_async  (AtomrSparseActor     *self,
                                                             AtomrSparseMatrix    *matrix,
                                                             gint64                block_size,
                                                             GCancellable         *cancellable,
                                                             GAsyncReadyCallback   callback,
                                                             gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrSparseMatrix *atomr_sparse_actor_convert_to_bsr_finish (AtomrSparseActor     *self,
                                                             GAsyncResult         *result,
                                                             GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_transpose_async    (AtomrSparseActor     *self,
                                                          AtomrSparseMatrix    *matrix,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrSparseMatrix *atomr_sparse_actor_transpose_finish   (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_scale_async        (AtomrSparseActor     *self,
                                                          gdouble               alpha,
                                                          AtomrSparseMatrix    *matrix,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_scale_finish       (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_spmv_async         (AtomrSparseActor     *self,
                                                          AtomrTranspose        op_a,
                                                          gdouble               alpha,
                                                          AtomrSparseMatrix    *a,
                                                          AtomrTensor          *x,
                                                          gdouble               beta,
                                                          AtomrTensor          *y,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_spmv_finish        (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_spmm_async         (AtomrSparseActor     *self,
                                                          AtomrTranspose        op_a,
                                                          AtomrTranspose        op_b,
                                                          gdouble               alpha,
                                                          AtomrSparseMatrix    *a,
                                                          AtomrTensor          *b,
                                                          gdouble               beta,
                                                          AtomrTensor          *c,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_spmm_finish        (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_spgemm_async       (AtomrSparseActor     *self,
                                                          gdouble               alpha,
                                                          AtomrSparseMatrix    *a,
                                                          AtomrSparseMatrix    *b,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrSparseMatrix *atomr_sparse_actor_spgemm_finish      (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_spsv_async         (AtomrSparseActor     *self,
                                                          AtomrTranspose        op_a,
                                                          AtomrFillMode         fill,
                                                          AtomrDiag             diag,
                                                          gdouble               alpha,
                                                          AtomrSparseMatrix    *a,
                                                          AtomrTensor          *x,
                                                          AtomrTensor          *y,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_spsv_finish        (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_spsm_async         (AtomrSparseActor     *self,
                                                          AtomrTranspose        op_a,
                                                          AtomrTranspose        op_b,
                                                          AtomrFillMode         fill,
                                                          AtomrDiag             diag,
                                                          gdouble               alpha,
                                                          AtomrSparseMatrix    *a,
                                                          AtomrTensor          *b,
                                                          AtomrTensor          *c,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_spsm_finish        (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_sddmm_async        (AtomrSparseActor     *self,
                                                          AtomrTranspose        op_a,
                                                          AtomrTranspose        op_b,
                                                          gdouble               alpha,
                                                          AtomrTensor          *a,
                                                          AtomrTensor          *b,
                                                          gdouble               beta,
                                                          AtomrSparseMatrix    *c,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_sddmm_finish       (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_sparse_to_dense_async  (AtomrSparseActor     *self,
                                                              AtomrSparseMatrix    *a,
                                                              AtomrTensor          *dense,
                                                              GCancellable         *cancellable,
                                                              GAsyncReadyCallback   callback,
                                                              gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_sparse_to_dense_finish (AtomrSparseActor     *self,
                                                              GAsyncResult         *result,
                                                              GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_dense_to_sparse_async  (AtomrSparseActor     *self,
                                                              AtomrTensor          *dense,
                                                              AtomrSparseFormat     format,
                                                              AtomrDtype            index_dtype,
                                                              GCancellable         *cancellable,
                                                              GAsyncReadyCallback   callback,
                                                              gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrSparseMatrix *atomr_sparse_actor_dense_to_sparse_finish (AtomrSparseActor     *self,
                                                              GAsyncResult         *result,
                                                              GError              **error);

ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_gather_async       (AtomrSparseActor     *self,
                                                          AtomrTensor          *y,
                                                          AtomrSparseVector    *x,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_gather_finish      (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);
ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_scatter_async      (AtomrSparseActor     *self,
                                                          AtomrSparseVector    *x,
                                                          AtomrTensor          *y,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_scatter_finish     (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);
ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_actor_axpby_async        (AtomrSparseActor     *self,
                                                          gdouble               alpha,
                                                          AtomrSparseVector    *x,
                                                          gdouble               beta,
                                                          AtomrTensor          *y,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_actor_axpby_finish       (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

G_END_DECLS
