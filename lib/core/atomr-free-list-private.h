/* atomr-free-list-private.h — per-thread free lists of fixed-size blocks
 *
 * The envelope allocates an operation (atomr-actor-op.c) and, for every
 * request that touches a buffer, a hazard slot (atomr-hazard.c), and frees
 * them at its reply; malloc + free of them were about a tenth of a small
 * request's host cost under callgrind (tests/bench/core/envelope-ir.py).
 * Each kind keeps its freed blocks in a free list of its own per thread,
 * reached through a plain thread-local pointer (g_private_get() was ~130
 * instructions per request); a GPrivate frees a thread's list, and the
 * blocks in it, when the thread ends.
 *
 * A block freed on another thread than the one that makes such blocks
 * (an actor with a thread of its own frees the operations its submitting
 * thread made, bench-envelope-host's `thread` mode) would never come back
 * to the thread that needs one: once the freeing thread's own list is
 * full, it goes to the kind's depot, a bounded lock-free stack that a
 * thread whose own list is empty takes whole.  Without it, every such
 * block was a malloc on one thread and a free on the other, which glibc
 * serves under the first thread's arena lock: the two threads contended
 * for it on every request.
 *
 * Off where memory errors are being looked for — under AddressSanitizer,
 * and with G_SLICE=always-malloc (GLib's switch for valgrind, which our
 * valgrind tests set): a recycled block would hide a use after free.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define ATOMR_FREE_LIST_SIZE 64
/* At most this many blocks of one kind wait in its depot. */
#define ATOMR_FREE_DEPOT_SIZE 1024

typedef struct _AtomrFreeList AtomrFreeList;
typedef struct _AtomrFreeDepot AtomrFreeDepot;

/* One per kind of block, shared by all threads: a stack linked through
 * the first word of each block.  Pushed one block at a time (compare and
 * exchange), taken whole (exchange), so no block is ever popped alone
 * and the stack has no ABA problem. */
struct _AtomrFreeDepot
{
  gpointer head;   /* atomic */
  gint     n;      /* atomic, about how many it holds */
};

struct _AtomrFreeList
{
  AtomrFreeList **home;     /* the thread-local pointer that holds it */
  GDestroyNotify  free_block;
  guint           n;
  gpointer        blocks[ATOMR_FREE_LIST_SIZE];
};

G_GNUC_INTERNAL
gboolean       atomr_free_list_enabled (void);

/* The GPrivate notify of every free list's key. */
G_GNUC_INTERNAL
void           atomr_free_list_destroy (gpointer data);

G_GNUC_INTERNAL
AtomrFreeList *atomr_free_list_new     (AtomrFreeList **home,
                                        GPrivate       *key,
                                        GDestroyNotify  free_block);

/* Takes @depot's blocks into this thread's list and returns one of
 * them, or NULL when another thread took them first. */
G_GNUC_INTERNAL
gpointer       atomr_free_list_refill  (AtomrFreeList **home,
                                        GPrivate       *key,
                                        GDestroyNotify  free_block,
                                        AtomrFreeDepot *depot);

G_GNUC_INTERNAL
void           atomr_free_depot_push   (AtomrFreeDepot *depot,
                                        gpointer        block);

/* A block freed on this thread, or NULL (then allocate one); what it
 * holds is the caller's to clear. */
static inline gpointer
atomr_free_list_pop (AtomrFreeList *list)
{
  return list != NULL && list->n > 0 ? list->blocks[--list->n] : NULL;
}

/* The same, then one from @depot (blocks other threads freed). */
static inline gpointer
atomr_free_list_pop_full (AtomrFreeList  **home,
                          GPrivate        *key,
                          GDestroyNotify   free_block,
                          AtomrFreeDepot  *depot)
{
  AtomrFreeList *list = *home;

  if (G_LIKELY (list != NULL && list->n > 0))
    return list->blocks[--list->n];
  if (g_atomic_pointer_get (&depot->head) != NULL)
    return atomr_free_list_refill (home, key, free_block, depot);
  return NULL;
}

/* Keeps @block in this thread's list *@home, made on first use with
 * @key, or when that is full in @depot (when not %NULL); frees it with
 * @free_block when recycling is off or both are full (and when the thread
 * ends: every push to one list must pass the same @free_block). */
static inline void
atomr_free_list_push_depot (AtomrFreeList  **home,
                            GPrivate        *key,
                            gpointer         block,
                            GDestroyNotify   free_block,
                            AtomrFreeDepot  *depot)
{
  AtomrFreeList *list;

  if (!atomr_free_list_enabled ())
    {
      free_block (block);
      return;
    }
  list = *home;
  if (G_UNLIKELY (list == NULL))
    list = atomr_free_list_new (home, key, free_block);
  if (list->n < ATOMR_FREE_LIST_SIZE)
    list->blocks[list->n++] = block;
  else if (depot != NULL && g_atomic_int_get (&depot->n) < ATOMR_FREE_DEPOT_SIZE)
    atomr_free_depot_push (depot, block);
  else
    free_block (block);
}

/* Without a depot. */
static inline void
atomr_free_list_push_full (AtomrFreeList **home,
                           GPrivate       *key,
                           gpointer        block,
                           GDestroyNotify  free_block)
{
  atomr_free_list_push_depot (home, key, block, free_block, NULL);
}

G_END_DECLS
