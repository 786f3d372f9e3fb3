/* test-gpu-cudnn-attention.c — attention on the cuDNN actor against a CPU
 * reference
 *
 * Random q, k, v, dO in [-1, 1] (rounded to the dtype), stored BHSD or
 * BSHD (batch × seq × heads × dim, viewed as batch × heads × seq × dim),
 * causal or not, with as many or fewer key/value heads than query heads.
 * The reference is computed in double precision from the rounded inputs:
 * o = softmax (scale · q·kᵀ, masked) · v, stats = m + log Σ exp (s − m),
 * and the gradients dv = Pᵀ·dO, dS = P ∘ (dO·vᵀ − rowsum (P ∘ dO·vᵀ)),
 * dq = scale · dS·k, dk = scale · dSᵀ·q (summed over each group of query
 * heads).  Error measure: ‖got − ref‖₂ / ‖ref‖₂; bounds 2e-2 (bf16) and
 * 5e-3 (f16) for o, 1e-3 for the f32 statistics, 4e-2 (bf16) and 1e-2
 * (f16) for the gradients (they go through P and dS rounded to the dtype).
 * Errors are printed with g_test_message.  Skips without a device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>

typedef struct {
  AtomrDevice     *device;
  AtomrCudnnActor *actor;
  GRand           *rand;
} Fixture;

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
  f->actor = atomr_cudnn_actor_new (f->device, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->actor)
    g_assert_finalize_object (f->actor);
  g_clear_object (&f->device);
  g_rand_free (f->rand);
}

#define SKIP_WITHOUT_DEVICE(f) \
  G_STMT_START { if ((f)->device == NULL) { g_test_skip ("no CUDA device"); return; } } G_STMT_END

/* ------------------------------------------------------------------ */
/* Host data                                                            */

static guint16
f32_to_bf16 (gfloat v)
{
  guint32 u;
  memcpy (&u, &v, 4);
  return (guint16) ((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static gfloat
bf16_to_f32 (guint16 h)
{
  guint32 u = (guint32) h << 16;
  gfloat v;
  memcpy (&v, &u, 4);
  return v;
}

static GBytes *
pack (AtomrDtype dtype, const gdouble *d, gsize n)
{
  gsize size = atomr_dtype_get_size (dtype);
  guint8 *out = g_malloc0 (size * n);

  for (gsize i = 0; i < n; i++)
    {
      guint8 *p = out + i * size;
      switch (dtype)
        {
        case ATOMR_DTYPE_F32: { gfloat v = (gfloat) d[i]; memcpy (p, &v, 4); } break;
        case ATOMR_DTYPE_F16: { _Float16 v = (_Float16) d[i]; memcpy (p, &v, 2); } break;
        case ATOMR_DTYPE_BF16: { guint16 v = f32_to_bf16 ((gfloat) d[i]); memcpy (p, &v, 2); } break;
        default: g_assert_not_reached ();
        }
    }
  return g_bytes_new_take (out, size * n);
}

static void
unpack (AtomrDtype dtype, GBytes *bytes, gdouble *d, gsize n)
{
  gsize size = atomr_dtype_get_size (dtype);
  const guint8 *in = g_bytes_get_data (bytes, NULL);

  g_assert_cmpuint (g_bytes_get_size (bytes), >=, n * size);
  for (gsize i = 0; i < n; i++)
    {
      const guint8 *p = in + i * size;
      switch (dtype)
        {
        case ATOMR_DTYPE_F32: { gfloat v; memcpy (&v, p, 4); d[i] = v; } break;
        case ATOMR_DTYPE_F16: { _Float16 v; memcpy (&v, p, 2); d[i] = v; } break;
        case ATOMR_DTYPE_BF16: { guint16 v; memcpy (&v, p, 2); d[i] = bf16_to_f32 (v); } break;
        default: g_assert_not_reached ();
        }
    }
}

/* One operand: device storage, its batch × heads × seq × dim view, and the
 * host copy of the storage. */
typedef struct {
  AtomrBuffer *buffer;
  AtomrTensor *view;
  gdouble     *host;
  gsize        n;
  gint64       shape[4];
  gint64       strides[4];
} Operand;

static void
operand_clear (Operand *o)
{
  g_clear_object (&o->view);
  g_clear_object (&o->buffer);
  g_clear_pointer (&o->host, g_free);
}

static void
operand_init (Fixture *f, Operand *o, AtomrDtype dtype, gint64 b, gint64 h, gint64 s, gint64 d,
              gboolean bshd, gboolean random)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(AtomrTensor) storage = NULL;
  const gint64 bhsd[4] = { b, h, s, d }, stored_bshd[4] = { b, s, h, d };
  const guint perm[4] = { 0, 2, 1, 3 };
  const gint64 *st;

  memset (o, 0, sizeof *o);
  memcpy (o->shape, bhsd, sizeof bhsd);
  o->n = (gsize) (b * h * s * d);
  o->host = g_new0 (gdouble, o->n);
  if (random)
    for (gsize i = 0; i < o->n; i++)
      o->host[i] = g_rand_double_range (f->rand, -1, 1);
  bytes = pack (dtype, o->host, o->n);
  unpack (dtype, bytes, o->host, o->n);
  o->buffer = atomr_buffer_new (f->device, dtype, o->n, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (o->buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  if (bshd)
    {
      storage = atomr_tensor_new (o->buffer, stored_bshd, 4, &error);
      g_assert_no_error (error);
      o->view = atomr_tensor_permute (storage, perm, 4, &error);
    }
  else
    o->view = atomr_tensor_new (o->buffer, bhsd, 4, &error);
  g_assert_no_error (error);
  st = atomr_tensor_get_strides (o->view, NULL);
  memcpy (o->strides, st, sizeof o->strides);
}

static inline gdouble
get (const Operand *o, gint64 i0, gint64 i1, gint64 i2, gint64 i3)
{
  return o->host[i0 * o->strides[0] + i1 * o->strides[1] + i2 * o->strides[2] + i3 * o->strides[3]];
}

/* ‖device contents of @o − @ref‖ / ‖@ref‖, @ref packed b × h × s × d. */
static gdouble
rel_error (Operand *o, const gdouble *ref)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (o->buffer, NULL, &error);
  g_autofree gdouble *got = g_new0 (gdouble, o->n);
  gdouble num = 0, den = 0;
  gsize idx = 0;

  g_assert_no_error (error);
  unpack (atomr_buffer_get_dtype (o->buffer), bytes, got, o->n);
  for (gint64 a = 0; a < o->shape[0]; a++)
    for (gint64 b = 0; b < o->shape[1]; b++)
      for (gint64 c = 0; c < o->shape[2]; c++)
        for (gint64 d = 0; d < o->shape[3]; d++, idx++)
          {
            gdouble g = got[a * o->strides[0] + b * o->strides[1] + c * o->strides[2] + d * o->strides[3]];
            num += (g - ref[idx]) * (g - ref[idx]);
            den += ref[idx] * ref[idx];
          }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static GAsyncResult *
wait (GAsyncResult **res)
{
  while (*res == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *res;
}

#define RUN(call, finish) G_STMT_START {                                     \
    GAsyncResult *res_ = NULL;                                               \
    g_autoptr(GError) err_ = NULL;                                           \
    gboolean ok_;                                                            \
    call;                                                                    \
    ok_ = finish (f->actor, wait (&res_), &err_);                            \
    g_assert_no_error (err_);        /* prints the message */                \
    g_assert_true (ok_);                                                     \
    g_object_unref (res_);                                                   \
  } G_STMT_END

/* ------------------------------------------------------------------ */
/* Reference                                                            */

typedef struct {
  const gchar *name;
  AtomrDtype   dtype;
  gboolean     bshd;
  gboolean     causal;
  gboolean     backward;
  gboolean     mha;       /* through the multi-head entry points */
  gint64       b, hq, hk, sq, skv, d, dv;
} Case;

static const Case cases[] = {
  { "bf16-bhsd-causal", ATOMR_DTYPE_BF16, FALSE, TRUE, TRUE, FALSE, 2, 4, 4, 128, 128, 64, 64 },
  { "f16-bshd", ATOMR_DTYPE_F16, TRUE, FALSE, TRUE, FALSE, 2, 4, 4, 128, 256, 64, 64 },
  { "bf16-gqa-bshd-causal", ATOMR_DTYPE_BF16, TRUE, TRUE, TRUE, FALSE, 1, 8, 2, 256, 256, 128, 128 },
  { "f16-fwd-s96-dv32", ATOMR_DTYPE_F16, FALSE, TRUE, FALSE, FALSE, 2, 2, 2, 96, 96, 64, 32 },
  { "mha-bf16-gqa-causal", ATOMR_DTYPE_BF16, TRUE, TRUE, TRUE, TRUE, 2, 4, 2, 128, 128, 64, 64 },
};

/* P (b × hq × sq × skv), o (b × hq × sq × dv) and stats (b × hq × sq). */
static void
reference_forward (const Case *c, gdouble scale, const Operand *q, const Operand *k, const Operand *v,
                   gdouble *p, gdouble *o, gdouble *stats)
{
  gint64 group = c->hq / c->hk;

  for (gint64 b = 0; b < c->b; b++)
    for (gint64 h = 0; h < c->hq; h++)
      for (gint64 i = 0; i < c->sq; i++)
        {
          gdouble *row = p + ((b * c->hq + h) * c->sq + i) * c->skv;
          gdouble m = -G_MAXDOUBLE, z = 0;

          for (gint64 j = 0; j < c->skv; j++)
            {
              gdouble s = 0;
              if (c->causal && j > i)
                {
                  row[j] = -G_MAXDOUBLE;
                  continue;
                }
              for (gint64 e = 0; e < c->d; e++)
                s += get (q, b, h, i, e) * get (k, b, h / group, j, e);
              row[j] = s * scale;
              m = MAX (m, row[j]);
            }
          for (gint64 j = 0; j < c->skv; j++)
            {
              row[j] = (c->causal && j > i) ? 0 : exp (row[j] - m);
              z += row[j];
            }
          for (gint64 j = 0; j < c->skv; j++)
            row[j] /= z;
          stats[(b * c->hq + h) * c->sq + i] = m + log (z);
          for (gint64 e = 0; e < c->dv; e++)
            {
              gdouble acc = 0;
              for (gint64 j = 0; j < c->skv; j++)
                acc += row[j] * get (v, b, h / group, j, e);
              o[((b * c->hq + h) * c->sq + i) * c->dv + e] = acc;
            }
        }
}

static void
reference_backward (const Case *c, gdouble scale, const Operand *q, const Operand *k, const Operand *v,
                    const Operand *d_o, const gdouble *p, gdouble *dq, gdouble *dk, gdouble *dv)
{
  gint64 group = c->hq / c->hk;
  g_autofree gdouble *ds = g_new0 (gdouble, c->sq * c->skv);

  memset (dq, 0, sizeof (gdouble) * c->b * c->hq * c->sq * c->d);
  memset (dk, 0, sizeof (gdouble) * c->b * c->hk * c->skv * c->d);
  memset (dv, 0, sizeof (gdouble) * c->b * c->hk * c->skv * c->dv);
  for (gint64 b = 0; b < c->b; b++)
    for (gint64 h = 0; h < c->hq; h++)
      {
        const gdouble *ph = p + (b * c->hq + h) * c->sq * c->skv;
        gint64 hk = h / group;

        for (gint64 i = 0; i < c->sq; i++)
          {
            gdouble rowsum = 0;
            for (gint64 j = 0; j < c->skv; j++)
              {
                gdouble dp = 0;
                for (gint64 e = 0; e < c->dv; e++)
                  dp += get (d_o, b, h, i, e) * get (v, b, hk, j, e);
                ds[i * c->skv + j] = dp;
                rowsum += ph[i * c->skv + j] * dp;
              }
            for (gint64 j = 0; j < c->skv; j++)
              ds[i * c->skv + j] = ph[i * c->skv + j] * (ds[i * c->skv + j] - rowsum);
          }
        for (gint64 i = 0; i < c->sq; i++)
          for (gint64 e = 0; e < c->d; e++)
            {
              gdouble acc = 0;
              for (gint64 j = 0; j < c->skv; j++)
                acc += ds[i * c->skv + j] * get (k, b, hk, j, e);
              dq[((b * c->hq + h) * c->sq + i) * c->d + e] = scale * acc;
            }
        for (gint64 j = 0; j < c->skv; j++)
          {
            for (gint64 e = 0; e < c->d; e++)
              {
                gdouble acc = 0;
                for (gint64 i = 0; i < c->sq; i++)
                  acc += ds[i * c->skv + j] * get (q, b, h, i, e);
                dk[((b * c->hk + hk) * c->skv + j) * c->d + e] += scale * acc;
              }
            for (gint64 e = 0; e < c->dv; e++)
              {
                gdouble acc = 0;
                for (gint64 i = 0; i < c->sq; i++)
                  acc += ph[i * c->skv + j] * get (d_o, b, h, i, e);
                dv[((b * c->hk + hk) * c->skv + j) * c->dv + e] += acc;
              }
          }
      }
}

/* The b × s × (h · d) view of a BSHD operand (the multi-head entry points). */
static AtomrTensor *
packed_heads (const Operand *o)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[3] = { o->shape[0], o->shape[2], o->shape[1] * o->shape[3] };
  AtomrTensor *t = atomr_tensor_new (o->buffer, shape, 3, &error);

  g_assert_no_error (error);
  return t;
}

static void
test_attention (Fixture *f, gconstpointer data)
{
  const Case *c = data;
  gdouble scale = 0.5;
  gdouble tol = c->dtype == ATOMR_DTYPE_BF16 ? 2e-2 : 5e-3;
  gdouble gtol = c->dtype == ATOMR_DTYPE_BF16 ? 4e-2 : 1e-2;
  Operand q, k, v, o, d_o, dq, dk, dv;
  g_autoptr(AtomrBuffer) stats_buf = NULL;
  g_autoptr(AtomrTensor) stats = NULL;
  g_autofree gdouble *p = NULL, *o_ref = NULL, *stats_ref = NULL;
  g_autoptr(GError) error = NULL;
  gdouble err;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &q, c->dtype, c->b, c->hq, c->sq, c->d, c->bshd, TRUE);
  operand_init (f, &k, c->dtype, c->b, c->hk, c->skv, c->d, c->bshd, TRUE);
  operand_init (f, &v, c->dtype, c->b, c->hk, c->skv, c->dv, c->bshd, TRUE);
  operand_init (f, &o, c->dtype, c->b, c->hq, c->sq, c->dv, c->bshd, FALSE);
  {
    const gint64 shape[4] = { c->b, c->hq, c->sq, 1 };
    stats_buf = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, c->b * c->hq * c->sq, &error);
    g_assert_no_error (error);
    stats = atomr_tensor_new (stats_buf, shape, 4, &error);
    g_assert_no_error (error);
  }

  if (c->mha)
    {
      g_autoptr(AtomrTensor) q3 = packed_heads (&q), k3 = packed_heads (&k), v3 = packed_heads (&v);
      g_autoptr(AtomrTensor) o3 = packed_heads (&o);
      RUN (atomr_cudnn_actor_multi_head_attention_forward_async (f->actor, c->hq, c->hk, q3, k3, v3, scale,
                                                                 c->causal, o3, stats, NULL,
                                                                 store_result, &res_),
           atomr_cudnn_actor_multi_head_attention_forward_finish);
    }
  else
    RUN (atomr_cudnn_actor_sdpa_forward_async (f->actor, q.view, k.view, v.view, scale, c->causal, o.view,
                                               stats, NULL, store_result, &res_),
         atomr_cudnn_actor_sdpa_forward_finish);

  p = g_new0 (gdouble, c->b * c->hq * c->sq * c->skv);
  o_ref = g_new0 (gdouble, c->b * c->hq * c->sq * c->dv);
  stats_ref = g_new0 (gdouble, c->b * c->hq * c->sq);
  reference_forward (c, scale, &q, &k, &v, p, o_ref, stats_ref);
  err = rel_error (&o, o_ref);
  g_test_message ("%s: o relative error %.2e (bound %.0e)", c->name, err, tol);
  g_assert_cmpfloat (err, <=, tol);
  {
    g_autoptr(GBytes) bytes = atomr_buffer_download_sync (stats_buf, NULL, &error);
    g_autofree gdouble *got = g_new0 (gdouble, c->b * c->hq * c->sq);
    gdouble num = 0, den = 0;

    g_assert_no_error (error);
    unpack (ATOMR_DTYPE_F32, bytes, got, c->b * c->hq * c->sq);
    for (gint64 i = 0; i < c->b * c->hq * c->sq; i++)
      {
        num += (got[i] - stats_ref[i]) * (got[i] - stats_ref[i]);
        den += stats_ref[i] * stats_ref[i];
      }
    err = sqrt (num / den);
    g_test_message ("%s: stats relative error %.2e (bound 1e-3)", c->name, err);
    g_assert_cmpfloat (err, <=, 1e-3);
  }

  if (c->backward)
    {
      g_autofree gdouble *dq_ref = g_new0 (gdouble, c->b * c->hq * c->sq * c->d);
      g_autofree gdouble *dk_ref = g_new0 (gdouble, c->b * c->hk * c->skv * c->d);
      g_autofree gdouble *dv_ref = g_new0 (gdouble, c->b * c->hk * c->skv * c->dv);

      operand_init (f, &d_o, c->dtype, c->b, c->hq, c->sq, c->dv, c->bshd, TRUE);
      operand_init (f, &dq, c->dtype, c->b, c->hq, c->sq, c->d, c->bshd, FALSE);
      operand_init (f, &dk, c->dtype, c->b, c->hk, c->skv, c->d, c->bshd, FALSE);
      operand_init (f, &dv, c->dtype, c->b, c->hk, c->skv, c->dv, c->bshd, FALSE);
      if (c->mha)
        {
          g_autoptr(AtomrTensor) q3 = packed_heads (&q), k3 = packed_heads (&k), v3 = packed_heads (&v);
          g_autoptr(AtomrTensor) o3 = packed_heads (&o), do3 = packed_heads (&d_o);
          g_autoptr(AtomrTensor) dq3 = packed_heads (&dq), dk3 = packed_heads (&dk), dv3 = packed_heads (&dv);
          RUN (atomr_cudnn_actor_multi_head_attention_backward_async (f->actor, c->hq, c->hk, q3, k3, v3, o3,
                                                                      do3, stats, scale, c->causal, dq3, dk3,
                                                                      dv3, NULL, store_result, &res_),
               atomr_cudnn_actor_multi_head_attention_backward_finish);
        }
      else
        RUN (atomr_cudnn_actor_sdpa_backward_async (f->actor, q.view, k.view, v.view, o.view, d_o.view, stats,
                                                    scale, c->causal, dq.view, dk.view, dv.view, NULL,
                                                    store_result, &res_),
             atomr_cudnn_actor_sdpa_backward_finish);
      reference_backward (c, scale, &q, &k, &v, &d_o, p, dq_ref, dk_ref, dv_ref);
      err = rel_error (&dq, dq_ref);
      g_test_message ("%s: dq relative error %.2e (bound %.0e)", c->name, err, gtol);
      g_assert_cmpfloat (err, <=, gtol);
      err = rel_error (&dk, dk_ref);
      g_test_message ("%s: dk relative error %.2e (bound %.0e)", c->name, err, gtol);
      g_assert_cmpfloat (err, <=, gtol);
      err = rel_error (&dv, dv_ref);
      g_test_message ("%s: dv relative error %.2e (bound %.0e)", c->name, err, gtol);
      g_assert_cmpfloat (err, <=, gtol);
      operand_clear (&d_o);
      operand_clear (&dq);
      operand_clear (&dk);
      operand_clear (&dv);
    }
  g_test_message ("%s: workspace %" G_GUINT64_FORMAT " bytes, %u plans", c->name,
                  atomr_cudnn_actor_get_workspace_size (f->actor), atomr_cudnn_actor_get_cache_size (f->actor));
  operand_clear (&q);
  operand_clear (&k);
  operand_clear (&v);
  operand_clear (&o);
}

/* The second identical request finds its plan; a new scale does not need
 * a new plan (it is passed by value) and gives a different output. */
static void
test_plan_cache (Fixture *f, gconstpointer data)
{
  const Case c = { "cache", ATOMR_DTYPE_F16, FALSE, FALSE, FALSE, FALSE, 1, 2, 2, 128, 128, 64, 64 };
  Operand q, k, v, o;
  g_autofree gdouble *p = g_new0 (gdouble, 2 * 128 * 128);
  g_autofree gdouble *o_ref = g_new0 (gdouble, 2 * 128 * 64);
  g_autofree gdouble *stats_ref = g_new0 (gdouble, 2 * 128);
  guint64 misses;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &q, c.dtype, 1, 2, 128, 64, FALSE, TRUE);
  operand_init (f, &k, c.dtype, 1, 2, 128, 64, FALSE, TRUE);
  operand_init (f, &v, c.dtype, 1, 2, 128, 64, FALSE, TRUE);
  operand_init (f, &o, c.dtype, 1, 2, 128, 64, FALSE, FALSE);
  RUN (atomr_cudnn_actor_sdpa_forward_async (f->actor, q.view, k.view, v.view, 0.125, FALSE, o.view, NULL,
                                             NULL, store_result, &res_),
       atomr_cudnn_actor_sdpa_forward_finish);
  misses = atomr_cudnn_actor_get_cache_misses (f->actor);
  g_assert_cmpuint (misses, ==, 1);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 1);
  RUN (atomr_cudnn_actor_sdpa_forward_async (f->actor, q.view, k.view, v.view, 1.0, FALSE, o.view, NULL,
                                             NULL, store_result, &res_),
       atomr_cudnn_actor_sdpa_forward_finish);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_misses (f->actor), ==, misses);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_hits (f->actor), >=, 1);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 1);
  reference_forward (&c, 1.0, &q, &k, &v, p, o_ref, stats_ref);
  g_assert_cmpfloat (rel_error (&o, o_ref), <=, 5e-3);
  operand_clear (&q);
  operand_clear (&k);
  operand_clear (&v);
  operand_clear (&o);
}

/* A head dimension beyond what the flash engines are documented for
 * (1024): either an engine runs it, and the result is right, or the
 * request is refused with NOT_SUPPORTED naming the configuration and
 * nothing is cached (cuDNN 9.14 on an H100 runs it). */
static void
test_large_head_dim (Fixture *f, gconstpointer data)
{
  const Case c = { "d1024", ATOMR_DTYPE_BF16, FALSE, TRUE, FALSE, FALSE, 1, 1, 1, 128, 128, 1024, 1024 };
  Operand q, k, v, o;
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &q, c.dtype, 1, 1, 128, 1024, FALSE, TRUE);
  operand_init (f, &k, c.dtype, 1, 1, 128, 1024, FALSE, TRUE);
  operand_init (f, &v, c.dtype, 1, 1, 128, 1024, FALSE, TRUE);
  operand_init (f, &o, c.dtype, 1, 1, 128, 1024, FALSE, FALSE);
  atomr_cudnn_actor_sdpa_forward_async (f->actor, q.view, k.view, v.view, 0.03125, TRUE, o.view, NULL, NULL,
                                        store_result, &res);
  if (atomr_cudnn_actor_sdpa_forward_finish (f->actor, wait (&res), &error))
    {
      g_autofree gdouble *p = g_new0 (gdouble, 128 * 128);
      g_autofree gdouble *o_ref = g_new0 (gdouble, 128 * 1024);
      g_autofree gdouble *stats_ref = g_new0 (gdouble, 128);
      gdouble err;

      reference_forward (&c, 0.03125, &q, &k, &v, p, o_ref, stats_ref);
      err = rel_error (&o, o_ref);
      g_test_message ("d = 1024 runs: o relative error %.2e (bound 2e-2)", err);
      g_assert_cmpfloat (err, <=, 2e-2);
      g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 1);
    }
  else
    {
      g_test_message ("d = 1024 refused: %s", error->message);
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_assert_nonnull (strstr (error->message, "q 1×1×128×1024"));
      g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 0);
    }
  g_object_unref (res);
  operand_clear (&q);
  operand_clear (&k);
  operand_clear (&v);
  operand_clear (&o);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("/gpu-cudnn-attention/%s", cases[i].name);
      g_test_add (path, Fixture, &cases[i], fixture_setup, test_attention, fixture_teardown);
    }
  g_test_add ("/gpu-cudnn-attention/plan-cache", Fixture, NULL, fixture_setup, test_plan_cache,
              fixture_teardown);
  g_test_add ("/gpu-cudnn-attention/large-head-dim", Fixture, NULL, fixture_setup, test_large_head_dim,
              fixture_teardown);
  return g_test_run ();
}
