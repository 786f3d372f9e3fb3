/* atomr-collective-actor.c — one NCCL rank on an actor, and the execution
 * of collective calls (on the GPU through NCCL, on the host test device
 * by a CPU reference)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-collective-private.h"
#include "core/atomr-device-private.h"

/**
 * AtomrCollectiveActor:
 *
 * One rank of an [class@Atomr.CollectiveWorld]: NCCL collectives, point-to-point
 * transfers and all-to-all on the actor's stream, through the envelope
 * (hazards with the other actors' work, the four lifecycle signals,
 * traces named `nccl · all-reduce`, NVTX).
 *
 * Operands are contiguous [class@Atomr.Tensor] views on the actor's device.
 * Sizes follow NCCL: all-gather receives [property@Atomr.CollectiveWorld:n-ranks]
 * times what each rank sends, reduce-scatter sends that many times what
 * it receives, all-to-all sends and receives one equal block per rank.
 * In-place operation is allowed where NCCL allows it (the same view, or
 * the rank's own block of the larger buffer for the gathers and
 * scatters); other overlaps are refused.
 *
 * Actors are made by their world and owned by it.  In a local world of
 * several ranks, collectives need one call per rank in one
 * [class@Atomr.CollectiveGroup]; the operations here serve worlds with one rank
 * in this process (the usual one-process-per-GPU job).
 *
 * Since: 0.2
 */

struct _AtomrCollectiveActor
{
  AtomrActor            parent_instance;

  AtomrCollectiveWorld *world;   /* owner; NULL once detached or when bare */
  guint                 rank;
  guint                 local_index;
};

G_DEFINE_FINAL_TYPE (AtomrCollectiveActor, atomr_collective_actor, ATOMR_TYPE_ACTOR)

/* ------------------------------------------------------------------ */
/* Calls                                                                */

const gchar *
atomr_collective_call_name (AtomrCallKind kind)
{
  static const gchar *names[] = {
    "all-reduce", "all-reduce-scaled", "broadcast", "reduce", "all-gather",
    "reduce-scatter", "all-to-all", "all-to-all-v", "send", "recv",
  };
  return (guint) kind < G_N_ELEMENTS (names) ? names[kind] : "invalid";
}

AtomrCollectiveCall *
atomr_collective_call_new (AtomrCallKind         kind,
                           AtomrCollectiveActor *actor,
                           AtomrTensor          *send,
                           AtomrTensor          *recv)
{
  AtomrCollectiveCall *call = g_new0 (AtomrCollectiveCall, 1);

  call->kind = kind;
  call->actor = actor ? g_object_ref (actor) : NULL;
  call->send = send ? g_object_ref (send) : NULL;
  call->recv = recv ? g_object_ref (recv) : NULL;
  return call;
}

void
atomr_collective_call_free (AtomrCollectiveCall *call)
{
  g_clear_object (&call->actor);
  g_clear_object (&call->send);
  g_clear_object (&call->recv);
  g_free (call->v);
  g_free (call);
}

static gboolean
is_reduction (AtomrCallKind kind)
{
  return kind == ATOMR_CALL_ALL_REDUCE || kind == ATOMR_CALL_ALL_REDUCE_SCALED ||
         kind == ATOMR_CALL_REDUCE || kind == ATOMR_CALL_REDUCE_SCATTER;
}

static gboolean
check_view (AtomrCollectiveCall  *call,
            AtomrTensor          *view,
            const gchar          *what,
            GError              **error)
{
  const gchar *name = atomr_collective_call_name (call->kind);
  g_autofree gchar *label = g_strdup_printf ("collective %s: %s", name, what);

  if (!atomr_tensor_check (view, atomr_actor_get_device (ATOMR_ACTOR (call->actor)), label, error))
    return FALSE;
  if (!atomr_tensor_is_contiguous (view))
    {
      g_autofree gchar *desc = atomr_tensor_to_string (view);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective %s: %s %s is not contiguous; NCCL moves contiguous memory "
                   "(copy it first)", name, what, desc);
      return FALSE;
    }
  return TRUE;
}

/* In-place means @inner is exactly the @block-th block of @outer. */
static gboolean
is_block_of (AtomrTensor *inner,
             AtomrTensor *outer,
             guint        block)
{
  guint64 b_in, e_in, b_out, e_out;
  guint64 size = atomr_tensor_get_byte_size (inner);

  if (atomr_tensor_get_buffer (inner) != atomr_tensor_get_buffer (outer))
    return FALSE;
  atomr_tensor_get_byte_range (inner, &b_in, &e_in);
  atomr_tensor_get_byte_range (outer, &b_out, &e_out);
  return b_in == b_out + (guint64) block * size && e_in == b_in + size;
}

static gboolean
check_aliasing (AtomrCollectiveCall  *call,
                guint                 n_ranks,
                GError              **error)
{
  AtomrTensor *s = call->send, *r = call->recv;
  gboolean allowed = FALSE;

  if (s == NULL || r == NULL || !atomr_tensor_overlaps (s, r))
    return TRUE;
  switch (call->kind)
    {
    case ATOMR_CALL_ALL_REDUCE:
    case ATOMR_CALL_ALL_REDUCE_SCALED:
    case ATOMR_CALL_BROADCAST:
    case ATOMR_CALL_REDUCE:
      allowed = is_block_of (s, r, 0) && atomr_tensor_get_byte_size (s) == atomr_tensor_get_byte_size (r);
      break;
    case ATOMR_CALL_ALL_GATHER:
      allowed = is_block_of (s, r, call->actor->rank);
      break;
    case ATOMR_CALL_REDUCE_SCATTER:
      allowed = is_block_of (r, s, call->actor->rank);
      break;
    default:
      break;
    }
  (void) n_ranks;
  if (!allowed)
    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                 "collective %s: send and recv overlap; in place, %s", atomr_collective_call_name (call->kind),
                 call->kind == ATOMR_CALL_ALL_GATHER ? "send must be this rank's block of recv"
                 : call->kind == ATOMR_CALL_REDUCE_SCATTER ? "recv must be this rank's block of send"
                 : call->kind == ATOMR_CALL_ALL_TO_ALL || call->kind == ATOMR_CALL_ALL_TO_ALL_V
                 ? "is not possible (use two buffers)" : "send and recv must be the same view");
  return allowed;
}

gboolean
atomr_collective_call_check (AtomrCollectiveCall  *call,
                             GError              **error)
{
  const gchar *name = atomr_collective_call_name (call->kind);
  AtomrCollectiveWorld *world;
  guint n, rank;
  guint64 ns = 0, nr = 0;

  if (!ATOMR_IS_COLLECTIVE_ACTOR (call->actor) || call->actor->world == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective %s: the actor belongs to no world (actors are made by "
                   "AtomrCollectiveWorld, and live as long as it does)", name);
      return FALSE;
    }
  world = call->actor->world;
  n = atomr_collective_world_get_n_ranks (world);
  rank = call->actor->rank;

  /* Which views an operation needs. */
  switch (call->kind)
    {
    case ATOMR_CALL_SEND:
      if (!check_view (call, call->send, "tensor", error))
        return FALSE;
      break;
    case ATOMR_CALL_RECV:
      if (!check_view (call, call->recv, "tensor", error))
        return FALSE;
      break;
    case ATOMR_CALL_BROADCAST:
      /* Only the root sends; the others may pass no send view. */
      if (call->send == NULL && rank == call->root)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective broadcast: rank %u is the root and must pass a send view", rank);
          return FALSE;
        }
      if ((call->send && !check_view (call, call->send, "send", error)) ||
          !check_view (call, call->recv, "recv", error))
        return FALSE;
      break;
    case ATOMR_CALL_REDUCE:
      if (!check_view (call, call->send, "send", error) ||
          (call->recv == NULL && rank == call->root))
        {
          if (error && *error == NULL)
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "collective reduce: rank %u is the root and must pass a recv view", rank);
          return FALSE;
        }
      if (call->recv && !check_view (call, call->recv, "recv", error))
        return FALSE;
      break;
    default:
      if (!check_view (call, call->send, "send", error) || !check_view (call, call->recv, "recv", error))
        return FALSE;
    }

  if (call->send && call->recv &&
      atomr_tensor_get_dtype (call->send) != atomr_tensor_get_dtype (call->recv))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective %s: send is %s but recv is %s; both must have one dtype", name,
                   atomr_dtype_get_name (atomr_tensor_get_dtype (call->send)),
                   atomr_dtype_get_name (atomr_tensor_get_dtype (call->recv)));
      return FALSE;
    }
  {
    AtomrTensor *any = call->send ? call->send : call->recv;
    AtomrDtype dtype = atomr_tensor_get_dtype (any);

    if (is_reduction (call->kind))
      {
        gboolean complex = atomr_dtype_is_complex (dtype);
        if (!atomr_collective_world_supports_dtype (world, dtype, TRUE) ||
            (complex && call->kind != ATOMR_CALL_ALL_REDUCE_SCALED &&
             call->op != ATOMR_REDUCE_SUM && call->op != ATOMR_REDUCE_AVG))
          {
            g_set_error (error, ATOMR_ERROR, complex ? ATOMR_ERROR_INVALID_ARGUMENT : ATOMR_ERROR_NOT_SUPPORTED,
                         "collective %s: %s elements cannot be reduced%s", name, atomr_dtype_get_name (dtype),
                         complex ? " with that operation (complex numbers take sum or average)"
                         : " here (see atomr_collective_world_supports_dtype())");
            return FALSE;
          }
        if (call->kind != ATOMR_CALL_ALL_REDUCE_SCALED && (guint) call->op > ATOMR_REDUCE_AVG)
          {
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "collective %s: op %d is not an AtomrReduceOp", name, (gint) call->op);
            return FALSE;
          }
      }
  }

  if (call->send)
    ns = atomr_tensor_get_n_elements (call->send);
  if (call->recv)
    nr = atomr_tensor_get_n_elements (call->recv);
  switch (call->kind)
    {
    case ATOMR_CALL_BROADCAST:
    case ATOMR_CALL_REDUCE:
      if (call->root >= n)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective %s: root %u is not below the world size %u", name, call->root, n);
          return FALSE;
        }
      /* fall through */
    case ATOMR_CALL_ALL_REDUCE:
    case ATOMR_CALL_ALL_REDUCE_SCALED:
      if (call->send && call->recv && ns != nr)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective %s: send holds %" G_GUINT64_FORMAT " elements but recv %"
                       G_GUINT64_FORMAT "; they must match", name, ns, nr);
          return FALSE;
        }
      break;
    case ATOMR_CALL_ALL_GATHER:
      if (nr / n != ns || nr % n != 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective all-gather: recv holds %" G_GUINT64_FORMAT " elements; it must "
                       "hold %u ranks × %" G_GUINT64_FORMAT " sent", nr, n, ns);
          return FALSE;
        }
      break;
    case ATOMR_CALL_REDUCE_SCATTER:
      if (ns / n != nr || ns % n != 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective reduce-scatter: send holds %" G_GUINT64_FORMAT " elements; it "
                       "must hold %u ranks × %" G_GUINT64_FORMAT " received", ns, n, nr);
          return FALSE;
        }
      break;
    case ATOMR_CALL_ALL_TO_ALL:
      if (ns != nr || ns % n != 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective all-to-all: send holds %" G_GUINT64_FORMAT " and recv %"
                       G_GUINT64_FORMAT " elements; both must be the same multiple of the %u ranks",
                       ns, nr, n);
          return FALSE;
        }
      break;
    case ATOMR_CALL_ALL_TO_ALL_V:
      for (guint i = 0; i < n; i++)
        {
          guint64 sc = call->v[i], so = call->v[n + i], rc = call->v[2 * n + i], ro = call->v[3 * n + i];
          guint64 se, re;

          if (g_uint64_checked_add (&se, so, sc) == FALSE || se > ns ||
              g_uint64_checked_add (&re, ro, rc) == FALSE || re > nr)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective all-to-all-v: the block of rank %u (send offset %" G_GUINT64_FORMAT
                           " + count %" G_GUINT64_FORMAT ", recv offset %" G_GUINT64_FORMAT " + count %"
                           G_GUINT64_FORMAT ") lies outside send (%" G_GUINT64_FORMAT ") or recv (%"
                           G_GUINT64_FORMAT " elements)", i, so, sc, ro, rc, ns, nr);
              return FALSE;
            }
        }
      break;
    case ATOMR_CALL_SEND:
    case ATOMR_CALL_RECV:
      if (call->root >= n)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective %s: peer %u is not below the world size %u", name, call->root, n);
          return FALSE;
        }
      break;
    }
  return check_aliasing (call, n, error);
}

/* ------------------------------------------------------------------ */
/* Whole requests: no deadlock by construction                          */

static gboolean
check_request (GPtrArray  *calls,
               GError    **error)
{
  AtomrCollectiveCall *head = g_ptr_array_index (calls, 0);
  AtomrCollectiveWorld *world = head->actor->world;
  guint n_local = atomr_collective_world_get_n_local_ranks (world);
  guint first = atomr_collective_world_get_first_rank (world);

  for (guint i = 0; i < calls->len; i++)
    {
      AtomrCollectiveCall *c = g_ptr_array_index (calls, i);
      if (c->actor->world != world)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective group: call %u (%s) is on an actor of another world", i,
                       atomr_collective_call_name (c->kind));
          return FALSE;
        }
    }
  /* A local world of several ranks: every collective needs all its ranks
   * in the same group, in the same order, with the same parameters, or
   * NCCL waits forever. */
  for (guint k = ATOMR_CALL_ALL_REDUCE; k <= ATOMR_CALL_ALL_TO_ALL_V && n_local > 1; k++)
    {
      g_autofree guint *count = g_new0 (guint, n_local);
      g_autoptr(GPtrArray) order = g_ptr_array_new ();   /* rank 0's calls of kind k */

      for (guint i = 0; i < calls->len; i++)
        {
          AtomrCollectiveCall *c = g_ptr_array_index (calls, i);
          if (c->kind != k)
            continue;
          if (c->actor->local_index == 0)
            g_ptr_array_add (order, c);
          count[c->actor->local_index]++;
        }
      for (guint r = 0; r < n_local; r++)
        if (count[r] != count[0])
          {
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_WOULD_DEADLOCK,
                         "collective %s: a local world of %u ranks needs one call per rank in one "
                         "AtomrCollectiveGroup; this request has %u for rank %u and %u for rank %u "
                         "(NCCL would wait forever for the others)", atomr_collective_call_name (k),
                         n_local, count[0], first, count[r], first + r);
            return FALSE;
          }
      /* The j-th call of every rank must match rank 0's j-th. */
      memset (count, 0, n_local * sizeof (guint));
      for (guint i = 0; i < calls->len; i++)
        {
          AtomrCollectiveCall *c = g_ptr_array_index (calls, i), *ref;
          if (c->kind != k)
            continue;
          ref = g_ptr_array_index (order, count[c->actor->local_index]++);
          if (k == ATOMR_CALL_ALL_TO_ALL_V)
            continue;   /* sizes differ by design: the counts are matched below */
          if (c->op != ref->op || c->root != ref->root || c->scale != ref->scale ||
              (c->send && ref->send &&
               atomr_tensor_get_n_elements (c->send) != atomr_tensor_get_n_elements (ref->send)) ||
              (c->recv && ref->recv &&
               atomr_tensor_get_n_elements (c->recv) != atomr_tensor_get_n_elements (ref->recv)))
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective group: the %s calls of ranks %u and %u differ in operation, "
                           "root or size; every rank must pass the same", atomr_collective_call_name (k),
                           ref->actor->rank, c->actor->rank);
              return FALSE;
            }
        }
      /* all-to-all-v: what rank r sends to q is what q expects from r. */
      if (k == ATOMR_CALL_ALL_TO_ALL_V && order->len > 0)
        {
          guint n = atomr_collective_world_get_n_ranks (world);
          g_autofree AtomrCollectiveCall **set = g_new0 (AtomrCollectiveCall *, (gsize) order->len * n_local);

          memset (count, 0, n_local * sizeof (guint));
          for (guint i = 0; i < calls->len; i++)
            {
              AtomrCollectiveCall *c = g_ptr_array_index (calls, i);
              if (c->kind == k)
                set[(gsize) count[c->actor->local_index]++ * n_local + c->actor->local_index] = c;
            }
          for (guint j = 0; j < order->len && n == n_local; j++)
            for (guint r = 0; r < n_local; r++)
              for (guint q = 0; q < n_local; q++)
                {
                  AtomrCollectiveCall *from = set[(gsize) j * n_local + r];
                  AtomrCollectiveCall *to = set[(gsize) j * n_local + q];
                  guint64 sent = from->v[to->actor->rank];
                  guint64 expected = to->v[2 * n + from->actor->rank];
                  if (sent != expected)
                    {
                      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                   "collective all-to-all-v: rank %u sends %" G_GUINT64_FORMAT
                                   " elements to rank %u, which expects %" G_GUINT64_FORMAT
                                   " from it (send_counts[%u] of rank %u must equal recv_counts[%u] "
                                   "of rank %u)", from->actor->rank, sent, to->actor->rank, expected,
                                   to->actor->rank, from->actor->rank, from->actor->rank,
                                   to->actor->rank);
                      return FALSE;
                    }
                }
        }
    }
  /* Every send has its matching receive, and the other way round. */
  for (guint i = 0; i < calls->len; i++)
    {
      AtomrCollectiveCall *c = g_ptr_array_index (calls, i);
      guint matches = 0;

      if (c->kind != ATOMR_CALL_SEND && c->kind != ATOMR_CALL_RECV)
        continue;
      for (guint j = 0; j < calls->len; j++)
        {
          AtomrCollectiveCall *d = g_ptr_array_index (calls, j);
          if (d->kind == (c->kind == ATOMR_CALL_SEND ? ATOMR_CALL_RECV : ATOMR_CALL_SEND) &&
              d->actor->rank == c->root && d->root == c->actor->rank)
            {
              AtomrTensor *a = c->send ? c->send : c->recv, *b = d->send ? d->send : d->recv;
              if (atomr_tensor_get_byte_size (a) == atomr_tensor_get_byte_size (b))
                matches++;
            }
        }
      /* Only peers in this process can be checked (and would deadlock it). */
      if (matches == 0 && c->root >= first && c->root < first + n_local)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_WOULD_DEADLOCK,
                       "collective group: the %s of rank %u %s rank %u has no matching %s of the same "
                       "size in the group (NCCL would wait forever)", atomr_collective_call_name (c->kind),
                       c->actor->rank, c->kind == ATOMR_CALL_SEND ? "to" : "from", c->root,
                       c->kind == ATOMR_CALL_SEND ? "recv" : "send");
          return FALSE;
        }
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* CPU reference on the host test device                                */

static gdouble
get_elem (AtomrDtype    dtype,
          const guint8 *base,
          guint64       i)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F32: case ATOMR_DTYPE_C64: return ((const gfloat *) base)[i];
    case ATOMR_DTYPE_F64: case ATOMR_DTYPE_C128: return ((const gdouble *) base)[i];
    case ATOMR_DTYPE_I8: return ((const gint8 *) base)[i];
    case ATOMR_DTYPE_U8: return ((const guint8 *) base)[i];
    case ATOMR_DTYPE_I32: return ((const gint32 *) base)[i];
    case ATOMR_DTYPE_U32: return ((const guint32 *) base)[i];
    case ATOMR_DTYPE_I64: return (gdouble) ((const gint64 *) base)[i];
    case ATOMR_DTYPE_U64: return (gdouble) ((const guint64 *) base)[i];
    default: return 0.0;
    }
}

static void
set_elem (AtomrDtype  dtype,
          guint8     *base,
          guint64     i,
          gdouble     v)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F32: case ATOMR_DTYPE_C64: ((gfloat *) base)[i] = (gfloat) v; break;
    case ATOMR_DTYPE_F64: case ATOMR_DTYPE_C128: ((gdouble *) base)[i] = v; break;
    case ATOMR_DTYPE_I8: ((gint8 *) base)[i] = (gint8) v; break;
    case ATOMR_DTYPE_U8: ((guint8 *) base)[i] = (guint8) v; break;
    case ATOMR_DTYPE_I32: ((gint32 *) base)[i] = (gint32) v; break;
    case ATOMR_DTYPE_U32: ((guint32 *) base)[i] = (guint32) v; break;
    case ATOMR_DTYPE_I64: ((gint64 *) base)[i] = (gint64) v; break;
    case ATOMR_DTYPE_U64: ((guint64 *) base)[i] = (guint64) v; break;
    default: break;
    }
}

static gdouble
combine (AtomrReduceOp op,
         gdouble       acc,
         gdouble       v)
{
  switch (op)
    {
    case ATOMR_REDUCE_PROD: return acc * v;
    case ATOMR_REDUCE_MAX: return MAX (acc, v);
    case ATOMR_REDUCE_MIN: return MIN (acc, v);
    default: return acc + v;
    }
}

/* Reduces element @i of the send views of @by_rank (one call per rank). */
static gdouble
reduce_at (AtomrCollectiveCall **by_rank,
           guint                 n,
           AtomrDtype            dtype,
           guint64               i)
{
  gdouble acc = 0.0;

  for (guint r = 0; r < n; r++)
    {
      AtomrCollectiveCall *c = by_rank[r];
      gdouble v = get_elem (dtype, atomr_tensor_get_host_data (c->send), i);

      if (c->kind == ATOMR_CALL_ALL_REDUCE_SCALED)
        v *= c->scale;
      acc = r == 0 ? v : combine (c->op, acc, v);
    }
  if (by_rank[0]->kind != ATOMR_CALL_ALL_REDUCE_SCALED && by_rank[0]->op == ATOMR_REDUCE_AVG)
    acc /= n;
  return acc;
}

static guint64
scalars (AtomrTensor *t)
{
  /* complex values are pairs of reals */
  return atomr_tensor_get_n_elements (t) * (atomr_dtype_is_complex (atomr_tensor_get_dtype (t)) ? 2 : 1);
}

static gboolean
host_execute (GPtrArray  *calls,
              guint       n,
              GError    **error)
{
  for (guint k = ATOMR_CALL_ALL_REDUCE; k <= ATOMR_CALL_ALL_TO_ALL_V; k++)
    {
      g_autofree AtomrCollectiveCall **by = g_new0 (AtomrCollectiveCall *, n);
      g_autofree gdouble *tmp = NULL;
      AtomrCollectiveCall *c0 = NULL;
      AtomrDtype dtype;
      gsize esize;

      for (guint i = 0; i < calls->len; i++)
        {
          AtomrCollectiveCall *c = g_ptr_array_index (calls, i);
          if (c->kind == k)
            by[c->actor->rank] = c0 = c;
        }
      if (c0 == NULL)
        continue;
      dtype = atomr_tensor_get_dtype (c0->send ? c0->send : c0->recv);
      esize = atomr_dtype_get_size (dtype);
      if (is_reduction (k) && (dtype == ATOMR_DTYPE_F16 || dtype == ATOMR_DTYPE_BF16 ||
                               dtype == ATOMR_DTYPE_F8_E4M3 || dtype == ATOMR_DTYPE_F8_E5M2))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "collective %s: the host test device reduces no %s elements",
                       atomr_collective_call_name (k), atomr_dtype_get_name (dtype));
          return FALSE;
        }
      switch (k)
        {
        case ATOMR_CALL_ALL_REDUCE:
        case ATOMR_CALL_ALL_REDUCE_SCALED:
          {
            guint64 m = scalars (c0->send);
            tmp = g_new (gdouble, m);
            for (guint64 i = 0; i < m; i++)
              tmp[i] = reduce_at (by, n, dtype, i);
            for (guint r = 0; r < n; r++)
              for (guint64 i = 0; i < m; i++)
                set_elem (dtype, atomr_tensor_get_host_data (by[r]->recv), i, tmp[i]);
          }
          break;
        case ATOMR_CALL_REDUCE:
          {
            AtomrCollectiveCall *root = by[c0->root];
            guint64 m = scalars (c0->send);
            tmp = g_new (gdouble, m);
            for (guint64 i = 0; i < m; i++)
              tmp[i] = reduce_at (by, n, dtype, i);
            for (guint64 i = 0; i < m; i++)
              set_elem (dtype, atomr_tensor_get_host_data (root->recv), i, tmp[i]);
          }
          break;
        case ATOMR_CALL_BROADCAST:
          {
            AtomrCollectiveCall *root = by[c0->root];
            gsize bytes = atomr_tensor_get_byte_size (root->recv);
            g_autofree guint8 *src = g_memdup2 (atomr_tensor_get_host_data (root->send), bytes);
            for (guint r = 0; r < n; r++)
              memcpy (atomr_tensor_get_host_data (by[r]->recv), src, bytes);
          }
          break;
        case ATOMR_CALL_ALL_GATHER:
          {
            gsize block = atomr_tensor_get_byte_size (c0->send);
            g_autofree guint8 *all = g_malloc (block * n);
            for (guint r = 0; r < n; r++)
              memcpy (all + r * block, atomr_tensor_get_host_data (by[r]->send), block);
            for (guint r = 0; r < n; r++)
              memcpy (atomr_tensor_get_host_data (by[r]->recv), all, block * n);
          }
          break;
        case ATOMR_CALL_REDUCE_SCATTER:
          {
            guint64 m = scalars (c0->recv);
            for (guint r = 0; r < n; r++)
              {
                g_autofree gdouble *out = g_new (gdouble, m);
                for (guint64 i = 0; i < m; i++)
                  out[i] = reduce_at (by, n, dtype, (guint64) r * m + i);
                /* All inputs are read before any output is written below:
                 * keep the results until every rank's block is done. */
                if (tmp == NULL)
                  tmp = g_new (gdouble, m * n);
                memcpy (tmp + (gsize) r * m, out, m * sizeof (gdouble));
              }
            for (guint r = 0; r < n; r++)
              for (guint64 i = 0; i < m; i++)
                set_elem (dtype, atomr_tensor_get_host_data (by[r]->recv), i, tmp[(gsize) r * m + i]);
          }
          break;
        case ATOMR_CALL_ALL_TO_ALL:
          {
            gsize block = atomr_tensor_get_byte_size (c0->send) / n;
            for (guint r = 0; r < n; r++)
              for (guint q = 0; q < n; q++)
                memcpy ((guint8 *) atomr_tensor_get_host_data (by[r]->recv) + q * block,
                        (guint8 *) atomr_tensor_get_host_data (by[q]->send) + r * block, block);
          }
          break;
        case ATOMR_CALL_ALL_TO_ALL_V:
          for (guint r = 0; r < n; r++)
            for (guint q = 0; q < n; q++)
              {
                guint64 count = by[q]->v[r], soff = by[q]->v[n + r], roff = by[r]->v[3 * n + q];
                if (count != by[r]->v[2 * n + q])
                  {
                    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                 "collective all-to-all-v: rank %u sends %" G_GUINT64_FORMAT
                                 " elements to rank %u, which expects %" G_GUINT64_FORMAT,
                                 q, count, r, by[r]->v[2 * n + q]);
                    return FALSE;
                  }
                memcpy ((guint8 *) atomr_tensor_get_host_data (by[r]->recv) + roff * esize,
                        (guint8 *) atomr_tensor_get_host_data (by[q]->send) + soff * esize, count * esize);
              }
          break;
        default:
          break;
        }
    }
  /* Point to point: each receive takes its matching send. */
  for (guint i = 0; i < calls->len; i++)
    {
      AtomrCollectiveCall *rc = g_ptr_array_index (calls, i);
      if (rc->kind != ATOMR_CALL_RECV)
        continue;
      for (guint j = 0; j < calls->len; j++)
        {
          AtomrCollectiveCall *sc = g_ptr_array_index (calls, j);
          if (sc->kind == ATOMR_CALL_SEND && sc->actor->rank == rc->root && sc->root == rc->actor->rank)
            {
              memcpy (atomr_tensor_get_host_data (rc->recv), atomr_tensor_get_host_data (sc->send),
                      atomr_tensor_get_byte_size (rc->recv));
              break;
            }
        }
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* NCCL                                                                 */

static ncclDataType_t
nccl_dtype (AtomrDtype dtype,
            gboolean   reduction,
            guint64   *count)
{
  /* Moves are bytes; complex reductions are pairs of reals. */
  if (!reduction)
    {
      *count *= atomr_dtype_get_size (dtype);
      return ncclUint8;
    }
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return ncclFloat16;
    case ATOMR_DTYPE_BF16: return ncclBfloat16;
    case ATOMR_DTYPE_F32: return ncclFloat32;
    case ATOMR_DTYPE_F64: return ncclFloat64;
    case ATOMR_DTYPE_C64: *count *= 2; return ncclFloat32;
    case ATOMR_DTYPE_C128: *count *= 2; return ncclFloat64;
    case ATOMR_DTYPE_I8: return ncclInt8;
    case ATOMR_DTYPE_U8: return ncclUint8;
    case ATOMR_DTYPE_I32: return ncclInt32;
    case ATOMR_DTYPE_U32: return ncclUint32;
    case ATOMR_DTYPE_I64: return ncclInt64;
    case ATOMR_DTYPE_U64: return ncclUint64;
    case ATOMR_DTYPE_F8_E4M3: return ncclFloat8e4m3;
    case ATOMR_DTYPE_F8_E5M2: return ncclFloat8e5m2;
    default: return ncclUint8;
    }
}

static ncclRedOp_t
nccl_op (AtomrReduceOp op)
{
  switch (op)
    {
    case ATOMR_REDUCE_PROD: return ncclProd;
    case ATOMR_REDUCE_MAX: return ncclMax;
    case ATOMR_REDUCE_MIN: return ncclMin;
    case ATOMR_REDUCE_AVG: return ncclAvg;
    case ATOMR_REDUCE_SUM:
    default: return ncclSum;
    }
}

#define PTR(t) ((t) ? (void *) (guintptr) atomr_tensor_get_ptr (t) : NULL)

static gboolean
issue (AtomrCollectiveCall  *c,
       ncclComm_t            comm,
       cudaStream_t          stream,
       GPtrArray            *custom_ops,
       GError              **error)
{
  AtomrTensor *any = c->send ? c->send : c->recv;
  AtomrDtype dtype = atomr_tensor_get_dtype (any);
  gboolean red = is_reduction (c->kind);
  guint n = atomr_collective_world_get_n_ranks (c->actor->world);
  guint64 count;
  ncclDataType_t dt;
  ncclResult_t res = ncclSuccess;
  gsize esize = atomr_dtype_get_size (dtype);

  switch (c->kind)
    {
    case ATOMR_CALL_ALL_REDUCE:
      count = atomr_tensor_get_n_elements (c->recv);
      dt = nccl_dtype (dtype, red, &count);
      res = ncclAllReduce (PTR (c->send), PTR (c->recv), count, dt, nccl_op (c->op), comm, stream);
      break;
    case ATOMR_CALL_ALL_REDUCE_SCALED:
      {
        ncclRedOp_t op;
        gdouble d = c->scale;
        gfloat f = (gfloat) c->scale;
        guint16 h;

        count = atomr_tensor_get_n_elements (c->recv);
        dt = nccl_dtype (dtype, red, &count);
        /* The scalar has the element type; halves go through the packer. */
        if (dt == ncclFloat16 || dt == ncclBfloat16)
          {
            guint8 packed[16];
            atomr_dtype_pack_into (dtype, c->scale, 0.0, packed);
            memcpy (&h, packed, sizeof h);
          }
        res = ncclRedOpCreatePreMulSum (&op, dt == ncclFloat64 ? (void *) &d
                                        : dt == ncclFloat32 ? (void *) &f : (void *) &h,
                                        dt, ncclScalarHostImmediate, comm);
        if (!atomr_nccl_check (res, "ncclRedOpCreatePreMulSum", error))
          return FALSE;
        g_ptr_array_add (custom_ops, comm);
        g_ptr_array_add (custom_ops, GINT_TO_POINTER ((gint) op));
        res = ncclAllReduce (PTR (c->send), PTR (c->recv), count, dt, op, comm, stream);
      }
      break;
    case ATOMR_CALL_BROADCAST:
      count = atomr_tensor_get_n_elements (c->recv);
      dt = nccl_dtype (dtype, FALSE, &count);
      res = ncclBroadcast (c->send ? PTR (c->send) : PTR (c->recv), PTR (c->recv), count, dt,
                           (int) c->root, comm, stream);
      break;
    case ATOMR_CALL_REDUCE:
      count = atomr_tensor_get_n_elements (c->send);
      dt = nccl_dtype (dtype, TRUE, &count);
      res = ncclReduce (PTR (c->send), c->recv ? PTR (c->recv) : NULL, count, dt, nccl_op (c->op),
                        (int) c->root, comm, stream);
      break;
    case ATOMR_CALL_ALL_GATHER:
      count = atomr_tensor_get_n_elements (c->send);
      dt = nccl_dtype (dtype, FALSE, &count);
      res = ncclAllGather (PTR (c->send), PTR (c->recv), count, dt, comm, stream);
      break;
    case ATOMR_CALL_REDUCE_SCATTER:
      count = atomr_tensor_get_n_elements (c->recv);
      dt = nccl_dtype (dtype, TRUE, &count);
      res = ncclReduceScatter (PTR (c->send), PTR (c->recv), count, dt, nccl_op (c->op), comm, stream);
      break;
    case ATOMR_CALL_ALL_TO_ALL:
      count = atomr_tensor_get_n_elements (c->send) / n;
      dt = nccl_dtype (dtype, FALSE, &count);
      if (ATOMR_NCCL_HAS (ncclAlltoAll))
        res = ncclAlltoAll (PTR (c->send), PTR (c->recv), count, dt, comm, stream);
      else
        for (guint r = 0; r < n && res == ncclSuccess; r++)
          {
            res = ncclSend ((guint8 *) PTR (c->send) + r * count, count, dt, (int) r, comm, stream);
            if (res == ncclSuccess)
              res = ncclRecv ((guint8 *) PTR (c->recv) + r * count, count, dt, (int) r, comm, stream);
          }
      break;
    case ATOMR_CALL_ALL_TO_ALL_V:
      for (guint r = 0; r < n && (res == ncclSuccess || res == ncclInProgress); r++)
        {
          if (c->v[r])
            res = ncclSend ((guint8 *) PTR (c->send) + c->v[n + r] * esize, c->v[r] * esize, ncclUint8,
                            (int) r, comm, stream);
          if ((res == ncclSuccess || res == ncclInProgress) && c->v[2 * n + r])
            res = ncclRecv ((guint8 *) PTR (c->recv) + c->v[3 * n + r] * esize, c->v[2 * n + r] * esize,
                            ncclUint8, (int) r, comm, stream);
        }
      break;
    case ATOMR_CALL_SEND:
      count = atomr_tensor_get_byte_size (c->send);
      res = ncclSend (PTR (c->send), count, ncclUint8, (int) c->root, comm, stream);
      break;
    case ATOMR_CALL_RECV:
      count = atomr_tensor_get_byte_size (c->recv);
      res = ncclRecv (PTR (c->recv), count, ncclUint8, (int) c->root, comm, stream);
      break;
    }
  return atomr_nccl_check (res, atomr_collective_call_name (c->kind), error);
}

typedef struct {
  GPtrArray            *calls;      /* AtomrCollectiveCall* */
  AtomrCollectiveWorld *world;      /* ref */
  guint                 failures;   /* at submission */
  gchar                *operation;
} Request;

static void
request_free (gpointer p)
{
  Request *req = p;

  g_ptr_array_unref (req->calls);
  g_object_unref (req->world);
  g_free (req->operation);
  g_free (req);
}

/* Makes @waiter wait on the GPU for what @signaller has enqueued so far. */
static gboolean
join_streams (AtomrActor  *signaller,
              AtomrActor  *waiter,
              GError     **error)
{
  AtomrDevice *device = atomr_actor_get_device (signaller);
  CUevent event = atomr_device_take_event (device, ATOMR_EVENT_PLAIN, error);
  gboolean ok;

  if (event == NULL)
    return FALSE;
  ok = atomr_device_enter (device, error);
  if (ok)
    {
      ok = atomr_cuda_check (ATOMR_CU->cuEventRecord (event, atomr_actor_get_cu_stream (signaller)),
                             "cuEventRecord", error);
      atomr_device_leave (device);
    }
  if (ok && atomr_device_enter (atomr_actor_get_device (waiter), error))
    {
      ok = atomr_cuda_check (ATOMR_CU->cuStreamWaitEvent (atomr_actor_get_cu_stream (waiter), event, 0),
                             "cuStreamWaitEvent", error);
      atomr_device_leave (atomr_actor_get_device (waiter));
    }
  else
    ok = FALSE;
  /* A recorded wait keeps what it waits for: the event can go back. */
  atomr_device_return_event (device, atomr_device_get_generation (device), event, ATOMR_EVENT_PLAIN);
  return ok;
}

static gboolean
request_enqueue (AtomrOp  *op,
                 GError  **error)
{
  Request *req = atomr_op_get_data (op);
  AtomrActor *leader = atomr_op_get_actor (op);
  g_autoptr(GPtrArray) members = g_ptr_array_new ();
  g_autoptr(GPtrArray) custom_ops = g_ptr_array_new ();
  g_autoptr(GError) failure = atomr_collective_world_get_failure (req->world);
  gboolean ok = TRUE;
  ncclResult_t end;

  if (failure)
    {
      g_set_error (error, failure->domain, failure->code,
                   "collective %s: the world failed and must be rebuilt: %s", req->operation,
                   failure->message);
      return FALSE;
    }
  if (atomr_op_is_host (op))
    return host_execute (req->calls, atomr_collective_world_get_n_ranks (req->world), error);

  /* The other actors' streams start after the leader's dependencies. */
  for (guint i = 0; i < req->calls->len; i++)
    {
      AtomrCollectiveCall *c = g_ptr_array_index (req->calls, i);
      if (ATOMR_ACTOR (c->actor) != leader && !g_ptr_array_find (members, c->actor, NULL))
        {
          g_ptr_array_add (members, c->actor);
          if (!join_streams (leader, ATOMR_ACTOR (c->actor), error))
            return FALSE;
        }
    }

  if (!atomr_nccl_check (ncclGroupStart (), "ncclGroupStart", error))
    return FALSE;
  for (guint i = 0; i < req->calls->len && ok; i++)
    {
      AtomrCollectiveCall *c = g_ptr_array_index (req->calls, i);
      ncclComm_t comm = atomr_collective_world_get_comm (req->world, c->actor->local_index);

      if (comm == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                       "collective %s: rank %u has no communicator (aborted)", req->operation,
                       c->actor->rank);
          ok = FALSE;
          break;
        }
      ok = issue (c, comm, (cudaStream_t) atomr_actor_get_cu_stream (ATOMR_ACTOR (c->actor)),
                  custom_ops, error);
    }
  end = ncclGroupEnd ();
  if (ok)
    ok = atomr_nccl_check (end, "ncclGroupEnd", error) &&
         atomr_collective_world_wait_ready (req->world, req->operation, error);
  for (guint i = 0; i + 1 < custom_ops->len; i += 2)
    ncclRedOpDestroy ((ncclRedOp_t) GPOINTER_TO_INT (g_ptr_array_index (custom_ops, i + 1)),
                      g_ptr_array_index (custom_ops, i));
  if (!ok)
    {
      /* A failed group may have left work on some communicators. */
      atomr_collective_world_fail (req->world, g_error_copy (*error));
      return FALSE;
    }
  /* The leader's fence covers the whole group. */
  for (guint i = 0; i < members->len; i++)
    if (!join_streams (g_ptr_array_index (members, i), leader, error))
      return FALSE;
  atomr_op_keep_full (op, atomr_collective_world_track (req->world, req->operation, 0),
                      atomr_collective_world_untrack);
  return TRUE;
}

static void
request_complete (AtomrOp    *op,
                  AtomrReply *reply)
{
  Request *req = atomr_op_get_data (op);

  if (atomr_collective_world_get_failure_count (req->world) != req->failures)
    {
      g_autoptr(GError) failure = atomr_collective_world_get_failure (req->world);
      if (failure)
        return atomr_reply_return_new_error (reply, failure->domain, failure->code,
                                             "collective %s failed: %s", req->operation, failure->message);
      return atomr_reply_return_new_error (reply, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                                           "collective %s failed: the world failed while it ran",
                                           req->operation);
    }
  atomr_reply_return_boolean (reply, TRUE);
}

void
atomr_collective_calls_submit (GPtrArray           *calls,
                               const gchar         *operation,
                               gpointer             source_tag,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrCollectiveCall *first = g_ptr_array_index (calls, 0);
  AtomrOp *op = atomr_op_new (first->actor, operation, source_tag, cancellable, callback, user_data);
  GError *error = NULL;
  Request *req;

  if (!check_request (calls, &error))
    {
      g_ptr_array_unref (calls);
      return atomr_op_fail (op, error);
    }
  req = g_new0 (Request, 1);
  req->calls = calls;
  req->world = g_object_ref (first->actor->world);
  req->failures = atomr_collective_world_get_failure_count (req->world);
  req->operation = g_strdup (operation);
  for (guint i = 0; i < calls->len; i++)
    {
      AtomrCollectiveCall *c = g_ptr_array_index (calls, i);
      if (c->send)
        atomr_op_read_tensor (op, c->send);
      if (c->recv)
        atomr_op_write_tensor (op, c->recv);
    }
  atomr_op_set_detail (op, calls->len > 1 ? "group" : atomr_collective_call_name (first->kind));
  atomr_op_set_multi_device (op);
  atomr_op_set_data (op, req, request_free);
  atomr_op_set_enqueue (op, request_enqueue);
  atomr_op_set_complete (op, request_complete);
  atomr_op_submit (op);
}

/* ------------------------------------------------------------------ */
/* The actor's own operations                                           */

static void
submit_one (AtomrCollectiveActor *self,
            AtomrCollectiveCall  *call,
            gpointer              source_tag,
            GCancellable         *cancellable,
            GAsyncReadyCallback   callback,
            gpointer              user_data)
{
  GError *error = NULL;
  GPtrArray *calls;

  if (!atomr_collective_call_check (call, &error))
    {
      AtomrOp *op = atomr_op_new (self, atomr_collective_call_name (call->kind),
                                  source_tag, cancellable, callback, user_data);
      atomr_collective_call_free (call);
      return atomr_op_fail (op, error);
    }
  calls = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_collective_call_free);
  g_ptr_array_add (calls, call);
  atomr_collective_calls_submit (calls, atomr_collective_call_name (call->kind),
                                 source_tag, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_all_reduce_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @send: this rank's contribution
 * @recv: the combined result (may be @send: in place)
 * @op: how contributions combine
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclAllReduce`: every rank receives the element-wise combination of
 * every rank's @send.  Finish with [method@Atomr.CollectiveActor.all_reduce_finish].
 *
 * Since: 0.2
 */
void
atomr_collective_actor_all_reduce_async (AtomrCollectiveActor *self,
                                         AtomrTensor          *send,
                                         AtomrTensor          *recv,
                                         AtomrReduceOp         op,
                                         GCancellable         *cancellable,
                                         GAsyncReadyCallback   callback,
                                         gpointer              user_data)
{
  AtomrCollectiveCall *call;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_ALL_REDUCE, self, send, recv);
  call->op = op;
  submit_one (self, call, atomr_collective_actor_all_reduce_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_all_reduce_scaled_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @send: this rank's contribution
 * @recv: the result (may be @send)
 * @scale: the factor each contribution is multiplied by before the sum
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * All-reduce with NCCL's pre-multiplied sum (`ncclRedOpCreatePreMulSum`):
 * recv = Σ scale · send, in one pass (gradient averaging with 1/n).
 *
 * Since: 0.2
 */
void
atomr_collective_actor_all_reduce_scaled_async (AtomrCollectiveActor *self,
                                                AtomrTensor          *send,
                                                AtomrTensor          *recv,
                                                gdouble               scale,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data)
{
  AtomrCollectiveCall *call;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_ALL_REDUCE_SCALED, self, send, recv);
  call->scale = scale;
  submit_one (self, call, atomr_collective_actor_all_reduce_scaled_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_broadcast_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @send: (nullable): the data, on the root (ignored elsewhere; may be %NULL)
 * @recv: where every rank receives it (on the root it may be @send)
 * @root: the rank that sends
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclBroadcast` from @root to every rank.
 *
 * Since: 0.2
 */
void
atomr_collective_actor_broadcast_async (AtomrCollectiveActor *self,
                                        AtomrTensor          *send,
                                        AtomrTensor          *recv,
                                        guint                 root,
                                        GCancellable         *cancellable,
                                        GAsyncReadyCallback   callback,
                                        gpointer              user_data)
{
  AtomrCollectiveCall *call;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_BROADCAST, self, send, recv);
  call->root = root;
  submit_one (self, call, atomr_collective_actor_broadcast_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_reduce_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @send: this rank's contribution
 * @recv: (nullable): the result, on the root (ignored elsewhere; may be %NULL)
 * @op: how contributions combine
 * @root: the rank that receives
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclReduce` to @root.
 *
 * Since: 0.2
 */
void
atomr_collective_actor_reduce_async (AtomrCollectiveActor *self,
                                     AtomrTensor          *send,
                                     AtomrTensor          *recv,
                                     AtomrReduceOp         op,
                                     guint                 root,
                                     GCancellable         *cancellable,
                                     GAsyncReadyCallback   callback,
                                     gpointer              user_data)
{
  AtomrCollectiveCall *call;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_REDUCE, self, send, recv);
  call->op = op;
  call->root = root;
  submit_one (self, call, atomr_collective_actor_reduce_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_all_gather_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @send: this rank's block
 * @recv: every rank's block, in rank order (n-ranks × @send)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclAllGather`.
 *
 * Since: 0.2
 */
void
atomr_collective_actor_all_gather_async (AtomrCollectiveActor *self,
                                         AtomrTensor          *send,
                                         AtomrTensor          *recv,
                                         GCancellable         *cancellable,
                                         GAsyncReadyCallback   callback,
                                         gpointer              user_data)
{
  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  submit_one (self, atomr_collective_call_new (ATOMR_CALL_ALL_GATHER, self, send, recv), atomr_collective_actor_all_gather_async,
              cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_reduce_scatter_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @send: n-ranks blocks, one per rank
 * @recv: this rank's block of the combination
 * @op: how contributions combine
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclReduceScatter`.
 *
 * Since: 0.2
 */
void
atomr_collective_actor_reduce_scatter_async (AtomrCollectiveActor *self,
                                             AtomrTensor          *send,
                                             AtomrTensor          *recv,
                                             AtomrReduceOp         op,
                                             GCancellable         *cancellable,
                                             GAsyncReadyCallback   callback,
                                             gpointer              user_data)
{
  AtomrCollectiveCall *call;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_REDUCE_SCATTER, self, send, recv);
  call->op = op;
  submit_one (self, call, atomr_collective_actor_reduce_scatter_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_all_to_all_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @send: n-ranks equal blocks, block r for rank r
 * @recv: n-ranks blocks, block r from rank r
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclAlltoAll` (grouped send/receive with NCCL before 2.28).
 *
 * Since: 0.2
 */
void
atomr_collective_actor_all_to_all_async (AtomrCollectiveActor *self,
                                         AtomrTensor          *send,
                                         AtomrTensor          *recv,
                                         GCancellable         *cancellable,
                                         GAsyncReadyCallback   callback,
                                         gpointer              user_data)
{
  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  submit_one (self, atomr_collective_call_new (ATOMR_CALL_ALL_TO_ALL, self, send, recv), atomr_collective_actor_all_to_all_async,
              cancellable, callback, user_data);
}

/* The per-rank counts and offsets of an all-to-all-v (one entry per rank
 * in each array), copied into @call->v; the actor's call and the group's
 * take them through here. */
gboolean
atomr_collective_call_set_counts (AtomrCollectiveCall *call,
                                  guint                n,
                                  const guint64       *send_counts,
                                  guint                n_send_counts,
                                  const guint64       *send_offsets,
                                  guint                n_send_offsets,
                                  const guint64       *recv_counts,
                                  guint                n_recv_counts,
                                  const guint64       *recv_offsets,
                                  guint                n_recv_offsets,
                                  GError             **error)
{
  if (n == 0 || n_send_counts != n || n_send_offsets != n || n_recv_counts != n || n_recv_offsets != n ||
      !send_counts || !send_offsets || !recv_counts || !recv_offsets)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective all-to-all-v: the arrays hold %u send counts, %u send offsets, "
                   "%u recv counts and %u recv offsets; each needs one entry per rank (%u)",
                   n_send_counts, n_send_offsets, n_recv_counts, n_recv_offsets, n);
      return FALSE;
    }
  call->v = g_new (guint64, 4 * (gsize) n);
  memcpy (call->v, send_counts, n * sizeof (guint64));
  memcpy (call->v + n, send_offsets, n * sizeof (guint64));
  memcpy (call->v + 2 * n, recv_counts, n * sizeof (guint64));
  memcpy (call->v + 3 * n, recv_offsets, n * sizeof (guint64));
  return TRUE;
}

/**
 * atomr_collective_actor_all_to_all_v_async:
 * @self: an [class@Atomr.CollectiveActor]
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
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * All-to-all with a block size per pair of ranks (grouped NCCL sends and
 * receives).  Counts and offsets are in elements.
 *
 * Since: 0.2
 */
void
atomr_collective_actor_all_to_all_v_async (AtomrCollectiveActor *self,
                                           AtomrTensor          *send,
                                           const guint64        *send_counts,
                                           guint                 n_send_counts,
                                           const guint64        *send_offsets,
                                           guint                 n_send_offsets,
                                           AtomrTensor          *recv,
                                           const guint64        *recv_counts,
                                           guint                 n_recv_counts,
                                           const guint64        *recv_offsets,
                                           guint                 n_recv_offsets,
                                           GCancellable         *cancellable,
                                           GAsyncReadyCallback   callback,
                                           gpointer              user_data)
{
  AtomrCollectiveCall *call;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_ALL_TO_ALL_V, self, send, recv);
  if (!atomr_collective_call_set_counts (call, self->world ? atomr_collective_world_get_n_ranks (self->world) : 0,
                                         send_counts, n_send_counts, send_offsets, n_send_offsets,
                                         recv_counts, n_recv_counts, recv_offsets, n_recv_offsets, &error))
    {
      AtomrOp *op = atomr_op_new (self, "all-to-all-v", atomr_collective_actor_all_to_all_v_async, cancellable,
                                  callback, user_data);
      atomr_collective_call_free (call);
      return atomr_op_fail (op, error);
    }
  submit_one (self, call, atomr_collective_actor_all_to_all_v_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_send_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @tensor: what to send
 * @peer: the receiving rank, which must post a matching receive
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclSend`.  In a local world, send and receive belong in one
 * [class@Atomr.CollectiveGroup].
 *
 * Since: 0.2
 */
void
atomr_collective_actor_send_async (AtomrCollectiveActor *self,
                                   AtomrTensor          *tensor,
                                   guint                 peer,
                                   GCancellable         *cancellable,
                                   GAsyncReadyCallback   callback,
                                   gpointer              user_data)
{
  AtomrCollectiveCall *call;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_SEND, self, tensor, NULL);
  call->root = peer;
  submit_one (self, call, atomr_collective_actor_send_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_recv_async:
 * @self: an [class@Atomr.CollectiveActor]
 * @tensor: where to receive
 * @peer: the sending rank
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the GPU has finished
 * @user_data: data for @callback
 *
 * `ncclRecv`.
 *
 * Since: 0.2
 */
void
atomr_collective_actor_recv_async (AtomrCollectiveActor *self,
                                   AtomrTensor          *tensor,
                                   guint                 peer,
                                   GCancellable         *cancellable,
                                   GAsyncReadyCallback   callback,
                                   gpointer              user_data)
{
  AtomrCollectiveCall *call;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self));
  call = atomr_collective_call_new (ATOMR_CALL_RECV, self, NULL, tensor);
  call->root = peer;
  submit_one (self, call, atomr_collective_actor_recv_async, cancellable, callback, user_data);
}

/**
 * atomr_collective_actor_all_reduce_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.all_reduce_async].
 *
 * Returns: %TRUE when the all-reduce completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_all_reduce_finish (AtomrCollectiveActor  *self,
                                           GAsyncResult          *result,
                                           GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_all_reduce_async, error);
}

/**
 * atomr_collective_actor_all_reduce_scaled_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.all_reduce_scaled_async].
 *
 * Returns: %TRUE when the scaled all-reduce completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_all_reduce_scaled_finish (AtomrCollectiveActor  *self,
                                                  GAsyncResult          *result,
                                                  GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_all_reduce_scaled_async, error);
}

/**
 * atomr_collective_actor_broadcast_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.broadcast_async].
 *
 * Returns: %TRUE when the broadcast completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_broadcast_finish (AtomrCollectiveActor  *self,
                                          GAsyncResult          *result,
                                          GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_broadcast_async, error);
}

/**
 * atomr_collective_actor_reduce_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.reduce_async].
 *
 * Returns: %TRUE when the reduce completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_reduce_finish (AtomrCollectiveActor  *self,
                                       GAsyncResult          *result,
                                       GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_reduce_async, error);
}

/**
 * atomr_collective_actor_all_gather_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.all_gather_async].
 *
 * Returns: %TRUE when the all-gather completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_all_gather_finish (AtomrCollectiveActor  *self,
                                           GAsyncResult          *result,
                                           GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_all_gather_async, error);
}

/**
 * atomr_collective_actor_reduce_scatter_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.reduce_scatter_async].
 *
 * Returns: %TRUE when the reduce-scatter completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_reduce_scatter_finish (AtomrCollectiveActor  *self,
                                               GAsyncResult          *result,
                                               GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_reduce_scatter_async, error);
}

/**
 * atomr_collective_actor_all_to_all_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.all_to_all_async].
 *
 * Returns: %TRUE when the all-to-all completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_all_to_all_finish (AtomrCollectiveActor  *self,
                                           GAsyncResult          *result,
                                           GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_all_to_all_async, error);
}

/**
 * atomr_collective_actor_all_to_all_v_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.all_to_all_v_async].
 *
 * Returns: %TRUE when the all-to-all-v completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_all_to_all_v_finish (AtomrCollectiveActor  *self,
                                             GAsyncResult          *result,
                                             GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_all_to_all_v_async, error);
}

/**
 * atomr_collective_actor_send_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.send_async].
 *
 * Returns: %TRUE when the send completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_send_finish (AtomrCollectiveActor  *self,
                                     GAsyncResult          *result,
                                     GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_send_async, error);
}

/**
 * atomr_collective_actor_recv_finish:
 * @self: an [class@Atomr.CollectiveActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes [method@Atomr.CollectiveActor.recv_async].
 *
 * Returns: %TRUE when the receive completed on the GPU
 *
 * Since: 0.2
 */
gboolean
atomr_collective_actor_recv_finish (AtomrCollectiveActor  *self,
                                     GAsyncResult          *result,
                                     GError               **error)
{
  return atomr_op_finish_boolean (self, result, atomr_collective_actor_recv_async, error);
}


/**
 * atomr_collective_actor_get_world:
 * @self: an [class@Atomr.CollectiveActor]
 *
 * Gets the world the actor belongs to.
 *
 * Returns: (transfer none) (nullable): the world the actor belongs to
 *
 * Since: 0.2
 */
AtomrCollectiveWorld *
atomr_collective_actor_get_world (AtomrCollectiveActor *self)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self), NULL);
  return self->world;
}

/**
 * atomr_collective_actor_get_rank:
 * @self: an [class@Atomr.CollectiveActor]
 *
 * Gets the actor's rank in its world.
 *
 * Returns: the actor's rank in its world
 *
 * Since: 0.2
 */
guint
atomr_collective_actor_get_rank (AtomrCollectiveActor *self)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_ACTOR (self), 0);
  return self->rank;
}

guint
atomr_collective_actor_get_local_index (AtomrCollectiveActor *self)
{
  return self->local_index;
}

void
atomr_collective_actor_detach (AtomrCollectiveActor *self)
{
  self->world = NULL;
}

AtomrCollectiveActor *
atomr_collective_actor_new_internal (AtomrCollectiveWorld *world,
                                     AtomrDevice          *device,
                                     guint                 rank,
                                     guint                 local_index,
                                     GError              **error)
{
  AtomrCollectiveActor *self = atomr_actor_new_internal (ATOMR_TYPE_COLLECTIVE_ACTOR, device, NULL, error);

  if (self == NULL)
    return NULL;
  self->world = world;
  self->rank = rank;
  self->local_index = local_index;
  return self;
}

static gboolean
collective_setup (AtomrActor  *actor,
                  GError     **error)
{
  if (atomr_device_is_host (atomr_actor_get_device (actor)))
    return TRUE;
  return atomr_nccl_load (error);
}

static void
atomr_collective_actor_class_init (AtomrCollectiveActorClass *klass)
{
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  actor_class->library = "nccl";
  actor_class->setup = collective_setup;
}

static void
atomr_collective_actor_init (AtomrCollectiveActor *self)
{
}
