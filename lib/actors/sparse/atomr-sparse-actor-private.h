/* atomr-sparse-actor-private.h — what the files of the sparse actor share
 *
 * atomr-sparse-actor.c: the actor, its handle and workspace, check, convert
 * and transpose; atomr-sparse-actor-dense.c: the operations with dense
 * operands (views).  Everything here runs on the actor's context unless
 * said otherwise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-cusparse-table-private.h"
#include "atomr-cublas-table-private.h"

#include "actors/atomr-library-private.h"
#include "actors/sparse/atomr-sparse-actor.h"
#include "actors/sparse/atomr-sparse-private.h"

G_BEGIN_DECLS

struct _AtomrSparseActor
{
  AtomrActor        parent_instance;

  guint64           id;              /* keys this actor's plans on matrices */
  cusparseHandle_t  handle;
  cublasHandle_t    blas;            /* made on the first scale */
  CUdeviceptr       workspace;
  gsize             workspace_size;  /* read from any thread: atomic */
};

/* The matrix as it was when the request was submitted: a later
 * atomr_sparse_matrix_set_values() does not change what runs. */
typedef struct {
  AtomrSparseMatrix *matrix;          /* kept alive by the op */
  AtomrSparseFormat  format;
  gint64             rows, cols, nnz, block_size, ell_cols;
  AtomrDtype         index_dtype, value_dtype;
  AtomrBuffer       *offsets, *row_indices, *indices, *values;   /* the op holds them */
  guint              values_serial;
} MatSnap;

/* A dense operand: a vector, a matrix or a strided batch of matrices. */
typedef struct {
  gpointer          tensor;           /* AtomrTensor, kept alive by the op */
  gpointer          ptr;
  AtomrDtype        dtype;
  gint64            rows, cols, ld;   /* rows = length for a vector */
  gint              order;            /* cusparseOrder_t */
  gint64            batch, batch_stride;
} DenseSnap;

/* One request for every operation: what it does not use stays zero. */
typedef struct {
  const gchar       *opname;
  MatSnap            a, b;
  DenseSnap          x, y, z;
  AtomrSparseVector *vec;
  AtomrSparseFormat  target;
  gint64             target_block;    /* convert-to-bsr: the block size */
  gint               kind;            /* sparse vector operation */
  AtomrDtype         target_index;
  gint               op_a, op_b;      /* cusparseOperation_t */
  gint               fill, diag;      /* cusparseFillMode_t, cusparseDiagType_t */
  gdouble            alpha, beta;
  AtomrSparseMatrix *result;          /* owned; handed to _finish */
  AtomrBuffer       *result_offsets;  /* allocated at submission */
  AtomrPinned       *pinned;          /* check: the structure, copied back */
} SparseRequest;

extern const gchar *const atomr_sparse_format_short[];

void          atomr_sparse_request_clear   (gpointer          data);
void          atomr_sparse_snap_take       (AtomrOp          *op,
                                            MatSnap          *s,
                                            AtomrSparseMatrix *m,
                                            gboolean          write_values);
void          atomr_sparse_set_detail      (AtomrOp          *op,
                                            const MatSnap    *s);
gboolean      atomr_sparse_status_check    (cusparseStatus_t  status,
                                            const gchar      *call,
                                            GError          **error);
cudaDataType  atomr_sparse_cuda_type       (AtomrDtype        dtype);
cusparseIndexType_t atomr_sparse_index_type (AtomrDtype       dtype);
gpointer      atomr_sparse_dptr            (AtomrBuffer      *buffer);
gboolean      atomr_sparse_spmat_create    (const MatSnap    *s,
                                            cusparseSpMatDescr_t *out,
                                            GError          **error);
void          atomr_sparse_spmat_destroy   (gpointer          descr);
gboolean      atomr_sparse_workspace_reserve (AtomrSparseActor *self,
                                              CUstream          stream,
                                              gsize             size,
                                              gpointer         *out,
                                              GError          **error);
/* FALSE with NOT_SUPPORTED on the host test device. */
gboolean      atomr_sparse_need_gpu        (AtomrOp          *op,
                                            SparseRequest    *r,
                                            GError          **error);
/* x[0..n) *= value (cuBLAS ScalEx, handle made on first use). */
gboolean      atomr_sparse_scal            (AtomrSparseActor *self,
                                            AtomrOp          *op,
                                            AtomrDtype        dtype,
                                            gpointer          x,
                                            gint64            n,
                                            gdouble           value,
                                            GError          **error);
/* Complete function returning r->result. */
void          atomr_sparse_complete_result (AtomrOp          *op,
                                            AtomrReply       *reply);
/* A buffer allocated inside an enqueue function (sizes known only on the
 * GPU), ordered before the op's stream uses it. */
AtomrBuffer  *atomr_sparse_late_buffer     (AtomrOp          *op,
                                            AtomrDtype        dtype,
                                            gint64            n,
                                            GError          **error);
/* atomr-sparse-actor-convert.c: convert_async's COO ↔ CSR and BSR → CSR */
void          atomr_sparse_coo_csr_submit  (AtomrOp          *op,
                                            const gchar      *opname,
                                            AtomrSparseMatrix *matrix,
                                            AtomrSparseFormat format);
void          atomr_sparse_bsr2csr_submit  (AtomrOp          *op,
                                            const gchar      *opname,
                                            AtomrSparseMatrix *matrix);

G_END_DECLS
