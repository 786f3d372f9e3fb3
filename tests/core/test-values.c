/* test-values.c — element encodings and buffer shapes (no GPU)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>
#include "core/atomr-device-private.h"
#include "core/atomr-stream-private.h"

static guint16
pack16 (AtomrDtype dtype,
        gdouble    value)
{
  g_autoptr(GBytes) bytes = atomr_dtype_pack (dtype, value, 0.0);
  guint16 v;

  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 2);
  memcpy (&v, g_bytes_get_data (bytes, NULL), 2);
  return v;
}

static guint8
pack8 (AtomrDtype dtype,
       gdouble    value)
{
  g_autoptr(GBytes) bytes = atomr_dtype_pack (dtype, value, 0.0);

  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 1);
  return *(const guint8 *) g_bytes_get_data (bytes, NULL);
}

/* Values just above a tie of the target format, by less than a float can
 * hold: rounding to float first makes them exact ties, which then round
 * to even — the wrong way.  One rounding from the double goes up. */
static void
test_round_once (void)
{
  /* f16: 1 + 2^-11 is the tie between 1.0 (0x3c00) and 1 + 2^-10. */
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, 1.0 + ldexp (1, -11) + ldexp (1, -40)), ==, 0x3c01);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, 1.0 + ldexp (1, -11)), ==, 0x3c00);       /* tie: even */
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, -(1.0 + ldexp (1, -11) + ldexp (1, -40))), ==, 0xbc01);
  /* subnormal tie: 2^-25 is half the smallest subnormal */
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, ldexp (1, -25) + ldexp (1, -60)), ==, 0x0001);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, ldexp (1, -25)), ==, 0x0000);
  /* bf16: 1 + 2^-8 is the tie between 1.0 and 1 + 2^-7 */
  g_assert_cmphex (pack16 (ATOMR_DTYPE_BF16, 1.0 + ldexp (1, -8) + ldexp (1, -40)), ==, 0x3f81);
  /* fp8 E5M2: 1 + 2^-3 is the tie between 1.0 and 1.25 */
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E5M2, 1.0 + ldexp (1, -3) + ldexp (1, -40)), ==, 0x3d);
  /* fp8 E4M3: 1 + 2^-4 is the tie between 1.0 and 1.125 */
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E4M3, 1.0 + ldexp (1, -4) + ldexp (1, -40)), ==, 0x39);
}

static void
test_special_values (void)
{
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, 65504.0), ==, 0x7bff);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, 65519.99), ==, 0x7bff);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, 65520.0), ==, 0x7c00);                     /* rounds to inf */
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, -INFINITY), ==, 0xfc00);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, NAN) & 0x7e00, ==, 0x7e00);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, -0.0), ==, 0x8000);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, 1e-300), ==, 0x0000);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, 1e300), ==, 0x7c00);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, ldexp (1, -14)), ==, 0x0400);               /* smallest normal */
  g_assert_cmphex (pack16 (ATOMR_DTYPE_BF16, 1.0), ==, 0x3f80);
  g_assert_cmphex (pack16 (ATOMR_DTYPE_BF16, 1e39), ==, 0x7f80);
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E4M3, 448.0), ==, 0x7e);
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E4M3, 1e6), ==, 0x7e);                         /* saturates */
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E4M3, -1e6), ==, 0xfe);
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E4M3, NAN), ==, 0x7f);
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E4M3, ldexp (1, -9)), ==, 0x01);
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E5M2, 57344.0), ==, 0x7b);
  g_assert_cmphex (pack8 (ATOMR_DTYPE_F8_E5M2, 1e6), ==, 0x7c);                         /* inf */
}

/* Every f16 value is packed back to itself, and midpoints go to even. */
static void
test_f16_exhaustive (void)
{
  for (guint32 h = 0; h < 0x7c00; h++)
    {
      gdouble v, next;
      guint32 e = h >> 10, m = h & 0x3ff;

      v = e ? ldexp (1024 + m, (gint) e - 25) : ldexp (m, -24);
      g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, v), ==, h);
      g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, -v), ==, h | 0x8000);
      if (h + 1 < 0x7c00)
        {
          guint32 e1 = (h + 1) >> 10, m1 = (h + 1) & 0x3ff;
          next = e1 ? ldexp (1024 + m1, (gint) e1 - 25) : ldexp (m1, -24);
          g_assert_cmphex (pack16 (ATOMR_DTYPE_F16, (v + next) / 2), ==, (h & 1) ? h + 1 : h);
        }
    }
}

/* 274177 × 67280421310721 = 2^64 + 1: the product wraps to 1 in 64 bits,
 * which equals a one-element buffer's count.  The unchecked multiply
 * accepted that shape. */
static void
test_shape_overflow (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) one = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1, &error);
  g_autoptr(AtomrBuffer) six = atomr_buffer_new (device, ATOMR_DTYPE_F32, 6, &error);
  const gint64 wrapping[] = { 274177, G_GINT64_CONSTANT (67280421310721) };
  const gint64 fine[] = { 2, 3 };
  const gint64 huge[] = { G_MAXINT64, G_MAXINT64, 2 };
  guint n_dims = 99;

  g_assert_no_error (error);
  g_assert_false (atomr_buffer_set_shape (one, wrapping, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "overflows"));
  g_clear_error (&error);
  g_assert_null (atomr_buffer_get_shape (one, &n_dims));
  g_assert_cmpuint (n_dims, ==, 0);

  g_assert_false (atomr_buffer_set_shape (six, huge, 3, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (atomr_buffer_set_shape (six, NULL, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_true (atomr_buffer_set_shape (six, fine, 2, &error));
  g_assert_no_error (error);
  g_assert_nonnull (atomr_buffer_get_shape (six, &n_dims));
  g_assert_cmpuint (n_dims, ==, 2);
}

/* Pinned staging: 512 MiB + 4 B used to round to 1 GiB of pinned memory
 * (powers of two without a cap).  The host test device's staging is
 * plain (untouched, so cheap) heap memory with the same size classes. */
static void
test_pinned_size_classes (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  const gsize sizes[] = { 1, 4096, 4097, 1u << 20, (64u << 20), (64u << 20) + 1, (512u << 20) + 4 };

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      AtomrPinned *pinned = atomr_pinned_acquire (device, sizes[i], &error);

      g_assert_no_error (error);
      g_assert_nonnull (pinned);
      g_assert_cmpuint (pinned->size, >=, sizes[i]);
      if (sizes[i] > PINNED_POW2_LIMIT)
        g_assert_cmpuint (pinned->size - sizes[i], <, PINNED_LARGE_STEP);
      else
        g_assert_cmpuint (pinned->size, <, MAX (2 * sizes[i], 4096 + 1));
      atomr_pinned_release (pinned);
    }
  g_assert_null (atomr_pinned_acquire (device, G_MAXSIZE - 1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_OUT_OF_MEMORY);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/values/dtype/round-once", test_round_once);
  g_test_add_func ("/values/dtype/special", test_special_values);
  g_test_add_func ("/values/dtype/f16-exhaustive", test_f16_exhaustive);
  g_test_add_func ("/values/buffer/shape-overflow", test_shape_overflow);
  g_test_add_func ("/values/buffer/pinned-size-classes", test_pinned_size_classes);
  return g_test_run ();
}
