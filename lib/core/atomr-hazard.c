/* atomr-hazard.c — hazard slots: ordering operations by submission
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-buffer-private.h"
#include "atomr-free-list-private.h"
#include "atomr-hazard-private.h"

struct _AtomrSlot
{
  gatomicrefcount ref;
  gpointer     owner;        /* identity only: the actor that resolves it */
  gboolean     resolved;     /* under the hazards lock */
  AtomrVec     fences;       /* AtomrFence*, set on resolve */
  AtomrVec     replaced;     /* older reader slots of the same actor it stands for */
  GPtrArray   *wake;         /* GMainContext* to wake on resolve */
  GError      *error;        /* the original failure it stands for, or NULL */
  gchar       *origin;       /* which operation failed */
  guint64      sequence;     /* the owner operation's, for traces; 0 unknown */
};

/* One lock for all hazard bookkeeping: registering an operation on all its
 * buffers at once keeps the dependency graph acyclic. */
G_LOCK_DEFINE_STATIC (hazards);

/* Freed slots kept for reuse, per thread (atomr-free-list-private.h):
 * every request that touches a buffer makes one. */
static __thread AtomrFreeList *tls_slot_list;
static GPrivate slot_list_key = G_PRIVATE_INIT (atomr_free_list_destroy);
/* Slots released on another thread than the submitting one. */
static AtomrFreeDepot slot_depot;

static AtomrSlot *
slot_alloc (void)
{
  AtomrSlot *slot = atomr_free_list_pop_full (&tls_slot_list, &slot_list_key, g_free, &slot_depot);

  if (slot == NULL)
    return g_new0 (AtomrSlot, 1);
  memset (slot, 0, sizeof *slot);
  return slot;
}

static void
slot_dealloc (AtomrSlot *slot)
{
  atomr_free_list_push_depot (&tls_slot_list, &slot_list_key, slot, g_free, &slot_depot);
}

AtomrSlot *
atomr_slot_new (gpointer owner)
{
  AtomrSlot *slot = slot_alloc ();

  g_atomic_ref_count_init (&slot->ref);
  slot->owner = owner;
  return slot;
}

gpointer
atomr_slot_get_owner (AtomrSlot *slot)
{
  return slot->owner;
}

gpointer
atomr_slot_dup_pending_owner (AtomrSlot *slot)
{
  gpointer owner = NULL;

  /* While the slot is pending, the operation that resolves it holds its
   * actor: the reference is safe to take under the lock. */
  G_LOCK (hazards);
  if (!slot->resolved && slot->owner != NULL)
    owner = g_object_ref (slot->owner);
  G_UNLOCK (hazards);
  return owner;
}

void
atomr_slot_set_sequence (AtomrSlot *slot,
                         guint64    sequence)
{
  slot->sequence = sequence;
}

guint64
atomr_slot_get_sequence (AtomrSlot *slot)
{
  return slot->sequence;
}

AtomrSlot *
atomr_slot_ref (AtomrSlot *slot)
{
  g_atomic_ref_count_inc (&slot->ref);
  return slot;
}

void
atomr_slot_unref (AtomrSlot *slot)
{
  if (!g_atomic_ref_count_dec (&slot->ref))
    return;
  atomr_vec_clear (&slot->fences, (GDestroyNotify) atomr_fence_unref);
  atomr_vec_clear (&slot->replaced, (GDestroyNotify) atomr_slot_unref);
  g_clear_pointer (&slot->wake, g_ptr_array_unref);
  g_clear_error (&slot->error);
  g_free (slot->origin);
  slot_dealloc (slot);
}

gboolean
atomr_slot_check (AtomrSlot    *slot,
                  GMainContext *wake)
{
  gboolean resolved;

  G_LOCK (hazards);
  resolved = slot->resolved;
  if (!resolved && wake)
    {
      if (slot->wake == NULL)
        slot->wake = g_ptr_array_new_with_free_func ((GDestroyNotify) g_main_context_unref);
      if (!g_ptr_array_find (slot->wake, wake, NULL))
        g_ptr_array_add (slot->wake, g_main_context_ref (wake));
    }
  G_UNLOCK (hazards);
  return resolved;
}

void
atomr_slot_set_error (AtomrSlot    *slot,
                      const gchar  *origin,
                      const GError *error)
{
  G_LOCK (hazards);
  g_warn_if_fail (!slot->resolved);
  if (slot->error == NULL && !slot->resolved)
    {
      slot->error = g_error_copy (error);
      slot->origin = g_strdup (origin);
    }
  G_UNLOCK (hazards);
}

const GError *
atomr_slot_get_error (AtomrSlot    *slot,
                      const gchar **origin)
{
  const GError *error = NULL;

  G_LOCK (hazards);
  /* Immutable once resolved: the pointer stays valid while @slot lives. */
  if (slot->resolved && slot->error)
    {
      error = slot->error;
      if (origin)
        *origin = slot->origin;
    }
  G_UNLOCK (hazards);
  return error;
}

/* Adds @fence to @fences unless it is there already or known to have
 * passed without error (nothing would wait for it).  Under the hazards
 * lock. */
static void
fences_add_unique (AtomrVec   *fences,
                   AtomrFence *fence)
{
  if (g_atomic_int_get (&fence->signalled) && fence->result == CUDA_SUCCESS)
    return;
  if (atomr_vec_contains (fences, fence))
    return;
  atomr_vec_add (fences, atomr_fence_ref (fence));
}

void
atomr_slot_resolve (AtomrSlot  *slot,
                    AtomrFence *fence,
                    AtomrVec   *deps)
{
  GPtrArray *wake;

  G_LOCK (hazards);
  if (slot->resolved)
    {
      G_UNLOCK (hazards);
      g_critical ("%s: slot %p is resolved already", G_STRFUNC, slot);
      return;
    }
  /* Built in place, under the lock: a slot's fences are read by other
   * threads (a stand-in of another actor copies them), so they must never
   * be seen half-written, nor point at a copy on some thread's stack. */
  atomr_vec_clear (&slot->fences, (GDestroyNotify) atomr_fence_unref);
  atomr_vec_init (&slot->fences);
  if (fence)
    atomr_vec_add (&slot->fences, atomr_fence_ref (fence));
  else
    {
      /* Never enqueued: stand for what it followed, and for the older
       * reads of its actor it took the place of (they ran before it).
       * Only resolved slots have fences to give; each fence once, and none
       * that already passed: a chain of stand-ins (requests that fail one
       * after the other on the same buffers) would otherwise double its
       * list at every link, until the fences' reference counts overflow. */
      for (guint i = 0; deps && i < deps->len; i++)
        {
          AtomrSlot *dep = deps->data[i];
          if (dep == slot || !dep->resolved)
            continue;
          for (guint j = 0; j < dep->fences.len; j++)
            fences_add_unique (&slot->fences, dep->fences.data[j]);
        }
      for (guint i = 0; i < slot->replaced.len; i++)
        {
          AtomrSlot *old = slot->replaced.data[i];
          if (!old->resolved)
            continue;
          for (guint j = 0; j < old->fences.len; j++)
            fences_add_unique (&slot->fences, old->fences.data[j]);
        }
    }
  slot->resolved = TRUE;
  /* What it stood in for is now folded into its fences. */
  atomr_vec_clear (&slot->replaced, (GDestroyNotify) atomr_slot_unref);
  wake = g_steal_pointer (&slot->wake);
  G_UNLOCK (hazards);

  for (guint i = 0; wake && i < wake->len; i++)
    g_main_context_wakeup (g_ptr_array_index (wake, i));
  g_clear_pointer (&wake, g_ptr_array_unref);
}

guint
atomr_slot_get_n_fences (AtomrSlot *slot)
{
  guint n;

  G_LOCK (hazards);
  n = slot->fences.len;
  G_UNLOCK (hazards);
  return n;
}

gboolean
atomr_slot_order (AtomrSlot    *slot,
                  AtomrStream  *stream,
                  GError      **error)
{
  /* Resolved slots are immutable: no lock needed to read the fences. */
  for (guint i = 0; i < slot->fences.len; i++)
    {
      AtomrFence *fence = slot->fences.data[i];
      /* Work known to be finished needs no wait on the GPU. */
      if (g_atomic_int_get (&fence->signalled) && fence->result == CUDA_SUCCESS)
        continue;
      if (!atomr_stream_wait (stream, fence, error))
        return FALSE;
    }
  return TRUE;
}

void
atomr_hazards_register (AtomrSlot *slot,
                        AtomrVec  *reads,
                        AtomrVec  *writes,
                        AtomrVec  *deps,
                        AtomrVec  *data_deps)
{
  G_LOCK (hazards);
  for (guint i = 0; i < reads->len; i++)
    {
      AtomrHazards *buffer = atomr_buffer_get_hazards (reads->data[i]);

      if (buffer->last_writer && buffer->last_writer != slot)
        {
          atomr_vec_add (deps, atomr_slot_ref (buffer->last_writer));
          if (data_deps)
            atomr_vec_add (data_deps, atomr_slot_ref (buffer->last_writer));
        }
      if (buffer->readers == NULL)
        buffer->readers = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_slot_unref);
      if (g_ptr_array_find (buffer->readers, slot, NULL))
        continue;
      /* One reader per actor: its stream runs in order, so its newest read
       * covers the older ones (and stands for them if it never runs).
       * Without this a buffer read by thousands of requests in flight
       * would make every new read pay for all of them. */
      {
        gboolean replaced = FALSE;
        for (guint j = 0; j < buffer->readers->len; j++)
          {
            AtomrSlot *r = g_ptr_array_index (buffer->readers, j);
            if (r->owner != NULL && r->owner == slot->owner)
              {
                /* the reference moves from the list to @slot */
                atomr_vec_add (&slot->replaced, r);
                g_ptr_array_index (buffer->readers, j) = atomr_slot_ref (slot);
                replaced = TRUE;
                break;
              }
          }
        if (replaced)
          continue;
      }
      g_ptr_array_add (buffer->readers, atomr_slot_ref (slot));
    }
  for (guint i = 0; i < writes->len; i++)
    {
      AtomrHazards *buffer = atomr_buffer_get_hazards (writes->data[i]);

      if (buffer->last_writer && buffer->last_writer != slot)
        atomr_vec_add (deps, atomr_slot_ref (buffer->last_writer));
      for (guint j = 0; buffer->readers && j < buffer->readers->len; j++)
        {
          AtomrSlot *r = g_ptr_array_index (buffer->readers, j);
          if (r != slot)
            atomr_vec_add (deps, atomr_slot_ref (r));
        }
      if (buffer->readers)
        g_ptr_array_set_size (buffer->readers, 0);
      g_clear_pointer (&buffer->last_writer, atomr_slot_unref);
      buffer->last_writer = atomr_slot_ref (slot);
    }
  G_UNLOCK (hazards);
}

void
atomr_hazards_init_written (AtomrHazards *hazards,
                            AtomrFence   *fence)
{
  hazards->last_writer = atomr_slot_new (NULL);
  atomr_slot_resolve (hazards->last_writer, fence, NULL);
}

void
atomr_hazards_order_all (AtomrHazards *hazards,
                         AtomrStream  *stream)
{
  if (hazards->last_writer)
    atomr_slot_order (hazards->last_writer, stream, NULL);
  for (guint i = 0; hazards->readers && i < hazards->readers->len; i++)
    atomr_slot_order (g_ptr_array_index (hazards->readers, i), stream, NULL);
}

/* Under the hazards lock.  FALSE when @slot is pending (*n is then
 * G_MAXUINT) or its fences do not fit (*n is then @max + 1). */
static gboolean
take_slot_fences (AtomrSlot   *slot,
                  AtomrFence **fences,
                  guint       *n,
                  guint        max)
{
  if (!slot->resolved)
    {
      *n = G_MAXUINT;
      return FALSE;
    }
  for (guint i = 0; i < slot->fences.len; i++)
    {
      AtomrFence *fence = slot->fences.data[i];
      gboolean seen = FALSE;

      if (g_atomic_int_get (&fence->signalled) && fence->result == CUDA_SUCCESS)
        continue;
      for (guint j = 0; j < *n && !seen; j++)
        seen = fences[j] == fence;
      if (seen)
        continue;
      if (*n == max)
        {
          *n = max + 1;
          return FALSE;
        }
      fences[(*n)++] = fence;
    }
  return TRUE;
}

guint
atomr_hazards_take_fences (AtomrHazards *hazards,
                           AtomrFence  **fences,
                           guint         max)
{
  guint n = 0;
  gboolean ok = TRUE;

  G_LOCK (hazards);
  if (hazards->last_writer)
    ok = take_slot_fences (hazards->last_writer, fences, &n, max);
  for (guint i = 0; ok && hazards->readers && i < hazards->readers->len; i++)
    ok = take_slot_fences (g_ptr_array_index (hazards->readers, i), fences, &n, max);
  G_UNLOCK (hazards);
  if (!ok)
    return n;   /* nothing taken: G_MAXUINT or max + 1 */
  for (guint i = 0; i < n; i++)
    atomr_fence_ref (fences[i]);
  return n;
}

void
atomr_hazards_init_after (AtomrHazards *hazards,
                          AtomrFence  **fences,
                          guint         n)
{
  AtomrSlot *slot;

  if (n == 0)
    return;
  /* Not yet visible to any other thread: no lock. */
  slot = atomr_slot_new (NULL);
  atomr_vec_init (&slot->fences);
  for (guint i = 0; i < n; i++)
    atomr_vec_add (&slot->fences, fences[i]);
  slot->resolved = TRUE;
  hazards->last_writer = slot;
}

void
atomr_hazards_clear (AtomrHazards *hazards)
{
  g_clear_pointer (&hazards->last_writer, atomr_slot_unref);
  g_clear_pointer (&hazards->readers, g_ptr_array_unref);
}
