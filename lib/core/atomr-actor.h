/* atomr-actor.h — the base of every actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-buffer.h"
#include "atomr-device.h"
#include "atomr-launch-info.h"

G_BEGIN_DECLS

/**
 * AtomrCompletionMode:
 * @ATOMR_COMPLETION_ADAPTIVE: poll the operation's event from the actor's
 *   main context for a short spin window, then hand it to a waiter thread
 *   that sleeps in the driver.  Fastest wake-up for short work, no core
 *   burnt while idle or on long work.  The default.
 * @ATOMR_COMPLETION_POLL: poll the event from the actor's main context
 *   until it passes (lowest latency; burns the context's thread while work
 *   is in flight, never while idle).
 * @ATOMR_COMPLETION_EVENT_THREAD: a waiter thread sleeps on each event
 *   and wakes the actor's context.
 * @ATOMR_COMPLETION_HOST_FUNC: a host function enqueued after the work
 *   (cuLaunchHostFunc) wakes the actor's context.
 * @ATOMR_COMPLETION_SYNC: block the actor's context until the work is done
 *   (debugging only).
 *
 * How an actor learns that the GPU has finished an operation.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_COMPLETION_ADAPTIVE,
  ATOMR_COMPLETION_POLL,
  ATOMR_COMPLETION_EVENT_THREAD,
  ATOMR_COMPLETION_HOST_FUNC,
  ATOMR_COMPLETION_SYNC,
} AtomrCompletionMode;

#define ATOMR_TYPE_ACTOR (atomr_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (AtomrActor, atomr_actor, ATOMR, ACTOR, GObject)

/**
 * AtomrActorClass:
 * @parent_class: the parent class
 * @library: the library the actor drives, for traces ("cuda", "cublas", ...)
 * @setup: creates the actor's library handles for the current context
 *   generation, bound to the actor's stream; called at construction and
 *   again, on the actor's context, after each context rebuild
 * @teardown: releases library handles; @context_alive is %FALSE when the
 *   context they belonged to was already destroyed (then nothing may be
 *   called on them)
 * @before_enqueue: class handler of [signal@Atomr.Actor::before-enqueue]
 * @after_enqueue: class handler of [signal@Atomr.Actor::after-enqueue]
 * @before_complete: class handler of [signal@Atomr.Actor::before-complete]
 * @after_complete: class handler of [signal@Atomr.Actor::after-complete]
 *
 * The class of actors.  Subclasses set @library and, when they own
 * library handles, @setup and @teardown.
 *
 * Since: 0.1
 */
/**
 * AtomrActorClass::setup:
 * @self: the actor
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates the actor's library handles (a cuBLAS handle, a cuFFT plan
 * cache, ...) for the current context generation and binds them to the
 * actor's stream.
 *
 * Called with the device's context current when the actor first needs its
 * stream, and again when the first operation after a context rebuild makes
 * a new stream.
 *
 * Returns: %TRUE on success; %FALSE with @error set fails the operation
 *   that needed the stream
 *
 * Since: 0.1
 */

/**
 * AtomrActorClass::teardown:
 * @self: the actor
 * @context_alive: %FALSE when the context the handles belonged to was
 *   already destroyed; then nothing may be called on them
 *
 * Releases the library handles that [vfunc@Atomr.Actor.setup] created.
 *
 * Called when the actor finds that its device's context was rebuilt (with
 * @context_alive %FALSE) and when the actor is finalized.
 *
 * Since: 0.1
 */

/**
 * AtomrActorClass::before_enqueue:
 * @self: the actor
 * @info: the operation
 *
 * Class handler of the [signal@Atomr.Actor::before-enqueue] signal: runs
 * on the actor's context after validation, just before the work is
 * enqueued on the stream.
 *
 * Since: 0.1
 */

/**
 * AtomrActorClass::after_enqueue:
 * @self: the actor
 * @info: the operation
 *
 * Class handler of the [signal@Atomr.Actor::after-enqueue] signal: runs
 * on the actor's context once the work is on the stream.
 *
 * Since: 0.1
 */

/**
 * AtomrActorClass::before_complete:
 * @self: the actor
 * @info: the operation
 *
 * Class handler of the [signal@Atomr.Actor::before-complete] signal: runs
 * on the actor's context when the GPU finished the operation, before its
 * caller gets the reply.
 *
 * Since: 0.1
 */

/**
 * AtomrActorClass::after_complete:
 * @self: the actor
 * @info: the operation
 *
 * Class handler of the [signal@Atomr.Actor::after-complete] signal: runs
 * on the actor's context after the caller got the reply.
 *
 * Since: 0.1
 */
struct _AtomrActorClass
{
  GObjectClass parent_class;

  const gchar *library;

  gboolean (*setup)           (AtomrActor      *self,
                               GError         **error);
  void     (*teardown)        (AtomrActor      *self,
                               gboolean         context_alive);

  void     (*before_enqueue)  (AtomrActor      *self,
                               AtomrLaunchInfo *info);
  void     (*after_enqueue)   (AtomrActor      *self,
                               AtomrLaunchInfo *info);
  void     (*before_complete) (AtomrActor      *self,
                               AtomrLaunchInfo *info);
  void     (*after_complete)  (AtomrActor      *self,
                               AtomrLaunchInfo *info);

  /*< private >*/
  gpointer padding[12];
};

ATOMR_AVAILABLE_IN_ALL
AtomrDevice        *atomr_actor_get_device          (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
GMainContext       *atomr_actor_get_context         (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_actor_get_own_thread      (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
const gchar        *atomr_actor_get_name            (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_set_name            (AtomrActor          *self,
                                                     const gchar         *name);
ATOMR_AVAILABLE_IN_ALL
const gchar        *atomr_actor_get_library         (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompletionMode atomr_actor_get_completion_mode (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_set_completion_mode (AtomrActor          *self,
                                                     AtomrCompletionMode  mode);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_actor_get_timing          (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_set_timing          (AtomrActor          *self,
                                                     gboolean             timing);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_actor_get_nvtx            (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_set_nvtx            (AtomrActor          *self,
                                                     gboolean             nvtx);
ATOMR_AVAILABLE_IN_ALL
guint               atomr_actor_get_spin_usec       (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_set_spin_usec       (AtomrActor          *self,
                                                     guint                usec);
ATOMR_AVAILABLE_IN_ALL
guint               atomr_actor_get_timeout_ms      (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_set_timeout_ms      (AtomrActor          *self,
                                                     guint                timeout_ms);
ATOMR_AVAILABLE_IN_ALL
guint               atomr_actor_get_stream_id       (AtomrActor          *self);
ATOMR_AVAILABLE_IN_ALL
guint64             atomr_actor_get_n_completed     (AtomrActor          *self);

ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_upload_async        (AtomrActor          *self,
                                                     AtomrBuffer         *buffer,
                                                     GBytes              *data,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_actor_upload_finish       (AtomrActor          *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_download_async      (AtomrActor          *self,
                                                     AtomrBuffer         *buffer,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
GBytes             *atomr_actor_download_finish     (AtomrActor          *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_fill_async          (AtomrActor          *self,
                                                     AtomrBuffer         *buffer,
                                                     gdouble              value,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_actor_fill_finish         (AtomrActor          *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_copy_async          (AtomrActor          *self,
                                                     AtomrBuffer         *dst,
                                                     AtomrBuffer         *src,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_actor_copy_finish         (AtomrActor          *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);
ATOMR_AVAILABLE_IN_ALL
void                atomr_actor_barrier_async       (AtomrActor          *self,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean            atomr_actor_barrier_finish      (AtomrActor          *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);

#define ATOMR_TYPE_COPY_ACTOR (atomr_copy_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrCopyActor, atomr_copy_actor, ATOMR, COPY_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrCopyActor     *atomr_copy_actor_new            (AtomrDevice         *device,
                                                     GError             **error);

G_END_DECLS
