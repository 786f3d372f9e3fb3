/* atomr-cudnn-rnn.c — recurrent networks on the cuDNN actor (cuDNN's v8
 * RNN API: cudnnSetRNNDescriptor_v8, cudnnRNNForward,
 * cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8)
 *
 * An AtomrRnn is the network's shape (cell, sizes, layers, directions); a
 * request adds the views.  Sequences are 3-D views, time × batch ×
 * features: packed time-major storage, or batch-major storage viewed in
 * that order (strides say which; cuDNN's SEQ_MAJOR_PACKED or
 * BATCH_MAJOR_UNPACKED layout).  Every sequence of a batch has the full
 * length.  The descriptors and the sizes cuDNN asks for are a plan of the
 * actor's plan cache.  The weights are one flat view in cuDNN's weight
 * space layout (cudnnGetRNNWeightParams says where each matrix is).
 *
 * The reserve space that a training forward pass fills and the backward
 * passes read is the actor's (one allocation, grown when needed).  The
 * actor remembers which request filled it (the network, the shapes and
 * the y and hx views) and refuses a backward pass for anything else, in
 * program order: forward (training), backward data, then backward
 * weights.
 *
 * Threads: validation in the _async call (any thread); descriptors, the
 * reserve space and its owner on the actor's thread.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "actors/atomr-library-private.h"
#include "actors/cudnn/atomr-cudnn-rnn.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"
#include "core/atomr-tensor-private.h"
#include "atomr-enum-types.h"

/* ------------------------------------------------------------------ */
/* AtomrRnn                                                             */

/**
 * AtomrRnn:
 *
 * The shape of a recurrent network for [class@Atomr.CudnnActor]: the cell
 * ([enum@Atomr.RnnMode]), input and hidden sizes, stacked layers and
 * whether each layer runs in both directions (the outputs of the two are
 * concatenated, forward first).  Immutable; a bare object is a one-layer
 * LSTM of size 1.
 *
 * Since: 0.2
 */
struct _AtomrRnn
{
  GObject      parent_instance;
  AtomrRnnMode mode;
  guint        input_size;
  guint        hidden_size;
  guint        n_layers;
  gboolean     bidirectional;
};

G_DEFINE_FINAL_TYPE (AtomrRnn, atomr_rnn, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_MODE,
  PROP_INPUT_SIZE,
  PROP_HIDDEN_SIZE,
  PROP_N_LAYERS,
  PROP_BIDIRECTIONAL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
atomr_rnn_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  AtomrRnn *self = ATOMR_RNN (object);

  switch (prop_id)
    {
    case PROP_MODE: g_value_set_enum (value, self->mode); break;
    case PROP_INPUT_SIZE: g_value_set_uint (value, self->input_size); break;
    case PROP_HIDDEN_SIZE: g_value_set_uint (value, self->hidden_size); break;
    case PROP_N_LAYERS: g_value_set_uint (value, self->n_layers); break;
    case PROP_BIDIRECTIONAL: g_value_set_boolean (value, self->bidirectional); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_rnn_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  AtomrRnn *self = ATOMR_RNN (object);

  switch (prop_id)
    {
    case PROP_MODE: self->mode = g_value_get_enum (value); break;
    case PROP_INPUT_SIZE: self->input_size = g_value_get_uint (value); break;
    case PROP_HIDDEN_SIZE: self->hidden_size = g_value_get_uint (value); break;
    case PROP_N_LAYERS: self->n_layers = g_value_get_uint (value); break;
    case PROP_BIDIRECTIONAL: self->bidirectional = g_value_get_boolean (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_rnn_class_init (AtomrRnnClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = atomr_rnn_get_property;
  object_class->set_property = atomr_rnn_set_property;

  /**
   * AtomrRnn:mode:
   *
   * The cell.
   *
   * Since: 0.2
   */
  properties[PROP_MODE] = g_param_spec_enum ("mode", NULL, NULL, ATOMR_TYPE_RNN_MODE, ATOMR_RNN_LSTM, flags);
  /**
   * AtomrRnn:input-size:
   *
   * Features of each input vector.
   *
   * Since: 0.2
   */
  properties[PROP_INPUT_SIZE] = g_param_spec_uint ("input-size", NULL, NULL, 1, G_MAXINT32, 1, flags);
  /**
   * AtomrRnn:hidden-size:
   *
   * Features of the hidden state (and of each direction's output).
   *
   * Since: 0.2
   */
  properties[PROP_HIDDEN_SIZE] = g_param_spec_uint ("hidden-size", NULL, NULL, 1, G_MAXINT32, 1, flags);
  /**
   * AtomrRnn:n-layers:
   *
   * Stacked layers; each one after the first takes the previous one's
   * output.
   *
   * Since: 0.2
   */
  properties[PROP_N_LAYERS] = g_param_spec_uint ("n-layers", NULL, NULL, 1, G_MAXINT32, 1, flags);
  /**
   * AtomrRnn:bidirectional:
   *
   * Each layer also runs backwards in time; outputs are 2 × hidden-size.
   *
   * Since: 0.2
   */
  properties[PROP_BIDIRECTIONAL] = g_param_spec_boolean ("bidirectional", NULL, NULL, FALSE, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_rnn_init (AtomrRnn *self)
{
  self->mode = ATOMR_RNN_LSTM;
  self->input_size = 1;
  self->hidden_size = 1;
  self->n_layers = 1;
}

/**
 * atomr_rnn_new:
 * @mode: the cell
 * @input_size: features of each input vector (≥ 1)
 * @hidden_size: features of the hidden state (≥ 1)
 * @n_layers: stacked layers (≥ 1)
 * @bidirectional: run each layer in both directions
 *
 * Creates the shape of a recurrent network.
 *
 * Returns: (transfer full): a new [class@Atomr.Rnn]
 *
 * Since: 0.2
 */
AtomrRnn *
atomr_rnn_new (AtomrRnnMode mode,
               guint        input_size,
               guint        hidden_size,
               guint        n_layers,
               gboolean     bidirectional)
{
  g_return_val_if_fail (input_size >= 1 && hidden_size >= 1 && n_layers >= 1, NULL);
  return g_object_new (ATOMR_TYPE_RNN, "mode", mode, "input-size", input_size, "hidden-size", hidden_size,
                       "n-layers", n_layers, "bidirectional", bidirectional, NULL);
}

/**
 * atomr_rnn_get_mode:
 * @self: an [class@Atomr.Rnn]
 *
 * Gets the [property@Atomr.Rnn:mode] property.
 *
 * Returns: the cell
 *
 * Since: 0.2
 */
AtomrRnnMode
atomr_rnn_get_mode (AtomrRnn *self)
{
  g_return_val_if_fail (ATOMR_IS_RNN (self), ATOMR_RNN_LSTM);
  return self->mode;
}

/**
 * atomr_rnn_get_input_size:
 * @self: an [class@Atomr.Rnn]
 *
 * Gets the [property@Atomr.Rnn:input-size] property.
 *
 * Returns: features of each input vector
 *
 * Since: 0.2
 */
guint
atomr_rnn_get_input_size (AtomrRnn *self)
{
  g_return_val_if_fail (ATOMR_IS_RNN (self), 0);
  return self->input_size;
}

/**
 * atomr_rnn_get_hidden_size:
 * @self: an [class@Atomr.Rnn]
 *
 * Gets the [property@Atomr.Rnn:hidden-size] property.
 *
 * Returns: features of the hidden state
 *
 * Since: 0.2
 */
guint
atomr_rnn_get_hidden_size (AtomrRnn *self)
{
  g_return_val_if_fail (ATOMR_IS_RNN (self), 0);
  return self->hidden_size;
}

/**
 * atomr_rnn_get_n_layers:
 * @self: an [class@Atomr.Rnn]
 *
 * Gets the [property@Atomr.Rnn:n-layers] property.
 *
 * Returns: stacked layers
 *
 * Since: 0.2
 */
guint
atomr_rnn_get_n_layers (AtomrRnn *self)
{
  g_return_val_if_fail (ATOMR_IS_RNN (self), 0);
  return self->n_layers;
}

/**
 * atomr_rnn_get_bidirectional:
 * @self: an [class@Atomr.Rnn]
 *
 * Gets the [property@Atomr.Rnn:bidirectional] property.
 *
 * Returns: whether each layer runs in both directions
 *
 * Since: 0.2
 */
gboolean
atomr_rnn_get_bidirectional (AtomrRnn *self)
{
  g_return_val_if_fail (ATOMR_IS_RNN (self), FALSE);
  return self->bidirectional;
}

static guint
rnn_gates (AtomrRnnMode mode)
{
  return mode == ATOMR_RNN_LSTM ? 4 : mode == ATOMR_RNN_GRU ? 3 : 1;
}

/**
 * atomr_rnn_get_n_weights:
 * @self: an [class@Atomr.Rnn]
 *
 * Gets the elements of the network's weight space: for each layer and
 * direction, gates × hidden × (layer input + hidden) matrix elements and
 * two bias vectors of gates × hidden (cuDNN's double-bias cells; 4 gates
 * for an LSTM, 3 for a GRU, 1 otherwise).  The weights view of an
 * operation has exactly this many elements.
 *
 * Returns: the elements of the weight space
 *
 * Since: 0.2
 */
guint64
atomr_rnn_get_n_weights (AtomrRnn *self)
{
  guint64 n = 0, g, h, dirs;

  g_return_val_if_fail (ATOMR_IS_RNN (self), 0);
  g = rnn_gates (self->mode);
  h = self->hidden_size;
  dirs = self->bidirectional ? 2 : 1;
  for (guint l = 0; l < self->n_layers; l++)
    {
      guint64 in = l == 0 ? self->input_size : h * dirs;
      n += dirs * (g * h * (in + h) + 2 * g * h);
    }
  return n;
}

/* ------------------------------------------------------------------ */
/* Requests                                                             */

typedef enum {
  KIND_FWD_INFERENCE,
  KIND_FWD_TRAINING,
  KIND_BWD_DATA,
  KIND_BWD_WEIGHTS,
} Kind;

typedef enum {
  R_X, R_HX, R_CX, R_W, R_Y, R_HY, R_CY, R_DY, R_DHY, R_DCY, R_DX, R_DHX, R_DCX,
  N_R
} Slot;

/* Everything a plan depends on; zero-filled, compared as bytes. */
typedef struct {
  gint32 mode;
  gint32 dtype;
  gint32 bidirectional;
  gint32 batch_major;
  gint64 input, hidden, layers, seq, batch;
} RnnKey;

/* What the reserve space holds (the actor's reserve owner). */
typedef struct {
  RnnKey  key;
  guint64 y, hx;     /* device addresses of the forward pass's views */
  gint32  phase;     /* 1: forward done, 2: backward data done */
  gint32  pad;
} RnnToken;

typedef struct {
  cudnnRNNDescriptor_t     rnn;
  cudnnDropoutDescriptor_t dropout;
  cudnnRNNDataDescriptor_t xd, yd;
  cudnnTensorDescriptor_t  hd;
  gsize                    weight_bytes;
  gsize                    ws_inference, ws_training, reserve;
} RnnPlan;

typedef struct {
  const gchar *opname;
  Kind         kind;
  RnnKey       key;
  GBytes      *key_bytes;
  AtomrTensor *t[N_R];
  gboolean     accumulate;
} RnnRequest;

static const gchar *const slot_names[N_R] = {
  "x", "hx", "cx", "w", "y", "hy", "cy", "dy", "dhy", "dcy", "dx", "dhx", "dcx",
};

/* cuDNN's status as a GError (the actor's one mapper). */
#define cudnn_ok atomr_cudnn_status_check

static gchar *
describe (const RnnKey *k)
{
  static const gchar *const modes[] = { "relu", "tanh", "lstm", "gru" };

  return g_strdup_printf ("%s %s, %" G_GINT64_FORMAT " layer%s%s, input %" G_GINT64_FORMAT
                          ", hidden %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " steps × batch %"
                          G_GINT64_FORMAT " %s", atomr_dtype_get_name (k->dtype), modes[k->mode],
                          k->layers, k->layers == 1 ? "" : "s", k->bidirectional ? ", bidirectional" : "",
                          k->input, k->hidden, k->seq, k->batch,
                          k->batch_major ? "batch-major" : "time-major");
}

static cudnnDataType_t
rnn_dtype (gint dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return CUDNN_DATA_HALF;
    case ATOMR_DTYPE_BF16: return CUDNN_DATA_BFLOAT16;
    case ATOMR_DTYPE_F64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
    }
}

static void
rnn_plan_free (gpointer data)
{
  RnnPlan *p = data;

  if (p->rnn)
    cudnnDestroyRNNDescriptor (p->rnn);
  if (p->dropout)
    cudnnDestroyDropoutDescriptor (p->dropout);
  if (p->xd)
    cudnnDestroyRNNDataDescriptor (p->xd);
  if (p->yd)
    cudnnDestroyRNNDataDescriptor (p->yd);
  if (p->hd)
    cudnnDestroyTensorDescriptor (p->hd);
  g_free (p);
}

static RnnPlan *
rnn_plan_build (cudnnHandle_t  h,
                RnnRequest    *r,
                GError       **error)
{
  static const cudnnRNNMode_t modes[] = { CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU };
  const RnnKey *k = &r->key;
  RnnPlan *p = g_new0 (RnnPlan, 1);
  cudnnDataType_t dt = rnn_dtype (k->dtype);
  cudnnDataType_t prec = k->dtype == ATOMR_DTYPE_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  /* halves on tensor cores; f32 in full f32 (no TF32 conversion) */
  cudnnMathType_t math = (k->dtype == ATOMR_DTYPE_F16 || k->dtype == ATOMR_DTYPE_BF16) ? CUDNN_TENSOR_OP_MATH
                       : k->dtype == ATOMR_DTYPE_F32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  cudnnRNNDataLayout_t layout = k->batch_major ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED
                                               : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
  gint64 dirs = k->bidirectional ? 2 : 1;
  g_autofree int *lengths = g_new (int, k->batch);
  int hdims[3] = { (int) (k->layers * dirs), (int) k->batch, (int) k->hidden };
  int hstrides[3] = { (int) (k->batch * k->hidden), (int) k->hidden, 1 };
  size_t ws_i = 0, ws_t = 0, reserve = 0, wbytes = 0, unused = 0;
  const gchar *op = r->opname;

  for (gint64 i = 0; i < k->batch; i++)
    lengths[i] = (int) k->seq;
  if (!cudnn_ok (cudnnCreateDropoutDescriptor (&p->dropout), "cudnnCreateDropoutDescriptor", op, error) ||
      /* no dropout between layers: no states needed */
      !cudnn_ok (cudnnSetDropoutDescriptor (p->dropout, h, 0.0f, NULL, 0, 0), "cudnnSetDropoutDescriptor",
                 op, error) ||
      !cudnn_ok (cudnnCreateRNNDescriptor (&p->rnn), "cudnnCreateRNNDescriptor", op, error) ||
      !cudnn_ok (cudnnSetRNNDescriptor_v8 (p->rnn, CUDNN_RNN_ALGO_STANDARD, modes[k->mode],
                                           CUDNN_RNN_DOUBLE_BIAS,
                                           k->bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                           CUDNN_LINEAR_INPUT, dt, prec, math, (int32_t) k->input,
                                           (int32_t) k->hidden, (int32_t) k->hidden, (int32_t) k->layers,
                                           p->dropout,
                                           k->batch_major ? CUDNN_RNN_PADDED_IO_ENABLED
                                                          : CUDNN_RNN_PADDED_IO_DISABLED),
                 "cudnnSetRNNDescriptor_v8", op, error) ||
      !cudnn_ok (cudnnCreateRNNDataDescriptor (&p->xd), "cudnnCreateRNNDataDescriptor", op, error) ||
      !cudnn_ok (cudnnSetRNNDataDescriptor (p->xd, dt, layout, (int) k->seq, (int) k->batch, (int) k->input,
                                            lengths, NULL),
                 "cudnnSetRNNDataDescriptor", op, error) ||
      !cudnn_ok (cudnnCreateRNNDataDescriptor (&p->yd), "cudnnCreateRNNDataDescriptor", op, error) ||
      !cudnn_ok (cudnnSetRNNDataDescriptor (p->yd, dt, layout, (int) k->seq, (int) k->batch,
                                            (int) (k->hidden * dirs), lengths, NULL),
                 "cudnnSetRNNDataDescriptor", op, error) ||
      !cudnn_ok (cudnnCreateTensorDescriptor (&p->hd), "cudnnCreateTensorDescriptor", op, error) ||
      !cudnn_ok (cudnnSetTensorNdDescriptor (p->hd, dt, 3, hdims, hstrides), "cudnnSetTensorNdDescriptor",
                 op, error) ||
      !cudnn_ok (cudnnGetRNNWeightSpaceSize (h, p->rnn, &wbytes), "cudnnGetRNNWeightSpaceSize", op, error) ||
      !cudnn_ok (cudnnGetRNNTempSpaceSizes (h, p->rnn, CUDNN_FWD_MODE_INFERENCE, p->xd, &ws_i, &unused),
                 "cudnnGetRNNTempSpaceSizes", op, error) ||
      !cudnn_ok (cudnnGetRNNTempSpaceSizes (h, p->rnn, CUDNN_FWD_MODE_TRAINING, p->xd, &ws_t, &reserve),
                 "cudnnGetRNNTempSpaceSizes", op, error))
    {
      rnn_plan_free (p);
      return NULL;
    }
  p->weight_bytes = wbytes;
  p->ws_inference = ws_i;
  p->ws_training = ws_t;
  p->reserve = reserve;
  return p;
}

#define PTR(slot) (r->t[slot] ? (void *) (uintptr_t) atomr_tensor_get_ptr (r->t[slot]) : NULL)

static GBytes *
token_new (RnnRequest *r,
           gint32      phase)
{
  RnnToken t;

  memset (&t, 0, sizeof t);
  t.key = r->key;
  t.y = r->t[R_Y] ? atomr_tensor_get_ptr (r->t[R_Y]) : 0;
  t.hx = r->t[R_HX] ? atomr_tensor_get_ptr (r->t[R_HX]) : 0;
  t.phase = phase;
  return g_bytes_new (&t, sizeof t);
}

static gboolean
rnn_enqueue (AtomrOp  *op,
             GError  **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (atomr_op_get_actor (op));
  RnnRequest *r = atomr_op_get_data (op);
  cudnnHandle_t h = atomr_cudnn_actor_get_handle (self);
  CUstream stream = atomr_op_get_cu_stream (op);
  RnnPlan *plan;
  CUdeviceptr ws = 0, reserve = 0;
  gsize seq_bytes, ws_size, wbytes;
  void *ws_ptr;
  const int32_t *dev_lengths;
  cudnnStatus_t st;
  const gchar *call;

  if (atomr_op_is_host (op) || h == NULL)
    {
      g_autofree gchar *d = describe (&r->key);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s (%s) needs a CUDA device; the host test device has no cuDNN", r->opname, d);
      return FALSE;
    }
  plan = atomr_cudnn_actor_lookup_plan_internal (self, r->key_bytes);
  if (plan == NULL)
    {
      plan = rnn_plan_build (h, r, error);
      if (plan == NULL)
        return FALSE;
      atomr_cudnn_actor_insert_plan_internal (self, r->key_bytes, plan, rnn_plan_free);
    }
  wbytes = atomr_tensor_get_byte_size (r->t[R_W]);
  if (wbytes != plan->weight_bytes)
    {
      g_autofree gchar *d = describe (&r->key);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s (%s): %s has %" G_GSIZE_FORMAT " bytes but cuDNN's weight space for this network "
                   "has %" G_GSIZE_FORMAT, r->opname, d, r->kind == KIND_BWD_WEIGHTS ? "dw" : "w", wbytes,
                   plan->weight_bytes);
      return FALSE;
    }

  /* the backward passes read what a training forward pass left */
  if (r->kind == KIND_BWD_DATA || r->kind == KIND_BWD_WEIGHTS)
    {
      g_autoptr(GBytes) want = token_new (r, r->kind == KIND_BWD_DATA ? 1 : 2);
      GBytes *have = atomr_cudnn_actor_get_reserve_owner_internal (self);

      if (have == NULL || !g_bytes_equal (have, want))
        {
          g_autofree gchar *d = describe (&r->key);
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s (%s): the actor's reserve space does not hold %s; run %s on this actor "
                       "with the same network and the same y and hx views first", r->opname, d,
                       r->kind == KIND_BWD_DATA ? "this request's training forward pass"
                                                : "this request's forward pass and backward data pass",
                       r->kind == KIND_BWD_DATA ? "rnn_forward (training)"
                                                : "rnn_forward (training), then rnn_backward_data,");
          return FALSE;
        }
    }

  seq_bytes = ((gsize) r->key.batch * sizeof (int32_t) + 255) / 256 * 256;
  ws_size = r->kind == KIND_FWD_INFERENCE ? plan->ws_inference : plan->ws_training;
  if (!atomr_cudnn_actor_reserve_workspace (self, stream, seq_bytes + ws_size, &ws_ptr, error))
    return FALSE;
  ws = (CUdeviceptr) (uintptr_t) ws_ptr;
  /* every sequence has the full length */
  if (!atomr_cuda_check (ATOMR_CU->cuMemsetD32Async (ws, (unsigned int) r->key.seq, (size_t) r->key.batch,
                                                     stream),
                         "cuMemsetD32Async", error))
    return FALSE;
  dev_lengths = (const int32_t *) (uintptr_t) ws;
  ws_ptr = (void *) (uintptr_t) (ws + seq_bytes);   /* cuDNN's part */
  if (r->kind != KIND_FWD_INFERENCE &&
      !atomr_cudnn_actor_reserve_space_internal (self, stream, plan->reserve, &reserve, error))
    return FALSE;

  switch (r->kind)
    {
    case KIND_FWD_INFERENCE:
    case KIND_FWD_TRAINING:
      call = "cudnnRNNForward";
      st = cudnnRNNForward (h, plan->rnn,
                            r->kind == KIND_FWD_TRAINING ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                            dev_lengths, plan->xd, PTR (R_X), plan->yd, PTR (R_Y), plan->hd, PTR (R_HX),
                            PTR (R_HY), plan->hd, PTR (R_CX), PTR (R_CY), plan->weight_bytes, PTR (R_W),
                            ws_size, ws_ptr, r->kind == KIND_FWD_TRAINING ? plan->reserve : 0,
                            r->kind == KIND_FWD_TRAINING ? (void *) (uintptr_t) reserve : NULL);
      break;
    case KIND_BWD_DATA:
      call = "cudnnRNNBackwardData_v8";
      st = cudnnRNNBackwardData_v8 (h, plan->rnn, dev_lengths, plan->yd, PTR (R_Y), PTR (R_DY), plan->xd,
                                    PTR (R_DX), plan->hd, PTR (R_HX), PTR (R_DHY), PTR (R_DHX), plan->hd,
                                    PTR (R_CX), PTR (R_DCY), PTR (R_DCX), plan->weight_bytes, PTR (R_W),
                                    ws_size, ws_ptr, plan->reserve, (void *) (uintptr_t) reserve);
      break;
    default:
      /* cuDNN 9 supports only CUDNN_WGRAD_MODE_ADD here: overwriting is
       * zeroing (stream-ordered; dw is contiguous) and adding */
      if (!r->accumulate &&
          !atomr_cuda_check (ATOMR_CU->cuMemsetD8Async (atomr_tensor_get_ptr (r->t[R_W]), 0, wbytes, stream),
                             "cuMemsetD8Async", error))
        return FALSE;
      call = "cudnnRNNBackwardWeights_v8";
      st = cudnnRNNBackwardWeights_v8 (h, plan->rnn, CUDNN_WGRAD_MODE_ADD,
                                       dev_lengths, plan->xd, PTR (R_X), plan->hd, PTR (R_HX), plan->yd,
                                       PTR (R_Y), plan->weight_bytes, PTR (R_W), ws_size, ws_ptr,
                                       plan->reserve, (void *) (uintptr_t) reserve);
      break;
    }
  if (st != CUDNN_STATUS_SUCCESS)
    {
      g_autofree gchar *d = describe (&r->key);
      g_autofree gchar *what = g_strdup_printf ("%s (%s)", call, d);
      /* the reserve space may be half written */
      atomr_cudnn_actor_set_reserve_owner_internal (self, NULL);
      return cudnn_ok (st, what, r->opname, error);
    }
  if (r->kind == KIND_FWD_TRAINING || r->kind == KIND_BWD_DATA)
    {
      g_autoptr(GBytes) owner = token_new (r, r->kind == KIND_FWD_TRAINING ? 1 : 2);
      atomr_cudnn_actor_set_reserve_owner_internal (self, owner);
    }
  return TRUE;
}

#undef PTR

/* ------------------------------------------------------------------ */
/* Validation (caller's thread)                                         */

#define FAIL(...) (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)

static void
rnn_request_clear (gpointer data)
{
  RnnRequest *r = data;

  for (guint i = 0; i < N_R; i++)
    g_clear_object (&r->t[i]);
  g_clear_pointer (&r->key_bytes, g_bytes_unref);
}

static gboolean
check_common (AtomrCudnnActor *self,
              RnnRequest      *r,
              Slot             slot,
              AtomrTensor     *t,
              guint            n_dims,
              GError         **error)
{
  const gchar *name = slot_names[slot];
  AtomrDtype dtype;
  guint n;

  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), name, error))
    return FALSE;
  dtype = atomr_tensor_get_dtype (t);
  if (dtype != ATOMR_DTYPE_F32 && dtype != ATOMR_DTYPE_F16 && dtype != ATOMR_DTYPE_BF16 &&
      dtype != ATOMR_DTYPE_F64)
    return FAIL ("%s: %s has dtype %s (takes f32, f16, bf16 or f64)", r->opname, name,
                 atomr_dtype_get_name (dtype));
  if (r->key.dtype < 0)
    r->key.dtype = dtype;
  else if ((gint) dtype != r->key.dtype)
    return FAIL ("%s: %s has dtype %s, the other operands %s", r->opname, name, atomr_dtype_get_name (dtype),
                 atomr_dtype_get_name (r->key.dtype));
  atomr_tensor_get_shape (t, &n);
  if (n_dims && n != n_dims)
    return FAIL ("%s: %s has %u dimensions (takes %u)", r->opname, name, n, n_dims);
  return TRUE;
}

/* A sequence: time × batch × @features, stored time-major packed or
 * batch-major (the first sequence view decides; the others follow). */
static gboolean
check_sequence (AtomrCudnnActor *self,
                RnnRequest      *r,
                Slot             slot,
                AtomrTensor     *t,
                gint64           features,
                gboolean         first,
                GError         **error)
{
  const gchar *name = slot_names[slot];
  const gint64 *shape, *st;
  gboolean time_major, batch_major;

  if (t == NULL)
    return FAIL ("%s: %s is NULL", r->opname, name);
  if (!check_common (self, r, slot, t, 3, error))
    return FALSE;
  shape = atomr_tensor_get_shape (t, NULL);
  st = atomr_tensor_get_strides (t, NULL);
  if (first)
    {
      r->key.seq = shape[0];
      r->key.batch = shape[1];
      if (shape[0] > G_MAXINT32 || shape[1] > G_MAXINT32)
        return FAIL ("%s: %s is %" G_GINT64_FORMAT " steps × batch %" G_GINT64_FORMAT " (cuDNN takes up to %d)",
                     r->opname, name, shape[0], shape[1], G_MAXINT32);
    }
  if (shape[0] != r->key.seq || shape[1] != r->key.batch || shape[2] != features)
    return FAIL ("%s: %s is %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " but must be %"
                 G_GINT64_FORMAT "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " (steps × batch × features)",
                 r->opname, name, shape[0], shape[1], shape[2], r->key.seq, r->key.batch, features);
  time_major = (shape[2] == 1 || st[2] == 1) && (shape[1] == 1 || st[1] == shape[2]) &&
               (shape[0] == 1 || st[0] == shape[1] * shape[2]);
  batch_major = (shape[2] == 1 || st[2] == 1) && (shape[0] == 1 || st[0] == shape[2]) &&
                (shape[1] == 1 || st[1] == shape[0] * shape[2]);
  if (!time_major && !batch_major)
    return FAIL ("%s: %s has strides (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): "
                 "cuDNN takes packed time-major (steps × batch × features) storage or batch-major storage "
                 "viewed as steps × batch × features", r->opname, name, st[0], st[1], st[2]);
  if (first)
    r->key.batch_major = !time_major;
  else if (r->key.batch_major ? !batch_major : !time_major)
    return FAIL ("%s: %s is stored %s but the first sequence %s", r->opname, name,
                 time_major ? "time-major" : "batch-major", r->key.batch_major ? "batch-major" : "time-major");
  r->t[slot] = g_object_ref (t);
  return TRUE;
}

/* A hidden or cell state: layers·directions × batch × hidden, packed. */
static gboolean
check_state (AtomrCudnnActor *self,
             RnnRequest      *r,
             Slot             slot,
             AtomrTensor     *t,
             GError         **error)
{
  const gchar *name = slot_names[slot];
  gint64 want[3] = { r->key.layers * (r->key.bidirectional ? 2 : 1), r->key.batch, r->key.hidden };

  if (t == NULL)
    return TRUE;
  if ((slot == R_CX || slot == R_CY || slot == R_DCY || slot == R_DCX) && r->key.mode != ATOMR_RNN_LSTM)
    return FAIL ("%s: %s is given but only an LSTM has a cell state", r->opname, name);
  if (!check_common (self, r, slot, t, 3, error))
    return FALSE;
  if (memcmp (atomr_tensor_get_shape (t, NULL), want, sizeof want) != 0)
    {
      const gint64 *s = atomr_tensor_get_shape (t, NULL);
      return FAIL ("%s: %s is %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " but must be %"
                   G_GINT64_FORMAT "×%" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " (layers·directions × batch × "
                   "hidden)", r->opname, name, s[0], s[1], s[2], want[0], want[1], want[2]);
    }
  if (!atomr_tensor_is_contiguous (t))
    return FAIL ("%s: %s is not contiguous (cuDNN takes packed states)", r->opname, name);
  r->t[slot] = g_object_ref (t);
  return TRUE;
}

static gboolean
check_weights (AtomrCudnnActor *self,
               RnnRequest      *r,
               AtomrRnn        *rnn,
               const gchar     *name,
               AtomrTensor     *t,
               GError         **error)
{
  guint64 want = atomr_rnn_get_n_weights (rnn);

  if (t == NULL)
    return FAIL ("%s: %s is NULL", r->opname, name);
  if (!check_common (self, r, R_W, t, 0, error))
    return FALSE;
  if (!atomr_tensor_is_contiguous (t))
    return FAIL ("%s: %s is not contiguous (the weight space is one packed block)", r->opname, name);
  if (atomr_tensor_get_n_elements (t) != want)
    return FAIL ("%s: %s has %" G_GUINT64_FORMAT " elements but this network has %" G_GUINT64_FORMAT
                 " weights", r->opname, name, atomr_tensor_get_n_elements (t), want);
  r->t[R_W] = g_object_ref (t);
  return TRUE;
}

static RnnRequest *
request_new (AtomrOp     *op,
             const gchar *opname,
             Kind         kind,
             AtomrRnn    *rnn,
             GError     **error)
{
  RnnRequest *r = atomr_op_alloc_data (op, sizeof (RnnRequest), rnn_request_clear);

  memset (&r->key, 0, sizeof r->key);
  r->opname = opname;
  r->kind = kind;
  r->key.dtype = -1;
  if (rnn == NULL || !ATOMR_IS_RNN (rnn))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "%s: rnn is not an AtomrRnn", opname);
      return NULL;
    }
  r->key.mode = rnn->mode;
  r->key.bidirectional = rnn->bidirectional ? 1 : 0;
  r->key.input = rnn->input_size;
  r->key.hidden = rnn->hidden_size;
  r->key.layers = rnn->n_layers;
  return r;
}

static void
submit (AtomrOp    *op,
        RnnRequest *r,
        const Slot *outputs,
        guint       n_outputs,
        gboolean    accumulate)
{
  AtomrOperand outs[4], ins[N_R];
  guint n_outs = 0, n_ins = 0;
  GError *error = NULL;

  for (guint i = 0; i < N_R; i++)
    {
      gboolean is_out = FALSE;
      if (r->t[i] == NULL)
        continue;
      for (guint j = 0; j < n_outputs; j++)
        is_out |= outputs[j] == (Slot) i;
      if (is_out)
        outs[n_outs++] = ATOMR_OPERAND_TENSOR (slot_names[i], r->t[i]);
      else
        ins[n_ins++] = ATOMR_OPERAND_TENSOR (slot_names[i], r->t[i]);
    }
  if (!atomr_check_no_alias (r->opname, outs, n_outs, ins, n_ins, &error))
    return atomr_op_fail (op, error);
  r->key_bytes = g_bytes_new (&r->key, sizeof r->key);
  for (guint i = 0; i < n_ins; i++)
    atomr_op_read_tensor (op, ins[i].tensor);
  for (guint i = 0; i < n_outs; i++)
    {
      if (accumulate)
        atomr_op_read_tensor (op, outs[i].tensor);
      atomr_op_write_tensor (op, outs[i].tensor);
    }
  atomr_op_set_enqueue (op, rnn_enqueue);
  atomr_op_submit (op);
}

/* ------------------------------------------------------------------ */
/* Public API                                                           */

/**
 * atomr_cudnn_actor_rnn_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @rnn: the network
 * @training: keep what the backward passes need in the actor's reserve
 *   space (%FALSE: inference)
 * @x: the input sequences, steps × batch × input size
 * @hx: (nullable): the initial hidden state, layers·directions × batch ×
 *   hidden size (%NULL: zeros)
 * @cx: (nullable): the initial cell state of an LSTM, shaped like @hx
 *   (%NULL: zeros)
 * @w: the weights: [method@Atomr.Rnn.get_n_weights] elements in cuDNN's
 *   weight space layout, contiguous
 * @y: the outputs, steps × batch × (directions · hidden size)
 * @hy: (nullable): where to write the final hidden state
 * @cy: (nullable): where to write the final cell state of an LSTM
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * Runs the network over the sequences (trace name `cudnn · rnn-fwd`;
 * cudnnRNNForward).  Sequence views are packed time-major storage, or
 * batch-major storage (batch × steps × features) viewed as steps × batch ×
 * features ([method@Atomr.Tensor.permute]); all of one call are stored
 * the same way.  All operands have one dtype (f32, f16, bf16 or f64;
 * halves use tensor cores with f32 arithmetic, f32 is computed in full
 * f32 precision).  A training pass leaves
 * its intermediate results in the actor's reserve space for
 * [method@Atomr.CudnnActor.rnn_backward_data_async].
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_rnn_forward_async (AtomrCudnnActor     *self,
                                     AtomrRnn            *rnn,
                                     gboolean             training,
                                     AtomrTensor         *x,
                                     AtomrTensor         *hx,
                                     AtomrTensor         *cx,
                                     AtomrTensor         *w,
                                     AtomrTensor         *y,
                                     AtomrTensor         *hy,
                                     AtomrTensor         *cy,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  AtomrOp *op;
  RnnRequest *r;
  GError *error = NULL;
  static const Slot outs[] = { R_Y, R_HY, R_CY };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, "rnn-fwd", atomr_cudnn_actor_rnn_forward_async, cancellable, callback, user_data);
  r = request_new (op, "rnn-fwd", training ? KIND_FWD_TRAINING : KIND_FWD_INFERENCE, rnn, &error);
  if (r == NULL ||
      !check_sequence (self, r, R_X, x, r->key.input, TRUE, &error) ||
      !check_sequence (self, r, R_Y, y, r->key.hidden * (r->key.bidirectional ? 2 : 1), FALSE, &error) ||
      !check_state (self, r, R_HX, hx, &error) ||
      !check_state (self, r, R_CX, cx, &error) ||
      !check_state (self, r, R_HY, hy, &error) ||
      !check_state (self, r, R_CY, cy, &error) ||
      !check_weights (self, r, rnn, "w", w, &error))
    return atomr_op_fail (op, error);
  submit (op, r, outs, G_N_ELEMENTS (outs), FALSE);
}

/**
 * atomr_cudnn_actor_rnn_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.rnn_forward_async].
 *
 * Returns: %TRUE when the outputs were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_rnn_forward_finish (AtomrCudnnActor  *self,
                                      GAsyncResult     *result,
                                      GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_rnn_forward_async, error);
}

/**
 * atomr_cudnn_actor_rnn_backward_data_async:
 * @self: an [class@Atomr.CudnnActor]
 * @rnn: the network of the forward pass
 * @y: the outputs of the training forward pass (the same view)
 * @dy: the gradient of @y, shaped and stored like it
 * @dhy: (nullable): the gradient of the final hidden state (%NULL: zeros)
 * @dcy: (nullable): the gradient of the final cell state of an LSTM
 * @hx: (nullable): the initial hidden state of the forward pass (the same
 *   view, or %NULL when it was %NULL)
 * @cx: (nullable): the initial cell state of the forward pass
 * @w: the weights of the forward pass
 * @dx: the gradient of the input, steps × batch × input size
 * @dhx: (nullable): where to write the gradient of the initial hidden state
 * @dcx: (nullable): where to write the gradient of the initial cell state
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dx is computed
 * @user_data: data for @callback
 *
 * The gradients with respect to the inputs and initial states (trace name
 * `cudnn · rnn-bwd-data`; cudnnRNNBackwardData_v8), from what the last
 * training forward pass of this actor left in its reserve space: that pass
 * must have been this network with these shapes and the same @y and @hx
 * views, else the request fails with %ATOMR_ERROR_INVALID_ARGUMENT
 * (checked in program order on the actor's thread).  Call it before
 * [method@Atomr.CudnnActor.rnn_backward_weights_async], as cuDNN requires.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_rnn_backward_data_async (AtomrCudnnActor     *self,
                                           AtomrRnn            *rnn,
                                           AtomrTensor         *y,
                                           AtomrTensor         *dy,
                                           AtomrTensor         *dhy,
                                           AtomrTensor         *dcy,
                                           AtomrTensor         *hx,
                                           AtomrTensor         *cx,
                                           AtomrTensor         *w,
                                           AtomrTensor         *dx,
                                           AtomrTensor         *dhx,
                                           AtomrTensor         *dcx,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data)
{
  AtomrOp *op;
  RnnRequest *r;
  GError *error = NULL;
  static const Slot outs[] = { R_DX, R_DHX, R_DCX };
  gint64 out_features;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, "rnn-bwd-data", atomr_cudnn_actor_rnn_backward_data_async, cancellable, callback,
                     user_data);
  r = request_new (op, "rnn-bwd-data", KIND_BWD_DATA, rnn, &error);
  if (r == NULL)
    return atomr_op_fail (op, error);
  out_features = r->key.hidden * (r->key.bidirectional ? 2 : 1);
  if (!check_sequence (self, r, R_Y, y, out_features, TRUE, &error) ||
      !check_sequence (self, r, R_DY, dy, out_features, FALSE, &error) ||
      !check_sequence (self, r, R_DX, dx, r->key.input, FALSE, &error) ||
      !check_state (self, r, R_DHY, dhy, &error) ||
      !check_state (self, r, R_DCY, dcy, &error) ||
      !check_state (self, r, R_HX, hx, &error) ||
      !check_state (self, r, R_CX, cx, &error) ||
      !check_state (self, r, R_DHX, dhx, &error) ||
      !check_state (self, r, R_DCX, dcx, &error) ||
      !check_weights (self, r, rnn, "w", w, &error))
    return atomr_op_fail (op, error);
  submit (op, r, outs, G_N_ELEMENTS (outs), FALSE);
}

/**
 * atomr_cudnn_actor_rnn_backward_data_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.rnn_backward_data_async].
 *
 * Returns: %TRUE when the gradients were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_rnn_backward_data_finish (AtomrCudnnActor  *self,
                                            GAsyncResult     *result,
                                            GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_rnn_backward_data_async, error);
}

/**
 * atomr_cudnn_actor_rnn_backward_weights_async:
 * @self: an [class@Atomr.CudnnActor]
 * @rnn: the network of the forward pass
 * @accumulate: add the gradient to @dw's contents (%FALSE: overwrite them)
 * @x: the input of the forward pass
 * @hx: (nullable): the initial hidden state of the forward pass (the same
 *   view, or %NULL when it was %NULL)
 * @y: the outputs of the forward pass (the same view)
 * @dw: the gradient of the weights, laid out like them
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dw is computed
 * @user_data: data for @callback
 *
 * The gradient with respect to the weights (trace name
 * `cudnn · rnn-bwd-weights`; cudnnRNNBackwardWeights_v8), after
 * [method@Atomr.CudnnActor.rnn_backward_data_async] of the same forward
 * pass on this actor (%ATOMR_ERROR_INVALID_ARGUMENT otherwise).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_rnn_backward_weights_async (AtomrCudnnActor     *self,
                                              AtomrRnn            *rnn,
                                              gboolean             accumulate,
                                              AtomrTensor         *x,
                                              AtomrTensor         *hx,
                                              AtomrTensor         *y,
                                              AtomrTensor         *dw,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data)
{
  AtomrOp *op;
  RnnRequest *r;
  GError *error = NULL;
  static const Slot outs[] = { R_W };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, "rnn-bwd-weights", atomr_cudnn_actor_rnn_backward_weights_async, cancellable,
                     callback, user_data);
  r = request_new (op, "rnn-bwd-weights", KIND_BWD_WEIGHTS, rnn, &error);
  if (r == NULL ||
      !check_sequence (self, r, R_X, x, r->key.input, TRUE, &error) ||
      !check_sequence (self, r, R_Y, y, r->key.hidden * (r->key.bidirectional ? 2 : 1), FALSE, &error) ||
      !check_state (self, r, R_HX, hx, &error) ||
      !check_weights (self, r, rnn, "dw", dw, &error))
    return atomr_op_fail (op, error);
  r->accumulate = accumulate;
  submit (op, r, outs, G_N_ELEMENTS (outs), accumulate);
}

/**
 * atomr_cudnn_actor_rnn_backward_weights_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.rnn_backward_weights_async].
 *
 * Returns: %TRUE when the gradient was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_rnn_backward_weights_finish (AtomrCudnnActor  *self,
                                               GAsyncResult     *result,
                                               GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_rnn_backward_weights_async, error);
}
