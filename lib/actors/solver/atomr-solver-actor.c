/* atomr-solver-actor.c — dense cuSOLVER on an actor
 *
 * Every operation is one Request and one run function.  The run function
 * sizes the library's workspace and calls prepare(), which grows the
 * actor's device workspace when needed (stream-ordered, so it is reused
 * by every operation of the actor) and uploads the request's header: the
 * zeroed `info` words and, for batched routines, the array of matrix
 * pointers.  After the call the info words are copied back to pinned
 * memory; the complete step turns a non-zero one into an error naming the
 * failing index.
 *
 * Matrices are column-major, as in LAPACK.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-cublas-table-private.h"

#include "actors/atomr-library-private.h"
#include "atomr-cusolver-loader-private.h"
#include "atomr-solver-actor.h"
#include "core/atomr-tensor-private.h"

/* cuSOLVER is called through the table the loader filled (see
 * atomr-cusolver-loader-private.h); setup loads it before any call. */
#define CUSOLVER (atomr_cusolver_get ())

#define HEADER_ALIGN 256

typedef enum {
  OP_LU,
  OP_LU_SOLVE,
  OP_QR,
  OP_CHOLESKY,
  OP_CHOLESKY_SOLVE,
  OP_SVD,
  OP_GESVDJ_BATCHED,
  OP_SYEVD,
  OP_SYGVD,
  OP_GETRF_BATCHED,
  OP_POTRF_BATCHED,
  OP_GETRS_BATCHED,
  OP_POTRS_BATCHED,
  OP_GESVDJ,
  OP_SYEVJ,
  OP_GELS,
  OP_GEEV,
} OpKind;

typedef struct {
  OpKind                kind;
  const gchar          *name;
  AtomrDtype            dtype;
  gint64                m, n, nrhs, batch;
  gint64                lda, ldb, ldu, ldv;
  AtomrSolverFill       uplo;
  AtomrSolverTranspose  trans;
  AtomrSolverEigType    itype;
  gboolean              vectors;
  /* Kept alive by the op's hazard tracking. */
  AtomrBuffer          *a, *b, *ipiv, *tau, *q, *s, *u, *v, *x;
  guint64               off_a, off_b, off_ipiv;   /* bytes: views */
  gint64                ldx;
  /* Pinned: n_info ints, then (batched) one device pointer per matrix. */
  guint                 n_info;
  gsize                 ptr_offset;
  gsize                 ptr_offset_b;   /* pointers to the B matrices, or 0 */
  gsize                 header_size;
  AtomrPinned          *staging;
} Request;

struct _AtomrSolverActor
{
  AtomrActor          parent_instance;

  /* On the actor's context. */
  gboolean            has_handles;
  cusolverDnHandle_t  dn;
  cusolverDnParams_t  params;
  gesvdjInfo_t        gesvdj;
  syevjInfo_t         syevj;          /* made on the first syevj */
  cublasHandle_t      blas;
  CUdeviceptr         workspace;
  guint64             workspace_size;  /* atomic reads from other threads */
  GPtrArray          *host_workspaces; /* kept until finalize: libraries may still read them */
  gpointer            host_workspace;
  gsize               host_workspace_size;
};

/**
 * AtomrSolverActor:
 *
 * An actor that runs dense cuSOLVER routines on its stream.
 *
 * It factors and solves (LU, Cholesky, QR, least squares), computes
 * eigenvalues and singular values, single and batched.  Matrices are
 * column-major, as in LAPACK.  The actor sizes and keeps one device
 * workspace that every operation reuses (see
 * [method@Atomr.SolverActor.get_workspace_size]); a routine that reports a
 * non-zero `info` fails its operation with an error that names the
 * failing index.  libcusolver is loaded when the first operation needs it.
 *
 * Since: 0.1
 */
G_DEFINE_FINAL_TYPE (AtomrSolverActor, atomr_solver_actor, ATOMR_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_WORKSPACE_SIZE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* ------------------------------------------------------------------ */
/* Status mapping                                                       */

static const gchar *
cusolver_status_name (cusolverStatus_t s)
{
  switch (s)
    {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: return NULL;
    }
}

static gboolean
cusolver_check (cusolverStatus_t   s,
                const gchar       *call,
                GError           **error)
{
  return atomr_library_check (s == CUSOLVER_STATUS_SUCCESS, "cusolver", call,
                              cusolver_status_name (s), s,
                              s == CUSOLVER_STATUS_ALLOC_FAILED,
                              s == CUSOLVER_STATUS_NOT_SUPPORTED ||
                              s == CUSOLVER_STATUS_ARCH_MISMATCH ||
                              s == CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED, error);
}

static gboolean
cublas_check (cublasStatus_t   s,
              const gchar     *call,
              GError         **error)
{
  return atomr_library_check (s == CUBLAS_STATUS_SUCCESS, "cublas", call,
                              cublasGetStatusName (s), s,
                              s == CUBLAS_STATUS_ALLOC_FAILED,
                              s == CUBLAS_STATUS_NOT_SUPPORTED ||
                              s == CUBLAS_STATUS_ARCH_MISMATCH, error);
}

/* ------------------------------------------------------------------ */
/* Handles and workspace                                                */

static gboolean
solver_setup (AtomrActor  *actor,
              GError     **error)
{
  AtomrSolverActor *self = ATOMR_SOLVER_ACTOR (actor);
  cudaStream_t stream = (cudaStream_t) atomr_actor_get_cu_stream (actor);

  if (atomr_device_is_host (atomr_actor_get_device (actor)))
    return TRUE;

  if (atomr_cusolver_load (error) == NULL || !atomr_cublas_load (error))
    return FALSE;
  if (!cusolver_check (CUSOLVER->cusolverDnCreate (&self->dn), "cusolverDnCreate", error))
    return FALSE;
  if (!cusolver_check (CUSOLVER->cusolverDnSetStream (self->dn, stream), "cusolverDnSetStream", error) ||
      !cusolver_check (CUSOLVER->cusolverDnCreateParams (&self->params), "cusolverDnCreateParams", error))
    goto fail_dn;
  if (!cusolver_check (CUSOLVER->cusolverDnCreateGesvdjInfo (&self->gesvdj), "cusolverDnCreateGesvdjInfo", error))
    goto fail_params;
  if (!cublas_check (cublasCreate (&self->blas), "cublasCreate", error))
    goto fail_gesvdj;
  if (!cublas_check (cublasSetStream (self->blas, stream), "cublasSetStream", error))
    {
      cublasDestroy (self->blas);
      goto fail_gesvdj;
    }
  self->has_handles = TRUE;
  return TRUE;

fail_gesvdj:
  CUSOLVER->cusolverDnDestroyGesvdjInfo (self->gesvdj);
fail_params:
  CUSOLVER->cusolverDnDestroyParams (self->params);
fail_dn:
  CUSOLVER->cusolverDnDestroy (self->dn);
  return FALSE;
}

static void
solver_teardown (AtomrActor *actor,
                 gboolean    context_alive)
{
  AtomrSolverActor *self = ATOMR_SOLVER_ACTOR (actor);

  if (self->has_handles && context_alive)
    {
      cublasDestroy (self->blas);
      if (self->syevj)
        CUSOLVER->cusolverDnDestroySyevjInfo (self->syevj);
      CUSOLVER->cusolverDnDestroyGesvdjInfo (self->gesvdj);
      CUSOLVER->cusolverDnDestroyParams (self->params);
      CUSOLVER->cusolverDnDestroy (self->dn);
      if (self->workspace)
        ATOMR_CU->cuMemFreeAsync (self->workspace, atomr_actor_get_cu_stream (actor));
    }
  self->has_handles = FALSE;
  self->syevj = NULL;
  self->workspace = 0;
  __atomic_store_n (&self->workspace_size, 0, __ATOMIC_RELAXED);
}

static gpointer
host_workspace (AtomrSolverActor *self,
                gsize             size)
{
  if (size == 0)
    return NULL;
  if (size > self->host_workspace_size)
    {
      self->host_workspace = g_malloc (size);
      self->host_workspace_size = size;
      g_ptr_array_add (self->host_workspaces, self->host_workspace);
    }
  return self->host_workspace;
}

/* Makes the device workspace hold the request's header plus @lib_bytes,
 * uploads the header and returns where the library's part starts. */
static gboolean
prepare (AtomrSolverActor  *self,
         Request           *req,
         CUstream           stream,
         gsize              lib_bytes,
         CUdeviceptr       *work,
         GError           **error)
{
  gsize header = (req->header_size + HEADER_ALIGN - 1) / HEADER_ALIGN * HEADER_ALIGN;
  gsize total = header + lib_bytes;

  if (total > self->workspace_size)
    {
      /* Grow by at least half, so that a sequence of growing problems
       * does not reallocate each time. */
      gsize size = MAX (total, self->workspace_size + self->workspace_size / 2);
      CUdeviceptr ptr = 0;

      if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&ptr, size, stream), "cuMemAllocAsync", error))
        return FALSE;
      if (self->workspace)
        ATOMR_CU->cuMemFreeAsync (self->workspace, stream);
      self->workspace = ptr;
      __atomic_store_n (&self->workspace_size, size, __ATOMIC_RELAXED);
    }

  if (req->ptr_offset)
    {
      CUdeviceptr *ptrs = (CUdeviceptr *) ((guint8 *) req->staging->data + req->ptr_offset);
      gsize stride = (gsize) req->lda * req->n * atomr_dtype_get_size (req->dtype);
      CUdeviceptr base = atomr_buffer_get_ptr (req->a);

      for (gint64 i = 0; i < req->batch; i++)
        ptrs[i] = base + (CUdeviceptr) (i * stride);
    }
  if (req->ptr_offset_b)
    {
      CUdeviceptr *ptrs = (CUdeviceptr *) ((guint8 *) req->staging->data + req->ptr_offset_b);
      gsize stride = (gsize) req->ldb * req->nrhs * atomr_dtype_get_size (req->dtype);
      CUdeviceptr base = atomr_buffer_get_ptr (req->b);

      for (gint64 i = 0; i < req->batch; i++)
        ptrs[i] = base + (CUdeviceptr) (i * stride);
    }
  if (!atomr_cuda_check (ATOMR_CU->cuMemcpyHtoDAsync (self->workspace, req->staging->data,
                                                      req->header_size, stream),
                         "cuMemcpyHtoDAsync", error))
    return FALSE;
  *work = self->workspace + header;
  return TRUE;
}

#define PTR(buffer) ((buffer) ? (gpointer) (guintptr) atomr_buffer_get_ptr (buffer) : NULL)
/* An operand that may be a view (byte offset 0 for buffers). */
#define PTR_AT(buffer, off) ((buffer) ? (gpointer) (guintptr) (atomr_buffer_get_ptr (buffer) + (off)) : NULL)
#define INFO(self) ((gint *) (guintptr) (self)->workspace)
#define PTRS(self, req) ((gpointer) (guintptr) ((self)->workspace + (req)->ptr_offset))

static cudaDataType
cuda_type (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F32: return CUDA_R_32F;
    case ATOMR_DTYPE_F64: return CUDA_R_64F;
    case ATOMR_DTYPE_C64: return CUDA_C_32F;
    case ATOMR_DTYPE_C128:
    default: return CUDA_C_64F;
    }
}

static AtomrDtype
real_dtype (AtomrDtype dtype)
{
  return (dtype == ATOMR_DTYPE_F32 || dtype == ATOMR_DTYPE_C64) ? ATOMR_DTYPE_F32 : ATOMR_DTYPE_F64;
}

static cublasFillMode_t
fill_mode (AtomrSolverFill uplo)
{
  return uplo == ATOMR_SOLVER_UPPER ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
}

/* One call for each of the four dtypes of a typed (legacy) routine. */
#define TYPED(st, dtype, fs, fd, fc, fz, ...) \
  switch (dtype)                                              \
    {                                                         \
    case ATOMR_DTYPE_F32: st = fs (__VA_ARGS__); break;       \
    case ATOMR_DTYPE_F64: st = fd (__VA_ARGS__); break;       \
    case ATOMR_DTYPE_C64: st = fc (__VA_ARGS__); break;       \
    default:              st = fz (__VA_ARGS__); break;       \
    }

/* ------------------------------------------------------------------ */
/* Run functions                                                        */

static gboolean
run_lu (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cudaDataType t = cuda_type (req->dtype);
  size_t dev = 0, host = 0;
  CUdeviceptr work;

  if (!cusolver_check (CUSOLVER->cusolverDnXgetrf_bufferSize (self->dn, self->params, req->m, req->n, t,
                                                    PTR_AT (req->a, req->off_a), req->lda, t, &dev, &host),
                       "cusolverDnXgetrf_bufferSize", error) ||
      !prepare (self, req, stream, dev, &work, error))
    return FALSE;
  return cusolver_check (CUSOLVER->cusolverDnXgetrf (self->dn, self->params, req->m, req->n, t, PTR_AT (req->a, req->off_a),
                                           req->lda, PTR_AT (req->ipiv, req->off_ipiv), t, (gpointer) (guintptr) work,
                                           dev, host_workspace (self, host), host, INFO (self)),
                         "cusolverDnXgetrf", error);
}

static gboolean
run_lu_solve (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  static const cublasOperation_t ops[] = { CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C };
  cudaDataType t = cuda_type (req->dtype);
  CUdeviceptr work;

  if (!prepare (self, req, stream, 0, &work, error))
    return FALSE;
  return cusolver_check (CUSOLVER->cusolverDnXgetrs (self->dn, self->params, ops[req->trans], req->n, req->nrhs,
                                           t, PTR_AT (req->a, req->off_a), req->lda, PTR_AT (req->ipiv, req->off_ipiv),
                                           t, PTR_AT (req->b, req->off_b), req->ldb, INFO (self)),
                         "cusolverDnXgetrs", error);
}

static gboolean
run_qr (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cudaDataType t = cuda_type (req->dtype);
  size_t dev = 0, host = 0, q_bytes = 0;
  gint64 k = MIN (req->m, req->n);
  int lwork = 0;
  cusolverStatus_t st;
  CUdeviceptr work;

  if (!cusolver_check (CUSOLVER->cusolverDnXgeqrf_bufferSize (self->dn, self->params, req->m, req->n, t,
                                                    PTR_AT (req->a, req->off_a), req->lda, t, PTR (req->tau), t,
                                                    &dev, &host),
                       "cusolverDnXgeqrf_bufferSize", error))
    return FALSE;
  if (req->q)
    {
      TYPED (st, req->dtype, CUSOLVER->cusolverDnSorgqr_bufferSize, CUSOLVER->cusolverDnDorgqr_bufferSize,
             CUSOLVER->cusolverDnCungqr_bufferSize, CUSOLVER->cusolverDnZungqr_bufferSize,
             self->dn, req->m, k, k, PTR (req->q), req->lda, PTR (req->tau), &lwork);
      if (!cusolver_check (st, "cusolverDn<t>orgqr_bufferSize", error))
        return FALSE;
      q_bytes = (gsize) lwork * atomr_dtype_get_size (req->dtype);
    }
  if (!prepare (self, req, stream, MAX (dev, q_bytes), &work, error) ||
      !cusolver_check (CUSOLVER->cusolverDnXgeqrf (self->dn, self->params, req->m, req->n, t, PTR_AT (req->a, req->off_a),
                                         req->lda, t, PTR (req->tau), t, (gpointer) (guintptr) work,
                                         dev, host_workspace (self, host), host, INFO (self)),
                       "cusolverDnXgeqrf", error))
    return FALSE;
  if (req->q == NULL)
    return TRUE;

  /* Q from the reflectors: copy them (the first k columns) and expand. */
  if (!atomr_cuda_check (ATOMR_CU->cuMemcpyDtoDAsync (atomr_buffer_get_ptr (req->q),
                                                      atomr_buffer_get_ptr (req->a),
                                                      (gsize) (req->lda * (k - 1) + req->m) *
                                                      atomr_dtype_get_size (req->dtype), stream),
                         "cuMemcpyDtoDAsync", error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSorgqr, CUSOLVER->cusolverDnDorgqr,
         CUSOLVER->cusolverDnCungqr, CUSOLVER->cusolverDnZungqr,
         self->dn, req->m, k, k, PTR (req->q), req->lda, PTR (req->tau),
         (gpointer) (guintptr) work, lwork, INFO (self) + 1);
  return cusolver_check (st, "cusolverDn<t>orgqr", error);
}

static gboolean
run_cholesky (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cudaDataType t = cuda_type (req->dtype);
  size_t dev = 0, host = 0;
  CUdeviceptr work;

  if (!cusolver_check (CUSOLVER->cusolverDnXpotrf_bufferSize (self->dn, self->params, fill_mode (req->uplo),
                                                    req->n, t, PTR_AT (req->a, req->off_a), req->lda, t, &dev, &host),
                       "cusolverDnXpotrf_bufferSize", error) ||
      !prepare (self, req, stream, dev, &work, error))
    return FALSE;
  return cusolver_check (CUSOLVER->cusolverDnXpotrf (self->dn, self->params, fill_mode (req->uplo), req->n, t,
                                           PTR_AT (req->a, req->off_a), req->lda, t, (gpointer) (guintptr) work, dev,
                                           host_workspace (self, host), host, INFO (self)),
                         "cusolverDnXpotrf", error);
}

static gboolean
run_cholesky_solve (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cudaDataType t = cuda_type (req->dtype);
  CUdeviceptr work;

  if (!prepare (self, req, stream, 0, &work, error))
    return FALSE;
  return cusolver_check (CUSOLVER->cusolverDnXpotrs (self->dn, self->params, fill_mode (req->uplo), req->n,
                                           req->nrhs, t, PTR_AT (req->a, req->off_a), req->lda, t, PTR_AT (req->b, req->off_b),
                                           req->ldb, INFO (self)),
                         "cusolverDnXpotrs", error);
}

static gboolean
run_svd (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cudaDataType t = cuda_type (req->dtype), rt = cuda_type (real_dtype (req->dtype));
  signed char jobu = req->u ? 'S' : 'N', jobvt = req->v ? 'S' : 'N';
  gint64 ldu = req->u ? req->ldu : 1, ldvt = req->v ? req->ldv : 1;
  size_t dev = 0, host = 0;
  CUdeviceptr work;

  if (!cusolver_check (CUSOLVER->cusolverDnXgesvd_bufferSize (self->dn, self->params, jobu, jobvt, req->m,
                                                    req->n, t, PTR_AT (req->a, req->off_a), req->lda, rt,
                                                    PTR (req->s), t, PTR (req->u), ldu, t,
                                                    PTR (req->v), ldvt, t, &dev, &host),
                       "cusolverDnXgesvd_bufferSize", error) ||
      !prepare (self, req, stream, dev, &work, error))
    return FALSE;
  return cusolver_check (CUSOLVER->cusolverDnXgesvd (self->dn, self->params, jobu, jobvt, req->m, req->n, t,
                                           PTR_AT (req->a, req->off_a), req->lda, rt, PTR (req->s), t, PTR (req->u),
                                           ldu, t, PTR (req->v), ldvt, t, (gpointer) (guintptr) work,
                                           dev, host_workspace (self, host), host, INFO (self)),
                         "cusolverDnXgesvd", error);
}

static gboolean
run_gesvdj_batched (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  int lwork = 0;
  cusolverStatus_t st;
  CUdeviceptr work;

  TYPED (st, req->dtype, CUSOLVER->cusolverDnSgesvdjBatched_bufferSize, CUSOLVER->cusolverDnDgesvdjBatched_bufferSize,
         CUSOLVER->cusolverDnCgesvdjBatched_bufferSize, CUSOLVER->cusolverDnZgesvdjBatched_bufferSize,
         self->dn, CUSOLVER_EIG_MODE_VECTOR, req->m, req->n, PTR_AT (req->a, req->off_a), req->lda, PTR (req->s),
         PTR (req->u), req->ldu, PTR (req->v), req->ldv, &lwork, self->gesvdj, req->batch);
  if (!cusolver_check (st, "cusolverDn<t>gesvdjBatched_bufferSize", error) ||
      !prepare (self, req, stream, (gsize) lwork * atomr_dtype_get_size (req->dtype), &work, error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSgesvdjBatched, CUSOLVER->cusolverDnDgesvdjBatched,
         CUSOLVER->cusolverDnCgesvdjBatched, CUSOLVER->cusolverDnZgesvdjBatched,
         self->dn, CUSOLVER_EIG_MODE_VECTOR, req->m, req->n, PTR_AT (req->a, req->off_a), req->lda, PTR (req->s),
         PTR (req->u), req->ldu, PTR (req->v), req->ldv, (gpointer) (guintptr) work, lwork,
         INFO (self), self->gesvdj, req->batch);
  return cusolver_check (st, "cusolverDn<t>gesvdjBatched", error);
}

static gboolean
run_syevd (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cudaDataType t = cuda_type (req->dtype), rt = cuda_type (real_dtype (req->dtype));
  cusolverEigMode_t jobz = req->vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  size_t dev = 0, host = 0;
  CUdeviceptr work;

  if (!cusolver_check (CUSOLVER->cusolverDnXsyevd_bufferSize (self->dn, self->params, jobz, fill_mode (req->uplo),
                                                    req->n, t, PTR_AT (req->a, req->off_a), req->lda, rt, PTR (req->s),
                                                    t, &dev, &host),
                       "cusolverDnXsyevd_bufferSize", error) ||
      !prepare (self, req, stream, dev, &work, error))
    return FALSE;
  return cusolver_check (CUSOLVER->cusolverDnXsyevd (self->dn, self->params, jobz, fill_mode (req->uplo), req->n,
                                           t, PTR_AT (req->a, req->off_a), req->lda, rt, PTR (req->s), t,
                                           (gpointer) (guintptr) work, dev,
                                           host_workspace (self, host), host, INFO (self)),
                         "cusolverDnXsyevd", error);
}

static gboolean
run_sygvd (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  static const cusolverEigType_t types[] = { CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_TYPE_2, CUSOLVER_EIG_TYPE_3 };
  cusolverEigMode_t jobz = req->vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int lwork = 0;
  cusolverStatus_t st;
  CUdeviceptr work;

  TYPED (st, req->dtype, CUSOLVER->cusolverDnSsygvd_bufferSize, CUSOLVER->cusolverDnDsygvd_bufferSize,
         CUSOLVER->cusolverDnChegvd_bufferSize, CUSOLVER->cusolverDnZhegvd_bufferSize,
         self->dn, types[req->itype], jobz, fill_mode (req->uplo), req->n, PTR_AT (req->a, req->off_a), req->lda,
         PTR_AT (req->b, req->off_b), req->ldb, PTR (req->s), &lwork);
  if (!cusolver_check (st, "cusolverDn<t>sygvd_bufferSize", error) ||
      !prepare (self, req, stream, (gsize) lwork * atomr_dtype_get_size (req->dtype), &work, error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSsygvd, CUSOLVER->cusolverDnDsygvd, CUSOLVER->cusolverDnChegvd, CUSOLVER->cusolverDnZhegvd,
         self->dn, types[req->itype], jobz, fill_mode (req->uplo), req->n, PTR_AT (req->a, req->off_a), req->lda,
         PTR_AT (req->b, req->off_b), req->ldb, PTR (req->s), (gpointer) (guintptr) work, lwork, INFO (self));
  return cusolver_check (st, "cusolverDn<t>sygvd", error);
}

static gboolean
run_getrf_batched (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cublasStatus_t st;
  CUdeviceptr work;

  if (!prepare (self, req, stream, 0, &work, error))
    return FALSE;
  TYPED (st, req->dtype, cublasSgetrfBatched, cublasDgetrfBatched, cublasCgetrfBatched,
         cublasZgetrfBatched,
         self->blas, req->n, PTRS (self, req), req->lda, PTR_AT (req->ipiv, req->off_ipiv), INFO (self), req->batch);
  return cublas_check (st, "cublas<t>getrfBatched", error);
}

static gboolean
run_potrf_batched (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cusolverStatus_t st;
  CUdeviceptr work;

  if (!prepare (self, req, stream, 0, &work, error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSpotrfBatched, CUSOLVER->cusolverDnDpotrfBatched, CUSOLVER->cusolverDnCpotrfBatched,
         CUSOLVER->cusolverDnZpotrfBatched,
         self->dn, fill_mode (req->uplo), req->n, PTRS (self, req), req->lda, INFO (self), req->batch);
  return cusolver_check (st, "cusolverDn<t>potrfBatched", error);
}

#define PTRS_B(self, req) ((gpointer) (guintptr) ((self)->workspace + (req)->ptr_offset_b))

static gboolean
run_getrs_batched (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  static const cublasOperation_t ops[] = { CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C };
  gint *info = host_workspace (self, sizeof (gint));   /* argument errors, set at the call */
  cublasStatus_t st;
  CUdeviceptr work;

  if (!prepare (self, req, stream, 0, &work, error))
    return FALSE;
  *info = 0;
  TYPED (st, req->dtype, cublasSgetrsBatched, cublasDgetrsBatched, cublasCgetrsBatched,
         cublasZgetrsBatched,
         self->blas, ops[req->trans], req->n, req->nrhs, PTRS (self, req), req->lda, PTR_AT (req->ipiv, req->off_ipiv),
         PTRS_B (self, req), req->ldb, info, req->batch);
  if (!cublas_check (st, "cublas<t>getrsBatched", error))
    return FALSE;
  if (*info < 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                   "cublas: %s: parameter %d had an illegal value", req->name, -*info);
      return FALSE;
    }
  return TRUE;
}

static gboolean
run_potrs_batched (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cusolverStatus_t st;
  CUdeviceptr work;

  if (!prepare (self, req, stream, 0, &work, error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSpotrsBatched, CUSOLVER->cusolverDnDpotrsBatched,
         CUSOLVER->cusolverDnCpotrsBatched, CUSOLVER->cusolverDnZpotrsBatched,
         self->dn, fill_mode (req->uplo), req->n, 1, PTRS (self, req), req->lda, PTRS_B (self, req),
         req->ldb, INFO (self), req->batch);
  return cusolver_check (st, "cusolverDn<t>potrsBatched", error);
}

static gboolean
run_gesvdj (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  int lwork = 0, econ = !req->vectors;   /* vectors: full U and V */
  cusolverStatus_t st;
  CUdeviceptr work;

  TYPED (st, req->dtype, CUSOLVER->cusolverDnSgesvdj_bufferSize, CUSOLVER->cusolverDnDgesvdj_bufferSize,
         CUSOLVER->cusolverDnCgesvdj_bufferSize, CUSOLVER->cusolverDnZgesvdj_bufferSize,
         self->dn, CUSOLVER_EIG_MODE_VECTOR, econ, req->m, req->n, PTR_AT (req->a, req->off_a), req->lda, PTR (req->s),
         PTR (req->u), req->ldu, PTR (req->v), req->ldv, &lwork, self->gesvdj);
  if (!cusolver_check (st, "cusolverDn<t>gesvdj_bufferSize", error) ||
      !prepare (self, req, stream, (gsize) lwork * atomr_dtype_get_size (req->dtype), &work, error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSgesvdj, CUSOLVER->cusolverDnDgesvdj,
         CUSOLVER->cusolverDnCgesvdj, CUSOLVER->cusolverDnZgesvdj,
         self->dn, CUSOLVER_EIG_MODE_VECTOR, econ, req->m, req->n, PTR_AT (req->a, req->off_a), req->lda, PTR (req->s),
         PTR (req->u), req->ldu, PTR (req->v), req->ldv, (gpointer) (guintptr) work, lwork,
         INFO (self), self->gesvdj);
  return cusolver_check (st, "cusolverDn<t>gesvdj", error);
}

static gboolean
run_syevj (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  cusolverEigMode_t jobz = req->vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int lwork = 0;
  cusolverStatus_t st;
  CUdeviceptr work;

  if (self->syevj == NULL &&
      !cusolver_check (CUSOLVER->cusolverDnCreateSyevjInfo (&self->syevj), "cusolverDnCreateSyevjInfo", error))
    {
      self->syevj = NULL;
      return FALSE;
    }
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSsyevj_bufferSize, CUSOLVER->cusolverDnDsyevj_bufferSize,
         CUSOLVER->cusolverDnCheevj_bufferSize, CUSOLVER->cusolverDnZheevj_bufferSize,
         self->dn, jobz, fill_mode (req->uplo), req->n, PTR_AT (req->a, req->off_a), req->lda, PTR (req->s), &lwork,
         self->syevj);
  if (!cusolver_check (st, "cusolverDn<t>syevj_bufferSize", error) ||
      !prepare (self, req, stream, (gsize) lwork * atomr_dtype_get_size (req->dtype), &work, error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSsyevj, CUSOLVER->cusolverDnDsyevj,
         CUSOLVER->cusolverDnCheevj, CUSOLVER->cusolverDnZheevj,
         self->dn, jobz, fill_mode (req->uplo), req->n, PTR_AT (req->a, req->off_a), req->lda, PTR (req->s),
         (gpointer) (guintptr) work, lwork, INFO (self), self->syevj);
  return cusolver_check (st, "cusolverDn<t>syevj", error);
}

static gboolean
run_gels (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  gint *iter = host_workspace (self, sizeof (gint));   /* IRS iterations, written by the call */
  size_t lwork = 0;
  cusolverStatus_t st;
  CUdeviceptr work;

  TYPED (st, req->dtype, CUSOLVER->cusolverDnSSgels_bufferSize, CUSOLVER->cusolverDnDDgels_bufferSize,
         CUSOLVER->cusolverDnCCgels_bufferSize, CUSOLVER->cusolverDnZZgels_bufferSize,
         self->dn, req->m, req->n, req->nrhs, PTR_AT (req->a, req->off_a), req->lda, PTR_AT (req->b, req->off_b), req->ldb,
         PTR (req->x), req->ldx, NULL, &lwork);
  if (!cusolver_check (st, "cusolverDn<t><t>gels_bufferSize", error) ||
      !prepare (self, req, stream, lwork, &work, error))
    return FALSE;
  TYPED (st, req->dtype, CUSOLVER->cusolverDnSSgels, CUSOLVER->cusolverDnDDgels,
         CUSOLVER->cusolverDnCCgels, CUSOLVER->cusolverDnZZgels,
         self->dn, req->m, req->n, req->nrhs, PTR_AT (req->a, req->off_a), req->lda, PTR_AT (req->b, req->off_b), req->ldb,
         PTR (req->x), req->ldx, (gpointer) (guintptr) work, lwork, iter, INFO (self));
  return cusolver_check (st, "cusolverDn<t><t>gels", error);
}

static gboolean
run_geev (AtomrSolverActor *self, Request *req, CUstream stream, GError **error)
{
  /* W has the dtype of A: for a real A, n real parts then n imaginary
   * parts (cuSOLVER's all-real option). */
  cudaDataType t = cuda_type (req->dtype), wt = t;
  cusolverEigMode_t jobvr = req->v ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  size_t dev = 0, host = 0;
  CUdeviceptr work;

  if (!cusolver_check (CUSOLVER->cusolverDnXgeev_bufferSize (self->dn, self->params, CUSOLVER_EIG_MODE_NOVECTOR,
                                                             jobvr, req->n, t, PTR_AT (req->a, req->off_a), req->lda, wt,
                                                             PTR (req->s), t, NULL, 1, t, PTR (req->v),
                                                             req->v ? req->ldv : 1, t, &dev, &host),
                       "cusolverDnXgeev_bufferSize", error) ||
      !prepare (self, req, stream, dev, &work, error))
    return FALSE;
  return cusolver_check (CUSOLVER->cusolverDnXgeev (self->dn, self->params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr,
                                                    req->n, t, PTR_AT (req->a, req->off_a), req->lda, wt, PTR (req->s),
                                                    t, NULL, 1, t, PTR (req->v), req->v ? req->ldv : 1, t,
                                                    (gpointer) (guintptr) work, dev,
                                                    host_workspace (self, host), host, INFO (self)),
                         "cusolverDnXgeev", error);
}

typedef gboolean (*RunFunc) (AtomrSolverActor *self, Request *req, CUstream stream, GError **error);

static const RunFunc run_funcs[] = {
  [OP_LU] = run_lu,
  [OP_LU_SOLVE] = run_lu_solve,
  [OP_QR] = run_qr,
  [OP_CHOLESKY] = run_cholesky,
  [OP_CHOLESKY_SOLVE] = run_cholesky_solve,
  [OP_SVD] = run_svd,
  [OP_GESVDJ_BATCHED] = run_gesvdj_batched,
  [OP_SYEVD] = run_syevd,
  [OP_SYGVD] = run_sygvd,
  [OP_GETRF_BATCHED] = run_getrf_batched,
  [OP_POTRF_BATCHED] = run_potrf_batched,
  [OP_GETRS_BATCHED] = run_getrs_batched,
  [OP_POTRS_BATCHED] = run_potrs_batched,
  [OP_GESVDJ] = run_gesvdj,
  [OP_SYEVJ] = run_syevj,
  [OP_GELS] = run_gels,
  [OP_GEEV] = run_geev,
};

/* ------------------------------------------------------------------ */
/* The envelope                                                         */

static void
request_free (gpointer data)
{
  Request *req = data;
  if (req->staging)
    atomr_pinned_release (req->staging);
  g_free (req);
}

static gboolean
solver_enqueue (AtomrOp  *op,
                GError  **error)
{
  AtomrSolverActor *self = ATOMR_SOLVER_ACTOR (atomr_op_get_actor (op));
  Request *req = atomr_op_get_data (op);
  CUstream stream = atomr_op_get_cu_stream (op);

  if (atomr_op_is_host (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: cuSOLVER needs a CUDA device; %s is the host test device", req->name,
                   atomr_device_get_name (atomr_actor_get_device (ATOMR_ACTOR (self))));
      return FALSE;
    }
  if (!run_funcs[req->kind] (self, req, stream, error))
    return FALSE;
  return atomr_cuda_check (ATOMR_CU->cuMemcpyDtoHAsync (req->staging->data, self->workspace,
                                                        req->n_info * sizeof (gint), stream),
                           "cuMemcpyDtoHAsync", error);
}

/* The message for info value @info > 0 of matrix @index. */
static gchar *
info_message (Request *req,
              guint    index,
              gint     info)
{
  g_autofree gchar *member = req->kind == OP_GETRF_BATCHED || req->kind == OP_POTRF_BATCHED ||
                             req->kind == OP_GESVDJ_BATCHED
                             ? g_strdup_printf ("batch member %u: ", index) : g_strdup ("");

  switch (req->kind)
    {
    case OP_LU:
    case OP_GETRF_BATCHED:
      return g_strdup_printf ("%s: %smatrix is singular: U(%d,%d) is zero", req->name, member, info, info);
    case OP_CHOLESKY:
    case OP_POTRF_BATCHED:
      return g_strdup_printf ("%s: %smatrix is not positive definite: leading minor of order %d",
                              req->name, member, info);
    case OP_SVD:
      return g_strdup_printf ("%s: %d superdiagonals of the bidiagonal form did not converge",
                              req->name, info);
    case OP_GESVDJ_BATCHED:
    case OP_GESVDJ:
    case OP_SYEVJ:
      return g_strdup_printf ("%s: %sJacobi iterations did not converge (info %d)", req->name, member, info);
    case OP_GEEV:
      return g_strdup_printf ("%s: the QR algorithm did not compute eigenvalues %d and after",
                              req->name, info);
    case OP_SYGVD:
      if (info > req->n)
        return g_strdup_printf ("%s: B is not positive definite: leading minor of order %"
                                G_GINT64_FORMAT, req->name, info - req->n);
      G_GNUC_FALLTHROUGH;
    case OP_SYEVD:
      return g_strdup_printf ("%s: %d off-diagonal elements of the tridiagonal form did not converge",
                              req->name, info);
    case OP_LU_SOLVE:
    case OP_QR:
    case OP_CHOLESKY_SOLVE:
    default:
      return g_strdup_printf ("%s: %sinfo %d", req->name, member, info);
    }
}

static void
solver_complete (AtomrOp    *op,
                 AtomrReply *reply)
{
  Request *req = atomr_op_get_data (op);
  const gint *info = req->staging->data;

  for (guint i = 0; i < req->n_info; i++)
    {
      g_autofree gchar *message = NULL;

      if (info[i] == 0)
        continue;
      if (info[i] < 0)
        {
          atomr_reply_return_new_error (reply, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                                        "cusolver: %s: parameter %d had an illegal value",
                                        req->name, -info[i]);
          return;
        }
      message = info_message (req, i, info[i]);
      atomr_reply_return_new_error (reply, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "%s", message);
      return;
    }
  atomr_reply_return_boolean (reply, TRUE);
}

static Request *
request_new (OpKind       kind,
             const gchar *name,
             AtomrBuffer *a)
{
  Request *req = g_new0 (Request, 1);
  req->kind = kind;
  req->name = name;
  req->a = a;
  req->dtype = atomr_buffer_get_dtype (a);
  req->batch = 1;
  req->n_info = 1;
  return req;
}

/* Consumes @req: reserves its pinned header and submits. */
static void
solver_submit (AtomrOp *op,
               Request *req)
{
  GError *error = NULL;
  gsize info_bytes = (req->n_info * sizeof (gint) + 15) & ~(gsize) 15;
  g_autofree gchar *detail = NULL;

  req->header_size = info_bytes;
  if (req->kind == OP_GETRF_BATCHED || req->kind == OP_POTRF_BATCHED ||
      req->kind == OP_GETRS_BATCHED || req->kind == OP_POTRS_BATCHED)
    {
      req->ptr_offset = info_bytes;
      req->header_size += (gsize) req->batch * sizeof (CUdeviceptr);
    }
  if (req->kind == OP_GETRS_BATCHED || req->kind == OP_POTRS_BATCHED)
    {
      req->ptr_offset_b = req->header_size;
      req->header_size += (gsize) req->batch * sizeof (CUdeviceptr);
    }
  req->staging = atomr_pinned_acquire (atomr_buffer_get_device (req->a), req->header_size, &error);
  if (req->staging == NULL)
    {
      request_free (req);
      atomr_op_fail (op, error);
      return;
    }
  memset (req->staging->data, 0, req->header_size);
  detail = g_strdup_printf ("%s %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT " × batch %" G_GINT64_FORMAT,
                            atomr_dtype_get_name (req->dtype), req->m, req->n, req->batch);
  atomr_op_set_detail (op, detail);
  atomr_op_set_data (op, req, request_free);
  atomr_op_set_enqueue (op, solver_enqueue);
  atomr_op_set_complete (op, solver_complete);
  atomr_op_submit (op);
}

/* ------------------------------------------------------------------ */
/* Validation                                                           */

static const AtomrDtype all_dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };
static const AtomrDtype real_dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64 };
static const AtomrDtype complex_dtypes[] = { ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };

#define FAIL_IF(cond, ...) \
  G_STMT_START { if (cond) { atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__)); return; } } G_STMT_END
#define CHECK(expr) \
  G_STMT_START { if (!(expr)) { atomr_op_fail (op, error); return; } } G_STMT_END

static gboolean
check_matrix_dtype (const gchar  *name,
                    AtomrBuffer  *a,
                    const AtomrDtype *allowed,
                    guint         n_allowed,
                    GError      **error)
{
  return atomr_check_dtype_in (name, "a", a, allowed, n_allowed, error);
}

static gboolean
check_fill (const gchar      *name,
            AtomrSolverFill   uplo,
            GError          **error)
{
  if ((guint) uplo > ATOMR_SOLVER_UPPER)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: uplo %d is not an AtomrSolverFill", name, (gint) uplo);
      return FALSE;
    }
  return TRUE;
}

/* Same dtype as @a, holding @rows × @cols with @ld. */
static gboolean
check_operand (const gchar  *name,
               const gchar  *arg,
               AtomrBuffer  *buffer,
               AtomrBuffer  *a,
               gint64        rows,
               gint64        cols,
               const gchar  *ld_arg,
               gint64        ld,
               gint64        batch,
               GError      **error)
{
  return atomr_check_same_dtype (name, "a", a, arg, buffer, error) &&
         atomr_check_matrix (name, arg, buffer, rows, cols, ld_arg, ld, ATOMR_STRIDE_PACKED, batch, error);
}

/* A real vector (singular values, eigenvalues) matching @a's precision. */
static gboolean
check_real_vector (const gchar  *name,
                   const gchar  *arg,
                   AtomrBuffer  *buffer,
                   AtomrBuffer  *a,
                   guint64       n,
                   GError      **error)
{
  return atomr_check_dtype (name, arg, buffer, real_dtype (atomr_buffer_get_dtype (a)), error) &&
         atomr_check_min_elements (name, arg, buffer, n, error);
}

/* ------------------------------------------------------------------ */
/* Operations                                                           */

/**
 * atomr_solver_actor_lu_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: an @m × @n matrix (f32, f64, c64 or c128), overwritten by L and U
 * @m: rows of @a
 * @n: columns of @a
 * @lda: leading dimension of @a (≥ @m)
 * @ipiv: an i64 buffer of at least min(@m, @n) elements for the pivots
 *   (1-based, as in LAPACK)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the factorization is done
 * @user_data: data for @callback
 *
 * LU factorization with partial pivoting, P·A = L·U (getrf).  An exactly
 * singular matrix completes with %ATOMR_ERROR_INVALID_ARGUMENT naming the
 * first zero pivot ("matrix is singular: U(3,3) is zero"); @a then still
 * holds the factors.
 *
 * Since: 0.1
 */
void
atomr_solver_actor_lu_async (AtomrSolverActor    *self,
                             AtomrBuffer         *a,
                             gint64               m,
                             gint64               n,
                             gint64               lda,
                             AtomrBuffer         *ipiv,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "lu", atomr_solver_actor_lu_async, cancellable, callback, user_data);
  CHECK (check_matrix_dtype ("lu", a, all_dtypes, 4, &error) &&
         atomr_check_positive ("lu", "m", m, &error) &&
         atomr_check_positive ("lu", "n", n, &error) &&
         atomr_check_matrix ("lu", "a", a, m, n, "lda", lda, 0, 1, &error) &&
         atomr_check_dtype ("lu", "ipiv", ipiv, ATOMR_DTYPE_I64, &error) &&
         atomr_check_min_elements ("lu", "ipiv", ipiv, MIN (m, n), &error) &&
         atomr_check_no_alias ("lu", ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("ipiv", ipiv)),
                               NULL, 0, &error));
  req = request_new (OP_LU, "lu", a);
  req->m = m, req->n = n, req->lda = lda, req->ipiv = ipiv;
  atomr_op_write (op, a);
  atomr_op_write (op, ipiv);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_lu_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.lu_async].
 *
 * Returns: %TRUE when @a holds the LU factors of a non-singular matrix
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_lu_finish (AtomrSolverActor  *self,
                              GAsyncResult      *result,
                              GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_lu_async, error);
}

/**
 * atomr_solver_actor_lu_solve_async:
 * @self: an [class@Atomr.SolverActor]
 * @trans: solve with A, Aᵀ or Aᴴ
 * @a: the @n × @n LU factors from [method@Atomr.SolverActor.lu_async]
 * @n: order of @a
 * @lda: leading dimension of @a (≥ @n)
 * @ipiv: the i64 pivots from [method@Atomr.SolverActor.lu_async]
 * @b: the @n × @nrhs right-hand sides, overwritten by the solution
 * @nrhs: number of right-hand sides
 * @ldb: leading dimension of @b (≥ @n)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the solve is done
 * @user_data: data for @callback
 *
 * Solves op(A)·X = B with the factors of [method@Atomr.SolverActor.lu_async]
 * (getrs).
 *
 * Since: 0.1
 */
void
atomr_solver_actor_lu_solve_async (AtomrSolverActor     *self,
                                   AtomrSolverTranspose  trans,
                                   AtomrBuffer          *a,
                                   gint64                n,
                                   gint64                lda,
                                   AtomrBuffer          *ipiv,
                                   AtomrBuffer          *b,
                                   gint64                nrhs,
                                   gint64                ldb,
                                   GCancellable         *cancellable,
                                   GAsyncReadyCallback   callback,
                                   gpointer              user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "lu-solve", atomr_solver_actor_lu_solve_async, cancellable, callback, user_data);
  FAIL_IF ((guint) trans > ATOMR_SOLVER_CONJUGATE_TRANSPOSE,
           "lu_solve: trans %d is not an AtomrSolverTranspose", (gint) trans);
  CHECK (check_matrix_dtype ("lu_solve", a, all_dtypes, 4, &error) &&
         atomr_check_positive ("lu_solve", "n", n, &error) &&
         atomr_check_positive ("lu_solve", "nrhs", nrhs, &error) &&
         atomr_check_matrix ("lu_solve", "a", a, n, n, "lda", lda, 0, 1, &error) &&
         atomr_check_dtype ("lu_solve", "ipiv", ipiv, ATOMR_DTYPE_I64, &error) &&
         atomr_check_min_elements ("lu_solve", "ipiv", ipiv, n, &error) &&
         check_operand ("lu_solve", "b", b, a, n, nrhs, "ldb", ldb, 1, &error) &&
         atomr_check_no_alias ("lu_solve", ATOMR_OPERANDS (ATOMR_OPERAND ("b", b)),
                               ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("ipiv", ipiv)),
                               &error));
  req = request_new (OP_LU_SOLVE, "lu_solve", a);
  req->m = n, req->n = n, req->lda = lda, req->ipiv = ipiv;
  req->trans = trans, req->b = b, req->nrhs = nrhs, req->ldb = ldb;
  atomr_op_read (op, a);
  atomr_op_read (op, ipiv);
  atomr_op_write (op, b);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_lu_solve_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.lu_solve_async].
 *
 * Returns: %TRUE when @b holds the solution
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_lu_solve_finish (AtomrSolverActor  *self,
                                    GAsyncResult      *result,
                                    GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_lu_solve_async, error);
}

/* ------------------------------------------------------------------ */
/* Views: column-major matrices from 2-D tensors                        */

/* A 2-D view as a LAPACK matrix: strides (1, ld), ld ≥ max (1, rows).
 * A row-major view (or any other non-unit inner stride) is refused: the
 * routines factor the matrix as stored, and the transpose of a row-major
 * matrix is a different problem. */
static gboolean
view_matrix (AtomrSolverActor  *self,
             const gchar       *name,
             const gchar       *what,
             AtomrTensor       *t,
             gint64            *rows,
             gint64            *cols,
             gint64            *ld,
             GError           **error)
{
  g_autofree gchar *label = g_strdup_printf ("%s: %s", name, what);
  gint64 s0, s1;

  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), label, error))
    return FALSE;
  if (atomr_tensor_get_n_dims (t) != 2)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s must be a matrix (2 dimensions), not of rank %u", label, atomr_tensor_get_n_dims (t));
      return FALSE;
    }
  *rows = atomr_tensor_get_dim (t, 0);
  *cols = atomr_tensor_get_dim (t, 1);
  s0 = atomr_tensor_get_stride (t, 0);
  s1 = atomr_tensor_get_stride (t, 1);
  if (*rows < 1 || *cols < 1)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s is %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT "; it must not be empty",
                   label, *rows, *cols);
      return FALSE;
    }
  if (*rows > 1 && s0 != 1)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s has strides (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): the solver takes "
                   "column-major matrices, whose rows have stride 1 (strides (1, ld)); a row-major "
                   "view is the transpose of the matrix: copy it to a column-major tensor first",
                   label, s0, s1);
      return FALSE;
    }
  *ld = *cols > 1 ? s1 : MAX (*rows, 1);
  if (*ld < MAX (*rows, 1))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s has column stride %" G_GINT64_FORMAT ", less than its %" G_GINT64_FORMAT
                   " rows: columns overlap", label, *ld, *rows);
      return FALSE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (all_dtypes); i++)
    if (atomr_tensor_get_dtype (t) == all_dtypes[i])
      return TRUE;
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "%s has dtype %s; the solver takes f32, f64, c64 or c128", label,
               atomr_dtype_get_name (atomr_tensor_get_dtype (t)));
  return FALSE;
}

static gboolean
view_pivots (AtomrSolverActor  *self,
             const gchar       *name,
             AtomrTensor       *t,
             gint64             needed,
             GError           **error)
{
  g_autofree gchar *label = g_strdup_printf ("%s: ipiv", name);

  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), label, error))
    return FALSE;
  if (atomr_tensor_get_dtype (t) != ATOMR_DTYPE_I64 || atomr_tensor_get_n_dims (t) != 1 ||
      (atomr_tensor_get_dim (t, 0) > 1 && atomr_tensor_get_stride (t, 0) != 1))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s must be a contiguous 1-D i64 view (it is %s of rank %u)", label,
                   atomr_dtype_get_name (atomr_tensor_get_dtype (t)), atomr_tensor_get_n_dims (t));
      return FALSE;
    }
  if (atomr_tensor_get_dim (t, 0) < needed)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s holds %" G_GINT64_FORMAT " pivots but the matrix needs %" G_GINT64_FORMAT,
                   label, atomr_tensor_get_dim (t, 0), needed);
      return FALSE;
    }
  return TRUE;
}

static gboolean
view_no_overlap (const gchar  *name,
                 const gchar  *out,
                 AtomrTensor  *a,
                 const gchar  *in,
                 AtomrTensor  *b,
                 GError      **error)
{
  if (atomr_tensor_overlaps (a, b))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s overlaps %s in memory", name, out, in);
      return FALSE;
    }
  return TRUE;
}

/**
 * atomr_solver_actor_lu_tensor_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: an m × n column-major matrix view (strides (1, ld); f32, f64, c64
 *   or c128), overwritten by L and U
 * @ipiv: a contiguous i64 view of at least min(m, n) elements for the
 *   pivots (1-based)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the factorization is done
 * @user_data: data for @callback
 *
 * [method@Atomr.SolverActor.lu_async] on views: the sizes come from the
 * shape and the leading dimension from the column stride, so a sub-matrix
 * ([method@Atomr.Tensor.slice]) is factored in place without a copy.  A
 * view whose rows do not have stride 1 (a row-major matrix) fails with
 * %ATOMR_ERROR_INVALID_ARGUMENT, as do overlapping @a and @ipiv.
 *
 * Since: 0.2
 */
void
atomr_solver_actor_lu_tensor_async (AtomrSolverActor    *self,
                                    AtomrTensor         *a,
                                    AtomrTensor         *ipiv,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  gint64 m, n, lda;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "lu", atomr_solver_actor_lu_tensor_async, cancellable, callback, user_data);
  CHECK (view_matrix (self, "lu", "a", a, &m, &n, &lda, &error) &&
         view_pivots (self, "lu", ipiv, MIN (m, n), &error) &&
         view_no_overlap ("lu", "ipiv", ipiv, "a", a, &error));
  req = request_new (OP_LU, "lu", atomr_tensor_get_buffer (a));
  req->dtype = atomr_tensor_get_dtype (a);
  req->m = m, req->n = n, req->lda = lda;
  req->off_a = atomr_tensor_get_byte_offset (a);
  req->ipiv = atomr_tensor_get_buffer (ipiv);
  req->off_ipiv = atomr_tensor_get_byte_offset (ipiv);
  atomr_op_write_tensor (op, a);
  atomr_op_write_tensor (op, ipiv);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_lu_tensor_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.lu_tensor_async].
 *
 * Returns: %TRUE when the view holds the LU factors of a non-singular matrix
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_lu_tensor_finish (AtomrSolverActor  *self,
                                     GAsyncResult      *result,
                                     GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_lu_tensor_async, error);
}

/**
 * atomr_solver_actor_lu_solve_tensor_async:
 * @self: an [class@Atomr.SolverActor]
 * @trans: solve with A, Aᵀ or Aᴴ
 * @a: the n × n LU factors from [method@Atomr.SolverActor.lu_tensor_async]
 * @ipiv: their pivots
 * @b: an n × nrhs column-major view of the right-hand sides, the dtype of
 *   @a, overwritten by the solution
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the solve is done
 * @user_data: data for @callback
 *
 * [method@Atomr.SolverActor.lu_solve_async] on column-major views
 * (strides (1, ld)); @b must not overlap @a or @ipiv.
 *
 * Since: 0.2
 */
void
atomr_solver_actor_lu_solve_tensor_async (AtomrSolverActor     *self,
                                          AtomrSolverTranspose  trans,
                                          AtomrTensor          *a,
                                          AtomrTensor          *ipiv,
                                          AtomrTensor          *b,
                                          GCancellable         *cancellable,
                                          GAsyncReadyCallback   callback,
                                          gpointer              user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  gint64 n, n2, lda, bn, nrhs, ldb;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "lu-solve", atomr_solver_actor_lu_solve_tensor_async, cancellable, callback,
                     user_data);
  FAIL_IF ((guint) trans > ATOMR_SOLVER_CONJUGATE_TRANSPOSE,
           "lu_solve: trans %d is not an AtomrSolverTranspose", (gint) trans);
  CHECK (view_matrix (self, "lu_solve", "a", a, &n, &n2, &lda, &error) &&
         view_matrix (self, "lu_solve", "b", b, &bn, &nrhs, &ldb, &error) &&
         view_pivots (self, "lu_solve", ipiv, n, &error) &&
         view_no_overlap ("lu_solve", "b", b, "a", a, &error) &&
         view_no_overlap ("lu_solve", "b", b, "ipiv", ipiv, &error));
  FAIL_IF (n != n2, "lu_solve: a is %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT "; it must be square",
           n, n2);
  FAIL_IF (bn != n, "lu_solve: b has %" G_GINT64_FORMAT " rows but a is of order %" G_GINT64_FORMAT,
           bn, n);
  FAIL_IF (atomr_tensor_get_dtype (b) != atomr_tensor_get_dtype (a),
           "lu_solve: b has dtype %s, a %s", atomr_dtype_get_name (atomr_tensor_get_dtype (b)),
           atomr_dtype_get_name (atomr_tensor_get_dtype (a)));
  req = request_new (OP_LU_SOLVE, "lu_solve", atomr_tensor_get_buffer (a));
  req->dtype = atomr_tensor_get_dtype (a);
  req->m = n, req->n = n, req->lda = lda, req->off_a = atomr_tensor_get_byte_offset (a);
  req->ipiv = atomr_tensor_get_buffer (ipiv), req->off_ipiv = atomr_tensor_get_byte_offset (ipiv);
  req->trans = trans, req->nrhs = nrhs, req->ldb = ldb;
  req->b = atomr_tensor_get_buffer (b), req->off_b = atomr_tensor_get_byte_offset (b);
  atomr_op_read_tensor (op, a);
  atomr_op_read_tensor (op, ipiv);
  atomr_op_write_tensor (op, b);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_lu_solve_tensor_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.lu_solve_tensor_async].
 *
 * Returns: %TRUE when the right-hand side view holds the solution
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_lu_solve_tensor_finish (AtomrSolverActor  *self,
                                           GAsyncResult      *result,
                                           GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_lu_solve_tensor_async, error);
}

/**
 * atomr_solver_actor_cholesky_tensor_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle of @a that holds the matrix, and receives the factor
 * @a: an n × n Hermitian positive definite column-major matrix view
 *   (strides (1, ld))
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the factorization is done
 * @user_data: data for @callback
 *
 * [method@Atomr.SolverActor.cholesky_async] on a view.
 *
 * Since: 0.2
 */
void
atomr_solver_actor_cholesky_tensor_async (AtomrSolverActor    *self,
                                          AtomrSolverFill      uplo,
                                          AtomrTensor         *a,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  gint64 n, n2, lda;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "cholesky", atomr_solver_actor_cholesky_tensor_async, cancellable, callback,
                     user_data);
  CHECK (check_fill ("cholesky", uplo, &error) &&
         view_matrix (self, "cholesky", "a", a, &n, &n2, &lda, &error));
  FAIL_IF (n != n2, "cholesky: a is %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT "; it must be square",
           n, n2);
  req = request_new (OP_CHOLESKY, "cholesky", atomr_tensor_get_buffer (a));
  req->dtype = atomr_tensor_get_dtype (a);
  req->m = n, req->n = n, req->lda = lda, req->uplo = uplo;
  req->off_a = atomr_tensor_get_byte_offset (a);
  atomr_op_write_tensor (op, a);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_cholesky_tensor_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.cholesky_tensor_async].
 *
 * Returns: %TRUE when the view holds the Cholesky factor
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_cholesky_tensor_finish (AtomrSolverActor  *self,
                                           GAsyncResult      *result,
                                           GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_cholesky_tensor_async, error);
}

/**
 * atomr_solver_actor_cholesky_solve_tensor_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle that holds the factor
 * @a: the factor from [method@Atomr.SolverActor.cholesky_tensor_async]
 * @b: an n × nrhs column-major view of the right-hand sides, the dtype of
 *   @a, overwritten by the solution
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the solve is done
 * @user_data: data for @callback
 *
 * [method@Atomr.SolverActor.cholesky_solve_async] on column-major views;
 * @b must not overlap @a.
 *
 * Since: 0.2
 */
void
atomr_solver_actor_cholesky_solve_tensor_async (AtomrSolverActor    *self,
                                                AtomrSolverFill      uplo,
                                                AtomrTensor         *a,
                                                AtomrTensor         *b,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  gint64 n, n2, lda, bn, nrhs, ldb;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "cholesky-solve", atomr_solver_actor_cholesky_solve_tensor_async, cancellable,
                     callback, user_data);
  CHECK (check_fill ("cholesky_solve", uplo, &error) &&
         view_matrix (self, "cholesky_solve", "a", a, &n, &n2, &lda, &error) &&
         view_matrix (self, "cholesky_solve", "b", b, &bn, &nrhs, &ldb, &error) &&
         view_no_overlap ("cholesky_solve", "b", b, "a", a, &error));
  FAIL_IF (n != n2, "cholesky_solve: a is %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT "; it must be square",
           n, n2);
  FAIL_IF (bn != n, "cholesky_solve: b has %" G_GINT64_FORMAT " rows but a is of order %" G_GINT64_FORMAT,
           bn, n);
  FAIL_IF (atomr_tensor_get_dtype (b) != atomr_tensor_get_dtype (a),
           "cholesky_solve: b has dtype %s, a %s", atomr_dtype_get_name (atomr_tensor_get_dtype (b)),
           atomr_dtype_get_name (atomr_tensor_get_dtype (a)));
  req = request_new (OP_CHOLESKY_SOLVE, "cholesky_solve", atomr_tensor_get_buffer (a));
  req->dtype = atomr_tensor_get_dtype (a);
  req->m = n, req->n = n, req->lda = lda, req->uplo = uplo;
  req->off_a = atomr_tensor_get_byte_offset (a);
  req->b = atomr_tensor_get_buffer (b), req->off_b = atomr_tensor_get_byte_offset (b);
  req->nrhs = nrhs, req->ldb = ldb;
  atomr_op_read_tensor (op, a);
  atomr_op_write_tensor (op, b);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_cholesky_solve_tensor_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.cholesky_solve_tensor_async].
 *
 * Returns: %TRUE when the right-hand side view holds the solution
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_cholesky_solve_tensor_finish (AtomrSolverActor  *self,
                                                 GAsyncResult      *result,
                                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_cholesky_solve_tensor_async, error);
}

/**
 * atomr_solver_actor_qr_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: an @m × @n matrix, overwritten by R (upper triangle) and the
 *   Householder reflectors (below it)
 * @m: rows of @a
 * @n: columns of @a
 * @lda: leading dimension of @a (≥ @m), also used for @q
 * @tau: min(@m, @n) scalars of the reflectors, same dtype as @a
 * @q: (nullable): where to form the explicit Q, @m × min(@m, @n) with
 *   leading dimension @lda (orgqr or ungqr), or %NULL
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the factorization is done
 * @user_data: data for @callback
 *
 * QR factorization A = Q·R (geqrf), and Q itself when @q is given.
 *
 * Since: 0.1
 */
void
atomr_solver_actor_qr_async (AtomrSolverActor    *self,
                             AtomrBuffer         *a,
                             gint64               m,
                             gint64               n,
                             gint64               lda,
                             AtomrBuffer         *tau,
                             AtomrBuffer         *q,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "qr", atomr_solver_actor_qr_async, cancellable, callback, user_data);
  CHECK (check_matrix_dtype ("qr", a, all_dtypes, 4, &error) &&
         atomr_check_positive ("qr", "m", m, &error) &&
         atomr_check_positive ("qr", "n", n, &error) &&
         atomr_check_matrix ("qr", "a", a, m, n, "lda", lda, 0, 1, &error) &&
         atomr_check_same_dtype ("qr", "a", a, "tau", tau, &error) &&
         atomr_check_min_elements ("qr", "tau", tau, MIN (m, n), &error) &&
         atomr_check_no_alias ("qr", ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("tau", tau),
                                                     ATOMR_OPERAND ("q", q)),
                               NULL, 0, &error));
  if (q)
    CHECK (atomr_check_int32_range ("qr", "m", m, &error) &&
           atomr_check_int32_range ("qr", "n", n, &error) &&
           atomr_check_int32_range ("qr", "lda", lda, &error) &&
           check_operand ("qr", "q", q, a, m, MIN (m, n), "lda", lda, 1, &error));
  req = request_new (OP_QR, "qr", a);
  req->m = m, req->n = n, req->lda = lda, req->tau = tau, req->q = q;
  req->n_info = 2;   /* geqrf, orgqr */
  atomr_op_write (op, a);
  atomr_op_write (op, tau);
  if (q)
    atomr_op_write (op, q);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_qr_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.qr_async].
 *
 * Returns: %TRUE when the factorization is done
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_qr_finish (AtomrSolverActor  *self,
                              GAsyncResult      *result,
                              GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_qr_async, error);
}

/**
 * atomr_solver_actor_cholesky_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle of @a that holds the matrix, and receives the factor
 * @a: an @n × @n Hermitian positive definite matrix
 * @n: order of @a
 * @lda: leading dimension of @a (≥ @n)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the factorization is done
 * @user_data: data for @callback
 *
 * Cholesky factorization A = L·Lᴴ or Uᴴ·U (potrf).  A matrix that is not
 * positive definite completes with %ATOMR_ERROR_INVALID_ARGUMENT naming the
 * order of the first leading minor that is not.
 *
 * Since: 0.1
 */
void
atomr_solver_actor_cholesky_async (AtomrSolverActor    *self,
                                   AtomrSolverFill      uplo,
                                   AtomrBuffer         *a,
                                   gint64               n,
                                   gint64               lda,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "cholesky", atomr_solver_actor_cholesky_async, cancellable, callback, user_data);
  CHECK (check_fill ("cholesky", uplo, &error) &&
         check_matrix_dtype ("cholesky", a, all_dtypes, 4, &error) &&
         atomr_check_positive ("cholesky", "n", n, &error) &&
         atomr_check_matrix ("cholesky", "a", a, n, n, "lda", lda, 0, 1, &error));
  req = request_new (OP_CHOLESKY, "cholesky", a);
  req->m = n, req->n = n, req->lda = lda, req->uplo = uplo;
  atomr_op_write (op, a);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_cholesky_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.cholesky_async].
 *
 * Returns: %TRUE when @a holds the Cholesky factor
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_cholesky_finish (AtomrSolverActor  *self,
                                    GAsyncResult      *result,
                                    GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_cholesky_async, error);
}

/**
 * atomr_solver_actor_cholesky_solve_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle that holds the factor
 * @a: the factor from [method@Atomr.SolverActor.cholesky_async]
 * @n: order of @a
 * @lda: leading dimension of @a (≥ @n)
 * @b: the @n × @nrhs right-hand sides, overwritten by the solution
 * @nrhs: number of right-hand sides
 * @ldb: leading dimension of @b (≥ @n)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the solve is done
 * @user_data: data for @callback
 *
 * Solves A·X = B with a Cholesky factor (potrs).
 *
 * Since: 0.1
 */
void
atomr_solver_actor_cholesky_solve_async (AtomrSolverActor    *self,
                                         AtomrSolverFill      uplo,
                                         AtomrBuffer         *a,
                                         gint64               n,
                                         gint64               lda,
                                         AtomrBuffer         *b,
                                         gint64               nrhs,
                                         gint64               ldb,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "cholesky-solve", atomr_solver_actor_cholesky_solve_async, cancellable,
                     callback, user_data);
  CHECK (check_fill ("cholesky_solve", uplo, &error) &&
         check_matrix_dtype ("cholesky_solve", a, all_dtypes, 4, &error) &&
         atomr_check_positive ("cholesky_solve", "n", n, &error) &&
         atomr_check_positive ("cholesky_solve", "nrhs", nrhs, &error) &&
         atomr_check_matrix ("cholesky_solve", "a", a, n, n, "lda", lda, 0, 1, &error) &&
         check_operand ("cholesky_solve", "b", b, a, n, nrhs, "ldb", ldb, 1, &error) &&
         atomr_check_no_alias ("cholesky_solve", ATOMR_OPERANDS (ATOMR_OPERAND ("b", b)),
                               ATOMR_OPERANDS (ATOMR_OPERAND ("a", a)), &error));
  req = request_new (OP_CHOLESKY_SOLVE, "cholesky_solve", a);
  req->m = n, req->n = n, req->lda = lda, req->uplo = uplo;
  req->b = b, req->nrhs = nrhs, req->ldb = ldb;
  atomr_op_read (op, a);
  atomr_op_write (op, b);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_cholesky_solve_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.cholesky_solve_async].
 *
 * Returns: %TRUE when @b holds the solution
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_cholesky_solve_finish (AtomrSolverActor  *self,
                                          GAsyncResult      *result,
                                          GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_cholesky_solve_async, error);
}

/**
 * atomr_solver_actor_svd_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: an @m × @n matrix with @m ≥ @n (transpose a wide one first);
 *   destroyed
 * @m: rows of @a
 * @n: columns of @a
 * @lda: leading dimension of @a (≥ @m)
 * @s: the @n singular values, descending, in the real dtype of @a's
 *   precision (f32 for f32 and c64, f64 for f64 and c128)
 * @u: (nullable): the @m × @n left singular vectors (economy size), or %NULL
 * @ldu: leading dimension of @u (≥ @m; ignored without @u)
 * @vt: (nullable): the @n × @n matrix Vᴴ, or %NULL
 * @ldvt: leading dimension of @vt (≥ @n; ignored without @vt)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the decomposition is done
 * @user_data: data for @callback
 *
 * Singular value decomposition A = U·Σ·Vᴴ (gesvd).
 *
 * Since: 0.1
 */
void
atomr_solver_actor_svd_async (AtomrSolverActor    *self,
                              AtomrBuffer         *a,
                              gint64               m,
                              gint64               n,
                              gint64               lda,
                              AtomrBuffer         *s,
                              AtomrBuffer         *u,
                              gint64               ldu,
                              AtomrBuffer         *vt,
                              gint64               ldvt,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "svd", atomr_solver_actor_svd_async, cancellable, callback, user_data);
  CHECK (check_matrix_dtype ("svd", a, all_dtypes, 4, &error) &&
         atomr_check_positive ("svd", "m", m, &error) &&
         atomr_check_positive ("svd", "n", n, &error));
  FAIL_IF (m < n, "svd: m is %" G_GINT64_FORMAT " and n is %" G_GINT64_FORMAT "; cuSOLVER's gesvd "
           "needs m >= n (decompose the transpose instead)", m, n);
  CHECK (atomr_check_matrix ("svd", "a", a, m, n, "lda", lda, 0, 1, &error) &&
         check_real_vector ("svd", "s", s, a, n, &error));
  if (u)
    CHECK (check_operand ("svd", "u", u, a, m, n, "ldu", ldu, 1, &error));
  if (vt)
    CHECK (check_operand ("svd", "vt", vt, a, n, n, "ldvt", ldvt, 1, &error));
  CHECK (atomr_check_no_alias ("svd", ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("s", s),
                                                      ATOMR_OPERAND ("u", u), ATOMR_OPERAND ("vt", vt)),
                               NULL, 0, &error));
  req = request_new (OP_SVD, "svd", a);
  req->m = m, req->n = n, req->lda = lda, req->s = s;
  req->u = u, req->ldu = ldu, req->v = vt, req->ldv = ldvt;
  atomr_op_write (op, a);
  atomr_op_write (op, s);
  if (u)
    atomr_op_write (op, u);
  if (vt)
    atomr_op_write (op, vt);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_svd_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.svd_async].
 *
 * Returns: %TRUE when the decomposition converged
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_svd_finish (AtomrSolverActor  *self,
                               GAsyncResult      *result,
                               GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_svd_async, error);
}

/**
 * atomr_solver_actor_gesvdj_batched_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: @batch matrices of @m × @n (each @lda × @n elements apart);
 *   destroyed
 * @m: rows of each matrix (≤ 32)
 * @n: columns of each matrix (≤ 32)
 * @lda: leading dimension (≥ @m)
 * @s: min(@m, @n) singular values per matrix, real dtype of @a's precision
 * @u: @batch left singular vector matrices of @m × @m (@ldu × @m apart)
 * @ldu: leading dimension of @u (≥ @m)
 * @v: @batch right singular vector matrices of @n × @n (V, not Vᴴ;
 *   @ldv × @n apart)
 * @ldv: leading dimension of @v (≥ @n)
 * @batch: number of matrices
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the decompositions are done
 * @user_data: data for @callback
 *
 * Batched singular value decomposition of small matrices by Jacobi
 * rotations (gesvdjBatched).  A member that does not converge completes
 * with %ATOMR_ERROR_INVALID_ARGUMENT naming it.
 *
 * Since: 0.1
 */
void
atomr_solver_actor_gesvdj_batched_async (AtomrSolverActor    *self,
                                         AtomrBuffer         *a,
                                         gint64               m,
                                         gint64               n,
                                         gint64               lda,
                                         AtomrBuffer         *s,
                                         AtomrBuffer         *u,
                                         gint64               ldu,
                                         AtomrBuffer         *v,
                                         gint64               ldv,
                                         gint64               batch,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "gesvdj_batched";

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "gesvdj-batched", atomr_solver_actor_gesvdj_batched_async, cancellable,
                     callback, user_data);
  CHECK (check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_positive (name, "m", m, &error) &&
         atomr_check_positive (name, "n", n, &error) &&
         atomr_check_int32_range (name, "batch", batch, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error));
  FAIL_IF (m > 32 || n > 32, "gesvdj_batched: the matrices are %" G_GINT64_FORMAT " × %"
           G_GINT64_FORMAT "; gesvdjBatched handles at most 32 × 32 (use svd)", m, n);
  CHECK (atomr_check_matrix (name, "a", a, m, n, "lda", lda, ATOMR_STRIDE_PACKED, batch, &error) &&
         check_real_vector (name, "s", s, a, (guint64) MIN (m, n) * batch, &error) &&
         check_operand (name, "u", u, a, m, m, "ldu", ldu, batch, &error) &&
         check_operand (name, "v", v, a, n, n, "ldv", ldv, batch, &error) &&
         atomr_check_int32_range (name, "ldu", ldu, &error) &&
         atomr_check_int32_range (name, "ldv", ldv, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("s", s),
                                                     ATOMR_OPERAND ("u", u), ATOMR_OPERAND ("v", v)),
                               NULL, 0, &error));
  req = request_new (OP_GESVDJ_BATCHED, name, a);
  req->m = m, req->n = n, req->lda = lda, req->s = s, req->batch = batch;
  req->u = u, req->ldu = ldu, req->v = v, req->ldv = ldv;
  req->n_info = batch;
  atomr_op_write (op, a);
  atomr_op_write (op, s);
  atomr_op_write (op, u);
  atomr_op_write (op, v);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_gesvdj_batched_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.gesvdj_batched_async].
 *
 * Returns: %TRUE when every decomposition converged
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_gesvdj_batched_finish (AtomrSolverActor  *self,
                                          GAsyncResult      *result,
                                          GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_gesvdj_batched_async, error);
}

static void
eigen_async (AtomrSolverActor    *self,
             const gchar         *name,
             gpointer             source_tag,
             gboolean             hermitian,
             AtomrSolverFill      uplo,
             gboolean             compute_vectors,
             AtomrBuffer         *a,
             gint64               n,
             gint64               lda,
             AtomrBuffer         *w,
             GCancellable        *cancellable,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  op = atomr_op_new (self, name, source_tag, cancellable, callback, user_data);
  CHECK (check_fill (name, uplo, &error) &&
         check_matrix_dtype (name, a, hermitian ? complex_dtypes : real_dtypes, 2, &error) &&
         atomr_check_positive (name, "n", n, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, 0, 1, &error) &&
         check_real_vector (name, "w", w, a, n, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("w", w)),
                               NULL, 0, &error));
  req = request_new (OP_SYEVD, name, a);
  req->m = n, req->n = n, req->lda = lda, req->s = w;
  req->uplo = uplo, req->vectors = compute_vectors;
  atomr_op_write (op, a);
  atomr_op_write (op, w);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_syevd_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle of @a that holds the matrix
 * @compute_vectors: also compute the eigenvectors (into @a)
 * @a: an @n × @n real symmetric matrix (f32 or f64); overwritten by the
 *   orthonormal eigenvectors when @compute_vectors, else destroyed
 * @n: order of @a
 * @lda: leading dimension of @a (≥ @n)
 * @w: the @n eigenvalues in ascending order, same dtype as @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the decomposition is done
 * @user_data: data for @callback
 *
 * Symmetric eigendecomposition by divide and conquer (syevd).
 *
 * Since: 0.1
 */
void
atomr_solver_actor_syevd_async (AtomrSolverActor    *self,
                                AtomrSolverFill      uplo,
                                gboolean             compute_vectors,
                                AtomrBuffer         *a,
                                gint64               n,
                                gint64               lda,
                                AtomrBuffer         *w,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  eigen_async (self, "syevd", atomr_solver_actor_syevd_async, FALSE, uplo, compute_vectors,
               a, n, lda, w, cancellable, callback, user_data);
}

/**
 * atomr_solver_actor_syevd_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.syevd_async].
 *
 * Returns: %TRUE when the decomposition converged
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_syevd_finish (AtomrSolverActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_syevd_async, error);
}

/**
 * atomr_solver_actor_heevd_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle of @a that holds the matrix
 * @compute_vectors: also compute the eigenvectors (into @a)
 * @a: an @n × @n Hermitian matrix (c64 or c128); overwritten by the
 *   orthonormal eigenvectors when @compute_vectors, else destroyed
 * @n: order of @a
 * @lda: leading dimension of @a (≥ @n)
 * @w: the @n real eigenvalues in ascending order (f32 for c64, f64 for c128)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the decomposition is done
 * @user_data: data for @callback
 *
 * Hermitian eigendecomposition by divide and conquer (heevd).
 *
 * Since: 0.1
 */
void
atomr_solver_actor_heevd_async (AtomrSolverActor    *self,
                                AtomrSolverFill      uplo,
                                gboolean             compute_vectors,
                                AtomrBuffer         *a,
                                gint64               n,
                                gint64               lda,
                                AtomrBuffer         *w,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  eigen_async (self, "heevd", atomr_solver_actor_heevd_async, TRUE, uplo, compute_vectors,
               a, n, lda, w, cancellable, callback, user_data);
}

/**
 * atomr_solver_actor_heevd_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.heevd_async].
 *
 * Returns: %TRUE when the decomposition converged
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_heevd_finish (AtomrSolverActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_heevd_async, error);
}

static void
generalized_async (AtomrSolverActor    *self,
                   const gchar         *name,
                   gpointer             source_tag,
                   gboolean             hermitian,
                   AtomrSolverEigType   itype,
                   AtomrSolverFill      uplo,
                   gboolean             compute_vectors,
                   AtomrBuffer         *a,
                   gint64               n,
                   gint64               lda,
                   AtomrBuffer         *b,
                   gint64               ldb,
                   AtomrBuffer         *w,
                   GCancellable        *cancellable,
                   GAsyncReadyCallback  callback,
                   gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;

  op = atomr_op_new (self, name, source_tag, cancellable, callback, user_data);
  FAIL_IF ((guint) itype > ATOMR_SOLVER_EIG_BAX_LX, "%s: itype %d is not an AtomrSolverEigType",
           name, (gint) itype);
  CHECK (check_fill (name, uplo, &error) &&
         check_matrix_dtype (name, a, hermitian ? complex_dtypes : real_dtypes, 2, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error) &&
         atomr_check_int32_range (name, "ldb", ldb, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, 0, 1, &error) &&
         check_operand (name, "b", b, a, n, n, "ldb", ldb, 1, &error) &&
         check_real_vector (name, "w", w, a, n, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("b", b),
                                                     ATOMR_OPERAND ("w", w)),
                               NULL, 0, &error));
  req = request_new (OP_SYGVD, name, a);
  req->m = n, req->n = n, req->lda = lda, req->b = b, req->ldb = ldb, req->s = w;
  req->itype = itype, req->uplo = uplo, req->vectors = compute_vectors;
  atomr_op_write (op, a);
  atomr_op_write (op, b);
  atomr_op_write (op, w);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_sygvd_async:
 * @self: an [class@Atomr.SolverActor]
 * @itype: the problem: A·x = λ·B·x, A·B·x = λ·x or B·A·x = λ·x
 * @uplo: the triangle of @a and @b that holds the matrices
 * @compute_vectors: also compute the eigenvectors (into @a)
 * @a: an @n × @n real symmetric matrix (f32 or f64)
 * @n: order of @a and @b
 * @lda: leading dimension of @a (≥ @n)
 * @b: an @n × @n symmetric positive definite matrix, overwritten by its
 *   Cholesky factor
 * @ldb: leading dimension of @b (≥ @n)
 * @w: the @n eigenvalues in ascending order, same dtype as @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the decomposition is done
 * @user_data: data for @callback
 *
 * Generalized symmetric-definite eigenproblem (sygvd).  A @b that is not
 * positive definite completes with %ATOMR_ERROR_INVALID_ARGUMENT naming
 * the order of its failing leading minor.
 *
 * Since: 0.1
 */
void
atomr_solver_actor_sygvd_async (AtomrSolverActor    *self,
                                AtomrSolverEigType   itype,
                                AtomrSolverFill      uplo,
                                gboolean             compute_vectors,
                                AtomrBuffer         *a,
                                gint64               n,
                                gint64               lda,
                                AtomrBuffer         *b,
                                gint64               ldb,
                                AtomrBuffer         *w,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  generalized_async (self, "sygvd", atomr_solver_actor_sygvd_async, FALSE, itype, uplo,
                     compute_vectors, a, n, lda, b, ldb, w, cancellable, callback, user_data);
}

/**
 * atomr_solver_actor_sygvd_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.sygvd_async].
 *
 * Returns: %TRUE when the decomposition succeeded
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_sygvd_finish (AtomrSolverActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_sygvd_async, error);
}

/**
 * atomr_solver_actor_hegvd_async:
 * @self: an [class@Atomr.SolverActor]
 * @itype: the problem: A·x = λ·B·x, A·B·x = λ·x or B·A·x = λ·x
 * @uplo: the triangle of @a and @b that holds the matrices
 * @compute_vectors: also compute the eigenvectors (into @a)
 * @a: an @n × @n Hermitian matrix (c64 or c128)
 * @n: order of @a and @b
 * @lda: leading dimension of @a (≥ @n)
 * @b: an @n × @n Hermitian positive definite matrix, overwritten by its
 *   Cholesky factor
 * @ldb: leading dimension of @b (≥ @n)
 * @w: the @n real eigenvalues in ascending order (f32 for c64, f64 for c128)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the decomposition is done
 * @user_data: data for @callback
 *
 * Generalized Hermitian-definite eigenproblem (hegvd).
 *
 * Since: 0.1
 */
void
atomr_solver_actor_hegvd_async (AtomrSolverActor    *self,
                                AtomrSolverEigType   itype,
                                AtomrSolverFill      uplo,
                                gboolean             compute_vectors,
                                AtomrBuffer         *a,
                                gint64               n,
                                gint64               lda,
                                AtomrBuffer         *b,
                                gint64               ldb,
                                AtomrBuffer         *w,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  generalized_async (self, "hegvd", atomr_solver_actor_hegvd_async, TRUE, itype, uplo,
                     compute_vectors, a, n, lda, b, ldb, w, cancellable, callback, user_data);
}

/**
 * atomr_solver_actor_hegvd_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.hegvd_async].
 *
 * Returns: %TRUE when the decomposition succeeded
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_hegvd_finish (AtomrSolverActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_hegvd_async, error);
}

/**
 * atomr_solver_actor_getrf_batched_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: @batch matrices of @n × @n, @lda × @n elements apart, overwritten
 *   by their LU factors
 * @n: order of each matrix
 * @lda: leading dimension (≥ @n)
 * @ipiv: (nullable): an i32 buffer of @n × @batch pivots (1-based), or
 *   %NULL to factor without pivoting
 * @batch: number of matrices
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the factorizations are done
 * @user_data: data for @callback
 *
 * Batched LU factorization (cuBLAS getrfBatched).  A singular member
 * completes with %ATOMR_ERROR_INVALID_ARGUMENT naming the member and its
 * first zero pivot.
 *
 * Since: 0.1
 */
void
atomr_solver_actor_getrf_batched_async (AtomrSolverActor    *self,
                                        AtomrBuffer         *a,
                                        gint64               n,
                                        gint64               lda,
                                        AtomrBuffer         *ipiv,
                                        gint64               batch,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "getrf_batched";

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "getrf-batched", atomr_solver_actor_getrf_batched_async, cancellable,
                     callback, user_data);
  CHECK (check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error) &&
         atomr_check_int32_range (name, "batch", batch, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, ATOMR_STRIDE_PACKED, batch, &error));
  if (ipiv)
    CHECK (atomr_check_dtype (name, "ipiv", ipiv, ATOMR_DTYPE_I32, &error) &&
           atomr_check_min_elements (name, "ipiv", ipiv, (guint64) n * batch, &error) &&
           atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("ipiv", ipiv)),
                                 NULL, 0, &error));
  req = request_new (OP_GETRF_BATCHED, name, a);
  req->m = n, req->n = n, req->lda = lda, req->ipiv = ipiv, req->batch = batch;
  req->n_info = batch;
  atomr_op_write (op, a);
  if (ipiv)
    atomr_op_write (op, ipiv);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_getrf_batched_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.getrf_batched_async].
 *
 * Returns: %TRUE when every member was factored and none is singular
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_getrf_batched_finish (AtomrSolverActor  *self,
                                         GAsyncResult      *result,
                                         GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_getrf_batched_async, error);
}

/**
 * atomr_solver_actor_potrf_batched_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle that holds each matrix and receives its factor
 * @a: @batch Hermitian positive definite matrices of @n × @n, @lda × @n
 *   elements apart
 * @n: order of each matrix
 * @lda: leading dimension (≥ @n)
 * @batch: number of matrices
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the factorizations are done
 * @user_data: data for @callback
 *
 * Batched Cholesky factorization (potrfBatched).  A member that is not
 * positive definite completes with %ATOMR_ERROR_INVALID_ARGUMENT naming
 * the member and the order of its failing leading minor.
 *
 * Since: 0.1
 */
void
atomr_solver_actor_potrf_batched_async (AtomrSolverActor    *self,
                                        AtomrSolverFill      uplo,
                                        AtomrBuffer         *a,
                                        gint64               n,
                                        gint64               lda,
                                        gint64               batch,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "potrf_batched";

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "potrf-batched", atomr_solver_actor_potrf_batched_async, cancellable,
                     callback, user_data);
  CHECK (check_fill (name, uplo, &error) &&
         check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error) &&
         atomr_check_int32_range (name, "batch", batch, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, ATOMR_STRIDE_PACKED, batch, &error));
  req = request_new (OP_POTRF_BATCHED, name, a);
  req->m = n, req->n = n, req->lda = lda, req->uplo = uplo, req->batch = batch;
  req->n_info = batch;
  atomr_op_write (op, a);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_potrf_batched_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.potrf_batched_async].
 *
 * Returns: %TRUE when every member is positive definite and was factored
 *
 * Since: 0.1
 */
gboolean
atomr_solver_actor_potrf_batched_finish (AtomrSolverActor  *self,
                                         GAsyncResult      *result,
                                         GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_potrf_batched_async, error);
}

/* ------------------------------------------------------------------ */
/* GObject                                                              */

/**
 * atomr_solver_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a solver actor with its own stream, cuSOLVER and cuBLAS handles
 * and workspace, bound to the calling thread's thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrSolverActor *
atomr_solver_actor_new (AtomrDevice  *device,
                        GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_SOLVER_ACTOR, device, NULL, error);
}

/**
 * atomr_solver_actor_get_workspace_size:
 * @self: an [class@Atomr.SolverActor]
 *
 * Gets the bytes of device workspace the actor holds now.
 *
 * This is the value of the [property@Atomr.SolverActor:workspace-size] property.
 *
 * Returns: the bytes of device workspace the actor holds now
 *
 * Since: 0.1
 */
guint64
atomr_solver_actor_get_workspace_size (AtomrSolverActor *self)
{
  g_return_val_if_fail (ATOMR_IS_SOLVER_ACTOR (self), 0);
  return __atomic_load_n (&self->workspace_size, __ATOMIC_RELAXED);
}

static void
atomr_solver_actor_finalize (GObject *object)
{
  AtomrSolverActor *self = ATOMR_SOLVER_ACTOR (object);

  G_OBJECT_CLASS (atomr_solver_actor_parent_class)->finalize (object);
  g_ptr_array_unref (self->host_workspaces);
}

static void
atomr_solver_actor_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_WORKSPACE_SIZE:
      g_value_set_uint64 (value, atomr_solver_actor_get_workspace_size (ATOMR_SOLVER_ACTOR (object)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_solver_actor_class_init (AtomrSolverActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->finalize = atomr_solver_actor_finalize;
  object_class->get_property = atomr_solver_actor_get_property;
  actor_class->library = "cusolver";
  actor_class->setup = solver_setup;
  actor_class->teardown = solver_teardown;

  /**
   * AtomrSolverActor:workspace-size:
   *
   * Bytes of device workspace the actor holds, shared by its operations
   * (not notified: read it when needed).
   *
   * Since: 0.1
   */
  properties[PROP_WORKSPACE_SIZE] =
    g_param_spec_uint64 ("workspace-size", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_solver_actor_init (AtomrSolverActor *self)
{
  self->host_workspaces = g_ptr_array_new_with_free_func (g_free);
}

/**
 * atomr_solver_actor_getrs_batched_async:
 * @self: an [class@Atomr.SolverActor]
 * @trans: which system to solve with each factor
 * @a: @batch LU factors of @n × @n from [method@Atomr.SolverActor.getrf_batched_async],
 *   @lda × @n elements apart
 * @n: order of each matrix
 * @lda: leading dimension of each factor (≥ @n)
 * @ipiv: the i32 pivots of the factorization, @n per matrix
 * @b: @batch right-hand sides of @n × @nrhs, @ldb × @nrhs elements apart,
 *   overwritten by the solutions
 * @nrhs: right-hand sides per matrix
 * @ldb: leading dimension of each B (≥ @n)
 * @batch: number of systems
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the solutions are in @b
 * @user_data: data for @callback
 *
 * Solves the @batch systems op(A_i)·X_i = B_i with the factors of a batched
 * LU (cuBLAS getrsBatched), so that batched factorizations can solve.
 *
 * Since: 0.2
 */
void
atomr_solver_actor_getrs_batched_async (AtomrSolverActor     *self,
                                        AtomrSolverTranspose  trans,
                                        AtomrBuffer          *a,
                                        gint64                n,
                                        gint64                lda,
                                        AtomrBuffer          *ipiv,
                                        AtomrBuffer          *b,
                                        gint64                nrhs,
                                        gint64                ldb,
                                        gint64                batch,
                                        GCancellable         *cancellable,
                                        GAsyncReadyCallback   callback,
                                        gpointer              user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "getrs_batched";
  guint64 n_pivots = 0;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "getrs-batched", atomr_solver_actor_getrs_batched_async, cancellable,
                     callback, user_data);
  FAIL_IF ((guint) trans > ATOMR_SOLVER_CONJUGATE_TRANSPOSE,
           "getrs_batched: trans %d is not an AtomrSolverTranspose", (gint) trans);
  CHECK (check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "nrhs", nrhs, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error) &&
         atomr_check_int32_range (name, "ldb", ldb, &error) &&
         atomr_check_int32_range (name, "batch", batch, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, ATOMR_STRIDE_PACKED, batch, &error) &&
         atomr_check_dtype (name, "ipiv", ipiv, ATOMR_DTYPE_I32, &error) &&
         atomr_size_mul (name, "the pivot count (n × batch)", (guint64) n, (guint64) batch, &n_pivots,
                         &error) &&
         atomr_check_min_elements (name, "ipiv", ipiv, n_pivots, &error) &&
         check_operand (name, "b", b, a, n, nrhs, "ldb", ldb, batch, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("b", b)),
                               ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("ipiv", ipiv)),
                               &error));
  req = request_new (OP_GETRS_BATCHED, name, a);
  req->m = n, req->n = n, req->nrhs = nrhs, req->lda = lda, req->ldb = ldb, req->batch = batch;
  req->trans = trans, req->ipiv = ipiv, req->b = b;
  atomr_op_read (op, a);
  atomr_op_read (op, ipiv);
  atomr_op_read (op, b);
  atomr_op_write (op, b);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_getrs_batched_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.getrs_batched_async].
 *
 * Returns: %TRUE when every solution is in B
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_getrs_batched_finish (AtomrSolverActor  *self,
                                         GAsyncResult      *result,
                                         GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_getrs_batched_async, error);
}

/**
 * atomr_solver_actor_potrs_batched_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle that holds each Cholesky factor
 * @a: @batch factors of @n × @n from [method@Atomr.SolverActor.potrf_batched_async],
 *   @lda × @n elements apart
 * @n: order of each matrix
 * @lda: leading dimension of each factor (≥ @n)
 * @b: @batch right-hand side vectors of @n elements, @ldb apart,
 *   overwritten by the solutions
 * @ldb: distance between two right-hand sides (≥ @n)
 * @batch: number of systems
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the solutions are in @b
 * @user_data: data for @callback
 *
 * Solves the @batch systems A_i·x_i = b_i with the factors of a batched
 * Cholesky (cuSOLVER potrsBatched, which takes one right-hand side per
 * system).
 *
 * Since: 0.2
 */
void
atomr_solver_actor_potrs_batched_async (AtomrSolverActor    *self,
                                        AtomrSolverFill      uplo,
                                        AtomrBuffer         *a,
                                        gint64               n,
                                        gint64               lda,
                                        AtomrBuffer         *b,
                                        gint64               ldb,
                                        gint64               batch,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "potrs_batched";

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, "potrs-batched", atomr_solver_actor_potrs_batched_async, cancellable,
                     callback, user_data);
  CHECK (check_fill (name, uplo, &error) &&
         check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error) &&
         atomr_check_int32_range (name, "ldb", ldb, &error) &&
         atomr_check_int32_range (name, "batch", batch, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, ATOMR_STRIDE_PACKED, batch, &error) &&
         check_operand (name, "b", b, a, n, 1, "ldb", ldb, batch, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("b", b)),
                               ATOMR_OPERANDS (ATOMR_OPERAND ("a", a)), &error));
  req = request_new (OP_POTRS_BATCHED, name, a);
  req->m = n, req->n = n, req->nrhs = 1, req->lda = lda, req->ldb = ldb, req->batch = batch;
  req->uplo = uplo, req->b = b;
  atomr_op_read (op, a);
  atomr_op_read (op, b);
  atomr_op_write (op, b);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_potrs_batched_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.potrs_batched_async].
 *
 * Returns: %TRUE when every solution is in B
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_potrs_batched_finish (AtomrSolverActor  *self,
                                         GAsyncResult      *result,
                                         GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_potrs_batched_async, error);
}

/**
 * atomr_solver_actor_gesvdj_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: an @m × @n matrix (any @m and @n), destroyed
 * @m: rows of @a
 * @n: columns of @a
 * @lda: leading dimension of @a (≥ @m)
 * @s: min(@m, @n) singular values, descending, in the real dtype of @a
 * @u: left singular vectors: @m × @m when @full, else @m × min(@m, @n)
 * @ldu: leading dimension of @u (≥ @m)
 * @v: right singular vectors (V, not Vᴴ): @n × @n when @full, else
 *   @n × min(@m, @n)
 * @ldv: leading dimension of @v (≥ @n)
 * @full: %TRUE for the full U and V, %FALSE for the economy size
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the decomposition is done
 * @user_data: data for @callback
 *
 * A = U·diag(s)·Vᴴ by one-sided Jacobi rotations (cuSOLVER gesvdj): unlike
 * [method@Atomr.SolverActor.svd_async] it takes wide matrices (@m < @n) and
 * gives full U and V.
 *
 * Since: 0.2
 */
void
atomr_solver_actor_gesvdj_async (AtomrSolverActor    *self,
                                 AtomrBuffer         *a,
                                 gint64               m,
                                 gint64               n,
                                 gint64               lda,
                                 AtomrBuffer         *s,
                                 AtomrBuffer         *u,
                                 gint64               ldu,
                                 AtomrBuffer         *v,
                                 gint64               ldv,
                                 gboolean             full,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "gesvdj";
  gint64 k;

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, name, atomr_solver_actor_gesvdj_async, cancellable, callback, user_data);
  CHECK (check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "m", m, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error) &&
         atomr_check_int32_range (name, "ldu", ldu, &error) &&
         atomr_check_int32_range (name, "ldv", ldv, &error));
  k = MIN (m, n);
  CHECK (atomr_check_matrix (name, "a", a, m, n, "lda", lda, 0, 1, &error) &&
         check_real_vector (name, "s", s, a, k, &error) &&
         check_operand (name, "u", u, a, m, full ? m : k, "ldu", ldu, 1, &error) &&
         check_operand (name, "v", v, a, n, full ? n : k, "ldv", ldv, 1, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("s", s),
                                                     ATOMR_OPERAND ("u", u), ATOMR_OPERAND ("v", v)),
                               NULL, 0, &error));
  req = request_new (OP_GESVDJ, name, a);
  req->m = m, req->n = n, req->lda = lda, req->s = s, req->u = u, req->ldu = ldu;
  req->v = v, req->ldv = ldv, req->vectors = !!full;
  atomr_op_write (op, a);
  atomr_op_write (op, s);
  atomr_op_write (op, u);
  atomr_op_write (op, v);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_gesvdj_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.gesvdj_async].
 *
 * Returns: %TRUE when s, U and V were computed
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_gesvdj_finish (AtomrSolverActor  *self,
                                  GAsyncResult      *result,
                                  GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_gesvdj_async, error);
}

/**
 * atomr_solver_actor_syevj_async:
 * @self: an [class@Atomr.SolverActor]
 * @uplo: the triangle of @a that holds the matrix
 * @compute_vectors: %TRUE to overwrite @a with the eigenvectors
 * @a: a symmetric (f32, f64) or Hermitian (c64, c128) @n × @n matrix
 * @n: order of @a
 * @lda: leading dimension of @a (≥ @n)
 * @w: @n eigenvalues, ascending, in the real dtype of @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the eigenvalues are in @w
 * @user_data: data for @callback
 *
 * Eigenvalues (and vectors) by Jacobi rotations (cuSOLVER syevj/heevj):
 * faster than [method@Atomr.SolverActor.syevd_async] for small and medium
 * matrices, and accurate to the tolerance of cuSOLVER's defaults.
 *
 * Since: 0.2
 */
void
atomr_solver_actor_syevj_async (AtomrSolverActor    *self,
                                AtomrSolverFill      uplo,
                                gboolean             compute_vectors,
                                AtomrBuffer         *a,
                                gint64               n,
                                gint64               lda,
                                AtomrBuffer         *w,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "syevj";

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, name, atomr_solver_actor_syevj_async, cancellable, callback, user_data);
  CHECK (check_fill (name, uplo, &error) &&
         check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "lda", lda, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, 0, 1, &error) &&
         check_real_vector (name, "w", w, a, n, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("w", w)),
                               NULL, 0, &error));
  req = request_new (OP_SYEVJ, name, a);
  req->m = n, req->n = n, req->lda = lda, req->s = w, req->uplo = uplo, req->vectors = !!compute_vectors;
  atomr_op_write (op, a);
  atomr_op_write (op, w);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_syevj_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.syevj_async].
 *
 * Returns: %TRUE when the eigenvalues (and vectors) were computed
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_syevj_finish (AtomrSolverActor  *self,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_syevj_async, error);
}

/**
 * atomr_solver_actor_gels_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: an @m × @n matrix of full rank with @m ≥ @n, overwritten by its
 *   factorization
 * @m: rows of @a
 * @n: columns of @a
 * @lda: leading dimension of @a (≥ @m)
 * @b: the @m × @nrhs right-hand sides, the dtype of @a (read only)
 * @nrhs: number of right-hand sides
 * @ldb: leading dimension of @b (≥ @m)
 * @x: the @n × @nrhs least-squares solutions, written
 * @ldx: leading dimension of @x (≥ @n)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the solutions are in @x
 * @user_data: data for @callback
 *
 * Least squares: X minimises ‖A·X − B‖ column by column (cuSOLVER
 * &lt;t&gt;&lt;t&gt;gels, QR-based, in the precision of @a).  Overdetermined
 * or square systems only (@m ≥ @n).
 *
 * Since: 0.2
 */
void
atomr_solver_actor_gels_async (AtomrSolverActor    *self,
                               AtomrBuffer         *a,
                               gint64               m,
                               gint64               n,
                               gint64               lda,
                               AtomrBuffer         *b,
                               gint64               nrhs,
                               gint64               ldb,
                               AtomrBuffer         *x,
                               gint64               ldx,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "gels";

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, name, atomr_solver_actor_gels_async, cancellable, callback, user_data);
  CHECK (check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "m", m, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_int32_range (name, "nrhs", nrhs, &error));
  FAIL_IF (m < n, "gels: m is %" G_GINT64_FORMAT " and n is %" G_GINT64_FORMAT "; cuSOLVER's gels "
           "solves overdetermined or square systems (m >= n) only", m, n);
  CHECK (atomr_check_matrix (name, "a", a, m, n, "lda", lda, 0, 1, &error) &&
         check_operand (name, "b", b, a, m, nrhs, "ldb", ldb, 1, &error) &&
         check_operand (name, "x", x, a, n, nrhs, "ldx", ldx, 1, &error) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("x", x)),
                               ATOMR_OPERANDS (ATOMR_OPERAND ("b", b)), &error));
  req = request_new (OP_GELS, name, a);
  req->m = m, req->n = n, req->nrhs = nrhs, req->lda = lda, req->b = b, req->ldb = ldb;
  req->x = x, req->ldx = ldx;
  atomr_op_write (op, a);
  atomr_op_read (op, b);
  atomr_op_write (op, x);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_gels_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.gels_async].
 *
 * Returns: %TRUE when the least-squares solutions are in X
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_gels_finish (AtomrSolverActor  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_gels_async, error);
}

/**
 * atomr_solver_actor_geev_async:
 * @self: an [class@Atomr.SolverActor]
 * @a: a general @n × @n matrix, destroyed
 * @n: order of @a
 * @lda: leading dimension of @a (≥ @n)
 * @w: the eigenvalues, of the dtype of @a: for a complex matrix @n
 *   complex values; for a real one 2·@n real values, the @n real parts
 *   followed by the @n imaginary parts (LAPACK's WR and WI)
 * @vr: (nullable): the right eigenvectors, @n × @n of the dtype of @a (for
 *   a real matrix, a complex pair is stored LAPACK-style as two columns,
 *   real and imaginary parts), or %NULL for eigenvalues only
 * @ldvr: leading dimension of @vr (≥ @n); ignored without @vr
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the eigenvalues are in @w
 * @user_data: data for @callback
 *
 * Eigenvalues and right eigenvectors of a general (non-symmetric) matrix
 * (cuSOLVER Xgeev; cuSOLVER does not compute left eigenvectors).
 *
 * Since: 0.2
 */
void
atomr_solver_actor_geev_async (AtomrSolverActor    *self,
                               AtomrBuffer         *a,
                               gint64               n,
                               gint64               lda,
                               AtomrBuffer         *w,
                               AtomrBuffer         *vr,
                               gint64               ldvr,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  AtomrOp *op;
  Request *req;
  GError *error = NULL;
  const gchar *name = "geev";

  g_return_if_fail (ATOMR_IS_SOLVER_ACTOR (self));
  op = atomr_op_new (self, name, atomr_solver_actor_geev_async, cancellable, callback, user_data);
  CHECK (check_matrix_dtype (name, a, all_dtypes, 4, &error) &&
         atomr_check_int32_range (name, "n", n, &error) &&
         atomr_check_matrix (name, "a", a, n, n, "lda", lda, 0, 1, &error) &&
         atomr_check_same_dtype (name, "a", a, "w", w, &error) &&
         atomr_check_min_elements (name, "w", w, atomr_dtype_is_complex (atomr_buffer_get_dtype (a)) ? n : 2 * n,
                                   &error) &&
         (vr == NULL || check_operand (name, "vr", vr, a, n, n, "ldvr", ldvr, 1, &error)) &&
         atomr_check_no_alias (name, ATOMR_OPERANDS (ATOMR_OPERAND ("a", a), ATOMR_OPERAND ("w", w),
                                                     ATOMR_OPERAND ("vr", vr)),
                               NULL, 0, &error));
  req = request_new (OP_GEEV, name, a);
  req->m = n, req->n = n, req->lda = lda, req->s = w, req->v = vr, req->ldv = ldvr;
  atomr_op_write (op, a);
  atomr_op_write (op, w);
  if (vr)
    atomr_op_write (op, vr);
  solver_submit (op, req);
}

/**
 * atomr_solver_actor_geev_finish:
 * @self: an [class@Atomr.SolverActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.SolverActor.geev_async].
 *
 * Returns: %TRUE when the eigenvalues (and vectors) were computed
 *
 * Since: 0.2
 */
gboolean
atomr_solver_actor_geev_finish (AtomrSolverActor  *self,
                                GAsyncResult      *result,
                                GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_solver_actor_geev_async, error);
}
