/* atomr-sparse-actor.h — cuSPARSE (generic API) as an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include <gio/gio.h>

#include "core/atomr-actor.h"
#include "actors/sparse/atomr-sparse-matrix.h"
#include "actors/sparse/atomr-sparse-vector.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_SPARSE_ACTOR (atomr_sparse_actor_get_type ())
G_DECLARE_FINAL_TYPE (AtomrSparseActor, atomr_sparse_actor, ATOMR, SPARSE_ACTOR, AtomrActor)

G_GNUC_WARN_UNUSED_RESULT
AtomrSparseActor  *atomr_sparse_actor_new                (AtomrDevice          *device,
                                                          GError              **error);
guint64            atomr_sparse_actor_get_workspace_size (AtomrSparseActor     *self);

void               atomr_sparse_actor_check_async        (AtomrSparseActor     *self,
                                                          AtomrSparseMatrix    *matrix,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
gboolean           atomr_sparse_actor_check_finish       (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

void               atomr_sparse_actor_convert_async      (AtomrSparseActor     *self,
                                                          AtomrSparseMatrix    *matrix,
                                                          AtomrSparseFormat     format,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
AtomrSparseMatrix *atomr_sparse_actor_convert_finish     (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

void               atomr_sparse_actor_transpose_async    (AtomrSparseActor     *self,
                                                          AtomrSparseMatrix    *matrix,
                                                          GCancellable         *cancellable,
                                                          GAsyncReadyCallback   callback,
                                                          gpointer              user_data);
AtomrSparseMatrix *atomr_sparse_actor_transpose_finish   (AtomrSparseActor     *self,
                                                          GAsyncResult         *result,
                                                          GError              **error);

G_END_DECLS
