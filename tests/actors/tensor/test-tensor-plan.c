/* test-tensor-plan.c — the Tensor actor's planner: mode parsing, mode
 * folding, loop order (permutation choice), broadcasting, reductions and
 * the plan cache (pure CPU code)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>
#include "actors/tensor/atomr-tensor-plan-private.h"

static const gchar *names3[] = { "out", "a", "b" };

static void
test_parse_ok (void)
{
  AtomrModeSpec spec;
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_mode_spec_parse ("t", "abc->cab", 1, &spec, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (spec.modes[1], ==, "abc");
  g_assert_cmpstr (spec.modes[0], ==, "cab");

  g_assert_true (atomr_mode_spec_parse ("t", " ab , b -> ab ", 2, &spec, &error));
  g_assert_cmpstr (spec.modes[1], ==, "ab");
  g_assert_cmpstr (spec.modes[2], ==, "b");
  g_assert_cmpstr (spec.modes[0], ==, "ab");

  /* scalars: no modes at all */
  g_assert_true (atomr_mode_spec_parse ("t", "->", 1, &spec, &error));
  g_assert_cmpstr (spec.modes[0], ==, "");
  g_assert_true (atomr_mode_spec_parse ("t", "abcdefgh->hgfedcba", 1, &spec, &error));
  g_assert_no_error (error);
}

static void
expect_parse_error (const gchar *spec_text, guint n_inputs, const gchar *fragment)
{
  AtomrModeSpec spec;
  g_autoptr(GError) error = NULL;

  g_assert_false (atomr_mode_spec_parse ("permute", spec_text, n_inputs, &spec, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, fragment) == NULL)
    g_error ("\"%s\": message \"%s\" lacks \"%s\"", spec_text, error->message, fragment);
  g_assert_true (g_str_has_prefix (error->message, "permute: "));
}

static void
test_parse_errors (void)
{
  expect_parse_error (NULL, 1, "NULL");
  expect_parse_error ("ab", 1, "lacks \"->\"");
  expect_parse_error ("a1->a", 1, "character '1' at 1");
  expect_parse_error ("aa->a", 1, "repeats mode 'a'");
  expect_parse_error ("ab->bb", 1, "output repeats mode 'b'");
  expect_parse_error ("ab,c->abc", 1, "more than 1 input");
  expect_parse_error ("ab->ba", 2, "has 1 input, expected 2");
  expect_parse_error ("ab->b->a", 1, "two \"->\"");
  expect_parse_error ("abcdefghi->a", 1, "more than 8 modes");
  expect_parse_error ("a->abcdefghi", 1, "output has more than 8 modes");
  expect_parse_error ("a-b->a", 1, "character '-'");
}

typedef struct {
  guint  n;
  gint64 shape[8];
  gint64 strides[8];
} Op;

static gboolean
build (const gchar *modes, guint n_inputs, const Op *ops, gboolean reduce,
       AtomrLoopPlan *plan, GError **error)
{
  AtomrModeSpec spec;
  AtomrPlanOperand operands[3];

  g_assert_true (atomr_mode_spec_parse ("t", modes, n_inputs, &spec, NULL));
  for (guint o = 0; o <= n_inputs; o++)
    {
      operands[o].n_dims = ops[o].n;
      operands[o].shape = ops[o].shape;
      operands[o].strides = ops[o].strides;
    }
  return atomr_loop_plan_build ("t", &spec, operands, names3, reduce, plan, error);
}

static void
test_fold_copy (void)
{
  /* a contiguous copy of any rank is one loop */
  Op ops[] = {
    { 4, { 2, 3, 4, 5 }, { 60, 20, 5, 1 } },
    { 4, { 2, 3, 4, 5 }, { 60, 20, 5, 1 } },
  };
  AtomrLoopPlan p;
  g_autoptr(GError) error = NULL;

  g_assert_true (build ("abcd->abcd", 1, ops, FALSE, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (p.n_loops, ==, 1);
  g_assert_cmpuint (p.n_free, ==, 1);
  g_assert_cmpint (p.extent[0], ==, 120);
  g_assert_cmpint (p.stride[0][0], ==, 1);
  g_assert_cmpint (p.stride[1][0], ==, 1);
  g_assert_cmpuint (p.n_out, ==, 120);
}

static void
test_fold_transpose (void)
{
  /* "abcd->abdc" of contiguous operands: a and b fold, d and c stay:
   * a (a·b) × d × c walk with the output dense innermost */
  Op ops[] = {
    { 4, { 2, 3, 5, 4 }, { 60, 20, 4, 1 } },
    { 4, { 2, 3, 4, 5 }, { 60, 20, 5, 1 } },
  };
  AtomrLoopPlan p;
  g_autoptr(GError) error = NULL;

  g_assert_true (build ("abcd->abdc", 1, ops, FALSE, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (p.n_loops, ==, 3);
  g_assert_cmpint (p.extent[0], ==, 6);
  g_assert_cmpint (p.extent[1], ==, 5);
  g_assert_cmpint (p.extent[2], ==, 4);
  g_assert_cmpint (p.stride[0][0], ==, 20);
  g_assert_cmpint (p.stride[0][1], ==, 4);
  g_assert_cmpint (p.stride[0][2], ==, 1);
  g_assert_cmpint (p.stride[1][0], ==, 20);
  g_assert_cmpint (p.stride[1][1], ==, 1);
  g_assert_cmpint (p.stride[1][2], ==, 5);
  /* A is densest in loop 1, not the innermost: a transpose */
  g_assert_cmpint (p.a_inner, ==, 1);
}

static void
test_loop_order (void)
{
  /* the output is column-major: the loops follow its strides, not the
   * order of the modes, so the innermost loop writes consecutively */
  Op ops[] = {
    { 2, { 3, 4 }, { 1, 3 } },
    { 2, { 3, 4 }, { 4, 1 } },
  };
  AtomrLoopPlan p;
  g_autoptr(GError) error = NULL;

  g_assert_true (build ("ab->ab", 1, ops, FALSE, &p, &error));
  g_assert_cmpuint (p.n_loops, ==, 2);
  g_assert_cmpint (p.extent[0], ==, 4);     /* b outer */
  g_assert_cmpint (p.stride[0][1], ==, 1);  /* a inner, dense in the output */
  g_assert_cmpint (p.stride[1][1], ==, 4);
  g_assert_cmpint (p.a_inner, ==, 0);
}

static void
test_negative_strides_fold (void)
{
  /* a reversed contiguous vector viewed as 2 × 3: still one loop */
  Op ops[] = {
    { 2, { 2, 3 }, { 3, 1 } },
    { 2, { 2, 3 }, { -3, -1 } },
  };
  AtomrLoopPlan p;

  g_assert_true (build ("ab->ab", 1, ops, FALSE, &p, NULL));
  g_assert_cmpuint (p.n_loops, ==, 1);
  g_assert_cmpint (p.extent[0], ==, 6);
  g_assert_cmpint (p.stride[1][0], ==, -1);
}

static void
test_broadcast (void)
{
  /* "b,ab->ab": the first input is broadcast along a (stride 0), the
   * second has extent 1 in b (stride 0 too) */
  Op ops[] = {
    { 2, { 3, 4 }, { 4, 1 } },
    { 1, { 4 }, { 1 } },
    { 2, { 3, 1 }, { 1, 1 } },
  };
  AtomrLoopPlan p;
  g_autoptr(GError) error = NULL;

  g_assert_true (build ("b,ab->ab", 2, ops, FALSE, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (p.n_loops, ==, 2);
  g_assert_cmpint (p.stride[1][0], ==, 0);
  g_assert_cmpint (p.stride[1][1], ==, 1);
  g_assert_cmpint (p.stride[2][0], ==, 1);
  g_assert_cmpint (p.stride[2][1], ==, 0);
}

static void
test_extent_one_dropped (void)
{
  Op ops[] = {
    { 3, { 1, 5, 1 }, { 99, 1, 7 } },
    { 3, { 1, 1, 5 }, { 5, 5, 1 } },
  };
  AtomrLoopPlan p;

  g_assert_true (build ("abc->acb", 1, ops, FALSE, &p, NULL));
  g_assert_cmpuint (p.n_loops, ==, 1);
  g_assert_cmpint (p.extent[0], ==, 5);
}

static void
test_reduce_plan (void)
{
  Op ops[] = {
    { 1, { 3 }, { 1 } },
    { 3, { 2, 3, 4 }, { 12, 4, 1 } },
  };
  Op ops2[] = {
    { 1, { 2 }, { 1 } },
    { 3, { 2, 3, 4 }, { 12, 4, 1 } },
  };
  Op ops3[] = {
    { 0, { 0 }, { 0 } },
    { 2, { 3, 4 }, { 4, 1 } },
  };
  AtomrLoopPlan p;
  g_autoptr(GError) error = NULL;

  g_assert_true (build ("abc->b", 1, ops, TRUE, &p, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (p.n_free, ==, 1);
  g_assert_cmpuint (p.n_loops, ==, 3);
  g_assert_cmpuint (p.n_out, ==, 3);
  g_assert_cmpuint (p.n_reduce, ==, 8);
  g_assert_cmpint (p.stride[1][1], ==, 12);   /* reduced a, outer */
  g_assert_cmpint (p.stride[1][2], ==, 1);    /* reduced c, inner */
  g_assert_cmpint (p.stride[0][1], ==, 0);

  /* "abc->a": b and c fold into one dense reduced loop of 12 */
  g_assert_true (build ("abc->a", 1, ops2, TRUE, &p, &error));
  g_assert_cmpuint (p.n_loops, ==, 2);
  g_assert_cmpint (p.extent[1], ==, 12);
  g_assert_cmpint (p.stride[1][1], ==, 1);

  /* a full reduction gets one output loop of extent 1 */
  g_assert_true (build ("ab->", 1, ops3, TRUE, &p, &error));
  g_assert_cmpuint (p.n_free, ==, 1);
  g_assert_cmpint (p.extent[0], ==, 1);
  g_assert_cmpuint (p.n_loops, ==, 2);
  g_assert_cmpint (p.extent[1], ==, 12);
  g_assert_cmpuint (p.n_out, ==, 1);
}

static void
expect_build_error (const gchar *modes, guint n_inputs, const Op *ops, gboolean reduce,
                    const gchar *fragment)
{
  AtomrLoopPlan p;
  g_autoptr(GError) error = NULL;

  g_assert_false (build (modes, n_inputs, ops, reduce, &p, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, fragment) == NULL)
    g_error ("\"%s\": message \"%s\" lacks \"%s\"", modes, error->message, fragment);
}

static void
test_build_errors (void)
{
  Op mismatch[] = { { 2, { 3, 4 }, { 4, 1 } }, { 2, { 3, 5 }, { 5, 1 } } };
  Op rank[] = { { 2, { 3, 4 }, { 4, 1 } }, { 3, { 3, 4, 1 }, { 4, 1, 1 } } };
  Op zero[] = { { 2, { 3, 4 }, { 0, 1 } }, { 2, { 3, 4 }, { 4, 1 } } };
  Op drop[] = { { 1, { 3 }, { 1 } }, { 2, { 3, 4 }, { 4, 1 } } };
  Op absent[] = { { 2, { 3, 4 }, { 4, 1 } }, { 1, { 3 }, { 1 } } };
  Op red[] = { { 1, { 3 }, { 1 } }, { 2, { 3, 4 }, { 4, 1 } }, { 2, { 3, 5 }, { 5, 1 } } };

  expect_build_error ("ab->ab", 1, mismatch, FALSE, "mode 'b' has extent 5 in a but 4 in out");
  expect_build_error ("ab->ab", 1, rank, FALSE, "a has 3 dimensions but its modes \"ab\" name 2");
  expect_build_error ("ab->ab", 1, zero, FALSE, "out has stride 0 in mode 'a' of extent 3");
  expect_build_error ("ab->a", 1, drop, FALSE, "mode 'b' of a is not in the output");
  expect_build_error ("a->ab", 1, absent, FALSE, "output mode 'b' appears in no input");
  expect_build_error ("ab,ab->a", 2, red, TRUE, "reduced mode 'b' has extent 4 in a but 5 in b");
  /* a broadcast input may be huge: the reduced count must not wrap
   * (it did: 2^32 · 2^32 gave 0 elements, a sum of nothing) */
  {
    Op huge[] = { { 1, { 3 }, { 1 } },
                  { 3, { 3, G_GINT64_CONSTANT (1) << 32, G_GINT64_CONSTANT (1) << 32 }, { 1, 0, 0 } } };
    Op big[] = { { 1, { 3 }, { 1 } },
                 { 3, { 3, G_GINT64_CONSTANT (1) << 31, G_GINT64_CONSTANT (1) << 31 }, { 1, 0, 0 } } };
    expect_build_error ("abc->a", 1, huge, TRUE, "the reduced modes span more than 2^64 elements");
    expect_build_error ("abc->a", 1, big, TRUE, "3 outputs × 4611686018427387904 reduced elements exceed 2^63");
  }
}

/* Offsets from the plan agree with a naive walk of the modes for random
 * permutations of random padded, reversed layouts. */
static void
test_offsets_random (void)
{
  GRand *rand = g_rand_new_with_seed (1234);

  for (guint iter = 0; iter < 300; iter++)
    {
      guint n = g_rand_int_range (rand, 1, 7);
      gchar modes_in[9] = { 0 }, modes_out[9] = { 0 };
      guint perm[8];
      Op ops[2];
      gint64 pitch = 1;
      AtomrLoopPlan p;
      g_autofree gchar *spec = NULL;
      g_autoptr(GError) error = NULL;
      guint64 total = 1;

      for (guint d = 0; d < n; d++)
        {
          modes_in[d] = 'a' + d;
          perm[d] = d;
        }
      for (guint d = n; d > 1; d--)
        {
          guint j = g_rand_int_range (rand, 0, d);
          guint t = perm[d - 1];
          perm[d - 1] = perm[j];
          perm[j] = t;
        }
      ops[1].n = n;
      for (guint d = n; d-- > 0; )
        {
          ops[1].shape[d] = g_rand_int_range (rand, 1, 5);
          ops[1].strides[d] = pitch * (g_rand_boolean (rand) ? 1 : -1);
          pitch *= ops[1].shape[d] + (g_rand_boolean (rand) ? 1 : 0);
          total *= ops[1].shape[d];
        }
      ops[0].n = n;
      pitch = 1;
      for (guint d = n; d-- > 0; )
        {
          modes_out[d] = modes_in[perm[d]];
          ops[0].shape[d] = ops[1].shape[perm[d]];
          ops[0].strides[d] = pitch;
          pitch *= ops[0].shape[d];
        }
      spec = g_strdup_printf ("%s->%s", modes_in, modes_out);
      g_assert_true (build (spec, 1, ops, FALSE, &p, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (p.n_out, ==, total);
      /* the output is contiguous: linear index i must land on offset i,
       * and the input offset must be the naive one for that index */
      for (guint64 i = 0; i < total; i++)
        {
          gint64 off[3], rem = (gint64) i, want_a = 0;

          atomr_loop_plan_offsets (&p, i, 0, off);
          g_assert_cmpint (off[0], ==, (gint64) i);
          for (guint d = n; d-- > 0; )
            {
              gint64 c = rem % ops[0].shape[d];
              rem /= ops[0].shape[d];
              want_a += c * ops[1].strides[perm[d]];
            }
          g_assert_cmpint (off[1], ==, want_a);
        }
    }
  g_rand_free (rand);
}

static void
test_cache_lru (void)
{
  g_autoptr(AtomrPlanCache) cache = atomr_plan_cache_new (2, sizeof (gint));
  gint v, one = 1, two = 2, three = 3;
  guint64 hits, misses, evictions;
  guint size;

  g_assert_false (atomr_plan_cache_lookup (cache, "a", &v));
  atomr_plan_cache_insert (cache, "a", &one);
  atomr_plan_cache_insert (cache, "b", &two);
  g_assert_true (atomr_plan_cache_lookup (cache, "a", &v));
  g_assert_cmpint (v, ==, 1);
  atomr_plan_cache_insert (cache, "c", &three);    /* evicts b, the LRU */
  g_assert_false (atomr_plan_cache_lookup (cache, "b", &v));
  g_assert_true (atomr_plan_cache_lookup (cache, "a", &v));
  g_assert_true (atomr_plan_cache_lookup (cache, "c", &v));
  g_assert_cmpint (v, ==, 3);
  atomr_plan_cache_get_stats (cache, &hits, &misses, &evictions, &size);
  g_assert_cmpuint (hits, ==, 3);
  g_assert_cmpuint (misses, ==, 2);
  g_assert_cmpuint (evictions, ==, 1);
  g_assert_cmpuint (size, ==, 2);
  atomr_plan_cache_set_capacity (cache, 1);
  atomr_plan_cache_get_stats (cache, NULL, NULL, &evictions, &size);
  g_assert_cmpuint (size, ==, 1);
  g_assert_cmpuint (evictions, ==, 2);
  g_assert_true (atomr_plan_cache_lookup (cache, "c", &v));   /* the MRU stays */
}

static gboolean
gemm (const gchar *modes, const Op *ops, AtomrGemmPlan *g, gchar *why, gsize why_len)
{
  AtomrModeSpec spec;
  AtomrPlanOperand operands[3];
  AtomrLoopPlan loop;
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_mode_spec_parse ("t", modes, 2, &spec, NULL));
  for (guint o = 0; o < 3; o++)
    {
      operands[o].n_dims = ops[o].n;
      operands[o].shape = ops[o].shape;
      operands[o].strides = ops[o].strides;
    }
  /* what the actor checks first */
  g_assert_true (atomr_loop_plan_build ("t", &spec, operands, names3, TRUE, &loop, &error));
  g_assert_no_error (error);
  why[0] = '\0';
  return atomr_gemm_plan_build (&spec, operands, g, why, why_len);
}

/* Row-major operands: Dᵀ = Bᵀ·Aᵀ in column-major terms, no transposes. */
static void
test_gemm_row_major (void)
{
  Op ops[] = {
    { 2, { 5, 7 }, { 7, 1 } },   /* D m×n */
    { 2, { 5, 3 }, { 3, 1 } },   /* A m×k */
    { 2, { 3, 7 }, { 7, 1 } },   /* B k×n */
  };
  AtomrGemmPlan g;
  gchar why[96];

  g_assert_true (gemm ("mk,kn->mn", ops, &g, why, sizeof why));
  g_assert_true (g.swap);
  g_assert_false (g.trans_x);
  g_assert_false (g.trans_y);
  g_assert_cmpint (g.m, ==, 7);
  g_assert_cmpint (g.n, ==, 5);
  g_assert_cmpint (g.k, ==, 3);
  g_assert_cmpint (g.batch, ==, 1);
  g_assert_cmpint (g.ldx, ==, 7);
  g_assert_cmpint (g.ldy, ==, 3);
  g_assert_cmpint (g.ldc, ==, 7);

  /* column-major D (Fortran order): no swap; A stored k-major: op T */
  {
    Op cm[] = {
      { 2, { 5, 7 }, { 1, 5 } },
      { 2, { 5, 3 }, { 3, 1 } },
      { 2, { 3, 7 }, { 1, 4 } },    /* padded: ld 4 */
    };
    g_assert_true (gemm ("mk,kn->mn", cm, &g, why, sizeof why));
    g_assert_false (g.swap);
    g_assert_true (g.trans_x);
    g_assert_false (g.trans_y);
    g_assert_cmpint (g.m, ==, 5);
    g_assert_cmpint (g.n, ==, 7);
    g_assert_cmpint (g.ldx, ==, 3);
    g_assert_cmpint (g.ldy, ==, 4);
    g_assert_cmpint (g.ldc, ==, 5);
  }
}

/* The benchmark's "abcd,cdef->abef": M = ab, K = cd, N = ef folded. */
static void
test_gemm_fold_groups (void)
{
  Op ops[] = {
    { 4, { 4, 5, 8, 9 }, { 360, 72, 9, 1 } },
    { 4, { 4, 5, 6, 7 }, { 210, 42, 7, 1 } },
    { 4, { 6, 7, 8, 9 }, { 504, 72, 9, 1 } },
  };
  AtomrGemmPlan g;
  gchar why[96];

  g_assert_true (gemm ("abcd,cdef->abef", ops, &g, why, sizeof why));
  g_assert_true (g.swap);
  g_assert_cmpint (g.m, ==, 72);
  g_assert_cmpint (g.n, ==, 20);
  g_assert_cmpint (g.k, ==, 42);
  g_assert_cmpint (g.ldx, ==, 72);
  g_assert_cmpint (g.ldy, ==, 42);
  g_assert_cmpint (g.ldc, ==, 72);
  g_assert_false (g.trans_x);
  g_assert_false (g.trans_y);
}

/* Attention scores: batch bh folded, B used transposed. */
static void
test_gemm_batched (void)
{
  Op ops[] = {
    { 4, { 2, 3, 40, 56 }, { 6720, 2240, 56, 1 } },
    { 4, { 2, 3, 40, 32 }, { 3840, 1280, 32, 1 } },
    { 4, { 2, 3, 56, 32 }, { 5376, 1792, 32, 1 } },
  };
  AtomrGemmPlan g;
  gchar why[96];

  g_assert_true (gemm ("bhqd,bhkd->bhqk", ops, &g, why, sizeof why));
  g_assert_true (g.swap);
  g_assert_true (g.trans_x);
  g_assert_false (g.trans_y);
  g_assert_cmpint (g.m, ==, 56);
  g_assert_cmpint (g.n, ==, 40);
  g_assert_cmpint (g.k, ==, 32);
  g_assert_cmpint (g.batch, ==, 6);
  g_assert_cmpint (g.ldx, ==, 32);
  g_assert_cmpint (g.ldy, ==, 32);
  g_assert_cmpint (g.ldc, ==, 56);
  g_assert_cmpint (g.stride_x, ==, 1792);
  g_assert_cmpint (g.stride_y, ==, 1280);
  g_assert_cmpint (g.stride_c, ==, 2240);
}

static void
expect_no_gemm (const gchar *modes, const Op *ops, const gchar *fragment)
{
  AtomrGemmPlan g;
  gchar why[96];

  g_assert_false (gemm (modes, ops, &g, why, sizeof why));
  if (strstr (why, fragment) == NULL)
    g_error ("\"%s\": reason \"%s\" lacks \"%s\"", modes, why, fragment);
}

/* What the generated kernels keep, each with its reason. */
static void
test_gemm_refused (void)
{
  Op unfolded[] = {
    { 3, { 2, 3, 7 }, { 21, 7, 1 } },
    { 3, { 2, 3, 4 }, { 100, 4, 1 } },   /* a and b do not fold in A */
    { 2, { 4, 7 }, { 7, 1 } },
  };
  Op negative[] = {
    { 2, { 5, 7 }, { 7, 1 } },
    { 2, { 5, 3 }, { -3, 1 } },
    { 2, { 3, 7 }, { 7, 1 } },
  };
  Op no_unit_d[] = {
    { 2, { 5, 7 }, { 14, 2 } },
    { 2, { 5, 3 }, { 3, 1 } },
    { 2, { 3, 7 }, { 7, 1 } },
  };
  Op no_unit_a[] = {
    { 2, { 5, 7 }, { 7, 1 } },
    { 2, { 5, 3 }, { 6, 2 } },
    { 2, { 3, 7 }, { 7, 1 } },
  };
  Op alone[] = {
    { 1, { 5 }, { 1 } },
    { 2, { 5, 3 }, { 3, 1 } },
    { 1, { 4 }, { 1 } },
  };
  Op broadcast[] = {
    { 2, { 5, 7 }, { 7, 1 } },
    { 2, { 1, 3 }, { 3, 1 } },   /* m broadcast from extent 1 */
    { 2, { 3, 7 }, { 7, 1 } },
  };
  Op outer[] = {
    { 2, { 5, 7 }, { 7, 1 } },
    { 1, { 5 }, { 1 } },
    { 1, { 7 }, { 1 } },
  };
  Op dot[] = {
    { 1, { 6 }, { 1 } },
    { 2, { 6, 9 }, { 9, 1 } },
    { 2, { 6, 9 }, { 9, 1 } },
  };
  Op empty[] = {
    { 2, { 5, 7 }, { 7, 1 } },
    { 2, { 5, 0 }, { 1, 1 } },
    { 2, { 0, 7 }, { 7, 1 } },
  };

  expect_no_gemm ("abk,kn->abn", unfolded, "M modes \"ab\" do not fold");
  expect_no_gemm ("mk,kn->mn", negative, "negative stride in a");
  expect_no_gemm ("mk,kn->mn", no_unit_d, "d has no unit stride");
  expect_no_gemm ("mk,kn->mn", no_unit_a, "a has no unit stride");
  expect_no_gemm ("mk,j->m", alone, "'k' is in a alone");
  expect_no_gemm ("mk,kn->mn", broadcast, "'m' is in d alone");
  expect_no_gemm ("m,n->mn", outer, "outer product");
  expect_no_gemm ("bk,bk->b", dot, "dot products");
  expect_no_gemm ("mk,kn->mn", empty, "'k' is empty");
}

static gboolean
gemm_packed (const gchar *modes, const Op *ops, AtomrGemmPlan *g, AtomrGemmPack *pk, gchar *why, gsize why_len)
{
  AtomrModeSpec spec;
  AtomrPlanOperand operands[3];

  g_assert_true (atomr_mode_spec_parse ("t", modes, 2, &spec, NULL));
  for (guint o = 0; o < 3; o++)
    {
      operands[o].n_dims = ops[o].n;
      operands[o].shape = ops[o].shape;
      operands[o].strides = ops[o].strides;
    }
  why[0] = '\0';
  return atomr_gemm_plan_build_packed (&spec, operands, g, pk, why, why_len);
}

/* Inputs that do not fold (or run backwards) are packed into GEMM order;
 * what packing cannot fix keeps its reason. */
static void
test_gemm_packed (void)
{
  Op unfolded[] = {
    { 3, { 2, 3, 7 }, { 21, 7, 1 } },
    { 3, { 2, 3, 4 }, { 100, 4, 1 } },
    { 2, { 4, 7 }, { 7, 1 } },
  };
  Op reversed_b[] = {
    { 2, { 5, 7 }, { 7, 1 } },
    { 2, { 5, 3 }, { 3, 1 } },
    { 2, { 3, 7 }, { -7, 1 } },
  };
  Op batch_mixed[] = {   /* "bmk,kbn->bmn": B's batch mode between K and N */
    { 3, { 2, 5, 6 }, { 30, 6, 1 } },
    { 3, { 2, 5, 4 }, { 20, 4, 1 } },
    { 3, { 4, 2, 6 }, { 12, 6, 1 } },
  };
  Op no_unit_d[] = {
    { 2, { 5, 7 }, { 14, 2 } },
    { 2, { 5, 3 }, { 3, 1 } },
    { 2, { 3, 7 }, { 7, 1 } },
  };
  AtomrGemmPlan g;
  AtomrGemmPack pk;
  gchar why[96];

  g_assert_true (gemm_packed ("abk,kn->abn", unfolded, &g, &pk, why, sizeof why));
  g_assert_true (pk.pack_a);
  g_assert_false (pk.pack_b);
  g_assert_cmpstr (pk.modes_a, ==, "abk");
  g_assert_cmpint (pk.strides_a[0], ==, 12);
  g_assert_cmpint (pk.strides_a[1], ==, 4);
  g_assert_cmpint (pk.strides_a[2], ==, 1);
  g_assert_true (g.swap);
  g_assert_cmpint (g.m, ==, 7);
  g_assert_cmpint (g.n, ==, 6);
  g_assert_cmpint (g.k, ==, 4);
  g_assert_cmpint (g.ldy, ==, 4);

  g_assert_true (gemm_packed ("mk,kn->mn", reversed_b, &g, &pk, why, sizeof why));
  g_assert_false (pk.pack_a);
  g_assert_true (pk.pack_b);
  g_assert_cmpstr (pk.modes_b, ==, "kn");
  g_assert_cmpint (pk.strides_b[0], ==, 7);

  /* strides that already allow a GEMM: no copy (B's batch stride is 6) */
  g_assert_true (gemm_packed ("bmk,kbn->bmn", batch_mixed, &g, &pk, why, sizeof why));
  g_assert_false (pk.pack_a);
  g_assert_false (pk.pack_b);
  g_assert_cmpint (g.batch, ==, 2);
  g_assert_cmpint (g.stride_c, ==, 30);

  g_assert_false (gemm_packed ("mk,kn->mn", no_unit_d, &g, &pk, why, sizeof why));
  g_assert_nonnull (strstr (why, "d has no unit stride"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor-plan/parse/ok", test_parse_ok);
  g_test_add_func ("/tensor-plan/parse/errors", test_parse_errors);
  g_test_add_func ("/tensor-plan/fold/copy", test_fold_copy);
  g_test_add_func ("/tensor-plan/fold/transpose", test_fold_transpose);
  g_test_add_func ("/tensor-plan/fold/negative-strides", test_negative_strides_fold);
  g_test_add_func ("/tensor-plan/order/output-strides", test_loop_order);
  g_test_add_func ("/tensor-plan/broadcast", test_broadcast);
  g_test_add_func ("/tensor-plan/extent-one", test_extent_one_dropped);
  g_test_add_func ("/tensor-plan/reduce", test_reduce_plan);
  g_test_add_func ("/tensor-plan/errors", test_build_errors);
  g_test_add_func ("/tensor-plan/offsets-random", test_offsets_random);
  g_test_add_func ("/tensor-plan/cache-lru", test_cache_lru);
  g_test_add_func ("/tensor-plan/gemm/row-major", test_gemm_row_major);
  g_test_add_func ("/tensor-plan/gemm/fold-groups", test_gemm_fold_groups);
  g_test_add_func ("/tensor-plan/gemm/batched", test_gemm_batched);
  g_test_add_func ("/tensor-plan/gemm/refused", test_gemm_refused);
  g_test_add_func ("/tensor-plan/gemm/packed", test_gemm_packed);
  return g_test_run ();
}
