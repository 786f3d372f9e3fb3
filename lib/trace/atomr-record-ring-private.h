/* atomr-record-ring-private.h — the inspector's bounded queue of operation
 * records: many producers (the actors' threads), one consumer (the server
 * thread), no lock
 *
 * The actors' observers used to append records to an array under the
 * server's mutex (and bump a shared atomic counter beside it): a lock and
 * a cache line that the server thread also wrote, on the application's
 * thread for every operation.  This ring is the classic bounded queue of
 * per-slot sequence numbers (D. Vyukov's): a producer claims a position
 * with one compare-and-swap on the enqueue counter, fills the slot and
 * publishes it with a release store of the slot's sequence; the consumer
 * takes slots in position order while their sequence says they are
 * filled and hands each back with a release store.  The enqueue counter,
 * the drop counter and the consumer's position live on cache lines of
 * their own, so the consumer never writes a line the producers read on
 * every push except the slots it hands back.
 *
 * A full ring drops the record and counts it (one atomic add, on the
 * dropping path only): records pushed = records taken + records dropped,
 * exactly.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One finished operation, as the inspector server keeps it until its
 * thread turns it into a launch record: plain values. */
typedef struct
{
  const gchar  *actor;         /* interned, or static */
  const gchar  *library;       /* interned, or static */
  gchar        *error;         /* owned; NULL on success */
  guint64       sequence;
  gint64        t_submit, t_enqueue, t_complete;   /* ns */
  gdouble       gpu_ms;
  guint         stream_id;
  gint          device;
  guint         mailbox_depth;
  gchar         operation[44];
} AtomrRingRecord;

typedef struct _AtomrRecordRing AtomrRecordRing;

/* A ring of at least @capacity records (rounded up to a power of two,
 * at least 2). */
AtomrRecordRing *atomr_record_ring_new          (guint                  capacity);
/* Frees the ring and the error texts of records never taken.  No
 * producer or consumer may be running. */
void             atomr_record_ring_free         (AtomrRecordRing       *ring);
guint            atomr_record_ring_get_capacity (AtomrRecordRing       *ring);

/* Producer, any thread: a slot to fill, or NULL when the ring is full
 * (the record is counted as dropped).  A non-NULL slot must be handed to
 * atomr_record_ring_push_end() at once: the consumer stops at it until
 * then. */
AtomrRingRecord *atomr_record_ring_push_begin   (AtomrRecordRing       *ring);
void             atomr_record_ring_push_end     (AtomrRecordRing       *ring,
                                                 AtomrRingRecord       *slot);

typedef void (*AtomrRingRecordFunc) (AtomrRingRecord *record,
                                     gpointer         user_data);

/* Consumer, one thread at a time: calls @func on each published record in
 * position order, at most @max of them (0: no limit beyond what is
 * published now), stopping at the first slot not yet published.  @func
 * may steal record->error (set it to NULL); otherwise it is freed.
 * Returns how many records were taken. */
guint            atomr_record_ring_pop          (AtomrRecordRing       *ring,
                                                 AtomrRingRecordFunc    func,
                                                 gpointer               user_data,
                                                 guint                  max);
/* Consumer: records dropped since its last call (and resets that
 * count). */
guint64          atomr_record_ring_take_dropped (AtomrRecordRing       *ring);
/* Totals since the ring was made: records published or being published
 * (positions claimed), and records dropped.  Any thread. */
guint64          atomr_record_ring_get_pushed   (AtomrRecordRing       *ring);
guint64          atomr_record_ring_get_dropped  (AtomrRecordRing       *ring);

G_END_DECLS
