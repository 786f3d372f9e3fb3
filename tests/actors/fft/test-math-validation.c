/* test-math-validation.c — every argument check of the FFT, RNG and solver
 * actors, on the host test device (no GPU): a bad argument fails fast with
 * ATOMR_ERROR_INVALID_ARGUMENT naming it; a good call passes validation and
 * is refused at enqueue because the host device has no CUDA libraries.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>

#include "atomr.h"
#include "core/atomr-device-private.h"
#include "actors/solver/atomr-cusolver-loader-private.h"

static AtomrDevice *host;

static void
done (GObject      *source,
      GAsyncResult *result,
      gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static GAsyncResult *
wait_for (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

static void
assert_error_mentions (GError      *error,
                       gint         code,
                       const gchar *needle)
{
  g_assert_error (error, ATOMR_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("error \"%s\" does not mention \"%s\"", error->message, needle);
}

/* CALL runs one asynchronous call, whose last arguments must be
 * "done, &res", and checks the error its finish function reports. */
#define EXPECT(code, needle, finish, actor, call)                 \
  G_STMT_START {                                                  \
    GAsyncResult *res = NULL;                                     \
    g_autoptr(GError) err = NULL;                                 \
    call;                                                         \
    g_assert_false (finish (actor, wait_for (&res), &err));       \
    assert_error_mentions (err, code, needle);                    \
    g_object_unref (res);                                         \
  } G_STMT_END
#define EXPECT_INVALID(needle, finish, actor, call) \
  EXPECT (ATOMR_ERROR_INVALID_ARGUMENT, needle, finish, actor, call)
/* The host device has no math library: the request fails as not
 * supported, or — when it reads what an earlier unsupported request should
 * have written — as a failed dependency whose message quotes that error. */
#define EXPECT_NO_GPU(needle, finish, actor, call)                \
  G_STMT_START {                                                  \
    GAsyncResult *res = NULL;                                     \
    g_autoptr(GError) err = NULL;                                 \
    call;                                                         \
    g_assert_false (finish (actor, wait_for (&res), &err));       \
    if (g_error_matches (err, ATOMR_ERROR, ATOMR_ERROR_DEPENDENCY_FAILED)) \
      assert_error_mentions (err, ATOMR_ERROR_DEPENDENCY_FAILED, needle); \
    else                                                          \
      assert_error_mentions (err, ATOMR_ERROR_NOT_SUPPORTED, needle); \
    g_object_unref (res);                                         \
  } G_STMT_END

static AtomrBuffer *
buffer (AtomrDtype dtype,
        guint64    n)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *b = atomr_buffer_new (host, dtype, n, &error);
  g_assert_no_error (error);
  return b;
}

/* ------------------------------------------------------------------ */
/* FFT                                                                  */

#define PLAN_ERROR(call, needle)                                          \
  G_STMT_START {                                                          \
    AtomrFftPlan *plan_ = call;                                           \
    g_assert_null (plan_);                                                \
    assert_error_mentions (error, ATOMR_ERROR_INVALID_ARGUMENT, needle);  \
    g_clear_error (&error);                                               \
  } G_STMT_END

static void
test_fft_plan_validation (void)
{
  GError *error = NULL;
  gint64 n2[2] = { 8, 16 }, small_embed[2] = { 8, 4 };

  PLAN_ERROR (atomr_fft_plan_new_1d (7, ATOMR_DTYPE_F32, 16, 1, &error), "kind 7");
  PLAN_ERROR (atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_I32, 16, 1, &error), "precision is i32");
  PLAN_ERROR (atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_C64, 16, 1, &error), "precision is c64");
  PLAN_ERROR (atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 0, 1, &error), "n[0] is 0");
  PLAN_ERROR (atomr_fft_plan_new_2d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 4, -2, 1, &error), "n[1] is -2");
  PLAN_ERROR (atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 16, 0, &error), "batch is 0");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 0, NULL, 0, 1, 1, NULL, 0, 1, 1, 1, &error), "rank is 0");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 4, NULL, 0, 1, 1, NULL, 0, 1, 1, 1, &error), "rank is 4");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, NULL, 1, NULL, 0, 1, 1, NULL, 0, 1, 1, 1, &error), "n is NULL");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 2, n2, 2, 0, 128, NULL, 0, 1, 1, 2, &error), "istride is 0");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 2, n2, 2, 1, 0, NULL, 0, 1, 1, 2, &error), "idist is 0");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 2, small_embed, 2, 1, 128, NULL, 0, 1, 1, 2, &error), "iembed[1] is 4");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 2, NULL, 0, 1, 1, n2, 2, 2, -1, 2, &error), "odist is -1");
  /* R2C: the complex side keeps 16/2 + 1 = 9 in the last dimension. */
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_R2C, ATOMR_DTYPE_F32, n2, 2, NULL, 0, 1, 1, small_embed, 2, 1, 64, 1, &error), "oembed[1] is 4");
}

/* Issue 11, item 4: each array has its own length.  Before, inembed and
 * onembed shared the length of n: n = [4, 8] with inembed = [4] read
 * inembed[1] past the end, and n = [4] with inembed = [4, 10, 12] silently
 * dropped two entries. */
static void
test_fft_plan_array_lengths (void)
{
  GError *error = NULL;
  gint64 n2[2] = { 4, 8 }, n1[1] = { 4 }, embed1[1] = { 4 }, embed3[3] = { 4, 10, 12 };
  g_autoptr(AtomrFftPlan) ok = NULL;

  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 2, embed1, 1, 1, 32, NULL, 0, 1, 1, 1, &error),
              "inembed has 1 entries but n has 2");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n1, 1, embed3, 3, 1, 4, NULL, 0, 1, 1, 1, &error),
              "inembed has 3 entries but n has 1");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n1, 1, NULL, 0, 1, 1, embed3, 2, 1, 4, 1, &error),
              "onembed has 2 entries but n has 1");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n1, 1, NULL, 1, 1, 4, NULL, 0, 1, 1, 1, &error),
              "inembed is NULL but n_inembed is 1");
  /* A length of 0 is the packed layout, whatever the pointer. */
  ok = atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 2, embed3, 0, 7, 7, embed3, 0, 7, 7, 3, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_fft_plan_get_input_elements (ok), ==, 4 * 8 * 3);
}

/* Issue 11, item 3: istride = 2^62 with n = 5 computed 4 * 2^62 + 1, which
 * wrapped to 1 element, and a 1-element buffer passed the size check. */
static void
test_fft_plan_overflow (void)
{
  GError *error = NULL;
  gint64 n5[1] = { 5 }, embed5[1] = { 5 }, n2[2] = { 4, 8 }, huge_embed[2] = { 4, G_MAXINT64 / 2 };

  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n5, 1, embed5, 1,
                                       G_GINT64_CONSTANT (1) << 62, 1, NULL, 0, 1, 1, 1, &error),
              "input layout overflows");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n5, 1, NULL, 0, 1, 1, embed5, 1,
                                       1, G_MAXINT64 / 2, 8, &error),
              "output layout overflows");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n2, 2, huge_embed, 2, 4, 1, NULL, 0,
                                       1, 1, 1, &error),
              "input layout overflows");
}

static void
test_fft_plan_layout (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftPlan) r2c = atomr_fft_plan_new_2d (ATOMR_FFT_R2C, ATOMR_DTYPE_F64, 4, 6, 3, &error);
  g_autoptr(AtomrFftPlan) same = atomr_fft_plan_new_2d (ATOMR_FFT_R2C, ATOMR_DTYPE_F64, 4, 6, 3, &error);
  g_autoptr(AtomrFftPlan) c2r = atomr_fft_plan_new_2d (ATOMR_FFT_C2R, ATOMR_DTYPE_F32, 4, 6, 1, &error);
  gint64 n[1] = { 8 }, in_embed[1] = { 8 }, out_embed[1] = { 8 };
  g_autoptr(AtomrFftPlan) strided = NULL;
  g_autoptr(AtomrFftPlan) packed_explicit = NULL;
  g_autoptr(AtomrFftPlan) packed = NULL;
  g_autofree gchar *text = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (atomr_fft_plan_get_kind (r2c), ==, ATOMR_FFT_R2C);
  g_assert_cmpint (atomr_fft_plan_get_rank (r2c), ==, 2);
  g_assert_cmpint (atomr_fft_plan_get_size (r2c, 1), ==, 6);
  g_assert_cmpint (atomr_fft_plan_get_size (r2c, 2), ==, 0);
  g_assert_cmpint (atomr_fft_plan_get_batch (r2c), ==, 3);
  g_assert_cmpint (atomr_fft_plan_get_input_dtype (r2c), ==, ATOMR_DTYPE_F64);
  g_assert_cmpint (atomr_fft_plan_get_output_dtype (r2c), ==, ATOMR_DTYPE_C128);
  g_assert_cmpuint (atomr_fft_plan_get_input_elements (r2c), ==, 4 * 6 * 3);
  g_assert_cmpuint (atomr_fft_plan_get_output_elements (r2c), ==, 4 * 4 * 3);
  g_assert_cmpint (atomr_fft_plan_get_input_dtype (c2r), ==, ATOMR_DTYPE_C64);
  g_assert_cmpint (atomr_fft_plan_get_output_dtype (c2r), ==, ATOMR_DTYPE_F32);
  g_assert_cmpuint (atomr_fft_plan_get_input_elements (c2r), ==, 4 * 4);
  g_assert_cmpuint (atomr_fft_plan_get_output_elements (c2r), ==, 4 * 6);
  g_assert_true (atomr_fft_plan_equal (r2c, same));
  g_assert_cmpuint (atomr_fft_plan_hash (r2c), ==, atomr_fft_plan_hash (same));
  g_assert_false (atomr_fft_plan_equal (r2c, c2r));

  /* 5 interleaved signals of 8 (stride 5, dist 1): the last element is
   * 7 * 5 + 4 = 39. */
  strided = atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n, 1, in_embed, 1, 5, 1,
                                     out_embed, 1, 1, 8, 5, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_fft_plan_get_input_elements (strided), ==, 40);
  g_assert_cmpuint (atomr_fft_plan_get_output_elements (strided), ==, 40);
  text = atomr_fft_plan_to_string (strided);
  g_assert_nonnull (strstr (text, "istride 5"));

  /* The packed layout spelt out is the same cache key as the default. */
  packed_explicit = atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n, 1, in_embed, 1, 1, 8,
                                             out_embed, 1, 1, 8, 5, &error);
  packed = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 8, 5, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_fft_plan_equal (packed, packed_explicit));
  g_assert_cmpuint (atomr_fft_plan_hash (packed), ==, atomr_fft_plan_hash (packed_explicit));
}

#define EXEC(plan, dir, in, out) \
  atomr_fft_actor_execute_async (fft, plan, dir, in, out, NULL, done, &res)
#define FFT_INVALID(needle, plan, dir, in, out) \
  EXPECT_INVALID (needle, atomr_fft_actor_execute_finish, fft, EXEC (plan, dir, in, out))

/* Half precision (issue 11): cuFFT's limits are refused with a clear
 * error; the complex side is (re, im) pairs of the half dtype. */
static void
test_fft_plan_half (void)
{
  g_autoptr(GError) error = NULL;
  gint64 n2[2] = { 8, 16 }, n1[1] = { 16 }, embed[1] = { 32 };
  g_autoptr(AtomrFftPlan) c2c = NULL, r2c = NULL, c2r = NULL, bf = NULL;
  g_autoptr(AtomrFftActor) fft = atomr_fft_actor_new (host, &error);
  g_autoptr(AtomrBuffer) h32 = buffer (ATOMR_DTYPE_F16, 32);
  g_autoptr(AtomrBuffer) h32b = buffer (ATOMR_DTYPE_F16, 32);
  g_autoptr(AtomrBuffer) h16 = buffer (ATOMR_DTYPE_F16, 16);
  g_autoptr(AtomrBuffer) h18 = buffer (ATOMR_DTYPE_F16, 18);
  g_autoptr(AtomrBuffer) h17 = buffer (ATOMR_DTYPE_F16, 17);
  g_autoptr(AtomrBuffer) c16 = buffer (ATOMR_DTYPE_C64, 16);

  PLAN_ERROR (atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F16, 12, 1, &error),
              "n[0] is 12; f16 transforms take powers of two only");
  PLAN_ERROR (atomr_fft_plan_new_2d (ATOMR_FFT_R2C, ATOMR_DTYPE_BF16, 8, 6, 1, &error),
              "n[1] is 6; bf16 transforms take powers of two only");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_R2C, ATOMR_DTYPE_F16, n1, 1, embed, 1, 2, 32,
                                       NULL, 0, 1, 1, 1, &error),
              "istride is 2; f16 R2C transforms need a unit stride on the real (input) side");
  PLAN_ERROR (atomr_fft_plan_new_many (ATOMR_FFT_C2R, ATOMR_DTYPE_F16, n1, 1, NULL, 0, 1, 1,
                                       embed, 1, 2, 32, 1, &error),
              "ostride is 2; f16 C2R transforms need a unit stride on the real (output) side");
  PLAN_ERROR (atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F16, 1 << 30, 4, &error),
              "f16 transforms must span fewer than 2^32");

  c2c = atomr_fft_plan_new_2d (ATOMR_FFT_C2C, ATOMR_DTYPE_F16, 8, 16, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_fft_plan_get_input_dtype (c2c), ==, ATOMR_DTYPE_F16);
  g_assert_cmpint (atomr_fft_plan_get_output_dtype (c2c), ==, ATOMR_DTYPE_F16);
  g_assert_cmpuint (atomr_fft_plan_get_input_elements (c2c), ==, 2 * 8 * 16);
  g_assert_cmpuint (atomr_fft_plan_get_output_elements (c2c), ==, 2 * 8 * 16);
  r2c = atomr_fft_plan_new_many (ATOMR_FFT_R2C, ATOMR_DTYPE_F16, n1, 1, NULL, 0, 1, 1, NULL, 0, 1, 1,
                                 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_fft_plan_get_input_elements (r2c), ==, 16);
  g_assert_cmpuint (atomr_fft_plan_get_output_elements (r2c), ==, 2 * 9);
  c2r = atomr_fft_plan_new_1d (ATOMR_FFT_C2R, ATOMR_DTYPE_F16, 16, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_fft_plan_get_input_elements (c2r), ==, 2 * 9);
  g_assert_cmpuint (atomr_fft_plan_get_output_elements (c2r), ==, 16);
  bf = atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_BF16, n2, 2, NULL, 0, 1, 1, NULL, 0, 1, 1,
                                2, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_fft_plan_get_input_dtype (bf), ==, ATOMR_DTYPE_BF16);
  g_assert_false (atomr_fft_plan_equal (bf, c2c));

  FFT_INVALID ("output holds 17 elements but the arguments need 18", r2c, ATOMR_FFT_FORWARD, h16, h17);
  FFT_INVALID ("input has dtype c64, expected f16", c2r, ATOMR_FFT_INVERSE, c16, h16);
  FFT_INVALID ("a half-precision transform cannot be told from the dtypes", NULL, ATOMR_FFT_FORWARD,
               h32, h32b);
  {
    GAsyncResult *res = NULL;
    g_autoptr(GError) err = NULL;
    atomr_fft_actor_execute_normalized_async (fft, r2c, ATOMR_FFT_FORWARD, ATOMR_FFT_NORM_ORTHO, h16, h18,
                                              NULL, done, &res);
    g_assert_false (atomr_fft_actor_execute_normalized_finish (fft, wait_for (&res), &err));
    /* normalised halves are accepted (scaled in f32 on the GPU); the host
     * device has no cuFFT */
    assert_error_mentions (err, ATOMR_ERROR_NOT_SUPPORTED, "cuFFT needs a CUDA device");
    g_clear_object (&res);
  }
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_finish, fft,
                 EXEC (r2c, ATOMR_FFT_FORWARD, h16, h18));
}

static void
test_fft_execute_validation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftActor) fft = atomr_fft_actor_new (host, &error);
  g_autoptr(AtomrFftPlan) c2c = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 16, 2, &error);
  g_autoptr(AtomrFftPlan) r2c = atomr_fft_plan_new_1d (ATOMR_FFT_R2C, ATOMR_DTYPE_F32, 16, 1, &error);
  g_autoptr(AtomrFftPlan) c2r = atomr_fft_plan_new_1d (ATOMR_FFT_C2R, ATOMR_DTYPE_F32, 16, 1, &error);
  g_autoptr(AtomrBuffer) c32 = buffer (ATOMR_DTYPE_C64, 32);
  g_autoptr(AtomrBuffer) c32b = buffer (ATOMR_DTYPE_C64, 32);
  g_autoptr(AtomrBuffer) c31 = buffer (ATOMR_DTYPE_C64, 31);
  g_autoptr(AtomrBuffer) z32 = buffer (ATOMR_DTYPE_C128, 32);
  g_autoptr(AtomrBuffer) r16 = buffer (ATOMR_DTYPE_F32, 16);
  g_autoptr(AtomrBuffer) r16b = buffer (ATOMR_DTYPE_F32, 16);
  g_autoptr(AtomrBuffer) c9 = buffer (ATOMR_DTYPE_C64, 9);
  g_autoptr(AtomrBuffer) c8 = buffer (ATOMR_DTYPE_C64, 8);
  gint64 shape4[4] = { 2, 2, 2, 2 }, n8[1] = { 8 };
  g_autoptr(AtomrBuffer) c4d = NULL;
  /* Packed input, output every other element: not in place. */
  g_autoptr(AtomrFftPlan) mixed = atomr_fft_plan_new_many (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n8, 1, n8, 1, 1, 8,
                                                            n8, 1, 2, 16, 1, &error);

  g_assert_no_error (error);
  c4d = atomr_buffer_new_with_shape (host, ATOMR_DTYPE_C64, shape4, 4, &error);
  g_assert_no_error (error);

  FFT_INVALID ("input must be an AtomrBuffer", c2c, ATOMR_FFT_FORWARD, NULL, c32);
  FFT_INVALID ("output must be an AtomrBuffer", c2c, ATOMR_FFT_FORWARD, c32, NULL);
  FFT_INVALID ("direction 5", c2c, 5, c32, c32b);
  FFT_INVALID ("R2C transforms are forward only", r2c, ATOMR_FFT_INVERSE, r16, c9);
  FFT_INVALID ("C2R transforms are inverse only", c2r, ATOMR_FFT_FORWARD, c9, r16);
  FFT_INVALID ("input has dtype c128, expected c64", c2c, ATOMR_FFT_FORWARD, z32, c32);
  FFT_INVALID ("output has dtype f32, expected c64", c2c, ATOMR_FFT_FORWARD, c32, r16);
  FFT_INVALID ("input holds 31 elements but the arguments need 32", c2c, ATOMR_FFT_FORWARD, c31, c32);
  FFT_INVALID ("output holds 8 elements but the arguments need 9", r2c, ATOMR_FFT_FORWARD, r16, c8);
  FFT_INVALID ("same buffer", mixed, ATOMR_FFT_FORWARD, c32, c32);
  FFT_INVALID ("both real", NULL, ATOMR_FFT_FORWARD, r16, r16b);
  FFT_INVALID ("has 4 dimensions", NULL, ATOMR_FFT_FORWARD, c4d, c4d);

  /* Valid calls pass validation, in place too, and stop at the missing GPU. */
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_finish, fft,
                 EXEC (c2c, ATOMR_FFT_FORWARD, c32, c32));
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_finish, fft,
                 EXEC (NULL, ATOMR_FFT_FORWARD, r16, c9));
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_hits (fft), ==, 0);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_misses (fft), ==, 0);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_size (fft), ==, 0);
  /* issue 11: normalisation modes */
  {
    GAsyncResult *res2 = NULL;
    g_autoptr(GError) err2 = NULL;
    atomr_fft_actor_execute_normalized_async (fft, NULL, ATOMR_FFT_FORWARD, 9, c8, c8, NULL, done, &res2);
    g_assert_false (atomr_fft_actor_execute_normalized_finish (fft, wait_for (&res2), &err2));
    assert_error_mentions (err2, ATOMR_ERROR_INVALID_ARGUMENT, "normalization 9 is not an AtomrFftNormalization");
    g_clear_object (&res2);
    g_clear_error (&err2);
    atomr_fft_actor_execute_normalized_async (fft, NULL, ATOMR_FFT_INVERSE, ATOMR_FFT_NORM_ORTHO, c8, c8, NULL,
                                              done, &res2);
    g_assert_false (atomr_fft_actor_execute_normalized_finish (fft, wait_for (&res2), &err2));
    assert_error_mentions (err2, ATOMR_ERROR_NOT_SUPPORTED, "cuFFT needs a CUDA device");
    g_clear_object (&res2);
    g_assert_cmpuint (atomr_fft_actor_get_work_area_size (fft), ==, 0);
  }
}

/* FFT on views (issue 10): every layout cuFFT cannot express is refused
 * by name; good views pass validation and stop at the missing GPU. */
static AtomrTensor *
view (AtomrBuffer  *buf,
      guint64       offset_elems,
      const gint64 *shape,
      const gint64 *strides,
      guint         n_dims)
{
  g_autoptr(GError) error = NULL;
  AtomrDtype dtype = atomr_buffer_get_dtype (buf);
  AtomrTensor *t = atomr_tensor_new_strided (buf, dtype, offset_elems * atomr_dtype_get_size (dtype),
                                             shape, n_dims, strides, n_dims, &error);
  g_assert_no_error (error);
  return t;
}

static void
test_fft_tensor_validation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftActor) fft = atomr_fft_actor_new (host, &error);
  g_autoptr(AtomrBuffer) cbuf = buffer (ATOMR_DTYPE_C64, 256);
  g_autoptr(AtomrBuffer) cbuf2 = buffer (ATOMR_DTYPE_C64, 256);
  g_autoptr(AtomrBuffer) rbuf = buffer (ATOMR_DTYPE_F32, 256);
  g_autoptr(AtomrBuffer) hbuf = buffer (ATOMR_DTYPE_F16, 256);
  const gint64 s48[2] = { 4, 8 }, c48[2] = { 8, 1 }, t48[2] = { 1, 4 };
  const gint64 s228[3] = { 2, 2, 8 }, bad228[3] = { 64, 8, 1 }, good228[3] = { 16, 8, 1 };
  const gint64 s416[2] = { 4, 16 }, c416[2] = { 16, 1 }, s48c[2] = { 4, 8 }, s49[2] = { 4, 9 }, c49[2] = { 9, 1 };
  const gint64 s8[1] = { 8 }, neg[1] = { -1 }, one[1] = { 1 };
  g_autoptr(AtomrTensor) a = view (cbuf, 0, s48, c48, 2);
  g_autoptr(AtomrTensor) b = view (cbuf2, 0, s48, c48, 2);
  g_autoptr(AtomrTensor) a_shifted = view (cbuf, 4, s48, c48, 2);
  g_autoptr(AtomrTensor) a_t = view (cbuf, 0, s48, t48, 2);    /* column-major 4 × 8 */
  g_autoptr(AtomrTensor) batched_bad = view (cbuf, 0, s228, bad228, 3);
  g_autoptr(AtomrTensor) batched_good = view (cbuf2, 0, s228, good228, 3);
  g_autoptr(AtomrTensor) batched_out = view (cbuf, 100, s228, good228, 3);
  g_autoptr(AtomrTensor) real = view (rbuf, 0, s416, c416, 2);
  g_autoptr(AtomrTensor) spec8 = view (cbuf, 0, s48c, c48, 2);
  g_autoptr(AtomrTensor) spec9 = view (cbuf, 0, s49, c49, 2);
  g_autoptr(AtomrTensor) reversed = view (cbuf, 7, s8, neg, 1);
  g_autoptr(AtomrTensor) line = view (cbuf2, 0, s8, one, 1);
  g_autoptr(AtomrTensor) half = atomr_tensor_new (hbuf, s48, 2, &error);

#define TEXEC(rank, dir, in, out) \
  atomr_fft_actor_execute_tensor_async (fft, rank, dir, ATOMR_FFT_NORM_NONE, in, out, NULL, done, &res)
#define TFFT_INVALID(needle, rank, dir, in, out) \
  EXPECT_INVALID (needle, atomr_fft_actor_execute_tensor_finish, fft, TEXEC (rank, dir, in, out))

  g_assert_no_error (error);
  TFFT_INVALID ("input is not a tensor", 1, ATOMR_FFT_FORWARD, NULL, b);
  TFFT_INVALID ("rank is 4", 4, ATOMR_FFT_FORWARD, a, b);
  TFFT_INVALID ("input has 2 dimensions and output 3", 1, ATOMR_FFT_FORWARD, a, batched_good);
  TFFT_INVALID ("strides that cuFFT's layout cannot express", 2, ATOMR_FFT_FORWARD, a_t, b);
  TFFT_INVALID ("do not collapse into one: dimension 0 has stride 64, not 16", 1, ATOMR_FFT_FORWARD,
                batched_bad, batched_good);
  TFFT_INVALID ("output overlaps input", 1, ATOMR_FFT_FORWARD, a, a_shifted);
  TFFT_INVALID ("dimension 1 of the output is 8 but the real side's shape needs 9", 1, ATOMR_FFT_FORWARD,
                real, spec8);
  TFFT_INVALID ("stride -1 in dimension 0", 1, ATOMR_FFT_FORWARD, reversed, line);
  TFFT_INVALID ("both real", 1, ATOMR_FFT_FORWARD, real, real);
  TFFT_INVALID ("R2C transforms are forward only", 2, ATOMR_FFT_INVERSE, real, spec9);
  EXPECT (ATOMR_ERROR_NOT_SUPPORTED, "half-precision transforms take an AtomrFftPlan",
          atomr_fft_actor_execute_tensor_finish, fft, TEXEC (1, ATOMR_FFT_FORWARD, half, half));

  /* Good views: a column-major matrix transformed along rows is fine as
   * rank 1 (stride 4, distance 1); in place; batches; R2C; C2R. */
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_tensor_finish, fft,
                 TEXEC (1, ATOMR_FFT_FORWARD, a_t, b));
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_tensor_finish, fft,
                 TEXEC (2, ATOMR_FFT_FORWARD, a, a));
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_tensor_finish, fft,
                 TEXEC (2, ATOMR_FFT_FORWARD, batched_good, batched_out));
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_tensor_finish, fft,
                 TEXEC (2, ATOMR_FFT_FORWARD, real, spec9));
  EXPECT_NO_GPU ("cuFFT needs a CUDA device", atomr_fft_actor_execute_tensor_finish, fft,
                 TEXEC (1, ATOMR_FFT_INVERSE, spec9, real));
#undef TEXEC
#undef TFFT_INVALID
}

static void
on_notify (GObject    *object,
           GParamSpec *pspec,
           gpointer    user_data)
{
  (*(guint *) user_data)++;

}

static void
test_fft_properties (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftActor) fft = atomr_fft_actor_new (host, &error);
  guint notified = 0;
  guint capacity = 0;

  g_assert_no_error (error);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_capacity (fft), ==, 32);
  g_signal_connect (fft, "notify::plan-cache-capacity", G_CALLBACK (on_notify), &notified);
  g_object_set (fft, "plan-cache-capacity", 4, NULL);
  atomr_fft_actor_set_plan_cache_capacity (fft, 4);
  g_object_get (fft, "plan-cache-capacity", &capacity, NULL);
  g_assert_cmpuint (capacity, ==, 4);
  g_assert_cmpuint (notified, ==, 1);
}

/* ------------------------------------------------------------------ */
/* RNG                                                                  */

static void
test_rng_validation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrRngActor) rng = atomr_rng_actor_new (host, ATOMR_RNG_PHILOX, &error);
  g_autoptr(AtomrRngActor) mtgp = atomr_rng_actor_new (host, ATOMR_RNG_MTGP32, &error);
  g_autoptr(AtomrRngActor) sobol = atomr_rng_actor_new (host, ATOMR_RNG_SOBOL, &error);
  g_autoptr(AtomrBuffer) f32 = buffer (ATOMR_DTYPE_F32, 64);
  g_autoptr(AtomrBuffer) f32_odd = buffer (ATOMR_DTYPE_F32, 63);
  g_autoptr(AtomrBuffer) f64 = buffer (ATOMR_DTYPE_F64, 64);
  g_autoptr(AtomrBuffer) u32 = buffer (ATOMR_DTYPE_U32, 64);
  g_autoptr(AtomrBuffer) i32 = buffer (ATOMR_DTYPE_I32, 64);
  g_autoptr(AtomrBuffer) c64 = buffer (ATOMR_DTYPE_C64, 64);
  AtomrRngActor *bad;

  g_assert_no_error (error);
  bad = atomr_rng_actor_new (host, 9, &error);
  g_assert_null (bad);
  assert_error_mentions (error, ATOMR_ERROR_INVALID_ARGUMENT, "kind 9");
  g_clear_error (&error);
  g_assert_cmpint (atomr_rng_actor_get_kind (sobol), ==, ATOMR_RNG_SOBOL);

#define FILL(actor, buf, dist, p1, p2) \
  atomr_rng_actor_fill_async (actor, buf, dist, p1, p2, NULL, done, &res)
#define RNG_INVALID(needle, actor, buf, dist, p1, p2) \
  EXPECT_INVALID (needle, atomr_rng_actor_fill_finish, actor, FILL (actor, buf, dist, p1, p2))

  RNG_INVALID ("buffer must be an AtomrBuffer", rng, NULL, ATOMR_RNG_UNIFORM, 0, 0);
  RNG_INVALID ("distribution 11", rng, f32, 11, 0, 0);
  RNG_INVALID ("buffer has dtype i32; supported: f32, f64, u32", rng, i32, ATOMR_RNG_UNIFORM, 0, 0);
  RNG_INVALID ("param1 is 1 and param2 is 2", rng, f32, ATOMR_RNG_UNIFORM, 1, 2);
  RNG_INVALID ("buffer has dtype u32; supported: f32, f64", rng, u32, ATOMR_RNG_NORMAL, 0, 1);
  RNG_INVALID ("buffer has dtype c64; supported: f32, f64", rng, c64, ATOMR_RNG_LOG_NORMAL, 0, 1);
  RNG_INVALID ("standard deviation) is 0", rng, f32, ATOMR_RNG_NORMAL, 0, 0);
  RNG_INVALID ("standard deviation) is -1", rng, f64, ATOMR_RNG_LOG_NORMAL, 0, -1);
  RNG_INVALID ("(mean) is inf", rng, f64, ATOMR_RNG_NORMAL, INFINITY, 1);
  RNG_INVALID ("holds 63 elements", rng, f32_odd, ATOMR_RNG_NORMAL, 0, 1);
  RNG_INVALID ("buffer has dtype f32, expected u32", rng, f32, ATOMR_RNG_POISSON, 3, 0);
  RNG_INVALID ("(lambda) is 0", rng, u32, ATOMR_RNG_POISSON, 0, 0);
  RNG_INVALID ("param2 is 1", rng, u32, ATOMR_RNG_POISSON, 4, 1);
  /* issue 11: the distributions added to cuRAND's */
  RNG_INVALID ("distribution 8", rng, f32, 8, 0, 0);
  RNG_INVALID ("(rate lambda) is -1", rng, f32, ATOMR_RNG_EXPONENTIAL, -1, 0);
  RNG_INVALID ("buffer has dtype u32; supported: f32, f64, f16, bf16", rng, u32, ATOMR_RNG_EXPONENTIAL, 1, 0);
  RNG_INVALID ("[5, 5) is not a finite, non-empty interval", rng, f32, ATOMR_RNG_UNIFORM_RANGE, 5, 5);
  RNG_INVALID ("[-1.79769e+308, 1.79769e+308) is not a finite", rng, f64, ATOMR_RNG_UNIFORM_RANGE, -G_MAXDOUBLE, G_MAXDOUBLE);
  RNG_INVALID ("buffer has dtype f32; supported: i32, i64, u32", rng, f32, ATOMR_RNG_INTEGER, 0, 10);
  RNG_INVALID ("bounds [0.5, 10) must be whole numbers", rng, i32, ATOMR_RNG_INTEGER, 0.5, 10);
  RNG_INVALID ("must hold between 1 and 2^32 values", rng, i32, ATOMR_RNG_INTEGER, 3, 3);
  RNG_INVALID ("does not fit i32", rng, i32, ATOMR_RNG_INTEGER, 0, 3000000000.0);
  RNG_INVALID ("does not fit u32", rng, u32, ATOMR_RNG_INTEGER, -1, 10);
  RNG_INVALID ("(probability) is 1.5", rng, f32, ATOMR_RNG_BERNOULLI, 1.5, 0);
  RNG_INVALID ("buffer has dtype u32; supported: u8", rng, u32, ATOMR_RNG_BERNOULLI, 0.5, 0);
#define RANGE_INVALID(needle, actor, buf, first, count, dist, p1, p2) \
  EXPECT_INVALID (needle, atomr_rng_actor_fill_range_finish, actor, \
                  atomr_rng_actor_fill_range_async (actor, buf, first, count, dist, p1, p2, NULL, done, &res))
  RANGE_INVALID ("count is 0", rng, f32, 0, 0, ATOMR_RNG_UNIFORM, 0, 0);
  RANGE_INVALID ("first 60 and count 5 pass the end of the buffer (64 elements)", rng, f32, 60, 5, ATOMR_RNG_UNIFORM, 0, 0);
  RANGE_INVALID ("first 1 and count 18446744073709551615 pass the end", rng, f32, 1, G_MAXUINT64, ATOMR_RNG_UNIFORM, 0, 0);
  RANGE_INVALID ("holds 3 elements", rng, f32, 0, 3, ATOMR_RNG_NORMAL, 0, 1);
  EXPECT_NO_GPU ("cuRAND needs a CUDA device", atomr_rng_actor_fill_range_finish, rng,
                 atomr_rng_actor_fill_range_async (rng, f32, 1, 3, ATOMR_RNG_EXPONENTIAL, 1, 0, NULL, done, &res));
  EXPECT_NO_GPU ("cuRAND needs a CUDA device", atomr_rng_actor_fill_finish, rng,
                 FILL (rng, i32, ATOMR_RNG_INTEGER, -5, 5));

  atomr_rng_actor_set_offset (mtgp, 10);
  RNG_INVALID ("MTGP32 generators cannot skip ahead", mtgp, f32, ATOMR_RNG_UNIFORM, 0, 0);
  atomr_rng_actor_set_offset (mtgp, 0);
  EXPECT_NO_GPU ("cuRAND needs a CUDA device", atomr_rng_actor_fill_finish, mtgp,
                 FILL (mtgp, f32, ATOMR_RNG_UNIFORM, 0, 0));

  atomr_rng_actor_set_dimensions (sobol, 3);
  RNG_INVALID ("not a multiple of the 3 Sobol dimensions", sobol, f32, ATOMR_RNG_UNIFORM, 0, 0);
  atomr_rng_actor_set_dimensions (sobol, 4);
  /* Sobol has no pairs restriction: an odd count of one dimension is fine. */
  atomr_rng_actor_set_dimensions (sobol, 1);
  EXPECT_NO_GPU ("cuRAND needs a CUDA device", atomr_rng_actor_fill_finish, sobol,
                 FILL (sobol, f32_odd, ATOMR_RNG_NORMAL, 0, 1));
  EXPECT_NO_GPU ("cuRAND needs a CUDA device", atomr_rng_actor_fill_finish, rng,
                 FILL (rng, u32, ATOMR_RNG_POISSON, 2.5, 0));
}

static void
test_rng_properties (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrRngActor) rng = atomr_rng_actor_new (host, ATOMR_RNG_XORWOW, &error);
  guint notified = 0;
  guint64 seed = 0, offset = 0;
  guint dims = 0;
  AtomrRngKind kind;

  g_assert_no_error (error);
  g_signal_connect (rng, "notify", G_CALLBACK (on_notify), &notified);
  g_object_set (rng, "seed", (guint64) 1234, "offset", (guint64) 99, "dimensions", 7, NULL);
  g_object_get (rng, "seed", &seed, "offset", &offset, "dimensions", &dims, "kind", &kind, NULL);
  g_assert_cmpuint (seed, ==, 1234);
  g_assert_cmpuint (offset, ==, 99);
  g_assert_cmpuint (dims, ==, 7);
  g_assert_cmpint (kind, ==, ATOMR_RNG_XORWOW);
  g_assert_cmpuint (notified, ==, 3);
  atomr_rng_actor_set_dimensions (rng, 0);
  g_assert_cmpuint (atomr_rng_actor_get_dimensions (rng), ==, 1);
}

/* ------------------------------------------------------------------ */
/* Solver                                                               */

/* Solver on views (issue 10): column-major 2-D views with ld from the
 * column stride; row-major and other non-unit inner strides, bad pivots,
 * shapes and overlaps are refused by name. */
static void
test_solver_tensor_validation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrSolverActor) sv = atomr_solver_actor_new (host, &error);
  g_autoptr(AtomrBuffer) abuf = buffer (ATOMR_DTYPE_F64, 64);    /* 8 × 8, column-major */
  g_autoptr(AtomrBuffer) bbuf = buffer (ATOMR_DTYPE_F64, 64);
  g_autoptr(AtomrBuffer) pbuf = buffer (ATOMR_DTYPE_I64, 8);
  g_autoptr(AtomrBuffer) ibuf = buffer (ATOMR_DTYPE_I32, 64);
  const gint64 s44[2] = { 4, 4 }, cm[2] = { 1, 8 }, rm[2] = { 8, 1 }, s2[2] = { 2, 16 };
  const gint64 s42[2] = { 4, 2 }, s34[2] = { 3, 4 }, s4[1] = { 4 }, s3[1] = { 3 }, one[1] = { 1 };
  const gint64 s64[1] = { 64 }, two[1] = { 2 };
  g_autoptr(AtomrTensor) a = view (abuf, 9, s44, cm, 2);          /* the 4 × 4 block at (1, 1) */
  g_autoptr(AtomrTensor) a_rm = view (abuf, 0, s44, rm, 2);
  g_autoptr(AtomrTensor) a_strided = view (abuf, 0, s44, s2, 2);
  g_autoptr(AtomrTensor) a_rect = view (abuf, 0, s34, cm, 2);
  g_autoptr(AtomrTensor) a_overlap = view (abuf, 10, s42, cm, 2);
  g_autoptr(AtomrTensor) b = view (bbuf, 0, s42, cm, 2);
  g_autoptr(AtomrTensor) b_short = view (bbuf, 0, s34, cm, 2);
  g_autoptr(AtomrTensor) piv = view (pbuf, 0, s4, one, 1);
  g_autoptr(AtomrTensor) piv3 = view (pbuf, 0, s3, one, 1);
  g_autoptr(AtomrTensor) piv_strided = view (pbuf, 0, s4, two, 1);
  g_autoptr(AtomrTensor) piv_i32 = view (ibuf, 0, s4, one, 1);
  g_autoptr(AtomrTensor) vec = view (bbuf, 0, s64, one, 1);
  AtomrSolverFill lo = ATOMR_SOLVER_LOWER;

#define SV_INVALID(needle, finish, call) EXPECT_INVALID (needle, finish, sv, call)
  g_assert_no_error (error);
  SV_INVALID ("lu: a has strides (8, 1): the solver takes column-major matrices",
              atomr_solver_actor_lu_tensor_finish,
              atomr_solver_actor_lu_tensor_async (sv, a_rm, piv, NULL, done, &res));
  SV_INVALID ("lu: a has strides (2, 16)", atomr_solver_actor_lu_tensor_finish,
              atomr_solver_actor_lu_tensor_async (sv, a_strided, piv, NULL, done, &res));
  SV_INVALID ("lu: a must be a matrix (2 dimensions), not of rank 1", atomr_solver_actor_lu_tensor_finish,
              atomr_solver_actor_lu_tensor_async (sv, vec, piv, NULL, done, &res));
  SV_INVALID ("lu: ipiv holds 3 pivots but the matrix needs 4", atomr_solver_actor_lu_tensor_finish,
              atomr_solver_actor_lu_tensor_async (sv, a, piv3, NULL, done, &res));
  SV_INVALID ("lu: ipiv must be a contiguous 1-D i64 view", atomr_solver_actor_lu_tensor_finish,
              atomr_solver_actor_lu_tensor_async (sv, a, piv_strided, NULL, done, &res));
  SV_INVALID ("lu: ipiv must be a contiguous 1-D i64 view (it is i32", atomr_solver_actor_lu_tensor_finish,
              atomr_solver_actor_lu_tensor_async (sv, a, piv_i32, NULL, done, &res));
  SV_INVALID ("lu_solve: a is 3 × 4; it must be square", atomr_solver_actor_lu_solve_tensor_finish,
              atomr_solver_actor_lu_solve_tensor_async (sv, ATOMR_SOLVER_NO_TRANSPOSE, a_rect, piv, b, NULL,
                                                        done, &res));
  SV_INVALID ("lu_solve: b has 3 rows but a is of order 4", atomr_solver_actor_lu_solve_tensor_finish,
              atomr_solver_actor_lu_solve_tensor_async (sv, ATOMR_SOLVER_NO_TRANSPOSE, a, piv, b_short, NULL,
                                                        done, &res));
  SV_INVALID ("lu_solve: b overlaps a in memory", atomr_solver_actor_lu_solve_tensor_finish,
              atomr_solver_actor_lu_solve_tensor_async (sv, ATOMR_SOLVER_NO_TRANSPOSE, a, piv, a_overlap, NULL,
                                                        done, &res));
  SV_INVALID ("cholesky: a is 3 × 4; it must be square", atomr_solver_actor_cholesky_tensor_finish,
              atomr_solver_actor_cholesky_tensor_async (sv, lo, a_rect, NULL, done, &res));
  SV_INVALID ("cholesky_solve: b overlaps a", atomr_solver_actor_cholesky_solve_tensor_finish,
              atomr_solver_actor_cholesky_solve_tensor_async (sv, lo, a, a_overlap, NULL, done, &res));
  SV_INVALID ("uplo 7", atomr_solver_actor_cholesky_tensor_finish,
              atomr_solver_actor_cholesky_tensor_async (sv, 7, a, NULL, done, &res));

  /* Sub-matrix views pass validation and stop at the missing GPU. */
  EXPECT_NO_GPU ("cuSOLVER needs a CUDA device", atomr_solver_actor_lu_tensor_finish, sv,
                 atomr_solver_actor_lu_tensor_async (sv, a, piv, NULL, done, &res));
  EXPECT_NO_GPU ("cuSOLVER needs a CUDA device", atomr_solver_actor_lu_solve_tensor_finish, sv,
                 atomr_solver_actor_lu_solve_tensor_async (sv, ATOMR_SOLVER_TRANSPOSE, a, piv, b, NULL,
                                                           done, &res));
  EXPECT_NO_GPU ("cuSOLVER needs a CUDA device", atomr_solver_actor_cholesky_tensor_finish, sv,
                 atomr_solver_actor_cholesky_tensor_async (sv, lo, a, NULL, done, &res));
  EXPECT_NO_GPU ("cuSOLVER needs a CUDA device", atomr_solver_actor_cholesky_solve_tensor_finish, sv,
                 atomr_solver_actor_cholesky_solve_tensor_async (sv, lo, a, b, NULL, done, &res));
#undef SV_INVALID
}

static void
test_solver_validation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrSolverActor) sv = atomr_solver_actor_new (host, &error);
  g_autoptr(AtomrBuffer) a = buffer (ATOMR_DTYPE_F64, 16);       /* 4 × 4 */
  g_autoptr(AtomrBuffer) a2 = buffer (ATOMR_DTYPE_F64, 16);
  g_autoptr(AtomrBuffer) a_i32 = buffer (ATOMR_DTYPE_I32, 16);
  g_autoptr(AtomrBuffer) a_c = buffer (ATOMR_DTYPE_C128, 16);
  g_autoptr(AtomrBuffer) a_c2 = buffer (ATOMR_DTYPE_C128, 16);
  g_autoptr(AtomrBuffer) a_f32 = buffer (ATOMR_DTYPE_F32, 16);
  g_autoptr(AtomrBuffer) big = buffer (ATOMR_DTYPE_F64, 64 * 64);
  g_autoptr(AtomrBuffer) ipiv = buffer (ATOMR_DTYPE_I64, 4);
  g_autoptr(AtomrBuffer) ipiv3 = buffer (ATOMR_DTYPE_I64, 3);
  g_autoptr(AtomrBuffer) ipiv32 = buffer (ATOMR_DTYPE_I32, 16);
  g_autoptr(AtomrBuffer) ipiv15 = buffer (ATOMR_DTYPE_I32, 15);
  g_autoptr(AtomrBuffer) b = buffer (ATOMR_DTYPE_F64, 8);        /* 4 × 2 */
  g_autoptr(AtomrBuffer) b_f32 = buffer (ATOMR_DTYPE_F32, 8);
  g_autoptr(AtomrBuffer) tau = buffer (ATOMR_DTYPE_F64, 4);
  g_autoptr(AtomrBuffer) tau3 = buffer (ATOMR_DTYPE_F64, 3);
  g_autoptr(AtomrBuffer) q_small = buffer (ATOMR_DTYPE_F64, 12);
  g_autoptr(AtomrBuffer) s = buffer (ATOMR_DTYPE_F64, 4);
  g_autoptr(AtomrBuffer) s_f32 = buffer (ATOMR_DTYPE_F32, 4);
  g_autoptr(AtomrBuffer) s_many = buffer (ATOMR_DTYPE_F64, 64);
  g_autoptr(AtomrBuffer) u = buffer (ATOMR_DTYPE_F64, 16);
  g_autoptr(AtomrBuffer) v = buffer (ATOMR_DTYPE_F64, 16);
  g_autoptr(AtomrBuffer) u_small = buffer (ATOMR_DTYPE_F64, 15);
  g_autoptr(AtomrBuffer) batch4 = buffer (ATOMR_DTYPE_F64, 64);  /* 4 × (4 × 4) */

  g_assert_no_error (error);
  g_assert_cmpuint (atomr_solver_actor_get_workspace_size (sv), ==, 0);

#define SV(op, needle, ...) \
  EXPECT_INVALID (needle, atomr_solver_actor_##op##_finish, sv, \
                  atomr_solver_actor_##op##_async (sv, __VA_ARGS__, NULL, done, &res))
#define SV_NO_GPU(op, ...) \
  EXPECT_NO_GPU ("cuSOLVER needs a CUDA device", atomr_solver_actor_##op##_finish, sv, \
                 atomr_solver_actor_##op##_async (sv, __VA_ARGS__, NULL, done, &res))

  /* lu */
  SV (lu, "a must be an AtomrBuffer", NULL, 4, 4, 4, ipiv);
  SV (lu, "a has dtype i32; supported: f32, f64, c64, c128", a_i32, 4, 4, 4, ipiv);
  SV (lu, "m is 0", a, 0, 4, 4, ipiv);
  SV (lu, "n is -1", a, 4, -1, 4, ipiv);
  SV (lu, "leading dimension lda is 3; it must be at least 4", a, 4, 4, 3, ipiv);
  SV (lu, "a holds 16 elements but 4 × 5 with lda = 4 need 20", a, 4, 5, 4, ipiv);
  SV (lu, "ipiv has dtype i32, expected i64", a, 4, 4, 4, ipiv32);
  SV (lu, "ipiv holds 3 elements", a, 4, 4, 4, ipiv3);
  SV_NO_GPU (lu, a, 4, 4, 4, ipiv);

  /* lu_solve */
  SV (lu_solve, "trans 3", 3, a, 4, 4, ipiv, b, 2, 4);
  SV (lu_solve, "nrhs is 0", ATOMR_SOLVER_NO_TRANSPOSE, a, 4, 4, ipiv, b, 0, 4);
  SV (lu_solve, "a has dtype f64 but b has dtype f32", ATOMR_SOLVER_NO_TRANSPOSE, a, 4, 4, ipiv, b_f32, 2, 4);
  SV (lu_solve, "output b and input a are the same buffer", ATOMR_SOLVER_NO_TRANSPOSE, a, 4, 4, ipiv, a, 2, 4);
  SV (lu_solve, "leading dimension ldb is 2", ATOMR_SOLVER_NO_TRANSPOSE, a, 4, 4, ipiv, b, 2, 2);
  SV (lu_solve, "b holds 8 elements but 4 × 3", ATOMR_SOLVER_TRANSPOSE, a, 4, 4, ipiv, b, 3, 4);
  SV_NO_GPU (lu_solve, ATOMR_SOLVER_CONJUGATE_TRANSPOSE, a, 4, 4, ipiv, b, 2, 4);

  /* qr */
  SV (qr, "tau holds 3 elements", a, 4, 4, 4, tau3, NULL);
  SV (qr, "output a and output tau are the same buffer", a, 4, 4, 4, a, NULL);
  SV (qr, "q holds 12 elements but 4 × 4", a, 4, 4, 4, tau, q_small);
  SV (qr, "output a and output q are the same buffer", a, 4, 4, 4, tau, a);
  SV_NO_GPU (qr, a, 4, 3, 4, tau, q_small);

  /* cholesky, cholesky_solve */
  SV (cholesky, "uplo 2 is not an AtomrSolverFill", 2, a, 4, 4);
  SV (cholesky, "n is 0", ATOMR_SOLVER_LOWER, a, 0, 4);
  SV (cholesky, "a holds 16 elements but 5 × 5", ATOMR_SOLVER_LOWER, a, 5, 5);
  SV_NO_GPU (cholesky, ATOMR_SOLVER_UPPER, a, 4, 4);
  SV (cholesky_solve, "uplo 5", 5, a, 4, 4, b, 2, 4);
  SV (cholesky_solve, "output b and input a are the same buffer", ATOMR_SOLVER_LOWER, a, 4, 4, a, 2, 4);
  SV (cholesky_solve, "nrhs is -3", ATOMR_SOLVER_LOWER, a, 4, 4, b, -3, 4);
  SV_NO_GPU (cholesky_solve, ATOMR_SOLVER_LOWER, a, 4, 4, b, 2, 4);

  /* svd */
  SV (svd, "needs m >= n", a, 2, 4, 4, s, NULL, 1, NULL, 1);
  SV (svd, "s has dtype f32, expected f64", a, 4, 4, 4, s_f32, NULL, 1, NULL, 1);
  SV (svd, "u holds 15 elements", a, 4, 4, 4, s, u_small, 4, NULL, 1);
  SV (svd, "leading dimension ldvt is 3", a, 4, 4, 4, s, u, 4, v, 3);
  SV (svd, "output u and output vt are the same buffer", a, 4, 4, 4, s, u, 4, u, 4);
  SV_NO_GPU (svd, a, 4, 4, 4, s, u, 4, v, 4);
  SV_NO_GPU (svd, a, 4, 4, 4, s, NULL, 0, NULL, 0);

  /* gesvdj_batched */
  SV (gesvdj_batched, "at most 32 × 32", big, 64, 64, 64, s_many, u, 64, v, 64, 1);
  SV (gesvdj_batched, "batch is 0", a, 4, 4, 4, s, u, 4, v, 4, 0);
  SV (gesvdj_batched, "a holds 16 elements but 2 matrices of 4 × 4", a, 4, 4, 4, s, u, 4, v, 4, 2);
  SV (gesvdj_batched, "s holds 4 elements", batch4, 4, 4, 4, s, u, 4, v, 4, 4);
  /* Issue 11, item 2: s could be u or v (all f64 here), and cuSOLVER
   * wrote the singular values over the vectors. */
  SV (gesvdj_batched, "output s and output u are the same buffer", a, 4, 4, 4, u, u, 4, v, 4, 1);
  SV (gesvdj_batched, "output s and output v are the same buffer", a, 4, 4, 4, v, u, 4, v, 4, 1);
  SV (gesvdj_batched, "output a and output s are the same buffer", u, 4, 4, 4, u, a, 4, v, 4, 1);
  SV_NO_GPU (gesvdj_batched, a, 4, 4, 4, s, u, 4, v, 4, 1);

  /* issue 11: batched solves, wide SVD, syevj */
  {
    g_autoptr(AtomrBuffer) ipiv_i32 = buffer (ATOMR_DTYPE_I32, 8);
    g_autoptr(AtomrBuffer) b32 = buffer (ATOMR_DTYPE_F64, 32);
    g_autoptr(AtomrBuffer) a32 = buffer (ATOMR_DTYPE_F64, 32);
    g_autoptr(AtomrBuffer) z_w = buffer (ATOMR_DTYPE_C128, 4);

    SV (getrs_batched, "trans 5 is not an AtomrSolverTranspose", 5, a32, 4, 4, ipiv_i32, b32, 4, 4, 2);
    SV (getrs_batched, "ipiv has dtype i64, expected i32", ATOMR_SOLVER_NO_TRANSPOSE, a32, 4, 4, ipiv, b32, 4, 4, 2);
    SV (getrs_batched, "ipiv holds 8 elements but the arguments need 12", ATOMR_SOLVER_NO_TRANSPOSE, batch4, 4, 4, ipiv_i32, batch4, 1, 4, 3);
    SV (getrs_batched, "b holds 32 elements but 2 matrices of 4 × 5", ATOMR_SOLVER_NO_TRANSPOSE, a32, 4, 4, ipiv_i32, b32, 5, 4, 2);
    SV (getrs_batched, "output b and input a are the same buffer", ATOMR_SOLVER_NO_TRANSPOSE, a32, 4, 4, ipiv_i32, a32, 4, 4, 2);
    SV (getrs_batched, "batch is 0", ATOMR_SOLVER_NO_TRANSPOSE, a32, 4, 4, ipiv_i32, b32, 4, 4, 0);
    SV_NO_GPU (getrs_batched, ATOMR_SOLVER_TRANSPOSE, a32, 4, 4, ipiv_i32, b32, 4, 4, 2);
    SV (potrs_batched, "leading dimension ldb is 3", ATOMR_SOLVER_LOWER, a32, 4, 4, b32, 3, 2);
    SV (potrs_batched, "output b and input a are the same buffer", ATOMR_SOLVER_LOWER, a32, 4, 4, a32, 4, 2);
    SV (potrs_batched, "a holds 32 elements but 3 matrices of 4 × 4", ATOMR_SOLVER_LOWER, a32, 4, 4, b32, 4, 3);
    SV_NO_GPU (potrs_batched, ATOMR_SOLVER_UPPER, a32, 4, 4, b32, 4, 2);
    /* a wide 2 × 4 matrix with full U (2 × 2) and V (4 × 4) */
    SV (gesvdj, "s holds 4 elements but the arguments need 5", big, 5, 7, 5, s, u, 5, v, 7, FALSE);
    SV (gesvdj, "u holds 16 elements but 5 × 5", big, 5, 7, 5, s_many, u, 5, s_many, 7, TRUE);
    SV (gesvdj, "output u and output v are the same buffer", a, 2, 4, 2, s, u, 2, u, 4, TRUE);
    SV (gesvdj, "output a and output s are the same buffer", s_many, 2, 4, 2, s_many, u, 2, v, 4, TRUE);
    SV_NO_GPU (gesvdj, a, 2, 4, 2, s, u, 2, v, 4, TRUE);
    SV (syevj, "w has dtype f32, expected f64", ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, s_f32);
    SV (syevj, "output a and output w are the same buffer", ATOMR_SOLVER_LOWER, TRUE, u, 4, 4, u);
    SV_NO_GPU (syevj, ATOMR_SOLVER_UPPER, FALSE, a, 4, 4, s);
    SV (gels, "m is 2 and n is 4; cuSOLVER's gels solves overdetermined", a, 2, 4, 2, b32, 1, 2, u, 4);
    SV (gels, "x holds 16 elements but 4 × 5", a32, 8, 4, 8, big, 5, 8, u, 4);
    SV (gels, "output x and input b are the same buffer", a32, 8, 4, 8, b32, 1, 8, b32, 4);
    SV_NO_GPU (gels, a32, 8, 4, 8, b32, 2, 8, u, 4);
    SV (geev, "a has dtype f64 but w has dtype c128", a, 4, 4, z_w, NULL, 4);
    SV (geev, "w holds 4 elements but the arguments need 8", a, 4, 4, s, NULL, 4);
    SV (geev, "vr holds 15 elements but 4 × 4", a, 4, 4, u, u_small, 4);
    SV (geev, "output w and output vr are the same buffer", a, 4, 4, u, u, 4);
    SV_NO_GPU (geev, a, 4, 4, u, v, 4);
    SV_NO_GPU (geev, a, 4, 4, a32, NULL, 0);
  }

  /* syevd, heevd */
  SV (syevd, "a has dtype c128; supported: f32, f64", ATOMR_SOLVER_LOWER, TRUE, a_c, 4, 4, s);
  SV (syevd, "w has dtype f32, expected f64", ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, s_f32);
  SV (syevd, "uplo 4", 4, TRUE, a, 4, 4, s);
  SV_NO_GPU (syevd, ATOMR_SOLVER_UPPER, FALSE, a, 4, 4, s);
  SV (heevd, "a has dtype f64; supported: c64, c128", ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, s);
  SV_NO_GPU (heevd, ATOMR_SOLVER_LOWER, TRUE, a_c, 4, 4, s);

  /* sygvd, hegvd */
  SV (sygvd, "itype 3", 3, ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, a2, 4, s);
  SV (sygvd, "output a and output b are the same buffer", ATOMR_SOLVER_EIG_AX_LBX, ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, a, 4, s);
  SV (sygvd, "a has dtype f64 but b has dtype f32", ATOMR_SOLVER_EIG_AX_LBX, ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, a_f32, 4, s);
  SV (sygvd, "ldb is 0", ATOMR_SOLVER_EIG_AX_LBX, ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, a2, 0, s);
  SV_NO_GPU (sygvd, ATOMR_SOLVER_EIG_BAX_LX, ATOMR_SOLVER_UPPER, TRUE, a, 4, 4, a2, 4, s);
  SV (hegvd, "a has dtype f64; supported: c64, c128", ATOMR_SOLVER_EIG_AX_LBX, ATOMR_SOLVER_LOWER, TRUE, a, 4, 4, a2, 4, s);
  SV_NO_GPU (hegvd, ATOMR_SOLVER_EIG_ABX_LX, ATOMR_SOLVER_LOWER, TRUE, a_c, 4, 4, a_c2, 4, s);

  /* getrf_batched, potrf_batched */
  SV (getrf_batched, "batch is 0", batch4, 4, 4, NULL, 0);
  SV (getrf_batched, "a holds 64 elements but 5 matrices of 4 × 4", batch4, 4, 4, NULL, 5);
  SV (getrf_batched, "ipiv has dtype i64, expected i32", batch4, 4, 4, ipiv, 4);
  SV (getrf_batched, "ipiv holds 15 elements but the arguments need 16", batch4, 4, 4, ipiv15, 4);
  SV (getrf_batched, "leading dimension lda is 3", batch4, 4, 3, NULL, 4);
  SV_NO_GPU (getrf_batched, batch4, 4, 4, ipiv32, 4);
  SV_NO_GPU (getrf_batched, batch4, 4, 4, NULL, 4);
  SV (potrf_batched, "uplo 9", 9, batch4, 4, 4, 4);
  SV (potrf_batched, "n is 0", ATOMR_SOLVER_LOWER, batch4, 0, 4, 4);
  SV_NO_GPU (potrf_batched, ATOMR_SOLVER_LOWER, batch4, 4, 4, 4);
}

/* cuSOLVER is not linked (it would map nvJitLink into every process): it
 * is loaded on first use, and every entry point the actor calls resolves. */
static void
test_solver_loader (void)
{
  g_autoptr(GError) error = NULL;
  const AtomrCusolverLib *lib;

  if (g_getenv ("ATOMR_TEST_NO_CUSOLVER"))
    {
      g_test_skip ("ATOMR_TEST_NO_CUSOLVER is set");
      return;
    }
  g_assert_null (atomr_cusolver_get ());
  lib = atomr_cusolver_load (&error);
  if (lib == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_test_skip (error->message);
      return;
    }
  g_assert_true (lib == atomr_cusolver_get ());
  g_assert_nonnull (lib->cusolverDnXgetrf);
  g_assert_nonnull (lib->cusolverDnZpotrfBatched);
}

int
main (int    argc,
      char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  host = atomr_device_new_host ();

  g_test_add_func ("/fft/plan/validation", test_fft_plan_validation);
  g_test_add_func ("/fft/plan/layout", test_fft_plan_layout);
  g_test_add_func ("/fft/plan/array-lengths", test_fft_plan_array_lengths);
  g_test_add_func ("/fft/plan/overflow", test_fft_plan_overflow);
  g_test_add_func ("/fft/plan/half", test_fft_plan_half);
  g_test_add_func ("/fft/tensor/validation", test_fft_tensor_validation);
  g_test_add_func ("/fft/execute/validation", test_fft_execute_validation);
  g_test_add_func ("/fft/properties", test_fft_properties);
  g_test_add_func ("/rng/validation", test_rng_validation);
  g_test_add_func ("/rng/properties", test_rng_properties);
  g_test_add_func ("/solver/validation", test_solver_validation);
  g_test_add_func ("/solver/tensor/validation", test_solver_tensor_validation);
  g_test_add_func ("/solver/loader", test_solver_loader);

  ret = g_test_run ();
  g_object_unref (host);
  return ret;
}
