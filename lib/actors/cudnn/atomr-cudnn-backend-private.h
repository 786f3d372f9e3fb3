/* atomr-cudnn-backend-private.h — cuDNN's backend (graph) API, made short
 *
 * An AtomrCudnnBackendGraph collects backend descriptors while an operation graph
 * is described: tensors by unique id, operations, and whatever descriptors
 * those need (pointwise, matmul, convolution, norm...).  The graph owns
 * every descriptor it created and destroys them with itself.
 * atomr_cudnn_backend_graph_build_plan() finalizes the operation graph, asks the
 * heuristics (mode A, then the fallback list) for engine configurations
 * and keeps the first one that finalizes into an execution plan whose
 * workspace fits the caller's limit.  The plan owns what it needs and
 * outlives the graph (which is empty after a successful build): keep it in an AtomrCudnnPlanCache, a bounded LRU map
 * from a caller-defined key (raw bytes: a zero-filled struct of shapes,
 * strides, dtypes, parameters and the device's arch) to plans.
 *
 *   g_autoptr(AtomrCudnnBackendGraph) g = atomr_cudnn_backend_graph_new ("sdpa-fwd");
 *   atomr_cudnn_backend_graph_add_tensor (g, UID_Q, CUDNN_DATA_BFLOAT16, 4, dims, strides, 0, error);
 *   ...
 *   op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_..., error);
 *   atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_..._QDESC, UID_Q, error);
 *   atomr_cudnn_backend_graph_add_operation (g, op, error);
 *   plan = atomr_cudnn_backend_graph_build_plan (g, handle, workspace_limit, error);
 *   ...
 *   atomr_cudnn_backend_plan_execute (plan, handle, n, uids, pointers, workspace, error);
 *
 * Threads: a graph and a plan belong to one thread at a time (the actor's
 * thread in practice); a plan cache may be used from any thread (its
 * lookups and counters are under a lock).  Every cuDNN status becomes a
 * GError through atomr_cudnn_status_check(): not-supported statuses are
 * %ATOMR_ERROR_NOT_SUPPORTED naming the operation.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "atomr-cudnn-table-private.h"

G_BEGIN_DECLS

/* The one mapper from cudnnStatus_t to GError: "cuDNN: @call (for
 * @opname) failed: ..." with cuDNN's last error message when it has one;
 * NOT_SUPPORTED for the 3000 range, OUT_OF_MEMORY for allocation
 * failures. */
gboolean atomr_cudnn_status_check (cudnnStatus_t   status,
                                   const gchar    *call,
                                   const gchar    *opname,
                                   GError        **error);

typedef enum {
  ATOMR_CUDNN_TENSOR_VIRTUAL  = 1 << 0,   /* an intermediate: no memory of its own */
  ATOMR_CUDNN_TENSOR_BY_VALUE = 1 << 1,   /* a host scalar passed by value (epsilon, scale) */
} AtomrCudnnTensorFlags;

/* What build_plan_full() may choose. */
typedef enum {
  /* no engine that uses tensor cores or converts its inputs down (f32
   * data with FMA math: no TF32) */
  ATOMR_CUDNN_PLAN_NO_TENSOR_CORE = 1 << 0,
} AtomrCudnnPlanFlags;

typedef struct _AtomrCudnnBackendGraph     AtomrCudnnBackendGraph;
typedef struct _AtomrCudnnBackendPlan AtomrCudnnBackendPlan;
typedef struct _AtomrCudnnPlanCache AtomrCudnnPlanCache;

AtomrCudnnBackendGraph          *atomr_cudnn_backend_graph_new              (const gchar                  *opname);
void                      atomr_cudnn_backend_graph_free             (AtomrCudnnBackendGraph              *self);
const gchar              *atomr_cudnn_backend_graph_get_opname       (AtomrCudnnBackendGraph              *self);

/* A new descriptor of @type, owned by the graph (not finalized). */
cudnnBackendDescriptor_t  atomr_cudnn_backend_graph_new_descriptor   (AtomrCudnnBackendGraph              *self,
                                                              cudnnBackendDescriptorType_t  type,
                                                              GError                      **error);
gboolean                  atomr_cudnn_backend_graph_set              (AtomrCudnnBackendGraph              *self,
                                                              cudnnBackendDescriptor_t      desc,
                                                              cudnnBackendAttributeName_t   name,
                                                              cudnnBackendAttributeType_t   type,
                                                              gint64                        count,
                                                              const void                   *elements,
                                                              GError                      **error);
/* Sets attribute @name of @desc to the tensor with @uid (added before). */
gboolean                  atomr_cudnn_backend_graph_set_tensor_attr  (AtomrCudnnBackendGraph              *self,
                                                              cudnnBackendDescriptor_t      desc,
                                                              cudnnBackendAttributeName_t   name,
                                                              gint64                        uid,
                                                              GError                      **error);
gboolean                  atomr_cudnn_backend_graph_finalize_descriptor (AtomrCudnnBackendGraph           *self,
                                                              cudnnBackendDescriptor_t      desc,
                                                              GError                      **error);

/* A finalized tensor descriptor: @n_dims dims and strides (in elements),
 * 16-byte alignment, unique id @uid (distinct per graph; a repeat is an
 * error). */
cudnnBackendDescriptor_t  atomr_cudnn_backend_graph_add_tensor       (AtomrCudnnBackendGraph              *self,
                                                              gint64                        uid,
                                                              cudnnDataType_t               dtype,
                                                              guint                         n_dims,
                                                              const gint64                 *dims,
                                                              const gint64                 *strides,
                                                              AtomrCudnnTensorFlags         flags,
                                                              GError                      **error);
/* The same with the byte alignment the pointers will have (a power of
 * two; add_tensor() says 16). */
cudnnBackendDescriptor_t  atomr_cudnn_backend_graph_add_tensor_full (AtomrCudnnBackendGraph *self,
                                                              gint64                        uid,
                                                              cudnnDataType_t               dtype,
                                                              guint                         n_dims,
                                                              const gint64                 *dims,
                                                              const gint64                 *strides,
                                                              gint64                        alignment,
                                                              AtomrCudnnTensorFlags         flags,
                                                              GError                      **error);
cudnnBackendDescriptor_t  atomr_cudnn_backend_graph_get_tensor       (AtomrCudnnBackendGraph              *self,
                                                              gint64                        uid);

/* Finalizes operation @op and appends it to the graph's operations. */
gboolean                  atomr_cudnn_backend_graph_add_operation    (AtomrCudnnBackendGraph              *self,
                                                              cudnnBackendDescriptor_t      op,
                                                              GError                      **error);
/* y = mode (x[, b]) as one pointwise operation computed in @compute
 * (@b_uid < 0: a unary mode). */
gboolean                  atomr_cudnn_backend_graph_add_pointwise    (AtomrCudnnBackendGraph              *self,
                                                              cudnnPointwiseMode_t          mode,
                                                              cudnnDataType_t               compute,
                                                              gint64                        x_uid,
                                                              gint64                        b_uid,
                                                              gint64                        y_uid,
                                                              GError                      **error);
gboolean                  atomr_cudnn_backend_graph_add_pointwise_full (AtomrCudnnBackendGraph        *self,
                                                                        cudnnPointwiseMode_t           mode,
                                                                        cudnnDataType_t                compute,
                                                                        gint64                         x_uid,
                                                                        gint64                         b_uid,
                                                                        gint64                         y_uid,
                                                                        gdouble                        alpha1,
                                                                        gdouble                        alpha2,
                                                                        gdouble                        param,
                                                                        GError                       **error);
gboolean                  atomr_cudnn_backend_graph_add_convolution (AtomrCudnnBackendGraph          *self,
                                                                     guint                            direction,
                                                                     cudnnDataType_t                  compute,
                                                                     gint64                           n_spatial,
                                                                     const gint64                    *padding,
                                                                     const gint64                    *stride,
                                                                     const gint64                    *dilation,
                                                                     gint64                           x_uid,
                                                                     gint64                           w_uid,
                                                                     gint64                           y_uid,
                                                                     gdouble                          alpha,
                                                                     gdouble                          beta,
                                                                     GError                         **error);
guint                     atomr_cudnn_backend_graph_get_n_operations (AtomrCudnnBackendGraph              *self);

/* The operation graph, heuristics and the first engine configuration that
 * finalizes with a workspace of at most @workspace_limit bytes (@skip > 0:
 * the one after @skip such usable configurations, for autotuning).  No
 * candidate: %ATOMR_ERROR_NOT_SUPPORTED naming the operation and how many
 * configurations were tried; the graph is left as it was. */
AtomrCudnnBackendPlan      *atomr_cudnn_backend_graph_build_plan       (AtomrCudnnBackendGraph              *self,
                                                              cudnnHandle_t                 handle,
                                                              guint64                       workspace_limit,
                                                              guint                         skip,
                                                              GError                      **error);

/* The same, skipping the engine configurations @flags exclude. */
AtomrCudnnBackendPlan      *atomr_cudnn_backend_graph_build_plan_full  (AtomrCudnnBackendGraph              *self,
                                                              cudnnHandle_t                 handle,
                                                              guint64                       workspace_limit,
                                                              guint                         skip,
                                                              AtomrCudnnPlanFlags           flags,
                                                              GError                      **error);

void                      atomr_cudnn_backend_plan_free        (AtomrCudnnBackendPlan          *plan);
/* The global index of the plan's engine (-1 where cuDNN did not say). */
gint64                    atomr_cudnn_backend_plan_get_engine  (AtomrCudnnBackendPlan          *plan);
guint64                   atomr_cudnn_backend_plan_get_workspace_size (AtomrCudnnBackendPlan   *plan);
/* Runs the plan on @handle's stream with the device pointers of the
 * non-virtual tensors (by-value tensors: pointers to host scalars). */
gboolean                  atomr_cudnn_backend_plan_execute     (AtomrCudnnBackendPlan          *plan,
                                                              cudnnHandle_t                 handle,
                                                              guint                         n,
                                                              const gint64                 *uids,
                                                              void * const                 *pointers,
                                                              void                         *workspace,
                                                              GError                      **error);

/* The same for plans whose tensors are all device memory (no by-value
 * scalars: cuDNN might read those when the pack is finalized): the last
 * variant pack is kept with the plan and executed again as long as the
 * uids, pointers and workspace are the same (up to 8 tensors); otherwise
 * it is replaced.  Actor thread (the plan's). */
gboolean                  atomr_cudnn_backend_plan_execute_device (AtomrCudnnBackendPlan       *plan,
                                                              cudnnHandle_t                 handle,
                                                              guint                         n,
                                                              const gint64                 *uids,
                                                              void * const                 *pointers,
                                                              void                         *workspace,
                                                              GError                      **error);
/* How many variant packs execute_device() built and how many times it
 * reused the last one. */
void                      atomr_cudnn_backend_plan_get_pack_counts (AtomrCudnnBackendPlan      *plan,
                                                              guint64                      *builds,
                                                              guint64                      *reuses);

/* A bounded LRU map from byte keys to values (plans, or anything: the
 * cache only calls @value_free on eviction and at the end).  Capacity 0 is
 * taken as 1: the value just inserted stays. */
AtomrCudnnPlanCache      *atomr_cudnn_plan_cache_new         (guint                         capacity,
                                                              GDestroyNotify                value_free);
void                      atomr_cudnn_plan_cache_free        (AtomrCudnnPlanCache          *self);
/* The value of @key (counted as a hit, made most recent), or NULL
 * (counted as a miss). */
gpointer                  atomr_cudnn_plan_cache_lookup      (AtomrCudnnPlanCache          *self,
                                                              const void                   *key,
                                                              gsize                         key_size);
/* Takes @value; replaces an entry of the same key; evicts the least
 * recently used entries beyond the capacity.  Returns @value. */
gpointer                  atomr_cudnn_plan_cache_insert      (AtomrCudnnPlanCache          *self,
                                                              const void                   *key,
                                                              gsize                         key_size,
                                                              gpointer                      value);
/* The same with @value's own destructor (one cache can hold plans and the
 * legacy descriptors of other operations: keys must differ, so start them
 * with a distinct tag). */
gpointer                  atomr_cudnn_plan_cache_insert_full (AtomrCudnnPlanCache          *self,
                                                              const void                   *key,
                                                              gsize                         key_size,
                                                              gpointer                      value,
                                                              GDestroyNotify                value_free);
/* Drops every entry (counters stay). */
void                      atomr_cudnn_plan_cache_clear       (AtomrCudnnPlanCache          *self);
void                      atomr_cudnn_plan_cache_set_capacity (AtomrCudnnPlanCache         *self,
                                                              guint                         capacity);
guint                     atomr_cudnn_plan_cache_get_capacity (AtomrCudnnPlanCache         *self);
guint                     atomr_cudnn_plan_cache_get_size    (AtomrCudnnPlanCache          *self);
guint64                   atomr_cudnn_plan_cache_get_hits    (AtomrCudnnPlanCache          *self);
guint64                   atomr_cudnn_plan_cache_get_misses  (AtomrCudnnPlanCache          *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrCudnnBackendGraph, atomr_cudnn_backend_graph_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrCudnnBackendPlan, atomr_cudnn_backend_plan_free)

G_END_DECLS
