/* atomr-fft-plan.h — the description of a cuFFT transform
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <glib-object.h>

#include "core/atomr-dtype.h"

G_BEGIN_DECLS

/**
 * AtomrFftKind:
 * @ATOMR_FFT_C2C: complex to complex (C2C in f32, Z2Z in f64).
 * @ATOMR_FFT_R2C: real to complex, forward only (R2C in f32, D2Z in f64);
 *   the output keeps the n/2 + 1 non-redundant coefficients of the last
 *   dimension.
 * @ATOMR_FFT_C2R: complex to real, inverse only (C2R in f32, Z2D in f64).
 *
 * The kind of an FFT.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_FFT_C2C,
  ATOMR_FFT_R2C,
  ATOMR_FFT_C2R,
} AtomrFftKind;

/**
 * AtomrFftDirection:
 * @ATOMR_FFT_FORWARD: exp(-2πi jk/n); the only direction of R2C.
 * @ATOMR_FFT_INVERSE: exp(+2πi jk/n), unnormalised (a forward and inverse
 *   round trip scales by the transform size); the only direction of C2R.
 *
 * The sign of the exponent of an FFT.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_FFT_FORWARD,
  ATOMR_FFT_INVERSE,
} AtomrFftDirection;

/**
 * AtomrFftNormalization:
 * @ATOMR_FFT_NORM_NONE: neither direction is scaled (cuFFT's own
 *   convention: a round trip multiplies by the transform size N).
 * @ATOMR_FFT_NORM_BACKWARD: the inverse is scaled by 1/N (NumPy's and
 *   PyTorch's default, "backward").
 * @ATOMR_FFT_NORM_FORWARD: the forward transform is scaled by 1/N.
 * @ATOMR_FFT_NORM_ORTHO: both directions are scaled by 1/√N (unitary).
 *
 * How [method@Atomr.FftActor.execute_normalized_async] scales a transform; N is
 * the product of the transform sizes of one batch member.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_FFT_NORM_NONE,
  ATOMR_FFT_NORM_BACKWARD,
  ATOMR_FFT_NORM_FORWARD,
  ATOMR_FFT_NORM_ORTHO,
} AtomrFftNormalization;

#define ATOMR_TYPE_FFT_PLAN (atomr_fft_plan_get_type ())

/**
 * AtomrFftPlan:
 *
 * An immutable description of a batched 1-, 2- or 3-D FFT: kind,
 * precision, dimensions, batch and the memory layout of input and output
 * (cuFFT's "advanced layout": embeddings, strides, distances).  A plan is
 * only a description: [class@Atomr.FftActor] turns it into a cuFFT plan bound to
 * its stream and keeps that in its plan cache, so passing equal plans costs
 * one hash lookup.
 *
 * Dimensions are given slowest first (row-major, as cuFFT takes them);
 * elements count in the dtype of each side (real or complex).
 *
 * Since: 0.1
 */
typedef struct _AtomrFftPlan AtomrFftPlan;

ATOMR_AVAILABLE_IN_ALL
GType         atomr_fft_plan_get_type   (void) G_GNUC_CONST;

ATOMR_AVAILABLE_IN_ALL
AtomrFftPlan *atomr_fft_plan_new_1d     (AtomrFftKind   kind,
                                         AtomrDtype     precision,
                                         gint64         nx,
                                         gint64         batch,
                                         GError       **error);
ATOMR_AVAILABLE_IN_ALL
AtomrFftPlan *atomr_fft_plan_new_2d     (AtomrFftKind   kind,
                                         AtomrDtype     precision,
                                         gint64         nx,
                                         gint64         ny,
                                         gint64         batch,
                                         GError       **error);
ATOMR_AVAILABLE_IN_ALL
AtomrFftPlan *atomr_fft_plan_new_3d     (AtomrFftKind   kind,
                                         AtomrDtype     precision,
                                         gint64         nx,
                                         gint64         ny,
                                         gint64         nz,
                                         gint64         batch,
                                         GError       **error);
ATOMR_AVAILABLE_IN_ALL
AtomrFftPlan *atomr_fft_plan_new_many   (AtomrFftKind   kind,
                                         AtomrDtype     precision,
                                         const gint64  *n,
                                         guint          rank,
                                         const gint64  *inembed,
                                         guint          n_inembed,
                                         gint64         istride,
                                         gint64         idist,
                                         const gint64  *onembed,
                                         guint          n_onembed,
                                         gint64         ostride,
                                         gint64         odist,
                                         gint64         batch,
                                         GError       **error);

ATOMR_AVAILABLE_IN_ALL
AtomrFftPlan *atomr_fft_plan_ref        (AtomrFftPlan  *plan);
ATOMR_AVAILABLE_IN_ALL
void          atomr_fft_plan_unref      (AtomrFftPlan  *plan);

ATOMR_AVAILABLE_IN_ALL
AtomrFftKind  atomr_fft_plan_get_kind         (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype    atomr_fft_plan_get_precision    (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
guint         atomr_fft_plan_get_rank         (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
gint64        atomr_fft_plan_get_size         (AtomrFftPlan *plan,
                                               guint         dim);
ATOMR_AVAILABLE_IN_ALL
gint64        atomr_fft_plan_get_batch        (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype    atomr_fft_plan_get_input_dtype  (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype    atomr_fft_plan_get_output_dtype (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_fft_plan_get_input_elements  (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_fft_plan_get_output_elements (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
gchar        *atomr_fft_plan_to_string        (AtomrFftPlan *plan);
ATOMR_AVAILABLE_IN_ALL
guint         atomr_fft_plan_hash             (gconstpointer plan);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_fft_plan_equal            (gconstpointer a,
                                               gconstpointer b);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrFftPlan, atomr_fft_plan_unref)

G_END_DECLS
