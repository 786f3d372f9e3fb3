/* bench-vmm.h — device memory mapped through the virtual memory
 * management calls (cuMemCreate + cuMemMap), for the benchmarks'
 * experiments on what kind of memory a kernel runs on
 *
 * The library's driver table has no VMM entries (the library does not use
 * them), so this looks them up in libcuda itself.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>
#include <glib.h>

typedef struct
{
  CUdeviceptr                  ptr;
  gsize                        size;
  CUmemGenericAllocationHandle handle;
} BenchVmm;

/* Maps @size bytes (rounded up to the minimum granularity) on @ordinal,
 * read-write, asking for compressible memory when @compressible;
 * FALSE (with nothing held) where a call is missing or fails.  The
 * context must be current. */
static inline gboolean
bench_vmm_alloc (BenchVmm *m, int ordinal, gsize size, gboolean compressible)
{
  static void *lib;
  CUresult (*granularity) (size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
  CUresult (*create) (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
  CUresult (*reserve) (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*map) (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*access) (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
  CUmemAllocationProp prop = { 0 };
  CUmemAccessDesc desc = { 0 };
  size_t gran = 0;

  memset (m, 0, sizeof *m);
  if (lib == NULL)
    lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    return FALSE;
  granularity = dlsym (lib, "cuMemGetAllocationGranularity");
  create = dlsym (lib, "cuMemCreate");
  reserve = dlsym (lib, "cuMemAddressReserve");
  map = dlsym (lib, "cuMemMap");
  access = dlsym (lib, "cuMemSetAccess");
  if (!granularity || !create || !reserve || !map || !access)
    return FALSE;
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = ordinal;
  if (compressible)
    prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
  if (granularity (&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || gran == 0)
    return FALSE;
  m->size = (size + gran - 1) / gran * gran;
  if (create (&m->handle, m->size, &prop, 0) != CUDA_SUCCESS)
    return FALSE;
  desc.location = prop.location;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (reserve (&m->ptr, m->size, gran, 0, 0) != CUDA_SUCCESS ||
      map (m->ptr, m->size, 0, m->handle, 0) != CUDA_SUCCESS ||
      access (m->ptr, m->size, &desc, 1) != CUDA_SUCCESS)
    {
      /* a benchmark's process ends soon after; what was made stays */
      m->ptr = 0;
      return FALSE;
    }
  return TRUE;
}

/* Unmaps and releases what bench_vmm_alloc() made (context current). */
static inline void
bench_vmm_free (BenchVmm *m)
{
  void *lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  CUresult (*unmap) (CUdeviceptr, size_t);
  CUresult (*release) (CUmemGenericAllocationHandle);
  CUresult (*unreserve) (CUdeviceptr, size_t);

  if (lib == NULL || m->ptr == 0)
    return;
  unmap = dlsym (lib, "cuMemUnmap");
  release = dlsym (lib, "cuMemRelease");
  unreserve = dlsym (lib, "cuMemAddressFree");
  if (unmap && release && unreserve)
    {
      unmap (m->ptr, m->size);
      release (m->handle);
      unreserve (m->ptr, m->size);
    }
  dlclose (lib);
  m->ptr = 0;
}

/* One line on the memory at @ptr: its mapping's size, GPUDirect RDMA, and
 * (where the driver gives an allocation handle for it) whether the
 * physical memory is compressible. */
static inline void
bench_describe_memory (const gchar *what, CUdeviceptr ptr)
{
  void *lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CUresult (*attribute) (void *, CUpointer_attribute, CUdeviceptr);
  CUresult (*retain) (CUmemGenericAllocationHandle *, void *);
  CUresult (*props) (CUmemAllocationProp *, CUmemGenericAllocationHandle);
  CUresult (*release) (CUmemGenericAllocationHandle);
  size_t mapping = 0;
  int rdma = -1;
  CUmemGenericAllocationHandle handle = 0;
  CUmemAllocationProp prop = { 0 };
  gchar comp[32] = "no handle";

  if (lib == NULL)
    return;
  attribute = dlsym (lib, "cuPointerGetAttribute");
  retain = dlsym (lib, "cuMemRetainAllocationHandle");
  props = dlsym (lib, "cuMemGetAllocationPropertiesFromHandle");
  release = dlsym (lib, "cuMemRelease");
  if (attribute)
    {
      attribute (&mapping, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, ptr);
      attribute (&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, ptr);
    }
  if (retain && props && release && retain (&handle, (void *) (uintptr_t) ptr) == CUDA_SUCCESS)
    {
      if (props (&prop, handle) == CUDA_SUCCESS)
        g_snprintf (comp, sizeof comp, "compression %d", (int) prop.allocFlags.compressionType);
      release (handle);
    }
  printf ("# memory: %-44s mapping %zu bytes, GPUDirect RDMA %d, %s\n", what, mapping, rdma, comp);
  dlclose (lib);
}
