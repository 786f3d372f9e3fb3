/* atomr-library.c — validation and status mapping shared by library actors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "actors/atomr-library-private.h"

#define FAIL(...) \
  (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)

gboolean
atomr_check_buffer (const gchar  *op,
                    const gchar  *arg,
                    AtomrBuffer  *buffer,
                    GError      **error)
{
  if (!ATOMR_IS_BUFFER (buffer))
    return FAIL ("%s: %s must be an AtomrBuffer", op, arg);
  return TRUE;
}

gboolean
atomr_check_dtype (const gchar  *op,
                   const gchar  *arg,
                   AtomrBuffer  *buffer,
                   AtomrDtype    expected,
                   GError      **error)
{
  if (!atomr_check_buffer (op, arg, buffer, error))
    return FALSE;
  if (atomr_buffer_get_dtype (buffer) != expected)
    return FAIL ("%s: %s has dtype %s, expected %s", op, arg,
                 atomr_dtype_get_name (atomr_buffer_get_dtype (buffer)),
                 atomr_dtype_get_name (expected));
  return TRUE;
}

gboolean
atomr_check_dtype_in (const gchar      *op,
                      const gchar      *arg,
                      AtomrBuffer      *buffer,
                      const AtomrDtype *allowed,
                      guint             n,
                      GError          **error)
{
  g_autoptr(GString) names = g_string_new (NULL);

  if (!atomr_check_buffer (op, arg, buffer, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      if (atomr_buffer_get_dtype (buffer) == allowed[i])
        return TRUE;
      g_string_append_printf (names, "%s%s", i ? ", " : "", atomr_dtype_get_name (allowed[i]));
    }
  return FAIL ("%s: %s has dtype %s; supported: %s", op, arg,
               atomr_dtype_get_name (atomr_buffer_get_dtype (buffer)), names->str);
}

gboolean
atomr_check_same_dtype (const gchar  *op,
                        const gchar  *arg_a,
                        AtomrBuffer  *a,
                        const gchar  *arg_b,
                        AtomrBuffer  *b,
                        GError      **error)
{
  if (!atomr_check_buffer (op, arg_a, a, error) || !atomr_check_buffer (op, arg_b, b, error))
    return FALSE;
  if (atomr_buffer_get_dtype (a) != atomr_buffer_get_dtype (b))
    return FAIL ("%s: %s has dtype %s but %s has dtype %s", op, arg_a,
                 atomr_dtype_get_name (atomr_buffer_get_dtype (a)), arg_b,
                 atomr_dtype_get_name (atomr_buffer_get_dtype (b)));
  return TRUE;
}

gboolean
atomr_check_min_elements (const gchar  *op,
                          const gchar  *arg,
                          AtomrBuffer  *buffer,
                          guint64       needed,
                          GError      **error)
{
  if (!atomr_check_buffer (op, arg, buffer, error))
    return FALSE;
  if (atomr_buffer_get_n_elements (buffer) < needed)
    return FAIL ("%s: %s holds %" G_GUINT64_FORMAT " elements but the arguments need %"
                 G_GUINT64_FORMAT, op, arg, atomr_buffer_get_n_elements (buffer), needed);
  return TRUE;
}

gboolean
atomr_check_positive (const gchar  *op,
                      const gchar  *arg,
                      gint64        value,
                      GError      **error)
{
  if (value <= 0)
    return FAIL ("%s: %s is %" G_GINT64_FORMAT "; it must be positive", op, arg, value);
  return TRUE;
}

gboolean
atomr_check_non_negative (const gchar  *op,
                          const gchar  *arg,
                          gint64        value,
                          GError      **error)
{
  if (value < 0)
    return FAIL ("%s: %s is %" G_GINT64_FORMAT "; it must not be negative", op, arg, value);
  return TRUE;
}

gboolean
atomr_check_ld (const gchar  *op,
                const gchar  *arg,
                gint64        ld,
                gint64        rows,
                GError      **error)
{
  if (ld < MAX (1, rows))
    return FAIL ("%s: leading dimension %s is %" G_GINT64_FORMAT "; it must be at least %"
                 G_GINT64_FORMAT, op, arg, ld, MAX (1, rows));
  return TRUE;
}

gboolean
atomr_check_distinct (const gchar  *op,
                      const gchar  *arg_a,
                      AtomrBuffer  *a,
                      const gchar  *arg_b,
                      AtomrBuffer  *b,
                      GError      **error)
{
  if (a == b)
    return FAIL ("%s: %s and %s must be different buffers", op, arg_a, arg_b);
  return TRUE;
}

gboolean
atomr_library_check (gboolean      ok,
                     const gchar  *library,
                     const gchar  *call,
                     const gchar  *status_name,
                     gint          status,
                     gboolean      out_of_memory,
                     gboolean      not_supported,
                     GError      **error)
{
  if (ok)
    return TRUE;
  g_set_error (error, ATOMR_ERROR,
               out_of_memory ? ATOMR_ERROR_OUT_OF_MEMORY
               : not_supported ? ATOMR_ERROR_NOT_SUPPORTED : ATOMR_ERROR_LIBRARY,
               "%s: %s failed with %s (%d)", library, call,
               status_name ? status_name : "unknown status", status);
  return FALSE;
}

gboolean
atomr_check_matrix (const gchar  *op,
                    const gchar  *arg,
                    AtomrBuffer  *buffer,
                    gint64        rows,
                    gint64        cols,
                    const gchar  *ld_arg,
                    gint64        ld,
                    gint64        batch,
                    GError      **error)
{
  guint64 needed;
  gchar prefix[48] = "";

  if (!atomr_check_buffer (op, arg, buffer, error) ||
      !atomr_check_ld (op, ld_arg, ld, rows, error))
    return FALSE;
  if (rows <= 0 || cols <= 0 || batch <= 0)
    return TRUE;   /* the dimensions themselves are checked by the caller */
  needed = (guint64) (batch - 1) * (guint64) ld * (guint64) cols +
           (guint64) ld * (guint64) (cols - 1) + (guint64) rows;
  if (batch > 1)
    g_snprintf (prefix, sizeof prefix, "%" G_GINT64_FORMAT " matrices of ", batch);
  if (atomr_buffer_get_n_elements (buffer) < needed)
    return FAIL ("%s: %s holds %" G_GUINT64_FORMAT " elements but %s%" G_GINT64_FORMAT " × %"
                 G_GINT64_FORMAT " with %s = %" G_GINT64_FORMAT " need %" G_GUINT64_FORMAT,
                 op, arg, atomr_buffer_get_n_elements (buffer), prefix,
                 rows, cols, ld_arg, ld, needed);
  return TRUE;
}

gboolean
atomr_check_int32_range (const gchar  *op,
                         const gchar  *arg,
                         gint64        value,
                         GError      **error)
{
  if (value < 1 || value > G_MAXINT32)
    return FAIL ("%s: %s is %" G_GINT64_FORMAT "; it must be between 1 and %d", op, arg,
                 value, G_MAXINT32);
  return TRUE;
}
