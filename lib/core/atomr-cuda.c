/* atomr-cuda.c — the CUDA driver, loaded at run time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dlfcn.h>
#include <string.h>
#include <cudaTypedefs.h>

#include "atomr-cuda-private.h"
#include "atomr-error.h"

static AtomrCudaDriver driver;
static const AtomrCudaDriver *loaded;
static GError *load_error;

/* cuGetProcAddress itself comes from dlsym(); its v2 signature has the
 * query-result out parameter. */
typedef CUresult (*GetProcAddressFunc) (const char *symbol, void **pfn,
                                        int cudaVersion, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *status);

/* The CUDA version whose ABI an entry point is declared with in cuda.h,
 * which is the ABI cuGetProcAddress() must be asked for: it returns the
 * newest variant introduced at or before the version it is given.  cuda.h
 * maps most names whose ABI changed onto the new variant (`#define
 * cuMemAlloc cuMemAlloc_v2`), so CUDA_VERSION is right for them; a few keep
 * the old declaration next to a new function instead.  With CUDA 13 that is
 * cuCtxSynchronize: `cuCtxSynchronize (void)` is declared, but asking for
 * 13000 returns cuCtxSynchronize_v2 (CUcontext ctx), which then ran with
 * whatever the caller left in the first argument register and failed with
 * CUDA_ERROR_INVALID_CONTEXT (atomr_device_synchronize() on an H100).
 * Checked against every PFN_*_v13000 / _v12xxx typedef in cudaTypedefs.h
 * for the entry points of ATOMR_CU_FUNCS. */
G_STATIC_ASSERT (__builtin_types_compatible_p (__typeof__ (&cuCtxSynchronize),
                                               PFN_cuCtxSynchronize_v2000));

static int
declared_abi_version (const char *name)
{
  if (strcmp (name, "cuCtxSynchronize") == 0)
    return 12000;   /* the (void) ABI; the driver needs CUDA 12 anyway */
  return CUDA_VERSION;
}

static gboolean
load_driver (GError **error)
{
  const gchar *override = g_getenv ("ATOMR_CUDA_DRIVER");
  const gchar *soname = override && *override ? override : "libcuda.so.1";
  void *handle;
  GetProcAddressFunc get_proc;
  CUresult res;

  if (g_strcmp0 (g_getenv ("ATOMR_DISABLE_CUDA"), "1") == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE,
                   "CUDA is disabled by ATOMR_DISABLE_CUDA=1");
      return FALSE;
    }

  handle = dlopen (soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE,
                   "No NVIDIA driver: cannot load %s (%s)", soname, dlerror ());
      return FALSE;
    }

  get_proc = (GetProcAddressFunc) dlsym (handle, "cuGetProcAddress_v2");
  if (get_proc == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE,
                   "The NVIDIA driver in %s is too old: it has no cuGetProcAddress_v2 "
                   "(CUDA 12 or newer is required)", soname);
      dlclose (handle);
      return FALSE;
    }

#define ATOMR_CU_RESOLVE(name) \
  { \
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS; \
    res = get_proc (#name, (void **) &driver.name, declared_abi_version (#name), \
                    CU_GET_PROC_ADDRESS_DEFAULT, &status); \
    if (res != CUDA_SUCCESS || driver.name == NULL) \
      { \
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE, \
                     "The NVIDIA driver in %s lacks %s (status %d, query %d); " \
                     "a driver for CUDA %d.%d or newer is required", soname, #name, \
                     (int) res, (int) status, CUDA_VERSION / 1000, \
                     (CUDA_VERSION % 1000) / 10); \
        return FALSE; \
      } \
  }
  ATOMR_CU_FUNCS (ATOMR_CU_RESOLVE)
#undef ATOMR_CU_RESOLVE

#define ATOMR_CU_RESOLVE_OPTIONAL(name) \
  { \
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS; \
    res = get_proc (#name, (void **) &driver.name, CUDA_VERSION, \
                    CU_GET_PROC_ADDRESS_DEFAULT, &status); \
    if (res != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) \
      driver.name = NULL; \
  }
  ATOMR_CU_OPTIONAL_FUNCS (ATOMR_CU_RESOLVE_OPTIONAL)
#undef ATOMR_CU_RESOLVE_OPTIONAL

  res = driver.cuInit (0);
  if (res != CUDA_SUCCESS)
    {
      const char *name = NULL;
      driver.cuGetErrorName (res, &name);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE,
                   "The NVIDIA driver did not start: cuInit failed with %s (%d)",
                   name ? name : "unknown error", (int) res);
      return FALSE;
    }
  driver.cuDriverGetVersion (&driver.driver_version);
  /* The handle stays open for the life of the process. */
  return TRUE;
}

const AtomrCudaDriver *
atomr_cuda_load (GError **error)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      if (load_driver (&load_error))
        loaded = &driver;
      else
        g_debug ("CUDA driver unavailable: %s", load_error->message);
      g_once_init_leave (&once, 1);
    }
  if (loaded == NULL && error != NULL)
    *error = g_error_copy (load_error);
  return loaded;
}

const AtomrCudaDriver *
atomr_cuda_get (void)
{
  return g_atomic_pointer_get (&loaded);
}

gboolean
atomr_cuda_result_is_sticky (CUresult res)
{
  switch ((int) res)
    {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
      return TRUE;
    default:
      return FALSE;
    }
}

gint
atomr_cuda_result_to_code (CUresult res)
{
  if (atomr_cuda_result_is_sticky (res))
    return ATOMR_ERROR_CONTEXT_POISONED;
  switch ((int) res)
    {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return ATOMR_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
      return ATOMR_ERROR_NO_DEVICE;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return ATOMR_ERROR_INVALID_ARGUMENT;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return ATOMR_ERROR_NOT_SUPPORTED;
    default:
      return ATOMR_ERROR_LIBRARY;
    }
}

gboolean
atomr_cuda_check (CUresult      res,
                  const gchar  *what,
                  GError      **error)
{
  const char *name = NULL, *desc = NULL;

  if (G_LIKELY (res == CUDA_SUCCESS))
    return TRUE;

  if (loaded)
    {
      loaded->cuGetErrorName (res, &name);
      loaded->cuGetErrorString (res, &desc);
    }
  g_set_error (error, ATOMR_ERROR, atomr_cuda_result_to_code (res),
               "CUDA driver: %s failed with %s (%d): %s", what,
               name ? name : "CUDA_ERROR_UNKNOWN", (int) res,
               desc ? desc : "no description");
  return FALSE;
}
