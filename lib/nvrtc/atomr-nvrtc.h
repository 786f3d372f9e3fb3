/* atomr-nvrtc.h — compiling CUDA C++ at run time, with or without a GPU
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-compile-options.h"
#include "atomr-kernel-cache.h"
#include "atomr-module.h"

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
AtomrModule *atomr_nvrtc_compile     (const gchar         *source,
                                      const gchar         *program_name,
                                      AtomrCompileOptions *options,
                                      AtomrKernelCache    *cache,
                                      GError             **error);
ATOMR_AVAILABLE_IN_ALL
gchar       *atomr_nvrtc_get_version (GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_nvrtc_check_text  (const gchar         *text,
                                      gssize               len,
                                      const gchar         *what,
                                      GError             **error);

G_END_DECLS
