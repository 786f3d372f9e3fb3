/* atomr-collective-world.h — a group of NCCL ranks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include <gio/gio.h>

#include "core/atomr-device.h"
#include "core/atomr-dtype.h"

G_BEGIN_DECLS

/**
 * AtomrReduceOp:
 * @ATOMR_REDUCE_SUM: element-wise sum
 * @ATOMR_REDUCE_PROD: element-wise product
 * @ATOMR_REDUCE_MAX: element-wise maximum
 * @ATOMR_REDUCE_MIN: element-wise minimum
 * @ATOMR_REDUCE_AVG: element-wise mean over the ranks
 *
 * How a collective combines the contributions of the ranks.  A
 * pre-multiplied sum has its own operations
 * ([method@Atomr.CollectiveActor.all_reduce_scaled_async]).
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_REDUCE_SUM,
  ATOMR_REDUCE_PROD,
  ATOMR_REDUCE_MAX,
  ATOMR_REDUCE_MIN,
  ATOMR_REDUCE_AVG,
} AtomrReduceOp;

typedef struct _AtomrCollectiveActor AtomrCollectiveActor;

#define ATOMR_TYPE_COLLECTIVE_WORLD (atomr_collective_world_get_type ())
G_DECLARE_FINAL_TYPE (AtomrCollectiveWorld, atomr_collective_world, ATOMR, COLLECTIVE_WORLD, GObject)

gchar                *atomr_collective_unique_id_new          (GError              **error);

AtomrCollectiveWorld *atomr_collective_world_new_local        (AtomrDevice         **devices,
                                                               guint                 n_devices,
                                                               GError              **error);
AtomrCollectiveWorld *atomr_collective_world_new_all_devices  (GError              **error);
AtomrCollectiveWorld *atomr_collective_world_new_rank         (AtomrDevice          *device,
                                                               const gchar          *unique_id,
                                                               guint                 rank,
                                                               guint                 n_ranks,
                                                               GError              **error);
void                  atomr_collective_world_new_rank_async   (AtomrDevice          *device,
                                                               const gchar          *unique_id,
                                                               guint                 rank,
                                                               guint                 n_ranks,
                                                               GCancellable         *cancellable,
                                                               GAsyncReadyCallback   callback,
                                                               gpointer              user_data);
void                  atomr_collective_world_new_from_environment_async (AtomrDevice   *device,
                                                               GCancellable         *cancellable,
                                                               GAsyncReadyCallback   callback,
                                                               gpointer              user_data);
AtomrCollectiveWorld *atomr_collective_world_new_finish       (GAsyncResult         *result,
                                                               GError              **error);

guint                 atomr_collective_world_get_n_ranks      (AtomrCollectiveWorld *self);
guint                 atomr_collective_world_get_n_local_ranks (AtomrCollectiveWorld *self);
AtomrCollectiveActor *atomr_collective_world_get_actor        (AtomrCollectiveWorld *self,
                                                               guint                 local_index);
guint                 atomr_collective_world_get_nccl_version (AtomrCollectiveWorld *self);
gboolean              atomr_collective_world_supports_dtype   (AtomrCollectiveWorld *self,
                                                               AtomrDtype            dtype,
                                                               gboolean              reduction);
guint                 atomr_collective_world_get_timeout_ms   (AtomrCollectiveWorld *self);
void                  atomr_collective_world_set_timeout_ms   (AtomrCollectiveWorld *self,
                                                               guint                 timeout_ms);
gboolean              atomr_collective_world_is_failed        (AtomrCollectiveWorld *self);
GError               *atomr_collective_world_get_failure      (AtomrCollectiveWorld *self);
void                  atomr_collective_world_abort            (AtomrCollectiveWorld *self,
                                                               const gchar          *reason);
gboolean              atomr_collective_world_rebuild          (AtomrCollectiveWorld *self,
                                                               const gchar          *unique_id,
                                                               GError              **error);

G_END_DECLS
