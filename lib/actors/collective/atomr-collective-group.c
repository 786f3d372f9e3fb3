/* atomr-collective-group.c — calls submitted as one NCCL group
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-collective-private.h"

/**
 * AtomrCollectiveGroup:
 *
 * Collects collective calls, then submits them as one request: one
 * `ncclGroupStart`/`ncclGroupEnd` around every call, one reply.  That is
 * how a local world runs a collective (one call per rank), how sends and
 * receives pair up without deadlock, and how several collectives of one
 * rank share a launch.
 *
 * Each `add` validates its call at once.  At submission the whole group
 * is checked so that it cannot deadlock NCCL (every rank of a local
 * world present for each collective, the same sizes and roots, every send
 * matched by a receive).  The group is empty again after
 * [method@Atomr.CollectiveGroup.submit_async] and can be filled anew.
 *
 * Since: 0.2
 */

struct _AtomrCollectiveGroup
{
  GObject               parent_instance;

  AtomrCollectiveWorld *world;
  GPtrArray            *calls;
  AtomrActor           *leader;   /* of the last submission */
};

G_DEFINE_FINAL_TYPE (AtomrCollectiveGroup, atomr_collective_group, G_TYPE_OBJECT)

/**
 * atomr_collective_group_new:
 * @world: the world whose actors the calls use
 *
 * Creates a group that collects collective calls on the actors of @world and submits them together, as one NCCL group.
 *
 * Returns: (transfer full): an empty group
 *
 * Since: 0.2
 */
AtomrCollectiveGroup *
atomr_collective_group_new (AtomrCollectiveWorld *world)
{
  AtomrCollectiveGroup *self;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (world), NULL);
  self = g_object_new (ATOMR_TYPE_COLLECTIVE_GROUP, NULL);
  self->world = g_object_ref (world);
  return self;
}

/**
 * atomr_collective_group_get_n_calls:
 * @self: an [class@Atomr.CollectiveGroup]
 *
 * Gets the number of calls added since the last submission.
 *
 * Returns: the number of calls added since the last submission
 *
 * Since: 0.2
 */
guint
atomr_collective_group_get_n_calls (AtomrCollectiveGroup *self)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), 0);
  return self->calls->len;
}

static gboolean
add (AtomrCollectiveGroup  *self,
     AtomrCollectiveCall   *call,
     GError               **error)
{
  if (self->world == NULL)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective group: made without a world (use atomr_collective_group_new())");
      atomr_collective_call_free (call);
      return FALSE;
    }
  if (!ATOMR_IS_COLLECTIVE_ACTOR (call->actor) ||
      atomr_collective_actor_get_world (call->actor) != self->world)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective group: the %s call's actor is not one of this group's world",
                   atomr_collective_call_name (call->kind));
      atomr_collective_call_free (call);
      return FALSE;
    }
  if (!atomr_collective_call_check (call, error))
    {
      atomr_collective_call_free (call);
      return FALSE;
    }
  g_ptr_array_add (self->calls, call);
  return TRUE;
}

/**
 * atomr_collective_group_add_all_reduce:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the rank
 * @send: its contribution
 * @recv: its result
 * @op: how contributions combine
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds an all-reduce call (see [method@Atomr.CollectiveActor.all_reduce_async]).
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_all_reduce (AtomrCollectiveGroup  *self,
                                       AtomrCollectiveActor  *actor,
                                       AtomrTensor           *send,
                                       AtomrTensor           *recv,
                                       AtomrReduceOp          op,
                                       GError               **error)
{
  AtomrCollectiveCall *call;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  call = atomr_collective_call_new (ATOMR_CALL_ALL_REDUCE, actor, send, recv);
  call->op = op;
  return add (self, call, error);
}

/**
 * atomr_collective_group_add_broadcast:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the rank
 * @send: (nullable): the data, on the root
 * @recv: where the rank receives it
 * @root: the sending rank
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds a broadcast call (see [method@Atomr.CollectiveActor.broadcast_async]).
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_broadcast (AtomrCollectiveGroup  *self,
                                      AtomrCollectiveActor  *actor,
                                      AtomrTensor           *send,
                                      AtomrTensor           *recv,
                                      guint                  root,
                                      GError               **error)
{
  AtomrCollectiveCall *call;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  call = atomr_collective_call_new (ATOMR_CALL_BROADCAST, actor, send, recv);
  call->root = root;
  return add (self, call, error);
}

/**
 * atomr_collective_group_add_reduce:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the rank
 * @send: its contribution
 * @recv: (nullable): the result, on the root
 * @op: how contributions combine
 * @root: the receiving rank
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds a reduce call (see [method@Atomr.CollectiveActor.reduce_async]).
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_reduce (AtomrCollectiveGroup  *self,
                                   AtomrCollectiveActor  *actor,
                                   AtomrTensor           *send,
                                   AtomrTensor           *recv,
                                   AtomrReduceOp          op,
                                   guint                  root,
                                   GError               **error)
{
  AtomrCollectiveCall *call;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  call = atomr_collective_call_new (ATOMR_CALL_REDUCE, actor, send, recv);
  call->op = op;
  call->root = root;
  return add (self, call, error);
}

/**
 * atomr_collective_group_add_all_gather:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the rank
 * @send: its block
 * @recv: every rank's block
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds an all-gather call (see [method@Atomr.CollectiveActor.all_gather_async]).
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_all_gather (AtomrCollectiveGroup  *self,
                                       AtomrCollectiveActor  *actor,
                                       AtomrTensor           *send,
                                       AtomrTensor           *recv,
                                       GError               **error)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  return add (self, atomr_collective_call_new (ATOMR_CALL_ALL_GATHER, actor, send, recv), error);
}

/**
 * atomr_collective_group_add_reduce_scatter:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the rank
 * @send: one block per rank
 * @recv: the rank's block of the combination
 * @op: how contributions combine
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds a reduce-scatter call (see [method@Atomr.CollectiveActor.reduce_scatter_async]).
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_reduce_scatter (AtomrCollectiveGroup  *self,
                                           AtomrCollectiveActor  *actor,
                                           AtomrTensor           *send,
                                           AtomrTensor           *recv,
                                           AtomrReduceOp          op,
                                           GError               **error)
{
  AtomrCollectiveCall *call;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  call = atomr_collective_call_new (ATOMR_CALL_REDUCE_SCATTER, actor, send, recv);
  call->op = op;
  return add (self, call, error);
}

/**
 * atomr_collective_group_add_all_to_all:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the rank
 * @send: one equal block per rank
 * @recv: one block from each rank
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds an all-to-all call (see [method@Atomr.CollectiveActor.all_to_all_async]).
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_all_to_all (AtomrCollectiveGroup  *self,
                                       AtomrCollectiveActor  *actor,
                                       AtomrTensor           *send,
                                       AtomrTensor           *recv,
                                       GError               **error)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  return add (self, atomr_collective_call_new (ATOMR_CALL_ALL_TO_ALL, actor, send, recv), error);
}

/**
 * atomr_collective_group_add_all_to_all_v:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the rank
 * @send: what this rank sends
 * @send_counts: (array length=n_send_counts): elements sent to each rank
 * @n_send_counts: the length of @send_counts: the world size
 * @send_offsets: (array length=n_send_offsets): where in @send each rank's block starts
 * @n_send_offsets: the length of @send_offsets: the world size
 * @recv: what this rank receives
 * @recv_counts: (array length=n_recv_counts): elements received from each rank
 * @n_recv_counts: the length of @recv_counts: the world size
 * @recv_offsets: (array length=n_recv_offsets): where in @recv each block lands
 * @n_recv_offsets: the length of @recv_offsets: the world size
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds an all-to-all with a count and an offset per peer (see
 * [method@Atomr.CollectiveActor.all_to_all_v_async]): what a world of
 * several ranks in one process needs, one call per rank in one group.
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_all_to_all_v (AtomrCollectiveGroup  *self,
                                         AtomrCollectiveActor  *actor,
                                         AtomrTensor           *send,
                                         const guint64         *send_counts,
                                         guint                  n_send_counts,
                                         const guint64         *send_offsets,
                                         guint                  n_send_offsets,
                                         AtomrTensor           *recv,
                                         const guint64         *recv_counts,
                                         guint                  n_recv_counts,
                                         const guint64         *recv_offsets,
                                         guint                  n_recv_offsets,
                                         GError               **error)
{
  AtomrCollectiveCall *call;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  call = atomr_collective_call_new (ATOMR_CALL_ALL_TO_ALL_V, actor, send, recv);
  if (self->world != NULL &&   /* without one, add() says so */
      !atomr_collective_call_set_counts (call, atomr_collective_world_get_n_ranks (self->world),
                                         send_counts, n_send_counts, send_offsets, n_send_offsets,
                                         recv_counts, n_recv_counts, recv_offsets, n_recv_offsets, error))
    {
      atomr_collective_call_free (call);
      return FALSE;
    }
  return add (self, call, error);
}

/**
 * atomr_collective_group_add_send:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the sending rank
 * @tensor: what it sends
 * @peer: the receiving rank
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds a send.  In a local world its receive must be in the same group.
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_send (AtomrCollectiveGroup  *self,
                                 AtomrCollectiveActor  *actor,
                                 AtomrTensor           *tensor,
                                 guint                  peer,
                                 GError               **error)
{
  AtomrCollectiveCall *call;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  call = atomr_collective_call_new (ATOMR_CALL_SEND, actor, tensor, NULL);
  call->root = peer;
  return add (self, call, error);
}

/**
 * atomr_collective_group_add_recv:
 * @self: an [class@Atomr.CollectiveGroup]
 * @actor: the receiving rank
 * @tensor: where it receives
 * @peer: the sending rank
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds a receive.
 *
 * Returns: %TRUE when the call is valid and was added
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_add_recv (AtomrCollectiveGroup  *self,
                                 AtomrCollectiveActor  *actor,
                                 AtomrTensor           *tensor,
                                 guint                  peer,
                                 GError               **error)
{
  AtomrCollectiveCall *call;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  call = atomr_collective_call_new (ATOMR_CALL_RECV, actor, NULL, tensor);
  call->root = peer;
  return add (self, call, error);
}

/**
 * atomr_collective_group_submit_async:
 * @self: an [class@Atomr.CollectiveGroup]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when every call has completed on the GPU
 * @user_data: data for @callback
 *
 * Submits the calls added so far as one NCCL group, through the first
 * call's actor, and empties the group.  A group that would deadlock
 * fails without enqueuing anything.
 *
 * Since: 0.2
 */
void
atomr_collective_group_submit_async (AtomrCollectiveGroup *self,
                                     GCancellable         *cancellable,
                                     GAsyncReadyCallback   callback,
                                     gpointer              user_data)
{
  GPtrArray *calls;
  AtomrCollectiveCall *first;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self));
  g_clear_object (&self->leader);
  if (self->calls->len == 0)
    {
      g_task_report_new_error (self, callback, user_data, atomr_collective_group_submit_async,
                               ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                               "collective group: nothing to submit (add calls first)");
      return;
    }
  calls = g_steal_pointer (&self->calls);
  self->calls = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_collective_call_free);
  first = g_ptr_array_index (calls, 0);
  self->leader = g_object_ref (ATOMR_ACTOR (first->actor));
  atomr_collective_calls_submit (calls, calls->len > 1 ? "group" : atomr_collective_call_name (first->kind),
                                 atomr_collective_group_submit_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_group_submit_finish:
 * @self: an [class@Atomr.CollectiveGroup]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CollectiveGroup.submit_async].
 *
 * Returns: %TRUE when every call of the group completed
 *
 * Since: 0.2
 */
gboolean
atomr_collective_group_submit_finish (AtomrCollectiveGroup  *self,
                                      GAsyncResult          *result,
                                      GError               **error)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_GROUP (self), FALSE);
  if (g_task_is_valid (result, self))
    return g_task_propagate_boolean (G_TASK (result), error);
  /* The reply of the request made on the group's actor. */
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, atomr_collective_group_submit_async), FALSE);
  return atomr_reply_propagate_boolean (result, error);
}

static void
atomr_collective_group_finalize (GObject *object)
{
  AtomrCollectiveGroup *self = ATOMR_COLLECTIVE_GROUP (object);

  g_clear_pointer (&self->calls, g_ptr_array_unref);
  g_clear_object (&self->world);
  g_clear_object (&self->leader);
  G_OBJECT_CLASS (atomr_collective_group_parent_class)->finalize (object);
}

static void
atomr_collective_group_class_init (AtomrCollectiveGroupClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = atomr_collective_group_finalize;
}

static void
atomr_collective_group_init (AtomrCollectiveGroup *self)
{
  self->calls = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_collective_call_free);
}
