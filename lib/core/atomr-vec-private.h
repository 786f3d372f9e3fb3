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

G_END_DECLS
