/* atomr-solver-actor.h — dense cuSOLVER on an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "core/atomr-actor.h"
#include "core/atomr-tensor.h"

G_BEGIN_DECLS

/**
 * AtomrSolverFill:
 * @ATOMR_SOLVER_LOWER: the lower triangle holds the matrix (or its factor).
 * @ATOMR_SOLVER_UPPER: the upper triangle does.
 *
 * Which triangle of a symmetric or Hermitian matrix is referenced.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_SOLVER_LOWER,
  ATOMR_SOLVER_UPPER,
} AtomrSolverFill;

/**
 * AtomrSolverTranspose:
 * @ATOMR_SOLVER_NO_TRANSPOSE: solve A·X = B.
 * @ATOMR_SOLVER_TRANSPOSE: solve Aᵀ·X = B.
 * @ATOMR_SOLVER_CONJUGATE_TRANSPOSE: solve Aᴴ·X = B.
 *
 * The operation applied to A in a solve.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_SOLVER_NO_TRANSPOSE,
  ATOMR_SOLVER_TRANSPOSE,
  ATOMR_SOLVER_CONJUGATE_TRANSPOSE,
} AtomrSolverTranspose;

/**
 * AtomrSolverEigType:
 * @ATOMR_SOLVER_EIG_AX_LBX: A·x = λ·B·x.
 * @ATOMR_SOLVER_EIG_ABX_LX: A·B·x = λ·x.
 * @ATOMR_SOLVER_EIG_BAX_LX: B·A·x = λ·x.
 *
 * The generalized eigenproblem of sygvd and hegvd.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_SOLVER_EIG_AX_LBX,
  ATOMR_SOLVER_EIG_ABX_LX,
  ATOMR_SOLVER_EIG_BAX_LX,
} AtomrSolverEigType;

#define ATOMR_TYPE_SOLVER_ACTOR (atomr_solver_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrSolverActor, atomr_solver_actor, ATOMR, SOLVER_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrSolverActor *atomr_solver_actor_new (AtomrDevice  *device,
                                          GError      **error);
ATOMR_AVAILABLE_IN_ALL
guint64  atomr_solver_actor_get_workspace_size (AtomrSolverActor *self);

ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_lu_async (AtomrSolverActor *self,
                                      AtomrBuffer *a,
                                      gint64 m,
                                      gint64 n,
                                      gint64 lda,
                                      AtomrBuffer *ipiv,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_lu_finish (AtomrSolverActor *self,
                                       GAsyncResult *result,
                                       GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_lu_solve_async (AtomrSolverActor *self,
                                            AtomrSolverTranspose trans,
                                            AtomrBuffer *a,
                                            gint64 n,
                                            gint64 lda,
                                            AtomrBuffer *ipiv,
                                            AtomrBuffer *b,
                                            gint64 nrhs,
                                            gint64 ldb,
                                            GCancellable *cancellable,
                                            GAsyncReadyCallback callback,
                                            gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_lu_solve_finish (AtomrSolverActor *self,
                                             GAsyncResult *result,
                                             GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_qr_async (AtomrSolverActor *self,
                                      AtomrBuffer *a,
                                      gint64 m,
                                      gint64 n,
                                      gint64 lda,
                                      AtomrBuffer *tau,
                                      AtomrBuffer *q,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_qr_finish (AtomrSolverActor *self,
                                       GAsyncResult *result,
                                       GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_cholesky_async (AtomrSolverActor *self,
                                            AtomrSolverFill uplo,
                                            AtomrBuffer *a,
                                            gint64 n,
                                            gint64 lda,
                                            GCancellable *cancellable,
                                            GAsyncReadyCallback callback,
                                            gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_cholesky_finish (AtomrSolverActor *self,
                                             GAsyncResult *result,
                                             GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_cholesky_solve_async (AtomrSolverActor *self,
                                                  AtomrSolverFill uplo,
                                                  AtomrBuffer *a,
                                                  gint64 n,
                                                  gint64 lda,
                                                  AtomrBuffer *b,
                                                  gint64 nrhs,
                                                  gint64 ldb,
                                                  GCancellable *cancellable,
                                                  GAsyncReadyCallback callback,
                                                  gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_cholesky_solve_finish (AtomrSolverActor *self,
                                                   GAsyncResult *result,
                                                   GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_svd_async (AtomrSolverActor *self,
                                       AtomrBuffer *a,
                                       gint64 m,
                                       gint64 n,
                                       gint64 lda,
                                       AtomrBuffer *s,
                                       AtomrBuffer *u,
                                       gint64 ldu,
                                       AtomrBuffer *vt,
                                       gint64 ldvt,
                                       GCancellable *cancellable,
                                       GAsyncReadyCallback callback,
                                       gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_svd_finish (AtomrSolverActor *self,
                                        GAsyncResult *result,
                                        GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_gesvdj_batched_async (AtomrSolverActor *self,
                                                  AtomrBuffer *a,
                                                  gint64 m,
                                                  gint64 n,
                                                  gint64 lda,
                                                  AtomrBuffer *s,
                                                  AtomrBuffer *u,
                                                  gint64 ldu,
                                                  AtomrBuffer *v,
                                                  gint64 ldv,
                                                  gint64 batch,
                                                  GCancellable *cancellable,
                                                  GAsyncReadyCallback callback,
                                                  gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_gesvdj_batched_finish (AtomrSolverActor *self,
                                                   GAsyncResult *result,
                                                   GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_syevd_async (AtomrSolverActor *self,
                                         AtomrSolverFill uplo,
                                         gboolean compute_vectors,
                                         AtomrBuffer *a,
                                         gint64 n,
                                         gint64 lda,
                                         AtomrBuffer *w,
                                         GCancellable *cancellable,
                                         GAsyncReadyCallback callback,
                                         gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_syevd_finish (AtomrSolverActor *self,
                                          GAsyncResult *result,
                                          GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_heevd_async (AtomrSolverActor *self,
                                         AtomrSolverFill uplo,
                                         gboolean compute_vectors,
                                         AtomrBuffer *a,
                                         gint64 n,
                                         gint64 lda,
                                         AtomrBuffer *w,
                                         GCancellable *cancellable,
                                         GAsyncReadyCallback callback,
                                         gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_heevd_finish (AtomrSolverActor *self,
                                          GAsyncResult *result,
                                          GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_sygvd_async (AtomrSolverActor *self,
                                         AtomrSolverEigType itype,
                                         AtomrSolverFill uplo,
                                         gboolean compute_vectors,
                                         AtomrBuffer *a,
                                         gint64 n,
                                         gint64 lda,
                                         AtomrBuffer *b,
                                         gint64 ldb,
                                         AtomrBuffer *w,
                                         GCancellable *cancellable,
                                         GAsyncReadyCallback callback,
                                         gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_sygvd_finish (AtomrSolverActor *self,
                                          GAsyncResult *result,
                                          GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_hegvd_async (AtomrSolverActor *self,
                                         AtomrSolverEigType itype,
                                         AtomrSolverFill uplo,
                                         gboolean compute_vectors,
                                         AtomrBuffer *a,
                                         gint64 n,
                                         gint64 lda,
                                         AtomrBuffer *b,
                                         gint64 ldb,
                                         AtomrBuffer *w,
                                         GCancellable *cancellable,
                                         GAsyncReadyCallback callback,
                                         gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_hegvd_finish (AtomrSolverActor *self,
                                          GAsyncResult *result,
                                          GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_getrf_batched_async (AtomrSolverActor *self,
                                                 AtomrBuffer *a,
                                                 gint64 n,
                                                 gint64 lda,
                                                 AtomrBuffer *ipiv,
                                                 gint64 batch,
                                                 GCancellable *cancellable,
                                                 GAsyncReadyCallback callback,
                                                 gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_getrf_batched_finish (AtomrSolverActor *self,
                                                  GAsyncResult *result,
                                                  GError **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_potrf_batched_async (AtomrSolverActor *self,
                                                 AtomrSolverFill uplo,
                                                 AtomrBuffer *a,
                                                 gint64 n,
                                                 gint64 lda,
                                                 gint64 batch,
                                                 GCancellable *cancellable,
                                                 GAsyncReadyCallback callback,
                                                 gpointer user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_potrf_batched_finish (AtomrSolverActor *self,
                                                  GAsyncResult *result,
                                                  GError **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_getrs_batched_async  (AtomrSolverActor     *self,
                                                  AtomrSolverTranspose  trans,
                                                  AtomrBuffer          *a,
                                                  gint64                n,
                                                  gint64                lda,
                                                  AtomrBuffer          *ipiv,
                                                  AtomrBuffer          *b,
                                                  gint64                nrhs,
                                                  gint64                ldb,
                                                  gint64                batch,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_getrs_batched_finish (AtomrSolverActor     *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_potrs_batched_async  (AtomrSolverActor     *self,
                                                  AtomrSolverFill       uplo,
                                                  AtomrBuffer          *a,
                                                  gint64                n,
                                                  gint64                lda,
                                                  AtomrBuffer          *b,
                                                  gint64                ldb,
                                                  gint64                batch,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_potrs_batched_finish (AtomrSolverActor     *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_gesvdj_async         (AtomrSolverActor     *self,
                                                  AtomrBuffer          *a,
                                                  gint64                m,
                                                  gint64                n,
                                                  gint64                lda,
                                                  AtomrBuffer          *s,
                                                  AtomrBuffer          *u,
                                                  gint64                ldu,
                                                  AtomrBuffer          *v,
                                                  gint64                ldv,
                                                  gboolean              full,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_gesvdj_finish        (AtomrSolverActor     *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_syevj_async          (AtomrSolverActor     *self,
                                                  AtomrSolverFill       uplo,
                                                  gboolean              compute_vectors,
                                                  AtomrBuffer          *a,
                                                  gint64                n,
                                                  gint64                lda,
                                                  AtomrBuffer          *w,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_syevj_finish         (AtomrSolverActor     *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_gels_async           (AtomrSolverActor     *self,
                                                  AtomrBuffer          *a,
                                                  gint64                m,
                                                  gint64                n,
                                                  gint64                lda,
                                                  AtomrBuffer          *b,
                                                  gint64                nrhs,
                                                  gint64                ldb,
                                                  AtomrBuffer          *x,
                                                  gint64                ldx,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_gels_finish          (AtomrSolverActor     *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_geev_async           (AtomrSolverActor     *self,
                                                  AtomrBuffer          *a,
                                                  gint64                n,
                                                  gint64                lda,
                                                  AtomrBuffer          *w,
                                                  AtomrBuffer          *vr,
                                                  gint64                ldvr,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_geev_finish          (AtomrSolverActor     *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_lu_tensor_async               (AtomrSolverActor     *self,
                                                          AtomrTensor          *a,
                                                          AtomrTensor          *ipiv,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_lu_tensor_finish              (AtomrSolverActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_lu_solve_tensor_async         (AtomrSolverActor     *self,
                                                          AtomrSolverTranspose  trans,
                                                          AtomrTensor          *a,
                                                          AtomrTensor          *ipiv,
                                                          AtomrTensor          *b,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_lu_solve_tensor_finish        (AtomrSolverActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_cholesky_tensor_async         (AtomrSolverActor     *self,
                                                          AtomrSolverFill       uplo,
                                                          AtomrTensor          *a,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_cholesky_tensor_finish        (AtomrSolverActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_solver_actor_cholesky_solve_tensor_async   (AtomrSolverActor     *self,
                                                          AtomrSolverFill       uplo,
                                                          AtomrTensor          *a,
                                                          AtomrTensor          *b,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_solver_actor_cholesky_solve_tensor_finish  (AtomrSolverActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

G_END_DECLS
