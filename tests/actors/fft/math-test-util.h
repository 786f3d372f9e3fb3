/* math-test-util.h — helpers shared by the GPU tests of the FFT, RNG and
 * solver actors: waiting for replies, moving double-complex host arrays in
 * and out of buffers of any floating dtype, error norms.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <complex.h>
#include <math.h>
#include <string.h>

#include "atomr.h"

static inline void
math_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static inline GAsyncResult *
math_wait (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

/* Runs CALL (ending in "math_done, &res") and FINISH on its result. */
#define MATH_RUN(finish, actor, error, call)                     \
  ({                                                             \
    GAsyncResult *res = NULL;                                    \
    gboolean ok_;                                                \
    call;                                                        \
    ok_ = finish (actor, math_wait (&res), error);               \
    g_object_unref (res);                                        \
    ok_;                                                         \
  })

/* The GPU, or NULL when there is none (any other failure is fatal). */
static inline AtomrDevice *
math_get_device (void)
{
  g_autoptr(GError) error = NULL;
  AtomrDevice *device = atomr_device_get (0, &error);

  if (device == NULL)
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
  return device;
}

#define MATH_REQUIRE_DEVICE(device)          \
  G_STMT_START {                             \
    if ((device) == NULL)                    \
      {                                      \
        g_test_skip ("no CUDA device");      \
        return;                              \
      }                                      \
  } G_STMT_END

static inline AtomrBuffer *
math_buffer (AtomrDevice *device,
             AtomrDtype   dtype,
             guint64      n)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *b = atomr_buffer_new (device, dtype, n, &error);
  g_assert_no_error (error);
  return b;
}

/* Uploads @n values (real parts only for real dtypes). */
static inline void
math_upload (AtomrBuffer          *buffer,
             const double complex *data,
             gsize                 n)
{
  AtomrDtype dtype = atomr_buffer_get_dtype (buffer);
  gsize size = atomr_dtype_get_size (dtype);
  g_autofree guint8 *bytes = g_malloc0 (atomr_buffer_get_byte_size (buffer));
  g_autoptr(GBytes) gbytes = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpuint (n, <=, atomr_buffer_get_n_elements (buffer));
  for (gsize i = 0; i < n; i++)
    {
      guint8 *p = bytes + i * size;
      switch (dtype)
        {
        case ATOMR_DTYPE_F32: *(float *) p = (float) creal (data[i]); break;
        case ATOMR_DTYPE_F64: *(double *) p = creal (data[i]); break;
        case ATOMR_DTYPE_C64: ((float *) p)[0] = (float) creal (data[i]);
                              ((float *) p)[1] = (float) cimag (data[i]); break;
        case ATOMR_DTYPE_C128: ((double *) p)[0] = creal (data[i]);
                               ((double *) p)[1] = cimag (data[i]); break;
        case ATOMR_DTYPE_I32: *(gint32 *) p = (gint32) creal (data[i]); break;
        case ATOMR_DTYPE_I64: *(gint64 *) p = (gint64) creal (data[i]); break;
        case ATOMR_DTYPE_U32: *(guint32 *) p = (guint32) creal (data[i]); break;
        default: g_assert_not_reached ();
        }
    }
  gbytes = g_bytes_new_take (g_steal_pointer (&bytes), atomr_buffer_get_byte_size (buffer));
  g_assert_true (atomr_buffer_upload_sync (buffer, gbytes, NULL, &error));
  g_assert_no_error (error);
}

/* Downloads the whole buffer as double complex values. */
static inline double complex *
math_download (AtomrBuffer *buffer)
{
  AtomrDtype dtype = atomr_buffer_get_dtype (buffer);
  gsize size = atomr_dtype_get_size (dtype), n = atomr_buffer_get_n_elements (buffer);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  const guint8 *p;
  double complex *out;

  g_assert_no_error (error);
  g_assert_nonnull (bytes);
  p = g_bytes_get_data (bytes, NULL);
  out = g_new0 (double complex, MAX (n, 1));
  for (gsize i = 0; i < n; i++, p += size)
    switch (dtype)
      {
      case ATOMR_DTYPE_F32: out[i] = *(const float *) p; break;
      case ATOMR_DTYPE_F64: out[i] = *(const double *) p; break;
      case ATOMR_DTYPE_C64: out[i] = CMPLX (((const float *) p)[0], ((const float *) p)[1]); break;
      case ATOMR_DTYPE_C128: out[i] = CMPLX (((const double *) p)[0], ((const double *) p)[1]); break;
      case ATOMR_DTYPE_I32: out[i] = *(const gint32 *) p; break;
      case ATOMR_DTYPE_I64: out[i] = (double) *(const gint64 *) p; break;
      case ATOMR_DTYPE_U32: out[i] = *(const guint32 *) p; break;
      default: g_assert_not_reached ();
      }
  return out;
}

static inline double complex
math_random (GRand    *rand,
             gboolean  complex_value)
{
  double re = g_rand_double_range (rand, -1, 1);
  return complex_value ? CMPLX (re, g_rand_double_range (rand, -1, 1)) : CMPLX (re, 0);
}

/* ‖a − b‖₂ / ‖b‖₂ */
static inline double
math_rel_error (const double complex *a,
                const double complex *b,
                gsize                 n)
{
  double num = 0, den = 0;

  for (gsize i = 0; i < n; i++)
    {
      num += pow (cabs (a[i] - b[i]), 2);
      den += pow (cabs (b[i]), 2);
    }
  return sqrt (num) / MAX (sqrt (den), 1e-300);
}

static inline double
math_tolerance (AtomrDtype dtype)
{
  return (dtype == ATOMR_DTYPE_F32 || dtype == ATOMR_DTYPE_C64) ? 2e-6 : 1e-13;
}

static inline gboolean
math_is_complex (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_C64 || dtype == ATOMR_DTYPE_C128;
}
