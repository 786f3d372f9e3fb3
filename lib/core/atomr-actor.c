/* atomr-actor.c — the actor base class: its GObject, properties, signals,
 * accessors and graph capture support (the envelope: atomr-actor-op.c,
 * the mailbox: atomr-actor-source.c, _sync: atomr-actor-sync.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#define ATOMR_ACTOR_DEFINES_TYPE

#include <string.h>

#include "atomr-actor-impl-private.h"
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
 * completion service thread only wakes it up.  A request made on the
 * context's own thread (the thread that has it as its thread-default
 * context, or the main thread for the global default context) while nobody
 * iterates the context is enqueued inside the `_async` call, the thread
 * holding the context meanwhile; its reply still comes from the main loop.
 *
 * Since: 0.1
 */

GParamSpec *atomr_actor_properties[N_PROPS];
guint atomr_actor_signals[N_SIGNALS];
gsize atomr_actor_next_sequence;
__thread guint tls_op_run_depth;
__thread AtomrSync *tls_sync;
gint atomr_actor_private_offset_internal;

static void atomr_actor_initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (AtomrActor, atomr_actor, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (AtomrActor)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                         atomr_actor_initable_iface_init))


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
  if (priv->own_thread_error)
    {
      g_propagate_error (error, g_error_copy (priv->own_thread_error));
      return FALSE;
    }
  return actor_ensure_stream (self, error);
}

static void
atomr_actor_initable_iface_init (GInitableIface *iface)
{
  iface->init = atomr_actor_initable_init;
}

/* The thread of an actor made with #AtomrActor:own-thread and what it
 * shares with the actor: the context to iterate and when to stop.  Not a
 * GMainLoop: a g_main_loop_quit() that comes before the thread has entered
 * g_main_loop_run() is lost (an actor finalized at once). */
struct _ActorThread
{
  gatomicrefcount ref;
  GMainContext   *context;
  gint            stop;     /* atomic */
};

static void
actor_thread_unref (ActorThread *at)
{
  if (!g_atomic_ref_count_dec (&at->ref))
    return;
  g_main_context_unref (at->context);
  g_free (at);
}

static gpointer
actor_thread_main (gpointer data)
{
  ActorThread *at = data;

  g_main_context_push_thread_default (at->context);
  while (!g_atomic_int_get (&at->stop))
    g_main_context_iteration (at->context, TRUE);
  g_main_context_pop_thread_default (at->context);
  actor_thread_unref (at);
  return NULL;
}

static void
atomr_actor_constructed (GObject *object)
{
  AtomrActor *self = ATOMR_ACTOR (object);
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  ActorSource *src;

  G_OBJECT_CLASS (atomr_actor_parent_class)->constructed (object);

  /* A context of its own, for the thread started below; a context the
   * caller gave stays theirs to run (initable_init says so). */
  if (priv->own_thread && priv->context == NULL)
    priv->context = g_main_context_new ();
  else if (priv->own_thread)
    {
      priv->own_thread = FALSE;
      priv->own_thread_error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                        "%s: own-thread makes the actor's context; it cannot also be "
                                        "given one (the \"context\" property)", G_OBJECT_TYPE_NAME (self));
    }
  if (priv->context == NULL)
    priv->context = g_main_context_ref_thread_default ();
  if (priv->name == NULL)
    {
      static gint counter;
      priv->name = g_strdup_printf ("%s-%d", atomr_actor_get_library (self),
                                    g_atomic_int_add (&counter, 1) + 1);
    }

  src = (ActorSource *) g_source_new (&atomr_actor_source_funcs, sizeof (ActorSource));
  g_weak_ref_init (&src->actor, self);
  g_weak_ref_init (&src->capture_ref, NULL);
  src->context = g_main_context_ref (priv->context);
  g_mutex_init (&src->lock);
  g_queue_init (&src->mailbox);
  atomr_ring_init (&src->inflight);
  atomr_vec_init (&src->unfenced);
  src->spin_usec = (gint) MIN (priv->spin_usec, G_MAXINT);
  src->timeout_ms = (gint) MIN (priv->timeout_ms, G_MAXINT);
  src->graveyard = g_async_queue_new ();
  g_source_set_name ((GSource *) src, "AtomrActor");
  g_source_set_priority ((GSource *) src, G_PRIORITY_DEFAULT);
  g_source_set_can_recurse ((GSource *) src, TRUE);
  g_source_attach ((GSource *) src, priv->context);
  priv->source = src;

  if (priv->own_thread)
    {
      /* The thread holds its state (and through it the context), never
       * the actor: the actor's last reference may drop anywhere. */
      priv->thread_state = g_new0 (ActorThread, 1);
      g_atomic_ref_count_init (&priv->thread_state->ref);
      priv->thread_state->context = g_main_context_ref (priv->context);
      g_atomic_ref_count_inc (&priv->thread_state->ref);
      priv->thread = g_thread_try_new (priv->name, actor_thread_main, priv->thread_state,
                                       &priv->own_thread_error);
      if (priv->thread == NULL)
        {
          /* G_THREAD_ERROR, as g_thread_try_new() said it; init fails with it */
          g_prefix_error (&priv->own_thread_error, "%s: could not start the actor's own thread: ",
                          G_OBJECT_TYPE_NAME (self));
          actor_thread_unref (priv->thread_state);   /* the thread's reference */
        }
    }

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
      actor_source_unref (priv->source);
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
  if (priv->thread)
    {
      /* Finalized on that very thread (its last request let go of us
       * there): it stops when this dispatch returns, nobody waits for it. */
      g_atomic_int_set (&priv->thread_state->stop, 1);
      g_main_context_wakeup (priv->thread_state->context);
      if (g_thread_self () == priv->thread)
        g_thread_unref (priv->thread);
      else
        g_thread_join (priv->thread);
      priv->thread = NULL;
    }
  g_clear_pointer (&priv->thread_state, actor_thread_unref);
  g_clear_error (&priv->own_thread_error);
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
    case PROP_OWN_THREAD:
      g_value_set_boolean (value, priv->own_thread);
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
    case PROP_OWN_THREAD:
      priv->own_thread = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_actor_class_init (AtomrActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  /* for the other files of the actor (atomr-actor-impl-private.h); the type
   * system set it before calling us */
  atomr_actor_private_offset_internal = AtomrActor_private_offset;

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
  atomr_actor_properties[PROP_DEVICE] =
    g_param_spec_object ("device", NULL, NULL, ATOMR_TYPE_DEVICE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:context:
   *
   * The [struct@GLib.MainContext] whose iteration serves the actor's mailbox.  Default:
   * the thread-default context of the constructing thread, or, with
   * #AtomrActor:own-thread, a new context that the actor's own thread
   * iterates.
   *
   * Since: 0.1
   */
  atomr_actor_properties[PROP_CONTEXT] =
    g_param_spec_boxed ("context", NULL, NULL, G_TYPE_MAIN_CONTEXT,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:name:
   *
   * A name for traces and logs; default "<library>-<n>".
   *
   * Since: 0.1
   */
  atomr_actor_properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrActor:library:
   *
   * The library the actor drives.
   *
   * Since: 0.1
   */
  atomr_actor_properties[PROP_LIBRARY] =
    g_param_spec_string ("library", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrActor:completion-mode:
   *
   * How the actor learns that the GPU finished an operation.
   *
   * Since: 0.1
   */
  atomr_actor_properties[PROP_COMPLETION_MODE] =
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
  atomr_actor_properties[PROP_TIMING] =
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
  atomr_actor_properties[PROP_NVTX] =
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
  atomr_actor_properties[PROP_SPIN_USEC] =
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
  atomr_actor_properties[PROP_STREAM_ID] =
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
  atomr_actor_properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", NULL, NULL, 0, G_MAXINT, 0,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * AtomrActor:own-thread:
   *
   * Whether the actor runs on a thread of its own: a new
   * [struct@GLib.MainContext], which that thread iterates, serves the
   * actor's mailbox (#AtomrActor:context is that context; setting both is
   * an error).  Requests then go to the GPU from that thread while the
   * submitting thread goes on: no driver call on an application's main
   * loop, and a burst of small requests overlaps the envelope's work on the
   * submitting thread with the launches on the actor's thread (pipelined
   * kernel launches: tests/bench/graph/bench-graph, section 2).  Replies
   * still come back to the thread-default context of whoever asked.  A
   * request on its own waits for that thread to wake up (a few
   * microseconds); for the lowest latency of single requests leave it
   * %FALSE (the default), which enqueues on the submitting thread when it
   * owns the actor's context.  The thread ends when the actor is
   * finalized.
   *
   * Since: 0.2
   */
  atomr_actor_properties[PROP_OWN_THREAD] =
    g_param_spec_boolean ("own-thread", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, atomr_actor_properties);

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
  atomr_actor_signals[SIGNAL_BEFORE_ENQUEUE] =
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
  atomr_actor_signals[SIGNAL_AFTER_ENQUEUE] =
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
  atomr_actor_signals[SIGNAL_BEFORE_COMPLETE] =
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
  atomr_actor_signals[SIGNAL_AFTER_COMPLETE] =
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
 * atomr_actor_get_own_thread:
 * @self: an [class@Atomr.Actor]
 *
 * Gets whether the actor runs on a thread of its own.
 *
 * This is the value of the [property@Atomr.Actor:own-thread] property.
 *
 * Returns: %TRUE when a thread of the actor's own iterates its context
 *
 * Since: 0.2
 */
gboolean
atomr_actor_get_own_thread (AtomrActor *self)
{
  AtomrActorPrivate *priv;

  g_return_val_if_fail (ATOMR_IS_ACTOR (self), FALSE);
  priv = atomr_actor_get_instance_private (self);
  return priv->own_thread;
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
  g_object_notify_by_pspec (G_OBJECT (self), atomr_actor_properties[PROP_NAME]);
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
  g_object_notify_by_pspec (G_OBJECT (self), atomr_actor_properties[PROP_COMPLETION_MODE]);
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
  g_object_notify_by_pspec (G_OBJECT (self), atomr_actor_properties[PROP_TIMING]);
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
  g_object_notify_by_pspec (G_OBJECT (self), atomr_actor_properties[PROP_NVTX]);
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
  g_object_notify_by_pspec (G_OBJECT (self), atomr_actor_properties[PROP_SPIN_USEC]);
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
  g_object_notify_by_pspec (G_OBJECT (self), atomr_actor_properties[PROP_TIMEOUT_MS]);
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
  return __atomic_load_n (&priv->n_completed, __ATOMIC_RELAXED);
}

void
atomr_actor_set_observer (AtomrActor         *self,
                          AtomrActorObserver  observer,
                          gpointer            data,
                          GDestroyNotify      destroy)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);
  ActorSource *src = priv->source;
  ObserverSlot old;

  if (src == NULL)
    {
      if (destroy)
        destroy (data);
      return;
    }
  /* Left pending for the context's owner, which reads the current
   * observer without a lock (op_observe()); an observer set before and
   * never adopted is replaced and destroyed here. */
  g_mutex_lock (&src->lock);
  old = src->observer_pending;
  src->observer_pending.fn = observer;
  src->observer_pending.data = data;
  src->observer_pending.destroy = destroy;
  src->observer_pending.device = observer && priv->device ? atomr_device_get_ordinal (priv->device) : 0;
  g_atomic_int_set (&src->observer_changed, 1);
  g_atomic_int_set (&src->has_observer, observer != NULL);
  g_mutex_unlock (&src->lock);
  if (old.destroy)
    old.destroy (old.data);

  /* Adopted now if nobody runs the context (or this thread does), else
   * by its owner at its next pass, which the wake-up brings on: the old
   * observer's destroy never waits for the actor's next request. */
  if (g_main_context_acquire (src->context))
    {
      observer_adopt (src);
      g_main_context_release (src->context);
    }
  else
    source_wake (src);
}

gboolean
atomr_actor_has_observer (AtomrActor *self)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (self);

  return priv->source && g_atomic_int_get (&priv->source->has_observer);
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
atomr_op_set_spin_usec (AtomrOp *op,
                        guint    usec)
{
  op->spin_usec = usec;
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
  if (op->reply)
    {
      atomr_reply_return_boolean (op->reply, TRUE);
      g_clear_pointer (&op->reply, atomr_reply_release);
    }
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
  return (guint64) g_atomic_pointer_add (&atomr_actor_next_sequence, 1) + 1;
}

gboolean
atomr_actor_wants_completions (AtomrActor *self)
{
  return g_signal_has_handler_pending (self, atomr_actor_signals[SIGNAL_AFTER_COMPLETE], 0, TRUE) ||
         g_signal_has_handler_pending (self, atomr_actor_signals[SIGNAL_BEFORE_COMPLETE], 0, TRUE);
}

void
atomr_actor_emit_completed (AtomrActor      *self,
                            AtomrLaunchInfo *info)
{
  g_signal_emit (self, atomr_actor_signals[SIGNAL_BEFORE_COMPLETE], 0, info);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_REPLIED, atomr_launch_info_now_ns ());
  g_signal_emit (self, atomr_actor_signals[SIGNAL_AFTER_COMPLETE], 0, info);
}

