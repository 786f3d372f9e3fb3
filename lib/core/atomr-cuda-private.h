/* atomr-cuda-private.h — the CUDA driver, loaded at run time
 *
 * libatomr never links libcuda: a machine without the NVIDIA driver must be
 * able to load the library, compile kernels with NVRTC and browse caches.
 * atomr_cuda_load() dlopen()s libcuda.so.1 once and resolves every entry
 * point through cuGetProcAddress(), asking for the ABI of the headers we
 * were built against.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda.h>
#include <glib.h>

G_BEGIN_DECLS

#define ATOMR_CU_FUNCS(X) \
  X (cuInit) \
  X (cuDriverGetVersion) \
  X (cuGetErrorName) \
  X (cuGetErrorString) \
  X (cuDeviceGetCount) \
  X (cuDeviceGet) \
  X (cuDeviceGetName) \
  X (cuDeviceGetAttribute) \
  X (cuDeviceTotalMem) \
  X (cuDevicePrimaryCtxRetain) \
  X (cuDevicePrimaryCtxRelease) \
  X (cuDevicePrimaryCtxReset) \
  X (cuCtxSetCurrent) \
  X (cuCtxGetCurrent) \
  X (cuCtxSynchronize) \
  X (cuStreamCreate) \
  X (cuStreamDestroy) \
  X (cuStreamWaitEvent) \
  X (cuStreamSynchronize) \
  X (cuStreamQuery) \
  X (cuEventCreate) \
  X (cuEventDestroy) \
  X (cuEventRecord) \
  X (cuEventQuery) \
  X (cuEventSynchronize) \
  X (cuEventElapsedTime) \
  X (cuMemAllocAsync) \
  X (cuMemFreeAsync) \
  X (cuMemAllocFromPoolAsync) \
  X (cuMemPoolCreate) \
  X (cuMemPoolDestroy) \
  X (cuMemPoolSetAttribute) \
  X (cuMemPoolGetAttribute) \
  X (cuMemPoolTrimTo) \
  X (cuMemAlloc) \
  X (cuMemFree) \
  X (cuPointerGetAttribute) \
  X (cuMemGetInfo) \
  X (cuMemHostAlloc) \
  X (cuMemFreeHost) \
  X (cuMemcpyHtoDAsync) \
  X (cuMemcpyDtoHAsync) \
  X (cuMemcpyDtoDAsync) \
  X (cuMemcpyPeerAsync) \
  X (cuDeviceCanAccessPeer) \
  X (cuDeviceGetP2PAttribute) \
  X (cuCtxEnablePeerAccess) \
  X (cuMemcpy2DAsync) \
  X (cuMemcpy3DAsync) \
  X (cuMemsetD8Async) \
  X (cuMemsetD16Async) \
  X (cuMemsetD32Async) \
  X (cuMemsetD2D32Async) \
  X (cuLaunchHostFunc) \
  X (cuModuleLoadData) \
  X (cuModuleUnload) \
  X (cuModuleGetFunction) \
  X (cuFuncGetAttribute) \
  X (cuFuncSetAttribute) \
  X (cuFuncGetParamInfo) \
  X (cuLaunchKernel) \
  X (cuLaunchKernelEx) \
  X (cuStreamBeginCapture) \
  X (cuStreamEndCapture) \
  X (cuGraphInstantiateWithFlags) \
  X (cuGraphLaunch) \
  X (cuGraphExecDestroy) \
  X (cuGraphDestroy) \
  X (cuGraphDebugDotPrint) \
  X (cuStreamGetCaptureInfo) \
  X (cuGraphNodeGetType) \
  X (cuGraphKernelNodeGetParams) \
  X (cuGraphKernelNodeSetParams) \
  X (cuGraphExecKernelNodeSetParams) \
  X (cuGraphExecUpdate) \
  X (cuGraphAddChildGraphNode) \
  X (cuGraphChildGraphNodeGetGraph) \
  X (cuGraphGetNodes) \
  X (cuGraphUpload) \
  X (cuMemHostGetDevicePointer) \
  X (cuStreamCreateWithPriority) \
  X (cuCtxGetStreamPriorityRange) \
  X (cuStreamUpdateCaptureDependencies)

/* Entry points newer than the oldest driver atomr runs on: resolved when
 * the driver has them, else NULL (the features that need them fail with
 * ATOMR_ERROR_NOT_SUPPORTED naming the driver's version).  Conditional
 * graph nodes: CUDA 12.4 (SWITCH nodes: 12.8, checked by version);
 * cuGraphInstantiateWithParams: 12.0 (bench-graph's experiments).  The
 * fence words (atomr-stream.c) use stream memory operations and host
 * registration, and do without them: events alone. */
#define ATOMR_CU_OPTIONAL_FUNCS(X) \
  X (cuGraphConditionalHandleCreate) \
  X (cuGraphAddNode) \
  X (cuGraphInstantiateWithParams) \
  X (cuStreamWriteValue32) \
  X (cuMemHostRegister) \
  X (cuMemHostUnregister)

typedef struct {
#define ATOMR_CU_FIELD(name) __typeof__ (&name) name;
  ATOMR_CU_FUNCS (ATOMR_CU_FIELD)
  ATOMR_CU_OPTIONAL_FUNCS (ATOMR_CU_FIELD)
#undef ATOMR_CU_FIELD
  int driver_version;
} AtomrCudaDriver;

/* Loads the driver and calls cuInit(0) once.  Returns NULL with
 * ATOMR_ERROR_NO_DEVICE when there is no driver or it fails to start. */
const AtomrCudaDriver *atomr_cuda_load (GError **error);

/* The driver if it was loaded successfully, else NULL (never loads). */
const AtomrCudaDriver *atomr_cuda_get (void);

#define ATOMR_CU (atomr_cuda_get ())

/* Errors that leave the context unusable until it is rebuilt. */
gboolean atomr_cuda_result_is_sticky (CUresult res);

/* Maps @res to an ATOMR_ERROR code: out of memory, poisoned, no device, ... */
gint atomr_cuda_result_to_code (CUresult res);

/* Returns TRUE for CUDA_SUCCESS; otherwise sets @error naming @what and the
 * driver's name and description of @res. */
gboolean atomr_cuda_check (CUresult      res,
                           const gchar  *what,
                           GError      **error);

G_END_DECLS
