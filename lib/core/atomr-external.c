/* atomr-external.c — foreign memory, streams and events
 *
 * Memory, streams and events of other CUDA code (CuPy, PyTorch, GStreamer's
 * CUDA library...) enter atomr as plain handles (guint64), so that bindings
 * can pass them.  Foreign work is ordered against actors by CUDA events on
 * the GPU timeline, never by a device-wide synchronization:
 *
 *   atomr → foreign: atomr_actor_signal_stream_async (actor, their_stream,
 *     buffers) makes their stream wait for the work that last wrote (and
 *     read) the buffers;
 *   foreign → atomr: atomr_actor_wait_event_async (actor, their_event,
 *     buffers) marks the buffers written by the foreign work that @event
 *     completes, so every later use by any actor waits for the event.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-actor-private.h"
#include "atomr-buffer-private.h"
#include "atomr-device-private.h"
#include "atomr-error.h"
#include "atomr-external.h"

/**
 * atomr_buffer_new_for_device_pointer:
 * @device: the device the memory is on
 * @dtype: the element type
 * @n_elements: how many elements, at least 1
 * @device_pointer: the device address of the first element (on the host
 *   test device, a host address)
 * @notify: (nullable) (scope async) (closure user_data): called once when
 *   the buffer no longer needs the memory
 * @user_data: data for @notify
 * @error: return location for a [struct@GLib.Error]
 *
 * Wraps memory that other code allocated (a PyTorch or CuPy tensor, a
 * GStreamer CUDA memory) as a buffer, without a copy.  atomr never frees
 * it: when the last reference to the buffer goes and the last work on it
 * has run on the GPU, @notify is called on the device's thread so the
 * owner can release it.
 *
 * On a CUDA device the driver is asked about the pointer: it must be device
 * memory of @device with @n_elements elements inside one allocation, else
 * %ATOMR_ERROR_INVALID_ARGUMENT names what is wrong.  If creation fails,
 * @notify is called before returning.
 *
 * Order foreign work that wrote the memory with [method@Atomr.Actor.wait_event_async]
 * before using the buffer.
 *
 * Returns: (transfer full): a new buffer, or %NULL on error
 *
 * Since: 0.2
 */
AtomrBuffer *
atomr_buffer_new_for_device_pointer (AtomrDevice     *device,
                                     AtomrDtype       dtype,
                                     guint64          n_elements,
                                     guint64          device_pointer,
                                     GDestroyNotify   notify,
                                     gpointer         user_data,
                                     GError         **error)
{
  gsize elem;
  guint64 bytes;
  AtomrBuffer *buffer = NULL;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  elem = atomr_dtype_get_size (dtype);
  if (elem == 0 || n_elements == 0 || n_elements > G_MAXINT64 / elem || device_pointer == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Cannot wrap %" G_GUINT64_FORMAT " elements of dtype %d at address 0x%"
                   G_GINT64_MODIFIER "x: %s", n_elements, (int) dtype, device_pointer,
                   elem == 0 ? "invalid dtype" : n_elements == 0 ? "no elements"
                   : device_pointer == 0 ? "null address" : "the size overflows");
      goto fail;
    }
  bytes = n_elements * elem;

  if (atomr_device_is_host (device))
    return atomr_buffer_new_foreign (device, dtype, n_elements, 0,
                                     GSIZE_TO_POINTER (device_pointer), notify, user_data);

  if (!atomr_device_enter (device, error))
    goto fail;
  {
    CUdeviceptr ptr = (CUdeviceptr) device_pointer, start = 0;
    unsigned int type = 0;
    int ordinal = -1;
    size_t range = 0;
    CUresult res;

    res = ATOMR_CU->cuPointerGetAttribute (&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
    if (res == CUDA_SUCCESS)
      res = ATOMR_CU->cuPointerGetAttribute (&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
    if (res == CUDA_SUCCESS)
      res = ATOMR_CU->cuPointerGetAttribute (&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr);
    if (res == CUDA_SUCCESS)
      res = ATOMR_CU->cuPointerGetAttribute (&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr);
    atomr_device_leave (device);
    if (res != CUDA_SUCCESS)
      {
        g_autoptr(GError) local = NULL;
        atomr_cuda_check (res, "cuPointerGetAttribute", &local);
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "Address 0x%" G_GINT64_MODIFIER "x is not CUDA memory the driver knows: %s",
                     device_pointer, local->message);
        goto fail;
      }
    if (type != CU_MEMORYTYPE_DEVICE || ordinal != atomr_device_get_ordinal (device))
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "Address 0x%" G_GINT64_MODIFIER "x is %s memory of device %d, not device "
                     "memory of device %d", device_pointer,
                     type == CU_MEMORYTYPE_HOST ? "host" : type == CU_MEMORYTYPE_DEVICE ? "device" : "other",
                     ordinal, atomr_device_get_ordinal (device));
        goto fail;
      }
    if (ptr < start || ptr - start > range || bytes > range - (ptr - start))
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "%" G_GUINT64_FORMAT " bytes at 0x%" G_GINT64_MODIFIER "x run past the end of "
                     "their allocation (%" G_GSIZE_FORMAT " bytes at 0x%" G_GINT64_MODIFIER "x)",
                     bytes, device_pointer, (gsize) range, (guint64) start);
        goto fail;
      }
    buffer = atomr_buffer_new_foreign (device, dtype, n_elements, ptr, NULL, notify, user_data);
  }
  return buffer;

fail:
  if (notify)
    notify (user_data);
  return NULL;
}

/* ------------------------------------------------------------------ */

typedef struct {
  guint64 handle;
} EventRequest;

static gboolean
check_buffers (AtomrActor   *self,
               const gchar  *opname,
               AtomrBuffer **buffers,
               guint         n_buffers,
               GError      **error)
{
  if (n_buffers > 0 && buffers == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: buffers is NULL but n_buffers is %u", opname, n_buffers);
      return FALSE;
    }
  for (guint i = 0; i < n_buffers; i++)
    {
      if (!ATOMR_IS_BUFFER (buffers[i]))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: buffers[%u] is not an AtomrBuffer", opname, i);
          return FALSE;
        }
      if (atomr_buffer_get_device (buffers[i]) != atomr_actor_get_device (self))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "%s: buffers[%u] lives on device %d, not on the actor's device %d", opname, i,
                       atomr_device_get_ordinal (atomr_buffer_get_device (buffers[i])),
                       atomr_device_get_ordinal (atomr_actor_get_device (self)));
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
wait_event_enqueue (AtomrOp  *op,
                    GError  **error)
{
  EventRequest *req = atomr_op_get_data (op);

  if (atomr_op_is_host (op))
    return TRUE;   /* no GPU timeline to order */
  return atomr_cuda_check (ATOMR_CU->cuStreamWaitEvent (atomr_op_get_cu_stream (op),
                                                        (CUevent) (guintptr) req->handle, 0),
                           "cuStreamWaitEvent", error);
}

/**
 * atomr_actor_wait_event_async:
 * @self: an [class@Atomr.Actor]
 * @event: a foreign `CUevent` handle, recorded after the foreign work
 * @buffers: (array length=n_buffers) (nullable): the buffers that work wrote
 * @n_buffers: the number of @buffers
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called once the wait is on the GPU timeline
 * @user_data: data for @callback
 *
 * Orders the actor's stream after a foreign CUDA event on the GPU, and
 * marks @buffers as written by this operation, so every later use of them
 * by any actor waits for the event too.  The event must have been recorded
 * before this call (cuStreamWaitEvent waits for the most recent record at
 * the time the wait is enqueued).  No host thread waits.
 *
 * Since: 0.2
 */
void
atomr_actor_wait_event_async (AtomrActor          *self,
                              guint64              event,
                              AtomrBuffer        **buffers,
                              guint                n_buffers,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  EventRequest *req;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "wait-event", atomr_actor_wait_event_async, cancellable, callback, user_data);
  if (event == 0)
    return atomr_op_fail (op, g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                                   "wait-event: the event handle is 0"));
  if (!check_buffers (self, "wait-event", buffers, n_buffers, &error))
    return atomr_op_fail (op, error);
  req = atomr_op_alloc_data (op, sizeof *req, NULL);
  req->handle = event;
  for (guint i = 0; i < n_buffers; i++)
    atomr_op_write (op, buffers[i]);
  atomr_op_set_foreign_writes (op);   /* ordering only: read-only buffers are fine */
  atomr_op_set_enqueue (op, wait_event_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_wait_event_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.wait_event_async].
 *
 * Returns: %TRUE when the wait was enqueued and passed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_wait_event_finish (AtomrActor    *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_wait_event_async, error);
}

/**
 * atomr_actor_wait_event_sync:
 * @self: an [class@Atomr.Actor]
 * @event: a foreign `CUevent` handle
 * @buffers: (array length=n_buffers) (nullable): the buffers the foreign work wrote
 * @n_buffers: the number of @buffers
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.Actor.wait_event_async], for scripts.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_actor_wait_event_sync (AtomrActor    *self,
                             guint64        event,
                             AtomrBuffer  **buffers,
                             guint          n_buffers,
                             GCancellable  *cancellable,
                             GError       **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  atomr_sync_begin (&sync, self);
  atomr_actor_wait_event_async (self, event, buffers, n_buffers, cancellable,
                                atomr_sync_callback, &sync);
  ok = atomr_actor_wait_event_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

static gboolean
signal_stream_enqueue (AtomrOp  *op,
                       GError  **error)
{
  EventRequest *req = atomr_op_get_data (op);
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUevent event = NULL;
  CUresult res;

  if (atomr_op_is_host (op))
    return TRUE;
  res = cu->cuEventCreate (&event, CU_EVENT_DISABLE_TIMING);
  if (res == CUDA_SUCCESS)
    res = cu->cuEventRecord (event, atomr_op_get_cu_stream (op));
  if (res == CUDA_SUCCESS)
    res = cu->cuStreamWaitEvent ((CUstream) (guintptr) req->handle, event, 0);
  if (event)
    cu->cuEventDestroy (event);   /* released once the wait is done with it */
  return atomr_cuda_check (res, "cuStreamWaitEvent (foreign stream)", error);
}

/**
 * atomr_actor_signal_stream_async:
 * @self: an [class@Atomr.Actor]
 * @stream: a foreign `CUstream` handle (0 is the legacy default stream)
 * @buffers: (array length=n_buffers) (nullable): the buffers the foreign
 *   work will use
 * @n_buffers: the number of @buffers
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called once the foreign stream is ordered
 * @user_data: data for @callback
 *
 * Makes a foreign stream wait on the GPU for the work that last wrote or
 * read @buffers (a CUDA event recorded on the actor's stream, waited for
 * on @stream).  Work the foreign code enqueues on @stream after this
 * operation completes is ordered after atomr's; if it writes the buffers,
 * hand them back with [method@Atomr.Actor.wait_event_async].
 *
 * Since: 0.2
 */
void
atomr_actor_signal_stream_async (AtomrActor          *self,
                                 guint64              stream,
                                 AtomrBuffer        **buffers,
                                 guint                n_buffers,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  EventRequest *req;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "signal-stream", atomr_actor_signal_stream_async, cancellable, callback, user_data);
  if (!check_buffers (self, "signal-stream", buffers, n_buffers, &error))
    return atomr_op_fail (op, error);
  req = atomr_op_alloc_data (op, sizeof *req, NULL);
  req->handle = stream;
  /* as a writer: the foreign work may write, so it waits for readers too */
  for (guint i = 0; i < n_buffers; i++)
    atomr_op_write (op, buffers[i]);
  atomr_op_set_foreign_writes (op);   /* ordering only: read-only buffers are fine */
  atomr_op_set_enqueue (op, signal_stream_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_signal_stream_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.signal_stream_async].
 *
 * Returns: %TRUE when the foreign stream was ordered
 *
 * Since: 0.2
 */
gboolean
atomr_actor_signal_stream_finish (AtomrActor    *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_signal_stream_async, error);
}

/**
 * atomr_actor_signal_stream_sync:
 * @self: an [class@Atomr.Actor]
 * @stream: a foreign `CUstream` handle
 * @buffers: (array length=n_buffers) (nullable): the buffers the foreign work will use
 * @n_buffers: the number of @buffers
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.Actor.signal_stream_async]: when it returns,
 * work enqueued on @stream is ordered after atomr's work on @buffers.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_actor_signal_stream_sync (AtomrActor    *self,
                                guint64        stream,
                                AtomrBuffer  **buffers,
                                guint          n_buffers,
                                GCancellable  *cancellable,
                                GError       **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  atomr_sync_begin (&sync, self);
  atomr_actor_signal_stream_async (self, stream, buffers, n_buffers, cancellable,
                                   atomr_sync_callback, &sync);
  ok = atomr_actor_signal_stream_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

static gboolean
wait_stream_enqueue (AtomrOp  *op,
                     GError  **error)
{
  EventRequest *req = atomr_op_get_data (op);
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUevent event = NULL;
  CUresult res;

  if (atomr_op_is_host (op))
    return TRUE;
  res = cu->cuEventCreate (&event, CU_EVENT_DISABLE_TIMING);
  if (res == CUDA_SUCCESS)
    res = cu->cuEventRecord (event, (CUstream) (guintptr) req->handle);
  if (res == CUDA_SUCCESS)
    res = cu->cuStreamWaitEvent (atomr_op_get_cu_stream (op), event, 0);
  if (event)
    cu->cuEventDestroy (event);
  return atomr_cuda_check (res, "cuStreamWaitEvent (after a foreign stream)", error);
}

/**
 * atomr_actor_wait_stream_async:
 * @self: an [class@Atomr.Actor]
 * @stream: a foreign `CUstream` handle (0 or 1: the legacy default
 *   stream, 2: the per-thread default stream)
 * @buffers: (array length=n_buffers) (nullable): the buffers the foreign
 *   work wrote
 * @n_buffers: the number of @buffers
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called once the wait is on the GPU timeline
 * @user_data: data for @callback
 *
 * Like [method@Atomr.Actor.wait_event_async] for a producer that hands over a
 * stream rather than an event (`__cuda_array_interface__`, DLPack): an
 * event is recorded on @stream when the operation is enqueued, and the
 * actor's stream and every later user of @buffers wait for it on the GPU.
 * Work the foreign code enqueues on @stream after calling this is not
 * waited for.
 *
 * Since: 0.2
 */
void
atomr_actor_wait_stream_async (AtomrActor          *self,
                               guint64              stream,
                               AtomrBuffer        **buffers,
                               guint                n_buffers,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  EventRequest *req;

  g_return_if_fail (ATOMR_IS_ACTOR (self));

  op = atomr_op_new (self, "wait-stream", atomr_actor_wait_stream_async, cancellable, callback, user_data);
  if (!check_buffers (self, "wait-stream", buffers, n_buffers, &error))
    return atomr_op_fail (op, error);
  req = atomr_op_alloc_data (op, sizeof *req, NULL);
  req->handle = stream;
  for (guint i = 0; i < n_buffers; i++)
    atomr_op_write (op, buffers[i]);
  atomr_op_set_foreign_writes (op);   /* ordering only: read-only buffers are fine */
  atomr_op_set_enqueue (op, wait_stream_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_wait_stream_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.wait_stream_async].
 *
 * Returns: %TRUE when the wait was enqueued and passed
 *
 * Since: 0.2
 */
gboolean
atomr_actor_wait_stream_finish (AtomrActor    *self,
                                GAsyncResult  *result,
                                GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_wait_stream_async, error);
}

/**
 * atomr_actor_wait_stream_sync:
 * @self: an [class@Atomr.Actor]
 * @stream: a foreign `CUstream` handle
 * @buffers: (array length=n_buffers) (nullable): the buffers the foreign work wrote
 * @n_buffers: the number of @buffers
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.Actor.wait_stream_async].
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_actor_wait_stream_sync (AtomrActor    *self,
                              guint64        stream,
                              AtomrBuffer  **buffers,
                              guint          n_buffers,
                              GCancellable  *cancellable,
                              GError       **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  atomr_sync_begin (&sync, self);
  atomr_actor_wait_stream_async (self, stream, buffers, n_buffers, cancellable,
                                 atomr_sync_callback, &sync);
  ok = atomr_actor_wait_stream_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}
