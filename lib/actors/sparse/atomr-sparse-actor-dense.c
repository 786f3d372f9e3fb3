/* atomr-sparse-actor-dense.c — the sparse actor's operations with dense
 * operands: SpMV, SpMM (batched), SpGEMM, SpSV, SpSM, SDDMM, sparse ↔
 * dense, and gather / scatter / axpby of sparse vectors
 *
 * Dense operands are AtomrTensor views: vectors must be contiguous (cuSPARSE
 * dense vectors have no stride); matrices may be column- or row-major with
 * any leading dimension (atomr_tensor_get_matrix_layout()); batches of
 * matrices are 3-D views whose first dimension is the batch.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "actors/sparse/atomr-sparse-actor-private.h"
#include "core/atomr-tensor-private.h"

enum {
  PLAN_SPMV = 1,
  PLAN_SPMM,
  PLAN_SPSV,
  PLAN_SPSM,
  PLAN_SDDMM,
};

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

typedef union {
  gfloat  f[2];
  gdouble d[2];
} Scalar;

static cudaDataType
compute_type (AtomrDtype dtype)
{
  /* Half-precision values compute in f32, as cuSPARSE requires. */
  if (dtype == ATOMR_DTYPE_F16 || dtype == ATOMR_DTYPE_BF16)
    return CUDA_R_32F;
  return atomr_sparse_cuda_type (dtype);
}

static const void *
scalar (AtomrDtype  dtype,
        gdouble     value,
        Scalar     *s)
{
  memset (s, 0, sizeof *s);
  if (dtype == ATOMR_DTYPE_F64 || dtype == ATOMR_DTYPE_C128)
    {
      s->d[0] = value;
      return s->d;
    }
  s->f[0] = (gfloat) value;
  return s->f;
}

static cusparseOperation_t
to_op (gint t)
{
  switch (t)
    {
    case ATOMR_TRANSPOSE_T: return CUSPARSE_OPERATION_TRANSPOSE;
    case ATOMR_TRANSPOSE_C: return CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE;
    default: return CUSPARSE_OPERATION_NON_TRANSPOSE;
    }
}

static gboolean
fail (GError **error, gint code, const gchar *format, ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError      **error,
      gint          code,
      const gchar  *format,
      ...)
{
  va_list ap;
  gchar *message;

  va_start (ap, format);
  message = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error_literal (error, ATOMR_ERROR, code, message);
  g_free (message);
  return FALSE;
}

static guintptr
allocation_base (AtomrBuffer *b)
{
  CUdeviceptr ptr = atomr_buffer_get_ptr (b);

  return ptr ? (guintptr) ptr : (guintptr) atomr_buffer_get_host_data (b);
}

/* A view touches bytes of @b: same buffer, or the same memory wrapped
 * twice (address ranges), like atomr_tensor_overlaps() but without making
 * a view of @b on every request. */
static gboolean
overlaps_buffer (AtomrTensor *t,
                 AtomrBuffer *b)
{
  AtomrBuffer *tb = atomr_tensor_get_buffer (t);
  guint64 begin, end;
  guintptr t0, b0;

  if (b == NULL || tb == NULL)
    return FALSE;
  atomr_tensor_get_byte_range (t, &begin, &end);
  if (begin == end)
    return FALSE;
  if (tb == b)
    return TRUE;
  if (atomr_buffer_get_device (tb) != atomr_buffer_get_device (b))
    return FALSE;
  t0 = allocation_base (tb);
  b0 = allocation_base (b);
  return t0 + begin < b0 + atomr_buffer_get_byte_size (b) && b0 < t0 + end;
}

/* A tensor shares memory with one of the matrix's buffers. */
static gboolean
overlaps_matrix (AtomrTensor       *t,
                 AtomrSparseMatrix *m)
{
  return overlaps_buffer (t, atomr_sparse_matrix_get_offsets (m)) ||
         overlaps_buffer (t, atomr_sparse_matrix_get_row_indices (m)) ||
         overlaps_buffer (t, atomr_sparse_matrix_get_indices (m)) ||
         overlaps_buffer (t, atomr_sparse_matrix_get_values (m));
}

/* A contiguous 1-D view of @length elements of @dtype. */
static gboolean
dense_vector (AtomrOp      *op,
              const gchar  *opname,
              const gchar  *what,
              AtomrTensor  *t,
              gint64        length,
              AtomrDtype    dtype,
              gboolean      write,
              DenseSnap    *d,
              GError      **error)
{
  g_autofree gchar *name = g_strdup_printf ("%s: %s", opname, what);
  AtomrDevice *device = atomr_actor_get_device (atomr_op_get_actor (op));

  if (!atomr_tensor_check (t, device, name, error))
    return FALSE;
  if (atomr_tensor_get_n_dims (t) != 1)
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s must be a vector (1 dimension), not of rank %u",
                 name, atomr_tensor_get_n_dims (t));
  if (atomr_tensor_get_dim (t, 0) != length)
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s has %" G_GINT64_FORMAT
                 " elements; the operation needs %" G_GINT64_FORMAT,
                 name, atomr_tensor_get_dim (t, 0), length);
  if (length > 1 && atomr_tensor_get_stride (t, 0) != 1)
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s has stride %" G_GINT64_FORMAT
                 "; cuSPARSE dense vectors must be contiguous (stride 1)",
                 name, atomr_tensor_get_stride (t, 0));
  if (atomr_tensor_get_dtype (t) != dtype)
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s is %s; the operation needs %s", name,
                 atomr_dtype_get_name (atomr_tensor_get_dtype (t)), atomr_dtype_get_name (dtype));
  d->tensor = t;
  d->dtype = dtype;
  d->rows = length;
  d->cols = 1;
  d->ld = MAX (length, 1);
  d->batch = 1;
  return TRUE;
}

/* A 2-D view (or a 3-D batch of them when @allow_batch) of @rows × @cols
 * (-1: any) elements of @dtype. */
static gboolean
dense_matrix (AtomrOp      *op,
              const gchar  *opname,
              const gchar  *what,
              AtomrTensor  *t,
              gint64        rows,
              gint64        cols,
              AtomrDtype    dtype,
              gboolean      allow_batch,
              DenseSnap    *d,
              GError      **error)
{
  g_autofree gchar *name = g_strdup_printf ("%s: %s", opname, what);
  AtomrDevice *device = atomr_actor_get_device (atomr_op_get_actor (op));
  g_autoptr(AtomrTensor) slice = NULL;
  AtomrMatrixLayout layout;
  guint n_dims;

  if (!atomr_tensor_check (t, device, name, error))
    return FALSE;
  n_dims = atomr_tensor_get_n_dims (t);
  if (n_dims != 2 && !(allow_batch && n_dims == 3))
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s must be a matrix (2 dimensions%s), not of rank %u",
                 name, allow_batch ? ", or 3 for a batch" : "", n_dims);
  if (atomr_tensor_get_dtype (t) != dtype)
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s is %s; the operation needs %s", name,
                 atomr_dtype_get_name (atomr_tensor_get_dtype (t)), atomr_dtype_get_name (dtype));
  if (n_dims == 3)
    {
      if (atomr_tensor_get_dim (t, 0) < 1)
        return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s is a batch of %" G_GINT64_FORMAT
                     " matrices; a batch needs at least one", name, atomr_tensor_get_dim (t, 0));
      slice = atomr_tensor_select (t, 0, 0, error);
      if (slice == NULL)
        return FALSE;
    }
  else
    slice = g_object_ref (t);
  if (!atomr_tensor_get_matrix_layout (slice, name, &layout, error))
    return FALSE;

  d->tensor = t;
  d->dtype = dtype;
  d->rows = atomr_tensor_get_dim (slice, 0);
  d->cols = atomr_tensor_get_dim (slice, 1);
  d->ld = layout.ld;
  d->order = layout.transposed ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
  d->batch = n_dims == 3 ? atomr_tensor_get_dim (t, 0) : 1;
  d->batch_stride = n_dims == 3 ? atomr_tensor_get_stride (t, 0) : 0;
  if ((rows >= 0 && d->rows != rows) || (cols >= 0 && d->cols != cols))
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s is %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 "; the operation needs %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT,
                 name, d->rows, d->cols, rows >= 0 ? rows : d->rows, cols >= 0 ? cols : d->cols);
  if (d->batch > 1)
    {
      gint64 extent = d->ld * (d->order == CUSPARSE_ORDER_COL ? d->cols : d->rows);
      if (d->batch_stride < extent)
        return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s has batch stride %" G_GINT64_FORMAT
                     "; the matrices of a batch must not overlap (stride ≥ %" G_GINT64_FORMAT ")",
                     name, d->batch_stride, extent);
    }
  return TRUE;
}

static void
dense_register (AtomrOp   *op,
                DenseSnap *d,
                gboolean   write)
{
  atomr_op_keep (op, d->tensor);
  atomr_op_read_tensor (op, d->tensor);
  if (write)
    atomr_op_write_tensor (op, d->tensor);
}

static gpointer
dense_ptr (const DenseSnap *d)
{
  return (gpointer) (guintptr) atomr_tensor_get_ptr (d->tensor);
}

static gboolean
dnvec_create (const DenseSnap       *d,
              cusparseDnVecDescr_t  *out,
              GError               **error)
{
  return atomr_sparse_status_check (cusparseCreateDnVec (out, d->rows, dense_ptr (d),
                                                         atomr_sparse_cuda_type (d->dtype)),
                                    "cusparseCreateDnVec", error);
}

static gboolean
dnmat_create (const DenseSnap       *d,
              cusparseDnMatDescr_t  *out,
              GError               **error)
{
  if (!atomr_sparse_status_check (cusparseCreateDnMat (out, d->rows, d->cols, d->ld, dense_ptr (d),
                                                       atomr_sparse_cuda_type (d->dtype),
                                                       (cusparseOrder_t) d->order),
                                  "cusparseCreateDnMat", error))
    return FALSE;
  if (d->batch > 1 &&
      !atomr_sparse_status_check (cusparseDnMatSetStridedBatch (*out, (int) d->batch, d->batch_stride),
                                  "cusparseDnMatSetStridedBatch", error))
    {
      cusparseDestroyDnMat (*out);
      *out = NULL;
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_matrix_arg (AtomrOp           *op,
                  const gchar       *opname,
                  const gchar       *what,
                  AtomrSparseMatrix *m,
                  GError           **error)
{
  return atomr_sparse_matrix_check (m, atomr_actor_get_device (atomr_op_get_actor (op)),
                                    opname, what, error);
}

static gboolean
check_format (const gchar       *opname,
              AtomrSparseMatrix *m,
              guint              allowed,   /* bit per AtomrSparseFormat */
              const gchar       *which,
              GError           **error)
{
  AtomrSparseFormat f = atomr_sparse_matrix_get_format (m);

  if (allowed & (1u << f))
    return TRUE;
  return fail (error, ATOMR_ERROR_NOT_SUPPORTED, "%s: the matrix is %s; cuSPARSE's %s takes %s",
               opname, atomr_sparse_format_short[f], opname, which);
}

#define FMT(f) (1u << ATOMR_SPARSE_FORMAT_##f)

static SparseRequest *
request_new (AtomrOp     *op,
             const gchar *opname)
{
  SparseRequest *r = atomr_op_alloc_data (op, sizeof (SparseRequest), atomr_sparse_request_clear);

  r->opname = opname;
  return r;
}

static guint64
plan_key (gint op_a, gint op_b, AtomrDtype dtype, gint extra)
{
  return (guint64) op_a | ((guint64) op_b << 8) | ((guint64) dtype << 16) | ((guint64) extra << 32);
}

/* A key for what an analysis was made with besides the matrix: cuSPARSE
 * documents the analysis for the alpha and dense operands it was given, so
 * another alpha or other vectors make a new one (iterative solvers re-use
 * the same buffers and keep hitting the cache). */
static guint64
mix_key (guint64 h, guint64 v)
{
  h ^= v + G_GUINT64_CONSTANT (0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
  return h;
}

static guint64
alpha_bits (gdouble alpha)
{
  guint64 bits;

  memcpy (&bits, &alpha, sizeof bits);
  return bits;
}

/* A device buffer a plan keeps (an analysis), allocated on the actor's
 * context: the actor's stream waits for the allocation. */
static AtomrBuffer *
late_buffer (AtomrOp     *op,
             AtomrDtype   dtype,
             gint64       n,
             GError     **error)
{
  AtomrDevice *device = atomr_actor_get_device (atomr_op_get_actor (op));
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, dtype, MAX (n, 1), error);
  g_autoptr(AtomrStream) utility = NULL;
  g_autoptr(AtomrFence) fence = NULL;

  if (buffer == NULL)
    return NULL;
  utility = atomr_device_get_utility_stream (device, error);
  if (utility == NULL)
    return NULL;
  fence = atomr_stream_record (utility, ATOMR_EVENT_PLAIN, error);
  if (fence == NULL || !atomr_stream_wait (atomr_op_get_stream (op), fence, error))
    return NULL;
  return g_steal_pointer (&buffer);
}

AtomrBuffer *
atomr_sparse_late_buffer (AtomrOp     *op,
                          AtomrDtype   dtype,
                          gint64       n,
                          GError     **error)
{
  return late_buffer (op, dtype, n, error);
}

/* ------------------------------------------------------------------ */
/* SpMV                                                                 */

static gboolean
spmv_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  cusparseSpMatDescr_t mat = NULL;
  cusparseDnVecDescr_t x = NULL, y = NULL;
  cudaDataType ct = compute_type (r->a.value_dtype);
  AtomrSparsePlan *plan;
  Scalar alpha, beta;
  gpointer work = NULL;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->y.rows == 0)
    return TRUE;
  if (r->a.nnz == 0 || r->x.rows == 0)
    {
      /* op(A)·x is zero: y = beta·y, done here rather than trusting every
       * cuSPARSE kernel with an empty matrix.  beta = 0 clears y (NaNs
       * included), as BLAS does. */
      if (r->beta == 0.0)
        return atomr_cuda_check (ATOMR_CU->cuMemsetD8Async ((CUdeviceptr) (guintptr) dense_ptr (&r->y), 0,
                                                             r->y.rows * atomr_dtype_get_size (r->y.dtype),
                                                             atomr_op_get_cu_stream (op)),
                                 "cuMemsetD8Async", error);
      if (r->beta == 1.0)
        return TRUE;
      return atomr_sparse_scal (self, op, r->y.dtype, dense_ptr (&r->y), r->y.rows, r->beta, error);
    }
  scalar (r->a.value_dtype, r->alpha, &alpha);
  scalar (r->a.value_dtype, r->beta, &beta);
  if (!dnvec_create (&r->x, &x, error) || !dnvec_create (&r->y, &y, error))
    goto out;

  plan = atomr_sparse_matrix_get_plan (r->a.matrix, self->id, PLAN_SPMV,
                                       plan_key (r->op_a, 0, r->a.value_dtype, 0));
  if (r->a.format == ATOMR_SPARSE_FORMAT_CSR)
    {
      /* CSR: the matrix descriptor and a buffer of its own live on the
       * plan, preprocessed once per structure (cusparseSpMV_preprocess);
       * later calls — other vectors, scalars or values — reuse both. */
      if (plan->mat_descr == NULL || plan->analysis == NULL || atomr_buffer_is_stale (plan->analysis))
        {
          gsize size = 0;

          if (plan->mat_descr && plan->mat_descr_free)
            plan->mat_descr_free (plan->mat_descr);
          plan->mat_descr = NULL;
          g_clear_object (&plan->analysis);
          if (!atomr_sparse_spmat_create (&r->a, &mat, error))
            goto out;
          plan->mat_descr = g_steal_pointer (&mat);
          plan->mat_descr_free = atomr_sparse_spmat_destroy;
          if (!atomr_sparse_status_check (cusparseSpMV_bufferSize (self->handle, to_op (r->op_a), &alpha,
                                                                   plan->mat_descr, x, &beta, y, ct,
                                                                   CUSPARSE_SPMV_ALG_DEFAULT, &size),
                                          "cusparseSpMV_bufferSize", error))
            goto out;
          plan->buffer_size = size;
          plan->analysis = late_buffer (op, ATOMR_DTYPE_U8, (gint64) size, error);
          if (plan->analysis == NULL ||
              !atomr_sparse_status_check (cusparseSpMV_preprocess (self->handle, to_op (r->op_a), &alpha,
                                                                   plan->mat_descr, x, &beta, y, ct,
                                                                   CUSPARSE_SPMV_ALG_DEFAULT,
                                                                   atomr_sparse_dptr (plan->analysis)),
                                          "cusparseSpMV_preprocess", error))
            {
              g_clear_object (&plan->analysis);
              goto out;
            }
          plan->values_serial = r->a.values_serial;
          plan->sized = TRUE;
        }
      else if (plan->values_serial != r->a.values_serial)
        {
          if (!atomr_sparse_status_check (cusparseSpMatSetValues (plan->mat_descr, atomr_sparse_dptr (r->a.values)),
                                          "cusparseSpMatSetValues", error))
            goto out;
          plan->values_serial = r->a.values_serial;
        }
      /* the buffer must stay alive until the product has run */
      atomr_op_keep (op, plan->analysis);
      ok = atomr_sparse_status_check (cusparseSpMV (self->handle, to_op (r->op_a), &alpha, plan->mat_descr, x,
                                                    &beta, y, ct, CUSPARSE_SPMV_ALG_DEFAULT,
                                                    atomr_sparse_dptr (plan->analysis)),
                                      "cusparseSpMV", error);
      goto out;
    }

  if (!atomr_sparse_spmat_create (&r->a, &mat, error))
    goto out;
  if (!plan->sized)
    {
      gsize size = 0;
      if (!atomr_sparse_status_check (cusparseSpMV_bufferSize (self->handle, to_op (r->op_a), &alpha, mat, x,
                                                               &beta, y, ct, CUSPARSE_SPMV_ALG_DEFAULT, &size),
                                      "cusparseSpMV_bufferSize", error))
        goto out;
      plan->buffer_size = size;
      plan->sized = TRUE;
    }
  if (!atomr_sparse_workspace_reserve (self, atomr_op_get_cu_stream (op), plan->buffer_size, &work, error))
    goto out;
  ok = atomr_sparse_status_check (cusparseSpMV (self->handle, to_op (r->op_a), &alpha, mat, x, &beta, y, ct,
                                                CUSPARSE_SPMV_ALG_DEFAULT, work),
                                  "cusparseSpMV", error);
out:
  if (x) cusparseDestroyDnVec (x);
  if (y) cusparseDestroyDnVec (y);
  atomr_sparse_spmat_destroy (mat);
  return ok;
}

/**
 * atomr_sparse_actor_spmv_async:
 * @self: an [class@Atomr.SparseActor]
 * @op_a: how to read @a
 * @alpha: alpha (real; for complex dtypes the imaginary part is 0)
 * @a: the sparse matrix A (CSR, CSC, COO or BSR)
 * @x: a contiguous vector of columns(op(A)) elements, the value dtype of @a
 * @beta: beta; @y is read only when beta ≠ 0
 * @y: a contiguous vector of rows(op(A)) elements; must not overlap @x or @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is computed
 * @user_data: data for @callback
 *
 * y = alpha·op(A)·x + beta·y (cusparseSpMV).  f16 and bf16 compute in
 * f32.  The buffer size is cached on @a for this actor; for a CSR @a, so
 * are its cuSPARSE descriptor and a buffer preprocessed once per structure
 * (cusparseSpMV_preprocess), which later products with other vectors,
 * scalars or values (atomr_sparse_matrix_set_values()) reuse.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_spmv_async (AtomrSparseActor    *self,
                               AtomrTranspose       op_a,
                               gdouble              alpha,
                               AtomrSparseMatrix   *a,
                               AtomrTensor         *x,
                               gdouble              beta,
                               AtomrTensor         *y,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;
  gint64 m, n;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "spmv", atomr_sparse_actor_spmv_async, cancellable, callback, user_data);
  r = request_new (op, "spmv");
  if (!check_matrix_arg (op, "spmv", "a", a, &error) ||
      !atomr_check_enum ("spmv", "op_a", op_a, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error) ||
      !check_format ("spmv", a, FMT (CSR) | FMT (CSC) | FMT (COO) | FMT (BSR), "CSR, CSC, COO or BSR", &error))
    return atomr_op_fail (op, error);
  m = op_a == ATOMR_TRANSPOSE_N ? atomr_sparse_matrix_get_rows (a) : atomr_sparse_matrix_get_cols (a);
  n = op_a == ATOMR_TRANSPOSE_N ? atomr_sparse_matrix_get_cols (a) : atomr_sparse_matrix_get_rows (a);
  if (!dense_vector (op, "spmv", "x", x, n, atomr_sparse_matrix_get_value_dtype (a), FALSE, &r->x, &error) ||
      !dense_vector (op, "spmv", "y", y, m, atomr_sparse_matrix_get_value_dtype (a), TRUE, &r->y, &error))
    return atomr_op_fail (op, error);
  if (atomr_tensor_overlaps (x, y) || overlaps_matrix (y, a))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spmv: y shares memory with %s; the output must not alias an input",
                                           atomr_tensor_overlaps (x, y) ? "x" : "a"));
  r->op_a = op_a;
  r->alpha = alpha;
  r->beta = beta;
  atomr_sparse_snap_take (op, &r->a, a, FALSE);
  dense_register (op, &r->x, FALSE);
  dense_register (op, &r->y, TRUE);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, spmv_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_spmv_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.spmv_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_spmv_finish (AtomrSparseActor  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_spmv_async, error);
}

/* ------------------------------------------------------------------ */
/* SpMM                                                                 */

static gboolean
spmm_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  cusparseSpMatDescr_t mat = NULL;
  cusparseDnMatDescr_t b = NULL, c = NULL;
  cudaDataType ct = compute_type (r->a.value_dtype);
  AtomrSparsePlan *plan;
  Scalar alpha, beta;
  gpointer work = NULL;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->z.rows == 0 || r->z.cols == 0)
    return TRUE;
  scalar (r->a.value_dtype, r->alpha, &alpha);
  scalar (r->a.value_dtype, r->beta, &beta);
  if (!atomr_sparse_spmat_create (&r->a, &mat, error) ||
      !dnmat_create (&r->x, &b, error) || !dnmat_create (&r->z, &c, error))
    goto out;
  if (r->z.batch > 1)
    {
      /* One A for every matrix of the batch: batch stride 0. */
      cusparseStatus_t st = r->a.format == ATOMR_SPARSE_FORMAT_COO
        ? cusparseCooSetStridedBatch (mat, (int) r->z.batch, 0)
        : cusparseCsrSetStridedBatch (mat, (int) r->z.batch, 0, 0);
      if (!atomr_sparse_status_check (st, "cusparseCsrSetStridedBatch", error))
        goto out;
    }

  plan = atomr_sparse_matrix_get_plan (r->a.matrix, self->id, PLAN_SPMM,
                                       plan_key (r->op_a, r->op_b, r->a.value_dtype, 0));
  /* The size depends on B and C too: cached only for the last shape. */
  if (!plan->sized || plan->key2 != (guint64) r->z.cols * 2 + (r->z.batch > 1) ||
      plan->key3 != (guint64) r->x.order * 4 + r->z.order)
    {
      gsize size = 0;
      if (!atomr_sparse_status_check (cusparseSpMM_bufferSize (self->handle, to_op (r->op_a), to_op (r->op_b),
                                                               &alpha, mat, b, &beta, c, ct,
                                                               CUSPARSE_SPMM_ALG_DEFAULT, &size),
                                      "cusparseSpMM_bufferSize", error))
        goto out;
      plan->buffer_size = size;
      plan->key2 = (guint64) r->z.cols * 2 + (r->z.batch > 1);
      plan->key3 = (guint64) r->x.order * 4 + r->z.order;
      plan->sized = TRUE;
    }
  if (!atomr_sparse_workspace_reserve (self, atomr_op_get_cu_stream (op), plan->buffer_size, &work, error))
    goto out;
  ok = atomr_sparse_status_check (cusparseSpMM (self->handle, to_op (r->op_a), to_op (r->op_b), &alpha, mat, b,
                                                &beta, c, ct, CUSPARSE_SPMM_ALG_DEFAULT, work),
                                  "cusparseSpMM", error);
out:
  if (b) cusparseDestroyDnMat (b);
  if (c) cusparseDestroyDnMat (c);
  atomr_sparse_spmat_destroy (mat);
  return ok;
}

/**
 * atomr_sparse_actor_spmm_async:
 * @self: an [class@Atomr.SparseActor]
 * @op_a: how to read @a
 * @op_b: how to read @b
 * @alpha: alpha (real)
 * @a: the sparse matrix A (CSR, CSC, COO, BSR or Blocked-ELL)
 * @b: dense B: op(B) is columns(op(A)) × n; 2-D, or 3-D for a batch
 * @beta: beta; @c is read only when beta ≠ 0
 * @c: dense C, rows(op(A)) × n; 3-D (a batch, one C per B) when @b is
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C is computed
 * @user_data: data for @callback
 *
 * C = alpha·op(A)·op(B) + beta·C (cusparseSpMM).  B and C may be column-
 * or row-major views.  A batch (3-D @b and @c, the first dimension being
 * the batch) multiplies the one A with every B (CSR and COO only).
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_spmm_async (AtomrSparseActor    *self,
                               AtomrTranspose       op_a,
                               AtomrTranspose       op_b,
                               gdouble              alpha,
                               AtomrSparseMatrix   *a,
                               AtomrTensor         *b,
                               gdouble              beta,
                               AtomrTensor         *c,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;
  AtomrDtype dt;
  gint64 m, k, n;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "spmm", atomr_sparse_actor_spmm_async, cancellable, callback, user_data);
  r = request_new (op, "spmm");
  if (!check_matrix_arg (op, "spmm", "a", a, &error) ||
      !atomr_check_enum ("spmm", "op_a", op_a, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error) ||
      !atomr_check_enum ("spmm", "op_b", op_b, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error))
    return atomr_op_fail (op, error);
  dt = atomr_sparse_matrix_get_value_dtype (a);
  m = op_a == ATOMR_TRANSPOSE_N ? atomr_sparse_matrix_get_rows (a) : atomr_sparse_matrix_get_cols (a);
  k = op_a == ATOMR_TRANSPOSE_N ? atomr_sparse_matrix_get_cols (a) : atomr_sparse_matrix_get_rows (a);
  if (!dense_matrix (op, "spmm", "c", c, m, -1, dt, TRUE, &r->z, &error))
    return atomr_op_fail (op, error);
  n = r->z.cols;
  if (!dense_matrix (op, "spmm", "b", b, op_b == ATOMR_TRANSPOSE_N ? k : n,
                     op_b == ATOMR_TRANSPOSE_N ? n : k, dt, TRUE, &r->x, &error))
    return atomr_op_fail (op, error);
  if (r->x.batch != r->z.batch)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spmm: b is a batch of %" G_GINT64_FORMAT " and c of %" G_GINT64_FORMAT
                                           "; they must match", r->x.batch, r->z.batch));
  if (r->z.batch > 1 &&
      !check_format ("spmm", a, FMT (CSR) | FMT (COO), "CSR or COO for a batch", &error))
    return atomr_op_fail (op, error);
  if (r->z.batch > G_MAXINT32)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spmm: a batch of %" G_GINT64_FORMAT " is more than %d",
                                           r->z.batch, G_MAXINT32));
  if (atomr_tensor_overlaps (b, c) || overlaps_matrix (c, a))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spmm: c shares memory with %s; the output must not alias an input",
                                           atomr_tensor_overlaps (b, c) ? "b" : "a"));
  r->op_a = op_a;
  r->op_b = op_b;
  r->alpha = alpha;
  r->beta = beta;
  atomr_sparse_snap_take (op, &r->a, a, FALSE);
  dense_register (op, &r->x, FALSE);
  dense_register (op, &r->z, TRUE);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, spmm_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_spmm_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.spmm_async].
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_spmm_finish (AtomrSparseActor  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_spmm_async, error);
}

/* ------------------------------------------------------------------ */
/* SpGEMM                                                               */

static void
spgemm_descr_destroy (gpointer descr)
{
  cusparseSpGEMM_destroyDescr (descr);
}

static gboolean
spgemm_enqueue (AtomrOp  *op,
                GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  CUstream stream = atomr_op_get_cu_stream (op);
  cusparseSpMatDescr_t ma = NULL, mb = NULL, mc = NULL;
  cusparseSpGEMMDescr_t desc = NULL;
  cusparseOperation_t n = CUSPARSE_OPERATION_NON_TRANSPOSE;
  cudaDataType ct = compute_type (r->a.value_dtype);
  cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
  Scalar alpha, beta;
  gsize size1 = 0, size2 = 0;
  gpointer buf1 = NULL;
  CUdeviceptr buf2 = 0;
  int64_t rows_c, cols_c, nnz_c;
  g_autoptr(AtomrBuffer) idx = NULL, val = NULL;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->a.nnz == 0 || r->b.nnz == 0 || r->a.rows == 0 || r->b.cols == 0)
    {
      /* An empty product: no need to ask cuSPARSE (which may refuse). */
      if (!atomr_cuda_check (ATOMR_CU->cuMemsetD8Async (atomr_buffer_get_ptr (r->result_offsets), 0,
                                                         atomr_buffer_get_byte_size (r->result_offsets), stream),
                             "cuMemsetD8Async", error))
        return FALSE;
      idx = late_buffer (op, r->a.index_dtype, 0, error);
      val = idx ? late_buffer (op, r->a.value_dtype, 0, error) : NULL;
      if (val == NULL)
        return FALSE;
      r->result = atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_CSR, r->a.rows, r->b.cols, 0, 1, 0,
                                                    r->result_offsets, NULL, idx, val, error);
      return r->result != NULL;
    }
  scalar (r->a.value_dtype, r->alpha, &alpha);
  scalar (r->a.value_dtype, 0.0, &beta);
  if (!atomr_sparse_spmat_create (&r->a, &ma, error) || !atomr_sparse_spmat_create (&r->b, &mb, error) ||
      !atomr_sparse_status_check (cusparseCreateCsr (&mc, r->a.rows, r->b.cols, 0,
                                                     atomr_sparse_dptr (r->result_offsets), NULL, NULL,
                                                     atomr_sparse_index_type (r->a.index_dtype),
                                                     atomr_sparse_index_type (r->a.index_dtype),
                                                     CUSPARSE_INDEX_BASE_ZERO,
                                                     atomr_sparse_cuda_type (r->a.value_dtype)),
                                  "cusparseCreateCsr", error) ||
      !atomr_sparse_status_check (cusparseSpGEMM_createDescr (&desc), "cusparseSpGEMM_createDescr", error))
    goto out;

  /* Phase 1: work estimation, asking for its buffer size first. */
  if (!atomr_sparse_status_check (cusparseSpGEMM_workEstimation (self->handle, n, n, &alpha, ma, mb, &beta, mc,
                                                                 ct, alg, desc, &size1, NULL),
                                  "cusparseSpGEMM_workEstimation", error) ||
      !atomr_sparse_workspace_reserve (self, stream, size1, &buf1, error) ||
      !atomr_sparse_status_check (cusparseSpGEMM_workEstimation (self->handle, n, n, &alpha, ma, mb, &beta, mc,
                                                                 ct, alg, desc, &size1, buf1),
                                  "cusparseSpGEMM_workEstimation", error))
    goto out;
  /* Phase 2: compute, in a second buffer that lives with the first one
   * (stream-ordered, freed after the copy). */
  if (!atomr_sparse_status_check (cusparseSpGEMM_compute (self->handle, n, n, &alpha, ma, mb, &beta, mc,
                                                          ct, alg, desc, &size2, NULL),
                                  "cusparseSpGEMM_compute", error))
    goto out;
  if (size2 && !atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&buf2, size2, stream), "cuMemAllocAsync", error))
    goto out;
  if (!atomr_sparse_status_check (cusparseSpGEMM_compute (self->handle, n, n, &alpha, ma, mb, &beta, mc,
                                                          ct, alg, desc, &size2, (gpointer) (guintptr) buf2),
                                  "cusparseSpGEMM_compute", error) ||
      !atomr_sparse_status_check (cusparseSpMatGetSize (mc, &rows_c, &cols_c, &nnz_c),
                                  "cusparseSpMatGetSize", error))
    goto out;

  idx = late_buffer (op, r->a.index_dtype, nnz_c, error);
  if (idx == NULL)
    goto out;
  val = late_buffer (op, r->a.value_dtype, nnz_c, error);
  if (val == NULL)
    goto out;
  if (!atomr_sparse_status_check (cusparseCsrSetPointers (mc, atomr_sparse_dptr (r->result_offsets),
                                                          atomr_sparse_dptr (idx), atomr_sparse_dptr (val)),
                                  "cusparseCsrSetPointers", error) ||
      !atomr_sparse_status_check (cusparseSpGEMM_copy (self->handle, n, n, &alpha, ma, mb, &beta, mc, ct, alg, desc),
                                  "cusparseSpGEMM_copy", error))
    goto out;
  r->result = atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_CSR, r->a.rows, r->b.cols, nnz_c, 1, 0,
                                                r->result_offsets, NULL, idx, val, error);
  ok = r->result != NULL;
out:
  if (buf2)
    ATOMR_CU->cuMemFreeAsync (buf2, stream);
  if (desc)
    spgemm_descr_destroy (desc);
  atomr_sparse_spmat_destroy (mc);
  atomr_sparse_spmat_destroy (ma);
  atomr_sparse_spmat_destroy (mb);
  return ok;
}

/**
 * atomr_sparse_actor_spgemm_async:
 * @self: an [class@Atomr.SparseActor]
 * @alpha: alpha (real)
 * @a: CSR matrix A
 * @b: CSR matrix B, columns(A) rows, the dtypes of @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with C
 * @user_data: data for @callback
 *
 * C = alpha·A·B into a new CSR matrix (cusparseSpGEMM).  The actor runs
 * the two-phase memory estimation (work estimation, then compute, each
 * asking for its buffer first), learns nnz(C) and allocates C itself: that
 * step waits for the stream on the actor's context, as cuSPARSE requires.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_spgemm_async (AtomrSparseActor    *self,
                                 gdouble              alpha,
                                 AtomrSparseMatrix   *a,
                                 AtomrSparseMatrix   *b,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "spgemm", atomr_sparse_actor_spgemm_async, cancellable, callback, user_data);
  r = request_new (op, "spgemm");
  if (!check_matrix_arg (op, "spgemm", "a", a, &error) || !check_matrix_arg (op, "spgemm", "b", b, &error) ||
      !check_format ("spgemm", a, FMT (CSR), "CSR", &error) ||
      !check_format ("spgemm", b, FMT (CSR), "CSR", &error))
    return atomr_op_fail (op, error);
  if (atomr_sparse_matrix_get_cols (a) != atomr_sparse_matrix_get_rows (b))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spgemm: a has %" G_GINT64_FORMAT " columns but b has %"
                                           G_GINT64_FORMAT " rows", atomr_sparse_matrix_get_cols (a),
                                           atomr_sparse_matrix_get_rows (b)));
  if (atomr_sparse_matrix_get_value_dtype (a) != atomr_sparse_matrix_get_value_dtype (b) ||
      atomr_sparse_matrix_get_index_dtype (a) != atomr_sparse_matrix_get_index_dtype (b))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spgemm: a is %s/%s but b is %s/%s; values and indices must match",
                                           atomr_dtype_get_name (atomr_sparse_matrix_get_value_dtype (a)),
                                           atomr_dtype_get_name (atomr_sparse_matrix_get_index_dtype (a)),
                                           atomr_dtype_get_name (atomr_sparse_matrix_get_value_dtype (b)),
                                           atomr_dtype_get_name (atomr_sparse_matrix_get_index_dtype (b))));
  r->result_offsets = atomr_buffer_new (atomr_actor_get_device (ATOMR_ACTOR (self)),
                                        atomr_sparse_matrix_get_index_dtype (a),
                                        atomr_sparse_matrix_get_rows (a) + 1, &error);
  if (r->result_offsets == NULL)
    return atomr_op_fail (op, error);
  r->alpha = alpha;
  atomr_sparse_snap_take (op, &r->a, a, FALSE);
  atomr_sparse_snap_take (op, &r->b, b, FALSE);
  atomr_op_write (op, r->result_offsets);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, spgemm_enqueue);
  atomr_op_set_complete (op, atomr_sparse_complete_result);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_spgemm_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.spgemm_async].
 *
 * Returns: (transfer full): C, a new CSR matrix, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_actor_spgemm_finish (AtomrSparseActor  *self,
                                  GAsyncResult      *result,
                                  GError           **error)
{
  return atomr_op_finish_pointer (self, result, atomr_sparse_actor_spgemm_async, error);
}

/* ------------------------------------------------------------------ */
/* SpSV and SpSM: analysis cached on the matrix                         */

static void
spsv_descr_destroy (gpointer descr)
{
  cusparseSpSV_destroyDescr (descr);
}

static void
spsm_descr_destroy (gpointer descr)
{
  cusparseSpSM_destroyDescr (descr);
}

/* The plan's own descriptor of A with its fill mode and diagonal. */
static gboolean
triangular_matrix (SparseRequest         *r,
                   cusparseSpMatDescr_t  *out,
                   GError               **error)
{
  cusparseFillMode_t fill = r->fill == ATOMR_FILL_MODE_UPPER ? CUSPARSE_FILL_MODE_UPPER
                                                             : CUSPARSE_FILL_MODE_LOWER;
  cusparseDiagType_t diag = r->diag == ATOMR_DIAG_UNIT ? CUSPARSE_DIAG_TYPE_UNIT
                                                       : CUSPARSE_DIAG_TYPE_NON_UNIT;

  if (!atomr_sparse_spmat_create (&r->a, out, error))
    return FALSE;
  if (!atomr_sparse_status_check (cusparseSpMatSetAttribute (*out, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill),
                                  "cusparseSpMatSetAttribute", error) ||
      !atomr_sparse_status_check (cusparseSpMatSetAttribute (*out, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag),
                                  "cusparseSpMatSetAttribute", error))
    {
      atomr_sparse_spmat_destroy (*out);
      *out = NULL;
      return FALSE;
    }
  return TRUE;
}

/* A plan whose analysis is still usable: same structure (the matrix
 * emptied it otherwise), analysis memory of this context generation, same
 * operand shape.  New values are taken in with updateMatrix. */
static gboolean
plan_usable (AtomrSparsePlan *plan,
             guint64          shape_key)
{
  return plan->descr != NULL && plan->analysis != NULL && !atomr_buffer_is_stale (plan->analysis) &&
         plan->key2 == shape_key;
}

static gboolean
spsv_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  cusparseDnVecDescr_t x = NULL, y = NULL;
  cudaDataType ct = compute_type (r->a.value_dtype);
  cusparseOperation_t opa = to_op (r->op_a);
  AtomrSparsePlan *plan;
  guint64 shape_key;
  Scalar alpha;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->y.rows == 0)
    return TRUE;
  scalar (r->a.value_dtype, r->alpha, &alpha);
  if (!dnvec_create (&r->x, &x, error) || !dnvec_create (&r->y, &y, error))
    goto out;

  shape_key = mix_key (mix_key (alpha_bits (r->alpha), (guint64) (guintptr) dense_ptr (&r->x)),
                       (guint64) (guintptr) dense_ptr (&r->y));
  plan = atomr_sparse_matrix_get_plan (r->a.matrix, self->id, PLAN_SPSV,
                                       plan_key (r->op_a, 0, r->a.value_dtype, r->fill * 2 + r->diag));
  if (!plan_usable (plan, shape_key))
    {
      cusparseSpMatDescr_t mat = NULL;
      cusparseSpSVDescr_t descr = NULL;
      gsize size = 0;

      if (plan->descr && plan->descr_free)
        plan->descr_free (plan->descr);
      if (plan->mat_descr && plan->mat_descr_free)
        plan->mat_descr_free (plan->mat_descr);
      plan->descr = plan->mat_descr = NULL;
      g_clear_object (&plan->analysis);
      if (!triangular_matrix (r, &mat, error))
        goto out;
      plan->mat_descr = mat;
      plan->mat_descr_free = atomr_sparse_spmat_destroy;
      if (!atomr_sparse_status_check (cusparseSpSV_createDescr (&descr), "cusparseSpSV_createDescr", error))
        goto out;
      plan->descr = descr;
      plan->descr_free = spsv_descr_destroy;
      if (!atomr_sparse_status_check (cusparseSpSV_bufferSize (self->handle, opa, &alpha, mat, x, y, ct,
                                                               CUSPARSE_SPSV_ALG_DEFAULT, descr, &size),
                                      "cusparseSpSV_bufferSize", error))
        goto out;
      plan->buffer_size = size;
      plan->analysis = late_buffer (op, ATOMR_DTYPE_U8, (gint64) size, error);
      if (plan->analysis == NULL ||
          !atomr_sparse_status_check (cusparseSpSV_analysis (self->handle, opa, &alpha, mat, x, y, ct,
                                                             CUSPARSE_SPSV_ALG_DEFAULT, descr,
                                                             atomr_sparse_dptr (plan->analysis)),
                                      "cusparseSpSV_analysis", error))
        {
          g_clear_object (&plan->analysis);
          goto out;
        }
      plan->key2 = shape_key;
      plan->values_serial = r->a.values_serial;
      plan->sized = TRUE;
    }
  else if (plan->values_serial != r->a.values_serial)
    {
      /* Same structure, new values: update the analysis in place. */
      if (!atomr_sparse_status_check (cusparseSpMatSetValues (plan->mat_descr, atomr_sparse_dptr (r->a.values)),
                                      "cusparseSpMatSetValues", error) ||
          !atomr_sparse_status_check (cusparseSpSV_updateMatrix (self->handle, plan->descr,
                                                                 atomr_sparse_dptr (r->a.values),
                                                                 CUSPARSE_SPSV_UPDATE_GENERAL),
                                      "cusparseSpSV_updateMatrix", error))
        goto out;
      plan->values_serial = r->a.values_serial;
    }
  /* The analysis must stay alive until the solve has run. */
  atomr_op_keep (op, plan->analysis);
  ok = atomr_sparse_status_check (cusparseSpSV_solve (self->handle, opa, &alpha, plan->mat_descr, x, y, ct,
                                                      CUSPARSE_SPSV_ALG_DEFAULT, plan->descr),
                                  "cusparseSpSV_solve", error);
out:
  if (x) cusparseDestroyDnVec (x);
  if (y) cusparseDestroyDnVec (y);
  return ok;
}

static gboolean
check_triangular (const gchar        *opname,
                  AtomrSparseMatrix  *a,
                  AtomrTranspose      op_a,
                  AtomrFillMode       fill,
                  AtomrDiag           diag,
                  GError            **error)
{
  if (!atomr_check_enum (opname, "op_a", op_a, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", error) ||
      !atomr_check_enum (opname, "fill", fill, ATOMR_FILL_MODE_UPPER + 1, "AtomrFillMode", error) ||
      !atomr_check_enum (opname, "diag", diag, ATOMR_DIAG_UNIT + 1, "AtomrDiag", error) ||
      !check_format (opname, a, FMT (CSR) | FMT (COO), "CSR or COO", error))
    return FALSE;
  if (atomr_sparse_matrix_get_rows (a) != atomr_sparse_matrix_get_cols (a))
    return fail (error, ATOMR_ERROR_INVALID_ARGUMENT, "%s: a is %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 "; a triangular solve needs a square matrix", opname,
                 atomr_sparse_matrix_get_rows (a), atomr_sparse_matrix_get_cols (a));
  return TRUE;
}

/**
 * atomr_sparse_actor_spsv_async:
 * @self: an [class@Atomr.SparseActor]
 * @op_a: how to read @a
 * @fill: which triangle of @a holds the matrix
 * @diag: whether the diagonal is taken as ones
 * @alpha: alpha (real)
 * @a: a square CSR or COO matrix
 * @x: the right-hand side, a contiguous vector of rows(A) elements
 * @y: the solution, a contiguous vector of rows(A) elements; must not
 *   overlap @x or @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is computed
 * @user_data: data for @callback
 *
 * Solves op(A)·y = alpha·x (cusparseSpSV).  The analysis is made on the
 * first solve and cached on @a (per actor, operation, fill mode and
 * diagonal); later solves with the same alpha, @x and @y (the usual case
 * in an iterative solver) skip it, others make it again.  New values
 * ([method@Atomr.SparseMatrix.set_values]) update it in place; a structure
 * change ([method@Atomr.SparseMatrix.structure_changed]) makes it again.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_spsv_async (AtomrSparseActor    *self,
                               AtomrTranspose       op_a,
                               AtomrFillMode        fill,
                               AtomrDiag            diag,
                               gdouble              alpha,
                               AtomrSparseMatrix   *a,
                               AtomrTensor         *x,
                               AtomrTensor         *y,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;
  gint64 n;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "spsv", atomr_sparse_actor_spsv_async, cancellable, callback, user_data);
  r = request_new (op, "spsv");
  if (!check_matrix_arg (op, "spsv", "a", a, &error) ||
      !check_triangular ("spsv", a, op_a, fill, diag, &error))
    return atomr_op_fail (op, error);
  n = atomr_sparse_matrix_get_rows (a);
  if (!dense_vector (op, "spsv", "x", x, n, atomr_sparse_matrix_get_value_dtype (a), FALSE, &r->x, &error) ||
      !dense_vector (op, "spsv", "y", y, n, atomr_sparse_matrix_get_value_dtype (a), TRUE, &r->y, &error))
    return atomr_op_fail (op, error);
  if (atomr_tensor_overlaps (x, y) || overlaps_matrix (y, a))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spsv: y shares memory with %s; the output must not alias an input",
                                           atomr_tensor_overlaps (x, y) ? "x" : "a"));
  r->op_a = op_a;
  r->fill = fill;
  r->diag = diag;
  r->alpha = alpha;
  atomr_sparse_snap_take (op, &r->a, a, FALSE);
  dense_register (op, &r->x, FALSE);
  dense_register (op, &r->y, TRUE);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, spsv_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_spsv_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.spsv_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_spsv_finish (AtomrSparseActor  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_spsv_async, error);
}

static gboolean
spsm_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  cusparseDnMatDescr_t b = NULL, c = NULL;
  cudaDataType ct = compute_type (r->a.value_dtype);
  cusparseOperation_t opa = to_op (r->op_a), opb = to_op (r->op_b);
  guint64 shape_key = mix_key (mix_key (mix_key ((guint64) r->z.cols * 16 + r->x.order * 4 + r->z.order,
                                                 alpha_bits (r->alpha)),
                                        (guint64) (guintptr) dense_ptr (&r->x)),
                               (guint64) (guintptr) dense_ptr (&r->z));
  AtomrSparsePlan *plan;
  Scalar alpha;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->z.rows == 0 || r->z.cols == 0)
    return TRUE;
  scalar (r->a.value_dtype, r->alpha, &alpha);
  if (!dnmat_create (&r->x, &b, error) || !dnmat_create (&r->z, &c, error))
    goto out;

  plan = atomr_sparse_matrix_get_plan (r->a.matrix, self->id, PLAN_SPSM,
                                       plan_key (r->op_a, r->op_b, r->a.value_dtype, r->fill * 2 + r->diag));
  if (!plan_usable (plan, shape_key) || plan->values_serial != r->a.values_serial)
    {
      /* cuSPARSE has no in-place update for every SpSM case we need:
       * new values or a new shape of B mean a new analysis. */
      cusparseSpMatDescr_t mat = NULL;
      cusparseSpSMDescr_t descr = NULL;
      gsize size = 0;

      if (plan->descr && plan->descr_free)
        plan->descr_free (plan->descr);
      if (plan->mat_descr && plan->mat_descr_free)
        plan->mat_descr_free (plan->mat_descr);
      plan->descr = plan->mat_descr = NULL;
      g_clear_object (&plan->analysis);
      if (!triangular_matrix (r, &mat, error))
        goto out;
      plan->mat_descr = mat;
      plan->mat_descr_free = atomr_sparse_spmat_destroy;
      if (!atomr_sparse_status_check (cusparseSpSM_createDescr (&descr), "cusparseSpSM_createDescr", error))
        goto out;
      plan->descr = descr;
      plan->descr_free = spsm_descr_destroy;
      if (!atomr_sparse_status_check (cusparseSpSM_bufferSize (self->handle, opa, opb, &alpha, mat, b, c, ct,
                                                               CUSPARSE_SPSM_ALG_DEFAULT, descr, &size),
                                      "cusparseSpSM_bufferSize", error))
        goto out;
      plan->buffer_size = size;
      plan->analysis = late_buffer (op, ATOMR_DTYPE_U8, (gint64) size, error);
      if (plan->analysis == NULL ||
          !atomr_sparse_status_check (cusparseSpSM_analysis (self->handle, opa, opb, &alpha, mat, b, c, ct,
                                                             CUSPARSE_SPSM_ALG_DEFAULT, descr,
                                                             atomr_sparse_dptr (plan->analysis)),
                                      "cusparseSpSM_analysis", error))
        {
          g_clear_object (&plan->analysis);
          goto out;
        }
      plan->key2 = shape_key;
      plan->values_serial = r->a.values_serial;
      plan->sized = TRUE;
    }
  atomr_op_keep (op, plan->analysis);
  ok = atomr_sparse_status_check (cusparseSpSM_solve (self->handle, opa, opb, &alpha, plan->mat_descr, b, c, ct,
                                                      CUSPARSE_SPSM_ALG_DEFAULT, plan->descr),
                                  "cusparseSpSM_solve", error);
out:
  if (b) cusparseDestroyDnMat (b);
  if (c) cusparseDestroyDnMat (c);
  return ok;
}

/**
 * atomr_sparse_actor_spsm_async:
 * @self: an [class@Atomr.SparseActor]
 * @op_a: how to read @a
 * @op_b: how to read @b
 * @fill: which triangle of @a holds the matrix
 * @diag: whether the diagonal is taken as ones
 * @alpha: alpha (real)
 * @a: a square CSR or COO matrix
 * @b: the right-hand sides: op(B) is rows(A) × n
 * @c: the solutions, rows(A) × n; must not overlap @b or @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C is computed
 * @user_data: data for @callback
 *
 * Solves op(A)·C = alpha·op(B) (cusparseSpSM).  The analysis is cached on
 * @a like for [method@Atomr.SparseActor.spsv_async], for one shape of B and C;
 * new values or another shape make it again.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_spsm_async (AtomrSparseActor    *self,
                               AtomrTranspose       op_a,
                               AtomrTranspose       op_b,
                               AtomrFillMode        fill,
                               AtomrDiag            diag,
                               gdouble              alpha,
                               AtomrSparseMatrix   *a,
                               AtomrTensor         *b,
                               AtomrTensor         *c,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;
  AtomrDtype dt;
  gint64 n_rows, n;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "spsm", atomr_sparse_actor_spsm_async, cancellable, callback, user_data);
  r = request_new (op, "spsm");
  if (!check_matrix_arg (op, "spsm", "a", a, &error) ||
      !check_triangular ("spsm", a, op_a, fill, diag, &error) ||
      !atomr_check_enum ("spsm", "op_b", op_b, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error))
    return atomr_op_fail (op, error);
  dt = atomr_sparse_matrix_get_value_dtype (a);
  n_rows = atomr_sparse_matrix_get_rows (a);
  if (!dense_matrix (op, "spsm", "c", c, n_rows, -1, dt, FALSE, &r->z, &error))
    return atomr_op_fail (op, error);
  n = r->z.cols;
  if (!dense_matrix (op, "spsm", "b", b, op_b == ATOMR_TRANSPOSE_N ? n_rows : n,
                     op_b == ATOMR_TRANSPOSE_N ? n : n_rows, dt, FALSE, &r->x, &error))
    return atomr_op_fail (op, error);
  if (atomr_tensor_overlaps (b, c) || overlaps_matrix (c, a))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "spsm: c shares memory with %s; the output must not alias an input",
                                           atomr_tensor_overlaps (b, c) ? "b" : "a"));
  r->op_a = op_a;
  r->op_b = op_b;
  r->fill = fill;
  r->diag = diag;
  r->alpha = alpha;
  atomr_sparse_snap_take (op, &r->a, a, FALSE);
  dense_register (op, &r->x, FALSE);
  dense_register (op, &r->z, TRUE);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, spsm_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_spsm_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.spsm_async].
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_spsm_finish (AtomrSparseActor  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_spsm_async, error);
}

/* ------------------------------------------------------------------ */
/* SDDMM                                                                */

static gboolean
sddmm_enqueue (AtomrOp  *op,
               GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  cusparseSpMatDescr_t mat = NULL;
  cusparseDnMatDescr_t a = NULL, b = NULL;
  cudaDataType ct = compute_type (r->a.value_dtype);
  AtomrSparsePlan *plan;
  guint64 shape_key;
  Scalar alpha, beta;
  gpointer work = NULL;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->a.nnz == 0)
    return TRUE;
  scalar (r->a.value_dtype, r->alpha, &alpha);
  scalar (r->a.value_dtype, r->beta, &beta);
  if (!atomr_sparse_spmat_create (&r->a, &mat, error) ||
      !dnmat_create (&r->x, &a, error) || !dnmat_create (&r->y, &b, error))
    goto out;
  shape_key = (guint64) (r->op_a == ATOMR_TRANSPOSE_N ? r->x.cols : r->x.rows) * 16 + r->x.order * 4 + r->y.order;
  plan = atomr_sparse_matrix_get_plan (r->a.matrix, self->id, PLAN_SDDMM,
                                       plan_key (r->op_a, r->op_b, r->a.value_dtype, 0));
  if (!plan->sized || plan->key2 != shape_key)
    {
      gsize size = 0;
      if (!atomr_sparse_status_check (cusparseSDDMM_bufferSize (self->handle, to_op (r->op_a), to_op (r->op_b),
                                                                &alpha, a, b, &beta, mat, ct,
                                                                CUSPARSE_SDDMM_ALG_DEFAULT, &size),
                                      "cusparseSDDMM_bufferSize", error))
        goto out;
      plan->buffer_size = size;
      plan->key2 = shape_key;
      plan->sized = TRUE;
    }
  if (!atomr_sparse_workspace_reserve (self, atomr_op_get_cu_stream (op), plan->buffer_size, &work, error))
    goto out;
  ok = atomr_sparse_status_check (cusparseSDDMM (self->handle, to_op (r->op_a), to_op (r->op_b), &alpha, a, b,
                                                 &beta, mat, ct, CUSPARSE_SDDMM_ALG_DEFAULT, work),
                                  "cusparseSDDMM", error);
out:
  if (a) cusparseDestroyDnMat (a);
  if (b) cusparseDestroyDnMat (b);
  atomr_sparse_spmat_destroy (mat);
  return ok;
}

/**
 * atomr_sparse_actor_sddmm_async:
 * @self: an [class@Atomr.SparseActor]
 * @op_a: how to read @a
 * @op_b: how to read @b
 * @alpha: alpha (real)
 * @a: dense A: op(A) is rows(C) × k
 * @b: dense B: op(B) is k × columns(C)
 * @beta: beta
 * @c: the sparse matrix C (CSR or BSR) whose values are computed
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C's values are computed
 * @user_data: data for @callback
 *
 * C = alpha·(op(A)·op(B)) ∘ spy(C) + beta·C (cusparseSDDMM): the dense
 * product sampled at C's pattern, into C's values.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_sddmm_async (AtomrSparseActor    *self,
                                AtomrTranspose       op_a,
                                AtomrTranspose       op_b,
                                gdouble              alpha,
                                AtomrTensor         *a,
                                AtomrTensor         *b,
                                gdouble              beta,
                                AtomrSparseMatrix   *c,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;
  AtomrDtype dt;
  gint64 m, n, k;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "sddmm", atomr_sparse_actor_sddmm_async, cancellable, callback, user_data);
  r = request_new (op, "sddmm");
  if (!check_matrix_arg (op, "sddmm", "c", c, &error) ||
      !atomr_check_enum ("sddmm", "op_a", op_a, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error) ||
      !atomr_check_enum ("sddmm", "op_b", op_b, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error) ||
      !check_format ("sddmm", c, FMT (CSR) | FMT (BSR), "CSR or BSR", &error))
    return atomr_op_fail (op, error);
  dt = atomr_sparse_matrix_get_value_dtype (c);
  m = atomr_sparse_matrix_get_rows (c);
  n = atomr_sparse_matrix_get_cols (c);
  if (!dense_matrix (op, "sddmm", "a", a, op_a == ATOMR_TRANSPOSE_N ? m : -1,
                     op_a == ATOMR_TRANSPOSE_N ? -1 : m, dt, FALSE, &r->x, &error))
    return atomr_op_fail (op, error);
  k = op_a == ATOMR_TRANSPOSE_N ? r->x.cols : r->x.rows;
  if (!dense_matrix (op, "sddmm", "b", b, op_b == ATOMR_TRANSPOSE_N ? k : n,
                     op_b == ATOMR_TRANSPOSE_N ? n : k, dt, FALSE, &r->y, &error))
    return atomr_op_fail (op, error);
  if (overlaps_matrix (a, c) || overlaps_matrix (b, c))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "sddmm: %s shares memory with c; the output must not alias an input",
                                           overlaps_matrix (a, c) ? "a" : "b"));
  r->op_a = op_a;
  r->op_b = op_b;
  r->alpha = alpha;
  r->beta = beta;
  atomr_sparse_snap_take (op, &r->a, c, TRUE);
  atomr_sparse_matrix_values_changed (c);
  dense_register (op, &r->x, FALSE);
  dense_register (op, &r->y, FALSE);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, sddmm_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_sddmm_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.sddmm_async].
 *
 * Returns: %TRUE when C's values were computed
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_sddmm_finish (AtomrSparseActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_sddmm_async, error);
}

/* ------------------------------------------------------------------ */
/* Sparse ↔ dense                                                       */

static gboolean
to_dense_enqueue (AtomrOp  *op,
                  GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  cusparseSpMatDescr_t mat = NULL;
  cusparseDnMatDescr_t d = NULL;
  gsize size = 0;
  gpointer work = NULL;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->y.rows == 0 || r->y.cols == 0)
    return TRUE;
  ok = atomr_sparse_spmat_create (&r->a, &mat, error) && dnmat_create (&r->y, &d, error) &&
       atomr_sparse_status_check (cusparseSparseToDense_bufferSize (self->handle, mat, d,
                                                                    CUSPARSE_SPARSETODENSE_ALG_DEFAULT, &size),
                                  "cusparseSparseToDense_bufferSize", error) &&
       atomr_sparse_workspace_reserve (self, atomr_op_get_cu_stream (op), size, &work, error) &&
       atomr_sparse_status_check (cusparseSparseToDense (self->handle, mat, d,
                                                         CUSPARSE_SPARSETODENSE_ALG_DEFAULT, work),
                                  "cusparseSparseToDense", error);
  if (d)
    cusparseDestroyDnMat (d);
  atomr_sparse_spmat_destroy (mat);
  return ok;
}

/**
 * atomr_sparse_actor_sparse_to_dense_async:
 * @self: an [class@Atomr.SparseActor]
 * @a: the sparse matrix (CSR, CSC or COO: cuSPARSE converts no other)
 * @dense: a rows × cols view of the value dtype, column- or row-major;
 *   must not overlap @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dense is written
 * @user_data: data for @callback
 *
 * Writes A into @dense, zeros included (cusparseSparseToDense).
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_sparse_to_dense_async (AtomrSparseActor    *self,
                                          AtomrSparseMatrix   *a,
                                          AtomrTensor         *dense,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "sparse-to-dense", atomr_sparse_actor_sparse_to_dense_async, cancellable,
                     callback, user_data);
  r = request_new (op, "sparse-to-dense");
  if (!check_matrix_arg (op, "sparse-to-dense", "a", a, &error) ||
      !check_format ("sparse-to-dense", a, FMT (CSR) | FMT (CSC) | FMT (COO), "CSR, CSC or COO", &error) ||
      !dense_matrix (op, "sparse-to-dense", "dense", dense, atomr_sparse_matrix_get_rows (a),
                     atomr_sparse_matrix_get_cols (a), atomr_sparse_matrix_get_value_dtype (a), FALSE,
                     &r->y, &error))
    return atomr_op_fail (op, error);
  if (overlaps_matrix (dense, a))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "sparse-to-dense: dense shares memory with a"));
  atomr_sparse_snap_take (op, &r->a, a, FALSE);
  dense_register (op, &r->y, TRUE);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, to_dense_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_sparse_to_dense_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.sparse_to_dense_async].
 *
 * Returns: %TRUE when the dense matrix was written
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_sparse_to_dense_finish (AtomrSparseActor  *self,
                                           GAsyncResult      *result,
                                           GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_sparse_to_dense_async, error);
}

static gboolean
to_sparse_enqueue (AtomrOp  *op,
                   GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  cusparseIndexType_t it = atomr_sparse_index_type (r->target_index);
  cudaDataType vt = atomr_sparse_cuda_type (r->y.dtype);
  CUstream stream = atomr_op_get_cu_stream (op);
  cusparseDnMatDescr_t d = NULL;
  cusparseSpMatDescr_t mat = NULL;
  cusparseStatus_t st;
  int64_t rows, cols, nnz;
  gsize size = 0;
  gpointer work = NULL;
  g_autoptr(AtomrBuffer) rows_buf = NULL, idx = NULL, val = NULL;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (!dnmat_create (&r->y, &d, error))
    return FALSE;
  switch (r->target)
    {
    case ATOMR_SPARSE_FORMAT_CSR:
      st = cusparseCreateCsr (&mat, r->y.rows, r->y.cols, 0, atomr_sparse_dptr (r->result_offsets), NULL, NULL,
                              it, it, CUSPARSE_INDEX_BASE_ZERO, vt);
      break;
    case ATOMR_SPARSE_FORMAT_CSC:
      st = cusparseCreateCsc (&mat, r->y.rows, r->y.cols, 0, atomr_sparse_dptr (r->result_offsets), NULL, NULL,
                              it, it, CUSPARSE_INDEX_BASE_ZERO, vt);
      break;
    default:
      st = cusparseCreateCoo (&mat, r->y.rows, r->y.cols, 0, NULL, NULL, NULL, it, CUSPARSE_INDEX_BASE_ZERO, vt);
      break;
    }
  if (!atomr_sparse_status_check (st, "cusparseCreateCsr", error))
    {
      mat = NULL;
      goto out;
    }
  /* Analysis counts the entries (nnz comes back to the host), then the
   * index and value arrays are allocated and filled. */
  if (!atomr_sparse_status_check (cusparseDenseToSparse_bufferSize (self->handle, d, mat,
                                                                    CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, &size),
                                  "cusparseDenseToSparse_bufferSize", error) ||
      !atomr_sparse_workspace_reserve (self, stream, size, &work, error) ||
      !atomr_sparse_status_check (cusparseDenseToSparse_analysis (self->handle, d, mat,
                                                                  CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, work),
                                  "cusparseDenseToSparse_analysis", error) ||
      !atomr_sparse_status_check (cusparseSpMatGetSize (mat, &rows, &cols, &nnz), "cusparseSpMatGetSize", error))
    goto out;
  idx = late_buffer (op, r->target_index, nnz, error);
  if (idx == NULL)
    goto out;
  val = late_buffer (op, r->y.dtype, nnz, error);
  if (val == NULL)
    goto out;
  switch (r->target)
    {
    case ATOMR_SPARSE_FORMAT_CSR:
      st = cusparseCsrSetPointers (mat, atomr_sparse_dptr (r->result_offsets), atomr_sparse_dptr (idx),
                                   atomr_sparse_dptr (val));
      break;
    case ATOMR_SPARSE_FORMAT_CSC:
      st = cusparseCscSetPointers (mat, atomr_sparse_dptr (r->result_offsets), atomr_sparse_dptr (idx),
                                   atomr_sparse_dptr (val));
      break;
    default:
      rows_buf = late_buffer (op, r->target_index, nnz, error);
      if (rows_buf == NULL)
        goto out;
      st = cusparseCooSetPointers (mat, atomr_sparse_dptr (rows_buf), atomr_sparse_dptr (idx),
                                   atomr_sparse_dptr (val));
      break;
    }
  if (!atomr_sparse_status_check (st, "cusparseCsrSetPointers", error) ||
      !atomr_sparse_status_check (cusparseDenseToSparse_convert (self->handle, d, mat,
                                                                 CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, work),
                                  "cusparseDenseToSparse_convert", error))
    goto out;
  r->result = atomr_sparse_matrix_new_internal (r->target, r->y.rows, r->y.cols, nnz, 1, 0,
                                                r->result_offsets, rows_buf, idx, val, error);
  ok = r->result != NULL;
out:
  cusparseDestroyDnMat (d);
  atomr_sparse_spmat_destroy (mat);
  return ok;
}

/**
 * atomr_sparse_actor_dense_to_sparse_async:
 * @self: an [class@Atomr.SparseActor]
 * @dense: a 2-D view (column- or row-major) of a value dtype
 * @format: %ATOMR_SPARSE_FORMAT_CSR, %ATOMR_SPARSE_FORMAT_CSC or
 *   %ATOMR_SPARSE_FORMAT_COO
 * @index_dtype: %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_I64
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the sparse matrix
 * @user_data: data for @callback
 *
 * The non-zero entries of @dense as a new sparse matrix
 * (cusparseDenseToSparse).  The number of entries is learnt on the GPU:
 * the actor waits for the analysis on its context before allocating the
 * arrays.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_dense_to_sparse_async (AtomrSparseActor    *self,
                                          AtomrTensor         *dense,
                                          AtomrSparseFormat    format,
                                          AtomrDtype           index_dtype,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;
  AtomrDtype dt;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "dense-to-sparse", atomr_sparse_actor_dense_to_sparse_async, cancellable,
                     callback, user_data);
  r = request_new (op, "dense-to-sparse");
  if (format != ATOMR_SPARSE_FORMAT_CSR && format != ATOMR_SPARSE_FORMAT_CSC && format != ATOMR_SPARSE_FORMAT_COO)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                                           "dense-to-sparse: format %d; the output can be CSR, CSC or COO",
                                           (gint) format));
  if (index_dtype != ATOMR_DTYPE_I32 && index_dtype != ATOMR_DTYPE_I64)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "dense-to-sparse: index dtype %s; it must be i32 or i64",
                                           atomr_dtype_get_name (index_dtype) ? atomr_dtype_get_name (index_dtype) : "?"));
  if (!atomr_tensor_check (dense, atomr_actor_get_device (ATOMR_ACTOR (self)), "dense-to-sparse: dense", &error))
    return atomr_op_fail (op, error);
  dt = atomr_tensor_get_dtype (dense);
  if (!(dt == ATOMR_DTYPE_F16 || dt == ATOMR_DTYPE_BF16 || dt == ATOMR_DTYPE_F32 || dt == ATOMR_DTYPE_F64 ||
        dt == ATOMR_DTYPE_C64 || dt == ATOMR_DTYPE_C128))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "dense-to-sparse: dense is %s; values must be f16, bf16, f32, f64, "
                                           "c64 or c128", atomr_dtype_get_name (dt)));
  if (!dense_matrix (op, "dense-to-sparse", "dense", dense, -1, -1, dt, FALSE, &r->y, &error))
    return atomr_op_fail (op, error);
  if (index_dtype == ATOMR_DTYPE_I32 && r->y.rows * MAX (r->y.cols, 1) > G_MAXINT32)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "dense-to-sparse: %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                                           " may hold more entries than i32 indices count; use i64",
                                           r->y.rows, r->y.cols));
  if (format != ATOMR_SPARSE_FORMAT_COO)
    {
      r->result_offsets = atomr_buffer_new (atomr_actor_get_device (ATOMR_ACTOR (self)), index_dtype,
                                            (format == ATOMR_SPARSE_FORMAT_CSR ? r->y.rows : r->y.cols) + 1,
                                            &error);
      if (r->result_offsets == NULL)
        return atomr_op_fail (op, error);
      atomr_op_write (op, r->result_offsets);
    }
  r->target = format;
  r->target_index = index_dtype;
  dense_register (op, &r->y, FALSE);
  atomr_op_set_enqueue (op, to_sparse_enqueue);
  atomr_op_set_complete (op, atomr_sparse_complete_result);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_dense_to_sparse_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.dense_to_sparse_async].
 *
 * Returns: (transfer full): the sparse matrix, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_actor_dense_to_sparse_finish (AtomrSparseActor  *self,
                                           GAsyncResult      *result,
                                           GError           **error)
{
  return atomr_op_finish_pointer (self, result, atomr_sparse_actor_dense_to_sparse_async, error);
}

/* ------------------------------------------------------------------ */
/* Sparse vectors                                                       */

typedef enum {
  VEC_GATHER,
  VEC_SCATTER,
  VEC_AXPBY,
} VecOp;

static gboolean
vector_enqueue (AtomrOp  *op,
                GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  AtomrSparseVector *v = r->vec;
  cusparseSpVecDescr_t x = NULL;
  cusparseDnVecDescr_t y = NULL;
  cusparseStatus_t st;
  const gchar *call;
  Scalar alpha, beta;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (atomr_sparse_vector_get_nnz (v) == 0 && r->kind != VEC_AXPBY)
    return TRUE;
  if (!atomr_sparse_status_check (cusparseCreateSpVec (&x, atomr_sparse_vector_get_size (v),
                                                       atomr_sparse_vector_get_nnz (v),
                                                       atomr_sparse_dptr (atomr_sparse_vector_get_indices (v)),
                                                       atomr_sparse_dptr (atomr_sparse_vector_get_values (v)),
                                                       atomr_sparse_index_type (atomr_sparse_vector_get_index_dtype (v)),
                                                       CUSPARSE_INDEX_BASE_ZERO,
                                                       atomr_sparse_cuda_type (r->y.dtype)),
                                  "cusparseCreateSpVec", error))
    return FALSE;
  if (!dnvec_create (&r->y, &y, error))
    goto out;
  switch ((VecOp) r->kind)
    {
    case VEC_GATHER:
      call = "cusparseGather";
      st = cusparseGather (self->handle, y, x);
      break;
    case VEC_SCATTER:
      call = "cusparseScatter";
      st = cusparseScatter (self->handle, x, y);
      break;
    default:
      call = "cusparseAxpby";
      st = cusparseAxpby (self->handle, scalar (r->y.dtype, r->alpha, &alpha), x,
                          scalar (r->y.dtype, r->beta, &beta), y);
      break;
    }
  ok = atomr_sparse_status_check (st, call, error);
out:
  if (y) cusparseDestroyDnVec (y);
  cusparseDestroySpVec (x);
  return ok;
}

static void
vector_common (AtomrSparseActor    *self,
               VecOp                kind,
               const gchar         *opname,
               gpointer             tag,
               gdouble              alpha,
               AtomrSparseVector   *x,
               gdouble              beta,
               AtomrTensor         *y,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  AtomrOp *op = atomr_op_new (self, opname, tag, cancellable, callback, user_data);
  SparseRequest *r = request_new (op, opname);
  AtomrDevice *device = atomr_actor_get_device (ATOMR_ACTOR (self));
  GError *error = NULL;
  AtomrDtype dt;

  if (!atomr_sparse_vector_check (x, device, opname, "x", &error))
    return atomr_op_fail (op, error);
  dt = atomr_sparse_vector_get_value_dtype (x);
  if ((kind == VEC_AXPBY) && (dt == ATOMR_DTYPE_F16 || dt == ATOMR_DTYPE_BF16))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                                           "%s: x is %s; cuSPARSE's Axpby takes f32, f64, c64 or c128",
                                           opname, atomr_dtype_get_name (dt)));
  if (!dense_vector (op, opname, "y", y, atomr_sparse_vector_get_size (x), dt, kind != VEC_GATHER, &r->y, &error))
    return atomr_op_fail (op, error);
  if (overlaps_buffer (y, atomr_sparse_vector_get_indices (x)) ||
      overlaps_buffer (y, atomr_sparse_vector_get_values (x)))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: y shares memory with x", opname));
  r->vec = x;
  r->kind = kind;
  r->alpha = alpha;
  r->beta = beta;
  atomr_op_keep (op, x);
  atomr_op_read (op, atomr_sparse_vector_get_indices (x));
  atomr_op_read (op, atomr_sparse_vector_get_values (x));
  if (kind == VEC_GATHER)
    atomr_op_write (op, atomr_sparse_vector_get_values (x));
  dense_register (op, &r->y, kind != VEC_GATHER);
  atomr_op_set_enqueue (op, vector_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_gather_async:
 * @self: an [class@Atomr.SparseActor]
 * @y: a contiguous dense vector of size(x) elements, x's value dtype
 * @x: the sparse vector whose values are written: x[k] = y[index[k]]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when x's values are written
 * @user_data: data for @callback
 *
 * Gathers y at x's indices into x's values (cusparseGather).
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_gather_async (AtomrSparseActor    *self,
                                 AtomrTensor         *y,
                                 AtomrSparseVector   *x,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  vector_common (self, VEC_GATHER, "gather", atomr_sparse_actor_gather_async, 0, x, 0, y,
                 cancellable, callback, user_data);
}

/**
 * atomr_sparse_actor_gather_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.gather_async].
 *
 * Returns: %TRUE when x's values were written
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_gather_finish (AtomrSparseActor  *self,
                                  GAsyncResult      *result,
                                  GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_gather_async, error);
}

/**
 * atomr_sparse_actor_scatter_async:
 * @self: an [class@Atomr.SparseActor]
 * @x: the sparse vector
 * @y: a contiguous dense vector of size(x) elements: y[index[k]] = x[k],
 *   other elements unchanged
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is written
 * @user_data: data for @callback
 *
 * Scatters x's values into y (cusparseScatter).
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_scatter_async (AtomrSparseActor    *self,
                                  AtomrSparseVector   *x,
                                  AtomrTensor         *y,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  vector_common (self, VEC_SCATTER, "scatter", atomr_sparse_actor_scatter_async, 0, x, 0, y,
                 cancellable, callback, user_data);
}

/**
 * atomr_sparse_actor_scatter_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.scatter_async].
 *
 * Returns: %TRUE when y was written
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_scatter_finish (AtomrSparseActor  *self,
                                   GAsyncResult      *result,
                                   GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_scatter_async, error);
}

/**
 * atomr_sparse_actor_axpby_async:
 * @self: an [class@Atomr.SparseActor]
 * @alpha: alpha (real)
 * @x: the sparse vector (f32, f64, c64 or c128)
 * @beta: beta (real)
 * @y: a contiguous dense vector of size(x) elements
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is written
 * @user_data: data for @callback
 *
 * y = alpha·x + beta·y (cusparseAxpby), x being zero outside its indices.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_axpby_async (AtomrSparseActor    *self,
                                gdouble              alpha,
                                AtomrSparseVector   *x,
                                gdouble              beta,
                                AtomrTensor         *y,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  vector_common (self, VEC_AXPBY, "axpby", atomr_sparse_actor_axpby_async, alpha, x, beta, y,
                 cancellable, callback, user_data);
}

/**
 * atomr_sparse_actor_axpby_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.axpby_async].
 *
 * Returns: %TRUE when y was written
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_axpby_finish (AtomrSparseActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_axpby_async, error);
}
