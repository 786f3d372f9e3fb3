/* atomr-copy-actor.c — memory operations every actor can do, and the
 * plain actor that does only those
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-error.h"

/**
 * AtomrCopyActor:
 *
 * An actor with a stream and nothing else: uploads, downloads, fills,
 * device-to-device copies and barriers.  Each device has a default one
 * (bound to the device's own thread) behind [method@Atomr.Buffer.upload_async]
 * and friends; make your own to put transfers on a stream of your choice.
 *
 * Since: 0.1
 */
struct _AtomrCopyActor
{
  AtomrActor parent_instance;
};

G_DEFINE_FINAL_TYPE (AtomrCopyActor, atomr_copy_actor, ATOMR_TYPE_ACTOR)

static void
atomr_copy_actor_class_init (AtomrCopyActorClass *klass)
{
  ATOMR_ACTOR_CLASS (klass)->library = "cuda";
}

static void
atomr_copy_actor_init (AtomrCopyActor *self)
{
}

/**
 * atomr_copy_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a copy actor with its own stream, bound to the calling thread's
 * thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrCopyActor *
atomr_copy_actor_new (AtomrDevice  *device,
                      GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, error);
}

G_LOCK_DEFINE_STATIC (default_actors);

AtomrActor *
atomr_device_get_default_actor (AtomrDevice *device,
                                GError     **error)
{
  static GQuark quark;
  AtomrActor *actor;

  if (G_UNLIKELY (quark == 0))
    quark = g_quark_from_static_string ("atomr-default-actor");
  if (device == NULL)
    {
      /* A buffer built bare has no device. */
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "No device: the buffer was constructed directly (g_object_new() or a "
                           "binding's constructor); allocate buffers with atomr_buffer_new()");
      return NULL;
    }

  G_LOCK (default_actors);
  actor = g_object_get_qdata (G_OBJECT (device), quark);
  if (actor == NULL)
    {
      actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device,
                                        atomr_device_get_thread_context (device), error);
      if (actor)
        {
          atomr_actor_set_name (actor, "default-copy");
          g_object_set_qdata_full (G_OBJECT (device), quark, actor, g_object_unref);
        }
    }
  G_UNLOCK (default_actors);
  return actor;
}

/* ------------------------------------------------------------------ */

/* Transfers up to STAGING_CHUNK bytes go through one pooled pinned block,
 * filled (upload) on the caller's thread: the fast path of small requests.
 * Larger ones are streamed through one pinned chunk on the actor's stream:
 * host functions copy between the caller's memory and the chunk, in stream
 * order with the DMA, so the pinned memory a transfer holds is bounded
 * (STAGING_CHUNK, whatever its size), nothing large is pinned or copied on
 * the caller's thread, and no thread of ours waits for the GPU. */
#define STAGING_CHUNK ((gsize) 16 << 20)

typedef struct _MemRequest MemRequest;

typedef struct {
  MemRequest *req;
  gsize       offset;
  gsize       length;
} StagePiece;

struct _MemRequest {
  AtomrBuffer *buffer;    /* not owned: the op keeps it */
  AtomrBuffer *src;
  AtomrPinned *staging;
  guint8       pattern[16];
  gsize        pattern_size;
  /* streamed transfers */
  GBytes      *host_src;  /* upload: the caller's data, referenced */
  guint8      *host_dst;  /* download: the result, filled piece by piece */
  StagePiece  *pieces;
  gsize        n_pieces;
};

static void
mem_request_clear (gpointer data)
{
  MemRequest *req = data;
  g_clear_pointer (&req->staging, atomr_pinned_release);
  g_clear_pointer (&req->host_src, g_bytes_unref);
  g_clear_pointer (&req->host_dst, g_free);
  g_clear_pointer (&req->pieces, g_free);
}

static gsize
stage_pieces (MemRequest *req,
              gsize       size)
{
  gsize n = (size + STAGING_CHUNK - 1) / STAGING_CHUNK;

  req->pieces = g_new (StagePiece, n);
  req->n_pieces = n;
  for (gsize i = 0; i < n; i++)
    {
      req->pieces[i].req = req;
      req->pieces[i].offset = i * STAGING_CHUNK;
      req->pieces[i].length = MIN (STAGING_CHUNK, size - i * STAGING_CHUNK);
    }
  return n;
}

/* Host functions: run by the driver in stream order; no CUDA calls. */
static void CUDA_CB
stage_in (void *data)
{
  StagePiece *piece = data;
  const guint8 *src = g_bytes_get_data (piece->req->host_src, NULL);

  memcpy (piece->req->staging->data, src + piece->offset, piece->length);
}

static void CUDA_CB
stage_out (void *data)
{
  StagePiece *piece = data;

  memcpy (piece->req->host_dst + piece->offset, piece->req->staging->data, piece->length);
}

/* A streamed transfer that fails halfway has host functions queued that
 * use the request: let them pass before the request is freed (a lost
 * context returns at once, and runs none). */
static gboolean
stage_fail (AtomrOp     *op,
            CUresult     res,
            const gchar *what,
            GError     **error)
{
  ATOMR_CU->cuStreamSynchronize (atomr_op_get_cu_stream (op));
  return atomr_cuda_check (res, what, error);
}

static gboolean
staged_upload_enqueue (AtomrOp     *op,
                       MemRequest  *req,
                       GError     **error)
{
  CUstream stream = atomr_op_get_cu_stream (op);
  CUdeviceptr dst = atomr_buffer_get_ptr (req->buffer);

  req->staging = atomr_pinned_acquire (atomr_buffer_get_device (req->buffer), STAGING_CHUNK, error);
  if (req->staging == NULL)
    return FALSE;
  for (gsize i = 0; i < req->n_pieces; i++)
    {
      StagePiece *piece = &req->pieces[i];
      CUresult res;

      if ((res = ATOMR_CU->cuLaunchHostFunc (stream, stage_in, piece)) != CUDA_SUCCESS)
        return stage_fail (op, res, "cuLaunchHostFunc (upload staging)", error);
      if ((res = ATOMR_CU->cuMemcpyHtoDAsync (dst + piece->offset, req->staging->data,
                                              piece->length, stream)) != CUDA_SUCCESS)
        return stage_fail (op, res, "cuMemcpyHtoDAsync", error);
    }
  return TRUE;
}

static gboolean
upload_enqueue (AtomrOp  *op,
                GError  **error)
{
  MemRequest *req = atomr_op_get_data (op);
  guint64 size = atomr_buffer_get_byte_size (req->buffer);

  if (atomr_op_is_host (op))
    {
      const guint8 *from = req->host_src ? g_bytes_get_data (req->host_src, NULL) : req->staging->data;
      memcpy (atomr_buffer_get_host_data (req->buffer), from, size);
      return TRUE;
    }
  if (req->host_src)
    return staged_upload_enqueue (op, req, error);
  return atomr_cuda_check (ATOMR_CU->cuMemcpyHtoDAsync (atomr_buffer_get_ptr (req->buffer),
                                                        req->staging->data, size,
                                                        atomr_op_get_cu_stream (op)),
                           "cuMemcpyHtoDAsync", error);
}

static gboolean
check_buffer_arg (AtomrOp     *op,
                  AtomrBuffer *buffer,
                  const gchar *what)
{
  if (!ATOMR_IS_BUFFER (buffer))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "%s: %s is not an AtomrBuffer", "memory operation", what));
      return FALSE;
    }
  if (atomr_buffer_get_device (buffer) == NULL)
    {
      /* Built bare: no device to stage through; say so before touching it. */
      GError *error = NULL;
      atomr_buffer_check (buffer, &error);
      g_prefix_error (&error, "%s: ", what);
      atomr_op_fail (op, error);
      return FALSE;
    }
  return TRUE;
}

/**
 * atomr_actor_upload_async:
 * @self: an [class@Atomr.Actor]
 * @buffer: the destination
 * @data: exactly the buffer's byte size
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the data is on the device
 * @user_data: data for @callback
 *
 * Copies host data to @buffer on the actor's stream.  @data is copied to
 * pinned staging memory at once, so the caller may drop it.
 *
 * Since: 0.1
 */
void
atomr_actor_upload_async (AtomrActor          *self,
                          AtomrBuffer         *buffer,
                          GBytes              *data,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  AtomrOp *op;
  MemRequest *req;
  GError *error = NULL;
  gsize size = 0;
  gconstpointer bytes;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "upload", atomr_actor_upload_async, cancellable, callback, user_data);
  atomr_op_forbid_capture (op, "it copies from host memory, which a graph would freeze at capture time; "
                           "upload before the capture, or copy from a device buffer");
  if (!check_buffer_arg (op, buffer, "buffer"))
    return;
  if (data == NULL)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "upload: data is NULL"));
      return;
    }
  bytes = g_bytes_get_data (data, &size);
  if (size != atomr_buffer_get_byte_size (buffer))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "upload: %" G_GSIZE_FORMAT " bytes of data for a buffer of %"
                                      G_GUINT64_FORMAT " bytes (%" G_GUINT64_FORMAT " × %s)",
                                      size, atomr_buffer_get_byte_size (buffer),
                                      atomr_buffer_get_n_elements (buffer),
                                      atomr_dtype_get_name (atomr_buffer_get_dtype (buffer))));
      return;
    }

  req = atomr_op_alloc_data (op, sizeof *req, mem_request_clear);
  req->buffer = buffer;
  if (size > STAGING_CHUNK)
    {
      /* Streamed on the actor's stream: nothing to pin or copy here. */
      req->host_src = g_bytes_ref (data);
      stage_pieces (req, size);
    }
  else
    {
      req->staging = atomr_pinned_acquire (atomr_buffer_get_device (buffer), size, &error);
      if (req->staging == NULL)
        {
          atomr_op_fail (op, error);
          return;
        }
      memcpy (req->staging->data, bytes, size);
    }
  atomr_op_write (op, buffer);
  atomr_op_set_enqueue (op, upload_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_upload_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.upload_async].
 *
 * Returns: %TRUE if the upload completed
 *
 * Since: 0.1
 */
gboolean
atomr_actor_upload_finish (AtomrActor    *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_upload_async, error);
}

static gboolean
download_enqueue (AtomrOp  *op,
                  GError  **error)
{
  MemRequest *req = atomr_op_get_data (op);
  guint64 size = atomr_buffer_get_byte_size (req->buffer);

  if (req->n_pieces > 0)
    {
      /* Streamed: the result is ours, the pinned chunk only in passing. */
      req->host_dst = g_try_malloc (size);
      if (req->host_dst == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_OUT_OF_MEMORY,
                       "download: no host memory for %" G_GUINT64_FORMAT " bytes", size);
          return FALSE;
        }
      if (atomr_op_is_host (op))
        {
          memcpy (req->host_dst, atomr_buffer_get_host_data (req->buffer), size);
          return TRUE;
        }
      req->staging = atomr_pinned_acquire (atomr_buffer_get_device (req->buffer), STAGING_CHUNK, error);
      if (req->staging == NULL)
        return FALSE;
      for (gsize i = 0; i < req->n_pieces; i++)
        {
          StagePiece *piece = &req->pieces[i];
          CUstream stream = atomr_op_get_cu_stream (op);
          CUresult res;

          if ((res = ATOMR_CU->cuMemcpyDtoHAsync (req->staging->data,
                                                  atomr_buffer_get_ptr (req->buffer) + piece->offset,
                                                  piece->length, stream)) != CUDA_SUCCESS)
            return stage_fail (op, res, "cuMemcpyDtoHAsync", error);
          if ((res = ATOMR_CU->cuLaunchHostFunc (stream, stage_out, piece)) != CUDA_SUCCESS)
            return stage_fail (op, res, "cuLaunchHostFunc (download staging)", error);
        }
      return TRUE;
    }
  if (atomr_op_is_host (op))
    {
      memcpy (req->staging->data, atomr_buffer_get_host_data (req->buffer), size);
      return TRUE;
    }
  return atomr_cuda_check (ATOMR_CU->cuMemcpyDtoHAsync (req->staging->data,
                                                        atomr_buffer_get_ptr (req->buffer), size,
                                                        atomr_op_get_cu_stream (op)),
                           "cuMemcpyDtoHAsync", error);
}

static void
download_complete (AtomrOp    *op,
                   AtomrReply *reply)
{
  MemRequest *req = atomr_op_get_data (op);
  guint64 size = atomr_buffer_get_byte_size (req->buffer);

  if (req->host_dst)
    atomr_reply_return_pointer (reply, g_bytes_new_take (g_steal_pointer (&req->host_dst), size),
                                (GDestroyNotify) g_bytes_unref);
  else
    atomr_reply_return_pointer (reply, g_bytes_new (req->staging->data, size),
                                (GDestroyNotify) g_bytes_unref);
}

/**
 * atomr_actor_download_async:
 * @self: an [class@Atomr.Actor]
 * @buffer: the source
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the contents
 * @user_data: data for @callback
 *
 * Copies @buffer to host memory on the actor's stream, after the work
 * that last wrote it (on whatever stream).
 *
 * Since: 0.1
 */
void
atomr_actor_download_async (AtomrActor          *self,
                            AtomrBuffer         *buffer,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  AtomrOp *op;
  MemRequest *req;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "download", atomr_actor_download_async, cancellable, callback, user_data);
  if (!check_buffer_arg (op, buffer, "buffer"))
    return;
  req = atomr_op_alloc_data (op, sizeof *req, mem_request_clear);
  req->buffer = buffer;
  if (atomr_buffer_get_byte_size (buffer) > STAGING_CHUNK)
    {
      /* Streamed on the actor's stream (download_enqueue): host functions
       * fill memory that only this request owns, which a graph could not
       * replay into. */
      stage_pieces (req, atomr_buffer_get_byte_size (buffer));
      atomr_op_forbid_capture (op, "a download larger than the staging chunk is streamed through host "
                               "functions into memory the request owns; download after the replay");
    }
  else
    {
      req->staging = atomr_pinned_acquire (atomr_buffer_get_device (buffer),
                                           atomr_buffer_get_byte_size (buffer), &error);
      if (req->staging == NULL)
        {
          atomr_op_fail (op, error);
          return;
        }
    }
  atomr_op_read (op, buffer);
  atomr_op_set_enqueue (op, download_enqueue);
  atomr_op_set_complete (op, download_complete);
  atomr_op_submit (op);
}

/**
 * atomr_actor_download_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.download_async].
 *
 * Returns: (transfer full): the contents, or %NULL on error
 *
 * Since: 0.1
 */
GBytes *
atomr_actor_download_finish (AtomrActor    *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  return atomr_op_finish_pointer (self, result, atomr_actor_download_async, error);
}

static gboolean
fill_enqueue (AtomrOp  *op,
              GError  **error)
{
  MemRequest *req = atomr_op_get_data (op);
  guint64 n = atomr_buffer_get_n_elements (req->buffer);
  CUdeviceptr ptr = atomr_buffer_get_ptr (req->buffer);
  CUstream stream = atomr_op_get_cu_stream (op);
  const AtomrCudaDriver *cu = ATOMR_CU;
  guint32 w[4];

  if (atomr_op_is_host (op))
    {
      guint8 *p = atomr_buffer_get_host_data (req->buffer);
      for (guint64 i = 0; i < n; i++)
        memcpy (p + i * req->pattern_size, req->pattern, req->pattern_size);
      return TRUE;
    }

  memcpy (w, req->pattern, sizeof w);
  switch (req->pattern_size)
    {
    case 1:
      return atomr_cuda_check (cu->cuMemsetD8Async (ptr, req->pattern[0], n, stream),
                               "cuMemsetD8Async", error);
    case 2:
      {
        guint16 v;
        memcpy (&v, req->pattern, 2);
        return atomr_cuda_check (cu->cuMemsetD16Async (ptr, v, n, stream),
                                 "cuMemsetD16Async", error);
      }
    case 4:
      return atomr_cuda_check (cu->cuMemsetD32Async (ptr, w[0], n, stream),
                               "cuMemsetD32Async", error);
    default:
      /* 8- and 16-byte elements: one strided 2-D memset per 32-bit word,
       * each element a row of one word, rows pattern_size bytes apart. */
      for (gsize word = 0; word < req->pattern_size / 4; word++)
        if (!atomr_cuda_check (cu->cuMemsetD2D32Async (ptr + word * 4, req->pattern_size,
                                                       w[word], 1, n, stream),
                               "cuMemsetD2D32Async", error))
          return FALSE;
      return TRUE;
    }
}

/**
 * atomr_actor_fill_async:
 * @self: an [class@Atomr.Actor]
 * @buffer: the destination
 * @value: the value, converted with [func@Atomr.Dtype.pack] (complex: real part)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Sets every element of @buffer to @value on the actor's stream.
 *
 * Since: 0.1
 */
void
atomr_actor_fill_async (AtomrActor          *self,
                        AtomrBuffer         *buffer,
                        gdouble              value,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  AtomrOp *op;
  MemRequest *req;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "fill", atomr_actor_fill_async, cancellable, callback, user_data);
  if (!check_buffer_arg (op, buffer, "buffer"))
    return;
  req = atomr_op_alloc_data (op, sizeof *req, NULL);
  req->buffer = buffer;
  req->pattern_size = atomr_dtype_pack_into (atomr_buffer_get_dtype (buffer), value, 0.0, req->pattern);
  atomr_op_write (op, buffer);
  atomr_op_set_enqueue (op, fill_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_fill_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.fill_async].
 *
 * Returns: %TRUE if the fill completed
 *
 * Since: 0.1
 */
gboolean
atomr_actor_fill_finish (AtomrActor    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_fill_async, error);
}

static gboolean
copy_enqueue (AtomrOp  *op,
              GError  **error)
{
  MemRequest *req = atomr_op_get_data (op);
  guint64 size = atomr_buffer_get_byte_size (req->src);

  if (atomr_op_is_host (op))
    {
      memcpy (atomr_buffer_get_host_data (req->buffer), atomr_buffer_get_host_data (req->src), size);
      return TRUE;
    }
  return atomr_cuda_check (ATOMR_CU->cuMemcpyDtoDAsync (atomr_buffer_get_ptr (req->buffer),
                                                        atomr_buffer_get_ptr (req->src), size,
                                                        atomr_op_get_cu_stream (op)),
                           "cuMemcpyDtoDAsync", error);
}

/**
 * atomr_actor_copy_async:
 * @self: an [class@Atomr.Actor]
 * @dst: the destination
 * @src: the source, of the same byte size
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Copies @src to @dst on the device, on the actor's stream.
 *
 * Since: 0.1
 */
void
atomr_actor_copy_async (AtomrActor          *self,
                        AtomrBuffer         *dst,
                        AtomrBuffer         *src,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  AtomrOp *op;
  MemRequest *req;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "copy", atomr_actor_copy_async, cancellable, callback, user_data);
  if (!check_buffer_arg (op, dst, "dst") || !check_buffer_arg (op, src, "src"))
    return;
  if (dst == src)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "copy: source and destination are the same buffer"));
      return;
    }
  if (atomr_buffer_get_byte_size (dst) != atomr_buffer_get_byte_size (src))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "copy: source has %" G_GUINT64_FORMAT " bytes, destination %"
                                      G_GUINT64_FORMAT, atomr_buffer_get_byte_size (src),
                                      atomr_buffer_get_byte_size (dst)));
      return;
    }
  req = atomr_op_alloc_data (op, sizeof *req, NULL);
  req->buffer = dst;
  req->src = src;
  atomr_op_read (op, src);
  atomr_op_write (op, dst);
  atomr_op_set_enqueue (op, copy_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_copy_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.copy_async].
 *
 * Returns: %TRUE if the copy completed
 *
 * Since: 0.1
 */
gboolean
atomr_actor_copy_finish (AtomrActor    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_copy_async, error);
}

/**
 * atomr_actor_barrier_async:
 * @self: an [class@Atomr.Actor]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when all earlier work of the actor is done
 * @user_data: data for @callback
 *
 * Completes once everything the actor enqueued before it has finished.
 *
 * Since: 0.1
 */
void
atomr_actor_barrier_async (AtomrActor          *self,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  AtomrOp *op;

  g_return_if_fail (ATOMR_IS_ACTOR (self));
  op = atomr_op_new (self, "barrier", atomr_actor_barrier_async, cancellable, callback, user_data);
  atomr_op_set_barrier (op);
  atomr_op_submit (op);
}

/**
 * atomr_actor_barrier_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.barrier_async].
 *
 * Returns: %TRUE once the earlier work completed
 *
 * Since: 0.1
 */
gboolean
atomr_actor_barrier_finish (AtomrActor    *self,
                            GAsyncResult  *result,
                            GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_barrier_async, error);
}
