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

/* What the compile path derives from options, computed once per revision
 * of the options (every setter and add_ function makes a new revision):
 * the compile path of an unchanged options object costs one mutex round
 * and a reference instead of building flags and checking them each time.
 * Immutable once built; any thread. */
typedef struct {
  gint        ref_count;
  guint       revision;
  GError     *error;       /* the options are refused: the compile fails so */
  gboolean    native;      /* arch "native": resolved per device */
  gboolean    lto;
  gchar      *arch;
  gchar     **flags;       /* atomr_compile_options_get_flags() */
  gchar     **name_expressions;
  GPtrArray  *link_objects;   /* AtomrLinkObject */
  GBytes     *key_part;    /* atomr_cache_options_blob(); NULL with error or native */
  guint       key_part_hash;
} AtomrCompileSnapshot;

AtomrCompileSnapshot *atomr_compile_options_get_snapshot (AtomrCompileOptions  *self);
AtomrCompileSnapshot *atomr_compile_snapshot_ref         (AtomrCompileSnapshot *snapshot);
void                  atomr_compile_snapshot_unref       (AtomrCompileSnapshot *snapshot);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrCompileSnapshot, atomr_compile_snapshot_unref)

G_END_DECLS
