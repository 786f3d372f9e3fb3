/* atomr-actor-source.c — the actor's mailbox GSource: waking it up,
 * host-function completion, prepare/check/dispatch and the pump
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-impl-private.h"
#include "atomr-stamps-private.h"

/* ------------------------------------------------------------------ */
/* Waking the actor up                                                  */

void
source_wake (ActorSource *src)
{
  GMainContext *extra;

  g_main_context_wakeup (src->context);
  g_mutex_lock (&src->lock);
  extra = src->extra_wake ? g_main_context_ref (src->extra_wake) : NULL;
  g_mutex_unlock (&src->lock);
  if (extra)
    {
      g_main_context_wakeup (extra);
      g_main_context_unref (extra);
    }
}

/* The completion service saw a fence pass (on its thread). */
void
fence_passed (gpointer data,
              gpointer unused)
{
  source_wake (data);
}

/* The last reference to an actor's source may be dropped on another
 * thread (the completion service, a worker, a driver thread's record)
 * after the application let go of the actor and of its context: the
 * source then holds the context's last reference, which its finalize
 * drops — and GLib 2.74's g_source_unref() locks the context again
 * after finalize, in freed memory.  Holding the context across the
 * unref keeps it alive until GLib is done with it. */
void
actor_source_unref (gpointer source)
{
  ActorSource *src = source;
  GMainContext *context = g_main_context_ref (src->context);

  g_source_unref ((GSource *) src);
  g_main_context_unref (context);
}

/* Stop polling @op's fence from the context: the device's completion
 * service wakes us when it has passed. */
void
hand_off (ActorSource *src,
          AtomrOp     *op)
{
  AtomrCompletionService *service;

  if (op->handed_off)
    return;
  op->handed_off = TRUE;
  service = atomr_device_get_completion_service (op->stream->device);
  atomr_completion_service_watch (service, op->fence, fence_passed,
                                  g_source_ref ((GSource *) src),
                                  actor_source_unref);
}

/* ------------------------------------------------------------------ */
/* Host-function completion: runs on a driver thread, may not call CUDA. */

void CUDA_CB
host_func_signal (void *data)
{
  HostFuncRecord *rec = data;

  rec->fence->result = CUDA_SUCCESS;
  g_atomic_int_set (&rec->fence->signalled, 1);
  source_wake (rec->source);
  /* Freeing the fence could call the driver: leave it to the context. */
  g_async_queue_push (rec->source->graveyard, rec);
  g_atomic_int_inc (&rec->source->n_graveyard);
}

void
host_func_record_free (gpointer data)
{
  HostFuncRecord *rec = data;

  atomr_fence_unref (rec->fence);
  actor_source_unref (rec->source);
  g_free (rec);
}

/* ------------------------------------------------------------------ */
/* The actor's source: mailbox and completions.                         */

/* Decided by the mode the fence was flushed under, never the current one:
 * changing #AtomrActor:completion-mode with work in flight is safe. */
gboolean
op_is_done (AtomrOp  *op,
            CUresult *result)
{
  AtomrFence *fence = op->fence;
  CUresult res;

  if (fence->generation != atomr_device_get_generation_internal (op->stream->device))
    {
      *result = CUDA_ERROR_CONTEXT_IS_DESTROYED;
      return TRUE;
    }
  if (g_atomic_int_get (&fence->signalled))
    {
      *result = fence->result;
      if (*result == CUDA_SUCCESS && fence->mode == ATOMR_COMPLETION_HOST_FUNC &&
          fence->event != NULL)
        *result = atomr_fence_query (fence);  /* learn a sticky error */
      return TRUE;
    }
  /* Somebody else signals these: the event thread, the host function, or
   * the completion service once handed off (then a query per prepare and
   * check of every actor in flight is wasted: with a thousand actors on a
   * context that was the larger part of an iteration). */
  if (fence->mode == ATOMR_COMPLETION_EVENT_THREAD ||
      (fence->mode == ATOMR_COMPLETION_HOST_FUNC && fence->event != NULL) ||
      op->handed_off)
    return FALSE;

  res = atomr_fence_query (fence);
  if (res == CUDA_ERROR_NOT_READY)
    return FALSE;
  *result = res;
  return TRUE;
}

/* Microseconds until @op's watchdog fires (0: now), or -1 for never. */
gint64
op_watchdog_remaining (ActorSource *src,
                       AtomrOp     *op,
                       gint64       now)
{
  gint timeout_ms = g_atomic_int_get (&src->timeout_ms);
  gint64 deadline;

  if (timeout_ms <= 0 || op->replied)
    return -1;
  deadline = op->t_enqueue / 1000 + (gint64) timeout_ms * 1000;   /* t_enqueue is in ns */
  return MAX (deadline - now, 0);
}

/* The oldest request in flight not answered yet (the watchdog's): those
 * ahead of it timed out but still run, and it waits behind them. */
AtomrOp *
first_unanswered (ActorSource *src)
{
  for (guint i = 0; i < atomr_ring_len (&src->inflight); i++)
    {
      AtomrOp *op = atomr_ring_nth (&src->inflight, i);
      if (!op->replied)
        return op;
    }
  return NULL;
}

gboolean
mailbox_ready (ActorSource *src)
{
  if (g_atomic_int_get (&src->n_cancelled) > 0)
    return TRUE;
  if (g_atomic_int_get (&src->working))
    return FALSE;               /* the worker wakes us when it is done */
  if (g_atomic_int_get (&src->running))
    return FALSE;               /* an iteration inside an enqueue: after it */
  if (g_atomic_int_get (&src->n_mail) == 0)
    return FALSE;
  return src->blocked == NULL || atomr_slot_check (src->blocked, NULL);
}

/* TRUE when every slot @op follows is resolved; else remembers the one
 * it waits for in *blocked and asks for @wake to be woken then. */
gboolean
op_deps_ready (AtomrOp      *op,
               GMainContext *wake,
               AtomrSlot   **blocked)
{
  for (; op->n_ready < op->deps.len; op->n_ready++)
    {
      AtomrSlot *dep = op->deps.data[op->n_ready];
      /* An earlier operation of this actor not yet fenced is already ahead
       * on the same stream: mailboxes run in order, and nothing runs
       * inline while an operation is being enqueued (atomr_op_submit). */
      if (atomr_slot_get_owner (dep) == op->actor)
        continue;
      if (!atomr_slot_check (dep, wake))
        {
          if (blocked)
            *blocked = dep;
          return FALSE;
        }
    }
  if (blocked)
    *blocked = NULL;
  return TRUE;
}

gboolean
actor_source_prepare (GSource *source,
                      gint    *timeout)
{
  ActorSource *src = (ActorSource *) source;
  AtomrOp *head;
  CUresult res;
  gint64 now, remaining;

  *timeout = -1;
  if (mailbox_ready (src) || g_atomic_int_get (&src->n_graveyard) > 0 || src->unfenced.len > 0 ||
      g_atomic_int_get (&src->observer_changed))
    return TRUE;

  head = atomr_ring_peek_head (&src->inflight);
  if (head == NULL)
    return FALSE;                       /* idle: sleep, burn nothing */
  if (op_is_done (head, &res))
    return TRUE;

  now = g_get_monotonic_time ();
  switch (head->fence->mode)
    {
    case ATOMR_COMPLETION_POLL:
      *timeout = 0;
      break;
    case ATOMR_COMPLETION_ADAPTIVE:
      if (src->head_since == 0)
        src->head_since = now;
      if (head->handed_off)
        break;
      {
        gint spin = g_atomic_int_get (&src->spin_usec);

        /* A request that asked for a longer window (a graph replay) gets
         * it, unless the actor does not spin at all. */
        if (spin > 0 && head->spin_usec > (guint) spin)
          spin = (gint) MIN (head->spin_usec, G_MAXINT);
        if (now - src->head_since < spin)
          *timeout = 0;
        else
          hand_off (src, head);
      }
      break;
    default:
      break;
    }

  /* The watchdog sleeps with the context, it never polls. */
  if (head->replied)
    head = first_unanswered (src);
  remaining = head ? op_watchdog_remaining (src, head, now) : -1;
  if (remaining == 0)
    return TRUE;
  if (remaining > 0 && *timeout != 0)
    {
      gint ms = (gint) MIN ((remaining + 999) / 1000, G_MAXINT);
      *timeout = *timeout < 0 ? ms : MIN (*timeout, ms);
    }
  return FALSE;
}

gboolean
actor_source_check (GSource *source)
{
  ActorSource *src = (ActorSource *) source;
  AtomrOp *head;
  CUresult res;

  if (mailbox_ready (src) || g_atomic_int_get (&src->n_graveyard) > 0 || src->unfenced.len > 0 ||
      g_atomic_int_get (&src->observer_changed))
    return TRUE;
  head = atomr_ring_peek_head (&src->inflight);
  if (head == NULL)
    return FALSE;
  if (op_is_done (head, &res))
    return TRUE;
  if (head->replied)
    head = first_unanswered (src);
  return head != NULL && op_watchdog_remaining (src, head, g_get_monotonic_time ()) == 0;
}

/* Answers the queued requests whose cancellable fired, without waiting for
 * the mailbox to reach them; they stay queued (answered) so that what they
 * stand for in the hazard order is resolved in order. */
void
answer_cancelled (ActorSource *src)
{
  g_autoptr(GPtrArray) cancelled = NULL;

  if (g_atomic_int_get (&src->n_cancelled) == 0)
    return;
  g_atomic_int_set (&src->n_cancelled, 0);
  g_mutex_lock (&src->lock);
  for (GList *l = src->mailbox.head; l; l = l->next)
    {
      AtomrOp *op = l->data;
      if (!op->replied && op->cancellable && g_cancellable_is_cancelled (op->cancellable))
        {
          if (cancelled == NULL)
            cancelled = g_ptr_array_new ();
          g_ptr_array_add (cancelled, op);
          op->replied = TRUE;
        }
    }
  g_mutex_unlock (&src->lock);
  /* Only this context pops the mailbox: the operations stay valid. */
  for (guint i = 0; cancelled && i < cancelled->len; i++)
    {
      AtomrOp *op = g_ptr_array_index (cancelled, i);
      op_return_error (op, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                "Operation was cancelled"));
    }
}

void
op_time_out (AtomrOp *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  GError *error;

  error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT,
                       "%s #%" G_GUINT64_FORMAT " on %s ran longer than the actor's timeout "
                       "of %u ms on the GPU; it still runs, and keeps its buffers until it ends",
                       op->operation, op->sequence, priv->name, priv->timeout_ms);
  op->replied = TRUE;
  op_return_error (op, error);
}

/* ------------------------------------------------------------------ */
/* The observer                                                         */

void
observer_adopt (ActorSource *src)
{
  ObserverSlot old = { 0 };

  g_mutex_lock (&src->lock);
  if (g_atomic_int_get (&src->observer_changed))
    {
      old = src->observer;
      src->observer = src->observer_pending;
      memset (&src->observer_pending, 0, sizeof src->observer_pending);
      g_atomic_int_set (&src->observer_changed, 0);
    }
  g_mutex_unlock (&src->lock);
  if (old.destroy)
    old.destroy (old.data);
}

/* Whether completing @op runs nothing but the library's code: no reply,
 * no handler of the completion signals, no destroy notify of the caller's
 * (atomr_op_keep()), no barrier (which collects failures for a reply). */
static inline gboolean
op_is_quiet (AtomrOp *op)
{
  return op->reply == NULL && op->task == NULL && op->on_completed == NULL && op->keep == NULL &&
         !op->barrier && !op->replied &&
         (op->signal_mask & ((1u << SIGNAL_BEFORE_COMPLETE) | (1u << SIGNAL_AFTER_COMPLETE))) == 0;
}

void
actor_complete_done (ActorSource *src,
                     gboolean     quiet)
{
  /* An observer's completion time: one clock read per pass, not per
   * operation (those sharing a fence were seen done together). */
  gint64 t_seen = 0;
  AtomrOp *op;
  CUresult res;

  while ((op = atomr_ring_peek_head (&src->inflight)) && (!quiet || op_is_quiet (op)) &&
         op_is_done (op, &res))
    {
      /* A failure reports to the device, whose handlers are the
       * application's: left to the pump (the fence keeps its outcome). */
      if (quiet && res != CUDA_SUCCESS)
        break;
      atomr_ring_pop_head (&src->inflight);
      src->head_since = 0;
      if (t_seen == 0 && g_atomic_int_get (&src->has_observer))
        t_seen = atomr_launch_info_now_ns ();
      atomr_stamp (ATOMR_STAMP_DONE);
      op_complete (op, res, t_seen);
      atomr_stamp (ATOMR_STAMP_COMPLETED);
    }
}

/* One pass over the actor: run what the mailbox allows, fence it, complete
 * what the GPU finished.  On the actor's context (or by a _sync that
 * acquired it); @wake is the context to wake when a blocked head may go. */
/* The mailbox's head, under its lock (submitters append meanwhile). */
static AtomrOp *
mailbox_head (ActorSource *src)
{
  AtomrOp *op;

  g_mutex_lock (&src->lock);
  op = g_queue_peek_head (&src->mailbox);
  g_mutex_unlock (&src->lock);
  return op;
}

void
actor_pump (AtomrActor   *self,
            GMainContext *wake,
            gboolean      hand_off_pending)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  ActorSource *src = priv->source;
  gpointer rec;
  AtomrOp *op;

  if (G_UNLIKELY (g_atomic_int_get (&src->observer_changed)))
    observer_adopt (src);
  answer_cancelled (src);

  /* The mailbox runs in order; its head may wait for another actor to
   * enqueue what it depends on (then that actor's slot wakes us).  Only
   * this context pops, so the head seen under the lock stays the head:
   * one critical section per request pops it and looks at the next (a
   * thread submitting a burst to an actor with a thread of its own
   * contends for this lock).  The next one is looked at again when it was
   * NULL (a request may have come meanwhile) or when the work of the one
   * run went to a worker (op_start_work put it back at the head) or a
   * nested pump popped meanwhile. */
  /* A pump inside an enqueue of this actor (a handler iterated the
   * context: the source may recurse) leaves the mailbox alone: what is
   * queued comes after the request being enqueued. */
  op = g_atomic_int_get (&src->running) == 0 ? mailbox_head (src) : NULL;
  while (op != NULL && !g_atomic_int_get (&src->working) && op_deps_ready (op, wake, &src->blocked))
    {
      AtomrOp *next;
      guint pops;

      g_mutex_lock (&src->lock);
      g_queue_pop_head_link (&src->mailbox);
      g_atomic_int_dec_and_test (&src->n_mail);
      next = g_queue_peek_head (&src->mailbox);
      pops = ++src->pops;
      g_mutex_unlock (&src->lock);
      op_run (op);
      /* A handler that iterated the context ran a pump of its own, which
       * may have popped @next already (the source may recurse). */
      if (next == NULL || g_atomic_int_get (&src->working) || src->pops != pops)
        next = mailbox_head (src);
      op = next;
    }
  /* One fence for what this pass enqueued (and for inline requests made
   * since the last iteration). */
  actor_flush (self);

  actor_complete_done (src, FALSE);
  /* Replies often submit the next request right away (inline, since we
   * own the context): fence it now rather than one iteration later. */
  actor_flush (self);

  {
    gint64 now = g_get_monotonic_time ();
    while ((op = first_unanswered (src)) && op_watchdog_remaining (src, op, now) == 0)
      op_time_out (op);
  }
  /* A _sync waits on its private context: the service must wake it. */
  op = atomr_ring_peek_head (&src->inflight);
  if (op != NULL && hand_off_pending)
    hand_off (src, op);

  while ((rec = g_async_queue_try_pop (src->graveyard)))
    {
      g_atomic_int_dec_and_test (&src->n_graveyard);
      host_func_record_free (rec);
    }
}

gboolean
actor_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  ActorSource *src = (ActorSource *) source;
  g_autoptr(AtomrActor) self = g_weak_ref_get (&src->actor);

  if (self == NULL)
    return G_SOURCE_REMOVE;   /* finalized meanwhile, on another thread */
  actor_pump (self, g_source_get_context (source), FALSE);
  return G_SOURCE_CONTINUE;
}

void
actor_source_finalize (GSource *source)
{
  ActorSource *src = (ActorSource *) source;

  /* Host-function records hold the source: the graveyard is empty. */
  g_weak_ref_clear (&src->actor);
  g_weak_ref_clear (&src->capture_ref);
  if (src->observer.destroy)
    src->observer.destroy (src->observer.data);
  if (src->observer_pending.destroy)
    src->observer_pending.destroy (src->observer_pending.data);
  g_mutex_clear (&src->lock);
  g_async_queue_unref (src->graveyard);
  atomr_vec_clear (&src->unfenced, NULL);
  atomr_ring_clear (&src->inflight);
  g_main_context_unref (src->context);
}

GSourceFuncs atomr_actor_source_funcs = {
  actor_source_prepare,
  actor_source_check,
  actor_source_dispatch,
  actor_source_finalize,
  NULL, NULL
};

