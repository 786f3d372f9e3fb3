/* atomr-dlpack.c — DLPack export and import, and foreign strided memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-buffer-private.h"
#include "atomr-device-private.h"
#include "atomr-dlpack-private.h"
#include "atomr-dlpack.h"
#include "atomr-error.h"
#include "atomr-external.h"
#include "atomr-tensor-private.h"

/* DLPack is a C ABI: the managed tensors travel between libraries (and
 * through Python capsules) as addresses, which is why the functions here
 * take and return guint64: bindings can pass them to ctypes or a capsule
 * without a C compiler.  A view maps onto a DLTensor one to one: data is
 * the start of the buffer, byte_offset the view's, strides in elements. */

static const struct {
  AtomrDtype dtype;
  guint8     code;
  guint8     bits;
  const gchar *typestr;
} dtype_map[] = {
  { ATOMR_DTYPE_F16, ATOMR_DL_FLOAT, 16, "<f2" },
  { ATOMR_DTYPE_BF16, ATOMR_DL_BFLOAT, 16, NULL },
  { ATOMR_DTYPE_F32, ATOMR_DL_FLOAT, 32, "<f4" },
  { ATOMR_DTYPE_F64, ATOMR_DL_FLOAT, 64, "<f8" },
  { ATOMR_DTYPE_C64, ATOMR_DL_COMPLEX, 64, "<c8" },
  { ATOMR_DTYPE_C128, ATOMR_DL_COMPLEX, 128, "<c16" },
  { ATOMR_DTYPE_I8, ATOMR_DL_INT, 8, "|i1" },
  { ATOMR_DTYPE_U8, ATOMR_DL_UINT, 8, "|u1" },
  { ATOMR_DTYPE_I32, ATOMR_DL_INT, 32, "<i4" },
  { ATOMR_DTYPE_U32, ATOMR_DL_UINT, 32, "<u4" },
  { ATOMR_DTYPE_I64, ATOMR_DL_INT, 64, "<i8" },
  { ATOMR_DTYPE_U64, ATOMR_DL_UINT, 64, "<u8" },
  { ATOMR_DTYPE_F8_E4M3, ATOMR_DL_FLOAT8_E4M3FN, 8, NULL },
  { ATOMR_DTYPE_F8_E5M2, ATOMR_DL_FLOAT8_E5M2, 8, NULL },
};

/**
 * atomr_dtype_get_typestr:
 * @dtype: an [enum@Atomr.Dtype]
 *
 * The NumPy array-interface type string of @dtype (`"<f4"` for f32), as
 * `__cuda_array_interface__` and `__array_interface__` use it.
 *
 * Returns: (nullable): the type string, or %NULL for dtypes NumPy has no
 *   code for (bf16, the f8 formats) or an invalid dtype
 *
 * Since: 0.2
 */
const gchar *
atomr_dtype_get_typestr (AtomrDtype dtype)
{
  for (guint i = 0; i < G_N_ELEMENTS (dtype_map); i++)
    if (dtype_map[i].dtype == dtype)
      return dtype_map[i].typestr;
  return NULL;
}

/**
 * atomr_dtype_from_typestr:
 * @typestr: a NumPy array-interface type string such as `"<f4"`
 * @dtype: (out): the matching dtype
 *
 * The inverse of [func@Atomr.Dtype.get_typestr]; little-endian (`<`), native
 * (`=`) and byte-order free (`|`) strings are accepted, big-endian ones are
 * not.
 *
 * Returns: %TRUE when @typestr names a dtype
 *
 * Since: 0.2
 */
gboolean
atomr_dtype_from_typestr (const gchar *typestr,
                          AtomrDtype  *dtype)
{
  g_return_val_if_fail (typestr != NULL, FALSE);
  g_return_val_if_fail (dtype != NULL, FALSE);

  if (typestr[0] != '<' && typestr[0] != '|' && typestr[0] != '=')
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (dtype_map); i++)
    if (dtype_map[i].typestr && strcmp (dtype_map[i].typestr + 1, typestr + 1) == 0)
      {
        *dtype = dtype_map[i].dtype;
        return TRUE;
      }
  return FALSE;
}

/* ------------------------------------------------------------------ */
/* Export                                                               */

typedef struct {
  AtomrTensor *tensor;
  int64_t      shape[ATOMR_TENSOR_MAX_DIMS];
  int64_t      strides[ATOMR_TENSOR_MAX_DIMS];
  union {
    AtomrDLManagedTensor          legacy;
    AtomrDLManagedTensorVersioned versioned;
  } m;
} ExportContext;

static void
export_free (ExportContext *ctx)
{
  g_object_unref (ctx->tensor);
  g_free (ctx);
}

static void
delete_versioned (AtomrDLManagedTensorVersioned *self)
{
  export_free (self->manager_ctx);
}

static void
delete_legacy (AtomrDLManagedTensor *self)
{
  export_free (self->manager_ctx);
}

/**
 * atomr_tensor_export_dlpack:
 * @self: an [class@Atomr.Tensor]
 * @versioned: %TRUE for a `DLManagedTensorVersioned` (DLPack ≥ 1.0), %FALSE
 *   for the legacy `DLManagedTensor`
 * @error: return location for a [struct@GLib.Error]
 *
 * Describes the view as a DLPack managed tensor, without a copy: device
 * kDLCUDA with the device's ordinal (kDLCPU on the host test device), data
 * the start of the buffer, the view's byte offset, shape and strides (in
 * elements).  The managed tensor holds a reference on @self until its
 * deleter is called; the consumer must call it exactly once, from any
 * thread.
 *
 * The memory is ready for a consumer only after atomr's work on it:
 * order the consumer's stream with [method@Atomr.Actor.signal_stream_async] first
 * (Python's `__dlpack__(stream=...)` does).
 *
 * Returns: the address of the managed tensor, or 0 on error
 *
 * Since: 0.2
 */
guint64
atomr_tensor_export_dlpack (AtomrTensor  *self,
                            gboolean      versioned,
                            GError      **error)
{
  ExportContext *ctx;
  AtomrDLTensor *dl;
  AtomrBuffer *buffer;
  AtomrDevice *device;
  guint n;
  const gint64 *shape, *strides;
  AtomrDtype dtype;
  guint i;

  g_return_val_if_fail (ATOMR_IS_TENSOR (self), 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);

  if (!atomr_tensor_check (self, NULL, "The tensor to export", error))
    return 0;
  buffer = atomr_tensor_get_buffer (self);
  device = atomr_buffer_get_device (buffer);
  dtype = atomr_tensor_get_dtype (self);
  for (i = 0; i < G_N_ELEMENTS (dtype_map); i++)
    if (dtype_map[i].dtype == dtype)
      break;
  g_assert (i < G_N_ELEMENTS (dtype_map));

  ctx = g_new0 (ExportContext, 1);
  ctx->tensor = g_object_ref (self);
  shape = atomr_tensor_get_shape (self, &n);
  strides = atomr_tensor_get_strides (self, NULL);
  for (guint k = 0; k < n; k++)
    {
      ctx->shape[k] = shape[k];
      ctx->strides[k] = strides[k];
    }
  if (versioned)
    {
      ctx->m.versioned.version.major = ATOMR_DLPACK_MAJOR;
      ctx->m.versioned.version.minor = ATOMR_DLPACK_MINOR;
      ctx->m.versioned.manager_ctx = ctx;
      ctx->m.versioned.deleter = delete_versioned;
      ctx->m.versioned.flags = atomr_buffer_get_read_only (buffer) ? ATOMR_DLPACK_FLAG_READ_ONLY : 0;
      dl = &ctx->m.versioned.dl_tensor;
    }
  else
    {
      ctx->m.legacy.manager_ctx = ctx;
      ctx->m.legacy.deleter = delete_legacy;
      dl = &ctx->m.legacy.dl_tensor;
    }
  if (atomr_device_is_host (device))
    {
      dl->data = atomr_buffer_get_host_data (buffer);
      dl->device.device_type = ATOMR_DL_CPU;
      dl->device.device_id = 0;
    }
  else
    {
      dl->data = (void *) (guintptr) atomr_buffer_get_ptr (buffer);
      dl->device.device_type = ATOMR_DL_CUDA;
      dl->device.device_id = atomr_device_get_ordinal (device);
    }
  dl->ndim = (int32_t) n;
  dl->dtype.code = dtype_map[i].code;
  dl->dtype.bits = dtype_map[i].bits;
  dl->dtype.lanes = 1;
  dl->shape = ctx->shape;
  dl->strides = ctx->strides;
  dl->byte_offset = atomr_tensor_get_byte_offset (self);
  return (guint64) (guintptr) &ctx->m;
}

/* ------------------------------------------------------------------ */
/* Import                                                               */

/**
 * atomr_tensor_new_for_device_pointer:
 * @device: the device the memory is on
 * @dtype: the element type
 * @device_pointer: the device address of element (0, …, 0) (a host
 *   address on the host test device)
 * @shape: (array length=n_dims) (nullable): the extent of each dimension
 * @n_dims: the rank, 0 to %ATOMR_TENSOR_MAX_DIMS
 * @strides: (array length=n_strides) (nullable): strides in elements, or
 *   %NULL for row-major
 * @n_strides: @n_dims, or 0 with @strides %NULL
 * @notify: (nullable) (scope async) (closure user_data): called once when
 *   the memory is no longer needed (also on error)
 * @user_data: data for @notify
 * @error: return location for a [struct@GLib.Error]
 *
 * A view of foreign strided memory (a CuPy or PyTorch array, a
 * `__cuda_array_interface__`), without a copy: the bytes the layout
 * reaches are wrapped with [ctor@Atomr.Buffer.new_for_device_pointer], which
 * checks them with the driver.  A layout without elements gets a fresh
 * one-element buffer and @notify is called at once.
 *
 * Returns: (transfer full): the view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_new_for_device_pointer (AtomrDevice     *device,
                                     AtomrDtype       dtype,
                                     guint64          device_pointer,
                                     const gint64    *shape,
                                     guint            n_dims,
                                     const gint64    *strides,
                                     guint            n_strides,
                                     GDestroyNotify   notify,
                                     gpointer         user_data,
                                     GError         **error)
{
  gint64 packed[ATOMR_TENSOR_MAX_DIMS];
  gsize elem = atomr_dtype_get_size (dtype);
  gint64 lo = 0, hi = 0, extent;
  gboolean empty = FALSE;
  g_autoptr(AtomrBuffer) buffer = NULL;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (elem == 0 || n_dims > ATOMR_TENSOR_MAX_DIMS || (n_dims > 0 && shape == NULL) ||
      (strides != NULL ? n_strides != n_dims : n_strides != 0))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Cannot describe foreign memory with dtype %d, %u dimensions and %u strides",
                   (int) dtype, n_dims, n_strides);
      goto fail;
    }
  if (strides == NULL)
    {
      gint64 s = 1;
      for (guint k = n_dims; k-- > 0;)
        {
          packed[k] = s;
          if (shape[k] > 0 && __builtin_mul_overflow (s, shape[k], &s))
            s = 1;   /* the element count check below reports it */
        }
      strides = packed;
    }
  for (guint k = 0; k < n_dims; k++)
    {
      gint64 reach;

      if (shape[k] < 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the foreign shape is %" G_GINT64_FORMAT, k, shape[k]);
          goto fail;
        }
      if (shape[k] == 0)
        empty = TRUE;
      else if (__builtin_mul_overflow (shape[k] - 1, strides[k], &reach) ||
               (reach < 0 ? __builtin_add_overflow (lo, reach, &lo)
                          : __builtin_add_overflow (hi, reach, &hi)))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the foreign layout (extent %" G_GINT64_FORMAT
                       ", stride %" G_GINT64_FORMAT ") overflows", k, shape[k], strides[k]);
          goto fail;
        }
    }
  if (empty)
    {
      if (notify)
        notify (user_data);
      return atomr_tensor_empty (device, dtype, shape, n_dims, error);
    }
  if (__builtin_sub_overflow (hi, lo, &extent) || extent >= G_MAXINT64 / (gint64) elem ||
      (guint64) (-lo) * elem > device_pointer)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The foreign layout reaches outside the address space");
      goto fail;
    }
  buffer = atomr_buffer_new_for_device_pointer (device, dtype, (guint64) extent + 1,
                                                device_pointer - (guint64) (-lo) * elem,
                                                notify, user_data, error);
  if (buffer == NULL)
    return NULL;   /* notify was called */
  return atomr_tensor_new_strided (buffer, dtype, (guint64) (-lo) * elem, shape, n_dims,
                                   n_dims ? strides : NULL, n_dims, error);

fail:
  if (notify)
    notify (user_data);
  return NULL;
}

static void
call_versioned_deleter (gpointer data)
{
  AtomrDLManagedTensorVersioned *m = data;

  if (m->deleter)
    m->deleter (m);
}

static void
call_legacy_deleter (gpointer data)
{
  AtomrDLManagedTensor *m = data;

  if (m->deleter)
    m->deleter (m);
}

/**
 * atomr_tensor_import_dlpack:
 * @managed_tensor: the address of a `DLManagedTensorVersioned` (or of a
 *   legacy `DLManagedTensor`), which this call consumes
 * @versioned: whether @managed_tensor is versioned
 * @device: (nullable): the device to use, or %NULL for the CUDA device the
 *   tensor names
 * @error: return location for a [struct@GLib.Error]
 *
 * Views the memory of a DLPack tensor (from PyTorch, CuPy, JAX...) without
 * a copy.  Its deleter is called exactly once: when the view's buffer is
 * done with the memory, or before returning on error.  Supported: kDLCUDA
 * memory (kDLCPU on the host test device), one lane, the element types of
 * [enum@Atomr.Dtype].
 *
 * A versioned tensor with the `DLPACK_FLAG_BITMASK_READ_ONLY` flag gives a
 * view whose buffer is [property@Atomr.Buffer:read-only]: every operation
 * that would write it fails with %ATOMR_ERROR_INVALID_ARGUMENT.  (Legacy
 * tensors carry no flags.)  Exporting such a view sets the flag again.
 *
 * Order the producer's work first: ask it for the tensor with
 * `__dlpack__(stream=...)` naming a stream atomr then waits for with
 * [method@Atomr.Actor.wait_stream_async].
 *
 * Returns: (transfer full): the view, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_tensor_import_dlpack (guint64       managed_tensor,
                            gboolean      versioned,
                            AtomrDevice  *device,
                            GError      **error)
{
  g_autoptr(AtomrDevice) own = NULL;
  AtomrDLTensor *dl;
  GDestroyNotify release;
  gpointer m = (gpointer) (guintptr) managed_tensor;
  gboolean read_only = FALSE;
  AtomrTensor *tensor;
  AtomrDtype dtype = ATOMR_DTYPE_F32;
  guint i;
  gint64 shape[ATOMR_TENSOR_MAX_DIMS], strides[ATOMR_TENSOR_MAX_DIMS];

  g_return_val_if_fail (device == NULL || ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (m == NULL)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "The DLPack managed tensor is NULL");
      return NULL;
    }
  if (versioned)
    {
      AtomrDLManagedTensorVersioned *v = m;
      if (v->version.major != ATOMR_DLPACK_MAJOR)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "DLPack version %u.%u is not supported (major version %d is)",
                       v->version.major, v->version.minor, ATOMR_DLPACK_MAJOR);
          call_versioned_deleter (v);
          return NULL;
        }
      dl = &v->dl_tensor;
      release = call_versioned_deleter;
      read_only = (v->flags & ATOMR_DLPACK_FLAG_READ_ONLY) != 0;
    }
  else
    {
      dl = &((AtomrDLManagedTensor *) m)->dl_tensor;
      release = call_legacy_deleter;
    }

#define FAIL(code, ...) \
  G_STMT_START { g_set_error (error, ATOMR_ERROR, code, __VA_ARGS__); release (m); return NULL; } G_STMT_END

  for (i = 0; i < G_N_ELEMENTS (dtype_map); i++)
    if (dtype_map[i].code == dl->dtype.code && dtype_map[i].bits == dl->dtype.bits)
      break;
  if (i == G_N_ELEMENTS (dtype_map) || dl->dtype.lanes != 1)
    FAIL (ATOMR_ERROR_NOT_SUPPORTED, "DLPack dtype (code %u, %u bits, %u lanes) has no AtomrDtype",
          dl->dtype.code, dl->dtype.bits, dl->dtype.lanes);
  dtype = dtype_map[i].dtype;
  if (dl->ndim < 0 || dl->ndim > ATOMR_TENSOR_MAX_DIMS || (dl->ndim > 0 && dl->shape == NULL))
    FAIL (ATOMR_ERROR_INVALID_ARGUMENT, "A DLPack tensor of %d dimensions (at most %d)",
          dl->ndim, ATOMR_TENSOR_MAX_DIMS);

  if (dl->device.device_type == ATOMR_DL_CUDA)
    {
      if (device == NULL)
        {
          GError *local = NULL;
          own = atomr_device_get (dl->device.device_id, &local);
          if (own == NULL)
            {
              g_propagate_error (error, local);
              release (m);
              return NULL;
            }
          device = own;
        }
      if (atomr_device_is_host (device) || atomr_device_get_ordinal (device) != dl->device.device_id)
        FAIL (ATOMR_ERROR_INVALID_ARGUMENT, "The DLPack tensor is on CUDA device %d, not on device %d",
              dl->device.device_id, atomr_device_get_ordinal (device));
    }
  else if (dl->device.device_type == ATOMR_DL_CPU && device != NULL && atomr_device_is_host (device))
    ;
  else
    FAIL (ATOMR_ERROR_NOT_SUPPORTED, "DLPack device type %d is not CUDA device memory%s",
          dl->device.device_type,
          dl->device.device_type == ATOMR_DL_CPU ? " (upload host data instead)" : "");

  for (gint k = 0; k < dl->ndim; k++)
    {
      shape[k] = dl->shape[k];
      strides[k] = dl->strides ? dl->strides[k] : 0;
    }
#undef FAIL
  tensor = atomr_tensor_new_for_device_pointer (device, dtype,
                                                (guint64) (guintptr) dl->data + dl->byte_offset,
                                                shape, (guint) dl->ndim,
                                                dl->strides ? strides : NULL,
                                                dl->strides ? (guint) dl->ndim : 0,
                                                release, m, error);
  /* The producer forbids writes (a read-only NumPy array, a JAX array):
   * no operation may use the memory as an output. */
  if (tensor != NULL && read_only)
    atomr_buffer_mark_read_only (atomr_tensor_get_buffer (tensor));
  return tensor;
}
