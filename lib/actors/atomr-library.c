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
atomr_check_int32 (const gchar  *op,
                   const gchar  *arg,
                   gint64        value,
                   GError      **error)
{
  if (value < 0)
    return FAIL ("%s: %s is %" G_GINT64_FORMAT "; it must not be negative", op, arg, value);
  if (value > G_MAXINT)
    return FAIL ("%s: %s is %" G_GINT64_FORMAT "; the library takes at most %d", op, arg,
                 value, G_MAXINT);
  return TRUE;
}

gboolean
atomr_check_matrix (const gchar  *op,
                    const gchar  *arg,
                    AtomrBuffer  *buffer,
                    gint64        rows,
                    gint64        cols,
                    const gchar  *ld_arg,
                    gint64        ld,
                    gint64        stride,
                    gint64        batch,
                    GError      **error)
{
  guint64 needed = 0;

  if (!atomr_check_buffer (op, arg, buffer, error) ||
      !atomr_check_ld (op, ld_arg, ld, rows, error) ||
      !atomr_check_int32 (op, ld_arg, ld, error))
    return FALSE;
  if (stride < 0)
    return FAIL ("%s: the stride of %s is %" G_GINT64_FORMAT "; it must not be negative",
                 op, arg, stride);
  if (rows > 0 && cols > 0 && batch > 0)
    {
      /* Overflow-safe: every factor is below 2^31 except stride and batch,
       * whose product is checked against the largest buffer possible. */
      if (stride > 0 && (guint64) (batch - 1) > G_MAXUINT64 / 4 / (guint64) stride)
        return FAIL ("%s: %s: stride %" G_GINT64_FORMAT " times %" G_GINT64_FORMAT
                     " matrices overflows", op, arg, stride, batch);
      needed = (guint64) ld * (guint64) (cols - 1) + (guint64) rows +
               (guint64) stride * (guint64) (batch - 1);
    }
  if (atomr_buffer_get_n_elements (buffer) < needed)
    {
      g_autofree gchar *several = batch > 1 ? g_strdup_printf ("%" G_GINT64_FORMAT " matrices of ", batch)
                                            : g_strdup ("");
      g_autofree gchar *apart = batch > 1 ? g_strdup_printf (" and stride %" G_GINT64_FORMAT, stride)
                                          : g_strdup ("");
      return FAIL ("%s: %s holds %" G_GUINT64_FORMAT " elements but %s%" G_GINT64_FORMAT " × %"
                   G_GINT64_FORMAT " with %s = %" G_GINT64_FORMAT "%s need %" G_GUINT64_FORMAT,
                   op, arg, atomr_buffer_get_n_elements (buffer), several, rows, cols,
                   ld_arg, ld, apart, needed);
    }
  return TRUE;
}

gboolean
atomr_check_vector (const gchar  *op,
                    const gchar  *arg,
                    AtomrBuffer  *buffer,
                    gint64        n,
                    const gchar  *inc_arg,
                    gint64        inc,
                    GError      **error)
{
  if (!atomr_check_buffer (op, arg, buffer, error))
    return FALSE;
  if (inc < 1)
    return FAIL ("%s: increment %s is %" G_GINT64_FORMAT "; it must be at least 1", op,
                 inc_arg, inc);
  if (!atomr_check_int32 (op, inc_arg, inc, error))
    return FALSE;
  return atomr_check_min_elements (op, arg, buffer,
                                   n > 0 ? 1 + (guint64) (n - 1) * (guint64) inc : 0, error);
}

gboolean
atomr_check_enum (const gchar  *op,
                  const gchar  *arg,
                  gint          value,
                  gint          n_values,
                  const gchar  *type_name,
                  GError      **error)
{
  if (value < 0 || value >= n_values)
    return FAIL ("%s: %s is %d, not a valid %s", op, arg, value, type_name);
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
