/* atomr-hazard-private.h — hazard slots: ordering operations by submission
 *
 * Every operation that touches buffers gets a slot when it is submitted
 * (on the caller's thread, under one lock, so the order of submission is
 * the order of the hazards).  A buffer remembers the slot of its last
 * writer and of its readers since.  The operation depends on the slots it
 * found: the last writer (read or write), and the readers too (write).
 *
 * When the operation is enqueued, its slot is resolved with its fence;
 * when it fails before enqueue, with the fences of its own dependencies
 * (so that later operations still wait for what came before).  An actor
 * runs an operation only once all its dependency slots are resolved, and
 * then makes its stream wait for their fences on the GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-stream-private.h"
#include "atomr-vec-private.h"

G_BEGIN_DECLS

typedef struct _AtomrSlot AtomrSlot;

/* The hazard state of one buffer, embedded in it; under the hazards lock. */
typedef struct {
  AtomrSlot *last_writer;
  GPtrArray *readers;          /* AtomrSlot*, one per actor */
} AtomrHazards;

AtomrSlot *atomr_slot_new          (gpointer      owner);
gpointer   atomr_slot_get_owner    (AtomrSlot    *slot);
/* A strong reference to the owner (a GObject: the actor) while the slot
 * is pending, or NULL once it is resolved. */
gpointer   atomr_slot_dup_pending_owner (AtomrSlot *slot);
/* The sequence number of the operation that owns the slot, for traces
 * (set by the owner when it runs, read once the slot is resolved). */
void       atomr_slot_set_sequence (AtomrSlot    *slot,
                                    guint64       sequence);
guint64    atomr_slot_get_sequence (AtomrSlot    *slot);
AtomrSlot *atomr_slot_ref          (AtomrSlot    *slot);
void       atomr_slot_unref        (AtomrSlot    *slot);
/* TRUE if resolved; otherwise @wake is woken when it is. */
gboolean   atomr_slot_check        (AtomrSlot    *slot,
                                    GMainContext *wake);
/* Resolves with @fence, or with the fences of @deps when @fence is NULL. */
void       atomr_slot_resolve      (AtomrSlot    *slot,
                                    AtomrFence   *fence,
                                    AtomrVec     *deps);
/* A failed operation's slot carries the original failure: @origin names
 * the operation that failed ("fill #3 on copy-1"), @error is its error.
 * Call before atomr_slot_resolve(). */
void       atomr_slot_set_error    (AtomrSlot    *slot,
                                    const gchar  *origin,
                                    const GError *error);
/* The failure a resolved slot carries, or NULL (and *origin untouched). */
const GError *atomr_slot_get_error (AtomrSlot    *slot,
                                    const gchar **origin);
/* Makes @stream wait on the GPU for the fences of a resolved slot. */
gboolean   atomr_slot_order        (AtomrSlot    *slot,
                                    AtomrStream  *stream,
                                    GError      **error);

/* Registers @slot as reader of @reads and writer of @writes (AtomrBuffer*)
 * and appends to @deps (AtomrSlot*, owned) what it must wait for, and to
 * @data_deps (AtomrSlot*, owned; may be NULL) the last writers of what it
 * reads: their failure is its failure. */
/* How many fences a resolved slot stands for (tests). */
guint      atomr_slot_get_n_fences (AtomrSlot    *slot);

void       atomr_hazards_register  (AtomrSlot    *slot,
                                    AtomrVec     *reads,
                                    AtomrVec     *writes,
                                    AtomrVec     *deps,
                                    AtomrVec     *data_deps);

/* A fresh buffer: its first users wait for the allocation's @fence. */
void       atomr_hazards_init_written (AtomrHazards *hazards,
                                       AtomrFence   *fence);
/* Makes @stream wait for every operation that touched the buffer (every
 * slot is resolved by then: the buffer is being freed). */
void       atomr_hazards_order_all (AtomrHazards *hazards,
                                    AtomrStream  *stream);
void       atomr_hazards_clear     (AtomrHazards *hazards);

/* For the memory pool's block cache.  take_fences: references to the
 * fences of every operation that touched the buffer and is not known to
 * have finished (each once), at most @max into @fences; returns how many,
 * or (nothing taken) @max + 1 when there are more, G_MAXUINT when a slot
 * is still pending.  init_after: a block taken from the cache starts with those
 * fences as its last writer (@n of them, references moved in; nothing
 * when @n is 0: the memory is idle). */
guint      atomr_hazards_take_fences (AtomrHazards *hazards,
                                      AtomrFence  **fences,
                                      guint         max);
void       atomr_hazards_init_after  (AtomrHazards *hazards,
                                      AtomrFence  **fences,
                                      guint         n);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrSlot, atomr_slot_unref)

G_END_DECLS
