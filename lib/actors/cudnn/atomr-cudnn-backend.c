/* atomr-cudnn-backend.c — cuDNN's backend (graph) API: descriptors owned by
 * a graph, plans from heuristics, and a bounded plan cache
 *
 * See atomr-cudnn-backend-private.h for the contract.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "actors/atomr-library-private.h"
#include "actors/cudnn/atomr-cudnn-backend-private.h"
#include "core/atomr-error.h"

gboolean
atomr_cudnn_status_check (cudnnStatus_t   status,
                          const gchar    *call,
                          const gchar    *opname,
                          GError        **error)
{
  g_autofree gchar *what = NULL;
  g_autofree gchar *detail = NULL;
  gchar last[512] = "";

  if (status == CUDNN_STATUS_SUCCESS)
    return TRUE;
  /* cuDNN 9 keeps a message for the last failure: it says which
   * attribute or layout it refused, far more than the status name. */
  if (ATOMR_CUDNN_HAS (cudnnGetLastErrorString))
    cudnnGetLastErrorString (last, sizeof last);
  what = g_strdup_printf ("%s (for %s)", call, opname);
  detail = last[0] ? g_strdup_printf ("%s: %s", cudnnGetErrorString (status), last)
                   : g_strdup (cudnnGetErrorString (status));
  return atomr_library_check (FALSE, "cuDNN", what, detail, status,
                              status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                              status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED,
                              status / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000,
                              error);
}

/* ------------------------------------------------------------------ */
/* Graphs                                                               */

struct _AtomrCudnnBackendGraph
{
  gchar      *opname;
  GPtrArray  *owned;       /* every descriptor created: destroyed with the graph */
  GArray     *ops;         /* cudnnBackendDescriptor_t, finalized operations */
  GHashTable *tensors;     /* uid (gint64 *) → descriptor */
};

#define PACK_MAX 8

struct _AtomrCudnnBackendPlan
{
  gchar                    *opname;
  GPtrArray                *owned;  /* op graph, engine config, plan and what they reference */
  cudnnBackendDescriptor_t  plan;
  guint64                   workspace;
  gint64                    engine;  /* the engine's global index, -1 unknown */
  /* execute_device(): the last variant pack and what it was built from */
  cudnnBackendDescriptor_t  pack;
  guint                     pack_n;
  gint64                    pack_uids[PACK_MAX];
  void                     *pack_ptrs[PACK_MAX];
  void                     *pack_ws;
  guint64                   pack_builds, pack_reuses;
};

static void
destroy_descriptor (gpointer desc)
{
  cudnnBackendDestroyDescriptor (desc);
}

AtomrCudnnBackendGraph *
atomr_cudnn_backend_graph_new (const gchar *opname)
{
  AtomrCudnnBackendGraph *self = g_new0 (AtomrCudnnBackendGraph, 1);

  self->opname = g_strdup (opname);
  self->owned = g_ptr_array_new_with_free_func (destroy_descriptor);
  self->ops = g_array_new (FALSE, FALSE, sizeof (cudnnBackendDescriptor_t));
  self->tensors = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  return self;
}

void
atomr_cudnn_backend_graph_free (AtomrCudnnBackendGraph *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->tensors);
  g_array_unref (self->ops);
  if (self->owned != NULL)
    g_ptr_array_unref (self->owned);
  g_free (self->opname);
  g_free (self);
}

const gchar *
atomr_cudnn_backend_graph_get_opname (AtomrCudnnBackendGraph *self)
{
  return self->opname;
}

cudnnBackendDescriptor_t
atomr_cudnn_backend_graph_new_descriptor (AtomrCudnnBackendGraph              *self,
                                  cudnnBackendDescriptorType_t  type,
                                  GError                      **error)
{
  cudnnBackendDescriptor_t desc = NULL;

  if (!atomr_cudnn_status_check (cudnnBackendCreateDescriptor (type, &desc),
                                 "cudnnBackendCreateDescriptor", self->opname, error))
    return NULL;
  g_ptr_array_add (self->owned, desc);
  return desc;
}

gboolean
atomr_cudnn_backend_graph_set (AtomrCudnnBackendGraph              *self,
                       cudnnBackendDescriptor_t      desc,
                       cudnnBackendAttributeName_t   name,
                       cudnnBackendAttributeType_t   type,
                       gint64                        count,
                       const void                   *elements,
                       GError                      **error)
{
  cudnnStatus_t st = cudnnBackendSetAttribute (desc, name, type, count, elements);

  if (st == CUDNN_STATUS_SUCCESS)
    return TRUE;
  {
    g_autofree gchar *call = g_strdup_printf ("cudnnBackendSetAttribute (attribute %d)", (gint) name);
    return atomr_cudnn_status_check (st, call, self->opname, error);
  }
}

gboolean
atomr_cudnn_backend_graph_finalize_descriptor (AtomrCudnnBackendGraph          *self,
                                       cudnnBackendDescriptor_t  desc,
                                       GError                  **error)
{
  return atomr_cudnn_status_check (cudnnBackendFinalize (desc), "cudnnBackendFinalize",
                                   self->opname, error);
}

cudnnBackendDescriptor_t
atomr_cudnn_backend_graph_add_tensor (AtomrCudnnBackendGraph  *self,
                                      gint64                   uid,
                                      cudnnDataType_t          dtype,
                                      guint                    n_dims,
                                      const gint64            *dims,
                                      const gint64            *strides,
                                      AtomrCudnnTensorFlags    flags,
                                      GError                 **error)
{
  return atomr_cudnn_backend_graph_add_tensor_full (self, uid, dtype, n_dims, dims, strides, 16, flags,
                                                    error);
}

cudnnBackendDescriptor_t
atomr_cudnn_backend_graph_add_tensor_full (AtomrCudnnBackendGraph  *self,
                                           gint64                   uid,
                                           cudnnDataType_t          dtype,
                                           guint                    n_dims,
                                           const gint64            *dims,
                                           const gint64            *strides,
                                           gint64                   alignment,
                                           AtomrCudnnTensorFlags    flags,
                                           GError                 **error)
{
  cudnnBackendDescriptor_t t;
  gboolean is_virtual = (flags & ATOMR_CUDNN_TENSOR_VIRTUAL) != 0;
  gboolean by_value = (flags & ATOMR_CUDNN_TENSOR_BY_VALUE) != 0;
  bool virt = is_virtual, byval = by_value;

  if (g_hash_table_contains (self->tensors, &uid))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuDNN graph for %s: tensor id %" G_GINT64_FORMAT " is used twice",
                   self->opname, uid);
      return NULL;
    }
  t = atomr_cudnn_backend_graph_new_descriptor (self, CUDNN_BACKEND_TENSOR_DESCRIPTOR, error);
  if (t == NULL ||
      !atomr_cudnn_backend_graph_set (self, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dtype, error) ||
      !atomr_cudnn_backend_graph_set (self, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n_dims, dims, error) ||
      !atomr_cudnn_backend_graph_set (self, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n_dims, strides, error) ||
      !atomr_cudnn_backend_graph_set (self, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, error) ||
      !atomr_cudnn_backend_graph_set (self, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, error) ||
      (is_virtual &&
       !atomr_cudnn_backend_graph_set (self, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt, error)) ||
      (by_value &&
       !atomr_cudnn_backend_graph_set (self, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byval, error)) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (self, t, error))
    return NULL;
  g_hash_table_insert (self->tensors, g_memdup2 (&uid, sizeof uid), t);
  return t;
}

cudnnBackendDescriptor_t
atomr_cudnn_backend_graph_get_tensor (AtomrCudnnBackendGraph *self,
                              gint64           uid)
{
  return g_hash_table_lookup (self->tensors, &uid);
}

gboolean
atomr_cudnn_backend_graph_set_tensor_attr (AtomrCudnnBackendGraph             *self,
                                   cudnnBackendDescriptor_t     desc,
                                   cudnnBackendAttributeName_t  name,
                                   gint64                       uid,
                                   GError                     **error)
{
  cudnnBackendDescriptor_t t = atomr_cudnn_backend_graph_get_tensor (self, uid);

  if (t == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuDNN graph for %s: no tensor with id %" G_GINT64_FORMAT,
                   self->opname, uid);
      return FALSE;
    }
  return atomr_cudnn_backend_graph_set (self, desc, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t, error);
}

gboolean
atomr_cudnn_backend_graph_add_operation (AtomrCudnnBackendGraph          *self,
                                 cudnnBackendDescriptor_t  op,
                                 GError                  **error)
{
  if (!atomr_cudnn_backend_graph_finalize_descriptor (self, op, error))
    return FALSE;
  g_array_append_val (self->ops, op);
  return TRUE;
}

gboolean
atomr_cudnn_backend_graph_add_pointwise (AtomrCudnnBackendGraph       *self,
                                 cudnnPointwiseMode_t   mode,
                                 cudnnDataType_t        compute,
                                 gint64                 x_uid,
                                 gint64                 b_uid,
                                 gint64                 y_uid,
                                 GError               **error)
{
  return atomr_cudnn_backend_graph_add_pointwise_full (self, mode, compute, x_uid, b_uid, y_uid, 1.0, 1.0, 0.0,
                                                       error);
}

/* y = mode (alpha1 · x [, alpha2 · b]).  @param is the mode's own
 * parameter where it has one: the upper clip of RELU_FWD (0: none), the
 * alpha of ELU_FWD, the beta of SWISH_FWD.  Scalars are set only when
 * they differ from cuDNN's defaults, in the math precision's type. */
gboolean
atomr_cudnn_backend_graph_add_pointwise_full (AtomrCudnnBackendGraph *self,
                                              cudnnPointwiseMode_t    mode,
                                              cudnnDataType_t         compute,
                                              gint64                  x_uid,
                                              gint64                  b_uid,
                                              gint64                  y_uid,
                                              gdouble                 alpha1,
                                              gdouble                 alpha2,
                                              gdouble                 param,
                                              GError                **error)
{
  gboolean dbl = compute == CUDNN_DATA_DOUBLE;
  cudnnBackendAttributeType_t scalar = dbl ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  cudnnBackendAttributeName_t param_attr = 0;
  gfloat a1f = (gfloat) alpha1, a2f = (gfloat) alpha2, pf = (gfloat) param;
  cudnnBackendDescriptor_t pw, op;

  if (mode == CUDNN_POINTWISE_RELU_FWD && param > 0.0)
    param_attr = CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP;
  else if (mode == CUDNN_POINTWISE_ELU_FWD)
    param_attr = CUDNN_ATTR_POINTWISE_ELU_ALPHA;
  else if (mode == CUDNN_POINTWISE_SWISH_FWD)
    param_attr = CUDNN_ATTR_POINTWISE_SWISH_BETA;
  pw = atomr_cudnn_backend_graph_new_descriptor (self, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, error);
  if (pw == NULL ||
      !atomr_cudnn_backend_graph_set (self, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, error) ||
      !atomr_cudnn_backend_graph_set (self, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute, error) ||
      (param_attr != 0 &&
       !atomr_cudnn_backend_graph_set (self, pw, param_attr, scalar, 1,
                                       dbl ? (const void *) &param : (const void *) &pf, error)) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (self, pw, error))
    return FALSE;
  op = atomr_cudnn_backend_graph_new_descriptor (self, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, error);
  if (op == NULL ||
      !atomr_cudnn_backend_graph_set (self, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, error) ||
      !atomr_cudnn_backend_graph_set_tensor_attr (self, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x_uid, error) ||
      (b_uid >= 0 &&
       !atomr_cudnn_backend_graph_set_tensor_attr (self, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b_uid, error)) ||
      !atomr_cudnn_backend_graph_set_tensor_attr (self, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y_uid, error) ||
      (alpha1 != 1.0 &&
       !atomr_cudnn_backend_graph_set (self, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, scalar, 1,
                                       dbl ? (const void *) &alpha1 : (const void *) &a1f, error)) ||
      (b_uid >= 0 && alpha2 != 1.0 &&
       !atomr_cudnn_backend_graph_set (self, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, scalar, 1,
                                       dbl ? (const void *) &alpha2 : (const void *) &a2f, error)))
    return FALSE;
  return atomr_cudnn_backend_graph_add_operation (self, op, error);
}

/* One convolution operation of @direction (0 forward, 1 backward data,
 * 2 backward filter): a cross-correlation descriptor (@compute, @n_spatial
 * pre and post paddings, filter strides and dilations) and the operation
 * on tensors already added, by role: @x_uid (dx for backward data),
 * @w_uid (dw for backward filter), @y_uid (dy for both backward passes);
 * @alpha and @beta in f64 when @compute is, else f32. */
gboolean
atomr_cudnn_backend_graph_add_convolution (AtomrCudnnBackendGraph *self,
                                           guint                   direction,
                                           cudnnDataType_t         compute,
                                           gint64                  n_spatial,
                                           const gint64           *padding,
                                           const gint64           *stride,
                                           const gint64           *dilation,
                                           gint64                  x_uid,
                                           gint64                  w_uid,
                                           gint64                  y_uid,
                                           gdouble                 alpha,
                                           gdouble                 beta,
                                           GError                **error)
{
  static const cudnnBackendDescriptorType_t types[3] = {
    CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
  };
  /* the attributes of the x, w and y roles, the convolution, alpha, beta */
  static const cudnnBackendAttributeName_t attrs[3][6] = {
    { CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA },
    { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA },
  };
  const cudnnBackendAttributeName_t *at;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  gboolean dbl = compute == CUDNN_DATA_DOUBLE;
  cudnnBackendAttributeType_t scalar = dbl ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  gfloat alpha_f = (gfloat) alpha, beta_f = (gfloat) beta;
  cudnnBackendDescriptor_t cd, op;

  g_return_val_if_fail (direction < G_N_ELEMENTS (types), FALSE);
  at = attrs[direction];
  cd = atomr_cudnn_backend_graph_new_descriptor (self, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, error);
  if (cd == NULL ||
      !atomr_cudnn_backend_graph_set (self, cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
                                      &compute, error) ||
      !atomr_cudnn_backend_graph_set (self, cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
                                      1, &mode, error) ||
      !atomr_cudnn_backend_graph_set (self, cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
                                      &n_spatial, error) ||
      !atomr_cudnn_backend_graph_set (self, cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, n_spatial,
                                      dilation, error) ||
      !atomr_cudnn_backend_graph_set (self, cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
                                      n_spatial, stride, error) ||
      !atomr_cudnn_backend_graph_set (self, cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64,
                                      n_spatial, padding, error) ||
      !atomr_cudnn_backend_graph_set (self, cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64,
                                      n_spatial, padding, error) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (self, cd, error))
    return FALSE;
  op = atomr_cudnn_backend_graph_new_descriptor (self, types[direction], error);
  return op != NULL &&
         atomr_cudnn_backend_graph_set_tensor_attr (self, op, at[0], x_uid, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (self, op, at[1], w_uid, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (self, op, at[2], y_uid, error) &&
         atomr_cudnn_backend_graph_set (self, op, at[3], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd, error) &&
         atomr_cudnn_backend_graph_set (self, op, at[4], scalar, 1,
                                        dbl ? (const void *) &alpha : (const void *) &alpha_f, error) &&
         atomr_cudnn_backend_graph_set (self, op, at[5], scalar, 1,
                                        dbl ? (const void *) &beta : (const void *) &beta_f, error) &&
         atomr_cudnn_backend_graph_add_operation (self, op, error);
}

guint
atomr_cudnn_backend_graph_get_n_operations (AtomrCudnnBackendGraph *self)
{
  return self->ops->len;
}

/* Engine configurations from one heuristics mode, best first (created
 * in @owned). */
static gboolean
heuristics (AtomrCudnnBackendGraph           *self,
            cudnnBackendDescriptor_t   op_graph,
            cudnnBackendHeurMode_t     mode,
            GPtrArray                 *owned,
            GPtrArray                 *configs,
            GError                   **error)
{
  cudnnBackendDescriptor_t heur;
  gint64 count = 0, got = 0;
  g_autofree cudnnBackendDescriptor_t *cfgs = NULL;

  heur = atomr_cudnn_backend_graph_new_descriptor (self, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, error);
  if (heur == NULL)
    return FALSE;
  /* the graph's owned list frees it; the engine configs go to the plan */
  if (!atomr_cudnn_backend_graph_set (self, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_graph, error) ||
      !atomr_cudnn_backend_graph_set (self, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, error) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (self, heur, error) ||
      !atomr_cudnn_status_check (cudnnBackendGetAttribute (heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL),
                                 "cudnnBackendGetAttribute (heuristic results)", self->opname, error))
    return FALSE;
  if (count <= 0)
    return TRUE;
  count = MIN (count, 64);
  cfgs = g_new0 (cudnnBackendDescriptor_t, count);
  for (gint64 i = 0; i < count; i++)
    {
      if (!atomr_cudnn_status_check (cudnnBackendCreateDescriptor (CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]),
                                     "cudnnBackendCreateDescriptor", self->opname, error))
        return FALSE;
      g_ptr_array_add (owned, cfgs[i]);
    }
  if (!atomr_cudnn_status_check (cudnnBackendGetAttribute (heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs),
                                 "cudnnBackendGetAttribute (heuristic results)", self->opname, error))
    return FALSE;
  for (gint64 i = 0; i < MIN (got, count); i++)
    g_ptr_array_add (configs, cfgs[i]);
  return TRUE;
}

/* The engine of @cfg (a new descriptor the caller destroys), or NULL. */
static cudnnBackendDescriptor_t
config_engine (cudnnBackendDescriptor_t cfg)
{
  cudnnBackendDescriptor_t engine = NULL;
  gint64 n = 0;

  if (cudnnBackendCreateDescriptor (CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS)
    return NULL;
  if (cudnnBackendGetAttribute (cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                &engine) != CUDNN_STATUS_SUCCESS || n != 1)
    {
      cudnnBackendDestroyDescriptor (engine);
      return NULL;
    }
  return engine;
}

/* Whether @cfg's engine may run: with ATOMR_CUDNN_PLAN_NO_TENSOR_CORE, no
 * engine whose numerical notes say it uses tensor cores or converts its
 * inputs down (TF32 for f32 data).  Sets *@index to the engine's global
 * index (-1 where cuDNN does not say). */
static gboolean
config_allowed (cudnnBackendDescriptor_t cfg,
                AtomrCudnnPlanFlags      flags,
                gint64                  *index)
{
  cudnnBackendDescriptor_t engine = config_engine (cfg);
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  gint64 n = 0;
  gboolean ok = TRUE;

  *index = -1;
  if (engine == NULL)
    /* cannot tell what it does: only acceptable when nothing is excluded */
    return (flags & ATOMR_CUDNN_PLAN_NO_TENSOR_CORE) == 0;
  if (cudnnBackendGetAttribute (engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                index) != CUDNN_STATUS_SUCCESS || n != 1)
    *index = -1;
  if ((flags & ATOMR_CUDNN_PLAN_NO_TENSOR_CORE) != 0)
    {
      n = 0;
      if (cudnnBackendGetAttribute (engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                    G_N_ELEMENTS (notes), &n, notes) != CUDNN_STATUS_SUCCESS)
        ok = FALSE;
      for (gint64 i = 0; ok && i < MIN (n, (gint64) G_N_ELEMENTS (notes)); i++)
        if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
            notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
          ok = FALSE;
    }
  cudnnBackendDestroyDescriptor (engine);
  return ok;
}

AtomrCudnnBackendPlan *
atomr_cudnn_backend_graph_build_plan (AtomrCudnnBackendGraph  *self,
                                      cudnnHandle_t            handle,
                                      guint64                  workspace_limit,
                                      guint                    skip,
                                      GError                 **error)
{
  return atomr_cudnn_backend_graph_build_plan_full (self, handle, workspace_limit, skip, 0, error);
}

AtomrCudnnBackendPlan *
atomr_cudnn_backend_graph_build_plan_full (AtomrCudnnBackendGraph  *self,
                                           cudnnHandle_t            handle,
                                           guint64                  workspace_limit,
                                           guint                    skip,
                                           AtomrCudnnPlanFlags      flags,
                                           GError                 **error)
{
  guint refused = 0;
  g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func (destroy_descriptor);
  g_autoptr(GPtrArray) configs = g_ptr_array_new ();
  g_autofree gchar *last = NULL;
  cudnnBackendDescriptor_t op_graph;
  static const cudnnBackendHeurMode_t modes[] = { CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK };
  guint tried = 0, usable = 0;

  if (self->ops->len == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuDNN graph for %s has no operations", self->opname);
      return NULL;
    }
  op_graph = atomr_cudnn_backend_graph_new_descriptor (self, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, error);
  if (op_graph == NULL ||
      !atomr_cudnn_backend_graph_set (self, op_graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
                              &handle, error) ||
      !atomr_cudnn_backend_graph_set (self, op_graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                              self->ops->len, self->ops->data, error) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (self, op_graph, error))
    return NULL;

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      g_autoptr(GError) heur_error = NULL;

      g_ptr_array_set_size (configs, 0);
      /* mode A may refuse a graph the fallback list still covers */
      if (!heuristics (self, op_graph, modes[m], owned, configs, &heur_error))
        {
          g_free (last);
          last = g_strdup (heur_error->message);
          continue;
        }
      for (guint i = 0; i < configs->len; i++)
        {
          cudnnBackendDescriptor_t cfg = configs->pdata[i], plan = NULL;
          gint64 ws = 0, n = 0, engine = -1;
          cudnnStatus_t st;

          tried++;
          if (!config_allowed (cfg, flags, &engine))
            {
              refused++;
              continue;
            }
          st = cudnnBackendCreateDescriptor (CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
          if (!atomr_cudnn_status_check (st, "cudnnBackendCreateDescriptor", self->opname, error))
            return NULL;
          st = cudnnBackendSetAttribute (plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
          if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnBackendSetAttribute (plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
          if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnBackendFinalize (plan);
          if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnBackendGetAttribute (plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                           CUDNN_TYPE_INT64, 1, &n, &ws);
          if (st != CUDNN_STATUS_SUCCESS || ws < 0 || (guint64) ws > workspace_limit)
            {
              g_autoptr(GError) e = NULL;
              if (st != CUDNN_STATUS_SUCCESS)
                atomr_cudnn_status_check (st, "cudnnBackendFinalize (execution plan)", self->opname, &e);
              g_free (last);
              last = e ? g_strdup (e->message)
                       : g_strdup_printf ("engine configuration %u needs %" G_GINT64_FORMAT
                                          " bytes of workspace (limit %" G_GUINT64_FORMAT ")",
                                          tried, ws, workspace_limit);
              cudnnBackendDestroyDescriptor (plan);
              continue;
            }
          if (usable++ < skip)
            {
              /* a usable configuration, but the caller wants a later one */
              cudnnBackendDestroyDescriptor (plan);
              continue;
            }
          {
            AtomrCudnnBackendPlan *p = g_new0 (AtomrCudnnBackendPlan, 1);

            p->opname = g_strdup (self->opname);
            p->plan = plan;
            p->workspace = (guint64) ws;
            p->engine = engine;
            /* The plan references the op graph, engine config and the
             * graph's tensors and operations: the plan keeps them all. */
            g_ptr_array_add (owned, plan);
            g_ptr_array_extend_and_steal (self->owned, g_steal_pointer (&owned));
            p->owned = g_steal_pointer (&self->owned);
            self->owned = g_ptr_array_new_with_free_func (destroy_descriptor);
            g_hash_table_remove_all (self->tensors);
            g_array_set_size (self->ops, 0);
            return p;
          }
        }
    }
  if (skip > 0 && usable > 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s has %u usable engine configurations (asked for number %u)",
                   self->opname, usable, skip + 1);
      return NULL;
    }
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
               "cuDNN: no engine runs %s (%u operations, %u configurations tried, %u of them using "
               "tensor cores where FMA math was asked, workspace limit %" G_GUINT64_FORMAT " bytes)%s%s",
               self->opname, self->ops->len, tried, refused, workspace_limit,
               last ? "; last refusal: " : "", last ? last : "");
  return NULL;
}

void
atomr_cudnn_backend_plan_free (AtomrCudnnBackendPlan *plan)
{
  if (plan == NULL)
    return;
  if (plan->pack != NULL)
    cudnnBackendDestroyDescriptor (plan->pack);
  /* the plan first: it is the last in the list, destroy in reverse */
  if (plan->owned != NULL)
    {
      for (guint i = plan->owned->len; i > 0; i--)
        cudnnBackendDestroyDescriptor (plan->owned->pdata[i - 1]);
      g_ptr_array_set_free_func (plan->owned, NULL);
      g_ptr_array_unref (plan->owned);
    }
  g_free (plan->opname);
  g_free (plan);
}

guint64
atomr_cudnn_backend_plan_get_workspace_size (AtomrCudnnBackendPlan *plan)
{
  return plan->workspace;
}

gint64
atomr_cudnn_backend_plan_get_engine (AtomrCudnnBackendPlan *plan)
{
  return plan->engine;
}

void
atomr_cudnn_backend_plan_get_pack_counts (AtomrCudnnBackendPlan *plan,
                                          guint64               *builds,
                                          guint64               *reuses)
{
  if (builds != NULL)
    *builds = plan->pack_builds;
  if (reuses != NULL)
    *reuses = plan->pack_reuses;
}

/* A finalized variant pack of @n uids and pointers and @workspace, or
 * NULL with *@call and *@st saying what failed. */
static cudnnBackendDescriptor_t
pack_new (guint          n,
          const gint64  *uids,
          void * const  *pointers,
          void          *workspace,
          const gchar  **call,
          cudnnStatus_t *st)
{
  cudnnBackendDescriptor_t pack = NULL;

  *call = "cudnnBackendCreateDescriptor (variant pack)";
  *st = cudnnBackendCreateDescriptor (CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (*st != CUDNN_STATUS_SUCCESS)
    return NULL;
  *call = "cudnnBackendSetAttribute (variant pack)";
  *st = cudnnBackendSetAttribute (pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
  if (*st == CUDNN_STATUS_SUCCESS)
    *st = cudnnBackendSetAttribute (pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                                    pointers);
  if (*st == CUDNN_STATUS_SUCCESS)
    *st = cudnnBackendSetAttribute (pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                    &workspace);
  if (*st == CUDNN_STATUS_SUCCESS)
    {
      *call = "cudnnBackendFinalize (variant pack)";
      *st = cudnnBackendFinalize (pack);
    }
  if (*st != CUDNN_STATUS_SUCCESS)
    {
      cudnnBackendDestroyDescriptor (pack);
      return NULL;
    }
  return pack;
}

gboolean
atomr_cudnn_backend_plan_execute_device (AtomrCudnnBackendPlan  *plan,
                                         cudnnHandle_t           handle,
                                         guint                   n,
                                         const gint64           *uids,
                                         void * const           *pointers,
                                         void                   *workspace,
                                         GError                **error)
{
  const gchar *call = "cudnnBackendExecute";
  cudnnStatus_t st;

  if (n > PACK_MAX)
    return atomr_cudnn_backend_plan_execute (plan, handle, n, uids, pointers, workspace, error);
  /* A finalized variant pack cannot change, but one built from the same
   * uids, pointers and workspace is the same pack: training loops and
   * benchmarks call with the same buffers every time. */
  if (plan->pack != NULL && plan->pack_n == n && plan->pack_ws == workspace &&
      memcmp (plan->pack_uids, uids, n * sizeof *uids) == 0 &&
      memcmp (plan->pack_ptrs, pointers, n * sizeof *pointers) == 0)
    plan->pack_reuses++;
  else
    {
      cudnnBackendDescriptor_t pack;

      if (plan->pack != NULL)
        cudnnBackendDestroyDescriptor (plan->pack);
      plan->pack = NULL;
      pack = pack_new (n, uids, pointers, workspace, &call, &st);
      if (pack == NULL)
        return atomr_cudnn_status_check (st, call, plan->opname, error);
      plan->pack = pack;
      plan->pack_n = n;
      plan->pack_ws = workspace;
      memcpy (plan->pack_uids, uids, n * sizeof *uids);
      memcpy (plan->pack_ptrs, pointers, n * sizeof *pointers);
      plan->pack_builds++;
      call = "cudnnBackendExecute";
    }
  st = cudnnBackendExecute (handle, plan->plan, plan->pack);
  return atomr_cudnn_status_check (st, call, plan->opname, error);
}

gboolean
atomr_cudnn_backend_plan_execute (AtomrCudnnBackendPlan *plan,
                                cudnnHandle_t        handle,
                                guint                n,
                                const gint64        *uids,
                                void * const        *pointers,
                                void                *workspace,
                                GError             **error)
{
  cudnnBackendDescriptor_t pack;
  cudnnStatus_t st;
  const gchar *call;

  /* A variant pack is a small host object; cuDNN's own frontend makes
   * one per execution too (its attributes cannot change once final). */
  pack = pack_new (n, uids, pointers, workspace, &call, &st);
  if (pack == NULL)
    return atomr_cudnn_status_check (st, call, plan->opname, error);
  st = cudnnBackendExecute (handle, plan->plan, pack);
  cudnnBackendDestroyDescriptor (pack);
  return atomr_cudnn_status_check (st, "cudnnBackendExecute", plan->opname, error);
}

/* ------------------------------------------------------------------ */
/* Plan cache                                                           */

typedef struct {
  GBytes         *key;
  gpointer        value;
  GDestroyNotify  value_free;
  GList           link;     /* in the LRU queue, data = entry */
} Entry;

struct _AtomrCudnnPlanCache
{
  GMutex          lock;
  GHashTable     *entries;    /* GBytes key → Entry (owned by the queue) */
  GQueue          lru;        /* most recent first */
  guint           capacity;
  guint64         hits, misses;
  GDestroyNotify  value_free;
};

static void
entry_free (AtomrCudnnPlanCache *self,
            Entry               *e)
{
  if (e->value_free != NULL && e->value != NULL)
    e->value_free (e->value);
  g_bytes_unref (e->key);
  g_free (e);
}

AtomrCudnnPlanCache *
atomr_cudnn_plan_cache_new (guint          capacity,
                            GDestroyNotify value_free)
{
  AtomrCudnnPlanCache *self = g_new0 (AtomrCudnnPlanCache, 1);

  g_mutex_init (&self->lock);
  self->entries = g_hash_table_new (g_bytes_hash, g_bytes_equal);
  g_queue_init (&self->lru);
  self->capacity = capacity;
  self->value_free = value_free;
  return self;
}

/* Called with the lock held: unlinks the entries beyond @capacity and
 * returns them (freed outside the lock: freeing a plan calls cuDNN). */
static GList *
trim_locked (AtomrCudnnPlanCache *self,
             guint                capacity)
{
  GList *evicted = NULL;

  while (self->lru.length > capacity)
    {
      GList *link = g_queue_pop_tail_link (&self->lru);
      Entry *e = link->data;

      g_hash_table_remove (self->entries, e->key);
      evicted = g_list_prepend (evicted, e);
    }
  return evicted;
}

static void
free_evicted (AtomrCudnnPlanCache *self,
              GList               *evicted)
{
  for (GList *l = evicted; l != NULL; l = l->next)
    entry_free (self, l->data);
  g_list_free (evicted);
}

void
atomr_cudnn_plan_cache_free (AtomrCudnnPlanCache *self)
{
  if (self == NULL)
    return;
  free_evicted (self, trim_locked (self, 0));
  g_hash_table_unref (self->entries);
  g_mutex_clear (&self->lock);
  g_free (self);
}

gpointer
atomr_cudnn_plan_cache_lookup (AtomrCudnnPlanCache *self,
                               const void          *key,
                               gsize                key_size)
{
  g_autoptr(GBytes) k = g_bytes_new_static (key, key_size);
  Entry *e;
  gpointer value = NULL;

  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->entries, k);
  if (e != NULL)
    {
      self->hits++;
      g_queue_unlink (&self->lru, &e->link);
      g_queue_push_head_link (&self->lru, &e->link);
      value = e->value;
    }
  else
    self->misses++;
  g_mutex_unlock (&self->lock);
  return value;
}

gpointer
atomr_cudnn_plan_cache_insert (AtomrCudnnPlanCache *self,
                               const void          *key,
                               gsize                key_size,
                               gpointer             value)
{
  return atomr_cudnn_plan_cache_insert_full (self, key, key_size, value, self->value_free);
}

gpointer
atomr_cudnn_plan_cache_insert_full (AtomrCudnnPlanCache *self,
                                    const void          *key,
                                    gsize                key_size,
                                    gpointer             value,
                                    GDestroyNotify       value_free)
{
  Entry *e = g_new0 (Entry, 1);
  Entry *old;
  GList *evicted;

  e->key = g_bytes_new (key, key_size);
  e->value = value;
  e->value_free = value_free;
  e->link.data = e;

  g_mutex_lock (&self->lock);
  old = g_hash_table_lookup (self->entries, e->key);
  if (old != NULL)
    {
      g_queue_unlink (&self->lru, &old->link);
      g_hash_table_remove (self->entries, old->key);
    }
  g_queue_push_head_link (&self->lru, &e->link);
  g_hash_table_insert (self->entries, e->key, e);
  evicted = trim_locked (self, MAX (self->capacity, 1));
  g_mutex_unlock (&self->lock);

  if (old != NULL)
    entry_free (self, old);
  free_evicted (self, evicted);
  return value;
}

void
atomr_cudnn_plan_cache_clear (AtomrCudnnPlanCache *self)
{
  GList *evicted;

  g_mutex_lock (&self->lock);
  evicted = trim_locked (self, 0);
  g_mutex_unlock (&self->lock);
  free_evicted (self, evicted);
}

void
atomr_cudnn_plan_cache_set_capacity (AtomrCudnnPlanCache *self,
                                     guint                capacity)
{
  GList *evicted;

  g_mutex_lock (&self->lock);
  self->capacity = capacity;
  evicted = trim_locked (self, capacity);
  g_mutex_unlock (&self->lock);
  free_evicted (self, evicted);
}

guint
atomr_cudnn_plan_cache_get_capacity (AtomrCudnnPlanCache *self)
{
  guint v;

  g_mutex_lock (&self->lock);
  v = self->capacity;
  g_mutex_unlock (&self->lock);
  return v;
}

guint
atomr_cudnn_plan_cache_get_size (AtomrCudnnPlanCache *self)
{
  guint v;

  g_mutex_lock (&self->lock);
  v = self->lru.length;
  g_mutex_unlock (&self->lock);
  return v;
}

guint64
atomr_cudnn_plan_cache_get_hits (AtomrCudnnPlanCache *self)
{
  guint64 v;

  g_mutex_lock (&self->lock);
  v = self->hits;
  g_mutex_unlock (&self->lock);
  return v;
}

guint64
atomr_cudnn_plan_cache_get_misses (AtomrCudnnPlanCache *self)
{
  guint64 v;

  g_mutex_lock (&self->lock);
  v = self->misses;
  g_mutex_unlock (&self->lock);
  return v;
}
