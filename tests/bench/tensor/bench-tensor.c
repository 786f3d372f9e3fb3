/* bench-tensor.c — the Tensor actor's permutation and reductions against
 * the copy bandwidth measured in the same run
 *
 * (b) 3-D permutations of a 512³ f32 tensor ("abc->cab", "abc->cba",
 *     "abc->acb"): GB/s counted as read + write bytes, against
 *     cuMemcpyDtoDAsync of the same bytes on a raw non-blocking stream
 *     (also read + write).  Goal: ≥ 0.85×.
 * (c) sum of an 8192×8192 f32 matrix over each axis ("ab->a": rows kernel,
 *     "ab->b": cols kernel): GB/s of the bytes read (the output is 32 KiB)
 *     against the same copy bandwidth.  Goal: ≥ 0.85×.  Then "ab->b" once
 *     per column-kernel variant (ATOMR_TENSOR_COLS_VARIANT a, b, c; see
 *     DESIGN-NOTES) in f32, f16, bf16 and f64, so that one run compares
 *     them (the first two lines use the actor's default variant).
 *
 * (a) the contraction "abcd,cdef->abef" with extents 64 (a 4096³ GEMM
 *     after folding: the actor runs it on cuBLASLt) in f32, f32 with the
 *     TF32 compute type, and bf16 (f32 accumulation): TFLOP/s, against
 *     the same GEMM called on cuBLASLt directly (same layouts, heuristic,
 *     32 MiB workspace, a raw stream).
 *
 * With --json FILE the figures are also written as JSON for
 * peer_torch.py --atomr FILE, which prints PyTorch's and CuPy's figures
 * and the ratios to them.
 *
 * Each figure is the best of REPS repetitions of ITERS pipelined calls
 * (all submitted, then waited for), timed on the host; the first call of
 * each shape compiles (or loads from the kernel cache) and is not timed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

/* cublasLt.h declares cublasLtLoggerForceDisable() without a prototype. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "atomr-cublasLt-table-private.h"
#pragma GCC diagnostic pop

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-device-private.h"
#include "core/atomr-tensor-private.h"
#include "actors/tensor/atomr-tensor-kernels-private.h"
#include "../bench-util.h"

#define REPS  5
#define ITERS 20
#define CONTRACT_ITERS 10

typedef struct {
  guint done, failed;
} Count;

static void
count_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Count *c = user_data;
  g_autoptr(GError) error = NULL;
  gboolean ok;

  if (g_async_result_is_tagged (result, atomr_tensor_actor_reduce_async))
    ok = atomr_tensor_actor_reduce_finish (ATOMR_TENSOR_ACTOR (source), result, &error);
  else if (g_async_result_is_tagged (result, atomr_tensor_actor_contract_async))
    ok = atomr_tensor_actor_contract_finish (ATOMR_TENSOR_ACTOR (source), result, &error);
  else
    ok = atomr_tensor_actor_permute_finish (ATOMR_TENSOR_ACTOR (source), result, &error);
  if (!ok)
    {
      g_printerr ("bench-tensor: %s\n", error->message);
      c->failed++;
    }
  c->done++;
}

static void
record_detail (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  gchar **detail = user_data;

  g_free (*detail);
  *detail = g_strdup (atomr_launch_info_get_detail (info));
}

static void
wait_count (Count *c, guint n)
{
  while (c->done < n)
    g_main_context_iteration (NULL, TRUE);
  if (c->failed)
    g_error ("bench-tensor: %u calls failed", c->failed);
}

static gdouble
time_permute (AtomrTensorActor *actor, const gchar *modes, AtomrTensor *a, AtomrTensor *b, guint iters)
{
  Count c = { 0, 0 };
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < iters; i++)
    atomr_tensor_actor_permute_async (actor, modes, 1.0, ATOMR_TENSOR_UNARY_IDENTITY, a, b, NULL, count_done, &c);
  wait_count (&c, iters);
  return (bench_now_us () - t0) / 1e6;
}

static gdouble
time_reduce (AtomrTensorActor *actor, const gchar *modes, AtomrTensor *a, AtomrTensor *c_out, guint iters)
{
  Count c = { 0, 0 };
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < iters; i++)
    atomr_tensor_actor_reduce_async (actor, modes, ATOMR_TENSOR_REDUCE_SUM, 1.0, a, 0.0, c_out, NULL, count_done, &c);
  wait_count (&c, iters);
  return (bench_now_us () - t0) / 1e6;
}

static gdouble
time_contract (AtomrTensorActor *actor, AtomrTensor *a, AtomrTensor *b, AtomrTensor *d, guint iters)
{
  Count c = { 0, 0 };
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < iters; i++)
    atomr_tensor_actor_contract_async (actor, "abcd,cdef->abef", 1.0, a, b, 0.0, d, NULL, count_done, &c);
  wait_count (&c, iters);
  return (bench_now_us () - t0) / 1e6;
}

#define CHECK_LT(call) G_STMT_START {                                          \
    cublasStatus_t st_ = (call);                                              \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                         \
      g_error ("%s: %s", #call, cublasLtGetStatusName (st_));                 \
  } G_STMT_END

/* The raw baseline of (a): D (row-major 4096 × 4096) = A · B as the
 * column-major Dᵀ = Bᵀ·Aᵀ, the layout the actor's planner picks. */
typedef struct {
  cublasLtHandle_t       handle;
  cublasLtMatmulDesc_t   desc;
  cublasLtMatrixLayout_t l;
  cublasLtMatmulAlgo_t   algo;
  gsize                  ws_size;
  CUdeviceptr            ws;
} RawGemm;

static void
raw_gemm_init (RawGemm *g, cudaDataType type, cublasComputeType_t compute)
{
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulHeuristicResult_t result;
  guint64 ws = 32u << 20;
  int returned = 0;

  memset (g, 0, sizeof *g);
  g_assert_true (atomr_cublasLt_load (NULL));
  CHECK_LT (cublasLtCreate (&g->handle));
  CHECK_LT (cublasLtMatmulDescCreate (&g->desc, compute, CUDA_R_32F));
  CHECK_LT (cublasLtMatrixLayoutCreate (&g->l, type, 4096, 4096, 4096));
  CHECK_LT (cublasLtMatmulPreferenceCreate (&pref));
  CHECK_LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  CHECK_LT (cublasLtMatmulAlgoGetHeuristic (g->handle, g->desc, g->l, g->l, g->l, g->l, pref, 1, &result,
                                            &returned));
  g_assert_cmpint (returned, ==, 1);
  cublasLtMatmulPreferenceDestroy (pref);
  g->algo = result.algo;
  g->ws_size = result.workspaceSize;
  if (g->ws_size && ATOMR_CU->cuMemAlloc (&g->ws, g->ws_size) != CUDA_SUCCESS)
    g_error ("cuMemAlloc (workspace) failed");
}

static gdouble
time_raw_gemm (RawGemm *g, CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr d, guint iters)
{
  const gfloat alpha = 1.0f, beta = 0.0f;
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < iters; i++)
    CHECK_LT (cublasLtMatmul (g->handle, g->desc, &alpha, (void *) (uintptr_t) b, g->l, (void *) (uintptr_t) a,
                              g->l, &beta, (void *) (uintptr_t) d, g->l, (void *) (uintptr_t) d, g->l, &g->algo,
                              g->ws_size ? (void *) (uintptr_t) g->ws : NULL, g->ws_size,
                              (cudaStream_t) stream));
  if (ATOMR_CU->cuStreamSynchronize (stream) != CUDA_SUCCESS)
    g_error ("cuStreamSynchronize failed");
  return (bench_now_us () - t0) / 1e6;
}

static void
raw_gemm_clear (RawGemm *g)
{
  if (g->ws)
    ATOMR_CU->cuMemFree (g->ws);
  cublasLtMatrixLayoutDestroy (g->l);
  cublasLtMatmulDescDestroy (g->desc);
  cublasLtDestroy (g->handle);
}

static gdouble
time_copy (AtomrDevice *device, CUstream stream, AtomrBuffer *src, AtomrBuffer *dst, guint64 bytes, guint iters)
{
  gdouble t0;

  g_assert_true (atomr_device_enter (device, NULL));
  t0 = bench_now_us ();
  for (guint i = 0; i < iters; i++)
    if (ATOMR_CU->cuMemcpyDtoDAsync (atomr_buffer_get_device_pointer (dst),
                                     atomr_buffer_get_device_pointer (src), bytes, stream) != CUDA_SUCCESS)
      g_error ("cuMemcpyDtoDAsync failed");
  if (ATOMR_CU->cuStreamSynchronize (stream) != CUDA_SUCCESS)
    g_error ("cuStreamSynchronize failed");
  atomr_device_leave (device);
  return (bench_now_us () - t0) / 1e6;
}

int
main (int argc, char **argv)
{
  const gint64 cube[] = { 512, 512, 512 }, mat[] = { 8192, 8192 }, vec[] = { 8192 };
  const gchar *perms[] = { "abc->cab", "abc->cba", "abc->acb" };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrTensorActor) actor = NULL;
  g_autoptr(AtomrTensor) a = NULL, b = NULL, m = NULL, v = NULL;
  CUstream stream = NULL;
  g_autoptr(GString) json = g_string_new ("{\n");
  const gchar *json_path = NULL;
  guint64 cube_bytes = 512ull * 512 * 512 * 4, mat_bytes = 8192ull * 8192 * 4;
  gdouble copy_gbps = 0, best;

  for (int i = 1; i + 1 < argc; i++)
    if (g_str_equal (argv[i], "--json"))
      json_path = argv[i + 1];

  if (device == NULL)
    {
      g_print ("bench-tensor: no CUDA device (%s)\n", error->message);
      return 0;
    }
  actor = atomr_tensor_actor_new (device, &error);
  g_assert_no_error (error);
  a = atomr_tensor_empty (device, ATOMR_DTYPE_F32, cube, 3, &error);
  g_assert_no_error (error);
  b = atomr_tensor_empty (device, ATOMR_DTYPE_F32, cube, 3, &error);
  g_assert_no_error (error);
  m = atomr_tensor_empty (device, ATOMR_DTYPE_F32, mat, 2, &error);
  g_assert_no_error (error);
  v = atomr_tensor_empty (device, ATOMR_DTYPE_F32, vec, 1, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (a), 1.0, NULL, &error));
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (m), 1.0, NULL, &error));
  g_assert_no_error (error);

  g_assert_true (atomr_device_enter (device, NULL));
  g_assert_cmpint (ATOMR_CU->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
  atomr_device_leave (device);

  g_print ("# Tensor actor on %s; best of %d × %d pipelined calls\n", atomr_device_get_name (device), REPS, ITERS);

  /* the copy baseline: 512³ f32, read + write */
  time_copy (device, stream, atomr_tensor_get_buffer (a), atomr_tensor_get_buffer (b), cube_bytes, 2);
  best = G_MAXDOUBLE;
  for (guint r = 0; r < REPS; r++)
    best = MIN (best, time_copy (device, stream, atomr_tensor_get_buffer (a), atomr_tensor_get_buffer (b),
                                 cube_bytes, ITERS));
  copy_gbps = 2.0 * cube_bytes * ITERS / best / 1e9;
  g_print ("copy      cuMemcpyDtoD 512^3 f32      %8.1f GB/s (read+write)\n", copy_gbps);
  g_string_append_printf (json, "  \"copy\": {\"gbps\": %.3f},\n", copy_gbps);

  /* (b) permutations */
  for (guint i = 0; i < G_N_ELEMENTS (perms); i++)
    {
      gdouble gbps;
      g_autofree gchar *detail = NULL;
      gulong id = g_signal_connect (actor, "after-enqueue", G_CALLBACK (record_detail), &detail);

      time_permute (actor, perms[i], a, b, 1);     /* compile / cache load */
      g_signal_handler_disconnect (actor, id);
      best = G_MAXDOUBLE;
      for (guint r = 0; r < REPS; r++)
        best = MIN (best, time_permute (actor, perms[i], a, b, ITERS));
      gbps = 2.0 * cube_bytes * ITERS / best / 1e9;
      g_print ("permute   %-10s 512^3 f32        %8.1f GB/s  ratio to copy %.3f (goal 0.85)  [%s]\n",
               perms[i], gbps, gbps / copy_gbps, detail ? detail : "?");
      g_string_append_printf (json, "  \"permute %s\": {\"gbps\": %.3f, \"ratio_to_copy\": %.4f},\n",
                              perms[i], gbps, gbps / copy_gbps);
    }

  /* (c) reductions over each axis */
  {
    const gchar *modes[] = { "ab->a", "ab->b" };
    const gchar *what[] = { "sum over axis 1 (rows kernel)", "sum over axis 0 (cols kernel)" };

    for (guint i = 0; i < 2; i++)
      {
        gdouble gbps;
        g_autofree gchar *detail = NULL;
        gulong id = g_signal_connect (actor, "after-enqueue", G_CALLBACK (record_detail), &detail);

        time_reduce (actor, modes[i], m, v, 1);
        g_signal_handler_disconnect (actor, id);
        best = G_MAXDOUBLE;
        for (guint r = 0; r < REPS; r++)
          best = MIN (best, time_reduce (actor, modes[i], m, v, ITERS));
        gbps = (gdouble) mat_bytes * ITERS / best / 1e9;
        g_print ("reduce    %-6s 8192^2 f32 %-31s %8.1f GB/s  ratio to copy %.3f (goal 0.85)  [%s]\n",
                 modes[i], what[i], gbps, gbps / copy_gbps, detail ? detail : "?");
        g_string_append_printf (json, "  \"reduce %s\": {\"gbps\": %.3f, \"ratio_to_copy\": %.4f},\n",
                                modes[i], gbps, gbps / copy_gbps);
      }
  }

  /* (c) the column reduction in each kernel variant and dtype */
  g_clear_object (&m);
  {
    const AtomrDtype cdt[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F64 };
    const gchar variants[] = { 'a', 'b', 'c' };
    gchar keep = atomr_tensor_actor_get_cols_variant (actor);

    for (guint d = 0; d < G_N_ELEMENTS (cdt); d++)
      {
        guint64 bytes = 8192ull * 8192 * atomr_dtype_get_size (cdt[d]);
        g_autoptr(AtomrTensor) md = atomr_tensor_empty (device, cdt[d], mat, 2, &error);
        g_autoptr(AtomrTensor) vd = NULL;

        g_assert_no_error (error);
        vd = atomr_tensor_empty (device, cdt[d], vec, 1, &error);
        g_assert_no_error (error);
        g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (md), 1.0, NULL, &error));
        g_assert_no_error (error);
        for (guint k = 0; k < G_N_ELEMENTS (variants); k++)
          {
            gdouble gbps;
            g_autofree gchar *detail = NULL;
            gulong id;

            g_assert_true (atomr_tensor_actor_set_cols_variant (actor, variants[k]));
            id = g_signal_connect (actor, "after-enqueue", G_CALLBACK (record_detail), &detail);
            time_reduce (actor, "ab->b", md, vd, 1);
            g_signal_handler_disconnect (actor, id);
            best = G_MAXDOUBLE;
            for (guint r = 0; r < REPS; r++)
              best = MIN (best, time_reduce (actor, "ab->b", md, vd, ITERS));
            gbps = (gdouble) bytes * ITERS / best / 1e9;
            g_print ("reduce    ab->b  8192^2 %-4s cols variant %c            %8.1f GB/s  ratio to copy %.3f "
                     "(goal 0.85)  [%s]\n", atomr_dtype_get_name (cdt[d]), variants[k], gbps, gbps / copy_gbps,
                     detail ? detail : "?");
            g_string_append_printf (json, "  \"reduce ab->b %s %c\": {\"gbps\": %.3f, \"ratio_to_copy\": %.4f},\n",
                                    atomr_dtype_get_name (cdt[d]), variants[k], gbps, gbps / copy_gbps);
          }
      }
    atomr_tensor_actor_set_cols_variant (actor, keep);
  }

  /* (a) contractions: the actor (cuBLASLt path, the detail says so) and
   * raw cuBLASLt on the same bytes */
  g_clear_object (&a);
  g_clear_object (&b);
  g_clear_object (&m);
  g_clear_object (&v);
  {
    const gint64 ext4[] = { 64, 64, 64, 64 };
    const struct { const gchar *label; AtomrDtype dtype; AtomrBlasComputeType compute;
                   cudaDataType type; cublasComputeType_t lt; } rows[] = {
      { "f32", ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_DEFAULT, CUDA_R_32F, CUBLAS_COMPUTE_32F },
      { "f32/TF32", ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_F32_FAST_TF32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32 },
      { "bf16", ATOMR_DTYPE_BF16, ATOMR_BLAS_COMPUTE_DEFAULT, CUDA_R_16BF, CUBLAS_COMPUTE_32F },
    };
    const gdouble flops = 2.0 * 4096.0 * 4096.0 * 4096.0;

    for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
      {
        g_autoptr(AtomrTensor) x = atomr_tensor_empty (device, rows[i].dtype, ext4, 4, &error);
        g_autoptr(AtomrTensor) y = atomr_tensor_empty (device, rows[i].dtype, ext4, 4, &error);
        g_autoptr(AtomrTensor) z = atomr_tensor_empty (device, rows[i].dtype, ext4, 4, &error);
        g_autofree gchar *detail = NULL;
        gdouble raw = G_MAXDOUBLE, act = G_MAXDOUBLE, raw_tf, act_tf;
        RawGemm g;
        gulong id;

        g_assert_no_error (error);
        g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (x), 0.5, NULL, &error));
        g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (y), 0.25, NULL, &error));
        g_assert_no_error (error);
        atomr_tensor_actor_set_compute_type (actor, rows[i].compute);
        id = g_signal_connect (actor, "after-enqueue", G_CALLBACK (record_detail), &detail);
        time_contract (actor, x, y, z, 1);
        g_signal_handler_disconnect (actor, id);

        g_assert_true (atomr_device_enter (device, NULL));
        raw_gemm_init (&g, rows[i].type, rows[i].lt);
        time_raw_gemm (&g, stream, atomr_tensor_get_ptr (x), atomr_tensor_get_ptr (y), atomr_tensor_get_ptr (z), 1);
        atomr_device_leave (device);
        for (guint r = 0; r < REPS; r++)
          {
            g_assert_true (atomr_device_enter (device, NULL));
            raw = MIN (raw, time_raw_gemm (&g, stream, atomr_tensor_get_ptr (x), atomr_tensor_get_ptr (y),
                                           atomr_tensor_get_ptr (z), CONTRACT_ITERS));
            atomr_device_leave (device);
            act = MIN (act, time_contract (actor, x, y, z, CONTRACT_ITERS));
          }
        g_assert_true (atomr_device_enter (device, NULL));
        raw_gemm_clear (&g);
        atomr_device_leave (device);
        raw_tf = flops * CONTRACT_ITERS / raw / 1e12;
        act_tf = flops * CONTRACT_ITERS / act / 1e12;
        g_print ("contract  abcd,cdef->abef 64^4 %-9s %8.2f TFLOP/s  raw cuBLASLt %8.2f  ratio %.3f  [%s]\n",
                 rows[i].label, act_tf, raw_tf, act_tf / raw_tf, detail ? detail : "?");
        g_string_append_printf (json, "  \"contract %s\": {\"tflops\": %.3f, \"raw_tflops\": %.3f},\n",
                                rows[i].label, act_tf, raw_tf);
      }
    atomr_tensor_actor_set_compute_type (actor, ATOMR_BLAS_COMPUTE_DEFAULT);
  }
  g_string_append_printf (json, "  \"device\": \"%s\"\n}\n", atomr_device_get_name (device));
  if (json_path && !g_file_set_contents (json_path, json->str, -1, &error))
    g_printerr ("bench-tensor: %s\n", error->message);

  g_assert_true (atomr_device_enter (device, NULL));
  ATOMR_CU->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return 0;
}
