/* atomr-dtype.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-dtype.h"

static const struct {
  const gchar *name;
  gsize        size;
} dtype_table[ATOMR_DTYPE_LAST] = {
  [ATOMR_DTYPE_F16]  = { "f16", 2 },
  [ATOMR_DTYPE_BF16] = { "bf16", 2 },
  [ATOMR_DTYPE_F32]  = { "f32", 4 },
  [ATOMR_DTYPE_F64]  = { "f64", 8 },
  [ATOMR_DTYPE_C64]  = { "c64", 8 },
  [ATOMR_DTYPE_C128] = { "c128", 16 },
  [ATOMR_DTYPE_I8]   = { "i8", 1 },
  [ATOMR_DTYPE_U8]   = { "u8", 1 },
  [ATOMR_DTYPE_I32]  = { "i32", 4 },
  [ATOMR_DTYPE_U32]  = { "u32", 4 },
  [ATOMR_DTYPE_I64]  = { "i64", 8 },
  [ATOMR_DTYPE_U64]  = { "u64", 8 },
  [ATOMR_DTYPE_F8_E4M3] = { "f8e4m3", 1 },
  [ATOMR_DTYPE_F8_E5M2] = { "f8e5m2", 1 },
};

/**
 * atomr_dtype_get_size:
 * @dtype: an [enum@Atomr.Dtype]
 *
 * Gets the size of one element of a dtype.
 *
 * Returns: the size of one element in bytes, or 0 for a value outside
 *   the enumeration.
 *
 * Since: 0.1
 */
gsize
atomr_dtype_get_size (AtomrDtype dtype)
{
  if ((guint) dtype >= ATOMR_DTYPE_LAST)
    return 0;
  return dtype_table[dtype].size;
}

/**
 * atomr_dtype_get_name:
 * @dtype: an [enum@Atomr.Dtype]
 *
 * Gets the short name of a dtype, as used in traces, cache keys and error messages.
 *
 * Returns: (transfer none): the short name ("f32", "c64", ...), or "invalid".
 *
 * Since: 0.1
 */
const gchar *
atomr_dtype_get_name (AtomrDtype dtype)
{
  if ((guint) dtype >= ATOMR_DTYPE_LAST)
    return "invalid";
  return dtype_table[dtype].name;
}

/**
 * atomr_dtype_from_name:
 * @name: a short name such as "f32"
 * @dtype: (out): the matching [enum@Atomr.Dtype]
 *
 * Looks up a dtype by its short name, the reverse of [func@Atomr.Dtype.get_name].
 *
 * Returns: %TRUE if @name names a dtype.
 *
 * Since: 0.1
 */
gboolean
atomr_dtype_from_name (const gchar *name,
                       AtomrDtype  *dtype)
{
  g_return_val_if_fail (name != NULL, FALSE);

  for (guint i = 0; i < ATOMR_DTYPE_LAST; i++)
    if (strcmp (name, dtype_table[i].name) == 0)
      {
        if (dtype)
          *dtype = (AtomrDtype) i;
        return TRUE;
      }
  return FALSE;
}

/**
 * atomr_dtype_is_complex:
 * @dtype: an [enum@Atomr.Dtype]
 *
 * Tells whether a dtype is complex.
 *
 * Returns: %TRUE for c64 and c128.
 *
 * Since: 0.1
 */
gboolean
atomr_dtype_is_complex (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_C64 || dtype == ATOMR_DTYPE_C128;
}

/**
 * atomr_dtype_is_floating:
 * @dtype: an [enum@Atomr.Dtype]
 *
 * Tells whether a dtype is a floating-point type, real or complex.
 *
 * Returns: %TRUE for the real and complex floating-point types.
 *
 * Since: 0.1
 */
gboolean
atomr_dtype_is_floating (AtomrDtype dtype)
{
  return dtype <= ATOMR_DTYPE_C128 || dtype == ATOMR_DTYPE_F8_E4M3 ||
         dtype == ATOMR_DTYPE_F8_E5M2;
}
