/* atomr-actor.c — the actor base class and the envelope
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-completion-service-private.h"
#include "atomr-enum-types.h"
#include "atomr-error.h"
#include "atomr-nvtx-private.h"
#include "graph/atomr-graph-private.h"
#include "trace/atomr-gpu-clock-private.h"
#include "trace/atomr-inspector-server-private.h"

/**
 * AtomrActor:
 *
 * The base of every actor: an object that owns a CUDA stream on one
 * [class@Atomr.Device] and takes requests asynchronously.
 *
 * An actor is bound to one [struct@GLib.MainContext] ([property@Atomr.Actor:context]; by default
 * the thread-default context of the thread that made it).  All of its
 * mutable state is touched only while that context is iterated: that is its
 * mailbox.  Every operation is an `_async`/`_finish` pair that may be called
 * from any thread; the request is queued to the actor's context, enqueued on
 * the GPU there, and the reply comes back on the caller's thread-default
 * context once the GPU has finished.
 *
 * All operations of all actors go through one envelope: validate the
 * buffers (a buffer of an older device generation fails at once with
 * %ATOMR_ERROR_STALE), order them against work on other streams with CUDA
 * events (a reader waits on the GPU for the last writer, never on the host),
 * emit [signal@Atomr.Actor::before-enqueue], enqueue, emit [signal@Atomr.Actor::after-enqueue],
 * learn completion through the [property@Atomr.Actor:completion-mode] strategy, emit
 * [signal@Atomr.Actor::before-complete], reply, emit [signal@Atomr.Actor::after-complete], and
 * only then release the buffers the operation kept alive.
 *
 * A [class@Gio.Cancellable] cancels a request that has not been enqueued yet; work
 * already on the GPU runs to completion.
 *
 * The base class itself offers the memory operations every stream can do:
 * upload, download, fill, copy and a barrier.
 *
 * Errors travel along dependencies: a request that reads what a failed
 * request should have written fails with %ATOMR_ERROR_DEPENDENCY_FAILED,
 * naming the original; a request without a callback that fails is
 * reported by the next barrier of its actor.  Nothing fails silently.
 *
 * Threads: requests may be submitted from any thread, also from a signal
 * handler or a reply callback on the actor's own context (they are queued
 * behind the operation being dispatched: program order always holds).  The
 * mailbox, enqueue and completion run on the actor's context; the device's
 * completion service thread only wakes it up.
 *
 * Since: 0.1
 */

#define DEFAULT_SPIN_USEC 100

/* Operations enqueued back to back share one CUDA event, up to this many:
 * an event per operation costs the GPU more than the operation itself for
 * small work (raw fills: 0.3 M/s with an event each, 0.8 M/s with one per
 * 32; tests/bench/core/bench-core). */
#define MAX_COALESCE 32

/* A barrier lists at most this many failures by name. */
#define MAX_LISTED_FAILURES 8

typedef struct _ActorSource ActorSource;

typedef struct
{
  guint64  sequence;
  gchar   *origin;
  GError  *error;
} Failure;

typedef struct
{
  AtomrDevice        *device;
  GMainContext       *context;
  gchar              *name;
  AtomrCompletionMode mode;
  gboolean            timing;
  gboolean            nvtx;
  guint               spin_usec;
  guint               timeout_ms;

  AtomrStream        *stream;
  guint64             sequence;     /* atomic: numbers requests as they are made */
  guint64             n_completed;
  gint64              n_ended_early; /* atomic: freed without reaching the GPU */
  gint64              n_failed;      /* atomic: answered with an error (not cancelled) */
  ActorSource        *source;
  guint               running;      /* op_run() depth, on the actor's context */

  GArray             *failures;     /* Failure, under source->lock: unreported failures */
} AtomrActorPrivate;

/* The actor's source: everything prepare() and check() touch lives here or
 * in operations (which hold the actor), never in the actor itself, so that
 * the last reference to the actor may be dropped on any thread while its
 * context is being iterated.  dispatch() takes a strong reference through
 * the weak one, or does nothing once the actor is gone. */
struct _ActorSource
{
  GSource       source;
  GWeakRef      actor;
  GMainContext *context;      /* strong: woken from other threads */
  GMutex        lock;
  GQueue        mailbox;      /* AtomrOp*, under lock */
  gint          n_mail;       /* atomic */
  gint          n_cancelled;  /* atomic: a queued request's cancellable fired */
  GMainContext *extra_wake;   /* under lock: a _sync driving the actor */
  GQueue        inflight;     /* AtomrOp*, on the actor's context only */
  AtomrVec      unfenced;     /* AtomrOp* enqueued, awaiting a shared fence */
  AtomrSlot    *blocked;      /* the mailbox head waits for this slot */
  gint64        head_since;   /* when the current head was first seen pending */
  gint          spin_usec;    /* atomic copies of the actor's properties */
  gint          timeout_ms;
  gpointer      capture;      /* under lock (atomic for the fast path): the
                               * AtomrGraph recording, never dereferenced */
  GWeakRef      capture_ref;  /* the same graph: safe against its finalization */
  gint          working;      /* atomic: the mailbox head's work runs on a
                               * worker (atomr_op_run_on_worker) */
  GAsyncQueue  *graveyard;    /* host-function records to free on the context */
  gint          n_graveyard;  /* atomic: its length, without its lock */
};

struct _AtomrOp
{
  AtomrActor         *actor;
  const gchar        *operation;
  GTask              *task;       /* NULL when nobody asked for a reply */
  GCancellable       *cancellable;
  gulong              cancel_id;
  AtomrVec            reads;      /* AtomrBuffer*, owned */
  AtomrVec            writes;     /* AtomrBuffer*, owned */
  GPtrArray          *keep;
  gpointer            data;
  GDestroyNotify      data_free;
  GDestroyNotify      data_clear;  /* for atomr_op_alloc_data() storage */
  AtomrOpEnqueueFunc  enqueue;
  AtomrOpCompleteFunc complete;
  AtomrStream        *stream;
  AtomrFence         *fence;
  AtomrSlot          *slot;       /* resolved when enqueued or failed */
  AtomrVec            deps;       /* AtomrSlot* this op must follow, owned */
  AtomrVec            data_deps;  /* AtomrSlot* whose output it reads, owned */
  guint               n_ready;    /* deps known to be resolved */
  gchar              *detail;
  gboolean            has_geometry;
  guint               grid[3];
  guint               block[3];
  guint               shared_mem;
  gint64              t_submit;   /* ns, atomr_launch_info_now_ns() */
  gint64              t_enqueue;  /* ns */
  guint               generation;
  guint64             sequence;   /* per actor, from 1 */
  guint64             trace_id;   /* per process: the trace's "seq" */
  guint               signal_mask;
  gboolean            handed_off;
  gboolean            multi_device; /* buffers of other devices allowed */
  gboolean            replied;    /* answered early (cancelled, timed out) */
  gboolean            for_sync;   /* made by a _sync helper */
  gboolean            barrier;
  gchar              *fail_origin; /* the original failure this op stands for */
  GError             *fail_error;
  CUevent             start;      /* timing start, until the fence takes it */
  AtomrGpuClock      *clock;      /* timing on: puts GPU times on the host clock */
  AtomrLaunchInfo    *info;
  AtomrOpPrepareFunc  prepare;    /* before the device is held */
  AtomrOpWorkFunc     work;       /* asked for by prepare: runs on a worker */
  gint                work_state; /* atomic: WORK_NONE, _RUNNING, _DONE */
  GError             *work_error; /* set by the worker before WORK_DONE */
  AtomrOpCompletedFunc on_completed;  /* after the reply, on the GPU path */
  gpointer            on_completed_data;
  const gchar        *capture_forbidden; /* why the request cannot be captured */
  /* Small requests live here: one allocation less per operation. */
  guint64             inline_data[12];
};

typedef struct
{
  gpointer       pointer;
  GDestroyNotify destroy;
} Kept;

enum {
  PROP_0,
  PROP_DEVICE,
  PROP_CONTEXT,
  PROP_NAME,
  PROP_LIBRARY,
  PROP_COMPLETION_MODE,
  PROP_TIMING,
  PROP_NVTX,
  PROP_SPIN_USEC,
  PROP_STREAM_ID,
  PROP_TIMEOUT_MS,
  N_PROPS
};

enum {
  SIGNAL_BEFORE_ENQUEUE,
  SIGNAL_AFTER_ENQUEUE,
  SIGNAL_BEFORE_COMPLETE,
  SIGNAL_AFTER_COMPLETE,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];
static gsize next_sequence;   /* atomic: the last sequence number handed out */

/* How many op_run() are on this thread's stack (any actor): a _sync from
 * there could wait for the very operation that is being enqueued. */
static __thread guint tls_op_run_depth;

/* The innermost _sync helper waiting on this thread: the request it makes
 * tells it what it depends on (atomr_op_submit), see atomr_sync_wait(). */
static __thread AtomrSync *tls_sync;

static void atomr_actor_initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (AtomrActor, atomr_actor, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (AtomrActor)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                         atomr_actor_initable_iface_init))

static void op_run (AtomrOp *op);
static void op_free (AtomrOp *op);
static void op_complete (AtomrOp *op, CUresult res);
static void actor_flush (AtomrActor *self);

/* ------------------------------------------------------------------ */
/* Waking the actor up                                                  */

static void
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
static void
fence_passed (gpointer data,
              gpointer unused)
{
  source_wake (data);
}

/* Stop polling @op's fence from the context: the device's completion
 * service wakes us when it has passed. */
static void
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
                                  (GDestroyNotify) g_source_unref);
}

/* ------------------------------------------------------------------ */
/* Host-function completion: runs on a driver thread, may not call CUDA. */

typedef struct
{
  AtomrFence   *fence;
  ActorSource  *source;
} HostFuncRecord;

static void CUDA_CB
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

static void
host_func_record_free (gpointer data)
{
  HostFuncRecord *rec = data;

  atomr_fence_unref (rec->fence);
  g_source_unref ((GSource *) rec->source);
  g_free (rec);
}

/* ------------------------------------------------------------------ */
/* The actor's source: mailbox and completions.                         */

/* Decided by the mode the fence was flushed under, never the current one:
 * changing #AtomrActor:completion-mode with work in flight is safe. */
static gboolean
op_is_done (AtomrOp  *op,
            CUresult *result)
{
  AtomrFence *fence = op->fence;
  CUresult res;

  if (fence->generation != atomr_device_get_generation (op->stream->device))
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
static gint64
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
static AtomrOp *
first_unanswered (ActorSource *src)
{
  for (GList *l = src->inflight.head; l; l = l->next)
    if (!((AtomrOp *) l->data)->replied)
      return l->data;
  return NULL;
}

static gboolean
mailbox_ready (ActorSource *src)
{
  if (g_atomic_int_get (&src->n_cancelled) > 0)
    return TRUE;
  if (g_atomic_int_get (&src->working))
    return FALSE;               /* the worker wakes us when it is done */
  if (g_atomic_int_get (&src->n_mail) == 0)
    return FALSE;
  return src->blocked == NULL || atomr_slot_check (src->blocked, NULL);
}

/* TRUE when every slot @op follows is resolved; else remembers the one
 * it waits for in *blocked and asks for @wake to be woken then. */
static gboolean
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

static gboolean
actor_source_prepare (GSource *source,
                      gint    *timeout)
{
  ActorSource *src = (ActorSource *) source;
  AtomrOp *head;
  CUresult res;
  gint64 now, remaining;

  *timeout = -1;
  if (mailbox_ready (src) || g_atomic_int_get (&src->n_graveyard) > 0 || src->unfenced.len > 0)
    return TRUE;

  head = g_queue_peek_head (&src->inflight);
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
      if (now - src->head_since < g_atomic_int_get (&src->spin_usec))
        *timeout = 0;
      else
        hand_off (src, head);
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

static gboolean
actor_source_check (GSource *source)
{
  ActorSource *src = (ActorSource *) source;
  AtomrOp *head;
  CUresult res;

  if (mailbox_ready (src) || g_atomic_int_get (&src->n_graveyard) > 0 || src->unfenced.len > 0)
    return TRUE;
  head = g_queue_peek_head (&src->inflight);
  if (head == NULL)
    return FALSE;
  if (op_is_done (head, &res))
    return TRUE;
  if (head->replied)
    head = first_unanswered (src);
  return head != NULL && op_watchdog_remaining (src, head, g_get_monotonic_time ()) == 0;
}

static void op_return_error (AtomrOp *op, GError *error);

/* Answers the queued requests whose cancellable fired, without waiting for
 * the mailbox to reach them; they stay queued (answered) so that what they
 * stand for in the hazard order is resolved in order. */
static void
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

static void
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

/* One pass over the actor: run what the mailbox allows, fence it, complete
 * what the GPU finished.  On the actor's context (or by a _sync that
 * acquired it); @wake is the context to wake when a blocked head may go. */
static void
actor_pump (AtomrActor   *self,
            GMainContext *wake,
            gboolean      hand_off_pending)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  ActorSource *src = priv->source;
  gpointer rec;
  AtomrOp *op;
  CUresult res;

  answer_cancelled (src);

  /* The mailbox runs in order; its head may wait for another actor to
   * enqueue what it depends on (then that actor's slot wakes us). */
  for (;;)
    {
      g_mutex_lock (&src->lock);
      op = g_queue_peek_head (&src->mailbox);
      g_mutex_unlock (&src->lock);
      if (op == NULL || g_atomic_int_get (&src->working) ||
          !op_deps_ready (op, wake, &src->blocked))
        break;
      g_mutex_lock (&src->lock);
      g_queue_pop_head (&src->mailbox);
      g_atomic_int_dec_and_test (&src->n_mail);
      g_mutex_unlock (&src->lock);
      op_run (op);
    }
  /* One fence for what this pass enqueued (and for inline requests made
   * since the last iteration). */
  actor_flush (self);

  while ((op = g_queue_peek_head (&src->inflight)) && op_is_done (op, &res))
    {
      g_queue_pop_head (&src->inflight);
      src->head_since = 0;
      op_complete (op, res);
    }
  /* Replies often submit the next request right away (inline, since we
   * own the context): fence it now rather than one iteration later. */
  actor_flush (self);

  {
    gint64 now = g_get_monotonic_time ();
    while ((op = first_unanswered (src)) && op_watchdog_remaining (src, op, now) == 0)
      op_time_out (op);
  }
  /* A _sync waits on its private context: the service must wake it. */
  op = g_queue_peek_head (&src->inflight);
  if (op != NULL && hand_off_pending)
    hand_off (src, op);

  while ((rec = g_async_queue_try_pop (src->graveyard)))
    {
      g_atomic_int_dec_and_test (&src->n_graveyard);
      host_func_record_free (rec);
    }
}

static gboolean
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

static void
actor_source_finalize (GSource *source)
{
  ActorSource *src = (ActorSource *) source;

  /* Host-function records hold the source: the graveyard is empty. */
  g_weak_ref_clear (&src->actor);
  g_weak_ref_clear (&src->capture_ref);
  g_mutex_clear (&src->lock);
  g_async_queue_unref (src->graveyard);
  atomr_vec_clear (&src->unfenced, NULL);
  g_main_context_unref (src->context);
}

static GSourceFuncs actor_source_funcs = {
  actor_source_prepare,
  actor_source_check,
  actor_source_dispatch,
  actor_source_finalize,
  NULL, NULL
};

/* ------------------------------------------------------------------ */
/* Operations                                                           */

static gboolean
actor_ensure_stream (AtomrActor *self,
                     GError    **error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  AtomrActorClass *klass = ATOMR_ACTOR_GET_CLASS (self);
  AtomrStream *stream;

  if (G_LIKELY (priv->stream != NULL &&
                priv->stream->generation == atomr_device_get_generation (priv->device)))
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
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STREAM_ID]);

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
    g_signal_emit (op->actor, signals[signal], 0, op->info);
}

static void
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

static gchar *
op_describe (AtomrOp *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  return g_strdup_printf ("%s #%" G_GUINT64_FORMAT " on %s", op->operation, op->sequence, priv->name);
}

/* Remembers what @op failed with, for whoever reads its output. */
static void
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
static void
op_return_error (AtomrOp *op,
                 GError  *error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);

  op_note_failure (op, NULL, error);
  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_atomic_pointer_add (&priv->n_failed, 1);
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

static void
op_reply_error (AtomrOp *op,
                GError  *error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  gboolean emitted = op->info != NULL && op->t_enqueue == 0;

  g_atomic_pointer_add (&priv->n_ended_early, 1);

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
static GError *
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

static CUevent
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
static GError *
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

static void
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
  g_source_unref ((GSource *) src);
}

/* On the actor's context: @op, just taken from the mailbox's head (or run
 * inline, the mailbox empty), goes back to the head and waits there for
 * its work. */
static void
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
  g_queue_push_head (&src->mailbox, op);
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
atomr_op_run_on_worker (AtomrOp         *op,
                        AtomrOpWorkFunc  work)
{
  op->work = work;
}

static void
op_run (AtomrOp *op)
{
  AtomrActor *self = op->actor;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  GError *error = NULL;
  CUevent start = NULL;
  gboolean ok = TRUE;

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
      if (g_signal_has_handler_pending (self, signals[s], 0, TRUE))
        op->signal_mask |= 1u << s;
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
  priv->running++;
  tls_op_run_depth++;
  op_emit (op, SIGNAL_BEFORE_ENQUEUE);

  if (!atomr_device_enter (priv->device, &error))
    {
      priv->running--;
      tls_op_run_depth--;
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

  if (!ok)
    {
      priv->running--;
      tls_op_run_depth--;
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
  priv->running--;
  tls_op_run_depth--;
  if (priv->timing || priv->source->unfenced.len >= MAX_COALESCE ||
      (priv->mode != ATOMR_COMPLETION_ADAPTIVE && priv->mode != ATOMR_COMPLETION_POLL))
    actor_flush (self);
}

/* Records one fence after the operations enqueued since the last flush,
 * resolves their slots and hands them to the completion strategy. */
static void
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
      fence = atomr_stream_record (last->stream,
                                   last->start ? ATOMR_EVENT_TIMING : ATOMR_EVENT_PLAIN, &error);
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
      g_queue_push_tail (&priv->source->inflight, op);
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

static void
op_complete (AtomrOp  *op,
             CUresult  res)
{
  AtomrActor *self = op->actor;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  GError *error = NULL;
  gdouble gpu_ms = -1.0;

  if (op->generation != atomr_device_get_generation (priv->device))
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

  priv->n_completed++;
  if (op->replied)
    {
      /* Timed out and answered: the GPU is done with its buffers now. */
      g_clear_error (&error);
      op_free (op);
      return;
    }
  if (error == NULL && op->barrier)
    error = take_failures (self, op->sequence);

  op_update_info (op, atomr_launch_info_now_ns (), gpu_ms, error);
  op_emit (op, SIGNAL_BEFORE_COMPLETE);

  if (error)
    op_return_error (op, error);
  else if (op->task == NULL)
    ;   /* fire and forget: no reply to build */
  else if (op->complete)
    op->complete (op, op->task);
  else
    g_task_return_boolean (op->task, TRUE);

  if (op->info)
    atomr_launch_info_set_timestamp (op->info, ATOMR_LAUNCH_REPLIED, atomr_launch_info_now_ns ());
  op_emit (op, SIGNAL_AFTER_COMPLETE);
  if (op->on_completed)
    op->on_completed (op, error, op->on_completed_data);
  op_free (op);
}

AtomrOp *
atomr_op_new (gpointer             actor,
              const gchar         *operation,
              gpointer             source_tag,
              GCancellable        *cancellable,
              GAsyncReadyCallback  callback,
              gpointer             user_data)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (actor);
  AtomrOp *op = g_new0 (AtomrOp, 1);

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
  op->trace_id = (guint64) g_atomic_pointer_add (&next_sequence, 1) + 1;
  /* No callback, no reply: skip the GTask, the costliest part of a small
   * request (pipelines then keep their window with barriers). */
  if (callback != NULL)
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

static void
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
  g_free (op->detail);
  g_free (op->fail_origin);
  g_clear_error (&op->fail_error);
  g_clear_error (&op->work_error);
  g_clear_object (&op->task);
  g_clear_object (&op->cancellable);
  g_object_unref (op->actor);
  g_free (op);
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
  g_free (op->detail);
  op->detail = g_strdup (detail);
  /* from the enqueue function (on the actor's context, before the
   * after-enqueue signal): the launch info follows, so traces show what
   * actually ran */
  if (op->info != NULL)
    atomr_launch_info_set_detail (op->info, detail);
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
static void
op_cancelled_cb (GCancellable *cancellable,
                 gpointer      data)
{
  AtomrOp *op = data;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);

  g_atomic_int_inc (&priv->source->n_cancelled);
  source_wake (priv->source);
}

void
atomr_op_submit (AtomrOp *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  ActorSource *src = priv->source;
  gboolean inline_run;

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
  inline_run = g_queue_is_empty (&src->mailbox) && g_main_context_is_owner (priv->context) &&
               priv->running == 0 && op_deps_ready (op, NULL, NULL);
  if (!inline_run)
    {
      g_queue_push_tail (&src->mailbox, op);
      g_atomic_int_inc (&src->n_mail);
    }
  g_mutex_unlock (&src->lock);

  if (inline_run)
    op_run (op);
  else
    source_wake (src);
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


gboolean
atomr_op_finish_boolean (gpointer       actor,
                         GAsyncResult  *result,
                         gpointer       source_tag,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, actor), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

gpointer
atomr_op_finish_pointer (gpointer       actor,
                         GAsyncResult  *result,
                         gpointer       source_tag,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, actor), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
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

/* ------------------------------------------------------------------ */
/* Blocking conveniences                                                */

/* The _sync helpers wait on a private context only: iterating any other
 * would dispatch its sources (an application's GTK sources, say) on the
 * wrong thread.  When the actor's context is this thread's to run (we own
 * it, or nobody does), the helper drives the actor itself — its mailbox
 * and completions, nothing else of that context — and the actor's wake-ups
 * reach the private context too. */
void
atomr_sync_begin (AtomrSync  *sync,
                  AtomrActor *actor)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (actor);

  memset (sync, 0, sizeof *sync);
  sync->context = g_main_context_new ();
  sync->actor = g_object_ref (actor);
  if (g_main_context_acquire (priv->context))
    {
      sync->acquired = TRUE;
      g_mutex_lock (&priv->source->lock);
      sync->saved_wake = priv->source->extra_wake;   /* a nested _sync */
      priv->source->extra_wake = g_main_context_ref (sync->context);
      g_mutex_unlock (&priv->source->lock);
    }
  g_main_context_push_thread_default (sync->context);
  sync->pushed = TRUE;
  sync->saved_sync = tls_sync;
  tls_sync = sync;
}

void
atomr_sync_callback (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  AtomrSync *sync = user_data;
  sync->result = g_object_ref (result);
}

static gboolean
watchdog_tick (gpointer data)
{
  return G_SOURCE_REMOVE;   /* only wakes the private context up */
}

/* Runs the actor that must resolve @slot when this thread may (nobody
 * else runs its context: typically the caller's own main context, which
 * it does not iterate while it blocks here), then — when that actor's
 * mailbox head waits in turn — the actor that one waits for, and so on.
 * Without this, a blocking call whose request follows a request queued on
 * an actor of the blocked thread's context would wait forever: the
 * default actor runs on the device thread, the earlier request sits in a
 * mailbox nobody dispatches (test-gpu-graph's capture-replay hung so,
 * behind 50 replays queued without a callback).  Returns TRUE when @slot
 * was resolved. */
static gboolean
sync_drive_slot (AtomrSlot    *slot,
                 GMainContext *wake)
{
  g_autoptr(AtomrSlot) current = atomr_slot_ref (slot);

  /* A chain longer than this is left to the owners' contexts. */
  for (guint hop = 0; hop < 16; hop++)
    {
      g_autoptr(AtomrActor) owner = atomr_slot_dup_pending_owner (current);
      AtomrActorPrivate *priv;
      AtomrSlot *next = NULL;

      if (owner == NULL)
        return atomr_slot_check (slot, NULL);
      priv = atomr_actor_get_instance_private (owner);
      /* Not from inside that actor's own dispatch or enqueue (a reply
       * callback blocking): its pass is under way on this stack. */
      if (priv->running > 0 || g_main_current_source () == (GSource *) priv->source)
        break;
      if (!g_main_context_acquire (priv->context))
        break;   /* another thread runs that context: it will go on */
      actor_pump (owner, wake, FALSE);
      if (!atomr_slot_check (current, wake) && priv->source->blocked != NULL)
        next = atomr_slot_ref (priv->source->blocked);
      g_main_context_release (priv->context);
      if (next == NULL)
        break;
      g_clear_pointer (&current, atomr_slot_unref);
      current = next;
    }
  return atomr_slot_check (slot, wake);
}

/* Drives what the _sync's request depends on; TRUE on progress. */
static gboolean
sync_drive_deps (AtomrSync *sync)
{
  gboolean progress = FALSE;

  if (sync->deps == NULL)
    return FALSE;
  for (guint i = 0; i < sync->deps->len; )
    {
      if (sync_drive_slot (g_ptr_array_index (sync->deps, i), sync->context))
        {
          g_ptr_array_remove_index_fast (sync->deps, i);
          progress = TRUE;
        }
      else
        i++;
    }
  return progress;
}

GAsyncResult *
atomr_sync_wait (AtomrSync *sync)
{
  while (sync->result == NULL)
    {
      GSource *timer = NULL;

      if (sync_drive_deps (sync))
        continue;

      if (sync->acquired)
        {
          AtomrActorPrivate *priv = atomr_actor_get_instance_private (sync->actor);
          AtomrOp *head;
          gint64 remaining;

          actor_pump (sync->actor, sync->context, TRUE);
          if (sync->result != NULL || g_main_context_iteration (sync->context, FALSE))
            continue;
          /* The actor's watchdog must fire while we sleep here too. */
          head = first_unanswered (priv->source);
          remaining = head ? op_watchdog_remaining (priv->source, head, g_get_monotonic_time ()) : -1;
          if (remaining >= 0)
            {
              timer = g_timeout_source_new ((guint) MIN ((remaining + 999) / 1000, G_MAXUINT));
              g_source_set_callback (timer, watchdog_tick, NULL, NULL);
              g_source_attach (timer, sync->context);
            }
        }
      g_main_context_iteration (sync->context, TRUE);
      if (timer)
        {
          g_source_destroy (timer);
          g_source_unref (timer);
        }
    }
  return sync->result;
}

void
atomr_sync_end (AtomrSync *sync)
{
  if (tls_sync == sync)
    tls_sync = sync->saved_sync;
  g_clear_pointer (&sync->deps, g_ptr_array_unref);
  if (sync->pushed)
    g_main_context_pop_thread_default (sync->context);
  if (sync->acquired)
    {
      AtomrActorPrivate *priv = atomr_actor_get_instance_private (sync->actor);
      GMainContext *ours;

      g_mutex_lock (&priv->source->lock);
      ours = priv->source->extra_wake;
      priv->source->extra_wake = sync->saved_wake;
      g_mutex_unlock (&priv->source->lock);
      g_main_context_unref (ours);
      /* What the actor's context missed while we drove it. */
      g_main_context_wakeup (priv->context);
      g_main_context_release (priv->context);
    }
  g_clear_object (&sync->result);
  g_clear_pointer (&sync->context, g_main_context_unref);
  g_clear_object (&sync->actor);
}

/* ------------------------------------------------------------------ */
/* GObject                                                              */

static gboolean
atomr_actor_initable_init (GInitable     *initable,
                           GCancellable  *cancellable,
                           GError       **error)
{
  AtomrActor *self = ATOMR_ACTOR (initable);
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);

  if (priv->device == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s needs a device", G_OBJECT_TYPE_NAME (self));
      return FALSE;
    }
  return actor_ensure_stream (self, error);
}

static void
atomr_actor_initable_iface_init (GInitableIface *iface)
{
  iface->init = atomr_actor_initable_init;
}

static void
atomr_actor_constructed (GObject *object)
{
  AtomrActor *self = ATOMR_ACTOR (object);
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  ActorSource *src;

  G_OBJECT_CLASS (atomr_actor_parent_class)->constructed (object);

  if (priv->context == NULL)
    priv->context = g_main_context_ref_thread_default ();
  if (priv->name == NULL)
    {
      static gint counter;
      priv->name = g_strdup_printf ("%s-%d", atomr_actor_get_library (self),
                                    g_atomic_int_add (&counter, 1) + 1);
    }

  src = (ActorSource *) g_source_new (&actor_source_funcs, sizeof (ActorSource));
  g_weak_ref_init (&src->actor, self);
  g_weak_ref_init (&src->capture_ref, NULL);
  src->context = g_main_context_ref (priv->context);
  g_mutex_init (&src->lock);
  g_queue_init (&src->mailbox);
  g_queue_init (&src->inflight);
  atomr_vec_init (&src->unfenced);
  src->spin_usec = (gint) MIN (priv->spin_usec, G_MAXINT);
  src->timeout_ms = (gint) MIN (priv->timeout_ms, G_MAXINT);
  src->graveyard = g_async_queue_new ();
  g_source_set_name ((GSource *) src, "AtomrActor");
  g_source_set_priority ((GSource *) src, G_PRIORITY_DEFAULT);
  g_source_set_can_recurse ((GSource *) src, TRUE);
  g_source_attach ((GSource *) src, priv->context);
  priv->source = src;

  atomr_inspector_env_attach (self);   /* ATOMR_INSPECT=1 */
}

static void
atomr_actor_finalize (GObject *object)
{
  AtomrActor *self = ATOMR_ACTOR (object);
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  AtomrActorClass *klass = ATOMR_ACTOR_GET_CLASS (self);
  gpointer rec;

  /* Every op holds a reference on us, so nothing is in flight now.  This
   * may run on any thread, also while the context runs prepare() or
   * check(): they touch only the source, and dispatch() finds the weak
   * reference empty. */
  if (priv->source)
    {
      g_source_destroy ((GSource *) priv->source);
      while ((rec = g_async_queue_try_pop (priv->source->graveyard)))
        host_func_record_free (rec);
      g_source_unref ((GSource *) priv->source);
    }
  for (guint i = 0; priv->failures && i < priv->failures->len; i++)
    {
      Failure *f = &g_array_index (priv->failures, Failure, i);
      g_debug ("%s: unreported failure of %s: %s", priv->name, f->origin, f->error->message);
      g_free (f->origin);
      g_error_free (f->error);
    }
  g_clear_pointer (&priv->failures, g_array_unref);
  if (priv->stream && klass->teardown)
    {
      gboolean alive = priv->stream->generation == atomr_device_get_generation (priv->device) &&
                       atomr_device_enter (priv->device, NULL);
      klass->teardown (self, alive);
      if (alive)
        atomr_device_leave (priv->device);
    }
  if (priv->stream)
    atomr_host_stream_abandon (priv->stream);
  g_clear_pointer (&priv->stream, atomr_stream_unref);
  g_clear_pointer (&priv->context, g_main_context_unref);
  g_clear_object (&priv->device);
  g_free (priv->name);

  G_OBJECT_CLASS (atomr_actor_parent_class)->finalize (object);
}

static void
atomr_actor_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  AtomrActor *self = ATOMR_ACTOR (object);
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_DEVICE:
      g_value_set_object (value, priv->device);
      break;
    case PROP_CONTEXT:
      g_value_set_boxed (value, priv->context);
      break;
    case PROP_NAME:
      g_value_set_string (value, priv->name);
      break;
    case PROP_LIBRARY:
      g_value_set_string (value, atomr_actor_get_library (self));
      break;
    case PROP_COMPLETION_MODE:
      g_value_set_enum (value, priv->mode);
      break;
    case PROP_TIMING:
      g_value_set_boolean (value, priv->timing);
      break;
    case PROP_NVTX:
      g_value_set_boolean (value, priv->nvtx);
      break;
    case PROP_SPIN_USEC:
      g_value_set_uint (value, priv->spin_usec);
      break;
    case PROP_STREAM_ID:
      g_value_set_uint (value, atomr_actor_get_stream_id (self));
      break;
    case PROP_TIMEOUT_MS:
      g_value_set_uint (value, priv->timeout_ms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_actor_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  AtomrActor *self = ATOMR_ACTOR (object);
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_DEVICE:
      priv->device = g_value_dup_object (value);
      break;
    case PROP_CONTEXT:
      priv->context = g_value_dup_boxed (value);
      break;
    case PROP_NAME:
      atomr_actor_set_name (self, g_value_get_string (value));
      break;
    case PROP_COMPLETION_MODE:
      atomr_actor_set_completion_mode (self, g_value_get_enum (value));
      break;
    case PROP_TIMING:
      atomr_actor_set_timing (self, g_value_get_boolean (value));
      break;
    case PROP_NVTX:
      atomr_actor_set_nvtx (self, g_value_get_boolean (value));
      break;
    case PROP_SPIN_USEC:
      atomr_actor_set_spin_usec (self, g_value_get_uint (value));
      break;
    case PROP_TIMEOUT_MS:
      atomr_actor_set_timeout_ms (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_actor_class_init (AtomrActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = atomr_actor_constructed;
  object_class->finalize = atomr_actor_finalize;
  object_class->get_property = atomr_actor_get_property;
  object_class->set_property = atomr_actor_set_property;

  klass->library = "cuda";

  /**
   * AtomrActor:device:
   *
   * The device the actor works on.
   *
   * Since: 0.1
   */
  properties[PROP_DEVICE] =
    g_param_spec_object ("device", NULL, NULL, ATOMR_TYPE_DEVICE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:context:
   *
   * The [struct@GLib.MainContext] whose iteration serves the actor's mailbox.  Default:
   * the thread-default context of the constructing thread.
   *
   * Since: 0.1
   */
  properties[PROP_CONTEXT] =
    g_param_spec_boxed ("context", NULL, NULL, G_TYPE_MAIN_CONTEXT,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:name:
   *
   * A name for traces and logs; default "<library>-<n>".
   *
   * Since: 0.1
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:library:
   *
   * The library the actor drives.
   *
   * Since: 0.1
   */
  properties[PROP_LIBRARY] =
    g_param_spec_string ("library", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:completion-mode:
   *
   * How the actor learns that the GPU finished an operation.
   *
   * Since: 0.1
   */
  properties[PROP_COMPLETION_MODE] =
    g_param_spec_enum ("completion-mode", NULL, NULL, ATOMR_TYPE_COMPLETION_MODE,
                       ATOMR_COMPLETION_ADAPTIVE,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:timing:
   *
   * Whether operations are timed on the GPU with events; the duration
   * appears in [struct@Atomr.LaunchInfo].
   *
   * Since: 0.1
   */
  properties[PROP_TIMING] =
    g_param_spec_boolean ("timing", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:nvtx:
   *
   * Whether enqueues are wrapped in NVTX ranges named after the operation
   * (seen by Nsight Systems).
   *
   * Since: 0.1
   */
  properties[PROP_NVTX] =
    g_param_spec_boolean ("nvtx", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:spin-usec:
   *
   * In %ATOMR_COMPLETION_ADAPTIVE mode, how long the context polls an
   * operation before handing it to the waiter thread.
   *
   * Since: 0.1
   */
  properties[PROP_SPIN_USEC] =
    g_param_spec_uint ("spin-usec", NULL, NULL, 0, G_MAXUINT, DEFAULT_SPIN_USEC,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:stream-id:
   *
   * The per-device number of the actor's current stream (it changes when
   * the context is rebuilt).
   *
   * Since: 0.1
   */
  properties[PROP_STREAM_ID] =
    g_param_spec_uint ("stream-id", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * AtomrActor:timeout-ms:
   *
   * The watchdog: a request still running on the GPU this many
   * milliseconds after it was enqueued fails with %ATOMR_ERROR_TIMED_OUT
   * (its work goes on, and its buffers stay alive until it ends).  The
   * watchdog sleeps with the actor's context: it costs nothing while
   * nothing runs late, and never blocks the context.  0 (the default)
   * turns it off.
   *
   * Since: 0.2
   */
  properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", NULL, NULL, 0, G_MAXINT, 0,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * AtomrActor::before-enqueue:
   * @self: the actor
   * @info: the operation
   *
   * Emitted on the actor's context after validation, just before the work
   * is enqueued on the stream.
   *
   * Since: 0.1
   */
  signals[SIGNAL_BEFORE_ENQUEUE] =
    g_signal_new ("before-enqueue", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (AtomrActorClass, before_enqueue), NULL, NULL, NULL,
                  G_TYPE_NONE, 1, ATOMR_TYPE_LAUNCH_INFO);
  /**
   * AtomrActor::after-enqueue:
   * @self: the actor
   * @info: the operation
   *
   * Emitted on the actor's context once the work is on the stream.
   *
   * Since: 0.1
   */
  signals[SIGNAL_AFTER_ENQUEUE] =
    g_signal_new ("after-enqueue", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (AtomrActorClass, after_enqueue), NULL, NULL, NULL,
                  G_TYPE_NONE, 1, ATOMR_TYPE_LAUNCH_INFO);
  /**
   * AtomrActor::before-complete:
   * @self: the actor
   * @info: the operation, with its completion time and error
   *
   * Emitted on the actor's context when the GPU has finished, before the
   * reply is returned.
   *
   * Since: 0.1
   */
  signals[SIGNAL_BEFORE_COMPLETE] =
    g_signal_new ("before-complete", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (AtomrActorClass, before_complete), NULL, NULL, NULL,
                  G_TYPE_NONE, 1, ATOMR_TYPE_LAUNCH_INFO);
  /**
   * AtomrActor::after-complete:
   * @self: the actor
   * @info: the operation
   *
   * Emitted on the actor's context after the reply was returned, before
   * the operation releases its buffers.
   *
   * Since: 0.1
   */
  signals[SIGNAL_AFTER_COMPLETE] =
    g_signal_new ("after-complete", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (AtomrActorClass, after_complete), NULL, NULL, NULL,
                  G_TYPE_NONE, 1, ATOMR_TYPE_LAUNCH_INFO);
}

static void
atomr_actor_init (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);

  priv->mode = ATOMR_COMPLETION_ADAPTIVE;
  priv->spin_usec = DEFAULT_SPIN_USEC;
  priv->failures = g_array_new (FALSE, FALSE, sizeof (Failure));
}

gpointer
atomr_actor_new_internal (GType          type,
                          AtomrDevice   *device,
                          GMainContext  *context,
                          GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (g_type_is_a (type, ATOMR_TYPE_ACTOR), NULL);

  if (context)
    return g_initable_new (type, NULL, error, "device", device, "context", context, NULL);
  return g_initable_new (type, NULL, error, "device", device, NULL);
}

/* ------------------------------------------------------------------ */
/* Accessors                                                            */

/**
 * atomr_actor_get_device:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the actor's device.
 *
 * This is the value of the [property@Atomr.Actor:device] property.
 *
 * Returns: (transfer none): the actor's device
 *
 * Since: 0.1
 */
AtomrDevice *
atomr_actor_get_device (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), NULL);
  return priv->device;
}

/**
 * atomr_actor_get_context:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the main context that serves the actor.
 *
 * This is the value of the [property@Atomr.Actor:context] property.
 *
 * Returns: (transfer none): the main context that serves the actor
 *
 * Since: 0.1
 */
GMainContext *
atomr_actor_get_context (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), NULL);
  return priv->context;
}

/**
 * atomr_actor_get_name:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the actor's name.
 *
 * This is the value of the [property@Atomr.Actor:name] property.
 *
 * Returns: (transfer none): the actor's name
 *
 * Since: 0.1
 */
const gchar *
atomr_actor_get_name (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), NULL);
  return priv->name;
}

/**
 * atomr_actor_set_name:
 * @self: an [class@Atomr.Actor]
 * @name: the new name
 *
 * Renames the actor (for traces).
 *
 * Since: 0.1
 */
void
atomr_actor_set_name (AtomrActor  *self,
                      const gchar *name)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_if_fail (ATOMR_IS_ACTOR (self));
  if (name == NULL || g_strcmp0 (priv->name, name) == 0)
    return;
  g_free (priv->name);
  priv->name = g_strdup (name);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
}

/**
 * atomr_actor_get_library:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the library the actor drives.
 *
 * This is the value of the [property@Atomr.Actor:library] property.
 *
 * Returns: (transfer none): the library the actor drives
 *
 * Since: 0.1
 */
const gchar *
atomr_actor_get_library (AtomrActor *self)
{
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), NULL);
  return ATOMR_ACTOR_GET_CLASS (self)->library;
}

/**
 * atomr_actor_get_completion_mode:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the completion strategy.
 *
 * This is the value of the [property@Atomr.Actor:completion-mode] property.
 *
 * Returns: the completion strategy
 *
 * Since: 0.1
 */
AtomrCompletionMode
atomr_actor_get_completion_mode (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), ATOMR_COMPLETION_ADAPTIVE);
  return priv->mode;
}

/**
 * atomr_actor_set_completion_mode:
 * @self: an [class@Atomr.Actor]
 * @mode: the completion strategy
 *
 * Chooses how the actor learns of completion.  Requests in flight keep the
 * mode they were fenced under; later ones use the new one.
 *
 * Since: 0.1
 */
void
atomr_actor_set_completion_mode (AtomrActor          *self,
                                 AtomrCompletionMode  mode)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_if_fail (ATOMR_IS_ACTOR (self));
  g_return_if_fail (mode <= ATOMR_COMPLETION_SYNC);
  if (priv->mode == mode)
    return;
  priv->mode = mode;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPLETION_MODE]);
}

/**
 * atomr_actor_get_timing:
 * @self: an [class@Atomr.Actor]
 *
 * Gets whether GPU timing is on.
 *
 * This is the value of the [property@Atomr.Actor:timing] property.
 *
 * Returns: whether GPU timing is on
 *
 * Since: 0.1
 */
gboolean
atomr_actor_get_timing (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  return priv->timing;
}

/**
 * atomr_actor_set_timing:
 * @self: an [class@Atomr.Actor]
 * @timing: whether to time operations on the GPU
 *
 * Turns GPU timing on or off.
 *
 * Since: 0.1
 */
void
atomr_actor_set_timing (AtomrActor *self,
                        gboolean    timing)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_if_fail (ATOMR_IS_ACTOR (self));
  timing = !!timing;
  if (priv->timing == timing)
    return;
  priv->timing = timing;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMING]);
}

/**
 * atomr_actor_get_nvtx:
 * @self: an [class@Atomr.Actor]
 *
 * Gets whether enqueues are wrapped in NVTX ranges.
 *
 * This is the value of the [property@Atomr.Actor:nvtx] property.
 *
 * Returns: whether enqueues are wrapped in NVTX ranges
 *
 * Since: 0.1
 */
gboolean
atomr_actor_get_nvtx (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  return priv->nvtx;
}

/**
 * atomr_actor_set_nvtx:
 * @self: an [class@Atomr.Actor]
 * @nvtx: whether to emit NVTX ranges
 *
 * Turns NVTX ranges around enqueues on or off.
 *
 * Since: 0.1
 */
void
atomr_actor_set_nvtx (AtomrActor *self,
                      gboolean    nvtx)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_if_fail (ATOMR_IS_ACTOR (self));
  nvtx = !!nvtx;
  if (priv->nvtx == nvtx)
    return;
  priv->nvtx = nvtx;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NVTX]);
}

/**
 * atomr_actor_get_spin_usec:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the adaptive strategy's spin window in microseconds.
 *
 * This is the value of the [property@Atomr.Actor:spin-usec] property.
 *
 * Returns: the adaptive strategy's spin window in microseconds
 *
 * Since: 0.1
 */
guint
atomr_actor_get_spin_usec (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), 0);
  return priv->spin_usec;
}

/**
 * atomr_actor_set_spin_usec:
 * @self: an [class@Atomr.Actor]
 * @usec: the spin window in microseconds
 *
 * Sets how long the adaptive strategy polls before it sleeps.
 *
 * Since: 0.1
 */
void
atomr_actor_set_spin_usec (AtomrActor *self,
                           guint       usec)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_if_fail (ATOMR_IS_ACTOR (self));
  if (priv->spin_usec == usec)
    return;
  priv->spin_usec = usec;
  if (priv->source)
    g_atomic_int_set (&priv->source->spin_usec, (gint) MIN (usec, G_MAXINT));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SPIN_USEC]);
}

/**
 * atomr_actor_get_timeout_ms:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the watchdog timeout in milliseconds, 0 when off.
 *
 * This is the value of the [property@Atomr.Actor:timeout-ms] property.
 *
 * Returns: the watchdog timeout in milliseconds, 0 when off
 *
 * Since: 0.2
 */
guint
atomr_actor_get_timeout_ms (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), 0);
  return priv->timeout_ms;
}

/**
 * atomr_actor_set_timeout_ms:
 * @self: an [class@Atomr.Actor]
 * @timeout_ms: the watchdog timeout in milliseconds, 0 to turn it off
 *
 * Sets [property@Atomr.Actor:timeout-ms].  May be called from any thread; it applies
 * to requests in flight too.
 *
 * Since: 0.2
 */
void
atomr_actor_set_timeout_ms (AtomrActor *self,
                            guint       timeout_ms)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_if_fail (ATOMR_IS_ACTOR (self));
  timeout_ms = MIN (timeout_ms, (guint) G_MAXINT);
  if (priv->timeout_ms == timeout_ms)
    return;
  priv->timeout_ms = timeout_ms;
  if (priv->source)
    {
      g_atomic_int_set (&priv->source->timeout_ms, (gint) timeout_ms);
      source_wake (priv->source);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT_MS]);
}

/**
 * atomr_actor_get_stream_id:
 * @self: an [class@Atomr.Actor]
 *
 * Gets the per-device number of the actor's stream, 0 before it has one.
 *
 * This is the value of the [property@Atomr.Actor:stream-id] property.
 *
 * Returns: the per-device number of the actor's stream, 0 before it has one
 *
 * Since: 0.1
 */
guint
atomr_actor_get_stream_id (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), 0);
  return priv->stream ? priv->stream->id : 0;
}

/**
 * atomr_actor_get_n_completed:
 * @self: an [class@Atomr.Actor]
 *
 * Gets how many operations reached the GPU and completed (successfully or not).
 *
 * Returns: how many operations reached the GPU and completed (successfully
 *   or not)
 *
 * Since: 0.1
 */
guint64
atomr_actor_get_n_completed (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), 0);
  return priv->n_completed;
}

void
atomr_actor_get_counters (AtomrActor *self,
                          guint64    *requested,
                          guint64    *completed,
                          guint64    *in_flight,
                          guint64    *failed,
                          guint      *mailbox)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  guint64 req = (guint64) g_atomic_pointer_get (&priv->sequence);
  guint64 done = __atomic_load_n (&priv->n_completed, __ATOMIC_RELAXED);
  guint64 early = (guint64) g_atomic_pointer_get (&priv->n_ended_early);

  if (requested)
    *requested = req;
  if (completed)
    *completed = done;
  if (in_flight)
    *in_flight = req > done + early ? req - done - early : 0;
  if (failed)
    *failed = (guint64) g_atomic_pointer_get (&priv->n_failed);
  if (mailbox)
    *mailbox = priv->source ? (guint) MAX (g_atomic_int_get (&priv->source->n_mail), 0) : 0;
}

/* ------------------------------------------------------------------ */
/* Graph capture support (lib/graph/atomr-graph.c)                      */

void
atomr_op_set_on_completed (AtomrOp              *op,
                           AtomrOpCompletedFunc  func,
                           gpointer              data)
{
  op->on_completed = func;
  op->on_completed_data = data;
}

void
atomr_op_forbid_capture (AtomrOp     *op,
                         const gchar *reason)
{
  op->capture_forbidden = reason;
}

gboolean
atomr_actor_set_capture (AtomrActor *self,
                         gpointer    graph,
                         GError    **error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  ActorSource *src = priv->source;
  gboolean ok = TRUE;

  g_mutex_lock (&src->lock);
  if (src->capture != NULL && src->capture != graph)
    ok = FALSE;
  else
    {
      g_atomic_pointer_set (&src->capture, graph);
      g_weak_ref_set (&src->capture_ref, graph);
    }
  g_mutex_unlock (&src->lock);
  if (!ok)
    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                 "actor %s is already recording into another graph; end that capture first",
                 priv->name);
  return ok;
}

void
atomr_actor_clear_capture (AtomrActor *self,
                           gpointer    graph)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  ActorSource *src = priv->source;

  g_mutex_lock (&src->lock);
  if (src->capture == graph)
    {
      g_atomic_pointer_set (&src->capture, NULL);
      g_weak_ref_set (&src->capture_ref, NULL);
    }
  g_mutex_unlock (&src->lock);
}

gboolean
atomr_op_check_capturable (AtomrOp  *op,
                           GError  **error)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
  g_autofree gchar *name = op_describe (op);
  const gchar *why = op->capture_forbidden;

  if (why == NULL && op->for_sync)
    why = "a blocking (_sync) call waits on the host for its result; use the _async call";
  if (why == NULL && op->complete != NULL)
    why = "its reply is built on the host from the result (a download, a value read back)";
  if (why == NULL && op->barrier)
    why = "a barrier reports failures on the host";
  if (why == NULL && op->multi_device)
    why = "operations across several devices are not captured";
  if (why == NULL && op->enqueue == NULL)
    why = "it enqueues nothing";
  if (why != NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s cannot be recorded into a graph: %s", name, why);
      return FALSE;
    }
  for (guint pass = 0; pass < 2; pass++)
    {
      AtomrVec *list = pass ? &op->writes : &op->reads;
      for (guint i = 0; i < list->len; i++)
        {
          AtomrBuffer *buffer = list->data[i];
          if (!atomr_buffer_check (buffer, error))
            {
              g_prefix_error (error, "%s: ", name);
              return FALSE;
            }
          if (atomr_buffer_get_device (buffer) != priv->device)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "%s: buffer %u of the request lives on device %d, the actor on device %d",
                           name, i, atomr_device_get_ordinal (atomr_buffer_get_device (buffer)),
                           atomr_device_get_ordinal (priv->device));
              return FALSE;
            }
        }
    }
  return TRUE;
}

void
atomr_op_reply_recorded (AtomrOp *op)
{
  if (op->task)
    {
      g_task_return_boolean (op->task, TRUE);
      g_clear_object (&op->task);
    }
  if (op->cancellable)
    g_clear_object (&op->cancellable);
}

guint
atomr_op_get_n_buffers (AtomrOp  *op,
                        gboolean  writes)
{
  return writes ? op->writes.len : op->reads.len;
}

AtomrBuffer *
atomr_op_get_buffer (AtomrOp  *op,
                     gboolean  writes,
                     guint     index)
{
  AtomrVec *list = writes ? &op->writes : &op->reads;
  g_return_val_if_fail (index < list->len, NULL);
  return list->data[index];
}

const gchar *
atomr_op_get_operation (AtomrOp *op)
{
  return op->operation;
}

gchar *
atomr_op_describe (AtomrOp *op)
{
  return op_describe (op);
}

guint64
atomr_op_get_trace_id (AtomrOp *op)
{
  return op->trace_id;
}

gint64
atomr_op_get_time (AtomrOp *op,
                   gboolean enqueued)
{
  return enqueued ? op->t_enqueue : op->t_submit;
}

gboolean
atomr_op_enqueue_on (AtomrOp      *op,
                     AtomrStream  *stream,
                     GError      **error)
{
  gboolean ok;

  op->stream = atomr_stream_ref (stream);
  op->generation = stream->generation;
  tls_op_run_depth++;
  ok = op->enqueue (op, error);
  tls_op_run_depth--;
  g_clear_pointer (&op->stream, atomr_stream_unref);
  return ok;
}

gboolean
atomr_actor_ensure_stream (AtomrActor  *self,
                           GError     **error)
{
  return actor_ensure_stream (self, error);
}

void
atomr_op_set_prepare (AtomrOp            *op,
                      AtomrOpPrepareFunc  prepare)
{
  op->prepare = prepare;
}

void
atomr_op_discard (AtomrOp *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);

  g_atomic_pointer_add (&priv->n_ended_early, 1);
  op_free (op);
}

AtomrOpEnqueueFunc
atomr_op_get_enqueue (AtomrOp *op)
{
  return op->enqueue;
}

void
atomr_op_replace_data (AtomrOp        *op,
                       gpointer        data,
                       GDestroyNotify  destroy)
{
  if (op->data_clear)
    op->data_clear (op->data);
  if (op->data_free)
    op->data_free (op->data);
  op->data_clear = NULL;
  op->data = data;
  op->data_free = destroy;
}

void
atomr_op_clear_buffers (AtomrOp *op)
{
  atomr_vec_clear (&op->reads, g_object_unref);
  atomr_vec_clear (&op->writes, g_object_unref);
  atomr_vec_init (&op->reads);
  atomr_vec_init (&op->writes);
}

guint64
atomr_actor_next_trace_id (void)
{
  return (guint64) g_atomic_pointer_add (&next_sequence, 1) + 1;
}

gboolean
atomr_actor_wants_completions (AtomrActor *self)
{
  return g_signal_has_handler_pending (self, signals[SIGNAL_AFTER_COMPLETE], 0, TRUE) ||
         g_signal_has_handler_pending (self, signals[SIGNAL_BEFORE_COMPLETE], 0, TRUE);
}

void
atomr_actor_emit_completed (AtomrActor      *self,
                            AtomrLaunchInfo *info)
{
  g_signal_emit (self, signals[SIGNAL_BEFORE_COMPLETE], 0, info);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_REPLIED, atomr_launch_info_now_ns ());
  g_signal_emit (self, signals[SIGNAL_AFTER_COMPLETE], 0, info);
}
