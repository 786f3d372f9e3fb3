/* atomr-fft-plan-private.h — the fields of an FFT description
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-fft-plan.h"

G_BEGIN_DECLS

struct _AtomrFftPlan {
  gatomicrefcount ref;
  gboolean        advanced;     /* described with embeddings (cosmetic) */
  gchar          *description;  /* atomic, made on first use */
  guint64         input_elements;   /* derived from the key, checked */
  guint64         output_elements;
  guint           hash;         /* of the key, set when the plan is made */
  /* Everything below is the cache key (hashed and compared bytewise), so
   * unused dimensions stay zero. */
  struct {
    gint32  kind;
    gint32  precision;
    gint32  rank;
    gint32  pad;
    gint64  n[3];
    gint64  batch;
    gint64  inembed[3];
    gint64  istride;
    gint64  idist;
    gint64  onembed[3];
    gint64  ostride;
    gint64  odist;
  } key;
};

/* The logical extent of each dimension on the input / output side (the
 * complex side of R2C and C2R keeps n/2 + 1 in the last dimension). */
void atomr_fft_plan_get_input_dims  (AtomrFftPlan *plan,
                                     gint64        dims[3]);
void atomr_fft_plan_get_output_dims (AtomrFftPlan *plan,
                                     gint64        dims[3]);

/* f16 or bf16: made with cufftXtMakePlanMany, run with cufftXtExec; the
 * complex side is a buffer of the same half dtype holding (re, im) pairs. */
gboolean atomr_fft_plan_is_half (AtomrFftPlan *plan);

/* atomr_fft_plan_to_string(), made once per plan: for operation details. */
const gchar *atomr_fft_plan_get_description (AtomrFftPlan *plan);

G_END_DECLS
