/* test-gpu-fft.c — AtomrFftActor against a CPU DFT in double precision:
 * C2C (both directions), R2C and C2R in 1-, 2- and 3-D, f32 and f64,
 * batched, strided and embedded layouts, in place, plans inferred from
 * buffer shapes, the plan cache, and a device reset; f16 and bf16
 * transforms, and plans made on a worker.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "math-test-util.h"

typedef struct {
  AtomrFftKind kind;
  AtomrDtype   precision;
  guint        rank;
  gint64       n[3];
  gint64       batch;
  gboolean     advanced;
  gint64       inembed[3], istride, idist;
  gint64       onembed[3], ostride, odist;
  gboolean     in_place;
} Case;

static AtomrDevice *device;
static AtomrFftActor *fft;
static GRand *rng;

/* Naive DFT along every axis of one packed row-major signal. */
static void
dft_nd (double complex *data,
        const gint64   *n,
        guint           rank,
        int             sign)
{
  gint64 total = 1;

  for (guint d = 0; d < rank; d++)
    total *= n[d];
  for (guint d = 0; d < rank; d++)
    {
      gint64 len = n[d], inner = 1;
      g_autofree double complex *line = g_new (double complex, len);
      g_autofree double complex *res = g_new (double complex, len);

      for (guint e = d + 1; e < rank; e++)
        inner *= n[e];
      for (gint64 start = 0; start < total; start++)
        {
          if ((start / inner) % len != 0)
            continue;   /* not the first element of a line along d */
          for (gint64 j = 0; j < len; j++)
            line[j] = data[start + j * inner];
          for (gint64 k = 0; k < len; k++)
            {
              double complex acc = 0;
              for (gint64 j = 0; j < len; j++)
                acc += line[j] * cexp (sign * 2.0 * G_PI * I * (double) ((j * k) % len) / (double) len);
              res[k] = acc;
            }
          for (gint64 k = 0; k < len; k++)
            data[start + k * inner] = res[k];
        }
    }
}

static gint64
product (const gint64 *dims,
         guint         rank)
{
  gint64 p = 1;
  for (guint d = 0; d < rank; d++)
    p *= dims[d];
  return p;
}

/* Offset of logical element @idx of batch member @b in a layout. */
static gint64
layout_offset (guint          rank,
               const gint64  *embed,
               gint64         stride,
               gint64         dist,
               gint64         b,
               const gint64  *idx)
{
  gint64 off = 0;
  for (guint d = 0; d < rank; d++)
    off = off * (d == 0 ? 1 : embed[d]) + idx[d];
  return b * dist + off * stride;
}

static void
unravel (gint64        i,
         const gint64 *dims,
         guint         rank,
         gint64       *idx)
{
  for (gint d = rank - 1; d >= 0; d--)
    {
      idx[d] = i % dims[d];
      i /= dims[d];
    }
}

static void
run_case (const Case        *c,
          AtomrFftDirection  dir)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftPlan) plan = NULL;
  g_autoptr(AtomrBuffer) in_buf = NULL;
  g_autoptr(AtomrBuffer) out_buf = NULL;
  g_autofree double complex *in_mem = NULL;
  g_autofree double complex *out_mem = NULL;
  g_autofree double complex *got = NULL;
  g_autofree double complex *want = NULL;
  gint64 in_dims[3], out_dims[3], half[3];
  gint64 in_n, out_n, full_n = product (c->n, c->rank);
  gint64 in_embed[3], out_embed[3], istride = 1, idist, ostride = 1, odist;
  guint64 in_elems, out_elems;
  guint rank = c->rank;
  double err;

  switch (rank)
    {
    case 1:
      if (!c->advanced)
        {
          plan = atomr_fft_plan_new_1d (c->kind, c->precision, c->n[0], c->batch, &error);
          break;
        }
      G_GNUC_FALLTHROUGH;
    case 2:
      if (!c->advanced && rank == 2)
        {
          plan = atomr_fft_plan_new_2d (c->kind, c->precision, c->n[0], c->n[1], c->batch, &error);
          break;
        }
      G_GNUC_FALLTHROUGH;
    default:
      if (!c->advanced)
        plan = atomr_fft_plan_new_3d (c->kind, c->precision, c->n[0], c->n[1], c->n[2], c->batch, &error);
      else
        plan = atomr_fft_plan_new_many (c->kind, c->precision, c->n, rank, c->inembed, rank,
                                        c->istride, c->idist, c->onembed, rank,
                                        c->ostride, c->odist, c->batch, &error);
    }
  g_assert_no_error (error);

  memcpy (in_dims, c->n, sizeof in_dims);
  memcpy (out_dims, c->n, sizeof out_dims);
  memcpy (half, c->n, sizeof half);
  half[rank - 1] = c->n[rank - 1] / 2 + 1;
  if (c->kind == ATOMR_FFT_C2R)
    memcpy (in_dims, half, sizeof half);
  if (c->kind == ATOMR_FFT_R2C)
    memcpy (out_dims, half, sizeof half);
  in_n = product (in_dims, rank);
  out_n = product (out_dims, rank);
  if (c->advanced)
    {
      memcpy (in_embed, c->inembed, sizeof in_embed);
      memcpy (out_embed, c->onembed, sizeof out_embed);
      istride = c->istride, idist = c->idist, ostride = c->ostride, odist = c->odist;
    }
  else
    {
      memcpy (in_embed, in_dims, sizeof in_embed);
      memcpy (out_embed, out_dims, sizeof out_embed);
      idist = in_n, odist = out_n;
    }

  in_elems = atomr_fft_plan_get_input_elements (plan);
  out_elems = atomr_fft_plan_get_output_elements (plan);
  in_buf = math_buffer (device, atomr_fft_plan_get_input_dtype (plan),
                        c->in_place ? MAX (in_elems, out_elems) : in_elems);
  out_buf = c->in_place ? g_object_ref (in_buf)
                        : math_buffer (device, atomr_fft_plan_get_output_dtype (plan), out_elems);

  /* Logical input and expected output, one batch member at a time. */
  in_mem = g_new0 (double complex, atomr_buffer_get_n_elements (in_buf));
  want = g_new0 (double complex, out_n * c->batch);
  for (gint64 b = 0; b < c->batch; b++)
    {
      g_autofree double complex *x = g_new0 (double complex, full_n);
      g_autofree double complex *spec = NULL;
      gint64 idx[3];

      for (gint64 i = 0; i < full_n; i++)
        x[i] = math_random (rng, c->kind == ATOMR_FFT_C2C);
      spec = g_memdup2 (x, full_n * sizeof (double complex));
      switch (c->kind)
        {
        case ATOMR_FFT_C2C:
          dft_nd (spec, c->n, rank, dir == ATOMR_FFT_FORWARD ? -1 : 1);
          for (gint64 i = 0; i < full_n; i++)
            {
              unravel (i, c->n, rank, idx);
              in_mem[layout_offset (rank, in_embed, istride, idist, b, idx)] = x[i];
              want[b * out_n + i] = spec[i];
            }
          break;
        case ATOMR_FFT_R2C:
          dft_nd (spec, c->n, rank, -1);
          for (gint64 i = 0; i < full_n; i++)
            {
              unravel (i, c->n, rank, idx);
              in_mem[layout_offset (rank, in_embed, istride, idist, b, idx)] = x[i];
            }
          for (gint64 i = 0; i < out_n; i++)
            {
              gint64 full_idx = 0;
              unravel (i, half, rank, idx);
              for (guint d = 0; d < rank; d++)
                full_idx = full_idx * c->n[d] + idx[d];
              want[b * out_n + i] = spec[full_idx];
            }
          break;
        case ATOMR_FFT_C2R:
        default:
          /* The input is the half spectrum of a real signal; the
           * unnormalised inverse gives back the signal times its size. */
          dft_nd (spec, c->n, rank, -1);
          for (gint64 i = 0; i < in_n; i++)
            {
              gint64 full_idx = 0;
              unravel (i, half, rank, idx);
              for (guint d = 0; d < rank; d++)
                full_idx = full_idx * c->n[d] + idx[d];
              in_mem[layout_offset (rank, in_embed, istride, idist, b, idx)] = spec[full_idx];
            }
          for (gint64 i = 0; i < full_n; i++)
            want[b * out_n + i] = x[i] * (double) full_n;
          break;
        }
    }

  math_upload (in_buf, in_mem, atomr_buffer_get_n_elements (in_buf));
  g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, fft, &error,
                           atomr_fft_actor_execute_async (fft, plan, dir, in_buf, out_buf, NULL,
                                                          math_done, &res)));
  g_assert_no_error (error);

  out_mem = math_download (out_buf);
  got = g_new0 (double complex, out_n * c->batch);
  for (gint64 b = 0; b < c->batch; b++)
    for (gint64 i = 0; i < out_n; i++)
      {
        gint64 idx[3];
        unravel (i, out_dims, rank, idx);
        got[b * out_n + i] = out_mem[layout_offset (rank, out_embed, ostride, odist, b, idx)];
      }
  err = math_rel_error (got, want, out_n * c->batch);
  g_test_message ("kind %d %s rank %u batch %" G_GINT64_FORMAT "%s%s: relative error %.3g",
                  c->kind, atomr_dtype_get_name (c->precision), rank, c->batch,
                  c->advanced ? " advanced" : "", c->in_place ? " in place" : "", err);
  g_assert_cmpfloat (err, <, math_tolerance (c->precision));
}

static void
test_all_kinds_and_dims (void)
{
  static const AtomrDtype precisions[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64 };
  static const gint64 shapes[3][3] = { { 60, 0, 0 }, { 12, 10, 0 }, { 6, 4, 8 } };

  MATH_REQUIRE_DEVICE (device);
  for (guint p = 0; p < G_N_ELEMENTS (precisions); p++)
    for (guint rank = 1; rank <= 3; rank++)
      for (guint batch = 1; batch <= 3; batch += 2)
        {
          Case c = { .precision = precisions[p], .rank = rank, .batch = batch };
          memcpy (c.n, shapes[rank - 1], sizeof c.n);
          c.kind = ATOMR_FFT_C2C;
          run_case (&c, ATOMR_FFT_FORWARD);
          run_case (&c, ATOMR_FFT_INVERSE);
          c.kind = ATOMR_FFT_R2C;
          run_case (&c, ATOMR_FFT_FORWARD);
          c.kind = ATOMR_FFT_C2R;
          run_case (&c, ATOMR_FFT_INVERSE);
        }
}

static void
test_advanced_layouts (void)
{
  MATH_REQUIRE_DEVICE (device);
  for (guint p = 0; p < 2; p++)
    {
      AtomrDtype prec = p ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
      /* 1-D, 4 signals interleaved (stride 4, dist 1) into packed output. */
      Case interleaved = { ATOMR_FFT_C2C, prec, 1, { 16 }, 4, TRUE, { 16 }, 4, 1, { 16 }, 1, 16, FALSE };
      /* 2-D in padded rows (8 × 10 storage for 8 × 6) with gaps between members. */
      Case padded = { ATOMR_FFT_C2C, prec, 2, { 8, 6 }, 3, TRUE, { 8, 10 }, 1, 90, { 8, 6 }, 2, 100, FALSE };
      /* R2C 2-D with padded real rows, the usual in-place-style layout. */
      Case r2c = { ATOMR_FFT_R2C, prec, 2, { 6, 10 }, 2, TRUE, { 6, 12 }, 1, 72, { 6, 6 }, 1, 40, FALSE };
      /* C2R 3-D from strided complex input. */
      Case c2r = { ATOMR_FFT_C2R, prec, 3, { 4, 4, 6 }, 2, TRUE, { 4, 4, 4 }, 2, 130, { 4, 4, 6 }, 1, 96, FALSE };
      /* In place. */
      Case in_place = { ATOMR_FFT_C2C, prec, 2, { 16, 8 }, 2, FALSE, { 0 }, 0, 0, { 0 }, 0, 0, TRUE };

      run_case (&interleaved, ATOMR_FFT_FORWARD);
      run_case (&interleaved, ATOMR_FFT_INVERSE);
      run_case (&padded, ATOMR_FFT_FORWARD);
      run_case (&r2c, ATOMR_FFT_FORWARD);
      run_case (&c2r, ATOMR_FFT_INVERSE);
      run_case (&in_place, ATOMR_FFT_FORWARD);
    }
}

/* Forward then inverse returns the input scaled by the size; no plan
 * given: the transform comes from the buffers' shapes. */
static void
test_round_trip_inferred (void)
{
  g_autoptr(GError) error = NULL;
  gint64 shape[2] = { 32, 24 }, half_shape[2] = { 32, 13 };
  g_autoptr(AtomrBuffer) x = NULL;
  g_autoptr(AtomrBuffer) spec = NULL;
  g_autoptr(AtomrBuffer) back = NULL;
  g_autofree double complex *data = NULL;
  g_autofree double complex *result = NULL;

  MATH_REQUIRE_DEVICE (device);
  x = atomr_buffer_new_with_shape (device, ATOMR_DTYPE_F64, shape, 2, &error);
  spec = atomr_buffer_new_with_shape (device, ATOMR_DTYPE_C128, half_shape, 2, &error);
  back = atomr_buffer_new_with_shape (device, ATOMR_DTYPE_F64, shape, 2, &error);
  g_assert_no_error (error);
  data = g_new (double complex, 32 * 24);
  for (guint i = 0; i < 32 * 24; i++)
    data[i] = math_random (rng, FALSE);
  math_upload (x, data, 32 * 24);

  g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, fft, &error,
                           atomr_fft_actor_execute_async (fft, NULL, ATOMR_FFT_FORWARD, x, spec, NULL,
                                                          math_done, &res)));
  g_assert_no_error (error);
  g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, fft, &error,
                           atomr_fft_actor_execute_async (fft, NULL, ATOMR_FFT_INVERSE, spec, back, NULL,
                                                          math_done, &res)));
  g_assert_no_error (error);
  result = math_download (back);
  for (guint i = 0; i < 32 * 24; i++)
    data[i] *= 32 * 24;
  g_assert_cmpfloat (math_rel_error (result, data, 32 * 24), <, 1e-12);
}

static void
test_plan_cache (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftActor) own = NULL;
  g_autoptr(AtomrFftPlan) p1 = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 256, 4, &error);
  g_autoptr(AtomrFftPlan) p1_again = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 256, 4, &error);
  g_autoptr(AtomrFftPlan) p2 = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 128, 8, &error);
  g_autoptr(AtomrBuffer) a = NULL;
  g_autoptr(AtomrBuffer) b = NULL;
  guint64 hits = 0, misses = 0;

  MATH_REQUIRE_DEVICE (device);
  own = atomr_fft_actor_new (device, &error);
  g_assert_no_error (error);
  a = math_buffer (device, ATOMR_DTYPE_C64, 1024);
  b = math_buffer (device, ATOMR_DTYPE_C64, 1024);
  atomr_buffer_fill_sync (a, 1.0, NULL, &error);
  g_assert_no_error (error);

#define EXEC(plan) \
  g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, own, &error, \
                           atomr_fft_actor_execute_async (own, plan, ATOMR_FFT_FORWARD, a, b, NULL, \
                                                          math_done, &res)))
  EXEC (p1);
  EXEC (p1_again);   /* an equal description is a hit */
  EXEC (p1);
  EXEC (p2);
  g_object_get (own, "plan-cache-hits", &hits, "plan-cache-misses", &misses, NULL);
  g_assert_cmpuint (hits, ==, 2);
  g_assert_cmpuint (misses, ==, 2);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_size (own), ==, 2);

  /* Capacity 1: alternating plans evict each other. */
  atomr_fft_actor_set_plan_cache_capacity (own, 1);
  EXEC (p1);         /* hit: still cached */
  EXEC (p2);         /* hit */
  EXEC (p1);         /* hit; no new plan made yet, so nothing evicted */
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_hits (own), ==, 5);
  atomr_fft_actor_set_plan_cache_capacity (own, 0);
  EXEC (p2);         /* hit on the old entry */
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_hits (own), ==, 6);
  atomr_fft_actor_set_plan_cache_capacity (own, 1);
  {
    g_autoptr(AtomrFftPlan) p3 = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 64, 16, &error);
    EXEC (p3);       /* miss: evicts down to one entry */
  }
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_size (own), ==, 1);
  EXEC (p1);         /* miss again */
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_misses (own), ==, 4);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_size (own), ==, 1);

  /* Capacity 0: a plan per call, nothing kept. */
  atomr_fft_actor_set_plan_cache_capacity (own, 0);
  EXEC (p2);
  EXEC (p2);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_misses (own), ==, 6);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_size (own), ==, 0);
  g_assert_no_error (error);
#undef EXEC
}

static void
test_device_reset (void)
{
  g_autoptr(GError) error = NULL;
  guint64 misses;
  Case c = { ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 2, { 16, 16 }, 2 };
  Case r = { ATOMR_FFT_R2C, ATOMR_DTYPE_F64, 1, { 100 }, 3 };

  MATH_REQUIRE_DEVICE (device);
  run_case (&c, ATOMR_FFT_FORWARD);
  misses = atomr_fft_actor_get_plan_cache_misses (fft);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_size (fft), >, 0);
  g_assert_true (atomr_device_reset (device, &error));
  g_assert_no_error (error);
  /* The old plans died with the context: the same transform makes a new one. */
  run_case (&c, ATOMR_FFT_FORWARD);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_misses (fft), ==, misses + 1);
  run_case (&r, ATOMR_FFT_FORWARD);
  run_case (&c, ATOMR_FFT_INVERSE);
}

/* ------------------------------------------------------------------ */
/* Issue 11: normalisation, the shared work area, 4096 × 4096            */

static void
test_normalization (void)
{
  const gint64 n = 48, batch = 3;
  static const AtomrFftNormalization norms[] = { ATOMR_FFT_NORM_NONE, ATOMR_FFT_NORM_BACKWARD,
                                                 ATOMR_FFT_NORM_FORWARD, ATOMR_FFT_NORM_ORTHO };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftPlan) plan = NULL;

  MATH_REQUIRE_DEVICE (device);
  plan = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F64, n, batch, &error);
  g_assert_no_error (error);
  for (guint k = 0; k < G_N_ELEMENTS (norms); k++)
    for (guint dir = 0; dir < 2; dir++)
      {
        g_autofree double complex *x = g_new (double complex, n * batch);
        g_autofree double complex *ref = NULL, *got = NULL;
        g_autoptr(AtomrBuffer) in = math_buffer (device, ATOMR_DTYPE_C128, n * batch);
        g_autoptr(AtomrBuffer) out = math_buffer (device, ATOMR_DTYPE_C128, n * batch);
        double scale = 1;

        for (gint64 i = 0; i < n * batch; i++)
          x[i] = math_random (rng, TRUE);
        math_upload (in, x, n * batch);
        ref = g_memdup2 (x, sizeof (double complex) * n * batch);
        for (gint64 b = 0; b < batch; b++)
          dft_nd (ref + b * n, &n, 1, dir ? +1 : -1);
        if (norms[k] == ATOMR_FFT_NORM_ORTHO)
          scale = 1 / sqrt ((double) n);
        else if ((norms[k] == ATOMR_FFT_NORM_BACKWARD && dir) || (norms[k] == ATOMR_FFT_NORM_FORWARD && !dir))
          scale = 1.0 / n;
        for (gint64 i = 0; i < n * batch; i++)
          ref[i] *= scale;
        g_assert_true (MATH_RUN (atomr_fft_actor_execute_normalized_finish, fft, &error,
                                 atomr_fft_actor_execute_normalized_async (fft, plan, dir ? ATOMR_FFT_INVERSE : ATOMR_FFT_FORWARD,
                                                                           norms[k], in, out, NULL, math_done, &res)));
        g_assert_no_error (error);
        got = math_download (out);
        g_test_message ("norm %u dir %u: relative error %.3g", norms[k], dir, math_rel_error (got, ref, n * batch));
        g_assert_cmpfloat (math_rel_error (got, ref, n * batch), <, 1e-12);
      }
}

/* An R2C with gaps in its output layout (ostride 2): the normalisation
 * scales the coefficients and leaves the gaps alone. */
static void
test_normalization_keeps_gaps (void)
{
  const gint64 n = 16, half = n / 2 + 1, batch = 2, odist = 2 * half + 4;
  gint64 dims[1] = { n }, oembed[1] = { half };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftPlan) plan = atomr_fft_plan_new_many (ATOMR_FFT_R2C, ATOMR_DTYPE_F32, dims, 1, NULL, 0, 1, 1,
                                                          oembed, 1, 2, odist, batch, &error);
  g_autofree double complex *x = g_new (double complex, n * batch);
  g_autofree double complex *fill = g_new (double complex, odist * batch);
  g_autofree double complex *got = NULL;
  g_autoptr(AtomrBuffer) in = NULL, out = NULL;

  MATH_REQUIRE_DEVICE (device);
  g_assert_no_error (error);
  for (gint64 i = 0; i < n * batch; i++)
    x[i] = math_random (rng, FALSE);
  for (gint64 i = 0; i < odist * batch; i++)
    fill[i] = CMPLX (-5, 7);
  in = math_buffer (device, ATOMR_DTYPE_F32, n * batch);
  out = math_buffer (device, ATOMR_DTYPE_C64, odist * batch);
  math_upload (in, x, n * batch);
  math_upload (out, fill, odist * batch);
  g_assert_true (MATH_RUN (atomr_fft_actor_execute_normalized_finish, fft, &error,
                           atomr_fft_actor_execute_normalized_async (fft, plan, ATOMR_FFT_FORWARD, ATOMR_FFT_NORM_FORWARD,
                                                                     in, out, NULL, math_done, &res)));
  g_assert_no_error (error);
  got = math_download (out);
  for (gint64 b = 0; b < batch; b++)
    {
      g_autofree double complex *ref = g_memdup2 (x + b * n, sizeof (double complex) * n);
      dft_nd (ref, &n, 1, -1);
      for (gint64 i = 0; i < odist; i++)
        {
          double complex v = got[b * odist + i];
          if (i % 2 == 0 && i / 2 < half)
            g_assert_cmpfloat (cabs (v - ref[i / 2] / n), <, 1e-5);
          else
            g_assert_true (v == CMPLX (-5, 7));
        }
    }
}

/* Plans share one work area, as large as the largest needs. */
static void
test_work_area (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftActor) own = NULL;
  guint64 after_big;
  static const gint64 sizes[] = { 1 << 20, 256, 4096 };

  MATH_REQUIRE_DEVICE (device);
  own = atomr_fft_actor_new (device, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_fft_actor_get_work_area_size (own), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autoptr(AtomrFftPlan) plan = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, sizes[i], 2, &error);
      g_autoptr(AtomrBuffer) buf = math_buffer (device, ATOMR_DTYPE_C64, sizes[i] * 2);
      g_assert_no_error (error);
      g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, own, &error,
                               atomr_fft_actor_execute_async (own, plan, ATOMR_FFT_FORWARD, buf, buf, NULL,
                                                              math_done, &res)));
      g_assert_no_error (error);
      if (i == 0)
        {
          after_big = atomr_fft_actor_get_work_area_size (own);
          g_test_message ("work area after a 2^20-point C2C: %" G_GUINT64_FORMAT " bytes", after_big);
        }
      else
        g_assert_cmpuint (atomr_fft_actor_get_work_area_size (own), ==, after_big);  /* shared, not grown */
    }
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_size (own), ==, 3);
  g_assert_finalize_object (g_steal_pointer (&own));
}

/* A 4096 × 4096 C2C: a shifted impulse gives a pure phase ramp. */
/* ------------------------------------------------------------------ */
/* Half precision (issue 11): cufftXtMakePlanMany with CUDA_R_16F /
 * CUDA_C_16F (bf16: _16BF); the complex side is (re, im) pairs.        */

static guint16
to_half_bits (AtomrDtype dtype,
              double     value)
{
  union { gfloat f; guint32 u; } v = { .f = (gfloat) value };

  if (dtype == ATOMR_DTYPE_BF16)
    {
      guint32 rounded = v.u + 0x7fff + ((v.u >> 16) & 1);   /* nearest even */
      return (guint16) (rounded >> 16);
    }
  {
    guint32 sign = (v.u >> 16) & 0x8000;
    gint32 exp = (gint32) ((v.u >> 23) & 0xff) - 127 + 15;
    guint32 mant = v.u & 0x7fffff, half, rem;

    if (exp <= 0)
      return (guint16) sign;          /* tiny: zero (inputs here are not tiny) */
    if (exp >= 31)
      return (guint16) (sign | 0x7c00);
    half = sign | ((guint32) exp << 10) | (mant >> 13);
    rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
      half++;
    return (guint16) half;
  }
}

static double
from_half_bits (AtomrDtype dtype,
                guint16    h)
{
  union { gfloat f; guint32 u; } v;

  if (dtype == ATOMR_DTYPE_BF16)
    {
      v.u = (guint32) h << 16;
      return v.f;
    }
  {
    guint32 sign = (guint32) (h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;

    if (exp == 0)
      return (h & 0x8000 ? -1.0 : 1.0) * ldexp ((double) mant, -24);
    if (exp == 31)
      v.u = sign | 0x7f800000 | (mant << 13);
    else
      v.u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    return v.f;
  }
}

/* Uploads @n values as halves (two per complex value when @pairs), and
 * rounds @values to what was uploaded. */
static AtomrBuffer *
half_upload (AtomrDtype      dtype,
             double complex *values,
             gsize           n,
             gboolean        pairs)
{
  gsize count = pairs ? 2 * n : n;
  g_autofree guint16 *bits = g_new (guint16, count);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  AtomrBuffer *buf = math_buffer (device, dtype, count);

  for (gsize i = 0; i < n; i++)
    {
      if (pairs)
        {
          bits[2 * i] = to_half_bits (dtype, creal (values[i]));
          bits[2 * i + 1] = to_half_bits (dtype, cimag (values[i]));
          values[i] = CMPLX (from_half_bits (dtype, bits[2 * i]), from_half_bits (dtype, bits[2 * i + 1]));
        }
      else
        {
          bits[i] = to_half_bits (dtype, creal (values[i]));
          values[i] = from_half_bits (dtype, bits[i]);
        }
    }
  bytes = g_bytes_new_take (g_steal_pointer (&bits), count * sizeof (guint16));
  g_assert_true (atomr_buffer_upload_sync (buf, bytes, NULL, &error));
  g_assert_no_error (error);
  return buf;
}

static double complex *
half_download (AtomrBuffer *buf,
               gsize        n,
               gboolean     pairs)
{
  AtomrDtype dtype = atomr_buffer_get_dtype (buf);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buf, NULL, &error);
  const guint16 *bits;
  double complex *out = g_new0 (double complex, n);

  g_assert_no_error (error);
  bits = g_bytes_get_data (bytes, NULL);
  for (gsize i = 0; i < n; i++)
    out[i] = pairs ? CMPLX (from_half_bits (dtype, bits[2 * i]), from_half_bits (dtype, bits[2 * i + 1]))
                   : from_half_bits (dtype, bits[i]);
  return out;
}

static void
check_half_dtype (AtomrDtype dtype)
{
  /* f16 keeps 11 significant bits, bf16 8: the result of a transform of
   * size 128 (7 butterfly stages) is good to a few units of each. */
  double tol = dtype == ATOMR_DTYPE_F16 ? 1e-2 : 6e-2;
  const gint64 n2[2] = { 8, 16 }, b2 = 2, n1 = 64, b1 = 3, half1 = n1 / 2 + 1;
  g_autoptr(GError) error = NULL;

  /* C2C, 2-D, batched, both directions. */
  for (gint dir = 0; dir < 2; dir++)
    {
      gsize total = (gsize) (n2[0] * n2[1] * b2);
      g_autofree double complex *x = g_new (double complex, total);
      g_autoptr(AtomrFftPlan) plan = atomr_fft_plan_new_2d (ATOMR_FFT_C2C, dtype, n2[0], n2[1], b2, &error);
      g_autoptr(AtomrBuffer) in = NULL, out = NULL;
      g_autofree double complex *got = NULL;
      double err;

      g_assert_no_error (error);
      for (gsize i = 0; i < total; i++)
        x[i] = math_random (rng, TRUE);
      in = half_upload (dtype, x, total, TRUE);
      out = math_buffer (device, dtype, 2 * total);
      g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, fft, &error,
                               atomr_fft_actor_execute_async (fft, plan, dir ? ATOMR_FFT_INVERSE : ATOMR_FFT_FORWARD,
                                                              in, out, NULL, math_done, &res)));
      g_assert_no_error (error);
      for (gint64 b = 0; b < b2; b++)
        dft_nd (x + b * n2[0] * n2[1], n2, 2, dir ? 1 : -1);
      got = half_download (out, total, TRUE);
      err = math_rel_error (got, x, total);
      g_test_message ("%s C2C 8x16 batch 2 %s: relative error %.3g", atomr_dtype_get_name (dtype),
                      dir ? "inverse" : "forward", err);
      g_assert_cmpfloat (err, <, tol);
    }

  /* R2C, then C2R of the exact half spectrum back to n times the signal. */
  {
    g_autofree double complex *x = g_new (double complex, n1 * b1);
    g_autofree double complex *spec = g_new (double complex, half1 * b1);
    g_autofree double complex *line = g_new (double complex, n1);
    g_autoptr(AtomrFftPlan) r2c = atomr_fft_plan_new_1d (ATOMR_FFT_R2C, dtype, n1, b1, &error);
    g_autoptr(AtomrFftPlan) c2r = atomr_fft_plan_new_1d (ATOMR_FFT_C2R, dtype, n1, b1, &error);
    g_autoptr(AtomrBuffer) rin = NULL, cout = NULL, cin = NULL, rout = NULL;
    g_autofree double complex *got_spec = NULL, *got_signal = NULL;
    double err;

    g_assert_no_error (error);
    for (gint64 i = 0; i < n1 * b1; i++)
      x[i] = math_random (rng, FALSE);
    rin = half_upload (dtype, x, n1 * b1, FALSE);
    for (gint64 b = 0; b < b1; b++)
      {
        memcpy (line, x + b * n1, n1 * sizeof *line);
        dft_nd (line, &n1, 1, -1);
        memcpy (spec + b * half1, line, half1 * sizeof *line);
      }
    cout = math_buffer (device, dtype, 2 * half1 * b1);
    g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, fft, &error,
                             atomr_fft_actor_execute_async (fft, r2c, ATOMR_FFT_FORWARD, rin, cout, NULL,
                                                            math_done, &res)));
    g_assert_no_error (error);
    got_spec = half_download (cout, half1 * b1, TRUE);
    err = math_rel_error (got_spec, spec, half1 * b1);
    g_test_message ("%s R2C 64 batch 3: relative error %.3g", atomr_dtype_get_name (dtype), err);
    g_assert_cmpfloat (err, <, tol);

    /* The spectrum rounded to halves is the C2R input; its exact inverse
     * (a Hermitian extension) is the reference. */
    cin = half_upload (dtype, spec, half1 * b1, TRUE);
    rout = math_buffer (device, dtype, n1 * b1);
    g_assert_true (MATH_RUN (atomr_fft_actor_execute_finish, fft, &error,
                             atomr_fft_actor_execute_async (fft, c2r, ATOMR_FFT_INVERSE, cin, rout, NULL,
                                                            math_done, &res)));
    g_assert_no_error (error);
    for (gint64 b = 0; b < b1; b++)
      {
        for (gint64 k = 0; k < n1; k++)
          line[k] = k < half1 ? spec[b * half1 + k] : conj (spec[b * half1 + (n1 - k)]);
        line[0] = creal (line[0]);
        line[n1 / 2] = creal (line[n1 / 2]);
        dft_nd (line, &n1, 1, 1);
        for (gint64 k = 0; k < n1; k++)
          x[b * n1 + k] = creal (line[k]);
      }
    got_signal = half_download (rout, n1 * b1, FALSE);
    err = math_rel_error (got_signal, x, n1 * b1);
    g_test_message ("%s C2R 64 batch 3: relative error %.3g", atomr_dtype_get_name (dtype), err);
    g_assert_cmpfloat (err, <, tol);

    /* Normalised: the backward C2R scaled by 1/n (on the real side), the
     * forward R2C scaled by 1/sqrt(n) (ortho, on the complex pairs). */
    g_assert_true (MATH_RUN (atomr_fft_actor_execute_normalized_finish, fft, &error,
                             atomr_fft_actor_execute_normalized_async (fft, c2r, ATOMR_FFT_INVERSE,
                                                                       ATOMR_FFT_NORM_BACKWARD, cin, rout,
                                                                       NULL, math_done, &res)));
    g_assert_no_error (error);
    g_clear_pointer (&got_signal, g_free);
    got_signal = half_download (rout, n1 * b1, FALSE);
    for (gint64 i = 0; i < n1 * b1; i++)
      x[i] /= (double) n1;
    err = math_rel_error (got_signal, x, n1 * b1);
    g_test_message ("%s C2R 64 batch 3, normalised 1/n: relative error %.3g", atomr_dtype_get_name (dtype), err);
    g_assert_cmpfloat (err, <, tol);

    for (gint64 i = 0; i < n1 * b1; i++)
      x[i] = math_random (rng, FALSE);
    g_clear_object (&rin);
    rin = half_upload (dtype, x, n1 * b1, FALSE);
    for (gint64 b = 0; b < b1; b++)
      {
        memcpy (line, x + b * n1, n1 * sizeof *line);
        dft_nd (line, &n1, 1, -1);
        for (gint64 k = 0; k < half1; k++)
          spec[b * half1 + k] = line[k] / sqrt ((double) n1);
      }
    g_assert_true (MATH_RUN (atomr_fft_actor_execute_normalized_finish, fft, &error,
                             atomr_fft_actor_execute_normalized_async (fft, r2c, ATOMR_FFT_FORWARD,
                                                                       ATOMR_FFT_NORM_ORTHO, rin, cout,
                                                                       NULL, math_done, &res)));
    g_assert_no_error (error);
    g_clear_pointer (&got_spec, g_free);
    got_spec = half_download (cout, half1 * b1, TRUE);
    err = math_rel_error (got_spec, spec, half1 * b1);
    g_test_message ("%s R2C 64 batch 3, ortho: relative error %.3g", atomr_dtype_get_name (dtype), err);
    g_assert_cmpfloat (err, <, tol);
  }
}

static void
test_half (void)
{
  MATH_REQUIRE_DEVICE (device);
  check_half_dtype (ATOMR_DTYPE_F16);
  check_half_dtype (ATOMR_DTYPE_BF16);
}

/* Plans are made on a worker (issue 11): a burst of requests with eight
 * new plans, queued back to back with a request of another actor on the
 * same context, all answered correctly and in order; then all hits. */
static void
test_plans_on_worker (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftActor) own = NULL;
  g_autoptr(AtomrBuffer) impulse = NULL;
  AtomrBuffer *outs[8] = { NULL };
  GAsyncResult *results[8] = { NULL };
  GAsyncResult *fill = NULL;
  g_autoptr(AtomrBuffer) other = NULL;

  MATH_REQUIRE_DEVICE (device);
  own = atomr_fft_actor_new (device, &error);
  g_assert_no_error (error);
  impulse = math_buffer (device, ATOMR_DTYPE_C64, 256);
  other = math_buffer (device, ATOMR_DTYPE_F32, 1024);
  {
    g_autofree double complex *x = g_new0 (double complex, 256);
    x[0] = 1;
    math_upload (impulse, x, 256);
  }
  for (guint round = 0; round < 2; round++)
    {
      for (guint i = 0; i < 8; i++)
        {
          g_autoptr(AtomrFftPlan) plan = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, 16 + 16 * i,
                                                                1, &error);
          g_assert_no_error (error);
          if (outs[i] == NULL)
            outs[i] = math_buffer (device, ATOMR_DTYPE_C64, 256);
          atomr_fft_actor_execute_async (own, plan, ATOMR_FFT_FORWARD, impulse, outs[i], NULL,
                                         math_done, &results[i]);
        }
      atomr_buffer_fill_async (other, 2.0, NULL, math_done, &fill);
      for (guint i = 0; i < 8; i++)
        {
          g_autofree double complex *got = NULL;

          g_assert_true (atomr_fft_actor_execute_finish (own, math_wait (&results[i]), &error));
          g_assert_no_error (error);
          g_clear_object (&results[i]);
          got = math_download (outs[i]);
          /* The transform of an impulse at 0 is all ones. */
          for (guint k = 0; k < 16 + 16 * i; k++)
            g_assert_cmpfloat (cabs (got[k] - 1), <, 1e-6);
        }
      g_assert_true (atomr_buffer_fill_finish (other, math_wait (&fill), &error));
      g_assert_no_error (error);
      g_clear_object (&fill);
    }
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_misses (own), ==, 8);
  g_assert_cmpuint (atomr_fft_actor_get_plan_cache_hits (own), ==, 8);
  for (guint i = 0; i < 8; i++)
    g_clear_object (&outs[i]);
}

/* FFT on views (issue 10): layouts from strides, no copies. */
static AtomrTensor *
gpu_view (AtomrBuffer  *buf,
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
test_tensor_views (void)
{
  g_autoptr(GError) error = NULL;
  const gint64 rows = 6, cols = 10, sub[2] = { 4, 8 }, sub_strides[2] = { 10, 1 }, packed[2] = { 8, 1 };
  g_autofree double complex *x = g_new (double complex, rows * cols);
  g_autofree double complex *want = g_new (double complex, 32);
  g_autofree double complex *got = NULL, *after = NULL;
  g_autoptr(AtomrBuffer) big = NULL, small = NULL;
  g_autoptr(AtomrTensor) in = NULL, out = NULL, in_place = NULL;

  MATH_REQUIRE_DEVICE (device);
  for (gint64 i = 0; i < rows * cols; i++)
    x[i] = math_random (rng, TRUE);
  big = math_buffer (device, ATOMR_DTYPE_C64, rows * cols);
  small = math_buffer (device, ATOMR_DTYPE_C64, 32);
  math_upload (big, x, rows * cols);

  /* 2-D C2C of the 4 × 8 block at (1, 1) of a 6 × 10 row-major matrix. */
  in = gpu_view (big, 11, sub, sub_strides, 2);
  out = gpu_view (small, 0, sub, packed, 2);
  for (gint64 r = 0; r < 4; r++)
    for (gint64 c = 0; c < 8; c++)
      want[r * 8 + c] = x[(r + 1) * cols + c + 1];
  dft_nd (want, sub, 2, -1);
  g_assert_true (MATH_RUN (atomr_fft_actor_execute_tensor_finish, fft, &error,
                           atomr_fft_actor_execute_tensor_async (fft, 2, ATOMR_FFT_FORWARD, ATOMR_FFT_NORM_NONE,
                                                                 in, out, NULL, math_done, &res)));
  g_assert_no_error (error);
  got = math_download (small);
  g_assert_cmpfloat (math_rel_error (got, want, 32), <, 1e-5);

  /* The same block in place, normalised (ortho): the rest of the matrix
   * is left alone. */
  in_place = gpu_view (big, 11, sub, sub_strides, 2);
  g_assert_true (MATH_RUN (atomr_fft_actor_execute_tensor_finish, fft, &error,
                           atomr_fft_actor_execute_tensor_async (fft, 2, ATOMR_FFT_FORWARD, ATOMR_FFT_NORM_ORTHO,
                                                                 in_place, in_place, NULL, math_done, &res)));
  g_assert_no_error (error);
  after = math_download (big);
  for (gint64 r = 0; r < rows; r++)
    for (gint64 c = 0; c < cols; c++)
      {
        gboolean inside = r >= 1 && r < 5 && c >= 1 && c < 9;
        double complex expect = inside ? want[(r - 1) * 8 + c - 1] / sqrt (32.0) : x[r * cols + c];
        g_assert_cmpfloat (cabs (after[r * cols + c] - expect), <, 1e-5);
      }

  /* R2C along the rows of a column-major 3 × 16 real matrix (interleaved
   * signals: stride 3, distance 1), then C2R back with 1/n. */
  {
    const gint64 rshape[2] = { 3, 16 }, rstrides[2] = { 1, 3 }, cshape[2] = { 3, 9 }, cstrides[2] = { 9, 1 };
    g_autofree double complex *signal = g_new (double complex, 48);
    g_autofree double complex *spec_want = g_new (double complex, 27);
    g_autofree double complex *line = g_new (double complex, 16);
    g_autofree double complex *spec = NULL, *back = NULL;
    g_autoptr(AtomrBuffer) rbuf = math_buffer (device, ATOMR_DTYPE_F32, 48);
    g_autoptr(AtomrBuffer) rbuf2 = math_buffer (device, ATOMR_DTYPE_F32, 48);
    g_autoptr(AtomrBuffer) cbuf = math_buffer (device, ATOMR_DTYPE_C64, 27);
    g_autoptr(AtomrTensor) rin = NULL, cout = NULL, rout = NULL;
    const gint64 n16 = 16;

    for (gint64 i = 0; i < 48; i++)
      signal[i] = math_random (rng, FALSE);
    math_upload (rbuf, signal, 48);
    rin = gpu_view (rbuf, 0, rshape, rstrides, 2);
    cout = gpu_view (cbuf, 0, cshape, cstrides, 2);
    rout = gpu_view (rbuf2, 0, rshape, rstrides, 2);
    for (gint64 b = 0; b < 3; b++)
      {
        for (gint64 j = 0; j < 16; j++)
          line[j] = signal[j * 3 + b];        /* element (b, j) */
        dft_nd (line, &n16, 1, -1);
        memcpy (spec_want + b * 9, line, 9 * sizeof *line);
      }
    g_assert_true (MATH_RUN (atomr_fft_actor_execute_tensor_finish, fft, &error,
                             atomr_fft_actor_execute_tensor_async (fft, 1, ATOMR_FFT_FORWARD, ATOMR_FFT_NORM_NONE,
                                                                   rin, cout, NULL, math_done, &res)));
    g_assert_no_error (error);
    spec = math_download (cbuf);
    g_assert_cmpfloat (math_rel_error (spec, spec_want, 27), <, 1e-5);
    g_assert_true (MATH_RUN (atomr_fft_actor_execute_tensor_finish, fft, &error,
                             atomr_fft_actor_execute_tensor_async (fft, 1, ATOMR_FFT_INVERSE,
                                                                   ATOMR_FFT_NORM_BACKWARD,
                                                                   cout, rout, NULL, math_done, &res)));
    g_assert_no_error (error);
    back = math_download (rbuf2);
    g_assert_cmpfloat (math_rel_error (back, signal, 48), <, 1e-5);
  }
}

static void
test_4096 (void)
{
  const gint64 n = 4096;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftPlan) plan = atomr_fft_plan_new_2d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, n, n, 1, &error);
  g_autofree double complex *x = NULL, *got = NULL;
  g_autoptr(AtomrBuffer) buf = NULL;
  double worst = 0;

  MATH_REQUIRE_DEVICE (device);
  g_assert_no_error (error);
  x = g_new0 (double complex, n * n);
  x[3 * n + 5] = 1;     /* row 3, column 5 */
  buf = math_buffer (device, ATOMR_DTYPE_C64, n * n);
  math_upload (buf, x, n * n);
  g_assert_true (MATH_RUN (atomr_fft_actor_execute_normalized_finish, fft, &error,
                           atomr_fft_actor_execute_normalized_async (fft, plan, ATOMR_FFT_FORWARD,
                                                                     ATOMR_FFT_NORM_ORTHO, buf, buf, NULL,
                                                                     math_done, &res)));
  g_assert_no_error (error);
  got = math_download (buf);
  for (gint64 k0 = 0; k0 < n; k0 += 7)
    for (gint64 k1 = 0; k1 < n; k1 += 5)
      {
        double phase = -2 * G_PI * (double) ((3 * k0 + 5 * k1) % n) / n;
        double complex want = cexp (I * phase) / n;
        worst = MAX (worst, cabs (got[k0 * n + k1] - want) * n);
      }
  g_test_message ("C2C 4096 x 4096 of an impulse: worst relative error %.3g", worst);
  g_assert_cmpfloat (worst, <, 1e-4);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int ret;

  g_test_init (&argc, &argv, NULL);
  rng = g_rand_new_with_seed (4242);

  g_test_add_func ("/gpu/fft/kinds-and-dims", test_all_kinds_and_dims);
  g_test_add_func ("/gpu/fft/advanced-layouts", test_advanced_layouts);
  g_test_add_func ("/gpu/fft/round-trip-inferred", test_round_trip_inferred);
  g_test_add_func ("/gpu/fft/plan-cache", test_plan_cache);
  g_test_add_func ("/gpu/fft/normalization", test_normalization);
  g_test_add_func ("/gpu/fft/normalization-keeps-gaps", test_normalization_keeps_gaps);
  g_test_add_func ("/gpu/fft/work-area", test_work_area);
  g_test_add_func ("/gpu/fft/4096", test_4096);
  g_test_add_func ("/gpu/fft/half", test_half);
  g_test_add_func ("/gpu/fft/tensor-views", test_tensor_views);
  g_test_add_func ("/gpu/fft/plans-on-worker", test_plans_on_worker);
  g_test_add_func ("/gpu/fft/device-reset", test_device_reset);

  device = math_get_device ();
  if (device)
    {
      fft = atomr_fft_actor_new (device, &error);
      g_assert_no_error (error);
    }
  ret = g_test_run ();
  g_clear_object (&fft);
  g_clear_object (&device);
  g_rand_free (rng);
  return ret;
}
