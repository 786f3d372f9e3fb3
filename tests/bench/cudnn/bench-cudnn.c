/* bench-cudnn.c — ResNet-50 3×3 convolution through AtomrCudnnActor
 * against raw cuDNN, and layer normalization against a device copy
 *
 * The layer: N = 32, C = K = 256, 56 × 56, 3 × 3 filter, padding 1,
 * stride 1, NHWC bf16 (KRSC filter), f32 accumulation.  Forward, backward
 * data and backward filter, each as a batch of calls pipelined (all
 * submitted before waiting) and timed on the host from the first submit to
 * the last completion; best of REPS, raw and actor interleaved.  The batch
 * size comes from the warm-up: as many calls as take about BATCH_S seconds
 * (3 to MAX_ITERS), so slow backward algorithms keep the whole run under a
 * minute.  The raw side calls
 * the same cuDNN entry points (through the same dlopen() table) on its own
 * non-blocking stream, with the algorithm chosen the way the actor chooses
 * it (cuDNN's heuristics, or timing with --autotune) and a workspace of
 * the size that algorithm needs.
 *
 * Each timed batch starts after COOL_S seconds of an idle GPU (see
 * cool_down()), on every side, and peer_torch.py does the same.
 *
 * The actor runs each pass twice: through its cached backend execution
 * plans (the default) and through the legacy entry points
 * (AtomrCudnnActor:legacy-convolution, the path the raw side takes), so one
 * run shows what the backend path gains over the legacy calls' per-call
 * host cost.  Prints TFLOP/s and µs per call for the three and actor/raw
 * throughput ratios (≥ 0.95 wanted), and which path each actor batch
 * really took (a request the backend refuses runs the legacy call).
 *
 * The norm rows: layer normalization of a 16384 × 2048 bf16 activation
 * with γ and β (forward training, backward with dγ and dβ), and RMS
 * normalization of the same activation with γ only (backward with dγ).  There is no
 * raw cuDNN call for it (the actor runs its own generated kernel), so the
 * baseline is the device copy of the same bytes (cuMemcpyDtoDAsync): the
 * ratio is the kernel's effective bandwidth (the bytes it must move at
 * least: x and y forward; x, dy and dx backward) over the copy's.
 *
 * --json FILE writes the figures for tests/bench/cudnn/peer_torch.py, which
 * times the same rows through PyTorch and prints torch/atomr ratios.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-cudnn-table-private.h"

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"

#define REPS      3
#define MAX_ITERS 100
#define BATCH_S   0.25

/* Every timed batch of convolutions starts after COOL_S seconds of an idle
 * GPU, the same for every side.  The convolutions draw the H200 to its
 * power cap: on a GPU that has been busy for about half a second the same
 * calls take 10 % longer (the same raw call measured 137.6 us a call in
 * the first two batches after a pause and 152-154 us in the eight that
 * followed them, whatever memory or stream each used: experiment rows of
 * 2026-11-29, ten variants interleaved back to back).  With this pause
 * before each batch the same ten measured 136.7-139.4 us.  Without it,
 * whichever side ran first after a pause won by that much. */
#define COOL_S 0.75

static void
cool_down (void)
{
  g_usleep ((gulong) (COOL_S * G_USEC_PER_SEC));
}

/* Calls per timed batch, from the seconds @warm calls took. */
static guint
batch_iters (gdouble seconds, guint warm)
{
  gdouble per_call = seconds / warm;

  return (guint) CLAMP (BATCH_S / MAX (per_call, 1e-7), 3, MAX_ITERS);
}

enum { FWD, BWD_DATA, BWD_FILTER, N_PASSES, FUSED = N_PASSES };
static const gchar *const pass_names[N_PASSES + 1] = { "conv-fwd", "conv-bwd-data", "conv-bwd-filter",
                                                       "conv-bias-relu" };

typedef struct {
  AtomrCudnnActor  *actor;
  AtomrConvolution *conv;
  AtomrTensor      *x, *w, *y, *bias;
  guint             pass, iters, done, failed;
} Pipe;

static void
on_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Pipe *p = user_data;
  g_autoptr(GError) error = NULL;
  gboolean ok;

  ok = p->pass == FWD ? atomr_cudnn_actor_convolution_forward_finish (p->actor, result, &error)
     : p->pass == BWD_DATA ? atomr_cudnn_actor_convolution_backward_data_finish (p->actor, result, &error)
     : p->pass == FUSED ? atomr_cudnn_actor_convolution_bias_activation_forward_finish (p->actor, result, &error)
     : atomr_cudnn_actor_convolution_backward_filter_finish (p->actor, result, &error);
  if (!ok && p->failed++ == 0)
    g_printerr ("%s failed: %s\n", pass_names[p->pass], error->message);
  p->done++;
}

/* x, w, y play dx, dw, dy in the backward passes (same shapes). */
static gdouble
time_actor (Pipe *p, guint pass, guint iters)
{
  gdouble t0 = g_get_monotonic_time ();

  p->pass = pass;
  p->iters = iters;
  p->done = 0;
  for (guint i = 0; i < iters; i++)
    switch (pass)
      {
      case FWD:
        atomr_cudnn_actor_convolution_forward_async (p->actor, p->conv, 1.0, p->x, p->w, 0.0, p->y,
                                                     NULL, on_done, p);
        break;
      case BWD_DATA:
        atomr_cudnn_actor_convolution_backward_data_async (p->actor, p->conv, 1.0, p->w, p->y, 0.0,
                                                           p->x, NULL, on_done, p);
        break;
      case FUSED:
        atomr_cudnn_actor_convolution_bias_activation_forward_async (p->actor, p->conv, ATOMR_ACTIVATION_RELU,
                                                                     0.0, 1.0, p->x, p->w, p->bias, 0.0, NULL,
                                                                     p->y, NULL, on_done, p);
        break;
      default:
        atomr_cudnn_actor_convolution_backward_filter_async (p->actor, p->conv, 1.0, p->x, p->y, 0.0,
                                                             p->w, NULL, on_done, p);
        break;
      }
  while (p->done < iters)
    g_main_context_iteration (NULL, TRUE);
  if (p->failed)
    exit (1);
  return (g_get_monotonic_time () - t0) / 1e6;
}

typedef struct {
  cudnnHandle_t                handle;
  CUstream                     stream;
  cudnnTensorDescriptor_t      xd, yd;
  cudnnFilterDescriptor_t      wd;
  cudnnConvolutionDescriptor_t cd[N_PASSES];   /* one per pass: math types differ */
  gint                         algo[N_PASSES];
  gsize                        ws_size[N_PASSES];
  CUdeviceptr                  ws;
  gsize                        ws_max;
} Raw;

#define CK(call) G_STMT_START { cudnnStatus_t st_ = (call); \
    if (st_ != CUDNN_STATUS_SUCCESS) g_error ("%s: %s", #call, cudnnGetErrorString (st_)); } G_STMT_END

static void
raw_setup (Raw *raw, AtomrDevice *device, gint n, gint c, gint k, gint hw, gboolean autotune,
           gsize limit)
{
  int xdims[4] = { n, c, hw, hw }, xstr[4] = { hw * hw * c, 1, hw * c, c };
  int ydims[4] = { n, k, hw, hw }, ystr[4] = { hw * hw * k, 1, hw * k, k };
  int wdims[4] = { k, c, 3, 3 };
  int pad[2] = { 1, 1 }, str[2] = { 1, 1 }, dil[2] = { 1, 1 };

  g_assert_true (atomr_device_enter (device, NULL));
  g_assert_cmpint (ATOMR_CU->cuStreamCreate (&raw->stream, CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
  g_assert_true (atomr_cudnn_load (NULL));
  CK (cudnnCreate (&raw->handle));
  CK (cudnnSetStream (raw->handle, (cudaStream_t) raw->stream));
  CK (cudnnCreateTensorDescriptor (&raw->xd));
  CK (cudnnSetTensorNdDescriptor (raw->xd, CUDNN_DATA_BFLOAT16, 4, xdims, xstr));
  CK (cudnnCreateTensorDescriptor (&raw->yd));
  CK (cudnnSetTensorNdDescriptor (raw->yd, CUDNN_DATA_BFLOAT16, 4, ydims, ystr));
  CK (cudnnCreateFilterDescriptor (&raw->wd));
  CK (cudnnSetFilterNdDescriptor (raw->wd, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, 4, wdims));
  for (guint p = 0; p < N_PASSES; p++)
    {
      int got = 0;
      cudnnMathType_t math = CUDNN_DEFAULT_MATH;
      CK (cudnnCreateConvolutionDescriptor (&raw->cd[p]));
      CK (cudnnSetConvolutionNdDescriptor (raw->cd[p], 2, pad, str, dil, CUDNN_CROSS_CORRELATION,
                                           CUDNN_DATA_FLOAT));
      /* bf16 operands: tensor cores, as a raw cuDNN user (and PyTorch)
       * asks for them before querying the heuristics */
      CK (cudnnSetConvolutionMathType (raw->cd[p], CUDNN_TENSOR_OP_MATH));
      raw->algo[p] = -1;
      /* the first candidate that works within the limit, as the actor does */
      if (p == FWD)
        {
          cudnnConvolutionFwdAlgoPerf_t perf[16];
          if (autotune)
            CK (cudnnFindConvolutionForwardAlgorithm (raw->handle, raw->xd, raw->wd, raw->cd[p], raw->yd, 16, &got, perf));
          else
            CK (cudnnGetConvolutionForwardAlgorithm_v7 (raw->handle, raw->xd, raw->wd, raw->cd[p], raw->yd, 16, &got, perf));
          for (int i = 0; i < got && raw->algo[p] < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit)
              raw->algo[p] = perf[i].algo, raw->ws_size[p] = perf[i].memory, math = perf[i].mathType;
        }
      else if (p == BWD_DATA)
        {
          cudnnConvolutionBwdDataAlgoPerf_t perf[16];
          if (autotune)
            CK (cudnnFindConvolutionBackwardDataAlgorithm (raw->handle, raw->wd, raw->yd, raw->cd[p], raw->xd, 16, &got, perf));
          else
            CK (cudnnGetConvolutionBackwardDataAlgorithm_v7 (raw->handle, raw->wd, raw->yd, raw->cd[p], raw->xd, 16, &got, perf));
          for (int i = 0; i < got && raw->algo[p] < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit)
              raw->algo[p] = perf[i].algo, raw->ws_size[p] = perf[i].memory, math = perf[i].mathType;
        }
      else
        {
          cudnnConvolutionBwdFilterAlgoPerf_t perf[16];
          if (autotune)
            CK (cudnnFindConvolutionBackwardFilterAlgorithm (raw->handle, raw->xd, raw->yd, raw->cd[p], raw->wd, 16, &got, perf));
          else
            CK (cudnnGetConvolutionBackwardFilterAlgorithm_v7 (raw->handle, raw->xd, raw->yd, raw->cd[p], raw->wd, 16, &got, perf));
          for (int i = 0; i < got && raw->algo[p] < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit)
              raw->algo[p] = perf[i].algo, raw->ws_size[p] = perf[i].memory, math = perf[i].mathType;
        }
      if (raw->algo[p] < 0)
        g_error ("raw: no algorithm for %s", pass_names[p]);
      CK (cudnnSetConvolutionMathType (raw->cd[p], math));
      g_print ("# raw %s: algorithm %d, math type %d, %d candidates\n", pass_names[p], raw->algo[p],
               (int) math, got);
      {
        gsize size = 0;
        if (p == FWD)
          CK (cudnnGetConvolutionForwardWorkspaceSize (raw->handle, raw->xd, raw->wd, raw->cd[p], raw->yd,
                                                       raw->algo[p], &size));
        else if (p == BWD_DATA)
          CK (cudnnGetConvolutionBackwardDataWorkspaceSize (raw->handle, raw->wd, raw->yd, raw->cd[p],
                                                            raw->xd, raw->algo[p], &size));
        else
          CK (cudnnGetConvolutionBackwardFilterWorkspaceSize (raw->handle, raw->xd, raw->yd, raw->cd[p],
                                                              raw->wd, raw->algo[p], &size));
        raw->ws_size[p] = MAX (raw->ws_size[p], size);
      }
      raw->ws_max = MAX (raw->ws_max, raw->ws_size[p]);
    }
  if (raw->ws_max)
    g_assert_cmpint (ATOMR_CU->cuMemAlloc (&raw->ws, raw->ws_max), ==, CUDA_SUCCESS);
  atomr_device_leave (device);
}

static gdouble
time_raw (Raw *raw, AtomrDevice *device, guint pass, guint iters, AtomrTensor *x, AtomrTensor *w,
          AtomrTensor *y)
{
  const float one = 1, zero = 0;
  void *px = (void *) (uintptr_t) atomr_tensor_get_device_pointer (x);
  void *pw = (void *) (uintptr_t) atomr_tensor_get_device_pointer (w);
  void *py = (void *) (uintptr_t) atomr_tensor_get_device_pointer (y);
  void *ws = (void *) (uintptr_t) raw->ws;
  gdouble t0;

  g_assert_true (atomr_device_enter (device, NULL));
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < iters; i++)
    switch (pass)
      {
      case FWD:
        CK (cudnnConvolutionForward (raw->handle, &one, raw->xd, px, raw->wd, pw, raw->cd[FWD],
                                     raw->algo[FWD], ws, raw->ws_size[FWD], &zero, raw->yd, py));
        break;
      case BWD_DATA:
        CK (cudnnConvolutionBackwardData (raw->handle, &one, raw->wd, pw, raw->yd, py, raw->cd[BWD_DATA],
                                          raw->algo[BWD_DATA], ws, raw->ws_size[BWD_DATA], &zero,
                                          raw->xd, px));
        break;
      default:
        CK (cudnnConvolutionBackwardFilter (raw->handle, &one, raw->xd, px, raw->yd, py,
                                            raw->cd[BWD_FILTER], raw->algo[BWD_FILTER], ws,
                                            raw->ws_size[BWD_FILTER], &zero, raw->wd, pw));
        break;
      }
  if (ATOMR_CU->cuStreamSynchronize (raw->stream) != CUDA_SUCCESS)
    g_error ("cuStreamSynchronize failed");
  atomr_device_leave (device);
  return (g_get_monotonic_time () - t0) / 1e6;
}

/* An N × C × H × W view of NHWC storage, filled with @value. */
static AtomrTensor *
nhwc (AtomrDevice *device, gint64 n, gint64 c, gint64 h, gint64 w, gdouble value)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { n, h, w, c };
  const guint perm[4] = { 0, 3, 1, 2 };
  g_autoptr(AtomrTensor) storage = atomr_tensor_empty (device, ATOMR_DTYPE_BF16, shape, 4, &error);
  AtomrTensor *t;

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (storage), value, NULL, &error));
  t = atomr_tensor_permute (storage, perm, 4, &error);
  g_assert_no_error (error);
  return t;
}

/* ------------------------------------------------------------------ */
/* Layer norm                                                           */

enum { NORM_FWD, NORM_BWD, RMS_FWD, RMS_BWD, N_NORM };
static const gchar *const norm_names[N_NORM] = { "layer-norm-fwd", "layer-norm-bwd",
                                                 "rms-norm-fwd", "rms-norm-bwd" };
#define PASS_IS_FWD(pass) ((pass) == NORM_FWD || (pass) == RMS_FWD)

typedef struct {
  AtomrCudnnActor    *actor;
  AtomrNormalization *norm, *rms;
  AtomrTensor        *x, *y, *dy, *dx, *g, *b, *dg, *db, *mean, *rstd;
  guint               pass, done, failed;
} NormPipe;

static void
on_norm_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  NormPipe *p = user_data;
  g_autoptr(GError) error = NULL;
  gboolean ok;

  ok = PASS_IS_FWD (p->pass) ? atomr_cudnn_actor_normalization_forward_finish (p->actor, result, &error)
                           : atomr_cudnn_actor_normalization_backward_finish (p->actor, result, &error);
  if (!ok && p->failed++ == 0)
    g_printerr ("%s failed: %s\n", norm_names[p->pass], error->message);
  p->done++;
}

static gdouble
time_norm (NormPipe *p, guint pass, guint iters)
{
  gdouble t0 = g_get_monotonic_time ();

  p->pass = pass;
  p->done = 0;
  for (guint i = 0; i < iters; i++)
    if (pass == NORM_FWD)
      atomr_cudnn_actor_normalization_forward_async (p->actor, p->norm, p->x, p->g, p->b, p->y, p->mean,
                                                     p->rstd, NULL, on_norm_done, p);
    else if (pass == NORM_BWD)
      atomr_cudnn_actor_normalization_backward_async (p->actor, p->norm, p->x, p->dy, p->g, p->mean,
                                                      p->rstd, p->dx, p->dg, p->db, NULL, on_norm_done, p);
    /* RMS norm (LLaMA-style): γ only, no mean */
    else if (pass == RMS_FWD)
      atomr_cudnn_actor_normalization_forward_async (p->actor, p->rms, p->x, p->g, NULL, p->y, NULL,
                                                     p->rstd, NULL, on_norm_done, p);
    else
      atomr_cudnn_actor_normalization_backward_async (p->actor, p->rms, p->x, p->dy, p->g, NULL,
                                                      p->rstd, p->dx, p->dg, NULL, NULL, on_norm_done, p);
  while (p->done < iters)
    g_main_context_iteration (NULL, TRUE);
  if (p->failed)
    exit (1);
  return (g_get_monotonic_time () - t0) / 1e6;
}

/* @iters device copies of @bytes on the raw stream. */
static gdouble
time_copy (Raw *raw, AtomrDevice *device, AtomrTensor *from, AtomrTensor *to, guint64 bytes, guint iters)
{
  CUdeviceptr src = atomr_tensor_get_device_pointer (from), dst = atomr_tensor_get_device_pointer (to);
  gdouble t0;

  g_assert_true (atomr_device_enter (device, NULL));
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < iters; i++)
    if (ATOMR_CU->cuMemcpyDtoDAsync (dst, src, bytes, raw->stream) != CUDA_SUCCESS)
      g_error ("cuMemcpyDtoDAsync failed");
  if (ATOMR_CU->cuStreamSynchronize (raw->stream) != CUDA_SUCCESS)
    g_error ("cuStreamSynchronize failed");
  atomr_device_leave (device);
  return (g_get_monotonic_time () - t0) / 1e6;
}

static AtomrTensor *
filled (AtomrDevice *device, const gint64 *shape, guint n, AtomrDtype dtype, gdouble value)
{
  g_autoptr(GError) error = NULL;
  AtomrTensor *t = atomr_tensor_empty (device, dtype, shape, n, &error);

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (t), value, NULL, &error));
  g_assert_no_error (error);
  return t;
}

static void
bench_norm (AtomrCudnnActor *actor, AtomrDevice *device, Raw *raw, GString *json)
{
  const gint64 rows = 16384, h = 2048, shape[2] = { rows, h };
  const guint64 bytes = (guint64) rows * h * 2;
  NormPipe p = { 0 };
  g_autoptr(AtomrTensor) copy_src = NULL;
  g_autoptr(AtomrTensor) copy_dst = NULL;

  p.actor = actor;
  p.norm = atomr_normalization_new (ATOMR_NORM_LAYER, 1e-5);
  p.rms = atomr_normalization_new (ATOMR_NORM_RMS, 1e-5);
  p.x = filled (device, shape, 2, ATOMR_DTYPE_BF16, 0.5);
  p.y = filled (device, shape, 2, ATOMR_DTYPE_BF16, 0);
  p.dy = filled (device, shape, 2, ATOMR_DTYPE_BF16, 0.01);
  p.dx = filled (device, shape, 2, ATOMR_DTYPE_BF16, 0);
  p.g = filled (device, &h, 1, ATOMR_DTYPE_BF16, 1);
  p.b = filled (device, &h, 1, ATOMR_DTYPE_BF16, 0);
  p.dg = filled (device, &h, 1, ATOMR_DTYPE_BF16, 0);
  p.db = filled (device, &h, 1, ATOMR_DTYPE_BF16, 0);
  p.mean = filled (device, &rows, 1, ATOMR_DTYPE_F32, 0);
  p.rstd = filled (device, &rows, 1, ATOMR_DTYPE_F32, 1);
  /* the copy baseline moves as much as the largest pass (3 tensors: a
   * copy of 1.5 tensors reads and writes that much): its own buffers */
  {
    const gint64 copy_n = rows * h * 3 / 2;
    copy_src = filled (device, &copy_n, 1, ATOMR_DTYPE_BF16, 0);
    copy_dst = filled (device, &copy_n, 1, ATOMR_DTYPE_BF16, 0);
  }

  g_print ("# layer norm (gamma, beta) and RMS norm (gamma): %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " bf16; "
           "baseline: cuMemcpyDtoD of the same bytes; ratio = atomr / copy bandwidth\n", rows, h);
  g_print ("%-16s | %8s %9s | %8s %9s | %7s\n", "pass", "copy GB/s", "copy us", "atomr GB/s",
           "atomr us", "ratio");
  for (guint pass = 0; pass < N_NORM; pass++)
    {
      /* the least the pass must move: x, y forward; x, dy, dx backward */
      guint64 moved = bytes * (PASS_IS_FWD (pass) ? 2 : 3);
      gdouble best_copy = G_MAXDOUBLE, best_actor = G_MAXDOUBLE, copy_bw, actor_bw;
      guint iters = batch_iters (time_norm (&p, pass, 3), 3);

      time_copy (raw, device, copy_src, copy_dst, moved / 2, 3);
      for (guint r = 0; r < 2 * REPS; r++)
        if ((r & 1) == (r / 2 & 1))
          best_copy = MIN (best_copy, time_copy (raw, device, copy_src, copy_dst, moved / 2, iters));
        else
          best_actor = MIN (best_actor, time_norm (&p, pass, iters));
      /* a copy of moved/2 bytes moves moved bytes */
      copy_bw = moved * iters / best_copy / 1e9;
      actor_bw = moved * iters / best_actor / 1e9;
      g_print ("%-16s | %8.0f %9.1f | %8.0f %9.1f | %6.3fx\n", norm_names[pass], copy_bw,
               best_copy / iters * 1e6, actor_bw, best_actor / iters * 1e6, actor_bw / copy_bw);
      g_string_append_printf (json, ",\n  \"%s\": {\"copy_us\": %.3f, \"atomr_us\": %.3f}",
                              norm_names[pass], best_copy / iters * 1e6, best_actor / iters * 1e6);
    }
  g_object_unref (p.norm);
  g_object_unref (p.rms);
  g_object_unref (p.x); g_object_unref (p.y); g_object_unref (p.dy); g_object_unref (p.dx);
  g_object_unref (p.g); g_object_unref (p.b); g_object_unref (p.dg); g_object_unref (p.db);
  g_object_unref (p.mean); g_object_unref (p.rstd);
}

int
main (int argc, char **argv)
{
  const gint n = 32, c = 256, k = 256, hw = 56;
  const gdouble flops = 2.0 * n * k * c * 9 * hw * hw;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrCudnnActor) actor = NULL;
  g_autoptr(AtomrConvolution) conv = NULL;
  g_autoptr(AtomrTensor) x = NULL, w = NULL, y = NULL;
  g_autoptr(GString) json = g_string_new ("{\n");
  const gchar *json_path = NULL;
  gboolean autotune = FALSE, profile = FALSE;
  Raw raw = { 0 };
  Pipe pipe = { 0 };

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--json") && i + 1 < argc)
        json_path = argv[++i];
      else if (g_str_equal (argv[i], "--autotune"))
        autotune = TRUE;
      /* for a kernel profiler (ncu): a few forward calls each way, no timing */
      else if (g_str_equal (argv[i], "--profile"))
        profile = TRUE;
    }
  if (device == NULL)
    {
      g_print ("bench-cudnn: no CUDA device (%s)\n", error->message);
      return 0;
    }
  actor = atomr_cudnn_actor_new (device, &error);
  if (actor == NULL)
    {
      g_print ("bench-cudnn: no cuDNN (%s)\n", error->message);
      return 0;
    }
  atomr_cudnn_actor_set_autotune (actor, autotune);
  conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  x = nhwc (device, n, c, hw, hw, 0.01);
  w = nhwc (device, k, c, 3, 3, 0.01);
  y = nhwc (device, n, k, hw, hw, 0.01);
  raw_setup (&raw, device, n, c, k, hw, autotune, atomr_cudnn_actor_get_workspace_limit (actor));
  pipe.actor = actor;
  pipe.conv = conv;
  pipe.x = x;
  pipe.w = w;
  pipe.y = y;
  if (profile)
    {
      time_raw (&raw, device, FWD, 5, x, w, y);
      time_actor (&pipe, FWD, 5);
      atomr_cudnn_actor_set_legacy_convolution (actor, TRUE);
      time_actor (&pipe, FWD, 5);
      g_print ("bench-cudnn --profile: 5 raw, 5 actor (backend plans), 5 actor (legacy calls) forward "
               "convolutions\n");
      return 0;
    }

  g_print ("# cuDNN %zu (set ATOMR_CUDNN_LIBRARY to compare with another build, e.g. PyTorch's)\n",
           (gsize) cudnnGetVersion ());
  g_print ("# ResNet-50 3x3 conv: N=%d C=K=%d %dx%d, pad 1, NHWC bf16 (f32 accumulation), %s; "
           "algorithms by %s\n# up to %d calls pipelined (about 0.25 s a batch), best of %d; ratio = actor / raw throughput "
           "(>= 0.95 wanted)\n", n, c, hw, hw, atomr_device_get_name (device),
           autotune ? "timing (autotune)" : "cuDNN heuristics", MAX_ITERS, REPS);
  g_print ("# raw = legacy cudnnConvolution* calls; backend = the actor's default path (cached backend "
           "execution plans); legacy = the actor with legacy-convolution set\n");
  g_print ("%-16s | %8s %9s | %8s %9s %7s | %8s %9s %7s\n", "pass", "raw TF/s", "raw us",
           "bknd TF/s", "bknd us", "ratio", "lgcy TF/s", "lgcy us", "ratio");
  for (guint p = 0; p < N_PASSES; p++)
    {
      gdouble best[3] = { G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE };
      guint iters, fell_back = 0;

      /* warm up (plans of both paths, workspace, clocks), then size the
       * batch from it */
      atomr_cudnn_actor_set_legacy_convolution (actor, TRUE);
      time_actor (&pipe, p, 2);
      atomr_cudnn_actor_set_legacy_convolution (actor, FALSE);
      time_actor (&pipe, p, 2);
      time_raw (&raw, device, p, 2, x, w, y);
      iters = batch_iters (time_raw (&raw, device, p, 3, x, w, y), 3);
      /* Which side goes first rotates: a batch right after another runs
       * on a GPU the one before heated (power-capped clocks). */
      for (guint r = 0; r < 3 * REPS; r++)
        {
          guint side = (r + r / 3) % 3;

          cool_down ();

          if (side == 0)
            best[0] = MIN (best[0], time_raw (&raw, device, p, iters, x, w, y));
          else
            {
              guint legacy_before = 0, legacy_after = 0;

              atomr_cudnn_actor_set_legacy_convolution (actor, side == 2);
              atomr_cudnn_actor_get_conv_runs_internal (actor, NULL, &legacy_before, NULL);
              best[side] = MIN (best[side], time_actor (&pipe, p, iters));
              atomr_cudnn_actor_get_conv_runs_internal (actor, NULL, &legacy_after, NULL);
              if (side == 1 && legacy_after != legacy_before)
                fell_back++;
            }
        }
      atomr_cudnn_actor_set_legacy_convolution (actor, FALSE);
      g_print ("%-16s | %8.1f %9.1f | %8.1f %9.1f %6.3fx | %8.1f %9.1f %6.3fx  (%u calls)%s\n", pass_names[p],
               flops * iters / best[0] / 1e12, best[0] / iters * 1e6,
               flops * iters / best[1] / 1e12, best[1] / iters * 1e6, best[0] / best[1],
               flops * iters / best[2] / 1e12, best[2] / iters * 1e6, best[0] / best[2], iters,
               fell_back ? "  BACKEND REFUSED: the backend column ran legacy calls" : "");
      g_string_append_printf (json, "%s  \"%s\": {\"raw_us\": %.3f, \"atomr_us\": %.3f, "
                              "\"atomr_legacy_us\": %.3f}",
                              p ? ",\n" : "", pass_names[p], best[0] / iters * 1e6, best[1] / iters * 1e6,
                              best[2] / iters * 1e6);
    }
  /* The fused forward (conv + bias + ReLU) through the actor's two paths:
   * one backend operation graph, or cudnnConvolutionBiasActivationForward. */
  {
    gdouble best[2] = { G_MAXDOUBLE, G_MAXDOUBLE };
    guint iters, backend_before = 0, backend_after = 0, legacy_before = 0, legacy_after = 0;
    gint64 kk = k;

    pipe.bias = atomr_tensor_empty (device, ATOMR_DTYPE_BF16, &kk, 1, &error);
    g_assert_no_error (error);
    for (guint side = 0; side < 2; side++)
      {
        atomr_cudnn_actor_set_legacy_convolution (actor, side == 1);
        time_actor (&pipe, FUSED, 2);
      }
    atomr_cudnn_actor_get_conv_runs_internal (actor, &backend_before, &legacy_before, NULL);
    atomr_cudnn_actor_set_legacy_convolution (actor, FALSE);
    iters = batch_iters (time_actor (&pipe, FUSED, 3), 3);
    for (guint r = 0; r < 2 * REPS; r++)
      {
        guint side = (r + r / 2) % 2;

        cool_down ();
        atomr_cudnn_actor_set_legacy_convolution (actor, side == 1);
        best[side] = MIN (best[side], time_actor (&pipe, FUSED, iters));
      }
    atomr_cudnn_actor_set_legacy_convolution (actor, FALSE);
    atomr_cudnn_actor_get_conv_runs_internal (actor, &backend_after, &legacy_after, NULL);
    g_print ("%-16s | actor backend %8.1f TF/s %9.1f us | actor legacy %8.1f TF/s %9.1f us | legacy/backend "
             "time %6.3fx  (%u calls; %s)\n", pass_names[FUSED],
             flops * iters / best[0] / 1e12, best[0] / iters * 1e6, flops * iters / best[1] / 1e12,
             best[1] / iters * 1e6, best[1] / best[0], iters,
             backend_after > backend_before && legacy_after > legacy_before ? "both paths ran"
             : "BACKEND REFUSED: both columns ran legacy calls");
    g_clear_object (&pipe.bias);
  }
  {
    guint backend = 0, legacy = 0, packs = 0;

    atomr_cudnn_actor_get_conv_runs_internal (actor, &backend, &legacy, &packs);
    g_print ("# convolutions run: %u through backend plans (%u variant packs built, the rest reused), "
             "%u through legacy calls\n", backend, packs, legacy);
  }
  bench_norm (actor, device, &raw, json);
  g_string_append (json, "\n}\n");
  g_print ("# actor: workspace %" G_GUINT64_FORMAT " bytes, plan cache %u entries, %" G_GUINT64_FORMAT
           " hits, %" G_GUINT64_FORMAT " misses\n", atomr_cudnn_actor_get_workspace_size (actor),
           atomr_cudnn_actor_get_cache_size (actor), atomr_cudnn_actor_get_cache_hits (actor),
           atomr_cudnn_actor_get_cache_misses (actor));
  if (json_path && !g_file_set_contents (json_path, json->str, -1, &error))
    g_printerr ("bench-cudnn: %s\n", error->message);

  g_assert_true (atomr_device_enter (device, NULL));
  if (raw.ws)
    ATOMR_CU->cuMemFree (raw.ws);
  cudnnDestroy (raw.handle);
  atomr_device_leave (device);
  return 0;
}
