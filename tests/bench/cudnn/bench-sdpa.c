/* bench-sdpa.c — scaled dot-product attention through AtomrCudnnActor
 *
 * B = 8, H = 16, D = 128, S = 1024 and 4096, bf16, causal, BHSD: the
 * forward pass (with the statistics a training step keeps) and forward +
 * backward, each as ITERS calls pipelined (all submitted before waiting),
 * timed on the host from the first submit to the last completion, best of
 * REPS.  Prints µs per call and TFLOP/s (causal: half the 4·B·H·S²·D of
 * the two forward matmuls; the backward pass counts 2.5 times the
 * forward).  --autotune sets the actor's autotune property (each plan
 * is the fastest of the heuristics' first engine configurations, timed
 * once); either way each row is followed by the engine and configuration
 * the plan it built runs ("# plan: ...").  --json FILE writes the figures for peer_torch_sdpa.py, which
 * times torch.nn.functional.scaled_dot_product_attention (cuDNN backend)
 * on the same GPU and prints the ratios.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>

#include <atomr.h>

#include "actors/cudnn/atomr-cudnn-attention-private.h"

#define REPS  5
/* 100 calls a batch (as bench-cudnn): the fixed cost of a batch (the
 * first submission, the last completion reaching the main loop: tens of
 * µs) is then about 1 µs a call instead of 5, so the rows measure
 * throughput; peer_torch_sdpa.py times the same batch. */
#define ITERS 100

enum { B = 8, H = 16, D = 128 };

typedef struct {
  AtomrCudnnActor *actor;
  AtomrTensor     *q, *k, *v, *o, *stats, *d_o, *dq, *dk, *dv;
  gboolean         backward;
  guint            done, failed, expected;
} Pipe;

static void
on_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Pipe *p = user_data;
  g_autoptr(GError) error = NULL;
  gboolean ok;

  /* the forward and backward finish functions check their own tags */
  if (g_async_result_is_tagged (result, atomr_cudnn_actor_sdpa_forward_async))
    ok = atomr_cudnn_actor_sdpa_forward_finish (p->actor, result, &error);
  else
    ok = atomr_cudnn_actor_sdpa_backward_finish (p->actor, result, &error);
  if (!ok && p->failed++ == 0)
    g_printerr ("bench-sdpa: %s\n", error->message);
  p->done++;
}

static gdouble
run (Pipe *p, guint iters)
{
  gdouble t0 = g_get_monotonic_time ();

  p->done = 0;
  p->expected = 0;
  for (guint i = 0; i < iters; i++)
    {
      atomr_cudnn_actor_sdpa_forward_async (p->actor, p->q, p->k, p->v, 1.0 / sqrt (D), TRUE, p->o,
                                            p->stats, NULL, on_done, p);
      p->expected++;
      if (p->backward)
        {
          atomr_cudnn_actor_sdpa_backward_async (p->actor, p->q, p->k, p->v, p->o, p->d_o, p->stats,
                                                 1.0 / sqrt (D), TRUE, p->dq, p->dk, p->dv, NULL,
                                                 on_done, p);
          p->expected++;
        }
    }
  while (p->done < p->expected)
    g_main_context_iteration (NULL, TRUE);
  return (g_get_monotonic_time () - t0) / 1e6;
}

static AtomrTensor *
filled (AtomrDevice *device, AtomrDtype dtype, gint64 s, gint64 last, gdouble value)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { B, H, s, last };
  AtomrTensor *t = atomr_tensor_empty (device, dtype, shape, 4, &error);

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (t), value, NULL, &error));
  g_assert_no_error (error);
  return t;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrCudnnActor) actor = NULL;
  g_autoptr(GString) json = g_string_new ("{\n");
  const gchar *json_path = NULL;
  const gint64 lengths[] = { 1024, 4096 };
  gboolean first = TRUE, autotune = FALSE;

  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--json") && i + 1 < argc)
      json_path = argv[++i];
    else if (g_str_equal (argv[i], "--autotune"))
      autotune = TRUE;
    else
      {
        g_printerr ("usage: bench-sdpa [--autotune] [--json FILE]\n");
        return 2;
      }
  if (device == NULL)
    {
      g_print ("bench-sdpa: no CUDA device (%s)\n", error->message);
      return 0;
    }
  actor = atomr_cudnn_actor_new (device, &error);
  if (actor == NULL)
    {
      g_print ("bench-sdpa: no cuDNN (%s)\n", error->message);
      return 0;
    }

  atomr_cudnn_actor_set_autotune (actor, autotune);
  g_print ("# SDPA: B=%d H=%d D=%d bf16 causal BHSD, %s; %d calls pipelined, best of %d; plans by %s\n",
           B, H, D, atomr_device_get_name (device), ITERS, REPS,
           autotune ? "autotune (fastest of the heuristics' first configurations)" : "heuristics (mode A, first that builds)");
  g_print ("%-18s | %10s %9s\n", "pass", "atomr TF/s", "atomr us");
  for (guint l = 0; l < G_N_ELEMENTS (lengths); l++)
    {
      gint64 s = lengths[l];
      gdouble fwd_flops = 4.0 * B * H * s * s * D / 2;
      Pipe p = { 0 };

      p.actor = actor;
      p.q = filled (device, ATOMR_DTYPE_BF16, s, D, 0.01);
      p.k = filled (device, ATOMR_DTYPE_BF16, s, D, 0.01);
      p.v = filled (device, ATOMR_DTYPE_BF16, s, D, 0.01);
      p.o = filled (device, ATOMR_DTYPE_BF16, s, D, 0);
      p.stats = filled (device, ATOMR_DTYPE_F32, s, 1, 0);
      p.d_o = filled (device, ATOMR_DTYPE_BF16, s, D, 0.01);
      p.dq = filled (device, ATOMR_DTYPE_BF16, s, D, 0);
      p.dk = filled (device, ATOMR_DTYPE_BF16, s, D, 0);
      p.dv = filled (device, ATOMR_DTYPE_BF16, s, D, 0);
      for (guint pass = 0; pass < 2; pass++)
        {
          g_autofree gchar *name = g_strdup_printf ("%s-%" G_GINT64_FORMAT, pass ? "sdpa-fwd-bwd" : "sdpa-fwd", s);
          gdouble flops = pass ? 3.5 * fwd_flops : fwd_flops;
          gdouble best = G_MAXDOUBLE;
          g_autofree gchar *plan = NULL;

          p.backward = pass == 1;
          run (&p, 3);                       /* plans, workspace, clocks */
          /* the plan this pass built last: the forward one, or the
           * backward one (the forward plan is the row before's) */
          plan = atomr_cudnn_sdpa_dup_last_plan_internal (actor);
          for (guint r = 0; r < REPS; r++)
            best = MIN (best, run (&p, ITERS));
          if (p.failed)
            {
              g_print ("%-18s | failed (%u calls)\n", name, p.failed);
              p.failed = 0;
              continue;
            }
          g_print ("%-18s | %10.1f %9.1f\n", name, flops * ITERS / best / 1e12, best / ITERS * 1e6);
          g_print ("#   plan: %s\n", plan ? plan : "(none)");
          g_string_append_printf (json, "%s  \"%s\": {\"atomr_us\": %.3f}", first ? "" : ",\n", name,
                                  best / ITERS * 1e6);
          first = FALSE;
        }
      g_clear_object (&p.q);
      g_clear_object (&p.k);
      g_clear_object (&p.v);
      g_clear_object (&p.o);
      g_clear_object (&p.stats);
      g_clear_object (&p.d_o);
      g_clear_object (&p.dq);
      g_clear_object (&p.dk);
      g_clear_object (&p.dv);
    }
  g_string_append (json, "\n}\n");
  g_print ("# actor: workspace %" G_GUINT64_FORMAT " bytes, plan cache %u entries, %" G_GUINT64_FORMAT
           " hits, %" G_GUINT64_FORMAT " misses\n", atomr_cudnn_actor_get_workspace_size (actor),
           atomr_cudnn_actor_get_cache_size (actor), atomr_cudnn_actor_get_cache_hits (actor),
           atomr_cudnn_actor_get_cache_misses (actor));
  if (json_path && !g_file_set_contents (json_path, json->str, -1, &error))
    g_printerr ("bench-sdpa: %s\n", error->message);
  return 0;
}
