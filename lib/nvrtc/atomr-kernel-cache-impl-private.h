/* atomr-kernel-cache-impl-private.h — what the parts of the kernel cache
 * share: the objects' structures and the functions one part calls in another
 *
 *   atomr-kernel-cache.c           the object, settings, the compile path
 *   atomr-kernel-cache-format.c    the entry file (format-private.h)
 *   atomr-kernel-cache-entry.c     AtomrKernelCacheEntry
 *   atomr-kernel-cache-memory.c    the memory tier (LRU, inotify generations)
 *   atomr-kernel-cache-disk.c      entry files, usage journal, counters
 *   atomr-kernel-cache-lock.c      single flight and lock files
 *   atomr-kernel-cache-manifest.c  manifests, explain, diff
 *   atomr-kernel-cache-gc.c        list, lookup, remove, gc, stats
 *   atomr-kernel-cache-bundle.c    export, import, remote entries
 *   atomr-kernel-cache-key.c       the key (key-private.h)
 *
 * "_locked" functions run with AtomrKernelCache.lock held.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

#include "atomr-kernel-cache-format-private.h"

G_BEGIN_DECLS

#define STATS_FILE       "stats"
#define USAGE_FILE       "usage"
#define LOCK_SUFFIX      ".lock"
/* How long a compile waits for another process's lock on its key, and when
 * a lock of another host counts as abandoned (ATOMR_CACHE_LOCK_TIMEOUT,
 * ATOMR_CACHE_LOCK_STALE, in seconds). */
#define LOCK_TIMEOUT_SECONDS 300
#define LOCK_STALE_SECONDS   900
/* The usage journal is compacted by gc once it is larger than this. */
#define USAGE_COMPACT_BYTES (256 * 1024)
#define STATS_MAGIC      "ATOMRKS\n"
#define DEFAULT_MEMORY_CAPACITY 256
/* The default directory's size cap unless $ATOMR_CACHE_MAX_SIZE says. */
#define DEFAULT_MAX_SIZE (G_GUINT64_CONSTANT (1) << 30)
/* Temporary files older than this belong to a writer that died. */
#define STALE_TEMP_USEC  (G_GINT64_CONSTANT (3600) * G_USEC_PER_SEC)

struct _AtomrKernelCacheEntry
{
  GObject    parent_instance;
  gchar     *path;
  FileHeader h;
  Meta       meta;
  GDateTime *created;
  GDateTime *last_used;
};

/* The memory level's key: the options' share (atomr_cache_options_blob(),
 * held), the program name and the source, compared whole.  Lookups build
 * one on the stack over the caller's strings; entries and requests own
 * copies.  @hash combines the three (atomr_cache_memory_key_init()). */
typedef struct {
  GBytes      *key_part;
  const gchar *program_name;
  const gchar *source;
  gsize        source_len;
  guint        hash;
} MemoryKey;

struct _AtomrCacheRequest {
  MemoryKey  memkey;    /* over program_name and source below */
  gchar     *source;
  gchar     *key;
  GPtrArray *headers;   /* AtomrCacheHeaderStamp */
  AtomrKernelCache *cache;     /* set while in flight or holding a lock */
  gboolean   in_flight; /* key is in cache->flights: this request compiles */
  gchar     *lock_path; /* the KEY.lock file this request created */
  /* For the manifest, copied after a memory miss: */
  gchar     *program_name;
  gchar    **kernel_names;
  gchar    **flags;
  gchar     *arch;
  GPtrArray *link_objects;   /* AtomrLinkObject, borrowed refs of data */
};

/* How the stamps of an entry are validated.  Stamps under a directory
 * this cache watches with inotify are valid while the watch generation
 * has not moved since @checked; the others (relative paths, directories
 * that cannot be watched) are stat()ed on every use. */
typedef struct {
  GPtrArray *headers;     /* AtomrCacheHeaderStamp, all of them */
  GPtrArray *unwatched;   /* borrowed from @headers: stat()ed every time;
                           * NULL: no inotify, every stamp is */
  guint64    epoch;       /* the cache's watch_epoch when watched */
  guint64    checked;     /* the generation of the last full check; 0: none */
} HeaderWatch;

typedef struct {
  MemoryKey           key;       /* owns key_part and both strings */
  AtomrModuleContent *content;
  AtomrModule        *module;    /* handed out on memory hits, built on the first */
  HeaderWatch         w;
  GList              *link;    /* in lru, data = this */
} MemoryEntry;

/* The disk key of a recent request and the stamps it was computed from:
 * a disk hit of a request seen before (memory level off or evicted) skips
 * the key computation (SHA-256 and the include scan), validated like a
 * memory entry. */
typedef struct {
  MemoryKey  key;       /* owns key_part and both strings */
  gchar     *disk_key;
  HeaderWatch w;
  GList     *link;      /* in key_memo_order */
} KeyMemo;

#define KEY_MEMO_CAPACITY 1024

struct _AtomrKernelCache
{
  GObject     parent_instance;
  gchar      *directory;
  guint64     max_size;
  guint       memory_capacity;
  gboolean    store_source;
  gboolean    env_disabled;  /* $ATOMR_CACHE_DISABLE at construction */

  GMutex      lock;
  GHashTable *memory;     /* MemoryKey -> MemoryEntry */
  GQueue      lru;        /* head = most recent */
  GHashTable *key_memo;   /* MemoryKey -> KeyMemo: disk keys of recent requests */
  GQueue      key_memo_order;   /* head = newest */
  guint64     memory_hits, disk_hits, misses;
  GHashTable *flights;       /* keys being compiled in this process */
  int         watch_fd;      /* inotify, -1 when unavailable; under lock */
  GHashTable *watched_dirs;  /* directories watched; under lock */
  guint64     watch_gen;     /* bumped on any event; under lock */
  guint64     watch_epoch;   /* bumped when a watch was lost; under lock */
  GCond       flight_done;   /* with lock: a key left flights */
  guint       flight_waiters;  /* under lock: threads in g_cond_wait (flight_done);
                                * no broadcast (a futex call) without them */
  gchar      *store_error;   /* the first store failure, under lock */
  gboolean    store_warned;  /* under lock */
  gint        usage_failed;  /* atomic */
  int         usage_fd;      /* the journal, O_APPEND; -1 until the first hit */
  guint       n_rejected;    /* atomic: entries the driver rejected */
  gboolean    probe;         /* explain: look, record and remove nothing */
  GObject    *remote;        /* the remote layer, under lock; NULL: none */
  AtomrCacheRemoteFetch  remote_fetch;   /* under lock */
  AtomrCacheRemoteStored remote_stored;  /* under lock */
  guint64     remote_hits;   /* under lock */
};

/* The usage journal: one line "KEY USEC\n" appended per disk hit (a
 * write(2) of < 100 bytes with O_APPEND, so concurrent writers on a local
 * file system do not interleave), and "= KEY USEC HITS\n" lines written
 * by compaction.  It is advisory: a lost or torn line only changes which
 * entry gc removes first; unparseable lines are skipped. */
typedef struct {
  gint64  last_used;
  guint64 hits;
} Usage;

/* atomr-kernel-cache-entry.c */
gchar *atomr_cache_bytes_to_string (GBytes *bytes);

GDateTime *atomr_cache_date_time_from_usec (gint64 usec);

GBytes *atomr_cache_entry_load_section (AtomrKernelCacheEntry *self,
                                        Section section,
                                        GError **error);

AtomrKernelCacheEntry *atomr_cache_entry_read (const gchar *path, GError **error);

/* atomr-kernel-cache-memory.c */
void atomr_cache_memory_key_init (MemoryKey   *key,
                                  GBytes      *key_part,
                                  guint        key_part_hash,
                                  const gchar *program_name,
                                  const gchar *source);

guint atomr_cache_memory_key_hash (gconstpointer key);

gboolean atomr_cache_memory_key_equal (gconstpointer a, gconstpointer b);

AtomrModule *atomr_cache_memory_entry_module_locked (MemoryEntry *e);

void atomr_cache_key_memo_free (gpointer data);

/* @may_stat FALSE: NULL unless the memo is valid without a stat(). */
gchar *atomr_cache_key_memo_lookup (AtomrKernelCache *self,
                                    const MemoryKey *key,
                                    gboolean may_stat,
                                    GPtrArray **headers_out);

void atomr_cache_key_memo_insert (AtomrKernelCache *self,
                                  const MemoryKey *key,
                                  const gchar *disk_key,
                                  GPtrArray *headers);

void atomr_cache_memory_entry_free (gpointer data);

void atomr_cache_memory_insert_locked (AtomrKernelCache *self,
                                       const MemoryKey *key,
                                       AtomrModuleContent *content,
                                       GPtrArray *headers);

/* @may_stat FALSE: only what needs no stat() (no headers, or headers
 * validated by the current inotify generation); NULL otherwise. */
AtomrModule *atomr_cache_memory_lookup (AtomrKernelCache *self, const MemoryKey *key, gboolean may_stat);

AtomrModule *atomr_cache_memory_lookup_key (AtomrKernelCache *self, const gchar *key);

void atomr_cache_memory_trim_locked (AtomrKernelCache *self, guint capacity);

/* atomr-kernel-cache-disk.c */
AtomrModuleContent *atomr_cache_disk_read (AtomrKernelCache *self, const gchar *key);

AtomrModuleContent *atomr_cache_disk_read_full (AtomrKernelCache *self, const gchar *key, gboolean nowait);

gboolean atomr_cache_disk_write (AtomrKernelCache *self,
                                 const gchar *key,
                                 AtomrModuleContent *content,
                                 const gchar *source,
                                 JsonNode *manifest,
                                 GError **error);

gchar *atomr_cache_entry_path (AtomrKernelCache *self, const gchar *key);

void atomr_cache_note_store_failure (AtomrKernelCache *self, const GError *error, gboolean warn);

void atomr_cache_stats_add (AtomrKernelCache *self, guint64 hits, guint64 misses);

GHashTable *atomr_cache_usage_load (AtomrKernelCache *self, gsize *size_out);

/* atomr-kernel-cache-lock.c */
AtomrModuleContent *atomr_cache_disk_lock (AtomrKernelCache *self, AtomrCacheRequest *request);

void atomr_cache_disk_unlock (AtomrCacheRequest *request);

void atomr_cache_flight_end (AtomrCacheRequest *request);

gboolean atomr_cache_lock_is_stale (const gchar *path);

/* atomr-kernel-cache-manifest.c */
JsonNode *atomr_cache_manifest_build (AtomrCacheRequest *request, const gchar *source);

/* atomr-kernel-cache-gc.c */
gboolean atomr_cache_gc_internal (AtomrKernelCache *self,
                                  guint64 max_size,
                                  gboolean verify,
                                  gboolean compact,
                                  AtomrKernelCacheReport *report,
                                  GError **error);

GPtrArray *atomr_cache_scan_directory (AtomrKernelCache *self,
                                       gboolean clean,
                                       gboolean verify,
                                       AtomrKernelCacheReport *report,
                                       GError **error);

G_END_DECLS
