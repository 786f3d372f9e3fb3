/* fake-library-version.c — NVRTC and nvJitLink that report another version
 *
 * A test shim loaded through ATOMR_NVRTC_LIBRARY / ATOMR_NVJITLINK_LIBRARY
 * by a bare name (so that only the dynamic linker can find it, the case
 * where the cache key holds the version the library reports).  It is
 * linked against the real libraries: dlsym() on its handle finds
 * nvrtcVersion and nvJitLinkVersion here and every other entry point in
 * the real library it depends on, so compiles work unchanged.  The
 * versions come from $ATOMR_FAKE_NVRTC_VERSION / $ATOMR_FAKE_NVJITLINK_VERSION
 * ("MAJOR.MINOR"); unset, the real library's answer is passed through.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int nvrtcVersion (int *major, int *minor);
int nvJitLinkVersion (unsigned int *major, unsigned int *minor);

static int
fake (const char *variable, int *major, int *minor)
{
  const char *v = getenv (variable);

  return v != NULL && sscanf (v, "%d.%d", major, minor) == 2;
}

/* The real library is a dependency of this one, hence already loaded. */
static void *
real_symbol (const char *soname, const char *name)
{
  void *handle = dlopen (soname, RTLD_NOW | RTLD_NOLOAD);

  return handle ? dlsym (handle, name) : NULL;
}

int
nvrtcVersion (int *major, int *minor)
{
  int (*real) (int *, int *);

  if (fake ("ATOMR_FAKE_NVRTC_VERSION", major, minor))
    return 0;
  real = (int (*) (int *, int *)) real_symbol ("libnvrtc.so.13", "nvrtcVersion");
  return real ? real (major, minor) : 1;
}

int
nvJitLinkVersion (unsigned int *major, unsigned int *minor)
{
  int (*real) (unsigned int *, unsigned int *);
  int ma, mi;

  if (fake ("ATOMR_FAKE_NVJITLINK_VERSION", &ma, &mi))
    {
      *major = (unsigned int) ma;
      *minor = (unsigned int) mi;
      return 0;
    }
  real = (int (*) (unsigned int *, unsigned int *)) real_symbol ("libnvJitLink.so.13", "nvJitLinkVersion");
  return real ? real (major, minor) : 1;
}
