/* atomr-module-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "atomr-module.h"

G_BEGIN_DECLS

/* What a compile produced, shared (immutable, refcounted) between the
 * memory cache and every AtomrModule handed out for it. */
typedef struct {
  gint     ref_count;
  GBytes  *ptx;             /* nullable */
  GBytes  *cubin;           /* nullable */
  GBytes  *ltoir;           /* nullable */
  gchar   *log;
  gchar  **kernel_names;    /* name expressions */
  gchar  **lowered_names;   /* parallel to kernel_names */
  /* Parallel to lowered_names: each kernel's parameter layout as read
   * from the PTX at compile time (atomr_ptx_param_layout()), "?" where
   * unknown; NULL when none is known (LTO, entries stored before
   * layouts were).  Kernels with a layout are loaded without asking the
   * driver for their parameters. */
  gchar  **param_layouts;
  gchar  **flags;
  gchar   *arch;            /* nullable: NVRTC's default */
  gchar   *nvrtc_version;
  gchar   *key;             /* nullable */
  gdouble  compile_time_ms;
  JsonNode *resources;      /* nullable: atomr_ptxas_info_parse() of this compile */
} AtomrModuleContent;

AtomrModuleContent *atomr_module_content_new   (void);
AtomrModuleContent *atomr_module_content_ref   (AtomrModuleContent *content);
void                atomr_module_content_unref (AtomrModuleContent *content);

AtomrModule        *atomr_module_new           (AtomrModuleContent *content,
                                                AtomrCacheStatus    status);
AtomrModuleContent *atomr_module_get_content   (AtomrModule        *self);
/* The parameter layout of name expression (or lowered name) @kernel_name,
 * NULL if not known. */
const gchar        *atomr_module_get_param_layout (AtomrModule     *self,
                                                   const gchar     *kernel_name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrModuleContent, atomr_module_content_unref)

G_END_DECLS
