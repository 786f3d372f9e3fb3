/* atomr-record-ring.c — bounded many-producer, one-consumer queue of
 * operation records (see atomr-record-ring-private.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "trace/atomr-record-ring-private.h"

#define CACHE_LINE 64

typedef struct
{
  gsize           seq;   /* == position: free for it; == position + 1: published */
  AtomrRingRecord record;
} __attribute__ ((aligned (CACHE_LINE))) Slot;

struct _AtomrRecordRing
{
  /* Written by the producers (claims), read by them. */
  gsize  enqueue __attribute__ ((aligned (CACHE_LINE)));
  /* Written by the producers on the dropping path only. */
  guint64 dropped __attribute__ ((aligned (CACHE_LINE)));
  guint64 dropped_taken;   /* beside it: both change only when dropping or reporting */
  /* The consumer's own. */
  gsize  dequeue __attribute__ ((aligned (CACHE_LINE)));
  /* Read-only after construction. */
  gsize  mask __attribute__ ((aligned (CACHE_LINE)));
  Slot  *slots;
};

/* Two cache lines a record: a producer writes two lines per push. */
G_STATIC_ASSERT (sizeof (Slot) == 2 * CACHE_LINE);

AtomrRecordRing *
atomr_record_ring_new (guint capacity)
{
  AtomrRecordRing *ring;
  gsize n = 2;

  g_return_val_if_fail (capacity <= G_MAXUINT / 2, NULL);
  while (n < capacity)
    n <<= 1;
  ring = g_aligned_alloc0 (1, sizeof *ring, CACHE_LINE);
  ring->mask = n - 1;
  ring->slots = g_aligned_alloc0 (n, sizeof (Slot), CACHE_LINE);
  for (gsize i = 0; i < n; i++)
    ring->slots[i].seq = i;
  return ring;
}

static void
ignore_record (AtomrRingRecord *record,
            gpointer         user_data)
{
  (void) record;
  (void) user_data;
}

void
atomr_record_ring_free (AtomrRecordRing *ring)
{
  if (ring == NULL)
    return;
  atomr_record_ring_pop (ring, ignore_record, NULL, 0);   /* frees the error texts */
  g_aligned_free (ring->slots);
  g_aligned_free (ring);
}

guint
atomr_record_ring_get_capacity (AtomrRecordRing *ring)
{
  return (guint) ring->mask + 1;
}

AtomrRingRecord *
atomr_record_ring_push_begin (AtomrRecordRing *ring)
{
  gsize pos = __atomic_load_n (&ring->enqueue, __ATOMIC_RELAXED);

  for (;;)
    {
      Slot *slot = &ring->slots[pos & ring->mask];
      gsize seq = __atomic_load_n (&slot->seq, __ATOMIC_ACQUIRE);
      gssize diff = (gssize) (seq - pos);

      if (diff == 0)
        {
          /* Free for this position: claim it (on failure pos is reloaded). */
          if (__atomic_compare_exchange_n (&ring->enqueue, &pos, pos + 1, TRUE,
                                           __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return &slot->record;
        }
      else if (diff < 0)
        {
          /* Still holds the record of position pos - capacity: full. */
          __atomic_fetch_add (&ring->dropped, 1, __ATOMIC_RELAXED);
          return NULL;
        }
      else
        pos = __atomic_load_n (&ring->enqueue, __ATOMIC_RELAXED);   /* another producer took it */
    }
}

void
atomr_record_ring_push_end (AtomrRecordRing *ring,
                            AtomrRingRecord *record)
{
  Slot *slot = (Slot *) ((guint8 *) record - G_STRUCT_OFFSET (Slot, record));

  Slot *next = ring->slots + (((gsize) (slot - ring->slots) + 1) & ring->mask);

  /* The slot's sequence was pos when claimed: pos + 1 publishes it. */
  __atomic_store_n (&slot->seq, __atomic_load_n (&slot->seq, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
  /* The next claim reads the next slot's sequence before anything else
   * (its CAS depends on it) and then writes both of its lines: lines the
   * server thread wrote last, a lap ago, when it handed the slot back.
   * Fetched now, that miss overlaps the application's work until its
   * next record instead of stalling the claim.  Nobody else touches that
   * slot until it is claimed and published again. */
  __builtin_prefetch (next, 1, 3);
  __builtin_prefetch ((const guint8 *) next + CACHE_LINE, 1, 3);
}

guint
atomr_record_ring_pop (AtomrRecordRing     *ring,
                       AtomrRingRecordFunc  func,
                       gpointer             user_data,
                       guint                max)
{
  guint n = 0;

  while (max == 0 || n < max)
    {
      gsize pos = ring->dequeue;
      Slot *slot = &ring->slots[pos & ring->mask];

      if (__atomic_load_n (&slot->seq, __ATOMIC_ACQUIRE) != pos + 1)
        break;   /* not published yet (or never claimed) */
      func (&slot->record, user_data);
      g_clear_pointer (&slot->record.error, g_free);
      /* Free for the position one lap ahead. */
      __atomic_store_n (&slot->seq, pos + ring->mask + 1, __ATOMIC_RELEASE);
      ring->dequeue = pos + 1;
      n++;
    }
  return n;
}

guint64
atomr_record_ring_take_dropped (AtomrRecordRing *ring)
{
  guint64 total = __atomic_load_n (&ring->dropped, __ATOMIC_RELAXED);
  guint64 taken = __atomic_exchange_n (&ring->dropped_taken, total, __ATOMIC_RELAXED);

  return total - taken;
}

guint64
atomr_record_ring_get_pushed (AtomrRecordRing *ring)
{
  return __atomic_load_n (&ring->enqueue, __ATOMIC_RELAXED);
}

guint64
atomr_record_ring_get_dropped (AtomrRecordRing *ring)
{
  return __atomic_load_n (&ring->dropped, __ATOMIC_RELAXED);
}
