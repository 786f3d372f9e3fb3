/* test-envelope.c — the envelope, on the host test device (no GPU)
 *
 * The host device runs the whole actor machinery — mailbox, validation,
 * hazard ordering, completion strategies, signals, replies, keep-alive,
 * supervision — with streams whose fences the test completes by hand.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core/atomr-stream-private.h"
#include "core/atomr-stamps-private.h"
#include "core-test-util.h"

typedef struct {
  AtomrDevice  *device;
  AtomrActor   *actor;
  GMainContext *context;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->context = g_main_context_ref_thread_default ();
  f->device = atomr_device_new_host ();
  f->actor = ATOMR_ACTOR (atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, f->device, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (f->actor);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  /* Everything must be released: no operation may outlive its reply. */
  g_assert_finalize_object (f->actor);
  g_object_unref (f->device);
  g_main_context_unref (f->context);
}

static void
test_dtype (void)
{
  g_autoptr(GBytes) h = atomr_dtype_pack (ATOMR_DTYPE_F16, 1.0, 0);
  g_autoptr(GBytes) b = atomr_dtype_pack (ATOMR_DTYPE_BF16, -2.0, 0);
  g_autoptr(GBytes) c = atomr_dtype_pack (ATOMR_DTYPE_C64, 1.5, -0.5);
  g_autoptr(GBytes) i8 = atomr_dtype_pack (ATOMR_DTYPE_I8, 300.0, 0);
  g_autoptr(GBytes) u32 = atomr_dtype_pack (ATOMR_DTYPE_U32, -4.0, 0);
  const guint16 *hv = g_bytes_get_data (h, NULL);
  const guint16 *bv = g_bytes_get_data (b, NULL);
  const float *cv = g_bytes_get_data (c, NULL);
  AtomrDtype dt;

  g_assert_cmpuint (atomr_dtype_get_size (ATOMR_DTYPE_F16), ==, 2);
  g_assert_cmpuint (atomr_dtype_get_size (ATOMR_DTYPE_C128), ==, 16);
  g_assert_cmpuint (atomr_dtype_get_size (ATOMR_DTYPE_U64), ==, 8);
  g_assert_cmpuint (atomr_dtype_get_size ((AtomrDtype) 99), ==, 0);
  g_assert_cmpstr (atomr_dtype_get_name (ATOMR_DTYPE_BF16), ==, "bf16");
  g_assert_true (atomr_dtype_from_name ("c128", &dt));
  g_assert_cmpint (dt, ==, ATOMR_DTYPE_C128);
  g_assert_false (atomr_dtype_from_name ("f128", &dt));
  g_assert_true (atomr_dtype_is_complex (ATOMR_DTYPE_C64));
  g_assert_false (atomr_dtype_is_floating (ATOMR_DTYPE_I32));

  g_assert_cmphex (hv[0], ==, 0x3c00);     /* 1.0 in IEEE half */
  g_assert_cmphex (bv[0], ==, 0xc000);     /* -2.0 in bfloat16 */
  g_assert_cmpfloat (cv[0], ==, 1.5f);
  g_assert_cmpfloat (cv[1], ==, -0.5f);
  g_assert_cmpint (*(const gint8 *) g_bytes_get_data (i8, NULL), ==, 127);   /* saturates */
  g_assert_cmpuint (*(const guint32 *) g_bytes_get_data (u32, NULL), ==, 0);
  {
    g_autoptr(GBytes) tiny = atomr_dtype_pack (ATOMR_DTYPE_F16, 1e-7, 0);  /* subnormal */
    g_assert_cmphex (*(const guint16 *) g_bytes_get_data (tiny, NULL), ==, 0x0002);
  }
  /* fp8: E4M3 (bias 7, saturating at 448) and E5M2 (a half's top byte) */
  {
    static const struct { AtomrDtype dtype; gdouble value; guint8 bits; } fp8[] = {
      { ATOMR_DTYPE_F8_E4M3, 1.0, 0x38 },
      { ATOMR_DTYPE_F8_E4M3, -2.0, 0xc0 },
      { ATOMR_DTYPE_F8_E4M3, 448.0, 0x7e },
      { ATOMR_DTYPE_F8_E4M3, 1e6, 0x7e },          /* saturates */
      { ATOMR_DTYPE_F8_E4M3, 0.015625, 0x08 },     /* 2^-6, smallest normal */
      { ATOMR_DTYPE_F8_E4M3, 0.001953125, 0x01 },  /* 2^-9, smallest subnormal */
      { ATOMR_DTYPE_F8_E4M3, 1.0625, 0x38 },       /* halfway: to even */
      { ATOMR_DTYPE_F8_E4M3, 1.1875, 0x3a },       /* halfway: to even (up) */
      { ATOMR_DTYPE_F8_E4M3, 0.0, 0x00 },
      { ATOMR_DTYPE_F8_E5M2, 1.0, 0x3c },
      { ATOMR_DTYPE_F8_E5M2, -2.0, 0xc0 },
      { ATOMR_DTYPE_F8_E5M2, 1.5, 0x3e },
      { ATOMR_DTYPE_F8_E5M2, 57344.0, 0x7b },
    };
    for (guint i = 0; i < G_N_ELEMENTS (fp8); i++)
      {
        g_autoptr(GBytes) v = atomr_dtype_pack (fp8[i].dtype, fp8[i].value, 0);
        g_assert_cmpuint (g_bytes_get_size (v), ==, 1);
        g_assert_cmphex (*(const guint8 *) g_bytes_get_data (v, NULL), ==, fp8[i].bits);
      }
    g_assert_true (atomr_dtype_is_floating (ATOMR_DTYPE_F8_E4M3));
    g_assert_cmpstr (atomr_dtype_get_name (ATOMR_DTYPE_F8_E5M2), ==, "f8e5m2");
  }
}

static void
test_no_driver (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = NULL;

  if (atomr_device_get_count () > 0)
    {
      g_test_skip ("a CUDA device is present");
      return;
    }
  device = atomr_device_get (0, &error);
  g_assert_null (device);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
  g_assert_cmpint (atomr_device_get_driver_version (), ==, 0);
}

static void
test_bad_arguments (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrBuffer) other = NULL;
  g_autoptr(GBytes) wrong = pattern_bytes (7, 1);
  g_autoptr(GAsyncResult) result = NULL;
  gint64 shape[] = { 4, 0 };
  gint64 good_shape[] = { 2, 8 };
  guint n_dims = 0;
  const gint64 *got;

  g_assert_null (atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 0, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "n_elements is 0"));
  g_clear_error (&error);

  g_assert_null (atomr_buffer_new (f->device, (AtomrDtype) 42, 4, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "42"));
  g_clear_error (&error);

  g_assert_null (atomr_buffer_new_with_shape (f->device, ATOMR_DTYPE_F32, shape, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "Dimension 1"));
  g_clear_error (&error);

  buffer = atomr_buffer_new_with_shape (f->device, ATOMR_DTYPE_F32, good_shape, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_buffer_get_n_elements (buffer), ==, 16);
  g_assert_cmpuint (atomr_buffer_get_byte_size (buffer), ==, 64);
  got = atomr_buffer_get_shape (buffer, &n_dims);
  g_assert_cmpuint (n_dims, ==, 2);
  g_assert_cmpint (got[1], ==, 8);
  g_assert_false (atomr_buffer_set_shape (buffer, shape, 1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Validation failures answer without enqueuing anything. */
  atomr_actor_upload_async (f->actor, buffer, wrong, NULL, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_false (atomr_actor_upload_finish (f->actor, result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "7 bytes"));
  g_assert_nonnull (strstr (error->message, "64 bytes"));
  g_clear_error (&error);
  g_clear_object (&result);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (atomr_actor_get_stream (f->actor)), ==, 0);

  atomr_actor_copy_async (f->actor, buffer, buffer, NULL, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_false (atomr_actor_copy_finish (f->actor, result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_clear_object (&result);

  other = atomr_buffer_new (f->device, ATOMR_DTYPE_F64, 16, &error);
  g_assert_no_error (error);
  atomr_actor_copy_async (f->actor, other, buffer, NULL, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_false (atomr_actor_copy_finish (f->actor, result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "128"));
}

typedef struct {
  GPtrArray *events;
  GThread   *thread;
} SignalLog;

static void
log_signal (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  SignalLog *log = user_data;
  g_ptr_array_add (log->events, g_strdup_printf ("%s:%s", (const gchar *) g_object_get_data (G_OBJECT (actor), "phase"),
                                                 atomr_launch_info_get_operation (info)));
}

static void
on_phase (AtomrActor *actor, AtomrLaunchInfo *info, gpointer phase)
{
  g_object_set_data (G_OBJECT (actor), "phase", phase);
}

static void
log_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SignalLog *log = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_actor_download_finish (ATOMR_ACTOR (source), result, &error);

  g_assert_no_error (error);
  g_assert_nonnull (bytes);
  g_ptr_array_add (log->events, g_strdup ("reply"));
  log->thread = g_thread_self ();
}

static void
test_signal_order (Fixture *f, gconstpointer data)
{
  SignalLog log = { g_ptr_array_new_with_free_func (g_free), NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_U8, 32, &error);
  const gchar *expected[] = { "before-enqueue:download", "after-enqueue:download",
                              "before-complete:download", "reply", "after-complete:download" };
  AtomrStream *stream = atomr_actor_get_stream (f->actor);

  g_signal_connect (f->actor, "before-enqueue", G_CALLBACK (on_phase), (gpointer) "before-enqueue");
  g_signal_connect (f->actor, "after-enqueue", G_CALLBACK (on_phase), (gpointer) "after-enqueue");
  g_signal_connect (f->actor, "before-complete", G_CALLBACK (on_phase), (gpointer) "before-complete");
  g_signal_connect (f->actor, "after-complete", G_CALLBACK (on_phase), (gpointer) "after-complete");
  g_signal_connect_after (f->actor, "before-enqueue", G_CALLBACK (log_signal), &log);
  g_signal_connect_after (f->actor, "after-enqueue", G_CALLBACK (log_signal), &log);
  g_signal_connect_after (f->actor, "before-complete", G_CALLBACK (log_signal), &log);
  g_signal_connect_after (f->actor, "after-complete", G_CALLBACK (log_signal), &log);

  atomr_actor_download_async (f->actor, buffer, NULL, log_reply, &log);
  iterate_pending ();
  /* Enqueued but the "GPU" has not finished: no completion yet. */
  g_assert_cmpuint (log.events->len, ==, 2);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 1);

  g_assert_cmpuint (atomr_host_stream_complete (stream, 1, CUDA_SUCCESS), ==, 1);
  while (log.events->len < 5)
    g_main_context_iteration (NULL, TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (g_ptr_array_index (log.events, i), ==, expected[i]);
  g_assert_true (log.thread == g_thread_self ());
  g_assert_cmpuint (atomr_actor_get_n_completed (f->actor), ==, 1);
  g_ptr_array_unref (log.events);
}

/* The actor lives on a context served by another thread; replies still
 * come back on the caller's thread-default context. */
typedef struct {
  GMainContext *context;
  GMainLoop    *loop;
  GThread      *thread;
  GThread      *enqueue_thread;
} ServiceThread;

static gpointer
service_main (gpointer data)
{
  ServiceThread *st = data;
  g_main_context_push_thread_default (st->context);
  g_main_loop_run (st->loop);
  g_main_context_pop_thread_default (st->context);
  return NULL;
}

static void
note_enqueue_thread (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  ServiceThread *st = user_data;
  st->enqueue_thread = g_thread_self ();
}

static void
reply_thread (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GThread **out = user_data;
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_actor_upload_finish (ATOMR_ACTOR (source), result, &error));
  g_assert_no_error (error);
  *out = g_thread_self ();
}

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
test_reply_context (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  ServiceThread st = { 0 };
  AtomrActor *actor;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GBytes) data = pattern_bytes (16, 3);
  GThread *replied = NULL;

  st.context = g_main_context_new ();
  st.loop = g_main_loop_new (st.context, FALSE);
  st.thread = g_thread_new ("actor-service", service_main, &st);
  atomr_device_set_host_autocomplete (device, TRUE);

  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, st.context, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_actor_get_context (actor) == st.context);
  g_signal_connect (actor, "before-enqueue", G_CALLBACK (note_enqueue_thread), &st);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_assert_no_error (error);

  atomr_actor_upload_async (actor, buffer, data, NULL, reply_thread, &replied);
  while (replied == NULL)
    g_main_context_iteration (NULL, TRUE);

  g_assert_true (st.enqueue_thread == st.thread);   /* mailbox served there */
  g_assert_true (replied == g_thread_self ());      /* reply came home */

  g_object_unref (actor);
  g_main_context_invoke (st.context, quit_loop, st.loop);
  g_thread_join (st.thread);
  g_main_loop_unref (st.loop);
  g_main_context_unref (st.context);
}

typedef struct
{
  GAsyncResult **results;
  guint          index;
  guint         *next;    /* the index the next reply must have */
} InOrder;

static void
store_in_order (GObject *source, GAsyncResult *result, gpointer user_data)
{
  InOrder *o = user_data;

  g_assert_cmpuint (o->index, ==, *o->next);
  (*o->next)++;
  o->results[o->index] = g_object_ref (result);
}

static void
note_enqueue_thread_only (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  g_atomic_pointer_set ((gpointer *) user_data, g_thread_self ());
}

/* Issue 17: an actor with a thread of its own.  The mailbox is served
 * there (the submitting thread only queues), replies come back to the
 * requester's context, a burst completes in order, the thread ends with
 * the actor — also when the actor's last reference drops while a request
 * is in flight — and own-thread with a context of the caller's is
 * refused, not aborted. */
static void
test_own_thread (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GBytes) data = pattern_bytes (64, 7);
  GAsyncResult *results[200] = { NULL };
  AtomrActor *actor;
  GThread *enqueued = NULL, *replied = NULL;
  InOrder order[G_N_ELEMENTS (results)];
  guint next = 0;
  gpointer weak;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = g_initable_new (ATOMR_TYPE_COPY_ACTOR, NULL, &error, "device", device, "own-thread", TRUE, NULL);
  g_assert_no_error (error);
  g_assert_true (atomr_actor_get_own_thread (actor));
  g_assert_nonnull (atomr_actor_get_context (actor));
  g_assert_false (atomr_actor_get_context (actor) == g_main_context_default ());
  g_signal_connect (actor, "before-enqueue", G_CALLBACK (note_enqueue_thread_only), &enqueued);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 64, &error);
  g_assert_no_error (error);

  atomr_actor_upload_async (actor, buffer, data, NULL, reply_thread, &replied);
  while (replied == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (replied == g_thread_self ());          /* the reply came home */
  g_assert_nonnull (g_atomic_pointer_get (&enqueued));
  g_assert_false (g_atomic_pointer_get (&enqueued) == g_thread_self ());   /* enqueued there */
  g_assert_cmpmem (atomr_buffer_get_host_data (buffer), 64, g_bytes_get_data (data, NULL), 64);

  /* A burst, replies in order of submission. */
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    {
      order[i].results = results;
      order[i].index = i;
      order[i].next = &next;
      atomr_actor_fill_async (actor, buffer, i, NULL, store_in_order, &order[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    {
      iterate_until ((gpointer *) &results[i]);
      g_assert_true (atomr_actor_fill_finish (actor, results[i], &error));
      g_assert_no_error (error);
      g_object_unref (results[i]);
    }
  g_assert_cmpuint (next, ==, G_N_ELEMENTS (results));
  g_assert_cmpuint (((const guint8 *) atomr_buffer_get_host_data (buffer))[5], ==, G_N_ELEMENTS (results) - 1);

  /* The last reference drops while a request is in flight: the request
   * keeps the actor, which goes (with its thread) after the reply. */
  replied = NULL;
  weak = actor;
  g_object_add_weak_pointer (G_OBJECT (actor), &weak);
  atomr_actor_upload_async (actor, buffer, data, NULL, reply_thread, &replied);
  g_object_unref (actor);
  while (replied == NULL)
    g_main_context_iteration (NULL, TRUE);
  for (gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
       g_atomic_pointer_get (&weak) != NULL && g_get_monotonic_time () < deadline; )
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_null (g_atomic_pointer_get (&weak));

  /* Refused with a context of the caller's. */
  {
    g_autoptr(GMainContext) context = g_main_context_new ();
    AtomrActor *refused = g_initable_new (ATOMR_TYPE_COPY_ACTOR, NULL, &error, "device", device,
                                          "context", context, "own-thread", TRUE, NULL);
    g_assert_null (refused);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "own-thread"));
    g_clear_error (&error);
  }

  /* A binding's bare constructor: a thread starts and ends, nothing crashes. */
  {
    AtomrActor *bare = g_object_new (ATOMR_TYPE_COPY_ACTOR, "own-thread", TRUE, NULL);
    g_assert_true (atomr_actor_get_own_thread (bare));
    g_object_unref (bare);
  }
}

typedef struct
{
  GMainContext *context;
  guint         depth;
  guint         enqueued;
} NestedPump;

static void
iterate_in_handler (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  NestedPump *np = user_data;

  np->enqueued++;
  if (np->depth++ == 0)
    while (g_main_context_iteration (np->context, FALSE))
      ;
  np->depth--;
}

/* A before-enqueue handler that iterates the actor's context runs a pump
 * inside the pump (the source may recurse), which takes the requests
 * queued behind the one being enqueued.  The outer pump must not run them
 * again: each is enqueued once and answered once, in order. */
static void
test_nested_pump (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  GAsyncResult *results[6] = { NULL };
  InOrder order[G_N_ELEMENTS (results)];
  NestedPump np = { context, 0, 0 };
  guint next = 0;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, context, &error);
  g_assert_no_error (error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_assert_no_error (error);
  g_signal_connect (actor, "before-enqueue", G_CALLBACK (iterate_in_handler), &np);

  /* Nobody iterates @context and it is not this thread's: all queue. */
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    {
      order[i] = (InOrder) { results, i, &next };
      atomr_actor_fill_async (actor, buffer, i, NULL, store_in_order, &order[i]);
    }
  while (g_main_context_iteration (context, FALSE))
    ;
  g_assert_cmpuint (np.enqueued, ==, G_N_ELEMENTS (results));
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    {
      while (results[i] == NULL)
        {
          g_main_context_iteration (context, FALSE);
          g_main_context_iteration (NULL, FALSE);
        }
      g_assert_true (atomr_actor_fill_finish (actor, results[i], &error));
      g_assert_no_error (error);
      g_object_unref (results[i]);
    }
  g_assert_cmpuint (next, ==, G_N_ELEMENTS (results));
  g_assert_cmpuint (((const guint8 *) atomr_buffer_get_host_data (buffer))[0], ==, G_N_ELEMENTS (results) - 1);
}

/* ATOMR_ENVELOPE_STAMPS: with stamping on, every request run inline on
 * its home thread passes each step of the submit path once, in order, and
 * its completion is counted; off, nothing is added. */
static void
test_envelope_stamps (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  const guint n = 50;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_assert_no_error (error);

  atomr_stamps_set_enabled (TRUE);
  atomr_stamps_reset ();
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GAsyncResult) result = NULL;

      atomr_actor_fill_async (actor, buffer, i, NULL, store_result, &result);
      iterate_until ((gpointer *) &result);
      g_assert_true (atomr_actor_fill_finish (actor, result, &error));
    }
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_NEW, ATOMR_STAMP_SUBMIT), ==, n);
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_SUBMIT, ATOMR_STAMP_MAILBOX), ==, n);
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_MAILBOX, ATOMR_STAMP_RUN), ==, n);   /* inline */
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_RUN, ATOMR_STAMP_ENTERED), ==, n);
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_ENTERED, ATOMR_STAMP_ENQUEUED), ==, n);
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_ENQUEUED, ATOMR_STAMP_RUN_END), ==, n);
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_RUN_END, ATOMR_STAMP_SUBMIT_END), ==, n);
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_DONE, ATOMR_STAMP_COMPLETED), ==, n);
  g_assert_cmpfloat (atomr_stamps_get_mean_ns (ATOMR_STAMP_SUBMIT, ATOMR_STAMP_MAILBOX), >, 0.0);

  atomr_stamps_set_enabled (FALSE);
  {
    g_autoptr(GAsyncResult) result = NULL;

    atomr_actor_fill_async (actor, buffer, 1, NULL, store_result, &result);
    iterate_until ((gpointer *) &result);
    g_assert_true (atomr_actor_fill_finish (actor, result, &error));
  }
  g_assert_cmpuint (atomr_stamps_get_count (ATOMR_STAMP_NEW, ATOMR_STAMP_SUBMIT), ==, n);
}

static void
test_cancellation (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 8, &error);
  g_autoptr(GBytes) bytes = pattern_bytes (32, 9);
  g_autoptr(GAsyncResult) result = NULL;
  AtomrStream *stream = atomr_actor_get_stream (f->actor);

  /* Cancelled before the mailbox reaches it: never enqueued. */
  g_cancellable_cancel (cancellable);
  atomr_actor_upload_async (f->actor, buffer, bytes, cancellable, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_false (atomr_actor_upload_finish (f->actor, result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 0);
  g_clear_error (&error);
  g_clear_object (&result);

  /* Cancelled after enqueue: the work is on the GPU and completes. */
  g_cancellable_reset (cancellable);
  atomr_actor_upload_async (f->actor, buffer, bytes, cancellable, store_result, &result);
  iterate_pending ();
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 1);
  g_cancellable_cancel (cancellable);
  atomr_host_stream_complete (stream, 1, CUDA_SUCCESS);
  iterate_until ((gpointer *) &result);
  g_assert_true (atomr_actor_upload_finish (f->actor, result, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (atomr_buffer_get_host_data (buffer), 32, g_bytes_get_data (bytes, NULL), 32);
}

static void
test_keep_alive (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_I32, 4, &error);
  g_autoptr(GBytes) bytes = pattern_bytes (16, 5);
  g_autoptr(GAsyncResult) result = NULL;
  gpointer weak = buffer;

  g_object_add_weak_pointer (G_OBJECT (buffer), &weak);
  atomr_actor_upload_async (f->actor, buffer, bytes, NULL, store_result, &result);
  g_object_unref (buffer);       /* the caller lets go at once */
  iterate_pending ();
  g_assert_nonnull (weak);       /* the operation keeps it alive */

  atomr_host_stream_complete (atomr_actor_get_stream (f->actor), 1, CUDA_SUCCESS);
  iterate_until ((gpointer *) &result);
  g_assert_true (atomr_actor_upload_finish (f->actor, result, &error));
  g_assert_null (weak);          /* released right after the reply */
}

static void
test_hazards (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) writer = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrActor) reader = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_U8, 64, &error);
  g_autoptr(GBytes) first = pattern_bytes (64, 11);
  g_autoptr(GBytes) second = pattern_bytes (64, 99);
  g_autoptr(GAsyncResult) w1 = NULL, r1 = NULL, w2 = NULL;
  g_autoptr(GBytes) got = NULL;
  AtomrStream *ws, *rs;

  g_assert_no_error (error);
  ws = atomr_actor_get_stream (writer);
  rs = atomr_actor_get_stream (reader);
  g_assert_true (ws != rs);

  /* Read after write on another stream: the reader's stream waits for
   * the writer's fence on the "GPU", the host never blocks. */
  atomr_actor_upload_async (writer, x, first, NULL, store_result, &w1);
  iterate_pending ();
  atomr_actor_download_async (reader, x, NULL, store_result, &r1);
  iterate_pending ();
  g_assert_cmpuint (rs->waits->len, ==, 1);
  g_assert_true (((AtomrFence *) g_ptr_array_index (rs->waits, 0))->stream == ws);
  /* The reader cannot finish before the writer. */
  g_assert_cmpuint (atomr_host_stream_complete (rs, 1, CUDA_SUCCESS), ==, 0);
  g_assert_cmpuint (atomr_host_stream_complete (ws, 1, CUDA_SUCCESS), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (rs, 1, CUDA_SUCCESS), ==, 1);
  iterate_until ((gpointer *) &w1);
  iterate_until ((gpointer *) &r1);
  got = atomr_actor_download_finish (reader, r1, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, first));

  /* Write after read: the writer waits for the reader. */
  g_clear_object (&r1);
  g_clear_pointer (&got, g_bytes_unref);
  atomr_actor_download_async (reader, x, NULL, store_result, &r1);
  iterate_pending ();
  atomr_actor_upload_async (writer, x, second, NULL, store_result, &w2);
  iterate_pending ();
  g_assert_cmpuint (ws->waits->len, >=, 1);
  g_assert_true (((AtomrFence *) g_ptr_array_index (ws->waits, ws->waits->len - 1))->stream == rs);
  g_assert_cmpuint (atomr_host_stream_complete (ws, 1, CUDA_SUCCESS), ==, 0);
  g_assert_cmpuint (atomr_host_stream_complete (rs, 1, CUDA_SUCCESS), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (ws, 1, CUDA_SUCCESS), ==, 1);
  iterate_until ((gpointer *) &r1);
  iterate_until ((gpointer *) &w2);
  g_assert_true (atomr_actor_upload_finish (writer, w2, &error));
  got = atomr_actor_download_finish (reader, r1, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, first));
  g_assert_cmpmem (atomr_buffer_get_host_data (x), 64, g_bytes_get_data (second, NULL), 64);
}

/* Requests to two actors submitted back to back, before either mailbox
 * runs: hazards follow the order of submission, not of dispatch. */
static void
test_program_order (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) writer = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrActor) reader = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_U8, 64, &error);
  g_autoptr(GBytes) first = pattern_bytes (64, 1);
  g_autoptr(GBytes) second = pattern_bytes (64, 2);
  g_autoptr(GAsyncResult) w1 = NULL, r1 = NULL, w2 = NULL;
  g_autoptr(GBytes) got = NULL;

  g_assert_no_error (error);
  atomr_actor_upload_async (writer, x, first, NULL, store_result, &w1);
  atomr_actor_download_async (reader, x, NULL, store_result, &r1);
  atomr_actor_upload_async (writer, x, second, NULL, store_result, &w2);
  iterate_pending ();

  /* Both writes were dispatched by the writer's mailbox in one go, yet the
   * second one waits (on the "GPU") for the read submitted before it. */
  g_assert_cmpuint (atomr_host_stream_get_n_pending (atomr_actor_get_stream (writer)), ==, 2);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (atomr_actor_get_stream (reader)), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (atomr_actor_get_stream (writer), 2, CUDA_SUCCESS), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (atomr_actor_get_stream (reader), 1, CUDA_SUCCESS), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (atomr_actor_get_stream (writer), 1, CUDA_SUCCESS), ==, 1);
  iterate_until ((gpointer *) &w2);
  iterate_until ((gpointer *) &r1);
  got = atomr_actor_download_finish (reader, r1, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, first));
  g_assert_cmpmem (atomr_buffer_get_host_data (x), 64, g_bytes_get_data (second, NULL), 64);
}

/* A request that fails before enqueue stands for what it followed: a
 * later writer still waits for the real write before it.  A reader of its
 * output fails instead of reading stale data. */
static void
test_failed_link (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) a = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrActor) b = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_autoptr(GBytes) data = pattern_bytes (16, 5);
  g_autoptr(GCancellable) cancelled = g_cancellable_new ();
  g_autoptr(GAsyncResult) w1 = NULL, w2 = NULL, r = NULL, w3 = NULL;
  g_autoptr(GBytes) got = NULL;
  AtomrStream *bs;

  g_cancellable_cancel (cancelled);
  atomr_actor_upload_async (a, x, data, NULL, store_result, &w1);           /* real write */
  atomr_actor_upload_async (a, x, data, cancelled, store_result, &w2);      /* never enqueued */
  atomr_actor_download_async (b, x, NULL, store_result, &r);                /* reads w2's output */
  atomr_actor_upload_async (b, x, data, NULL, store_result, &w3);           /* must wait for w1 */
  iterate_until ((gpointer *) &w2);
  iterate_until ((gpointer *) &r);
  iterate_pending ();
  got = atomr_actor_download_finish (b, r, &error);
  g_assert_null (got);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_DEPENDENCY_FAILED);
  g_assert_nonnull (strstr (error->message, "upload #2 on"));
  g_assert_nonnull (strstr (error->message, "cancelled"));
  g_clear_error (&error);

  bs = atomr_actor_get_stream (b);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (bs), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (bs, 1, CUDA_SUCCESS), ==, 0);
  atomr_host_stream_complete (atomr_actor_get_stream (a), 1, CUDA_SUCCESS);
  g_assert_cmpuint (atomr_host_stream_complete (bs, 1, CUDA_SUCCESS), ==, 1);
  iterate_until ((gpointer *) &w3);
  iterate_until ((gpointer *) &w1);
  g_assert_true (atomr_actor_upload_finish (b, w3, &error));
  g_assert_false (atomr_actor_upload_finish (a, w2, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* An actor's newer read stands for its older ones, also when it is
 * cancelled: a later writer still waits for the read that did run. */
static void
test_reader_replacement (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) reader = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrActor) writer = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_autoptr(GBytes) data = pattern_bytes (16, 3);
  g_autoptr(GCancellable) cancelled = g_cancellable_new ();
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, w = NULL;
  AtomrStream *rs, *ws;

  g_cancellable_cancel (cancelled);
  atomr_actor_download_async (reader, x, NULL, store_result, &r1);        /* runs */
  atomr_actor_download_async (reader, x, cancelled, store_result, &r2);   /* replaces r1, never runs */
  atomr_actor_upload_async (writer, x, data, NULL, store_result, &w);     /* must wait for r1 */
  iterate_until ((gpointer *) &r2);
  iterate_pending ();
  rs = atomr_actor_get_stream (reader);
  ws = atomr_actor_get_stream (writer);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (rs), ==, 1);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (ws), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (ws, 1, CUDA_SUCCESS), ==, 0);
  g_assert_cmpuint (atomr_host_stream_complete (rs, 1, CUDA_SUCCESS), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (ws, 1, CUDA_SUCCESS), ==, 1);
  iterate_until ((gpointer *) &r1);
  iterate_until ((gpointer *) &w);
  g_assert_true (atomr_actor_upload_finish (writer, w, &error));
  g_assert_no_error (error);

  /* Many reads in flight from one actor cost one entry, not one each; and
   * operations enqueued together share fences, 32 to a fence: 1000 reads
   * dispatched in one pass record 33 fences (the first, with nothing in
   * flight, gets its own: the latency case, /envelope/lone-request-fenced). */
  for (guint i = 0; i < 1000; i++)
    atomr_actor_download_async (reader, x, NULL, NULL, NULL);
  iterate_pending ();
  g_assert_cmpuint (atomr_host_stream_get_n_pending (rs), ==, 33);
  atomr_host_stream_complete (rs, G_MAXUINT, CUDA_SUCCESS);
  while (atomr_actor_get_n_completed (reader) < 1001)
    g_main_context_iteration (NULL, TRUE);
}

/* A request's storage in its operation is aligned as malloc aligns (16
 * bytes), for every size and for recycled operations too: cuBLAS's Z
 * routines read a cuDoubleComplex scalar kept there with aligned loads
 * (cublasZsyrk crashed on the GPU when a field added to AtomrOp left it
 * at 8 mod 16). */
static void
test_request_storage_aligned (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);

  g_assert_no_error (error);
  for (guint round = 0; round < 3; round++)
    for (gsize size = 8; size <= 512; size += 24)
      {
        AtomrOp *op = atomr_op_new (actor, "aligned", test_request_storage_aligned, NULL, NULL, NULL);
        gpointer data = atomr_op_alloc_data (op, size, NULL);

        g_assert_cmpuint ((guintptr) data % 16, ==, 0);
        memset (data, 0xab, size);
        atomr_op_fail (op, g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "test"));
      }
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* A request made on the actor's home thread with nothing in flight is
 * enqueued and fenced inside its _async call: its completion does not
 * wait for a round of the main loop to record the fence (the latency of
 * a lone request).  A second one, made while the first is in flight,
 * waits to share the next fence. */
static void
test_lone_request_fenced (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error);
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  AtomrStream *stream;

  g_assert_no_error (error);
  /* A first request makes the stream; once answered nothing is in flight. */
  atomr_actor_download_async (actor, x, NULL, store_result, &r1);
  iterate_pending ();
  stream = atomr_actor_get_stream (actor);
  atomr_host_stream_complete (stream, G_MAXUINT, CUDA_SUCCESS);
  iterate_until ((gpointer *) &r1);
  g_clear_object (&r1);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 0);

  atomr_actor_download_async (actor, x, NULL, store_result, &r1);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 1);   /* fenced already */
  atomr_actor_download_async (actor, x, NULL, store_result, &r2);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 1);   /* shares the next */
  iterate_pending ();
  g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), ==, 2);
  atomr_host_stream_complete (stream, G_MAXUINT, CUDA_SUCCESS);
  iterate_until ((gpointer *) &r1);
  iterate_until ((gpointer *) &r2);
}

/* Several threads submit to two actors (served by different threads)
 * sharing buffers: every request succeeds and completes — no lost wake-up,
 * no dependency cycle, no deadlock between mailboxes. */
typedef struct {
  AtomrActor  *a, *b;
  AtomrBuffer *shared;
  guint        seed;
  gint         done;
} Hammer;

static void
count_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_reply_propagate_boolean (result, &error));
  g_assert_no_error (error);
  g_atomic_int_inc ((gint *) user_data);
}

static gpointer
hammer_main (gpointer data)
{
  Hammer *h = data;
  g_autoptr(GMainContext) ctx = g_main_context_new ();
  g_autoptr(AtomrBuffer) mine = atomr_buffer_new (atomr_actor_get_device (h->a), ATOMR_DTYPE_U8, 64, NULL);
  g_autoptr(GBytes) bytes = pattern_bytes (64, (guint8) h->seed);
  gint local = 0;

  g_main_context_push_thread_default (ctx);
  for (guint i = 0; i < 50; i++)
    {
      AtomrActor *x = (i + h->seed) % 2 ? h->a : h->b;
      AtomrActor *y = x == h->a ? h->b : h->a;
      atomr_actor_upload_async (x, mine, bytes, NULL, count_done, &local);
      atomr_actor_copy_async (y, h->shared, mine, NULL, count_done, &local);
      atomr_actor_fill_async (x, mine, (gdouble) i, NULL, count_done, &local);
    }
  while (g_atomic_int_get (&local) < 150)
    g_main_context_iteration (ctx, TRUE);
  g_main_context_pop_thread_default (ctx);
  g_atomic_int_inc (&h->done);
  return NULL;
}

static void
test_threads (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  ServiceThread st = { 0 };
  Hammer h[4];
  GThread *threads[4];
  AtomrActor *a, *b;
  AtomrBuffer *shared;

  atomr_device_set_host_autocomplete (device, TRUE);
  st.context = g_main_context_new ();
  st.loop = g_main_loop_new (st.context, FALSE);
  st.thread = g_thread_new ("actor-service", service_main, &st);
  a = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, st.context, &error);
  b = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);   /* ours */
  shared = atomr_buffer_new (device, ATOMR_DTYPE_U8, 64, &error);
  g_assert_no_error (error);

  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    {
      h[t] = (Hammer) { a, b, shared, t, 0 };
      threads[t] = g_thread_new ("hammer", hammer_main, &h[t]);
    }
  /* Actor b lives on this thread's context: serve it until all are done. */
  for (;;)
    {
      guint done = 0;
      for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
        done += g_atomic_int_get (&h[t].done);
      if (done == G_N_ELEMENTS (threads))
        break;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (100);
    }
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    g_thread_join (threads[t]);
  g_assert_cmpuint (atomr_actor_get_n_completed (a) + atomr_actor_get_n_completed (b), ==, 4 * 150);

  g_object_unref (shared);
  g_object_unref (b);
  g_object_unref (a);
  g_main_context_invoke (st.context, quit_loop, st.loop);
  g_thread_join (st.thread);
  g_main_loop_unref (st.loop);
  g_main_context_unref (st.context);
}

static void
on_rebuilt (AtomrDevice *device, guint generation, gpointer user_data)
{
  *(guint *) user_data = generation;
}

static void
test_stale_after_reset (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) old = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  g_autoptr(AtomrBuffer) fresh = NULL;
  g_autoptr(GBytes) bytes = pattern_bytes (16, 2);
  g_autoptr(GAsyncResult) inflight = NULL, result = NULL;
  guint old_stream = atomr_actor_get_stream_id (f->actor);
  guint rebuilt = 0;

  g_signal_connect (f->device, "context-rebuilt", G_CALLBACK (on_rebuilt), &rebuilt);
  g_assert_false (atomr_buffer_is_stale (old));

  /* An operation in flight when the context is rebuilt fails as stale. */
  atomr_actor_upload_async (f->actor, old, bytes, NULL, store_result, &inflight);
  iterate_pending ();
  g_assert_true (atomr_device_reset (f->device, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_device_get_generation (f->device), ==, 2);
  g_assert_cmpuint (rebuilt, ==, 2);
  iterate_until ((gpointer *) &inflight);
  g_assert_false (atomr_actor_upload_finish (f->actor, inflight, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE);
  g_assert_nonnull (strstr (error->message, "generation 1 -> 2"));
  g_clear_error (&error);

  /* A buffer of the old generation fails fast. */
  g_assert_true (atomr_buffer_is_stale (old));
  atomr_actor_upload_async (f->actor, old, bytes, NULL, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_false (atomr_actor_upload_finish (f->actor, result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE);
  g_assert_nonnull (strstr (error->message, "generation 1"));
  g_clear_error (&error);
  g_clear_object (&result);

  /* The actor itself moves on to a fresh stream. */
  fresh = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  g_assert_no_error (error);
  atomr_actor_upload_async (f->actor, fresh, bytes, NULL, store_result, &result);
  iterate_pending ();
  g_assert_cmpuint (atomr_actor_get_stream_id (f->actor), !=, old_stream);
  atomr_host_stream_complete (atomr_actor_get_stream (f->actor), 1, CUDA_SUCCESS);
  iterate_until ((gpointer *) &result);
  g_assert_true (atomr_actor_upload_finish (f->actor, result, &error));
  g_assert_no_error (error);
}

static void
test_poisoned (gconstpointer data)
{
  AtomrSupervisorPolicy policy = GPOINTER_TO_INT (data);
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) bytes = pattern_bytes (16, 4);
  gint64 deadline;

  atomr_device_set_supervisor_policy (device, policy);
  atomr_actor_download_async (actor, buffer, NULL, store_result, &result);
  iterate_pending ();
  /* The "GPU" reports a sticky error: an illegal address. */
  atomr_host_stream_complete (atomr_actor_get_stream (actor), 1, CUDA_ERROR_ILLEGAL_ADDRESS);
  iterate_until ((gpointer *) &result);
  g_assert_null (atomr_actor_download_finish (actor, result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_CONTEXT_POISONED);
  g_clear_error (&error);
  g_clear_object (&result);

  /* The supervisor acts on the device thread. */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  switch (policy)
    {
    case ATOMR_SUPERVISOR_RESTART:
      while (atomr_device_get_generation (device) == 1 && g_get_monotonic_time () < deadline)
        g_usleep (1000);
      g_assert_cmpuint (atomr_device_get_generation (device), ==, 2);
      g_assert_cmpint (atomr_device_get_state (device), ==, ATOMR_DEVICE_STATE_READY);
      break;
    case ATOMR_SUPERVISOR_STOP:
      while (atomr_device_get_state (device) != ATOMR_DEVICE_STATE_STOPPED &&
             g_get_monotonic_time () < deadline)
        g_usleep (1000);
      g_assert_cmpint (atomr_device_get_state (device), ==, ATOMR_DEVICE_STATE_STOPPED);
      g_assert_null (atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE);
      g_clear_error (&error);
      g_assert_false (atomr_device_reset (device, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE);
      return;
    case ATOMR_SUPERVISOR_ESCALATE:
    default:
      g_usleep (50000);
      g_assert_cmpint (atomr_device_get_state (device), ==, ATOMR_DEVICE_STATE_POISONED);
      g_assert_null (atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_CONTEXT_POISONED);
      g_clear_error (&error);
      g_assert_true (atomr_device_reset (device, &error));
      g_assert_no_error (error);
      break;
    }

  /* Afterwards the device takes work again; old buffers are stale. */
  g_clear_object (&buffer);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error);
  g_assert_no_error (error);
  atomr_device_set_host_autocomplete (device, TRUE);
  atomr_actor_upload_async (actor, buffer, bytes, NULL, store_result, &result);
  iterate_until ((gpointer *) &result);
  g_assert_true (atomr_actor_upload_finish (actor, result, &error));
  g_assert_no_error (error);
}

/* A thread that plays the GPU: completes the actor's fences as they come. */
typedef struct {
  AtomrActor *actor;
  gint        stop;
} FakeGpu;

static gpointer
fake_gpu_main (gpointer data)
{
  FakeGpu *gpu = data;
  while (!g_atomic_int_get (&gpu->stop))
    {
      AtomrStream *stream = atomr_actor_get_stream (gpu->actor);
      if (stream)
        atomr_host_stream_complete (stream, G_MAXUINT, CUDA_SUCCESS);
      g_usleep (200);
    }
  return NULL;
}

static void
test_completion_modes (gconstpointer data)
{
  AtomrCompletionMode mode = GPOINTER_TO_INT (data);
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  AtomrActor *actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_autoptr(AtomrBuffer) a = atomr_buffer_new (device, ATOMR_DTYPE_U8, 256, &error);
  g_autoptr(AtomrBuffer) b = atomr_buffer_new (device, ATOMR_DTYPE_U8, 256, &error);
  g_autoptr(GBytes) bytes = pattern_bytes (256, 77);
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, r3 = NULL;
  g_autoptr(GBytes) got = NULL;
  FakeGpu gpu = { actor, 0 };
  GThread *thread;

  g_assert_no_error (error);
  atomr_actor_set_completion_mode (actor, mode);
  atomr_actor_set_spin_usec (actor, 50);
  g_assert_cmpint (atomr_actor_get_completion_mode (actor), ==, mode);
  thread = g_thread_new ("fake-gpu", fake_gpu_main, &gpu);

  atomr_actor_upload_async (actor, a, bytes, NULL, store_result, &r1);
  atomr_actor_copy_async (actor, b, a, NULL, store_result, &r2);
  atomr_actor_download_async (actor, b, NULL, store_result, &r3);
  iterate_until ((gpointer *) &r3);
  iterate_until ((gpointer *) &r1);
  iterate_until ((gpointer *) &r2);
  g_assert_true (atomr_actor_upload_finish (actor, r1, &error));
  g_assert_true (atomr_actor_copy_finish (actor, r2, &error));
  got = atomr_actor_download_finish (actor, r3, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, bytes));

  g_atomic_int_set (&gpu.stop, 1);
  g_thread_join (thread);
  /* Results hold their source object: drop them, then nothing else may
   * keep the actor alive (no waiter, no host function, no operation). */
  g_clear_object (&r1);
  g_clear_object (&r2);
  g_clear_object (&r3);
  g_assert_finalize_object (actor);
}

static void
test_fill_and_sync (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  AtomrDtype dtypes[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F32, ATOMR_DTYPE_F64,
                          ATOMR_DTYPE_C64, ATOMR_DTYPE_C128, ATOMR_DTYPE_I8, ATOMR_DTYPE_U8,
                          ATOMR_DTYPE_I32, ATOMR_DTYPE_U32, ATOMR_DTYPE_I64, ATOMR_DTYPE_U64 };

  atomr_device_set_host_autocomplete (device, TRUE);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, dtypes[d], 33, &error);
      g_autoptr(GBytes) expected = atomr_dtype_pack (dtypes[d], 3.0, 0.0);
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(GBytes) got = NULL;
      AtomrSync sync;
      const guint8 *p;
      gsize size, elem = atomr_dtype_get_size (dtypes[d]);

      atomr_actor_fill_async (actor, buffer, 3.0, NULL, store_result, &result);
      iterate_until ((gpointer *) &result);
      g_assert_true (atomr_actor_fill_finish (actor, result, &error));
      g_assert_no_error (error);

      /* the blocking convenience, on the actor's own context */
      atomr_sync_begin (&sync, actor);
      atomr_actor_download_async (actor, buffer, NULL, atomr_sync_callback, &sync);
      got = atomr_actor_download_finish (actor, atomr_sync_wait (&sync), &error);
      atomr_sync_end (&sync);
      g_assert_no_error (error);
      p = g_bytes_get_data (got, &size);
      g_assert_cmpuint (size, ==, 33 * elem);
      for (guint i = 0; i < 33; i++)
        g_assert_cmpmem (p + i * elem, elem, g_bytes_get_data (expected, NULL), elem);
    }
}

/* A blocking call waits behind requests of actors nobody drives meanwhile:
 * made without a callback on the default context, then a _sync whose actor
 * (the device's default) runs on the device thread.  The _sync must drive
 * them — a chain of two here — not wait forever (test-gpu-graph hung like
 * this after 50 fire-and-forget replays).  In a subprocess: the old code
 * hangs, and the trap's time limit turns that into a failure. */
static void
test_sync_drives_dependencies (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(AtomrDevice) device = atomr_device_new_host ();
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrActor) a1 = NULL;
      g_autoptr(AtomrActor) a2 = NULL;
      g_autoptr(AtomrBuffer) b1 = NULL;
      g_autoptr(AtomrBuffer) b2 = NULL;
      g_autoptr(GBytes) got = NULL;
      const gint32 *v;

      atomr_device_set_host_autocomplete (device, TRUE);
      a1 = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
      g_assert_no_error (error);
      a2 = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
      g_assert_no_error (error);
      b1 = atomr_buffer_new (device, ATOMR_DTYPE_I32, 16, &error);
      g_assert_no_error (error);
      b2 = atomr_buffer_new (device, ATOMR_DTYPE_I32, 16, &error);
      g_assert_no_error (error);

      /* Fire and forget; nobody iterates the default context after. */
      for (guint i = 0; i < 50; i++)
        atomr_actor_fill_async (a1, b1, (gdouble) i, NULL, NULL, NULL);
      atomr_actor_copy_async (a2, b2, b1, NULL, NULL, NULL);

      got = atomr_buffer_download_sync (b2, NULL, &error);
      g_assert_no_error (error);
      v = g_bytes_get_data (got, NULL);
      for (guint i = 0; i < 16; i++)
        g_assert_cmpint (v[i], ==, 49);
      return;
    }
  g_test_trap_subprocess (NULL, 20 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* Transfers above the staging chunk take the streamed path (no pinned copy
 * on the caller's thread); on the host device they must still round-trip
 * exactly, the odd tail included. */
static void
test_large_transfers (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  gsize size = (40u << 20) + 3;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autofree guint8 *data = g_malloc (size);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GBytes) got = NULL;

  atomr_device_set_host_autocomplete (device, TRUE);
  for (gsize i = 0; i < size; i++)
    data[i] = (guint8) (i * 2654435761u >> 13);
  bytes = g_bytes_new (data, size);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, size, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  got = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, bytes));
}

static void
test_buffer_conveniences (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GBytes) bytes = pattern_bytes (40, 8);
  g_autoptr(GBytes) got = NULL;

  /* The device's default actor lives on the device thread. */
  atomr_device_set_host_autocomplete (device, TRUE);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_I32, 10, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  got = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, bytes));
  g_assert_true (atomr_buffer_fill_sync (buffer, -5, NULL, &error));
  g_clear_pointer (&got, g_bytes_unref);
  got = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_cmpint (((const gint32 *) g_bytes_get_data (got, NULL))[9], ==, -5);
}

static void
test_trace_recorder (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (3);
  g_autoptr(AtomrTraceRecorder) loaded = atomr_trace_recorder_new (100);
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GPtrArray) again = NULL;
  g_autofree gchar *json = NULL;
  g_autofree gchar *path = NULL;

  g_assert_cmpuint (atomr_trace_recorder_get_n_records (recorder), ==, 0);
  atomr_trace_recorder_add_actor (recorder, f->actor);
  atomr_actor_set_timing (f->actor, TRUE);
  atomr_device_set_host_autocomplete (f->device, TRUE);
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      atomr_actor_fill_async (f->actor, buffer, i, NULL, store_result, &result);
      iterate_until ((gpointer *) &result);
      g_assert_true (atomr_actor_fill_finish (f->actor, result, &error));
    }
  /* A failing operation is recorded with its error. */
  {
    g_autoptr(GAsyncResult) result = NULL;
    atomr_device_set_host_autocomplete (f->device, FALSE);
    atomr_actor_download_async (f->actor, buffer, NULL, store_result, &result);
    iterate_pending ();
    atomr_host_stream_complete (atomr_actor_get_stream (f->actor), 1, CUDA_ERROR_INVALID_VALUE);
    iterate_until ((gpointer *) &result);
    g_assert_null (atomr_actor_download_finish (f->actor, result, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }

  g_assert_cmpuint (atomr_trace_recorder_get_n_records (recorder), ==, 3);
  g_assert_cmpuint (atomr_trace_recorder_get_n_dropped (recorder), ==, 3);
  records = atomr_trace_recorder_get_records (recorder);
  g_assert_cmpstr (atomr_launch_info_get_operation (g_ptr_array_index (records, 0)), ==, "fill");
  /* Sequence numbers are process-wide now; this actor ran alone. */
  g_assert_cmpuint (atomr_launch_info_get_sequence (g_ptr_array_index (records, 1)), ==,
                    atomr_launch_info_get_sequence (g_ptr_array_index (records, 0)) + 1);
  g_assert_cmpuint (atomr_launch_info_get_sequence (g_ptr_array_index (records, 2)), ==,
                    atomr_launch_info_get_sequence (g_ptr_array_index (records, 0)) + 2);
  g_assert_cmpstr (atomr_launch_info_get_operation (g_ptr_array_index (records, 2)), ==, "download");
  g_assert_nonnull (atomr_launch_info_get_error (g_ptr_array_index (records, 2)));
  g_assert_cmpint (atomr_launch_info_get_complete_time (g_ptr_array_index (records, 1)), >=,
                   atomr_launch_info_get_enqueue_time (g_ptr_array_index (records, 1)));

  json = atomr_trace_recorder_to_json (recorder);
  g_assert_nonnull (strstr (json, "\"traceEvents\""));
  /* The host test device has no timing events: host lifecycle only. */
  g_assert_nonnull (strstr (json, "\"ph\":\"b\""));
  g_assert_nonnull (strstr (json, "thread_name"));

  path = g_build_filename (g_get_tmp_dir (), "atomr-test-trace.json", NULL);
  g_assert_true (atomr_trace_recorder_save (recorder, path, &error));
  g_assert_true (atomr_trace_recorder_load (loaded, path, &error));
  g_assert_no_error (error);
  g_unlink (path);
  again = atomr_trace_recorder_get_records (loaded);
  g_assert_cmpuint (again->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      AtomrLaunchInfo *x = g_ptr_array_index (records, i), *y = g_ptr_array_index (again, i);
      g_assert_cmpstr (atomr_launch_info_get_actor_name (x), ==, atomr_launch_info_get_actor_name (y));
      g_assert_cmpstr (atomr_launch_info_get_library (x), ==, atomr_launch_info_get_library (y));
      g_assert_cmpuint (atomr_launch_info_get_sequence (x), ==, atomr_launch_info_get_sequence (y));
      g_assert_cmpuint (atomr_launch_info_get_stream_id (x), ==, atomr_launch_info_get_stream_id (y));
      g_assert_cmpint (atomr_launch_info_get_complete_time (x), ==, atomr_launch_info_get_complete_time (y));
      g_assert_true ((atomr_launch_info_get_error (x) == NULL) == (atomr_launch_info_get_error (y) == NULL));
    }

  /* Malformed input leaves the records as they were. */
  g_assert_false (atomr_trace_recorder_load_json (loaded, "{\"traceEvents\": 3}", -1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (atomr_trace_recorder_load_json (loaded, "{not json", -1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (atomr_trace_recorder_load_json (loaded, "[{\"ph\":\"X\",\"name\":\"x\",\"ts\":-5}]", -1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "event 0"));
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (loaded), ==, 3);

  atomr_trace_recorder_remove_actor (recorder, f->actor);
  atomr_trace_recorder_clear (recorder);
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (recorder), ==, 0);
}

typedef struct {
  AtomrActor *actor;
  guint       n_replied;
  guint       order[400];
} InFlight;

static void
on_in_flight_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  InFlight *st = ((gpointer *) user_data)[0];
  guint index = GPOINTER_TO_UINT (((gpointer *) user_data)[1]);

  g_assert_true (atomr_actor_fill_finish (st->actor, result, NULL));
  g_assert_cmpuint (st->n_replied, <, G_N_ELEMENTS (st->order));
  st->order[st->n_replied++] = index;
  g_free (user_data);
}

/* Hundreds of requests in flight, completed a fence at a time while more
 * are submitted: the in-flight queue (a ring since issue 17) grows while
 * its head is in the middle and wraps around, and the replies still come
 * in submission order, each once. */
static void
test_many_in_flight (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  AtomrStream *stream;
  InFlight st = { f->actor, 0, { 0 } };
  guint submitted = 0;

  g_assert_no_error (error);
  /* Polled by the context: a fence the test completes is seen by the next
   * iteration (adaptive mode hands slow heads to the completion thread,
   * which answers later: under valgrind, often). */
  atomr_actor_set_completion_mode (f->actor, ATOMR_COMPLETION_POLL);
  for (guint round = 0; round < 8; round++)
    {
      for (guint k = 0; k < 50; k++, submitted++)
        {
          gpointer *ud = g_new (gpointer, 2);
          ud[0] = &st;
          ud[1] = GUINT_TO_POINTER (submitted);
          atomr_actor_fill_async (f->actor, buffer, (gdouble) submitted, NULL, on_in_flight_reply, ud);
        }
      iterate_pending ();
      stream = atomr_actor_get_stream (f->actor);
      /* Complete a few fences only: the rest stays in flight. */
      atomr_host_stream_complete (stream, 1, CUDA_SUCCESS);
      iterate_pending ();
    }
  g_assert_cmpuint (st.n_replied, <, submitted);
  stream = atomr_actor_get_stream (f->actor);
  while (st.n_replied < submitted)
    {
      g_assert_cmpuint (atomr_host_stream_get_n_pending (stream), >, 0);
      atomr_host_stream_complete (stream, 1, CUDA_SUCCESS);
      iterate_pending ();
    }
  g_assert_cmpuint (st.n_replied, ==, 400);
  for (guint i = 0; i < st.n_replied; i++)
    g_assert_cmpuint (st.order[i], ==, i);
}

typedef struct {
  Fixture *f;
  guint    n_enqueued;   /* atomic */
  GThread *last_thread;
} HomeState;

static void
count_enqueue (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  HomeState *st = user_data;
  st->last_thread = g_thread_self ();
  g_atomic_int_inc (&st->n_enqueued);
}

static gpointer
submit_from_worker (gpointer data)
{
  HomeState *st = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (st->f->device, ATOMR_DTYPE_F32, 4, &error);

  /* Not the actor's home: this thread only falls back to the global
   * default context.  The request is queued for the main thread. */
  atomr_actor_fill_async (st->f->actor, buffer, 2.0, NULL, NULL, NULL);
  return GUINT_TO_POINTER (g_atomic_int_get (&st->n_enqueued));
}

/* A request made on the actor's home thread while nobody iterates its
 * context is enqueued inside the _async call (issue 17: a pipeline reaches
 * the GPU while it is being submitted); from another thread it waits in
 * the mailbox for the home thread, as before. */
static void
test_home_thread_enqueues (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  g_autoptr(GAsyncResult) result = NULL;
  HomeState st = { f, 0, NULL };
  AtomrStream *stream;
  GThread *worker;
  gulong id;

  g_assert_no_error (error);
  id = g_signal_connect (f->actor, "after-enqueue", G_CALLBACK (count_enqueue), &st);
  g_assert_false (g_main_context_is_owner (f->context));
  atomr_actor_fill_async (f->actor, buffer, 1.0, NULL, NULL, NULL);
  g_assert_cmpuint (g_atomic_int_get (&st.n_enqueued), ==, 1);
  g_assert_true (st.last_thread == g_thread_self ());
  atomr_actor_fill_async (f->actor, buffer, 1.0, NULL, store_result, &result);
  g_assert_cmpuint (g_atomic_int_get (&st.n_enqueued), ==, 2);
  g_assert_null (result);          /* the reply still comes from the loop */
  g_assert_false (g_main_context_is_owner (f->context));   /* given back */

  worker = g_thread_new ("not-home", submit_from_worker, &st);
  g_assert_cmpuint (GPOINTER_TO_UINT (g_thread_join (worker)), ==, 2);
  g_assert_cmpuint (g_atomic_int_get (&st.n_enqueued), ==, 2);
  iterate_pending ();               /* the main thread serves the mailbox */
  g_assert_cmpuint (g_atomic_int_get (&st.n_enqueued), ==, 3);
  g_assert_true (st.last_thread == g_thread_self ());

  stream = atomr_actor_get_stream (f->actor);
  while (atomr_host_stream_get_n_pending (stream) > 0)
    {
      atomr_host_stream_complete (stream, 1, CUDA_SUCCESS);
      iterate_pending ();
    }
  iterate_until ((gpointer *) &result);
  g_assert_true (atomr_actor_fill_finish (f->actor, result, &error));
  g_assert_no_error (error);
  g_signal_handler_disconnect (f->actor, id);
}

/* A burst submitted from the actor's home thread without iterating: the
 * requests nobody waits for are completed (and their memory reused)
 * while the burst goes on, once their batch's fence passed, instead of
 * all at the end (issue 17: 10 000 such requests were megabytes of cold
 * memory).  Nothing of the application's runs inside the _async call: a
 * request with a reply stops that, and is answered by the loop only. */
static void
test_burst_completes_quiet (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  g_autoptr(GAsyncResult) result = NULL;
  AtomrStream *stream;
  guint64 completed = 0, in_flight = 0;

  g_assert_no_error (error);
  atomr_actor_set_completion_mode (f->actor, ATOMR_COMPLETION_POLL);
  for (guint k = 0; k < 400; k++)
    {
      if (k == 300)
        atomr_actor_fill_async (f->actor, buffer, 3.0, NULL, store_result, &result);
      else
        atomr_actor_fill_async (f->actor, buffer, 1.0, NULL, NULL, NULL);
      /* The GPU keeps up: every fence recorded so far passes. */
      stream = atomr_actor_get_stream (f->actor);
      atomr_host_stream_complete (stream, atomr_host_stream_get_n_pending (stream), CUDA_SUCCESS);
      if (k == 299)
        {
          atomr_actor_get_counters (f->actor, NULL, &completed, &in_flight, NULL, NULL);
          /* At most two batches of 32 (MAX_COALESCE) and the open one wait. */
          g_assert_cmpuint (in_flight, <=, 3 * 32);
          g_assert_cmpuint (completed, >=, 300 - 3 * 32);
        }
    }
  g_assert_false (g_main_context_is_owner (f->context));
  /* Stopped at the request with a reply, which the loop answers. */
  atomr_actor_get_counters (f->actor, NULL, &completed, &in_flight, NULL, NULL);
  g_assert_cmpuint (completed, <=, 300);
  g_assert_null (result);
  stream = atomr_actor_get_stream (f->actor);
  while (result == NULL || atomr_host_stream_get_n_pending (stream) > 0)
    {
      atomr_host_stream_complete (stream, atomr_host_stream_get_n_pending (stream), CUDA_SUCCESS);
      g_main_context_iteration (NULL, FALSE);
    }
  iterate_pending ();
  g_assert_true (atomr_actor_fill_finish (f->actor, result, &error));
  g_assert_no_error (error);
  atomr_actor_get_counters (f->actor, NULL, &completed, &in_flight, NULL, NULL);
  g_assert_cmpuint (completed, ==, 400);
  g_assert_cmpuint (in_flight, ==, 0);
}

/* The observer (atomr_actor_set_observer): completions on the actor's
 * context reach it without the mailbox lock, so a replacement is adopted
 * by the context's owner; what that must keep: every operation finishing
 * after set_observer() returns goes to the new observer, never to the
 * old; each observer is destroyed exactly once, never while it can still
 * be called, and without waiting for a later request. */
typedef struct {
  gint n_records;
  gint n_errors;
  gint destroyed;
  gint called_after_destroy;
  GThread *last_thread;
} Watcher;

static void
watcher_observe (AtomrActor          *actor,
                 const AtomrOpRecord *r,
                 gpointer             data)
{
  Watcher *w = data;

  if (g_atomic_int_get (&w->destroyed))
    g_atomic_int_inc (&w->called_after_destroy);
  g_atomic_int_inc (&w->n_records);
  if (r->error)
    g_atomic_int_inc (&w->n_errors);
  g_assert_cmpstr (r->operation, !=, NULL);
  g_assert_cmpint (r->t_complete, >=, r->t_enqueue);
  w->last_thread = g_thread_self ();
}

static void
watcher_destroy (gpointer data)
{
  Watcher *w = data;

  g_assert_cmpint (g_atomic_int_add (&w->destroyed, 1), ==, 0);
}

typedef struct {
  AtomrActor *actor;
  Watcher    *watcher;   /* NULL: remove */
} SetObserver;

static gpointer
set_observer_thread (gpointer data)
{
  SetObserver *so = data;

  if (so->watcher)
    atomr_actor_set_observer (so->actor, watcher_observe, so->watcher, watcher_destroy);
  else
    atomr_actor_set_observer (so->actor, NULL, NULL, NULL);
  return NULL;
}

/* Until nothing is queued or in flight.  Not "until an iteration does
 * nothing": another thread's set_observer() may hold the context for a
 * moment, and a non-blocking iteration then returns FALSE at once. */
static void
complete_all (AtomrActor *actor)
{
  for (;;)
    {
      AtomrStream *stream = atomr_actor_get_stream (actor);
      guint64 in_flight = 0;
      guint mailbox = 0;

      iterate_pending ();
      if (stream && atomr_host_stream_get_n_pending (stream) > 0)
        {
          atomr_host_stream_complete (stream, 1, CUDA_SUCCESS);
          continue;
        }
      atomr_actor_get_counters (actor, NULL, NULL, &in_flight, NULL, &mailbox);
      if (in_flight == 0 && mailbox == 0)
        return;
      g_thread_yield ();
    }
}

static void
test_observer_swap (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  Watcher a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 }, e = { 0 };
  SetObserver so = { f->actor, &b };

  g_assert_no_error (error);
  /* Nobody runs the context: adopted (and nothing destroyed) at once. */
  atomr_actor_set_observer (f->actor, watcher_observe, &a, watcher_destroy);
  g_assert_true (atomr_actor_has_observer (f->actor));
  for (guint i = 0; i < 3; i++)
    atomr_actor_fill_async (f->actor, buffer, i, NULL, NULL, NULL);
  complete_all (f->actor);
  g_assert_cmpint (a.n_records, ==, 3);
  g_assert_true (a.last_thread == g_thread_self ());

  /* The context's owner is busy (this thread holds it, as a dispatch
   * would): another thread's replacement waits for the owner's next pass,
   * and the old observer is not destroyed under the owner. */
  g_assert_true (g_main_context_acquire (f->context));
  g_thread_join (g_thread_new ("set-observer", set_observer_thread, &so));
  g_assert_cmpint (g_atomic_int_get (&a.destroyed), ==, 0);
  g_assert_true (atomr_actor_has_observer (f->actor));
  /* What the owner ends after the call (a request cancelled before it
   * was enqueued) already goes to the new observer. */
  {
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();
    g_cancellable_cancel (cancellable);
    atomr_actor_fill_async (f->actor, buffer, 3.0, cancellable, NULL, NULL);
  }
  g_assert_cmpint (g_atomic_int_get (&b.n_records), ==, 1);
  g_assert_cmpint (g_atomic_int_get (&b.n_errors), ==, 1);
  g_assert_cmpint (g_atomic_int_get (&a.n_records), ==, 3);
  g_assert_cmpint (g_atomic_int_get (&a.destroyed), ==, 1);
  g_main_context_release (f->context);

  /* Owner busy again, replaced by NULL and back: the wake-up alone brings
   * the owner's pass on (no request to run) and destroys the old one. */
  g_assert_true (g_main_context_acquire (f->context));
  so.watcher = NULL;
  g_thread_join (g_thread_new ("set-observer", set_observer_thread, &so));
  g_assert_false (atomr_actor_has_observer (f->actor));
  g_assert_cmpint (g_atomic_int_get (&b.destroyed), ==, 0);
  g_main_context_release (f->context);
  iterate_pending ();
  g_assert_cmpint (g_atomic_int_get (&b.destroyed), ==, 1);
  atomr_actor_fill_async (f->actor, buffer, 4.0, NULL, NULL, NULL);
  complete_all (f->actor);
  g_assert_cmpint (b.n_records, ==, 1);
  g_assert_cmpint (a.n_records, ==, 3);

  /* Replaced before it was ever adopted: destroyed by the replacing call,
   * never called. */
  atomr_actor_set_observer (f->actor, watcher_observe, &e, watcher_destroy);
  g_assert_true (g_main_context_acquire (f->context));
  so.watcher = &c;
  g_thread_join (g_thread_new ("set-observer", set_observer_thread, &so));
  so.watcher = &d;
  g_thread_join (g_thread_new ("set-observer", set_observer_thread, &so));
  g_assert_cmpint (g_atomic_int_get (&c.destroyed), ==, 1);
  g_assert_cmpint (g_atomic_int_get (&e.destroyed), ==, 0);
  /* An operation run and completed by the owner adopts first: d sees it. */
  atomr_actor_fill_async (f->actor, buffer, 5.0, NULL, NULL, NULL);
  g_main_context_release (f->context);
  complete_all (f->actor);
  g_assert_cmpint (g_atomic_int_get (&e.destroyed), ==, 1);
  g_assert_cmpint (d.n_records, ==, 1);
  g_assert_cmpint (e.n_records, ==, 0);
  g_assert_cmpint (c.n_records, ==, 0);

  /* Removed while nobody runs the context: destroyed before it returns. */
  atomr_actor_set_observer (f->actor, NULL, NULL, NULL);
  g_assert_false (atomr_actor_has_observer (f->actor));
  g_assert_cmpint (g_atomic_int_get (&d.destroyed), ==, 1);
  atomr_actor_fill_async (f->actor, buffer, 6.0, NULL, NULL, NULL);
  complete_all (f->actor);
  g_assert_cmpint (d.n_records, ==, 1);

  g_assert_cmpint (a.called_after_destroy + b.called_after_destroy + c.called_after_destroy +
                   d.called_after_destroy + e.called_after_destroy, ==, 0);
}

/* A thread replacing observers as fast as it can while this one submits
 * and completes: each observer destroyed exactly once, none called after
 * its destroy, no record given twice. */
typedef struct {
  AtomrActor *actor;
  Watcher     w[200];
  gint        stop;
} Swapper;

static gpointer
swapper_main (gpointer data)
{
  Swapper *s = data;

  for (guint i = 0; i < G_N_ELEMENTS (s->w); i++)
    {
      atomr_actor_set_observer (s->actor, watcher_observe, &s->w[i], watcher_destroy);
      g_usleep (50);
    }
  atomr_actor_set_observer (s->actor, NULL, NULL, NULL);
  g_atomic_int_set (&s->stop, 1);
  return NULL;
}

static void
test_observer_swap_threads (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 4, &error);
  Swapper *s = g_new0 (Swapper, 1);
  GThread *thread;
  guint total = 0, n = 0;

  g_assert_no_error (error);
  s->actor = f->actor;
  thread = g_thread_new ("swapper", swapper_main, s);
  while (!g_atomic_int_get (&s->stop))
    {
      atomr_actor_fill_async (f->actor, buffer, n++, NULL, NULL, NULL);
      complete_all (f->actor);
    }
  g_thread_join (thread);
  complete_all (f->actor);
  for (guint i = 0; i < G_N_ELEMENTS (s->w); i++)
    {
      g_assert_cmpint (s->w[i].destroyed, ==, 1);
      g_assert_cmpint (s->w[i].called_after_destroy, ==, 0);
      total += s->w[i].n_records;
    }
  g_assert_cmpuint (total, <=, n);
  g_assert_cmpuint (total, >, 0);
  g_free (s);
}

/* A word fence is passed once the stream's word has reached its number,
 * in serial number arithmetic: numbers wrap after 2^32 fences, and a word
 * written by a later fence passes the earlier ones. */
static void
test_fence_word_serial (void)
{
  g_assert_false (atomr_fence_word_reached (0, 1));          /* nothing written yet */
  g_assert_true (atomr_fence_word_reached (1, 1));
  g_assert_true (atomr_fence_word_reached (7, 3));           /* a later fence's word */
  g_assert_false (atomr_fence_word_reached (3, 7));
  g_assert_true (atomr_fence_word_reached (2, 0xfffffff0u)); /* wrapped past it */
  g_assert_false (atomr_fence_word_reached (0xfffffff0u, 2)); /* not yet wrapped */
  g_assert_false (atomr_fence_word_reached (0xffffffffu, 1)); /* 1 follows the wrap */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/dtype/pack", test_dtype);
  g_test_add_func ("/device/no-driver", test_no_driver);
  g_test_add ("/buffer/bad-arguments", Fixture, NULL, fixture_setup, test_bad_arguments, fixture_teardown);
  g_test_add ("/envelope/signal-order", Fixture, NULL, fixture_setup, test_signal_order, fixture_teardown);
  g_test_add_func ("/envelope/reply-context", test_reply_context);
  g_test_add_func ("/envelope/own-thread", test_own_thread);
  g_test_add_func ("/envelope/nested-pump", test_nested_pump);
  g_test_add_func ("/envelope/stamps", test_envelope_stamps);
  g_test_add ("/envelope/cancellation", Fixture, NULL, fixture_setup, test_cancellation, fixture_teardown);
  g_test_add ("/envelope/keep-alive", Fixture, NULL, fixture_setup, test_keep_alive, fixture_teardown);
  g_test_add_func ("/envelope/hazards", test_hazards);
  g_test_add_func ("/envelope/program-order", test_program_order);
  g_test_add_func ("/envelope/failed-link", test_failed_link);
  g_test_add_func ("/envelope/reader-replacement", test_reader_replacement);
  g_test_add_func ("/envelope/lone-request-fenced", test_lone_request_fenced);
  g_test_add_func ("/envelope/request-storage-aligned", test_request_storage_aligned);
  g_test_add_func ("/envelope/threads", test_threads);
  g_test_add ("/envelope/home-thread-enqueues", Fixture, NULL, fixture_setup, test_home_thread_enqueues, fixture_teardown);
  g_test_add ("/envelope/many-in-flight", Fixture, NULL, fixture_setup, test_many_in_flight, fixture_teardown);
  g_test_add ("/envelope/stale-after-reset", Fixture, NULL, fixture_setup, test_stale_after_reset, fixture_teardown);
  g_test_add_data_func ("/supervisor/restart", GINT_TO_POINTER (ATOMR_SUPERVISOR_RESTART), test_poisoned);
  g_test_add_data_func ("/supervisor/stop", GINT_TO_POINTER (ATOMR_SUPERVISOR_STOP), test_poisoned);
  g_test_add_data_func ("/supervisor/escalate", GINT_TO_POINTER (ATOMR_SUPERVISOR_ESCALATE), test_poisoned);
  g_test_add_data_func ("/completion/adaptive", GINT_TO_POINTER (ATOMR_COMPLETION_ADAPTIVE), test_completion_modes);
  g_test_add_data_func ("/completion/poll", GINT_TO_POINTER (ATOMR_COMPLETION_POLL), test_completion_modes);
  g_test_add_data_func ("/completion/event-thread", GINT_TO_POINTER (ATOMR_COMPLETION_EVENT_THREAD), test_completion_modes);
  g_test_add_data_func ("/completion/host-func", GINT_TO_POINTER (ATOMR_COMPLETION_HOST_FUNC), test_completion_modes);
  g_test_add_data_func ("/completion/sync", GINT_TO_POINTER (ATOMR_COMPLETION_SYNC), test_completion_modes);
  g_test_add_func ("/memory/fill-every-dtype-and-sync", test_fill_and_sync);
  g_test_add_func ("/buffer/conveniences", test_buffer_conveniences);
  g_test_add_func ("/buffer/large-transfers", test_large_transfers);
  g_test_add_func ("/envelope/sync-drives-dependencies", test_sync_drives_dependencies);
  g_test_add_func ("/envelope/fence-word-serial", test_fence_word_serial);
  g_test_add ("/envelope/burst-completes-quiet", Fixture, NULL, fixture_setup, test_burst_completes_quiet, fixture_teardown);
  g_test_add ("/envelope/observer-swap", Fixture, NULL, fixture_setup, test_observer_swap, fixture_teardown);
  g_test_add ("/envelope/observer-swap-threads", Fixture, NULL, fixture_setup, test_observer_swap_threads, fixture_teardown);
  g_test_add ("/trace/recorder", Fixture, NULL, fixture_setup, test_trace_recorder, fixture_teardown);

  return g_test_run ();
}
