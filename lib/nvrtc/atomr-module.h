/* atomr-module.h — a compiled NVRTC program
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-kernel-cache.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_MODULE (atomr_module_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrModule, atomr_module, ATOMR, MODULE, GObject)

ATOMR_AVAILABLE_IN_ALL
GBytes              *atomr_module_get_ptx             (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
GBytes              *atomr_module_get_cubin           (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
GBytes              *atomr_module_get_ltoir           (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_module_get_log             (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
const gchar * const *atomr_module_get_kernel_names    (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_module_get_lowered_name    (AtomrModule *self,
                                                       const gchar *kernel_name);
ATOMR_AVAILABLE_IN_ALL
const gchar * const *atomr_module_get_flags           (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_module_get_arch            (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_module_get_nvrtc_version   (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_module_get_key             (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCacheStatus     atomr_module_get_cache_status    (AtomrModule *self);
ATOMR_AVAILABLE_IN_ALL
gdouble              atomr_module_get_compile_time_ms (AtomrModule *self);

/* Owned copies of the string-array getters (bindings see them under the
 * getters' names). */
ATOMR_AVAILABLE_IN_0_2
gchar **atomr_module_dup_kernel_names (AtomrModule *self);
ATOMR_AVAILABLE_IN_0_2
gchar **atomr_module_dup_flags (AtomrModule *self);

G_END_DECLS
