/* atomr-sparse-matrix.c — sparse matrices over device buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "actors/sparse/atomr-sparse-private.h"
#include "core/atomr-error.h"
#include "atomr-enum-types.h"

/**
 * AtomrSparseMatrix:
 *
 * A sparse matrix in one of the formats of cuSPARSE's generic API
 * ([enum@Atomr.SparseFormat]), over device buffers: offsets, indices (both
 * %ATOMR_DTYPE_I32 or both %ATOMR_DTYPE_I64, zero-based) and values
 * (%ATOMR_DTYPE_F16, %ATOMR_DTYPE_BF16, %ATOMR_DTYPE_F32, %ATOMR_DTYPE_F64,
 * %ATOMR_DTYPE_C64 or %ATOMR_DTYPE_C128).
 *
 * Constructors from device buffers check what is cheap to check — shapes,
 * dtypes, buffer sizes, one device — and never read the buffers: the
 * contents are checked on request with [method@Atomr.SparseActor.check_async].
 * [ctor@Atomr.SparseMatrix.new_from_bytes] checks the contents on the host
 * before uploading them (and sorts COO input).
 *
 * The matrix keeps what operations learnt about it (buffer sizes,
 * triangular-solve analysis) as plans, per actor.  They are thrown away
 * when the structure changes ([method@Atomr.SparseMatrix.structure_changed]);
 * new values ([method@Atomr.SparseMatrix.set_values]) keep the analysis, which
 * is updated in place on the next solve.
 *
 * Thread safety: the getters and the plan table may be used from any
 * thread; an actor touches its own plans on its own context only.
 *
 * Since: 0.1
 */

struct _AtomrSparseMatrix
{
  GObject            parent_instance;

  AtomrSparseFormat  format;
  gint64             rows, cols, nnz;
  gint64             block_size, ell_cols;
  AtomrDtype         index_dtype, value_dtype;
  AtomrBuffer       *offsets;       /* CSR, CSC, BSR */
  AtomrBuffer       *row_indices;   /* COO */
  AtomrBuffer       *indices;       /* minor indices, all formats */
  AtomrBuffer       *values;

  GMutex             lock;          /* values, serials, plans */
  guint              structure_serial;
  guint              values_serial;
  GPtrArray         *plans;         /* AtomrSparsePlan */
};

G_DEFINE_FINAL_TYPE (AtomrSparseMatrix, atomr_sparse_matrix, G_TYPE_OBJECT)

G_DEFINE_ENUM_TYPE (AtomrSparseFormat, atomr_sparse_format,
  G_DEFINE_ENUM_VALUE (ATOMR_SPARSE_FORMAT_CSR, "csr"),
  G_DEFINE_ENUM_VALUE (ATOMR_SPARSE_FORMAT_CSC, "csc"),
  G_DEFINE_ENUM_VALUE (ATOMR_SPARSE_FORMAT_COO, "coo"),
  G_DEFINE_ENUM_VALUE (ATOMR_SPARSE_FORMAT_BSR, "bsr"),
  G_DEFINE_ENUM_VALUE (ATOMR_SPARSE_FORMAT_BLOCKED_ELL, "blocked-ell"))

enum {
  PROP_0,
  PROP_FORMAT,
  PROP_ROWS,
  PROP_COLS,
  PROP_NNZ,
  PROP_BLOCK_SIZE,
  PROP_ELL_COLS,
  PROP_INDEX_DTYPE,
  PROP_VALUE_DTYPE,
  PROP_VALUES,
  PROP_STRUCTURE_SERIAL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const gchar *const format_names[] = { "CSR", "CSC", "COO", "BSR", "Blocked-ELL" };

static const gchar *
format_name (AtomrSparseFormat format)
{
  return (guint) format < G_N_ELEMENTS (format_names) ? format_names[format] : "?";
}

/* ------------------------------------------------------------------ */
/* Plans                                                                */

static void
plan_clear (AtomrSparsePlan *plan)
{
  if (plan->descr && plan->descr_free)
    plan->descr_free (plan->descr);
  if (plan->mat_descr && plan->mat_descr_free)
    plan->mat_descr_free (plan->mat_descr);
  plan->descr = NULL;
  plan->mat_descr = NULL;
  plan->buffer_size = 0;
  plan->sized = FALSE;
  plan->key2 = plan->key3 = 0;
  g_clear_object (&plan->analysis);
}

static void
plan_free (gpointer data)
{
  AtomrSparsePlan *plan = data;

  plan_clear (plan);
  g_free (plan);
}

AtomrSparsePlan *
atomr_sparse_matrix_get_plan (AtomrSparseMatrix *self,
                              guint64            actor_id,
                              guint              kind,
                              guint64            key)
{
  AtomrSparsePlan *plan = NULL;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->plans->len; i++)
    {
      AtomrSparsePlan *p = g_ptr_array_index (self->plans, i);
      if (p->actor_id == actor_id && p->kind == kind && p->key == key)
        {
          plan = p;
          break;
        }
    }
  if (plan == NULL)
    {
      plan = g_new0 (AtomrSparsePlan, 1);
      plan->actor_id = actor_id;
      plan->kind = kind;
      plan->key = key;
      plan->structure_serial = self->structure_serial;
      plan->values_serial = self->values_serial;
      g_ptr_array_add (self->plans, plan);
    }
  else if (plan->structure_serial != self->structure_serial)
    {
      plan_clear (plan);
      plan->structure_serial = self->structure_serial;
      plan->values_serial = self->values_serial;
    }
  g_mutex_unlock (&self->lock);
  return plan;
}

void
atomr_sparse_matrix_drop_plans (AtomrSparseMatrix *self,
                                guint64            actor_id)
{
  g_mutex_lock (&self->lock);
  for (guint i = self->plans->len; i > 0; i--)
    {
      AtomrSparsePlan *p = g_ptr_array_index (self->plans, i - 1);
      if (p->actor_id == actor_id)
        g_ptr_array_remove_index_fast (self->plans, i - 1);
    }
  g_mutex_unlock (&self->lock);
}

guint
atomr_sparse_matrix_count_plans (AtomrSparseMatrix *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->plans->len;
  g_mutex_unlock (&self->lock);
  return n;
}

/* ------------------------------------------------------------------ */
/* Sizes and checks                                                     */

gint64
atomr_sparse_n_offsets (AtomrSparseFormat format,
                        gint64            rows,
                        gint64            cols,
                        gint64            block_size)
{
  switch (format)
    {
    case ATOMR_SPARSE_FORMAT_CSR: return rows + 1;
    case ATOMR_SPARSE_FORMAT_CSC: return cols + 1;
    case ATOMR_SPARSE_FORMAT_BSR: return rows / MAX (block_size, 1) + 1;
    default: return 0;
    }
}

gint64
atomr_sparse_n_indices (AtomrSparseFormat format,
                        gint64            rows,
                        gint64            nnz,
                        gint64            block_size,
                        gint64            ell_cols)
{
  if (format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    return (rows / MAX (block_size, 1)) * (ell_cols / MAX (block_size, 1));
  return nnz;
}

gint64
atomr_sparse_n_values (AtomrSparseFormat format,
                       gint64            rows,
                       gint64            nnz,
                       gint64            block_size,
                       gint64            ell_cols)
{
  switch (format)
    {
    case ATOMR_SPARSE_FORMAT_BSR: return nnz * block_size * block_size;
    case ATOMR_SPARSE_FORMAT_BLOCKED_ELL: return rows * ell_cols;
    default: return nnz;
    }
}

static gboolean
is_value_dtype (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: case ATOMR_DTYPE_BF16: case ATOMR_DTYPE_F32:
    case ATOMR_DTYPE_F64: case ATOMR_DTYPE_C64: case ATOMR_DTYPE_C128:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
fail (GError **error, const gchar *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError      **error,
      const gchar  *format,
      ...)
{
  va_list ap;

  va_start (ap, format);
  g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "");
  if (error && *error)
    {
      g_free ((*error)->message);
      (*error)->message = g_strdup_vprintf (format, ap);
    }
  va_end (ap);
  return FALSE;
}

/* Shape, dtypes and buffer sizes; never reads the buffers. */
static gboolean
check_layout (AtomrSparseFormat  format,
              gint64             rows,
              gint64             cols,
              gint64             nnz,
              gint64             block_size,
              gint64             ell_cols,
              AtomrBuffer       *offsets,
              AtomrBuffer       *row_indices,
              AtomrBuffer       *indices,
              AtomrBuffer       *values,
              GError           **error)
{
  const gchar *fname = format_name (format);
  AtomrDtype index_dtype;
  AtomrDevice *device;
  struct { const gchar *name; AtomrBuffer *buffer; gint64 needed; gboolean index; } arrays[4];
  guint n_arrays = 0;

  if ((guint) format > ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    return fail (error, "Sparse format %d is not an AtomrSparseFormat", (gint) format);
  if (rows < 0 || cols < 0)
    return fail (error, "A %s matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 " has a negative dimension", fname, rows, cols);
  if (nnz < 0)
    return fail (error, "A %s matrix with nnz %" G_GINT64_FORMAT ": nnz must not be negative",
                 fname, nnz);
  if (format == ATOMR_SPARSE_FORMAT_BSR || format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    {
      if (block_size < 1)
        return fail (error, "A %s matrix with block size %" G_GINT64_FORMAT
                     ": the block size must be at least 1", fname, block_size);
      if (rows % block_size != 0 || cols % block_size != 0)
        return fail (error, "A %s matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                     " is not made of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT " blocks",
                     fname, rows, cols, block_size, block_size);
    }
  if (format == ATOMR_SPARSE_FORMAT_BSR && nnz > (rows / block_size) * (cols / block_size))
    return fail (error, "A BSR matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 " blocks cannot store %" G_GINT64_FORMAT " blocks",
                 rows / block_size, cols / block_size, nnz);
  if (format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL &&
      (ell_cols < 0 || ell_cols % block_size != 0 || ell_cols > cols))
    return fail (error, "A Blocked-ELL matrix with ell-cols %" G_GINT64_FORMAT
                 ": it must be a multiple of the block size %" G_GINT64_FORMAT
                 " between 0 and the %" G_GINT64_FORMAT " columns", ell_cols, block_size, cols);
  if (format != ATOMR_SPARSE_FORMAT_BSR && format != ATOMR_SPARSE_FORMAT_BLOCKED_ELL &&
      cols > 0 && rows > G_MAXINT64 / cols)
    return fail (error, "A %s matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 " overflows 64 bits", fname, rows, cols);
  if ((format == ATOMR_SPARSE_FORMAT_CSR || format == ATOMR_SPARSE_FORMAT_CSC ||
       format == ATOMR_SPARSE_FORMAT_COO) && nnz > rows * cols)
    return fail (error, "A %s matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 " cannot store nnz %" G_GINT64_FORMAT, fname, rows, cols, nnz);

  switch (format)
    {
    case ATOMR_SPARSE_FORMAT_CSR:
    case ATOMR_SPARSE_FORMAT_CSC:
    case ATOMR_SPARSE_FORMAT_BSR:
      arrays[n_arrays++] = (typeof (arrays[0])) { "offsets", offsets,
        atomr_sparse_n_offsets (format, rows, cols, block_size), TRUE };
      break;
    case ATOMR_SPARSE_FORMAT_COO:
      arrays[n_arrays++] = (typeof (arrays[0])) { "row indices", row_indices, nnz, TRUE };
      break;
    default:
      break;
    }
  arrays[n_arrays++] = (typeof (arrays[0])) { "indices", indices,
    atomr_sparse_n_indices (format, rows, nnz, block_size, ell_cols), TRUE };
  arrays[n_arrays++] = (typeof (arrays[0])) { "values", values,
    atomr_sparse_n_values (format, rows, nnz, block_size, ell_cols), FALSE };

  for (guint i = 0; i < n_arrays; i++)
    if (arrays[i].buffer == NULL || !ATOMR_IS_BUFFER (arrays[i].buffer))
      return fail (error, "A %s matrix needs a buffer of %s (got %s)", fname, arrays[i].name,
                   arrays[i].buffer == NULL ? "NULL" : G_OBJECT_TYPE_NAME (arrays[i].buffer));

  index_dtype = atomr_buffer_get_dtype (arrays[0].buffer);
  device = atomr_buffer_get_device (arrays[0].buffer);
  for (guint i = 0; i < n_arrays; i++)
    {
      AtomrBuffer *b = arrays[i].buffer;
      AtomrDtype dtype = atomr_buffer_get_dtype (b);

      if (!atomr_buffer_check (b, error))
        return FALSE;
      if (atomr_buffer_get_device (b) != device)
        return fail (error, "The %s of a %s matrix are on another device than its %s",
                     arrays[i].name, fname, arrays[0].name);
      if (arrays[i].index && dtype != ATOMR_DTYPE_I32 && dtype != ATOMR_DTYPE_I64)
        return fail (error, "The %s of a %s matrix are %s; indices must be i32 or i64",
                     arrays[i].name, fname, atomr_dtype_get_name (dtype));
      if (arrays[i].index && dtype != index_dtype)
        return fail (error, "The %s of a %s matrix are %s but its %s are %s; all index arrays "
                     "must have one dtype", arrays[i].name, fname, atomr_dtype_get_name (dtype),
                     arrays[0].name, atomr_dtype_get_name (index_dtype));
      if (!arrays[i].index && !is_value_dtype (dtype))
        return fail (error, "The values of a %s matrix are %s; they must be f16, bf16, f32, "
                     "f64, c64 or c128", fname, atomr_dtype_get_name (dtype));
      if ((guint64) arrays[i].needed > atomr_buffer_get_n_elements (b))
        return fail (error, "The %s of a %s matrix need %" G_GINT64_FORMAT
                     " elements; the buffer has %" G_GUINT64_FORMAT, arrays[i].name, fname,
                     arrays[i].needed, atomr_buffer_get_n_elements (b));
    }
  if (index_dtype == ATOMR_DTYPE_I32)
    {
      gint64 biggest = MAX (MAX (rows, cols), MAX (nnz, arrays[n_arrays - 1].needed));
      if (biggest > G_MAXINT32)
        return fail (error, "A %s matrix with i32 indices cannot have %" G_GINT64_FORMAT
                     " rows, columns or entries (at most %d): use i64 indices",
                     fname, biggest, G_MAXINT32);
    }
  return TRUE;
}

static gboolean
check_minor (const gchar *fname,
             const gchar *what,
             gint64       major,
             gint64       position,
             gint64       value,
             gint64       previous,
             gint64       limit,
             gboolean     first,
             GError     **error)
{
  if (value < 0 || value >= limit)
    return fail (error, "Entry %" G_GINT64_FORMAT " of a %s matrix (%s %" G_GINT64_FORMAT
                 ") has index %" G_GINT64_FORMAT ", outside [0, %" G_GINT64_FORMAT ")",
                 position, fname, what, major, value, limit);
  if (!first && value <= previous)
    return fail (error, "Entry %" G_GINT64_FORMAT " of a %s matrix (%s %" G_GINT64_FORMAT
                 ") has index %" G_GINT64_FORMAT " after %" G_GINT64_FORMAT
                 ": indices within a %s must be sorted and distinct",
                 position, fname, what, major, value, previous, what);
  return TRUE;
}

gboolean
atomr_sparse_check_structure (AtomrSparseFormat  format,
                              gint64             rows,
                              gint64             cols,
                              gint64             nnz,
                              gint64             block_size,
                              gint64             ell_cols,
                              AtomrDtype         index_dtype,
                              gconstpointer      offsets,
                              gconstpointer      row_indices,
                              gconstpointer      indices,
                              GError           **error)
{
  const gchar *fname = format_name (format);

  switch (format)
    {
    case ATOMR_SPARSE_FORMAT_CSR:
    case ATOMR_SPARSE_FORMAT_CSC:
    case ATOMR_SPARSE_FORMAT_BSR:
      {
        gint64 bs = format == ATOMR_SPARSE_FORMAT_BSR ? block_size : 1;
        gint64 n_major = (format == ATOMR_SPARSE_FORMAT_CSC ? cols : rows) / bs;
        gint64 n_minor = (format == ATOMR_SPARSE_FORMAT_CSC ? rows : cols) / bs;
        const gchar *what = format == ATOMR_SPARSE_FORMAT_CSC ? "column" :
                            format == ATOMR_SPARSE_FORMAT_BSR ? "block row" : "row";
        gint64 first = atomr_sparse_index_at (index_dtype, offsets, 0);
        gint64 last = atomr_sparse_index_at (index_dtype, offsets, n_major);

        if (first != 0)
          return fail (error, "Offset 0 of a %s matrix is %" G_GINT64_FORMAT "; it must be 0",
                       fname, first);
        if (last != nnz)
          return fail (error, "Offset %" G_GINT64_FORMAT " (the last) of a %s matrix is %"
                       G_GINT64_FORMAT "; it must be nnz, %" G_GINT64_FORMAT,
                       n_major, fname, last, nnz);
        /* All offsets first: a bad one would make the rows meaningless. */
        for (gint64 i = 0; i < n_major; i++)
          {
            gint64 begin = atomr_sparse_index_at (index_dtype, offsets, i);
            gint64 end = atomr_sparse_index_at (index_dtype, offsets, i + 1);

            if (end < begin || end > nnz)
              return fail (error, "Offset %" G_GINT64_FORMAT " of a %s matrix is %" G_GINT64_FORMAT
                           " after %" G_GINT64_FORMAT ": offsets must not decrease and stay within "
                           "nnz %" G_GINT64_FORMAT, i + 1, fname, end, begin, nnz);
          }
        for (gint64 i = 0; i < n_major; i++)
          {
            gint64 begin = atomr_sparse_index_at (index_dtype, offsets, i);
            gint64 end = atomr_sparse_index_at (index_dtype, offsets, i + 1);
            gint64 prev = -1;

            for (gint64 k = begin; k < end; k++)
              {
                gint64 v = atomr_sparse_index_at (index_dtype, indices, k);
                if (!check_minor (fname, what, i, k, v, prev, n_minor, k == begin, error))
                  return FALSE;
                prev = v;
              }
          }
        return TRUE;
      }
    case ATOMR_SPARSE_FORMAT_COO:
      for (gint64 k = 0; k < nnz; k++)
        {
          gint64 r = atomr_sparse_index_at (index_dtype, row_indices, k);
          gint64 c = atomr_sparse_index_at (index_dtype, indices, k);

          if (r < 0 || r >= rows)
            return fail (error, "Entry %" G_GINT64_FORMAT " of a COO matrix has row %"
                         G_GINT64_FORMAT ", outside [0, %" G_GINT64_FORMAT ")", k, r, rows);
          if (c < 0 || c >= cols)
            return fail (error, "Entry %" G_GINT64_FORMAT " of a COO matrix has column %"
                         G_GINT64_FORMAT ", outside [0, %" G_GINT64_FORMAT ")", k, c, cols);
          if (k > 0)
            {
              gint64 pr = atomr_sparse_index_at (index_dtype, row_indices, k - 1);
              gint64 pc = atomr_sparse_index_at (index_dtype, indices, k - 1);
              if (r < pr || (r == pr && c < pc))
                return fail (error, "Entry %" G_GINT64_FORMAT " of a COO matrix, (%" G_GINT64_FORMAT
                             ", %" G_GINT64_FORMAT "), comes after (%" G_GINT64_FORMAT ", %"
                             G_GINT64_FORMAT "): entries must be sorted by row, then column",
                             k, r, c, pr, pc);
              if (r == pr && c == pc)
                return fail (error, "Entries %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                             " of a COO matrix are both (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                             "): duplicated entries are not allowed", k - 1, k, r, c);
            }
        }
      return TRUE;
    case ATOMR_SPARSE_FORMAT_BLOCKED_ELL:
      {
        gint64 n = atomr_sparse_n_indices (format, rows, nnz, block_size, ell_cols);
        gint64 block_cols = cols / block_size;

        for (gint64 k = 0; k < n; k++)
          {
            gint64 v = atomr_sparse_index_at (index_dtype, indices, k);
            if (v < -1 || v >= block_cols)
              return fail (error, "Block column index %" G_GINT64_FORMAT " of a Blocked-ELL "
                           "matrix is %" G_GINT64_FORMAT ", outside [-1, %" G_GINT64_FORMAT ")",
                           k, v, block_cols);
          }
        return TRUE;
      }
    default:
      return fail (error, "Sparse format %d is not an AtomrSparseFormat", (gint) format);
    }
}

gboolean
atomr_sparse_matrix_check (AtomrSparseMatrix *self,
                           AtomrDevice       *device,
                           const gchar       *op,
                           const gchar       *what,
                           GError           **error)
{
  AtomrBuffer *buffers[4];
  guint n = 0;

  if (self == NULL || !ATOMR_IS_SPARSE_MATRIX (self))
    return fail (error, "%s: %s must be an AtomrSparseMatrix (got %s)", op, what,
                 self == NULL ? "NULL" : G_OBJECT_TYPE_NAME (self));
  g_mutex_lock (&self->lock);
  if (self->values == NULL || self->indices == NULL)
    {
      g_mutex_unlock (&self->lock);
      return fail (error, "%s: %s was not made by an atomr_sparse_matrix_new_*() constructor "
                   "and has no buffers", op, what);
    }
  buffers[n++] = self->values;
  buffers[n++] = self->indices;
  if (self->offsets)
    buffers[n++] = self->offsets;
  if (self->row_indices)
    buffers[n++] = self->row_indices;
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < n; i++)
    {
      if (atomr_buffer_get_device (buffers[i]) != device)
        return fail (error, "%s: %s is on another device than the actor", op, what);
      if (!atomr_buffer_check (buffers[i], error))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Construction                                                         */

AtomrSparseMatrix *
atomr_sparse_matrix_new_internal (AtomrSparseFormat  format,
                                  gint64             rows,
                                  gint64             cols,
                                  gint64             nnz,
                                  gint64             block_size,
                                  gint64             ell_cols,
                                  AtomrBuffer       *offsets,
                                  AtomrBuffer       *row_indices,
                                  AtomrBuffer       *indices,
                                  AtomrBuffer       *values,
                                  GError           **error)
{
  AtomrSparseMatrix *self;

  if (format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    nnz = rows * MAX (ell_cols, 0);
  if (!check_layout (format, rows, cols, nnz, block_size, ell_cols,
                     offsets, row_indices, indices, values, error))
    return NULL;

  self = g_object_new (ATOMR_TYPE_SPARSE_MATRIX, NULL);
  self->format = format;
  self->rows = rows;
  self->cols = cols;
  self->nnz = nnz;
  self->block_size = (format == ATOMR_SPARSE_FORMAT_BSR ||
                      format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL) ? block_size : 1;
  self->ell_cols = format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL ? ell_cols : 0;
  self->index_dtype = atomr_buffer_get_dtype (indices);
  self->value_dtype = atomr_buffer_get_dtype (values);
  if (format == ATOMR_SPARSE_FORMAT_COO)
    self->row_indices = g_object_ref (row_indices);
  else if (format != ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    self->offsets = g_object_ref (offsets);
  self->indices = g_object_ref (indices);
  self->values = g_object_ref (values);
  return self;
}

/**
 * atomr_sparse_matrix_new_csr:
 * @rows: rows (≥ 0)
 * @cols: columns (≥ 0)
 * @nnz: stored entries (≥ 0)
 * @row_offsets: @rows + 1 row offsets, i32 or i64
 * @col_indices: @nnz column indices, the dtype of @row_offsets
 * @values: @nnz values
 * @error: return location for a [struct@GLib.Error]
 *
 * A CSR matrix over device buffers (zero-based).  The buffers are checked
 * for size, dtype and device, not read; see [method@Atomr.SparseActor.check_async]
 * to check their contents.
 *
 * Returns: (transfer full): the matrix, or %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT naming what does not fit
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_matrix_new_csr (gint64        rows,
                             gint64        cols,
                             gint64        nnz,
                             AtomrBuffer  *row_offsets,
                             AtomrBuffer  *col_indices,
                             AtomrBuffer  *values,
                             GError      **error)
{
  return atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_CSR, rows, cols, nnz, 1, 0,
                                           row_offsets, NULL, col_indices, values, error);
}

/**
 * atomr_sparse_matrix_new_csc:
 * @rows: rows (≥ 0)
 * @cols: columns (≥ 0)
 * @nnz: stored entries (≥ 0)
 * @col_offsets: @cols + 1 column offsets, i32 or i64
 * @row_indices: @nnz row indices, the dtype of @col_offsets
 * @values: @nnz values
 * @error: return location for a [struct@GLib.Error]
 *
 * A CSC matrix over device buffers, checked like
 * [ctor@Atomr.SparseMatrix.new_csr].
 *
 * Returns: (transfer full): the matrix, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_matrix_new_csc (gint64        rows,
                             gint64        cols,
                             gint64        nnz,
                             AtomrBuffer  *col_offsets,
                             AtomrBuffer  *row_indices,
                             AtomrBuffer  *values,
                             GError      **error)
{
  return atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_CSC, rows, cols, nnz, 1, 0,
                                           col_offsets, NULL, row_indices, values, error);
}

/**
 * atomr_sparse_matrix_new_coo:
 * @rows: rows (≥ 0)
 * @cols: columns (≥ 0)
 * @nnz: stored entries (≥ 0)
 * @row_indices: @nnz row indices, i32 or i64
 * @col_indices: @nnz column indices, the dtype of @row_indices
 * @values: @nnz values
 * @error: return location for a [struct@GLib.Error]
 *
 * A COO matrix over device buffers.  cuSPARSE needs the entries sorted by
 * row, then column, without duplicates: [method@Atomr.SparseActor.check_async]
 * checks that, [ctor@Atomr.SparseMatrix.new_from_bytes] sorts host input.
 *
 * Returns: (transfer full): the matrix, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_matrix_new_coo (gint64        rows,
                             gint64        cols,
                             gint64        nnz,
                             AtomrBuffer  *row_indices,
                             AtomrBuffer  *col_indices,
                             AtomrBuffer  *values,
                             GError      **error)
{
  return atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_COO, rows, cols, nnz, 1, 0,
                                           NULL, row_indices, col_indices, values, error);
}

/**
 * atomr_sparse_matrix_new_bsr:
 * @rows: rows, a multiple of @block_size
 * @cols: columns, a multiple of @block_size
 * @block_size: the side of the square blocks (≥ 1)
 * @n_blocks: stored blocks
 * @block_row_offsets: @rows / @block_size + 1 offsets (in blocks)
 * @block_col_indices: @n_blocks block-column indices
 * @values: @n_blocks × @block_size² values, row-major inside each block
 * @error: return location for a [struct@GLib.Error]
 *
 * A BSR matrix over device buffers.
 *
 * Returns: (transfer full): the matrix, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_matrix_new_bsr (gint64        rows,
                             gint64        cols,
                             gint64        block_size,
                             gint64        n_blocks,
                             AtomrBuffer  *block_row_offsets,
                             AtomrBuffer  *block_col_indices,
                             AtomrBuffer  *values,
                             GError      **error)
{
  return atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_BSR, rows, cols, n_blocks,
                                           block_size, 0, block_row_offsets, NULL,
                                           block_col_indices, values, error);
}

/**
 * atomr_sparse_matrix_new_blocked_ell:
 * @rows: rows, a multiple of @block_size
 * @cols: columns, a multiple of @block_size
 * @block_size: the side of the square blocks (≥ 1)
 * @ell_cols: stored columns per row, a multiple of @block_size, ≤ @cols
 * @block_col_indices: rows / block_size × ell_cols / block_size
 *   block-column indices, row-major, -1 for padding
 * @values: @rows × @ell_cols values, row-major
 * @error: return location for a [struct@GLib.Error]
 *
 * A Blocked-ELL matrix over device buffers (SpMM only, in cuSPARSE).
 *
 * Returns: (transfer full): the matrix, or %NULL with an error
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_matrix_new_blocked_ell (gint64        rows,
                                     gint64        cols,
                                     gint64        block_size,
                                     gint64        ell_cols,
                                     AtomrBuffer  *block_col_indices,
                                     AtomrBuffer  *values,
                                     GError      **error)
{
  return atomr_sparse_matrix_new_internal (ATOMR_SPARSE_FORMAT_BLOCKED_ELL, rows, cols, 0,
                                           block_size, ell_cols, NULL, NULL,
                                           block_col_indices, values, error);
}

/* COO entries sorted by (row, column), values moved along. */
typedef struct {
  gint64 row, col, position;
} CooEntry;

static gint
coo_entry_compare (gconstpointer a,
                   gconstpointer b)
{
  const CooEntry *x = a, *y = b;

  if (x->row != y->row)
    return x->row < y->row ? -1 : 1;
  if (x->col != y->col)
    return x->col < y->col ? -1 : 1;
  return x->position < y->position ? -1 : x->position > y->position;
}

static AtomrBuffer *
upload (AtomrDevice   *device,
        AtomrDtype     dtype,
        gconstpointer  data,
        gsize          n,
        GCancellable  *cancellable,
        GError       **error)
{
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, dtype, MAX (n, 1), error);
  g_autoptr(GBytes) bytes = NULL;

  if (buffer == NULL)
    return NULL;
  if (n == 0)
    return g_steal_pointer (&buffer);
  bytes = g_bytes_new (data, n * atomr_dtype_get_size (dtype));
  if (!atomr_buffer_upload_sync (buffer, bytes, cancellable, error))
    return NULL;
  return g_steal_pointer (&buffer);
}

/**
 * atomr_sparse_matrix_new_from_bytes:
 * @device: the device to upload to
 * @format: the storage format
 * @rows: rows (≥ 0)
 * @cols: columns (≥ 0)
 * @block_size: the block side for BSR and Blocked-ELL (ignored otherwise)
 * @index_dtype: %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_I64
 * @offsets: (nullable): the offsets (CSR: rows + 1, CSC: cols + 1, BSR:
 *   rows / block_size + 1), or the row indices of a COO matrix; %NULL for
 *   Blocked-ELL
 * @indices: the minor indices (column indices; row indices for CSC)
 * @value_dtype: the dtype of @values
 * @values: the values; their number gives nnz (for BSR, blocks × block
 *   size²; for Blocked-ELL, rows × ell-cols)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Checks a matrix held in host memory and uploads it, blocking until the
 * copies are done.  The check covers everything
 * [method@Atomr.SparseActor.check_async] does: offsets start at 0, never
 * decrease and end at nnz; every index is in range; indices within a row
 * (a column for CSC) are sorted and distinct.  COO input is sorted by row,
 * then column (values follow their coordinates); duplicated coordinates
 * are refused, naming both entries.
 *
 * Returns: (transfer full): the matrix, or %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT naming the first entry that is wrong
 *
 * Since: 0.1
 */
AtomrSparseMatrix *
atomr_sparse_matrix_new_from_bytes (AtomrDevice       *device,
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
                                    GError           **error)
{
  const gchar *fname = format_name (format);
  gsize isize, vsize, n_off = 0, n_idx, n_val;
  gint64 nnz, ell_cols = 0, bs = 1, block_values = 1;
  gconstpointer off_data = NULL, idx_data, val_data;
  g_autofree guint8 *sorted_rows = NULL, *sorted_cols = NULL, *sorted_vals = NULL;
  g_autoptr(AtomrBuffer) off_buf = NULL, row_buf = NULL, idx_buf = NULL, val_buf = NULL;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if ((guint) format > ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    return fail (error, "Sparse format %d is not an AtomrSparseFormat", (gint) format), NULL;
  if (index_dtype != ATOMR_DTYPE_I32 && index_dtype != ATOMR_DTYPE_I64)
    return fail (error, "The indices of a %s matrix must be i32 or i64, not %s", fname,
                 atomr_dtype_get_name (index_dtype) ? atomr_dtype_get_name (index_dtype) : "?"), NULL;
  if (!is_value_dtype (value_dtype))
    return fail (error, "The values of a %s matrix must be f16, bf16, f32, f64, c64 or c128, "
                 "not %s", fname, atomr_dtype_get_name (value_dtype) ? atomr_dtype_get_name (value_dtype) : "?"), NULL;
  if (indices == NULL || values == NULL ||
      (offsets == NULL && format != ATOMR_SPARSE_FORMAT_BLOCKED_ELL))
    return fail (error, "A %s matrix needs its %s", fname,
                 indices == NULL ? "indices" : values == NULL ? "values" :
                 format == ATOMR_SPARSE_FORMAT_COO ? "row indices" : "offsets"), NULL;
  if (rows < 0 || cols < 0)
    return fail (error, "A %s matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 " has a negative dimension", fname, rows, cols), NULL;
  if (format == ATOMR_SPARSE_FORMAT_BSR || format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    {
      if (block_size < 1 || block_size > G_MAXINT32)
        return fail (error, "A %s matrix with block size %" G_GINT64_FORMAT
                     ": the block size must be at least 1", fname, block_size), NULL;
      bs = block_size;
    }

  isize = atomr_dtype_get_size (index_dtype);
  vsize = atomr_dtype_get_size (value_dtype);
  if (offsets && format != ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    {
      off_data = g_bytes_get_data (offsets, NULL);
      n_off = g_bytes_get_size (offsets);
    }
  idx_data = g_bytes_get_data (indices, NULL);
  n_idx = g_bytes_get_size (indices);
  val_data = g_bytes_get_data (values, NULL);
  n_val = g_bytes_get_size (values);
  if (n_off % isize || n_idx % isize)
    return fail (error, "The index arrays of a %s matrix hold %" G_GSIZE_FORMAT " and %"
                 G_GSIZE_FORMAT " bytes, not a whole number of %s", fname, n_off, n_idx,
                 atomr_dtype_get_name (index_dtype)), NULL;
  if (n_val % vsize)
    return fail (error, "The values of a %s matrix hold %" G_GSIZE_FORMAT
                 " bytes, not a whole number of %s", fname, n_val,
                 atomr_dtype_get_name (value_dtype)), NULL;
  n_off /= isize;
  n_idx /= isize;
  n_val /= vsize;

  switch (format)
    {
    case ATOMR_SPARSE_FORMAT_BSR:
      block_values = bs * bs;
      if (n_val % block_values)
        return fail (error, "A BSR matrix with block size %" G_GINT64_FORMAT " has %"
                     G_GSIZE_FORMAT " values, not a whole number of blocks", bs, n_val), NULL;
      nnz = n_val / block_values;
      break;
    case ATOMR_SPARSE_FORMAT_BLOCKED_ELL:
      if (rows == 0 || rows % bs || n_val % rows)
        return fail (error, "A Blocked-ELL matrix of %" G_GINT64_FORMAT " rows has %"
                     G_GSIZE_FORMAT " values, not rows × ell-cols with rows a positive "
                     "multiple of the block size %" G_GINT64_FORMAT, rows, n_val, bs), NULL;
      ell_cols = n_val / rows;
      nnz = rows * ell_cols;
      break;
    default:
      nnz = n_val;
      break;
    }

  /* The arrays must be exactly as long as the shape says. */
  {
    gint64 want_off = format == ATOMR_SPARSE_FORMAT_COO ? nnz :
                      atomr_sparse_n_offsets (format, rows, cols, bs);
    gint64 want_idx = atomr_sparse_n_indices (format, rows, nnz, bs, ell_cols);

    if (format != ATOMR_SPARSE_FORMAT_BLOCKED_ELL && (gint64) n_off != want_off)
      return fail (error, "A %s matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                   " with nnz %" G_GINT64_FORMAT " needs %" G_GINT64_FORMAT " %s, got %"
                   G_GSIZE_FORMAT, fname, rows, cols, nnz, want_off,
                   format == ATOMR_SPARSE_FORMAT_COO ? "row indices" : "offsets", n_off), NULL;
    if ((gint64) n_idx != want_idx)
      return fail (error, "A %s matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                   " with nnz %" G_GINT64_FORMAT " needs %" G_GINT64_FORMAT " indices, got %"
                   G_GSIZE_FORMAT, fname, rows, cols, nnz, want_idx, n_idx), NULL;
  }
  if (format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL &&
      (ell_cols % bs != 0 || ell_cols > cols || cols % bs != 0))
    return fail (error, "A Blocked-ELL matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 " with ell-cols %" G_GINT64_FORMAT " (from %" G_GSIZE_FORMAT " values): "
                 "ell-cols must be a multiple of the block size %" G_GINT64_FORMAT " within the columns",
                 rows, cols, ell_cols, n_val, bs), NULL;
  if (format == ATOMR_SPARSE_FORMAT_BSR && (rows % bs != 0 || cols % bs != 0))
    return fail (error, "A BSR matrix of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                 " is not made of %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT " blocks",
                 rows, cols, bs, bs), NULL;

  if (format == ATOMR_SPARSE_FORMAT_COO && nnz > 1)
    {
      g_autofree CooEntry *entries = g_new (CooEntry, nnz);

      for (gint64 k = 0; k < nnz; k++)
        {
          entries[k].row = atomr_sparse_index_at (index_dtype, off_data, k);
          entries[k].col = atomr_sparse_index_at (index_dtype, idx_data, k);
          entries[k].position = k;
        }
      qsort (entries, nnz, sizeof (CooEntry), coo_entry_compare);
      sorted_rows = g_malloc (nnz * isize);
      sorted_cols = g_malloc (nnz * isize);
      sorted_vals = g_malloc (nnz * vsize);
      for (gint64 k = 0; k < nnz; k++)
        {
          if (k > 0 && entries[k].row == entries[k - 1].row && entries[k].col == entries[k - 1].col)
            return fail (error, "Entries %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                         " of a COO matrix are both (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                         "): duplicated entries are not allowed", entries[k - 1].position,
                         entries[k].position, entries[k].row, entries[k].col), NULL;
          memcpy (sorted_rows + k * isize, (const guint8 *) off_data + entries[k].position * isize, isize);
          memcpy (sorted_cols + k * isize, (const guint8 *) idx_data + entries[k].position * isize, isize);
          memcpy (sorted_vals + k * vsize, (const guint8 *) val_data + entries[k].position * vsize, vsize);
        }
      off_data = sorted_rows;
      idx_data = sorted_cols;
      val_data = sorted_vals;
    }

  if (index_dtype == ATOMR_DTYPE_I32 && MAX (MAX (rows, cols), (gint64) n_val) > G_MAXINT32)
    return fail (error, "A %s matrix with i32 indices cannot have %" G_GINT64_FORMAT
                 " rows, columns or entries (at most %d): use i64 indices", fname,
                 MAX (MAX (rows, cols), (gint64) n_val), G_MAXINT32), NULL;
  if (!atomr_sparse_check_structure (format, rows, cols, nnz, bs, ell_cols, index_dtype,
                                     format == ATOMR_SPARSE_FORMAT_COO ? NULL : off_data,
                                     format == ATOMR_SPARSE_FORMAT_COO ? off_data : NULL,
                                     idx_data, error))
    return NULL;

  if (format == ATOMR_SPARSE_FORMAT_COO)
    row_buf = upload (device, index_dtype, off_data, n_off, cancellable, error);
  else if (format != ATOMR_SPARSE_FORMAT_BLOCKED_ELL)
    off_buf = upload (device, index_dtype, off_data, n_off, cancellable, error);
  if ((format == ATOMR_SPARSE_FORMAT_COO && row_buf == NULL) ||
      (format != ATOMR_SPARSE_FORMAT_COO && format != ATOMR_SPARSE_FORMAT_BLOCKED_ELL && off_buf == NULL))
    return NULL;
  idx_buf = upload (device, index_dtype, idx_data, n_idx, cancellable, error);
  if (idx_buf == NULL)
    return NULL;
  val_buf = upload (device, value_dtype, val_data, n_val, cancellable, error);
  if (val_buf == NULL)
    return NULL;
  return atomr_sparse_matrix_new_internal (format, rows, cols, nnz, bs, ell_cols,
                                           off_buf, row_buf, idx_buf, val_buf, error);
}

/* ------------------------------------------------------------------ */
/* Accessors                                                            */

/**
 * atomr_sparse_matrix_get_format:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the storage format.
 *
 * This is the value of the [property@Atomr.SparseMatrix:format] property.
 *
 * Returns: the storage format
 *
 * Since: 0.1
 */
AtomrSparseFormat
atomr_sparse_matrix_get_format (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), ATOMR_SPARSE_FORMAT_CSR);
  return self->format;
}

/**
 * atomr_sparse_matrix_get_rows:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the number of rows.
 *
 * This is the value of the [property@Atomr.SparseMatrix:rows] property.
 *
 * Returns: the number of rows
 *
 * Since: 0.1
 */
gint64
atomr_sparse_matrix_get_rows (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), 0);
  return self->rows;
}

/**
 * atomr_sparse_matrix_get_cols:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the number of columns.
 *
 * This is the value of the [property@Atomr.SparseMatrix:cols] property.
 *
 * Returns: the number of columns
 *
 * Since: 0.1
 */
gint64
atomr_sparse_matrix_get_cols (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), 0);
  return self->cols;
}

/**
 * atomr_sparse_matrix_get_nnz:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the stored entries (blocks for BSR; rows × ell-cols for Blocked-ELL).
 *
 * This is the value of the [property@Atomr.SparseMatrix:nnz] property.
 *
 * Returns: the stored entries (blocks for BSR; rows × ell-cols for
 *   Blocked-ELL)
 *
 * Since: 0.1
 */
gint64
atomr_sparse_matrix_get_nnz (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), 0);
  return self->nnz;
}

/**
 * atomr_sparse_matrix_get_block_size:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the block side (BSR, Blocked-ELL), 1 for the other formats.
 *
 * This is the value of the [property@Atomr.SparseMatrix:block-size] property.
 *
 * Returns: the block side (BSR, Blocked-ELL), 1 for the other formats
 *
 * Since: 0.1
 */
gint64
atomr_sparse_matrix_get_block_size (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), 1);
  return self->block_size;
}

/**
 * atomr_sparse_matrix_get_ell_cols:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the stored columns per row of a Blocked-ELL matrix, else 0.
 *
 * This is the value of the [property@Atomr.SparseMatrix:ell-cols] property.
 *
 * Returns: the stored columns per row of a Blocked-ELL matrix, else 0
 *
 * Since: 0.1
 */
gint64
atomr_sparse_matrix_get_ell_cols (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), 0);
  return self->ell_cols;
}

/**
 * atomr_sparse_matrix_get_index_dtype:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the dtype of the indices: %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_I64.
 *
 * This is the value of the [property@Atomr.SparseMatrix:index-dtype] property.
 *
 * Returns: %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_I64
 *
 * Since: 0.1
 */
AtomrDtype
atomr_sparse_matrix_get_index_dtype (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), ATOMR_DTYPE_I32);
  return self->index_dtype;
}

/**
 * atomr_sparse_matrix_get_value_dtype:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the dtype of the values.
 *
 * This is the value of the [property@Atomr.SparseMatrix:value-dtype] property.
 *
 * Returns: the dtype of the values
 *
 * Since: 0.1
 */
AtomrDtype
atomr_sparse_matrix_get_value_dtype (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), ATOMR_DTYPE_F32);
  return self->value_dtype;
}

/**
 * atomr_sparse_matrix_get_device:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the device of the buffers, %NULL for a matrix without buffers.
 *
 * Returns: (transfer none) (nullable): the device of the buffers, %NULL for
 *   a matrix without buffers
 *
 * Since: 0.1
 */
AtomrDevice *
atomr_sparse_matrix_get_device (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), NULL);
  return self->indices ? atomr_buffer_get_device (self->indices) : NULL;
}

/**
 * atomr_sparse_matrix_get_offsets:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the row offsets (CSR), column offsets (CSC) or block-row offsets (BSR); %NULL for COO and Blocked-ELL.
 *
 * Returns: (transfer none) (nullable): the row offsets (CSR), column
 *   offsets (CSC) or block-row offsets (BSR); %NULL for COO and Blocked-ELL
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_sparse_matrix_get_offsets (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), NULL);
  return self->offsets;
}

/**
 * atomr_sparse_matrix_get_row_indices:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the row indices of a COO matrix, else %NULL.
 *
 * Returns: (transfer none) (nullable): the row indices of a COO matrix,
 *   else %NULL
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_sparse_matrix_get_row_indices (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), NULL);
  return self->row_indices;
}

/**
 * atomr_sparse_matrix_get_indices:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the minor indices: column indices (CSR, COO), row indices (CSC), block-column indices (BSR, Blocked-ELL).
 *
 * Returns: (transfer none) (nullable): the minor indices: column indices
 *   (CSR, COO), row indices (CSC), block-column indices (BSR, Blocked-ELL)
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_sparse_matrix_get_indices (AtomrSparseMatrix *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), NULL);
  return self->indices;
}

/**
 * atomr_sparse_matrix_get_values:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Gets the values.
 *
 * This is the value of the [property@Atomr.SparseMatrix:values] property.
 *
 * Returns: (transfer none) (nullable): the values
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_sparse_matrix_get_values (AtomrSparseMatrix *self)
{
  AtomrBuffer *values;

  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), NULL);
  g_mutex_lock (&self->lock);
  values = self->values;
  g_mutex_unlock (&self->lock);
  return values;
}

/**
 * atomr_sparse_matrix_get_structure_serial:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * A number that changes each time the structure is declared changed; cached
 * plans made for another number are thrown away.
 *
 * Returns: the structure serial
 *
 * Since: 0.1
 */
guint
atomr_sparse_matrix_get_structure_serial (AtomrSparseMatrix *self)
{
  guint serial;

  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), 0);
  g_mutex_lock (&self->lock);
  serial = self->structure_serial;
  g_mutex_unlock (&self->lock);
  return serial;
}

guint
atomr_sparse_matrix_get_values_serial (AtomrSparseMatrix *self)
{
  guint serial;

  g_mutex_lock (&self->lock);
  serial = self->values_serial;
  g_mutex_unlock (&self->lock);
  return serial;
}

void
atomr_sparse_matrix_values_changed (AtomrSparseMatrix *self)
{
  g_mutex_lock (&self->lock);
  self->values_serial++;
  g_mutex_unlock (&self->lock);
}

/**
 * atomr_sparse_matrix_set_values:
 * @self: an [class@Atomr.SparseMatrix]
 * @values: new values: the same dtype and at least as many elements
 * @error: return location for a [struct@GLib.Error]
 *
 * Replaces the values, keeping the structure.  Triangular-solve analyses
 * cached on the matrix are kept and updated with the new values on their
 * next use.  Operations already submitted keep the old buffer.
 *
 * Returns: %TRUE, or %FALSE with %ATOMR_ERROR_INVALID_ARGUMENT when
 *   @values does not fit
 *
 * Since: 0.1
 */
gboolean
atomr_sparse_matrix_set_values (AtomrSparseMatrix  *self,
                                AtomrBuffer        *values,
                                GError            **error)
{
  gint64 needed;

  g_return_val_if_fail (ATOMR_IS_SPARSE_MATRIX (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->values == NULL)
    return fail (error, "This AtomrSparseMatrix was not made by a constructor and has no values "
                 "to replace");
  if (values == NULL || !ATOMR_IS_BUFFER (values))
    return fail (error, "New values must be an AtomrBuffer (got %s)",
                 values == NULL ? "NULL" : G_OBJECT_TYPE_NAME (values));
  if (atomr_buffer_get_dtype (values) != self->value_dtype)
    return fail (error, "New values are %s; the matrix holds %s",
                 atomr_dtype_get_name (atomr_buffer_get_dtype (values)),
                 atomr_dtype_get_name (self->value_dtype));
  if (atomr_buffer_get_device (values) != atomr_buffer_get_device (self->indices))
    return fail (error, "New values are on another device than the matrix");
  needed = atomr_sparse_n_values (self->format, self->rows, self->nnz, self->block_size,
                                  self->ell_cols);
  if (atomr_buffer_get_n_elements (values) < (guint64) needed)
    return fail (error, "New values need %" G_GINT64_FORMAT " elements; the buffer has %"
                 G_GUINT64_FORMAT, needed, atomr_buffer_get_n_elements (values));

  g_mutex_lock (&self->lock);
  if (self->values == values)
    {
      g_mutex_unlock (&self->lock);
      return TRUE;
    }
  g_set_object (&self->values, values);
  self->values_serial++;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VALUES]);
  return TRUE;
}

/**
 * atomr_sparse_matrix_structure_changed:
 * @self: an [class@Atomr.SparseMatrix]
 *
 * Declares that the contents of the offsets or index buffers changed (for
 * example, written by a kernel): every plan cached on the matrix (buffer
 * sizes, triangular-solve analyses) is made again on its next use.
 *
 * Since: 0.1
 */
void
atomr_sparse_matrix_structure_changed (AtomrSparseMatrix *self)
{
  g_return_if_fail (ATOMR_IS_SPARSE_MATRIX (self));
  g_mutex_lock (&self->lock);
  self->structure_serial++;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STRUCTURE_SERIAL]);
}

/* ------------------------------------------------------------------ */
/* GObject                                                              */

static void
atomr_sparse_matrix_finalize (GObject *object)
{
  AtomrSparseMatrix *self = ATOMR_SPARSE_MATRIX (object);

  g_ptr_array_unref (self->plans);
  g_clear_object (&self->offsets);
  g_clear_object (&self->row_indices);
  g_clear_object (&self->indices);
  g_clear_object (&self->values);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (atomr_sparse_matrix_parent_class)->finalize (object);
}

static void
atomr_sparse_matrix_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  AtomrSparseMatrix *self = ATOMR_SPARSE_MATRIX (object);

  switch (prop_id)
    {
    case PROP_FORMAT: g_value_set_enum (value, self->format); break;
    case PROP_ROWS: g_value_set_int64 (value, self->rows); break;
    case PROP_COLS: g_value_set_int64 (value, self->cols); break;
    case PROP_NNZ: g_value_set_int64 (value, self->nnz); break;
    case PROP_BLOCK_SIZE: g_value_set_int64 (value, self->block_size); break;
    case PROP_ELL_COLS: g_value_set_int64 (value, self->ell_cols); break;
    case PROP_INDEX_DTYPE: g_value_set_enum (value, self->index_dtype); break;
    case PROP_VALUE_DTYPE: g_value_set_enum (value, self->value_dtype); break;
    case PROP_VALUES: g_value_set_object (value, atomr_sparse_matrix_get_values (self)); break;
    case PROP_STRUCTURE_SERIAL:
      g_value_set_uint (value, atomr_sparse_matrix_get_structure_serial (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_sparse_matrix_class_init (AtomrSparseMatrixClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = atomr_sparse_matrix_finalize;
  object_class->get_property = atomr_sparse_matrix_get_property;

  /**
   * AtomrSparseMatrix:format:
   *
   * The storage format.
   *
   * Since: 0.1
   */
  properties[PROP_FORMAT] =
    g_param_spec_enum ("format", NULL, NULL, ATOMR_TYPE_SPARSE_FORMAT,
                       ATOMR_SPARSE_FORMAT_CSR, flags);
  /**
   * AtomrSparseMatrix:rows:
   *
   * The number of rows.
   *
   * Since: 0.1
   */
  properties[PROP_ROWS] = g_param_spec_int64 ("rows", NULL, NULL, 0, G_MAXINT64, 0, flags);
  /**
   * AtomrSparseMatrix:cols:
   *
   * The number of columns.
   *
   * Since: 0.1
   */
  properties[PROP_COLS] = g_param_spec_int64 ("cols", NULL, NULL, 0, G_MAXINT64, 0, flags);
  /**
   * AtomrSparseMatrix:nnz:
   *
   * The stored entries (blocks for BSR).
   *
   * Since: 0.1
   */
  properties[PROP_NNZ] = g_param_spec_int64 ("nnz", NULL, NULL, 0, G_MAXINT64, 0, flags);
  /**
   * AtomrSparseMatrix:block-size:
   *
   * The block side of BSR and Blocked-ELL matrices; 1 otherwise.
   *
   * Since: 0.1
   */
  properties[PROP_BLOCK_SIZE] = g_param_spec_int64 ("block-size", NULL, NULL, 0, G_MAXINT64, 0, flags);
  /**
   * AtomrSparseMatrix:ell-cols:
   *
   * The stored columns per row of a Blocked-ELL matrix; 0 otherwise.
   *
   * Since: 0.1
   */
  properties[PROP_ELL_COLS] = g_param_spec_int64 ("ell-cols", NULL, NULL, 0, G_MAXINT64, 0, flags);
  /**
   * AtomrSparseMatrix:index-dtype:
   *
   * The dtype of the offsets and indices.
   *
   * Since: 0.1
   */
  properties[PROP_INDEX_DTYPE] =
    g_param_spec_enum ("index-dtype", NULL, NULL, ATOMR_TYPE_DTYPE, ATOMR_DTYPE_I32, flags);
  /**
   * AtomrSparseMatrix:value-dtype:
   *
   * The dtype of the values.
   *
   * Since: 0.1
   */
  properties[PROP_VALUE_DTYPE] =
    g_param_spec_enum ("value-dtype", NULL, NULL, ATOMR_TYPE_DTYPE, ATOMR_DTYPE_F32, flags);
  /**
   * AtomrSparseMatrix:values:
   *
   * The buffer of values; notified when [method@Atomr.SparseMatrix.set_values]
   * replaces it.
   *
   * Since: 0.1
   */
  properties[PROP_VALUES] =
    g_param_spec_object ("values", NULL, NULL, ATOMR_TYPE_BUFFER, flags | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrSparseMatrix:structure-serial:
   *
   * Changes each time [method@Atomr.SparseMatrix.structure_changed] is called.
   *
   * Since: 0.1
   */
  properties[PROP_STRUCTURE_SERIAL] =
    g_param_spec_uint ("structure-serial", NULL, NULL, 0, G_MAXUINT, 0,
                       flags | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_sparse_matrix_init (AtomrSparseMatrix *self)
{
  g_mutex_init (&self->lock);
  self->plans = g_ptr_array_new_with_free_func (plan_free);
  self->block_size = 1;
  self->index_dtype = ATOMR_DTYPE_I32;
  self->value_dtype = ATOMR_DTYPE_F32;
}
