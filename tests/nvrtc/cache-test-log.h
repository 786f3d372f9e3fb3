/* cache-test-log.h — counting the kernel cache's warnings in tests
 *
 * The library logs structured (G_LOG_USE_STRUCTURED), which
 * g_test_expect_message() does not see in GLib 2.74: a writer installed
 * before the first message counts warnings starting with "kernel cache:"
 * and passes everything else to the default writer (where warnings abort
 * the test as usual).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>
#include <glib.h>

static gint cache_test_warnings;

static GLogWriterOutput
cache_test_log_writer (GLogLevelFlags   log_level,
                       const GLogField *fields,
                       gsize            n_fields,
                       gpointer         user_data)
{
  if (log_level & G_LOG_LEVEL_WARNING)
    for (gsize i = 0; i < n_fields; i++)
      if (g_str_equal (fields[i].key, "MESSAGE") && fields[i].length < 0
          && g_str_has_prefix (fields[i].value, "kernel cache:"))
        {
          g_atomic_int_inc (&cache_test_warnings);
          if (g_test_verbose ())
            g_test_message ("expected warning: %s", (const gchar *) fields[i].value);
          return G_LOG_WRITER_HANDLED;
        }
  return g_log_writer_default (log_level, fields, n_fields, user_data);
}

static inline void
cache_test_log_init (void)
{
  g_log_set_writer_func (cache_test_log_writer, NULL, NULL);
}

/* Returns the number of cache warnings since the last call. */
static inline gint
cache_test_take_warnings (void)
{
  return g_atomic_int_exchange (&cache_test_warnings, 0);
}
