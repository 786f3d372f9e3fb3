/* fake-libcuda.c — a stand-in for libcuda.so.1 that only answers
 * cuGetProcAddress(), for test-cuda-abi: it hands out the ABI variant of
 * cuCtxSynchronize that was asked for, as the real driver does, and counts
 * which one runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda.h>
#include <string.h>

int fake_cuda_sync_void_calls;
int fake_cuda_sync_ctx_calls;
int fake_cuda_sync_requested_version;

static CUresult
fake_stub (void)
{
  return CUDA_SUCCESS;
}

static CUresult
fake_init (unsigned int flags)
{
  (void) flags;
  return CUDA_SUCCESS;
}

static CUresult
fake_driver_get_version (int *version)
{
  *version = 13000;
  return CUDA_SUCCESS;
}

/* cuCtxSynchronize (void): CUDA 2.0 to 12.x */
static CUresult
fake_sync_void (void)
{
  fake_cuda_sync_void_calls++;
  return CUDA_SUCCESS;
}

/* cuCtxSynchronize_v2 (CUcontext): CUDA 13.0 */
static CUresult
fake_sync_ctx (CUcontext ctx)
{
  (void) ctx;
  fake_cuda_sync_ctx_calls++;
  return CUDA_SUCCESS;
}

/* cuda.h maps cuGetProcAddress to cuGetProcAddress_v2: this is that. */
CUresult CUDAAPI
cuGetProcAddress (const char                     *symbol,
                  void                          **pfn,
                  int                             cudaVersion,
                  cuuint64_t                      flags,
                  CUdriverProcAddressQueryResult *status)
{
  (void) flags;
  if (status)
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
  if (strcmp (symbol, "cuInit") == 0)
    *pfn = (void *) fake_init;
  else if (strcmp (symbol, "cuDriverGetVersion") == 0)
    *pfn = (void *) fake_driver_get_version;
  else if (strcmp (symbol, "cuCtxSynchronize") == 0)
    {
      fake_cuda_sync_requested_version = cudaVersion;
      *pfn = cudaVersion >= 13000 ? (void *) fake_sync_ctx : (void *) fake_sync_void;
    }
  else
    *pfn = (void *) fake_stub;
  return CUDA_SUCCESS;
}
