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
 * Padding masks and dropout (AtomrAttention) are checked against the same
 * reference with per-batch lengths (valid rows only) and with the dropout
 * mask read back from the device (see test_dropout).  The fixture, host
 * data and RUN come from cudnn-test-util.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>

#include "actors/cudnn/atomr-cudnn-attention-private.h"
#include "cudnn-test-util.h"

/* ------------------------------------------------------------------ */
/* Operands: batch × heads × seq × dim views of BHSD or BSHD storage     */

/* A batch × heads × seq × dim operand (the helpers' Operand, 4-D) of
 * BHSD storage, or of batch × seq × heads × dim (BSHD) storage permuted. */
static void
attn_operand_init (Fixture *f, Operand *o, AtomrDtype dtype, gint64 b, gint64 h, gint64 s, gint64 d,
                   gboolean bshd, gboolean random)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(AtomrTensor) storage = NULL;
  const gint64 bhsd[4] = { b, h, s, d }, stored_bshd[4] = { b, s, h, d };
  const guint perm[4] = { 0, 2, 1, 3 };
  const gint64 *st;

  memset (o, 0, sizeof *o);
  o->n_dims = 4;
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
  memcpy (o->strides, st, 4 * sizeof (gint64));
}

static inline gdouble
get (const Operand *o, gint64 i0, gint64 i1, gint64 i2, gint64 i3)
{
  return o->host[i0 * o->strides[0] + i1 * o->strides[1] + i2 * o->strides[2] + i3 * o->strides[3]];
}

/* ‖device contents of @o − @ref‖ / ‖@ref‖, @ref packed b × h × s × d,
 * over the rows of each batch entry below @rows[batch] (all rows when
 * @rows is NULL: the padding mask leaves the others unspecified). */
static gdouble
rel_error_rows (Operand *o, const gdouble *ref, const gint32 *rows)
{
  g_autofree gdouble *got = g_new0 (gdouble, o->n);
  gdouble num = 0, den = 0;
  gsize idx = 0;

  operand_download (o, got);
  for (gint64 a = 0; a < o->shape[0]; a++)
    for (gint64 b = 0; b < o->shape[1]; b++)
      for (gint64 c = 0; c < o->shape[2]; c++)
        for (gint64 d = 0; d < o->shape[3]; d++, idx++)
          {
            gdouble g = got[a * o->strides[0] + b * o->strides[1] + c * o->strides[2] + d * o->strides[3]];
            if (rows != NULL && c >= rows[a])
              continue;
            num += (g - ref[idx]) * (g - ref[idx]);
            den += ref[idx] * ref[idx];
          }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

static gdouble
rel_error_bhsd (Operand *o, const gdouble *ref)
{
  return rel_error_rows (o, ref, NULL);
}

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

/* What the reference masks: per-batch lengths (NULL: the whole
 * sequences) and a dropout mask (keep, b × hq × sq × skv, 1 kept, 0
 * dropped; NULL: no dropout) with probability p. */
typedef struct {
  const gint32 *lq, *lkv;
  const guint8 *keep;
  gdouble       p;
} Masks;

static const Masks no_masks = { NULL, NULL, NULL, 0 };

/* P before dropout (b × hq × sq × skv; 0 where masked and on padded
 * rows), o (b × hq × sq × dv) and stats (b × hq × sq); padded query rows
 * are 0 in all three. */
static void
reference_forward_masked (const Case *c, gdouble scale, const Masks *mk, const Operand *q,
                          const Operand *k, const Operand *v, gdouble *p, gdouble *o, gdouble *stats)
{
  gint64 group = c->hq / c->hk;
  g_autofree gboolean *in = g_new0 (gboolean, c->skv);

  memset (p, 0, sizeof (gdouble) * c->b * c->hq * c->sq * c->skv);
  memset (o, 0, sizeof (gdouble) * c->b * c->hq * c->sq * c->dv);
  memset (stats, 0, sizeof (gdouble) * c->b * c->hq * c->sq);
  for (gint64 b = 0; b < c->b; b++)
    for (gint64 h = 0; h < c->hq; h++)
      for (gint64 i = 0; i < (mk->lq ? mk->lq[b] : c->sq); i++)
        {
          gsize row0 = ((b * c->hq + h) * c->sq + i) * c->skv;
          gdouble *row = p + row0;
          gdouble m = -G_MAXDOUBLE, z = 0;
          gint64 nkv = mk->lkv ? mk->lkv[b] : c->skv;

          for (gint64 j = 0; j < c->skv; j++)
            {
              gdouble s = 0;
              in[j] = j < nkv && !(c->causal && j > i);
              if (!in[j])
                continue;
              for (gint64 e = 0; e < c->d; e++)
                s += get (q, b, h, i, e) * get (k, b, h / group, j, e);
              row[j] = s * scale;
              m = MAX (m, row[j]);
            }
          for (gint64 j = 0; j < c->skv; j++)
            {
              row[j] = in[j] ? exp (row[j] - m) : 0;
              z += row[j];
            }
          for (gint64 j = 0; j < c->skv; j++)
            row[j] /= z;
          stats[(b * c->hq + h) * c->sq + i] = m + log (z);
          for (gint64 e = 0; e < c->dv; e++)
            {
              gdouble acc = 0;
              for (gint64 j = 0; j < c->skv; j++)
                {
                  gdouble w = row[j];
                  if (mk->keep != NULL)
                    w *= mk->keep[row0 + j] / (1 - mk->p);
                  acc += w * get (v, b, h / group, j, e);
                }
              o[((b * c->hq + h) * c->sq + i) * c->dv + e] = acc;
            }
        }
}

static void
reference_forward (const Case *c, gdouble scale, const Operand *q, const Operand *k, const Operand *v,
                   gdouble *p, gdouble *o, gdouble *stats)
{
  reference_forward_masked (c, scale, &no_masks, q, k, v, p, o, stats);
}

/* The gradients for P (before dropout) of the forward pass: with
 * P' = P ∘ keep / (1 − p), o = P'·v: dv = P'ᵀ·dO, dP = (dO·vᵀ) ∘ keep /
 * (1 − p), dS = P ∘ (dP − rowsum (P ∘ dP)), dq = scale · dS·k, dk =
 * scale · dSᵀ·q (summed over each group of query heads).  Padded query
 * rows contribute nothing. */
static void
reference_backward_masked (const Case *c, gdouble scale, const Masks *mk, const Operand *q,
                           const Operand *k, const Operand *v, const Operand *d_o, const gdouble *p,
                           gdouble *dq, gdouble *dk, gdouble *dv)
{
  gint64 group = c->hq / c->hk;
  g_autofree gdouble *ds = g_new0 (gdouble, c->sq * c->skv);
  g_autofree gdouble *pd = g_new0 (gdouble, c->sq * c->skv);

  memset (dq, 0, sizeof (gdouble) * c->b * c->hq * c->sq * c->d);
  memset (dk, 0, sizeof (gdouble) * c->b * c->hk * c->skv * c->d);
  memset (dv, 0, sizeof (gdouble) * c->b * c->hk * c->skv * c->dv);
  for (gint64 b = 0; b < c->b; b++)
    for (gint64 h = 0; h < c->hq; h++)
      {
        gsize base = (b * c->hq + h) * c->sq * c->skv;
        const gdouble *ph = p + base;
        gint64 hk = h / group, nq = mk->lq ? mk->lq[b] : c->sq;

        memset (ds, 0, sizeof (gdouble) * c->sq * c->skv);
        memset (pd, 0, sizeof (gdouble) * c->sq * c->skv);
        for (gint64 i = 0; i < nq; i++)
          {
            gdouble rowsum = 0;
            for (gint64 j = 0; j < c->skv; j++)
              {
                gdouble dp = 0, drop = 1;
                if (mk->keep != NULL)
                  drop = mk->keep[base + i * c->skv + j] / (1 - mk->p);
                for (gint64 e = 0; e < c->dv; e++)
                  dp += get (d_o, b, h, i, e) * get (v, b, hk, j, e);
                ds[i * c->skv + j] = dp * drop;
                pd[i * c->skv + j] = ph[i * c->skv + j] * drop;
                rowsum += ph[i * c->skv + j] * dp * drop;
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
                  acc += pd[i * c->skv + j] * get (d_o, b, h, i, e);
                dv[((b * c->hk + hk) * c->skv + j) * c->dv + e] += acc;
              }
          }
      }
}

static void
reference_backward (const Case *c, gdouble scale, const Operand *q, const Operand *k, const Operand *v,
                    const Operand *d_o, const gdouble *p, gdouble *dq, gdouble *dk, gdouble *dv)
{
  reference_backward_masked (c, scale, &no_masks, q, k, v, d_o, p, dq, dk, dv);
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
  attn_operand_init (f, &q, c->dtype, c->b, c->hq, c->sq, c->d, c->bshd, TRUE);
  attn_operand_init (f, &k, c->dtype, c->b, c->hk, c->skv, c->d, c->bshd, TRUE);
  attn_operand_init (f, &v, c->dtype, c->b, c->hk, c->skv, c->dv, c->bshd, TRUE);
  attn_operand_init (f, &o, c->dtype, c->b, c->hq, c->sq, c->dv, c->bshd, FALSE);
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
  err = rel_error_bhsd (&o, o_ref);
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

      attn_operand_init (f, &d_o, c->dtype, c->b, c->hq, c->sq, c->dv, c->bshd, TRUE);
      attn_operand_init (f, &dq, c->dtype, c->b, c->hq, c->sq, c->d, c->bshd, FALSE);
      attn_operand_init (f, &dk, c->dtype, c->b, c->hk, c->skv, c->d, c->bshd, FALSE);
      attn_operand_init (f, &dv, c->dtype, c->b, c->hk, c->skv, c->dv, c->bshd, FALSE);
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
      err = rel_error_bhsd (&dq, dq_ref);
      g_test_message ("%s: dq relative error %.2e (bound %.0e)", c->name, err, gtol);
      g_assert_cmpfloat (err, <=, gtol);
      err = rel_error_bhsd (&dk, dk_ref);
      g_test_message ("%s: dk relative error %.2e (bound %.0e)", c->name, err, gtol);
      g_assert_cmpfloat (err, <=, gtol);
      err = rel_error_bhsd (&dv, dv_ref);
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

/* With the actor's autotune property the plans are the fastest of the
 * heuristics' first configurations, timed on the call's own operands
 * (which every candidate writes): the results still match the reference,
 * and the plan the actor built last says which engine it runs. */
static void
test_autotune (Fixture *f, gconstpointer data)
{
  const Case *c = data;
  g_autofree gchar *info = NULL;

  SKIP_WITHOUT_DEVICE (f);
  atomr_cudnn_actor_set_autotune (f->actor, TRUE);
  g_assert_null (atomr_cudnn_sdpa_dup_last_plan_internal (f->actor));
  test_attention (f, c);
  info = atomr_cudnn_sdpa_dup_last_plan_internal (f->actor);
  g_assert_nonnull (info);
  g_test_message ("%s (autotune): %s", c->name, info);
  g_assert_nonnull (strstr (info, "engine "));
  /* the last plan built: the backward pass's where there is one */
  g_assert_true (g_str_has_prefix (info, c->backward ? "sdpa-bwd: " : "sdpa-fwd: "));
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
  attn_operand_init (f, &q, c.dtype, 1, 2, 128, 64, FALSE, TRUE);
  attn_operand_init (f, &k, c.dtype, 1, 2, 128, 64, FALSE, TRUE);
  attn_operand_init (f, &v, c.dtype, 1, 2, 128, 64, FALSE, TRUE);
  attn_operand_init (f, &o, c.dtype, 1, 2, 128, 64, FALSE, FALSE);
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
  g_assert_cmpfloat (rel_error_bhsd (&o, o_ref), <=, 5e-3);
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
  attn_operand_init (f, &q, c.dtype, 1, 1, 128, 1024, FALSE, TRUE);
  attn_operand_init (f, &k, c.dtype, 1, 1, 128, 1024, FALSE, TRUE);
  attn_operand_init (f, &v, c.dtype, 1, 1, 128, 1024, FALSE, TRUE);
  attn_operand_init (f, &o, c.dtype, 1, 1, 128, 1024, FALSE, FALSE);
  atomr_cudnn_actor_sdpa_forward_async (f->actor, q.view, k.view, v.view, 0.03125, TRUE, o.view, NULL, NULL,
                                        store_result, &res);
  if (atomr_cudnn_actor_sdpa_forward_finish (f->actor, wait (&res), &error))
    {
      g_autofree gdouble *p = g_new0 (gdouble, 128 * 128);
      g_autofree gdouble *o_ref = g_new0 (gdouble, 128 * 1024);
      g_autofree gdouble *stats_ref = g_new0 (gdouble, 128);
      gdouble err;

      reference_forward (&c, 0.03125, &q, &k, &v, p, o_ref, stats_ref);
      err = rel_error_bhsd (&o, o_ref);
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


/* ------------------------------------------------------------------ */
/* Padding masks and dropout (AtomrAttention)                           */

/* An i32 vector of @n lengths on the device (a 1-D view). */
static AtomrTensor *
lengths_tensor (Fixture *f, const gint32 *values, gint64 n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_I32, n, &error);
  g_autoptr(GBytes) bytes = g_bytes_new (values, n * sizeof (gint32));
  AtomrTensor *t;

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  t = atomr_tensor_new (buffer, &n, 1, &error);
  g_assert_no_error (error);
  return t;
}

static GBytes *
download (Operand *o)
{
  g_autoptr(GError) error = NULL;
  GBytes *bytes = atomr_buffer_download_sync (o->buffer, NULL, &error);

  g_assert_no_error (error);
  return bytes;
}

/* The packed b × h × s × 1 f32 statistics: their buffer and view. */
typedef struct {
  AtomrBuffer *buffer;
  AtomrTensor *view;
} Stats;

static void
stats_init (Fixture *f, Stats *st, gint64 b, gint64 h, gint64 s)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { b, h, s, 1 };

  st->buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, b * h * s, &error);
  g_assert_no_error (error);
  st->view = atomr_tensor_new (st->buffer, shape, 4, &error);
  g_assert_no_error (error);
}

static void
stats_clear (Stats *st)
{
  g_clear_object (&st->view);
  g_clear_object (&st->buffer);
}

/* ‖got − ref‖ / ‖ref‖ of the statistics over the rows below @rows[batch]. */
static gdouble
stats_error (Stats *st, const Case *c, const gdouble *ref, const gint32 *rows)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (st->buffer, NULL, &error);
  gsize n = c->b * c->hq * c->sq;
  g_autofree gdouble *got = g_new0 (gdouble, n);
  gdouble num = 0, den = 0;

  g_assert_no_error (error);
  unpack (ATOMR_DTYPE_F32, bytes, got, n);
  for (gsize i = 0; i < n; i++)
    {
      gint64 b = i / (c->hq * c->sq), row = i % c->sq;
      if (rows != NULL && row >= rows[b])
        continue;
      num += (got[i] - ref[i]) * (got[i] - ref[i]);
      den += ref[i] * ref[i];
    }
  return sqrt (num / den);
}

typedef struct {
  const gchar *name;
  Case         c;
  gint32       lq[2], lkv[2];
} PadCase;

/* b = 2 with one full and one padded sequence on each side; the backward
 * key length stays a multiple of 128 (cuDNN before 9.16). */
static const PadCase pad_cases[] = {
  { "padding-bf16", { "padding-bf16", ATOMR_DTYPE_BF16, FALSE, FALSE, TRUE, FALSE, 2, 2, 2, 128, 256, 64, 64 },
    { 100, 128 }, { 256, 77 } },
  { "padding-f16-causal-gqa-bshd",
    { "padding-f16-causal-gqa-bshd", ATOMR_DTYPE_F16, TRUE, TRUE, TRUE, FALSE, 2, 4, 2, 128, 128, 64, 64 },
    { 128, 50 }, { 90, 128 } },
  /* the same through the multi-head entry points that take an
   * AtomrAttention (b × s × h·d views, split into heads) */
  { "padding-mha-bf16-causal-gqa",
    { "padding-mha-bf16-causal-gqa", ATOMR_DTYPE_BF16, TRUE, TRUE, TRUE, TRUE, 2, 4, 2, 128, 128, 64, 64 },
    { 128, 70 }, { 40, 128 } },
};

/* Forward and backward with per-batch lengths against the reference that
 * masks the same scores: o, the statistics and dq compared on the valid
 * query rows, dk and dv on the valid key rows.  d_o is zero on padded
 * query rows, as a loss masked by the lengths makes it. */
static void
test_padding (Fixture *f, gconstpointer data)
{
  const PadCase *pc = data;
  const Case *c = &pc->c;
  const Masks mk = { pc->lq, pc->lkv, NULL, 0 };
  gdouble scale = 1.0 / sqrt ((gdouble) c->d);
  gdouble tol = c->dtype == ATOMR_DTYPE_BF16 ? 2e-2 : 5e-3;
  gdouble gtol = c->dtype == ATOMR_DTYPE_BF16 ? 4e-2 : 1e-2;
  g_autoptr(AtomrAttention) a = atomr_attention_new ();
  g_autoptr(AtomrTensor) lq = NULL, lkv = NULL;
  Operand q, k, v, o, d_o, dq, dk, dv;
  Stats st;
  g_autofree gdouble *p = NULL, *o_ref = NULL, *stats_ref = NULL;
  g_autofree gdouble *dq_ref = NULL, *dk_ref = NULL, *dv_ref = NULL;
  gdouble err;

  SKIP_WITHOUT_DEVICE (f);
  lq = lengths_tensor (f, pc->lq, c->b);
  lkv = lengths_tensor (f, pc->lkv, c->b);
  atomr_attention_set_sequence_lengths (a, lq, lkv);
  atomr_attention_set_causal (a, c->causal);
  /* scale 0: 1/√d */
  attn_operand_init (f, &q, c->dtype, c->b, c->hq, c->sq, c->d, c->bshd, TRUE);
  attn_operand_init (f, &k, c->dtype, c->b, c->hk, c->skv, c->d, c->bshd, TRUE);
  attn_operand_init (f, &v, c->dtype, c->b, c->hk, c->skv, c->dv, c->bshd, TRUE);
  attn_operand_init (f, &o, c->dtype, c->b, c->hq, c->sq, c->dv, c->bshd, FALSE);
  stats_init (f, &st, c->b, c->hq, c->sq);

  if (c->mha)
    {
      g_autoptr(AtomrTensor) q3 = packed_heads (&q), k3 = packed_heads (&k), v3 = packed_heads (&v);
      g_autoptr(AtomrTensor) o3 = packed_heads (&o);
      RUN (atomr_cudnn_actor_attention_multi_head_forward_async (f->actor, a, c->hq, c->hk, q3, k3, v3, o3,
                                                                 st.view, NULL, store_result, &res_),
           atomr_cudnn_actor_attention_multi_head_forward_finish);
    }
  else
    RUN (atomr_cudnn_actor_attention_forward_async (f->actor, a, q.view, k.view, v.view, o.view, st.view,
                                                    NULL, store_result, &res_),
         atomr_cudnn_actor_attention_forward_finish);
  p = g_new0 (gdouble, c->b * c->hq * c->sq * c->skv);
  o_ref = g_new0 (gdouble, c->b * c->hq * c->sq * c->dv);
  stats_ref = g_new0 (gdouble, c->b * c->hq * c->sq);
  reference_forward_masked (c, scale, &mk, &q, &k, &v, p, o_ref, stats_ref);
  err = rel_error_rows (&o, o_ref, pc->lq);
  g_test_message ("%s: o relative error %.2e (bound %.0e)", pc->name, err, tol);
  g_assert_cmpfloat (err, <=, tol);
  err = stats_error (&st, c, stats_ref, pc->lq);
  g_test_message ("%s: stats relative error %.2e (bound 1e-3)", pc->name, err);
  g_assert_cmpfloat (err, <=, 1e-3);

  /* the mask matters: the unmasked reference is far from o */
  {
    g_autofree gdouble *p2 = g_new0 (gdouble, c->b * c->hq * c->sq * c->skv);
    g_autofree gdouble *o2 = g_new0 (gdouble, c->b * c->hq * c->sq * c->dv);
    g_autofree gdouble *s2 = g_new0 (gdouble, c->b * c->hq * c->sq);
    reference_forward (c, scale, &q, &k, &v, p2, o2, s2);
    err = rel_error_rows (&o, o2, pc->lq);
    g_test_message ("%s: o against the unmasked reference %.2e", pc->name, err);
    g_assert_cmpfloat (err, >, 5 * tol);
  }

  attn_operand_init (f, &d_o, c->dtype, c->b, c->hq, c->sq, c->dv, c->bshd, TRUE);
  /* zero d_o on padded query rows (storage and host copy) */
  for (gint64 b = 0; b < c->b; b++)
    for (gint64 h = 0; h < c->hq; h++)
      for (gint64 i = pc->lq[b]; i < c->sq; i++)
        for (gint64 e = 0; e < c->dv; e++)
          d_o.host[b * d_o.strides[0] + h * d_o.strides[1] + i * d_o.strides[2] + e * d_o.strides[3]] = 0;
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) bytes = pack (c->dtype, d_o.host, d_o.n);
    g_assert_true (atomr_buffer_upload_sync (d_o.buffer, bytes, NULL, &error));
    g_assert_no_error (error);
  }
  attn_operand_init (f, &dq, c->dtype, c->b, c->hq, c->sq, c->d, c->bshd, FALSE);
  attn_operand_init (f, &dk, c->dtype, c->b, c->hk, c->skv, c->d, c->bshd, FALSE);
  attn_operand_init (f, &dv, c->dtype, c->b, c->hk, c->skv, c->dv, c->bshd, FALSE);
  if (c->mha)
    {
      g_autoptr(AtomrTensor) q3 = packed_heads (&q), k3 = packed_heads (&k), v3 = packed_heads (&v);
      g_autoptr(AtomrTensor) o3 = packed_heads (&o), do3 = packed_heads (&d_o);
      g_autoptr(AtomrTensor) dq3 = packed_heads (&dq), dk3 = packed_heads (&dk), dv3 = packed_heads (&dv);
      RUN (atomr_cudnn_actor_attention_multi_head_backward_async (f->actor, a, c->hq, c->hk, q3, k3, v3, o3,
                                                                  do3, st.view, dq3, dk3, dv3, NULL,
                                                                  store_result, &res_),
           atomr_cudnn_actor_attention_multi_head_backward_finish);
    }
  else
    RUN (atomr_cudnn_actor_attention_backward_async (f->actor, a, q.view, k.view, v.view, o.view, d_o.view,
                                                     st.view, dq.view, dk.view, dv.view, NULL, store_result,
                                                     &res_),
         atomr_cudnn_actor_attention_backward_finish);
  dq_ref = g_new0 (gdouble, c->b * c->hq * c->sq * c->d);
  dk_ref = g_new0 (gdouble, c->b * c->hk * c->skv * c->d);
  dv_ref = g_new0 (gdouble, c->b * c->hk * c->skv * c->dv);
  reference_backward_masked (c, scale, &mk, &q, &k, &v, &d_o, p, dq_ref, dk_ref, dv_ref);
  err = rel_error_rows (&dq, dq_ref, pc->lq);
  g_test_message ("%s: dq relative error %.2e (bound %.0e)", pc->name, err, gtol);
  g_assert_cmpfloat (err, <=, gtol);
  err = rel_error_rows (&dk, dk_ref, pc->lkv);
  g_test_message ("%s: dk relative error %.2e (bound %.0e)", pc->name, err, gtol);
  g_assert_cmpfloat (err, <=, gtol);
  err = rel_error_rows (&dv, dv_ref, pc->lkv);
  g_test_message ("%s: dv relative error %.2e (bound %.0e)", pc->name, err, gtol);
  g_assert_cmpfloat (err, <=, gtol);

  stats_clear (&st);
  operand_clear (&q);
  operand_clear (&k);
  operand_clear (&v);
  operand_clear (&o);
  operand_clear (&d_o);
  operand_clear (&dq);
  operand_clear (&dk);
  operand_clear (&dv);
}

/* Dropout.  The mask cannot be recomputed on the CPU (cuDNN's Philox
 * stream is its own), so it is read back from the device: with v the
 * identity (value dimension = key length) o = P ∘ M / (1 − p) itself, and
 * M is where o is not 0 (P > 0 everywhere: scores are small).  The mask
 * depends on the seed, offset, probability and shapes, not on v, so the
 * run with random v, and its backward pass, are checked against the
 * reference with that mask.  Also: p = 0 is exactly no dropout, the same
 * seed gives the same bits, another seed or offset another mask, and the
 * kept fraction of b·h·sq·skv = 65536 draws is within 0.01 (6σ) of 1 − p. */
static void
test_dropout (Fixture *f, gconstpointer data)
{
  AtomrDtype dtype = GPOINTER_TO_INT (data);
  const Case c = { "dropout", dtype, FALSE, FALSE, TRUE, FALSE, 2, 2, 2, 128, 128, 128, 128 };
  const gdouble prob = dtype == ATOMR_DTYPE_BF16 ? 0.2 : 0.35;
  const gdouble scale = 1.0 / sqrt (128.0);
  gdouble tol = dtype == ATOMR_DTYPE_BF16 ? 2e-2 : 5e-3;
  gdouble gtol = dtype == ATOMR_DTYPE_BF16 ? 4e-2 : 1e-2;
  gsize n_scores = c.b * c.hq * c.sq * c.skv;
  g_autoptr(AtomrAttention) a = atomr_attention_new ();
  g_autofree guint8 *keep = g_new0 (guint8, n_scores);
  g_autofree gdouble *p = g_new0 (gdouble, n_scores);
  g_autofree gdouble *o_ref = g_new0 (gdouble, c.b * c.hq * c.sq * c.dv);
  g_autofree gdouble *stats_ref = g_new0 (gdouble, c.b * c.hq * c.sq);
  g_autoptr(GBytes) first = NULL;
  Operand q, k, vid, v, o, d_o, dq, dk, dv;
  Stats st;
  Masks mk = { NULL, NULL, NULL, prob };
  gsize kept = 0;
  gdouble err;

  SKIP_WITHOUT_DEVICE (f);
  attn_operand_init (f, &q, dtype, c.b, c.hq, c.sq, c.d, FALSE, TRUE);
  attn_operand_init (f, &k, dtype, c.b, c.hk, c.skv, c.d, FALSE, TRUE);
  attn_operand_init (f, &v, dtype, c.b, c.hk, c.skv, c.dv, FALSE, TRUE);
  attn_operand_init (f, &o, dtype, c.b, c.hq, c.sq, c.dv, FALSE, FALSE);
  attn_operand_init (f, &vid, dtype, c.b, c.hk, c.skv, c.dv, FALSE, FALSE);
  stats_init (f, &st, c.b, c.hq, c.sq);
  for (gint64 b = 0; b < c.b; b++)
    for (gint64 h = 0; h < c.hk; h++)
      for (gint64 j = 0; j < c.skv; j++)
        vid.host[((b * c.hk + h) * c.skv + j) * c.dv + j] = 1;
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) bytes = pack (dtype, vid.host, vid.n);
    g_assert_true (atomr_buffer_upload_sync (vid.buffer, bytes, NULL, &error));
    g_assert_no_error (error);
  }

  /* p = 0 through AtomrAttention is bit for bit the call without dropout */
  {
    g_autoptr(GBytes) plain = NULL, zero = NULL;

    RUN (atomr_cudnn_actor_sdpa_forward_async (f->actor, q.view, k.view, v.view, scale, FALSE, o.view,
                                               st.view, NULL, store_result, &res_),
         atomr_cudnn_actor_sdpa_forward_finish);
    plain = download (&o);
    atomr_attention_set_scale (a, scale);
    atomr_attention_set_seed (a, 1234);
    RUN (atomr_cudnn_actor_attention_forward_async (f->actor, a, q.view, k.view, v.view, o.view, st.view,
                                                    NULL, store_result, &res_),
         atomr_cudnn_actor_attention_forward_finish);
    zero = download (&o);
    g_assert_true (g_bytes_equal (plain, zero));
  }

  /* the mask, through v = identity */
  atomr_attention_set_dropout (a, prob);
  RUN (atomr_cudnn_actor_attention_forward_async (f->actor, a, q.view, k.view, vid.view, o.view, st.view,
                                                  NULL, store_result, &res_),
       atomr_cudnn_actor_attention_forward_finish);
  first = download (&o);
  {
    g_autofree gdouble *got = g_new0 (gdouble, o.n);

    unpack (dtype, first, got, o.n);
    for (gsize i = 0; i < n_scores; i++)    /* o is b × h × sq × skv here */
      {
        keep[i] = got[i] != 0;
        kept += keep[i];
      }
  }
  g_test_message ("dropout %g: kept %.4f of %" G_GSIZE_FORMAT " (expected %.4f)", prob,
                  (gdouble) kept / n_scores, n_scores, 1 - prob);
  g_assert_cmpfloat (fabs ((gdouble) kept / n_scores - (1 - prob)), <=, 0.01);
  mk.keep = keep;
  /* the kept weights are P / (1 − p) */
  reference_forward_masked (&c, scale, &mk, &q, &k, &vid, p, o_ref, stats_ref);
  err = rel_error_bhsd (&o, o_ref);
  g_test_message ("dropout %g: P ∘ M / (1 − p) relative error %.2e (bound %.0e)", prob, err, tol);
  g_assert_cmpfloat (err, <=, tol);
  /* the statistics are those of the softmax before dropout */
  err = stats_error (&st, &c, stats_ref, NULL);
  g_assert_cmpfloat (err, <=, 1e-3);

  /* same seed and offset: the same bits; another seed or offset: not */
  {
    g_autoptr(GBytes) again = NULL, other_seed = NULL, other_offset = NULL;

    RUN (atomr_cudnn_actor_attention_forward_async (f->actor, a, q.view, k.view, vid.view, o.view, st.view,
                                                    NULL, store_result, &res_),
         atomr_cudnn_actor_attention_forward_finish);
    again = download (&o);
    g_assert_true (g_bytes_equal (first, again));
    atomr_attention_set_seed (a, 4321);
    RUN (atomr_cudnn_actor_attention_forward_async (f->actor, a, q.view, k.view, vid.view, o.view, st.view,
                                                    NULL, store_result, &res_),
         atomr_cudnn_actor_attention_forward_finish);
    other_seed = download (&o);
    g_assert_false (g_bytes_equal (first, other_seed));
    atomr_attention_set_seed (a, 1234);
    atomr_attention_set_offset (a, 1 << 20);
    RUN (atomr_cudnn_actor_attention_forward_async (f->actor, a, q.view, k.view, vid.view, o.view, st.view,
                                                    NULL, store_result, &res_),
         atomr_cudnn_actor_attention_forward_finish);
    other_offset = download (&o);
    g_assert_false (g_bytes_equal (first, other_offset));
    atomr_attention_set_offset (a, 0);
    /* one plan for all of them: the seed and offset are not in the key */
    g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 2);
  }

  /* random v with the same mask, and the backward pass regenerating it */
  RUN (atomr_cudnn_actor_attention_forward_async (f->actor, a, q.view, k.view, v.view, o.view, st.view,
                                                  NULL, store_result, &res_),
       atomr_cudnn_actor_attention_forward_finish);
  reference_forward_masked (&c, scale, &mk, &q, &k, &v, p, o_ref, stats_ref);
  err = rel_error_bhsd (&o, o_ref);
  g_test_message ("dropout %g: o relative error %.2e (bound %.0e)", prob, err, tol);
  g_assert_cmpfloat (err, <=, tol);
  attn_operand_init (f, &d_o, dtype, c.b, c.hq, c.sq, c.dv, FALSE, TRUE);
  attn_operand_init (f, &dq, dtype, c.b, c.hq, c.sq, c.d, FALSE, FALSE);
  attn_operand_init (f, &dk, dtype, c.b, c.hk, c.skv, c.d, FALSE, FALSE);
  attn_operand_init (f, &dv, dtype, c.b, c.hk, c.skv, c.dv, FALSE, FALSE);
  RUN (atomr_cudnn_actor_attention_backward_async (f->actor, a, q.view, k.view, v.view, o.view, d_o.view,
                                                   st.view, dq.view, dk.view, dv.view, NULL, store_result,
                                                   &res_),
       atomr_cudnn_actor_attention_backward_finish);
  {
    g_autofree gdouble *dq_ref = g_new0 (gdouble, c.b * c.hq * c.sq * c.d);
    g_autofree gdouble *dk_ref = g_new0 (gdouble, c.b * c.hk * c.skv * c.d);
    g_autofree gdouble *dv_ref = g_new0 (gdouble, c.b * c.hk * c.skv * c.dv);

    reference_backward_masked (&c, scale, &mk, &q, &k, &v, &d_o, p, dq_ref, dk_ref, dv_ref);
    err = rel_error_bhsd (&dq, dq_ref);
    g_test_message ("dropout %g: dq relative error %.2e (bound %.0e)", prob, err, gtol);
    g_assert_cmpfloat (err, <=, gtol);
    err = rel_error_bhsd (&dk, dk_ref);
    g_test_message ("dropout %g: dk relative error %.2e (bound %.0e)", prob, err, gtol);
    g_assert_cmpfloat (err, <=, gtol);
    err = rel_error_bhsd (&dv, dv_ref);
    g_test_message ("dropout %g: dv relative error %.2e (bound %.0e)", prob, err, gtol);
    g_assert_cmpfloat (err, <=, gtol);
  }

  stats_clear (&st);
  operand_clear (&q);
  operand_clear (&k);
  operand_clear (&v);
  operand_clear (&vid);
  operand_clear (&o);
  operand_clear (&d_o);
  operand_clear (&dq);
  operand_clear (&dk);
  operand_clear (&dv);
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
  /* bf16 causal BHSD and grouped-query BSHD, forward and backward */
  g_test_add ("/gpu-cudnn-attention/autotune/bf16-bhsd-causal", Fixture, &cases[0], fixture_setup,
              test_autotune, fixture_teardown);
  g_test_add ("/gpu-cudnn-attention/autotune/bf16-gqa-bshd-causal", Fixture, &cases[2], fixture_setup,
              test_autotune, fixture_teardown);
  g_test_add ("/gpu-cudnn-attention/plan-cache", Fixture, NULL, fixture_setup, test_plan_cache,
              fixture_teardown);
  g_test_add ("/gpu-cudnn-attention/large-head-dim", Fixture, NULL, fixture_setup, test_large_head_dim,
              fixture_teardown);
  for (guint i = 0; i < G_N_ELEMENTS (pad_cases); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("/gpu-cudnn-attention/%s", pad_cases[i].name);
      g_test_add (path, Fixture, &pad_cases[i], fixture_setup, test_padding, fixture_teardown);
    }
  g_test_add ("/gpu-cudnn-attention/dropout-bf16", Fixture, GINT_TO_POINTER (ATOMR_DTYPE_BF16), fixture_setup,
              test_dropout, fixture_teardown);
  g_test_add ("/gpu-cudnn-attention/dropout-f16", Fixture, GINT_TO_POINTER (ATOMR_DTYPE_F16), fixture_setup,
              test_dropout, fixture_teardown);
  return g_test_run ();
}
