/* test-reply.c — how a request's reply reaches its callback (host device)
 *
 * What the reply object (AtomrReply, issue 17) must keep of GTask's
 * behaviour: the requester's thread-default context, never inside the
 * _async call, the outcome exactly once, results kept past the callback,
 * results dropped unfinished (freed: the valgrind variant), errors,
 * cancellation, and the order of many replies.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core-test-util.h"

static AtomrBuffer *
filled_buffer (AtomrDevice *device, AtomrActor *actor, gsize n, guint8 seed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = pattern_bytes (n, seed);
  g_autoptr(GAsyncResult) result = NULL;
  AtomrBuffer *buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, n, &error);

  g_assert_no_error (error);
  atomr_actor_upload_async (actor, buffer, bytes, NULL, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_true (atomr_actor_upload_finish (actor, result, &error));
  g_assert_no_error (error);
  return buffer;
}

/* ------------------------------------------------------------------ */
/* The callback runs in the requester's thread-default context          */

typedef struct {
  AtomrActor   *actor;
  AtomrBuffer  *buffer;
  GMainContext *context;     /* the requesting thread's own */
  GThread      *thread;
  GThread      *called_on;
  GMainContext *called_in;   /* the thread-default context during the callback */
  GBytes       *bytes;
  gboolean      pop_first;   /* iterate the context without it pushed */
  gint          done;
} Requester;

static void
requester_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Requester *r = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) source_object = g_async_result_get_source_object (result);

  r->called_on = g_thread_self ();
  r->called_in = g_main_context_ref_thread_default ();
  g_assert_true (source == G_OBJECT (r->actor));
  g_assert_true (source_object == G_OBJECT (r->actor));
  g_assert_true (g_async_result_get_user_data (result) == r);
  g_assert_true (g_async_result_is_tagged (result, atomr_actor_download_async));
  g_assert_false (g_async_result_is_tagged (result, atomr_actor_upload_async));
  r->bytes = atomr_actor_download_finish (r->actor, result, &error);
  g_assert_no_error (error);
  g_atomic_int_set (&r->done, 1);
}

static gpointer
requester_main (gpointer data)
{
  Requester *r = data;

  g_main_context_push_thread_default (r->context);
  atomr_actor_download_async (r->actor, r->buffer, NULL, requester_reply, r);
  if (r->pop_first)
    g_main_context_pop_thread_default (r->context);
  /* Without it pushed, the callback still finds the context of the
   * request as its thread-default (pushed around it, as GTask does). */
  while (!g_atomic_int_get (&r->done))
    g_main_context_iteration (r->context, TRUE);
  if (!r->pop_first)
    g_main_context_pop_thread_default (r->context);
  return NULL;
}

static void
test_requester_context (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GBytes) expected = pattern_bytes (48, 11);

  atomr_device_set_host_autocomplete (device, TRUE);
  /* The actor runs on this thread's (the global default) context. */
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = filled_buffer (device, actor, 48, 11);

  for (guint variant = 0; variant < 2; variant++)
    {
      Requester r = { 0 };

      r.actor = actor;
      r.buffer = buffer;
      r.pop_first = variant == 1;
      r.context = g_main_context_new ();
      r.thread = g_thread_new ("requester", requester_main, &r);
      while (!g_atomic_int_get (&r.done))
        g_main_context_iteration (NULL, FALSE);
      g_thread_join (r.thread);

      g_assert_true (r.called_on == r.thread);
      g_assert_true (r.called_in == r.context);
      g_assert_true (g_bytes_equal (r.bytes, expected));
      g_bytes_unref (r.bytes);
      g_main_context_unref (r.called_in);
      g_main_context_unref (r.context);
    }
}

/* ------------------------------------------------------------------ */
/* Never inside the _async call                                         */

typedef struct {
  AtomrActor  *actor;
  AtomrBuffer *buffer;
  guint        n_called;
  gboolean     in_async;
  gboolean     called_inside;
  GError      *error;
} Inline;

static void
inline_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Inline *t = user_data;

  t->n_called++;
  if (t->in_async)
    t->called_inside = TRUE;
  if (!atomr_actor_fill_finish (ATOMR_ACTOR (source), result, &t->error))
    g_assert_nonnull (t->error);
}

static void
inline_request (Inline *t)
{
  t->in_async = TRUE;
  atomr_actor_fill_async (t->actor, t->buffer, 3.0, NULL, inline_reply, t);
  t->in_async = FALSE;
}

static gboolean
inline_from_dispatch (gpointer data)
{
  inline_request (data);
  return G_SOURCE_REMOVE;
}

static void
test_never_inline (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrActor) bare = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);
  g_autoptr(AtomrBuffer) buffer = NULL;
  Inline t = { 0 };

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  /* Completed inside the enqueue: the reply is ready before fill_async
   * returns, on the thread that made the request. */
  atomr_actor_set_completion_mode (actor, ATOMR_COMPLETION_SYNC);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_assert_no_error (error);
  t.actor = actor;
  t.buffer = buffer;

  /* Outside any dispatch (the home thread runs it inline). */
  inline_request (&t);
  g_assert_cmpuint (t.n_called, ==, 0);
  while (t.n_called == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (t.called_inside);
  g_assert_no_error (t.error);
  for (guint i = 0; i < 16; i++)
    g_assert_cmpuint (((const guint8 *) atomr_buffer_get_host_data (buffer))[i], ==, 3);

  /* From inside a dispatch of the same context: answered in that same
   * iteration, delivered in a later one. */
  t.n_called = 0;
  g_idle_add (inline_from_dispatch, &t);
  while (t.n_called == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (t.called_inside);
  g_assert_cmpuint (t.n_called, ==, 1);

  /* An error answered before anything is queued (an actor without a
   * device fails at submit). */
  t.n_called = 0;
  t.actor = bare;
  inline_request (&t);
  g_assert_cmpuint (t.n_called, ==, 0);
  while (t.n_called == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (t.called_inside);
  g_assert_error (t.error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&t.error);

  t.n_called = 0;
  g_idle_add (inline_from_dispatch, &t);
  while (t.n_called == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (t.called_inside);
  g_assert_error (t.error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&t.error);
}

/* ------------------------------------------------------------------ */
/* Results kept past the callback, and dropped unfinished               */

static void
test_kept_result (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) expected = pattern_bytes (40, 21);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GObject) source_object = NULL;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = filled_buffer (device, actor, 40, 21);

  /* store_result keeps a reference and finishes nothing. */
  atomr_actor_download_async (actor, buffer, NULL, store_result, &result);
  iterate_until ((gpointer *) &result);
  /* Later iterations change nothing for it. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  source_object = g_async_result_get_source_object (result);
  g_assert_true (source_object == G_OBJECT (actor));
  bytes = atomr_actor_download_finish (actor, result, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (bytes, expected));
}

static void
ignore_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
test_dropped_result (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  guint n = 0;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = filled_buffer (device, actor, 64, 1);

  /* Nobody finishes these: the GBytes of each is freed with its result
   * (the valgrind variant of this test finds a leak otherwise). */
  for (guint i = 0; i < 8; i++)
    atomr_actor_download_async (actor, buffer, NULL, ignore_result, &n);
  while (n < 8)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (n, ==, 8);
}

/* ------------------------------------------------------------------ */
/* Errors and cancellation                                              */

static void
test_error_and_cancel (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GBytes) bytes = pattern_bytes (16, 4);
  GAsyncResult *result = NULL;
  AtomrStream *stream;

  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_assert_no_error (error);

  /* The GPU reports an error: the finish function gets it. */
  atomr_actor_upload_async (actor, buffer, bytes, NULL, store_result, &result);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  stream = atomr_actor_get_stream (actor);
  g_assert_cmpuint (atomr_host_stream_complete (stream, 1, CUDA_ERROR_INVALID_VALUE), ==, 1);
  iterate_until ((gpointer *) &result);
  g_assert_false (atomr_actor_upload_finish (actor, result, &error));
  /* CUDA_ERROR_INVALID_VALUE (1): the driver's code is in the message */
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "upload"));
  g_assert_nonnull (strstr (error->message, "(1)"));
  g_clear_error (&error);
  g_clear_object (&result);

  /* Cancelled before it was run: G_IO_ERROR_CANCELLED, never inline. */
  g_cancellable_cancel (cancellable);
  atomr_actor_upload_async (actor, buffer, bytes, cancellable, store_result, &result);
  g_assert_null (result);
  iterate_until ((gpointer *) &result);
  g_assert_false (atomr_actor_upload_finish (actor, result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 0);
  g_clear_error (&error);
  g_clear_object (&result);

  /* Cancelled once on the GPU: its real outcome (check_cancellable off). */
  g_cancellable_reset (cancellable);
  atomr_actor_upload_async (actor, buffer, bytes, cancellable, store_result, &result);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 1);
  g_cancellable_cancel (cancellable);
  atomr_host_stream_complete (stream, 1, CUDA_SUCCESS);
  iterate_until ((gpointer *) &result);
  g_assert_true (atomr_actor_upload_finish (actor, result, &error));
  g_assert_no_error (error);
  g_clear_object (&result);
}

/* ------------------------------------------------------------------ */
/* Many replies in one iteration: completion order                      */

#define N_MANY 100

typedef struct {
  guint order[N_MANY];
  guint n;
} Order;

typedef struct {
  Order *order;
  guint  index;
} Tagged;

static void
ordered_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Tagged *t = user_data;
  g_autoptr(GError) error = NULL;

  atomr_actor_fill_finish (ATOMR_ACTOR (source), result, &error);
  g_assert_cmpuint (t->order->n, <, N_MANY);
  t->order->order[t->order->n++] = t->index;
}

typedef struct {
  AtomrActor  *actor;
  AtomrBuffer *buffer;
  Tagged       tags[N_MANY];
} Burst;

static gboolean
burst_from_dispatch (gpointer data)
{
  Burst *b = data;

  for (guint i = 0; i < N_MANY; i++)
    atomr_actor_fill_async (b->actor, b->buffer, i, NULL, ordered_reply, &b->tags[i]);
  return G_SOURCE_REMOVE;
}

static void
test_many_replies (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrActor) bare = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);
  g_autoptr(AtomrBuffer) buffer = NULL;
  Order order = { { 0 }, 0 };
  Burst burst;
  AtomrStream *stream;

  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < N_MANY; i++)
    burst.tags[i] = (Tagged) { &order, i };

  /* Completed on the GPU together: replies in completion (= submission)
   * order, each once. */
  burst.actor = actor;
  burst.buffer = buffer;
  burst_from_dispatch (&burst);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (order.n, ==, 0);
  stream = atomr_actor_get_stream (actor);
  atomr_host_stream_complete (stream, G_MAXUINT, CUDA_SUCCESS);
  while (order.n < N_MANY)
    g_main_context_iteration (NULL, TRUE);
  for (guint i = 0; i < N_MANY; i++)
    g_assert_cmpuint (order.order[i], ==, i);
  g_assert_cmpfloat (((const gfloat *) atomr_buffer_get_host_data (buffer))[0], ==, N_MANY - 1);

  /* Answered in the iteration that made them (all deferred): the same
   * order. */
  order.n = 0;
  burst.actor = bare;
  g_idle_add (burst_from_dispatch, &burst);
  while (order.n < N_MANY)
    g_main_context_iteration (NULL, TRUE);
  for (guint i = 0; i < N_MANY; i++)
    g_assert_cmpuint (order.order[i], ==, i);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (order.n, ==, N_MANY);
}

/* ------------------------------------------------------------------ */
/* _sync wrappers on top                                                */

static void
test_sync_wrappers (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GBytes) expected = pattern_bytes (32, 77);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(AtomrActor) bare = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);
  AtomrSync sync;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = filled_buffer (device, actor, 32, 77);

  /* The buffer's conveniences: the device's default actor, on the device
   * thread, and a reply re-issued by the buffer. */
  bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (bytes, expected));
  g_assert_true (atomr_buffer_fill_sync (buffer, 2.0, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (((const guint8 *) atomr_buffer_get_host_data (buffer))[31], ==, 2);

  /* The helper the _sync functions share, on this thread's actor. */
  atomr_sync_begin (&sync, actor);
  atomr_actor_fill_async (actor, buffer, 5.0, NULL, atomr_sync_callback, &sync);
  g_assert_true (atomr_actor_fill_finish (actor, atomr_sync_wait (&sync), &error));
  atomr_sync_end (&sync);
  g_assert_no_error (error);
  g_assert_cmpuint (((const guint8 *) atomr_buffer_get_host_data (buffer))[0], ==, 5);

  /* And an error through it. */
  atomr_sync_begin (&sync, bare);
  atomr_actor_fill_async (bare, buffer, 1.0, NULL, atomr_sync_callback, &sync);
  g_assert_false (atomr_actor_fill_finish (bare, atomr_sync_wait (&sync), &error));
  atomr_sync_end (&sync);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------ */
/* The reply API of actor implementations (atomr_reply_return_*)        */

static guint n_destroyed;

static void
count_destroy (gpointer data)
{
  g_free (data);
  n_destroyed++;
}

typedef enum { OUT_POINTER, OUT_DOUBLE, OUT_ERROR } Out;

static void
custom_complete_pointer (AtomrOp *op, AtomrReply *reply)
{
  atomr_reply_return_pointer (reply, g_strdup ("forty-two"), count_destroy);
}

static void
custom_complete_double (AtomrOp *op, AtomrReply *reply)
{
  atomr_reply_return_double (reply, 42.5);
}

static void
custom_complete_error (AtomrOp *op, AtomrReply *reply)
{
  atomr_reply_return_new_error (reply, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                "the value %d is out of range", 42);
}

static void
custom_request (AtomrActor *actor, Out out, GAsyncReadyCallback callback, gpointer data)
{
  AtomrOp *op = atomr_op_new (actor, "custom", custom_request, NULL, callback, data);

  atomr_op_set_complete (op, out == OUT_POINTER ? custom_complete_pointer :
                             out == OUT_DOUBLE ? custom_complete_double : custom_complete_error);
  atomr_op_submit (op);
}

static void
test_reply_api (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  GAsyncResult *result = NULL;
  guint n = 0;
  gchar *text;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  n_destroyed = 0;

  /* A pointer: the caller's once finished, not freed by the reply. */
  custom_request (actor, OUT_POINTER, store_result, &result);
  iterate_until ((gpointer *) &result);
  text = atomr_op_finish_pointer (actor, result, custom_request, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "forty-two");
  g_clear_object (&result);
  g_assert_cmpuint (n_destroyed, ==, 0);
  count_destroy (text);

  /* Dropped unfinished: freed with the reply, once. */
  n_destroyed = 0;
  for (guint i = 0; i < 5; i++)
    custom_request (actor, OUT_POINTER, ignore_result, &n);
  while (n < 5)
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (n_destroyed, ==, 5);

  /* Kept unfinished past the callback: freed when the last reference
   * goes. */
  n_destroyed = 0;
  custom_request (actor, OUT_POINTER, store_result, &result);
  iterate_until ((gpointer *) &result);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (n_destroyed, ==, 0);
  g_clear_object (&result);
  g_assert_cmpuint (n_destroyed, ==, 1);

  /* A double. */
  custom_request (actor, OUT_DOUBLE, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_cmpfloat (atomr_op_finish_double (actor, result, custom_request, &error), ==, 42.5);
  g_assert_no_error (error);
  g_clear_object (&result);

  /* An error built by the complete function, naming the bad value. */
  custom_request (actor, OUT_ERROR, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_null (atomr_op_finish_pointer (actor, result, custom_request, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "the value 42 is out of range");
  g_clear_error (&error);
  g_clear_object (&result);
}

/* Finishing checks the source tag (and the source object). */
static void
test_wrong_tag (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(AtomrDevice) device = atomr_device_new_host ();
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrActor) actor = NULL;
      g_autoptr(AtomrBuffer) buffer = NULL;
      g_autoptr(GAsyncResult) result = NULL;

      atomr_device_set_host_autocomplete (device, TRUE);
      actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
      buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 4, &error);
      atomr_actor_fill_async (actor, buffer, 1.0, NULL, store_result, &result);
      iterate_until ((gpointer *) &result);
      /* the reply of a fill, finished as a download */
      g_assert_null (atomr_actor_download_finish (actor, result, &error));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*CRITICAL*atomr_op_finish_pointer*atomr_reply_is_valid*");
}

/* ------------------------------------------------------------------ */
/* Reuse of replies never shows                                         */

static void
weak_notified (gpointer data, GObject *where_the_object_was)
{
  (*(guint *) data)++;
}

typedef struct {
  guint n_weak;
  guint n_called;
} Weak;

static void
weak_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Weak *w = user_data;

  /* A weak reference taken in the callback and never removed: its notify
   * must come, when the reply is freed. */
  g_object_weak_ref (G_OBJECT (result), weak_notified, &w->n_weak);
  g_assert_true (atomr_actor_fill_finish (ATOMR_ACTOR (source), result, NULL));
  w->n_called++;
}

static void
test_no_visible_reuse (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GBytes) expected = pattern_bytes (24, 40);
  GAsyncResult *kept[4] = { NULL };
  Weak w = { 0, 0 };

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = filled_buffer (device, actor, 24, 40);

  /* Results kept (unfinished) while more requests come and go: each keeps
   * its own outcome, none is handed to another request. */
  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      g_autoptr(GAsyncResult) other = NULL;

      atomr_actor_download_async (actor, buffer, NULL, store_result, &kept[i]);
      iterate_until ((gpointer *) &kept[i]);
      atomr_actor_fill_async (actor, buffer, 0.0, NULL, store_result, &other);
      iterate_until ((gpointer *) &other);
      g_assert_true (atomr_actor_fill_finish (actor, other, &error));
      for (guint j = 0; j < i; j++)
        g_assert_true (kept[j] != kept[i] && kept[j] != other);
      /* put the pattern back for the next download */
      g_clear_object (&other);
      atomr_actor_upload_async (actor, buffer, expected, NULL, store_result, &other);
      iterate_until ((gpointer *) &other);
      g_assert_true (atomr_actor_upload_finish (actor, other, &error));
    }
  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      g_autoptr(GBytes) bytes = atomr_actor_download_finish (actor, kept[i], &error);
      g_assert_no_error (error);
      g_assert_true (g_bytes_equal (bytes, expected));
      g_object_unref (kept[i]);
    }

  /* Weakly referenced results are freed (their notify runs), not kept. */
  for (guint i = 0; i < 6; i++)
    atomr_actor_fill_async (actor, buffer, 1.0, NULL, weak_reply, &w);
  while (w.n_called < 6)
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (w.n_weak, ==, 6);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reply/requester-context", test_requester_context);
  g_test_add_func ("/reply/never-inline", test_never_inline);
  g_test_add_func ("/reply/kept-result", test_kept_result);
  g_test_add_func ("/reply/dropped-result", test_dropped_result);
  g_test_add_func ("/reply/error-and-cancel", test_error_and_cancel);
  g_test_add_func ("/reply/many-replies", test_many_replies);
  g_test_add_func ("/reply/sync-wrappers", test_sync_wrappers);
  g_test_add_func ("/reply/reply-api", test_reply_api);
  g_test_add_func ("/reply/wrong-tag", test_wrong_tag);
  g_test_add_func ("/reply/no-visible-reuse", test_no_visible_reuse);
  return g_test_run ();
}
