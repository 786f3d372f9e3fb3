/* atomr-actor-private.h — the envelope, for actor implementations
 *
 * Every operation of every actor goes through one path:
 *
 *   op = atomr_op_new (actor, "gemm", source_tag, cancellable, callback, data);
 *   atomr_op_read (op, a);  atomr_op_read (op, b);  atomr_op_write (op, c);
 *   atomr_op_set_data (op, request, request_free);
 *   atomr_op_set_enqueue (op, gemm_enqueue);      // runs on the actor's context
 *   atomr_op_set_complete (op, gemm_complete);    // optional: builds the result
 *   atomr_op_submit (op);                         // or atomr_op_fail (op, error)
 *
 * and `_finish` is atomr_op_finish_boolean / _pointer / _double.
 *
 * The envelope validates the buffers (live generation, right device),
 * orders them against other streams with events (cuStreamWaitEvent),
 * emits before-enqueue, calls the enqueue function with the device context
 * current, records a fence, emits after-enqueue, learns completion through
 * the actor's completion strategy, emits before-complete, returns the
 * reply (AtomrReply, atomr-reply-private.h), emits after-complete and
 * only then drops the buffers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-actor.h"
#include "atomr-buffer-private.h"
#include "atomr-device-private.h"
#include "atomr-reply-private.h"
#include "atomr-stream-private.h"

G_BEGIN_DECLS

typedef struct _AtomrOp AtomrOp;

/* Enqueue the work on atomr_op_get_cu_stream (op).  Runs on the actor's
 * context with the device context current.  On the host device
 * (atomr_op_is_host) the work must be done on the CPU right away. */
typedef gboolean (*AtomrOpEnqueueFunc)  (AtomrOp  *op,
                                         GError  **error);
/* Builds the reply once the GPU is done: must call one
 * atomr_reply_return_*().  Not called when the request had no callback
 * (nobody to reply to). */
typedef void     (*AtomrOpCompleteFunc) (AtomrOp     *op,
                                         AtomrReply  *reply);
/* The same for an operation made with atomr_op_new_task(): one
 * g_task_return_*(). */
typedef void     (*AtomrOpTaskCompleteFunc) (AtomrOp *op,
                                             GTask   *task);

AtomrOp     *atomr_op_new          (gpointer             actor,
                                    const gchar         *operation,
                                    gpointer             source_tag,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data);
/* The same, replying through a GTask instead of an AtomrReply: the public
 * AtomrOperation, whose complete function takes a GTask.  Its complete
 * function is set with atomr_op_set_complete_task(). */
AtomrOp     *atomr_op_new_task     (gpointer             actor,
                                    const gchar         *operation,
                                    gpointer             source_tag,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data);
void         atomr_op_read         (AtomrOp             *op,
                                    AtomrBuffer         *buffer);
void         atomr_op_write        (AtomrOp             *op,
                                    AtomrBuffer         *buffer);
void         atomr_op_set_data     (AtomrOp             *op,
                                    gpointer             data,
                                    GDestroyNotify       destroy);
gpointer     atomr_op_get_data     (AtomrOp             *op);
/* Zeroed storage for the request, freed with the operation (inline when
 * small: no allocation).  @clear (may be NULL) releases what the request
 * holds, not the storage itself.  Use instead of atomr_op_set_data(). */
gpointer     atomr_op_alloc_data   (AtomrOp             *op,
                                    gsize                size,
                                    GDestroyNotify       clear);
void         atomr_op_set_enqueue  (AtomrOp             *op,
                                    AtomrOpEnqueueFunc   enqueue);
void         atomr_op_set_complete (AtomrOp             *op,
                                    AtomrOpCompleteFunc  complete);
void         atomr_op_set_complete_task (AtomrOp        *op,
                                         AtomrOpTaskCompleteFunc complete);
void         atomr_op_set_geometry (AtomrOp             *op,
                                    const guint          grid[3],
                                    const guint          block[3],
                                    guint                shared_mem);
/* Before the submit, or from the enqueue function (the launch info
 * follows). */
void         atomr_op_set_detail   (AtomrOp             *op,
                                    const gchar         *detail);
/* The same without a copy, before the submit: @detail must outlive the
 * operation (a kernel's name, the operation holding the kernel). */
void         atomr_op_set_detail_static (AtomrOp        *op,
                                         const gchar    *detail);
/* The operation reads or writes buffers of other devices too (a
 * collective across the GPUs of this process): the envelope orders them
 * by events as usual, and the enqueue function must work on their
 * devices' streams itself. */
void         atomr_op_set_multi_device (AtomrOp         *op);
/* Keeps @object alive until the operation has completed on the GPU. */
void         atomr_op_keep         (AtomrOp             *op,
                                    gpointer             object);
/* Keeps @pointer (freed with @destroy) alive until completion. */
void         atomr_op_keep_full    (AtomrOp             *op,
                                    gpointer             pointer,
                                    GDestroyNotify       destroy);
AtomrActor  *atomr_op_get_actor    (AtomrOp             *op);
AtomrStream *atomr_op_get_stream   (AtomrOp             *op);
CUstream     atomr_op_get_cu_stream (AtomrOp            *op);
gboolean     atomr_op_is_host      (AtomrOp             *op);
guint        atomr_op_get_generation (AtomrOp           *op);

/* The operation is a barrier: it fails with every failure of a request
 * without a callback, made before it, since the previous barrier. */
void         atomr_op_set_barrier  (AtomrOp             *op);

/* Hands the operation to the actor (from any thread).  Consumes @op. */
void         atomr_op_submit       (AtomrOp             *op);
/* Answers @op with @error without enqueuing anything (validation failed).
 * Consumes @op and @error; the reply still arrives asynchronously. */
void         atomr_op_fail         (AtomrOp             *op,
                                    GError              *error);

gboolean     atomr_op_finish_boolean (gpointer           actor,
                                      GAsyncResult      *result,
                                      gpointer           source_tag,
                                      GError           **error);
gpointer     atomr_op_finish_pointer (gpointer           actor,
                                      GAsyncResult      *result,
                                      gpointer           source_tag,
                                      GError           **error);
gdouble      atomr_op_finish_double  (gpointer           actor,
                                      GAsyncResult      *result,
                                      gpointer           source_tag,
                                      GError           **error);

/* The actor's stream handle for the current generation, on its context. */
CUstream     atomr_actor_get_cu_stream (AtomrActor *self);

/* Actor construction that subclasses chain to in their _new(): a GInitable
 * that creates the stream and calls class->setup. */
gpointer     atomr_actor_new_internal (GType          type,
                                       AtomrDevice   *device,
                                       GMainContext  *context,
                                       GError       **error);

/* For blocking conveniences: run one async call to completion without
 * deadlocking, also when called on the actor's own context.
 *
 *   AtomrSync sync;
 *   atomr_sync_begin (&sync, actor);
 *   atomr_foo_async (..., atomr_sync_callback, &sync);
 *   ok = atomr_foo_finish (..., atomr_sync_wait (&sync), error);
 *   atomr_sync_end (&sync);
 */
typedef struct {
  GMainContext *context;        /* private: the only context a _sync iterates */
  AtomrActor   *actor;
  gboolean      acquired;       /* we drive the actor ourselves */
  gboolean      pushed;
  GMainContext *saved_wake;
  GAsyncResult *result;
  GPtrArray    *deps;           /* AtomrSlot*: what the request waits for */
  GMainContext *home;           /* the caller's thread-default context */
  gpointer      saved_sync;     /* the enclosing _sync of this thread */
} AtomrSync;

void          atomr_sync_begin    (AtomrSync    *sync,
                                   AtomrActor   *actor);
void          atomr_sync_callback (GObject      *source,
                                   GAsyncResult *result,
                                   gpointer      user_data);
GAsyncResult *atomr_sync_wait     (AtomrSync    *sync);
void          atomr_sync_end      (AtomrSync    *sync);

/* The device's default copy actor, bound to the device thread. */
AtomrActor   *atomr_device_get_default_actor (AtomrDevice *device,
                                              GError     **error);

/* Graph capture (lib/graph/atomr-graph.c).  Called after the reply
 * (successful or not) of an operation that reached the GPU, on the
 * actor's context. */
typedef void (*AtomrOpCompletedFunc) (AtomrOp      *op,
                                      const GError *error,
                                      gpointer      data);
void         atomr_op_set_on_completed (AtomrOp              *op,
                                        AtomrOpCompletedFunc  func,
                                        gpointer              data);
/* In ATOMR_COMPLETION_ADAPTIVE mode, poll this request for up to @usec
 * (when more than the actor's spin-usec; an actor that does not spin at
 * all is left alone) before handing it to the waiter thread: a request
 * known to take longer than the actor's window (a graph replay) would
 * otherwise always pay the hand-off's wake-up. */
void         atomr_op_set_spin_usec    (AtomrOp              *op,
                                        guint                 usec);
/* The request cannot be recorded into a graph, because of @reason (a
 * static string: "the host data would be frozen at capture time"). */
void         atomr_op_forbid_capture   (AtomrOp              *op,
                                        const gchar          *reason);
/* While set, every request submitted to @self goes to
 * atomr_graph_record_op() instead of the mailbox.  Fails when another
 * graph records @self. */
gboolean     atomr_actor_set_capture   (AtomrActor           *self,
                                        gpointer              graph,
                                        GError              **error);
void         atomr_actor_clear_capture (AtomrActor           *self,
                                        gpointer              graph);
gboolean     atomr_op_check_capturable (AtomrOp              *op,
                                        GError              **error);
/* Answers the request TRUE ("recorded") now; the operation itself stays
 * with the graph, which frees it with atomr_op_discard(). */
void         atomr_op_reply_recorded   (AtomrOp              *op);
guint        atomr_op_get_n_buffers    (AtomrOp              *op,
                                        gboolean              writes);
AtomrBuffer *atomr_op_get_buffer       (AtomrOp              *op,
                                        gboolean              writes,
                                        guint                 index);
const gchar *atomr_op_get_operation    (AtomrOp              *op);
gchar       *atomr_op_describe         (AtomrOp              *op);
guint64      atomr_op_get_trace_id     (AtomrOp              *op);
/* Submission (@enqueued FALSE) or enqueue time, ns. */
gint64       atomr_op_get_time         (AtomrOp              *op,
                                        gboolean              enqueued);
/* Runs a recorded operation's enqueue function on @stream (the device
 * held by the caller, on the actors' context; the operation's actor has
 * its stream: atomr_actor_ensure_stream()). */
gboolean     atomr_op_enqueue_on       (AtomrOp              *op,
                                        AtomrStream          *stream,
                                        GError              **error);
void         atomr_op_discard          (AtomrOp              *op);
/* Parameter updates of a recorded operation (its owner: the graph, under
 * its lock).  The enqueue function tells what kind of request it is;
 * replace_data frees the old data as the operation would; clear_buffers
 * forgets the buffers read and written (add the new ones with
 * atomr_op_read()/atomr_op_write()). */
AtomrOpEnqueueFunc atomr_op_get_enqueue (AtomrOp             *op);
void         atomr_op_replace_data     (AtomrOp              *op,
                                        gpointer              data,
                                        GDestroyNotify        destroy);
void         atomr_op_clear_buffers    (AtomrOp              *op);
/* Makes sure @self has its stream and ran its setup (its context). */
gboolean     atomr_actor_ensure_stream (AtomrActor           *self,
                                        GError              **error);
/* Runs on the actor's context after validation, before the device is
 * held and the enqueue function runs (work that enters the device). */
typedef gboolean (*AtomrOpPrepareFunc) (AtomrOp  *op,
                                        GError  **error);
void         atomr_op_set_prepare      (AtomrOp              *op,
                                        AtomrOpPrepareFunc    prepare);
/* The operation's writes stand for foreign work ordered by events (wait
 * for a foreign stream, hand buffers to one): atomr itself writes nothing,
 * so read-only buffers are allowed among them. */
void         atomr_op_set_foreign_writes (AtomrOp            *op);
/* Long CPU work of a request (cuFFT plan creation): called from a
 * prepare function, it has @work run on a shared worker thread, never on
 * the actor's context.  The request stays at the head of the actor's
 * mailbox meanwhile (requests behind it wait: program order), but the
 * context stays free for other actors, completions and replies.  When
 * @work is done the request is run again from the top, without its
 * prepare function; a failed @work answers the request with its error.
 * @work may enter the device (atomr_device_enter()); it must not touch
 * state of the actor that its context owns. */
typedef gboolean (*AtomrOpWorkFunc) (AtomrOp  *op,
                                     GError  **error);
void         atomr_op_run_on_worker    (AtomrOp              *op,
                                        AtomrOpWorkFunc       work);
/* A fresh process-wide trace sequence number. */
guint64      atomr_actor_next_trace_id (void);
gboolean     atomr_actor_wants_completions (AtomrActor       *self);
/* Emits before-complete and after-complete with @info (a replayed node). */
void         atomr_actor_emit_completed (AtomrActor          *self,
                                         AtomrLaunchInfo     *info);

/* One finished operation as an observer sees it (atomr_actor_set_observer):
 * plain values, valid during the call only. */
typedef struct {
  const gchar  *operation;
  guint64       sequence;     /* the process-wide trace id */
  gint64        t_submit;     /* ns, atomr_launch_info_now_ns(); 0 if none */
  gint64        t_enqueue;
  gint64        t_complete;
  gdouble       gpu_ms;       /* -1 without timing */
  guint         stream_id;
  gint          device;
  guint         mailbox_depth;
  const GError *error;        /* NULL on success */
} AtomrOpRecord;

typedef void (*AtomrActorObserver) (AtomrActor          *actor,
                                    const AtomrOpRecord *record,
                                    gpointer             data);

/* One observer per actor, called as each operation finishes (completed
 * on the GPU, or ended before it), on the thread that runs the actor's
 * context, without a lock (were an operation ever to end elsewhere, it
 * would be called there under the actor's mailbox lock).  It must be
 * quick and must not call into the actor.  Unlike the signals it needs no
 * launch record: the inspector server's cheap streaming path.  Any
 * thread.
 *
 * Replaces the previous observer; NULL removes it.  Every operation that
 * finishes after this returns goes to the new observer.  A call of the
 * old one already under way on the actor's context may still be running
 * when this returns; its @destroy runs only after that call, on the
 * context's owner (at its next pass, which this wakes) or here, when
 * nobody runs the context; an observer replaced before it was ever used
 * is destroyed here. */
void         atomr_actor_set_observer (AtomrActor         *self,
                                       AtomrActorObserver  observer,
                                       gpointer            data,
                                       GDestroyNotify      destroy);
gboolean     atomr_actor_has_observer (AtomrActor         *self);

/* Counters for observers that must cost the operations nothing (the
 * inspector server): requests made, operations completed on the GPU,
 * operations in flight (made, not yet completed nor ended before the GPU),
 * operations answered with an error (cancellations aside), requests
 * waiting in the mailbox.  Any thread; each value is read atomically, the
 * set is not one snapshot.  Any pointer may be NULL. */
void         atomr_actor_get_counters (AtomrActor *self,
                                       guint64    *requested,
                                       guint64    *completed,
                                       guint64    *in_flight,
                                       guint64    *failed,
                                       guint      *mailbox);

/* The host device's stream of @actor, for CPU tests. */
AtomrStream  *atomr_actor_get_stream (AtomrActor *self);

G_END_DECLS
