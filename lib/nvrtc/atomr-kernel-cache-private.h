/* atomr-kernel-cache-private.h — the compile path's side of the cache
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-kernel-cache.h"
#include "atomr-module-private.h"
#include "atomr-kernel-cache-key-private.h"

G_BEGIN_DECLS

/* The file format (little-endian):
 *
 *   0   magic "ATOMRKC\n"
 *   8   u32 format version (ATOMR_CACHE_FORMAT_VERSION)
 *   12  u32 header size (176)
 *   16  key: 64 hex digits of SHA-256
 *   80  i64 creation time, µs since the epoch
 *   88  u32 metadata size, u32 source size, u32 log size, u32 manifest size
 *   104 u64 PTX size, u64 CUBIN size, u64 LTO-IR size
 *   128 checksum (compute_checksum(), 4 × 64-bit lanes) of bytes 0..127,
 *       160..175 and of the whole payload
 *   160 16 reserved bytes, zero (checked, and covered by the checksum)
 *   176 payload: metadata (JSON), source, log, PTX, CUBIN, LTO-IR, manifest
 *       (JSON; last, and not parsed on a hit: it can list hundreds of
 *       headers)
 *
 * An entry file is written once (temporary name, rename) and never again:
 * hits are recorded in the directory's usage journal ("usage"), so nothing
 * outside the checksum can change what list/stats see of a served entry,
 * and read-only or overlay directories are never written on a hit.
 */
#define ATOMR_CACHE_MAGIC        "ATOMRKC\n"
#define ATOMR_CACHE_HEADER_SIZE  176
#define ATOMR_CACHE_SUFFIX       ".akc"

typedef struct _AtomrCacheRequest AtomrCacheRequest;

/* Looks the request up in memory (which reads no file: only stat()s the
 * files the key depends on), then on disk.  Returns the module on a hit; on
 * a miss returns NULL and *request for atomr_kernel_cache_store().  When the
 * request cannot be keyed (atomr_cache_key_compute()) returns NULL and
 * leaves *request NULL: compile without the cache. */
AtomrModule *atomr_kernel_cache_lookup_request (AtomrKernelCache         *self,
                                                const AtomrCacheKeyInput *input,
                                                AtomrCacheRequest       **request);
/* The memory level alone, and only what it can answer without touching
 * the file system (see atomr_cache_memory_lookup()): safe on a thread that
 * must not block.  @input must carry key_part (from a snapshot). */
AtomrModule *atomr_kernel_cache_lookup_memory  (AtomrKernelCache         *self,
                                                const AtomrCacheKeyInput *input);
/* What a thread that must not wait on I/O can answer: the memory level
 * without a stat() (as atomr_kernel_cache_lookup_memory()), then a disk
 * entry whose key this process has computed before (valid without a
 * stat()) when the whole file is in the page cache (preadv2 RWF_NOWAIT;
 * file systems without it read normally).  NULL otherwise, and nothing
 * is judged or removed: the blocking lookup does that.  @input must carry
 * key_part. */
AtomrModule *atomr_kernel_cache_lookup_nonblocking (AtomrKernelCache         *self,
                                                    const AtomrCacheKeyInput *input);
/* Stores a fresh compile (memory and disk).  A disk failure is logged with
 * g_debug() only.  Sets content->key. */
void         atomr_kernel_cache_store          (AtomrKernelCache     *self,
                                                AtomrCacheRequest    *request,
                                                AtomrModuleContent   *content,
                                                const gchar          *source);
void         atomr_cache_request_free          (AtomrCacheRequest    *request);
const gchar *atomr_cache_request_get_key       (AtomrCacheRequest    *request);

/* The driver rejected the image of entry @key (@why): removes it from
 * memory and disk, counts it, and logs it (domain Atomr, info level, with
 * ATOMR_CACHE_EVENT=rejected-image) so the next compile of the same
 * request compiles again. */
void         atomr_kernel_cache_evict_rejected (AtomrKernelCache *self,
                                                const gchar      *key,
                                                const gchar      *why);
guint        atomr_kernel_cache_get_n_rejected (AtomrKernelCache *self);

/* Writes @content as entry @key (replacing any), as a store would: for
 * tests that need an entry with chosen contents. */
gboolean     atomr_kernel_cache_write_entry    (AtomrKernelCache    *self,
                                                const gchar         *key,
                                                AtomrModuleContent  *content,
                                                const gchar         *source,
                                                GError             **error);

/* $ATOMR_CACHE_DISABLE was set when @self was created: compiles go
 * around it.  (Read once per cache object, not on every compile: getenv()
 * cost a quarter of a memory hit.) */
gboolean     atomr_kernel_cache_disabled_by_env (AtomrKernelCache *self);

/* Counters of this cache object (memory hits, disk hits, misses). */
void         atomr_kernel_cache_get_counters   (AtomrKernelCache     *self,
                                                guint64              *memory_hits,
                                                guint64              *disk_hits,
                                                guint64              *misses);

/* The remote layer's hooks (AtomrRemoteCache installs them).  @fetch runs
 * on a compiling thread after a disk miss and returns the raw bytes of
 * entry @key or NULL; the cache verifies them (atomr_kernel_cache_adopt_entry)
 * and never uses what does not verify.  @stored runs on the compiling thread
 * after an entry was written to disk (at @path); it must not block on the
 * network.  @remote (a GObject, referenced) is their data; NULL hooks
 * detach. */
typedef GBytes *(*AtomrCacheRemoteFetch)  (GObject *remote, const gchar *key);
typedef void    (*AtomrCacheRemoteStored) (GObject *remote, const gchar *key, const gchar *path);

void         atomr_kernel_cache_set_remote     (AtomrKernelCache       *self,
                                                GObject                *remote,
                                                AtomrCacheRemoteFetch   fetch,
                                                AtomrCacheRemoteStored  stored);
/* Verifies @data as entry @key (format, checksums, the key it holds) and
 * writes it into the directory atomically.  FALSE with @error naming what
 * was wrong otherwise; nothing is written then. */
gboolean     atomr_kernel_cache_adopt_entry    (AtomrKernelCache *self,
                                                const gchar      *key,
                                                GBytes           *data,
                                                GError          **error);
/* Verifies @data as the file of entry @key, writing nothing. */
gboolean     atomr_kernel_cache_verify_entry_data (const gchar *key,
                                                   GBytes      *data,
                                                   GError     **error);
/* Writes the checksum of @data (an entry file of @size bytes) into its
 * header, so that fuzzing reaches what lies behind the checksum.  Does
 * nothing when @size is shorter than a header. */
void         atomr_kernel_cache_seal_entry_data (guint8 *data,
                                                 gsize   size);
/* Entries found in the remote layer (and backfilled to disk). */
guint64      atomr_kernel_cache_get_remote_hits (AtomrKernelCache *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrCacheRequest, atomr_cache_request_free)

G_END_DECLS
