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
  g_test_add_func ("/gpu/rng/device-reset", test_device_reset);
  device = math_get_device ();
  ret = g_test_run ();
  g_clear_object (&device);
  return ret;
}
