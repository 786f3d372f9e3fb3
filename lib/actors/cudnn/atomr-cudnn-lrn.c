/* atomr-cudnn-lrn.c — local response normalization and dropout
 *
 * Both are cuDNN's legacy calls (cudnnLRNCrossChannel*, cudnnDropout*),
 * which cuDNN 9 still supports and does not deprecate.  Their descriptors
 * are built once per distinct request (shapes, strides, dtype, window and
 * coefficients) and kept in the actor's plan cache under a key of their
 * own, so a repeated request creates nothing.
 *
 * Dropout keeps one random state per actor: cuDNN's RNG states (device
 * memory, built by cudnnSetDropoutDescriptor on the first dropout and
 * whenever AtomrCudnnActor:dropout-seed is set) advance with every forward
 * pass.  A request records the seed generation when it is submitted, so a
 * seed set between two requests takes effect between them.  The mask goes
 * to the caller's reserve buffer, which the backward pass reads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "actors/atomr-library-private.h"
#include "actors/cudnn/atomr-cudnn-lrn.h"
#include "actors/cudnn/atomr-cudnn-actor-private.h"
#include "core/atomr-buffer-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-tensor-private.h"

/* Plan-cache keys start with a tag no other key struct uses. */
typedef enum {
  TAG_LRN_FWD     = 0x4c524e46,   /* "LRNF" */
  TAG_LRN_BWD     = 0x4c524e42,
  TAG_DROPOUT_FWD = 0x44524f46,   /* "DROF" */
  TAG_DROPOUT_BWD = 0x44524f42,
} Tag;

#define N_OPERANDS 4

typedef struct {
  gint32  tag;
  gint32  dtype;
  gint32  n_dims;
  gint32  size;
  gint64  dims[ATOMR_TENSOR_MAX_DIMS];
  gint64  strides[N_OPERANDS][ATOMR_TENSOR_MAX_DIMS];
  gdouble alpha, beta, k;
} LegacyKey;

typedef struct {
  cudnnTensorDescriptor_t td[N_OPERANDS];
  cudnnLRNDescriptor_t    lrn;
} LegacyPlan;

typedef struct {
  const gchar  *opname;
  LegacyKey     key;
  AtomrTensor  *t[N_OPERANDS];   /* LRN fwd: x, y; bwd: y, dy, x, dx; dropout: in, out */
  guint         n;
  AtomrBuffer  *reserve;
  gdouble       probability;
  guint64       seed;
  guint         generation;
} LegacyRequest;

struct _AtomrCudnnDropoutState
{
  cudnnDropoutDescriptor_t desc;
  CUdeviceptr              states;
  gsize                    states_size;
  guint64                  seed;
  guint                    generation;
  gfloat                   probability;
};

static void
legacy_plan_free (gpointer data)
{
  LegacyPlan *plan = data;

  for (guint i = 0; i < N_OPERANDS; i++)
    if (plan->td[i])
      cudnnDestroyTensorDescriptor (plan->td[i]);
  if (plan->lrn)
    cudnnDestroyLRNDescriptor (plan->lrn);
  g_free (plan);
}

static void
legacy_request_clear (gpointer data)
{
  LegacyRequest *r = data;

  for (guint i = 0; i < N_OPERANDS; i++)
    g_clear_object (&r->t[i]);
  g_clear_object (&r->reserve);
}

void
atomr_cudnn_dropout_state_free (AtomrCudnnDropoutState *state,
                                CUstream                stream,
                                gboolean                context_alive)
{
  if (state == NULL)
    return;
  if (state->desc)
    cudnnDestroyDropoutDescriptor (state->desc);
  if (state->states && context_alive)
    ATOMR_CU->cuMemFreeAsync (state->states, stream);
  g_free (state);
}

static gboolean
status_check (cudnnStatus_t  st,
              const gchar   *call,
              const gchar   *opname,
              GError       **error)
{
  return atomr_cudnn_status_check (st, call, opname, error);
}

static LegacyPlan *
plan_get (AtomrCudnnActor *self,
          LegacyRequest   *r,
          GError         **error)
{
  AtomrCudnnPlanCache *cache = atomr_cudnn_actor_get_graph_plans (self);
  LegacyPlan *plan = atomr_cudnn_plan_cache_lookup (cache, &r->key, sizeof r->key);

  if (plan != NULL)
    return plan;
  plan = g_new0 (LegacyPlan, 1);
  for (guint i = 0; i < r->n; i++)
    if (!atomr_cudnn_tensor_desc_new (r->t[i], r->key.dtype, r->opname, &plan->td[i], error))
      goto fail;
  if (r->key.tag == TAG_LRN_FWD || r->key.tag == TAG_LRN_BWD)
    {
      if (!status_check (cudnnCreateLRNDescriptor (&plan->lrn), "cudnnCreateLRNDescriptor", r->opname, error) ||
          !status_check (cudnnSetLRNDescriptor (plan->lrn, (unsigned) r->key.size, r->key.alpha,
                                                r->key.beta, r->key.k),
                         "cudnnSetLRNDescriptor", r->opname, error))
        goto fail;
    }
  return atomr_cudnn_plan_cache_insert_full (cache, &r->key, sizeof r->key, plan, legacy_plan_free);

fail:
  legacy_plan_free (plan);
  return NULL;
}

#define PTR(i) ((void *) (uintptr_t) atomr_tensor_get_ptr (r->t[i]))

/* The actor's dropout state, built or restarted as @r requires, set to
 * @r's probability. */
static AtomrCudnnDropoutState *
dropout_state (AtomrCudnnActor *self,
               LegacyRequest   *r,
               CUstream         stream,
               GError         **error)
{
  cudnnHandle_t h = atomr_cudnn_actor_get_handle (self);
  AtomrCudnnDropoutState **slot = atomr_cudnn_actor_get_dropout_state (self);
  AtomrCudnnDropoutState *state = *slot;
  gfloat p = (gfloat) r->probability;

  if (state == NULL)
    {
      if (r->key.tag == TAG_DROPOUT_BWD)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: no dropout forward pass ran on this actor (since its context was "
                       "built): the backward pass needs its state", r->opname);
          return NULL;
        }
      state = g_new0 (AtomrCudnnDropoutState, 1);
      if (!status_check (cudnnCreateDropoutDescriptor (&state->desc), "cudnnCreateDropoutDescriptor",
                         r->opname, error) ||
          !status_check (cudnnDropoutGetStatesSize (h, &state->states_size), "cudnnDropoutGetStatesSize",
                         r->opname, error) ||
          !atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&state->states, MAX (state->states_size, 1), stream),
                             "cuMemAllocAsync (dropout states)", error))
        {
          atomr_cudnn_dropout_state_free (state, stream, TRUE);
          return NULL;
        }
      state->generation = r->generation + 1;   /* forces the build below */
      *slot = state;
    }
  if (r->key.tag == TAG_DROPOUT_FWD && state->generation != r->generation)
    {
      /* builds the RNG states from the seed (a kernel on the actor's stream) */
      if (!status_check (cudnnSetDropoutDescriptor (state->desc, h, p,
                                                    (void *) (uintptr_t) state->states,
                                                    state->states_size, r->seed),
                         "cudnnSetDropoutDescriptor", r->opname, error))
        return NULL;
      state->generation = r->generation;
      state->seed = r->seed;
      state->probability = p;
    }
  else if (state->probability != p)
    {
      /* the same states, another probability: nothing runs */
      if (!status_check (cudnnRestoreDropoutDescriptor (state->desc, h, p,
                                                        (void *) (uintptr_t) state->states,
                                                        state->states_size, state->seed),
                         "cudnnRestoreDropoutDescriptor", r->opname, error))
        return NULL;
      state->probability = p;
    }
  return state;
}

static gboolean
legacy_enqueue (AtomrOp  *op,
                GError  **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (atomr_op_get_actor (op));
  LegacyRequest *r = atomr_op_get_data (op);
  cudnnHandle_t h = atomr_cudnn_actor_get_handle (self);
  union { gfloat f; gdouble d; } one, zero;
  LegacyPlan *plan;
  cudnnStatus_t st;
  const gchar *call;

  if (atomr_op_is_host (op) || h == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s needs a CUDA device; the host test device has no cuDNN", r->opname);
      return FALSE;
    }
  plan = plan_get (self, r, error);
  if (plan == NULL)
    return FALSE;
  if (r->key.dtype == ATOMR_DTYPE_F64)
    {
      one.d = 1.0;
      zero.d = 0.0;
    }
  else
    {
      one.f = 1.0f;
      zero.f = 0.0f;
    }

  switch (r->key.tag)
    {
    case TAG_LRN_FWD:
      call = "cudnnLRNCrossChannelForward";
      st = cudnnLRNCrossChannelForward (h, plan->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one,
                                        plan->td[0], PTR (0), &zero, plan->td[1], PTR (1));
      break;
    case TAG_LRN_BWD:
      call = "cudnnLRNCrossChannelBackward";
      st = cudnnLRNCrossChannelBackward (h, plan->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one,
                                         plan->td[0], PTR (0), plan->td[1], PTR (1),
                                         plan->td[2], PTR (2), &zero, plan->td[3], PTR (3));
      break;
    default:
      {
        CUstream stream = atomr_op_get_cu_stream (op);
        AtomrCudnnDropoutState *state;
        gsize need = 0;
        void *reserve = (void *) (uintptr_t) atomr_buffer_get_device_pointer (r->reserve);

        if (!status_check (cudnnDropoutGetReserveSpaceSize (plan->td[0], &need),
                           "cudnnDropoutGetReserveSpaceSize", r->opname, error))
          return FALSE;
        if (atomr_buffer_get_byte_size (r->reserve) < need)
          {
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "%s: reserve has %" G_GUINT64_FORMAT " bytes but cuDNN needs %" G_GSIZE_FORMAT
                         " for this tensor (see atomr_cudnn_actor_get_dropout_reserve_size())",
                         r->opname, atomr_buffer_get_byte_size (r->reserve), need);
            return FALSE;
          }
        state = dropout_state (self, r, stream, error);
        if (state == NULL)
          return FALSE;
        if (r->key.tag == TAG_DROPOUT_FWD)
          {
            call = "cudnnDropoutForward";
            st = cudnnDropoutForward (h, state->desc, plan->td[0], PTR (0), plan->td[1], PTR (1),
                                      reserve, need);
          }
        else
          {
            call = "cudnnDropoutBackward";
            st = cudnnDropoutBackward (h, state->desc, plan->td[0], PTR (0), plan->td[1], PTR (1),
                                       reserve, need);
          }
      }
      break;
    }
  return status_check (st, call, r->opname, error);
}

#undef PTR

/* ------------------------------------------------------------------ */
/* Validation (caller's thread)                                         */

#define FAIL(...) (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)

static LegacyRequest *
request_new (AtomrOp     *op,
             const gchar *opname,
             Tag          tag)
{
  LegacyRequest *r = atomr_op_alloc_data (op, sizeof (LegacyRequest), legacy_request_clear);

  memset (r, 0, sizeof *r);
  r->opname = opname;
  r->key.tag = tag;
  r->key.dtype = -1;
  return r;
}

/* Operand @i of @r: a view cuDNN can describe, 4 or 5 dimensions for LRN
 * (1 to 8 for dropout), the shape of operand 0. */
static gboolean
add_operand (AtomrCudnnActor *self,
             LegacyRequest   *r,
             const gchar     *name,
             AtomrTensor     *t,
             GError         **error)
{
  gboolean lrn = r->key.tag == TAG_LRN_FWD || r->key.tag == TAG_LRN_BWD;
  guint i = r->n, n;
  const gint64 *shape, *strides;

  if (!atomr_cudnn_check_tensor (self, r->opname, name, t, lrn ? 4 : 1, lrn ? 5 : ATOMR_TENSOR_MAX_DIMS,
                                 &r->key.dtype, error))
    return FALSE;
  shape = atomr_tensor_get_shape (t, &n);
  strides = atomr_tensor_get_strides (t, NULL);
  if (i == 0)
    {
      r->key.n_dims = n;
      memcpy (r->key.dims, shape, n * sizeof (gint64));
    }
  else if ((guint) r->key.n_dims != n || memcmp (r->key.dims, shape, n * sizeof (gint64)) != 0)
    {
      g_autofree gchar *a = atomr_tensor_to_string (t);
      g_autofree gchar *b = atomr_tensor_to_string (r->t[0]);
      return FAIL ("%s: %s is %s but the first operand is %s (they must have the same shape)",
                   r->opname, name, a, b);
    }
  for (guint d = 0; d < n; d++)
    r->key.strides[i][d] = shape[d] > 1 ? strides[d] : 0;
  r->t[i] = g_object_ref (t);
  r->n++;
  return TRUE;
}

static gboolean
check_lrn (const gchar  *op,
           guint         size,
           gdouble       alpha,
           gdouble       beta,
           gdouble       k,
           LegacyRequest *r,
           GError      **error)
{
  if (size < CUDNN_LRN_MIN_N || size > CUDNN_LRN_MAX_N)
    return FAIL ("%s: size is %u (cuDNN takes %d to %d channels)", op, size, CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N);
  if (!isfinite (alpha))
    return FAIL ("%s: alpha is %g (takes a finite number)", op, alpha);
  if (!(beta >= CUDNN_LRN_MIN_BETA) || !isfinite (beta))
    return FAIL ("%s: beta is %g (cuDNN takes at least %g)", op, beta, CUDNN_LRN_MIN_BETA);
  if (!(k >= CUDNN_LRN_MIN_K) || !isfinite (k))
    return FAIL ("%s: k is %g (cuDNN takes at least %g)", op, k, CUDNN_LRN_MIN_K);
  r->key.size = size;
  r->key.alpha = alpha;
  r->key.beta = beta;
  r->key.k = k;
  return TRUE;
}

static void
submit (AtomrOp      *op,
        AtomrTensor **inputs,
        guint         n_inputs,
        AtomrTensor  *output,
        AtomrBuffer  *reserve,
        gboolean      reserve_written)
{
  for (guint i = 0; i < n_inputs; i++)
    atomr_op_read_tensor (op, inputs[i]);
  atomr_op_write_tensor (op, output);
  if (reserve != NULL)
    {
      if (reserve_written)
        atomr_op_write (op, reserve);
      else
        atomr_op_read (op, reserve);
    }
  atomr_op_set_enqueue (op, legacy_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_cudnn_actor_lrn_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @size: the window: how many neighbouring channels, 1 to 16
 * @alpha: the scale of the sum of squares (divided by @size, as in Caffe
 *   and PyTorch)
 * @beta: the exponent, at least 0.01
 * @k: the offset, at least 1e-5
 * @x: the input, N × C × H × W or N × C × D × H × W
 * @y: the output, @x's shape, any layout
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * Local response normalization across channels: y = x / (k + alpha /
 * size · Σ x²)^beta, the sum over the @size channels centred on each
 * (trace name `cudnn · lrn-fwd`; cudnnLRNCrossChannelForward).  @y
 * overlaps no input.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_lrn_forward_async (AtomrCudnnActor     *self,
                                     guint                size,
                                     gdouble              alpha,
                                     gdouble              beta,
                                     gdouble              k,
                                     AtomrTensor         *x,
                                     AtomrTensor         *y,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  const gchar *opname = "lrn-fwd";
  AtomrOp *op;
  LegacyRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_lrn_forward_async, cancellable, callback, user_data);
  r = request_new (op, opname, TAG_LRN_FWD);
  if (!check_lrn (opname, size, alpha, beta, k, r, &error) ||
      !add_operand (self, r, "x", x, &error) ||
      !add_operand (self, r, "y", y, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x)), &error))
    return atomr_op_fail (op, error);
  submit (op, &x, 1, y, NULL, FALSE);
}

/**
 * atomr_cudnn_actor_lrn_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.lrn_forward_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_lrn_forward_finish (AtomrCudnnActor  *self,
                                      GAsyncResult     *result,
                                      GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_lrn_forward_async, error);
}

/**
 * atomr_cudnn_actor_lrn_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @size: the forward pass's window
 * @alpha: the forward pass's alpha
 * @beta: the forward pass's beta
 * @k: the forward pass's k
 * @y: the forward pass's output
 * @dy: the gradient of @y
 * @x: the forward pass's input
 * @dx: where the gradient of @x goes, @x's shape, any layout
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dx is computed
 * @user_data: data for @callback
 *
 * The gradient of [method@Atomr.CudnnActor.lrn_forward_async] (trace name
 * `cudnn · lrn-bwd`; cudnnLRNCrossChannelBackward).  @dx overlaps no
 * input.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_lrn_backward_async (AtomrCudnnActor     *self,
                                      guint                size,
                                      gdouble              alpha,
                                      gdouble              beta,
                                      gdouble              k,
                                      AtomrTensor         *y,
                                      AtomrTensor         *dy,
                                      AtomrTensor         *x,
                                      AtomrTensor         *dx,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  const gchar *opname = "lrn-bwd";
  AtomrOp *op;
  LegacyRequest *r;
  GError *error = NULL;
  AtomrTensor *in[3] = { y, dy, x };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_lrn_backward_async, cancellable, callback, user_data);
  r = request_new (op, opname, TAG_LRN_BWD);
  if (!check_lrn (opname, size, alpha, beta, k, r, &error) ||
      !add_operand (self, r, "y", y, &error) ||
      !add_operand (self, r, "dy", dy, &error) ||
      !add_operand (self, r, "x", x, &error) ||
      !add_operand (self, r, "dx", dx, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dx", dx)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y),
                                             ATOMR_OPERAND_TENSOR ("dy", dy),
                                             ATOMR_OPERAND_TENSOR ("x", x)), &error))
    return atomr_op_fail (op, error);
  submit (op, in, 3, dx, NULL, FALSE);
}

/**
 * atomr_cudnn_actor_lrn_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.lrn_backward_async].
 *
 * Returns: %TRUE when dx was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_lrn_backward_finish (AtomrCudnnActor  *self,
                                       GAsyncResult     *result,
                                       GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_lrn_backward_async, error);
}

/* ------------------------------------------------------------------ */
/* Dropout                                                              */

static gboolean
check_dropout (AtomrCudnnActor *self,
               const gchar     *op,
               gdouble          probability,
               AtomrBuffer     *reserve,
               LegacyRequest   *r,
               GError         **error)
{
  if (!(probability >= 0.0 && probability < 1.0))
    return FAIL ("%s: probability is %g (takes 0 ≤ p < 1)", op, probability);
  if (!atomr_check_buffer (op, "reserve", reserve, error))
    return FALSE;
  if (atomr_buffer_get_device (reserve) != atomr_actor_get_device (ATOMR_ACTOR (self)))
    return FAIL ("%s: reserve lives on another device than the actor", op);
  r->probability = probability;
  r->reserve = g_object_ref (reserve);
  atomr_cudnn_actor_get_dropout_request (self, &r->seed, &r->generation);
  return TRUE;
}

/**
 * atomr_cudnn_actor_get_dropout_reserve_size:
 * @self: an [class@Atomr.CudnnActor]
 * @x: the tensor dropout will be applied to
 * @size: (out): the bytes the reserve buffer needs
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets how many bytes the reserve buffer of a dropout of @x needs (it
 * holds the mask between the forward and the backward pass).  Loads cuDNN
 * if needed; on the host test device this fails with
 * %ATOMR_ERROR_NOT_SUPPORTED.  May be called from any thread.
 *
 * Returns: %TRUE when @size was set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_get_dropout_reserve_size (AtomrCudnnActor  *self,
                                            AtomrTensor      *x,
                                            guint64          *size,
                                            GError          **error)
{
  const gchar *op = "dropout-reserve-size";
  cudnnTensorDescriptor_t td = NULL;
  gint dtype = -1;
  gsize need = 0;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), FALSE);
  g_return_val_if_fail (size != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!atomr_cudnn_check_tensor (self, op, "x", x, 1, ATOMR_TENSOR_MAX_DIMS, &dtype, error))
    return FALSE;
  if (atomr_device_is_host (atomr_actor_get_device (ATOMR_ACTOR (self))))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s needs a CUDA device; the host test device has no cuDNN", op);
      return FALSE;
    }
  if (!atomr_cudnn_load (error) ||
      !atomr_cudnn_tensor_desc_new (x, dtype, op, &td, error))
    return FALSE;
  ok = status_check (cudnnDropoutGetReserveSpaceSize (td, &need), "cudnnDropoutGetReserveSpaceSize", op, error);
  cudnnDestroyTensorDescriptor (td);
  if (ok)
    *size = need;
  return ok;
}

/**
 * atomr_cudnn_actor_dropout_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @probability: the probability that an element is dropped, 0 ≤ p < 1
 * @x: the input, any rank and layout
 * @y: the output, @x's shape
 * @reserve: where the mask goes: a buffer of at least
 *   [method@Atomr.CudnnActor.get_dropout_reserve_size] bytes, read by the
 *   backward pass
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * y = x / (1 − p) where the mask keeps an element, 0 elsewhere (trace name
 * `cudnn · dropout-fwd`; cudnnDropoutForward).  The mask is drawn from
 * the actor's random state, which [property@Atomr.CudnnActor:dropout-seed]
 * restarts: the same seed and the same sequence of requests give the same
 * masks.  @y overlaps no input.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_dropout_forward_async (AtomrCudnnActor     *self,
                                         gdouble              probability,
                                         AtomrTensor         *x,
                                         AtomrTensor         *y,
                                         AtomrBuffer         *reserve,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  const gchar *opname = "dropout-fwd";
  AtomrOp *op;
  LegacyRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_dropout_forward_async, cancellable, callback, user_data);
  r = request_new (op, opname, TAG_DROPOUT_FWD);
  if (!add_operand (self, r, "x", x, &error) ||
      !add_operand (self, r, "y", y, &error) ||
      !check_dropout (self, opname, probability, reserve, r, &error) ||
      !atomr_check_no_alias (opname,
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y), ATOMR_OPERAND ("reserve", reserve)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x)), &error))
    return atomr_op_fail (op, error);
  submit (op, &x, 1, y, reserve, TRUE);
}

/**
 * atomr_cudnn_actor_dropout_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.dropout_forward_async].
 *
 * Returns: %TRUE when y and the mask were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_dropout_forward_finish (AtomrCudnnActor  *self,
                                          GAsyncResult     *result,
                                          GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_dropout_forward_async, error);
}

/**
 * atomr_cudnn_actor_dropout_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @probability: the forward pass's probability
 * @dy: the gradient of the forward pass's output
 * @dx: where the gradient of its input goes, @dy's shape
 * @reserve: the forward pass's reserve buffer (its mask)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dx is computed
 * @user_data: data for @callback
 *
 * dx = dy / (1 − p) where the forward pass's mask kept an element, 0
 * elsewhere (trace name `cudnn · dropout-bwd`; cudnnDropoutBackward).  @dx
 * overlaps no input.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_dropout_backward_async (AtomrCudnnActor     *self,
                                          gdouble              probability,
                                          AtomrTensor         *dy,
                                          AtomrTensor         *dx,
                                          AtomrBuffer         *reserve,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  const gchar *opname = "dropout-bwd";
  AtomrOp *op;
  LegacyRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_dropout_backward_async, cancellable, callback, user_data);
  r = request_new (op, opname, TAG_DROPOUT_BWD);
  if (!add_operand (self, r, "dy", dy, &error) ||
      !add_operand (self, r, "dx", dx, &error) ||
      !check_dropout (self, opname, probability, reserve, r, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dx", dx)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dy", dy), ATOMR_OPERAND ("reserve", reserve)),
                             &error))
    return atomr_op_fail (op, error);
  submit (op, &dy, 1, dx, reserve, FALSE);
}

/**
 * atomr_cudnn_actor_dropout_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.dropout_backward_async].
 *
 * Returns: %TRUE when dx was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_dropout_backward_finish (AtomrCudnnActor  *self,
                                           GAsyncResult     *result,
                                           GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_dropout_backward_async, error);
}
