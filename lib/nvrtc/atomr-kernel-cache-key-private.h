/* atomr-kernel-cache-key-private.h — building the kernel cache's key
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a header looked like when the key was computed: a memory hit is
 * valid only while every stamp is unchanged. */
typedef struct {
  gchar   *path;
  gboolean exists;
  guint64  size;
  gint64   mtime_ns;
  guint64  inode;
} AtomrCacheHeaderStamp;

void     atomr_cache_header_stamp_free (gpointer data);

/* TRUE while every AtomrCacheHeaderStamp of @headers still matches. */
gboolean atomr_cache_stamps_unchanged  (GPtrArray *headers);

/* Everything of a request but header contents: the memory-level key.
 * @link_objects holds AtomrLinkObject. */
GBytes  *atomr_cache_request_blob      (const gchar         *source,
                                        const gchar * const *kernel_names,
                                        const gchar * const *flags,
                                        const gchar         *arch,
                                        GPtrArray           *link_objects);

/* The disk key (64 hex digits of SHA-256): @blob plus the headers the
 * source includes, recursively.  *@headers_out receives the stamps of the
 * headers read (and of the places where absent ones could appear). */
gchar   *atomr_cache_key_compute       (GBytes              *blob,
                                        const gchar         *source,
                                        const gchar * const *include_paths,
                                        GPtrArray          **headers_out);

G_END_DECLS
