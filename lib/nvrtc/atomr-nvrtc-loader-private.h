/* atomr-nvrtc-loader-private.h — NVRTC and nvJitLink, loaded on first use
 *
 * Neither library is linked: a process that only reads kernels from the
 * disk cache never maps them (they are ~200 MB together).  Every call goes
 * through the tables below after atomr_nvrtc_load() / atomr_jitlink_load().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <nvrtc.h>
#include <nvJitLink.h>

G_BEGIN_DECLS

#define ATOMR_NVRTC_FUNCS(X) \
  X (nvrtcVersion) \
  X (nvrtcGetErrorString) \
  X (nvrtcCreateProgram) \
  X (nvrtcDestroyProgram) \
  X (nvrtcCompileProgram) \
  X (nvrtcGetPTXSize) \
  X (nvrtcGetPTX) \
  X (nvrtcGetCUBINSize) \
  X (nvrtcGetCUBIN) \
  X (nvrtcGetLTOIRSize) \
  X (nvrtcGetLTOIR) \
  X (nvrtcGetProgramLogSize) \
  X (nvrtcGetProgramLog) \
  X (nvrtcAddNameExpression) \
  X (nvrtcGetLoweredName) \
  X (nvrtcGetNumSupportedArchs) \
  X (nvrtcGetSupportedArchs)

typedef struct {
#define ATOMR_NVRTC_FIELD(name) __typeof__ (&name) name;
  ATOMR_NVRTC_FUNCS (ATOMR_NVRTC_FIELD)
#undef ATOMR_NVRTC_FIELD
  int   major;
  int   minor;
  gchar *path;
} AtomrNvrtcLib;

/* nvJitLink.h wraps its entry points in static inline functions that call
 * versioned symbols; we resolve the plain exported names ourselves. */
typedef struct {
  nvJitLinkResult (*Create)         (nvJitLinkHandle *handle, uint32_t n, const char **options);
  nvJitLinkResult (*Destroy)        (nvJitLinkHandle *handle);
  nvJitLinkResult (*AddData)        (nvJitLinkHandle handle, nvJitLinkInputType type,
                                     const void *data, size_t size, const char *name);
  nvJitLinkResult (*Complete)       (nvJitLinkHandle handle);
  nvJitLinkResult (*GetLinkedCubinSize) (nvJitLinkHandle handle, size_t *size);
  nvJitLinkResult (*GetLinkedCubin) (nvJitLinkHandle handle, void *cubin);
  nvJitLinkResult (*GetErrorLogSize) (nvJitLinkHandle handle, size_t *size);
  nvJitLinkResult (*GetErrorLog)    (nvJitLinkHandle handle, char *log);
  nvJitLinkResult (*GetInfoLogSize) (nvJitLinkHandle handle, size_t *size);
  nvJitLinkResult (*GetInfoLog)     (nvJitLinkHandle handle, char *log);
  unsigned int major;   /* from nvJitLinkVersion(), 0 if it lacks one */
  unsigned int minor;
} AtomrJitLinkLib;

/* Loads NVRTC once (thread-safe).  ATOMR_ERROR_NOT_SUPPORTED naming every
 * path tried when it cannot be found. */
const AtomrNvrtcLib   *atomr_nvrtc_load        (GError **error);
const AtomrJitLinkLib *atomr_jitlink_load      (GError **error);

/* How many times NVRTC was loaded / a program compiled in this process
 * (for the tests that prove a cache hit never touches NVRTC). */
guint                  atomr_nvrtc_get_load_count    (void);
guint                  atomr_nvrtc_get_compile_count (void);
void                   atomr_nvrtc_count_compile     (void);

/* Identify the NVRTC / nvJitLink that a compile would use: the resolved
 * path, size and modification time of the library file, without
 * loading it; when only the dynamic linker can find it, the library is
 * loaded and its reported version and file are used.  Go into cache keys. */
const gchar           *atomr_nvrtc_get_identity   (void);
const gchar           *atomr_jitlink_get_identity (void);

G_END_DECLS
