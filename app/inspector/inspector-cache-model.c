/* inspector-cache-model.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-cache-model.h"

/* A GListModel of AtomrKernelCacheEntry: every entry of one cache
 * directory (atomr_kernel_cache_list()), filtered by a search text and
 * sorted by one key.  It reloads itself when the directory changes on disk
 * (a GFileMonitor, coalesced over 250 ms, since a store writes several
 * files). */
struct _InspectorCacheModel
{
  GObject           parent_instance;
  AtomrKernelCache *cache;
  GPtrArray        *all;       /* AtomrKernelCacheEntry* */
  GPtrArray        *visible;   /* subset of all, sorted */
  gchar            *search;
  gchar            *filter_arch;   /* NULL: any */
  InspectorCacheAge  filter_age;
  InspectorCacheSize filter_size;
  InspectorCacheSort sort;
  gboolean          descending;
  guint64           total_bytes;
  GFileMonitor     *monitor;
  guint             reload_source;
  gboolean          monitored;
  GHashTable       *hidden;    /* keys of entries deleted pending an undo */
  gboolean          changing;  /* inside items-changed */
  GCancellable     *listing;   /* the directory change being listed in a worker */
  guint             n_async;   /* listings done in a worker, for the tests */
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (InspectorCacheModel, inspector_cache_model, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

enum {
  PROP_0,
  PROP_DIRECTORY,
  PROP_N_ENTRIES,
  PROP_TOTAL_BYTES,
  N_PROPS
};

enum {
  RELOADED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static GType
get_item_type (GListModel *model)
{
  return ATOMR_TYPE_KERNEL_CACHE_ENTRY;
}

static guint
get_n_items (GListModel *model)
{
  return INSPECTOR_CACHE_MODEL (model)->visible->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  InspectorCacheModel *self = INSPECTOR_CACHE_MODEL (model);

  if (position >= self->visible->len)
    return NULL;
  return g_object_ref (g_ptr_array_index (self->visible, position));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

/**
 * inspector_cache_entry_get_title:
 * @entry: a cache entry
 *
 * Returns: (transfer full): the kernel names joined by ", ", or the key
 *   when the entry names no kernel
 */
gchar *
inspector_cache_entry_get_title (AtomrKernelCacheEntry *entry)
{
  const gchar * const *names = atomr_kernel_cache_entry_get_kernel_names (entry);

  if (names && names[0])
    return g_strjoinv (", ", (gchar **) names);
  return g_strdup (atomr_kernel_cache_entry_get_key (entry));
}

static gboolean
strv_matches (const gchar * const *strv,
              const gchar         *needle)
{
  for (guint i = 0; strv && strv[i]; i++)
    {
      g_autofree gchar *folded = g_utf8_casefold (strv[i], -1);
      if (strstr (folded, needle))
        return TRUE;
    }
  return FALSE;
}

/**
 * inspector_cache_entry_matches:
 * @entry: a cache entry
 * @text: (nullable): search text
 *
 * Every whitespace-separated word of @text must occur, ignoring case, in
 * a kernel name, a lowered name, a flag, the architecture or the key.
 *
 * Returns: whether @entry matches
 */
gboolean
inspector_cache_entry_matches (AtomrKernelCacheEntry *entry,
                               const gchar           *text)
{
  g_autofree gchar *folded = NULL;
  g_auto(GStrv) words = NULL;

  if (text == NULL || *text == '\0')
    return TRUE;
  folded = g_utf8_casefold (text, -1);
  words = g_strsplit_set (folded, " \t", -1);
  for (guint i = 0; words[i]; i++)
    {
      const gchar *one[3] = { atomr_kernel_cache_entry_get_arch (entry),
                              atomr_kernel_cache_entry_get_key (entry), NULL };
      if (*words[i] == '\0')
        continue;
      if (!strv_matches (atomr_kernel_cache_entry_get_kernel_names (entry), words[i]) &&
          !strv_matches (atomr_kernel_cache_entry_get_lowered_names (entry), words[i]) &&
          !strv_matches (atomr_kernel_cache_entry_get_flags (entry), words[i]) &&
          !strv_matches (one, words[i]))
        return FALSE;
    }
  return TRUE;
}

static gint
compare_datetime (GDateTime *a,
                  GDateTime *b)
{
  if (a == NULL || b == NULL)
    return (a != NULL) - (b != NULL);
  return g_date_time_compare (a, b);
}

#define CMP(x, y) (((x) > (y)) - ((x) < (y)))

static gint
compare_entries (gconstpointer a,
                 gconstpointer b,
                 gpointer      user_data)
{
  InspectorCacheModel *self = user_data;
  AtomrKernelCacheEntry *x = *(AtomrKernelCacheEntry **) a, *y = *(AtomrKernelCacheEntry **) b;
  gint c = 0;

  switch (self->sort)
    {
    case INSPECTOR_CACHE_SORT_NAME:
      {
        g_autofree gchar *tx = inspector_cache_entry_get_title (x), *ty = inspector_cache_entry_get_title (y);
        c = g_utf8_collate (tx, ty);
      }
      break;
    case INSPECTOR_CACHE_SORT_SIZE:
      c = CMP (atomr_kernel_cache_entry_get_file_size (x), atomr_kernel_cache_entry_get_file_size (y));
      break;
    case INSPECTOR_CACHE_SORT_HITS:
      c = CMP (atomr_kernel_cache_entry_get_hit_count (x), atomr_kernel_cache_entry_get_hit_count (y));
      break;
    case INSPECTOR_CACHE_SORT_COMPILE_TIME:
      c = CMP (atomr_kernel_cache_entry_get_compile_time_ms (x), atomr_kernel_cache_entry_get_compile_time_ms (y));
      break;
    case INSPECTOR_CACHE_SORT_CREATED:
      c = compare_datetime (atomr_kernel_cache_entry_get_created (x), atomr_kernel_cache_entry_get_created (y));
      break;
    case INSPECTOR_CACHE_SORT_LAST_USED:
    default:
      c = compare_datetime (atomr_kernel_cache_entry_get_last_used (x), atomr_kernel_cache_entry_get_last_used (y));
      break;
    }
  if (self->descending)
    c = -c;
  if (c == 0)   /* stable, whatever the key */
    c = g_strcmp0 (atomr_kernel_cache_entry_get_key (x), atomr_kernel_cache_entry_get_key (y));
  return c;
}

/* The filter chips: architecture, when last used, size on disk. */
static gboolean
passes_filters (InspectorCacheModel   *self,
                AtomrKernelCacheEntry *entry)
{
  if (self->filter_arch != NULL &&
      g_strcmp0 (atomr_kernel_cache_entry_get_arch (entry), self->filter_arch) != 0)
    return FALSE;
  if (self->filter_age != INSPECTOR_CACHE_AGE_ANY)
    {
      GDateTime *when = atomr_kernel_cache_entry_get_last_used (entry);
      g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
      GTimeSpan limit = self->filter_age == INSPECTOR_CACHE_AGE_DAY ? G_TIME_SPAN_DAY
                      : self->filter_age == INSPECTOR_CACHE_AGE_WEEK ? 7 * G_TIME_SPAN_DAY
                      : 30 * G_TIME_SPAN_DAY;

      if (when == NULL)
        when = atomr_kernel_cache_entry_get_created (entry);
      if (when == NULL || g_date_time_difference (now, when) > limit)
        return FALSE;
    }
  if (self->filter_size != INSPECTOR_CACHE_SIZE_ANY)
    {
      guint64 size = atomr_kernel_cache_entry_get_file_size (entry);
      if ((self->filter_size == INSPECTOR_CACHE_SIZE_SMALL && size >= 100 * 1000) ||
          (self->filter_size == INSPECTOR_CACHE_SIZE_MEDIUM && (size < 100 * 1000 || size >= 1000 * 1000)) ||
          (self->filter_size == INSPECTOR_CACHE_SIZE_LARGE && size < 1000 * 1000))
        return FALSE;
    }
  return TRUE;
}

static void
refilter (InspectorCacheModel *self)
{
  guint old = self->visible->len;

  g_ptr_array_set_size (self->visible, 0);
  for (guint i = 0; i < self->all->len; i++)
    if (inspector_cache_entry_matches (g_ptr_array_index (self->all, i), self->search) &&
        passes_filters (self, g_ptr_array_index (self->all, i)) &&
        !g_hash_table_contains (self->hidden,
                                atomr_kernel_cache_entry_get_key (g_ptr_array_index (self->all, i))))
      g_ptr_array_add (self->visible, g_object_ref (g_ptr_array_index (self->all, i)));
  g_ptr_array_sort_with_data (self->visible, compare_entries, self);
  self->changing = TRUE;
  g_list_model_items_changed (G_LIST_MODEL (self), 0, old, self->visible->len);
  self->changing = FALSE;
}

/**
 * inspector_cache_model_reload:
 * @self: a model
 * @error: return location for a #GError
 *
 * Lists the cache directory again.  A directory that does not exist yet
 * is an empty cache.
 *
 * Returns: %TRUE on success; on error the model is empty
 */
/* Takes a listing (or its error) as the model's entries; main thread. */
static gboolean
apply_list (InspectorCacheModel  *self,
            GListModel           *list,
            GError               *local,
            GError              **error)
{
  guint n;

  g_ptr_array_set_size (self->all, 0);
  self->total_bytes = 0;
  if (list)
    {
      n = g_list_model_get_n_items (list);
      for (guint i = 0; i < n; i++)
        {
          AtomrKernelCacheEntry *e = g_list_model_get_item (list, i);
          self->total_bytes += atomr_kernel_cache_entry_get_file_size (e);
          g_ptr_array_add (self->all, e);
        }
    }
  refilter (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ENTRIES]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TOTAL_BYTES]);
  g_signal_emit (self, signals[RELOADED], 0, local);
  if (local)
    {
      g_propagate_error (error, g_error_copy (local));
      return FALSE;
    }
  return TRUE;
}

/**
 * inspector_cache_model_reload:
 * @self: a model
 * @error: return location for a #GError
 *
 * Lists the cache directory again, on the calling thread.  A directory
 * that does not exist yet is an empty cache.
 *
 * Returns: %TRUE on success; on error the model is empty
 */
gboolean
inspector_cache_model_reload (InspectorCacheModel  *self,
                              GError              **error)
{
  g_autoptr(GListModel) list = NULL;
  g_autoptr(GError) local = NULL;

  g_return_val_if_fail (INSPECTOR_IS_CACHE_MODEL (self), FALSE);

  /* a worker's listing still under way is older than this one */
  g_cancellable_cancel (self->listing);
  g_clear_object (&self->listing);
  list = atomr_kernel_cache_list (self->cache, &local);
  return apply_list (self, list, local, error);
}

static void
list_thread (GTask        *task,
             gpointer      source,
             gpointer      task_data,
             GCancellable *cancellable)
{
  /* a cache object of its own: nothing shared with the main thread */
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (task_data);
  GError *error = NULL;
  GListModel *list = atomr_kernel_cache_list (cache, &error);

  if (list)
    g_task_return_pointer (task, list, g_object_unref);
  else
    g_task_return_error (task, error);
}

static void
on_listed (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  InspectorCacheModel *self = INSPECTOR_CACHE_MODEL (source);
  g_autoptr(GListModel) list = NULL;
  g_autoptr(GError) error = NULL;

  list = g_task_propagate_pointer (G_TASK (result), &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;
  g_clear_object (&self->listing);
  self->n_async++;
  apply_list (self, list, error, NULL);
}

/**
 * inspector_cache_model_reload_async:
 * @self: a model
 *
 * Lists the directory in a worker thread and takes the result on the main
 * context (what a directory change does: a cache of thousands of entries
 * is never listed on the main thread).  A later reload supersedes it.
 */
void
inspector_cache_model_reload_async (InspectorCacheModel *self)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (INSPECTOR_IS_CACHE_MODEL (self));

  g_cancellable_cancel (self->listing);
  g_clear_object (&self->listing);
  self->listing = g_cancellable_new ();
  task = g_task_new (self, self->listing, on_listed, NULL);
  g_task_set_source_tag (task, inspector_cache_model_reload_async);
  g_task_set_task_data (task, g_strdup (atomr_kernel_cache_get_directory (self->cache)), g_free);
  g_task_run_in_thread (task, list_thread);
}

/**
 * inspector_cache_model_get_n_async_reloads:
 * @self: a model
 *
 * Returns: how many listings a worker thread did and the model took
 */
guint
inspector_cache_model_get_n_async_reloads (InspectorCacheModel *self)
{
  return self->n_async;
}

static gboolean
reload_later (gpointer data)
{
  InspectorCacheModel *self = data;

  self->reload_source = 0;
  inspector_cache_model_reload_async (self);
  return G_SOURCE_REMOVE;
}

static void
on_directory_changed (GFileMonitor      *monitor,
                      GFile             *file,
                      GFile             *other,
                      GFileMonitorEvent  event,
                      gpointer           user_data)
{
  InspectorCacheModel *self = user_data;

  if (event == G_FILE_MONITOR_EVENT_ATTRIBUTE_CHANGED)
    return;
  if (self->reload_source == 0)
    self->reload_source = g_timeout_add (250, reload_later, self);
}

static void
update_monitor (InspectorCacheModel *self)
{
  g_autoptr(GFile) dir = NULL;

  if (self->monitor)
    g_signal_handlers_disconnect_by_data (self->monitor, self);
  g_clear_object (&self->monitor);
  if (!self->monitored)
    return;
  g_mkdir_with_parents (atomr_kernel_cache_get_directory (self->cache), 0700);
  dir = g_file_new_for_path (atomr_kernel_cache_get_directory (self->cache));
  self->monitor = g_file_monitor_directory (dir, G_FILE_MONITOR_WATCH_MOVES, NULL, NULL);
  if (self->monitor)
    g_signal_connect (self->monitor, "changed", G_CALLBACK (on_directory_changed), self);
}

/**
 * inspector_cache_model_set_monitored:
 * @self: a model
 * @monitored: whether to reload when the directory changes
 *
 * Creates the directory when it does not exist, so that the first store
 * is seen.
 */
void
inspector_cache_model_set_monitored (InspectorCacheModel *self,
                                     gboolean             monitored)
{
  self->monitored = monitored;
  update_monitor (self);
}

void
inspector_cache_model_set_directory (InspectorCacheModel *self,
                                     const gchar         *directory)
{
  g_autofree gchar *def = NULL;

  g_return_if_fail (INSPECTOR_IS_CACHE_MODEL (self));

  if (directory == NULL || *directory == '\0')
    directory = def = atomr_kernel_cache_get_default_directory ();
  if (self->cache && g_strcmp0 (atomr_kernel_cache_get_directory (self->cache), directory) == 0)
    return;
  g_clear_object (&self->cache);
  self->cache = atomr_kernel_cache_new (directory);
  update_monitor (self);
  inspector_cache_model_reload (self, NULL);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DIRECTORY]);
}

const gchar *
inspector_cache_model_get_directory (InspectorCacheModel *self)
{
  return atomr_kernel_cache_get_directory (self->cache);
}

AtomrKernelCache *
inspector_cache_model_get_cache (InspectorCacheModel *self)
{
  return self->cache;
}

void
inspector_cache_model_set_search (InspectorCacheModel *self,
                                  const gchar         *text)
{
  if (g_strcmp0 (self->search, text) == 0)
    return;
  g_free (self->search);
  self->search = g_strdup (text);
  refilter (self);
}

/**
 * inspector_cache_model_set_filters:
 * @self: a model
 * @arch: (nullable): only entries for this architecture ("sm_90"), or %NULL
 * @age: only entries used (or, never used, made) that recently
 * @size: only entries of this size on disk (under 100 kB, to 1 MB, above)
 *
 * The Cache page's filter chips; they combine with the search text.
 */
void
inspector_cache_model_set_filters (InspectorCacheModel *self,
                                   const gchar         *arch,
                                   InspectorCacheAge    age,
                                   InspectorCacheSize   size)
{
  if (arch != NULL && *arch == '\0')
    arch = NULL;
  if (g_strcmp0 (self->filter_arch, arch) == 0 && self->filter_age == age && self->filter_size == size)
    return;
  g_free (self->filter_arch);
  self->filter_arch = g_strdup (arch);
  self->filter_age = age;
  self->filter_size = size;
  refilter (self);
}

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return g_strcmp0 (*(const gchar * const *) a, *(const gchar * const *) b);
}

/**
 * inspector_cache_model_dup_archs:
 * @self: a model
 *
 * Returns: (transfer full): the architectures of every listed entry
 *   (filters and search aside), sorted, each once
 */
GStrv
inspector_cache_model_dup_archs (InspectorCacheModel *self)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) archs = g_ptr_array_new ();

  for (guint i = 0; i < self->all->len; i++)
    {
      const gchar *arch = atomr_kernel_cache_entry_get_arch (g_ptr_array_index (self->all, i));
      if (arch != NULL && g_hash_table_add (seen, (gpointer) arch))
        g_ptr_array_add (archs, (gpointer) arch);
    }
  g_ptr_array_sort (archs, compare_strings);
  for (guint i = 0; i < archs->len; i++)
    g_strv_builder_add (builder, g_ptr_array_index (archs, i));
  return g_strv_builder_end (builder);
}

void
inspector_cache_model_set_sort (InspectorCacheModel *self,
                                InspectorCacheSort   sort,
                                gboolean             descending)
{
  self->sort = sort;
  self->descending = descending;
  refilter (self);
}

guint
inspector_cache_model_get_n_entries (InspectorCacheModel *self)
{
  return self->all->len;
}

guint64
inspector_cache_model_get_total_bytes (InspectorCacheModel *self)
{
  return self->total_bytes;
}

gboolean
inspector_cache_model_remove (InspectorCacheModel    *self,
                              AtomrKernelCacheEntry  *entry,
                              GError                **error)
{
  if (!atomr_kernel_cache_remove (self->cache, atomr_kernel_cache_entry_get_key (entry), error))
    return FALSE;
  return inspector_cache_model_reload (self, error);
}

/**
 * inspector_cache_model_set_hidden:
 * @self: a model
 * @key: an entry's key
 * @hidden: whether the entry leaves the list
 *
 * Takes the entry with @key out of the list (or puts it back) without
 * touching the disk: what a delete shows while its undo is offered.
 */
void
inspector_cache_model_set_hidden (InspectorCacheModel *self,
                                  const gchar         *key,
                                  gboolean             hidden)
{
  g_return_if_fail (INSPECTOR_IS_CACHE_MODEL (self));
  g_return_if_fail (key != NULL);

  if (hidden ? !g_hash_table_add (self->hidden, g_strdup (key)) : !g_hash_table_remove (self->hidden, key))
    return;
  refilter (self);
}

/**
 * inspector_cache_model_is_changing:
 * @self: a model
 *
 * Returns: whether the model is emitting #GListModel::items-changed (a
 *   selection losing its item then is no choice of the user)
 */
gboolean
inspector_cache_model_is_changing (InspectorCacheModel *self)
{
  return self->changing;
}

/**
 * inspector_cache_model_find:
 * @self: a model
 * @key: an entry's key
 *
 * Returns: the position of the visible entry with @key, or
 *   %GTK_INVALID_LIST_POSITION (G_MAXUINT)
 */
guint
inspector_cache_model_find (InspectorCacheModel *self,
                            const gchar         *key)
{
  g_return_val_if_fail (INSPECTOR_IS_CACHE_MODEL (self), G_MAXUINT);

  for (guint i = 0; key && i < self->visible->len; i++)
    if (g_str_equal (atomr_kernel_cache_entry_get_key (g_ptr_array_index (self->visible, i)), key))
      return i;
  return G_MAXUINT;
}

gboolean
inspector_cache_model_gc (InspectorCacheModel  *self,
                          guint64               max_bytes,
                          guint                *n_removed,
                          guint64              *bytes_freed,
                          GError              **error)
{
  if (!atomr_kernel_cache_gc (self->cache, max_bytes, n_removed, bytes_freed, error))
    return FALSE;
  return inspector_cache_model_reload (self, error);
}

static void
inspector_cache_model_dispose (GObject *object)
{
  InspectorCacheModel *self = INSPECTOR_CACHE_MODEL (object);

  g_clear_handle_id (&self->reload_source, g_source_remove);
  g_cancellable_cancel (self->listing);
  g_clear_object (&self->listing);
  if (self->monitor)
    g_signal_handlers_disconnect_by_data (self->monitor, self);
  g_clear_object (&self->monitor);
  G_OBJECT_CLASS (inspector_cache_model_parent_class)->dispose (object);
}

static void
inspector_cache_model_finalize (GObject *object)
{
  InspectorCacheModel *self = INSPECTOR_CACHE_MODEL (object);

  g_clear_object (&self->cache);
  g_ptr_array_unref (self->all);
  g_ptr_array_unref (self->visible);
  g_free (self->search);
  g_free (self->filter_arch);
  g_hash_table_unref (self->hidden);
  G_OBJECT_CLASS (inspector_cache_model_parent_class)->finalize (object);
}

static void
inspector_cache_model_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  InspectorCacheModel *self = INSPECTOR_CACHE_MODEL (object);

  switch (prop_id)
    {
    case PROP_DIRECTORY: g_value_set_string (value, inspector_cache_model_get_directory (self)); break;
    case PROP_N_ENTRIES: g_value_set_uint (value, self->all->len); break;
    case PROP_TOTAL_BYTES: g_value_set_uint64 (value, self->total_bytes); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
inspector_cache_model_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  switch (prop_id)
    {
    case PROP_DIRECTORY:
      inspector_cache_model_set_directory (INSPECTOR_CACHE_MODEL (object), g_value_get_string (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
inspector_cache_model_class_init (InspectorCacheModelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = inspector_cache_model_dispose;
  object_class->finalize = inspector_cache_model_finalize;
  object_class->get_property = inspector_cache_model_get_property;
  object_class->set_property = inspector_cache_model_set_property;

  properties[PROP_DIRECTORY] = g_param_spec_string ("directory", NULL, NULL, NULL,
                                                    G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                                                    G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_ENTRIES] = g_param_spec_uint ("n-entries", NULL, NULL, 0, G_MAXUINT, 0,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TOTAL_BYTES] = g_param_spec_uint64 ("total-bytes", NULL, NULL, 0, G_MAXUINT64, 0,
                                                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* Emitted after each reload, with the listing error or NULL. */
  signals[RELOADED] = g_signal_new ("reloaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                    0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
inspector_cache_model_init (InspectorCacheModel *self)
{
  self->all = g_ptr_array_new_with_free_func (g_object_unref);
  self->visible = g_ptr_array_new_with_free_func (g_object_unref);
  self->hidden = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->descending = TRUE;
}

/**
 * inspector_cache_model_new:
 * @directory: (nullable): a cache directory, or %NULL for the default one
 *
 * Returns: (transfer full): a model, already loaded
 */
InspectorCacheModel *
inspector_cache_model_new (const gchar *directory)
{
  return g_object_new (INSPECTOR_TYPE_CACHE_MODEL, "directory", directory, NULL);
}
