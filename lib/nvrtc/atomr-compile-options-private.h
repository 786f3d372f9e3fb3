/* atomr-compile-options-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-compile-options.h"

G_BEGIN_DECLS

typedef struct {
  GBytes   *data;
  gboolean  ptx;    /* else LTO-IR */
} AtomrLinkObject;

/* AtomrLinkObject array, in the order added. */
GPtrArray *atomr_compile_options_get_link_objects (AtomrCompileOptions *self);
gboolean   atomr_arch_is_valid                    (const gchar         *arch);
/* atomr_compile_options_validate() without asking NVRTC (the compile path
 * must not load it before a cache lookup; it checks the architecture on a
 * miss). */
gboolean   atomr_compile_options_check            (AtomrCompileOptions *self,
                                                   GError             **error);

G_END_DECLS
