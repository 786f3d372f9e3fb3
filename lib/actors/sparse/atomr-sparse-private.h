/* atomr-sparse-private.h — what the sparse actor needs from matrices and
 * vectors: structure checks on host memory, and plans cached per matrix
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "actors/sparse/atomr-sparse-matrix.h"
#include "actors/sparse/atomr-sparse-vector.h"
#include "core/atomr-buffer-private.h"

G_BEGIN_DECLS

/* Checks the structure of a matrix whose index arrays are in host memory
 * (an upload, the host test device, or a copy made for
 * atomr_sparse_actor_check_async()).  @offsets: CSR/CSC/BSR offsets,
 * @row_indices: COO rows, @indices: the minor indices.  CSR, CSC and BSR
 * rows must have sorted, distinct indices; COO must be sorted by (row,
 * column) without duplicates.  INVALID_ARGUMENT names the first position
 * that is wrong and its value. */
gboolean atomr_sparse_check_structure (AtomrSparseFormat  format,
                                       gint64             rows,
                                       gint64             cols,
                                       gint64             nnz,
                                       gint64             block_size,
                                       gint64             ell_cols,
                                       AtomrDtype         index_dtype,
                                       gconstpointer      offsets,
                                       gconstpointer      row_indices,
                                       gconstpointer      indices,
                                       GError           **error);

/* Index @i of an i32 or i64 array. */
static inline gint64
atomr_sparse_index_at (AtomrDtype    dtype,
                       gconstpointer array,
                       gint64        i)
{
  return dtype == ATOMR_DTYPE_I64 ? ((const gint64 *) array)[i]
                                  : (gint64) ((const gint32 *) array)[i];
}

/* Elements in the offsets array (0 for COO and Blocked-ELL), in the minor
 * index array and in the values array of a matrix of this shape. */
gint64   atomr_sparse_n_offsets (AtomrSparseFormat format, gint64 rows, gint64 cols,
                                 gint64 block_size);
gint64   atomr_sparse_n_indices (AtomrSparseFormat format, gint64 rows, gint64 nnz,
                                 gint64 block_size, gint64 ell_cols);
gint64   atomr_sparse_n_values  (AtomrSparseFormat format, gint64 rows, gint64 nnz,
                                 gint64 block_size, gint64 ell_cols);

/* A matrix made by atomr_sparse_matrix_new_*() (not a bare g_object_new()),
 * on @device, whose buffers are all live.  @what names the argument. */
gboolean atomr_sparse_matrix_check (AtomrSparseMatrix *self,
                                    AtomrDevice       *device,
                                    const gchar       *op,
                                    const gchar       *what,
                                    GError           **error);
gboolean atomr_sparse_vector_check (AtomrSparseVector *self,
                                    AtomrDevice       *device,
                                    const gchar       *op,
                                    const gchar       *what,
                                    GError           **error);

guint    atomr_sparse_matrix_get_values_serial (AtomrSparseMatrix *self);
/* An operation submitted now rewrites the values in place (scale, SDDMM):
 * later triangular solves update their analysis. */
void     atomr_sparse_matrix_values_changed   (AtomrSparseMatrix *self);

/* A plan: what an operation computed about a matrix and keeps for the next
 * call (buffer sizes, SpSV/SpSM analysis).  Owned by the matrix, keyed by
 * the actor that made it (its unique id, never its address), the kind of
 * operation and a key of the operation's other parameters.  Only that
 * actor touches it, on its own context. */
typedef struct {
  guint64         actor_id;
  guint           kind;
  guint64         key;
  guint           structure_serial;  /* of the matrix when it was made */
  guint           values_serial;
  gsize           buffer_size;
  gboolean        sized;             /* buffer_size is known */
  guint64         key2, key3;        /* shapes the size or analysis is for */
  gpointer        descr;             /* e.g. cusparseSpSVDescr_t */
  GDestroyNotify  descr_free;
  gpointer        mat_descr;         /* the cusparseSpMatDescr_t it used */
  GDestroyNotify  mat_descr_free;
  AtomrBuffer    *analysis;          /* device memory the analysis lives in */
} AtomrSparsePlan;

/* The plan for (actor_id, kind, key), created empty when missing.  A plan
 * made for an older structure is emptied (its descriptors freed) first:
 * the caller sees buffer_size == 0 and descr == NULL and starts over.
 * The plan stays owned by the matrix. */
AtomrSparsePlan *atomr_sparse_matrix_get_plan (AtomrSparseMatrix *self,
                                               guint64            actor_id,
                                               guint              kind,
                                               guint64            key);
/* Forgets every plan made by @actor_id (the actor is going away). */
void             atomr_sparse_matrix_drop_plans (AtomrSparseMatrix *self,
                                                 guint64            actor_id);
guint            atomr_sparse_matrix_count_plans (AtomrSparseMatrix *self);

/* A matrix over freshly made buffers (SpGEMM, conversions): no checks
 * beyond the constructor's own. */
AtomrSparseMatrix *atomr_sparse_matrix_new_internal (AtomrSparseFormat  format,
                                                     gint64             rows,
                                                     gint64             cols,
                                                     gint64             nnz,
                                                     gint64             block_size,
                                                     gint64             ell_cols,
                                                     AtomrBuffer       *offsets,
                                                     AtomrBuffer       *row_indices,
                                                     AtomrBuffer       *indices,
                                                     AtomrBuffer       *values,
                                                     GError           **error);

G_END_DECLS
