/* atomr-dtype.h — element types of device buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <glib.h>

G_BEGIN_DECLS

/**
 * AtomrDtype:
 * @ATOMR_DTYPE_F16: IEEE 754 half precision (2 bytes).
 * @ATOMR_DTYPE_BF16: bfloat16 (2 bytes).
 * @ATOMR_DTYPE_F32: single precision (4 bytes).
 * @ATOMR_DTYPE_F64: double precision (8 bytes).
 * @ATOMR_DTYPE_C64: complex of two f32 (8 bytes).
 * @ATOMR_DTYPE_C128: complex of two f64 (16 bytes).
 * @ATOMR_DTYPE_I8: signed 8-bit integer.
 * @ATOMR_DTYPE_U8: unsigned 8-bit integer.
 * @ATOMR_DTYPE_I32: signed 32-bit integer.
 * @ATOMR_DTYPE_U32: unsigned 32-bit integer.
 * @ATOMR_DTYPE_I64: signed 64-bit integer.
 * @ATOMR_DTYPE_U64: unsigned 64-bit integer.
 * @ATOMR_DTYPE_F8_E4M3: 8-bit float, 4 exponent and 3 mantissa bits, no
 *   infinities, largest finite 448 (the OCP FP8 "E4M3" format of Hopper).
 * @ATOMR_DTYPE_F8_E5M2: 8-bit float, 5 exponent and 2 mantissa bits (the
 *   top byte of an IEEE half), largest finite 57344.
 *
 * The element type of an [class@Atomr.Buffer].
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_DTYPE_F16,
  ATOMR_DTYPE_BF16,
  ATOMR_DTYPE_F32,
  ATOMR_DTYPE_F64,
  ATOMR_DTYPE_C64,
  ATOMR_DTYPE_C128,
  ATOMR_DTYPE_I8,
  ATOMR_DTYPE_U8,
  ATOMR_DTYPE_I32,
  ATOMR_DTYPE_U32,
  ATOMR_DTYPE_I64,
  ATOMR_DTYPE_U64,
  ATOMR_DTYPE_F8_E4M3,
  ATOMR_DTYPE_F8_E5M2,
} AtomrDtype;

/**
 * ATOMR_DTYPE_LAST:
 *
 * One past the last valid [enum@Atomr.Dtype], for range checks and loops.
 *
 * Since: 0.1
 */
#define ATOMR_DTYPE_LAST (ATOMR_DTYPE_F8_E5M2 + 1)

ATOMR_AVAILABLE_IN_ALL
gsize        atomr_dtype_get_size     (AtomrDtype dtype);
ATOMR_AVAILABLE_IN_ALL
const gchar *atomr_dtype_get_name     (AtomrDtype dtype);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_dtype_from_name    (const gchar *name,
                                       AtomrDtype  *dtype);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_dtype_is_complex   (AtomrDtype dtype);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_dtype_is_floating  (AtomrDtype dtype);

G_END_DECLS
