/* atomr-actor.c — the actor base class and the envelope
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-enum-types.h"
#include "atomr-error.h"
#include "atomr-nvtx-private.h"
#include "trace/atomr-gpu-clock-private.h"

/**
 * AtomrActor:
 *
 * The base of every actor: an object that owns a CUDA stream on one
 * #AtomrDevice and takes requests asynchronously.
 *
 * An actor is bound to one #GMainContext (#AtomrActor:context; by default
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
 * emit #AtomrActor::before-enqueue, enqueue, emit #AtomrActor::after-enqueue,
 * learn completion through the #AtomrActor:completion-mode strategy, emit
 * #AtomrActor::before-complete, reply, emit #AtomrActor::after-complete, and
 * only then release the buffers the operation kept alive.
 *
 * A #GCancellable cancels a request that has not been enqueued yet; work
 * already on the GPU runs to completion.
 *
 * The base class itself offers the memory operations every stream can do:
 * upload, download, fill, copy and a barrier.
 */

#define DEFAULT_SPIN_USEC 100

/* Operations enqueued back to back share one CUDA event, up to this many:
 * an event per operation costs the GPU more than the operation itself for
 * small work (raw fills: 0.3 M/s with an event each, 0.8 M/s with one per
 * 32; tests/bench/core/bench-core). */
#define MAX_COALESCE 32

typedef struct _ActorSource ActorSource;

typedef struct
{
  AtomrDevice        *device;
  GMainContext       *context;
  gchar              *name;
  AtomrCompletionMode mode;
  gboolean            timing;
  gboolean            nvtx;
  guint               spin_usec;

  AtomrStream        *stream;
  guint64             sequence;
  guint64             n_completed;
  ActorSource        *source;

  GThread            *waiter;
  GAsyncQueue        *waiter_queue;

  AtomrVec            unfenced;     /* AtomrOp* enqueued, awaiting a shared fence */
} AtomrActorPrivate;

struct _ActorSource
{
  GSource      source;
  AtomrActor  *actor;        /* not owned: the actor owns the source */
  GMutex       lock;
  GQueue       mailbox;      /* AtomrOp*, under lock */
  gint         n_mail;       /* atomic */
  GQueue       inflight;     /* AtomrOp*, on the actor's context only */
  AtomrSlot   *blocked;      /* the mailbox head waits for this slot */
  gint64       head_since;   /* when the current head was first seen pending */
  GAsyncQueue *graveyard;    /* host-function records to free on the context */
};

struct _AtomrOp
{
  AtomrActor         *actor;
  const gchar        *operation;
  GTask              *task;       /* NULL when nobody asked for a reply */
  GCancellable       *cancellable;
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
  guint               n_ready;    /* deps known to be resolved */
  gchar              *detail;
  gboolean            has_geometry;
  guint               grid[3];
  guint               block[3];
  guint               shared_mem;
  gint64              t_submit;   /* ns, atomr_launch_info_now_ns() */
  gint64              t_enqueue;  /* ns */
  guint               generation;
  guint64             sequence;
  guint               signal_mask;
  gboolean            handed_off;
  CUevent             start;      /* timing start, until the fence takes it */
  AtomrGpuClock      *clock;      /* timing on: puts GPU times on the host clock */
  AtomrLaunchInfo    *info;
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

static void atomr_actor_initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (AtomrActor, atomr_actor, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (AtomrActor)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                         atomr_actor_initable_iface_init))

static void op_run (AtomrOp *op);
static void op_free (AtomrOp *op);
static void actor_flush (AtomrActor *self);

/* ------------------------------------------------------------------ */
/* Waiter thread: sleeps in the driver on one fence after another.      */

typedef struct
{
  AtomrFence   *fence;       /* NULL: stop */
  GMainContext *context;
} WaiterItem;

static gpointer
waiter_main (gpointer data)
{
  GAsyncQueue *queue = data;

  for (;;)
    {
      WaiterItem *item = g_async_queue_pop (queue);
      CUresult res;

      if (item->fence == NULL)
        {
          g_free (item);
          break;
        }
      res = atomr_fence_synchronize (item->fence);
      item->fence->result = res;
      g_atomic_int_set (&item->fence->signalled, 1);
      g_main_context_wakeup (item->context);
      atomr_fence_unref (item->fence);
      g_main_context_unref (item->context);
      g_free (item);
    }
  g_async_queue_unref (queue);
  return NULL;
}

static void
hand_to_waiter (AtomrActor *self,
                AtomrOp    *op)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  WaiterItem *item;

  if (op->handed_off)
    return;
  op->handed_off = TRUE;
  if (priv->waiter == NULL)
    {
      priv->waiter_queue = g_async_queue_new ();
      priv->waiter = g_thread_new ("atomr-waiter", waiter_main,
                                   g_async_queue_ref (priv->waiter_queue));
    }
  item = g_new0 (WaiterItem, 1);
  item->fence = atomr_fence_ref (op->fence);
  item->context = g_main_context_ref (priv->context);
  g_async_queue_push (priv->waiter_queue, item);
}

/* ------------------------------------------------------------------ */
/* Host-function completion: runs on a driver thread, may not call CUDA. */

typedef struct
{
  AtomrFence   *fence;
  GMainContext *context;
  ActorSource  *source;
} HostFuncRecord;

static void CUDA_CB
host_func_signal (void *data)
{
  HostFuncRecord *rec = data;

  rec->fence->result = CUDA_SUCCESS;
  g_atomic_int_set (&rec->fence->signalled, 1);
  g_main_context_wakeup (rec->context);
  /* Freeing the fence could call the driver: leave it to the context. */
  g_async_queue_push (rec->source->graveyard, rec);
}

static void
host_func_record_free (gpointer data)
{
  HostFuncRecord *rec = data;

  atomr_fence_unref (rec->fence);
  g_main_context_unref (rec->context);
  g_source_unref ((GSource *) rec->source);
  g_free (rec);
}

/* ------------------------------------------------------------------ */
/* The actor's source: mailbox and completions.                         */

static gboolean
op_is_done (AtomrActor *self,
            AtomrOp    *op,
            CUresult   *result)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  CUresult res;

  if (op->fence->generation != atomr_device_get_generation (priv->device))
    {
      *result = CUDA_ERROR_CONTEXT_IS_DESTROYED;
      return TRUE;
    }
  if (g_atomic_int_get (&op->fence->signalled))
    {
      *result = op->fence->result;
      if (*result == CUDA_SUCCESS && priv->mode == ATOMR_COMPLETION_HOST_FUNC &&
          op->fence->event != NULL)
        *result = atomr_fence_query (op->fence);  /* learn a sticky error */
      return TRUE;
    }
  if ((priv->mode == ATOMR_COMPLETION_EVENT_THREAD || priv->mode == ATOMR_COMPLETION_HOST_FUNC) &&
      op->fence->event != NULL)
    return FALSE;
  if (priv->mode == ATOMR_COMPLETION_EVENT_THREAD)
    return FALSE;

  res = atomr_fence_query (op->fence);
  if (res == CUDA_ERROR_NOT_READY)
    return FALSE;
  *result = res;
  return TRUE;
}

static gboolean
mailbox_ready (ActorSource *src)
{
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
       * on the same stream (mailboxes run in order). */
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
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (src->actor);
  AtomrOp *head;
  CUresult res;

  *timeout = -1;
  if (mailbox_ready (src) || g_async_queue_length (src->graveyard) > 0 || priv->unfenced.len > 0)
    return TRUE;

  head = g_queue_peek_head (&src->inflight);
  if (head == NULL)
    return FALSE;                       /* idle: sleep, burn nothing */
  if (op_is_done (src->actor, head, &res))
    return TRUE;

  switch (priv->mode)
    {
    case ATOMR_COMPLETION_POLL:
      *timeout = 0;
      break;
    case ATOMR_COMPLETION_ADAPTIVE:
      {
        gint64 now = g_get_monotonic_time ();
        if (src->head_since == 0)
          src->head_since = now;
        if (head->handed_off)
          break;
        if (now - src->head_since < (gint64) priv->spin_usec)
          *timeout = 0;
        else
          hand_to_waiter (src->actor, head);
      }
      break;
    default:
      break;
    }
  return FALSE;
}

static gboolean
actor_source_check (GSource *source)
{
  ActorSource *src = (ActorSource *) source;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (src->actor);
  AtomrOp *head;
  CUresult res;

  if (mailbox_ready (src) || g_async_queue_length (src->graveyard) > 0 || priv->unfenced.len > 0)
    return TRUE;
  head = g_queue_peek_head (&src->inflight);
  return head != NULL && op_is_done (src->actor, head, &res);
}

static void op_complete (AtomrOp *op, CUresult res);

static gboolean
actor_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  ActorSource *src = (ActorSource *) source;
  AtomrActor *self = g_object_ref (src->actor);
  GMainContext *context = g_source_get_context (source);
  gpointer rec;
  AtomrOp *op;
  CUresult res;

  /* The mailbox runs in order; its head may wait for another actor to
   * enqueue what it depends on (then that actor's slot wakes us). */
  for (;;)
    {
      g_mutex_lock (&src->lock);
      op = g_queue_peek_head (&src->mailbox);
      g_mutex_unlock (&src->lock);
      if (op == NULL || !op_deps_ready (op, context, &src->blocked))
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

  while ((op = g_queue_peek_head (&src->inflight)) && op_is_done (self, op, &res))
    {
      g_queue_pop_head (&src->inflight);
      src->head_since = 0;
      op_complete (op, res);
    }
  /* Replies often submit the next request right away (inline, since we
   * own the context): fence it now rather than one iteration later. */
  actor_flush (self);

  while ((rec = g_async_queue_try_pop (src->graveyard)))
    host_func_record_free (rec);

  g_object_unref (self);
  return G_SOURCE_CONTINUE;
}

static void
actor_source_finalize (GSource *source)
{
  ActorSource *src = (ActorSource *) source;

  g_mutex_clear (&src->lock);
  g_async_queue_unref (src->graveyard);
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

/* Replies with @error, or — when nobody asked for a reply — leaves it to
 * the debug log (and to the launch info of the completion signals). */
static void
op_return_error (AtomrOp *op,
                 GError  *error)
{
  if (op->task)
    g_task_return_error (op->task, error);
  else
    {
      g_debug ("%s (no callback) failed: %s", op->operation, error->message);
      g_error_free (error);
    }
}

static void
op_reply_error (AtomrOp *op,
                GError  *error)
{
  gboolean emitted = op->info != NULL && op->t_enqueue == 0 && op->sequence != 0;

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

static void
op_run (AtomrOp *op)
{
  AtomrActor *self = op->actor;
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  GError *error = NULL;
  CUevent start = NULL;
  gboolean ok = TRUE;

  if (op->task ? g_task_return_error_if_cancelled (op->task)
               : op->cancellable != NULL && g_cancellable_is_cancelled (op->cancellable))
    {
      op_free (op);
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
          if (atomr_buffer_get_device (buffer) != priv->device)
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

  op->stream = atomr_stream_ref (priv->stream);
  op->generation = priv->stream->generation;
  /* One counter for the process: a sequence number names an operation
   * (traces use it as the id of its events and dependencies). */
  op->sequence = (guint64) g_atomic_pointer_add (&next_sequence, 1) + 1;
  priv->sequence++;
  if (op->slot)
    atomr_slot_set_sequence (op->slot, op->sequence);

  for (guint s = 0; s < N_SIGNALS; s++)
    if (g_signal_has_handler_pending (self, signals[s], 0, TRUE))
      op->signal_mask |= 1u << s;
  if (op->signal_mask)
    {
      op->info = atomr_launch_info_new (priv->name, atomr_actor_get_library (self), op->operation);
      atomr_launch_info_set_sequence (op->info, op->sequence);
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

  op_emit (op, SIGNAL_BEFORE_ENQUEUE);

  if (!atomr_device_enter (priv->device, &error))
    {
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
  atomr_vec_add (&priv->unfenced, op);
  if (priv->timing || priv->unfenced.len >= MAX_COALESCE ||
      (priv->mode != ATOMR_COMPLETION_ADAPTIVE && priv->mode != ATOMR_COMPLETION_POLL))
    actor_flush (self);
}

/* Records one fence after the operations enqueued since the last flush,
 * resolves their slots and hands them to the completion strategy. */
static void
actor_flush (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  AtomrVec ops = priv->unfenced;
  AtomrOp *last;
  AtomrFence *fence = NULL;
  GError *error = NULL;
  gboolean ok;

  if (ops.len == 0)
    return;
  if (ops.data == priv->unfenced.inline_data)
    ops.data = ops.inline_data;   /* the struct moved */
  atomr_vec_init (&priv->unfenced);
  last = ops.data[ops.len - 1];

  ok = atomr_device_hold (priv->device, last->generation);
  if (!ok)
    g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_STALE,
                 "%s: the context was rebuilt before the operation could be fenced",
                 last->operation);
  else
    {
      fence = atomr_stream_record (last->stream,
                                   last->start ? ATOMR_EVENT_TIMING
                                   : priv->mode == ATOMR_COMPLETION_EVENT_THREAD ? ATOMR_EVENT_BLOCKING
                                   : ATOMR_EVENT_PLAIN, &error);
      ok = fence != NULL;
      if (ok && last->start)
        {
          fence->start = last->start;   /* timing never coalesces: ops.len == 1 */
          last->start = NULL;
        }
      if (ok && priv->mode == ATOMR_COMPLETION_HOST_FUNC && last->stream->handle)
        {
          HostFuncRecord *rec = g_new0 (HostFuncRecord, 1);
          rec->fence = atomr_fence_ref (fence);
          rec->context = g_main_context_ref (priv->context);
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

  for (guint i = 0; i < ops.len; i++)
    {
      AtomrOp *op = ops.data[i];

      if (!ok)
        {
          /* Enqueued, but nothing can tell when it finishes: fail it. */
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

  if (priv->mode == ATOMR_COMPLETION_SYNC)
    {
      fence->result = atomr_fence_synchronize (fence);
      g_atomic_int_set (&fence->signalled, 1);
    }
  /* A host stream has no host functions: its waiter plays that part. */
  else if (priv->mode == ATOMR_COMPLETION_EVENT_THREAD ||
           (priv->mode == ATOMR_COMPLETION_HOST_FUNC && last->stream->handle == NULL))
    hand_to_waiter (self, last);
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
  AtomrOp *op = g_new0 (AtomrOp, 1);

  atomr_vec_init (&op->reads);
  atomr_vec_init (&op->writes);
  atomr_vec_init (&op->deps);
  op->actor = g_object_ref (actor);
  op->operation = operation;
  /* No callback, no reply: skip the GTask, the costliest part of a small
   * request (pipelines then keep their window with barriers). */
  if (callback != NULL)
    {
      op->task = g_task_new (actor, cancellable, callback, user_data);
      g_task_set_source_tag (op->task, source_tag);
      /* Cancellation counts only before enqueue (op_run checks it); work
       * already on the GPU reports its real outcome. */
      g_task_set_check_cancellable (op->task, FALSE);
    }
  else if (cancellable)
    op->cancellable = g_object_ref (cancellable);
  op->t_submit = atomr_launch_info_now_ns ();
  return op;
}

static void
op_free (AtomrOp *op)
{
  /* An operation that never reached the GPU stands for what it followed;
   * what it followed on its own actor may still wait for its batch fence:
   * fence it first, so that the forwarded fences are real. */
  if (op->slot && !atomr_slot_check (op->slot, NULL))
    {
      AtomrActorPrivate *priv = atomr_actor_get_instance_private (op->actor);
      if (priv->unfenced.len > 0)
        actor_flush (op->actor);
      atomr_slot_resolve (op->slot, NULL, &op->deps);
    }
  g_clear_pointer (&op->slot, atomr_slot_unref);
  atomr_vec_clear (&op->deps, (GDestroyNotify) atomr_slot_unref);
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
atomr_op_set_detail (AtomrOp     *op,
                     const gchar *detail)
{
  g_free (op->detail);
  op->detail = g_strdup (detail);
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

  /* Hazards are registered now, on the submitting thread: program order.
   * Registering and queueing happen under the mailbox lock, so that the
   * mailbox order of an actor is its registration order — what lets an
   * operation treat its actor's earlier ones as already ahead. */
  g_mutex_lock (&src->lock);
  if (op->reads.len || op->writes.len)
    {
      op->slot = atomr_slot_new (op->actor);
      atomr_hazards_register (op->slot, &op->reads, &op->writes, &op->deps);
    }
  inline_run = g_queue_is_empty (&src->mailbox) && g_main_context_is_owner (priv->context) &&
               op_deps_ready (op, NULL, NULL);
  if (!inline_run)
    {
      g_queue_push_tail (&src->mailbox, op);
      g_atomic_int_inc (&src->n_mail);
    }
  g_mutex_unlock (&src->lock);

  if (inline_run)
    op_run (op);
  else
    g_main_context_wakeup (priv->context);
}

void
atomr_op_fail (AtomrOp *op,
               GError  *error)
{
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

void
atomr_sync_begin (AtomrSync  *sync,
                  AtomrActor *actor)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (actor);

  memset (sync, 0, sizeof *sync);
  /* If nobody else iterates the actor's context, we do: requests then run
   * inline and completions arrive while we wait.  Otherwise its owner
   * serves the actor and we wait on a private context. */
  if (g_main_context_acquire (priv->context))
    {
      sync->context = g_main_context_ref (priv->context);
      sync->acquired = TRUE;
    }
  else
    {
      /* Next best: the caller's own context, so that actors bound to it
       * (whose work this request may depend on) keep running meanwhile. */
      GMainContext *own = g_main_context_ref_thread_default ();
      if (g_main_context_acquire (own))
        {
          sync->context = own;
          sync->acquired = TRUE;
        }
      else
        {
          g_main_context_unref (own);
          sync->context = g_main_context_new ();
        }
    }
  g_main_context_push_thread_default (sync->context);
  sync->pushed = TRUE;
}

void
atomr_sync_callback (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  AtomrSync *sync = user_data;
  sync->result = g_object_ref (result);
}

GAsyncResult *
atomr_sync_wait (AtomrSync *sync)
{
  while (sync->result == NULL)
    g_main_context_iteration (sync->context, TRUE);
  return sync->result;
}

void
atomr_sync_end (AtomrSync *sync)
{
  if (sync->pushed)
    g_main_context_pop_thread_default (sync->context);
  if (sync->acquired)
    g_main_context_release (sync->context);
  g_clear_object (&sync->result);
  g_clear_pointer (&sync->context, g_main_context_unref);
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
  src->actor = self;
  g_mutex_init (&src->lock);
  g_queue_init (&src->mailbox);
  g_queue_init (&src->inflight);
  src->graveyard = g_async_queue_new ();
  g_source_set_name ((GSource *) src, "AtomrActor");
  g_source_set_priority ((GSource *) src, G_PRIORITY_DEFAULT);
  g_source_set_can_recurse ((GSource *) src, TRUE);
  g_source_attach ((GSource *) src, priv->context);
  priv->source = src;
}

static void
atomr_actor_finalize (GObject *object)
{
  AtomrActor *self = ATOMR_ACTOR (object);
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  AtomrActorClass *klass = ATOMR_ACTOR_GET_CLASS (self);
  gpointer rec;

  /* Every op holds a reference on us, so nothing is in flight now. */
  if (priv->source)
    {
      g_source_destroy ((GSource *) priv->source);
      while ((rec = g_async_queue_try_pop (priv->source->graveyard)))
        host_func_record_free (rec);
      g_source_unref ((GSource *) priv->source);
    }
  if (priv->waiter)
    {
      g_async_queue_push (priv->waiter_queue, g_new0 (WaiterItem, 1));
      g_thread_join (priv->waiter);
      g_async_queue_unref (priv->waiter_queue);
    }
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
  atomr_vec_clear (&priv->unfenced, NULL);   /* empty: every op holds us */
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
   */
  properties[PROP_DEVICE] =
    g_param_spec_object ("device", NULL, NULL, ATOMR_TYPE_DEVICE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:context:
   *
   * The #GMainContext whose iteration serves the actor's mailbox.  Default:
   * the thread-default context of the constructing thread.
   */
  properties[PROP_CONTEXT] =
    g_param_spec_boxed ("context", NULL, NULL, G_TYPE_MAIN_CONTEXT,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:name:
   *
   * A name for traces and logs; default "<library>-<n>".
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:library:
   *
   * The library the actor drives.
   */
  properties[PROP_LIBRARY] =
    g_param_spec_string ("library", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:completion-mode:
   *
   * How the actor learns that the GPU finished an operation.
   */
  properties[PROP_COMPLETION_MODE] =
    g_param_spec_enum ("completion-mode", NULL, NULL, ATOMR_TYPE_COMPLETION_MODE,
                       ATOMR_COMPLETION_ADAPTIVE,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:timing:
   *
   * Whether operations are timed on the GPU with events; the duration
   * appears in #AtomrLaunchInfo.
   */
  properties[PROP_TIMING] =
    g_param_spec_boolean ("timing", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:nvtx:
   *
   * Whether enqueues are wrapped in NVTX ranges named after the operation
   * (seen by Nsight Systems).
   */
  properties[PROP_NVTX] =
    g_param_spec_boolean ("nvtx", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:spin-usec:
   *
   * In %ATOMR_COMPLETION_ADAPTIVE mode, how long the context polls an
   * operation before handing it to the waiter thread.
   */
  properties[PROP_SPIN_USEC] =
    g_param_spec_uint ("spin-usec", NULL, NULL, 0, G_MAXUINT, DEFAULT_SPIN_USEC,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:stream-id:
   *
   * The per-device number of the actor's current stream (it changes when
   * the context is rebuilt).
   */
  properties[PROP_STREAM_ID] =
    g_param_spec_uint ("stream-id", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * AtomrActor::before-enqueue:
   * @self: the actor
   * @info: the operation
   *
   * Emitted on the actor's context after validation, just before the work
   * is enqueued on the stream.
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
 * @self: an #AtomrActor
 *
 * Returns: (transfer none): the actor's device
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
 * @self: an #AtomrActor
 *
 * Returns: (transfer none): the main context that serves the actor
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
 * @self: an #AtomrActor
 *
 * Returns: (transfer none): the actor's name
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
 * @self: an #AtomrActor
 * @name: the new name
 *
 * Renames the actor (for traces).
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
 * @self: an #AtomrActor
 *
 * Returns: (transfer none): the library the actor drives
 */
const gchar *
atomr_actor_get_library (AtomrActor *self)
{
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), NULL);
  return ATOMR_ACTOR_GET_CLASS (self)->library;
}

/**
 * atomr_actor_get_completion_mode:
 * @self: an #AtomrActor
 *
 * Returns: the completion strategy
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
 * @self: an #AtomrActor
 * @mode: the completion strategy
 *
 * Chooses how the actor learns of completion.  Call it on the actor's
 * context (or before its first request).
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
 * @self: an #AtomrActor
 *
 * Returns: whether GPU timing is on
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
 * @self: an #AtomrActor
 * @timing: whether to time operations on the GPU
 *
 * Turns GPU timing on or off.
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
 * @self: an #AtomrActor
 *
 * Returns: whether enqueues are wrapped in NVTX ranges
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
 * @self: an #AtomrActor
 * @nvtx: whether to emit NVTX ranges
 *
 * Turns NVTX ranges around enqueues on or off.
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
 * @self: an #AtomrActor
 *
 * Returns: the adaptive strategy's spin window in microseconds
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
 * @self: an #AtomrActor
 * @usec: the spin window in microseconds
 *
 * Sets how long the adaptive strategy polls before it sleeps.
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
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SPIN_USEC]);
}

/**
 * atomr_actor_get_stream_id:
 * @self: an #AtomrActor
 *
 * Returns: the per-device number of the actor's stream, 0 before it has one
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
 * @self: an #AtomrActor
 *
 * Returns: how many operations reached the GPU and completed (successfully
 *   or not)
 */
guint64
atomr_actor_get_n_completed (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), 0);
  return priv->n_completed;
}
