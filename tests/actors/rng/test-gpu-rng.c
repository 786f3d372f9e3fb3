/* test-gpu-rng.c — AtomrRngActor on the GPU: sample moments of every
 * distribution from every generator kind within statistical bounds,
 * reproducibility with a fixed seed and offset, and a device reset.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "math-test-util.h"

#define N (1 << 20)

static AtomrDevice *device;

static const AtomrRngKind kinds[] = {
  ATOMR_RNG_XORWOW, ATOMR_RNG_MRG32K3A, ATOMR_RNG_PHILOX, ATOMR_RNG_MTGP32, ATOMR_RNG_SOBOL,
};
static const gchar *kind_names[] = { "xorwow", "mrg32k3a", "philox", "mtgp32", "sobol" };

static void
fill (AtomrRngActor        *rng,
      AtomrBuffer          *buffer,
      AtomrRngDistribution  dist,
      double                p1,
      double                p2)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (MATH_RUN (atomr_rng_actor_fill_finish, rng, &error,
                           atomr_rng_actor_fill_async (rng, buffer, dist, p1, p2, NULL, math_done, &res)));
  g_assert_no_error (error);
}

/* Fills @buffer and checks that its sample mean is within 6 standard
 * errors of @mean and its sample variance within @var_tol (relative) of
 * @var.  For the quasi-random Sobol sequence these bounds are loose. */
static void
check_moments (AtomrRngActor        *rng,
               AtomrBuffer          *buffer,
               AtomrRngDistribution  dist,
               double                p1,
               double                p2,
               double                mean,
               double                var,
               double                var_tol,
               double                scale)
{
  g_autofree double complex *x = NULL;
  double sum = 0, sq = 0, m, v;
  gsize n = atomr_buffer_get_n_elements (buffer);

  fill (rng, buffer, dist, p1, p2);
  x = math_download (buffer);
  for (gsize i = 0; i < n; i++)
    {
      double value = creal (x[i]) * scale;
      sum += value;
      sq += value * value;
    }
  m = sum / n;
  v = sq / n - m * m;
  g_test_message ("%s %s %s: mean %.6g (want %.6g), variance %.6g (want %.6g)",
                  kind_names[atomr_rng_actor_get_kind (rng)],
                  atomr_dtype_get_name (atomr_buffer_get_dtype (buffer)),
                  dist == ATOMR_RNG_UNIFORM ? "uniform" : dist == ATOMR_RNG_NORMAL ? "normal"
                  : dist == ATOMR_RNG_LOG_NORMAL ? "log-normal" : "poisson", m, mean, v, var);
  g_assert_cmpfloat (fabs (m - mean), <, 6 * sqrt (var / n));
  g_assert_cmpfloat (fabs (v - var), <, var_tol * var);
}

static void
test_moments (void)
{
  MATH_REQUIRE_DEVICE (device);

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrRngActor) rng = atomr_rng_actor_new (device, kinds[k], &error);
      g_autoptr(AtomrBuffer) f32 = math_buffer (device, ATOMR_DTYPE_F32, N);
      g_autoptr(AtomrBuffer) f64 = math_buffer (device, ATOMR_DTYPE_F64, N);
      g_autoptr(AtomrBuffer) u32 = math_buffer (device, ATOMR_DTYPE_U32, N);
      double ln_mean = exp (0.25 / 2), ln_var = (exp (0.25) - 1) * exp (0.25);

      g_assert_no_error (error);
      atomr_rng_actor_set_seed (rng, 1234 + k);

      check_moments (rng, f32, ATOMR_RNG_UNIFORM, 0, 0, 0.5, 1.0 / 12, 0.02, 1);
      check_moments (rng, f64, ATOMR_RNG_UNIFORM, 0, 0, 0.5, 1.0 / 12, 0.02, 1);
      check_moments (rng, u32, ATOMR_RNG_UNIFORM, 0, 0, 0.5, 1.0 / 12, 0.02, 1.0 / 4294967296.0);
      check_moments (rng, f32, ATOMR_RNG_NORMAL, 2, 3, 2, 9, 0.02, 1);
      check_moments (rng, f64, ATOMR_RNG_NORMAL, -1, 0.5, -1, 0.25, 0.02, 1);
      check_moments (rng, f32, ATOMR_RNG_LOG_NORMAL, 0, 0.5, ln_mean, ln_var, 0.05, 1);
      check_moments (rng, f64, ATOMR_RNG_LOG_NORMAL, 0, 0.5, ln_mean, ln_var, 0.05, 1);
      check_moments (rng, u32, ATOMR_RNG_POISSON, 4.5, 0, 4.5, 4.5, 0.03, 1);
    }
}

static GBytes *
draw (AtomrRngActor *rng,
      AtomrBuffer   *buffer)
{
  g_autoptr(GError) error = NULL;
  GBytes *bytes;

  fill (rng, buffer, ATOMR_RNG_NORMAL, 0, 1);
  bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);
  return bytes;
}

static void
test_reproducible (void)
{
  MATH_REQUIRE_DEVICE (device);

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrRngActor) a = atomr_rng_actor_new (device, kinds[k], &error);
      g_autoptr(AtomrRngActor) b = atomr_rng_actor_new (device, kinds[k], &error);
      g_autoptr(AtomrBuffer) buf = math_buffer (device, ATOMR_DTYPE_F32, 4096);
      g_autoptr(GBytes) a1 = NULL, a2 = NULL, a3 = NULL, b1 = NULL, b2 = NULL, c1 = NULL;

      g_assert_no_error (error);
      atomr_rng_actor_set_seed (a, 42);
      atomr_rng_actor_set_seed (b, 42);
      a1 = draw (a, buf);
      a2 = draw (a, buf);
      b1 = draw (b, buf);
      b2 = draw (b, buf);
      /* Same seed, same sequence; the sequence moves on between fills. */
      g_assert_true (g_bytes_equal (a1, b1));
      g_assert_true (g_bytes_equal (a2, b2));
      g_assert_false (g_bytes_equal (a1, a2));
      /* Setting the seed again restarts the sequence. */
      atomr_rng_actor_set_seed (a, 42);
      a3 = draw (a, buf);
      g_assert_true (g_bytes_equal (a1, a3));

      if (kinds[k] == ATOMR_RNG_SOBOL)
        {
          /* No seed: an offset moves the start of the sequence. */
          atomr_rng_actor_set_offset (b, 4096);
          c1 = draw (b, buf);
          g_assert_false (g_bytes_equal (a1, c1));
        }
      else if (kinds[k] != ATOMR_RNG_MTGP32)
        {
          g_autoptr(GBytes) c2 = NULL;
          atomr_rng_actor_set_seed (b, 43);
          c1 = draw (b, buf);
          g_assert_false (g_bytes_equal (a1, c1));
          /* A fixed offset is reproducible too. */
          atomr_rng_actor_set_seed (b, 42);
          atomr_rng_actor_set_offset (b, 1000);
          c1 = (g_bytes_unref (c1), draw (b, buf));
          atomr_rng_actor_set_offset (b, 1000);
          c2 = draw (b, buf);
          g_assert_true (g_bytes_equal (c1, c2));
          g_assert_false (g_bytes_equal (a1, c1));
        }
      else
        {
          atomr_rng_actor_set_seed (b, 43);
          c1 = draw (b, buf);
          g_assert_false (g_bytes_equal (a1, c1));
        }
    }
}

/* ------------------------------------------------------------------ */
/* Issue 11: the distributions and dtypes the RNG actor adds to cuRAND   */

static double *
download_doubles (AtomrBuffer *buffer)
{
  AtomrDtype dtype = atomr_buffer_get_dtype (buffer);
  gsize n = atomr_buffer_get_n_elements (buffer), size = atomr_dtype_get_size (dtype);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  const guint8 *p;
  double *out = g_new (double, MAX (n, 1));

  g_assert_no_error (error);
  p = g_bytes_get_data (bytes, NULL);
  for (gsize i = 0; i < n; i++, p += size)
    switch (dtype)
      {
      case ATOMR_DTYPE_F32: { float v; memcpy (&v, p, 4); out[i] = v; } break;
      case ATOMR_DTYPE_F64: memcpy (&out[i], p, 8); break;
      case ATOMR_DTYPE_F16: { _Float16 v; memcpy (&v, p, 2); out[i] = v; } break;
      case ATOMR_DTYPE_BF16: { guint32 u = 0; float v; memcpy ((guint8 *) &u + 2, p, 2); memcpy (&v, &u, 4); out[i] = v; } break;
      case ATOMR_DTYPE_U8: out[i] = *p; break;
      case ATOMR_DTYPE_I32: { gint32 v; memcpy (&v, p, 4); out[i] = v; } break;
      case ATOMR_DTYPE_I64: { gint64 v; memcpy (&v, p, 8); out[i] = (double) v; } break;
      case ATOMR_DTYPE_U32: { guint32 v; memcpy (&v, p, 4); out[i] = v; } break;
      default: g_assert_not_reached ();
      }
  return out;
}

typedef struct {
  const gchar          *what;
  AtomrDtype            dtype;
  guint64               n;
  AtomrRngDistribution  dist;
  double                p1, p2;
  double                mean, var;   /* of the distribution */
  double                lo, hi;      /* every value in [lo, hi] ([lo, hi) for ranges) */
  double                var_tol;     /* relative */
} DistCase;

static void
check_case (AtomrRngActor *rng, const DistCase *c)
{
  g_autoptr(AtomrBuffer) buf = math_buffer (device, c->dtype, c->n);
  g_autofree double *x = NULL;
  double sum = 0, sq = 0, m, v, se;

  fill (rng, buf, c->dist, c->p1, c->p2);
  x = download_doubles (buf);
  for (guint64 i = 0; i < c->n; i++)
    {
      /* uniform-range excludes its upper bound */
      if (!(x[i] >= c->lo && (c->dist == ATOMR_RNG_UNIFORM_RANGE ? x[i] < c->hi : x[i] <= c->hi)))
        g_error ("%s: element %" G_GUINT64_FORMAT " is %.17g, outside [%g, %g%c", c->what, i, x[i], c->lo,
                 c->hi, c->dist == ATOMR_RNG_UNIFORM_RANGE ? ')' : ']');
      sum += x[i];
      sq += x[i] * x[i];
    }
  m = sum / c->n;
  v = sq / c->n - m * m;
  se = sqrt (c->var / c->n);
  g_test_message ("%s: mean %.6g (want %.6g ± %.2g), variance %.6g (want %.6g)", c->what, m, c->mean,
                  6 * se, v, c->var);
  /* 6 standard errors, plus the rounding of a half-precision dtype */
  g_assert_cmpfloat (fabs (m - c->mean), <=, 6 * se + (c->dtype == ATOMR_DTYPE_F16 ? 2e-3 :
                                                       c->dtype == ATOMR_DTYPE_BF16 ? 1e-2 : 0));
  g_assert_cmpfloat (fabs (v - c->var), <=, c->var_tol * c->var);
}

static void
test_distributions (void)
{
  const guint64 big = 4096 * 4096;   /* a 4096 × 4096 matrix */
  const DistCase cases[] = {
    { "exponential(2) f32 4096²", ATOMR_DTYPE_F32, big, ATOMR_RNG_EXPONENTIAL, 2, 0, 0.5, 0.25, 0, 1e3, 0.01 },
    { "exponential(0.5) f64", ATOMR_DTYPE_F64, 1 << 20, ATOMR_RNG_EXPONENTIAL, 0.5, 0, 2, 4, 0, 1e4, 0.03 },
    { "exponential(1) bf16", ATOMR_DTYPE_BF16, 1 << 20, ATOMR_RNG_EXPONENTIAL, 1, 0, 1, 1, 0, 1e3, 0.05 },
    { "uniform[-3, 5) f32", ATOMR_DTYPE_F32, 1 << 20, ATOMR_RNG_UNIFORM_RANGE, -3, 5, 1, 64.0 / 12, -3, 5, 0.01 },
    { "uniform[10, 11) f64", ATOMR_DTYPE_F64, 1 << 20, ATOMR_RNG_UNIFORM_RANGE, 10, 11, 10.5, 1.0 / 12, 10, 11, 0.01 },
    { "uniform[-1, 1) f16", ATOMR_DTYPE_F16, 1 << 20, ATOMR_RNG_UNIFORM_RANGE, -1, 1, 0, 1.0 / 3, -1, 1, 0.02 },
    { "integer[-10, 10) i32", ATOMR_DTYPE_I32, 1 << 20, ATOMR_RNG_INTEGER, -10, 10, -0.5, (400.0 - 1) / 12, -10, 9, 0.01 },
    { "integer[5, 9) i64", ATOMR_DTYPE_I64, 1 << 20, ATOMR_RNG_INTEGER, 5, 9, 6.5, (16.0 - 1) / 12, 5, 8, 0.01 },
    { "integer[0, 2^32) u32", ATOMR_DTYPE_U32, 1 << 20, ATOMR_RNG_INTEGER, 0, 4294967296.0, 2147483647.5,
      (18446744073709551616.0 - 1) / 12, 0, 4294967295.0, 0.01 },
    { "bernoulli(0.3) u8", ATOMR_DTYPE_U8, 1 << 20, ATOMR_RNG_BERNOULLI, 0.3, 0, 0.3, 0.21, 0, 1, 0.01 },
    { "bernoulli(0.7) f32", ATOMR_DTYPE_F32, 1 << 20, ATOMR_RNG_BERNOULLI, 0.7, 0, 0.7, 0.21, 0, 1, 0.01 },
    { "normal(1, 2) f16, odd count", ATOMR_DTYPE_F16, 100001, ATOMR_RNG_NORMAL, 1, 2, 1, 4, -100, 100, 0.03 },
    { "log-normal(0, 0.5) bf16", ATOMR_DTYPE_BF16, 1 << 20, ATOMR_RNG_LOG_NORMAL, 0, 0.5,
      exp (0.125), (exp (0.25) - 1) * exp (0.25), 0, 1e3, 0.05 },
    { "uniform bf16", ATOMR_DTYPE_BF16, 1 << 20, ATOMR_RNG_UNIFORM, 0, 0, 0.5, 1.0 / 12, 0, 1, 0.02 },
  };
  g_autoptr(GError) error = NULL;

  MATH_REQUIRE_DEVICE (device);
  for (guint k = 0; k < 2; k++)
    {
      g_autoptr(AtomrRngActor) rng = atomr_rng_actor_new (device, k ? ATOMR_RNG_XORWOW : ATOMR_RNG_PHILOX,
                                                          &error);
      g_assert_no_error (error);
      for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
        check_case (rng, &cases[i]);
    }
}

/* fill_range writes [first, first + count) and nothing else, also where
 * the range is not aligned for cuRAND (odd starts, pairs of normals). */
static void
test_fill_range (void)
{
  const guint64 n = 1000;
  static const struct { guint64 first, count; AtomrRngDistribution dist; double p1, p2; } ranges[] = {
    { 3, 500, ATOMR_RNG_UNIFORM, 0, 0 },
    { 1, 10, ATOMR_RNG_NORMAL, 0, 1 },
    { 0, 998, ATOMR_RNG_NORMAL, 5, 1 },
    { 999, 1, ATOMR_RNG_EXPONENTIAL, 1, 0 },
    { 17, 64, ATOMR_RNG_UNIFORM_RANGE, 100, 200 },
  };
  /* raw words and Poisson counts at an unaligned start go through scratch
   * and are copied as they are */
  static const struct { guint64 first, count; AtomrRngDistribution dist; double p1; } words[] = {
    { 1, 999, ATOMR_RNG_UNIFORM, 0 },
    { 3, 500, ATOMR_RNG_POISSON, 1000 },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrRngActor) rng = NULL;

  MATH_REQUIRE_DEVICE (device);
  rng = atomr_rng_actor_new (device, ATOMR_RNG_PHILOX, &error);
  g_assert_no_error (error);
  for (guint r = 0; r < G_N_ELEMENTS (ranges); r++)
    for (guint d = 0; d < 2; d++)
      {
        AtomrDtype dtype = d ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
        g_autoptr(AtomrBuffer) buf = math_buffer (device, dtype, n);
        g_autofree double complex *init = g_new (double complex, n);
        g_autofree double *x = NULL;
        guint64 first = ranges[r].first, end = first + ranges[r].count, changed = 0;

        for (guint64 i = 0; i < n; i++)
          init[i] = -7777;
        math_upload (buf, init, n);
        g_assert_true (MATH_RUN (atomr_rng_actor_fill_range_finish, rng, &error,
                                 atomr_rng_actor_fill_range_async (rng, buf, first, ranges[r].count,
                                                                   ranges[r].dist, ranges[r].p1, ranges[r].p2,
                                                                   NULL, math_done, &res)));
        g_assert_no_error (error);
        x = download_doubles (buf);
        for (guint64 i = 0; i < n; i++)
          {
            if (i < first || i >= end)
              g_assert_cmpfloat (x[i], ==, -7777);
            else
              changed += x[i] != -7777;
          }
        g_assert_cmpuint (changed, ==, ranges[r].count);
      }
  for (guint w = 0; w < G_N_ELEMENTS (words); w++)
    {
      g_autoptr(AtomrBuffer) buf = math_buffer (device, ATOMR_DTYPE_U32, n);
      g_autofree double complex *init = g_new0 (double complex, n);
      g_autofree double *x = NULL;
      guint64 first = words[w].first, end = first + words[w].count, zeros = 0;
      double sum = 0;

      math_upload (buf, init, n);
      g_assert_true (MATH_RUN (atomr_rng_actor_fill_range_finish, rng, &error,
                               atomr_rng_actor_fill_range_async (rng, buf, first, words[w].count, words[w].dist,
                                                                 words[w].p1, 0, NULL, math_done, &res)));
      g_assert_no_error (error);
      x = download_doubles (buf);
      for (guint64 i = 0; i < n; i++)
        if (i < first || i >= end)
          g_assert_cmpfloat (x[i], ==, 0);
        else
          {
            zeros += x[i] == 0;
            sum += x[i];
          }
      /* 32-bit words are almost never 0; Poisson(1000) counts average 1000 */
      g_assert_cmpuint (zeros, <, 3);
      if (words[w].dist == ATOMR_RNG_POISSON)
        g_assert_cmpfloat (fabs (sum / words[w].count - 1000), <, 6 * sqrt (1000.0 / words[w].count));
    }
}

static void
test_device_reset (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrRngActor) rng = NULL;
  g_autoptr(AtomrBuffer) before = NULL;
  g_autoptr(AtomrBuffer) after = NULL;
  g_autoptr(AtomrBuffer) f64 = NULL;
  g_autoptr(GBytes) first = NULL;
  g_autoptr(GBytes) again = NULL;

  MATH_REQUIRE_DEVICE (device);
  rng = atomr_rng_actor_new (device, ATOMR_RNG_PHILOX, &error);
  g_assert_no_error (error);
  atomr_rng_actor_set_seed (rng, 7);
  before = math_buffer (device, ATOMR_DTYPE_F32, 2048);
  first = draw (rng, before);

  g_assert_true (atomr_device_reset (device, &error));
  g_assert_no_error (error);

  /* A new generator restarts from the seed. */
  after = math_buffer (device, ATOMR_DTYPE_F32, 2048);
  again = draw (rng, after);
  g_assert_true (g_bytes_equal (first, again));
  f64 = math_buffer (device, ATOMR_DTYPE_F64, N);
  check_moments (rng, f64, ATOMR_RNG_NORMAL, 0, 1, 0, 1, 0.02, 1);
}

int
main (int    argc,
      char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gpu/rng/moments", test_moments);
  g_test_add_func ("/gpu/rng/reproducible", test_reproducible);
  g_test_add_func ("/gpu/rng/distributions", test_distributions);
  g_test_add_func ("/gpu/rng/fill-range", test_fill_range);
  g_test_add_func ("/gpu/rng/device-reset", test_device_reset);
  device = math_get_device ();
  ret = g_test_run ();
  g_clear_object (&device);
  return ret;
}
