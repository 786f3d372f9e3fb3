/* atomr-actor-impl-private.h — what the files of the actor share (not installed)
 *
 * The actor is split along its seams: atomr-actor.c (the GObject, its
 * properties and signals, accessors, graph capture support),
 * atomr-actor-source.c (the mailbox GSource: waking, host-function
 * completion, prepare/check/dispatch, the pump), atomr-actor-op.c (the
 * envelope: operations from atomr_op_new() to their reply) and
 * atomr-actor-sync.c (the blocking conveniences).  The types below are
 * theirs only; actors outside lib/core use atomr-actor-private.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-completion-service-private.h"
#include "atomr-enum-types.h"
#include "atomr-error.h"
#include "atomr-nvtx-private.h"
#include "graph/atomr-graph-private.h"
#include "trace/atomr-gpu-clock-private.h"
#include "trace/atomr-inspector-server-private.h"

G_BEGIN_DECLS

#define DEFAULT_SPIN_USEC 100

/* Operations enqueued back to back share one CUDA event, up to this many:
 * an event per operation costs the GPU more than the operation itself for
 * small work (raw fills: 0.3 M/s with an event each, 0.8 M/s with one per
 * 32; tests/bench/core/bench-core). */
#define MAX_COALESCE 32

/* A barrier lists at most this many failures by name. */
#define MAX_LISTED_FAILURES 8

typedef struct _ActorSource ActorSource;
typedef struct _ActorThread ActorThread;

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

  GArray             *failures;     /* Failure, under source->lock: unreported failures */

  gboolean            own_thread;   /* construct-only: a thread of its own runs @context */
  GThread            *thread;       /* that thread, until finalize */
  ActorThread        *thread_state; /* what it shares with the actor (atomr-actor.c) */
  GError             *own_thread_error; /* init fails with it: own-thread asked for
                                         * with a context, or the thread could not
                                         * be started */
} AtomrActorPrivate;

/* An observer with its data (atomr_actor_set_observer()). */
typedef struct
{
  AtomrActorObserver fn;
  gpointer           data;
  GDestroyNotify     destroy;
  gint               device;   /* the device's ordinal, for the records */
} ObserverSlot;

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
  GQueue        mailbox;      /* AtomrOp*, under lock; the links are the
                               * operations' own (mail_link): push and pop
                               * them with the _link functions only */
  gint          n_mail;       /* atomic */
  gint          n_cancelled;  /* atomic: a queued request's cancellable fired */
  GMainContext *extra_wake;   /* under lock: a _sync driving the actor */
  AtomrRing     inflight;     /* AtomrOp*, on the actor's context only */
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
  gint          has_observer; /* atomic: the fast path's one read */
  gint          observer_changed; /* atomic: observer_pending waits to be adopted */
  ObserverSlot  observer;     /* the current one: written under lock by the
                               * context's owner only (observer_adopt), so the
                               * owner reads it without the lock */
  ObserverSlot  observer_pending; /* under lock: set by atomr_actor_set_observer */
  gint          n_graveyard;  /* atomic: its length, without its lock */
  gint          running;      /* atomic: op_run() depth (enqueues under way), on
                               * the actor's context; the mailbox waits meanwhile */
  guint         pops;         /* requests popped from the mailbox, under lock
                               * (the pump's check that no nested pump ran) */
};

struct _AtomrOp
{
  AtomrActor         *actor;
  const gchar        *operation;
  AtomrReply         *reply;      /* NULL when nobody asked for a reply */
  GTask              *task;       /* instead of the reply: a public
                                   * AtomrOperation (atomr_op_new_task) */
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
  AtomrOpTaskCompleteFunc complete_task;
  AtomrStream        *stream;
  AtomrFence         *fence;
  AtomrSlot          *slot;       /* resolved when enqueued or failed */
  AtomrVec            deps;       /* AtomrSlot* this op must follow, owned */
  AtomrVec            data_deps;  /* AtomrSlot* whose output it reads, owned */
  guint               n_ready;    /* deps known to be resolved */
  gchar              *detail;
  gboolean            detail_static; /* borrowed (atomr_op_set_detail_static) */
  gboolean            has_geometry;
  guint               grid[3];
  guint               block[3];
  guint               shared_mem;
  gint64              t_submit;   /* ns, atomr_launch_info_now_ns() */
  gint64              t_enqueue;  /* ns */
  gint                mail_at_run; /* the mailbox's length when it ran (observed actors) */
  guint               generation;
  guint64             sequence;   /* per actor, from 1 */
  guint64             trace_id;   /* per process: the trace's "seq" */
  guint               signal_mask;
  gboolean            handed_off;
  gboolean            multi_device; /* buffers of other devices allowed */
  gboolean            replied;    /* answered early (cancelled, timed out) */
  gboolean            for_sync;   /* made by a _sync helper */
  gboolean            barrier;
  gboolean            foreign_writes; /* writes stand for foreign work */
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
  guint               spin_usec;  /* adaptive polling window, 0: the actor's */
  GList               mail_link;  /* its place in the mailbox (no GList
                                   * allocated per request, and none freed
                                   * on the actor's thread) */
  /* Small requests live here: one allocation less per operation (a
   * kernel launch of up to about a dozen arguments, a cuBLAS request of
   * 272 bytes).  Last member:
   * op_alloc() clears everything before it; atomr_op_alloc_data() clears
   * what it hands out.  Aligned as malloc aligns (16 bytes): requests keep
   * scalars the libraries read through typed pointers, and cuBLAS's Z
   * routines load a cuDoubleComplex (__align__(16)) alpha with aligned
   * moves: at an address that was 8 mod 16 (a field added above this
   * one), cublasZsyrk crashed. */
  _Alignas (16) guint64 inline_data[40];
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
  PROP_OWN_THREAD,
  N_PROPS
};

enum {
  SIGNAL_BEFORE_ENQUEUE,
  SIGNAL_AFTER_ENQUEUE,
  SIGNAL_BEFORE_COMPLETE,
  SIGNAL_AFTER_COMPLETE,
  N_SIGNALS
};

/* Host-function completion: runs on a driver thread, may not call CUDA. */
typedef struct
{
  AtomrFence   *fence;
  ActorSource  *source;
} HostFuncRecord;

extern GParamSpec *atomr_actor_properties[N_PROPS];
extern guint atomr_actor_signals[N_SIGNALS];
extern gsize atomr_actor_next_sequence;   /* atomic: the last sequence number handed out */

/* How many op_run() are on this thread's stack (any actor): a _sync from
 * there could wait for the very operation that is being enqueued. */
extern __thread guint tls_op_run_depth;

/* The innermost _sync helper waiting on this thread: the request it makes
 * tells it what it depends on (atomr_op_submit), see atomr_sync_wait(). */
extern __thread AtomrSync *tls_sync;

extern GSourceFuncs atomr_actor_source_funcs;

/* The private part of an actor, from any of the files (the offset is set
 * when the class is made, before any actor exists). */
extern gint atomr_actor_private_offset_internal;

static inline AtomrActorPrivate *
atomr_actor_priv_internal (gpointer self)
{
  return G_STRUCT_MEMBER_P (self, atomr_actor_private_offset_internal);
}
#ifndef ATOMR_ACTOR_DEFINES_TYPE
#define atomr_actor_get_instance_private(self) atomr_actor_priv_internal (self)
#endif

G_GNUC_INTERNAL
void
source_wake (ActorSource *src);

G_GNUC_INTERNAL
void
fence_passed (gpointer data,
              gpointer unused);

/* Drops a reference to an actor's source from any thread, keeping the
 * source's context alive until GLib is done with it. */
G_GNUC_INTERNAL
void
actor_source_unref (gpointer source);

G_GNUC_INTERNAL
void
hand_off (ActorSource *src,
          AtomrOp     *op);

G_GNUC_INTERNAL
void CUDA_CB
host_func_signal (void *data);

G_GNUC_INTERNAL
void
host_func_record_free (gpointer data);

G_GNUC_INTERNAL
gboolean
op_is_done (AtomrOp  *op,
            CUresult *result);

G_GNUC_INTERNAL
gint64
op_watchdog_remaining (ActorSource *src,
                       AtomrOp     *op,
                       gint64       now);

G_GNUC_INTERNAL
AtomrOp *
first_unanswered (ActorSource *src);

G_GNUC_INTERNAL
gboolean
mailbox_ready (ActorSource *src);

G_GNUC_INTERNAL
gboolean
op_deps_ready (AtomrOp      *op,
               GMainContext *wake,
               AtomrSlot   **blocked);

G_GNUC_INTERNAL
gboolean
actor_source_prepare (GSource *source,
                      gint    *timeout);

G_GNUC_INTERNAL
gboolean
actor_source_check (GSource *source);

G_GNUC_INTERNAL
void
answer_cancelled (ActorSource *src);

G_GNUC_INTERNAL
void
op_time_out (AtomrOp *op);

G_GNUC_INTERNAL
void
actor_pump (AtomrActor   *self,
            GMainContext *wake,
            gboolean      hand_off_pending);

G_GNUC_INTERNAL
gboolean
actor_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data);

G_GNUC_INTERNAL
void
actor_source_finalize (GSource *source);

G_GNUC_INTERNAL
gboolean
actor_ensure_stream (AtomrActor *self,
                     GError    **error);

/* Hands @op's record to the actor's observer, if any.  @owned: the
 * caller owns the actor's context (the pump's completions): the current
 * observer is read without the mailbox lock.  Otherwise (an operation
 * ended before it was enqueued, on whatever thread) under the lock. */
G_GNUC_INTERNAL
void
op_observe (AtomrOp      *op,
            gint64        t_complete,
            gdouble       gpu_ms,
            const GError *error,
            gboolean      owned);

/* Makes the observer atomr_actor_set_observer() left pending the current
 * one, and destroys the one it replaces.  Only by the owner of the
 * actor's context. */
G_GNUC_INTERNAL
void
observer_adopt (ActorSource *src);

G_GNUC_INTERNAL
void
op_update_info (AtomrOp  *op,
                gint64    t_complete,
                gdouble   gpu_ms,
                GError   *error);

G_GNUC_INTERNAL
gchar *
op_describe (AtomrOp *op);

G_GNUC_INTERNAL
void
op_note_failure (AtomrOp      *op,
                 const gchar  *origin,
                 const GError *error);

G_GNUC_INTERNAL
void
op_return_error (AtomrOp *op,
                 GError  *error);

G_GNUC_INTERNAL
void
op_reply_error (AtomrOp *op,
                GError  *error);

G_GNUC_INTERNAL
GError *
take_failures (AtomrActor *self,
               guint64     before);

G_GNUC_INTERNAL
CUevent
record_timing_start (AtomrActorPrivate *priv,
                     GError           **error);

G_GNUC_INTERNAL
GError *
op_check_data_deps (AtomrOp *op);

G_GNUC_INTERNAL
void
work_thread (gpointer data,
             gpointer unused);

G_GNUC_INTERNAL
void
op_start_work (AtomrOp *op);

G_GNUC_INTERNAL
void
op_run (AtomrOp *op);

G_GNUC_INTERNAL
void
actor_flush (AtomrActor *self);

/* On the owner of the actor's context: completes the requests in flight
 * whose fences passed, oldest first.  @quiet: only while they are quiet
 * ones (nobody to reply to, no handler, nothing kept for the caller), so
 * that no code but ours runs: what op_run() does in a burst. */
G_GNUC_INTERNAL
void
actor_complete_done (ActorSource *src,
                     gboolean     quiet);

/* @t_seen: when the host saw @op done (atomr_launch_info_now_ns()), read
 * once per completion pass and only for an observer; 0 if not read. */
G_GNUC_INTERNAL
void
op_complete (AtomrOp  *op,
             CUresult  res,
             gint64    t_seen);

G_GNUC_INTERNAL
void
op_free (AtomrOp *op);

G_GNUC_INTERNAL
void
op_cancelled_cb (GCancellable *cancellable,
                 gpointer      data);

G_GNUC_INTERNAL
gboolean
watchdog_tick (gpointer data);

G_GNUC_INTERNAL
gboolean
sync_drive_slot (AtomrSlot    *slot,
                 GMainContext *wake,
                 GMainContext *home);

G_GNUC_INTERNAL
gboolean
sync_drive_deps (AtomrSync *sync);

G_GNUC_INTERNAL
AtomrOp *
op_alloc (void);

G_GNUC_INTERNAL
void
op_dealloc (AtomrOp *op);

G_END_DECLS
