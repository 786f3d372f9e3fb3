/* bench-cudnn.c — ResNet-50 3×3 convolution through AtomrCudnnActor
 * against raw cuDNN
 *
 * The layer: N = 32, C = K = 256, 56 × 56, 3 × 3 filter, padding 1,
 * stride 1, NHWC bf16 (KRSC filter), f32 accumulation.  Forward, backward
 * data and backward filter, each as ITERS calls pipelined (all submitted
 * before waiting) and timed on the host from the first submit to the last
 * completion; best of REPS, raw and actor interleaved.  The raw side calls
 * the same cuDNN entry points (through the same dlopen() table) on its own
 * non-blocking stream, with the algorithm chosen the way the actor chooses
 * it (cuDNN's heuristics, or timing with --autotune) and a workspace of
 * the size that algorithm needs.
 *
 * Prints TFLOP/s and µs per call for both sides and actor/raw throughput
 * ratios (≥ 0.95 wanted).  --json FILE writes the figures for
 * tests/bench/cudnn/peer_torch.py.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-cudnn-table-private.h"

#include <atomr.h>
#include "core/atomr-actor-private.h"

#define REPS  5
#define ITERS 100

enum { FWD, BWD_DATA, BWD_FILTER, N_PASSES };
static const gchar *const pass_names[N_PASSES] = { "conv-fwd", "conv-bwd-data", "conv-bwd-filter" };

typedef struct {
  AtomrCudnnActor  *actor;
  AtomrConvolution *conv;
  AtomrTensor      *x, *w, *y;
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
  gboolean autotune = FALSE;
  Raw raw = { 0 };
  Pipe pipe = { 0 };

  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--json") && i + 1 < argc)
        json_path = argv[++i];
      else if (g_str_equal (argv[i], "--autotune"))
        autotune = TRUE;
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

  g_print ("# ResNet-50 3x3 conv: N=%d C=K=%d %dx%d, pad 1, NHWC bf16 (f32 accumulation), %s; "
           "algorithms by %s\n# %d calls pipelined, best of %d; ratio = actor / raw throughput "
           "(>= 0.95 wanted)\n", n, c, hw, hw, atomr_device_get_name (device),
           autotune ? "timing (autotune)" : "cuDNN heuristics", ITERS, REPS);
  g_print ("%-16s | %8s %9s | %8s %9s | %7s\n", "pass", "raw TF/s", "raw us", "atomr TF/s",
           "atomr us", "ratio");
  for (guint p = 0; p < N_PASSES; p++)
    {
      gdouble best_raw = G_MAXDOUBLE, best_actor = G_MAXDOUBLE;

      /* warm up: plans, workspace, clocks */
      time_actor (&pipe, p, 5);
      time_raw (&raw, device, p, 5, x, w, y);
      for (guint r = 0; r < REPS; r++)
        {
          best_raw = MIN (best_raw, time_raw (&raw, device, p, ITERS, x, w, y));
          best_actor = MIN (best_actor, time_actor (&pipe, p, ITERS));
        }
      g_print ("%-16s | %8.1f %9.1f | %8.1f %9.1f | %6.3fx\n", pass_names[p],
               flops * ITERS / best_raw / 1e12, best_raw / ITERS * 1e6,
               flops * ITERS / best_actor / 1e12, best_actor / ITERS * 1e6, best_raw / best_actor);
      g_string_append_printf (json, "  \"%s\": {\"raw_us\": %.3f, \"atomr_us\": %.3f}%s\n",
                              pass_names[p], best_raw / ITERS * 1e6, best_actor / ITERS * 1e6,
                              p + 1 < N_PASSES ? "," : "");
    }
  g_string_append (json, "}\n");
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
