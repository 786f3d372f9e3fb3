/* atomr-sparse-actor-convert.c — COO ↔ CSR and CSR ↔ BSR conversions
 *
 * cuSPARSE's generic API converts only CSR ↔ CSC (Csr2cscEx2, in
 * atomr-sparse-actor.c) and dense ↔ sparse; these pairs go through its
 * format-conversion routines, which take i32 indices:
 *
 *   COO → CSR  cusparseXcoo2csr (row indices → row offsets; the column
 *              indices and values are copied: COO is sorted by row)
 *   CSR → COO  cusparseXcsr2coo (the other way)
 *   CSR → BSR  cusparseXcsr2bsrNnz (block row offsets and the block count,
 *              which comes back to the host: the block arrays are sized by
 *              it inside the enqueue, as SpGEMM does) then
 *              cusparse{S,D,C,Z}csr2bsr (row-major blocks)
 *   BSR → CSR  cusparse{S,D,C,Z}bsr2csr (every value of every stored block,
 *              explicit zeros included: nnz = blocks × block-size²)
 *
 * Threads: the _submit functions run on the caller's thread (checks and
 * the output allocations known up front), the enqueue functions on the
 * actor's context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "actors/sparse/atomr-sparse-actor-private.h"

/* Values the legacy block routines take: f32, f64, c64, c128. */
static gboolean
block_value_dtype_ok (const gchar  *opname,
                      AtomrDtype    dtype,
                      GError      **error)
{
  if (dtype == ATOMR_DTYPE_F32 || dtype == ATOMR_DTYPE_F64 ||
      dtype == ATOMR_DTYPE_C64 || dtype == ATOMR_DTYPE_C128)
    return TRUE;
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
               "%s: the matrix has %s values; cuSPARSE's BSR conversions take f32, f64, c64 or c128",
               opname, atomr_dtype_get_name (dtype));
  return FALSE;
}

static gboolean
index32_ok (const gchar       *opname,
            AtomrSparseMatrix *matrix,
            GError           **error)
{
  AtomrDtype it = atomr_sparse_matrix_get_index_dtype (matrix);

  if (it != ATOMR_DTYPE_I32)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: the matrix has %s indices; cuSPARSE's format conversions take i32 indices only",
                   opname, atomr_dtype_get_name (it));
      return FALSE;
    }
  return TRUE;
}

static gboolean
copy_dtod (CUdeviceptr dst, AtomrBuffer *src, gsize bytes, CUstream stream, GError **error)
{
  if (bytes == 0)
    return TRUE;
  return atomr_cuda_check (ATOMR_CU->cuMemcpyDtoDAsync (dst, atomr_buffer_get_ptr (src), bytes, stream),
                           "cuMemcpyDtoDAsync", error);
}

static gboolean
zero_offsets (AtomrBuffer *offsets, CUstream stream, GError **error)
{
  return atomr_cuda_check (ATOMR_CU->cuMemsetD8Async (atomr_buffer_get_ptr (offsets), 0,
                                                       atomr_buffer_get_byte_size (offsets), stream),
                           "cuMemsetD8Async", error);
}

/* ------------------------------------------------------------------ */
/* COO ↔ CSR                                                            */

static gboolean
coo_csr_enqueue (AtomrOp  *op,
                 GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  const MatSnap *s = &r->a;
  CUstream stream = atomr_op_get_cu_stream (op);
  gsize vsize = atomr_dtype_get_size (s->value_dtype);
  AtomrBuffer *out_idx = atomr_sparse_matrix_get_indices (r->result);
  AtomrBuffer *out_val = atomr_sparse_matrix_get_values (r->result);

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (r->target == ATOMR_SPARSE_FORMAT_CSR)
    {
      AtomrBuffer *out_off = atomr_sparse_matrix_get_offsets (r->result);

      if (s->nnz == 0 || s->rows == 0)
        {
          if (!zero_offsets (out_off, stream, error))
            return FALSE;
        }
      else if (!atomr_sparse_status_check (cusparseXcoo2csr (self->handle, atomr_sparse_dptr (s->row_indices),
                                                             (int) s->nnz, (int) s->rows,
                                                             atomr_sparse_dptr (out_off), CUSPARSE_INDEX_BASE_ZERO),
                                           "cusparseXcoo2csr", error))
        return FALSE;
    }
  else
    {
      AtomrBuffer *out_rows = atomr_sparse_matrix_get_row_indices (r->result);

      if (s->nnz > 0 &&
          !atomr_sparse_status_check (cusparseXcsr2coo (self->handle, atomr_sparse_dptr (s->offsets),
                                                        (int) s->nnz, (int) s->rows,
                                                        atomr_sparse_dptr (out_rows), CUSPARSE_INDEX_BASE_ZERO),
                                      "cusparseXcsr2coo", error))
        return FALSE;
    }
  return copy_dtod (atomr_buffer_get_ptr (out_idx), s->indices, (gsize) s->nnz * sizeof (gint32), stream, error) &&
         copy_dtod (atomr_buffer_get_ptr (out_val), s->values, (gsize) s->nnz * vsize, stream, error);
}

void
atomr_sparse_coo_csr_submit (AtomrOp           *op,
                             const gchar       *opname,
                             AtomrSparseMatrix *matrix,
                             AtomrSparseFormat  format)
{
  SparseRequest *r;
  GError *error = NULL;
  AtomrDevice *device = atomr_sparse_matrix_get_device (matrix);
  gint64 rows = atomr_sparse_matrix_get_rows (matrix);
  gint64 cols = atomr_sparse_matrix_get_cols (matrix);
  gint64 nnz = atomr_sparse_matrix_get_nnz (matrix);
  g_autoptr(AtomrBuffer) off = NULL, row_idx = NULL, idx = NULL, val = NULL;

  if (!index32_ok (opname, matrix, &error))
    return atomr_op_fail (op, error);
  if (format == ATOMR_SPARSE_FORMAT_CSR)
    off = atomr_buffer_new (device, ATOMR_DTYPE_I32, rows + 1, &error);
  else
    row_idx = atomr_buffer_new (device, ATOMR_DTYPE_I32, MAX (nnz, 1), &error);
  if (off != NULL || row_idx != NULL)
    idx = atomr_buffer_new (device, ATOMR_DTYPE_I32, MAX (nnz, 1), &error);
  if (idx != NULL)
    val = atomr_buffer_new (device, atomr_sparse_matrix_get_value_dtype (matrix), MAX (nnz, 1), &error);
  if (val == NULL)
    return atomr_op_fail (op, error);

  r = atomr_op_alloc_data (op, sizeof (SparseRequest), atomr_sparse_request_clear);
  r->opname = opname;
  r->target = format;
  r->result = atomr_sparse_matrix_new_internal (format, rows, cols, nnz, 1, 0, off, row_idx, idx, val, &error);
  if (r->result == NULL)
    return atomr_op_fail (op, error);
  atomr_sparse_snap_take (op, &r->a, matrix, FALSE);
  if (off)
    atomr_op_write (op, off);
  if (row_idx)
    atomr_op_write (op, row_idx);
  atomr_op_write (op, idx);
  atomr_op_write (op, val);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, coo_csr_enqueue);
  atomr_op_set_complete (op, atomr_sparse_complete_result);
  atomr_op_submit (op);
}

/* ------------------------------------------------------------------ */
/* BSR → CSR                                                            */

static gboolean
bsr2csr_enqueue (AtomrOp  *op,
                 GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  const MatSnap *s = &r->a;
  CUstream stream = atomr_op_get_cu_stream (op);
  int mb = (int) (s->rows / s->block_size), nb = (int) (s->cols / s->block_size), bs = (int) s->block_size;
  AtomrBuffer *out_off = atomr_sparse_matrix_get_offsets (r->result);
  gpointer co = atomr_sparse_dptr (out_off);
  gpointer ci = atomr_sparse_dptr (atomr_sparse_matrix_get_indices (r->result));
  gpointer cv = atomr_sparse_dptr (atomr_sparse_matrix_get_values (r->result));
  gpointer bo = atomr_sparse_dptr (s->offsets), bi = atomr_sparse_dptr (s->indices), bv = atomr_sparse_dptr (s->values);
  cusparseMatDescr_t da = NULL, dc = NULL;
  cusparseDirection_t dir = CUSPARSE_DIRECTION_ROW;
  cusparseStatus_t st;
  gboolean ok;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (s->nnz == 0 || mb == 0 || nb == 0)
    return zero_offsets (out_off, stream, error);
  /* descriptors: general, zero-based (the defaults); host objects */
  if (!atomr_sparse_status_check (cusparseCreateMatDescr (&da), "cusparseCreateMatDescr", error))
    return FALSE;
  if (!atomr_sparse_status_check (cusparseCreateMatDescr (&dc), "cusparseCreateMatDescr", error))
    {
      cusparseDestroyMatDescr (da);
      return FALSE;
    }
  switch (s->value_dtype)
    {
    case ATOMR_DTYPE_F32:
      st = cusparseSbsr2csr (self->handle, dir, mb, nb, da, bv, bo, bi, bs, dc, cv, co, ci);
      break;
    case ATOMR_DTYPE_F64:
      st = cusparseDbsr2csr (self->handle, dir, mb, nb, da, bv, bo, bi, bs, dc, cv, co, ci);
      break;
    case ATOMR_DTYPE_C64:
      st = cusparseCbsr2csr (self->handle, dir, mb, nb, da, bv, bo, bi, bs, dc, cv, co, ci);
      break;
    default:
      st = cusparseZbsr2csr (self->handle, dir, mb, nb, da, bv, bo, bi, bs, dc, cv, co, ci);
      break;
    }
  ok = atomr_sparse_status_check (st, "cusparse?bsr2csr", error);
  cusparseDestroyMatDescr (da);
  cusparseDestroyMatDescr (dc);
  return ok;
}

void
atomr_sparse_bsr2csr_submit (AtomrOp           *op,
                             const gchar       *opname,
                             AtomrSparseMatrix *matrix)
{
  SparseRequest *r;
  GError *error = NULL;
  AtomrDevice *device = atomr_sparse_matrix_get_device (matrix);
  gint64 rows = atomr_sparse_matrix_get_rows (matrix);
  gint64 cols = atomr_sparse_matrix_get_cols (matrix);
  gint64 bs = atomr_sparse_matrix_get_block_size (matrix);
  guint64 n_csr;
  gint64 nnz;
  g_autoptr(AtomrBuffer) off = NULL, idx = NULL, val = NULL;

  if (!index32_ok (opname, matrix, &error) ||
      !block_value_dtype_ok (opname, atomr_sparse_matrix_get_value_dtype (matrix), &error))
    return atomr_op_fail (op, error);
  if (!g_uint64_checked_mul (&n_csr, (guint64) atomr_sparse_matrix_get_nnz (matrix), (guint64) bs) ||
      !g_uint64_checked_mul (&n_csr, n_csr, (guint64) bs) || n_csr > G_MAXINT32)
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %" G_GINT64_FORMAT " blocks of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                   " make more than 2^31 CSR entries (i32 indices)", opname,
                   atomr_sparse_matrix_get_nnz (matrix), bs, bs);
      return atomr_op_fail (op, error);
    }
  nnz = (gint64) n_csr;
  off = atomr_buffer_new (device, ATOMR_DTYPE_I32, rows + 1, &error);
  if (off)
    idx = atomr_buffer_new (device, ATOMR_DTYPE_I32, MAX (nnz, 1), &error);
  if (idx)
    val = atomr_buffer_new (device, atomr_sparse_matrix_get_value_dtype (matrix), MAX (nnz, 1), &error);
  if (val == NULL)
    return atomr_op_fail (op, error);

  r = atomr_op_alloc_data (op, sizeof (SparseRequest), atomr_sparse_request_clear);
  r->opname = opname;
  r->target = ATOMR_SPARSE_FORMAT_CSR;
  r->result = atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_CSR, rows, cols, nnz, 1, 0,
                                                off, NULL, idx, val, &error);
  if (r->result == NULL)
    return atomr_op_fail (op, error);
  atomr_sparse_snap_take (op, &r->a, matrix, FALSE);
  atomr_op_write (op, off);
  atomr_op_write (op, idx);
  atomr_op_write (op, val);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, bsr2csr_enqueue);
  atomr_op_set_complete (op, atomr_sparse_complete_result);
  atomr_op_submit (op);
}

/* ------------------------------------------------------------------ */
/* CSR → BSR                                                            */

static gboolean
csr2bsr_enqueue (AtomrOp  *op,
                 GError  **error)
{
  AtomrSparseActor *self = ATOMR_SPARSE_ACTOR (atomr_op_get_actor (op));
  SparseRequest *r = atomr_op_get_data (op);
  const MatSnap *s = &r->a;
  CUstream stream = atomr_op_get_cu_stream (op);
  gint64 bs = r->target_block;
  int m = (int) s->rows, n = (int) s->cols, nnzb = 0;
  gpointer ao = atomr_sparse_dptr (s->offsets), ai = atomr_sparse_dptr (s->indices), av = atomr_sparse_dptr (s->values);
  gpointer bo = atomr_sparse_dptr (r->result_offsets);
  cusparseMatDescr_t da = NULL, dc = NULL;
  cusparseDirection_t dir = CUSPARSE_DIRECTION_ROW;
  cusparseStatus_t st;
  g_autoptr(AtomrBuffer) idx = NULL, val = NULL;
  gboolean ok = FALSE;

  if (!atomr_sparse_need_gpu (op, r, error))
    return FALSE;
  if (s->nnz == 0 || m == 0 || n == 0)
    {
      /* nothing stored: no block */
      if (!zero_offsets (r->result_offsets, stream, error))
        return FALSE;
    }
  else
    {
      if (!atomr_sparse_status_check (cusparseCreateMatDescr (&da), "cusparseCreateMatDescr", error) ||
          !atomr_sparse_status_check (cusparseCreateMatDescr (&dc), "cusparseCreateMatDescr", error))
        goto out;
      /* The handle is in host pointer mode: the block count comes back to
       * the host (cuSPARSE waits for it), as SpGEMM's size does. */
      if (!atomr_sparse_status_check (cusparseXcsr2bsrNnz (self->handle, dir, m, n, da, ao, ai, (int) bs, dc,
                                                           bo, &nnzb),
                                      "cusparseXcsr2bsrNnz", error))
        goto out;
    }
  idx = atomr_sparse_late_buffer (op, ATOMR_DTYPE_I32, nnzb, error);
  if (idx == NULL)
    goto out;
  val = atomr_sparse_late_buffer (op, s->value_dtype, (gint64) nnzb * bs * bs, error);
  if (val == NULL)
    goto out;
  if (nnzb > 0)
    {
      gpointer bi = atomr_sparse_dptr (idx), bv = atomr_sparse_dptr (val);

      switch (s->value_dtype)
        {
        case ATOMR_DTYPE_F32:
          st = cusparseScsr2bsr (self->handle, dir, m, n, da, av, ao, ai, (int) bs, dc, bv, bo, bi);
          break;
        case ATOMR_DTYPE_F64:
          st = cusparseDcsr2bsr (self->handle, dir, m, n, da, av, ao, ai, (int) bs, dc, bv, bo, bi);
          break;
        case ATOMR_DTYPE_C64:
          st = cusparseCcsr2bsr (self->handle, dir, m, n, da, av, ao, ai, (int) bs, dc, bv, bo, bi);
          break;
        default:
          st = cusparseZcsr2bsr (self->handle, dir, m, n, da, av, ao, ai, (int) bs, dc, bv, bo, bi);
          break;
        }
      if (!atomr_sparse_status_check (st, "cusparse?csr2bsr", error))
        goto out;
    }
  r->result = atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_BSR, s->rows, s->cols, nnzb, bs, 0,
                                                r->result_offsets, NULL, idx, val, error);
  ok = r->result != NULL;
out:
  if (da)
    cusparseDestroyMatDescr (da);
  if (dc)
    cusparseDestroyMatDescr (dc);
  return ok;
}

/**
 * atomr_sparse_actor_convert_to_bsr_async:
 * @self: an [class@Atomr.SparseActor]
 * @matrix: a CSR matrix with i32 indices, columns sorted within each row,
 *   and f32, f64, c64 or c128 values
 * @block_size: the side of the square blocks (≥ 1; must divide the rows
 *   and the columns of @matrix)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the new matrix
 * @user_data: data for @callback
 *
 * The same matrix in BSR with @block_size × @block_size row-major blocks
 * (cusparseXcsr2bsrNnz, then cusparse?csr2bsr), into new buffers.  The
 * number of blocks is counted on the GPU and comes back to the host
 * before the block arrays are allocated, inside the operation.  Fails
 * with %ATOMR_ERROR_INVALID_ARGUMENT for a block size that is not
 * positive or does not divide the shape, and %ATOMR_ERROR_NOT_SUPPORTED
 * for another format, i64 indices or half-precision values.  The way
 * back is [method@Atomr.SparseActor.convert_async] to
 * %ATOMR_SPARSE_FORMAT_CSR.
 *
 * Since: 0.2
 */
void
atomr_sparse_actor_convert_to_bsr_async (AtomrSparseActor    *self,
                                         AtomrSparseMatrix   *matrix,
                                         gint64               block_size,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  const gchar *opname = "convert-to-bsr";
  AtomrOp *op;
  SparseRequest *r;
  GError *error = NULL;
  gint64 rows, cols;

  g_return_if_fail (ATOMR_IS_SPARSE_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_sparse_actor_convert_to_bsr_async, cancellable, callback, user_data);
  if (!atomr_sparse_matrix_check (matrix, atomr_actor_get_device (ATOMR_ACTOR (self)), opname, "matrix", &error))
    return atomr_op_fail (op, error);
  if (atomr_sparse_matrix_get_format (matrix) != ATOMR_SPARSE_FORMAT_CSR)
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: the matrix is %s; only CSR converts to BSR", opname,
                   atomr_sparse_format_short[atomr_sparse_matrix_get_format (matrix)]);
      return atomr_op_fail (op, error);
    }
  if (!index32_ok (opname, matrix, &error) ||
      !block_value_dtype_ok (opname, atomr_sparse_matrix_get_value_dtype (matrix), &error))
    return atomr_op_fail (op, error);
  rows = atomr_sparse_matrix_get_rows (matrix);
  cols = atomr_sparse_matrix_get_cols (matrix);
  if (block_size < 1 || block_size > G_MAXINT32 || rows % block_size != 0 || cols % block_size != 0)
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: block_size %" G_GINT64_FORMAT " must be positive and divide the %" G_GINT64_FORMAT
                   " × %" G_GINT64_FORMAT " matrix", opname, block_size, rows, cols);
      return atomr_op_fail (op, error);
    }

  r = atomr_op_alloc_data (op, sizeof (SparseRequest), atomr_sparse_request_clear);
  r->opname = opname;
  r->target = ATOMR_SPARSE_FORMAT_BSR;
  r->target_block = block_size;
  r->result_offsets = atomr_buffer_new (atomr_sparse_matrix_get_device (matrix), ATOMR_DTYPE_I32,
                                        rows / block_size + 1, &error);
  if (r->result_offsets == NULL)
    return atomr_op_fail (op, error);
  atomr_sparse_snap_take (op, &r->a, matrix, FALSE);
  atomr_op_write (op, r->result_offsets);
  atomr_sparse_set_detail (op, &r->a);
  atomr_op_set_enqueue (op, csr2bsr_enqueue);
  atomr_op_set_complete (op, atomr_sparse_complete_result);
  atomr_op_submit (op);
}

/**
 * atomr_sparse_actor_convert_to_bsr_finish:
 * @self: an [class@Atomr.SparseActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SparseActor.convert_to_bsr_async].
 *
 * Returns: (transfer full): the BSR matrix, or %NULL with an error
 *
 * Since: 0.2
 */
AtomrSparseMatrix *
atomr_sparse_actor_convert_to_bsr_finish (AtomrSparseActor  *self,
                                          GAsyncResult      *result,
                                          GError           **error)
{
  return atomr_op_finish_pointer (self, result, atomr_sparse_actor_convert_to_bsr_async, error);
}
