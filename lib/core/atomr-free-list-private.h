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

typedef struct _AtomrFreeList AtomrFreeList;

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

/* A block freed on this thread, or NULL (then allocate one); what it
 * holds is the caller's to clear. */
static inline gpointer
atomr_free_list_pop (AtomrFreeList *list)
{
  return list != NULL && list->n > 0 ? list->blocks[--list->n] : NULL;
}

/* Keeps @block in this thread's list *@home, made on first use with
 * @key; frees it with @free_block when recycling is off or the list is
 * full (and when the thread ends: every push to one list must pass the
 * same @free_block). */
static inline void
atomr_free_list_push_full (AtomrFreeList **home,
                           GPrivate       *key,
                           gpointer        block,
                           GDestroyNotify  free_block)
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
  else
    free_block (block);
}

/* The same for blocks from g_malloc. */
static inline void
atomr_free_list_push (AtomrFreeList **home,
                      GPrivate       *key,
                      gpointer        block)
{
  atomr_free_list_push_full (home, key, block, g_free);
}

G_END_DECLS
