/* atomr-lt-plan-private.h — a cuBLASLt matmul plan: descriptor, layouts
 * and the heuristic's first algorithm
 *
 * The BLAS actor (its real gemms) and the BlasLt actor build the same
 * objects for a matmul D = alpha·op(A)·op(B) + beta·C, column-major, with
 * D laid out as C: a matmul descriptor carrying the transposes, one layout
 * for each of A, B and C, then one algorithm from
 * cublasLtMatmulAlgoGetHeuristic.
 * Each keeps its own cache and key around an AtomrLtPlan; the BlasLt actor
 * sets its extra descriptor and layout attributes (epilogue, batches,
 * pointers) between atomr_lt_plan_build() and atomr_lt_plan_find_algo().
 *
 * Nothing here makes a GError: each call returns the first cuBLASLt status
 * that was not success and names the call that returned it, so that the
 * BlasLt actor reports it as before and the BLAS actor, which falls back
 * to the classic routines, need not.  Every object is a host object: a
 * plan may be cleared whatever the context and whatever is in flight
 * (cuBLASLt copies what it needs at enqueue).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "atomr-cublasLt-table-private.h"

G_BEGIN_DECLS

typedef struct {
  cublasLtMatmulDesc_t   desc;
  cublasLtMatrixLayout_t la, lb, lc;   /* C's layout serves D too */
  cublasLtMatmulAlgo_t   algo;         /* set by atomr_lt_plan_find_algo() */
  gsize                  workspace;    /* bytes @algo needs */
} AtomrLtPlan;

/* Creates @plan's descriptor (compute and scale types, TRANSA, TRANSB)
 * and its layouts: A is m × k (k × m when transposed), B k × n (n × k),
 * C m × n.  @plan must be zeroed; on failure what was made stays in it
 * for atomr_lt_plan_clear().  *failed_call (@failed_call may be NULL)
 * names the call whose status is returned. */
cublasStatus_t atomr_lt_plan_build     (AtomrLtPlan          *plan,
                                        cublasComputeType_t   compute,
                                        cudaDataType          scale_type,
                                        cublasOperation_t     transa,
                                        cublasOperation_t     transb,
                                        cudaDataType          a_type,
                                        cudaDataType          b_type,
                                        cudaDataType          c_type,
                                        gint64                m,
                                        gint64                n,
                                        gint64                k,
                                        gint64                lda,
                                        gint64                ldb,
                                        gint64                ldc,
                                        const gchar         **failed_call);

/* Asks the heuristic for one algorithm within @max_workspace bytes, with
 * @min_alignments (bytes of A, B and C/D, or NULL for cuBLASLt's
 * defaults).  The status is that of the preference calls when one of them
 * failed (*returned is then -1: no search ran), else the heuristic's, with
 * *returned the algorithms it gave (0 or 1); with one, @plan's algo and
 * workspace are set.  *failed_call (@failed_call may be NULL) names the
 * call the status comes from. */
cublasStatus_t atomr_lt_plan_find_algo (AtomrLtPlan          *plan,
                                        cublasLtHandle_t      handle,
                                        guint64               max_workspace,
                                        const uint32_t       *min_alignments,
                                        int                  *returned,
                                        const gchar         **failed_call);

/* Destroys what @plan holds and zeroes it. */
void           atomr_lt_plan_clear     (AtomrLtPlan          *plan);

G_END_DECLS
