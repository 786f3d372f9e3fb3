/* test-worker.c — work on a worker thread before the enqueue
 *
 * atomr_op_run_on_worker() (issue 11: cuFFT plans are made off the
 * actor's context).  On the host test device: the work runs on another
 * thread, the actor's mailbox waits for it in program order, the context
 * stays free meanwhile, a failed work answers its request, and a request
 * cancelled while its work runs is answered at once and freed after.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>
#include "core/atomr-actor-private.h"

typedef struct {
  GMutex   lock;
  GCond    cond;
  gboolean open;       /* the gate: work waits until it is opened */
  guint    entered;    /* works that reached the gate */
  GThread *work_thread;
  GString *order;      /* enqueues, in the order they ran */
  guint    prepares;
  guint    freed;
} State;

typedef struct {
  State    *state;
  gchar     name;
  gboolean  fail;      /* the work fails */
  gboolean  worked;
} Request;

static void
state_init (State *st)
{
  g_mutex_init (&st->lock);
  g_cond_init (&st->cond);
  st->order = g_string_new (NULL);
}

static void
state_clear (State *st)
{
  g_mutex_clear (&st->lock);
  g_cond_clear (&st->cond);
  g_string_free (st->order, TRUE);
}

static void
open_gate (State *st)
{
  g_mutex_lock (&st->lock);
  st->open = TRUE;
  g_cond_broadcast (&st->cond);
  g_mutex_unlock (&st->lock);
}

/* Iterates the actors' context (where prepare runs and starts the work)
 * until @n works reached the gate. */
static void
wait_entered (State *st,
              guint  n)
{
  for (;;)
    {
      guint entered;

      g_mutex_lock (&st->lock);
      entered = st->entered;
      g_mutex_unlock (&st->lock);
      if (entered >= n)
        return;
      g_main_context_iteration (NULL, FALSE);
      g_thread_yield ();
    }
}

static gboolean
gated_work (AtomrOp  *op,
            GError  **error)
{
  Request *req = atomr_op_get_data (op);
  State *st = req->state;

  g_mutex_lock (&st->lock);
  st->entered++;
  st->work_thread = g_thread_self ();
  g_cond_broadcast (&st->cond);
  while (!st->open)
    g_cond_wait (&st->cond, &st->lock);
  g_mutex_unlock (&st->lock);
  req->worked = TRUE;
  if (req->fail)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY, "test work %c failed", req->name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
request_prepare (AtomrOp  *op,
                 GError  **error)
{
  Request *req = atomr_op_get_data (op);

  req->state->prepares++;
  atomr_op_run_on_worker (op, gated_work);
  return TRUE;
}

static gboolean
request_enqueue (AtomrOp  *op,
                 GError  **error)
{
  Request *req = atomr_op_get_data (op);

  /* The enqueue always follows the work, on the actor's context. */
  g_assert_true (req->worked);
  g_string_append_c (req->state->order, req->name);
  return TRUE;
}

static gboolean
plain_enqueue (AtomrOp  *op,
               GError  **error)
{
  Request *req = atomr_op_get_data (op);

  g_string_append_c (req->state->order, req->name);
  return TRUE;
}

static void
request_free (gpointer data)
{
  Request *req = data;

  req->state->freed++;
  g_free (req);
}

static void submit (AtomrActor *actor, State *st, gchar name, gboolean worker, gboolean fail,
                    GCancellable *cancellable, GAsyncResult **result);

static void
store_result (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GAsyncResult **out = user_data;

  g_assert_null (*out);
  *out = g_object_ref (result);
}

static void
submit (AtomrActor    *actor,
        State         *st,
        gchar          name,
        gboolean       worker,
        gboolean       fail,
        GCancellable  *cancellable,
        GAsyncResult **result)
{
  AtomrOp *op = atomr_op_new (actor, "test", submit, cancellable, store_result, result);
  Request *req = g_new0 (Request, 1);

  req->state = st;
  req->name = name;
  req->fail = fail;
  atomr_op_set_data (op, req, request_free);
  if (worker)
    atomr_op_set_prepare (op, request_prepare);
  atomr_op_set_enqueue (op, worker ? request_enqueue : plain_enqueue);
  atomr_op_submit (op);
}

static gboolean
finish (AtomrActor    *actor,
        GAsyncResult  *result,
        GError       **error)
{
  return atomr_op_finish_boolean (actor, result, submit, error);
}

static AtomrActor *
new_actor (AtomrDevice *device)
{
  g_autoptr(GError) error = NULL;
  AtomrActor *actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);

  g_assert_no_error (error);
  return actor;
}

static void
iterate_until (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static void
iterate_pending (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* The work runs on another thread; the request behind it on the same
 * actor waits (program order); another actor on the same context runs
 * meanwhile (the context is free); prepare runs once. */
static void
test_off_context_in_order (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrActor) a = NULL, b = NULL;
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, r3 = NULL;
  g_autoptr(GError) error = NULL;
  State st = { 0 };

  state_init (&st);
  atomr_device_set_host_autocomplete (device, TRUE);
  a = new_actor (device);
  b = new_actor (device);

  submit (a, &st, '1', TRUE, FALSE, NULL, &r1);
  submit (a, &st, '2', FALSE, FALSE, NULL, &r2);    /* behind it, no work */
  wait_entered (&st, 1);
  g_assert_true (st.work_thread != g_thread_self ());

  /* While the work waits at the gate, the context serves another actor. */
  submit (b, &st, '3', FALSE, FALSE, NULL, &r3);
  iterate_until (&r3);
  g_assert_true (finish (b, r3, &error));
  g_assert_no_error (error);
  iterate_pending ();
  g_assert_null (r1);
  g_assert_null (r2);
  g_assert_cmpstr (st.order->str, ==, "3");

  open_gate (&st);
  iterate_until (&r1);
  iterate_until (&r2);
  g_assert_true (finish (a, r1, &error));
  g_assert_true (finish (a, r2, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (st.order->str, ==, "312");
  g_assert_cmpuint (st.prepares, ==, 1);

  g_clear_object (&r1);
  g_clear_object (&r2);
  g_clear_object (&r3);
  g_clear_object (&a);
  g_clear_object (&b);
  g_assert_cmpuint (st.freed, ==, 3);
  state_clear (&st);
}

/* A failed work answers its request with the work's error, without an
 * enqueue; the requests behind it still run. */
static void
test_work_error (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrActor) a = NULL;
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autoptr(GError) error = NULL;
  State st = { 0 };

  state_init (&st);
  atomr_device_set_host_autocomplete (device, TRUE);
  a = new_actor (device);
  open_gate (&st);
  submit (a, &st, '1', TRUE, TRUE, NULL, &r1);
  submit (a, &st, '2', TRUE, FALSE, NULL, &r2);
  iterate_until (&r1);
  iterate_until (&r2);
  g_assert_false (finish (a, r1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY);
  g_assert_cmpstr (error->message, ==, "test work 1 failed");
  g_clear_error (&error);
  g_assert_true (finish (a, r2, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (st.order->str, ==, "2");
  g_assert_cmpuint (st.prepares, ==, 2);

  g_clear_object (&r1);
  g_clear_object (&r2);
  g_clear_object (&a);
  g_assert_cmpuint (st.freed, ==, 2);
  state_clear (&st);
}

/* Cancelled while its work runs: answered at once; the work finishes on
 * its own, the request is never enqueued, and it is freed afterwards. */
static void
test_cancel_while_working (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrActor) a = NULL;
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  State st = { 0 };

  state_init (&st);
  atomr_device_set_host_autocomplete (device, TRUE);
  a = new_actor (device);
  submit (a, &st, '1', TRUE, FALSE, cancellable, &r1);
  submit (a, &st, '2', FALSE, FALSE, NULL, &r2);
  wait_entered (&st, 1);

  g_cancellable_cancel (cancellable);
  iterate_until (&r1);
  g_assert_false (finish (a, r1, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_cmpuint (st.freed, ==, 0);   /* the worker still has it */
  g_assert_null (r2);

  open_gate (&st);
  iterate_until (&r2);
  g_assert_true (finish (a, r2, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (st.order->str, ==, "2");

  g_clear_object (&r1);
  g_clear_object (&r2);
  g_clear_object (&a);
  g_assert_cmpuint (st.freed, ==, 2);
  state_clear (&st);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/worker/off-context-in-order", test_off_context_in_order);
  g_test_add_func ("/worker/error", test_work_error);
  g_test_add_func ("/worker/cancel-while-working", test_cancel_while_working);
  return g_test_run ();
}
