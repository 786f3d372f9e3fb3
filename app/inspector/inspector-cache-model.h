/* inspector-cache-model.h — the kernel cache as a searchable, sorted list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>
#include <gio/gio.h>


G_BEGIN_DECLS

typedef enum {
  INSPECTOR_CACHE_SORT_LAST_USED,
  INSPECTOR_CACHE_SORT_NAME,
  INSPECTOR_CACHE_SORT_SIZE,
  INSPECTOR_CACHE_SORT_HITS,
  INSPECTOR_CACHE_SORT_COMPILE_TIME,
  INSPECTOR_CACHE_SORT_CREATED,
} InspectorCacheSort;

typedef enum {
  INSPECTOR_CACHE_AGE_ANY,
  INSPECTOR_CACHE_AGE_DAY,
  INSPECTOR_CACHE_AGE_WEEK,
  INSPECTOR_CACHE_AGE_MONTH,
} InspectorCacheAge;

typedef enum {
  INSPECTOR_CACHE_SIZE_ANY,
  INSPECTOR_CACHE_SIZE_SMALL,    /* under 100 kB */
  INSPECTOR_CACHE_SIZE_MEDIUM,   /* 100 kB to 1 MB */
  INSPECTOR_CACHE_SIZE_LARGE,    /* 1 MB and more */
} InspectorCacheSize;

#define INSPECTOR_TYPE_CACHE_MODEL (inspector_cache_model_get_type ())
G_DECLARE_FINAL_TYPE (InspectorCacheModel, inspector_cache_model, INSPECTOR, CACHE_MODEL, GObject)

InspectorCacheModel *inspector_cache_model_new            (const gchar         *directory);
const gchar         *inspector_cache_model_get_directory  (InspectorCacheModel *self);
void                 inspector_cache_model_set_directory  (InspectorCacheModel *self,
                                                           const gchar         *directory);
AtomrKernelCache    *inspector_cache_model_get_cache      (InspectorCacheModel *self);
gboolean             inspector_cache_model_reload         (InspectorCacheModel *self,
                                                           GError             **error);
void                 inspector_cache_model_reload_async   (InspectorCacheModel *self);
guint                inspector_cache_model_get_n_async_reloads (InspectorCacheModel *self);
void                 inspector_cache_model_set_search     (InspectorCacheModel *self,
                                                           const gchar         *text);
void                 inspector_cache_model_set_filters    (InspectorCacheModel *self,
                                                           const gchar         *arch,
                                                           InspectorCacheAge    age,
                                                           InspectorCacheSize   size);
GStrv                inspector_cache_model_dup_archs      (InspectorCacheModel *self);
void                 inspector_cache_model_set_sort       (InspectorCacheModel *self,
                                                           InspectorCacheSort   sort,
                                                           gboolean             descending);
void                 inspector_cache_model_set_monitored  (InspectorCacheModel *self,
                                                           gboolean             monitored);
guint                inspector_cache_model_get_n_entries  (InspectorCacheModel *self);
guint64              inspector_cache_model_get_total_bytes (InspectorCacheModel *self);
gboolean             inspector_cache_model_remove         (InspectorCacheModel *self,
                                                           AtomrKernelCacheEntry *entry,
                                                           GError             **error);
void                 inspector_cache_model_set_hidden     (InspectorCacheModel *self,
                                                           const gchar         *key,
                                                           gboolean             hidden);
gboolean             inspector_cache_model_is_changing    (InspectorCacheModel *self);
guint                inspector_cache_model_find           (InspectorCacheModel *self,
                                                           const gchar         *key);
gboolean             inspector_cache_model_gc             (InspectorCacheModel *self,
                                                           guint64              max_bytes,
                                                           guint               *n_removed,
                                                           guint64             *bytes_freed,
                                                           GError             **error);
gboolean             inspector_cache_entry_matches        (AtomrKernelCacheEntry *entry,
                                                           const gchar         *text);
gchar               *inspector_cache_entry_get_title      (AtomrKernelCacheEntry *entry);

G_END_DECLS
