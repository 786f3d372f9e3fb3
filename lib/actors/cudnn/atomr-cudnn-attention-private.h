/* atomr-cudnn-attention-private.h — checks of the attention graphs that
 * run without cuDNN (tests)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "actors/cudnn/atomr-cudnn-actor.h"

G_BEGIN_DECLS

/* Builds the operation graph of an attention call (bf16, batch 2, 2
 * heads, sequence 128, head dimension 64) without calling cuDNN (a dry
 * graph: fake descriptors) and the variant pack sdpa_enqueue would pass
 * for it, with fake non-NULL pointers.  @withhold names a tensor (as the
 * error messages do: "seed", "dropout-scale-inv", "q"...) to leave out
 * of what the call supplies, or is %NULL.  On success *@needed holds the
 * names of the non-virtual tensors the graph's operations use and
 * *@packed those of the pack, in pack order; on failure (a tensor the
 * graph uses that nothing supplies) @error names it.  Any thread. */
gboolean atomr_cudnn_sdpa_pack_check_internal (gboolean      backward,
                                               gboolean      causal,
                                               gboolean      padding,
                                               gboolean      has_stats,
                                               gdouble       dropout,
                                               const gchar  *withhold,
                                               GStrv        *needed,
                                               GStrv        *packed,
                                               GError      **error);

/* The index of the fastest of @n timings in milliseconds (a negative
 * one: that candidate did not run), the first of equal ones (the
 * heuristics' order decides ties), or -1 when none ran: how the autotune
 * of attention plans picks.  Any thread. */
gint     atomr_cudnn_autotune_pick_internal  (const gdouble *ms,
                                              guint          n);

/* A description of the attention plan @self built last ("sdpa-forward:
 * engine 8, configuration 0 of heuristics mode A, ..."; with the autotune
 * property, how many configurations were timed and the fastest time), or
 * %NULL before the first.  Free with g_free().  Any thread. */
gchar   *atomr_cudnn_sdpa_dup_last_plan_internal (AtomrCudnnActor *self);

G_END_DECLS
