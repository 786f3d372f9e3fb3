/* atomr-tensor.c — strided views of device buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-device-private.h"
#include "atomr-enum-types.h"
#include "atomr-error.h"
#include "atomr-tensor-private.h"

/**
 * AtomrTensor:
 *
 * A view of an [class@Atomr.Buffer]: element type, byte offset, shape and strides.
 * The one shape vocabulary of atomr-accel: every actor that takes arrays
 * takes tensors, and DLPack and `__cuda_array_interface__` map onto them
 * one to one.
 *
 * A tensor is immutable and cheap (one small allocation and a reference on
 * the buffer); slicing, selecting, transposing, permuting, reshaping,
 * broadcasting and (un)squeezing return new views of the same memory and
 * never copy.
 *
 * - The rank is 0 (a scalar) to %ATOMR_TENSOR_MAX_DIMS.
 * - Extents are ≥ 0; a view with a zero extent has no elements.
 * - Strides count **elements**, not bytes, may be 0 (a broadcast
 *   dimension) or negative (a reversed dimension), and are arbitrary
 *   otherwise: element (i₀, …, iₙ₋₁) lies at byte
 *   `byte_offset + Σ iₖ·strideₖ·element_size` of the buffer.
 * - Every element a view can reach lies inside its buffer: construction
 *   checks it with overflow-checked arithmetic, and fails with
 *   %ATOMR_ERROR_INVALID_ARGUMENT naming the dimension and the value.
 * - The dtype of a view may differ from its buffer's (a complex buffer seen
 *   as pairs of reals, bytes seen as words); the byte offset must then be a
 *   multiple of the view's element size.
 *
 * Hazards stay per allocation: an operation that writes a view orders every
 * later use of its buffer, whichever part of it they touch.
 *
 * Thread safety: a tensor never changes after construction, so it may be
 * used from any thread.  A tensor made by g_object_new() without a buffer
 * (as bindings can) is empty: its getters return zeros and every transform
 * and actor refuses it with an error.
 *
 * Since: 0.2
 */

struct _AtomrTensor
{
  GObject      parent_instance;

  AtomrBuffer *buffer;
  AtomrDtype   dtype;
  guint        n_dims;
  guint64      byte_offset;
  guint64      n_elements;
  gint64       shape[ATOMR_TENSOR_MAX_DIMS];
  gint64       strides[ATOMR_TENSOR_MAX_DIMS];
  /* bytes touched, relative to the buffer */
  guint64      range_begin;
  guint64      range_end;
};

G_DEFINE_FINAL_TYPE (AtomrTensor, atomr_tensor, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_BUFFER,
  PROP_DTYPE,
  PROP_N_DIMS,
  PROP_BYTE_OFFSET,
  PROP_N_ELEMENTS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
atomr_tensor_finalize (GObject *object)
{
  AtomrTensor *self = ATOMR_TENSOR (object);

  g_clear_object (&self->buffer);

  G_OBJECT_CLASS (atomr_tensor_parent_class)->finalize (object);
}

static void
atomr_tensor_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  AtomrTensor *self = ATOMR_TENSOR (object);

  switch (prop_id)
    {
    case PROP_BUFFER:
      g_value_set_object (value, self->buffer);
      break;
    case PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    case PROP_N_DIMS:
      g_value_set_uint (value, self->n_dims);
      break;
    case PROP_BYTE_OFFSET:
      g_value_set_uint64 (value, self->byte_offset);
      break;
    case PROP_N_ELEMENTS:
      g_value_set_uint64 (value, self->n_elements);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_tensor_class_init (AtomrTensorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_tensor_finalize;
  object_class->get_property = atomr_tensor_get_property;

  /**
   * AtomrTensor:buffer:
   *
   * The buffer whose memory the view shows; %NULL only for a bare
   * g_object_new() instance.
   *
   * Since: 0.2
   */
  properties[PROP_BUFFER] =
    g_param_spec_object ("buffer", NULL, NULL, ATOMR_TYPE_BUFFER,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrTensor:dtype:
   *
   * The element type of the view.
   *
   * Since: 0.2
   */
  properties[PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, NULL, ATOMR_TYPE_DTYPE, ATOMR_DTYPE_F32,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrTensor:n-dims:
   *
   * The rank: 0 for a scalar, at most %ATOMR_TENSOR_MAX_DIMS.
   *
   * Since: 0.2
   */
  properties[PROP_N_DIMS] =
    g_param_spec_uint ("n-dims", NULL, NULL, 0, ATOMR_TENSOR_MAX_DIMS, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrTensor:byte-offset:
   *
   * The byte offset of element (0, …, 0) from the start of the buffer.
   *
   * Since: 0.2
   */
  properties[PROP_BYTE_OFFSET] =
    g_param_spec_uint64 ("byte-offset", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrTensor:n-elements:
   *
   * The number of elements (the product of the shape; 1 for a scalar).
   *
   * Since: 0.2
   */
  properties[PROP_N_ELEMENTS] =
    g_param_spec_uint64 ("n-elements", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_tensor_init (AtomrTensor *self)
{
  self->dtype = ATOMR_DTYPE_F32;
}

static gboolean
require_buffer (AtomrTensor  *self,
                GError      **error)
{
  if (G_UNLIKELY (self->buffer == NULL))
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "The tensor has no buffer (it was made with g_object_new(); "
                           "use a constructor such as atomr_tensor_new())");
      return FALSE;
    }
  return TRUE;
}

/* Product of @shape (extents ≥ 0) such that the bytes fit in gint64. */
static gboolean
count_elements (const gint64  *shape,
                guint          n_dims,
                gsize          elem,
                guint64       *n_elements,
                GError       **error)
{
  gint64 n = 1;
  gint64 bytes;

  for (guint i = 0; i < n_dims; i++)
    {
      if (shape[i] < 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the shape is %" G_GINT64_FORMAT
                       "; extents must be 0 or more", i, shape[i]);
          return FALSE;
        }
    }
  for (guint i = 0; i < n_dims; i++)
    {
      if (shape[i] == 0)
        {
          *n_elements = 0;
          return TRUE;
        }
    }
  for (guint i = 0; i < n_dims; i++)
    {
      if (__builtin_mul_overflow (n, shape[i], &n))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "The element count of the shape overflows 64 bits at dimension %u "
                       "(extent %" G_GINT64_FORMAT ")", i, shape[i]);
          return FALSE;
        }
    }
  if (__builtin_mul_overflow (n, (gint64) elem, &bytes))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A shape of %" G_GINT64_FORMAT " elements of %" G_GSIZE_FORMAT
                   " bytes overflows 64 bits", n, elem);
      return FALSE;
    }
  *n_elements = (guint64) n;
  return TRUE;
}

static void
contiguous_strides (const gint64 *shape,
                    guint         n_dims,
                    gint64       *strides)
{
  gint64 s = 1;

  for (guint i = n_dims; i-- > 0;)
    {
      strides[i] = s;
      /* no overflow: the product of the shape was checked */
      if (shape[i] > 0)
        s *= shape[i];
    }
}

/* The one place a view is built: checks everything. */
static AtomrTensor *
tensor_build (AtomrBuffer   *buffer,
              AtomrDtype     dtype,
              guint64        byte_offset,
              const gint64  *shape,
              guint          n_dims,
              const gint64  *strides,
              GError       **error)
{
  g_autoptr(AtomrTensor) self = NULL;
  gsize elem = atomr_dtype_get_size (dtype);
  guint64 n_elements;
  guint64 buffer_bytes = atomr_buffer_get_byte_size (buffer);
  gint64 lo = 0, hi = 0; /* element offsets reached, relative to element 0 */

  if (elem == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Invalid dtype %d for a tensor", (int) dtype);
      return NULL;
    }
  if (n_dims > ATOMR_TENSOR_MAX_DIMS)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A tensor has at most %d dimensions, not %u",
                   ATOMR_TENSOR_MAX_DIMS, n_dims);
      return NULL;
    }
  if (n_dims > 0 && shape == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The shape is NULL but n_dims is %u", n_dims);
      return NULL;
    }
  if (!count_elements (shape, n_dims, elem, &n_elements, error))
    return NULL;
  if (byte_offset % elem != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The byte offset %" G_GUINT64_FORMAT " is not a multiple of the %"
                   G_GSIZE_FORMAT "-byte size of %s", byte_offset, elem,
                   atomr_dtype_get_name (dtype));
      return NULL;
    }
  if (byte_offset > buffer_bytes)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The byte offset %" G_GUINT64_FORMAT " lies past the end of the buffer (%"
                   G_GUINT64_FORMAT " bytes)", byte_offset, buffer_bytes);
      return NULL;
    }

  self = g_object_new (ATOMR_TYPE_TENSOR, NULL);
  self->buffer = g_object_ref (buffer);
  self->dtype = dtype;
  self->n_dims = n_dims;
  self->byte_offset = byte_offset;
  self->n_elements = n_elements;
  if (n_dims > 0)
    {
      memcpy (self->shape, shape, n_dims * sizeof (gint64));
      if (strides)
        memcpy (self->strides, strides, n_dims * sizeof (gint64));
      else
        contiguous_strides (shape, n_dims, self->strides);
    }

  if (n_elements == 0)
    {
      self->range_begin = self->range_end = byte_offset;
      return g_steal_pointer (&self);
    }

  /* byte_offset ≤ buffer size ≤ G_MAXINT64 (buffers are checked), so the
   * offsets below are computed in gint64 with every step checked. */
  for (guint i = 0; i < n_dims; i++)
    {
      gint64 reach, lo_bytes, hi_bytes;

      if (__builtin_mul_overflow (self->shape[i] - 1, self->strides[i], &reach) ||
          (reach < 0 ? __builtin_add_overflow (lo, reach, &lo)
                     : __builtin_add_overflow (hi, reach, &hi)) ||
          __builtin_mul_overflow (lo, (gint64) elem, &lo_bytes) ||
          __builtin_mul_overflow (hi + 1, (gint64) elem, &hi_bytes) ||
          __builtin_add_overflow (lo_bytes, (gint64) byte_offset, &lo_bytes) ||
          __builtin_add_overflow (hi_bytes, (gint64) byte_offset, &hi_bytes))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u (extent %" G_GINT64_FORMAT ", stride %" G_GINT64_FORMAT
                       ") overflows 64-bit offsets", i, self->shape[i], self->strides[i]);
          return NULL;
        }
      if (lo_bytes < 0 || (guint64) hi_bytes > buffer_bytes)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u (extent %" G_GINT64_FORMAT ", stride %" G_GINT64_FORMAT
                       ") reaches bytes [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                       ") outside the buffer of %" G_GUINT64_FORMAT " bytes (view of %s at byte offset %"
                       G_GUINT64_FORMAT ")", i, self->shape[i], self->strides[i],
                       lo_bytes, hi_bytes, buffer_bytes, atomr_dtype_get_name (dtype), byte_offset);
          return NULL;
        }
      self->range_begin = (guint64) lo_bytes;
      self->range_end = (guint64) hi_bytes;
    }
  if (n_dims == 0)
    {
      if (byte_offset + elem > buffer_bytes)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "A %s scalar at byte offset %" G_GUINT64_FORMAT
                       " ends outside the buffer of %" G_GUINT64_FORMAT " bytes",
                       atomr_dtype_get_name (dtype), byte_offset, buffer_bytes);
          return NULL;
        }
      self->range_begin = byte_offset;
      self->range_end = byte_offset + elem;
    }

  return g_steal_pointer (&self);
}

/**
 * atomr_tensor_new:
 * @buffer: the buffer to view
 * @shape: (array length=n_dims) (nullable): the extent of each dimension (≥ 0)
 * @n_dims: the rank, 0 (a scalar) to %ATOMR_TENSOR_MAX_DIMS
 * @error: return location for a [struct@GLib.Error]
 *
 * A contiguous row-major (C order) view of the start of @buffer, with the
 * buffer's dtype.  The shape may cover less than the whole buffer.
 *
 * Returns: (transfer full): a new view, or %NULL when the shape does not
 *   fit the buffer
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_new (AtomrBuffer   *buffer,
                  const gint64  *shape,
                  guint          n_dims,
                  GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return tensor_build (buffer, atomr_buffer_get_dtype (buffer), 0, shape, n_dims, NULL, error);
}

/**
 * atomr_tensor_new_strided:
 * @buffer: the buffer to view
 * @dtype: the element type of the view
 * @byte_offset: where element (0, …, 0) lies, in bytes from the start of
 *   @buffer; a multiple of the size of @dtype
 * @shape: (array length=n_dims) (nullable): the extent of each dimension (≥ 0)
 * @n_dims: the rank, 0 (a scalar) to %ATOMR_TENSOR_MAX_DIMS
 * @strides: (array length=n_strides) (nullable): the stride of each
 *   dimension in elements (may be 0 or negative), or %NULL for row-major
 * @n_strides: the number of strides: @n_dims, or 0 with @strides %NULL
 * @error: return location for a [struct@GLib.Error]
 *
 * A view with any layout whose reachable elements all lie inside @buffer.
 *
 * Returns: (transfer full): a new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_new_strided (AtomrBuffer   *buffer,
                          AtomrDtype     dtype,
                          guint64        byte_offset,
                          const gint64  *shape,
                          guint          n_dims,
                          const gint64  *strides,
                          guint          n_strides,
                          GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (strides != NULL ? n_strides != n_dims : n_strides != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%u strides given for %u dimensions", n_strides, n_dims);
      return NULL;
    }
  return tensor_build (buffer, dtype, byte_offset, shape, n_dims, strides, error);
}

/**
 * atomr_tensor_new_for_buffer:
 * @buffer: the buffer to view
 *
 * A contiguous view of the whole of @buffer: with the buffer's shape when
 * it has one, else one-dimensional.
 *
 * Returns: (transfer full): a new view
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_new_for_buffer (AtomrBuffer *buffer)
{
  const gint64 *shape;
  gint64 flat;
  guint n_dims;

  g_return_val_if_fail (ATOMR_IS_BUFFER (buffer), NULL);

  shape = atomr_buffer_get_shape (buffer, &n_dims);
  if (shape == NULL || n_dims == 0 || n_dims > ATOMR_TENSOR_MAX_DIMS)
    {
      flat = (gint64) atomr_buffer_get_n_elements (buffer);
      shape = &flat;
      n_dims = 1;
    }
  /* A buffer's own layout always fits it. */
  return tensor_build (buffer, atomr_buffer_get_dtype (buffer), 0, shape, n_dims, NULL, NULL);
}

/**
 * atomr_tensor_empty:
 * @device: the device to allocate on
 * @dtype: the element type
 * @shape: (array length=n_dims) (nullable): the extent of each dimension (≥ 0)
 * @n_dims: the rank, 0 (a scalar) to %ATOMR_TENSOR_MAX_DIMS
 * @error: return location for a [struct@GLib.Error]
 *
 * Allocates a new buffer (contents undefined; one element when the shape
 * has none) and returns its contiguous row-major view.
 *
 * Returns: (transfer full): a new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_empty (AtomrDevice   *device,
                    AtomrDtype     dtype,
                    const gint64  *shape,
                    guint          n_dims,
                    GError       **error)
{
  g_autoptr(AtomrBuffer) buffer = NULL;
  guint64 n_elements;
  gsize elem;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  elem = atomr_dtype_get_size (dtype);
  if (elem == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Invalid dtype %d for a tensor", (int) dtype);
      return NULL;
    }
  if (n_dims > ATOMR_TENSOR_MAX_DIMS)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A tensor has at most %d dimensions, not %u",
                   ATOMR_TENSOR_MAX_DIMS, n_dims);
      return NULL;
    }
  if (n_dims > 0 && shape == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The shape is NULL but n_dims is %u", n_dims);
      return NULL;
    }
  if (!count_elements (shape, n_dims, elem, &n_elements, error))
    return NULL;

  buffer = atomr_buffer_new (device, dtype, MAX (n_elements, 1), error);
  if (buffer == NULL)
    return NULL;
  if (n_dims > 0 && n_elements > 0 &&
      !atomr_buffer_set_shape (buffer, shape, n_dims, error))
    return NULL;
  return tensor_build (buffer, dtype, 0, shape, n_dims, NULL, error);
}

/**
 * atomr_tensor_get_buffer:
 * @self: an [class@Atomr.Tensor]
 *
 * Gets the viewed buffer (%NULL only for a bare g_object_new() instance).
 *
 * This is the value of the [property@Atomr.Tensor:buffer] property.
 *
 * Returns: (transfer none) (nullable): the viewed buffer (%NULL only for a
 *   bare g_object_new() instance)
 *
 * Since: 0.2
 */
AtomrBuffer *
atomr_tensor_get_buffer (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  return self->buffer;
}

/**
 * atomr_tensor_get_device:
 * @self: an [class@Atomr.Tensor]
 *
 * Gets the device holding the memory.
 *
 * Returns: (transfer none) (nullable): the device holding the memory
 *
 * Since: 0.2
 */
AtomrDevice *
atomr_tensor_get_device (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  return self->buffer ? atomr_buffer_get_device (self->buffer) : NULL;
}

/**
 * atomr_tensor_get_dtype:
 * @self: an [class@Atomr.Tensor]
 *
 * Gets the element type of the view.
 *
 * This is the value of the [property@Atomr.Tensor:dtype] property.
 *
 * Returns: the element type of the view
 *
 * Since: 0.2
 */
AtomrDtype
atomr_tensor_get_dtype (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), ATOMR_DTYPE_F32);
  return self->dtype;
}

/**
 * atomr_tensor_get_n_dims:
 * @self: an [class@Atomr.Tensor]
 *
 * Gets the rank (0 for a scalar).
 *
 * This is the value of the [property@Atomr.Tensor:n-dims] property.
 *
 * Returns: the rank (0 for a scalar)
 *
 * Since: 0.2
 */
guint
atomr_tensor_get_n_dims (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), 0);
  return self->n_dims;
}

/**
 * atomr_tensor_get_shape:
 * @self: an [class@Atomr.Tensor]
 * @n_dims: (out) (optional): the rank
 *
 * Gets the extent of each dimension.
 *
 * Returns: (array length=n_dims) (transfer none): the extent of each dimension
 *
 * Since: 0.2
 */
const gint64 *
atomr_tensor_get_shape (AtomrTensor *self,
                        guint       *n_dims)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  if (n_dims)
    *n_dims = self->n_dims;
  return self->shape;
}

/**
 * atomr_tensor_get_strides:
 * @self: an [class@Atomr.Tensor]
 * @n_dims: (out) (optional): the rank
 *
 * Gets the stride of each dimension, in elements.
 *
 * Returns: (array length=n_dims) (transfer none): the stride of each
 *   dimension, in elements
 *
 * Since: 0.2
 */
const gint64 *
atomr_tensor_get_strides (AtomrTensor *self,
                          guint       *n_dims)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  if (n_dims)
    *n_dims = self->n_dims;
  return self->strides;
}

/**
 * atomr_tensor_get_dim:
 * @self: an [class@Atomr.Tensor]
 * @dim: a dimension, less than the rank
 *
 * Gets the extent of @dim, or -1 when @dim is not a dimension.
 *
 * Returns: the extent of @dim, or -1 when @dim is not a dimension
 *
 * Since: 0.2
 */
gint64
atomr_tensor_get_dim (AtomrTensor *self,
                      guint        dim)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), -1);
  return dim < self->n_dims ? self->shape[dim] : -1;
}

/**
 * atomr_tensor_get_stride:
 * @self: an [class@Atomr.Tensor]
 * @dim: a dimension, less than the rank
 *
 * Gets the stride of each dimension, in elements.
 *
 * Returns: the stride of @dim in elements, or 0 when @dim is not a dimension
 *
 * Since: 0.2
 */
gint64
atomr_tensor_get_stride (AtomrTensor *self,
                         guint        dim)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), 0);
  return dim < self->n_dims ? self->strides[dim] : 0;
}

/**
 * atomr_tensor_get_byte_offset:
 * @self: an [class@Atomr.Tensor]
 *
 * Gets the byte offset of element (0, …, 0) in the buffer.
 *
 * This is the value of the [property@Atomr.Tensor:byte-offset] property.
 *
 * Returns: the byte offset of element (0, …, 0) in the buffer
 *
 * Since: 0.2
 */
guint64
atomr_tensor_get_byte_offset (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), 0);
  return self->byte_offset;
}

/**
 * atomr_tensor_get_n_elements:
 * @self: an [class@Atomr.Tensor]
 *
 * Gets the number of elements: the product of the shape (1 for a scalar, 0 for a bare instance).
 *
 * This is the value of the [property@Atomr.Tensor:n-elements] property.
 *
 * Returns: the number of elements: the product of the shape (1 for a scalar,
 *   0 for a bare instance)
 *
 * Since: 0.2
 */
guint64
atomr_tensor_get_n_elements (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), 0);
  return self->n_elements;
}

/**
 * atomr_tensor_get_byte_size:
 * @self: an [class@Atomr.Tensor]
 *
 * The size of the elements (what a contiguous copy of the view occupies),
 * not the span of memory the strides cover.
 *
 * Returns: the number of elements times the element size
 *
 * Since: 0.2
 */
guint64
atomr_tensor_get_byte_size (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), 0);
  return self->n_elements * atomr_dtype_get_size (self->dtype);
}

/**
 * atomr_tensor_get_device_pointer:
 * @self: an [class@Atomr.Tensor]
 *
 * The device address of element (0, …, 0), for interoperation with other
 * CUDA code; the same caveats as [method@Atomr.Buffer.get_device_pointer].
 *
 * Returns: the address, or 0 on the host test device or for a bare instance
 *
 * Since: 0.2
 */
guint64
atomr_tensor_get_device_pointer (AtomrTensor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR (self), 0);
  return (guint64) atomr_tensor_get_ptr (self);
}

/**
 * atomr_tensor_is_contiguous:
 * @self: an [class@Atomr.Tensor]
 *
 * Whether the elements are packed in row-major (C) order: each stride is the
 * product of the later extents (dimensions of extent 1 may have any
 * stride).  Views without elements are contiguous.
 *
 * Returns: %TRUE for a packed row-major layout
 *
 * Since: 0.2
 */
gboolean
atomr_tensor_is_contiguous (AtomrTensor *self)
{
  gint64 expected = 1;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), FALSE);

  if (self->n_elements == 0)
    return TRUE;
  for (guint i = self->n_dims; i-- > 0;)
    {
      if (self->shape[i] == 1)
        continue;
      if (self->strides[i] != expected)
        return FALSE;
      expected *= self->shape[i];
    }
  return TRUE;
}

static void
append_dims (GString      *s,
             const gint64 *v,
             guint         n)
{
  g_string_append_c (s, '[');
  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", v[i]);
  g_string_append_c (s, ']');
}

/**
 * atomr_tensor_to_string:
 * @self: an [class@Atomr.Tensor]
 *
 * A one-line description for logs and `__repr__`, such as
 * `f32[2, 3] strides [3, 1] offset 0 on cuda:0`.
 *
 * Returns: (transfer full): the description
 *
 * Since: 0.2
 */
gchar *
atomr_tensor_to_string (AtomrTensor *self)
{
  GString *s;
  AtomrDevice *device;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);

  if (self->buffer == NULL)
    return g_strdup ("empty tensor (no buffer)");

  s = g_string_new (atomr_dtype_get_name (self->dtype));
  append_dims (s, self->shape, self->n_dims);
  g_string_append (s, " strides ");
  append_dims (s, self->strides, self->n_dims);
  g_string_append_printf (s, " offset %" G_GUINT64_FORMAT, self->byte_offset);
  device = atomr_buffer_get_device (self->buffer);
  if (atomr_device_is_host (device))
    g_string_append (s, " on host");
  else
    g_string_append_printf (s, " on cuda:%d", atomr_device_get_ordinal (device));
  return g_string_free (s, FALSE);
}

static gboolean
check_dim (AtomrTensor  *self,
           guint         dim,
           const gchar  *what,
           GError      **error)
{
  if (dim >= self->n_dims)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s dimension %u does not exist in a tensor of rank %u",
                   what, dim, self->n_dims);
      return FALSE;
    }
  return TRUE;
}

/* A view of the same buffer and dtype with a new layout. */
static AtomrTensor *
derive (AtomrTensor   *self,
        guint64        byte_offset,
        const gint64  *shape,
        guint          n_dims,
        const gint64  *strides,
        GError       **error)
{
  return tensor_build (self->buffer, self->dtype, byte_offset, shape, n_dims, strides, error);
}

/**
 * atomr_tensor_slice:
 * @self: an [class@Atomr.Tensor]
 * @dim: the dimension to slice
 * @start: the first index
 * @stop: the index to stop before
 * @step: the step between indices, not 0; negative to walk backwards
 * @error: return location for a [struct@GLib.Error]
 *
 * The view of indices @start, @start + @step, … up to (not including)
 * @stop along @dim, like Python's `a[start:stop:step]` after
 * `slice.indices()`: indices are absolute (no counting from the end), with
 * 0 ≤ @start, @stop ≤ extent for a positive step and -1 ≤ @start, @stop <
 * extent for a negative one.  An empty range gives a view with extent 0.
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_slice (AtomrTensor  *self,
                    guint         dim,
                    gint64        start,
                    gint64        stop,
                    gint64        step,
                    GError      **error)
{
  gint64 shape[ATOMR_TENSOR_MAX_DIMS], strides[ATOMR_TENSOR_MAX_DIMS];
  gint64 extent, count, lo, hi;
  guint64 offset = 0;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error) || !check_dim (self, dim, "Slice", error))
    return NULL;
  extent = self->shape[dim];
  if (step == 0 || step == G_MININT64)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Slice step %" G_GINT64_FORMAT " of dimension %u is invalid", step, dim);
      return NULL;
    }
  lo = step > 0 ? 0 : -1;
  hi = step > 0 ? extent : extent - 1;
  if (start < lo || start > hi || stop < lo || stop > hi)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Slice %" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT
                   " is out of range for dimension %u of extent %" G_GINT64_FORMAT
                   " (start and stop must lie in [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "])",
                   start, stop, step, dim, extent, lo, hi);
      return NULL;
    }
  if (step > 0)
    count = stop > start ? (stop - start - 1) / step + 1 : 0;
  else
    count = start > stop ? (start - stop - 1) / -step + 1 : 0;

  memcpy (shape, self->shape, sizeof shape);
  memcpy (strides, self->strides, sizeof strides);
  shape[dim] = count;
  offset = self->byte_offset;
  if (count > 0)
    {
      /* in range: start < extent, so start × stride is within the buffer */
      offset = (guint64) ((gint64) self->byte_offset +
                          start * self->strides[dim] * (gint64) atomr_dtype_get_size (self->dtype));
      if (count > 1 && __builtin_mul_overflow (self->strides[dim], step, &strides[dim]))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Slice step %" G_GINT64_FORMAT " times stride %" G_GINT64_FORMAT
                       " of dimension %u overflows", step, self->strides[dim], dim);
          return NULL;
        }
    }
  return derive (self, offset, shape, self->n_dims, strides, error);
}

/**
 * atomr_tensor_select:
 * @self: an [class@Atomr.Tensor]
 * @dim: the dimension to remove
 * @index: the index along @dim; negative counts from the end (-1 is the last)
 * @error: return location for a [struct@GLib.Error]
 *
 * The view of one index along @dim, of rank one less (`a[..., index, ...]`).
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_select (AtomrTensor  *self,
                     guint         dim,
                     gint64        index,
                     GError      **error)
{
  gint64 shape[ATOMR_TENSOR_MAX_DIMS], strides[ATOMR_TENSOR_MAX_DIMS];
  gint64 extent, i;
  guint n = 0;
  guint64 offset;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error) || !check_dim (self, dim, "Select", error))
    return NULL;
  extent = self->shape[dim];
  i = index < 0 ? index + extent : index;
  if (i < 0 || i >= extent)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Index %" G_GINT64_FORMAT " is out of range for dimension %u of extent %"
                   G_GINT64_FORMAT, index, dim, extent);
      return NULL;
    }
  for (guint d = 0; d < self->n_dims; d++)
    {
      if (d == dim)
        continue;
      shape[n] = self->shape[d];
      strides[n] = self->strides[d];
      n++;
    }
  offset = self->byte_offset;
  if (self->n_elements > 0)
    offset = (guint64) ((gint64) self->byte_offset +
                        i * self->strides[dim] * (gint64) atomr_dtype_get_size (self->dtype));
  return derive (self, offset, shape, n, strides, error);
}

/**
 * atomr_tensor_permute:
 * @self: an [class@Atomr.Tensor]
 * @perm: (array length=n_perm): for each new dimension, the old dimension
 *   it is
 * @n_perm: the rank of @self
 * @error: return location for a [struct@GLib.Error]
 *
 * The view with its dimensions reordered: new dimension k is old dimension
 * @perm[k].
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_permute (AtomrTensor  *self,
                      const guint  *perm,
                      guint         n_perm,
                      GError      **error)
{
  gint64 shape[ATOMR_TENSOR_MAX_DIMS], strides[ATOMR_TENSOR_MAX_DIMS];
  gboolean seen[ATOMR_TENSOR_MAX_DIMS] = { FALSE, };

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error))
    return NULL;
  if (n_perm != self->n_dims || (n_perm > 0 && perm == NULL))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A permutation of %u dimensions does not fit a tensor of rank %u",
                   perm ? n_perm : 0, self->n_dims);
      return NULL;
    }
  for (guint k = 0; k < n_perm; k++)
    {
      if (perm[k] >= n_perm || seen[perm[k]])
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Entry %u of the permutation (%u) is %s", k, perm[k],
                       perm[k] >= n_perm ? "not a dimension" : "repeated");
          return NULL;
        }
      seen[perm[k]] = TRUE;
      shape[k] = self->shape[perm[k]];
      strides[k] = self->strides[perm[k]];
    }
  return derive (self, self->byte_offset, shape, n_perm, strides, error);
}

/**
 * atomr_tensor_transpose:
 * @self: an [class@Atomr.Tensor]
 * @dim0: a dimension
 * @dim1: another (or the same) dimension
 * @error: return location for a [struct@GLib.Error]
 *
 * The view with @dim0 and @dim1 swapped (for a matrix, its transpose).
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_transpose (AtomrTensor  *self,
                        guint         dim0,
                        guint         dim1,
                        GError      **error)
{
  guint perm[ATOMR_TENSOR_MAX_DIMS];

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error) ||
      !check_dim (self, dim0, "Transpose", error) ||
      !check_dim (self, dim1, "Transpose", error))
    return NULL;
  for (guint k = 0; k < self->n_dims; k++)
    perm[k] = k;
  perm[dim0] = dim1;
  perm[dim1] = dim0;
  return atomr_tensor_permute (self, perm, self->n_dims, error);
}

/**
 * atomr_tensor_reshape:
 * @self: an [class@Atomr.Tensor]
 * @shape: (array length=n_dims) (nullable): the new extents; one of them may
 *   be -1, to be inferred from the element count
 * @n_dims: the new rank
 * @error: return location for a [struct@GLib.Error]
 *
 * The same elements in row-major order with another shape, without a copy.
 * Contiguous views can always be reshaped; other layouts only when each
 * group of old dimensions that a new dimension merges or splits is itself
 * contiguous (a transposed matrix cannot be flattened, a column slice of a
 * 3-D tensor can merge its leading dimensions).  When no view of the memory
 * has the asked shape, fails with %ATOMR_ERROR_INVALID_ARGUMENT: copy the
 * view to a contiguous tensor first.
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_reshape (AtomrTensor   *self,
                      const gint64  *shape,
                      guint          n_dims,
                      GError       **error)
{
  gint64 new_shape[ATOMR_TENSOR_MAX_DIMS], new_strides[ATOMR_TENSOR_MAX_DIMS];
  gint64 old_shape[ATOMR_TENSOR_MAX_DIMS], old_strides[ATOMR_TENSOR_MAX_DIMS];
  guint old_n = 0, infer = G_MAXUINT;
  gint64 known = 1;
  guint64 n_elements;
  guint oi, oj, ni, nj;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error))
    return NULL;
  if (n_dims > ATOMR_TENSOR_MAX_DIMS || (n_dims > 0 && shape == NULL))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Cannot reshape to %u dimensions (at most %d, and a shape is needed)",
                   n_dims, ATOMR_TENSOR_MAX_DIMS);
      return NULL;
    }
  for (guint i = 0; i < n_dims; i++)
    {
      new_shape[i] = shape[i];
      if (shape[i] == -1)
        {
          if (infer != G_MAXUINT)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "Only one extent of a reshape may be -1 (dimensions %u and %u are)",
                           infer, i);
              return NULL;
            }
          infer = i;
        }
      else if (shape[i] < 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the new shape is %" G_GINT64_FORMAT
                       "; extents must be 0 or more (or -1 to infer one)", i, shape[i]);
          return NULL;
        }
      else if (__builtin_mul_overflow (known, shape[i], &known))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "The element count of the new shape overflows 64 bits at dimension %u", i);
          return NULL;
        }
    }
  if (infer != G_MAXUINT)
    {
      if (known == 0 || self->n_elements % (guint64) known != 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Cannot infer dimension %u: %" G_GUINT64_FORMAT
                       " elements are not a multiple of %" G_GINT64_FORMAT,
                       infer, self->n_elements, known);
          return NULL;
        }
      new_shape[infer] = (gint64) (self->n_elements / (guint64) known);
    }
  if (!count_elements (new_shape, n_dims, atomr_dtype_get_size (self->dtype), &n_elements, error))
    return NULL;
  if (n_elements != self->n_elements)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Cannot reshape %" G_GUINT64_FORMAT " elements to a shape of %"
                   G_GUINT64_FORMAT, self->n_elements, n_elements);
      return NULL;
    }
  if (n_elements == 0)
    return derive (self, self->byte_offset, new_shape, n_dims, NULL, error);

  /* Attempt a reshape without copy (the algorithm of NumPy's
   * _attempt_nocopy_reshape): extents of 1 carry no layout, the rest are
   * matched in groups of equal products; each old group must be
   * contiguous, and the new group's strides follow from its last stride. */
  for (guint i = 0; i < self->n_dims; i++)
    {
      if (self->shape[i] != 1)
        {
          old_shape[old_n] = self->shape[i];
          old_strides[old_n] = self->strides[i];
          old_n++;
        }
    }
  oi = 0; oj = 1; ni = 0; nj = 1;
  while (ni < n_dims && oi < old_n)
    {
      gint64 np = new_shape[ni], op = old_shape[oi];

      /* products of positive extents with equal totals: the indices stay
       * in range */
      while (np != op)
        {
          if (np < op)
            np *= new_shape[nj++];
          else
            op *= old_shape[oj++];
        }
      for (guint ok = oi; ok + 1 < oj; ok++)
        {
          if (old_strides[ok] != old_shape[ok + 1] * old_strides[ok + 1])
            {
              g_autofree gchar *desc = atomr_tensor_to_string (self);
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "Cannot reshape %s without a copy: its dimensions of extents %"
                           G_GINT64_FORMAT " and %" G_GINT64_FORMAT " are not contiguous "
                           "with each other; copy it to a contiguous tensor first",
                           desc, old_shape[ok], old_shape[ok + 1]);
              return NULL;
            }
        }
      new_strides[nj - 1] = old_strides[oj - 1];
      for (guint nk = nj - 1; nk > ni; nk--)
        new_strides[nk - 1] = new_strides[nk] * new_shape[nk];
      ni = nj++;
      oi = oj++;
    }
  for (guint nk = ni; nk < n_dims; nk++)
    new_strides[nk] = ni > 0 ? new_strides[ni - 1] : 1;

  return derive (self, self->byte_offset, new_shape, n_dims, new_strides, error);
}

/**
 * atomr_tensor_broadcast_to:
 * @self: an [class@Atomr.Tensor]
 * @shape: (array length=n_dims) (nullable): the target shape
 * @n_dims: the target rank, at least the rank of @self
 * @error: return location for a [struct@GLib.Error]
 *
 * The view repeated to @shape by NumPy's broadcasting rules: dimensions
 * are matched from the last; an extent of 1 (or a missing leading
 * dimension) repeats with stride 0, any other extent must equal the
 * target's.  The result must only be read: writing one element of a
 * broadcast view writes them all.
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_broadcast_to (AtomrTensor   *self,
                           const gint64  *shape,
                           guint          n_dims,
                           GError       **error)
{
  gint64 strides[ATOMR_TENSOR_MAX_DIMS];
  guint lead;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error))
    return NULL;
  if (n_dims > ATOMR_TENSOR_MAX_DIMS || n_dims < self->n_dims || (n_dims > 0 && shape == NULL))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Cannot broadcast a tensor of rank %u to rank %u", self->n_dims, n_dims);
      return NULL;
    }
  lead = n_dims - self->n_dims;
  for (guint k = 0; k < n_dims; k++)
    {
      if (shape[k] < 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the target shape is %" G_GINT64_FORMAT
                       "; extents must be 0 or more", k, shape[k]);
          return NULL;
        }
      if (k < lead)
        strides[k] = 0;
      else if (self->shape[k - lead] == shape[k])
        strides[k] = self->strides[k - lead];
      else if (self->shape[k - lead] == 1)
        strides[k] = 0;
      else
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Cannot broadcast dimension %u of extent %" G_GINT64_FORMAT
                       " to extent %" G_GINT64_FORMAT " (target dimension %u)",
                       k - lead, self->shape[k - lead], shape[k], k);
          return NULL;
        }
    }
  return derive (self, self->byte_offset, shape, n_dims, strides, error);
}

/**
 * atomr_tensor_unsqueeze:
 * @self: an [class@Atomr.Tensor]
 * @dim: where the new dimension goes, 0 to the rank of @self
 * @error: return location for a [struct@GLib.Error]
 *
 * The view with a new dimension of extent 1 inserted before @dim.
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_unsqueeze (AtomrTensor  *self,
                        guint         dim,
                        GError      **error)
{
  gint64 shape[ATOMR_TENSOR_MAX_DIMS], strides[ATOMR_TENSOR_MAX_DIMS];

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error))
    return NULL;
  if (dim > self->n_dims || self->n_dims == ATOMR_TENSOR_MAX_DIMS)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Cannot insert dimension %u into a tensor of rank %u (at most %d dimensions)",
                   dim, self->n_dims, ATOMR_TENSOR_MAX_DIMS);
      return NULL;
    }
  for (guint k = 0, o = 0; k <= self->n_dims; k++)
    {
      if (k == dim)
        {
          shape[k] = 1;
          /* what a contiguous layout would have */
          if (dim == self->n_dims ||
              __builtin_mul_overflow (self->shape[dim], self->strides[dim], &strides[k]))
            strides[k] = 1; /* any stride is right for extent 1 */
          continue;
        }
      shape[k] = self->shape[o];
      strides[k] = self->strides[o];
      o++;
    }
  return derive (self, self->byte_offset, shape, self->n_dims + 1, strides, error);
}

/**
 * atomr_tensor_squeeze:
 * @self: an [class@Atomr.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * The view without its dimensions of extent 1.
 *
 * Returns: (transfer full): the new view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_squeeze (AtomrTensor  *self,
                      GError      **error)
{
  gint64 shape[ATOMR_TENSOR_MAX_DIMS], strides[ATOMR_TENSOR_MAX_DIMS];
  guint n = 0;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!require_buffer (self, error))
    return NULL;
  for (guint k = 0; k < self->n_dims; k++)
    {
      if (self->shape[k] == 1)
        continue;
      shape[n] = self->shape[k];
      strides[n] = self->strides[k];
      n++;
    }
  return derive (self, self->byte_offset, shape, n, strides, error);
}

/**
 * atomr_tensor_broadcast_shapes:
 * @shape_a: (array length=n_a) (nullable): a shape
 * @n_a: its rank
 * @shape_b: (array length=n_b) (nullable): another shape
 * @n_b: its rank
 * @out_shape: (out) (array length=out_n_dims) (transfer full): the
 *   broadcast shape
 * @out_n_dims: (out): its rank, the larger of @n_a and @n_b
 * @error: return location for a [struct@GLib.Error]
 *
 * The shape two operands broadcast to by NumPy's rules (see
 * [method@Atomr.Tensor.broadcast_to]).
 *
 * Returns: %TRUE when the shapes are compatible
 *
 * Since: 0.2
 */
gboolean
atomr_tensor_broadcast_shapes (const gint64  *shape_a,
                               guint          n_a,
                               const gint64  *shape_b,
                               guint          n_b,
                               gint64       **out_shape,
                               guint         *out_n_dims,
                               GError       **error)
{
  guint n = MAX (n_a, n_b);
  g_autofree gint64 *out = NULL;

  g_return_val_if_fail (out_shape != NULL && out_n_dims != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  *out_shape = NULL;
  *out_n_dims = 0;
  if (n > ATOMR_TENSOR_MAX_DIMS || (n_a > 0 && shape_a == NULL) || (n_b > 0 && shape_b == NULL))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Cannot broadcast shapes of rank %u and %u (at most %d dimensions)",
                   n_a, n_b, ATOMR_TENSOR_MAX_DIMS);
      return FALSE;
    }
  out = g_new0 (gint64, MAX (n, 1));
  for (guint k = 0; k < n; k++)
    {
      gint64 a = k < n - n_a ? 1 : shape_a[k - (n - n_a)];
      gint64 b = k < n - n_b ? 1 : shape_b[k - (n - n_b)];

      if (a < 0 || b < 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the broadcast has a negative extent (%" G_GINT64_FORMAT
                       ")", k, MIN (a, b));
          return FALSE;
        }
      if (a != b && a != 1 && b != 1)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Shapes do not broadcast: extents %" G_GINT64_FORMAT " and %"
                       G_GINT64_FORMAT " at dimension %u of the result", a, b, k);
          return FALSE;
        }
      out[k] = a == 1 ? b : a;
    }
  *out_shape = g_steal_pointer (&out);
  *out_n_dims = n;
  return TRUE;
}

/* Private API for actors */

CUdeviceptr
atomr_tensor_get_ptr (AtomrTensor *self)
{
  CUdeviceptr base;

  if (self->buffer == NULL)
    return 0;
  base = atomr_buffer_get_ptr (self->buffer);
  return base ? base + self->byte_offset : 0;
}

gpointer
atomr_tensor_get_host_data (AtomrTensor *self)
{
  guint8 *base;

  if (self->buffer == NULL)
    return NULL;
  base = atomr_buffer_get_host_data (self->buffer);
  return base ? base + self->byte_offset : NULL;
}

void
atomr_tensor_get_byte_range (AtomrTensor *self,
                             guint64     *begin,
                             guint64     *end)
{
  *begin = self->range_begin;
  *end = self->range_end;
}

static guintptr
allocation_base (AtomrBuffer *buffer)
{
  CUdeviceptr ptr = atomr_buffer_get_ptr (buffer);

  return ptr ? (guintptr) ptr : (guintptr) atomr_buffer_get_host_data (buffer);
}

gboolean
atomr_tensor_overlaps (AtomrTensor *a,
                       AtomrTensor *b)
{
  guint64 a0, a1, b0, b1;

  if (a->buffer == NULL || b->buffer == NULL)
    return FALSE;
  if (a->range_begin == a->range_end || b->range_begin == b->range_end)
    return FALSE;
  if (a->buffer == b->buffer)
    return a->range_begin < b->range_end && b->range_begin < a->range_end;
  if (atomr_buffer_get_device (a->buffer) != atomr_buffer_get_device (b->buffer))
    return FALSE;
  /* Distinct buffers can share memory when foreign memory is wrapped twice:
   * compare addresses. */
  a0 = allocation_base (a->buffer) + a->range_begin;
  a1 = allocation_base (a->buffer) + a->range_end;
  b0 = allocation_base (b->buffer) + b->range_begin;
  b1 = allocation_base (b->buffer) + b->range_end;
  return a0 < b1 && b0 < a1;
}

gboolean
atomr_tensor_get_matrix_layout (AtomrTensor       *self,
                                const gchar       *what,
                                AtomrMatrixLayout *layout,
                                GError           **error)
{
  gint64 r, c, sr, sc;

  if (!require_buffer (self, error))
    return FALSE;
  if (self->n_dims != 2)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s must be a matrix (2 dimensions), not of rank %u", what, self->n_dims);
      return FALSE;
    }
  r = self->shape[0];
  c = self->shape[1];
  sr = self->strides[0];
  sc = self->strides[1];

  /* Column-major: (i, j) at i + j·ld. */
  if ((r <= 1 || sr == 1) && (c <= 1 || sc >= MAX (1, r)))
    {
      layout->rows = r;
      layout->cols = c;
      layout->ld = c <= 1 ? MAX (1, r) : sc;
      layout->transposed = FALSE;
      return TRUE;
    }
  /* Row-major: (i, j) at i·ld + j, the transpose of a c × r column-major matrix. */
  if ((c <= 1 || sc == 1) && (r <= 1 || sr >= MAX (1, c)))
    {
      layout->rows = c;
      layout->cols = r;
      layout->ld = r <= 1 ? MAX (1, c) : sr;
      layout->transposed = TRUE;
      return TRUE;
    }
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "%s (%" G_GINT64_FORMAT " × %" G_GINT64_FORMAT ", strides %" G_GINT64_FORMAT
               ", %" G_GINT64_FORMAT ") has no BLAS layout: one stride must be 1 and the other "
               "at least the extent of that dimension; copy it to a contiguous tensor first",
               what, r, c, sr, sc);
  return FALSE;
}

void
atomr_op_read_tensor (AtomrOp     *op,
                      AtomrTensor *tensor)
{
  atomr_op_read (op, tensor->buffer);
}

void
atomr_op_write_tensor (AtomrOp     *op,
                       AtomrTensor *tensor)
{
  atomr_op_write (op, tensor->buffer);
}

gboolean
atomr_tensor_check (AtomrTensor *self,
                    AtomrDevice *device,
                    const gchar *what,
                    GError     **error)
{
  if (self == NULL || !ATOMR_IS_TENSOR (self))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s is not a tensor", what);
      return FALSE;
    }
  if (self->buffer == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s has no buffer (a bare g_object_new() tensor)", what);
      return FALSE;
    }
  if (device != NULL && atomr_buffer_get_device (self->buffer) != device)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s lives on device %d, not on device %d", what,
                   atomr_device_get_ordinal (atomr_buffer_get_device (self->buffer)),
                   atomr_device_get_ordinal (device));
      return FALSE;
    }
  return atomr_buffer_check (self->buffer, error);
}
