/* inspector-demo-workload.h — the GPU part of the demo, without any widget
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>

G_BEGIN_DECLS

#define INSPECTOR_DEMO_ELEMENTS (1u << 20)   /* also 1024 × 1024 for the GEMM */
#define INSPECTOR_DEMO_FFT_SIZE (1u << 18)

gchar   *inspector_demo_kernel_source   (const gchar      *file);
void     inspector_demo_workload_run_async  (AtomrNvrtcActor  *nvrtc,
                                             AtomrActor       *upload_actor,
                                             AtomrActor       *copy_actor,
                                             AtomrModule      *saxpy,
                                             AtomrModule      *reduce,
                                             AtomrModule      *scale,
                                             AtomrBlasActor   *blas,
                                             AtomrFftActor    *fft,
                                             AtomrRngActor    *rng,
                                             guint             rounds,
                                             GCancellable     *cancellable,
                                             GAsyncReadyCallback callback,
                                             gpointer          user_data);
gboolean inspector_demo_workload_run_finish (GAsyncResult     *result,
                                             gdouble          *last_sum,
                                             GError          **error);
gdouble  inspector_demo_workload_expected_sum (guint           rounds);

G_END_DECLS
