/* atomr-sparse-actor.c — cuSPARSE's generic API as an actor
 *
 * One SparseRequest per operation (a snapshot of the matrices' buffers
 * taken at submission, the dense views, the scalars), one validation block
 * in each _async function and one enqueue function per operation.  The
 * envelope does hazards, fences, completion and traces.
 *
 * Threads: _async functions run on the caller's thread and only validate,
 * allocate outputs of known size and submit.  Enqueue functions run on the
 * actor's context with the device context current: they own the cuSPARSE
 * handle, the workspace and this actor's plans on the matrices.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "actors/sparse/atomr-sparse-actor-private.h"

/**
 * AtomrSparseActor:
 *
 * An actor that owns a cuSPARSE handle bound to its stream, for sparse
 * matrices ([class@Atomr.SparseMatrix]) and vectors ([class@Atomr.SparseVector]).
 *
 * cuSPARSE is loaded with dlopen() when the first sparse actor is made on
 * a GPU (`ATOMR_CUSPARSE_LIBRARY` picks a file).  Work buffers come from
 * one workspace per actor, grown on demand and reused by every operation
 * (the stream orders them); [property@Atomr.SparseActor:workspace-size] reports it.
 * Buffer sizes and triangular-solve analyses are cached on the matrix
 * (per actor) until its structure changes.
 *
 * Operations whose output size is only known on the GPU (SpGEMM, dense to
 * sparse) wait for the stream inside the actor's context after their
 * inputs are ready, as cuSPARSE itself requires; everything else is
 * asynchronous.
 *
 * On the host test device requests are validated; [method@Atomr.SparseActor.check_async]
 * runs on the CPU, every other operation is answered with
 * %ATOMR_ERROR_NOT_SUPPORTED.
 *
 * Since: 0.1
 */

G_DEFINE_FINAL_TYPE (AtomrSparseActor, atomr_sparse_actor, ATOMR_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_WORKSPACE_SIZE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gint next_actor_id = 1;   /* atomic */

/* ------------------------------------------------------------------ */
/* Requests                                                             */

void
atomr_sparse_request_clear (gpointer data)
{
  SparseRequest *r = data;

  g_clear_object (&r->result);
  g_clear_object (&r->result_offsets);
  g_clear_pointer (&r->pinned, atomr_pinned_release);
}

void
atomr_sparse_snap_take (AtomrOp           *op,
           MatSnap           *s,
           AtomrSparseMatrix *m,
           gboolean           write_values)
{
  s->matrix = m;
  s->format = atomr_sparse_matrix_get_format (m);
  s->rows = atomr_sparse_matrix_get_rows (m);
  s->cols = atomr_sparse_matrix_get_cols (m);
  s->nnz = atomr_sparse_matrix_get_nnz (m);
  s->block_size = atomr_sparse_matrix_get_block_size (m);
  s->ell_cols = atomr_sparse_matrix_get_ell_cols (m);
  s->index_dtype = atomr_sparse_matrix_get_index_dtype (m);
  s->value_dtype = atomr_sparse_matrix_get_value_dtype (m);
  s->offsets = atomr_sparse_matrix_get_offsets (m);
  s->row_indices = atomr_sparse_matrix_get_row_indices (m);
  s->indices = atomr_sparse_matrix_get_indices (m);
  s->values = atomr_sparse_matrix_get_values (m);
  s->values_serial = atomr_sparse_matrix_get_values_serial (m);

  atomr_op_keep (op, m);
  if (s->offsets)
    atomr_op_read (op, s->offsets);
  if (s->row_indices)
    atomr_op_read (op, s->row_indices);
  atomr_op_read (op, s->indices);
  if (write_values)
    atomr_op_write (op, s->values);
  atomr_op_read (op, s->values);
}

const gchar *const atomr_sparse_format_short[] = { "csr", "csc", "coo", "bsr", "blocked-ell" };

void
atomr_sparse_set_detail (AtomrOp       *op,
            const MatSnap *s)
{
  g_autofree gchar *detail =
    g_strdup_printf ("%s %s/%s %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " nnz %" G_GINT64_FORMAT,
                     atomr_sparse_format_short[s->format], atomr_dtype_get_name (s->value_dtype),
                     atomr_dtype_get_name (s->index_dtype), s->rows, s->cols, s->nnz);
  atomr_op_set_detail (op, detail);
}

/* ------------------------------------------------------------------ */
/* cuSPARSE helpers                                                     */

gboolean
atomr_sparse_status_check (cusparseStatus_t  status,
              const gchar      *call,
              GError          **error)
{
  return atomr_library_check (status == CUSPARSE_STATUS_SUCCESS, "cuSPARSE", call,
                              cusparseGetErrorName (status), status,
                              status == CUSPARSE_STATUS_ALLOC_FAILED ||
                              status == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES,
                              status == CUSPARSE_STATUS_NOT_SUPPORTED ||
                              status == CUSPARSE_STATUS_ARCH_MISMATCH,
                              error);
}

cudaDataType
atomr_sparse_cuda_type (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return CUDA_R_16F;
    case ATOMR_DTYPE_BF16: return CUDA_R_16BF;
    case ATOMR_DTYPE_F64: return CUDA_R_64F;
    case ATOMR_DTYPE_C64: return CUDA_C_32F;
    case ATOMR_DTYPE_C128: return CUDA_C_64F;
    default: return CUDA_R_32F;
    }
}

cusparseIndexType_t
atomr_sparse_index_type (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_I64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
}

gpointer
atomr_sparse_dptr (AtomrBuffer *buffer)
{
  return buffer ? (gpointer) (guintptr) atomr_buffer_get_ptr (buffer) : NULL;
}

/* A descriptor of the snapshot (host-only call; destroyed by the caller). */
gboolean
atomr_sparse_spmat_create (const MatSnap         *s,
              cusparseSpMatDescr_t  *out,
              GError               **error)
{
  cusparseIndexType_t it = atomr_sparse_index_type (s->index_dtype);
  cudaDataType vt = atomr_sparse_cuda_type (s->value_dtype);
  cusparseStatus_t st;
  const gchar *call;

  switch (s->format)
    {
    case ATOMR_SPARSE_FORMAT_CSR:
      call = "cusparseCreateCsr";
      st = cusparseCreateCsr (out, s->rows, s->cols, s->nnz, atomr_sparse_dptr (s->offsets), atomr_sparse_dptr (s->indices),
                              atomr_sparse_dptr (s->values), it, it, CUSPARSE_INDEX_BASE_ZERO, vt);
      break;
    case ATOMR_SPARSE_FORMAT_CSC:
      call = "cusparseCreateCsc";
      st = cusparseCreateCsc (out, s->rows, s->cols, s->nnz, atomr_sparse_dptr (s->offsets), atomr_sparse_dptr (s->indices),
                              atomr_sparse_dptr (s->values), it, it, CUSPARSE_INDEX_BASE_ZERO, vt);
      break;
    case ATOMR_SPARSE_FORMAT_COO:
      call = "cusparseCreateCoo";
      st = cusparseCreateCoo (out, s->rows, s->cols, s->nnz, atomr_sparse_dptr (s->row_indices),
                              atomr_sparse_dptr (s->indices), atomr_sparse_dptr (s->values), it,
                              CUSPARSE_INDEX_BASE_ZERO, vt);
      break;
    case ATOMR_SPARSE_FORMAT_BSR:
      call = "cusparseCreateBsr";
      st = cusparseCreateBsr (out, s->rows / s->block_size, s->cols / s->block_size, s->nnz,
                              s->block_size, s->block_size, atomr_sparse_dptr (s->offsets), atomr_sparse_dptr (s->indices),
                              atomr_sparse_dptr (s->values), it, it, CUSPARSE_INDEX_BASE_ZERO, vt,
                              CUSPARSE_ORDER_ROW);
      break;
    case ATOMR_SPARSE_FORMAT_BLOCKED_ELL:
    default:
      call = "cusparseCreateBlockedEll";
      st = cusparseCreateBlockedEll (out, s->rows, s->cols, s->block_size, s->ell_cols,
                                     atomr_sparse_dptr (s->indices), atomr_sparse_dptr (s->values), it,
                                     CUSPARSE_INDEX_BASE_ZERO, vt);
      break;
    }
  if (!atomr_sparse_status_check (st, call, error))
    {
      *out = NULL;
      return FALSE;
    }
  return TRUE;
}

void
atomr_sparse_spmat_destroy (gpointer descr)
{
  if (descr)
    cusparseDestroySpMat (descr);
}

/* The actor's workspace, grown to at least @size bytes.  Every operation
 * of the actor runs on its one stream, so one workspace serves them all;
 * the old one is freed in stream order. */
gboolean
atomr_sparse_workspace_reserve (AtomrSparseActor  *self,
                   CUstream           stream,
                   gsize              size,
                   gpointer          *out,
                   GError           **error)
{
  gsize have = (gsize) g_atomic_pointer_get ((gpointer *) &self->workspace_size);

  if (size > have)
    {
      gsize want = MAX (size, have + have / 2);
      CUdeviceptr ptr = 0;

      want = (want + 255) & ~(gsize) 255;
      if (self->workspace)
        ATOMR_CU->cuMemFreeAsync (self->workspace, stream);
      self->workspace = 0;
      g_atomic_pointer_set ((gpointer *) &self->workspace_size, NULL);
      if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&ptr, want, stream),
                             "cuMemAllocAsync", error))
        {
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKSPACE_SIZE]);
          return FALSE;
        }
      self->workspace = ptr;
      g_atomic_pointer_set ((gpointer *) &self->workspace_size, (gpointer) want);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKSPACE_SIZE]);
    }
  *out = size ? (gpointer) (guintptr) self->workspace : NULL;
  return TRUE;
}

gboolean
atomr_sparse_need_gpu (AtomrOp        *op,
          SparseRequest  *r,
          GError        **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));

  if (atomr_op_is_host (op) || self->handle == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuSPARSE: %s needs a CUDA device; the host test device has no cuSPARSE",
                   r->opname);
      return FALSE;
    }
  return TRUE;
}

void
atomr_sparse_complete_result (AtomrOp    *op,
                              AtomrReply *reply)
{
  SparseRequest *r = atomr_op_get_data (op);

  atomr_reply_return_pointer (reply, g_object_ref (r->result), g_object_unref);
}

static gboolean
check_index32 (const gchar  *opname,
               const gchar  *what,
               AtomrDtype    dtype,
               GError      **error)
{
  if (dtype != ATOMR_DTYPE_I32)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: %s has %s indices; cuSPARSE's Csr2cscEx2 takes i32 indices only",
                   opname, what, atomr_dtype_get_name (dtype));
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* check                                                                */

static gsize
structure_bytes (const MatSnap *s,
                 gsize         *n_off,
                 gsize         *n_row,
                 gsize         *n_idx)
{
  gsize isize = atomr_dtype_get_size (s->index_dtype);

  *n_off = s->offsets ? atomr_sparse_n_offsets (s->format, s->rows, s->cols, s->block_size) : 0;
  *n_row = s->row_indices ? s->nnz : 0;
  *n_idx = atomr_sparse_n_indices (s->format, s->rows, s->nnz, s->block_size, s->ell_cols);
  return (*n_off + *n_row + *n_idx) * isize;
}

static gboolean
check_enqueue (AtomrOp  *op,
               GError  **error)
{
  SparseRequest *r = atomr_op_get_data (op);
  const MatSnap *s = &r->a;
  gsize n_off, n_row, n_idx, isize = atomr_dtype_get_size (s->index_dtype);
  gsize bytes = structure_bytes (s, &n_off, &n_row, &n_idx);
  CUstream stream = atomr_op_get_cu_stream (op);
  guint8 *dst;

  if (atomr_op_is_host (op))
    return atomr_sparse_check_structure (s->format, s->rows, s->cols, s->nnz, s->block_size,
                                         s->ell_cols, s->index_dtype,
                                         s->offsets ? atomr_buffer_get_host_data (s->offsets) : NULL,
                                         s->row_indices ? atomr_buffer_get_host_data (s->row_indices) : NULL,
                                         atomr_buffer_get_host_data (s->indices), error);

  /* Copy the structure back on the stream; the complete function checks it. */
  r->pinned = atomr_pinned_acquire (atomr_actor_get_device (atomr_op_get_actor (op)),
                                    MAX (bytes, 1), error);
  if (r->pinned == NULL)
    return FALSE;
  dst = r->pinned->data;
  if (n_off && !atomr_cuda_check (ATOMR_CU->cuMemcpyDtoHAsync (dst, atomr_buffer_get_ptr (s->offsets),
                                                                n_off * isize, stream),
                                  "cuMemcpyDtoHAsync", error))
    return FALSE;
  dst += n_off * isize;
  if (n_row && !atomr_cuda_check (ATOMR_CU->cuMemcpyDtoHAsync (dst, atomr_buffer_get_ptr (s->row_indices),
                                                                n_row * isize, stream),
                                  "cuMemcpyDtoHAsync", error))
    return FALSE;
  dst += n_row * isize;
  if (n_idx && !atomr_cuda_check (ATOMR_CU->cuMemcpyDtoHAsync (dst, atomr_buffer_get_ptr (s->indices),
                                                                n_idx * isize, stream),
                                  "cuMemcpyDtoHAsync", error))
    return FALSE;
  return TRUE;
}

static void
check_complete (AtomrOp    *op,
                AtomrReply *reply)
{
  SparseRequest *r = atomr_op_get_data (op);
  const MatSnap *s = &r->a;
  gsize n_off, n_row, n_idx, isize = atomr_dtype_get_size (s->index_dtype);
  const guint8 *base;
  GError *error = NULL;

  if (r->pinned == NULL)   /* the host device checked in enqueue */
    {
      atomr_reply_return_boolean (reply, TRUE);
      return;
    }
  structure_bytes (s, &n_off, &n_row, &n_idx);
  base = r->pinned->data;
  if (atomr_sparse_check_structure (s->format, s->rows, s->cols, s->nnz, s->block_size,
                                    s->ell_cols, s->index_dtype,
                                    n_off ? base : NULL,
                                    n_row ? base + n_off * isize : NULL,
                                    base + (n_off + n_row) * isize, &error))
    atomr_reply_return_boolean (reply, TRUE);
  else
    atomr_reply_return_error (reply, error);
}

/**
 * atomr_sparse_actor_check_async:
 * @self: an [class@Atomr.SparseActor]
 * @matrix: the matrix to check
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the verdict
 * @user_data: data for @callback
 *
 * Checks the contents of @matrix's structure, ordered after whatever
 * writes its buffers: offsets start at 0, never decrease and end at nnz;
 * every index is in range; indices within a row (a column for CSC) are
 * sorted and distinct; COO entries are sorted by row, then column, without
 * duplicates; Blocked-ELL block columns are in [-1, cols / block size).
 * The index arrays are copied back on the actor's stream (values are not)
 * and checked when the copy has landed.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_check_async (AtomrSparseActor    *self,
                                AtomrSparseMatrix   *matrix,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "check", atomr_sparse_actor_check_async, cancellable, callback, user_data);
  if (!atomr_sparse_matrix_check (matrix, atomr_actor_get_device (ATOMR_ACTOR (self)), "check",
                                  "matrix", &error))
    return atomr_op_fail (op, error);
  r = atomr_op_alloc_data (op, sizeof (SparseRequest), atomr_sparse_request_clear);
  r->opname = "check";
  atomr_sparse_snap_take (op, &r->a, matrix, FALSE);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, check_enqueue);
  atomr_op_set_complete (op, check_complete);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_check_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.check_async].
 *
 * Returns: %TRUE when the structure is valid; %FALSE with
 *   %ATOMR_ERROR_INVALID_ARGUMENT naming the first wrong entry and its value
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_check_finish (AtomrSparseActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_check_async, error);
}

/* ------------------------------------------------------------------ */
/* convert / transpose (Csr2cscEx2)                                     */

/* The input read as a CSR matrix of major × minor; its CSC arrays are the
 * output, which for the output's own shape are CSR or CSC arrays. */
static gboolean
csr2csc_enqueue (AtomrOp  *op,
                 GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  const MatSnap *s = &r->a;
  CUstream stream = atomr_op_get_cu_stream (op);
  gint64 major = s->format == ATOMR_SPARSE_FORMAT_CSR ? s->rows : s->cols;
  gint64 minor = s->format == ATOMR_SPARSE_FORMAT_CSR ? s->cols : s->rows;
  AtomrBuffer *out_off = atomr_sparse_matrix_get_offsets (r->result);
  AtomrBuffer *out_idx = atomr_sparse_matrix_get_indices (r->result);
  AtomrBuffer *out_val = atomr_sparse_matrix_get_values (r->result);
  gsize size = 0;
  gpointer work;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (s->nnz == 0 || major == 0 || minor == 0)
    /* Nothing stored: the output offsets are all zero. */
    return atomr_cuda_check (ATOMR_CU->cuMemsetD8Async (atomr_buffer_get_ptr (out_off), 0,
                                                         (minor + 1) * sizeof (gint32), stream),
                             "cuMemsetD8Async", error);

  if (!atomr_sparse_status_check (cusparseCsr2cscEx2_bufferSize (self->handle, major, minor, s->nnz,
                                                    atomr_sparse_dptr (s->values), atomr_sparse_dptr (s->offsets),
                                                    atomr_sparse_dptr (s->indices), atomr_sparse_dptr (out_val),
                                                    atomr_sparse_dptr (out_off), atomr_sparse_dptr (out_idx),
                                                    atomr_sparse_cuda_type (s->value_dtype),
                                                    CUSPARSE_ACTION_NUMERIC,
                                                    CUSPARSE_INDEX_BASE_ZERO,
                                                    CUSPARSE_CSR2CSC_ALG1, &size),
                     "cusparseCsr2cscEx2_bufferSize", error) ||
      !atomr_sparse_workspace_reserve (self, stream, size, &work, error))
    return FALSE;
  return atomr_sparse_status_check (cusparseCsr2cscEx2 (self->handle, major, minor, s->nnz,
                                           atomr_sparse_dptr (s->values), atomr_sparse_dptr (s->offsets), atomr_sparse_dptr (s->indices),
                                           atomr_sparse_dptr (out_val), atomr_sparse_dptr (out_off), atomr_sparse_dptr (out_idx),
                                           atomr_sparse_cuda_type (s->value_dtype), CUSPARSE_ACTION_NUMERIC,
                                           CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work),
                       "cusparseCsr2cscEx2", error);
}

/* Submits a Csr2cscEx2 of @matrix into a new matrix of @format and shape
 * rows × cols; allocates the output here, on the caller's thread. */
static void
csr2csc_submit (AtomrOp           *op,
                const gchar       *opname,
                AtomrSparseMatrix *matrix,
                AtomrSparseFormat  format,
                gboolean           transpose)
{
  SparseRequest *r;
  GError *error = NULL;
  AtomrDevice *device = atomr_sparse_matrix_get_device (matrix);
  AtomrSparseFormat from = atomr_sparse_matrix_get_format (matrix);
  gint64 rows = atomr_sparse_matrix_get_rows (matrix);
  gint64 cols = atomr_sparse_matrix_get_cols (matrix);
  gint64 nnz = atomr_sparse_matrix_get_nnz (matrix);
  gint64 out_rows = transpose ? cols : rows, out_cols = transpose ? rows : cols;
  gint64 n_off = (format == ATOMR_SPARSE_FORMAT_CSR ? out_rows : out_cols) + 1;
  g_autoptr(AtomrBuffer) off = NULL, idx = NULL, val = NULL;

  if (from != ATOMR_SPARSE_FORMAT_CSR && from != ATOMR_SPARSE_FORMAT_CSC)
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: the matrix is %s; Csr2cscEx2 works on CSR and CSC matrices",
                   opname, atomr_sparse_format_short[from]);
      return atomr_op_fail (op, error);
    }
  if (!check_index32 (opname, "the matrix", atomr_sparse_matrix_get_index_dtype (matrix), &error))
    return atomr_op_fail (op, error);
  off = atomr_buffer_new (device, ATOMR_DTYPE_I32, n_off, &error);
  if (off)
    idx = atomr_buffer_new (device, ATOMR_DTYPE_I32, MAX (nnz, 1), &error);
  if (idx)
    val = atomr_buffer_new (device, atomr_sparse_matrix_get_value_dtype (matrix), MAX (nnz, 1), &error);
  if (val == NULL)
    return atomr_op_fail (op, error);

  r = atomr_op_alloc_data (op, sizeof (SparseRequest), atomr_sparse_request_clear);
  r->opname = opname;
  r->target = format;
  r->result = atomr_sparse_matrix_new_internal (format, out_rows, out_cols, nnz, 1, 0,
                                                off, NULL, idx, val, &error);
  if (r->result == NULL)
    return atomr_op_fail (op, error);
  atomr_sparse_snap_take (op, &r->a, matrix, FALSE);
  atomr_op_write (op, off);
  atomr_op_write (op, idx);
  atomr_op_write (op, val);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, csr2csc_enqueue);
  atomr_op_set_complete (op, atomr_sparse_complete_result);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_convert_async:
 * @self: an [class@Atomr.SparseActor]
 * @matrix: a CSR, CSC, COO or BSR matrix with i32 indices
 * @format: the format to convert to: CSC or COO for a CSR matrix, CSR
 *   for a CSC, COO or BSR one
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the new matrix
 * @user_data: data for @callback
 *
 * The same matrix in another format, into new buffers: CSR ↔ CSC through
 * cusparseCsr2cscEx2, COO ↔ CSR through cusparseXcoo2csr and
 * cusparseXcsr2coo (the column indices and values are copied), BSR → CSR
 * through cusparse?bsr2csr (f32, f64, c64 or c128 values; every value of
 * every stored block, explicit zeros included).  Converting to the format
 * @matrix already has, and other pairs, fail with
 * %ATOMR_ERROR_NOT_SUPPORTED (CSR → BSR is
 * [method@Atomr.SparseActor.convert_to_bsr_async]; dense to sparse and
 * back are [method@Atomr.SparseActor.dense_to_sparse_async] and
 * [method@Atomr.SparseActor.sparse_to_dense_async]).
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_convert_async (AtomrSparseActor    *self,
                                  AtomrSparseMatrix   *matrix,
                                  AtomrSparseFormat    format,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  AtomrSparseFormat from;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "convert", atomr_sparse_actor_convert_async, cancellable, callback, user_data);
  if (!atomr_sparse_matrix_check (matrix, atomr_actor_get_device (ATOMR_ACTOR (self)), "convert",
                                  "matrix", &error) ||
      !atomr_check_enum ("convert", "format", format, ATOMR_SPARSE_FORMAT_BLOCKED_ELL + 1,
                         "AtomrSparseFormat", &error))
    return atomr_op_fail (op, error);
  from = atomr_sparse_matrix_get_format (matrix);
  if ((from == ATOMR_SPARSE_FORMAT_CSR && format == ATOMR_SPARSE_FORMAT_CSC) ||
      (from == ATOMR_SPARSE_FORMAT_CSC && format == ATOMR_SPARSE_FORMAT_CSR))
    csr2csc_submit (op, "convert", matrix, format, FALSE);
  else if ((from == ATOMR_SPARSE_FORMAT_COO && format == ATOMR_SPARSE_FORMAT_CSR) ||
           (from == ATOMR_SPARSE_FORMAT_CSR && format == ATOMR_SPARSE_FORMAT_COO))
    atomr_sparse_coo_csr_submit (op, "convert", matrix, format);
  else if (from == ATOMR_SPARSE_FORMAT_BSR && format == ATOMR_SPARSE_FORMAT_CSR)
    atomr_sparse_bsr2csr_submit (op, "convert", matrix);
  else
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "convert: %s to %s is not supported; convert goes CSR ↔ CSC, COO ↔ CSR and BSR → CSR "
                   "(CSR → BSR is convert_to_bsr_async, which takes the block size)",
                   atomr_sparse_format_short[from], atomr_sparse_format_short[format]);
      return atomr_op_fail (op, error);
    }
}

/**
 * atomr_sparse_actor_convert_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.convert_async].
 *
 * Returns: (transfer full): the converted matrix, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_actor_convert_finish (AtomrSparseActor  *self,
                                   GAsyncResult      *result,
                                   GError           **error)
{
  return atomr_op_finish_pointer (self, result, atomr_sparse_actor_convert_async, error);
}

/**
 * atomr_sparse_actor_transpose_async:
 * @self: an [class@Atomr.SparseActor]
 * @matrix: a CSR or CSC matrix with i32 indices
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the transpose
 * @user_data: data for @callback
 *
 * The transpose of @matrix, in @matrix's format, into new buffers
 * (cusparseCsr2cscEx2: the CSC arrays of A are the CSR arrays of Aᵀ).
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_transpose_async (AtomrSparseActor    *self,
                                    AtomrSparseMatrix   *matrix,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "transpose", atomr_sparse_actor_transpose_async, cancellable, callback,
                     user_data);
  if (!atomr_sparse_matrix_check (matrix, atomr_actor_get_device (ATOMR_ACTOR (self)), "transpose",
                                  "matrix", &error))
    return atomr_op_fail (op, error);
  csr2csc_submit (op, "transpose", matrix, atomr_sparse_matrix_get_format (matrix), TRUE);
}

/**
 * atomr_sparse_actor_transpose_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.transpose_async].
 *
 * Returns: (transfer full): the transpose, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_actor_transpose_finish (AtomrSparseActor  *self,
                                     GAsyncResult      *result,
                                     GError           **error)
{
  return atomr_op_finish_pointer (self, result, atomr_sparse_actor_transpose_async, error);
}

/* ------------------------------------------------------------------ */
/* scale (cuBLAS on the values)                                         */

/* x[0..n) *= alpha with cuBLAS (cuSPARSE has no scaling); the handle is
 * made on first use, so only actors that need it load cuBLAS. */
gboolean
atomr_sparse_scal (AtomrSparseActor  *self,
                   AtomrOp           *op,
                   AtomrDtype         dtype,
                   gpointer           x,
                   gint64             n,
                   gdouble            value,
                   GError           **error)
{
  cudaDataType xt = atomr_sparse_cuda_type (dtype), et;
  union { gfloat f[2]; gdouble d[2]; } alpha = { { 0 } };
  cublasStatus_t st;

  if (n == 0)
    return TRUE;
  if (self->blas == NULL)
    {
      cublasHandle_t h = NULL;
      if (!atomr_cublas_load (error))
        return FALSE;
      st = cublasCreate (&h);
      if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasSetStream (h, (cudaStream_t) atomr_op_get_cu_stream (op));
      if (!atomr_library_check (st == CUBLAS_STATUS_SUCCESS, "cuBLAS", "cublasCreate",
                                cublasGetStatusName (st), st, st == CUBLAS_STATUS_ALLOC_FAILED, FALSE, error))
        {
          if (h)
            cublasDestroy (h);
          return FALSE;
        }
      self->blas = h;
    }
  /* ScalEx takes every value dtype; f16 and bf16 compute in f32. */
  switch (dtype)
    {
    case ATOMR_DTYPE_F64: et = CUDA_R_64F; alpha.d[0] = value; break;
    case ATOMR_DTYPE_C64: et = CUDA_C_32F; alpha.f[0] = (gfloat) value; break;
    case ATOMR_DTYPE_C128: et = CUDA_C_64F; alpha.d[0] = value; break;
    default: et = CUDA_R_32F; alpha.f[0] = (gfloat) value; break;
    }
  st = cublasScalEx_64 (self->blas, n, &alpha, et, x, xt, 1, et);
  return atomr_library_check (st == CUBLAS_STATUS_SUCCESS, "cuBLAS", "cublasScalEx_64",
                              cublasGetStatusName (st), st, st == CUBLAS_STATUS_ALLOC_FAILED,
                              st == CUBLAS_STATUS_NOT_SUPPORTED, error);
}

static gboolean
scale_enqueue (AtomrOp  *op,
               GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  const MatSnap *s = &r->a;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  return atomr_sparse_scal (self, op, s->value_dtype, atomr_sparse_dptr (s->values),
                            atomr_sparse_n_values (s->format, s->rows, s->nnz, s->block_size, s->ell_cols),
                            r->alpha, error);
}

/**
 * atomr_sparse_actor_scale_async:
 * @self: an [class@Atomr.SparseActor]
 * @alpha: the factor (real)
 * @matrix: the matrix whose values are scaled in place
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the values are scaled
 * @user_data: data for @callback
 *
 * A = alpha·A: every stored value times @alpha, structure unchanged
 * (cuBLAS ScalEx on the values array; cuBLAS is loaded on first use).
 * Triangular solves submitted after this call update their cached
 * analysis with the new values.
 *
 * Since: 0.1
 */
void
atomr_sparse_actor_scale_async (AtomrSparseActor    *self,
                                gdouble              alpha,
                                AtomrSparseMatrix   *matrix,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, "scale", atomr_sparse_actor_scale_async, cancellable, callback, user_data);
  if (!atomr_sparse_matrix_check (matrix, atomr_actor_get_device (ATOMR_ACTOR (self)), "scale",
                                  "matrix", &error))
    return atomr_op_fail (op, error);
  r = atomr_op_alloc_data (op, sizeof (SparseRequest), atomr_sparse_request_clear);
  r->opname = "scale";
  r->alpha = alpha;
  atomr_sparse_snap_take (op, &r->a, matrix, TRUE);
  atomr_sparse_matrix_values_changed (matrix);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, scale_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_scale_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.scale_async].
 *
 * Returns: %TRUE when the values were scaled
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_actor_scale_finish (AtomrSparseActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_sparse_actor_scale_async, error);
}

/* ------------------------------------------------------------------ */
/* Handle lifecycle and GObject                                         */

static gboolean
atomr_sparse_actor_setup (AtomrActor  *actor,
                          GError     **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (actor);
  CUstream stream = atomr_actor_get_cu_stream (actor);

  /* The host test device has no GPU: requests are validated, then refused
   * (check runs on the CPU). */
  if (atomr_device_is_host (atomr_actor_get_device (actor)))
    return TRUE;

  if (!atomr_cusparse_load (error))
    return FALSE;
  if (!atomr_sparse_status_check (cusparseCreate (&self->handle), "cusparseCreate", error))
    {
      self->handle = NULL;
      return FALSE;
    }
  if (!atomr_sparse_status_check (cusparseSetStream (self->handle, (cudaStream_t) stream), "cusparseSetStream", error) ||
      !atomr_sparse_status_check (cusparseSetPointerMode (self->handle, CUSPARSE_POINTER_MODE_HOST),
                     "cusparseSetPointerMode", error))
    {
      cusparseDestroy (self->handle);
      self->handle = NULL;
      return FALSE;
    }
  return TRUE;
}

static void
atomr_sparse_actor_teardown (AtomrActor *actor,
                             gboolean    context_alive)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (actor);
  gboolean had_workspace = self->workspace != 0;

  /* A dead context took the handle's memory with it. */
  if (context_alive)
    {
      if (self->workspace)
        ATOMR_CU->cuMemFreeAsync (self->workspace, atomr_actor_get_cu_stream (actor));
      if (self->handle)
        cusparseDestroy (self->handle);
      if (self->blas)
        cublasDestroy (self->blas);
    }
  self->workspace = 0;
  self->handle = NULL;
  self->blas = NULL;
  g_atomic_pointer_set ((gpointer *) &self->workspace_size, NULL);
  if (had_workspace)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKSPACE_SIZE]);
}

static void
atomr_sparse_actor_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (object);

  switch (prop_id)
    {
    case PROP_WORKSPACE_SIZE:
      g_value_set_uint64 (value, atomr_sparse_actor_get_workspace_size (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_sparse_actor_class_init (AtomrSparseActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->get_property = atomr_sparse_actor_get_property;
  actor_class->library = "cusparse";
  actor_class->setup = atomr_sparse_actor_setup;
  actor_class->teardown = atomr_sparse_actor_teardown;

  /**
   * AtomrSparseActor:workspace-size:
   *
   * Bytes of device memory in the actor's workspace, shared by all its
   * operations; grows to the largest buffer an operation asked for.
   * Notified on the actor's context when it changes.
   *
   * Since: 0.1
   */
  properties[PROP_WORKSPACE_SIZE] =
    g_param_spec_uint64 ("workspace-size", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_sparse_actor_init (AtomrSparseActor *self)
{
  self->id = (guint64) g_atomic_int_add (&next_actor_id, 1);
}

/**
 * atomr_sparse_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a cuSPARSE actor with its own stream and handle, bound to the
 * calling thread's thread-default main context.  Loads cuSPARSE on first
 * use; %ATOMR_ERROR_NOT_SUPPORTED names the files tried when it is missing.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrSparseActor *
atomr_sparse_actor_new (AtomrDevice  *device,
                        GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_SPARSE_ACTOR, device, NULL, error);
}

/**
 * atomr_sparse_actor_get_workspace_size:
 * @self: an [class@Atomr.SparseActor]
 *
 * Gets the bytes in the actor's workspace (see [property@Atomr.SparseActor:workspace-size]); may be called from any thread.
 *
 * This is the value of the [property@Atomr.SparseActor:workspace-size] property.
 *
 * Returns: the bytes in the actor's workspace (see
 *   [property@Atomr.SparseActor:workspace-size]); may be called from any thread
 *
 * Since: 0.1
 */
guint64
atomr_sparse_actor_get_workspace_size (AtomrSparseActor *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_ACTOR (self), 0);
  return (guint64) (gsize) g_atomic_pointer_get ((gpointer *) &self->workspace_size);
}
