/* atomr-compile-options.h — how NVRTC compiles a program
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * ATOMR_ARCH_NATIVE:
 *
 * The target architecture "native": the compute capability of the device
 * the kernel is compiled for (the actor's device, else device 0).
 *
 * Since: 0.1
 */
#define ATOMR_ARCH_NATIVE "native"

#define ATOMR_TYPE_COMPILE_OPTIONS (atomr_compile_options_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrCompileOptions, atomr_compile_options, ATOMR, COMPILE_OPTIONS, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_new                 (void);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_copy                (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_arch            (AtomrCompileOptions *self,
                                                                const gchar         *arch);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_compile_options_get_arch            (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_std             (AtomrCompileOptions *self,
                                                                const gchar         *std);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_compile_options_get_std             (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_fast_math       (AtomrCompileOptions *self,
                                                                gboolean             fast_math);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_get_fast_math       (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_flush_to_zero   (AtomrCompileOptions *self,
                                                                gboolean             ftz);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_get_flush_to_zero   (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_max_registers   (AtomrCompileOptions *self,
                                                                guint                max_registers);
ATOMR_AVAILABLE_IN_ALL
guint                atomr_compile_options_get_max_registers   (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_lto             (AtomrCompileOptions *self,
                                                                gboolean             lto);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_get_lto             (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_relocatable     (AtomrCompileOptions *self,
                                                                gboolean             relocatable);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_get_relocatable     (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_line_info       (AtomrCompileOptions *self,
                                                                gboolean             line_info);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_get_line_info       (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_debug           (AtomrCompileOptions *self,
                                                                gboolean             debug);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_get_debug           (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_set_precompiled_headers (AtomrCompileOptions *self,
                                                                gboolean             pch);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_get_precompiled_headers (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_add_include_path    (AtomrCompileOptions *self,
                                                                const gchar         *path);
ATOMR_AVAILABLE_IN_ALL
const gchar * const *atomr_compile_options_get_include_paths   (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_add_define          (AtomrCompileOptions *self,
                                                                const gchar         *name,
                                                                const gchar         *value);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_add_name_expression (AtomrCompileOptions *self,
                                                                const gchar         *expression);
ATOMR_AVAILABLE_IN_ALL
const gchar * const *atomr_compile_options_get_name_expressions (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_add_extra_flag      (AtomrCompileOptions *self,
                                                                const gchar         *flag);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_add_link_ltoir      (AtomrCompileOptions *self,
                                                                GBytes              *ltoir);
ATOMR_AVAILABLE_IN_ALL
AtomrCompileOptions *atomr_compile_options_add_link_ptx        (AtomrCompileOptions *self,
                                                                GBytes              *ptx);
ATOMR_AVAILABLE_IN_ALL
gchar              **atomr_compile_options_get_flags           (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_compile_options_validate            (AtomrCompileOptions *self,
                                                                GError             **error);

/* Owned copies of the string-array getters (bindings see them under the
 * getters' names). */
ATOMR_AVAILABLE_IN_0_2
gchar **atomr_compile_options_dup_include_paths (AtomrCompileOptions *self);
ATOMR_AVAILABLE_IN_0_2
gchar **atomr_compile_options_dup_name_expressions (AtomrCompileOptions *self);

G_END_DECLS
