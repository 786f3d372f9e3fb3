/* core-test-util.h — what the core tests (envelope, reply, runtime) share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib-object.h>
#include <gio/gio.h>

/* A GAsyncReadyCallback keeping the result in *(GAsyncResult **) user_data. */
static inline void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

/* Iterates the thread-default context until *cond is non-NULL. */
static inline void
iterate_until (gpointer *cond)
{
  while (*cond == NULL)
    g_main_context_iteration (NULL, TRUE);
}

/* Iterates the thread-default context while anything is dispatched. */
static inline void
iterate_pending (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* @n bytes of a pattern that depends on @seed. */
static inline GBytes *
pattern_bytes (gsize n, guint8 seed)
{
  guint8 *data = g_malloc (n);
  for (gsize i = 0; i < n; i++)
    data[i] = (guint8) (seed + i * 7);
  return g_bytes_new_take (data, n);
}
