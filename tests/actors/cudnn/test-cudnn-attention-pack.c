/* test-cudnn-attention-pack.c — the variant packs of the attention graphs,
 * without cuDNN
 *
 * cuDNN answers a variant pack that does not hold exactly the non-virtual
 * tensors of the executed graph with CUDNN_STATUS_BAD_PARAM_NULL_POINTER
 * at execution and names nothing (issue 12: the dropout backward pass put
 * the unused "one" scalar in its pack).  These cases build every graph
 * form dry (no cuDNN call) and check that the pack is exactly what the
 * graph's operations use, and that a tensor nothing supplies is an error
 * naming it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>

#include "actors/cudnn/atomr-cudnn-attention-private.h"

/* The graph's tensors are the pack's, in order, and each is listed once. */
static void
assert_pack_is_graph (const gchar *const *needed,
                      const gchar *const *packed)
{
  guint n = g_strv_length ((GStrv) needed);

  g_assert_cmpuint (n, >, 0);
  g_assert_cmpuint (g_strv_length ((GStrv) packed), ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpstr (packed[i], ==, needed[i]);
      g_assert_cmpstr (needed[i], !=, "virtual");
      for (guint j = 0; j < i; j++)
        g_assert_cmpstr (needed[i], !=, needed[j]);
    }
}

static void
assert_same_set (const gchar *const *got,
                 const gchar *const *want)
{
  g_autofree gchar *got_s = g_strjoinv (", ", (GStrv) got);
  g_autofree gchar *want_s = g_strjoinv (", ", (GStrv) want);

  g_test_message ("pack: %s", got_s);
  if (g_strv_length ((GStrv) got) != g_strv_length ((GStrv) want))
    g_error ("the pack is %s, expected %s", got_s, want_s);
  for (guint i = 0; want[i] != NULL; i++)
    if (!g_strv_contains (got, want[i]))
      g_error ("the pack is %s, expected %s (no %s)", got_s, want_s, want[i]);
}

/* The regression of issue 12: the dropout backward graph's pack holds the
 * RNG's seed and offset, both dropout scalars and no "one". */
static void
test_dropout_backward (void)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) needed = NULL, packed = NULL;
  const gchar *const want[] = {
    "q", "k", "v", "o", "d_o", "stats", "dq", "dk", "dv", "scale", "seed", "offset", "dropout-scale",
    "dropout-scale-inv", "softmax-sum", "dq-accum", NULL,
  };

  g_assert_true (atomr_cudnn_sdpa_pack_check_internal (TRUE, FALSE, FALSE, TRUE, 0.2, NULL, &needed,
                                                       &packed, &error));
  g_assert_no_error (error);
  assert_pack_is_graph ((const gchar *const *) needed, (const gchar *const *) packed);
  assert_same_set ((const gchar *const *) packed, want);
  g_assert_false (g_strv_contains ((const gchar *const *) packed, "one"));
  g_assert_false (g_strv_contains ((const gchar *const *) packed, "lowest"));
}

/* The plain backward graph scales softmax_sum by "one" (and has no RNG);
 * masks add "lowest" and, with padding, the lengths. */
static void
test_backward_forms (void)
{
  struct {
    gboolean causal, padding;
    const gchar *const want[20];
  } cases[] = {
    { FALSE, FALSE, { "q", "k", "v", "o", "d_o", "stats", "dq", "dk", "dv", "scale", "one", "softmax-sum",
                      "dq-accum", NULL } },
    { TRUE, FALSE, { "q", "k", "v", "o", "d_o", "stats", "dq", "dk", "dv", "scale", "one", "softmax-sum",
                     "dq-accum", "lowest", NULL } },
    { TRUE, TRUE, { "q", "k", "v", "o", "d_o", "stats", "dq", "dk", "dv", "scale", "one", "softmax-sum",
                    "dq-accum", "lowest", "q-lengths", "kv-lengths", NULL } },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_auto(GStrv) needed = NULL, packed = NULL;

      g_assert_true (atomr_cudnn_sdpa_pack_check_internal (TRUE, cases[i].causal, cases[i].padding, TRUE, 0,
                                                           NULL, &needed, &packed, &error));
      g_assert_no_error (error);
      assert_pack_is_graph ((const gchar *const *) needed, (const gchar *const *) packed);
      assert_same_set ((const gchar *const *) packed, cases[i].want);
    }
}

/* Inference has no "stats" in its pack; dropout adds the RNG's tensors
 * and the 1/(1 − p) scale, not its inverse. */
static void
test_forward_forms (void)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) needed = NULL, packed = NULL, needed2 = NULL, packed2 = NULL;
  const gchar *const plain[] = { "q", "k", "v", "o", "scale", NULL };
  const gchar *const drop[] = { "q", "k", "v", "o", "stats", "scale", "seed", "offset", "dropout-scale", NULL };

  g_assert_true (atomr_cudnn_sdpa_pack_check_internal (FALSE, FALSE, FALSE, FALSE, 0, NULL, &needed, &packed,
                                                       &error));
  g_assert_no_error (error);
  assert_same_set ((const gchar *const *) packed, plain);
  g_assert_true (atomr_cudnn_sdpa_pack_check_internal (FALSE, FALSE, FALSE, TRUE, 0.35, NULL, &needed2,
                                                       &packed2, &error));
  g_assert_no_error (error);
  assert_pack_is_graph ((const gchar *const *) needed2, (const gchar *const *) packed2);
  assert_same_set ((const gchar *const *) packed2, drop);
}

/* Every form: the call supplies all the graph uses, and the pack is the
 * graph's. */
static void
test_all_forms (void)
{
  for (guint bits = 0; bits < 32; bits++)
    {
      gboolean backward = bits & 1, causal = bits & 2, padding = bits & 4, stats = bits & 8;
      gdouble dropout = bits & 16 ? 0.1 : 0;
      g_autoptr(GError) error = NULL;
      g_auto(GStrv) needed = NULL, packed = NULL;

      g_assert_true (atomr_cudnn_sdpa_pack_check_internal (backward, causal, padding, stats, dropout, NULL,
                                                           &needed, &packed, &error));
      g_assert_no_error (error);
      assert_pack_is_graph ((const gchar *const *) needed, (const gchar *const *) packed);
    }
}

/* A tensor the graph uses that the call does not supply is an error
 * naming it and its uid, not a pack cuDNN refuses. */
static void
test_missing_is_named (void)
{
  const gchar *const names[] = { "seed", "offset", "dropout-scale-inv", "softmax-sum", "d_o" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GError) error = NULL;
      g_auto(GStrv) needed = NULL, packed = NULL;
      g_autofree gchar *what = g_strdup_printf ("the tensor %s (uid ", names[i]);

      g_assert_false (atomr_cudnn_sdpa_pack_check_internal (TRUE, TRUE, FALSE, TRUE, 0.2, names[i], &needed,
                                                            &packed, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, "sdpa-bwd"));
      g_assert_nonnull (strstr (error->message, what));
      g_assert_null (needed);
      g_assert_null (packed);
    }
}

/* How the autotune of attention plans picks among the timed candidates:
 * the fastest; the first of equals (the heuristics' order); a candidate
 * that did not run (negative time) never, even when it is the first;
 * none at all when none ran. */
static void
test_autotune_pick (void)
{
  const gdouble fastest_last[] = { 0.9, 0.8, 0.7 };
  const gdouble tie[] = { 0.8, 0.5, 0.5, 0.6 };
  const gdouble first_failed[] = { -1, 0.9, 1.2 };
  const gdouble all_failed[] = { -1, -1 };
  const gdouble one[] = { 2.5 };

  g_assert_cmpint (atomr_cudnn_autotune_pick_internal (fastest_last, 3), ==, 2);
  g_assert_cmpint (atomr_cudnn_autotune_pick_internal (tie, 4), ==, 1);
  g_assert_cmpint (atomr_cudnn_autotune_pick_internal (first_failed, 3), ==, 1);
  g_assert_cmpint (atomr_cudnn_autotune_pick_internal (all_failed, 2), ==, -1);
  g_assert_cmpint (atomr_cudnn_autotune_pick_internal (one, 1), ==, 0);
  g_assert_cmpint (atomr_cudnn_autotune_pick_internal (one, 0), ==, -1);
}

/* Without an attention plan built (a bare actor, no device needed: the
 * host test device), the last-plan description is NULL. */
static void
test_no_last_plan (void)
{
  g_autoptr(AtomrCudnnActor) actor = g_object_new (ATOMR_TYPE_CUDNN_ACTOR, NULL);

  g_assert_null (atomr_cudnn_sdpa_dup_last_plan_internal (actor));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cudnn-attention-pack/dropout-backward", test_dropout_backward);
  g_test_add_func ("/cudnn-attention-pack/backward-forms", test_backward_forms);
  g_test_add_func ("/cudnn-attention-pack/forward-forms", test_forward_forms);
  g_test_add_func ("/cudnn-attention-pack/all-forms", test_all_forms);
  g_test_add_func ("/cudnn-attention-pack/missing-is-named", test_missing_is_named);
  g_test_add_func ("/cudnn-attention-pack/autotune-pick", test_autotune_pick);
  g_test_add_func ("/cudnn-attention-pack/no-last-plan", test_no_last_plan);
  return g_test_run ();
}
