/* atomr-free-list.c — per-thread free lists of fixed-size blocks
 * (see atomr-free-list-private.h)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-free-list-private.h"

gboolean
atomr_free_list_enabled (void)
{
  static gsize once = 0;
  static gboolean enabled;

  if (g_once_init_enter (&once))
    {
#if defined(__SANITIZE_ADDRESS__)
      enabled = FALSE;
#else
      const gchar *slice = g_getenv ("G_SLICE");
      enabled = slice == NULL || strstr (slice, "always-malloc") == NULL;
#endif
      g_once_init_leave (&once, 1);
    }
  return enabled;
}

AtomrFreeList *
atomr_free_list_new (AtomrFreeList **home,
                     GPrivate       *key,
                     GDestroyNotify  free_block)
{
  AtomrFreeList *list = g_new0 (AtomrFreeList, 1);

  list->home = home;
  list->free_block = free_block;
  g_private_set (key, list);
  *home = list;
  return list;
}

void
atomr_free_list_destroy (gpointer data)
{
  AtomrFreeList *list = data;

  /* On the thread that ends: a block freed by a later destructor of that
   * thread starts a new list, never a freed one. */
  if (*list->home == list)
    *list->home = NULL;
  for (guint i = 0; i < list->n; i++)
    list->free_block (list->blocks[i]);
  g_free (list);
}

/* Links @block onto @depot's stack; the count is the caller's. */
static void
depot_link (AtomrFreeDepot *depot,
            gpointer        block)
{
  gpointer head;

  do
    {
      head = g_atomic_pointer_get (&depot->head);
      *(gpointer *) block = head;
    }
  while (!g_atomic_pointer_compare_and_exchange (&depot->head, head, block));
}

void
atomr_free_depot_push (AtomrFreeDepot *depot,
                       gpointer        block)
{
  g_atomic_int_inc (&depot->n);
  depot_link (depot, block);
}

gpointer
atomr_free_list_refill (AtomrFreeList **home,
                        GPrivate       *key,
                        GDestroyNotify  free_block,
                        AtomrFreeDepot *depot)
{
  AtomrFreeList *list = *home;
  gpointer chain = g_atomic_pointer_exchange (&depot->head, NULL);
  gpointer block, next;
  gint taken = 1;

  if (chain == NULL)
    return NULL;
  if (list == NULL)
    list = atomr_free_list_new (home, key, free_block);
  block = chain;
  chain = *(gpointer *) block;
  while (chain != NULL && list->n < ATOMR_FREE_LIST_SIZE)
    {
      next = *(gpointer *) chain;
      list->blocks[list->n++] = chain;
      chain = next;
      taken++;
    }
  g_atomic_int_add (&depot->n, -taken);
  /* More than this thread keeps: the rest goes back, still counted, one
   * exchange per block (rare: the depot holds more than a list only after
   * a burst). */
  while (chain != NULL)
    {
      next = *(gpointer *) chain;
      depot_link (depot, chain);
      chain = next;
    }
  return block;
}
