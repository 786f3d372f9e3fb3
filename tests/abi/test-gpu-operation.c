/* test-gpu-operation.c — the public envelope on a GPU: a third-party
 * actor (libatomr-1.so and <atomr.h> only) enqueues driver work on the
 * stream AtomrOperation gives it, ordered against the built-in copy actor
 * by the hazards it declared.  Skips without a CUDA device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dlfcn.h>

#include <atomr.h>

typedef int (*MemsetD32AsyncFunc) (guint64 dst, unsigned int value, size_t n, gpointer stream);

#define TEST_TYPE_MEMSET_ACTOR (test_memset_actor_get_type ())
G_DECLARE_FINAL_TYPE (TestMemsetActor, test_memset_actor, TEST, MEMSET_ACTOR, AtomrActor)

struct _TestMemsetActor
{
  AtomrActor parent_instance;
};

G_DEFINE_FINAL_TYPE (TestMemsetActor, test_memset_actor, ATOMR_TYPE_ACTOR)

static void
test_memset_actor_class_init (TestMemsetActorClass *klass)
{
  ATOMR_ACTOR_CLASS (klass)->library = "test-memset";
}

static void
test_memset_actor_init (TestMemsetActor *self)
{
}

typedef struct
{
  AtomrBuffer *buffer;
  guint32      pattern;
  guint64      stream_seen;
} Request;

static gboolean
memset_enqueue (AtomrOperation  *op,
                gpointer         user_data,
                GError         **error)
{
  Request *r = user_data;
  void *driver = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  MemsetD32AsyncFunc memset_d32 = driver ? (MemsetD32AsyncFunc) dlsym (driver, "cuMemsetD32Async") : NULL;
  int res;

  g_assert_false (atomr_operation_is_host (op));
  g_assert_nonnull (memset_d32);
  r->stream_seen = atomr_operation_get_cu_stream (op);
  g_assert_cmpuint (atomr_operation_get_address (op, r->buffer), ==,
                    atomr_buffer_get_device_pointer (r->buffer));
  res = memset_d32 (atomr_operation_get_address (op, r->buffer), r->pattern,
                    atomr_buffer_get_byte_size (r->buffer) / 4,
                    (gpointer) (guintptr) r->stream_seen);
  if (driver)
    dlclose (driver);
  if (res != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY, "cuMemsetD32Async failed: %d", res);
      return FALSE;
    }
  return TRUE;
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static void
test_gpu_operation_memset (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(TestMemsetActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GAsyncResult) filled = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(AtomrOperation) op = NULL;
  Request r = { 0 };
  const guint32 *words;
  gsize size;

  if (device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      g_test_skip ("no CUDA device");
      return;
    }
  actor = g_initable_new (TEST_TYPE_MEMSET_ACTOR, NULL, &error, "device", device, NULL);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_actor_get_cu_stream_handle (ATOMR_ACTOR (actor)), !=, 0);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U32, 1 << 20, &error);
  g_assert_no_error (error);
  /* Written by the copy actor first (not waited for): the memset must
   * come after it, through the hazard it declared. */
  atomr_buffer_fill_async (buffer, 7.0, NULL, store_result, &filled);

  r.buffer = buffer;
  r.pattern = 0xA5A5A5A5u;
  op = atomr_operation_new (ATOMR_ACTOR (actor), "memset", NULL, NULL, store_result, &result);
  atomr_operation_write (op, buffer);
  atomr_operation_set_enqueue_func (op, memset_enqueue, &r, NULL);
  atomr_operation_submit (op);
  /* The actor runs on this thread's context: iterate it until both
   * requests have answered, then download. */
  while (result == NULL || filled == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (atomr_buffer_fill_finish (buffer, filled, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_operation_finish_boolean (ATOMR_ACTOR (actor), result, NULL, &error));
  g_assert_no_error (error);
  bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (r.stream_seen, ==, atomr_actor_get_cu_stream_handle (ATOMR_ACTOR (actor)));
  words = g_bytes_get_data (bytes, &size);
  g_assert_cmpuint (size, ==, (1 << 20) * 4);
  for (gsize i = 0; i < size / 4; i++)
    if (words[i] != 0xA5A5A5A5u)
      g_error ("word %" G_GSIZE_FORMAT " is 0x%08x, not 0xa5a5a5a5", i, words[i]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gpu/operation/memset-ordered", test_gpu_operation_memset);
  return g_test_run ();
}
