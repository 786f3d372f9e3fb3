/* bench-sparse.c — SpMV, SpMM and SpGEMM through AtomrSparseActor against
 * raw cuSPARSE, in the same run
 *
 *   spmv   1M × 1M f32 CSR, 10 nnz per row, random columns and banded
 *   spmm   the same matrices times a 1M × 16 column-major f32 B
 *   spgemm L·L for the 5-point 2-D Laplacian on a 316 × 316 grid
 *          (99 856 rows, 498 100 nnz)
 *
 * Raw: one cuSPARSE handle on its own non-blocking stream, descriptors and
 * work buffer made once, calls pipelined, one stream synchronisation at the
 * end.  Actor: every call submitted at once with a reply each, timed from
 * the first submit to the last reply.  SpGEMM is one whole product per
 * call (estimation, allocation of C, copy) on both sides, run one at a
 * time.  Figures are the best of REPS repetitions, raw and actor
 * interleaved; ratio = raw time / actor time (1.0: as fast as raw).
 *
 * With --json FILE the figures are also written as JSON for
 * tests/bench/sparse/peer_cupy.py, which times cupyx.scipy.sparse on the
 * same matrices and prints CuPy / atomr ratios.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

/* The raw baseline calls cuSPARSE through the same dlopen() table. */
#include "atomr-cusparse-table-private.h"

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "../bench-util.h"

#define REPS 5
#define N_ROWS 1000000
#define PER_ROW 10
#define SPMV_CALLS 200
#define SPMM_COLS 16
#define SPMM_CALLS 40
#define GRID 316
#define SPGEMM_CALLS 5

typedef struct {
  gint64   rows, nnz;
  gint32  *offsets, *cols;
  gfloat  *values;
} HostCsr;

static void
host_csr_clear (HostCsr *m)
{
  g_free (m->offsets);
  g_free (m->cols);
  g_free (m->values);
}

/* 10 distinct random columns per row, sorted; or the band i-5 .. i+4. */
static void
make_matrix (HostCsr *m, gboolean banded)
{
  GRand *rand = g_rand_new_with_seed (42);

  m->rows = N_ROWS;
  m->offsets = g_new (gint32, N_ROWS + 1);
  m->cols = g_new (gint32, (gsize) N_ROWS * PER_ROW);
  m->values = g_new (gfloat, (gsize) N_ROWS * PER_ROW);
  m->nnz = 0;
  for (gint64 i = 0; i < N_ROWS; i++)
    {
      gint32 row[PER_ROW];
      guint n = 0;

      m->offsets[i] = (gint32) m->nnz;
      if (banded)
        {
          for (gint64 j = i - PER_ROW / 2; j < i + PER_ROW / 2; j++)
            if (j >= 0 && j < N_ROWS)
              row[n++] = (gint32) j;
        }
      else
        {
          while (n < PER_ROW)
            {
              gint32 c = g_rand_int_range (rand, 0, N_ROWS);
              gboolean seen = FALSE;
              for (guint k = 0; k < n; k++)
                seen |= row[k] == c;
              if (!seen)
                row[n++] = c;
            }
          for (guint a = 1; a < n; a++)
            for (guint b = a; b > 0 && row[b - 1] > row[b]; b--)
              {
                gint32 t = row[b];
                row[b] = row[b - 1];
                row[b - 1] = t;
              }
        }
      for (guint k = 0; k < n; k++)
        {
          m->cols[m->nnz] = row[k];
          m->values[m->nnz] = 1.0f + (gfloat) ((i + k) % 7) / 8.0f;
          m->nnz++;
        }
    }
  m->offsets[N_ROWS] = (gint32) m->nnz;
  g_rand_free (rand);
}

static void
make_laplacian (HostCsr *m)
{
  gint64 n = (gint64) GRID * GRID;

  m->rows = n;
  m->offsets = g_new (gint32, n + 1);
  m->cols = g_new (gint32, 5 * n);
  m->values = g_new (gfloat, 5 * n);
  m->nnz = 0;
  for (gint64 i = 0; i < n; i++)
    {
      gint64 r = i / GRID, c = i % GRID;
      gint64 nb[5] = { r > 0 ? i - GRID : -1, c > 0 ? i - 1 : -1, i, c < GRID - 1 ? i + 1 : -1,
                       r < GRID - 1 ? i + GRID : -1 };

      m->offsets[i] = (gint32) m->nnz;
      for (guint k = 0; k < 5; k++)
        if (nb[k] >= 0)
          {
            m->cols[m->nnz] = (gint32) nb[k];
            m->values[m->nnz] = nb[k] == i ? 4.0f : -1.0f;
            m->nnz++;
          }
    }
  m->offsets[n] = (gint32) m->nnz;
}

static AtomrSparseMatrix *
upload (AtomrDevice *device, const HostCsr *m)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) o = g_bytes_new_static (m->offsets, (m->rows + 1) * sizeof (gint32));
  g_autoptr(GBytes) c = g_bytes_new_static (m->cols, m->nnz * sizeof (gint32));
  g_autoptr(GBytes) v = g_bytes_new_static (m->values, m->nnz * sizeof (gfloat));
  AtomrSparseMatrix *s = atomr_sparse_matrix_new_from_bytes (device, ATOMR_SPARSE_FORMAT_CSR, m->rows, m->rows, 1,
                                                             ATOMR_DTYPE_I32, o, c, ATOMR_DTYPE_F32, v, NULL, &error);
  g_assert_no_error (error);
  return s;
}

static AtomrTensor *
dense (AtomrDevice *device, gint64 rows, gint64 cols, gdouble value)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) b = atomr_buffer_new (device, ATOMR_DTYPE_F32, rows * cols, &error);
  AtomrTensor *t;

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (b, value, NULL, &error));
  if (cols == 1)
    {
      gint64 shape[1] = { rows };
      t = atomr_tensor_new (b, shape, 1, &error);
    }
  else
    {
      /* column-major rows × cols: the transpose of a row-major cols × rows */
      gint64 shape[2] = { cols, rows };
      g_autoptr(AtomrTensor) rm = atomr_tensor_new (b, shape, 2, &error);
      t = atomr_tensor_transpose (rm, 0, 1, &error);
    }
  g_assert_no_error (error);
  return t;
}

/* ------------------------------------------------------------------ */
/* Actor side                                                           */

typedef struct {
  guint done, failed;
} Count;

static void
on_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Count *c = user_data;
  g_autoptr(GError) error = NULL;
  gboolean ok = atomr_reply_propagate_boolean (result, &error);

  if (!ok && c->failed++ == 0)
    g_printerr ("sparse operation failed: %s\n", error->message);
  c->done++;
}

static gdouble
time_actor_spmv (AtomrSparseActor *actor, AtomrSparseMatrix *a, AtomrTensor *x, AtomrTensor *y, guint calls)
{
  Count c = { 0, 0 };
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < calls; i++)
    atomr_sparse_actor_spmv_async (actor, ATOMR_TRANSPOSE_N, 1.0, a, x, 0.0, y, NULL, on_done, &c);
  while (c.done < calls)
    g_main_context_iteration (NULL, TRUE);
  if (c.failed)
    exit (1);
  return (bench_now_us () - t0) / calls;
}

static gdouble
time_actor_spmm (AtomrSparseActor *actor, AtomrSparseMatrix *a, AtomrTensor *b, AtomrTensor *cm, guint calls)
{
  Count c = { 0, 0 };
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < calls; i++)
    atomr_sparse_actor_spmm_async (actor, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, 1.0, a, b, 0.0, cm, NULL,
                                   on_done, &c);
  while (c.done < calls)
    g_main_context_iteration (NULL, TRUE);
  if (c.failed)
    exit (1);
  return (bench_now_us () - t0) / calls;
}

static void
on_spgemm (GObject *source, GAsyncResult *result, gpointer user_data)
{
  AtomrSparseMatrix **out = user_data;
  g_autoptr(GError) error = NULL;

  *out = atomr_sparse_actor_spgemm_finish (ATOMR_SPARSE_ACTOR (source), result, &error);
  if (*out == NULL)
    g_error ("spgemm failed: %s", error->message);
}

static gdouble
time_actor_spgemm (AtomrSparseActor *actor, AtomrSparseMatrix *a, gint64 *nnz)
{
  AtomrSparseMatrix *c = NULL;
  gdouble t0 = bench_now_us (), t;

  atomr_sparse_actor_spgemm_async (actor, 1.0, a, a, NULL, on_spgemm, &c);
  while (c == NULL)
    g_main_context_iteration (NULL, TRUE);
  t = bench_now_us () - t0;
  *nnz = atomr_sparse_matrix_get_nnz (c);
  g_object_unref (c);
  return t;
}

/* ------------------------------------------------------------------ */
/* Raw side                                                             */

#define CHECK_SP(call) G_STMT_START { cusparseStatus_t st_ = (call); \
  if (st_ != CUSPARSE_STATUS_SUCCESS) g_error ("%s failed: %d", #call, st_); } G_STMT_END
#define CHECK_CU(call) G_STMT_START { CUresult r_ = (call); \
  if (r_ != CUDA_SUCCESS) g_error ("%s failed: %d", #call, r_); } G_STMT_END

static cusparseSpMatDescr_t
raw_csr (AtomrSparseMatrix *a)
{
  cusparseSpMatDescr_t d;

  CHECK_SP (cusparseCreateCsr (&d, atomr_sparse_matrix_get_rows (a), atomr_sparse_matrix_get_cols (a),
                               atomr_sparse_matrix_get_nnz (a),
                               (gpointer) (guintptr) atomr_buffer_get_device_pointer (atomr_sparse_matrix_get_offsets (a)),
                               (gpointer) (guintptr) atomr_buffer_get_device_pointer (atomr_sparse_matrix_get_indices (a)),
                               (gpointer) (guintptr) atomr_buffer_get_device_pointer (atomr_sparse_matrix_get_values (a)),
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  return d;
}

static gdouble
time_raw_spmv (cusparseHandle_t h, CUstream stream, AtomrSparseMatrix *a, AtomrTensor *x, AtomrTensor *y,
               guint calls, cusparseSpMVAlg_t alg, gboolean preprocess)
{
  const float one = 1, zero = 0;
  cusparseSpMatDescr_t ma = raw_csr (a);
  cusparseDnVecDescr_t vx, vy;
  gsize size = 0;
  CUdeviceptr work = 0;
  gdouble t0, t;

  CHECK_SP (cusparseCreateDnVec (&vx, N_ROWS, (gpointer) (guintptr) atomr_tensor_get_device_pointer (x), CUDA_R_32F));
  CHECK_SP (cusparseCreateDnVec (&vy, N_ROWS, (gpointer) (guintptr) atomr_tensor_get_device_pointer (y), CUDA_R_32F));
  CHECK_SP (cusparseSpMV_bufferSize (h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, ma, vx, &zero, vy, CUDA_R_32F,
                                     alg, &size));
  if (size)
    CHECK_CU (ATOMR_CU->cuMemAllocAsync (&work, size, stream));
  if (preprocess)
    CHECK_SP (cusparseSpMV_preprocess (h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, ma, vx, &zero, vy, CUDA_R_32F,
                                       alg, (gpointer) (guintptr) work));
  t0 = bench_now_us ();
  for (guint i = 0; i < calls; i++)
    CHECK_SP (cusparseSpMV (h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, ma, vx, &zero, vy, CUDA_R_32F,
                            alg, (gpointer) (guintptr) work));
  CHECK_CU (ATOMR_CU->cuStreamSynchronize (stream));
  t = (bench_now_us () - t0) / calls;
  if (work)
    ATOMR_CU->cuMemFreeAsync (work, stream);
  cusparseDestroyDnVec (vx);
  cusparseDestroyDnVec (vy);
  cusparseDestroySpMat (ma);
  return t;
}

static gdouble
time_raw_spmm (cusparseHandle_t h, CUstream stream, AtomrSparseMatrix *a, AtomrTensor *b, AtomrTensor *c,
               guint calls)
{
  const float one = 1, zero = 0;
  cusparseSpMatDescr_t ma = raw_csr (a);
  cusparseDnMatDescr_t mb, mc;
  gsize size = 0;
  CUdeviceptr work = 0;
  gdouble t0, t;

  CHECK_SP (cusparseCreateDnMat (&mb, N_ROWS, SPMM_COLS, N_ROWS, (gpointer) (guintptr) atomr_tensor_get_device_pointer (b),
                                 CUDA_R_32F, CUSPARSE_ORDER_COL));
  CHECK_SP (cusparseCreateDnMat (&mc, N_ROWS, SPMM_COLS, N_ROWS, (gpointer) (guintptr) atomr_tensor_get_device_pointer (c),
                                 CUDA_R_32F, CUSPARSE_ORDER_COL));
  CHECK_SP (cusparseSpMM_bufferSize (h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, ma,
                                     mb, &zero, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &size));
  if (size)
    CHECK_CU (ATOMR_CU->cuMemAllocAsync (&work, size, stream));
  t0 = bench_now_us ();
  for (guint i = 0; i < calls; i++)
    CHECK_SP (cusparseSpMM (h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, ma, mb,
                            &zero, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, (gpointer) (guintptr) work));
  CHECK_CU (ATOMR_CU->cuStreamSynchronize (stream));
  t = (bench_now_us () - t0) / calls;
  if (work)
    ATOMR_CU->cuMemFreeAsync (work, stream);
  cusparseDestroyDnMat (mb);
  cusparseDestroyDnMat (mc);
  cusparseDestroySpMat (ma);
  return t;
}

/* One whole C = A·A: estimation, compute, allocation of C, copy. */
static gdouble
time_raw_spgemm (cusparseHandle_t h, CUstream stream, AtomrSparseMatrix *a, gint64 *nnz_out)
{
  const float one = 1, zero = 0;
  cusparseOperation_t n = CUSPARSE_OPERATION_NON_TRANSPOSE;
  gint64 rows = atomr_sparse_matrix_get_rows (a);
  cusparseSpMatDescr_t ma = raw_csr (a), mc;
  cusparseSpGEMMDescr_t desc;
  CUdeviceptr off = 0, cols = 0, vals = 0, b1 = 0, b2 = 0;
  gsize s1 = 0, s2 = 0;
  int64_t r, c, nnz;
  gdouble t0 = bench_now_us (), t;

  CHECK_CU (ATOMR_CU->cuMemAllocAsync (&off, (rows + 1) * sizeof (gint32), stream));
  CHECK_SP (cusparseCreateCsr (&mc, rows, rows, 0, (gpointer) (guintptr) off, NULL, NULL, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_SP (cusparseSpGEMM_createDescr (&desc));
  CHECK_SP (cusparseSpGEMM_workEstimation (h, n, n, &one, ma, ma, &zero, mc, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT,
                                           desc, &s1, NULL));
  CHECK_CU (ATOMR_CU->cuMemAllocAsync (&b1, MAX (s1, 1), stream));
  CHECK_SP (cusparseSpGEMM_workEstimation (h, n, n, &one, ma, ma, &zero, mc, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT,
                                           desc, &s1, (gpointer) (guintptr) b1));
  CHECK_SP (cusparseSpGEMM_compute (h, n, n, &one, ma, ma, &zero, mc, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT,
                                    desc, &s2, NULL));
  CHECK_CU (ATOMR_CU->cuMemAllocAsync (&b2, MAX (s2, 1), stream));
  CHECK_SP (cusparseSpGEMM_compute (h, n, n, &one, ma, ma, &zero, mc, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT,
                                    desc, &s2, (gpointer) (guintptr) b2));
  CHECK_SP (cusparseSpMatGetSize (mc, &r, &c, &nnz));
  CHECK_CU (ATOMR_CU->cuMemAllocAsync (&cols, MAX (nnz, 1) * sizeof (gint32), stream));
  CHECK_CU (ATOMR_CU->cuMemAllocAsync (&vals, MAX (nnz, 1) * sizeof (gfloat), stream));
  CHECK_SP (cusparseCsrSetPointers (mc, (gpointer) (guintptr) off, (gpointer) (guintptr) cols, (gpointer) (guintptr) vals));
  CHECK_SP (cusparseSpGEMM_copy (h, n, n, &one, ma, ma, &zero, mc, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT, desc));
  CHECK_CU (ATOMR_CU->cuMemFreeAsync (b1, stream));
  CHECK_CU (ATOMR_CU->cuMemFreeAsync (b2, stream));
  CHECK_CU (ATOMR_CU->cuStreamSynchronize (stream));
  t = bench_now_us () - t0;
  cusparseSpGEMM_destroyDescr (desc);
  cusparseDestroySpMat (mc);
  cusparseDestroySpMat (ma);
  CHECK_CU (ATOMR_CU->cuMemFreeAsync (off, stream));
  CHECK_CU (ATOMR_CU->cuMemFreeAsync (cols, stream));
  CHECK_CU (ATOMR_CU->cuMemFreeAsync (vals, stream));
  CHECK_CU (ATOMR_CU->cuStreamSynchronize (stream));
  *nnz_out = nnz;
  return t;
}

/* ------------------------------------------------------------------ */

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrSparseActor) actor = NULL;
  g_autoptr(GString) json = g_string_new ("{\n");
  const gchar *json_path = NULL;
  cusparseHandle_t h = NULL;
  CUstream stream = NULL;

  for (int i = 1; i + 1 < argc; i++)
    if (g_str_equal (argv[i], "--json"))
      json_path = argv[i + 1];

  if (device == NULL)
    {
      g_print ("bench-sparse: no CUDA device (%s)\n", error->message);
      return 0;
    }
  actor = atomr_sparse_actor_new (device, &error);
  g_assert_no_error (error);

  g_assert_true (atomr_device_enter (device, NULL));
  CHECK_CU (ATOMR_CU->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING));
  g_assert_true (atomr_cusparse_load (NULL));
  CHECK_SP (cusparseCreate (&h));
  CHECK_SP (cusparseSetStream (h, (cudaStream_t) stream));
  atomr_device_leave (device);

  g_print ("# bench-sparse on %s; best of %d; ratio = raw / atomr (1.0: as fast as raw cuSPARSE)\n",
           atomr_device_get_name (device), REPS);
  g_print ("%-8s %-10s %8s | %12s %12s %8s\n", "op", "matrix", "calls", "raw us/call", "atomr us/call", "ratio");

  for (guint banded = 0; banded < 2; banded++)
    {
      const gchar *name = banded ? "banded" : "random";
      HostCsr host = { 0 };
      g_autoptr(AtomrSparseMatrix) a = NULL;
      g_autoptr(AtomrTensor) x = dense (device, N_ROWS, 1, 1.0);
      g_autoptr(AtomrTensor) y = dense (device, N_ROWS, 1, 0.0);
      g_autoptr(AtomrTensor) b = dense (device, N_ROWS, SPMM_COLS, 1.0);
      g_autoptr(AtomrTensor) c = dense (device, N_ROWS, SPMM_COLS, 0.0);
      gdouble raw = G_MAXDOUBLE, act = G_MAXDOUBLE;

      make_matrix (&host, banded);
      a = upload (device, &host);
      host_csr_clear (&host);

      /* warm up both sides */
      time_actor_spmv (actor, a, x, y, 10);
      g_assert_true (atomr_device_enter (device, NULL));
      time_raw_spmv (h, stream, a, x, y, 10, CUSPARSE_SPMV_ALG_DEFAULT, FALSE);
      atomr_device_leave (device);
      for (guint r = 0; r < REPS; r++)
        {
          g_assert_true (atomr_device_enter (device, NULL));
          raw = MIN (raw, time_raw_spmv (h, stream, a, x, y, SPMV_CALLS, CUSPARSE_SPMV_ALG_DEFAULT, FALSE));
          atomr_device_leave (device);
          act = MIN (act, time_actor_spmv (actor, a, x, y, SPMV_CALLS));
        }
      g_print ("%-8s %-10s %8d | %12.2f %12.2f %8.3f\n", "spmv", name, SPMV_CALLS, raw, act, raw / act);
      g_string_append_printf (json, "  \"spmv-%s\": {\"raw_us\": %.3f, \"atomr_us\": %.3f},\n", name, raw, act);

      /* raw cuSPARSE variants, for the choice of algorithm: ALG1 with
       * preprocessing (what the actor does for CSR) and ALG2; the ratio
       * column is the default raw figure over the variant's */
      {
        const struct { const gchar *label; cusparseSpMVAlg_t alg; gboolean pre; } variants[] = {
          { "alg1+pre", CUSPARSE_SPMV_CSR_ALG1, TRUE },
          { "alg2", CUSPARSE_SPMV_CSR_ALG2, FALSE },
        };
        for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
          {
            gdouble var = G_MAXDOUBLE;

            g_assert_true (atomr_device_enter (device, NULL));
            time_raw_spmv (h, stream, a, x, y, 10, variants[v].alg, variants[v].pre);
            for (guint r = 0; r < REPS; r++)
              var = MIN (var, time_raw_spmv (h, stream, a, x, y, SPMV_CALLS, variants[v].alg, variants[v].pre));
            atomr_device_leave (device);
            g_print ("%-8s %-10s %8d | %12.2f %12s %8.3f  (raw %s; default raw / this)\n", "spmv", name,
                     SPMV_CALLS, var, "-", raw / var, variants[v].label);
          }
      }

      raw = act = G_MAXDOUBLE;
      time_actor_spmm (actor, a, b, c, 3);
      g_assert_true (atomr_device_enter (device, NULL));
      time_raw_spmm (h, stream, a, b, c, 3);
      atomr_device_leave (device);
      for (guint r = 0; r < REPS; r++)
        {
          g_assert_true (atomr_device_enter (device, NULL));
          raw = MIN (raw, time_raw_spmm (h, stream, a, b, c, SPMM_CALLS));
          atomr_device_leave (device);
          act = MIN (act, time_actor_spmm (actor, a, b, c, SPMM_CALLS));
        }
      g_print ("%-8s %-10s %8d | %12.2f %12.2f %8.3f\n", "spmm16", name, SPMM_CALLS, raw, act, raw / act);
      g_string_append_printf (json, "  \"spmm16-%s\": {\"raw_us\": %.3f, \"atomr_us\": %.3f},\n", name, raw, act);
    }

  {
    HostCsr host = { 0 };
    g_autoptr(AtomrSparseMatrix) l = NULL;
    gdouble raw = G_MAXDOUBLE, act = G_MAXDOUBLE;
    gint64 nnz_raw = 0, nnz_act = 0;

    make_laplacian (&host);
    l = upload (device, &host);
    host_csr_clear (&host);
    time_actor_spgemm (actor, l, &nnz_act);
    g_assert_true (atomr_device_enter (device, NULL));
    time_raw_spgemm (h, stream, l, &nnz_raw);
    atomr_device_leave (device);
    for (guint r = 0; r < SPGEMM_CALLS; r++)
      {
        g_assert_true (atomr_device_enter (device, NULL));
        raw = MIN (raw, time_raw_spgemm (h, stream, l, &nnz_raw));
        atomr_device_leave (device);
        act = MIN (act, time_actor_spgemm (actor, l, &nnz_act));
      }
    if (nnz_raw != nnz_act)
      g_error ("spgemm: raw C has nnz %" G_GINT64_FORMAT ", the actor's %" G_GINT64_FORMAT, nnz_raw, nnz_act);
    g_print ("%-8s %-10s %8d | %12.2f %12.2f %8.3f   (nnz(C) = %" G_GINT64_FORMAT ")\n", "spgemm", "laplace2d",
             SPGEMM_CALLS, raw, act, raw / act, nnz_act);
    g_string_append_printf (json, "  \"spgemm-laplace2d\": {\"raw_us\": %.3f, \"atomr_us\": %.3f}\n}\n", raw, act);
  }
  g_print ("# workspace of the actor: %" G_GUINT64_FORMAT " bytes\n", atomr_sparse_actor_get_workspace_size (actor));

  if (json_path && !g_file_set_contents (json_path, json->str, -1, &error))
    g_error ("%s", error->message);

  g_assert_true (atomr_device_enter (device, NULL));
  cusparseDestroy (h);
  ATOMR_CU->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return 0;
}
