/* atomr-vec-private.h — a pointer vector with room for a few inline
 *
 * Operations touch one to four buffers and depend on as many slots; keeping
 * those inline saves the envelope several allocations per operation.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include <glib.h>

G_BEGIN_DECLS

#define ATOMR_VEC_INLINE 4

typedef struct {
  guint     len;
  guint     cap;
  gpointer *data;
  gpointer  inline_data[ATOMR_VEC_INLINE];
} AtomrVec;

static inline void
atomr_vec_init (AtomrVec *vec)
{
  vec->len = 0;
  vec->cap = ATOMR_VEC_INLINE;
  vec->data = vec->inline_data;
}

static inline void
atomr_vec_add (AtomrVec *vec,
               gpointer  item)
{
  if (G_UNLIKELY (vec->data == NULL))
    atomr_vec_init (vec);
  if (G_UNLIKELY (vec->len == vec->cap))
    {
      gpointer *bigger = g_new (gpointer, vec->cap * 2);
      memcpy (bigger, vec->data, vec->len * sizeof (gpointer));
      if (vec->data != vec->inline_data)
        g_free (vec->data);
      vec->data = bigger;
      vec->cap *= 2;
    }
  vec->data[vec->len++] = item;
}

static inline gboolean
atomr_vec_contains (const AtomrVec *vec,
                    gconstpointer   item)
{
  for (guint i = 0; i < vec->len; i++)
    if (vec->data[i] == item)
      return TRUE;
  return FALSE;
}

/* Frees each item with @free_func (may be NULL) and any heap storage. */
static inline void
atomr_vec_clear (AtomrVec       *vec,
                 GDestroyNotify  free_func)
{
  if (free_func)
    for (guint i = 0; i < vec->len; i++)
      free_func (vec->data[i]);
  if (vec->data && vec->data != vec->inline_data)
    g_free (vec->data);
  vec->len = 0;
  vec->data = NULL;
}

/* A FIFO of pointers in a ring that only grows (capacity a power of two):
 * a push or a pop allocates nothing once the ring is large enough, where a
 * GQueue allocates and frees a list node per element (an operation passes
 * through the actor's in-flight queue once per request). */
typedef struct {
  gpointer *data;
  guint     head;
  guint     len;
  guint     cap;
} AtomrRing;

static inline void
atomr_ring_init (AtomrRing *ring)
{
  ring->data = NULL;
  ring->head = ring->len = ring->cap = 0;
}

static inline guint
atomr_ring_len (const AtomrRing *ring)
{
  return ring->len;
}

/* The @i-th element from the head (i < len). */
static inline gpointer
atomr_ring_nth (const AtomrRing *ring,
                guint            i)
{
  return ring->data[(ring->head + i) & (ring->cap - 1)];
}

static inline gpointer
atomr_ring_peek_head (const AtomrRing *ring)
{
  return ring->len ? ring->data[ring->head] : NULL;
}

static inline void
atomr_ring_grow_ (AtomrRing *ring)
{
  guint cap = ring->cap ? ring->cap * 2 : 64;
  gpointer *data = g_new (gpointer, cap);

  for (guint i = 0; i < ring->len; i++)
    data[i] = atomr_ring_nth (ring, i);
  g_free (ring->data);
  ring->data = data;
  ring->head = 0;
  ring->cap = cap;
}

static inline void
atomr_ring_push_tail (AtomrRing *ring,
                      gpointer   item)
{
  if (G_UNLIKELY (ring->len == ring->cap))
    atomr_ring_grow_ (ring);
  ring->data[(ring->head + ring->len++) & (ring->cap - 1)] = item;
}

static inline gpointer
atomr_ring_pop_head (AtomrRing *ring)
{
  gpointer item;

  if (ring->len == 0)
    return NULL;
  item = ring->data[ring->head];
  ring->head = (ring->head + 1) & (ring->cap - 1);
  ring->len--;
  return item;
}

/* Frees the storage; the elements are the caller's. */
static inline void
atomr_ring_clear (AtomrRing *ring)
{
  g_free (ring->data);
  atomr_ring_init (ring);
}

G_END_DECLS
