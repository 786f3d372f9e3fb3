/* atomr-kernel-cache.h — compiled kernels kept in memory and on disk
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-compile-options.h"

G_BEGIN_DECLS

/**
 * AtomrCacheStatus:
 * @ATOMR_CACHE_STATUS_NONE: the module did not go through a cache
 * @ATOMR_CACHE_STATUS_MISS: nothing was cached: the module was compiled
 * @ATOMR_CACHE_STATUS_MEMORY_HIT: found in the in-process cache
 * @ATOMR_CACHE_STATUS_DISK_HIT: read from the cache directory
 *
 * Where a compiled module came from.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_CACHE_STATUS_NONE,
  ATOMR_CACHE_STATUS_MISS,
  ATOMR_CACHE_STATUS_MEMORY_HIT,
  ATOMR_CACHE_STATUS_DISK_HIT,
} AtomrCacheStatus;

#define ATOMR_TYPE_CACHE_STATUS (atomr_cache_status_get_type ())
ATOMR_AVAILABLE_IN_ALL
GType atomr_cache_status_get_type (void) G_GNUC_CONST;

#define ATOMR_TYPE_KERNEL_CACHE_ENTRY (atomr_kernel_cache_entry_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrKernelCacheEntry, atomr_kernel_cache_entry, ATOMR, KERNEL_CACHE_ENTRY, GObject)

ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_kernel_cache_entry_get_key            (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_kernel_cache_entry_get_path           (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
const gchar * const *atomr_kernel_cache_entry_get_kernel_names   (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
const gchar * const *atomr_kernel_cache_entry_get_lowered_names  (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_kernel_cache_entry_lookup_lowered_name (AtomrKernelCacheEntry *self,
                                                                   const gchar           *kernel_name);
ATOMR_AVAILABLE_IN_ALL
const gchar * const *atomr_kernel_cache_entry_get_flags          (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_kernel_cache_entry_get_arch           (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_kernel_cache_entry_get_nvrtc_version  (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_kernel_cache_entry_get_ptx_size       (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_kernel_cache_entry_get_cubin_size     (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_kernel_cache_entry_get_ltoir_size     (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_kernel_cache_entry_get_source_size    (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_kernel_cache_entry_get_file_size      (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
gdouble              atomr_kernel_cache_entry_get_compile_time_ms (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
GDateTime           *atomr_kernel_cache_entry_get_created        (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
GDateTime           *atomr_kernel_cache_entry_get_last_used      (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_kernel_cache_entry_get_hit_count      (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
gboolean             atomr_kernel_cache_entry_has_source         (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
gchar               *atomr_kernel_cache_entry_load_source        (AtomrKernelCacheEntry *self,
                                                                  GError               **error);
ATOMR_AVAILABLE_IN_ALL
gchar               *atomr_kernel_cache_entry_load_log           (AtomrKernelCacheEntry *self,
                                                                  GError               **error);
ATOMR_AVAILABLE_IN_ALL
GBytes              *atomr_kernel_cache_entry_load_ptx           (AtomrKernelCacheEntry *self,
                                                                  GError               **error);
ATOMR_AVAILABLE_IN_ALL
GBytes              *atomr_kernel_cache_entry_load_cubin         (AtomrKernelCacheEntry *self,
                                                                  GError               **error);
ATOMR_AVAILABLE_IN_ALL
GBytes              *atomr_kernel_cache_entry_load_ltoir         (AtomrKernelCacheEntry *self,
                                                                  GError               **error);
ATOMR_AVAILABLE_IN_ALL
const gchar         *atomr_kernel_cache_entry_get_manifest       (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_ALL
gchar              **atomr_kernel_cache_entry_diff               (AtomrKernelCacheEntry *self,
                                                                  AtomrKernelCacheEntry *other);
ATOMR_AVAILABLE_IN_ALL
gchar               *atomr_kernel_cache_entry_analyse_resources  (AtomrKernelCacheEntry *self,
                                                                  const gchar           *arch,
                                                                  GCancellable          *cancellable,
                                                                  GError               **error);

#define ATOMR_TYPE_KERNEL_CACHE (atomr_kernel_cache_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrKernelCache, atomr_kernel_cache, ATOMR, KERNEL_CACHE, GObject)

ATOMR_AVAILABLE_IN_ALL
gchar            *atomr_kernel_cache_get_default_directory (void);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelCache *atomr_kernel_cache_get_default          (void);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelCache *atomr_kernel_cache_new                  (const gchar      *directory);
ATOMR_AVAILABLE_IN_ALL
const gchar      *atomr_kernel_cache_get_directory        (AtomrKernelCache *self);
ATOMR_AVAILABLE_IN_ALL
guint64           atomr_kernel_cache_get_max_size         (AtomrKernelCache *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_kernel_cache_set_max_size         (AtomrKernelCache *self,
                                                           guint64           max_size);
ATOMR_AVAILABLE_IN_ALL
guint             atomr_kernel_cache_get_memory_capacity  (AtomrKernelCache *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_kernel_cache_set_memory_capacity  (AtomrKernelCache *self,
                                                           guint             capacity);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_get_store_source     (AtomrKernelCache *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_kernel_cache_set_store_source     (AtomrKernelCache *self,
                                                           gboolean          store_source);
ATOMR_AVAILABLE_IN_ALL
GListModel       *atomr_kernel_cache_list                 (AtomrKernelCache *self,
                                                           GError          **error);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelCacheEntry *atomr_kernel_cache_lookup          (AtomrKernelCache *self,
                                                           const gchar      *key,
                                                           GError          **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_remove               (AtomrKernelCache *self,
                                                           const gchar      *key,
                                                           GError          **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_gc                   (AtomrKernelCache *self,
                                                           guint64           max_size,
                                                           guint            *n_removed,
                                                           guint64          *bytes_freed,
                                                           GError          **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_get_stats            (AtomrKernelCache *self,
                                                           guint            *n_entries,
                                                           guint64          *total_bytes,
                                                           guint64          *hits,
                                                           guint64          *misses,
                                                           GError          **error);
ATOMR_AVAILABLE_IN_ALL
void              atomr_kernel_cache_clear_memory         (AtomrKernelCache *self);

/**
 * AtomrKernelCacheReport:
 * @n_entries: valid entries on disk
 * @entry_bytes: their size in bytes
 * @n_damaged: damaged entry files found (bad checksum, truncated, foreign
 *   format version, name not matching the key)
 * @damaged_bytes: their size
 * @n_stale_temp: temporary files left by writers that died (older than an
 *   hour)
 * @stale_temp_bytes: their size
 * @n_removed: valid entries removed to fit the size asked for
 * @bytes_freed: bytes really freed (damaged, stale and removed files)
 * @hits: disk hits recorded by every process using the directory
 * @misses: compiles stored, recorded likewise
 * @writable: whether new entries can be stored
 *
 * The state of a cache directory, from [method@Atomr.KernelCache.get_report]
 * or [method@Atomr.KernelCache.collect].
 *
 * Since: 0.2
 */
typedef struct {
  guint    n_entries;
  guint64  entry_bytes;
  guint    n_damaged;
  guint64  damaged_bytes;
  guint    n_stale_temp;
  guint64  stale_temp_bytes;
  guint    n_removed;
  guint64  bytes_freed;
  guint64  hits;
  guint64  misses;
  gboolean writable;
} AtomrKernelCacheReport;

#define ATOMR_TYPE_KERNEL_CACHE_REPORT (atomr_kernel_cache_report_get_type ())
ATOMR_AVAILABLE_IN_ALL
GType                   atomr_kernel_cache_report_get_type (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
AtomrKernelCacheReport *atomr_kernel_cache_report_copy     (const AtomrKernelCacheReport *report);
ATOMR_AVAILABLE_IN_ALL
void                    atomr_kernel_cache_report_free     (AtomrKernelCacheReport       *report);

ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_get_report           (AtomrKernelCache        *self,
                                                           gboolean                 verify,
                                                           AtomrKernelCacheReport  *report,
                                                           GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_collect              (AtomrKernelCache        *self,
                                                           guint64                  max_size,
                                                           AtomrKernelCacheReport  *report,
                                                           GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_check_writable       (AtomrKernelCache        *self,
                                                           GError                 **error);
ATOMR_AVAILABLE_IN_ALL
const gchar      *atomr_kernel_cache_get_store_error      (AtomrKernelCache        *self);

ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_export               (AtomrKernelCache        *self,
                                                           const gchar             *destination,
                                                           guint                   *n_exported,
                                                           GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_kernel_cache_import               (AtomrKernelCache        *self,
                                                           const gchar             *source,
                                                           guint                   *n_imported,
                                                           guint                   *n_rejected,
                                                           GError                 **error);

ATOMR_AVAILABLE_IN_ALL
AtomrCacheStatus  atomr_kernel_cache_explain              (AtomrKernelCache        *self,
                                                           const gchar             *source,
                                                           AtomrCompileOptions     *options,
                                                           gchar                  **key,
                                                           gchar                  **nearest,
                                                           gchar                 ***reasons,
                                                           GError                 **error);
ATOMR_AVAILABLE_IN_ALL
AtomrCacheStatus  atomr_kernel_cache_explain_program      (AtomrKernelCache        *self,
                                                           const gchar             *source,
                                                           const gchar             *program_name,
                                                           AtomrCompileOptions     *options,
                                                           gchar                  **key,
                                                           gchar                  **nearest,
                                                           gchar                 ***reasons,
                                                           GError                 **error);

ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_parse_size                        (const gchar             *text,
                                                           guint64                 *size,
                                                           GError                 **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrKernelCacheReport, atomr_kernel_cache_report_free)

/* Owned copies of the string-array getters (bindings see them under the
 * getters' names). */
ATOMR_AVAILABLE_IN_0_2
gchar **atomr_kernel_cache_entry_dup_kernel_names (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_0_2
gchar **atomr_kernel_cache_entry_dup_lowered_names (AtomrKernelCacheEntry *self);
ATOMR_AVAILABLE_IN_0_2
gchar **atomr_kernel_cache_entry_dup_flags (AtomrKernelCacheEntry *self);

/* Boxed results for bindings (they shadow get_stats and gc in the GIR). */
ATOMR_AVAILABLE_IN_0_2
AtomrKernelCacheReport *atomr_kernel_cache_query_stats (AtomrKernelCache  *self,
                                                        GError           **error);
ATOMR_AVAILABLE_IN_0_2
AtomrKernelCacheReport *atomr_kernel_cache_run_gc      (AtomrKernelCache  *self,
                                                        guint64            max_size,
                                                        GError           **error);

G_END_DECLS
