/* test-tensor-actor.c — the Tensor actor end to end on the mock device:
 * permutation, elementwise binary and reductions against a naive
 * reference (random shapes of rank 1–6, padded, permuted, reversed and
 * broadcast strides), validation errors, the plan cache
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include <atomr.h>
#include "core/atomr-buffer-private.h"
#include "core/atomr-tensor-private.h"
#include "actors/tensor/atomr-tensor-kernels-private.h"

typedef struct {
  AtomrDevice      *device;
  AtomrTensorActor *actor;
  GRand            *rand;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->device = atomr_device_new_mock ();
  f->actor = atomr_tensor_actor_new (f->device, &error);
  g_assert_no_error (error);
  f->rand = g_rand_new_with_seed (20261123);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_assert_finalize_object (f->actor);
  g_object_unref (f->device);
  g_rand_free (f->rand);
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

static GAsyncResult *
wait_result (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *result;
}

/* ------------------------------------------------------------------ */
/* Views with random layouts                                           */

static gdouble
read_elem (AtomrTensor *t, const gint64 *idx)
{
  const guint8 *base = atomr_tensor_get_host_data (t);
  gint64 off = 0;

  for (guint d = 0; d < atomr_tensor_get_n_dims (t); d++)
    off += idx[d] * atomr_tensor_get_stride (t, d);
  switch (atomr_tensor_get_dtype (t))
    {
    case ATOMR_DTYPE_F32: return ((const gfloat *) base)[off];
    case ATOMR_DTYPE_F64: return ((const gdouble *) base)[off];
    default: g_assert_not_reached ();
    }
}

/* A view of @shape in a fresh buffer filled with random values: the
 * dimensions laid out in a random order, with random padding and random
 * reversal (negative strides); @zero_dim >= 0 gives that dimension
 * stride 0 (a broadcast input). */
static AtomrTensor *
random_view (Fixture *f, AtomrDtype dtype, guint n, const gint64 *shape, gint zero_dim)
{
  guint order[8];
  gint64 strides[8] = { 0 }, pitch = 1, offset = 0;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GError) error = NULL;
  AtomrTensor *t;
  gsize elem = atomr_dtype_get_size (dtype);
  guint8 *data;

  for (guint d = 0; d < n; d++)
    order[d] = d;
  for (guint d = n; d > 1; d--)
    {
      guint j = g_rand_int_range (f->rand, 0, d);
      guint tmp = order[d - 1];
      order[d - 1] = order[j];
      order[j] = tmp;
    }
  for (guint k = 0; k < n; k++)
    {
      guint d = order[k];
      if ((gint) d == zero_dim)
        continue;
      strides[d] = pitch;
      pitch *= MAX (shape[d], 1) + g_rand_int_range (f->rand, 0, 2);
    }
  for (guint d = 0; d < n; d++)
    if (strides[d] != 0 && g_rand_int_range (f->rand, 0, 4) == 0)
      {
        offset += (MAX (shape[d], 1) - 1) * strides[d];
        strides[d] = -strides[d];
      }
  buffer = atomr_buffer_new (f->device, dtype, (guint64) pitch + 1, &error);
  g_assert_no_error (error);
  data = atomr_buffer_get_host_data (buffer);
  for (gint64 i = 0; i <= pitch; i++)
    {
      gdouble v = g_rand_double_range (f->rand, -2.0, 2.0);
      if (dtype == ATOMR_DTYPE_F32)
        ((gfloat *) data)[i] = (gfloat) v;
      else
        ((gdouble *) data)[i] = v;
    }
  t = atomr_tensor_new_strided (buffer, dtype, (guint64) offset * elem, shape, n, strides, n, &error);
  g_assert_no_error (error);
  return t;
}

static void
random_perm (Fixture *f, guint n, guint *perm)
{
  for (guint d = 0; d < n; d++)
    perm[d] = d;
  for (guint d = n; d > 1; d--)
    {
      guint j = g_rand_int_range (f->rand, 0, d);
      guint tmp = perm[d - 1];
      perm[d - 1] = perm[j];
      perm[j] = tmp;
    }
}

/* Iterates the multi-index @idx over @shape (row-major); FALSE at the end. */
static gboolean
next_index (guint n, const gint64 *shape, gint64 *idx)
{
  for (guint d = n; d-- > 0; )
    {
      if (++idx[d] < shape[d])
        return TRUE;
      idx[d] = 0;
    }
  return FALSE;
}

static guint64
n_elements (guint n, const gint64 *shape)
{
  guint64 total = 1;
  for (guint d = 0; d < n; d++)
    total *= (guint64) shape[d];
  return total;
}

/* The index of a view with @modes, given the value of every mode
 * (extent-1 dimensions broadcast: index 0). */
static void
index_for (AtomrTensor *t, const gchar *modes, const gint64 *mode_value, gint64 *idx)
{
  for (guint d = 0; modes[d]; d++)
    idx[d] = atomr_tensor_get_dim (t, d) == 1 ? 0 : mode_value[(guchar) modes[d]];
}

static gdouble
ref_unary (AtomrTensorUnaryOp op, gdouble x)
{
  switch (op)
    {
    case ATOMR_TENSOR_UNARY_IDENTITY: return x;
    case ATOMR_TENSOR_UNARY_NEG: return -x;
    case ATOMR_TENSOR_UNARY_ABS: return fabs (x);
    case ATOMR_TENSOR_UNARY_SQRT: return sqrt (x);
    case ATOMR_TENSOR_UNARY_RELU: return x > 0 ? x : 0;
    case ATOMR_TENSOR_UNARY_EXP: return exp (x);
    case ATOMR_TENSOR_UNARY_LOG: return log (x);
    case ATOMR_TENSOR_UNARY_SIN: return sin (x);
    case ATOMR_TENSOR_UNARY_COS: return cos (x);
    case ATOMR_TENSOR_UNARY_TANH: return tanh (x);
    case ATOMR_TENSOR_UNARY_SIGMOID: return 1 / (1 + exp (-x));
    case ATOMR_TENSOR_UNARY_CONJ: return x;
    }
  g_assert_not_reached ();
}

static void
assert_close (gdouble got, gdouble want, AtomrDtype dtype, const gchar *what)
{
  gdouble tol = (dtype == ATOMR_DTYPE_F32 ? 2e-6 : 1e-12) * MAX (1.0, fabs (want));

  if (isnan (want) && isnan (got))
    return;
  if (!(fabs (got - want) <= tol))
    g_error ("%s: got %.17g, want %.17g", what, got, want);
}

/* ------------------------------------------------------------------ */
/* Permutation                                                          */

static void
test_permute_random (Fixture *f, gconstpointer data)
{
  static const AtomrTensorUnaryOp ops[] = {
    ATOMR_TENSOR_UNARY_IDENTITY, ATOMR_TENSOR_UNARY_NEG, ATOMR_TENSOR_UNARY_ABS,
    ATOMR_TENSOR_UNARY_RELU, ATOMR_TENSOR_UNARY_EXP, ATOMR_TENSOR_UNARY_SIN,
    ATOMR_TENSOR_UNARY_COS, ATOMR_TENSOR_UNARY_TANH, ATOMR_TENSOR_UNARY_SIGMOID,
  };

  for (guint iter = 0; iter < 120; iter++)
    {
      AtomrDtype dtype = iter % 2 ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
      guint n = 1 + iter % 6, perm[8];
      gint64 shape_a[8], shape_b[8], idx[8] = { 0 }, mv[256] = { 0 }, ia[8];
      gchar ma[9] = { 0 }, mb[9] = { 0 };
      AtomrTensorUnaryOp op = ops[g_rand_int_range (f->rand, 0, G_N_ELEMENTS (ops))];
      gdouble alpha = g_rand_double_range (f->rand, -2, 2);
      g_autoptr(AtomrTensor) a = NULL, b = NULL;
      g_autofree gchar *modes = NULL;
      g_autoptr(GBytes) before = NULL;
      g_autoptr(GError) error = NULL;
      GAsyncResult *result = NULL;
      guint8 *bdata;
      gsize bsize;

      random_perm (f, n, perm);
      for (guint d = 0; d < n; d++)
        {
          ma[d] = 'a' + d;
          shape_a[d] = g_rand_int_range (f->rand, 1, 5);
        }
      for (guint d = 0; d < n; d++)
        {
          mb[d] = ma[perm[d]];
          shape_b[d] = shape_a[perm[d]];
        }
      a = random_view (f, dtype, n, shape_a, -1);
      b = random_view (f, dtype, n, shape_b, -1);
      bsize = atomr_buffer_get_byte_size (atomr_tensor_get_buffer (b));
      bdata = atomr_buffer_get_host_data (atomr_tensor_get_buffer (b));
      before = g_bytes_new (bdata, bsize);
      modes = g_strdup_printf ("%s->%s", ma, mb);

      atomr_tensor_actor_permute_async (f->actor, modes, alpha, op, a, b, NULL, store_result, &result);
      g_assert_true (atomr_tensor_actor_permute_finish (f->actor, wait_result (&result), &error));
      g_assert_no_error (error);
      g_clear_object (&result);

      /* every element of B, and nothing else in its buffer */
      {
        g_autofree guint8 *touched = g_malloc0 (bsize);
        const guint8 *old = g_bytes_get_data (before, NULL);
        gsize elem = atomr_dtype_get_size (dtype);
        const guint8 *base = atomr_tensor_get_host_data (b);

        do
          {
            gint64 off = 0;
            for (guint d = 0; d < n; d++)
              {
                mv[(guchar) mb[d]] = idx[d];
                off += idx[d] * atomr_tensor_get_stride (b, d);
              }
            index_for (a, ma, mv, ia);
            assert_close (read_elem (b, idx), alpha * ref_unary (op, read_elem (a, ia)), dtype, modes);
            memset (touched + ((base - bdata) + off * (gint64) elem), 1, elem);
          }
        while (next_index (n, shape_b, idx));
        for (gsize i = 0; i < bsize; i++)
          if (!touched[i])
            g_assert_cmpuint (bdata[i], ==, old[i]);
      }
    }
}

/* ------------------------------------------------------------------ */
/* Elementwise binary with broadcasting                                 */

static gdouble
ref_binary (AtomrTensorBinaryOp op, gdouble x, gdouble y)
{
  switch (op)
    {
    case ATOMR_TENSOR_BINARY_ADD: return x + y;
    case ATOMR_TENSOR_BINARY_MUL: return x * y;
    case ATOMR_TENSOR_BINARY_MAX: return MAX (x, y);
    case ATOMR_TENSOR_BINARY_MIN: return MIN (x, y);
    }
  g_assert_not_reached ();
}

static void
test_binary_random (Fixture *f, gconstpointer data)
{
  for (guint iter = 0; iter < 120; iter++)
    {
      AtomrDtype dtype = iter % 2 ? ATOMR_DTYPE_F32 : ATOMR_DTYPE_F64;
      guint n = 1 + iter % 6, perm[8], na = 0, nb = 0;
      gint64 shape_d[8], shape_a[8], shape_b[8], ext[256] = { 0 }, idx[8] = { 0 }, mv[256] = { 0 };
      gint64 ia[8], ib[8];
      gchar md[9] = { 0 }, ma[9] = { 0 }, mb[9] = { 0 };
      AtomrTensorBinaryOp op_ab = g_rand_int_range (f->rand, 0, 4);
      AtomrTensorUnaryOp op_a = g_rand_boolean (f->rand) ? ATOMR_TENSOR_UNARY_IDENTITY : ATOMR_TENSOR_UNARY_TANH;
      AtomrTensorUnaryOp op_b = g_rand_boolean (f->rand) ? ATOMR_TENSOR_UNARY_IDENTITY : ATOMR_TENSOR_UNARY_NEG;
      gdouble alpha = g_rand_double_range (f->rand, -2, 2), beta = g_rand_double_range (f->rand, -2, 2);
      gint zero_a, zero_b;
      g_autoptr(AtomrTensor) a = NULL, b = NULL, d = NULL;
      g_autofree gchar *modes = NULL;
      g_autoptr(GError) error = NULL;
      GAsyncResult *result = NULL;

      for (guint k = 0; k < n; k++)
        {
          md[k] = 'A' + k * 3;
          ext[(guchar) md[k]] = g_rand_int_range (f->rand, 1, 5);
          shape_d[k] = ext[(guchar) md[k]];
        }
      /* each mode goes to A, to B or to both (inputs in random order) */
      random_perm (f, n, perm);
      for (guint k = 0; k < n; k++)
        {
          gchar m = md[perm[k]];
          guint where = g_rand_int_range (f->rand, 0, 3);
          if (where != 1)
            {
              ma[na] = m;
              /* extent 1 broadcasts too */
              shape_a[na++] = g_rand_int_range (f->rand, 0, 5) == 0 ? 1 : ext[(guchar) m];
            }
          if (where != 0)
            {
              mb[nb] = m;
              shape_b[nb++] = ext[(guchar) m];
            }
        }
      if (na == 0 || nb == 0)
        continue;   /* a rank-0 operand: covered by the scalar test */
      /* a broadcast input with stride 0 on a dimension of extent > 1 */
      zero_a = -1;
      zero_b = g_rand_int_range (f->rand, 0, 3) == 0 ? g_rand_int_range (f->rand, 0, nb) : -1;
      a = random_view (f, dtype, na, shape_a, zero_a);
      b = random_view (f, dtype, nb, shape_b, zero_b);
      d = random_view (f, dtype, n, shape_d, -1);
      modes = g_strdup_printf ("%s,%s->%s", ma, mb, md);

      atomr_tensor_actor_elementwise_binary_async (f->actor, modes, alpha, op_a, a, beta, op_b, b, op_ab, d,
                                                   NULL, store_result, &result);
      g_assert_true (atomr_tensor_actor_elementwise_binary_finish (f->actor, wait_result (&result), &error));
      g_assert_no_error (error);
      g_clear_object (&result);

      do
        {
          gdouble want;
          for (guint k = 0; k < n; k++)
            mv[(guchar) md[k]] = idx[k];
          index_for (a, ma, mv, ia);
          index_for (b, mb, mv, ib);
          want = ref_binary (op_ab, alpha * ref_unary (op_a, read_elem (a, ia)),
                             beta * ref_unary (op_b, read_elem (b, ib)));
          assert_close (read_elem (d, idx), want, dtype, modes);
        }
      while (next_index (n, shape_d, idx));
    }
}

/* D = op_abc (op_ab (α·op_a(A), β·op_b(B)), γ·op_c(C)) with every mode
 * in a random subset of the inputs */
static void
test_trinary_random (Fixture *f, gconstpointer data)
{
  for (guint iter = 0; iter < 120; iter++)
    {
      AtomrDtype dtype = iter % 2 ? ATOMR_DTYPE_F32 : ATOMR_DTYPE_F64;
      guint n = 1 + iter % 6, perm[8], nin[3] = { 0, 0, 0 };
      gint64 shape_d[8], shapes[3][8], ext[256] = { 0 }, idx[8] = { 0 }, mv[256] = { 0 }, ii[8];
      gchar md[9] = { 0 }, mi[3][9] = { { 0 } };
      AtomrTensorBinaryOp op_ab = g_rand_int_range (f->rand, 0, 4), op_abc = g_rand_int_range (f->rand, 0, 4);
      AtomrTensorUnaryOp ops[3];
      gdouble scale[3];
      g_autoptr(AtomrTensor) a = NULL, b = NULL, c = NULL, d = NULL;
      AtomrTensor *in[3];
      g_autofree gchar *modes = NULL;
      g_autoptr(GError) error = NULL;
      GAsyncResult *result = NULL;

      for (guint q = 0; q < 3; q++)
        {
          ops[q] = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_UNARY_SIGMOID + 1);
          if (ops[q] == ATOMR_TENSOR_UNARY_SQRT || ops[q] == ATOMR_TENSOR_UNARY_LOG)
            ops[q] = ATOMR_TENSOR_UNARY_ABS;
          scale[q] = g_rand_double_range (f->rand, -2, 2);
        }
      for (guint k = 0; k < n; k++)
        {
          md[k] = 'a' + k;
          ext[(guchar) md[k]] = g_rand_int_range (f->rand, 1, 5);
          shape_d[k] = ext[(guchar) md[k]];
        }
      random_perm (f, n, perm);
      for (guint k = 0; k < n; k++)
        {
          gchar m = md[perm[k]];
          guint mask = g_rand_int_range (f->rand, 1, 8);   /* a non-empty subset of A, B, C */
          for (guint q = 0; q < 3; q++)
            if (mask & (1u << q))
              {
                mi[q][nin[q]] = m;
                shapes[q][nin[q]++] = g_rand_int_range (f->rand, 0, 6) == 0 ? 1 : ext[(guchar) m];
              }
        }
      if (nin[0] == 0 || nin[1] == 0 || nin[2] == 0)
        continue;
      a = random_view (f, dtype, nin[0], shapes[0], -1);
      b = random_view (f, dtype, nin[1], shapes[1], g_rand_int_range (f->rand, 0, 3) == 0 ? 0 : -1);
      c = random_view (f, dtype, nin[2], shapes[2], -1);
      d = random_view (f, dtype, n, shape_d, -1);
      in[0] = a;
      in[1] = b;
      in[2] = c;
      modes = g_strdup_printf ("%s,%s,%s->%s", mi[0], mi[1], mi[2], md);

      atomr_tensor_actor_elementwise_trinary_async (f->actor, modes, scale[0], ops[0], a, scale[1], ops[1], b,
                                                    scale[2], ops[2], c, op_ab, op_abc, d,
                                                    NULL, store_result, &result);
      g_assert_true (atomr_tensor_actor_elementwise_trinary_finish (f->actor, wait_result (&result), &error));
      g_assert_no_error (error);
      g_clear_object (&result);

      do
        {
          gdouble x[3], want;
          for (guint k = 0; k < n; k++)
            mv[(guchar) md[k]] = idx[k];
          for (guint q = 0; q < 3; q++)
            {
              index_for (in[q], mi[q], mv, ii);
              x[q] = scale[q] * ref_unary (ops[q], read_elem (in[q], ii));
            }
          want = ref_binary (op_abc, ref_binary (op_ab, x[0], x[1]), x[2]);
          assert_close (read_elem (d, idx), want, dtype, modes);
        }
      while (next_index (n, shape_d, idx));
    }
}

/* D = α Σ A·B + β D over the modes missing from D, each mode in A, B or
 * both ("mk,kn->mn", "bhqd,bhkd->bhqk" and stranger ones) */
static void
test_contract_random (Fixture *f, gconstpointer data)
{
  for (guint iter = 0; iter < 150; iter++)
    {
      AtomrDtype dtype = iter % 2 ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
      guint n = 2 + iter % 5, perm[8], nd, na = 0, nb = 0, nk = 0;
      gint64 ext[256] = { 0 }, sa[8], sb[8], sd[8], idx[8] = { 0 }, mv[256] = { 0 }, ia[8], ib[8];
      gchar all[9] = { 0 }, md[9] = { 0 }, ma[9] = { 0 }, mb[9] = { 0 }, mk[9] = { 0 };
      gdouble alpha = g_rand_double_range (f->rand, -2, 2);
      gdouble beta = g_rand_boolean (f->rand) ? 0.0 : g_rand_double_range (f->rand, -1, 1);
      g_autoptr(AtomrTensor) a = NULL, b = NULL, d = NULL;
      g_autofree gchar *modes = NULL;
      g_autofree gdouble *old = NULL;
      g_autoptr(GError) error = NULL;
      GAsyncResult *result = NULL;
      guint64 i = 0;

      for (guint k = 0; k < n; k++)
        {
          all[k] = 'i' + k;
          ext[(guchar) all[k]] = g_rand_int_range (f->rand, 1, 5);
        }
      random_perm (f, n, perm);
      nd = g_rand_int_range (f->rand, 0, n);
      for (guint k = 0; k < n; k++)
        {
          gchar m = all[perm[k]];
          guint where = g_rand_int_range (f->rand, 0, 4);   /* A, B, both, both */
          if (k < nd)
            {
              md[k] = m;
              sd[k] = ext[(guchar) m];
            }
          else
            mk[nk++] = m;
          if (where != 1)
            {
              ma[na] = m;
              sa[na++] = ext[(guchar) m];
            }
          if (where != 0)
            {
              mb[nb] = m;
              sb[nb++] = ext[(guchar) m];
            }
        }
      if (na == 0 || nb == 0)
        continue;
      a = random_view (f, dtype, na, sa, -1);
      b = random_view (f, dtype, nb, sb, -1);
      d = random_view (f, dtype, nd, sd, -1);
      old = g_new0 (gdouble, n_elements (nd, sd));
      do
        old[i++] = read_elem (d, idx);
      while (nd > 0 && next_index (nd, sd, idx));
      modes = g_strdup_printf ("%s,%s->%s", ma, mb, md);

      atomr_tensor_actor_contract_async (f->actor, modes, alpha, a, b, beta, d, NULL, store_result, &result);
      g_assert_true (atomr_tensor_actor_contract_finish (f->actor, wait_result (&result), &error));
      g_assert_no_error (error);
      g_clear_object (&result);

      memset (idx, 0, sizeof idx);
      i = 0;
      do
        {
          gint64 kidx[8] = { 0 }, kshape[8];
          gdouble acc = 0;

          for (guint k = 0; k < nd; k++)
            mv[(guchar) md[k]] = idx[k];
          for (guint k = 0; k < nk; k++)
            kshape[k] = ext[(guchar) mk[k]];
          do
            {
              for (guint k = 0; k < nk; k++)
                mv[(guchar) mk[k]] = kidx[k];
              index_for (a, ma, mv, ia);
              index_for (b, mb, mv, ib);
              acc += read_elem (a, ia) * read_elem (b, ib);
            }
          while (next_index (nk, kshape, kidx));
          assert_close (read_elem (d, idx), alpha * acc + beta * old[i++], dtype, modes);
        }
      while (nd > 0 && next_index (nd, sd, idx));
    }
}

/* ------------------------------------------------------------------ */
/* Reductions                                                           */

static void
test_reduce_random (Fixture *f, gconstpointer data)
{
  for (guint iter = 0; iter < 160; iter++)
    {
      AtomrDtype dtype = iter % 2 ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
      guint n = 1 + iter % 6, perm[8], nc;
      gint64 shape_a[8], shape_c[8], idx[8] = { 0 }, mv[256] = { 0 }, ia[8];
      gchar ma[9] = { 0 }, mc[9] = { 0 }, red[9] = { 0 };
      guint nred = 0;
      AtomrTensorReduceOp op = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_REDUCE_NORM_INF + 1);
      gdouble alpha = g_rand_double_range (f->rand, 0.5, 2);
      gdouble beta = g_rand_boolean (f->rand) ? 0.0 : g_rand_double_range (f->rand, -1, 1);
      g_autoptr(AtomrTensor) a = NULL, c = NULL, c_old = NULL;
      g_autofree gchar *modes = NULL;
      g_autofree gdouble *old = NULL;
      g_autoptr(GError) error = NULL;
      GAsyncResult *result = NULL;
      guint64 i = 0;

      for (guint k = 0; k < n; k++)
        {
          ma[k] = 'p' + k;
          shape_a[k] = g_rand_int_range (f->rand, 1, 5);
        }
      random_perm (f, n, perm);
      nc = g_rand_int_range (f->rand, 0, n);   /* at least one mode reduced */
      for (guint k = 0; k < nc; k++)
        {
          mc[k] = ma[perm[k]];
          shape_c[k] = shape_a[perm[k]];
        }
      for (guint k = nc; k < n; k++)
        red[nred++] = ma[perm[k]];
      a = random_view (f, dtype, n, shape_a, -1);
      c = random_view (f, dtype, nc, shape_c, -1);
      old = g_new0 (gdouble, n_elements (nc, shape_c));
      if (nc > 0)
        do
          old[i++] = read_elem (c, idx);
        while (next_index (nc, shape_c, idx));
      else
        old[0] = read_elem (c, idx);
      modes = g_strdup_printf ("%s->%s", ma, mc);

      atomr_tensor_actor_reduce_async (f->actor, modes, op, alpha, a, beta, c, NULL, store_result, &result);
      g_assert_true (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
      g_assert_no_error (error);
      g_clear_object (&result);

      memset (idx, 0, sizeof idx);
      i = 0;
      do
        {
          gint64 ridx[8] = { 0 }, rshape[8];
          gdouble acc = op == ATOMR_TENSOR_REDUCE_PROD ? 1 : op == ATOMR_TENSOR_REDUCE_MAX ? -INFINITY
                      : op == ATOMR_TENSOR_REDUCE_MIN ? INFINITY : 0;
          guint64 count = 0;
          gdouble want;

          for (guint k = 0; k < nc; k++)
            mv[(guchar) mc[k]] = idx[k];
          for (guint k = 0; k < nred; k++)
            rshape[k] = shape_a[red[k] - 'p'];
          do
            {
              gdouble x;
              for (guint k = 0; k < nred; k++)
                mv[(guchar) red[k]] = ridx[k];
              index_for (a, ma, mv, ia);
              x = read_elem (a, ia);
              count++;
              switch (op)
                {
                case ATOMR_TENSOR_REDUCE_SUM: case ATOMR_TENSOR_REDUCE_MEAN: acc += x; break;
                case ATOMR_TENSOR_REDUCE_PROD: acc *= x; break;
                case ATOMR_TENSOR_REDUCE_MAX: acc = MAX (acc, x); break;
                case ATOMR_TENSOR_REDUCE_MIN: acc = MIN (acc, x); break;
                case ATOMR_TENSOR_REDUCE_NORM1: acc += fabs (x); break;
                case ATOMR_TENSOR_REDUCE_NORM2: acc += x * x; break;
                case ATOMR_TENSOR_REDUCE_NORM_INF: acc = MAX (acc, fabs (x)); break;
                }
            }
          while (next_index (nred, rshape, ridx));
          if (op == ATOMR_TENSOR_REDUCE_MEAN)
            acc /= (gdouble) count;
          if (op == ATOMR_TENSOR_REDUCE_NORM2)
            acc = sqrt (acc);
          want = alpha * acc + beta * old[i++];
          /* the order of the sum differs: a looser bound for f32 */
          assert_close (read_elem (c, idx), want, dtype == ATOMR_DTYPE_F32 ? ATOMR_DTYPE_F32 : dtype, modes);
        }
      while (nc > 0 && next_index (nc, shape_c, idx));
    }
}

/* beta = 0 never reads C: NaN there does not leak into the result */
static void
test_reduce_beta_zero_nan (Fixture *f, gconstpointer data)
{
  const gint64 shape[] = { 3, 4 }, cshape[] = { 3 };
  g_autoptr(AtomrTensor) a = NULL, c = NULL;
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;
  gdouble *ad, *cd;

  a = atomr_tensor_empty (f->device, ATOMR_DTYPE_F64, shape, 2, &error);
  c = atomr_tensor_empty (f->device, ATOMR_DTYPE_F64, cshape, 1, &error);
  g_assert_no_error (error);
  ad = atomr_tensor_get_host_data (a);
  cd = atomr_tensor_get_host_data (c);
  for (guint i = 0; i < 12; i++)
    ad[i] = i;
  for (guint i = 0; i < 3; i++)
    cd[i] = NAN;
  atomr_tensor_actor_reduce_async (f->actor, "ab->a", ATOMR_TENSOR_REDUCE_SUM, 1.0, a, 0.0, c,
                                   NULL, store_result, &result);
  g_assert_true (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
  g_assert_no_error (error);
  g_clear_object (&result);
  g_assert_cmpfloat (cd[0], ==, 0 + 1 + 2 + 3);
  g_assert_cmpfloat (cd[1], ==, 4 + 5 + 6 + 7);
  g_assert_cmpfloat (cd[2], ==, 8 + 9 + 10 + 11);
}

/* f16 and bf16 on the host: rounding to nearest even and f32 accumulation */
static void
test_halves (Fixture *f, gconstpointer data)
{
  const gint64 shape[] = { 4 };
  const gint64 one[] = { 1 };
  /* f16 1.0, 2.0, 0.5, 65504 (largest finite) */
  const guint16 h[] = { 0x3c00, 0x4000, 0x3800, 0x7bff };
  /* bf16 1.0, 3.0, -0.5, 256 */
  const guint16 bf[] = { 0x3f80, 0x4040, 0xbf00, 0x4380 };
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;
  g_autoptr(AtomrTensor) a = atomr_tensor_empty (f->device, ATOMR_DTYPE_F16, shape, 1, &error);
  g_autoptr(AtomrTensor) b = atomr_tensor_empty (f->device, ATOMR_DTYPE_F16, shape, 1, &error);
  g_autoptr(AtomrTensor) ba = atomr_tensor_empty (f->device, ATOMR_DTYPE_BF16, shape, 1, &error);
  g_autoptr(AtomrTensor) bc = atomr_tensor_empty (f->device, ATOMR_DTYPE_BF16, one, 1, &error);
  g_autoptr(AtomrTensor) scalar = NULL;
  guint16 *out;

  g_assert_no_error (error);
  memcpy (atomr_tensor_get_host_data (a), h, sizeof h);
  /* B = 2·A: 65504·2 overflows to +inf */
  atomr_tensor_actor_permute_async (f->actor, "a->a", 2.0, ATOMR_TENSOR_UNARY_IDENTITY, a, b,
                                    NULL, store_result, &result);
  g_assert_true (atomr_tensor_actor_permute_finish (f->actor, wait_result (&result), &error));
  g_clear_object (&result);
  out = atomr_tensor_get_host_data (b);
  g_assert_cmphex (out[0], ==, 0x4000);
  g_assert_cmphex (out[1], ==, 0x4400);
  g_assert_cmphex (out[2], ==, 0x3c00);
  g_assert_cmphex (out[3], ==, 0x7c00);
  /* 1/3 in f16 rounds to 0x3555 */
  atomr_tensor_actor_permute_async (f->actor, "a->a", 1.0 / 3.0, ATOMR_TENSOR_UNARY_IDENTITY, a, b,
                                    NULL, store_result, &result);
  g_assert_true (atomr_tensor_actor_permute_finish (f->actor, wait_result (&result), &error));
  g_clear_object (&result);
  g_assert_cmphex (out[0], ==, 0x3555);

  memcpy (atomr_tensor_get_host_data (ba), bf, sizeof bf);
  scalar = atomr_tensor_reshape (bc, NULL, 0, &error);
  g_assert_no_error (error);
  atomr_tensor_actor_reduce_async (f->actor, "a->", ATOMR_TENSOR_REDUCE_SUM, 1.0, ba, 0.0,
                                   scalar, NULL, store_result, &result);
  g_assert_true (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
  g_assert_no_error (error);
  g_clear_object (&result);
  /* 1 + 3 - 0.5 + 256 = 259.5 → bf16 rounds to 260 (0x4382) */
  g_assert_cmphex (((guint16 *) atomr_tensor_get_host_data (bc))[0], ==, 0x4382);
}

static void
test_empty (Fixture *f, gconstpointer data)
{
  const gint64 shape[] = { 3, 0 }, cshape[] = { 3 };
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;
  g_autoptr(AtomrTensor) a = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, shape, 2, &error);
  g_autoptr(AtomrTensor) c = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, cshape, 1, &error);
  gfloat *cd = atomr_tensor_get_host_data (c);

  /* a reduction over nothing: sum 0, max -inf, mean NaN */
  atomr_tensor_actor_reduce_async (f->actor, "ab->a", ATOMR_TENSOR_REDUCE_SUM, 1.0, a, 0.0, c,
                                   NULL, store_result, &result);
  g_assert_true (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
  g_clear_object (&result);
  g_assert_cmpfloat (cd[2], ==, 0.0f);
  atomr_tensor_actor_reduce_async (f->actor, "ab->a", ATOMR_TENSOR_REDUCE_MAX, 1.0, a, 0.0, c,
                                   NULL, store_result, &result);
  g_assert_true (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
  g_clear_object (&result);
  g_assert_true (isinf (cd[0]) && cd[0] < 0);
  atomr_tensor_actor_reduce_async (f->actor, "ab->a", ATOMR_TENSOR_REDUCE_MEAN, 1.0, a, 0.0, c,
                                   NULL, store_result, &result);
  g_assert_true (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
  g_clear_object (&result);
  g_assert_true (isnan (cd[1]));
  g_assert_no_error (error);
}

static void
count_notify (guint *count)
{
  (*count)++;
}

static void
test_plan_cache (Fixture *f, gconstpointer data)
{
  const gint64 shape[] = { 4, 5 }, tshape[] = { 5, 4 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) a = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, shape, 2, &error);
  g_autoptr(AtomrTensor) b = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, tshape, 2, &error);
  guint64 hits, misses, evictions;
  guint size, notified = 0;

  for (guint i = 0; i < 3; i++)
    {
      GAsyncResult *result = NULL;
      atomr_tensor_actor_permute_async (f->actor, "ab->ba", 1.0, ATOMR_TENSOR_UNARY_IDENTITY, a, b,
                                        NULL, store_result, &result);
      g_assert_true (atomr_tensor_actor_permute_finish (f->actor, wait_result (&result), &error));
      g_clear_object (&result);
    }
  atomr_tensor_actor_get_plan_cache_stats (f->actor, &hits, &misses, &evictions, &size);
  g_assert_cmpuint (misses, ==, 1);
  g_assert_cmpuint (hits, ==, 2);
  g_assert_cmpuint (size, ==, 1);
  g_assert_cmpuint (evictions, ==, 0);

  g_signal_connect_swapped (f->actor, "notify::plan-cache-capacity", G_CALLBACK (count_notify), &notified);
  g_object_set (f->actor, "plan-cache-capacity", 7, NULL);
  g_assert_cmpuint (atomr_tensor_actor_get_plan_cache_capacity (f->actor), ==, 7);
  g_assert_cmpuint (notified, ==, 1);
  atomr_tensor_actor_set_plan_cache_capacity (f->actor, 7);    /* unchanged: no notify */
  g_assert_cmpuint (notified, ==, 1);
  /* capacity 1 evicts the plan */
  atomr_tensor_actor_set_plan_cache_capacity (f->actor, 1);
  {
    const gint64 shape3[] = { 20 };
    g_autoptr(AtomrTensor) v = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, shape3, 1, &error);
    g_autoptr(AtomrTensor) w = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, shape3, 1, &error);
    GAsyncResult *result = NULL;
    atomr_tensor_actor_permute_async (f->actor, "a->a", 1.0, ATOMR_TENSOR_UNARY_IDENTITY, v, w,
                                      NULL, store_result, &result);
    g_assert_true (atomr_tensor_actor_permute_finish (f->actor, wait_result (&result), &error));
    g_clear_object (&result);
  }
  atomr_tensor_actor_get_plan_cache_stats (f->actor, NULL, &misses, &evictions, &size);
  g_assert_cmpuint (misses, ==, 2);
  g_assert_cmpuint (evictions, ==, 1);
  g_assert_cmpuint (size, ==, 1);
}

/* ------------------------------------------------------------------ */
/* Validation                                                           */

static GError *
wait_error (GAsyncResult **result, gboolean (*finish) (AtomrTensorActor *, GAsyncResult *, GError **),
            AtomrTensorActor *actor)
{
  GError *error = NULL;
  g_assert_false (finish (actor, wait_result (result), &error));
  g_clear_object (result);
  return error;
}

static void
expect (GError *error, gint code, const gchar *fragment)
{
  g_assert_nonnull (error);
  g_assert_true (error->domain == ATOMR_ERROR);
  if (error->code != code || strstr (error->message, fragment) == NULL)
    g_error ("error %d \"%s\", want %d with \"%s\"", error->code, error->message, code, fragment);
  g_error_free (error);
}

static void
test_validation (Fixture *f, gconstpointer data)
{
  const gint64 s34[] = { 3, 4 }, s43[] = { 4, 3 }, s3[] = { 3 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) a = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, s34, 2, &error);
  g_autoptr(AtomrTensor) b = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, s43, 2, &error);
  g_autoptr(AtomrTensor) b64 = atomr_tensor_empty (f->device, ATOMR_DTYPE_F64, s43, 2, &error);
  g_autoptr(AtomrTensor) cx = atomr_tensor_empty (f->device, ATOMR_DTYPE_I32, s43, 2, &error);
  g_autoptr(AtomrTensor) ax = atomr_tensor_empty (f->device, ATOMR_DTYPE_I32, s34, 2, &error);
  g_autoptr(AtomrTensor) c3 = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, s3, 1, &error);
  g_autoptr(AtomrTensor) bare = g_object_new (ATOMR_TYPE_TENSOR, NULL);
  g_autoptr(AtomrTensor) at = NULL;
  g_autoptr(AtomrDevice) other = atomr_device_new_mock ();
  g_autoptr(AtomrTensor) foreign = atomr_tensor_empty (other, ATOMR_DTYPE_F32, s43, 2, &error);
  GAsyncResult *r = NULL;
  AtomrTensorActor *t = f->actor;
#define PERMUTE_ERR(modes, alpha, op, x, y) \
  (atomr_tensor_actor_permute_async (t, modes, alpha, op, x, y, NULL, store_result, &r), \
   wait_error (&r, atomr_tensor_actor_permute_finish, t))

  g_assert_no_error (error);
  at = atomr_tensor_transpose (a, 0, 1, &error);
  g_assert_no_error (error);

  expect (PERMUTE_ERR ("ab-ba", 1, 0, a, b), ATOMR_ERROR_INVALID_ARGUMENT, "permute: modes \"ab-ba\": character '-'");
  expect (PERMUTE_ERR (NULL, 1, 0, a, b), ATOMR_ERROR_INVALID_ARGUMENT, "modes is NULL");
  expect (PERMUTE_ERR ("ab->ab", 1, 0, a, b), ATOMR_ERROR_INVALID_ARGUMENT, "mode 'a' has extent 3 in a but 4 in b");
  expect (PERMUTE_ERR ("abc->ba", 1, 0, a, b), ATOMR_ERROR_INVALID_ARGUMENT, "a has 2 dimensions but its modes \"abc\" name 3");
  expect (PERMUTE_ERR ("ab->ba", 1, 0, a, b64), ATOMR_ERROR_INVALID_ARGUMENT, "a has dtype f32 but b has f64");
  expect (PERMUTE_ERR ("ab->ba", 1, 0, ax, cx), ATOMR_ERROR_NOT_SUPPORTED, "b has dtype i32");
  expect (PERMUTE_ERR ("ab->ba", 1, 99, a, b), ATOMR_ERROR_INVALID_ARGUMENT, "op_a");
  expect (PERMUTE_ERR ("ab->ba", NAN, 0, a, b), ATOMR_ERROR_INVALID_ARGUMENT, "alpha is nan");
  expect (PERMUTE_ERR ("ab->ba", 1, 0, bare, b), ATOMR_ERROR_INVALID_ARGUMENT, "bare");
  expect (PERMUTE_ERR ("ab->ba", 1, 0, NULL, b), ATOMR_ERROR_INVALID_ARGUMENT, "permute: a");
  expect (PERMUTE_ERR ("ab->ba", 1, 0, a, foreign), ATOMR_ERROR_INVALID_ARGUMENT, "permute: b");
  /* B is A transposed in place: the views overlap */
  expect (PERMUTE_ERR ("ab->ba", 1, 0, a, at), ATOMR_ERROR_INVALID_ARGUMENT, "b");

  atomr_tensor_actor_elementwise_binary_async (t, "ab,ab->ba", 1, 0, a, 1, 0, a, 7, b, NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_elementwise_binary_finish, t), ATOMR_ERROR_INVALID_ARGUMENT, "op_ab");
  atomr_tensor_actor_elementwise_binary_async (t, "ab->ba", 1, 0, a, 1, 0, a, 0, b, NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_elementwise_binary_finish, t), ATOMR_ERROR_INVALID_ARGUMENT, "has 1 input, expected 2");
  atomr_tensor_actor_elementwise_binary_async (t, "ab,ab->ba", 1, 0, a, INFINITY, 0, a, 0, b, NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_elementwise_binary_finish, t), ATOMR_ERROR_INVALID_ARGUMENT, "beta is inf");

  atomr_tensor_actor_elementwise_trinary_async (t, "ab,ab,ab->ba", 1, 0, a, 1, 0, a, 1, 0, a, 0, 9, b,
                                                NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_elementwise_trinary_finish, t), ATOMR_ERROR_INVALID_ARGUMENT, "op_abc");
  atomr_tensor_actor_elementwise_trinary_async (t, "ab,ab,ab->ba", 1, 0, a, 1, 0, a, NAN, 0, a, 0, 0, b,
                                                NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_elementwise_trinary_finish, t), ATOMR_ERROR_INVALID_ARGUMENT, "gamma is nan");
  atomr_tensor_actor_elementwise_trinary_async (t, "ab,ab,ab->ba", 1, 0, a, 1, 0, a, 1, 0, at, 0, 0, b,
                                                NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_elementwise_trinary_finish, t), ATOMR_ERROR_INVALID_ARGUMENT,
          "mode 'b' has extent 3 in c but 4 in d");
  atomr_tensor_actor_contract_async (t, "ab,cb->ac", 1, a, a, 0, b, NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_contract_finish, t), ATOMR_ERROR_INVALID_ARGUMENT,
          "mode 'a' has extent 3 in a but 4 in d");
  atomr_tensor_actor_contract_async (t, "ab,ba->", 1, a, at, 0, c3, NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_contract_finish, t), ATOMR_ERROR_INVALID_ARGUMENT,
          "d has 1 dimension but its modes \"\" name 0");
  atomr_tensor_actor_reduce_async (t, "ab->a", 42, 1, a, 0, c3, NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_reduce_finish, t), ATOMR_ERROR_INVALID_ARGUMENT, "op");
  atomr_tensor_actor_reduce_async (t, "ab->b", ATOMR_TENSOR_REDUCE_SUM, 1, a, 0, c3, NULL, store_result, &r);
  expect (wait_error (&r, atomr_tensor_actor_reduce_finish, t), ATOMR_ERROR_INVALID_ARGUMENT, "mode 'b' has extent 4 in a but 3 in c");
  /* a broadcast (stride-0) output */
  {
    g_autoptr(AtomrTensor) bc = atomr_tensor_broadcast_to (c3, s43, 2, &error);
    g_assert_no_error (error);
    expect (PERMUTE_ERR ("ab->ba", 1, 0, a, bc), ATOMR_ERROR_INVALID_ARGUMENT, "stride 0 in mode 'b' of extent 4");
  }
#undef PERMUTE_ERR
}

static void
record_detail (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  gchar **detail = user_data;

  g_free (*detail);
  *detail = g_strdup (atomr_launch_info_get_detail (info));
}

static gchar *
contract_detail_of (Fixture *f, const gchar *modes, AtomrTensor *a, AtomrTensor *b, AtomrTensor *d,
                    GError **error)
{
  gchar *detail = NULL;
  GAsyncResult *result = NULL;
  gulong id = g_signal_connect (f->actor, "after-enqueue", G_CALLBACK (record_detail), &detail);
  gboolean ok;

  atomr_tensor_actor_contract_async (f->actor, modes, 1.0, a, b, 0.0, d, NULL, store_result, &result);
  ok = atomr_tensor_actor_contract_finish (f->actor, wait_result (&result), error);
  g_clear_object (&result);
  g_signal_handler_disconnect (f->actor, id);
  if (!ok)
    g_clear_pointer (&detail, g_free);
  return detail;
}

/* The path a contraction takes is in its detail: a GEMM-shaped one goes
 * to cuBLASLt (on the mock device the detail still names the plan), the
 * rest to the generated kernels with the reason; an f16 compute type
 * does not apply to f32 operands. */
static void
test_contract_path (Fixture *f, gconstpointer data)
{
  const gint64 mk[] = { 6, 5 }, kn[] = { 5, 7 }, mn[] = { 6, 7 }, m[] = { 6 }, j[] = { 3 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) a = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, mk, 2, &error);
  g_autoptr(AtomrTensor) b = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, kn, 2, &error);
  g_autoptr(AtomrTensor) d = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, mn, 2, &error);
  g_autoptr(AtomrTensor) v = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, m, 1, &error);
  g_autoptr(AtomrTensor) w = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, j, 1, &error);
  g_autofree gchar *gemm = NULL, *tf32 = NULL, *other = NULL;
  guint notified = 0;

  g_assert_no_error (error);
  gemm = contract_detail_of (f, "mk,kn->mn", a, b, d, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (gemm, ==, "cublaslt gemm m=7 n=6 k=5 batch=1 op=NN swapped");

  g_signal_connect_swapped (f->actor, "notify::compute-type", G_CALLBACK (count_notify), &notified);
  atomr_tensor_actor_set_compute_type (f->actor, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
  atomr_tensor_actor_set_compute_type (f->actor, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
  g_assert_cmpuint (notified, ==, 1);
  g_assert_cmpint (atomr_tensor_actor_get_compute_type (f->actor), ==, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
  tf32 = contract_detail_of (f, "mk,kn->mn", a, b, d, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_suffix (tf32, " tf32"));

  other = contract_detail_of (f, "mk,j->m", a, w, v, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (other, "nvrtc "));
  g_assert_true (g_str_has_suffix (other, " (mode 'k' is in a alone (a reduction of one input))"));

  /* A's a and b modes do not fold: A is packed, then one GEMM; the
   * result (computed by the CPU path here) is still the contraction */
  {
    const gint64 sa[] = { 2, 3, 4 }, sa_s[] = { 100, 4, 1 }, sb[] = { 4, 7 }, sd[] = { 2, 3, 7 };
    g_autoptr(AtomrBuffer) buf = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 200, &error);
    g_autoptr(AtomrTensor) pa = NULL, pb = NULL, pd = NULL;
    g_autofree gchar *packed = NULL;
    gfloat *ha, *hb, *hd;

    g_assert_no_error (error);
    pa = atomr_tensor_new_strided (buf, ATOMR_DTYPE_F32, 0, sa, 3, sa_s, 3, &error);
    g_assert_no_error (error);
    pb = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, sb, 2, &error);
    pd = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, sd, 3, &error);
    g_assert_no_error (error);
    ha = atomr_tensor_get_host_data (pa);
    hb = atomr_tensor_get_host_data (pb);
    for (guint i = 0; i < 2; i++)
      for (guint q = 0; q < 3; q++)
        for (guint k = 0; k < 4; k++)
          ha[i * 100 + q * 4 + k] = (gfloat) (i + 2 * q + 3 * k);
    for (guint k = 0; k < 28; k++)
      hb[k] = (gfloat) (k % 5) - 2;
    packed = contract_detail_of (f, "abk,kn->abn", pa, pb, pd, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (packed, ==, "cublaslt gemm m=7 n=6 k=4 batch=1 op=NN swapped tf32 packed a");
    hd = atomr_tensor_get_host_data (pd);
    for (guint i = 0; i < 2; i++)
      for (guint q = 0; q < 3; q++)
        for (guint n = 0; n < 7; n++)
          {
            gfloat want = 0;
            for (guint k = 0; k < 4; k++)
              want += ha[i * 100 + q * 4 + k] * hb[k * 7 + n];
            g_assert_cmpfloat_with_epsilon (hd[(i * 3 + q) * 7 + n], want, 1e-4);
          }
  }

  g_object_set (f->actor, "compute-type", ATOMR_BLAS_COMPUTE_F16, NULL);
  g_assert_null (contract_detail_of (f, "mk,kn->mn", a, b, d, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "compute-type f16 does not apply to f32"));
}

/* ------------------------------------------------------------------ */
/* Complex dtypes                                                       */

typedef double _Complex zd;

static AtomrTensor *
complex_tensor (Fixture *f, AtomrDtype dtype, const gint64 *shape, guint n, gboolean fill)
{
  g_autoptr(GError) error = NULL;
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, n, &error);
  guint64 count = 1;

  g_assert_no_error (error);
  for (guint d = 0; d < n; d++)
    count *= (guint64) shape[d];
  for (guint64 i = 0; fill && i < count; i++)
    {
      gdouble re = g_rand_double_range (f->rand, -2, 2), im = g_rand_double_range (f->rand, -2, 2);
      if (dtype == ATOMR_DTYPE_C64)
        {
          gfloat *p = (gfloat *) atomr_tensor_get_host_data (t) + 2 * i;
          p[0] = (gfloat) re;
          p[1] = (gfloat) im;
        }
      else
        {
          gdouble *p = (gdouble *) atomr_tensor_get_host_data (t) + 2 * i;
          p[0] = re;
          p[1] = im;
        }
    }
  return t;
}

/* element @i of a contiguous complex view */
static zd
zat (AtomrTensor *t, guint64 i)
{
  if (atomr_tensor_get_dtype (t) == ATOMR_DTYPE_C64)
    {
      const gfloat *p = (const gfloat *) atomr_tensor_get_host_data (t) + 2 * i;
      return CMPLX (p[0], p[1]);
    }
  {
    const gdouble *p = (const gdouble *) atomr_tensor_get_host_data (t) + 2 * i;
    return CMPLX (p[0], p[1]);
  }
}

static void
assert_zclose (zd got, zd want, AtomrDtype dtype, const gchar *what)
{
  gdouble tol = (dtype == ATOMR_DTYPE_C64 ? 4e-6 : 1e-12) * MAX (1.0, cabs (want));

  if (!(cabs (got - want) <= tol))
    g_error ("%s (%s): got %.9g%+.9gi, want %.9g%+.9gi", what, atomr_dtype_get_name (dtype),
             creal (got), cimag (got), creal (want), cimag (want));
}

#define RUN_OK(call, finish) G_STMT_START {                                   \
    GAsyncResult *result_ = NULL;                                             \
    g_autoptr(GError) error_ = NULL;                                          \
    call;                                                                     \
    g_assert_true (finish (f->actor, wait_result (&result_), &error_));       \
    g_assert_no_error (error_);                                               \
    g_clear_object (&result_);                                                \
  } G_STMT_END

/* c64 and c128: a conjugating permutation, a broadcast complex product,
 * sums, products and norms, a complex GEMM-shaped contraction (which a GPU
 * runs on cuBLASLt), each against the arithmetic of <complex.h>. */
static void
test_complex (Fixture *f, gconstpointer data)
{
  static const AtomrDtype dtypes[] = { ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };

  for (guint di = 0; di < G_N_ELEMENTS (dtypes); di++)
    {
      AtomrDtype dt = dtypes[di];
      const gint64 s3[] = { 3, 4, 5 }, s3t[] = { 5, 4, 3 }, s2[] = { 4, 5 }, s1[] = { 5 }, s4[] = { 4 };
      const gint64 mk[] = { 4, 6 }, kn[] = { 6, 3 }, mn[] = { 4, 3 };
      g_autoptr(AtomrTensor) a = complex_tensor (f, dt, s3, 3, TRUE);
      g_autoptr(AtomrTensor) b = complex_tensor (f, dt, s3t, 3, FALSE);
      g_autoptr(AtomrTensor) m = complex_tensor (f, dt, s2, 2, TRUE);
      g_autoptr(AtomrTensor) v = complex_tensor (f, dt, s1, 1, TRUE);
      g_autoptr(AtomrTensor) d = complex_tensor (f, dt, s2, 2, TRUE);
      g_autoptr(AtomrTensor) r = complex_tensor (f, dt, s4, 1, TRUE);
      g_autoptr(AtomrTensor) x = complex_tensor (f, dt, mk, 2, TRUE);
      g_autoptr(AtomrTensor) y = complex_tensor (f, dt, kn, 2, TRUE);
      g_autoptr(AtomrTensor) z = complex_tensor (f, dt, mn, 2, TRUE);
      g_autofree zd *r_old = g_new (zd, 4), *z_old = g_new (zd, 12);

      /* B = 1.5 · conj(A) with "abc->cba" */
      RUN_OK (atomr_tensor_actor_permute_async (f->actor, "abc->cba", 1.5, ATOMR_TENSOR_UNARY_CONJ, a, b, NULL,
                                                store_result, &result_),
              atomr_tensor_actor_permute_finish);
      for (gint64 i = 0; i < 3; i++)
        for (gint64 j = 0; j < 4; j++)
          for (gint64 k = 0; k < 5; k++)
            assert_zclose (zat (b, (k * 4 + j) * 3 + i), 1.5 * conj (zat (a, (i * 4 + j) * 5 + k)), dt,
                           "permute conj");

      /* D = (-1 · M) ⊙ (0.5 · exp(v)) broadcast over rows */
      RUN_OK (atomr_tensor_actor_elementwise_binary_async (f->actor, "ab,b->ab", -1.0, ATOMR_TENSOR_UNARY_IDENTITY,
                                                           m, 0.5, ATOMR_TENSOR_UNARY_EXP, v,
                                                           ATOMR_TENSOR_BINARY_MUL, d, NULL, store_result,
                                                           &result_),
              atomr_tensor_actor_elementwise_binary_finish);
      for (gint64 i = 0; i < 4; i++)
        for (gint64 j = 0; j < 5; j++)
          assert_zclose (zat (d, i * 5 + j), -zat (m, i * 5 + j) * (0.5 * cexp (zat (v, j))), dt, "binary mul");

      /* sums, products and the 2-norm of each row, with beta */
      for (guint op = 0; op < 3; op++)
        {
          AtomrTensorReduceOp rop = op == 0 ? ATOMR_TENSOR_REDUCE_SUM : op == 1 ? ATOMR_TENSOR_REDUCE_PROD
                                                                                 : ATOMR_TENSOR_REDUCE_NORM2;
          for (guint i = 0; i < 4; i++)
            r_old[i] = zat (r, i);
          RUN_OK (atomr_tensor_actor_reduce_async (f->actor, "ab->a", rop, 2.0, m, 0.25, r, NULL, store_result,
                                                   &result_),
                  atomr_tensor_actor_reduce_finish);
          for (gint64 i = 0; i < 4; i++)
            {
              zd acc = rop == ATOMR_TENSOR_REDUCE_PROD ? 1.0 : 0.0;
              for (gint64 j = 0; j < 5; j++)
                {
                  zd e = zat (m, i * 5 + j);
                  if (rop == ATOMR_TENSOR_REDUCE_SUM)
                    acc += e;
                  else if (rop == ATOMR_TENSOR_REDUCE_PROD)
                    acc *= e;
                  else
                    acc += cabs (e) * cabs (e);
                }
              if (rop == ATOMR_TENSOR_REDUCE_NORM2)
                acc = sqrt (creal (acc));
              assert_zclose (zat (r, i), 2.0 * acc + 0.25 * r_old[i], dt, "reduce");
            }
        }

      /* Z = 0.5 · X·Y + 2 · Z */
      for (guint i = 0; i < 12; i++)
        z_old[i] = zat (z, i);
      RUN_OK (atomr_tensor_actor_contract_async (f->actor, "mk,kn->mn", 0.5, x, y, 2.0, z, NULL, store_result,
                                                 &result_),
              atomr_tensor_actor_contract_finish);
      for (gint64 i = 0; i < 4; i++)
        for (gint64 j = 0; j < 3; j++)
          {
            zd acc = 0;
            for (gint64 k = 0; k < 6; k++)
              acc += zat (x, i * 6 + k) * zat (y, k * 3 + j);
            assert_zclose (zat (z, i * 3 + j), 0.5 * acc + 2.0 * z_old[i * 3 + j], dt, "contract");
          }

      /* what has no complex meaning is refused, naming it */
      {
        GAsyncResult *result = NULL;
        g_autoptr(GError) error = NULL;

        atomr_tensor_actor_permute_async (f->actor, "abc->cba", 1.0, ATOMR_TENSOR_UNARY_RELU, a, b, NULL,
                                          store_result, &result);
        g_assert_false (atomr_tensor_actor_permute_finish (f->actor, wait_result (&result), &error));
        g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
        g_assert_nonnull (strstr (error->message, "unary op relu is not defined for"));
        g_clear_object (&result);
        g_clear_error (&error);

        atomr_tensor_actor_reduce_async (f->actor, "ab->a", ATOMR_TENSOR_REDUCE_MAX, 1.0, m, 0.0, r, NULL,
                                         store_result, &result);
        g_assert_false (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
        g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
        g_assert_nonnull (strstr (error->message, "reduction max does not apply to"));
        g_clear_object (&result);
        g_clear_error (&error);

        atomr_tensor_actor_elementwise_binary_async (f->actor, "ab,b->ab", 1.0, ATOMR_TENSOR_UNARY_IDENTITY, m,
                                                     1.0, ATOMR_TENSOR_UNARY_IDENTITY, v, ATOMR_TENSOR_BINARY_MIN,
                                                     d, NULL, store_result, &result);
        g_assert_false (atomr_tensor_actor_elementwise_binary_finish (f->actor, wait_result (&result), &error));
        g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
        g_assert_nonnull (strstr (error->message, "binary op min does not apply to"));
        g_clear_object (&result);
      }
    }
}

/* Σ over rows of a @rows × @cols f32 matrix of (row + col) % 7 on the
 * actor; returns the detail (the kernel a GPU would run, chosen on the
 * host: the mock device has one multiprocessor) and checks the sums. */
static gchar *
cols_detail_of (Fixture *f, gint64 rows, gint64 cols)
{
  const gint64 shape[] = { rows, cols }, out[] = { cols };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) a = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, shape, 2, &error);
  g_autoptr(AtomrTensor) c = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, out, 1, &error);
  gfloat *pa, *pc;
  gchar *detail = NULL;
  GAsyncResult *result = NULL;
  gulong id;

  g_assert_no_error (error);
  pa = atomr_buffer_get_host_data (atomr_tensor_get_buffer (a));
  for (gint64 i = 0; i < rows * cols; i++)
    pa[i] = (gfloat) ((i / cols + i % cols) % 7);
  id = g_signal_connect (f->actor, "after-enqueue", G_CALLBACK (record_detail), &detail);
  atomr_tensor_actor_reduce_async (f->actor, "ab->b", ATOMR_TENSOR_REDUCE_SUM, 1.0, a, 0.0, c, NULL,
                                   store_result, &result);
  g_assert_true (atomr_tensor_actor_reduce_finish (f->actor, wait_result (&result), &error));
  g_assert_no_error (error);
  g_clear_object (&result);
  g_signal_handler_disconnect (f->actor, id);
  pc = atomr_buffer_get_host_data (atomr_tensor_get_buffer (c));
  for (gint64 j = 0; j < cols; j++)
    {
      gdouble want = 0;

      for (gint64 i = 0; i < rows; i++)
        want += (gdouble) ((i + j) % 7);
      g_assert_cmpfloat (pc[j], ==, (gfloat) want);
    }
  return detail;
}

/* The column-reduction variant: set per actor (other letters refused),
 * read from ATOMR_TENSOR_COLS_VARIANT at construction (other values
 * ignored), and each variant plans its own kernels (the detail): a cuts
 * a tall 16-byte column reduction into chunks combined in one launch, b
 * runs the wide first pass, c the 32-vector one; one row is never cut. */
static void
test_cols_variant (Fixture *f, gconstpointer data)
{
  const gchar variants[] = { 'a', 'b', 'c' };
  const gchar *chunked[] = { "cols vec16 split-k (a)", "cols vec16 wide two-pass (b)", "cols vec16 two-pass (c)" };
  const gchar *one_row[] = { "cols vec16 deep (a)", "cols vec16 (b)", "cols vec16 (c)" };
  gchar start = atomr_tensor_actor_get_cols_variant (f->actor);

  g_assert_true (start == 'a' || start == 'b' || start == 'c');
  g_assert_false (atomr_tensor_actor_set_cols_variant (f->actor, 'd'));
  g_assert_false (atomr_tensor_actor_set_cols_variant (f->actor, 0));
  g_assert_cmpint (atomr_tensor_actor_get_cols_variant (f->actor), ==, start);
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      g_autofree gchar *tall = NULL, *flat = NULL;

      g_assert_true (atomr_tensor_actor_set_cols_variant (f->actor, variants[v]));
      g_assert_cmpint (atomr_tensor_actor_get_cols_variant (f->actor), ==, variants[v]);
      /* 2 blocks of 128 outputs (a, c) or 1 of 1024 (b), 600 rows */
      tall = cols_detail_of (f, 600, 256);
      g_assert_cmpstr (tall, ==, chunked[v]);
      flat = cols_detail_of (f, 1, 256);
      g_assert_cmpstr (flat, ==, one_row[v]);
    }
}

/* In a subprocess: setenv() before any thread exists. */
static void
test_cols_variant_env (void)
{
  g_autoptr(AtomrDevice) device = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensorActor) plain = NULL, b = NULL, junk = NULL;
  g_autofree gchar *saved = NULL;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      return;
    }
  saved = g_strdup (g_getenv ("ATOMR_TENSOR_COLS_VARIANT"));
  device = atomr_device_new_mock ();
  g_unsetenv ("ATOMR_TENSOR_COLS_VARIANT");
  plain = atomr_tensor_actor_new (device, &error);
  g_assert_no_error (error);
  g_setenv ("ATOMR_TENSOR_COLS_VARIANT", "b", TRUE);
  b = atomr_tensor_actor_new (device, &error);
  g_assert_no_error (error);
  g_setenv ("ATOMR_TENSOR_COLS_VARIANT", "bb", TRUE);
  junk = atomr_tensor_actor_new (device, &error);
  g_assert_no_error (error);
  if (saved != NULL)
    g_setenv ("ATOMR_TENSOR_COLS_VARIANT", saved, TRUE);
  else
    g_unsetenv ("ATOMR_TENSOR_COLS_VARIANT");
  g_assert_cmpint (atomr_tensor_actor_get_cols_variant (b), ==, 'b');
  g_assert_cmpint (atomr_tensor_actor_get_cols_variant (junk), ==, atomr_tensor_actor_get_cols_variant (plain));
}

static void
test_bare_actor (void)
{
  g_autoptr(AtomrTensorActor) bare = g_object_new (ATOMR_TYPE_TENSOR_ACTOR, NULL);
  guint64 hits = 1;

  atomr_tensor_actor_get_plan_cache_stats (bare, &hits, NULL, NULL, NULL);
  g_assert_cmpuint (hits, ==, 0);
  g_assert_cmpuint (atomr_tensor_actor_get_plan_cache_capacity (bare), ==, 128);

  /* a request to a bare actor fails cleanly */
  {
    const gint64 shape[] = { 4 };
    g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrTensor) a = atomr_tensor_empty (device, ATOMR_DTYPE_F32, shape, 1, &error);
    g_autoptr(AtomrTensor) b = atomr_tensor_empty (device, ATOMR_DTYPE_F32, shape, 1, &error);
    GAsyncResult *result = NULL;

    g_assert_no_error (error);
    atomr_tensor_actor_permute_async (bare, "a->a", 1.0, ATOMR_TENSOR_UNARY_IDENTITY, a, b, NULL,
                                      store_result, &result);
    g_assert_false (atomr_tensor_actor_permute_finish (bare, wait_result (&result), &error));
    g_assert_nonnull (error);
    g_clear_object (&result);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, func) g_test_add ("/tensor-actor/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("permute/random", test_permute_random);
  ADD ("binary/random", test_binary_random);
  ADD ("trinary/random", test_trinary_random);
  ADD ("contract/random", test_contract_random);
  ADD ("reduce/random", test_reduce_random);
  ADD ("reduce/beta-zero-nan", test_reduce_beta_zero_nan);
  ADD ("halves", test_halves);
  ADD ("empty", test_empty);
  ADD ("plan-cache", test_plan_cache);
  ADD ("validation", test_validation);
  ADD ("contract/path", test_contract_path);
  ADD ("complex", test_complex);
  ADD ("cols-variant", test_cols_variant);
  g_test_add_func ("/tensor-actor/cols-variant-env", test_cols_variant_env);
  g_test_add_func ("/tensor-actor/bare", test_bare_actor);
  return g_test_run ();
}
