/* atomr-cusolver-loader.c — dlopen() of cuSOLVER through the one loader
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stddef.h>

#include "core/atomr-loader-private.h"
#include "atomr-cusolver-loader-private.h"

static AtomrCusolverLib cusolver_lib;
static AtomrLoaderState cusolver_loader;

static const AtomrLoaderSymbol cusolver_symbols[] = {
#define ATOMR_CUSOLVER_SYMBOL(name) { #name, offsetof (AtomrCusolverLib, name), FALSE },
  ATOMR_CUSOLVER_FUNCS (ATOMR_CUSOLVER_SYMBOL)
#undef ATOMR_CUSOLVER_SYMBOL
};

const AtomrCusolverLib *
atomr_cusolver_load (GError **error)
{
  static const AtomrLoaderSpec spec = {
    "cuSOLVER", "ATOMR_CUSOLVER_LIBRARY", "libcusolver.so." G_STRINGIFY (CUSOLVER_VER_MAJOR),
    cusolver_symbols, G_N_ELEMENTS (cusolver_symbols), &cusolver_lib, sizeof (cusolver_lib),
  };

  if (!atomr_loader_load (&spec, &cusolver_loader, error))
    return NULL;
  return &cusolver_lib;
}

const AtomrCusolverLib *
atomr_cusolver_get (void)
{
  return atomr_loader_is_loaded (&cusolver_loader) ? &cusolver_lib : NULL;
}
