/* test-operation.c — the public envelope (AtomrOperation), used the way a
 * third-party actor uses it: against libatomr-1.so and <atomr.h> only, on
 * the mock device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>

/* A third-party actor: scales a float buffer in place. */
#define TEST_TYPE_SCALE_ACTOR (test_scale_actor_get_type ())
G_DECLARE_FINAL_TYPE (TestScaleActor, test_scale_actor, TEST, SCALE_ACTOR, AtomrActor)

struct _TestScaleActor
{
  AtomrActor parent_instance;
};

G_DEFINE_FINAL_TYPE (TestScaleActor, test_scale_actor, ATOMR_TYPE_ACTOR)

static void
test_scale_actor_class_init (TestScaleActorClass *klass)
{
  ATOMR_ACTOR_CLASS (klass)->library = "test-scale";
}

static void
test_scale_actor_init (TestScaleActor *self)
{
}

typedef struct
{
  AtomrBuffer *buffer;
  gfloat       alpha;
  gint        *freed;          /* counts request_free() calls */
} Request;

static void
request_free (gpointer data)
{
  Request *r = data;

  if (r->freed)
    (*r->freed)++;
  g_object_unref (r->buffer);
  g_free (r);
}

static gboolean
scale_enqueue (AtomrOperation  *op,
               gpointer         user_data,
               GError         **error)
{
  Request *r = atomr_operation_get_data (op);
  gfloat *x;

  g_assert_true (user_data == GINT_TO_POINTER (42));
  if (!atomr_operation_is_host (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED, "test actor runs on the host device only");
      return FALSE;
    }
  if (r->alpha < 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "alpha %g is negative", r->alpha);
      return FALSE;
    }
  g_assert_cmpuint (atomr_operation_get_cu_stream (op), ==, 0);
  x = (gfloat *) (guintptr) atomr_operation_get_address (op, r->buffer);
  g_assert_nonnull (x);
  for (guint64 i = 0; i < atomr_buffer_get_n_elements (r->buffer); i++)
    x[i] *= r->alpha;
  return TRUE;
}

static void
test_scale_actor_scale_async (TestScaleActor      *self,
                              AtomrBuffer         *buffer,
                              gfloat               alpha,
                              gint                *freed,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(AtomrOperation) op = NULL;
  Request *r = g_new0 (Request, 1);

  op = atomr_operation_new (ATOMR_ACTOR (self), "scale", test_scale_actor_scale_async,
                            NULL, callback, user_data);
  r->buffer = g_object_ref (buffer);
  r->alpha = alpha;
  r->freed = freed;
  atomr_operation_set_data (op, r, request_free);
  atomr_operation_read (op, buffer);
  atomr_operation_write (op, buffer);
  atomr_operation_set_detail (op, "alpha");
  atomr_operation_set_enqueue_func (op, scale_enqueue, GINT_TO_POINTER (42), NULL);
  atomr_operation_submit (op);
  g_assert_true (atomr_operation_get_submitted (op));
}

static gboolean
test_scale_actor_scale_finish (TestScaleActor  *self,
                               GAsyncResult    *result,
                               GError         **error)
{
  return atomr_operation_finish_boolean (ATOMR_ACTOR (self), result,
                                         test_scale_actor_scale_async, error);
}

typedef struct
{
  AtomrDevice    *device;
  TestScaleActor *actor;
  AtomrBuffer    *buffer;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->device = atomr_device_new_mock ();
  f->actor = g_initable_new (TEST_TYPE_SCALE_ACTOR, NULL, &error, "device", f->device, NULL);
  g_assert_no_error (error);
  f->buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 8, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (f->buffer, 2.0, NULL, &error));
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->buffer);
  g_clear_object (&f->actor);
  g_clear_object (&f->device);
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static GAsyncResult *
wait_result (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

static void
assert_values (AtomrBuffer *buffer, gfloat expected)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  gsize size;
  const gfloat *v;

  g_assert_no_error (error);
  v = g_bytes_get_data (bytes, &size);
  g_assert_cmpuint (size, ==, 8 * sizeof (gfloat));
  for (guint i = 0; i < 8; i++)
    g_assert_cmpfloat (v[i], ==, expected);
}

static void
count_signal (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  if (g_strcmp0 (atomr_launch_info_get_operation (info), "scale") == 0)
    (*(gint *) user_data)++;
}

/* The work runs, in order, with the actor's signals; the request's data
 * is freed exactly once. */
static void
test_operation_runs (Fixture *f, gconstpointer data)
{
  g_autoptr(GAsyncResult) r1 = NULL;
  g_autoptr(GAsyncResult) r2 = NULL;
  g_autoptr(GError) error = NULL;
  gint freed = 0, before = 0, after = 0;

  g_signal_connect (f->actor, "before-enqueue", G_CALLBACK (count_signal), &before);
  g_signal_connect (f->actor, "after-complete", G_CALLBACK (count_signal), &after);

  test_scale_actor_scale_async (f->actor, f->buffer, 3.0f, &freed, store_result, &r1);
  test_scale_actor_scale_async (f->actor, f->buffer, 0.5f, &freed, store_result, &r2);
  g_assert_true (test_scale_actor_scale_finish (f->actor, wait_result (&r1), &error));
  g_assert_no_error (error);
  g_assert_true (test_scale_actor_scale_finish (f->actor, wait_result (&r2), &error));
  g_assert_no_error (error);
  while (freed < 2)
    g_main_context_iteration (NULL, TRUE);

  assert_values (f->buffer, 3.0f);      /* 2 * 3 * 0.5, in program order */
  g_assert_cmpint (freed, ==, 2);
  g_assert_cmpint (before, ==, 2);
  g_assert_cmpint (after, ==, 2);
}

/* An enqueue error is the request's error; a later reader of what the
 * failed request should have written fails as a dependency. */
static void
test_operation_enqueue_error (Fixture *f, gconstpointer data)
{
  g_autoptr(GAsyncResult) r1 = NULL;
  g_autoptr(GAsyncResult) r2 = NULL;
  g_autoptr(GError) error = NULL;

  test_scale_actor_scale_async (f->actor, f->buffer, -1.0f, NULL, store_result, &r1);
  test_scale_actor_scale_async (f->actor, f->buffer, 2.0f, NULL, store_result, &r2);

  g_assert_false (test_scale_actor_scale_finish (f->actor, wait_result (&r1), &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "alpha -1 is negative"));
  g_clear_error (&error);

  g_assert_false (test_scale_actor_scale_finish (f->actor, wait_result (&r2), &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_DEPENDENCY_FAILED);
  g_assert_nonnull (strstr (error->message, "alpha -1 is negative"));
  g_clear_error (&error);
}

static void
answer_pointer (AtomrOperation *op, GTask *task, gpointer user_data)
{
  g_task_return_pointer (task, g_strdup_printf ("%s done", atomr_operation_get_name (op)), g_free);
}

/* A complete function builds the reply; fail() answers without running
 * anything; a dropped operation still answers. */
static void
test_operation_replies (Fixture *f, gconstpointer data)
{
  g_autoptr(GAsyncResult) r1 = NULL;
  g_autoptr(GAsyncResult) r2 = NULL;
  g_autoptr(GAsyncResult) r3 = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) refused = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "n 0 is too small");
  g_autofree gchar *reply = NULL;
  AtomrOperation *op;

  op = atomr_operation_new (ATOMR_ACTOR (f->actor), "probe", NULL, NULL, store_result, &r1);
  atomr_operation_read (op, f->buffer);
  atomr_operation_set_complete_func (op, answer_pointer, NULL, NULL);
  atomr_operation_submit (op);
  g_object_unref (op);
  reply = atomr_operation_finish_pointer (ATOMR_ACTOR (f->actor), wait_result (&r1), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (reply, ==, "probe done");

  op = atomr_operation_new (ATOMR_ACTOR (f->actor), "refused", NULL, NULL, store_result, &r2);
  atomr_operation_fail (op, refused);
  g_assert_true (atomr_operation_get_submitted (op));
  g_object_unref (op);
  g_assert_false (atomr_operation_finish_boolean (ATOMR_ACTOR (f->actor), wait_result (&r2), NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "n 0 is too small");
  g_clear_error (&error);

  op = atomr_operation_new (ATOMR_ACTOR (f->actor), "dropped", NULL, NULL, store_result, &r3);
  g_object_unref (op);
  g_assert_false (atomr_operation_finish_boolean (ATOMR_ACTOR (f->actor), wait_result (&r3), NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“dropped”"));
}

/* Bindings may build one with a bare g_object_new(): it must not crash. */
static void
test_operation_bare (void)
{
  g_autoptr(AtomrOperation) op = g_object_new (ATOMR_TYPE_OPERATION, NULL);
  g_autoptr(AtomrActor) actor = NULL;
  g_autofree gchar *name = NULL;
  gboolean submitted = TRUE;

  g_object_get (op, "actor", &actor, "name", &name, "submitted", &submitted, NULL);
  g_assert_null (actor);
  g_assert_null (name);
  g_assert_false (submitted);
  g_assert_false (atomr_operation_is_host (op));
  g_assert_null (atomr_operation_get_data (op));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/operation/runs", Fixture, NULL, fixture_set_up, test_operation_runs, fixture_tear_down);
  g_test_add ("/operation/enqueue-error", Fixture, NULL, fixture_set_up, test_operation_enqueue_error, fixture_tear_down);
  g_test_add ("/operation/replies", Fixture, NULL, fixture_set_up, test_operation_replies, fixture_tear_down);
  g_test_add_func ("/operation/bare", test_operation_bare);
  return g_test_run ();
}
