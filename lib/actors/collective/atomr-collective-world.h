/* atomr-collective-world.h — a group of NCCL ranks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

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
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrCollectiveWorld, atomr_collective_world, ATOMR, COLLECTIVE_WORLD, GObject)

ATOMR_AVAILABLE_IN_ALL
gchar                *atomr_collective_unique_id_new          (GError              **error);

ATOMR_AVAILABLE_IN_ALL
AtomrCollectiveWorld *atomr_collective_world_new_local        (AtomrDevice         **devices,
                                                               guint                 n_devices,
                                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
AtomrCollectiveWorld *atomr_collective_world_new_all_devices  (GError              **error);
ATOMR_AVAILABLE_IN_ALL
AtomrCollectiveWorld *atomr_collective_world_new_rank         (AtomrDevice          *device,
                                                               const gchar          *unique_id,
                                                               guint                 rank,
                                                               guint                 n_ranks,
                                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_collective_world_new_rank_async   (AtomrDevice          *device,
                                                               const gchar          *unique_id,
                                                               guint                 rank,
                                                               guint                 n_ranks,
                                                               GCancellable         *cancellable,
                                                               GAsyncReadyCallback   callback,
                                                               gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_collective_world_new_from_environment_async (AtomrDevice   *device,
                                                               GCancellable         *cancellable,
                                                               GAsyncReadyCallback   callback,
                                                               gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrCollectiveWorld *atomr_collective_world_new_finish       (GAsyncResult         *result,
                                                               GError              **error);

ATOMR_AVAILABLE_IN_ALL
guint                 atomr_collective_world_get_n_ranks      (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_collective_world_get_n_local_ranks (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCollectiveActor *atomr_collective_world_get_actor        (AtomrCollectiveWorld *self,
                                                               guint                 local_index);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_collective_world_get_nccl_version (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_collective_world_supports_dtype   (AtomrCollectiveWorld *self,
                                                               AtomrDtype            dtype,
                                                               gboolean              reduction);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_collective_world_get_nvls_available (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_collective_world_get_fp8_reductions (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_collective_world_get_timeout_ms   (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_collective_world_set_timeout_ms   (AtomrCollectiveWorld *self,
                                                               guint                 timeout_ms);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_collective_world_is_failed        (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
GError               *atomr_collective_world_get_failure      (AtomrCollectiveWorld *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_collective_world_abort            (AtomrCollectiveWorld *self,
                                                               const gchar          *reason);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_collective_world_rebuild          (AtomrCollectiveWorld *self,
                                                               const gchar          *unique_id,
                                                               GError              **error);

G_END_DECLS
