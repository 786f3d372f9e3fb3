/* atomr-sparse-matrix.h — sparse matrices over device buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "core/atomr-buffer.h"
#include "core/atomr-device.h"
#include "core/atomr-dtype.h"

G_BEGIN_DECLS

/**
 * AtomrSparseFormat:
 * @ATOMR_SPARSE_FORMAT_CSR: compressed sparse rows: row offsets (rows + 1),
 *   column indices and values (nnz each)
 * @ATOMR_SPARSE_FORMAT_CSC: compressed sparse columns: column offsets
 *   (cols + 1), row indices and values (nnz each)
 * @ATOMR_SPARSE_FORMAT_COO: coordinates: row indices, column indices and
 *   values (nnz each), sorted by row, then column
 * @ATOMR_SPARSE_FORMAT_BSR: blocked CSR: square blocks of block-size ×
 *   block-size values (row-major inside a block); offsets and column
 *   indices count blocks, nnz is the number of stored blocks
 * @ATOMR_SPARSE_FORMAT_BLOCKED_ELL: blocked ELLPACK: every block row stores
 *   ell-cols / block-size blocks; column indices (of blocks, -1 for padding)
 *   are a (rows / block-size) × (ell-cols / block-size) row-major array,
 *   values a rows × ell-cols row-major array
 *
 * The storage formats of an [class@Atomr.SparseMatrix] (cuSPARSE's generic API).
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_SPARSE_FORMAT_CSR,
  ATOMR_SPARSE_FORMAT_CSC,
  ATOMR_SPARSE_FORMAT_COO,
  ATOMR_SPARSE_FORMAT_BSR,
  ATOMR_SPARSE_FORMAT_BLOCKED_ELL,
} AtomrSparseFormat;

ATOMR_AVAILABLE_IN_ALL
GType atomr_sparse_format_get_type (void) G_GNUC_CONST;
#define ATOMR_TYPE_SPARSE_FORMAT (atomr_sparse_format_get_type ())

#define ATOMR_TYPE_SPARSE_MATRIX (atomr_sparse_matrix_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrSparseMatrix, atomr_sparse_matrix, ATOMR, SPARSE_MATRIX, GObject)

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseMatrix *atomr_sparse_matrix_new_csr        (gint64         rows,
                                                       gint64         cols,
                                                       gint64         nnz,
                                                       AtomrBuffer   *row_offsets,
                                                       AtomrBuffer   *col_indices,
                                                       AtomrBuffer   *values,
                                                       GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseMatrix *atomr_sparse_matrix_new_csc        (gint64         rows,
                                                       gint64         cols,
                                                       gint64         nnz,
                                                       AtomrBuffer   *col_offsets,
                                                       AtomrBuffer   *row_indices,
                                                       AtomrBuffer   *values,
                                                       GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseMatrix *atomr_sparse_matrix_new_coo        (gint64         rows,
                                                       gint64         cols,
                                                       gint64         nnz,
                                                       AtomrBuffer   *row_indices,
                                                       AtomrBuffer   *col_indices,
                                                       AtomrBuffer   *values,
                                                       GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseMatrix *atomr_sparse_matrix_new_bsr        (gint64         rows,
                                                       gint64         cols,
                                                       gint64         block_size,
                                                       gint64         n_blocks,
                                                       AtomrBuffer   *block_row_offsets,
                                                       AtomrBuffer   *block_col_indices,
                                                       AtomrBuffer   *values,
                                                       GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseMatrix *atomr_sparse_matrix_new_blocked_ell (gint64        rows,
                                                        gint64        cols,
                                                        gint64        block_size,
                                                        gint64        ell_cols,
                                                        AtomrBuffer  *block_col_indices,
                                                        AtomrBuffer  *values,
                                                        GError      **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseMatrix *atomr_sparse_matrix_new_from_bytes (AtomrDevice       *device,
                                                       AtomrSparseFormat  format,
                                                       gint64             rows,
                                                       gint64             cols,
                                                       gint64             block_size,
                                                       AtomrDtype         index_dtype,
                                                       GBytes            *offsets,
                                                       GBytes            *indices,
                                                       AtomrDtype         value_dtype,
                                                       GBytes            *values,
                                                       GCancellable      *cancellable,
                                                       GError           **error);

ATOMR_AVAILABLE_IN_ALL
AtomrSparseFormat  atomr_sparse_matrix_get_format      (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
gint64             atomr_sparse_matrix_get_rows        (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
gint64             atomr_sparse_matrix_get_cols        (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
gint64             atomr_sparse_matrix_get_nnz         (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
gint64             atomr_sparse_matrix_get_block_size  (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
gint64             atomr_sparse_matrix_get_ell_cols    (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype         atomr_sparse_matrix_get_index_dtype (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype         atomr_sparse_matrix_get_value_dtype (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDevice       *atomr_sparse_matrix_get_device      (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer       *atomr_sparse_matrix_get_offsets     (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer       *atomr_sparse_matrix_get_row_indices (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer       *atomr_sparse_matrix_get_indices     (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer       *atomr_sparse_matrix_get_values      (AtomrSparseMatrix *self);
ATOMR_AVAILABLE_IN_ALL
guint              atomr_sparse_matrix_get_structure_serial (AtomrSparseMatrix *self);

ATOMR_AVAILABLE_IN_ALL
gboolean           atomr_sparse_matrix_set_values      (AtomrSparseMatrix *self,
                                                        AtomrBuffer       *values,
                                                        GError           **error);
ATOMR_AVAILABLE_IN_ALL
void               atomr_sparse_matrix_structure_changed (AtomrSparseMatrix *self);

G_END_DECLS
