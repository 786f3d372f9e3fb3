/* atomr-lt-plan.c — a cuBLASLt matmul plan, shared by the BLAS and BlasLt
 * actors
 *
 * See atomr-lt-plan-private.h for the contract.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "actors/blaslt/atomr-lt-plan-private.h"

/* Runs one step while every earlier one succeeded, remembering its name:
 * the first failure is the one reported. */
#define LT_STEP(status, call, expr, name) \
  G_STMT_START {                          \
    if ((status) == CUBLAS_STATUS_SUCCESS) \
      {                                   \
        (call) = (name);                  \
        (status) = (expr);                \
      }                                   \
  } G_STMT_END

cublasStatus_t
atomr_lt_plan_build (AtomrLtPlan          *plan,
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
                     const gchar         **failed_call)
{
  /* The attributes are int32_t, whatever the size of the enum. */
  int32_t ta = transa, tb = transb;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const gchar *call = NULL;

  LT_STEP (st, call, cublasLtMatmulDescCreate (&plan->desc, compute, scale_type),
           "cublasLtMatmulDescCreate");
  LT_STEP (st, call, cublasLtMatmulDescSetAttribute (plan->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                     &ta, sizeof ta),
           "cublasLtMatmulDescSetAttribute (CUBLASLT_MATMUL_DESC_TRANSA)");
  LT_STEP (st, call, cublasLtMatmulDescSetAttribute (plan->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                     &tb, sizeof tb),
           "cublasLtMatmulDescSetAttribute (CUBLASLT_MATMUL_DESC_TRANSB)");
  /* The layouts hold the matrices as stored: op() comes from TRANSA/B. */
  LT_STEP (st, call, cublasLtMatrixLayoutCreate (&plan->la, a_type,
                                                 ta == CUBLAS_OP_N ? m : k,
                                                 ta == CUBLAS_OP_N ? k : m, lda),
           "cublasLtMatrixLayoutCreate (A)");
  LT_STEP (st, call, cublasLtMatrixLayoutCreate (&plan->lb, b_type,
                                                 tb == CUBLAS_OP_N ? k : n,
                                                 tb == CUBLAS_OP_N ? n : k, ldb),
           "cublasLtMatrixLayoutCreate (B)");
  LT_STEP (st, call, cublasLtMatrixLayoutCreate (&plan->lc, c_type, m, n, ldc),
           "cublasLtMatrixLayoutCreate (C)");
  if (failed_call)
    *failed_call = call;
  return st;
}

cublasStatus_t
atomr_lt_plan_find_algo (AtomrLtPlan       *plan,
                         cublasLtHandle_t   handle,
                         guint64            max_workspace,
                         const uint32_t    *min_alignments,
                         int               *returned,
                         const gchar      **failed_call)
{
  static const cublasLtMatmulPreferenceAttributes_t alignment_attrs[4] = {
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
  };
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t result;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const gchar *call = NULL;

  *returned = -1;
  LT_STEP (st, call, cublasLtMatmulPreferenceCreate (&pref), "cublasLtMatmulPreferenceCreate");
  LT_STEP (st, call, cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &max_workspace, sizeof max_workspace),
           "cublasLtMatmulPreferenceSetAttribute");
  /* D is written where C is read: it takes C's alignment. */
  for (guint i = 0; min_alignments && i < G_N_ELEMENTS (alignment_attrs); i++)
    LT_STEP (st, call, cublasLtMatmulPreferenceSetAttribute (pref, alignment_attrs[i],
                                                             &min_alignments[MIN (i, 2)],
                                                             sizeof min_alignments[0]),
             "cublasLtMatmulPreferenceSetAttribute");
  if (st == CUBLAS_STATUS_SUCCESS)
    {
      int found = 0;

      call = "cublasLtMatmulAlgoGetHeuristic";
      st = cublasLtMatmulAlgoGetHeuristic (handle, plan->desc, plan->la, plan->lb, plan->lc,
                                           plan->lc, pref, 1, &result, &found);
      *returned = found;
      if (st == CUBLAS_STATUS_SUCCESS && found > 0)
        {
          plan->algo = result.algo;
          plan->workspace = result.workspaceSize;
        }
    }
  if (pref)
    cublasLtMatmulPreferenceDestroy (pref);
  if (failed_call)
    *failed_call = call;
  return st;
}

void
atomr_lt_plan_clear (AtomrLtPlan *plan)
{
  if (plan->desc)
    cublasLtMatmulDescDestroy (plan->desc);
  if (plan->la)
    cublasLtMatrixLayoutDestroy (plan->la);
  if (plan->lb)
    cublasLtMatrixLayoutDestroy (plan->lb);
  if (plan->lc)
    cublasLtMatrixLayoutDestroy (plan->lc);
  memset (plan, 0, sizeof *plan);
}
