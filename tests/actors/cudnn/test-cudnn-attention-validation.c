/* test-cudnn-attention-validation.c — attention on the cuDNN actor, mock
 * device (no GPU)
 *
 * Validation runs in the _async call exactly as on a GPU: each invalid
 * case fails with ATOMR_ERROR_INVALID_ARGUMENT and a message naming the
 * operand and the value; each valid one passes validation and is answered
 * with ATOMR_ERROR_NOT_SUPPORTED by the enqueue step, which describes the
 * request (there is no cuDNN on the host test device).  Every case makes
 * fresh operands.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>
#include "core/atomr-reply-private.h"

#define CUDNN_TEST_MOCK_FIXTURE
#define CUDNN_TEST_OWN_TEARDOWN
#include "cudnn-validation-util.h"

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  /* nothing reached cuDNN: no plan was built, no workspace allocated */
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 0);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_misses (f->actor), ==, 0);
  g_assert_cmpuint (atomr_cudnn_actor_get_workspace_size (f->actor), ==, 0);
  fixture_release (f);
}

static AtomrTensor *
tensor (Fixture *f, AtomrDtype dtype, gint64 a, gint64 b, gint64 c, gint64 d)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { a, b, c, d };
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, 4, &error);

  g_assert_no_error (error);
  return t;
}

static AtomrTensor *
tensor3 (Fixture *f, AtomrDtype dtype, gint64 a, gint64 b, gint64 c)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[3] = { a, b, c };
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, 3, &error);

  g_assert_no_error (error);
  return t;
}

/* A batch × heads × seq × dim view of batch × seq × heads × dim storage. */
static AtomrTensor *
tensor_bshd (Fixture *f, AtomrDtype dtype, gint64 b, gint64 h, gint64 s, gint64 d)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) storage = tensor (f, dtype, b, s, h, d);
  const guint perm[4] = { 0, 2, 1, 3 };
  AtomrTensor *t = atomr_tensor_permute (storage, perm, 4, &error);

  g_assert_no_error (error);
  return t;
}

#define F16     ATOMR_DTYPE_F16
#define BF16    ATOMR_DTYPE_BF16
#define F32     ATOMR_DTYPE_F32

static void
run_fwd (Fixture *f, AtomrTensor *q, AtomrTensor *k, AtomrTensor *v, gdouble scale, gboolean causal,
         AtomrTensor *o, AtomrTensor *stats, gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_sdpa_forward_async (f->actor, q, k, v, scale, causal, o, stats, NULL,
                                        store_result, &res);
  expect (&res, code, needle);
}

static void
run_bwd (Fixture *f, AtomrTensor *q, AtomrTensor *k, AtomrTensor *v, AtomrTensor *o, AtomrTensor *d_o,
         AtomrTensor *stats, AtomrTensor *dq, AtomrTensor *dk, AtomrTensor *dv, gint code,
         const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_sdpa_backward_async (f->actor, q, k, v, o, d_o, stats, 0.125, TRUE, dq, dk, dv,
                                         NULL, store_result, &res);
  expect (&res, code, needle);
}

/* ------------------------------------------------------------------ */

static void
test_forward_valid (Fixture *f, gconstpointer data)
{
  const AtomrDtype dtypes[] = { F16, BF16 };

  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      g_autoptr(AtomrTensor) q = tensor (f, dtypes[i], 2, 4, 128, 64);
      g_autoptr(AtomrTensor) k = tensor (f, dtypes[i], 2, 4, 256, 64);
      g_autoptr(AtomrTensor) v = tensor (f, dtypes[i], 2, 4, 256, 64);
      g_autoptr(AtomrTensor) o = tensor (f, dtypes[i], 2, 4, 128, 64);
      g_autoptr(AtomrTensor) stats = tensor (f, F32, 2, 4, 128, 1);

      run_fwd (f, q, k, v, 0.125, TRUE, o, stats, NOSUP, "needs a CUDA device");
      /* inference: no statistics */
      run_fwd (f, q, k, v, 0.125, FALSE, o, NULL, NOSUP, "sdpa-fwd");
    }
  /* BSHD storage, grouped-query heads (4 query heads share 2 k/v heads),
   * value dimension different from the key dimension; the request is
   * described with its strides */
  {
    g_autoptr(AtomrTensor) q = tensor_bshd (f, BF16, 2, 4, 128, 64);
    g_autoptr(AtomrTensor) k = tensor_bshd (f, BF16, 2, 2, 128, 64);
    g_autoptr(AtomrTensor) v = tensor_bshd (f, BF16, 2, 2, 128, 32);
    g_autoptr(AtomrTensor) o = tensor_bshd (f, BF16, 2, 4, 128, 32);
    g_autoptr(AtomrTensor) stats = tensor (f, F32, 2, 4, 128, 1);

    run_fwd (f, q, k, v, 0.125, TRUE, o, stats, NOSUP,
             "bf16, causal, q 2×4×128×64 strides (32768, 64, 256, 1), k 2×2×128×64 strides "
             "(16384, 64, 128, 1)");
  }
}

static void
test_forward_invalid (Fixture *f, gconstpointer data)
{
#define FRESH(dt) \
  g_autoptr(AtomrTensor) q = tensor (f, dt, 2, 4, 64, 64); \
  g_autoptr(AtomrTensor) k = tensor (f, dt, 2, 4, 64, 64); \
  g_autoptr(AtomrTensor) v = tensor (f, dt, 2, 4, 64, 64); \
  g_autoptr(AtomrTensor) o = tensor (f, dt, 2, 4, 64, 64); \
  g_autoptr(AtomrTensor) stats = tensor (f, F32, 2, 4, 64, 1)

  { FRESH (F32); run_fwd (f, q, k, v, 1, FALSE, o, stats, INVALID, "q has dtype f32 (attention takes f16 or bf16)"); }
  {
    FRESH (F16);
    g_autoptr(AtomrTensor) kb = tensor (f, BF16, 2, 4, 64, 64);
    run_fwd (f, q, kb, v, 1, FALSE, o, stats, INVALID, "k has dtype bf16, the other operands f16");
  }
  {
    FRESH (F16);
    g_autoptr(AtomrTensor) q3 = tensor3 (f, F16, 2, 64, 64);
    run_fwd (f, q3, k, v, 1, FALSE, o, stats, INVALID, "q has 3 dimensions (takes 4");
  }
  {
    /* the head dimension is strided: k's storage transposed */
    FRESH (F16);
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrTensor) kt = atomr_tensor_transpose (k, 2, 3, &error);
    g_assert_no_error (error);
    run_fwd (f, q, kt, v, 1, FALSE, o, stats, INVALID, "k has stride 64 in its last dimension");
  }
  {
    g_autoptr(AtomrTensor) q = tensor (f, F16, 2, 4, 64, 12);
    g_autoptr(AtomrTensor) k = tensor (f, F16, 2, 4, 64, 12);
    g_autoptr(AtomrTensor) v = tensor (f, F16, 2, 4, 64, 12);
    g_autoptr(AtomrTensor) o = tensor (f, F16, 2, 4, 64, 12);
    run_fwd (f, q, k, v, 1, FALSE, o, NULL, INVALID, "q has a head dimension of 12");
  }
  {
    FRESH (F16);
    g_autoptr(AtomrTensor) k2 = tensor (f, F16, 2, 4, 64, 32);
    run_fwd (f, q, k2, v, 1, FALSE, o, stats, INVALID, "k is 2×4×64×32 but q is 2×4×64×64, so it must be 2×4×64×64");
  }
  {
    FRESH (F16);
    g_autoptr(AtomrTensor) o2 = tensor (f, F16, 2, 4, 32, 64);
    run_fwd (f, q, k, v, 1, FALSE, o2, stats, INVALID, "o is 2×4×32×64");
  }
  {
    FRESH (F16);
    g_autoptr(AtomrTensor) k3 = tensor (f, F16, 2, 3, 64, 64);
    g_autoptr(AtomrTensor) v3 = tensor (f, F16, 2, 3, 64, 64);
    run_fwd (f, q, k3, v3, 1, FALSE, o, stats, INVALID, "q has 4 heads and k 3");
  }
  {
    FRESH (F16);
    g_autoptr(AtomrTensor) s16 = tensor (f, F16, 2, 4, 64, 1);
    run_fwd (f, q, k, v, 1, FALSE, o, s16, INVALID, "stats has dtype f16 (the softmax statistics are f32)");
  }
  {
    FRESH (F16);
    g_autoptr(AtomrTensor) s2 = tensor (f, F32, 2, 4, 32, 1);
    run_fwd (f, q, k, v, 1, FALSE, o, s2, INVALID, "stats is 2×4×32×1");
  }
  {
    /* statistics stored heads-last: not packed */
    FRESH (F16);
    g_autoptr(AtomrTensor) st = tensor (f, F32, 2, 64, 4, 1);
    const guint perm[4] = { 0, 2, 1, 3 };
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrTensor) sp = atomr_tensor_permute (st, perm, 4, &error);
    g_assert_no_error (error);
    run_fwd (f, q, k, v, 1, FALSE, o, sp, INVALID, "the statistics must be a packed");
  }
  {
    /* o is q: an output overlapping an input */
    FRESH (F16);
    run_fwd (f, q, k, v, 1, FALSE, q, stats, INVALID, "sdpa-fwd: output o overlaps input q");
  }
  { FRESH (F16); run_fwd (f, q, k, v, NAN, FALSE, o, stats, INVALID, "scale is nan"); }
  { FRESH (F16); run_fwd (f, q, k, v, INFINITY, FALSE, o, stats, INVALID, "scale is inf"); }
  {
    /* a broadcast key (stride 0 over the sequence) */
    FRESH (F16);
    g_autoptr(AtomrTensor) k1 = tensor (f, F16, 2, 4, 1, 64);
    const gint64 shape[4] = { 2, 4, 64, 64 };
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrTensor) kb = atomr_tensor_broadcast_to (k1, shape, 4, &error);
    g_assert_no_error (error);
    run_fwd (f, q, kb, v, 1, FALSE, o, stats, INVALID, "k stride 2 is 0");
  }
  {
    /* a view that does not start on a 16-byte boundary */
    FRESH (F16);
    g_autoptr(AtomrTensor) big = tensor (f, F16, 2, 4, 64, 72);
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrTensor) qs = atomr_tensor_slice (big, 3, 1, 65, 1, &error);
    g_assert_no_error (error);
    run_fwd (f, qs, k, v, 1, FALSE, o, stats, INVALID, "q starts at byte offset 2");
  }
  {
    FRESH (F16);
    run_fwd (f, NULL, k, v, 1, FALSE, o, stats, INVALID, "q is NULL");
  }
  {
    /* a bare view made by a binding: refused, no crash */
    FRESH (F16);
    g_autoptr(AtomrTensor) bare = g_object_new (ATOMR_TYPE_TENSOR, NULL);
    GAsyncResult *res = NULL;
    g_autoptr(GError) error = NULL;

    atomr_cudnn_actor_sdpa_forward_async (f->actor, q, bare, v, 1, FALSE, o, stats, NULL,
                                          store_result, &res);
    while (res == NULL)
      g_main_context_iteration (NULL, TRUE);
    g_assert_false (atomr_reply_propagate_boolean (res, &error));
    g_assert_error (error, ATOMR_ERROR, INVALID);
    g_assert_nonnull (strstr (error->message, "k"));  /* names the argument */
    g_object_unref (res);
  }
#undef FRESH
}

static void
test_backward (Fixture *f, gconstpointer data)
{
#define FRESH() \
  g_autoptr(AtomrTensor) q = tensor (f, BF16, 2, 4, 128, 64); \
  g_autoptr(AtomrTensor) k = tensor (f, BF16, 2, 2, 128, 64); \
  g_autoptr(AtomrTensor) v = tensor (f, BF16, 2, 2, 128, 64); \
  g_autoptr(AtomrTensor) o = tensor (f, BF16, 2, 4, 128, 64); \
  g_autoptr(AtomrTensor) d_o = tensor (f, BF16, 2, 4, 128, 64); \
  g_autoptr(AtomrTensor) stats = tensor (f, F32, 2, 4, 128, 1); \
  g_autoptr(AtomrTensor) dq = tensor (f, BF16, 2, 4, 128, 64); \
  g_autoptr(AtomrTensor) dk = tensor (f, BF16, 2, 2, 128, 64); \
  g_autoptr(AtomrTensor) dv = tensor (f, BF16, 2, 2, 128, 64)

  { FRESH (); run_bwd (f, q, k, v, o, d_o, stats, dq, dk, dv, NOSUP, "sdpa-bwd (bf16, causal"); }
  { FRESH (); run_bwd (f, q, k, v, o, d_o, NULL, dq, dk, dv, INVALID, "stats is NULL"); }
  { FRESH (); run_bwd (f, q, k, v, o, d_o, stats, dq, dq, dv, INVALID, "dk is 2×4×128×64"); }
  {
    FRESH ();
    g_autoptr(AtomrTensor) dk2 = tensor (f, BF16, 2, 2, 128, 64);
    /* dv is dk: two outputs overlapping */
    run_bwd (f, q, k, v, o, d_o, stats, dq, dk2, dk2, INVALID, "output dk overlaps output dv");
  }
  { FRESH (); run_bwd (f, q, k, v, o, d_o, stats, dq, dk, v, INVALID, "output dv overlaps input v"); }
  {
    FRESH ();
    g_autoptr(AtomrTensor) d_o16 = tensor (f, F16, 2, 4, 128, 64);
    run_bwd (f, q, k, v, o, d_o16, stats, dq, dk, dv, INVALID, "d_o has dtype f16, the other operands bf16");
  }
#undef FRESH
}

static void
run_mha (Fixture *f, guint heads, guint kv_heads, AtomrTensor *q, AtomrTensor *k, AtomrTensor *v,
         AtomrTensor *o, AtomrTensor *stats, gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_multi_head_attention_forward_async (f->actor, heads, kv_heads, q, k, v, 0.125, TRUE,
                                                        o, stats, NULL, store_result, &res);
  expect (&res, code, needle);
}

static void
test_multi_head (Fixture *f, gconstpointer data)
{
  {
    /* batch × seq × (heads · dim): split into BSHD views of 4 × 64 and
     * 2 × 64 (grouped-query) */
    g_autoptr(AtomrTensor) q = tensor3 (f, BF16, 2, 128, 256);
    g_autoptr(AtomrTensor) k = tensor3 (f, BF16, 2, 128, 128);
    g_autoptr(AtomrTensor) v = tensor3 (f, BF16, 2, 128, 128);
    g_autoptr(AtomrTensor) o = tensor3 (f, BF16, 2, 128, 256);
    g_autoptr(AtomrTensor) stats = tensor (f, F32, 2, 4, 128, 1);

    run_mha (f, 4, 2, q, k, v, o, stats, NOSUP,
             "mha-fwd (bf16, causal, q 2×4×128×64 strides (32768, 64, 256, 1)");
    run_mha (f, 3, 1, q, k, v, o, stats, INVALID, "q has 256 features, not a multiple of 3 heads");
    run_mha (f, 4, 3, q, k, v, o, stats, INVALID, "4 query heads and 3 key/value heads");
    run_mha (f, 0, 1, q, k, v, o, stats, INVALID, "0 query heads");
  }
  {
    g_autoptr(AtomrTensor) q = tensor (f, BF16, 2, 128, 4, 64);
    g_autoptr(AtomrTensor) k = tensor3 (f, BF16, 2, 128, 256);
    g_autoptr(AtomrTensor) v = tensor3 (f, BF16, 2, 128, 256);
    g_autoptr(AtomrTensor) o = tensor3 (f, BF16, 2, 128, 256);

    run_mha (f, 4, 4, q, k, v, o, NULL, INVALID, "q has 4 dimensions (takes 3");
  }
  {
    /* the backward pass goes the same way */
    g_autoptr(AtomrTensor) q = tensor3 (f, F16, 1, 128, 128);
    g_autoptr(AtomrTensor) k = tensor3 (f, F16, 1, 128, 128);
    g_autoptr(AtomrTensor) v = tensor3 (f, F16, 1, 128, 128);
    g_autoptr(AtomrTensor) o = tensor3 (f, F16, 1, 128, 128);
    g_autoptr(AtomrTensor) d_o = tensor3 (f, F16, 1, 128, 128);
    g_autoptr(AtomrTensor) stats = tensor (f, F32, 1, 2, 128, 1);
    g_autoptr(AtomrTensor) dq = tensor3 (f, F16, 1, 128, 128);
    g_autoptr(AtomrTensor) dk = tensor3 (f, F16, 1, 128, 128);
    g_autoptr(AtomrTensor) dv = tensor3 (f, F16, 1, 128, 128);
    GAsyncResult *res = NULL;

    atomr_cudnn_actor_multi_head_attention_backward_async (f->actor, 2, 2, q, k, v, o, d_o, stats, 0.125,
                                                           FALSE, dq, dk, dv, NULL, store_result, &res);
    expect (&res, NOSUP, "mha-bwd (f16, no mask");
    atomr_cudnn_actor_multi_head_attention_backward_async (f->actor, 2, 2, q, k, v, o, d_o, stats, 0.125,
                                                           FALSE, dq, dk, q, NULL, store_result, &res);
    expect (&res, INVALID, "mha-bwd: output dv overlaps input q");
  }
}


/* ------------------------------------------------------------------ */
/* AtomrAttention: padding masks and dropout                            */

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

/* A bare object is valid and has the documented defaults; every setter
 * notifies once per change and not when nothing changes. */
static void
test_attention_object (void)
{
  g_autoptr(AtomrAttention) a = g_object_new (ATOMR_TYPE_ATTENTION, NULL);
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  const gint64 two[1] = { 2 };
  g_autoptr(AtomrTensor) lq = atomr_tensor_empty (device, ATOMR_DTYPE_I32, two, 1, &error);
  g_autoptr(AtomrTensor) lkv = atomr_tensor_empty (device, ATOMR_DTYPE_I32, two, 1, &error);
  guint notified = 0;
  gdouble dropout = -1;
  guint64 seed = 0;

  g_assert_no_error (error);
  g_assert_cmpfloat (atomr_attention_get_scale (a), ==, 0.0);
  g_assert_false (atomr_attention_get_causal (a));
  g_assert_cmpfloat (atomr_attention_get_dropout (a), ==, 0.0);
  g_assert_cmpuint (atomr_attention_get_seed (a), ==, 0);
  g_assert_cmpuint (atomr_attention_get_offset (a), ==, 0);
  g_assert_null (atomr_attention_get_q_lengths (a));
  g_assert_null (atomr_attention_get_kv_lengths (a));

  g_signal_connect (a, "notify", G_CALLBACK (count_notify), &notified);
  atomr_attention_set_dropout (a, 0.1);
  atomr_attention_set_dropout (a, 0.1);
  g_assert_cmpuint (notified, ==, 1);
  atomr_attention_set_seed (a, G_GUINT64_CONSTANT (0x123456789abcdef0));
  atomr_attention_set_offset (a, 7);
  atomr_attention_set_causal (a, 2);       /* any true value is TRUE */
  atomr_attention_set_causal (a, TRUE);
  atomr_attention_set_scale (a, 0.125);
  g_assert_cmpuint (notified, ==, 5);
  atomr_attention_set_sequence_lengths (a, lq, lkv);
  g_assert_cmpuint (notified, ==, 7);
  g_assert_true (atomr_attention_get_q_lengths (a) == lq);
  g_assert_true (atomr_attention_get_kv_lengths (a) == lkv);
  atomr_attention_set_sequence_lengths (a, lq, lkv);
  g_assert_cmpuint (notified, ==, 7);
  g_object_get (a, "dropout", &dropout, "seed", &seed, NULL);
  g_assert_cmpfloat (dropout, ==, 0.1);
  g_assert_cmpuint (seed, ==, G_GUINT64_CONSTANT (0x123456789abcdef0));
  g_assert_true (atomr_attention_get_causal (a));
  atomr_attention_set_sequence_lengths (a, NULL, NULL);
  g_assert_null (atomr_attention_get_q_lengths (a));
  g_assert_cmpuint (notified, ==, 9);
  g_signal_handlers_disconnect_by_func (a, count_notify, &notified);
}

static AtomrTensor *
lengths (Fixture *f, AtomrDtype dtype, gint64 n)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[1] = { n };
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, 1, &error);

  g_assert_no_error (error);
  return t;
}

static void
run_attn_fwd (Fixture *f, AtomrAttention *a, AtomrTensor *q, AtomrTensor *k, AtomrTensor *v,
              AtomrTensor *o, AtomrTensor *stats, gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_attention_forward_async (f->actor, a, q, k, v, o, stats, NULL, store_result, &res);
  expect (&res, code, needle);
}

/* Valid padding masks and dropout pass validation and reach the enqueue
 * step, whose description names them (so they are in the plan key the
 * description is made from); bad settings are refused up front. */
static void
test_attention_masks (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrTensor) q = tensor (f, BF16, 2, 4, 128, 64);
  g_autoptr(AtomrTensor) k = tensor (f, BF16, 2, 4, 256, 64);
  g_autoptr(AtomrTensor) v = tensor (f, BF16, 2, 4, 256, 64);
  g_autoptr(AtomrTensor) o = tensor (f, BF16, 2, 4, 128, 64);
  g_autoptr(AtomrTensor) stats = tensor (f, F32, 2, 4, 128, 1);
  g_autoptr(AtomrTensor) lq = lengths (f, ATOMR_DTYPE_I32, 2);
  g_autoptr(AtomrTensor) lkv = lengths (f, ATOMR_DTYPE_I32, 2);
  g_autoptr(AtomrTensor) l3 = lengths (f, ATOMR_DTYPE_I32, 3);
  g_autoptr(AtomrTensor) lf = lengths (f, F32, 2);
  g_autoptr(AtomrTensor) l4 = tensor (f, ATOMR_DTYPE_I32, 2, 1, 1, 1);
  g_autoptr(AtomrAttention) a = atomr_attention_new ();

  /* NULL settings: a bare object, scale 1/√64 */
  run_attn_fwd (f, NULL, q, k, v, o, stats, NOSUP, "sdpa-fwd (bf16, no mask, q 2×4×128×64");
  run_attn_fwd (f, a, q, k, v, o, NULL, NOSUP, "sdpa-fwd (bf16, no mask, q 2×4×128×64");

  atomr_attention_set_sequence_lengths (a, lq, lkv);
  run_attn_fwd (f, a, q, k, v, o, stats, NOSUP, "sdpa-fwd (bf16, padding mask, q 2×4×128×64");
  run_attn_fwd (f, a, q, k, v, o, stats, NOSUP, "q-lengths 2×1×1×1 strides (1, 1, 1, 1), "
                "kv-lengths 2×1×1×1");
  atomr_attention_set_causal (a, TRUE);
  atomr_attention_set_dropout (a, 0.25);
  run_attn_fwd (f, a, q, k, v, o, stats, NOSUP, "(bf16, causal, padding mask, dropout 0.25, q ");
  /* batch × 1 × 1 × 1 lengths are the same request */
  atomr_attention_set_sequence_lengths (a, l4, lkv);
  run_attn_fwd (f, a, q, k, v, o, stats, NOSUP, "padding mask, dropout 0.25");

  /* the backward pass takes the same settings (fresh o and statistics:
   * those above are outputs of failed calls) */
  {
    g_autoptr(AtomrTensor) o2 = tensor (f, BF16, 2, 4, 128, 64);
    g_autoptr(AtomrTensor) stats2 = tensor (f, F32, 2, 4, 128, 1);
    g_autoptr(AtomrTensor) d_o = tensor (f, BF16, 2, 4, 128, 64);
    g_autoptr(AtomrTensor) dq = tensor (f, BF16, 2, 4, 128, 64);
    g_autoptr(AtomrTensor) dk = tensor (f, BF16, 2, 4, 256, 64);
    g_autoptr(AtomrTensor) dv = tensor (f, BF16, 2, 4, 256, 64);
    GAsyncResult *res = NULL;

    atomr_cudnn_actor_attention_backward_async (f->actor, a, q, k, v, o2, d_o, stats2, dq, dk, dv, NULL,
                                                store_result, &res);
    expect (&res, NOSUP, "sdpa-bwd (bf16, causal, padding mask, dropout 0.25");
    atomr_attention_set_dropout (a, 1.0);
    atomr_cudnn_actor_attention_backward_async (f->actor, a, q, k, v, o2, d_o, stats2, dq, dk, dv, NULL,
                                                store_result, &res);
    expect (&res, INVALID, "sdpa-bwd: dropout is 1 (takes a probability 0 ≤ p < 1)");
  }

  /* dropout 0 is no dropout: no RNG in the graph, none in the key */
  atomr_attention_set_dropout (a, 0.0);
  atomr_attention_set_sequence_lengths (a, NULL, NULL);
  run_attn_fwd (f, a, q, k, v, o, stats, NOSUP, "sdpa-fwd (bf16, causal, q 2×4×128×64");

  /* refused */
  atomr_attention_set_sequence_lengths (a, lq, NULL);
  run_attn_fwd (f, a, q, k, v, o, stats, INVALID,
                "sdpa-fwd: the padding mask needs both q-lengths and kv-lengths (only q-lengths is set)");
  atomr_attention_set_sequence_lengths (a, NULL, lkv);
  run_attn_fwd (f, a, q, k, v, o, stats, INVALID, "(only kv-lengths is set)");
  atomr_attention_set_sequence_lengths (a, lq, l3);
  run_attn_fwd (f, a, q, k, v, o, stats, INVALID,
                "sdpa-fwd: kv-lengths is 3 (takes one length per batch entry: 2 or 2×1×1×1)");
  atomr_attention_set_sequence_lengths (a, lf, lkv);
  run_attn_fwd (f, a, q, k, v, o, stats, INVALID, "sdpa-fwd: q-lengths has dtype f32 (the sequence "
                "lengths are i32)");
  atomr_attention_set_sequence_lengths (a, lq, lkv);
  atomr_attention_set_dropout (a, NAN);
  run_attn_fwd (f, a, q, k, v, o, stats, INVALID, "sdpa-fwd: dropout is nan");
  atomr_attention_set_dropout (a, 0.5);
  atomr_attention_set_scale (a, INFINITY);
  run_attn_fwd (f, a, q, k, v, o, stats, INVALID, "sdpa-fwd: scale is inf");
}

/* The multi-head entry points taking an AtomrAttention: the settings
 * reach the head views' request (the description of the enqueue step
 * names them), the head split and the settings are checked up front
 * under the trace names mha-fwd / mha-bwd. */
static void
test_attention_multi_head (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrTensor) q = tensor3 (f, BF16, 2, 128, 256);
  g_autoptr(AtomrTensor) k = tensor3 (f, BF16, 2, 256, 128);
  g_autoptr(AtomrTensor) v = tensor3 (f, BF16, 2, 256, 128);
  g_autoptr(AtomrTensor) o = tensor3 (f, BF16, 2, 128, 256);
  g_autoptr(AtomrTensor) stats = tensor (f, F32, 2, 4, 128, 1);
  g_autoptr(AtomrTensor) lq = lengths (f, ATOMR_DTYPE_I32, 2);
  g_autoptr(AtomrTensor) lkv = lengths (f, ATOMR_DTYPE_I32, 2);
  g_autoptr(AtomrAttention) a = atomr_attention_new ();
  GAsyncResult *res = NULL;

  /* NULL: a bare object (no mask, scale 1/√64) */
  atomr_cudnn_actor_attention_multi_head_forward_async (f->actor, NULL, 4, 2, q, k, v, o, stats, NULL,
                                                        store_result, &res);
  expect (&res, NOSUP, "mha-fwd (bf16, no mask, q 2×4×128×64 strides (32768, 64, 256, 1)");
  atomr_attention_set_causal (a, TRUE);
  atomr_attention_set_sequence_lengths (a, lq, lkv);
  atomr_attention_set_dropout (a, 0.25);
  atomr_cudnn_actor_attention_multi_head_forward_async (f->actor, a, 4, 2, q, k, v, o, stats, NULL,
                                                        store_result, &res);
  expect (&res, NOSUP, "mha-fwd (bf16, causal, padding mask, dropout 0.25, q 2×4×128×64");
  /* the head split is checked as in the calls without settings */
  atomr_cudnn_actor_attention_multi_head_forward_async (f->actor, a, 3, 1, q, k, v, o, stats, NULL,
                                                        store_result, &res);
  expect (&res, INVALID, "mha-fwd: q has 256 features, not a multiple of 3 heads");
  atomr_cudnn_actor_attention_multi_head_forward_async (f->actor, a, 4, 3, q, k, v, o, stats, NULL,
                                                        store_result, &res);
  expect (&res, INVALID, "4 query heads and 3 key/value heads");
  /* and the settings as in attention_forward_async */
  atomr_attention_set_dropout (a, NAN);
  atomr_cudnn_actor_attention_multi_head_forward_async (f->actor, a, 4, 2, q, k, v, o, stats, NULL,
                                                        store_result, &res);
  expect (&res, INVALID, "mha-fwd: dropout is nan");
  atomr_attention_set_dropout (a, 0.25);
  atomr_attention_set_sequence_lengths (a, lq, NULL);
  atomr_cudnn_actor_attention_multi_head_forward_async (f->actor, a, 4, 2, q, k, v, o, stats, NULL,
                                                        store_result, &res);
  expect (&res, INVALID, "mha-fwd: the padding mask needs both q-lengths and kv-lengths");
  atomr_attention_set_sequence_lengths (a, lq, lkv);

  {
    g_autoptr(AtomrTensor) o2 = tensor3 (f, BF16, 2, 128, 256);
    g_autoptr(AtomrTensor) stats2 = tensor (f, F32, 2, 4, 128, 1);
    g_autoptr(AtomrTensor) d_o = tensor3 (f, BF16, 2, 128, 256);
    g_autoptr(AtomrTensor) dq = tensor3 (f, BF16, 2, 128, 256);
    g_autoptr(AtomrTensor) dk = tensor3 (f, BF16, 2, 256, 128);
    g_autoptr(AtomrTensor) dv = tensor3 (f, BF16, 2, 256, 128);

    atomr_cudnn_actor_attention_multi_head_backward_async (f->actor, a, 4, 2, q, k, v, o2, d_o, stats2, dq,
                                                           dk, dv, NULL, store_result, &res);
    expect (&res, NOSUP, "mha-bwd (bf16, causal, padding mask, dropout 0.25");
    atomr_cudnn_actor_attention_multi_head_backward_async (f->actor, a, 4, 2, q, k, v, o2, d_o, stats2, q,
                                                           dk, dv, NULL, store_result, &res);
    expect (&res, INVALID, "mha-bwd: output dq overlaps input q");
    atomr_attention_set_dropout (a, 1.0);
    atomr_cudnn_actor_attention_multi_head_backward_async (f->actor, a, 4, 2, q, k, v, o2, d_o, stats2, dq,
                                                           dk, dv, NULL, store_result, &res);
    expect (&res, INVALID, "mha-bwd: dropout is 1");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/cudnn-attention/forward-valid", Fixture, NULL, fixture_setup, test_forward_valid,
              fixture_teardown);
  g_test_add ("/cudnn-attention/forward-invalid", Fixture, NULL, fixture_setup, test_forward_invalid,
              fixture_teardown);
  g_test_add ("/cudnn-attention/backward", Fixture, NULL, fixture_setup, test_backward, fixture_teardown);
  g_test_add ("/cudnn-attention/multi-head", Fixture, NULL, fixture_setup, test_multi_head,
              fixture_teardown);
  g_test_add_func ("/cudnn-attention/attention-object", test_attention_object);
  g_test_add ("/cudnn-attention/attention-masks", Fixture, NULL, fixture_setup, test_attention_masks,
              fixture_teardown);
  g_test_add ("/cudnn-attention/attention-multi-head", Fixture, NULL, fixture_setup,
              test_attention_multi_head, fixture_teardown);
  return g_test_run ();
}
