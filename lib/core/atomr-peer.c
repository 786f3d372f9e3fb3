/* atomr-peer.c — GPU-to-GPU copies and the topology between devices
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-error.h"
#include "atomr-peer.h"

/* Which (device, peer) pairs have peer access enabled, by ordinal. */
G_LOCK_DEFINE_STATIC (peers);
static GHashTable *enabled_pairs;

static gboolean
both_gpus (AtomrDevice *self,
           AtomrDevice *peer)
{
  return ATOMR_IS_DEVICE (self) && ATOMR_IS_DEVICE (peer) && self != peer &&
         !atomr_device_is_host (self) && !atomr_device_is_host (peer) && ATOMR_CU != NULL;
}

/**
 * atomr_device_can_access_peer:
 * @self: a device
 * @peer: another device
 *
 * Whether kernels and copies on @self can reach @peer's memory directly
 * (NVLink or PCIe peer-to-peer, `cuDeviceCanAccessPeer`).  Copies between
 * devices work without it too: the driver then stages them through host
 * memory.
 *
 * Returns: %TRUE when @self can access @peer's memory; %FALSE for the same
 *   device, host test devices or no peer path
 *
 * Since: 0.2
 */
gboolean
atomr_device_can_access_peer (AtomrDevice *self,
                              AtomrDevice *peer)
{
  int can = 0;

  if (!both_gpus (self, peer))
    return FALSE;
  if (ATOMR_CU->cuDeviceCanAccessPeer (&can, atomr_device_get_cu_device (self),
                                       atomr_device_get_cu_device (peer)) != CUDA_SUCCESS)
    return FALSE;
  return can != 0;
}

/**
 * atomr_device_get_peer_rank:
 * @self: a device
 * @peer: another device
 *
 * The topology between two GPUs as the driver ranks it
 * (`CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK`): 0 is the best link this
 * system has between two GPUs (NVLink on NVLink systems), larger numbers
 * are slower paths.  The driver reports no link type; NVML would, and
 * atomr does not load it.
 *
 * Returns: the rank, or -1 when @self cannot access @peer directly
 *
 * Since: 0.2
 */
gint
atomr_device_get_peer_rank (AtomrDevice *self,
                            AtomrDevice *peer)
{
  int rank = -1;

  if (!atomr_device_can_access_peer (self, peer))
    return -1;
  if (ATOMR_CU->cuDeviceGetP2PAttribute (&rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK,
                                         atomr_device_get_cu_device (self),
                                         atomr_device_get_cu_device (peer)) != CUDA_SUCCESS)
    return -1;
  return rank;
}

/**
 * atomr_device_enable_peer_access:
 * @self: the device whose work will access @peer
 * @peer: the device whose memory is accessed
 * @error: return location for a [struct@GLib.Error]
 *
 * Enables direct access from @self to @peer's memory (once per pair and
 * process; later calls succeed at once).  [method@Atomr.Actor.copy_peer_async]
 * does this by itself where it can.
 *
 * Returns: %TRUE when access is enabled; NOT_SUPPORTED when there is no
 *   peer path between the two
 *
 * Since: 0.2
 */
gboolean
atomr_device_enable_peer_access (AtomrDevice  *self,
                                 AtomrDevice  *peer,
                                 GError      **error)
{
  gpointer key;
  CUresult res;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_DEVICE (self), FALSE);
  g_return_val_if_fail (ATOMR_IS_DEVICE (peer), FALSE);
  if (!atomr_device_can_access_peer (self, peer))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "Device %d (%s) cannot access the memory of device %d (%s) directly",
                   atomr_device_get_ordinal (self), atomr_device_get_name (self),
                   atomr_device_get_ordinal (peer), atomr_device_get_name (peer));
      return FALSE;
    }
  key = GINT_TO_POINTER ((atomr_device_get_ordinal (self) << 16) | atomr_device_get_ordinal (peer));
  G_LOCK (peers);
  if (enabled_pairs == NULL)
    enabled_pairs = g_hash_table_new (NULL, NULL);
  ok = g_hash_table_contains (enabled_pairs, key);
  G_UNLOCK (peers);
  if (ok)
    return TRUE;
  if (!atomr_device_enter (self, error))
    return FALSE;
  res = ATOMR_CU->cuCtxEnablePeerAccess (atomr_device_get_cu_context (peer), 0);
  atomr_device_leave (self);
  if (res != CUDA_SUCCESS && res != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED &&
      !atomr_cuda_check (res, "cuCtxEnablePeerAccess", error))
    return FALSE;
  G_LOCK (peers);
  g_hash_table_add (enabled_pairs, key);
  G_UNLOCK (peers);
  return TRUE;
}

typedef struct {
  AtomrBuffer *dst;
  AtomrBuffer *src;
} PeerRequest;

static gboolean
copy_peer_enqueue (AtomrOp  *op,
                   GError  **error)
{
  PeerRequest *req = atomr_op_get_data (op);
  AtomrDevice *dd = atomr_buffer_get_device (req->dst), *sd = atomr_buffer_get_device (req->src);

  if (atomr_op_is_host (op))
    {
      memcpy (atomr_buffer_get_host_data (req->dst), atomr_buffer_get_host_data (req->src),
              atomr_buffer_get_byte_size (req->dst));
      return TRUE;
    }
  return atomr_cuda_check (ATOMR_CU->cuMemcpyPeerAsync (atomr_buffer_get_ptr (req->dst),
                                                        atomr_device_get_cu_context (dd),
                                                        atomr_buffer_get_ptr (req->src),
                                                        atomr_device_get_cu_context (sd),
                                                        atomr_buffer_get_byte_size (req->dst),
                                                        atomr_op_get_cu_stream (op)),
                           "cuMemcpyPeerAsync", error);
}

/**
 * atomr_actor_copy_peer_async:
 * @self: an actor of @dst's or @src's device
 * @dst: the buffer to write, on one device
 * @src: the buffer to read, of the same byte size, on another device
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the copy has finished
 * @user_data: data for @callback
 *
 * Copies between two GPUs on the actor's stream (`cuMemcpyPeerAsync`),
 * ordered by the envelope against the work that writes @src and reads
 * @dst on either device.  Peer access is enabled first where the two
 * devices have a direct path (NVLink, PCIe P2P); otherwise the driver
 * stages the copy through host memory.
 *
 * Since: 0.2
 */
void
atomr_actor_copy_peer_async (AtomrActor          *self,
                             AtomrBuffer         *dst,
                             AtomrBuffer         *src,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  AtomrOp *op;
  PeerRequest *req;
  AtomrDevice *mine, *dd, *sd;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_ACTOR (self));
  op = atomr_op_new (self, "copy-peer", atomr_actor_copy_peer_async, cancellable, callback, user_data);
  if (!ATOMR_IS_BUFFER (dst) || !ATOMR_IS_BUFFER (src))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "copy-peer: %s is not an AtomrBuffer",
                                           ATOMR_IS_BUFFER (dst) ? "src" : "dst"));
  if (!atomr_buffer_check (dst, &error) || !atomr_buffer_check (src, &error))
    return atomr_op_fail (op, error);
  mine = atomr_actor_get_device (self);
  dd = atomr_buffer_get_device (dst);
  sd = atomr_buffer_get_device (src);
  if (dd != mine && sd != mine)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "copy-peer: neither buffer is on the actor's device %d "
                                           "(dst on %d, src on %d)", atomr_device_get_ordinal (mine),
                                           atomr_device_get_ordinal (dd), atomr_device_get_ordinal (sd)));
  if (atomr_device_is_host (dd) != atomr_device_is_host (sd))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "copy-peer: a host test device and a GPU cannot copy "
                                           "between each other"));
  if (atomr_buffer_get_byte_size (dst) != atomr_buffer_get_byte_size (src))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "copy-peer: source has %" G_GUINT64_FORMAT " bytes, "
                                           "destination %" G_GUINT64_FORMAT,
                                           atomr_buffer_get_byte_size (src),
                                           atomr_buffer_get_byte_size (dst)));
  if (dst == src)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "copy-peer: source and destination are the same buffer"));
  /* Direct paths are used when they exist; enabling is best effort. */
  if (dd != sd && !atomr_device_is_host (dd))
    {
      AtomrDevice *other = dd == mine ? sd : dd;
      atomr_device_enable_peer_access (mine, other, NULL);
    }
  req = atomr_op_alloc_data (op, sizeof *req, NULL);
  req->dst = dst;
  req->src = src;
  atomr_op_read (op, src);
  atomr_op_write (op, dst);
  atomr_op_set_multi_device (op);
  atomr_op_set_enqueue (op, copy_peer_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_actor_copy_peer_finish:
 * @self: an [class@Atomr.Actor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Actor.copy_peer_async].
 *
 * Returns: %TRUE when the copy finished
 *
 * Since: 0.2
 */
gboolean
atomr_actor_copy_peer_finish (AtomrActor    *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  return atomr_op_finish_boolean (self, result, atomr_actor_copy_peer_async, error);
}
