/* atomr-module.h — a compiled NVRTC program
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include <gio/gio.h>

#include "atomr-kernel-cache.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_MODULE (atomr_module_get_type ())
G_DECLARE_FINAL_TYPE (AtomrModule, atomr_module, ATOMR, MODULE, GObject)

GBytes              *atomr_module_get_ptx             (AtomrModule *self);
GBytes              *atomr_module_get_cubin           (AtomrModule *self);
GBytes              *atomr_module_get_ltoir           (AtomrModule *self);
const gchar         *atomr_module_get_log             (AtomrModule *self);
const gchar * const *atomr_module_get_kernel_names    (AtomrModule *self);
const gchar         *atomr_module_get_lowered_name    (AtomrModule *self,
                                                       const gchar *kernel_name);
const gchar * const *atomr_module_get_flags           (AtomrModule *self);
const gchar         *atomr_module_get_arch            (AtomrModule *self);
const gchar         *atomr_module_get_nvrtc_version   (AtomrModule *self);
const gchar         *atomr_module_get_key             (AtomrModule *self);
AtomrCacheStatus     atomr_module_get_cache_status    (AtomrModule *self);
gdouble              atomr_module_get_compile_time_ms (AtomrModule *self);

G_END_DECLS
