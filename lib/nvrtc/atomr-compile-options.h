/* atomr-compile-options.h — how NVRTC compiles a program
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

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
G_DECLARE_FINAL_TYPE (AtomrCompileOptions, atomr_compile_options, ATOMR, COMPILE_OPTIONS, GObject)

AtomrCompileOptions *atomr_compile_options_new                 (void);
AtomrCompileOptions *atomr_compile_options_copy                (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_arch            (AtomrCompileOptions *self,
                                                                const gchar         *arch);
const gchar         *atomr_compile_options_get_arch            (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_std             (AtomrCompileOptions *self,
                                                                const gchar         *std);
const gchar         *atomr_compile_options_get_std             (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_fast_math       (AtomrCompileOptions *self,
                                                                gboolean             fast_math);
gboolean             atomr_compile_options_get_fast_math       (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_flush_to_zero   (AtomrCompileOptions *self,
                                                                gboolean             ftz);
gboolean             atomr_compile_options_get_flush_to_zero   (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_max_registers   (AtomrCompileOptions *self,
                                                                guint                max_registers);
guint                atomr_compile_options_get_max_registers   (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_lto             (AtomrCompileOptions *self,
                                                                gboolean             lto);
gboolean             atomr_compile_options_get_lto             (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_relocatable     (AtomrCompileOptions *self,
                                                                gboolean             relocatable);
gboolean             atomr_compile_options_get_relocatable     (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_line_info       (AtomrCompileOptions *self,
                                                                gboolean             line_info);
gboolean             atomr_compile_options_get_line_info       (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_debug           (AtomrCompileOptions *self,
                                                                gboolean             debug);
gboolean             atomr_compile_options_get_debug           (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_set_precompiled_headers (AtomrCompileOptions *self,
                                                                gboolean             pch);
gboolean             atomr_compile_options_get_precompiled_headers (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_add_include_path    (AtomrCompileOptions *self,
                                                                const gchar         *path);
const gchar * const *atomr_compile_options_get_include_paths   (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_add_define          (AtomrCompileOptions *self,
                                                                const gchar         *name,
                                                                const gchar         *value);
AtomrCompileOptions *atomr_compile_options_add_name_expression (AtomrCompileOptions *self,
                                                                const gchar         *expression);
const gchar * const *atomr_compile_options_get_name_expressions (AtomrCompileOptions *self);
AtomrCompileOptions *atomr_compile_options_add_extra_flag      (AtomrCompileOptions *self,
                                                                const gchar         *flag);
AtomrCompileOptions *atomr_compile_options_add_link_ltoir      (AtomrCompileOptions *self,
                                                                GBytes              *ltoir);
AtomrCompileOptions *atomr_compile_options_add_link_ptx        (AtomrCompileOptions *self,
                                                                GBytes              *ptx);
gchar              **atomr_compile_options_get_flags           (AtomrCompileOptions *self);
gboolean             atomr_compile_options_validate            (AtomrCompileOptions *self,
                                                                GError             **error);

G_END_DECLS
