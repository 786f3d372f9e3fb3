/* test-gpu-tensor-actor.c — the Tensor actor's generated kernels against
 * its CPU reference
 *
 * Every case builds the same random views (ranks 1–6, dimensions in a
 * random memory order, padding, reversed and broadcast strides) twice: in
 * GPU memory and on the host test device, with the same bytes.  The same
 * request runs on both actors; the CPU path computes in double and
 * test-tensor-actor.c checks it against a naive einsum reference.  The
 * whole output buffers are compared (padding included, which neither may
 * touch): |gpu − cpu| ≤ rtol · (|cpu| + 1) with rtol 1e-12 f64, 2e-5 f32,
 * 2e-3 f16, 1.6e-2 bf16 (one ulp of the result: the GPU rounds through
 * f32).  Both NaN counts as equal (sqrt and log of negative inputs).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>
#include "core/atomr-buffer-private.h"
#include "core/atomr-tensor-private.h"
#include "actors/tensor/atomr-tensor-kernels-private.h"

typedef struct {
  AtomrDevice      *device;
  AtomrDevice      *host;
  AtomrTensorActor *gpu;
  AtomrTensorActor *cpu;
  GRand            *rand;
} Fixture;

static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F32, ATOMR_DTYPE_F64 };

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->rand = g_rand_new_with_seed (20261123);
  f->device = atomr_device_get (0, &error);
  if (f->device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      return;
    }
  f->gpu = atomr_tensor_actor_new (f->device, &error);
  g_assert_no_error (error);
  f->host = atomr_device_new_mock ();
  f->cpu = atomr_tensor_actor_new (f->host, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->gpu)
    g_assert_finalize_object (f->gpu);
  if (f->cpu)
    g_assert_finalize_object (f->cpu);
  g_clear_object (&f->host);
  g_clear_object (&f->device);
  g_rand_free (f->rand);
}

#define SKIP_WITHOUT_DEVICE(f) \
  G_STMT_START { if ((f)->device == NULL) { g_test_skip ("no CUDA device"); return; } } G_STMT_END

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
/* Twin views                                                           */

typedef struct {
  guint   n;
  gint64  shape[8];
  gint64  strides[8];
  gint64  offset;     /* elements */
  guint64 size;       /* elements in the buffer */
} Layout;

static void
random_layout (Fixture *f, guint n, const gint64 *shape, gint zero_dim, Layout *l)
{
  guint order[8];
  gint64 pitch = 1;

  memset (l, 0, sizeof *l);
  l->n = n;
  memcpy (l->shape, shape, n * sizeof (gint64));
  for (guint d = 0; d < n; d++)
    order[d] = d;
  for (guint d = n; d > 1; d--)
    {
      guint j = g_rand_int_range (f->rand, 0, d), t = order[d - 1];
      order[d - 1] = order[j];
      order[j] = t;
    }
  for (guint k = 0; k < n; k++)
    {
      guint d = order[k];
      if ((gint) d == zero_dim)
        continue;
      l->strides[d] = pitch;
      pitch *= MAX (shape[d], 1) + g_rand_int_range (f->rand, 0, 2);
    }
  for (guint d = 0; d < n; d++)
    if (l->strides[d] != 0 && g_rand_int_range (f->rand, 0, 4) == 0)
      {
        l->offset += (MAX (shape[d], 1) - 1) * l->strides[d];
        l->strides[d] = -l->strides[d];
      }
  l->size = (guint64) pitch + 1;
}

static void
contiguous_layout (guint n, const gint64 *shape, Layout *l)
{
  gint64 pitch = 1;

  memset (l, 0, sizeof *l);
  l->n = n;
  memcpy (l->shape, shape, n * sizeof (gint64));
  for (guint d = n; d-- > 0; )
    {
      l->strides[d] = pitch;
      pitch *= shape[d];
    }
  l->size = (guint64) MAX (pitch, 1);
}

static GBytes *
random_bytes (Fixture *f, AtomrDtype dtype, guint64 n, gdouble lo, gdouble hi)
{
  gsize elem = atomr_dtype_get_size (dtype);
  guint8 *data = g_malloc (n * elem);

  for (guint64 i = 0; i < n; i++)
    {
      gdouble re = g_rand_double_range (f->rand, lo, hi);
      gdouble im = dtype == ATOMR_DTYPE_C64 || dtype == ATOMR_DTYPE_C128 ? g_rand_double_range (f->rand, lo, hi) : 0;
      g_autoptr(GBytes) one = atomr_dtype_pack (dtype, re, im);
      memcpy (data + i * elem, g_bytes_get_data (one, NULL), elem);
    }
  return g_bytes_new_take (data, n * elem);
}

typedef struct {
  AtomrTensor *gpu, *cpu;
} Twin;

static void
twin_clear (Twin *t)
{
  g_clear_object (&t->gpu);
  g_clear_object (&t->cpu);
}

static AtomrTensor *
make_view (AtomrDevice *device, AtomrDtype dtype, const Layout *l, GBytes *bytes)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, dtype, l->size, &error);
  AtomrTensor *t;

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  t = atomr_tensor_new_strided (buffer, dtype, (guint64) l->offset * atomr_dtype_get_size (dtype),
                                l->shape, l->n, l->strides, l->n, &error);
  g_assert_no_error (error);
  return t;
}

static void
twin_init (Fixture *f, Twin *t, AtomrDtype dtype, const Layout *l, gdouble lo, gdouble hi)
{
  g_autoptr(GBytes) bytes = random_bytes (f, dtype, l->size, lo, hi);

  t->gpu = make_view (f->device, dtype, l, bytes);
  t->cpu = make_view (f->host, dtype, l, bytes);
}

static gdouble
decode (AtomrDtype dtype, const guint8 *p)
{
  guint16 h;
  guint32 u;
  gfloat v;
  gdouble d;

  switch (dtype)
    {
    case ATOMR_DTYPE_F16:
      {
        guint32 sign, exp, mant;
        memcpy (&h, p, 2);
        sign = h >> 15;
        exp = (h >> 10) & 0x1f;
        mant = h & 0x3ff;
        if (exp == 0x1f)
          d = mant ? NAN : INFINITY;
        else if (exp == 0)
          d = ldexp (mant, -24);
        else
          d = ldexp (mant | 0x400, (gint) exp - 25);
        return sign ? -d : d;
      }
    case ATOMR_DTYPE_BF16:
      memcpy (&h, p, 2);
      u = (guint32) h << 16;
      memcpy (&v, &u, 4);
      return v;
    case ATOMR_DTYPE_F32:
      memcpy (&v, p, 4);
      return v;
    case ATOMR_DTYPE_F64:
      memcpy (&d, p, 8);
      return d;
    default:
      g_assert_not_reached ();
    }
}

static gdouble
rtol_of (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return 2e-3;
    case ATOMR_DTYPE_BF16: return 1.6e-2;
    case ATOMR_DTYPE_F32:
    case ATOMR_DTYPE_C64: return 2e-5;
    default: return 1e-12;
    }
}

/* Compares the whole buffers of the output twin: |gpu − cpu| ≤ rtol ·
 * (|cpu| + @scale).  @scale is 1 for elementwise results; sums pass the
 * size of their terms (√n · max |term|): the f32 accumulation's error
 * follows the terms, not a result that cancelled to near 0. */
static void
twin_compare_full (Twin *t, const gchar *what, gdouble scale, gdouble rtol);

static void
twin_compare_scaled (Twin *t, const gchar *what, gdouble scale)
{
  twin_compare_full (t, what, scale, rtol_of (atomr_tensor_get_dtype (t->gpu)));
}

/* as twin_compare_scaled() with an explicit @rtol */
static void
twin_compare_full (Twin *t, const gchar *what, gdouble scale, gdouble rtol)
{
  g_autoptr(GError) error = NULL;
  AtomrDtype dtype = atomr_tensor_get_dtype (t->gpu);
  g_autoptr(GBytes) got = atomr_buffer_download_sync (atomr_tensor_get_buffer (t->gpu), NULL, &error);
  const guint8 *want = atomr_buffer_get_host_data (atomr_tensor_get_buffer (t->cpu));
  gsize elem = atomr_dtype_get_size (dtype), size;
  const guint8 *g;
  gdouble worst = 0;

  g_assert_no_error (error);
  /* complex values compare as their real and imaginary parts */
  if (dtype == ATOMR_DTYPE_C64 || dtype == ATOMR_DTYPE_C128)
    {
      dtype = dtype == ATOMR_DTYPE_C64 ? ATOMR_DTYPE_F32 : ATOMR_DTYPE_F64;
      elem = atomr_dtype_get_size (dtype);
    }
  g = g_bytes_get_data (got, &size);
  g_assert_cmpuint (size, ==, atomr_buffer_get_byte_size (atomr_tensor_get_buffer (t->cpu)));
  for (gsize i = 0; i < size / elem; i++)
    {
      gdouble a = decode (dtype, g + i * elem), b = decode (dtype, want + i * elem);
      gdouble err;

      if (isnan (a) && isnan (b))
        continue;
      if (isinf (b) && a == b)
        continue;
      err = fabs (a - b) / (fabs (b) + scale);
      worst = MAX (worst, err);
      if (!(err <= rtol))
        g_error ("%s (%s): element %" G_GSIZE_FORMAT ": gpu %.9g, cpu %.9g", what,
                 atomr_dtype_get_name (dtype), i, a, b);
    }
  g_test_message ("%s (%s): worst relative error %.3g", what, atomr_dtype_get_name (dtype), worst);
}

static void
twin_compare (Twin *t, const gchar *what)
{
  twin_compare_scaled (t, what, 1.0);
}

static gdouble
layout_elements (const Layout *l)
{
  gdouble n = 1;
  for (guint d = 0; d < l->n; d++)
    n *= (gdouble) l->shape[d];
  return n;
}

static void
random_perm (Fixture *f, guint n, guint *perm)
{
  for (guint d = 0; d < n; d++)
    perm[d] = d;
  for (guint d = n; d > 1; d--)
    {
      guint j = g_rand_int_range (f->rand, 0, d), t = perm[d - 1];
      perm[d - 1] = perm[j];
      perm[j] = t;
    }
}

#define RUN(actor, call, finish) G_STMT_START {                               \
    GAsyncResult *result_ = NULL;                                             \
    g_autoptr(GError) error_ = NULL;                                          \
    call;                                                                     \
    if (!finish (actor, wait_result (&result_), &error_))                     \
      g_error ("%s", error_->message);                                        \
    g_clear_object (&result_);                                                \
  } G_STMT_END

/* ------------------------------------------------------------------ */
/* Cases                                                                */

static void
test_permute (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);

  for (guint iter = 0; iter < 96; iter++)
    {
      AtomrDtype dtype = dtypes[iter % G_N_ELEMENTS (dtypes)];
      guint n = 1 + (iter / 4) % 6, perm[8];
      gint64 sa[8], sb[8];
      gchar ma[9] = { 0 }, mb[9] = { 0 };
      AtomrTensorUnaryOp op = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_UNARY_SIGMOID + 1);
      gdouble alpha = g_rand_double_range (f->rand, -2, 2);
      Layout la, lb;
      Twin a = { 0 }, b = { 0 };
      g_autofree gchar *modes = NULL;

      random_perm (f, n, perm);
      for (guint d = 0; d < n; d++)
        {
          ma[d] = 'a' + d;
          sa[d] = g_rand_int_range (f->rand, 1, 7);
        }
      for (guint d = 0; d < n; d++)
        {
          mb[d] = ma[perm[d]];
          sb[d] = sa[perm[d]];
        }
      random_layout (f, n, sa, -1, &la);
      random_layout (f, n, sb, -1, &lb);
      twin_init (f, &a, dtype, &la, -2, 2);
      twin_init (f, &b, dtype, &lb, -2, 2);
      modes = g_strdup_printf ("%s->%s (op %d)", ma, mb, op);
      *strchr (modes, ' ') = '\0';
      RUN (f->gpu, atomr_tensor_actor_permute_async (f->gpu, modes, alpha, op, a.gpu, b.gpu, NULL, store_result, &result_),
           atomr_tensor_actor_permute_finish);
      RUN (f->cpu, atomr_tensor_actor_permute_async (f->cpu, modes, alpha, op, a.cpu, b.cpu, NULL, store_result, &result_),
           atomr_tensor_actor_permute_finish);
      twin_compare (&b, modes);
      twin_clear (&a);
      twin_clear (&b);
    }
}

/* Longer modes: the tiled transpose (A dense in another loop than the
 * output's innermost, both ≥ 8 long), partial tiles, reversed and padded
 * layouts. */
static void
test_permute_tiled (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);

  for (guint iter = 0; iter < 48; iter++)
    {
      AtomrDtype dtype = dtypes[iter % G_N_ELEMENTS (dtypes)];
      guint n = 2 + (iter / 4) % 3, perm[8];
      gint64 sa[8], sb[8];
      gchar ma[9] = { 0 }, mb[9] = { 0 };
      gdouble alpha = g_rand_double_range (f->rand, -2, 2);
      AtomrTensorUnaryOp op = iter % 3 ? ATOMR_TENSOR_UNARY_IDENTITY : ATOMR_TENSOR_UNARY_NEG;
      Layout la, lb;
      Twin a = { 0 }, b = { 0 };
      g_autofree gchar *modes = NULL;

      random_perm (f, n, perm);
      for (guint d = 0; d < n; d++)
        {
          ma[d] = 'a' + d;
          sa[d] = g_rand_int_range (f->rand, n == 2 ? 8 : 5, n == 2 ? 100 : 40);
        }
      for (guint d = 0; d < n; d++)
        {
          mb[d] = ma[perm[d]];
          sb[d] = sa[perm[d]];
        }
      if (iter % 2)
        {
          random_layout (f, n, sa, -1, &la);
          random_layout (f, n, sb, -1, &lb);
        }
      else
        {
          contiguous_layout (n, sa, &la);
          contiguous_layout (n, sb, &lb);
        }
      twin_init (f, &a, dtype, &la, -2, 2);
      twin_init (f, &b, dtype, &lb, -2, 2);
      modes = g_strdup_printf ("%s->%s", ma, mb);
      RUN (f->gpu, atomr_tensor_actor_permute_async (f->gpu, modes, alpha, op, a.gpu, b.gpu, NULL, store_result, &result_),
           atomr_tensor_actor_permute_finish);
      RUN (f->cpu, atomr_tensor_actor_permute_async (f->cpu, modes, alpha, op, a.cpu, b.cpu, NULL, store_result, &result_),
           atomr_tensor_actor_permute_finish);
      twin_compare (&b, modes);
      twin_clear (&a);
      twin_clear (&b);
    }
}

static void
test_binary (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);

  for (guint iter = 0; iter < 96; iter++)
    {
      AtomrDtype dtype = dtypes[iter % G_N_ELEMENTS (dtypes)];
      guint n = 1 + (iter / 4) % 6, perm[8], na = 0, nb = 0;
      gint64 sd[8], sa[8], sb[8], ext[256] = { 0 };
      gchar md[9] = { 0 }, ma[9] = { 0 }, mb[9] = { 0 };
      AtomrTensorBinaryOp op_ab = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_BINARY_MIN + 1);
      AtomrTensorUnaryOp op_a = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_UNARY_SIGMOID + 1);
      AtomrTensorUnaryOp op_b = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_UNARY_SIGMOID + 1);
      gdouble alpha = g_rand_double_range (f->rand, -2, 2), beta = g_rand_double_range (f->rand, -2, 2);
      Layout la, lb, ld;
      Twin a = { 0 }, b = { 0 }, d = { 0 };
      g_autofree gchar *modes = NULL;

      for (guint k = 0; k < n; k++)
        {
          md[k] = 'A' + k * 2;
          ext[(guchar) md[k]] = g_rand_int_range (f->rand, 1, 7);
          sd[k] = ext[(guchar) md[k]];
        }
      random_perm (f, n, perm);
      for (guint k = 0; k < n; k++)
        {
          gchar m = md[perm[k]];
          guint where = g_rand_int_range (f->rand, 0, 3);
          if (where != 1)
            {
              ma[na] = m;
              sa[na++] = g_rand_int_range (f->rand, 0, 5) == 0 ? 1 : ext[(guchar) m];
            }
          if (where != 0)
            {
              mb[nb] = m;
              sb[nb++] = ext[(guchar) m];
            }
        }
      if (na == 0 || nb == 0)
        continue;
      random_layout (f, na, sa, -1, &la);
      random_layout (f, nb, sb, g_rand_int_range (f->rand, 0, 3) == 0 ? (gint) g_rand_int_range (f->rand, 0, nb) : -1, &lb);
      random_layout (f, n, sd, -1, &ld);
      twin_init (f, &a, dtype, &la, -2, 2);
      twin_init (f, &b, dtype, &lb, -2, 2);
      twin_init (f, &d, dtype, &ld, -2, 2);
      modes = g_strdup_printf ("%s,%s->%s", ma, mb, md);
      RUN (f->gpu, atomr_tensor_actor_elementwise_binary_async (f->gpu, modes, alpha, op_a, a.gpu, beta, op_b, b.gpu,
                                                                op_ab, d.gpu, NULL, store_result, &result_),
           atomr_tensor_actor_elementwise_binary_finish);
      RUN (f->cpu, atomr_tensor_actor_elementwise_binary_async (f->cpu, modes, alpha, op_a, a.cpu, beta, op_b, b.cpu,
                                                                op_ab, d.cpu, NULL, store_result, &result_),
           atomr_tensor_actor_elementwise_binary_finish);
      twin_compare (&d, modes);
      twin_clear (&a);
      twin_clear (&b);
      twin_clear (&d);
    }
}

static void
test_trinary (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);

  for (guint iter = 0; iter < 64; iter++)
    {
      AtomrDtype dtype = dtypes[iter % G_N_ELEMENTS (dtypes)];
      guint n = 1 + (iter / 4) % 6, perm[8], nin[3] = { 0, 0, 0 };
      gint64 sd[8], shapes[3][8], ext[256] = { 0 };
      gchar md[9] = { 0 }, mi[3][9] = { { 0 } };
      AtomrTensorBinaryOp op_ab = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_BINARY_MIN + 1);
      AtomrTensorBinaryOp op_abc = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_BINARY_MIN + 1);
      AtomrTensorUnaryOp ops[3];
      gdouble scale[3];
      Layout l[3], ld;
      Twin in[3] = { { 0 } }, d = { 0 };
      g_autofree gchar *modes = NULL;

      for (guint q = 0; q < 3; q++)
        {
          ops[q] = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_UNARY_SIGMOID + 1);
          scale[q] = g_rand_double_range (f->rand, -2, 2);
        }
      for (guint k = 0; k < n; k++)
        {
          md[k] = 'a' + k;
          ext[(guchar) md[k]] = g_rand_int_range (f->rand, 1, 7);
          sd[k] = ext[(guchar) md[k]];
        }
      random_perm (f, n, perm);
      for (guint k = 0; k < n; k++)
        {
          gchar m = md[perm[k]];
          guint mask = g_rand_int_range (f->rand, 1, 8);
          for (guint q = 0; q < 3; q++)
            if (mask & (1u << q))
              {
                mi[q][nin[q]] = m;
                shapes[q][nin[q]++] = g_rand_int_range (f->rand, 0, 6) == 0 ? 1 : ext[(guchar) m];
              }
        }
      if (nin[0] == 0 || nin[1] == 0 || nin[2] == 0)
        continue;
      for (guint q = 0; q < 3; q++)
        {
          random_layout (f, nin[q], shapes[q], q == 1 && iter % 3 == 0 ? 0 : -1, &l[q]);
          twin_init (f, &in[q], dtype, &l[q], -2, 2);
        }
      random_layout (f, n, sd, -1, &ld);
      twin_init (f, &d, dtype, &ld, -2, 2);
      modes = g_strdup_printf ("%s,%s,%s->%s", mi[0], mi[1], mi[2], md);
      RUN (f->gpu, atomr_tensor_actor_elementwise_trinary_async (f->gpu, modes, scale[0], ops[0], in[0].gpu,
                                                                 scale[1], ops[1], in[1].gpu, scale[2], ops[2],
                                                                 in[2].gpu, op_ab, op_abc, d.gpu,
                                                                 NULL, store_result, &result_),
           atomr_tensor_actor_elementwise_trinary_finish);
      RUN (f->cpu, atomr_tensor_actor_elementwise_trinary_async (f->cpu, modes, scale[0], ops[0], in[0].cpu,
                                                                 scale[1], ops[1], in[1].cpu, scale[2], ops[2],
                                                                 in[2].cpu, op_ab, op_abc, d.cpu,
                                                                 NULL, store_result, &result_),
           atomr_tensor_actor_elementwise_trinary_finish);
      twin_compare (&d, modes);
      for (guint q = 0; q < 3; q++)
        twin_clear (&in[q]);
      twin_clear (&d);
    }
}

static void
run_contract (Fixture *f, AtomrDtype dtype, const gchar *modes, gdouble alpha, gdouble beta,
              const Layout *la, const Layout *lb, const Layout *ld)
{
  Twin a = { 0 }, b = { 0 }, d = { 0 };
  g_autofree gchar *what = g_strdup_printf ("contract %s beta %g", modes, beta);

  twin_init (f, &a, dtype, la, -1, 1);
  twin_init (f, &b, dtype, lb, -1, 1);
  twin_init (f, &d, dtype, ld, -1, 1);
  RUN (f->gpu, atomr_tensor_actor_contract_async (f->gpu, modes, alpha, a.gpu, b.gpu, beta, d.gpu, NULL,
                                                  store_result, &result_),
       atomr_tensor_actor_contract_finish);
  RUN (f->cpu, atomr_tensor_actor_contract_async (f->cpu, modes, alpha, a.cpu, b.cpu, beta, d.cpu, NULL,
                                                  store_result, &result_),
       atomr_tensor_actor_contract_finish);
  /* at most min (|A|, |B|) terms, each at most 1 in magnitude */
  twin_compare_scaled (&d, what, MAX (1.0, sqrt (MIN (layout_elements (la), layout_elements (lb)))));
  twin_clear (&a);
  twin_clear (&b);
  twin_clear (&d);
}

/* Contractions on the reduction kernels: random modes and layouts, then
 * a GEMM and an attention-score shape. */
static void
test_contract (Fixture *f, gconstpointer data)
{
  const gint64 mk[] = { 128, 200 }, kn[] = { 200, 96 }, mn[] = { 128, 96 };
  const gint64 q[] = { 2, 3, 40, 32 }, k[] = { 2, 3, 56, 32 }, s4[] = { 2, 3, 40, 56 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint iter = 0; iter < 64; iter++)
    {
      AtomrDtype dtype = dtypes[iter % G_N_ELEMENTS (dtypes)];
      guint n = 2 + (iter / 4) % 5, perm[8], nd, na = 0, nb = 0;
      gint64 ext[256] = { 0 }, sa[8], sb[8], sd[8];
      gchar all[9] = { 0 }, md[9] = { 0 }, ma[9] = { 0 }, mb[9] = { 0 };
      Layout la, lb, ld;
      g_autofree gchar *modes = NULL;

      for (guint j = 0; j < n; j++)
        {
          all[j] = 'i' + j;
          ext[(guchar) all[j]] = g_rand_int_range (f->rand, 1, 7);
        }
      random_perm (f, n, perm);
      nd = g_rand_int_range (f->rand, 0, n);
      for (guint j = 0; j < n; j++)
        {
          gchar m = all[perm[j]];
          guint where = g_rand_int_range (f->rand, 0, 4);
          if (j < nd)
            {
              md[j] = m;
              sd[j] = ext[(guchar) m];
            }
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
      random_layout (f, na, sa, -1, &la);
      random_layout (f, nb, sb, -1, &lb);
      random_layout (f, nd, sd, -1, &ld);
      modes = g_strdup_printf ("%s,%s->%s", ma, mb, md);
      run_contract (f, dtype, modes, 1.25, iter % 3 ? 0.0 : 0.5, &la, &lb, &ld);
    }
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      Layout la, lb, ld;

      contiguous_layout (2, mk, &la);
      contiguous_layout (2, kn, &lb);
      contiguous_layout (2, mn, &ld);
      run_contract (f, dtypes[d], "mk,kn->mn", 1.0, 0.0, &la, &lb, &ld);
      contiguous_layout (4, q, &la);
      contiguous_layout (4, k, &lb);
      contiguous_layout (4, s4, &ld);
      run_contract (f, dtypes[d], "bhqd,bhkd->bhqk", 0.125, 1.0, &la, &lb, &ld);
    }
}

static void
record_detail (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  gchar **detail = user_data;

  g_free (*detail);
  *detail = g_strdup (atomr_launch_info_get_detail (info));
}

/* One contraction on both actors; returns the GPU's detail (the path
 * that ran).  @rtol 0: the dtype's. */
static gchar *
run_contract_path (Fixture *f, AtomrDtype dtype, const gchar *modes, gdouble alpha, gdouble beta,
                   const Layout *la, const Layout *lb, const Layout *ld, gdouble rtol)
{
  Twin a = { 0 }, b = { 0 }, d = { 0 };
  g_autofree gchar *what = g_strdup_printf ("contract %s beta %g", modes, beta);
  gchar *detail = NULL;
  gulong id;

  twin_init (f, &a, dtype, la, -1, 1);
  twin_init (f, &b, dtype, lb, -1, 1);
  twin_init (f, &d, dtype, ld, -1, 1);
  id = g_signal_connect (f->gpu, "after-enqueue", G_CALLBACK (record_detail), &detail);
  RUN (f->gpu, atomr_tensor_actor_contract_async (f->gpu, modes, alpha, a.gpu, b.gpu, beta, d.gpu, NULL,
                                                  store_result, &result_),
       atomr_tensor_actor_contract_finish);
  g_signal_handler_disconnect (f->gpu, id);
  RUN (f->cpu, atomr_tensor_actor_contract_async (f->cpu, modes, alpha, a.cpu, b.cpu, beta, d.cpu, NULL,
                                                  store_result, &result_),
       atomr_tensor_actor_contract_finish);
  twin_compare_full (&d, what, MAX (1.0, sqrt (MIN (layout_elements (la), layout_elements (lb)))),
                     rtol > 0 ? rtol : rtol_of (dtype));
  g_test_message ("%s (%s): %s", modes, atomr_dtype_get_name (dtype), detail);
  twin_clear (&a);
  twin_clear (&b);
  twin_clear (&d);
  return detail;
}

static void
strided_layout (guint n, const gint64 *shape, const gint64 *strides, gint64 offset, Layout *l)
{
  gint64 last = 0;

  memset (l, 0, sizeof *l);
  l->n = n;
  memcpy (l->shape, shape, n * sizeof (gint64));
  memcpy (l->strides, strides, n * sizeof (gint64));
  l->offset = offset;
  /* the highest element (negative strides count down from @offset) */
  for (guint d = 0; d < n; d++)
    last += MAX ((shape[d] - 1) * strides[d], 0);
  l->size = (guint64) (offset + last + 1);
}

/* GEMM-shaped contractions run on cuBLASLt (the detail says so) and agree
 * with the CPU: row-major, column-major with a padded transposed input,
 * batched attention scores at an odd element offset (alignment below
 * 16 bytes), the benchmark's 4-D folding, every dtype; then TF32 on
 * request, and layouts that do not fold or run backwards, which are
 * packed into scratch operands first. */
static void
test_contract_gemm (Fixture *f, gconstpointer data)
{
  const gint64 mk[] = { 96, 130 }, kn[] = { 130, 72 }, mn[] = { 96, 72 };
  const gint64 cm_a_s[] = { 131, 1 }, cm_b_s[] = { 1, 140 }, cm_d_s[] = { 1, 100 };
  const gint64 q[] = { 2, 3, 40, 32 }, k[] = { 2, 3, 56, 32 }, s4[] = { 2, 3, 40, 56 };
  const gint64 a4[] = { 6, 5, 8, 7 }, b4[] = { 8, 7, 9, 4 }, d4[] = { 6, 5, 9, 4 };
  const gint64 u_a[] = { 4, 6, 33 }, u_a_s[] = { 400, 34, 1 }, u_b[] = { 33, 20 }, u_d[] = { 4, 6, 20 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      AtomrDtype dtype = dtypes[i];
      Layout la, lb, ld;
      g_autofree gchar *d1 = NULL, *d2 = NULL, *d3 = NULL, *d4s = NULL;

      contiguous_layout (2, mk, &la);
      contiguous_layout (2, kn, &lb);
      contiguous_layout (2, mn, &ld);
      d1 = run_contract_path (f, dtype, "mk,kn->mn", 1.5, 0.0, &la, &lb, &ld, 0);
      g_assert_true (g_str_has_prefix (d1, "cublaslt gemm m=72 n=96 k=130 batch=1 op=NN swapped"));

      strided_layout (2, mk, cm_a_s, 0, &la);
      strided_layout (2, kn, cm_b_s, 0, &lb);
      strided_layout (2, mn, cm_d_s, 0, &ld);
      d2 = run_contract_path (f, dtype, "mk,kn->mn", 1.0, 0.5, &la, &lb, &ld, 0);
      g_assert_true (g_str_has_prefix (d2, "cublaslt gemm m=96 n=72 k=130 batch=1 op=TN"));

      contiguous_layout (4, q, &la);
      contiguous_layout (4, k, &lb);
      contiguous_layout (4, s4, &ld);
      la.offset = lb.offset = ld.offset = 1;
      la.size++;
      lb.size++;
      ld.size++;
      d3 = run_contract_path (f, dtype, "bhqd,bhkd->bhqk", 0.125, 1.0, &la, &lb, &ld, 0);
      g_assert_true (g_str_has_prefix (d3, "cublaslt gemm m=56 n=40 k=32 batch=6 op=TN swapped"));

      contiguous_layout (4, a4, &la);
      contiguous_layout (4, b4, &lb);
      contiguous_layout (4, d4, &ld);
      d4s = run_contract_path (f, dtype, "abcd,cdef->abef", 1.0, 0.0, &la, &lb, &ld, 0);
      g_assert_true (g_str_has_prefix (d4s, "cublaslt gemm m=36 n=30 k=56 batch=1 op=NN swapped"));
    }

  {
    Layout la, lb, ld;
    g_autofree gchar *d1 = NULL, *d2 = NULL;

    atomr_tensor_actor_set_compute_type (f->gpu, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
    contiguous_layout (2, mk, &la);
    contiguous_layout (2, kn, &lb);
    contiguous_layout (2, mn, &ld);
    /* TF32 products keep 10 mantissa bits */
    d1 = run_contract_path (f, ATOMR_DTYPE_F32, "mk,kn->mn", 1.0, 0.0, &la, &lb, &ld, 4e-3);
    g_assert_true (g_str_has_suffix (d1, " tf32"));
    atomr_tensor_actor_set_compute_type (f->gpu, ATOMR_BLAS_COMPUTE_DEFAULT);

    /* A's a and b modes do not fold: A is packed, then one GEMM */
    strided_layout (3, u_a, u_a_s, 0, &la);
    contiguous_layout (2, u_b, &lb);
    contiguous_layout (3, u_d, &ld);
    d2 = run_contract_path (f, ATOMR_DTYPE_F32, "abk,kn->abn", 1.0, 0.0, &la, &lb, &ld, 0);
    g_assert_cmpstr (d2, ==, "cublaslt gemm m=20 n=24 k=33 batch=1 op=NN swapped packed a");
  }
  /* B runs backwards along k (negative stride): B is packed; every dtype */
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      const gint64 rev_s[] = { -72, 1 };
      Layout la, lb, ld;
      g_autofree gchar *d3 = NULL;

      contiguous_layout (2, mk, &la);
      strided_layout (2, kn, rev_s, 129 * 72, &lb);
      contiguous_layout (2, mn, &ld);
      d3 = run_contract_path (f, dtypes[i], "mk,kn->mn", 1.0, 0.25, &la, &lb, &ld, 0);
      g_assert_cmpstr (d3, ==, "cublaslt gemm m=72 n=96 k=130 batch=1 op=NN swapped packed b");
    }
}

static gchar *
run_permute_detail (Fixture *f, AtomrDtype dtype, const gchar *modes, gdouble alpha, AtomrTensorUnaryOp op,
                    const Layout *la, const Layout *lb)
{
  Twin a = { 0 }, b = { 0 };
  g_autofree gchar *what = g_strdup_printf ("%s %s", modes, atomr_dtype_get_name (dtype));
  gchar *detail = NULL;
  gulong id;

  twin_init (f, &a, dtype, la, -2, 2);
  twin_init (f, &b, dtype, lb, -2, 2);
  id = g_signal_connect (f->gpu, "after-enqueue", G_CALLBACK (record_detail), &detail);
  RUN (f->gpu, atomr_tensor_actor_permute_async (f->gpu, modes, alpha, op, a.gpu, b.gpu, NULL, store_result, &result_),
       atomr_tensor_actor_permute_finish);
  g_signal_handler_disconnect (f->gpu, id);
  RUN (f->cpu, atomr_tensor_actor_permute_async (f->cpu, modes, alpha, op, a.cpu, b.cpu, NULL, store_result, &result_),
       atomr_tensor_actor_permute_finish);
  twin_compare (&b, what);
  g_test_message ("%s: %s", what, detail);
  twin_clear (&a);
  twin_clear (&b);
  return detail;
}

/* The paired 64 × 64 transpose (even extents, dense rows, pair-aligned):
 * the three 3-D permutations of the benchmark with partial tiles, a
 * padded 2-D transpose, every dtype; an odd offset and an odd extent take
 * the 32 × 32 kernel. */
static void
test_permute_pairs (Fixture *f, gconstpointer data)
{
  const gint64 s3[] = { 66, 70, 130 };
  const struct { const gchar *modes; gint64 out[3]; } perms[] = {
    { "abc->cba", { 130, 70, 66 } },
    { "abc->acb", { 66, 130, 70 } },
    { "abc->cab", { 130, 66, 70 } },
  };
  const gint64 s2[] = { 100, 130 }, s2s[] = { 132, 1 }, s2t[] = { 130, 100 };
  const gint64 odd[] = { 65, 70, 130 }, odd_t[] = { 130, 70, 65 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (perms); i++)
        {
          Layout la, lb;
          g_autofree gchar *detail = NULL;

          contiguous_layout (3, s3, &la);
          contiguous_layout (3, perms[i].out, &lb);
          detail = run_permute_detail (f, dtypes[d], perms[i].modes, i == 1 ? -1.5 : 1.0,
                                       i == 2 ? ATOMR_TENSOR_UNARY_NEG : ATOMR_TENSOR_UNARY_IDENTITY, &la, &lb);
          g_assert_cmpstr (detail, ==, "transpose 64x64 pairs");
        }
      {
        Layout la, lb;
        g_autofree gchar *pairs = NULL, *shifted = NULL, *oddx = NULL;

        memset (&la, 0, sizeof la);
        la.n = 2;
        memcpy (la.shape, s2, sizeof s2);
        memcpy (la.strides, s2s, sizeof s2s);
        la.size = 100 * 132;
        contiguous_layout (2, s2t, &lb);
        pairs = run_permute_detail (f, dtypes[d], "ab->ba", 2.0, ATOMR_TENSOR_UNARY_IDENTITY, &la, &lb);
        g_assert_cmpstr (pairs, ==, "transpose 64x64 pairs");

        la.offset = 1;
        la.size++;
        shifted = run_permute_detail (f, dtypes[d], "ab->ba", 2.0, ATOMR_TENSOR_UNARY_IDENTITY, &la, &lb);
        g_assert_cmpstr (shifted, ==, "transpose");

        contiguous_layout (3, odd, &la);
        contiguous_layout (3, odd_t, &lb);
        oddx = run_permute_detail (f, dtypes[d], "abc->cba", 1.0, ATOMR_TENSOR_UNARY_IDENTITY, &la, &lb);
        g_assert_cmpstr (oddx, ==, "transpose");
      }
    }
}

static void
run_reduce (Fixture *f, AtomrDtype dtype, const gchar *modes, AtomrTensorReduceOp op,
            gdouble alpha, gdouble beta, const Layout *la, const Layout *lc)
{
  gboolean prod = op == ATOMR_TENSOR_REDUCE_PROD;
  Twin a = { 0 }, c = { 0 };
  g_autofree gchar *what = g_strdup_printf ("%s op %d beta %g", modes, op, beta);

  /* products stay in range: factors near 1 */
  twin_init (f, &a, dtype, la, prod ? 0.9 : -2, prod ? 1.1 : 2);
  twin_init (f, &c, dtype, lc, -2, 2);
  RUN (f->gpu, atomr_tensor_actor_reduce_async (f->gpu, modes, op, alpha, a.gpu, beta, c.gpu, NULL, store_result, &result_),
       atomr_tensor_actor_reduce_finish);
  RUN (f->cpu, atomr_tensor_actor_reduce_async (f->cpu, modes, op, alpha, a.cpu, beta, c.cpu, NULL, store_result, &result_),
       atomr_tensor_actor_reduce_finish);
  /* at most |A| terms, each at most 2 (4 for norm2) in magnitude */
  twin_compare_scaled (&c, what, MAX (1.0, 4 * sqrt (layout_elements (la))));
  twin_clear (&a);
  twin_clear (&c);
}

static void
test_reduce (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);

  for (guint iter = 0; iter < 128; iter++)
    {
      AtomrDtype dtype = dtypes[iter % G_N_ELEMENTS (dtypes)];
      guint n = 1 + (iter / 4) % 6, perm[8], nc;
      gint64 sa[8], sc[8];
      gchar ma[9] = { 0 }, mc[9] = { 0 };
      AtomrTensorReduceOp op = g_rand_int_range (f->rand, 0, ATOMR_TENSOR_REDUCE_NORM_INF + 1);
      gdouble beta = g_rand_boolean (f->rand) ? 0.0 : 0.5;
      Layout la, lc;
      g_autofree gchar *modes = NULL;

      for (guint k = 0; k < n; k++)
        {
          ma[k] = 'p' + k;
          sa[k] = g_rand_int_range (f->rand, 1, 6);
        }
      random_perm (f, n, perm);
      nc = g_rand_int_range (f->rand, 0, n);
      for (guint k = 0; k < nc; k++)
        {
          mc[k] = ma[perm[k]];
          sc[k] = sa[perm[k]];
        }
      random_layout (f, n, sa, -1, &la);
      random_layout (f, nc, sc, -1, &lc);
      modes = g_strdup_printf ("%s->%s", ma, mc);
      run_reduce (f, dtype, modes, op, 1.5, beta, &la, &lc);
    }
}

/* run_reduce(), returning the GPU's detail (the kernel that ran). */
static gchar *
run_reduce_detail (Fixture *f, AtomrDtype dtype, const gchar *modes, AtomrTensorReduceOp op,
                   gdouble beta, const Layout *la, const Layout *lc)
{
  gchar *detail = NULL;
  gulong id = g_signal_connect (f->gpu, "after-enqueue", G_CALLBACK (record_detail), &detail);

  run_reduce (f, dtype, modes, op, 1.5, beta, la, lc);
  g_signal_handler_disconnect (f->gpu, id);
  g_test_message ("%s %s: %s", modes, atomr_dtype_get_name (dtype), detail);
  return detail;
}

/* The detail of a 16-byte column reduction in @variant, with or without
 * the reduced index cut into chunks (the actor's names). */
static const gchar *
cols_vec_detail (gchar variant, gboolean chunked)
{
  switch (variant)
    {
    case 'a': return chunked ? "cols vec16 split-k (a)" : "cols vec16 deep (a)";
    case 'b': return chunked ? "cols vec16 wide two-pass (b)" : "cols vec16 (b)";
    default: return chunked ? "cols vec16 two-pass (c)" : "cols vec16 (c)";
    }
}

/* The 16-byte kernels against the CPU path, every real dtype (vectors of
 * 16 bytes: 8 halves, 4 f32, 2 f64): the 64 × 64 vector transpose with
 * partial tiles and a padded 2-D view (f64 takes the paired one), rows
 * reductions a warp and a block per row with an element tail (padded
 * rows of odd length), two output loops that do not fold, column
 * reductions in one and two passes with a partial last block and two
 * output loops; views shifted off 16-byte alignment take the older
 * kernels, with the same results. */
static void
test_vec16 (Fixture *f, gconstpointer data)
{
  const gint64 s3[] = { 72, 136, 80 };
  const struct { const gchar *modes; gint64 out[3]; } perms[] = {
    { "abc->cba", { 80, 136, 72 } },
    { "abc->acb", { 72, 80, 136 } },
    { "abc->cab", { 80, 72, 136 } },
  };
  const gint64 s2[] = { 96, 128 }, s2s[] = { 136, 1 }, s2t[] = { 128, 96 };
  const gint64 s3s[] = { 136 * 80, 80, 1 };
  const struct {
    const gchar *modes;
    guint n, nc;
    gint64 shape[3], strides[3], out[2];
    const gchar *detail, *detail_f64;   /* NULL: as detail */
  } reds[] = {
    { "ab->a", 2, 1, { 300, 1003 }, { 1008, 1 }, { 300 }, "rows vec16", NULL },
    { "ab->a", 2, 1, { 70, 5003 }, { 5008, 1 }, { 70 }, "rows block vec16", NULL },
    { "abc->ab", 3, 2, { 5, 7, 1000 }, { 8 * 1008, 1008, 1 }, { 5, 7 }, "rows vec16", NULL },
    /* "cols": as cols_vec_detail() for the actor's variant */
    { "ab->b", 2, 1, { 100, 4096 }, { 4096, 1 }, { 4096 }, "cols", NULL },
    { "ab->b", 2, 1, { 2000, 520 }, { 520, 1 }, { 520 }, "cols chunked", NULL },
    { "abc->ac", 3, 2, { 6, 50, 40 }, { 50 * 40, 40, 1 }, { 6, 40 }, "cols", NULL },
  };

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      AtomrDtype dt = dtypes[d];
      gboolean wide = dt == ATOMR_DTYPE_F64;

      for (guint i = 0; i < G_N_ELEMENTS (perms); i++)
        {
          Layout la, lb;
          g_autofree gchar *detail = NULL, *shifted = NULL;

          contiguous_layout (3, s3, &la);
          contiguous_layout (3, perms[i].out, &lb);
          detail = run_permute_detail (f, dt, perms[i].modes, i == 1 ? -1.5 : 1.0,
                                       i == 2 ? ATOMR_TENSOR_UNARY_NEG : ATOMR_TENSOR_UNARY_IDENTITY, &la, &lb);
          g_assert_cmpstr (detail, ==, wide ? "transpose 64x64 pairs" : "transpose 64x64 vec16");
          /* 2 elements off: pair-aligned, not 16-byte aligned (f64: both) */
          strided_layout (3, s3, s3s, 2, &la);
          shifted = run_permute_detail (f, dt, perms[i].modes, 1.0, ATOMR_TENSOR_UNARY_IDENTITY, &la, &lb);
          g_assert_cmpstr (shifted, ==, "transpose 64x64 pairs");
        }
      {
        Layout la, lb;
        g_autofree gchar *padded = NULL;

        strided_layout (2, s2, s2s, 0, &la);
        contiguous_layout (2, s2t, &lb);
        padded = run_permute_detail (f, dt, "ab->ba", 2.0, ATOMR_TENSOR_UNARY_ABS, &la, &lb);
        g_assert_cmpstr (padded, ==, wide ? "transpose 64x64 pairs" : "transpose 64x64 vec16");
      }
      for (guint i = 0; i < G_N_ELEMENTS (reds); i++)
        {
          AtomrTensorReduceOp op = (i + d) % (ATOMR_TENSOR_REDUCE_NORM_INF + 1);
          Layout la, lc;
          g_autofree gchar *detail = NULL, *shifted = NULL;

          strided_layout (reds[i].n, reds[i].shape, reds[i].strides, 0, &la);
          contiguous_layout (reds[i].nc, reds[i].out, &lc);
          detail = run_reduce_detail (f, dt, reds[i].modes, op, i % 2 ? 0.5 : 0.0, &la, &lc);
          if (g_str_has_prefix (reds[i].detail, "cols"))
            g_assert_cmpstr (detail, ==, cols_vec_detail (atomr_tensor_actor_get_cols_variant (f->gpu),
                                                          strstr (reds[i].detail, "chunked") != NULL));
          else
            g_assert_cmpstr (detail, ==, wide && reds[i].detail_f64 ? reds[i].detail_f64 : reds[i].detail);
          /* one element off 16-byte alignment: the scalar kernels */
          strided_layout (reds[i].n, reds[i].shape, reds[i].strides, 1, &la);
          shifted = run_reduce_detail (f, dt, reds[i].modes, op, 0.0, &la, &lc);
          g_assert_null (strstr (shifted, "vec16"));
        }
    }
}

/* @modes (sum) on the GPU twice over the same A: the two results must be
 * the same bits (the column kernels combine chunks in a fixed order,
 * whichever block finishes last). */
static void
assert_deterministic (Fixture *f, AtomrDtype dtype, const gchar *modes, const Layout *la, const Layout *lc)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) first = NULL, second = NULL;
  Twin a = { 0 }, c = { 0 };

  twin_init (f, &a, dtype, la, -2, 2);
  twin_init (f, &c, dtype, lc, -2, 2);
  RUN (f->gpu, atomr_tensor_actor_reduce_async (f->gpu, modes, ATOMR_TENSOR_REDUCE_SUM, 1.0, a.gpu, 0.0, c.gpu,
                                                NULL, store_result, &result_),
       atomr_tensor_actor_reduce_finish);
  first = atomr_buffer_download_sync (atomr_tensor_get_buffer (c.gpu), NULL, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (c.gpu), 0.0, NULL, &error));
  g_assert_no_error (error);
  RUN (f->gpu, atomr_tensor_actor_reduce_async (f->gpu, modes, ATOMR_TENSOR_REDUCE_SUM, 1.0, a.gpu, 0.0, c.gpu,
                                                NULL, store_result, &result_),
       atomr_tensor_actor_reduce_finish);
  second = atomr_buffer_download_sync (atomr_tensor_get_buffer (c.gpu), NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (first, second));
  twin_clear (&a);
  twin_clear (&c);
}

/* Column reductions (a leading mode reduced, the output dense in A) in
 * each kernel variant (a: one launch, the last block of a column combines
 * the chunks; b: wide first pass + second pass; c: 32-vector first pass
 * + second pass) against the CPU path, every real dtype: tall shapes cut
 * into chunks with a partial last block of outputs, one row, one column,
 * padded rows at a 16-byte aligned offset and at one element off (scalar
 * kernels), two output loops around the reduced one, every operator and
 * β; and the same bits on a second run. */
static void
test_cols_variants (Fixture *f, gconstpointer data)
{
  const struct {
    const gchar *modes;
    guint n, nc;
    gint64 shape[3], strides[3], offset, out[2];
    /* 1: 16-byte column kernels (all dtypes), 0: scalar ones, -1: any
     * (one column plans as a full reduction: the rows kernels); chunked
     * in every variant */
    gint vec;
    gboolean chunked;
  } cases[] = {
    { "ab->b", 2, 1, { 2100, 1000 }, { 1000, 1 }, 0, { 1000 }, TRUE, TRUE },
    { "ab->b", 2, 1, { 2500, 264 }, { 272, 1 }, 8, { 264 }, TRUE, TRUE },
    { "ab->b", 2, 1, { 2500, 264 }, { 272, 1 }, 1, { 264 }, FALSE, FALSE },
    { "ab->b", 2, 1, { 1, 512 }, { 512, 1 }, 0, { 512 }, TRUE, FALSE },
    { "ab->b", 2, 1, { 3001, 1 }, { 1, 1 }, 0, { 1 }, -1, FALSE },
    { "abc->ac", 3, 2, { 3, 1100, 96 }, { 1100 * 96, 96, 1 }, 0, { 3, 96 }, TRUE, TRUE },
    { "ab->b", 2, 1, { 777, 24 }, { 24, 1 }, 0, { 24 }, TRUE, TRUE },
  };
  const gchar variants[] = { 'a', 'b', 'c' };

  SKIP_WITHOUT_DEVICE (f);
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      g_assert_true (atomr_tensor_actor_set_cols_variant (f->gpu, variants[v]));
      for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
        for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
          {
            AtomrTensorReduceOp op = (i + d + v) % (ATOMR_TENSOR_REDUCE_NORM_INF + 1);
            Layout la, lc;
            g_autofree gchar *detail = NULL;

            strided_layout (cases[i].n, cases[i].shape, cases[i].strides, cases[i].offset, &la);
            contiguous_layout (cases[i].nc, cases[i].out, &lc);
            g_test_message ("variant %c case %u op %d", variants[v], i, op);
            detail = run_reduce_detail (f, dtypes[d], cases[i].modes, op, i % 2 ? 0.5 : 0.0, &la, &lc);
            if (cases[i].vec > 0)
              {
                /* chunked where every variant cuts: tall enough for all */
                if (cases[i].chunked)
                  g_assert_cmpstr (detail, ==, cols_vec_detail (variants[v], TRUE));
                else
                  g_assert_true (g_str_has_prefix (detail, "cols vec16"));
              }
            else if (cases[i].vec == 0)
              g_assert_null (strstr (detail, "vec16"));
            if (op == ATOMR_TENSOR_REDUCE_SUM || i == 0)
              assert_deterministic (f, dtypes[d], cases[i].modes, &la, &lc);
          }
    }
}

/* Larger shapes: both reduction kernels (rows: the reduced mode is dense;
 * cols: it is not), many blocks, and a 3-D permutation. */
static void
test_large (Fixture *f, gconstpointer data)
{
  const gint64 s2[] = { 1000, 777 }, s1a[] = { 1000 }, s1b[] = { 777 };
  const gint64 s3[] = { 64, 80, 96 }, s3t[] = { 96, 64, 80 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      Layout la, lr, lc, l3, l3t;
      Twin a = { 0 }, b = { 0 };

      contiguous_layout (2, s2, &la);
      contiguous_layout (1, s1a, &lr);
      contiguous_layout (1, s1b, &lc);
      for (gint op = 0; op <= ATOMR_TENSOR_REDUCE_NORM_INF; op++)
        {
          run_reduce (f, dtypes[d], "ab->a", op, 1.0, 0.0, &la, &lr);
          run_reduce (f, dtypes[d], "ab->b", op, 1.0, 0.25, &la, &lc);
        }
      contiguous_layout (3, s3, &l3);
      contiguous_layout (3, s3t, &l3t);
      twin_init (f, &a, dtypes[d], &l3, -2, 2);
      twin_init (f, &b, dtypes[d], &l3t, -2, 2);
      RUN (f->gpu, atomr_tensor_actor_permute_async (f->gpu, "abc->cab", 1.0, 0, a.gpu, b.gpu, NULL, store_result, &result_),
           atomr_tensor_actor_permute_finish);
      RUN (f->cpu, atomr_tensor_actor_permute_async (f->cpu, "abc->cab", 1.0, 0, a.cpu, b.cpu, NULL, store_result, &result_),
           atomr_tensor_actor_permute_finish);
      twin_compare (&b, "abc->cab 64x80x96");
      twin_clear (&a);
      twin_clear (&b);
    }
}

/* c64 and c128 on the GPU against the CPU path: conjugating and plain
 * permutations (paired and 32 × 32 transposes), a broadcast complex
 * product with exp and conj, every orderless reduction (two-pass columns
 * included), a GEMM-shaped contraction on cuBLASLt and one with a packed
 * input. */
static void
test_complex (Fixture *f, gconstpointer data)
{
  static const AtomrDtype cdt[] = { ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };
  static const AtomrTensorReduceOp rops[] = {
    ATOMR_TENSOR_REDUCE_SUM, ATOMR_TENSOR_REDUCE_MEAN, ATOMR_TENSOR_REDUCE_NORM1, ATOMR_TENSOR_REDUCE_NORM2,
    ATOMR_TENSOR_REDUCE_NORM_INF,
  };
  const gint64 s3[] = { 66, 70, 130 }, s3t[] = { 130, 70, 66 };
  const gint64 big[] = { 1000, 777 }, rows[] = { 1000 }, cols[] = { 777 }, small[] = { 6, 5 }, small_r[] = { 6 };
  const gint64 mk[] = { 96, 130 }, kn[] = { 130, 72 }, mn[] = { 96, 72 };
  const gint64 m2[] = { 40, 24 }, v2[] = { 24 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (cdt); d++)
    {
      AtomrDtype dt = cdt[d];
      Layout la, lb, lc;

      /* permutations */
      contiguous_layout (3, s3, &la);
      contiguous_layout (3, s3t, &lb);
      {
        g_autofree gchar *conj = run_permute_detail (f, dt, "abc->cba", 1.5, ATOMR_TENSOR_UNARY_CONJ, &la, &lb);
        g_assert_cmpstr (conj, ==, dt == ATOMR_DTYPE_C64 ? "transpose 64x64 pairs" : "transpose");
      }
      for (guint iter = 0; iter < 16; iter++)
        {
          guint n = 2 + iter % 3, perm[8];
          gint64 sa[8], sb[8];
          gchar ma[9] = { 0 }, mb[9] = { 0 };
          g_autofree gchar *modes = NULL, *detail = NULL;

          random_perm (f, n, perm);
          for (guint k = 0; k < n; k++)
            {
              ma[k] = 'a' + k;
              sa[k] = g_rand_int_range (f->rand, 1, 12);
            }
          for (guint k = 0; k < n; k++)
            {
              mb[k] = ma[perm[k]];
              sb[k] = sa[perm[k]];
            }
          random_layout (f, n, sa, -1, &la);
          random_layout (f, n, sb, -1, &lb);
          modes = g_strdup_printf ("%s->%s", ma, mb);
          detail = run_permute_detail (f, dt, modes, -0.5, iter % 3 == 0 ? ATOMR_TENSOR_UNARY_NEG :
                                       iter % 3 == 1 ? ATOMR_TENSOR_UNARY_CONJ : ATOMR_TENSOR_UNARY_IDENTITY,
                                       &la, &lb);
        }

      /* D = op_ab (1.25 · exp(M), -0.5 · conj(v)) broadcast along rows */
      for (guint k = 0; k < 2; k++)
        {
          AtomrTensorBinaryOp op_ab = k ? ATOMR_TENSOR_BINARY_MUL : ATOMR_TENSOR_BINARY_ADD;
          Twin m = { 0 }, v = { 0 }, out = { 0 };
          Layout lm, lv, lo;

          random_layout (f, 2, m2, -1, &lm);
          contiguous_layout (1, v2, &lv);
          random_layout (f, 2, m2, -1, &lo);
          twin_init (f, &m, dt, &lm, -1, 1);
          twin_init (f, &v, dt, &lv, -1, 1);
          twin_init (f, &out, dt, &lo, -1, 1);
          RUN (f->gpu, atomr_tensor_actor_elementwise_binary_async (f->gpu, "ab,b->ab", 1.25, ATOMR_TENSOR_UNARY_EXP,
                                                                    m.gpu, -0.5, ATOMR_TENSOR_UNARY_CONJ, v.gpu,
                                                                    op_ab, out.gpu, NULL, store_result, &result_),
               atomr_tensor_actor_elementwise_binary_finish);
          RUN (f->cpu, atomr_tensor_actor_elementwise_binary_async (f->cpu, "ab,b->ab", 1.25, ATOMR_TENSOR_UNARY_EXP,
                                                                    m.cpu, -0.5, ATOMR_TENSOR_UNARY_CONJ, v.cpu,
                                                                    op_ab, out.cpu, NULL, store_result, &result_),
               atomr_tensor_actor_elementwise_binary_finish);
          twin_compare_full (&out, k ? "complex mul" : "complex add", 4.0, rtol_of (dt));
          twin_clear (&m);
          twin_clear (&v);
          twin_clear (&out);
        }

      /* reductions over each axis (the columns in two passes), and a product */
      contiguous_layout (2, big, &la);
      contiguous_layout (1, rows, &lb);
      contiguous_layout (1, cols, &lc);
      for (guint k = 0; k < G_N_ELEMENTS (rops); k++)
        {
          run_reduce (f, dt, "ab->a", rops[k], 1.0, 0.0, &la, &lb);
          run_reduce (f, dt, "ab->b", rops[k], 0.5, 0.25, &la, &lc);
        }
      contiguous_layout (2, small, &la);
      contiguous_layout (1, small_r, &lb);
      run_reduce (f, dt, "ab->a", ATOMR_TENSOR_REDUCE_PROD, 1.0, 0.5, &la, &lb);

      /* contractions: cuBLASLt, then a layout for the kernels */
      contiguous_layout (2, mk, &la);
      contiguous_layout (2, kn, &lb);
      contiguous_layout (2, mn, &lc);
      {
        g_autofree gchar *gemm = run_contract_path (f, dt, "mk,kn->mn", 1.5, 0.5, &la, &lb, &lc, 0);
        g_assert_true (g_str_has_prefix (gemm, "cublaslt gemm m=72 n=96 k=130 batch=1 op=NN swapped"));
      }
      {
        const gint64 u_a[] = { 4, 6, 33 }, u_a_s[] = { 400, 34, 1 }, u_b[] = { 33, 20 }, u_d[] = { 4, 6, 20 };
        g_autofree gchar *kern = NULL;

        strided_layout (3, u_a, u_a_s, 0, &la);
        contiguous_layout (2, u_b, &lb);
        contiguous_layout (3, u_d, &lc);
        kern = run_contract_path (f, dt, "abk,kn->abn", 1.0, 0.0, &la, &lb, &lc, 0);
        g_assert_cmpstr (kern, ==, "cublaslt gemm m=20 n=24 k=33 batch=1 op=NN swapped packed a");
      }
    }
}

/* A second request with the same shapes reuses the plan. */
static void
test_plan_reuse (Fixture *f, gconstpointer data)
{
  const gint64 s[] = { 33, 17 }, st[] = { 17, 33 };
  Layout la, lb;
  Twin a = { 0 }, b = { 0 };
  guint64 hits = 0, misses = 0;

  SKIP_WITHOUT_DEVICE (f);
  contiguous_layout (2, s, &la);
  contiguous_layout (2, st, &lb);
  twin_init (f, &a, ATOMR_DTYPE_F32, &la, -2, 2);
  twin_init (f, &b, ATOMR_DTYPE_F32, &lb, -2, 2);
  for (guint i = 0; i < 2; i++)
    RUN (f->gpu, atomr_tensor_actor_permute_async (f->gpu, "ab->ba", 2.0, 0, a.gpu, b.gpu, NULL, store_result, &result_),
         atomr_tensor_actor_permute_finish);
  RUN (f->cpu, atomr_tensor_actor_permute_async (f->cpu, "ab->ba", 2.0, 0, a.cpu, b.cpu, NULL, store_result, &result_),
       atomr_tensor_actor_permute_finish);
  twin_compare (&b, "ab->ba twice");
  atomr_tensor_actor_get_plan_cache_stats (f->gpu, &hits, &misses, NULL, NULL);
  g_assert_cmpuint (misses, ==, 1);
  g_assert_cmpuint (hits, ==, 1);
  twin_clear (&a);
  twin_clear (&b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, func) g_test_add ("/gpu-tensor/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("permute", test_permute);
  ADD ("permute-tiled", test_permute_tiled);
  ADD ("binary", test_binary);
  ADD ("trinary", test_trinary);
  ADD ("contract", test_contract);
  ADD ("contract-gemm", test_contract_gemm);
  ADD ("permute-pairs", test_permute_pairs);
  ADD ("complex", test_complex);
  ADD ("reduce", test_reduce);
  ADD ("large", test_large);
  ADD ("plan-reuse", test_plan_reuse);
  ADD ("vec16", test_vec16);
  ADD ("cols-variants", test_cols_variants);
  return g_test_run ();
}
