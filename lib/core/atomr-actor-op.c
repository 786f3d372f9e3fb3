/* atomr-actor-op.c — the envelope: an operation from atomr_op_new() to
 * its reply (submit, hazards, run, fence, complete, fail)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomr-actor-impl-private.h"
#include "atomr-stamps-private.h"
#include "atomr-free-list-private.h"

/* Freed operations kept for reuse, per thread (atomr-free-list-private.h):
 * an operation is a few hundred bytes allocated and freed for every
 * request. */
static __thread AtomrFreeList *tls_op_list;
static GPrivate op_list_key = G_PRIVATE_INIT (atomr_free_list_destroy);
/* Operations freed on another thread than the submitting one: an actor
 * with a thread of its own completes them there. */
static AtomrFreeDepot op_depot;

/* op_alloc() clears everything but the inline storage, the last member. */
G_STATIC_ASSERT (G_STRUCT_OFFSET (AtomrOp, inline_data) + sizeof (((AtomrOp *) NULL)->inline_data) ==
                 sizeof (AtomrOp));
G_STATIC_ASSERT (G_STRUCT_OFFSET (AtomrOp, inline_data) % 16 == 0);

AtomrOp *
op_alloc (void)
{
  AtomrOp *op = atomr_free_list_pop_full (&tls_op_list, &op_list_key, g_free, &op_depot);

  if (op == NULL)
    return g_new0 (AtomrOp, 1);
  /* Not the inline storage: atomr_op_alloc_data() clears what it hands
   * out, and nothing else reads it. */
  memset (op, 0, G_STRUCT_OFFSET (AtomrOp, inline_data));
  return op;
}

void
op_dealloc (AtomrOp *op)
{
  atomr_free_list_push_depot (&tls_op_list, &op_list_key, op, g_free, &op_depot);
}

/* ------------------------------------------------------------------ */
/* Operations                                                           */

gboolean
actor_ensure_stream (AtomrActor *self,
                     GError    **error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  AtomrActorClass *klass = ATOMR_ACTOR_GET_CLASS (self);
  AtomrStream *stream;

  if (G_LIKELY (priv->stream != NULL &&
                priv->stream->generation == atomr_device_get_generation_internal (priv->device)))
    return TRUE;

  if (priv->stream != NULL)
    {
      /* The context was rebuilt: old handles died with it. */
      if (klass->teardown)
        klass->teardown (self, FALSE);
      atomr_host_stream_abandon (priv->stream);
      g_clear_pointer (&priv->stream, atomr_stream_unref);
    }

  stream = atomr_stream_new (priv->device, error);
  if (stream == NULL)
    return FALSE;
  priv->stream = stream;
  g_object_notify_by_pspec (G_OBJECT (self), atomr_actor_properties[PROP_STREAM_ID]);

  if (klass->setup)
    {
      gboolean ok;
      if (!atomr_device_enter (priv->device, error))
        return FALSE;
      ok = klass->setup (self, error);
      atomr_device_leave (priv->device);
      if (!ok)
        {
          g_clear_pointer (&priv->stream, atomr_stream_unref);
          return FALSE;
        }
    }
  return TRUE;
}

static inline void
op_emit (AtomrOp *op,
         guint    signal)
{
  if (op->signal_mask & (1u << signal))
    g_signal_emit (op->actor, atomr_actor_signals[signal], 0, op->info);
}

/* The observer (atomr_actor_set_observer()): a plain record, no launch
 * info, no signal; nothing but one atomic read without an observer.
 *
 * On the pump's path (@owned: this thread owns the actor's context) no
 * lock: the current observer is only ever replaced by the context's owner
 * (observer_adopt()), so it cannot change under this call, and a new one
 * left pending by atomr_actor_set_observer() is adopted first (one more
 * plain read).  The mailbox lock around every record (two locked
 * instructions, on a line the submitting threads write) was most of what
 * an observer cost the application's thread beside the record itself.
 * Otherwise under the lock, which pins both the current and the pending
 * observer (operations end before they are enqueued in op_run() and
 * actor_flush(), on the owner too, so this is a safety net):
 * set_observer() and observer_adopt() swap them under it and destroy the
 * old one after. */
void
op_observe (AtomrOp      *op,
            gint64        t_complete,
            gdouble       gpu_ms,
            const GError *error,
            gboolean      owned)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  ActorSource *src = priv->source;
  const ObserverSlot *slot;
  AtomrOpRecord r;

  if (src == NULL || !g_atomic_int_get (&src->has_observer))
    return;
  r.operation = op->operation;
  r.sequence = op->trace_id;
  r.t_submit = op->t_submit;
  r.t_enqueue = op->t_enqueue;
  r.t_complete = t_complete;
  r.gpu_ms = gpu_ms;
  r.stream_id = op->stream ? op->stream->id : 0;
  r.mailbox_depth = (guint) MAX (op->mail_at_run, 0);
  r.error = error;
  if (owned)
    {
      if (G_UNLIKELY (g_atomic_int_get (&src->observer_changed)))
        observer_adopt (src);
      slot = &src->observer;
      r.device = slot->device;   /* cached by set_observer: no type check per record */
      if (slot->fn)
        slot->fn (op->actor, &r, slot->data);
      return;
    }
  g_mutex_lock (&src->lock);
  slot = g_atomic_int_get (&src->observer_changed) ? &src->observer_pending : &src->observer;
  r.device = slot->device;
  if (slot->fn)
    slot->fn (op->actor, &r, slot->data);
  g_mutex_unlock (&src->lock);
}

void
op_update_info (AtomrOp  *op,
                gint64    t_complete,
                gdouble   gpu_ms,
                GError   *error)
{
  if (op->info == NULL)
    return;
  atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_SUBMITTED, op->t_submit);
  atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_ENQUEUED, op->t_enqueue);
  atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_COMPLETED, t_complete);
  atomr_launch_info_set_gpu_duration_ms (op->info, gpu_ms);
  if (error)
    atomr_launch_info_set_error (op->info, error);
}

gchar *
op_describe (AtomrOp *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  return g_strdup_printf ("%s #%" G_GUINT64_FORMAT " on %s", op->operation, op->sequence, priv->name);
}

/* Remembers what @op failed with, for whoever reads its output. */
void
op_note_failure (AtomrOp      *op,
                 const gchar  *origin,
                 const GError *error)
{
  if (op->fail_error != NULL)
    return;
  op->fail_origin = origin ? g_strdup (origin) : op_describe (op);
  op->fail_error = g_error_copy (error);
}

/* Replies with @error, or — when nobody asked for a reply — keeps it for
 * the actor's next barrier (and the launch info of the completion signals):
 * nothing fails silently.  (A cancelled request without a callback is not
 * reported: the caller asked for it.) */
void
op_return_error (AtomrOp *op,
                 GError  *error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);

  op_note_failure (op, NULL, error);
  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_atomic_pointer_add (&priv->n_failed, 1);
  if (op->reply)
    {
      atomr_reply_return_error (op->reply, error);
      return;
    }
  if (op->task)
    {
      g_task_return_error (op->task, error);
      return;
    }
  /* Cancelling is the caller's decision, not a failure to report. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_error_free (error);
      return;
    }
  {
    Failure f = { op->sequence, op_describe (op), error };
    g_debug ("%s (no callback) failed: %s", f.origin, error->message);
    g_mutex_lock (&priv->source->lock);
    g_array_append_val (priv->failures, f);
    g_mutex_unlock (&priv->source->lock);
  }
}

void
op_reply_error (AtomrOp *op,
                GError  *error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  gboolean emitted = op->info != NULL && op->t_enqueue == 0;

  g_atomic_pointer_add (&priv->n_ended_early, 1);
  if (op->t_enqueue == 0)
    op_observe (op, atomr_launch_info_now_ns (), -1.0, error,
                g_main_context_is_owner (priv->source->context));

  if (emitted)
    {
      op_update_info (op, atomr_launch_info_now_ns (), -1.0, error);
      op_emit (op, SIGNAL_BEFORE_COMPLETE);
    }
  op_return_error (op, error);
  if (emitted)
    {
      atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_REPLIED, atomr_launch_info_now_ns ());
      op_emit (op, SIGNAL_AFTER_COMPLETE);
    }
  op_free (op);
}

/* A barrier's outcome: every failure of a request without a callback made
 * before it, since the previous barrier.  NULL when there was none. */
GError *
take_failures (AtomrActor *self,
               guint64     before)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_autoptr(GString) list = NULL;
  GError *error = NULL;
  guint n = 0;

  g_mutex_lock (&priv->source->lock);
  for (guint i = 0; i < priv->failures->len; )
    {
      Failure *f = &g_array_index (priv->failures, Failure, i);
      if (f->sequence >= before)
        {
          i++;
          continue;
        }
      if (list == NULL)
        list = g_string_new (NULL);
      if (n < MAX_LISTED_FAILURES)
        g_string_append_printf (list, "%s%s: %s", n ? "; " : "", f->origin, f->error->message);
      n++;
      g_free (f->origin);
      g_error_free (f->error);
      g_array_remove_index (priv->failures, i);
    }
  g_mutex_unlock (&priv->source->lock);

  if (n > 0)
    error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_DEPENDENCY_FAILED,
                         "%u request%s without a callback failed on %s since the previous barrier: %s%s",
                         n, n == 1 ? "" : "s", priv->name, list->str,
                         n > MAX_LISTED_FAILURES ? "; and more" : "");
  return error;
}

CUevent
record_timing_start (AtomrActorPrivate *priv,
                     GError           **error)
{
  CUevent start;

  if (priv->stream->handle == NULL)
    return NULL;
  start = atomr_device_take_event (priv->device, ATOMR_EVENT_TIMING, error);
  if (start && !atomr_cuda_check (ATOMR_CU->cuEventRecord (start, priv->stream->handle),
                                  "cuEventRecord", error))
    {
      atomr_device_return_event (priv->device, priv->stream->generation, start, ATOMR_EVENT_TIMING);
      return NULL;
    }
  return start;
}


/* The first failed writer of something @op reads, or NULL. */
GError *
op_check_data_deps (AtomrOp *op)
{
  for (guint i = 0; i < op->data_deps.len; i++)
    {
      const gchar *origin = NULL;
      const GError *dep_error = atomr_slot_get_error (op->data_deps.data[i], &origin);

      if (dep_error)
        {
          g_autofree gchar *self_name = op_describe (op);
          op_note_failure (op, origin, dep_error);
          return g_error_new (ATOMR_ERROR, ATOMR_ERROR_DEPENDENCY_FAILED,
                              "%s was not run: it reads the output of %s, which failed: %s",
                              self_name, origin, dep_error->message);
        }
    }
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Work on a worker thread (atomr_op_run_on_worker)                     */

enum { WORK_NONE, WORK_RUNNING, WORK_DONE };

/* One pool for every actor of the process: plan creation is CPU work of
 * tens to hundreds of microseconds, rare (plans are cached), and bursty. */
static GThreadPool *work_pool;

void
work_thread (gpointer data,
             gpointer unused)
{
  AtomrOp *op = data;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  ActorSource *src = priv->source;
  GError *error = NULL;

  /* Once `working` is cleared the context may free the operation and the
   * actor with it: the wake-up needs a source of its own. */
  g_source_ref ((GSource *) src);
  if (!op->work (op, &error))
    op->work_error = error;
  g_atomic_int_set (&op->work_state, WORK_DONE);
  g_atomic_int_set (&src->working, 0);
  source_wake (src);
  actor_source_unref (src);
}

/* On the actor's context: @op, just taken from the mailbox's head (or run
 * inline, the mailbox empty), goes back to the head and waits there for
 * its work. */
void
op_start_work (AtomrOp *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  ActorSource *src = priv->source;
  GError *error = NULL;

  if (g_once_init_enter (&work_pool))
    {
      GThreadPool *pool = g_thread_pool_new (work_thread, NULL,
                                             (gint) MAX (g_get_num_processors (), 2),
                                             FALSE, NULL);
      g_once_init_leave (&work_pool, pool);
    }
  g_atomic_int_set (&op->work_state, WORK_RUNNING);
  g_mutex_lock (&src->lock);
  op->mail_link.data = op;
  g_queue_push_head_link (&src->mailbox, &op->mail_link);
  g_atomic_int_inc (&src->n_mail);
  g_atomic_int_set (&src->working, 1);
  g_mutex_unlock (&src->lock);
  if (!g_thread_pool_push (work_pool, op, &error))
    {
      /* No thread could be made: do the work here rather than fail. */
      g_clear_error (&error);
      work_thread (op, NULL);
    }
}

void
atomr_op_set_foreign_writes (AtomrOp *op)
{
  op->foreign_writes = TRUE;
}

void
atomr_op_run_on_worker (AtomrOp         *op,
                        AtomrOpWorkFunc  work)
{
  op->work = work;
}

/* An enqueue of the source's actor under way (op_run's steps 2-4): the
 * actor's mailbox waits (src->running, read by prepare and the pump), and
 * a _sync on this thread would deadlock (tls_op_run_depth). */
static inline void
enqueue_begin (ActorSource *src)
{
  g_atomic_int_inc (&src->running);
  tls_op_run_depth++;
}

static inline void
enqueue_end (ActorSource *src)
{
  g_atomic_int_add (&src->running, -1);
  tls_op_run_depth--;
}

void
op_run (AtomrOp *op)
{
  AtomrActor *self = op->actor;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  GError *error = NULL;
  CUevent start = NULL;
  gboolean ok = TRUE;

  atomr_stamp (ATOMR_STAMP_RUN);

  if (op->replied)
    {
      g_atomic_pointer_add (&priv->n_ended_early, 1);
      op_free (op);               /* cancelled while queued: answered already */
      return;
    }
  if (op->cancellable != NULL && g_cancellable_is_cancelled (op->cancellable))
    {
      op_reply_error (op, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                               "Operation was cancelled"));
      return;
    }
  if (!actor_ensure_stream (self, &error))
    {
      op_reply_error (op, error);
      return;
    }

  /* 1. Validate: every buffer live (a bare one has no device) and on our
   * device. */
  for (guint pass = 0; pass < 2; pass++)
    {
      AtomrVec *list = pass ? &op->writes : &op->reads;
      for (guint i = 0; i < list->len; i++)
        {
          AtomrBuffer *buffer = list->data[i];
          if (!atomr_buffer_check (buffer, &error))
            {
              g_prefix_error (&error, "%s: ", op->operation);
              op_reply_error (op, error);
              return;
            }
          if (atomr_buffer_get_device (buffer) != priv->device && !op->multi_device)
            {
              g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "%s: buffer %u of the request lives on device %d, the actor on device %d",
                           op->operation, i, atomr_device_get_ordinal (atomr_buffer_get_device (buffer)),
                           atomr_device_get_ordinal (priv->device));
              op_reply_error (op, error);
              return;
            }
        }
    }

  /* Its own problems first (a stale buffer says so), then what it reads. */
  if ((error = op_check_data_deps (op)) != NULL)
    {
      op_reply_error (op, error);
      return;
    }
  if (g_atomic_int_get (&op->work_state) == WORK_DONE)
    {
      /* Back from the worker: prepare ran before it. */
      if (op->work_error)
        {
          op_reply_error (op, g_steal_pointer (&op->work_error));
          return;
        }
    }
  else
    {
      if (op->prepare && !op->prepare (op, &error))
        {
          op_reply_error (op, error);
          return;
        }
      if (op->work)
        {
          op_start_work (op);
          return;
        }
    }

  op->stream = atomr_stream_ref (priv->stream);
  op->generation = priv->stream->generation;
  if (op->slot)
    atomr_slot_set_sequence (op->slot, op->trace_id);

  /* One look-up when nobody listens (the common case) instead of one per
   * signal: our signals have no details, so every handler connected to
   * them (blocked or not) matches detail 0. */
  if (g_signal_handler_find (self, G_SIGNAL_MATCH_DETAIL, 0, 0, NULL, NULL, NULL) != 0)
    for (guint s = 0; s < N_SIGNALS; s++)
      if (g_signal_has_handler_pending (self, atomr_actor_signals[s], 0, TRUE))
        op->signal_mask |= 1u << s;
  if (g_atomic_int_get (&priv->source->has_observer))
    op->mail_at_run = g_atomic_int_get (&priv->source->n_mail);
  if (op->signal_mask)
    {
      op->info = atomr_launch_info_new (priv->name, atomr_actor_get_library (self), op->operation);
      atomr_launch_info_set_sequence (op->info, op->trace_id);
      atomr_launch_info_set_generation (op->info, op->generation);
      atomr_launch_info_set_device_ordinal (op->info, atomr_device_get_ordinal (priv->device));
      atomr_launch_info_set_stream_id (op->info, op->stream->id);
      atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_SUBMITTED, op->t_submit);
      atomr_launch_info_set_mailbox_depth (op->info, g_atomic_int_get (&priv->source->n_mail));
      if (op->detail)
        atomr_launch_info_set_detail (op->info, op->detail);
      if (op->has_geometry)
        atomr_launch_info_set_geometry (op->info, op->grid[0], op->grid[1], op->grid[2],
                                        op->block[0], op->block[1], op->block[2], op->shared_mem);
    }

  /* From here to the end of the enqueue, requests submitted on this
   * thread (from a handler) queue behind this one. */
  enqueue_begin (priv->source);
  op_emit (op, SIGNAL_BEFORE_ENQUEUE);

  if (!atomr_device_enter (priv->device, &error))
    {
      enqueue_end (priv->source);
      op_reply_error (op, error);
      return;
    }

  /* 2. Order after what was submitted before, on the GPU. */
  for (guint i = 0; ok && i < op->deps.len; i++)
    {
      ok = atomr_slot_order (op->deps.data[i], op->stream, &error);
      if (op->info)
        atomr_launch_info_add_dependency (op->info, atomr_slot_get_sequence (op->deps.data[i]));
    }

  atomr_stamp (ATOMR_STAMP_ENTERED);
  /* 3. Enqueue. */
  if (ok && priv->timing)
    {
      /* The reference event must come first: GPU times are measured from it. */
      if (op->info && op->stream->handle)
        op->clock = atomr_gpu_clock_acquire (priv->device, op->generation);
      ok = (start = record_timing_start (priv, &error)) != NULL || op->stream->handle == NULL;
    }
  if (ok)
    {
      if (priv->nvtx)
        atomr_nvtx_push (op->operation);
      ok = op->enqueue ? op->enqueue (op, &error) : TRUE;
      if (priv->nvtx)
        atomr_nvtx_pop ();
    }
  if (start && ok)
    {
      op->start = start;      /* the operation's own fence will carry it */
      start = NULL;
    }
  if (start)
    atomr_device_return_event (priv->device, op->generation, start, ATOMR_EVENT_TIMING);
  atomr_device_leave (priv->device);
  atomr_stamp (ATOMR_STAMP_ENQUEUED);

  if (!ok)
    {
      enqueue_end (priv->source);
      if (error->domain == ATOMR_ERROR && error->code == ATOMR_ERROR_CONTEXT_POISONED)
        atomr_device_report_result (priv->device, op->generation, CUDA_ERROR_LAUNCH_FAILED);
      op_reply_error (op, error);
      return;
    }

  op->t_enqueue = atomr_launch_info_now_ns ();
  if (op->info)
    atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_ENQUEUED, op->t_enqueue);
  op_emit (op, SIGNAL_AFTER_ENQUEUE);

  /* 4. Completion: fence now, or share the fence of this batch. */
  atomr_vec_add (&priv->source->unfenced, op);
  enqueue_end (priv->source);
  /* Nothing in flight: nothing to share a fence with, and a request on its
   * own is the latency case; its fence goes in now instead of after a
   * round of the main loop (which then lay on the path from the GPU's
   * completion to the reply whenever the kernel was shorter than it).
   * A burst pays one fence more: its first request's. */
  if (priv->source->unfenced.len >= MAX_COALESCE)
    {
      actor_flush (self);
      /* A burst: a thread submitting thousands of requests without
       * iterating (or an own-thread actor's pump working through its
       * mailbox) would otherwise keep every one of them, a few hundred
       * bytes each, until the burst ends — megabytes of memory, cold when
       * the next request is made in it, where a finished batch's memory
       * is reused hot from the free lists.  One fence query per batch;
       * only requests whose completion runs none of the application's
       * code (op_is_quiet()), as nothing of it may run inside this call. */
      if (atomr_ring_len (&priv->source->inflight) >= 2 * MAX_COALESCE)
        actor_complete_done (priv->source, TRUE);
    }
  else if (priv->timing || atomr_ring_len (&priv->source->inflight) == 0 ||
           (priv->mode != ATOMR_COMPLETION_ADAPTIVE && priv->mode != ATOMR_COMPLETION_POLL))
    actor_flush (self);
  atomr_stamp (ATOMR_STAMP_RUN_END);
}

/* Records one fence after the operations enqueued since the last flush,
 * resolves their slots and hands them to the completion strategy. */
void
actor_flush (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  AtomrVec ops = priv->source->unfenced;
  AtomrCompletionMode mode = priv->mode;
  AtomrOp *last;
  AtomrFence *fence = NULL;
  GError *error = NULL;
  gboolean ok, held;

  if (ops.len == 0)
    return;
  if (ops.data == priv->source->unfenced.inline_data)
    ops.data = ops.inline_data;   /* the struct moved */
  atomr_vec_init (&priv->source->unfenced);
  last = ops.data[ops.len - 1];

  ok = held = atomr_device_hold (priv->device, last->generation);
  if (!ok)
    g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_STALE,
                 "%s: the context was rebuilt before the operation could be fenced",
                 last->operation);
  else
    {
      /* Nothing in flight and polled: the latency case, where a word the
       * GPU writes is seen sooner and cheaper than the event (bench-graph
       * 1x).  A burst's fences stay events: one driver call fewer each. */
      gboolean word = last->start == NULL && atomr_ring_len (&priv->source->inflight) == 0 &&
                      (mode == ATOMR_COMPLETION_POLL || mode == ATOMR_COMPLETION_ADAPTIVE);

      fence = (word ? atomr_stream_record_word : atomr_stream_record)
        (last->stream, last->start ? ATOMR_EVENT_TIMING : ATOMR_EVENT_PLAIN, &error);
      ok = fence != NULL;
      if (ok)
        fence->mode = mode;
      if (ok && last->start)
        {
          fence->start = last->start;   /* timing never coalesces: ops.len == 1 */
          last->start = NULL;
        }
      if (ok && mode == ATOMR_COMPLETION_HOST_FUNC && last->stream->handle)
        {
          HostFuncRecord *rec = g_new0 (HostFuncRecord, 1);
          rec->fence = atomr_fence_ref (fence);
          rec->source = (ActorSource *) g_source_ref ((GSource *) priv->source);
          if (!atomr_cuda_check (ATOMR_CU->cuLaunchHostFunc (last->stream->handle, host_func_signal, rec),
                                 "cuLaunchHostFunc", &error))
            {
              host_func_record_free (rec);
              ok = FALSE;
            }
        }
      atomr_device_release (priv->device);
    }

  if (!ok && held)
    {
      /* Enqueued, but nothing can tell when it finishes: wait here until
       * the stream has drained before the operations let go of their
       * buffers (a free would otherwise be ordered before the work). */
      atomr_stream_synchronize (last->stream);
    }

  for (guint i = 0; i < ops.len; i++)
    {
      AtomrOp *op = ops.data[i];

      if (!ok)
        {
          op_reply_error (op, g_error_copy (error));
          continue;
        }
      op->fence = atomr_fence_ref (fence);
      if (op->slot)
        atomr_slot_resolve (op->slot, fence, NULL);
      atomr_ring_push_tail (&priv->source->inflight, op);
    }
  atomr_vec_clear (&ops, NULL);
  g_clear_error (&error);
  if (!ok)
    return;

  if (mode == ATOMR_COMPLETION_SYNC)
    {
      fence->result = atomr_fence_synchronize (fence);
      g_atomic_int_set (&fence->signalled, 1);
    }
  /* A host stream has no host functions: the service plays that part. */
  else if (mode == ATOMR_COMPLETION_EVENT_THREAD ||
           (mode == ATOMR_COMPLETION_HOST_FUNC && last->stream->handle == NULL))
    hand_off (priv->source, last);
  atomr_fence_unref (fence);
}

void
op_complete (AtomrOp  *op,
             CUresult  res,
             gint64    t_seen)
{
  AtomrActor *self = op->actor;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  GError *error = NULL;
  gdouble gpu_ms = -1.0;

  if (op->generation != atomr_device_get_generation_internal (priv->device))
    g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_STALE,
                 "%s: the context of device %d was rebuilt (generation %u -> %u) "
                 "while the operation was in flight",
                 op->operation, atomr_device_get_ordinal (priv->device), op->generation,
                 atomr_device_get_generation (priv->device));
  else if (res != CUDA_SUCCESS)
    {
      atomr_cuda_check (res, op->operation, &error);
      atomr_device_report_result (priv->device, op->generation, res);
    }
  else if (op->fence->start)
    {
      gint64 gpu_start, gpu_end;

      gpu_ms = atomr_fence_elapsed_ms (op->fence);
      if (op->info && atomr_gpu_clock_convert (op->clock, op->fence, &gpu_start, &gpu_end))
        {
          atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_GPU_START, gpu_start);
          atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_GPU_END, gpu_end);
        }
    }

  __atomic_store_n (&priv->n_completed, priv->n_completed + 1, __ATOMIC_RELAXED);   /* read from any thread */
  if (op->replied)
    {
      /* Timed out and answered: the GPU is done with its buffers now. */
      g_clear_error (&error);
      op_free (op);
      return;
    }
  if (error == NULL && op->barrier)
    error = take_failures (self, op->sequence);

  /* The clock is read only for someone who looks at it (launch info,
   * observer): two clock reads per request otherwise. */
  if (op->info)
    op_update_info (op, atomr_launch_info_now_ns (), gpu_ms, error);
  op_emit (op, SIGNAL_BEFORE_COMPLETE);
  if (g_atomic_int_get (&priv->source->has_observer))
    op_observe (op, t_seen != 0 ? MAX (t_seen, op->t_enqueue) : atomr_launch_info_now_ns (), gpu_ms, error, TRUE);

  if (error)
    op_return_error (op, error);
  else if (op->reply)
    {
      if (op->complete)
        op->complete (op, op->reply);
      else
        atomr_reply_return_boolean (op->reply, TRUE);
    }
  else if (op->task)
    {
      /* A public AtomrOperation (atomr_op_new_task) */
      if (op->complete_task)
        op->complete_task (op, op->task);
      else
        g_task_return_boolean (op->task, TRUE);
    }
  /* else fire and forget: no reply to build */

  if (op->info)
    atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_REPLIED, atomr_launch_info_now_ns ());
  op_emit (op, SIGNAL_AFTER_COMPLETE);
  if (op->on_completed)
    op->on_completed (op, error, op->on_completed_data);
  op_free (op);
}

static AtomrOp *
op_new (gpointer             actor,
        const gchar         *operation,
        gpointer             source_tag,
        GCancellable        *cancellable,
        GAsyncReadyCallback  callback,
        gpointer             user_data,
        gboolean             with_task)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (actor);
  AtomrOp *op;

  atomr_stamp (ATOMR_STAMP_NEW);
  op = op_alloc ();
  atomr_vec_init (&op->reads);
  atomr_vec_init (&op->writes);
  atomr_vec_init (&op->deps);
  atomr_vec_init (&op->data_deps);
  op->actor = g_object_ref (actor);
  op->operation = operation;
  /* The actor's own count names a request in messages ("upload #2 on
   * copy-1") and orders failures for barriers; one counter for the
   * process gives traces a unique id for its events and dependencies. */
  op->sequence = (guint64) g_atomic_pointer_add (&priv->sequence, 1) + 1;
  op->trace_id = (guint64) g_atomic_pointer_add (&atomr_actor_next_sequence, 1) + 1;
  /* No callback, no reply: skip the reply object (pipelines then keep
   * their window with barriers). */
  if (callback != NULL && !with_task)
    {
      /* Our own GAsyncResult, not a GTask: ~5 000 instructions less per
       * request (atomr-reply-private.h).  It does not check the
       * cancellable when finished, as the GTask did not: cancellation
       * counts only before enqueue (op_run checks it); work already on
       * the GPU reports its real outcome. */
      op->reply = atomr_reply_new (actor, cancellable, source_tag, callback, user_data);
      op->for_sync = callback == atomr_sync_callback;
    }
  else if (callback != NULL)
    {
      op->task = g_task_new (actor, cancellable, callback, user_data);
      /* The function, not GLib's macro of the same name: the macro also
       * names the task after the tag, a g_strdup() per request and a
       * g_source_set_name() per reply (~6% of a small request's host
       * cost, tests/bench/core/bench-envelope-host under callgrind). */
      (g_task_set_source_tag) (op->task, source_tag);
      /* Cancellation counts only before enqueue (op_run checks it); work
       * already on the GPU reports its real outcome. */
      g_task_set_check_cancellable (op->task, FALSE);
      op->for_sync = callback == atomr_sync_callback;
    }
  if (cancellable)
    op->cancellable = g_object_ref (cancellable);
  op->t_submit = atomr_launch_info_now_ns ();
  return op;
}

AtomrOp *
atomr_op_new (gpointer             actor,
              const gchar         *operation,
              gpointer             source_tag,
              GCancellable        *cancellable,
              GAsyncReadyCallback  callback,
              gpointer             user_data)
{
  return op_new (actor, operation, source_tag, cancellable, callback, user_data, FALSE);
}

AtomrOp *
atomr_op_new_task (gpointer             actor,
                   const gchar         *operation,
                   gpointer             source_tag,
                   GCancellable        *cancellable,
                   GAsyncReadyCallback  callback,
                   gpointer             user_data)
{
  return op_new (actor, operation, source_tag, cancellable, callback, user_data, TRUE);
}

void
op_free (AtomrOp *op)
{
  if (op->cancel_id)
    g_cancellable_disconnect (op->cancellable, op->cancel_id);
  /* An operation that never reached the GPU stands for what it followed;
   * what it followed on its own actor may still wait for its batch fence:
   * fence it first, so that the forwarded fences are real.  Its failure
   * goes with it to whoever reads its output. */
  if (op->slot && !atomr_slot_check (op->slot, NULL))
    {
      AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
      if (priv->source->unfenced.len > 0)
        actor_flush (op->actor);
      if (op->fail_error)
        atomr_slot_set_error (op->slot, op->fail_origin, op->fail_error);
      atomr_slot_resolve (op->slot, NULL, &op->deps);
    }
  g_clear_pointer (&op->slot, atomr_slot_unref);
  atomr_vec_clear (&op->deps, (GDestroyNotify) atomr_slot_unref);
  atomr_vec_clear (&op->data_deps, (GDestroyNotify) atomr_slot_unref);
  if (op->keep)
    {
      for (guint i = 0; i < op->keep->len; i++)
        {
          Kept *k = &g_array_index ((GArray *) op->keep, Kept, i);
          if (k->destroy)
            k->destroy (k->pointer);
        }
      g_array_unref ((GArray *) op->keep);
    }
  if (op->data_clear)
    op->data_clear (op->data);
  if (op->data_free)
    op->data_free (op->data);
  atomr_vec_clear (&op->reads, g_object_unref);
  atomr_vec_clear (&op->writes, g_object_unref);
  if (op->start)
    atomr_device_return_event (atomr_actor_get_device (op->actor), op->generation, op->start,
                               ATOMR_EVENT_TIMING);
  g_clear_pointer (&op->clock, atomr_gpu_clock_release);
  g_clear_pointer (&op->fence, atomr_fence_unref);
  g_clear_pointer (&op->stream, atomr_stream_unref);
  g_clear_pointer (&op->info, atomr_launch_info_unref);
  if (!op->detail_static)
    g_free (op->detail);
  g_free (op->fail_origin);
  g_clear_error (&op->fail_error);
  g_clear_error (&op->work_error);
  g_clear_pointer (&op->reply, atomr_reply_release);
  g_clear_object (&op->task);
  g_clear_object (&op->cancellable);
  g_object_unref (op->actor);
  op_dealloc (op);
}


void
atomr_op_read (AtomrOp     *op,
               AtomrBuffer *buffer)
{
  atomr_vec_add (&op->reads, g_object_ref (buffer));
}

void
atomr_op_write (AtomrOp     *op,
                AtomrBuffer *buffer)
{
  atomr_vec_add (&op->writes, g_object_ref (buffer));
}

void
atomr_op_set_data (AtomrOp        *op,
                   gpointer        data,
                   GDestroyNotify  destroy)
{
  op->data = data;
  op->data_free = destroy;
}

gpointer
atomr_op_alloc_data (AtomrOp        *op,
                     gsize           size,
                     GDestroyNotify  clear)
{
  g_return_val_if_fail (op->data == NULL, NULL);

  if (size <= sizeof op->inline_data)
    {
      memset (op->inline_data, 0, size);
      op->data = op->inline_data;
      op->data_free = NULL;
    }
  else
    {
      op->data = g_malloc0 (size);
      op->data_free = g_free;
    }
  op->data_clear = clear;
  return op->data;
}

gpointer
atomr_op_get_data (AtomrOp *op)
{
  return op->data;
}

void
atomr_op_set_enqueue (AtomrOp            *op,
                      AtomrOpEnqueueFunc  enqueue)
{
  op->enqueue = enqueue;
}

void
atomr_op_set_complete (AtomrOp             *op,
                       AtomrOpCompleteFunc  complete)
{
  op->complete = complete;
}

void
atomr_op_set_complete_task (AtomrOp                 *op,
                            AtomrOpTaskCompleteFunc  complete)
{
  op->complete_task = complete;
}

void
atomr_op_set_geometry (AtomrOp     *op,
                       const guint  grid[3],
                       const guint  block[3],
                       guint        shared_mem)
{
  op->has_geometry = TRUE;
  memcpy (op->grid, grid, sizeof op->grid);
  memcpy (op->block, block, sizeof op->block);
  op->shared_mem = shared_mem;
}

void
atomr_op_set_multi_device (AtomrOp *op)
{
  op->multi_device = TRUE;
}

void
atomr_op_set_detail (AtomrOp     *op,
                     const gchar *detail)
{
  if (!op->detail_static)
    g_free (op->detail);
  op->detail_static = FALSE;
  op->detail = g_strdup (detail);
  /* from the enqueue function (on the actor's context, before the
   * after-enqueue signal): the launch info follows, so traces show what
   * actually ran */
  if (op->info != NULL)
    atomr_launch_info_set_detail (op->info, detail);
}

void
atomr_op_set_detail_static (AtomrOp     *op,
                            const gchar *detail)
{
  /* One string copy (malloc + free) less per kernel launch. */
  if (!op->detail_static)
    g_free (op->detail);
  op->detail_static = TRUE;
  op->detail = (gchar *) detail;
}

void
atomr_op_keep_full (AtomrOp        *op,
                    gpointer        pointer,
                    GDestroyNotify  destroy)
{
  Kept k = { pointer, destroy };

  if (op->keep == NULL)
    op->keep = (GPtrArray *) g_array_new (FALSE, FALSE, sizeof (Kept));
  g_array_append_val ((GArray *) op->keep, k);
}

void
atomr_op_keep (AtomrOp  *op,
               gpointer  object)
{
  atomr_op_keep_full (op, g_object_ref (object), g_object_unref);
}

AtomrActor *
atomr_op_get_actor (AtomrOp *op)
{
  return op->actor;
}

AtomrStream *
atomr_op_get_stream (AtomrOp *op)
{
  return op->stream;
}

CUstream
atomr_op_get_cu_stream (AtomrOp *op)
{
  return op->stream->handle;
}

gboolean
atomr_op_is_host (AtomrOp *op)
{
  return op->stream->handle == NULL;
}

guint
atomr_op_get_generation (AtomrOp *op)
{
  return op->generation;
}


void
atomr_op_set_barrier (AtomrOp *op)
{
  op->barrier = TRUE;
}

/* Any thread: a queued request's cancellable fired. */
void
op_cancelled_cb (GCancellable *cancellable,
                 gpointer      data)
{
  AtomrOp *op = data;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);

  g_atomic_int_inc (&priv->source->n_cancelled);
  source_wake (priv->source);
}

/* Whether this thread is the home of @context: it runs it as its
 * thread-default context, or it is the process's main thread and @context
 * the global default.  (A thread that merely falls back to the global
 * default context is not its home.) */
static gboolean
is_home_thread (GMainContext *context)
{
  static __thread gint main_thread;   /* 0 unknown, 1 yes, 2 no */
  GMainContext *own = g_main_context_get_thread_default ();

  if (own != NULL)
    return own == context;
  if (context != g_main_context_default ())
    return FALSE;
  if (G_UNLIKELY (main_thread == 0))
    main_thread = syscall (SYS_gettid) == getpid () ? 1 : 2;
  return main_thread == 1;
}

void
atomr_op_submit (AtomrOp *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  ActorSource *src = priv->source;
  gboolean inline_run, was_empty, wake = FALSE, acquired = FALSE;

  atomr_stamp (ATOMR_STAMP_SUBMIT);
  /* An actor built bare (g_object_new(), a binding's constructor) has no
   * device and no stream: every request fails, none crashes. */
  if (G_UNLIKELY (priv->device == NULL))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "%s: this %s was constructed without a device (g_object_new() "
                                      "or a binding's constructor); make actors with their _new() "
                                      "function", op->operation, G_OBJECT_TYPE_NAME (op->actor)));
      return;
    }

  /* Memory imported read-only (a DLPack capsule with the read-only flag)
   * is never an output: refuse before any hazard is registered. */
  for (guint i = 0; !op->foreign_writes && i < op->writes.len; i++)
    if (G_UNLIKELY (atomr_buffer_get_read_only (op->writes.data[i])))
      {
        g_autofree gchar *name = op_describe (op);
        atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                        "%s: an output (%" G_GUINT64_FORMAT " bytes of %s) is "
                                        "read-only memory (imported from a read-only DLPack tensor "
                                        "or array interface); it must not be written",
                                        name, atomr_buffer_get_byte_size (op->writes.data[i]),
                                        atomr_dtype_get_name (atomr_buffer_get_dtype (op->writes.data[i]))));
        return;
      }

  /* An actor recording into a graph keeps the request for the graph: it
   * is not run now (atomr-graph.c). */
  if (G_UNLIKELY (g_atomic_pointer_get (&src->capture) != NULL))
    {
      /* A weak reference: the graph may be finalized meanwhile. */
      gpointer graph = g_weak_ref_get (&src->capture_ref);
      if (graph)
        {
          atomr_graph_record_op (graph, op);
          g_object_unref (graph);
          return;
        }
    }

  /* A _sync helper inside an enqueue (a before-enqueue handler, an enqueue
   * function) would wait for an operation that cannot go on until it
   * returns: fail at once. */
  if (op->for_sync && tls_op_run_depth > 0)
    {
      g_autofree gchar *name = op_describe (op);
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_WOULD_DEADLOCK,
                                      "%s: a blocking call from inside an operation's enqueue "
                                      "(a before-enqueue or after-enqueue handler) would wait "
                                      "forever; use the _async call there", name));
      return;
    }

  /* Listen to the cancellable: a queued request is answered as soon as it
   * is cancelled, not when the mailbox reaches it. */
  if (op->cancellable)
    op->cancel_id = g_cancellable_connect (op->cancellable, G_CALLBACK (op_cancelled_cb), op, NULL);

  /* Hazards are registered now, on the submitting thread: program order.
   * Registering and queueing happen under the mailbox lock, so that the
   * mailbox order of an actor is its registration order — what lets an
   * operation treat its actor's earlier ones as already ahead. */
  /* On the actor's home thread while nobody iterates its context, the
   * request is enqueued now rather than at the next iteration: the thread
   * takes the context for the enqueue (as a _sync helper does), so a
   * pipeline submitted from the application's main loop thread reaches the
   * GPU while it is being submitted instead of after it. */
  if (is_home_thread (priv->context))
    acquired = g_main_context_acquire (priv->context);

  g_mutex_lock (&src->lock);
  if (op->reads.len || op->writes.len)
    {
      op->slot = atomr_slot_new (op->actor);
      atomr_hazards_register (op->slot, &op->reads, &op->writes, &op->deps, &op->data_deps);
      /* A _sync helper's request: the helper drives what it waits for. */
      if (G_UNLIKELY (op->for_sync) && tls_sync != NULL && tls_sync->actor == op->actor)
        {
          if (tls_sync->deps == NULL)
            tls_sync->deps = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_slot_unref);
          for (guint i = 0; i < op->deps.len; i++)
            g_ptr_array_add (tls_sync->deps, atomr_slot_ref (op->deps.data[i]));
        }
    }
  /* Run at once only from the actor's context and never while one of its
   * operations is being enqueued (a handler): that one comes first. */
  was_empty = g_queue_is_empty (&src->mailbox);
  /* A context just acquired is owned: the ownership check (another
   * look-up of the thread's GThread) only for contexts taken before. */
  inline_run = was_empty && (acquired || g_main_context_is_owner (priv->context)) &&
               g_atomic_int_get (&src->running) == 0 && op_deps_ready (op, NULL, NULL);
  if (!inline_run)
    {
      op->mail_link.data = op;
      g_queue_push_tail_link (&src->mailbox, &op->mail_link);
      g_atomic_int_inc (&src->n_mail);
      /* One wake-up per burst: a request queued behind others needs none.
       * The mailbox is popped under this lock, so when it was not empty
       * the request ahead is still queued, its own wake-up is still to be
       * served (or the pump serving it goes on to this one), and a head
       * that waits (a dependency, a worker) is woken by what it waits for.
       * g_main_context_wakeup() writes an eventfd: a system call per
       * request when a thread submits a pipeline without iterating.  A
       * _sync driving the actor (extra_wake) is always woken. */
      wake = was_empty || src->extra_wake != NULL;
    }
  g_mutex_unlock (&src->lock);

  atomr_stamp (ATOMR_STAMP_MAILBOX);
  if (inline_run)
    op_run (op);
  else if (wake)
    source_wake (src);
  if (acquired)
    g_main_context_release (priv->context);
  atomr_stamp (ATOMR_STAMP_SUBMIT_END);
}

void
atomr_op_fail (AtomrOp *op,
               GError  *error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);

  g_atomic_pointer_add (&priv->n_ended_early, 1);
  op_return_error (op, error);
  op_free (op);
}


/* The finish functions of every request: @result is the request's
 * AtomrReply, or the GTask of a public AtomrOperation (or of a
 * g_task_report_*() by an _async function that failed before making its
 * request). */
gboolean
atomr_op_finish_boolean (gpointer       actor,
                         GAsyncResult  *result,
                         gpointer       source_tag,
                         GError       **error)
{
  g_return_val_if_fail (atomr_reply_is_valid (result, actor, source_tag), FALSE);
  return atomr_reply_propagate_boolean (result, error);
}

gpointer
atomr_op_finish_pointer (gpointer       actor,
                         GAsyncResult  *result,
                         gpointer       source_tag,
                         GError       **error)
{
  g_return_val_if_fail (atomr_reply_is_valid (result, actor, source_tag), NULL);
  return atomr_reply_propagate_pointer (result, error);
}

gdouble
atomr_op_finish_double (gpointer       actor,
                        GAsyncResult  *result,
                        gpointer       source_tag,
                        GError       **error)
{
  g_return_val_if_fail (atomr_reply_is_valid (result, actor, source_tag), 0.0);
  return atomr_reply_propagate_double (result, error);
}

CUstream
atomr_actor_get_cu_stream (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  return priv->stream ? priv->stream->handle : NULL;
}

AtomrStream *
atomr_actor_get_stream (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  return priv->stream;
}

