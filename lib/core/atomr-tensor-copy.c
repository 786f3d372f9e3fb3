/* atomr-tensor-copy.c — uploads, downloads and copies of strided views
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-error.h"
#include "atomr-tensor-copy-private.h"
#include "atomr-tensor-private.h"

/* A strided copy becomes pitched memcpy pieces: dimensions of extent 1 are
 * dropped, dimensions reversed on both sides are flipped, dimensions are
 * ordered by destination stride and merged where both sides are contiguous
 * across them; the innermost contiguous run is the row width, the next
 * dimension the rows (cuMemcpy2D), the next the slices when its strides
 * are whole multiples of the row pitch (cuMemcpy3D), and any further
 * dimensions — and those no pitch can express: reversed on one side only,
 * broadcast in the source — are looped over on the host, one piece per
 * index (the generic fallback, up to ATOMR_COPY_MAX_PIECES pieces).  The host test
 * device runs the same pieces with memcpy, so the CPU tests check the very
 * plan the GPU executes. */

typedef struct {
  gint64 n, s, d;   /* extent, source and destination strides in bytes */
} Dim;

GArray *
atomr_copy_plan (gsize          elem,
                 guint          n_dims,
                 const gint64  *shape,
                 const gint64  *src_strides,
                 const gint64  *dst_strides,
                 GError       **error)
{
  g_autoptr(GArray) pieces = g_array_new (FALSE, TRUE, sizeof (AtomrCopyPiece));
  Dim dims[16], loops[16];
  guint k = 0, n_loops = 0;
  gint64 src0 = 0, dst0 = 0, width = (gint64) elem, count = 1;
  AtomrCopyPiece base = { 0, };
  gint64 index[16] = { 0, };

  g_return_val_if_fail (n_dims <= 16, NULL);

  for (guint i = 0; i < n_dims; i++)
    if (shape[i] == 0)
      return g_steal_pointer (&pieces);

  for (guint i = 0; i < n_dims; i++)
    {
      Dim dim = { shape[i], src_strides[i] * (gint64) elem, dst_strides[i] * (gint64) elem };

      if (dim.n == 1)
        continue;
      if ((dim.s < 0) != (dim.d < 0) || dim.s == 0 || dim.d == 0)
        {
          /* reversed on one side only, or broadcast: no pitch expresses
           * it, so one piece per index */
          loops[n_loops++] = dim;
          continue;
        }
      if (dim.s < 0)
        {
          src0 += (dim.n - 1) * dim.s;
          dst0 += (dim.n - 1) * dim.d;
          dim.s = -dim.s;
          dim.d = -dim.d;
        }
      /* insertion sort, largest destination stride first */
      {
        guint j = k++;
        while (j > 0 && (dims[j - 1].d < dim.d || (dims[j - 1].d == dim.d && dims[j - 1].s < dim.s)))
          {
            dims[j] = dims[j - 1];
            j--;
          }
        dims[j] = dim;
      }
    }

  /* merge dimensions contiguous on both sides */
  for (guint i = k; i-- > 1;)
    {
      if (dims[i - 1].s == dims[i].n * dims[i].s && dims[i - 1].d == dims[i].n * dims[i].d)
        {
          dims[i].n *= dims[i - 1].n;
          memmove (&dims[i - 1], &dims[i], (k - i) * sizeof (Dim));
          k--;
        }
    }

  if (k > 0 && dims[k - 1].s == (gint64) elem && dims[k - 1].d == (gint64) elem)
    {
      width = dims[k - 1].n * (gint64) elem;
      k--;
    }
  base.width = (guint64) width;
  base.height = 1;
  base.depth = 1;
  base.src_pitch = base.dst_pitch = (guint64) width;
  /* rows: the next dimension, when its pitches leave rows apart */
  if (k > 0 && dims[k - 1].s >= width && dims[k - 1].d >= width)
    {
      Dim h = dims[k - 1];

      base.height = (guint64) h.n;
      base.src_pitch = (guint64) h.s;
      base.dst_pitch = (guint64) h.d;
      k--;
      if (k > 0)
        {
          Dim z = dims[k - 1];
          if (z.s % h.s == 0 && z.s / h.s >= h.n && z.d % h.d == 0 && z.d / h.d >= h.n)
            {
              base.depth = (guint64) z.n;
              base.src_slice = (guint64) z.s;
              base.dst_slice = (guint64) z.d;
              k--;
            }
        }
    }
  /* every other dimension is looped over, one piece per index */
  for (guint i = 0; i < k; i++)
    loops[n_loops++] = dims[i];
  for (guint i = 0; i < n_loops; i++)
    {
      count *= loops[i].n;
      if (count > ATOMR_COPY_MAX_PIECES)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "The layout needs more than %d pitched copies (%u dimensions neither "
                       "merge nor fit a 3-D copy); copy through a contiguous tensor",
                       ATOMR_COPY_MAX_PIECES, n_loops);
          return NULL;
        }
    }

  g_array_set_size (pieces, (guint) count);
  for (gint64 p = 0; p < count; p++)
    {
      AtomrCopyPiece *piece = &g_array_index (pieces, AtomrCopyPiece, p);
      gint64 so = src0, dso = dst0;

      for (guint i = 0; i < n_loops; i++)
        {
          so += index[i] * loops[i].s;
          dso += index[i] * loops[i].d;
        }
      *piece = base;
      piece->src_offset = so;
      piece->dst_offset = dso;
      for (guint i = n_loops; i-- > 0;)
        {
          if (++index[i] < loops[i].n)
            break;
          index[i] = 0;
        }
    }
  return g_steal_pointer (&pieces);
}

void
atomr_copy_plan_run_host (GArray       *pieces,
                          const guint8 *src,
                          guint8       *dst)
{
  for (guint p = 0; p < pieces->len; p++)
    {
      const AtomrCopyPiece *piece = &g_array_index (pieces, AtomrCopyPiece, p);

      for (guint64 z = 0; z < piece->depth; z++)
        for (guint64 y = 0; y < piece->height; y++)
          memcpy (dst + piece->dst_offset + (gint64) (z * piece->dst_slice + y * piece->dst_pitch),
                  src + piece->src_offset + (gint64) (z * piece->src_slice + y * piece->src_pitch),
                  piece->width);
    }
}

/* ------------------------------------------------------------------ */

typedef struct {
  AtomrTensor *src, *dst;      /* owned; NULL for the host side */
  AtomrPinned *staging;        /* the host side of uploads and downloads */
  GArray      *pieces;
  gsize        size;
  gpointer     dest;           /* download into caller memory, or NULL */
} TensorCopyRequest;

static void
tensor_copy_request_clear (gpointer data)
{
  TensorCopyRequest *req = data;

  g_clear_object (&req->src);
  g_clear_object (&req->dst);
  g_clear_pointer (&req->staging, atomr_pinned_release);
  g_clear_pointer (&req->pieces, g_array_unref);
}

static gboolean
tensor_copy_enqueue (AtomrOp  *op,
                     GError  **error)
{
  TensorCopyRequest *req = atomr_op_get_data (op);
  CUstream stream;

  if (atomr_op_is_host (op))
    {
      const guint8 *src = req->src ? atomr_tensor_get_host_data (req->src) : req->staging->data;
      guint8 *dst = req->dst ? atomr_tensor_get_host_data (req->dst) : req->staging->data;

      atomr_copy_plan_run_host (req->pieces, src, dst);
      return TRUE;
    }

  stream = atomr_op_get_cu_stream (op);
  for (guint p = 0; p < req->pieces->len; p++)
    {
      const AtomrCopyPiece *piece = &g_array_index (req->pieces, AtomrCopyPiece, p);
      CUresult res;

      if (piece->depth == 1)
        {
          CUDA_MEMCPY2D m = { 0, };

          if (req->src)
            {
              m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
              m.srcDevice = atomr_tensor_get_ptr (req->src) + piece->src_offset;
            }
          else
            {
              m.srcMemoryType = CU_MEMORYTYPE_HOST;
              m.srcHost = (const guint8 *) req->staging->data + piece->src_offset;
            }
          if (req->dst)
            {
              m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
              m.dstDevice = atomr_tensor_get_ptr (req->dst) + piece->dst_offset;
            }
          else
            {
              m.dstMemoryType = CU_MEMORYTYPE_HOST;
              m.dstHost = (guint8 *) req->staging->data + piece->dst_offset;
            }
          m.srcPitch = piece->src_pitch;
          m.dstPitch = piece->dst_pitch;
          m.WidthInBytes = piece->width;
          m.Height = piece->height;
          res = ATOMR_CU->cuMemcpy2DAsync (&m, stream);
          if (!atomr_cuda_check (res, "cuMemcpy2DAsync", error))
            return FALSE;
        }
      else
        {
          CUDA_MEMCPY3D m = { 0, };

          if (req->src)
            {
              m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
              m.srcDevice = atomr_tensor_get_ptr (req->src) + piece->src_offset;
            }
          else
            {
              m.srcMemoryType = CU_MEMORYTYPE_HOST;
              m.srcHost = (const guint8 *) req->staging->data + piece->src_offset;
            }
          if (req->dst)
            {
              m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
              m.dstDevice = atomr_tensor_get_ptr (req->dst) + piece->dst_offset;
            }
          else
            {
              m.dstMemoryType = CU_MEMORYTYPE_HOST;
              m.dstHost = (guint8 *) req->staging->data + piece->dst_offset;
            }
          m.srcPitch = piece->src_pitch;
          m.srcHeight = piece->src_slice / piece->src_pitch;
          m.dstPitch = piece->dst_pitch;
          m.dstHeight = piece->dst_slice / piece->dst_pitch;
          m.WidthInBytes = piece->width;
          m.Height = piece->height;
          m.Depth = piece->depth;
          res = ATOMR_CU->cuMemcpy3DAsync (&m, stream);
          if (!atomr_cuda_check (res, "cuMemcpy3DAsync", error))
            return FALSE;
        }
    }
  return TRUE;
}

/* Contiguous row-major strides of @t's shape: the host side's layout. */
static void
packed_strides (AtomrTensor *t,
                gint64      *strides)
{
  guint n;
  const gint64 *shape = atomr_tensor_get_shape (t, &n);
  gint64 s = 1;

  for (guint i = n; i-- > 0;)
    {
      strides[i] = s;
      s *= MAX (shape[i], 1);
    }
}

static gboolean
check_writable (const gchar  *opname,
                const gchar  *what,
                AtomrTensor  *t,
                GError      **error)
{
  guint n;
  const gint64 *shape = atomr_tensor_get_shape (t, &n);
  const gint64 *strides = atomr_tensor_get_strides (t, NULL);

  for (guint i = 0; i < n; i++)
    {
      if (shape[i] > 1 && strides[i] == 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: %s is broadcast along dimension %u (stride 0): writing it would "
                       "write one element %" G_GINT64_FORMAT " times", opname, what, i, shape[i]);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_tensor_arg (AtomrActor   *self,
                  const gchar  *opname,
                  const gchar  *what,
                  AtomrTensor  *t,
                  GError      **error)
{
  g_autofree gchar *label = g_strdup_printf ("%s: %s", opname, what);

  return atomr_tensor_check (t, atomr_actor_get_device (self), label, error);
}

/**
 * atomr_actor_copy_tensor_async:
 * @self: an [class@Atomr.Actor]
 * @src: the view to read
 * @dst: the view to write: the shape and dtype of @src
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the copy is done
 * @user_data: data for @callback
 *
 * Copies every element of @src to the same index of @dst on the actor's
 * stream, with as few cuMemcpy2DAsync/cuMemcpy3DAsync calls as the two
 * layouts allow (one for contiguous views, sub-matrices and most slices).
 * @dst must not overlap @src, nor be broadcast.  Dimensions no pitched copy
 * can express (reversed on one side only, broadcast in the source) cost one
 * copy per index; a layout needing more than 65536 copies fails with
 * %ATOMR_ERROR_NOT_SUPPORTED.
 *
 * Since: 0.2
 */
void
atomr_actor_copy_tensor_async (AtomrActor          *self,
                               AtomrTensor         *src,
                               AtomrTensor         *dst,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  TensorCopyRequest *req;
  guint n_src, n_dst;
  const gint64 *shape_src, *shape_dst;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "copy-tensor", atomr_actor_copy_tensor_async, cancellable, callback, user_data);
  if (!check_tensor_arg (self, "copy-tensor", "src", src, &error) ||
      !check_tensor_arg (self, "copy-tensor", "dst", dst, &error) ||
      !check_writable ("copy-tensor", "dst", dst, &error))
    return atomr_op_fail (op, error);

  shape_src = atomr_tensor_get_shape (src, &n_src);
  shape_dst = atomr_tensor_get_shape (dst, &n_dst);
  if (n_src != n_dst || memcmp (shape_src, shape_dst, n_src * sizeof (gint64)) != 0 ||
      atomr_tensor_get_dtype (src) != atomr_tensor_get_dtype (dst))
    {
      g_autofree gchar *a = atomr_tensor_to_string (src);
      g_autofree gchar *b = atomr_tensor_to_string (dst);
      return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                             "copy-tensor: src %s and dst %s differ in %s",
                                             a, b, n_src != n_dst || memcmp (shape_src, shape_dst, n_src * sizeof (gint64)) != 0
                                                   ? "shape" : "dtype"));
    }
  if (atomr_tensor_overlaps (src, dst))
    return atomr_op_fail (op, g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                                   "copy-tensor: dst overlaps src"));

  req = atomr_op_alloc_data (op, sizeof *req, tensor_copy_request_clear);
  req->pieces = atomr_copy_plan (atomr_dtype_get_size (atomr_tensor_get_dtype (src)), n_src, shape_src,
                                 atomr_tensor_get_strides (src, NULL),
                                 atomr_tensor_get_strides (dst, NULL), &error);
  if (req->pieces == NULL)
    {
      g_prefix_error (&error, "copy-tensor: ");
      return atomr_op_fail (op, error);
    }
  req->src = g_object_ref (src);
  req->dst = g_object_ref (dst);
  atomr_op_read_tensor (op, src);
  atomr_op_write_tensor (op, dst);
  atomr_op_set_enqueue (op, tensor_copy_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_copy_tensor_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.copy_tensor_async].
 *
 * Returns: %TRUE if the copy completed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_copy_tensor_finish (AtomrActor    *self,
                                GAsyncResult  *result,
                                GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_copy_tensor_async, error);
}

/**
 * atomr_actor_upload_tensor_async:
 * @self: an [class@Atomr.Actor]
 * @tensor: the view to write
 * @data: the elements in row-major order: exactly
 *   [method@Atomr.Tensor.get_byte_size] bytes
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the data is on the device
 * @user_data: data for @callback
 *
 * Scatters packed host data into a strided view (a sub-matrix, a column, a
 * reversed slice...) on the actor's stream.  @data is copied to pinned
 * staging memory at once, so the caller may drop it.
 *
 * Since: 0.2
 */
void
atomr_actor_upload_tensor_async (AtomrActor          *self,
                                 AtomrTensor         *tensor,
                                 GBytes              *data,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  TensorCopyRequest *req;
  gint64 packed[ATOMR_TENSOR_MAX_DIMS];
  gsize size = 0;
  gconstpointer bytes;
  guint n;
  const gint64 *shape;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "upload-tensor", atomr_actor_upload_tensor_async, cancellable, callback, user_data);
  atomr_op_forbid_capture (op, "it copies from host memory, which a graph would freeze at capture time; "
                           "upload before the capture, or copy from a device buffer");
  if (!check_tensor_arg (self, "upload-tensor", "tensor", tensor, &error) ||
      !check_writable ("upload-tensor", "tensor", tensor, &error))
    return atomr_op_fail (op, error);
  if (data == NULL)
    return atomr_op_fail (op, g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                                   "upload-tensor: data is NULL"));
  bytes = g_bytes_get_data (data, &size);
  if (size != atomr_tensor_get_byte_size (tensor))
    {
      g_autofree gchar *desc = atomr_tensor_to_string (tensor);
      return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                             "upload-tensor: %" G_GSIZE_FORMAT " bytes of data for %s (%"
                                             G_GUINT64_FORMAT " bytes)", size, desc,
                                             atomr_tensor_get_byte_size (tensor)));
    }

  req = atomr_op_alloc_data (op, sizeof *req, tensor_copy_request_clear);
  shape = atomr_tensor_get_shape (tensor, &n);
  packed_strides (tensor, packed);
  req->pieces = atomr_copy_plan (atomr_dtype_get_size (atomr_tensor_get_dtype (tensor)), n, shape,
                                 packed, atomr_tensor_get_strides (tensor, NULL), &error);
  if (req->pieces == NULL)
    {
      g_prefix_error (&error, "upload-tensor: ");
      return atomr_op_fail (op, error);
    }
  req->size = size;
  req->staging = atomr_pinned_acquire (atomr_actor_get_device (self), MAX (size, 1), &error);
  if (req->staging == NULL)
    return atomr_op_fail (op, error);
  if (size > 0)
    memcpy (req->staging->data, bytes, size);
  req->dst = g_object_ref (tensor);
  atomr_op_write_tensor (op, tensor);
  atomr_op_set_enqueue (op, tensor_copy_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_upload_tensor_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.upload_tensor_async].
 *
 * Returns: %TRUE if the upload completed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_upload_tensor_finish (AtomrActor    *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_upload_tensor_async, error);
}

static void
download_tensor_complete (AtomrOp    *op,
                          AtomrReply *reply)
{
  TensorCopyRequest *req = atomr_op_get_data (op);

  if (req->dest)
    {
      memcpy (req->dest, req->staging->data, req->size);
      atomr_reply_return_boolean (reply, TRUE);
      return;
    }
  atomr_reply_return_pointer (reply, g_bytes_new (req->staging->data, req->size),
                              (GDestroyNotify) g_bytes_unref);
}

/* Downloads into a new GBytes, or into @dest when it is not NULL. */
static void
download_tensor (AtomrActor          *self,
                 AtomrTensor         *tensor,
                 gpointer             tag,
                 gpointer             dest,
                 guint64              dest_size,
                 GCancellable        *cancellable,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  TensorCopyRequest *req;
  gint64 packed[ATOMR_TENSOR_MAX_DIMS];
  guint n;
  const gint64 *shape;

  op = atomr_op_new (self, "download-tensor", tag, cancellable, callback, user_data);
  if (!check_tensor_arg (self, "download-tensor", "tensor", tensor, &error))
    return atomr_op_fail (op, error);
  if (dest != NULL && dest_size != atomr_tensor_get_byte_size (tensor))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "download-tensor: a destination of %" G_GUINT64_FORMAT
                                           " bytes for %" G_GUINT64_FORMAT " bytes of elements",
                                           dest_size, atomr_tensor_get_byte_size (tensor)));

  req = atomr_op_alloc_data (op, sizeof *req, tensor_copy_request_clear);
  shape = atomr_tensor_get_shape (tensor, &n);
  packed_strides (tensor, packed);
  req->pieces = atomr_copy_plan (atomr_dtype_get_size (atomr_tensor_get_dtype (tensor)), n, shape,
                                 atomr_tensor_get_strides (tensor, NULL), packed, &error);
  if (req->pieces == NULL)
    {
      g_prefix_error (&error, "download-tensor: ");
      return atomr_op_fail (op, error);
    }
  req->size = atomr_tensor_get_byte_size (tensor);
  req->staging = atomr_pinned_acquire (atomr_actor_get_device (self), MAX (req->size, 1), &error);
  if (req->staging == NULL)
    return atomr_op_fail (op, error);
  req->src = g_object_ref (tensor);
  req->dest = dest;
  atomr_op_read_tensor (op, tensor);
  atomr_op_set_enqueue (op, tensor_copy_enqueue);
  atomr_op_set_complete (op, download_tensor_complete);
  atomr_op_submit (op);
}

/**
 * atomr_actor_download_tensor_async:
 * @self: an [class@Atomr.Actor]
 * @tensor: the view to read
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the elements
 * @user_data: data for @callback
 *
 * Gathers the elements of a strided view into packed row-major host
 * memory on the actor's stream, after the work that last wrote its buffer.
 *
 * Since: 0.2
 */
void
atomr_actor_download_tensor_async (AtomrActor          *self,
                                   AtomrTensor         *tensor,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_ACTOR (self));
  download_tensor (self, tensor, atomr_actor_download_tensor_async, NULL, 0,
                   cancellable, callback, user_data);
}

/**
 * atomr_actor_download_tensor_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.download_tensor_async].
 *
 * Returns: (transfer full): the elements in row-major order, or %NULL on error
 *
 * Since: 0.2
 */
GBytes *
atomr_actor_download_tensor_finish (AtomrActor    *self,
                                    GAsyncResult  *result,
                                    GError       **error)
{
  return atomr_op_finish_pointer (self, result, atomr_actor_download_tensor_async, error);
}

/* ------------------------------------------------------------------ */
/* Blocking forms, and transfers from and to caller memory (bindings)   */

/**
 * atomr_actor_copy_tensor_sync:
 * @self: an [class@Atomr.Actor]
 * @src: the view to read
 * @dst: the view to write
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.Actor.copy_tensor_async].
 *
 * Returns: %TRUE if the copy completed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_copy_tensor_sync (AtomrActor    *self,
                              AtomrTensor   *src,
                              AtomrTensor   *dst,
                              GCancellable  *cancellable,
                              GError       **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  atomr_sync_begin (&sync, self);
  atomr_actor_copy_tensor_async (self, src, dst, cancellable, atomr_sync_callback, &sync);
  ok = atomr_actor_copy_tensor_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

/**
 * atomr_actor_upload_tensor_sync:
 * @self: an [class@Atomr.Actor]
 * @tensor: the view to write
 * @data: the elements in row-major order
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.Actor.upload_tensor_async].
 *
 * Returns: %TRUE if the upload completed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_upload_tensor_sync (AtomrActor    *self,
                                AtomrTensor   *tensor,
                                GBytes        *data,
                                GCancellable  *cancellable,
                                GError       **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  atomr_sync_begin (&sync, self);
  atomr_actor_upload_tensor_async (self, tensor, data, cancellable, atomr_sync_callback, &sync);
  ok = atomr_actor_upload_tensor_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

/**
 * atomr_actor_download_tensor_sync:
 * @self: an [class@Atomr.Actor]
 * @tensor: the view to read
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.Actor.download_tensor_async].
 *
 * Returns: (transfer full): the elements in row-major order, or %NULL on error
 *
 * Since: 0.2
 */
GBytes *
atomr_actor_download_tensor_sync (AtomrActor    *self,
                                  AtomrTensor   *tensor,
                                  GCancellable  *cancellable,
                                  GError       **error)
{
  AtomrSync sync;
  GBytes *bytes;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), NULL);
  atomr_sync_begin (&sync, self);
  atomr_actor_download_tensor_async (self, tensor, cancellable, atomr_sync_callback, &sync);
  bytes = atomr_actor_download_tensor_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return bytes;
}

/**
 * atomr_actor_upload_tensor_from_address_sync:
 * @self: an [class@Atomr.Actor]
 * @tensor: the view to write
 * @address: the address of the elements in host memory, packed row-major
 * @size: the number of bytes at @address: [method@Atomr.Tensor.get_byte_size]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * For bindings that hold host memory as an address (a NumPy array, a
 * Python buffer): uploads it into @tensor, copying it once, to pinned
 * staging memory, before this function returns control to the GPU.  The
 * memory is not used after the call.
 *
 * Returns: %TRUE if the upload completed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_upload_tensor_from_address_sync (AtomrActor    *self,
                                             AtomrTensor   *tensor,
                                             guint64        address,
                                             guint64        size,
                                             GCancellable  *cancellable,
                                             GError       **error)
{
  g_autoptr(GBytes) data = NULL;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  if (address == 0 && size > 0)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "upload-tensor: the host address is 0");
      return FALSE;
    }
  /* the upload copies to staging before returning from _async */
  data = g_bytes_new_static ((gconstpointer) (guintptr) address, size);
  return atomr_actor_upload_tensor_sync (self, tensor, data, cancellable, error);
}

/**
 * atomr_actor_download_tensor_to_address_sync:
 * @self: an [class@Atomr.Actor]
 * @tensor: the view to read
 * @address: where to write the elements in host memory, packed row-major
 * @size: the number of writable bytes at @address: [method@Atomr.Tensor.get_byte_size]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * For bindings: downloads @tensor straight into caller memory (a NumPy
 * array, a bytearray), one copy from the pinned staging memory and no
 * intermediate [struct@GLib.Bytes].
 *
 * Returns: %TRUE if the download completed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_download_tensor_to_address_sync (AtomrActor    *self,
                                             AtomrTensor   *tensor,
                                             guint64        address,
                                             guint64        size,
                                             GCancellable  *cancellable,
                                             GError       **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  if (address == 0 && size > 0)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "download-tensor: the host address is 0");
      return FALSE;
    }
  atomr_sync_begin (&sync, self);
  download_tensor (self, tensor, atomr_actor_download_tensor_to_address_sync,
                   address ? (gpointer) (guintptr) address : (gpointer) &sync, size,
                   cancellable, atomr_sync_callback, &sync);
  ok = atomr_op_finish_boolean (self, atomr_sync_wait (&sync),
                                atomr_actor_download_tensor_to_address_sync, error);
  atomr_sync_end (&sync);
  return ok;
}
