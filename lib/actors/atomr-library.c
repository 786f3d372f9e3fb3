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
  guint64 needed = 0, span = 0, step = 0;

  if (!atomr_check_buffer (op, arg, buffer, error) ||
      !atomr_check_ld (op, ld_arg, ld, rows, error) ||
      !atomr_check_int32 (op, ld_arg, ld, error))
    return FALSE;
  if (stride < 0 && stride != ATOMR_STRIDE_PACKED)
    return FAIL ("%s: the stride of %s is %" G_GINT64_FORMAT "; it must not be negative",
                 op, arg, stride);
  if (rows > 0 && cols > 0 && batch > 0)
    {
      /* Every product and sum is checked: the numbers come from the caller. */
      if (!atomr_size_mul (op, arg, (guint64) ld, (guint64) (cols - 1), &span, error) ||
          !atomr_size_add (op, arg, span, (guint64) rows, &needed, error))
        return FALSE;
      if (stride == ATOMR_STRIDE_PACKED &&
          !atomr_size_mul (op, "the matrix stride (ld × cols)", (guint64) ld, (guint64) cols,
                           &step, error))
        return FALSE;
      if (stride >= 0)
        step = (guint64) stride;
      if (!atomr_size_mul (op, "the batch extent (stride × (batch - 1))", step,
                           (guint64) (batch - 1), &span, error) ||
          !atomr_size_add (op, arg, needed, span, &needed, error))
        return FALSE;
      stride = (gint64) MIN (step, (guint64) G_MAXINT64);
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
  guint64 needed = 0;

  if (!atomr_check_buffer (op, arg, buffer, error))
    return FALSE;
  if (inc < 1)
    return FAIL ("%s: increment %s is %" G_GINT64_FORMAT "; it must be at least 1", op,
                 inc_arg, inc);
  if (!atomr_check_int32 (op, inc_arg, inc, error))
    return FALSE;
  if (n > 0 && !atomr_size_mul (op, arg, (guint64) (n - 1), (guint64) inc, &needed, error))
    return FALSE;
  return atomr_check_min_elements (op, arg, buffer, n > 0 ? needed + 1 : 0, error);
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

static gboolean
operand_present (const AtomrOperand *operand)
{
  return (operand->buffer != NULL && ATOMR_IS_BUFFER (operand->buffer)) ||
         (operand->tensor != NULL && atomr_tensor_get_buffer (operand->tensor) != NULL);
}

static AtomrBuffer *
operand_buffer (const AtomrOperand *operand)
{
  return operand->tensor ? atomr_tensor_get_buffer (operand->tensor) : operand->buffer;
}

/* Elements [offset, end) of a buffer operand, clamped to the buffer. */
static guint64
operand_end (const AtomrOperand *operand)
{
  guint64 n = atomr_buffer_get_n_elements (operand->buffer);

  if (operand->count == 0 || operand->count > n || operand->offset > n - operand->count)
    return n;
  return operand->offset + operand->count;
}

/* The bytes an operand can touch, as addresses in its allocation's space
 * (device addresses, or host addresses on the host device). */
static void
operand_bytes (const AtomrOperand *operand,
               guintptr           *begin,
               guintptr           *end)
{
  AtomrBuffer *buffer = operand_buffer (operand);
  CUdeviceptr ptr = atomr_buffer_get_ptr (buffer);
  guintptr base = ptr ? (guintptr) ptr : (guintptr) atomr_buffer_get_host_data (buffer);
  guint64 b, e;

  if (operand->tensor)
    atomr_tensor_get_byte_range (operand->tensor, &b, &e);
  else
    {
      gsize size = atomr_dtype_get_size (atomr_buffer_get_dtype (buffer));
      b = MIN (operand->offset, operand_end (operand)) * size;
      e = operand_end (operand) * size;
    }
  /* No memory (a buffer of an older generation fails later as stale):
   * nothing to compare. */
  *begin = base ? base + b : 0;
  *end = base ? base + e : 0;
}

static gboolean
operands_overlap (const AtomrOperand *a,
                  const AtomrOperand *b)
{
  AtomrBuffer *ba, *bb;
  guintptr a0, a1, b0, b1;

  if (!operand_present (a) || !operand_present (b))
    return FALSE;
  if (a->tensor && b->tensor)
    return atomr_tensor_overlaps (a->tensor, b->tensor);
  ba = operand_buffer (a);
  bb = operand_buffer (b);
  if (ba == NULL || bb == NULL)
    return FALSE;
  if (ba == bb && !a->tensor && !b->tensor)
    return a->offset < operand_end (b) && b->offset < operand_end (a);
  if (atomr_buffer_get_device (ba) != atomr_buffer_get_device (bb))
    return FALSE;
  /* Distinct buffers may wrap the same memory: compare addresses. */
  operand_bytes (a, &a0, &a1);
  operand_bytes (b, &b0, &b1);
  return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
}

static gboolean
fail_alias (const gchar        *op,
            const gchar        *kind,
            const AtomrOperand *out,
            const AtomrOperand *other,
            GError            **error)
{
  if (out->count == 0 && other->count == 0 && !out->tensor && !other->tensor &&
      out->buffer == other->buffer)
    return FAIL ("%s: output %s and %s %s are the same buffer; the library reads and writes "
                 "them at the same time, so they must not overlap", op, out->name, kind,
                 other->name);
  if (out->tensor || other->tensor || out->buffer != other->buffer)
    return FAIL ("%s: output %s overlaps %s %s in memory; the library reads and writes them "
                 "at the same time, so they must not overlap", op, out->name, kind, other->name);
  return FAIL ("%s: output %s (elements %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
               ") overlaps %s %s (elements %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
               ") in the same buffer", op, out->name, out->offset, operand_end (out), kind,
               other->name, other->offset, operand_end (other));
}

gboolean
atomr_check_no_alias (const gchar        *op,
                      const AtomrOperand *outputs,
                      guint               n_outputs,
                      const AtomrOperand *inputs,
                      guint               n_inputs,
                      GError            **error)
{
  for (guint i = 0; i < n_outputs; i++)
    {
      if (!operand_present (&outputs[i]))
        continue;
      for (guint j = i + 1; j < n_outputs; j++)
        if (operands_overlap (&outputs[i], &outputs[j]))
          return fail_alias (op, "output", &outputs[i], &outputs[j], error);
      for (guint j = 0; j < n_inputs; j++)
        if (operands_overlap (&outputs[i], &inputs[j]))
          return fail_alias (op, "input", &outputs[i], &inputs[j], error);
    }
  return TRUE;
}

gboolean
atomr_size_mul (const gchar  *op,
                const gchar  *what,
                guint64       a,
                guint64       b,
                guint64      *result,
                GError      **error)
{
  if (!g_uint64_checked_mul (result, a, b))
    return FAIL ("%s: %s overflows (%" G_GUINT64_FORMAT " × %" G_GUINT64_FORMAT ")", op, what, a, b);
  return TRUE;
}

gboolean
atomr_size_add (const gchar  *op,
                const gchar  *what,
                guint64       a,
                guint64       b,
                guint64      *result,
                GError      **error)
{
  if (!g_uint64_checked_add (result, a, b))
    return FAIL ("%s: %s overflows (%" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT ")", op, what, a, b);
  return TRUE;
}
