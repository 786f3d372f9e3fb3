/* example-fill-actor.c — a third-party actor written against the public
 * envelope (AtomrOperation): the work is declared (hazards, signals,
 * tracing, timeouts come with it) and enqueued on the actor's stream.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dlfcn.h>

#include "example-fill-actor.h"

struct _ExampleFillActor
{
  AtomrActor parent_instance;
};

G_DEFINE_FINAL_TYPE (ExampleFillActor, example_fill_actor, ATOMR_TYPE_ACTOR)

/* The one driver entry point this actor needs.  A real third-party actor
 * would call its own CUDA library here; atomr-accel has already loaded
 * the driver when a GPU device exists, so look it up without loading
 * anything (CUresult, CUdeviceptr and CUstream spelled as plain types so
 * that the example needs no CUDA headers). */
typedef int (*MemsetD32AsyncFunc) (guint64 dst, unsigned int value, size_t n, gpointer stream);

static MemsetD32AsyncFunc
lookup_memset (GError **error)
{
  static gsize looked_up;
  static MemsetD32AsyncFunc func;

  if (g_once_init_enter (&looked_up))
    {
      void *driver = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

      if (driver != NULL)
        func = (MemsetD32AsyncFunc) dlsym (driver, "cuMemsetD32Async");
      g_once_init_leave (&looked_up, 1);
    }
  if (func == NULL)
    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                 "cuMemsetD32Async not found in the loaded libcuda.so.1");
  return func;
}

typedef struct
{
  AtomrBuffer *buffer;
  guint32      pattern;
} FillRequest;

static void
fill_request_free (gpointer data)
{
  FillRequest *r = data;

  g_object_unref (r->buffer);
  g_free (r);
}

/* Runs on the actor's context with the device's CUDA context current. */
static gboolean
fill_enqueue (AtomrOperation  *op,
              gpointer         user_data,
              GError         **error)
{
  FillRequest *r = user_data;
  guint64 n = atomr_buffer_get_byte_size (r->buffer) / 4;
  MemsetD32AsyncFunc memset_d32;
  int res;

  if (atomr_operation_is_host (op))
    {
      guint32 *x = (guint32 *) (guintptr) atomr_operation_get_address (op, r->buffer);

      for (guint64 i = 0; i < n; i++)
        x[i] = r->pattern;
      return TRUE;
    }

  memset_d32 = lookup_memset (error);
  if (memset_d32 == NULL)
    return FALSE;
  res = memset_d32 (atomr_operation_get_address (op, r->buffer), r->pattern, n,
                    (gpointer) (guintptr) atomr_operation_get_cu_stream (op));
  if (res != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                   "cuMemsetD32Async of %" G_GUINT64_FORMAT " words failed with CUresult %d", n, res);
      return FALSE;
    }
  return TRUE;
}

static void
example_fill_actor_class_init (ExampleFillActorClass *klass)
{
  /* The library name in traces and signals; no handles to set up. */
  ATOMR_ACTOR_CLASS (klass)->library = "example";
}

static void
example_fill_actor_init (ExampleFillActor *self)
{
}

/**
 * example_fill_actor_new:
 * @device: the device to work on
 * @error: return location for a #GError
 *
 * Returns: (transfer full): a new actor, or %NULL with @error set
 */
ExampleFillActor *
example_fill_actor_new (AtomrDevice  *device,
                        GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  /* AtomrActor is a GInitable: it creates its stream and calls
   * klass->setup here. */
  return g_initable_new (EXAMPLE_TYPE_FILL_ACTOR, NULL, error, "device", device, NULL);
}

/**
 * example_fill_actor_fill_async:
 * @self: an actor
 * @buffer: a buffer of 4-byte elements
 * @pattern: the bits every element gets
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the buffer is filled
 * @user_data: data for @callback
 *
 * Fills @buffer with @pattern, after every earlier operation on it.
 */
void
example_fill_actor_fill_async (ExampleFillActor    *self,
                               AtomrBuffer         *buffer,
                               guint32              pattern,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(AtomrOperation) op = NULL;
  FillRequest *r;

  g_return_if_fail (EXAMPLE_IS_FILL_ACTOR (self));
  g_return_if_fail (ATOMR_IS_BUFFER (buffer));

  op = atomr_operation_new (ATOMR_ACTOR (self), "fill-pattern", example_fill_actor_fill_async,
                            cancellable, callback, user_data);
  if (atomr_dtype_get_size (atomr_buffer_get_dtype (buffer)) != 4)
    {
      g_autoptr(GError) error =
        g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "fill-pattern needs 4-byte elements, not %s",
                     atomr_dtype_get_name (atomr_buffer_get_dtype (buffer)));
      atomr_operation_fail (op, error);
      return;
    }

  r = g_new0 (FillRequest, 1);
  r->buffer = g_object_ref (buffer);
  r->pattern = pattern;
  atomr_operation_write (op, buffer);
  atomr_operation_set_enqueue_func (op, fill_enqueue, r, fill_request_free);
  atomr_operation_submit (op);
}

/**
 * example_fill_actor_fill_finish:
 * @self: an actor
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Returns: %TRUE when the buffer was filled
 */
gboolean
example_fill_actor_fill_finish (ExampleFillActor  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  return atomr_operation_finish_boolean (ATOMR_ACTOR (self), result,
                                         example_fill_actor_fill_async, error);
}
