/* atomr-sparse-vector.c — sparse vectors over device buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "actors/sparse/atomr-sparse-private.h"
#include "core/atomr-error.h"

/**
 * AtomrSparseVector:
 *
 * A sparse vector of [class@Atomr.SparseVector]:size elements of which nnz are
 * stored: zero-based indices (i32 or i64) and values (the value dtypes of
 * [class@Atomr.SparseMatrix]) in device buffers.  Used by the gather, scatter and
 * axpby operations of [class@Atomr.SparseActor].  Immutable once made.
 *
 * Since: 0.1
 */

struct _AtomrSparseVector
{
  GObject      parent_instance;

  gint64       size, nnz;
  AtomrBuffer *indices;
  AtomrBuffer *values;
};

G_DEFINE_FINAL_TYPE (AtomrSparseVector, atomr_sparse_vector, G_TYPE_OBJECT)

static gboolean
value_dtype_ok (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_F16 || dtype == ATOMR_DTYPE_BF16 || dtype == ATOMR_DTYPE_F32 ||
         dtype == ATOMR_DTYPE_F64 || dtype == ATOMR_DTYPE_C64 || dtype == ATOMR_DTYPE_C128;
}

/**
 * atomr_sparse_vector_new:
 * @size: the length of the vector (≥ 0)
 * @nnz: stored entries, 0 ≤ @nnz ≤ @size
 * @indices: @nnz indices, i32 or i64
 * @values: @nnz values
 * @error: return location for a [struct@GLib.Error]
 *
 * A sparse vector over device buffers; sizes and dtypes are checked, the
 * contents are not read.
 *
 * Returns: (transfer full): the vector, or %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT naming what does not fit
 *
 * Since: 0.1
 */
AtomrSparseVector *
atomr_sparse_vector_new (gint64        size,
                         gint64        nnz,
                         AtomrBuffer  *indices,
                         AtomrBuffer  *values,
                         GError      **error)
{
  AtomrSparseVector *self;
  AtomrDtype idt, vdt;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (size < 0 || nnz < 0 || nnz > size)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A sparse vector of size %" G_GINT64_FORMAT " cannot store nnz %" G_GINT64_FORMAT,
                   size, nnz);
      return NULL;
    }
  if (!ATOMR_IS_BUFFER (indices) || !ATOMR_IS_BUFFER (values))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A sparse vector needs a buffer of %s", ATOMR_IS_BUFFER (indices) ? "values" : "indices");
      return NULL;
    }
  if (!atomr_buffer_check (indices, error) || !atomr_buffer_check (values, error))
    return NULL;
  idt = atomr_buffer_get_dtype (indices);
  vdt = atomr_buffer_get_dtype (values);
  if (idt != ATOMR_DTYPE_I32 && idt != ATOMR_DTYPE_I64)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The indices of a sparse vector are %s; they must be i32 or i64",
                   atomr_dtype_get_name (idt));
      return NULL;
    }
  if (!value_dtype_ok (vdt))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The values of a sparse vector are %s; they must be f16, bf16, f32, f64, c64 or c128",
                   atomr_dtype_get_name (vdt));
      return NULL;
    }
  if (atomr_buffer_get_device (indices) != atomr_buffer_get_device (values))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The indices and values of a sparse vector are on different devices");
      return NULL;
    }
  if (atomr_buffer_get_n_elements (indices) < (guint64) nnz ||
      atomr_buffer_get_n_elements (values) < (guint64) nnz)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A sparse vector with nnz %" G_GINT64_FORMAT " got %" G_GUINT64_FORMAT
                   " indices and %" G_GUINT64_FORMAT " values", nnz,
                   atomr_buffer_get_n_elements (indices), atomr_buffer_get_n_elements (values));
      return NULL;
    }
  if (idt == ATOMR_DTYPE_I32 && size > G_MAXINT32)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A sparse vector of size %" G_GINT64_FORMAT " needs i64 indices", size);
      return NULL;
    }

  self = g_object_new (ATOMR_TYPE_SPARSE_VECTOR, NULL);
  self->size = size;
  self->nnz = nnz;
  self->indices = g_object_ref (indices);
  self->values = g_object_ref (values);
  return self;
}

/**
 * atomr_sparse_vector_new_from_bytes:
 * @device: the device to upload to
 * @size: the length of the vector
 * @index_dtype: %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_I64
 * @indices: the indices, each in [0, @size), distinct
 * @value_dtype: the dtype of @values
 * @values: as many values as indices
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Checks a sparse vector held in host memory (indices in range and
 * distinct, as scatter needs) and uploads it, blocking until done.
 *
 * Returns: (transfer full): the vector, or %NULL with an error naming the
 *   first bad index
 *
 * Since: 0.1
 */
AtomrSparseVector *
atomr_sparse_vector_new_from_bytes (AtomrDevice   *device,
                                    gint64         size,
                                    AtomrDtype     index_dtype,
                                    GBytes        *indices,
                                    AtomrDtype     value_dtype,
                                    GBytes        *values,
                                    GCancellable  *cancellable,
                                    GError       **error)
{
  gsize isize, vsize, n;
  gconstpointer idx;
  g_autoptr(GHashTable) seen = NULL;
  g_autoptr(AtomrBuffer) ib = NULL, vb = NULL;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if ((index_dtype != ATOMR_DTYPE_I32 && index_dtype != ATOMR_DTYPE_I64) || !value_dtype_ok (value_dtype) ||
      indices == NULL || values == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A sparse vector needs i32 or i64 indices and f16, bf16, f32, f64, c64 or c128 values");
      return NULL;
    }
  isize = atomr_dtype_get_size (index_dtype);
  vsize = atomr_dtype_get_size (value_dtype);
  n = g_bytes_get_size (indices) / isize;
  if (g_bytes_get_size (indices) % isize || g_bytes_get_size (values) != n * vsize)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A sparse vector got %" G_GSIZE_FORMAT " bytes of %s indices and %" G_GSIZE_FORMAT
                   " bytes of %s values: not one value per index", g_bytes_get_size (indices),
                   atomr_dtype_get_name (index_dtype), g_bytes_get_size (values),
                   atomr_dtype_get_name (value_dtype));
      return NULL;
    }
  if (size < 0 || (gint64) n > size)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A sparse vector of size %" G_GINT64_FORMAT " cannot store %" G_GSIZE_FORMAT
                   " entries", size, n);
      return NULL;
    }
  idx = g_bytes_get_data (indices, NULL);
  seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (gsize k = 0; k < n; k++)
    {
      gint64 v = atomr_sparse_index_at (index_dtype, idx, k);
      if (v < 0 || v >= size)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Index %" G_GSIZE_FORMAT " of a sparse vector is %" G_GINT64_FORMAT
                       ", outside [0, %" G_GINT64_FORMAT ")", k, v, size);
          return NULL;
        }
      if (!g_hash_table_add (seen, g_memdup2 (&v, sizeof v)))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Index %" G_GSIZE_FORMAT " of a sparse vector repeats %" G_GINT64_FORMAT
                       ": indices must be distinct", k, v);
          return NULL;
        }
    }
  ib = atomr_buffer_new (device, index_dtype, MAX (n, 1), error);
  if (ib == NULL || (n > 0 && !atomr_buffer_upload_sync (ib, indices, cancellable, error)))
    return NULL;
  vb = atomr_buffer_new (device, value_dtype, MAX (n, 1), error);
  if (vb == NULL || (n > 0 && !atomr_buffer_upload_sync (vb, values, cancellable, error)))
    return NULL;
  return atomr_sparse_vector_new (size, n, ib, vb, error);
}

gboolean
atomr_sparse_vector_check (AtomrSparseVector *self,
                           AtomrDevice       *device,
                           const gchar       *op,
                           const gchar       *what,
                           GError           **error)
{
  if (self == NULL || !ATOMR_IS_SPARSE_VECTOR (self))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s must be an AtomrSparseVector (got %s)", op, what,
                   self == NULL ? "NULL" : G_OBJECT_TYPE_NAME (self));
      return FALSE;
    }
  if (self->indices == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s was not made by atomr_sparse_vector_new() and has no buffers", op, what);
      return FALSE;
    }
  if (atomr_buffer_get_device (self->indices) != device)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s is on another device than the actor", op, what);
      return FALSE;
    }
  return atomr_buffer_check (self->indices, error) && atomr_buffer_check (self->values, error);
}

/**
 * atomr_sparse_vector_get_size:
 * @self: an [class@Atomr.SparseVector]
 *
 * Gets the length of the vector.
 *
 * Returns: the length of the vector
 *
 * Since: 0.1
 */
gint64
atomr_sparse_vector_get_size (AtomrSparseVector *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_VECTOR (self), 0);
  return self->size;
}

/**
 * atomr_sparse_vector_get_nnz:
 * @self: an [class@Atomr.SparseVector]
 *
 * Gets the stored entries.
 *
 * Returns: the stored entries
 *
 * Since: 0.1
 */
gint64
atomr_sparse_vector_get_nnz (AtomrSparseVector *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_VECTOR (self), 0);
  return self->nnz;
}

/**
 * atomr_sparse_vector_get_index_dtype:
 * @self: an [class@Atomr.SparseVector]
 *
 * Gets the dtype of the indices.
 *
 * Returns: the dtype of the indices
 *
 * Since: 0.1
 */
AtomrDtype
atomr_sparse_vector_get_index_dtype (AtomrSparseVector *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_VECTOR (self), ATOMR_DTYPE_I32);
  return self->indices ? atomr_buffer_get_dtype (self->indices) : ATOMR_DTYPE_I32;
}

/**
 * atomr_sparse_vector_get_value_dtype:
 * @self: an [class@Atomr.SparseVector]
 *
 * Gets the dtype of the values.
 *
 * Returns: the dtype of the values
 *
 * Since: 0.1
 */
AtomrDtype
atomr_sparse_vector_get_value_dtype (AtomrSparseVector *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_VECTOR (self), ATOMR_DTYPE_F32);
  return self->values ? atomr_buffer_get_dtype (self->values) : ATOMR_DTYPE_F32;
}

/**
 * atomr_sparse_vector_get_device:
 * @self: an [class@Atomr.SparseVector]
 *
 * Gets the device, %NULL without buffers.
 *
 * Returns: (transfer none) (nullable): the device, %NULL without buffers
 *
 * Since: 0.1
 */
AtomrDevice *
atomr_sparse_vector_get_device (AtomrSparseVector *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_VECTOR (self), NULL);
  return self->indices ? atomr_buffer_get_device (self->indices) : NULL;
}

/**
 * atomr_sparse_vector_get_indices:
 * @self: an [class@Atomr.SparseVector]
 *
 * Gets the indices.
 *
 * Returns: (transfer none) (nullable): the indices
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_sparse_vector_get_indices (AtomrSparseVector *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_VECTOR (self), NULL);
  return self->indices;
}

/**
 * atomr_sparse_vector_get_values:
 * @self: an [class@Atomr.SparseVector]
 *
 * Gets the values.
 *
 * Returns: (transfer none) (nullable): the values
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_sparse_vector_get_values (AtomrSparseVector *self)
{
  g_return_val_if_fail (ATOMR_IS_SPARSE_VECTOR (self), NULL);
  return self->values;
}

static void
atomr_sparse_vector_finalize (GObject *object)
{
  AtomrSparseVector *self = ATOMR_SPARSE_VECTOR (object);

  g_clear_object (&self->indices);
  g_clear_object (&self->values);
  G_OBJECT_CLASS (atomr_sparse_vector_parent_class)->finalize (object);
}

static void
atomr_sparse_vector_class_init (AtomrSparseVectorClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = atomr_sparse_vector_finalize;
}

static void
atomr_sparse_vector_init (AtomrSparseVector *self)
{
}
