/* atomr-cuda.c — the CUDA driver, loaded at run time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dlfcn.h>

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
    res = get_proc (#name, (void **) &driver.name, CUDA_VERSION, \
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
