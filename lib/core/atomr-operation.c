/* atomr-operation.c — the public envelope: AtomrOperation wraps the
 * private AtomrOp so that actors written outside atomr-accel (in C against
 * the installed headers, or in a GI language) get hazard tracking,
 * signals, tracing, timeouts and barriers exactly as the built-in ones do.
 *
 * Threads: an operation is built and submitted on any one thread; after
 * atomr_operation_submit() it belongs to the actor, and its enqueue and
 * complete functions run on the actor's main context.  The envelope holds
 * a reference on the wrapper from submission until the request is done,
 * then drops the operation's data and functions (on the actor's context).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-actor-private.h"
#include "atomr-buffer-private.h"
#include "atomr-error.h"
#include "atomr-operation.h"
#include "atomr-tensor-private.h"

/**
 * AtomrOperation:
 *
 * One request to an actor, for actors written outside atomr-accel: the
 * same envelope the built-in actors use.  An actor's `_async` function
 * makes an operation, declares every buffer or tensor the work reads and
 * writes (hazards against every other actor are tracked from these),
 * sets an enqueue function (and, for a reply other than %TRUE, a complete
 * function) and submits it; its `_finish` function calls
 * atomr_operation_finish_boolean() or atomr_operation_finish_pointer().
 *
 * |[<!-- language="C" -->
 * void
 * my_actor_scale_async (MyActor *self, AtomrBuffer *x, gdouble alpha,
 *                       GCancellable *cancellable,
 *                       GAsyncReadyCallback callback, gpointer user_data)
 * {
 *   g_autoptr(AtomrOperation) op =
 *     atomr_operation_new (ATOMR_ACTOR (self), "scale", my_actor_scale_async,
 *                          cancellable, callback, user_data);
 *   atomr_operation_read (op, x);
 *   atomr_operation_write (op, x);
 *   atomr_operation_set_enqueue_func (op, scale_enqueue, request, request_free);
 *   atomr_operation_submit (op);
 * }
 * ]|
 *
 * The actor emits #AtomrActor::before-enqueue and friends, records a
 * trace and honours its timeout and completion mode for these operations
 * like for its own.  A third-party actor is a subclass of #AtomrActor
 * that sets #AtomrActorClass.library and, when it owns library handles,
 * #AtomrActorClass.setup / #AtomrActorClass.teardown (bind the handles to
 * atomr_actor_get_cu_stream_handle()); construct it with
 * g_initable_new() and the "device" property.
 *
 * An operation that is dropped without being submitted answers its
 * callback with %ATOMR_ERROR_INVALID_ARGUMENT.
 *
 * Since: 0.2
 */
struct _AtomrOperation
{
  GObject                     parent_instance;

  AtomrActor                 *actor;      /* owned */
  const gchar                *name;       /* interned */
  AtomrOp                    *op;         /* ours until handed off; the
                                           * envelope's after, until detach */
  gboolean                    submitted;
  gboolean                    in_enqueue;

  gpointer                    data;
  GDestroyNotify              data_destroy;
  AtomrOperationEnqueueFunc   enqueue;
  gpointer                    enqueue_data;
  GDestroyNotify              enqueue_notify;
  AtomrOperationCompleteFunc  complete;
  gpointer                    complete_data;
  GDestroyNotify              complete_notify;
};

G_DEFINE_FINAL_TYPE (AtomrOperation, atomr_operation, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ACTOR,
  PROP_NAME,
  PROP_SUBMITTED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* What the request holds for its functions, released once it is done. */
static void
operation_release (AtomrOperation *self)
{
  gpointer data = g_steal_pointer (&self->data);
  GDestroyNotify data_destroy = g_steal_pointer (&self->data_destroy);
  gpointer enqueue_data = g_steal_pointer (&self->enqueue_data);
  GDestroyNotify enqueue_notify = g_steal_pointer (&self->enqueue_notify);
  gpointer complete_data = g_steal_pointer (&self->complete_data);
  GDestroyNotify complete_notify = g_steal_pointer (&self->complete_notify);

  self->enqueue = NULL;
  self->complete = NULL;
  if (data_destroy)
    data_destroy (data);
  if (enqueue_notify)
    enqueue_notify (enqueue_data);
  if (complete_notify)
    complete_notify (complete_data);
}

/* The envelope frees the request: called on the actor's context (or in
 * atomr_operation_fail()).  Drops the reference taken at hand-off. */
static void
operation_detach (gpointer data)
{
  AtomrOperation *self = data;

  self->op = NULL;
  operation_release (self);
  g_object_unref (self);
}

static gboolean
operation_enqueue (AtomrOp  *op,
                   GError  **error)
{
  AtomrOperation *self = atomr_op_get_data (op);
  gboolean ok;

  self->in_enqueue = TRUE;
  ok = self->enqueue (self, self->enqueue_data, error);
  self->in_enqueue = FALSE;
  if (!ok && error != NULL && *error == NULL)
    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                 "the enqueue function of operation “%s” on %s failed without an error",
                 self->name, atomr_actor_get_name (self->actor));
  return ok;
}

static void
operation_complete (AtomrOp *op,
                    GTask   *task)
{
  AtomrOperation *self = atomr_op_get_data (op);

  self->complete (self, task, self->complete_data);
}

/* Hands the request to the envelope, which then owns it: from now on the
 * wrapper lives (at least) until the request is done. */
static AtomrOp *
operation_hand_off (AtomrOperation *self)
{
  AtomrOp *op = self->op;

  self->submitted = TRUE;
  atomr_op_set_data (op, g_object_ref (self), operation_detach);
  if (self->enqueue)
    atomr_op_set_enqueue (op, operation_enqueue);
  if (self->complete)
    atomr_op_set_complete_task (op, operation_complete);
  return op;
}

static void
atomr_operation_finalize (GObject *object)
{
  AtomrOperation *self = ATOMR_OPERATION (object);

  if (self->op != NULL && !self->submitted)
    {
      /* Dropped unsubmitted: the caller still gets its reply. */
      AtomrOp *op = g_steal_pointer (&self->op);

      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "operation “%s” on %s was dropped without being submitted",
                                      self->name, atomr_actor_get_name (self->actor)));
    }
  operation_release (self);
  g_clear_object (&self->actor);

  G_OBJECT_CLASS (atomr_operation_parent_class)->finalize (object);
}

static void
atomr_operation_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  AtomrOperation *self = ATOMR_OPERATION (object);

  switch (prop_id)
    {
    case PROP_ACTOR:
      g_value_set_object (value, self->actor);
      break;
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_SUBMITTED:
      g_value_set_boolean (value, self->submitted);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_operation_class_init (AtomrOperationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_operation_finalize;
  object_class->get_property = atomr_operation_get_property;

  /**
   * AtomrOperation:actor:
   *
   * The actor the operation is for (%NULL on an operation made with a
   * bare g_object_new(), which can do nothing).
   *
   * Since: 0.2
   */
  properties[PROP_ACTOR] =
    g_param_spec_object ("actor", NULL, NULL, ATOMR_TYPE_ACTOR,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrOperation:name:
   *
   * The operation's name in traces, signals and messages ("scale").
   *
   * Since: 0.2
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrOperation:submitted:
   *
   * Whether the operation was handed to its actor (submitted or failed).
   *
   * Since: 0.2
   */
  properties[PROP_SUBMITTED] =
    g_param_spec_boolean ("submitted", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_operation_init (AtomrOperation *self)
{
}

/* TRUE for an operation that can still be configured: made by
 * atomr_operation_new() and not handed to the actor yet.  A bare one (a
 * binding's g_object_new() without an actor) silently does nothing;
 * configuring one after submission is a programming error. */
static gboolean
operation_open (AtomrOperation *self,
                const gchar    *func)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), FALSE);

  if (self->actor == NULL || (self->op == NULL && !self->submitted))
    return FALSE;
  if (self->submitted)
    {
      g_critical ("%s: operation “%s” on %s was already submitted",
                  func, self->name, atomr_actor_get_name (self->actor));
      return FALSE;
    }
  return TRUE;
}

#define OPERATION_OPEN(self) operation_open ((self), G_STRFUNC)

/**
 * atomr_operation_new:
 * @actor: the actor that runs the operation
 * @name: the operation's name in traces and messages (a short, fixed
 *   string such as "scale"; it is interned)
 * @source_tag: (nullable): the `_async` function, checked by
 *   atomr_operation_finish_boolean()
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async) (nullable): called with the reply; without one
 *   the request is fire-and-forget (its failure is kept for the actor's
 *   next barrier)
 * @user_data: data for @callback
 *
 * Starts a request to @actor.  Declare what it reads and writes, set its
 * enqueue function, then call atomr_operation_submit().
 *
 * Returns: (transfer full): a new operation
 *
 * Since: 0.2
 */
AtomrOperation *
atomr_operation_new (AtomrActor          *actor,
                     const gchar         *name,
                     gpointer             source_tag,
                     GCancellable        *cancellable,
                     GAsyncReadyCallback  callback,
                     gpointer             user_data)
{
  AtomrOperation *self;

  g_return_val_if_fail (ATOMR_IS_ACTOR (actor), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);

  self = g_object_new (ATOMR_TYPE_OPERATION, NULL);
  self->actor = g_object_ref (actor);
  self->name = g_intern_string (name);
  /* A GTask, not the envelope's own reply object: the complete function
   * of a public operation takes a GTask (atomr-operation.h). */
  self->op = atomr_op_new_task (actor, self->name, source_tag, cancellable, callback, user_data);
  return self;
}

/**
 * atomr_operation_get_actor:
 * @self: an operation
 *
 * Returns the operation's actor.
 *
 * Returns: (transfer none) (nullable): the operation's actor
 *
 * Since: 0.2
 */
AtomrActor *
atomr_operation_get_actor (AtomrOperation *self)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), NULL);
  return self->actor;
}

/**
 * atomr_operation_get_name:
 * @self: an operation
 *
 * Returns the operation's name.
 *
 * Returns: (nullable): the operation's name
 *
 * Since: 0.2
 */
const gchar *
atomr_operation_get_name (AtomrOperation *self)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), NULL);
  return self->name;
}

/**
 * atomr_operation_get_submitted:
 * @self: an operation
 *
 * Returns whether the operation was submitted or failed.
 *
 * Returns: whether the operation was submitted or failed
 *
 * Since: 0.2
 */
gboolean
atomr_operation_get_submitted (AtomrOperation *self)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), FALSE);
  return self->submitted;
}

/**
 * atomr_operation_read:
 * @self: an operation that was not submitted yet
 * @buffer: a buffer the work reads
 *
 * Declares that the work reads @buffer: it runs after every earlier
 * operation (of any actor) that writes it, and fails with
 * %ATOMR_ERROR_DEPENDENCY_FAILED when such a write failed.  The buffer is
 * kept alive until the work is done.
 *
 * Since: 0.2
 */
void
atomr_operation_read (AtomrOperation *self,
                      AtomrBuffer    *buffer)
{
  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (ATOMR_IS_BUFFER (buffer));
  atomr_op_read (self->op, buffer);
}

/**
 * atomr_operation_write:
 * @self: an operation that was not submitted yet
 * @buffer: a buffer the work writes
 *
 * Declares that the work writes @buffer: it runs after every earlier
 * operation that reads or writes it.  A read-modify-write is both
 * atomr_operation_read() and atomr_operation_write().
 *
 * Since: 0.2
 */
void
atomr_operation_write (AtomrOperation *self,
                       AtomrBuffer    *buffer)
{
  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (ATOMR_IS_BUFFER (buffer));
  atomr_op_write (self->op, buffer);
}

/**
 * atomr_operation_read_tensor:
 * @self: an operation that was not submitted yet
 * @tensor: a view the work reads
 *
 * Like atomr_operation_read() for the buffer behind @tensor (hazards are
 * tracked per allocation, not per view).
 *
 * Since: 0.2
 */
void
atomr_operation_read_tensor (AtomrOperation *self,
                             AtomrTensor    *tensor)
{
  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (ATOMR_IS_TENSOR (tensor));
  atomr_op_read_tensor (self->op, tensor);
}

/**
 * atomr_operation_write_tensor:
 * @self: an operation that was not submitted yet
 * @tensor: a view the work writes
 *
 * Like atomr_operation_write() for the buffer behind @tensor.
 *
 * Since: 0.2
 */
void
atomr_operation_write_tensor (AtomrOperation *self,
                              AtomrTensor    *tensor)
{
  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (ATOMR_IS_TENSOR (tensor));
  atomr_op_write_tensor (self->op, tensor);
}

/**
 * atomr_operation_set_data: (skip)
 * @self: an operation that was not submitted yet
 * @data: (nullable): the request's parameters
 * @destroy: (nullable): frees @data once the request is done
 *
 * Attaches the request's parameters, for the enqueue and complete
 * functions (atomr_operation_get_data()); bindings keep their data in the
 * closures of those functions instead.  @destroy runs on the actor's
 * context when the request is done (or at once, for an operation that is
 * dropped or replaced).
 *
 * Since: 0.2
 */
void
atomr_operation_set_data (AtomrOperation *self,
                          gpointer        data,
                          GDestroyNotify  destroy)
{
  gpointer old;
  GDestroyNotify old_destroy;

  if (!OPERATION_OPEN (self))
    return;

  old = self->data;
  old_destroy = self->data_destroy;
  self->data = data;
  self->data_destroy = destroy;
  if (old_destroy)
    old_destroy (old);
}

/**
 * atomr_operation_get_data: (skip)
 * @self: an operation
 *
 * Returns the data given to atomr_operation_set_data().
 *
 * Returns: (transfer none) (nullable): the data given to
 *   atomr_operation_set_data()
 *
 * Since: 0.2
 */
gpointer
atomr_operation_get_data (AtomrOperation *self)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), NULL);
  return self->data;
}

/**
 * atomr_operation_set_enqueue_func:
 * @self: an operation that was not submitted yet
 * @func: (scope notified) (closure user_data) (destroy notify): enqueues the work
 * @user_data: data for @func
 * @notify: (nullable): frees @user_data once the request is done
 *
 * Sets the function that enqueues the work (see
 * #AtomrOperationEnqueueFunc).  Without one the operation enqueues
 * nothing: it still orders itself after what it reads, which makes it a
 * fence or (with atomr_operation_set_barrier()) a barrier.
 *
 * Since: 0.2
 */
void
atomr_operation_set_enqueue_func (AtomrOperation            *self,
                                  AtomrOperationEnqueueFunc  func,
                                  gpointer                   user_data,
                                  GDestroyNotify             notify)
{
  gpointer old;
  GDestroyNotify old_notify;

  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (func != NULL);

  old = self->enqueue_data;
  old_notify = self->enqueue_notify;
  self->enqueue = func;
  self->enqueue_data = user_data;
  self->enqueue_notify = notify;
  if (old_notify)
    old_notify (old);
}

/**
 * atomr_operation_set_complete_func:
 * @self: an operation that was not submitted yet
 * @func: (scope notified) (closure user_data) (destroy notify): builds the reply
 * @user_data: data for @func
 * @notify: (nullable): frees @user_data once the request is done
 *
 * Sets the function that builds the reply (see
 * #AtomrOperationCompleteFunc).  Without one a successful request answers
 * %TRUE (read it with atomr_operation_finish_boolean()).
 *
 * Since: 0.2
 */
void
atomr_operation_set_complete_func (AtomrOperation             *self,
                                   AtomrOperationCompleteFunc  func,
                                   gpointer                    user_data,
                                   GDestroyNotify              notify)
{
  gpointer old;
  GDestroyNotify old_notify;

  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (func != NULL);

  old = self->complete_data;
  old_notify = self->complete_notify;
  self->complete = func;
  self->complete_data = user_data;
  self->complete_notify = notify;
  if (old_notify)
    old_notify (old);
}

/**
 * atomr_operation_set_detail:
 * @self: an operation that was not submitted yet
 * @detail: (nullable): a short description of the request ("n=4096")
 *
 * Sets the detail shown with the operation in traces and launch infos.
 *
 * Since: 0.2
 */
void
atomr_operation_set_detail (AtomrOperation *self,
                            const gchar    *detail)
{
  if (!OPERATION_OPEN (self))
    return;
  atomr_op_set_detail (self->op, detail);
}

/**
 * atomr_operation_set_barrier:
 * @self: an operation that was not submitted yet
 *
 * Makes the operation a barrier: it fails with
 * %ATOMR_ERROR_DEPENDENCY_FAILED, listing them, when requests made without
 * a callback on the same actor since the previous barrier failed.
 *
 * Since: 0.2
 */
void
atomr_operation_set_barrier (AtomrOperation *self)
{
  if (!OPERATION_OPEN (self))
    return;
  atomr_op_set_barrier (self->op);
}

/**
 * atomr_operation_keep:
 * @self: an operation that was not submitted yet
 * @object: an object the work uses
 *
 * Keeps @object alive until the work has completed on the GPU (a plan, a
 * descriptor, a host staging buffer...).
 *
 * Since: 0.2
 */
void
atomr_operation_keep (AtomrOperation *self,
                      GObject        *object)
{
  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (G_IS_OBJECT (object));
  atomr_op_keep (self->op, object);
}

/**
 * atomr_operation_submit:
 * @self: an operation that was not submitted yet
 *
 * Hands the operation to its actor (from any thread).  Its hazards are
 * registered now, in program order; the enqueue function runs later on the
 * actor's context.  The operation can be unreferenced right away.
 *
 * Since: 0.2
 */
void
atomr_operation_submit (AtomrOperation *self)
{
  if (!OPERATION_OPEN (self))
    return;

  /* Nothing may touch self->op after this: the actor's context frees it. */
  atomr_op_submit (operation_hand_off (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SUBMITTED]);
}

/**
 * atomr_operation_fail:
 * @self: an operation that was not submitted yet
 * @error: why the request is refused (validation failed)
 *
 * Answers the request with a copy of @error without enqueuing anything;
 * the reply still arrives asynchronously, on the caller's context.
 *
 * Since: 0.2
 */
void
atomr_operation_fail (AtomrOperation *self,
                      const GError   *error)
{
  if (!OPERATION_OPEN (self))
    return;
  g_return_if_fail (error != NULL);

  atomr_op_fail (operation_hand_off (self), g_error_copy (error));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SUBMITTED]);
}

/**
 * atomr_operation_get_cu_stream:
 * @self: an operation being enqueued
 *
 * The CUDA stream (a `CUstream`, as an integer) to enqueue the work on.
 * Only valid inside the enqueue function.
 *
 * Returns: the stream handle, or 0 on the mock device or outside the
 *   enqueue function
 *
 * Since: 0.2
 */
guint64
atomr_operation_get_cu_stream (AtomrOperation *self)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), 0);
  if (!self->in_enqueue)
    return 0;
  return (guint64) (guintptr) atomr_op_get_cu_stream (self->op);
}

/**
 * atomr_operation_is_host:
 * @self: an operation
 *
 * Whether the actor runs on a mock device
 * (atomr_device_new_mock()): the enqueue function must then do the
 * work on the CPU, with buffer addresses from
 * atomr_buffer_get_device_pointer() being host memory.
 *
 * Returns: %TRUE on the mock device
 *
 * Since: 0.2
 */
gboolean
atomr_operation_is_host (AtomrOperation *self)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), FALSE);

  if (self->in_enqueue)
    return atomr_op_is_host (self->op);
  return self->actor != NULL && atomr_actor_get_cu_stream (self->actor) == NULL;
}

/**
 * atomr_operation_get_address:
 * @self: an operation being enqueued
 * @buffer: a buffer the operation declared it reads or writes
 *
 * The address the enqueue function works on for @buffer: its device
 * address (a `CUdeviceptr`) on a GPU, its host memory on the host test
 * device.  Only valid inside the enqueue function.
 *
 * Returns: the address, or 0 when called outside the enqueue function
 *
 * Since: 0.2
 */
guint64
atomr_operation_get_address (AtomrOperation *self,
                             AtomrBuffer    *buffer)
{
  g_return_val_if_fail (ATOMR_IS_OPERATION (self), 0);
  g_return_val_if_fail (ATOMR_IS_BUFFER (buffer), 0);
  if (!self->in_enqueue)
    return 0;
  if (atomr_op_is_host (self->op))
    return (guint64) (guintptr) atomr_buffer_get_host_data (buffer);
  return (guint64) atomr_buffer_get_ptr (buffer);
}

/**
 * atomr_operation_finish_boolean:
 * @actor: the actor
 * @result: the result given to the request's callback
 * @source_tag: (nullable): the source tag given to atomr_operation_new()
 * @error: return location for a #GError
 *
 * Finishes a request whose reply is a boolean (the default reply).
 *
 * Returns: %TRUE on success, %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_operation_finish_boolean (AtomrActor    *actor,
                                GAsyncResult  *result,
                                gpointer       source_tag,
                                GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_ACTOR (actor), FALSE);
  return atomr_op_finish_boolean (actor, result, source_tag, error);
}

/**
 * atomr_operation_finish_pointer: (skip)
 * @actor: the actor
 * @result: the result given to the request's callback
 * @source_tag: (nullable): the source tag given to atomr_operation_new()
 * @error: return location for a #GError
 *
 * Finishes a request whose complete function returned a pointer with
 * g_task_return_pointer().  Bindings call g_task_propagate_value() or
 * friends on @result instead.
 *
 * Returns: (transfer full) (nullable): the reply, %NULL with @error set
 *
 * Since: 0.2
 */
gpointer
atomr_operation_finish_pointer (AtomrActor    *actor,
                                GAsyncResult  *result,
                                gpointer       source_tag,
                                GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_ACTOR (actor), NULL);
  return atomr_op_finish_pointer (actor, result, source_tag, error);
}

/**
 * atomr_actor_get_cu_stream_handle:
 * @self: an actor
 *
 * The actor's CUDA stream (a `CUstream`, as an integer) for the current
 * context generation, for binding library handles in
 * #AtomrActorClass.setup.  Call it on the actor's context.
 *
 * Returns: the stream handle, or 0 on the mock device
 *
 * Since: 0.2
 */
guint64
atomr_actor_get_cu_stream_handle (AtomrActor *self)
{
  g_return_val_if_fail (ATOMR_IS_ACTOR (self), 0);
  return (guint64) (guintptr) atomr_actor_get_cu_stream (self);
}
