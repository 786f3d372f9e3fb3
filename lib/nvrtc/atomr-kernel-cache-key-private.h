/* atomr-kernel-cache-key-private.h — building the kernel cache's key
 *
 * The key must change whenever NVRTC's output could: see "Kernel cache
 * keys" in docs/DESIGN-NOTES.md for the argument.  What cannot be keyed is
 * refused (the compile then bypasses the cache) rather than guessed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The name NVRTC gets when the caller gives none. */
#define ATOMR_DEFAULT_PROGRAM_NAME "program.cu"

/* Everything a compile depends on besides files and the libraries. */
typedef struct {
  const gchar         *source;
  const gchar         *program_name;   /* as given to nvrtcCreateProgram();
                                        * NULL: ATOMR_DEFAULT_PROGRAM_NAME */
  const gchar * const *kernel_names;   /* name expressions */
  const gchar * const *flags;          /* exactly what NVRTC gets */
  const gchar         *arch;
  GPtrArray           *link_objects;   /* AtomrLinkObject */
  /* Optional: atomr_cache_options_blob() of the fields above and its
   * atomr_cache_bytes_hash(), precomputed (AtomrCompileSnapshot); NULL:
   * computed on each lookup. */
  GBytes              *key_part;
  guint                key_part_hash;
} AtomrCacheKeyInput;

/* What a file (or the absence of one) looked like when the key was
 * computed: a memory hit is valid only while every stamp still matches. */
typedef struct {
  gchar   *path;
  gboolean exists;
  guint64  size;
  gint64   mtime_ns;
  guint64  inode;
  guint64  device;
} AtomrCacheHeaderStamp;

void     atomr_cache_header_stamp_free (gpointer data);

/* TRUE while every AtomrCacheHeaderStamp of @headers still matches. */
gboolean atomr_cache_stamps_unchanged  (GPtrArray *headers);

/* Everything of a request but file contents: the memory-level key.  Holds
 * the program name, the flags, the NVRTC identity and, for LTO, the
 * nvJitLink identity. */
GBytes  *atomr_cache_request_blob      (const AtomrCacheKeyInput *input);

/* The disk key (64 hex digits of SHA-256): @blob plus every file NVRTC can
 * read for this request, found as NVRTC finds it (see the design notes).
 * *@headers_out receives the stamps of the files read and of every place
 * searched before them.  Returns %NULL with ATOMR_ERROR_NOT_SUPPORTED when
 * the request cannot be keyed (a computed #include, a flag that makes
 * NVRTC read or write files the key cannot see, __TIME__, ...): the
 * message says why. */
gchar   *atomr_cache_key_compute       (GBytes                   *blob,
                                        const AtomrCacheKeyInput *input,
                                        GPtrArray               **headers_out,
                                        GError                  **error);

/* The options' share of the memory-level key (see the .c file). */
GBytes  *atomr_cache_options_blob      (const gchar * const *flags,
                                        const gchar * const *kernel_names,
                                        const gchar         *arch,
                                        GPtrArray           *link_objects);
guint    atomr_cache_hash_data         (gconstpointer        data,
                                        gsize                len,
                                        guint64              seed);
guint    atomr_cache_bytes_hash        (GBytes              *bytes);

/* TRUE if @flags ask for LTO (nvJitLink then takes part in the output). */
gboolean atomr_cache_flags_use_lto     (const gchar * const *flags);

G_END_DECLS
