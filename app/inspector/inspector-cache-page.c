/* inspector-cache-page.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>

#include "inspector-cache-page.h"
#include "inspector-diagnostics.h"
#include "inspector-occupancy-panel.h"
#include "inspector-sass-view.h"
#include "inspector-source-util.h"

struct _InspectorCachePage
{
  GtkWidget            parent_instance;

  AdwLeaflet          *leaflet;
  GtkSearchEntry      *search_entry;
  GtkDropDown         *sort_dropdown;
  GtkDropDown         *arch_dropdown;
  GtkDropDown         *age_dropdown;
  GtkDropDown         *size_dropdown;
  GtkStringList       *archs;          /* the arch chip's choices; 0: all */
  gboolean             updating_archs;
  GtkMenuButton       *gc_button;
  GtkSpinButton       *gc_spin;
  GtkStack            *list_stack;
  AdwStatusPage       *empty_status;
  GtkListView         *list_view;
  GtkLabel            *totals_label;
  GtkButton           *back_button;
  GtkStack            *details_stack;
  AdwPreferencesGroup *metadata_group;
  GtkSourceView       *source_view;
  GtkSourceView       *ptx_view;
  GtkTextView         *log_view;
  InspectorOccupancyPanel *occupancy_panel;
  InspectorSassView   *sass_view;

  InspectorCacheModel *model;
  GtkSingleSelection  *selection;
  GPtrArray           *rows;
  GSettings           *settings;
  gchar               *selected_key;  /* the selection, kept by key across reloads */
  GCancellable        *reading;       /* the selected entry's files, being read */
  GCancellable        *analysing;     /* Analyse of the selected entry, running */
  GPtrArray           *pending;       /* PendingDelete*, oldest first */
};

/* A delete waits for its toast: the entry leaves the list at once and the
 * disk when the toast goes away without "Undo". */
typedef struct {
  InspectorCachePage *page;
  gchar              *key;
  AdwToast           *toast;
} PendingDelete;

G_DEFINE_FINAL_TYPE (InspectorCachePage, inspector_cache_page, GTK_TYPE_WIDGET)

enum {
  OPEN_ENTRY,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static gchar *
format_datetime (GDateTime *dt)
{
  g_autoptr(GDateTime) local = NULL;

  if (dt == NULL)
    return g_strdup (_("Never"));
  local = g_date_time_to_local (dt);
  return g_date_time_format (local, "%x %X");
}

static void
add_row (InspectorCachePage *self,
         const gchar        *title,
         const gchar        *value)
{
  GtkWidget *row = adw_action_row_new ();

  g_autofree gchar *escaped = g_markup_escape_text (value && *value ? value : "—", -1);

  /* libadwaita 1.2 parses subtitles as markup, whatever use-markup says */
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped);
  adw_preferences_group_add (self->metadata_group, row);
  g_ptr_array_add (self->rows, row);
}

static gchar *
join_or_none (const gchar * const *strv)
{
  if (strv == NULL || strv[0] == NULL)
    return g_strdup (_("None"));
  return g_strjoinv ("\n", (gchar **) strv);
}

static void
set_text (GtkTextView *view,
          const gchar *text)
{
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (view), text ? text : "", -1);
}

/* What the Source, PTX and Log tabs show, read off the main thread. */
typedef struct {
  gchar     *source, *ptx, *log;
  GBytes    *cubin;              /* NULL: none */
  GPtrArray *resources;          /* InspectorKernelResources*, NULL: see resources_error */
  gchar     *resources_error;
  gboolean   recorded;           /* ptxas' report is in the manifest: spills known */
} EntryTexts;

static void
entry_texts_free (EntryTexts *t)
{
  g_free (t->source);
  g_free (t->ptx);
  g_free (t->log);
  g_clear_pointer (&t->cubin, g_bytes_unref);
  g_clear_pointer (&t->resources, g_ptr_array_unref);
  g_free (t->resources_error);
  g_free (t);
}

static void
read_entry_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  AtomrKernelCacheEntry *entry = task_data;
  EntryTexts *t = g_new0 (EntryTexts, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) ptx = NULL;

  if (atomr_kernel_cache_entry_has_source (entry))
    t->source = atomr_kernel_cache_entry_load_source (entry, &error);
  if (t->source == NULL)
    t->source = g_strdup (error ? error->message : _("The cache was told not to keep the source of this entry."));
  g_clear_error (&error);
  ptx = atomr_kernel_cache_entry_load_ptx (entry, &error);
  t->ptx = ptx ? g_strndup (g_bytes_get_data (ptx, NULL), g_bytes_get_size (ptx))
               : g_strdup (error ? error->message : _("No PTX: the entry holds CUBIN or LTO-IR only."));
  g_clear_error (&error);
  t->log = atomr_kernel_cache_entry_load_log (entry, &error);
  if (t->log == NULL || *t->log == '\0')
    {
      g_free (t->log);
      t->log = g_strdup (error ? error->message : _("NVRTC printed nothing."));
    }
  g_clear_error (&error);
  /* the CUBIN: resources (Resources tab) and SASS (SASS tab) */
  t->cubin = atomr_kernel_cache_entry_load_cubin (entry, &error);
  if (t->cubin)
    t->resources = inspector_cubin_resources (t->cubin, atomr_kernel_cache_entry_get_arch (entry), &error);
  if (t->cubin && t->resources == NULL)
    g_debug ("entry %s: %s", atomr_kernel_cache_entry_get_key (entry), error->message);
  g_clear_error (&error);
  /* spills: what ptxas reported at compile time, in the manifest (read
   * here, in the worker: it is read from disk on first use) */
  {
    g_autofree gchar *json = inspector_manifest_resources (atomr_kernel_cache_entry_get_manifest (entry));
    g_autoptr(GPtrArray) ptxas = json ? inspector_resources_from_json (json, &error) : NULL;

    if (ptxas && t->resources)
      inspector_resources_merge (t->resources, ptxas);
    else if (ptxas && t->cubin == NULL)
      t->resources = g_ptr_array_ref (ptxas);
    t->recorded = ptxas != NULL;
    if (json && ptxas == NULL)
      g_debug ("entry %s: its recorded resources do not read: %s",
               atomr_kernel_cache_entry_get_key (entry), error->message);
    g_clear_error (&error);
  }
  if (t->resources == NULL)
    t->resources_error = g_strdup (_("No CUBIN: the entry was compiled for a virtual architecture "
                                     "(compute_XX), so the driver compiles its PTX at load time. "
                                     "Analyse asks ptxas for the architecture chosen below."));
  g_task_return_pointer (task, t, (GDestroyNotify) entry_texts_free);
}

static void
on_entry_read (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (source);
  EntryTexts *t;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;
  t = g_task_propagate_pointer (G_TASK (result), NULL);
  if (t == NULL)
    return;
  set_text (GTK_TEXT_VIEW (self->source_view), t->source);
  set_text (GTK_TEXT_VIEW (self->ptx_view), t->ptx);
  set_text (self->log_view, t->log);
  inspector_occupancy_panel_set_resources (self->occupancy_panel, t->resources,
                                           atomr_kernel_cache_entry_get_arch (g_task_get_task_data (G_TASK (result))),
                                           t->resources_error);
  inspector_occupancy_panel_set_description (self->occupancy_panel,
                                             t->recorded
                                             ? _("Registers, shared memory and stack from the entry’s CUBIN; "
                                                 "spills as ptxas reported them when the entry was compiled")
                                             : _("Spills unknown: ptxas’ report was not recorded for this entry "
                                                 "(compiled for a virtual architecture, or before the library "
                                                 "recorded it). Analyse asks ptxas."));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.analyse", !t->recorded);
  inspector_sass_view_set_cubin (self->sass_view, t->cubin);
  entry_texts_free (t);
}

static void
show_entry (InspectorCachePage *self)
{
  AtomrKernelCacheEntry *entry = gtk_single_selection_get_selected_item (self->selection);
  g_autofree gchar *markup = NULL, *path = NULL;
  g_autofree gchar *title = NULL, *names = NULL, *lowered = NULL, *flags = NULL, *sizes = NULL;
  g_autofree gchar *ctime = NULL, *created = NULL, *used = NULL, *hits = NULL;
  g_autofree gchar *ptx_size = NULL, *cubin_size = NULL, *lto_size = NULL, *file_size = NULL;

  for (guint i = 0; i < self->rows->len; i++)
    adw_preferences_group_remove (self->metadata_group, g_ptr_array_index (self->rows, i));
  g_ptr_array_set_size (self->rows, 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.delete", entry != NULL);
  /* enabled when the entry's files are read and its spills unknown */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.analyse", FALSE);
  g_cancellable_cancel (self->analysing);
  g_clear_object (&self->analysing);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.export", entry != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.open-in-editor",
                                 entry != NULL && atomr_kernel_cache_entry_has_source (entry));
  if (entry == NULL)
    {
      adw_preferences_group_set_title (self->metadata_group, _("No Entry Selected"));
      adw_preferences_group_set_description (self->metadata_group, NULL);
      g_cancellable_cancel (self->reading);
      set_text (GTK_TEXT_VIEW (self->source_view), NULL);
      set_text (GTK_TEXT_VIEW (self->ptx_view), NULL);
      set_text (self->log_view, NULL);
      inspector_occupancy_panel_set_resources (self->occupancy_panel, NULL, NULL, _("Select a cache entry."));
      inspector_sass_view_set_cubin (self->sass_view, NULL);
      return;
    }

  title = inspector_cache_entry_get_title (entry);
  markup = g_markup_escape_text (title, -1);
  path = g_markup_escape_text (atomr_kernel_cache_entry_get_path (entry), -1);
  adw_preferences_group_set_title (self->metadata_group, markup);
  adw_preferences_group_set_description (self->metadata_group, path);
  names = join_or_none (atomr_kernel_cache_entry_get_kernel_names (entry));
  lowered = join_or_none (atomr_kernel_cache_entry_get_lowered_names (entry));
  flags = g_strjoinv (" ", (gchar **) atomr_kernel_cache_entry_get_flags (entry));
  ptx_size = g_format_size (atomr_kernel_cache_entry_get_ptx_size (entry));
  cubin_size = g_format_size (atomr_kernel_cache_entry_get_cubin_size (entry));
  lto_size = g_format_size (atomr_kernel_cache_entry_get_ltoir_size (entry));
  file_size = g_format_size (atomr_kernel_cache_entry_get_file_size (entry));
  /* Translators: sizes of the parts of a cache entry */
  sizes = g_strdup_printf (_("PTX %s, CUBIN %s, LTO-IR %s; %s on disk"), ptx_size, cubin_size, lto_size, file_size);
  ctime = g_strdup_printf (_("%.1f ms"), atomr_kernel_cache_entry_get_compile_time_ms (entry));
  created = format_datetime (atomr_kernel_cache_entry_get_created (entry));
  used = format_datetime (atomr_kernel_cache_entry_get_last_used (entry));
  hits = g_strdup_printf ("%" G_GUINT64_FORMAT, atomr_kernel_cache_entry_get_hit_count (entry));

  add_row (self, _("Kernels"), names);
  add_row (self, _("Lowered Names"), lowered);
  add_row (self, _("Architecture"), atomr_kernel_cache_entry_get_arch (entry));
  add_row (self, _("Flags"), flags);
  add_row (self, _("NVRTC Version"), atomr_kernel_cache_entry_get_nvrtc_version (entry));
  add_row (self, _("Sizes"), sizes);
  add_row (self, _("Compile Time"), ctime);
  add_row (self, _("Created"), created);
  add_row (self, _("Last Used"), used);
  add_row (self, _("Hits"), hits);
  add_row (self, _("Key"), atomr_kernel_cache_entry_get_key (entry));

  /* the files are read by a worker; a later selection cancels it */
  g_cancellable_cancel (self->reading);
  g_clear_object (&self->reading);
  self->reading = g_cancellable_new ();
  {
    g_autoptr(GTask) task = g_task_new (self, self->reading, on_entry_read, NULL);

    g_task_set_task_data (task, g_object_ref (entry), g_object_unref);
    g_task_run_in_thread (task, read_entry_thread);
  }
}

/* Analyse: ptxas' report for an entry that has none recorded, through
 * nvJitLink in a worker (it takes up to seconds); nothing is stored. */
typedef struct {
  AtomrKernelCacheEntry *entry;
  gchar                 *arch;
} AnalyseJob;

static void
analyse_job_free (AnalyseJob *job)
{
  g_object_unref (job->entry);
  g_free (job->arch);
  g_free (job);
}

static void
analyse_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  AnalyseJob *job = task_data;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = atomr_kernel_cache_entry_analyse_resources (job->entry, job->arch, cancellable, &error);
  g_autoptr(GPtrArray) res = json ? inspector_resources_from_json (json, &error) : NULL;

  if (res == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* for the entry's own architecture, the CUBIN's numbers with ptxas' spills */
  if (g_strcmp0 (job->arch, atomr_kernel_cache_entry_get_arch (job->entry)) == 0)
    {
      g_autoptr(GBytes) cubin = atomr_kernel_cache_entry_load_cubin (job->entry, NULL);
      g_autoptr(GPtrArray) from_cubin = cubin ? inspector_cubin_resources (cubin, job->arch, NULL) : NULL;

      if (from_cubin && from_cubin->len > 0)
        {
          inspector_resources_merge (from_cubin, res);
          g_clear_pointer (&res, g_ptr_array_unref);
          res = g_steal_pointer (&from_cubin);
        }
    }
  g_task_return_pointer (task, g_steal_pointer (&res), (GDestroyNotify) g_ptr_array_unref);
}

static void
on_analysed (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (source);
  AnalyseJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) res = NULL;
  g_autofree gchar *text = NULL;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;
  res = g_task_propagate_pointer (G_TASK (result), &error);
  g_clear_object (&self->analysing);
  if (res == NULL)
    {
      /* Translators: %s says why (an nvJitLink error, a virtual architecture, ...) */
      text = g_strdup_printf (_("Spills unknown: %s"), error->message);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.analyse", TRUE);
    }
  else
    {
      inspector_occupancy_panel_set_resources (self->occupancy_panel, res, job->arch, NULL);
      /* Translators: %s is an architecture such as sm_90 */
      text = g_strdup_printf (_("Analysed by ptxas through nvJitLink for %s (not stored in the cache)"), job->arch);
    }
  inspector_occupancy_panel_set_description (self->occupancy_panel, text);
}

static void
analyse_action (GtkWidget   *widget,
                const gchar *action_name,
                GVariant    *parameter)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (widget);
  AtomrKernelCacheEntry *entry = gtk_single_selection_get_selected_item (self->selection);
  const gchar *entry_arch;
  AnalyseJob *job;
  g_autoptr(GTask) task = NULL;

  if (entry == NULL || self->analysing)
    return;
  job = g_new0 (AnalyseJob, 1);
  job->entry = g_object_ref (entry);
  entry_arch = atomr_kernel_cache_entry_get_arch (entry);
  /* the entry's own architecture when it is a real one, else the one
   * chosen in the occupancy calculator */
  job->arch = entry_arch && g_str_has_prefix (entry_arch, "sm_")
              ? g_strdup (entry_arch) : inspector_occupancy_panel_dup_target_arch (self->occupancy_panel);
  gtk_widget_action_set_enabled (widget, "cache.analyse", FALSE);
  inspector_occupancy_panel_set_description (self->occupancy_panel, _("Analysing…"));
  self->analysing = g_cancellable_new ();
  task = g_task_new (self, self->analysing, on_analysed, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) analyse_job_free);
  g_task_run_in_thread (task, analyse_thread);
}

static void
update_totals (InspectorCachePage *self)
{
  guint n = inspector_cache_model_get_n_entries (self->model);
  g_autofree gchar *size = g_format_size (inspector_cache_model_get_total_bytes (self->model));
  g_autofree gchar *entries = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u entry", "%u entries", n), n);
  /* Translators: "12 entries, 1.2 MB in /home/me/.cache/atomr/kernels" */
  g_autofree gchar *text = g_strdup_printf (_("%s, %s in %s"), entries, size,
                                            inspector_cache_model_get_directory (self->model));

  gtk_label_set_text (self->totals_label, text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->totals_label), text);
  if (g_list_model_get_n_items (G_LIST_MODEL (self->model)) > 0)
    gtk_stack_set_visible_child_name (self->list_stack, "list");
  else
    {
      const gchar *search = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));

      if (n > 0 && (search == NULL || *search == '\0'))
        {
          /* the filter chips left nothing */
          adw_status_page_set_icon_name (self->empty_status, "edit-find-symbolic");
          adw_status_page_set_title (self->empty_status, _("No Matching Kernels"));
          adw_status_page_set_description (self->empty_status,
                                           _("No entry has the architecture, age and size chosen above."));
        }
      else if (n > 0)
        {
          /* Translators: %s is what the user searched for */
          g_autofree gchar *desc = g_strdup_printf (_("No kernel name, source path, architecture or key "
                                                      "contains “%s”."), search);
          adw_status_page_set_icon_name (self->empty_status, "edit-find-symbolic");
          adw_status_page_set_title (self->empty_status, _("No Matching Kernels"));
          adw_status_page_set_description (self->empty_status, desc);
        }
      else
        {
          adw_status_page_set_icon_name (self->empty_status, "drive-harddisk-symbolic");
          adw_status_page_set_title (self->empty_status, _("No Cached Kernels"));
          adw_status_page_set_description (self->empty_status,
                                           _("Kernels compiled through AtomrNvrtcActor appear here. "
                                             "Compile one in the Editor, or run the demo."));
        }
      gtk_stack_set_visible_child_name (self->list_stack, "empty");
    }
  show_entry (self);
}

static void
on_selection_changed (InspectorCachePage *self)
{
  AtomrKernelCacheEntry *entry = gtk_single_selection_get_selected_item (self->selection);

  if (inspector_cache_model_is_changing (self->model))
    return;   /* on_items_changed() selects it again */
  g_free (self->selected_key);
  self->selected_key = entry ? g_strdup (atomr_kernel_cache_entry_get_key (entry)) : NULL;
  show_entry (self);
}

/* The list changed under the selection (a reload, a search, a sort, a
 * delete): select the same entry again, wherever it moved, or nothing if
 * it is gone.  Runs after GtkSingleSelection's own handler. */
static void
on_items_changed (InspectorCachePage *self)
{
  g_signal_handlers_block_by_func (self->selection, on_selection_changed, self);
  gtk_single_selection_set_selected (self->selection, inspector_cache_model_find (self->model, self->selected_key));
  g_signal_handlers_unblock_by_func (self->selection, on_selection_changed, self);
  show_entry (self);
}

/**
 * inspector_cache_page_get_selected_key:
 * @self: the page
 *
 * Returns: (nullable): the key of the selected entry
 */
const gchar *
inspector_cache_page_get_selected_key (InspectorCachePage *self)
{
  return self->selected_key;
}

/**
 * inspector_cache_page_get_occupancy_panel:
 * @self: the page
 *
 * Returns: (transfer none): the Resources tab
 */
InspectorOccupancyPanel *
inspector_cache_page_get_occupancy_panel (InspectorCachePage *self)
{
  return self->occupancy_panel;
}

/**
 * inspector_cache_page_get_sass_view:
 * @self: the page
 *
 * Returns: (transfer none): the SASS tab
 */
InspectorSassView *
inspector_cache_page_get_sass_view (InspectorCachePage *self)
{
  return self->sass_view;
}

static void
setup_row (GtkSignalListItemFactory *factory,
           GtkListItem              *item,
           gpointer                  user_data)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 3);
  GtkWidget *title = gtk_label_new (NULL);
  GtkWidget *subtitle = gtk_label_new (NULL);

  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (title, "heading");
  gtk_label_set_xalign (GTK_LABEL (subtitle), 0);
  gtk_label_set_ellipsize (GTK_LABEL (subtitle), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (subtitle, "dim-label");
  gtk_widget_add_css_class (subtitle, "caption");
  gtk_box_append (GTK_BOX (box), title);
  gtk_box_append (GTK_BOX (box), subtitle);
  gtk_list_item_set_child (item, box);
}

static void
bind_row (GtkSignalListItemFactory *factory,
          GtkListItem              *item,
          gpointer                  user_data)
{
  AtomrKernelCacheEntry *entry = gtk_list_item_get_item (item);
  GtkWidget *box = gtk_list_item_get_child (item);
  GtkWidget *title = gtk_widget_get_first_child (box);
  GtkWidget *subtitle = gtk_widget_get_next_sibling (title);
  g_autofree gchar *t = inspector_cache_entry_get_title (entry);
  g_autofree gchar *size = g_format_size (atomr_kernel_cache_entry_get_file_size (entry));
  g_autofree gchar *used = format_datetime (atomr_kernel_cache_entry_get_last_used (entry));
  guint64 hits = atomr_kernel_cache_entry_get_hit_count (entry);
  g_autofree gchar *hits_n = g_strdup_printf ("%" G_GUINT64_FORMAT, hits);
  /* Translators: %s is a number of cache hits */
  g_autofree gchar *hits_s = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s hit", "%s hits",
                                                           (gulong) MIN (hits, G_MAXULONG)), hits_n);
  g_autofree gchar *sub = g_strdup_printf ("%s · %s · %.0f ms · %s · %s",
                                           atomr_kernel_cache_entry_get_arch (entry), size,
                                           atomr_kernel_cache_entry_get_compile_time_ms (entry), hits_s, used);

  gtk_label_set_text (GTK_LABEL (title), t);
  gtk_label_set_text (GTK_LABEL (subtitle), sub);
}

static void
on_search_changed (InspectorCachePage *self)
{
  inspector_cache_model_set_search (self->model, gtk_editable_get_text (GTK_EDITABLE (self->search_entry)));
  update_totals (self);
}

/* The filter chips (architecture, last used, size) and the search text
 * narrow the list together. */
static void
on_filters_changed (InspectorCachePage *self)
{
  guint a = gtk_drop_down_get_selected (self->arch_dropdown);
  const gchar *arch = NULL;

  if (self->updating_archs)
    return;
  if (a != GTK_INVALID_LIST_POSITION && a > 0)
    arch = gtk_string_list_get_string (self->archs, a);
  inspector_cache_model_set_filters (self->model, arch,
                                     (InspectorCacheAge) gtk_drop_down_get_selected (self->age_dropdown),
                                     (InspectorCacheSize) gtk_drop_down_get_selected (self->size_dropdown));
  update_totals (self);
}

static gboolean
refilter_later (gpointer data)
{
  on_filters_changed (data);
  return G_SOURCE_REMOVE;
}

/* The architectures present (the chosen one stays chosen while present). */
static void
update_archs (InspectorCachePage *self)
{
  g_auto(GStrv) archs = inspector_cache_model_dup_archs (self->model);
  guint a = gtk_drop_down_get_selected (self->arch_dropdown);
  g_autofree gchar *chosen = a != GTK_INVALID_LIST_POSITION && a > 0
                             ? g_strdup (gtk_string_list_get_string (self->archs, a)) : NULL;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->archs));
  guint select = 0;
  gboolean same = n == g_strv_length (archs) + 1;

  for (guint i = 0; same && archs[i]; i++)
    same = g_strcmp0 (gtk_string_list_get_string (self->archs, i + 1), archs[i]) == 0;
  if (same)
    return;
  self->updating_archs = TRUE;
  gtk_string_list_splice (self->archs, 1, n - 1, (const gchar * const *) archs);
  for (guint i = 0; chosen && archs[i]; i++)
    if (g_str_equal (archs[i], chosen))
      select = i + 1;
  gtk_drop_down_set_selected (self->arch_dropdown, select);
  self->updating_archs = FALSE;
  /* The chosen arch went away: show all, once this change is over. */
  if (chosen != NULL && select == 0)
    g_idle_add_full (G_PRIORITY_DEFAULT, refilter_later, g_object_ref (self), g_object_unref);
}

/**
 * inspector_cache_page_set_filters:
 * @self: the page
 * @arch: (nullable): an architecture listed in the arch chip, or %NULL for all
 * @age: the age chip
 * @size: the size chip
 *
 * Sets the filter chips as a user would (the tests use it).
 */
void
inspector_cache_page_set_filters (InspectorCachePage *self,
                                  const gchar        *arch,
                                  InspectorCacheAge   age,
                                  InspectorCacheSize  size)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->archs));
  guint select = 0;

  for (guint i = 1; arch && i < n; i++)
    if (g_str_equal (gtk_string_list_get_string (self->archs, i), arch))
      select = i;
  gtk_drop_down_set_selected (self->arch_dropdown, select);
  gtk_drop_down_set_selected (self->age_dropdown, age);
  gtk_drop_down_set_selected (self->size_dropdown, size);
}

static void
on_sort_changed (InspectorCachePage *self)
{
  InspectorCacheSort sort = gtk_drop_down_get_selected (self->sort_dropdown);

  /* names read best A to Z; every other key biggest or newest first */
  inspector_cache_model_set_sort (self->model, sort, sort != INSPECTOR_CACHE_SORT_NAME);
}

static void
on_activate (GtkListView        *view,
             guint               position,
             InspectorCachePage *self)
{
  adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_FORWARD);
}

static void
on_back (InspectorCachePage *self)
{
  adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_BACK);
}

static void
report (InspectorCachePage *self,
        const gchar        *message)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s", message);
}

static void
pending_delete_free (PendingDelete *p)
{
  if (p->toast)
    g_signal_handlers_disconnect_by_data (p->toast, p);
  g_clear_object (&p->toast);
  g_free (p->key);
  g_free (p);
}

/* The toast went away without "Undo": the entry leaves the disk. */
static void
on_delete_toast_dismissed (AdwToast      *toast,
                           PendingDelete *p)
{
  InspectorCachePage *self = p->page;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *key = g_strdup (p->key);

  g_ptr_array_remove (self->pending, p);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.undo-delete", self->pending->len > 0);
  if (!atomr_kernel_cache_remove (inspector_cache_model_get_cache (self->model), key, &error))
    report (self, error->message);
  inspector_cache_model_reload (self->model, NULL);
  inspector_cache_model_set_hidden (self->model, key, FALSE);
}

static void
undo_delete_action (GtkWidget   *widget,
                    const gchar *action_name,
                    GVariant    *parameter)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (widget);
  PendingDelete *p;
  g_autofree gchar *key = NULL;
  g_autoptr(AdwToast) toast = NULL;

  if (self->pending->len == 0)
    return;
  p = g_ptr_array_index (self->pending, self->pending->len - 1);
  key = g_strdup (p->key);
  toast = g_object_ref (p->toast);
  g_ptr_array_remove_index (self->pending, self->pending->len - 1);
  adw_toast_dismiss (toast);
  g_free (self->selected_key);
  self->selected_key = g_steal_pointer (&key);
  inspector_cache_model_set_hidden (self->model, self->selected_key, FALSE);
  gtk_widget_action_set_enabled (widget, "cache.undo-delete", self->pending->len > 0);
}

static void
on_undo_clicked (AdwToast      *toast,
                 PendingDelete *p)
{
  gtk_widget_activate_action (GTK_WIDGET (p->page), "cache.undo-delete", NULL);
}

static void
delete_action (GtkWidget   *widget,
               const gchar *action_name,
               GVariant    *parameter)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (widget);
  AtomrKernelCacheEntry *entry = gtk_single_selection_get_selected_item (self->selection);
  GtkWidget *overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);
  g_autofree gchar *title = NULL, *message = NULL;
  PendingDelete *p;

  if (entry == NULL)
    return;
  title = inspector_cache_entry_get_title (entry);
  p = g_new0 (PendingDelete, 1);
  p->page = self;
  p->key = g_strdup (atomr_kernel_cache_entry_get_key (entry));
  /* Translators: a toast after deleting a cache entry; %s is its kernel names */
  message = g_strdup_printf (_("Deleted “%s”"), title);
  p->toast = g_object_ref_sink (adw_toast_new (message));
  adw_toast_set_button_label (p->toast, _("_Undo"));
  adw_toast_set_timeout (p->toast, 8);
  adw_toast_set_priority (p->toast, ADW_TOAST_PRIORITY_HIGH);
  g_signal_connect (p->toast, "button-clicked", G_CALLBACK (on_undo_clicked), p);
  g_signal_connect (p->toast, "dismissed", G_CALLBACK (on_delete_toast_dismissed), p);
  g_ptr_array_add (self->pending, p);
  gtk_widget_action_set_enabled (widget, "cache.undo-delete", TRUE);

  /* nothing is selected afterwards, so a second Delete deletes nothing */
  g_clear_pointer (&self->selected_key, g_free);
  inspector_cache_model_set_hidden (self->model, p->key, TRUE);
  if (overlay)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), g_object_ref (p->toast));
  else
    adw_toast_dismiss (p->toast);   /* no window to offer an undo in */
}

/* Deletes what waits for its toast now (the window is closing). */
static void
commit_pending (InspectorCachePage *self)
{
  while (self->pending && self->pending->len > 0)
    {
      PendingDelete *p = g_ptr_array_index (self->pending, 0);

      g_signal_handlers_disconnect_by_data (p->toast, p);
      atomr_kernel_cache_remove (inspector_cache_model_get_cache (self->model), p->key, NULL);
      g_ptr_array_remove_index (self->pending, 0);
    }
}

static void
export_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  AtomrKernelCacheEntry *entry = task_data;
  const gchar *what = g_object_get_data (G_OBJECT (task), "what");
  GFile *file = g_object_get_data (G_OBJECT (task), "file");
  g_autoptr(GBytes) bytes = NULL;
  GError *error = NULL;

  bytes = g_str_equal (what, "cubin") ? atomr_kernel_cache_entry_load_cubin (entry, &error)
                                      : atomr_kernel_cache_entry_load_ptx (entry, &error);
  if (bytes == NULL && error == NULL)
    error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                         /* Translators: %s is PTX or CUBIN, then a cache key */
                         _("The cache entry %s holds no %s"), atomr_kernel_cache_entry_get_key (entry),
                         g_str_equal (what, "cubin") ? "CUBIN" : "PTX");
  if (bytes == NULL ||
      !g_file_replace_contents (file, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), NULL, FALSE,
                                G_FILE_CREATE_NONE, NULL, cancellable, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/**
 * inspector_cache_page_export_async:
 * @self: the page
 * @what: "ptx" or "cubin"
 * @file: where to write it
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when written
 * @user_data: data for @callback
 *
 * Writes the PTX or the CUBIN of the selected entry to @file, reading and
 * writing in a worker thread.
 */
void
inspector_cache_page_export_async (InspectorCachePage  *self,
                                   const gchar         *what,
                                   GFile               *file,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  AtomrKernelCacheEntry *entry = gtk_single_selection_get_selected_item (self->selection);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, inspector_cache_page_export_async);
  if (entry == NULL)
    {
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, _("No cache entry is selected"));
      return;
    }
  g_task_set_task_data (task, g_object_ref (entry), g_object_unref);
  g_object_set_data_full (G_OBJECT (task), "what", g_strdup (what), g_free);
  g_object_set_data_full (G_OBJECT (task), "file", g_object_ref (file), g_object_unref);
  g_task_run_in_thread (task, export_thread);
}

gboolean
inspector_cache_page_export_finish (InspectorCachePage  *self,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
on_exported (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (source);
  g_autoptr(GError) error = NULL;

  if (!inspector_cache_page_export_finish (self, result, &error))
    report (self, error->message);
  else
    gtk_widget_activate_action (GTK_WIDGET (self), "win.show-toast", "s", _("Exported"));
}

static void
on_export_response (GtkNativeDialog    *dialog,
                    int                 response,
                    InspectorCachePage *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      inspector_cache_page_export_async (self, g_object_get_data (G_OBJECT (dialog), "what"), file, NULL,
                                         on_exported, NULL);
    }
  g_object_unref (dialog);
}

static void
export_action (GtkWidget   *widget,
               const gchar *action_name,
               GVariant    *parameter)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (widget);
  AtomrKernelCacheEntry *entry = gtk_single_selection_get_selected_item (self->selection);
  const gchar *what = g_variant_get_string (parameter, NULL);
  gboolean cubin = g_str_equal (what, "cubin");
  g_autofree gchar *name = NULL, *title = NULL;
  GtkFileChooserNative *dialog;

  if (entry == NULL)
    return;
  title = inspector_cache_entry_get_title (entry);
  name = g_strdup_printf ("%s.%s", title, cubin ? "cubin" : "ptx");
  g_strcanon (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", '_');
  dialog = gtk_file_chooser_native_new (cubin ? _("Export CUBIN") : _("Export PTX"),
                                        GTK_WINDOW (gtk_widget_get_root (widget)),
                                        GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
  g_object_set_data_full (G_OBJECT (dialog), "what", g_strdup (cubin ? "cubin" : "ptx"), g_free);
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
gc_action (GtkWidget   *widget,
           const gchar *action_name,
           GVariant    *parameter)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (widget);
  guint64 cap = (guint64) gtk_spin_button_get_value (self->gc_spin) * 1024 * 1024;
  g_autoptr(GError) error = NULL;
  guint n = 0;
  guint64 freed = 0;

  gtk_menu_button_popdown (self->gc_button);
  if (!inspector_cache_model_gc (self->model, cap, &n, &freed, &error))
    report (self, error->message);
  else
    {
      g_autofree gchar *size = g_format_size (freed);
      g_autofree gchar *msg = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Removed %u entry (%s)",
                                                            "Removed %u entries (%s)", n), n, size);
      gtk_widget_activate_action (GTK_WIDGET (self), "win.show-toast", "s", msg);
    }
}

static void
search_action (GtkWidget   *widget,
               const gchar *action_name,
               GVariant    *parameter)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (widget);

  adw_leaflet_navigate (self->leaflet, ADW_NAVIGATION_DIRECTION_BACK);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
open_in_editor_action (GtkWidget   *widget,
                       const gchar *action_name,
                       GVariant    *parameter)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (widget);
  AtomrKernelCacheEntry *entry = gtk_single_selection_get_selected_item (self->selection);

  if (entry)
    g_signal_emit (self, signals[OPEN_ENTRY], 0, entry);
}

InspectorCacheModel *
inspector_cache_page_get_model (InspectorCachePage *self)
{
  return self->model;
}

void
inspector_cache_page_set_directory (InspectorCachePage *self,
                                    const gchar        *directory)
{
  inspector_cache_model_set_directory (self->model, directory);
}

void
inspector_cache_page_select (InspectorCachePage *self,
                             guint               position)
{
  gtk_single_selection_set_selected (self->selection, position);
}

/**
 * inspector_cache_page_select_key:
 * @self: the page
 * @key: a cache key
 *
 * Selects the entry with @key (nothing if no visible entry has it).
 */
void
inspector_cache_page_select_key (InspectorCachePage *self,
                                 const gchar        *key)
{
  gtk_single_selection_set_selected (self->selection, inspector_cache_model_find (self->model, key));
}

static void
inspector_cache_page_dispose (GObject *object)
{
  InspectorCachePage *self = INSPECTOR_CACHE_PAGE (object);

  if (self->model)
    {
      commit_pending (self);
      g_signal_handlers_disconnect_by_data (self->model, self);
    }
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_pointer (&self->selected_key, g_free);
  g_cancellable_cancel (self->reading);
  g_clear_object (&self->reading);
  g_cancellable_cancel (self->analysing);
  g_clear_object (&self->analysing);
  gtk_widget_dispose_template (GTK_WIDGET (self), INSPECTOR_TYPE_CACHE_PAGE);
  g_clear_object (&self->selection);
  g_clear_object (&self->model);
  g_clear_object (&self->archs);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->rows, g_ptr_array_unref);
  G_OBJECT_CLASS (inspector_cache_page_parent_class)->dispose (object);
}

static void
inspector_cache_page_class_init (InspectorCachePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_cache_page_dispose;

  /* Emitted by "Open in Editor" with the selected entry. */
  signals[OPEN_ENTRY] = g_signal_new ("open-entry", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                      0, NULL, NULL, NULL, G_TYPE_NONE, 1, ATOMR_TYPE_KERNEL_CACHE_ENTRY);

  g_type_ensure (GTK_SOURCE_TYPE_VIEW);
  g_type_ensure (INSPECTOR_TYPE_OCCUPANCY_PANEL);
  g_type_ensure (INSPECTOR_TYPE_SASS_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/atomr/Inspector/inspector-cache-page.ui");
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, leaflet);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, search_entry);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, sort_dropdown);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, arch_dropdown);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, age_dropdown);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, size_dropdown);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, gc_button);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, gc_spin);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, list_stack);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, empty_status);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, list_view);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, totals_label);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, back_button);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, details_stack);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, metadata_group);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, source_view);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, ptx_view);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, log_view);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, occupancy_panel);
  gtk_widget_class_bind_template_child (widget_class, InspectorCachePage, sass_view);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  gtk_widget_class_install_action (widget_class, "cache.delete", NULL, delete_action);
  gtk_widget_class_install_action (widget_class, "cache.analyse", NULL, analyse_action);
  gtk_widget_class_install_action (widget_class, "cache.undo-delete", NULL, undo_delete_action);
  gtk_widget_class_install_action (widget_class, "cache.export", "s", export_action);
  gtk_widget_class_install_action (widget_class, "cache.gc", NULL, gc_action);
  gtk_widget_class_install_action (widget_class, "cache.open-in-editor", NULL, open_in_editor_action);
  gtk_widget_class_install_action (widget_class, "cache.search", NULL, search_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, 0, "cache.delete", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, GDK_CONTROL_MASK, "cache.search", NULL);
}

static void
inspector_cache_page_init (InspectorCachePage *self)
{
  GtkListItemFactory *factory;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->rows = g_ptr_array_new ();
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_delete_free);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "cache.undo-delete", FALSE);
  self->settings = g_settings_new (ATOMR_APP_ID);
  g_settings_bind (self->settings, "gc-size-cap", gtk_spin_button_get_adjustment (self->gc_spin), "value",
                   G_SETTINGS_BIND_DEFAULT);

  inspector_source_view_setup (self->source_view, "cuda");
  inspector_source_view_setup (self->ptx_view, "ptx");

  self->model = inspector_cache_model_new (NULL);
  inspector_cache_model_set_monitored (self->model, TRUE);
  self->selection = gtk_single_selection_new (g_object_ref (G_LIST_MODEL (self->model)));
  /* autoselect would select the next entry after a delete (and a second
   * Delete would remove it) */
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (setup_row), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_row), NULL);
  gtk_list_view_set_factory (self->list_view, factory);
  g_object_unref (factory);
  gtk_list_view_set_model (self->list_view, GTK_SELECTION_MODEL (self->selection));

  g_signal_connect_swapped (self->model, "reloaded", G_CALLBACK (update_totals), self);
  g_signal_connect_swapped (self->model, "items-changed", G_CALLBACK (on_items_changed), self);
  g_signal_connect_swapped (self->selection, "notify::selected-item", G_CALLBACK (on_selection_changed), self);
  g_signal_connect_swapped (self->search_entry, "search-changed", G_CALLBACK (on_search_changed), self);
  g_signal_connect_swapped (self->sort_dropdown, "notify::selected", G_CALLBACK (on_sort_changed), self);
  {
    const gchar *all[] = { _("All Architectures"), NULL };
    self->archs = gtk_string_list_new (all);
    gtk_drop_down_set_model (self->arch_dropdown, G_LIST_MODEL (self->archs));
  }
  g_signal_connect_swapped (self->arch_dropdown, "notify::selected", G_CALLBACK (on_filters_changed), self);
  g_signal_connect_swapped (self->age_dropdown, "notify::selected", G_CALLBACK (on_filters_changed), self);
  g_signal_connect_swapped (self->size_dropdown, "notify::selected", G_CALLBACK (on_filters_changed), self);
  g_signal_connect_swapped (self->model, "items-changed", G_CALLBACK (update_archs), self);
  g_signal_connect (self->list_view, "activate", G_CALLBACK (on_activate), self);
  g_signal_connect_swapped (self->back_button, "clicked", G_CALLBACK (on_back), self);
  update_totals (self);
}
