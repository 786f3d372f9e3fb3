/* inspector-trace-page.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-operation-stats.h"
#include "inspector-timeline.h"
#include "inspector-trace-page.h"

struct _InspectorTracePage
{
  GtkWidget            parent_instance;

  GtkStack            *stack;
  GtkLabel            *summary_label;
  GtkToggleButton     *live_button;
  InspectorTimeline   *timeline;
  GtkColumnView       *stats_view;
  GtkStack            *details_stack;
  AdwFlap             *details_flap;
  AdwPreferencesGroup *details_group;

  InspectorTraceModel *model;
  GPtrArray           *detail_rows;
  guint                live_source;
  GFile               *file;
};

G_DEFINE_FINAL_TYPE (InspectorTracePage, inspector_trace_page, GTK_TYPE_WIDGET)

gchar *
inspector_format_duration (gdouble us)
{
  if (us >= 1e6)
    return g_strdup_printf (_("%.2f s"), us / 1e6);
  if (us >= 1e3)
    return g_strdup_printf (_("%.2f ms"), us / 1e3);
  return g_strdup_printf (_("%.1f µs"), us);
}

static void
add_row (InspectorTracePage *self,
         const gchar        *title,
         const gchar        *value)
{
  GtkWidget *row = adw_action_row_new ();

  g_autofree gchar *escaped = g_markup_escape_text (value ? value : "", -1);

  /* libadwaita 1.2 parses subtitles as markup, whatever use-markup says */
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped);
  adw_preferences_group_add (self->details_group, row);
  g_ptr_array_add (self->detail_rows, row);
}

static void
show_details (InspectorTracePage *self)
{
  gint sel = inspector_timeline_get_selected (self->timeline);
  AtomrLaunchInfo *info;
  gint64 t0, submit, enq, done;
  gdouble gpu;
  guint g[3], b[3], shm;
  g_autofree gchar *op = NULL, *seq = NULL, *label = NULL;
  g_autofree gchar *s1 = NULL, *s2 = NULL, *s3 = NULL, *s4 = NULL, *s5 = NULL, *s6 = NULL, *s7 = NULL;
  const GError *error;

  for (guint i = 0; i < self->detail_rows->len; i++)
    adw_preferences_group_remove (self->details_group, g_ptr_array_index (self->detail_rows, i));
  g_ptr_array_set_size (self->detail_rows, 0);

  if (sel < 0)
    {
      gtk_stack_set_visible_child_name (self->details_stack, "none");
      if (adw_flap_get_folded (self->details_flap))
        adw_flap_set_reveal_flap (self->details_flap, FALSE);
      return;
    }
  /* on a narrow window the details slide over the statistics */
  adw_flap_set_reveal_flap (self->details_flap, TRUE);
  info = inspector_trace_model_get_record (self->model, sel);
  t0 = inspector_trace_model_get_start_time (self->model);
  submit = atomr_launch_info_get_submit_time (info);
  enq = atomr_launch_info_get_enqueue_time (info);
  done = atomr_launch_info_get_complete_time (info);
  gpu = atomr_launch_info_get_gpu_duration_ms (info);
  error = atomr_launch_info_get_error (info);

  label = inspector_launch_info_get_label (info);
  op = g_markup_escape_text (label, -1);
  adw_preferences_group_set_title (self->details_group, op);
  adw_preferences_group_set_description (self->details_group, error ? _("Failed") : _("Completed"));
  add_row (self, _("Library"), atomr_launch_info_get_library (info));
  add_row (self, _("Actor"), atomr_launch_info_get_actor_name (info));
  s1 = atomr_launch_info_get_device_ordinal (info) >= 0
       ? g_strdup_printf (_("GPU %d, stream %u"), atomr_launch_info_get_device_ordinal (info),
                          atomr_launch_info_get_stream_id (info))
       : g_strdup_printf (_("Host, stream %u"), atomr_launch_info_get_stream_id (info));
  add_row (self, _("Device"), s1);
  seq = g_strdup_printf ("%" G_GUINT64_FORMAT, atomr_launch_info_get_sequence (info));
  /* Translators: the operation's sequence number on its actor, then the CUDA context generation */
  s2 = g_strdup_printf (_("%s (context generation %u)"), seq, atomr_launch_info_get_generation (info));
  add_row (self, _("Sequence"), s2);
  s3 = g_strdup_printf (_("submitted at %+.1f µs, enqueued at %+.1f µs, completed at %+.1f µs"),
                        (gdouble) (submit - t0), (gdouble) (enq - t0), (gdouble) (done - t0));
  add_row (self, _("Host Timestamps"), s3);
  s4 = inspector_format_duration (done > enq ? (gdouble) (done - enq) : 0);
  add_row (self, _("Enqueue to Completion"), s4);
  if (gpu >= 0)
    {
      s5 = inspector_format_duration (gpu * 1000.0);
      add_row (self, _("GPU Time"), s5);
    }
  if (atomr_launch_info_get_geometry (info, &g[0], &g[1], &g[2], &b[0], &b[1], &b[2], &shm))
    {
      s6 = g_strdup_printf (_("grid %u×%u×%u, block %u×%u×%u, %u bytes shared memory"),
                            g[0], g[1], g[2], b[0], b[1], b[2], shm);
      add_row (self, _("Launch Geometry"), s6);
    }
  if (atomr_launch_info_get_detail (info))
    add_row (self, _("Detail"), atomr_launch_info_get_detail (info));
  if (error)
    {
      s7 = g_strdup_printf ("%s (%s %d)", error->message, g_quark_to_string (error->domain), error->code);
      add_row (self, _("Error"), s7);
    }
  gtk_stack_set_visible_child_name (self->details_stack, "details");
}

static void
update_summary (InspectorTracePage *self)
{
  guint n = inspector_trace_model_get_n_records (self->model);
  g_autofree gchar *span = NULL, *text = NULL, *ops = NULL;

  gtk_stack_set_visible_child_name (self->stack, n > 0 ? "trace" : "empty");
  /* nothing to save or zoom in an empty page */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.save", n > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.zoom-in", n > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.zoom-out", n > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.zoom-fit", n > 0);
  span = inspector_format_duration ((gdouble) (inspector_trace_model_get_end_time (self->model) -
                                               inspector_trace_model_get_start_time (self->model)));
  ops = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u operation", "%u operations", n), n);
  /* Translators: "842 operations on 6 tracks over 12.3 ms" */
  text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s on %u track over %s", "%s on %u tracks over %s",
                                       inspector_trace_model_get_n_tracks (self->model)),
                          ops, inspector_trace_model_get_n_tracks (self->model), span);
  gtk_label_set_text (self->summary_label, text);
}

gboolean
inspector_trace_page_load (InspectorTracePage  *self,
                           GFile               *file,
                           GError             **error)
{
  g_autofree gchar *path = g_file_get_path (file);

  if (path == NULL)
    {
      g_autofree gchar *uri = g_file_get_uri (file);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("“%s” is not a local file"), uri);
      return FALSE;
    }
  gtk_toggle_button_set_active (self->live_button, FALSE);
  if (!inspector_trace_model_load (self->model, path, error))
    return FALSE;
  g_set_object (&self->file, file);
  return TRUE;
}

static gboolean
poll_recorder (gpointer data)
{
  InspectorTracePage *self = data;

  inspector_trace_model_refresh (self->model);
  return G_SOURCE_CONTINUE;
}

static void
on_live_toggled (InspectorTracePage *self)
{
  g_clear_handle_id (&self->live_source, g_source_remove);
  if (gtk_toggle_button_get_active (self->live_button))
    self->live_source = g_timeout_add (250, poll_recorder, self);
}

/**
 * inspector_trace_page_follow_recorder:
 * @self: the page
 * @recorder: a recorder the actors of this process feed
 *
 * Shows @recorder's records and follows them four times a second while
 * the live button is down.
 */
void
inspector_trace_page_follow_recorder (InspectorTracePage *self,
                                      AtomrTraceRecorder *recorder)
{
  inspector_trace_model_set_recorder (self->model, recorder);
  gtk_widget_set_visible (GTK_WIDGET (self->live_button), recorder != NULL);
  gtk_toggle_button_set_active (self->live_button, recorder != NULL);
}

/**
 * inspector_trace_page_get_timeline:
 * @self: the page
 *
 * Returns: (transfer none): the timeline
 */
InspectorTimeline *
inspector_trace_page_get_timeline (InspectorTracePage *self)
{
  return self->timeline;
}

/**
 * inspector_trace_page_get_stats_view:
 * @self: the page
 *
 * Returns: (transfer none): the statistics table
 */
GtkWidget *
inspector_trace_page_get_stats_view (InspectorTracePage *self)
{
  return GTK_WIDGET (self->stats_view);
}

InspectorTraceModel *
inspector_trace_page_get_model (InspectorTracePage *self)
{
  return self->model;
}

guint
inspector_trace_page_get_n_drawn_boxes (InspectorTracePage *self)
{
  return inspector_timeline_get_n_drawn_boxes (self->timeline);
}

void
inspector_trace_page_select (InspectorTracePage *self,
                             gint                index)
{
  inspector_timeline_set_selected (self->timeline, index);
}

static void
on_open_response (GtkNativeDialog    *dialog,
                  int                 response,
                  InspectorTracePage *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr(GError) error = NULL;

      if (!inspector_trace_page_load (self, file, &error))
        gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s", error->message);
    }
  g_object_unref (dialog);
}

static GtkFileFilter *
json_filter (void)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("Chrome Traces"));
  gtk_file_filter_add_mime_type (filter, "application/json");
  gtk_file_filter_add_pattern (filter, "*.json");
  return filter;
}

static void
open_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  GtkFileChooserNative *dialog;

  dialog = gtk_file_chooser_native_new (_("Open Trace"), GTK_WINDOW (gtk_widget_get_root (widget)),
                                        GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), json_filter ());
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), widget);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
on_save_response (GtkNativeDialog    *dialog,
                  int                 response,
                  InspectorTracePage *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree gchar *path = g_file_get_path (file);
      g_autoptr(GError) error = NULL;

      if (path == NULL || !inspector_trace_model_save (self->model, path, &error))
        gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s",
                                    error ? error->message : _("Traces can only be saved to local files"));
      else
        g_set_object (&self->file, file);
    }
  g_object_unref (dialog);
}

static void
save_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  InspectorTracePage *self = INSPECTOR_TRACE_PAGE (widget);
  GtkFileChooserNative *dialog;

  dialog = gtk_file_chooser_native_new (_("Save Trace"), GTK_WINDOW (gtk_widget_get_root (widget)),
                                        GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), json_filter ());
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), "trace.json");
  if (self->file)
    {
      g_autoptr(GFile) parent = g_file_get_parent (self->file);
      if (parent)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), parent, NULL);
    }
  g_signal_connect (dialog, "response", G_CALLBACK (on_save_response), widget);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
zoom_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  InspectorTracePage *self = INSPECTOR_TRACE_PAGE (widget);
  const gchar *what = strchr (action_name, '.') + 1;
  g_autofree gchar *name = g_strconcat ("timeline.", what, NULL);

  gtk_widget_activate_action (GTK_WIDGET (self->timeline), name, NULL);
}

/* statistics columns */

typedef enum { COL_OPERATION, COL_COUNT, COL_TOTAL, COL_MEAN, COL_P50, COL_P99 } Column;

static void
setup_cell (GtkSignalListItemFactory *factory,
            GtkListItem              *item,
            gpointer                  user_data)
{
  Column col = GPOINTER_TO_INT (user_data);
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), col == COL_OPERATION ? 0 : 1);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  if (col != COL_OPERATION)
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *factory,
           GtkListItem              *item,
           gpointer                  user_data)
{
  Column col = GPOINTER_TO_INT (user_data);
  InspectorOperationStats *st = gtk_list_item_get_item (item);
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (item));
  g_autofree gchar *text = NULL;

  switch (col)
    {
    case COL_OPERATION:
      text = g_strdup_printf ("%s · %s", inspector_operation_stats_get_library (st),
                              inspector_operation_stats_get_operation (st));
      break;
    case COL_COUNT: text = g_strdup_printf ("%u", inspector_operation_stats_get_count (st)); break;
    case COL_TOTAL: text = inspector_format_duration (inspector_operation_stats_get_total_us (st)); break;
    case COL_MEAN: text = inspector_format_duration (inspector_operation_stats_get_mean_us (st)); break;
    case COL_P50: text = inspector_format_duration (inspector_operation_stats_get_p50_us (st)); break;
    case COL_P99: text = inspector_format_duration (inspector_operation_stats_get_p99_us (st)); break;
    default: break;
    }
  gtk_label_set_text (label, text);
}

static void
add_column (InspectorTracePage *self,
            const gchar        *title,
            Column              col,
            const gchar        *property,
            gboolean            expand)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkColumnViewColumn *column;
  GtkSorter *sorter;
  GtkExpression *expr = gtk_property_expression_new (INSPECTOR_TYPE_OPERATION_STATS, NULL, property);

  g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), GINT_TO_POINTER (col));
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), GINT_TO_POINTER (col));
  column = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_expand (column, expand);
  gtk_column_view_column_set_resizable (column, TRUE);
  if (col == COL_OPERATION)
    sorter = GTK_SORTER (gtk_string_sorter_new (expr));
  else
    {
      sorter = GTK_SORTER (gtk_numeric_sorter_new (expr));
      gtk_numeric_sorter_set_sort_order (GTK_NUMERIC_SORTER (sorter), GTK_SORT_DESCENDING);
    }
  gtk_column_view_column_set_sorter (column, sorter);
  g_object_unref (sorter);
  gtk_column_view_append_column (self->stats_view, column);
  g_object_unref (column);
}

static void
inspector_trace_page_dispose (GObject *object)
{
  InspectorTracePage *self = INSPECTOR_TRACE_PAGE (object);

  g_clear_handle_id (&self->live_source, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), INSPECTOR_TYPE_TRACE_PAGE);
  g_clear_object (&self->model);
  g_clear_object (&self->file);
  g_clear_pointer (&self->detail_rows, g_ptr_array_unref);
  G_OBJECT_CLASS (inspector_trace_page_parent_class)->dispose (object);
}

static void
inspector_trace_page_class_init (InspectorTracePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_trace_page_dispose;

  g_type_ensure (INSPECTOR_TYPE_TIMELINE);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/atomr/Inspector/inspector-trace-page.ui");
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, stack);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, summary_label);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, live_button);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, timeline);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, stats_view);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, details_stack);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, details_flap);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, details_group);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  gtk_widget_class_install_action (widget_class, "trace.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "trace.save", NULL, save_action);
  gtk_widget_class_install_action (widget_class, "trace.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "trace.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "trace.zoom-fit", NULL, zoom_action);
}

static void
inspector_trace_page_init (InspectorTracePage *self)
{
  GtkSortListModel *sorted;
  GtkNoSelection *selection;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->detail_rows = g_ptr_array_new ();
  self->model = inspector_trace_model_new ();
  inspector_timeline_set_model (self->timeline, self->model);
  g_signal_connect_swapped (self->model, "changed", G_CALLBACK (update_summary), self);
  g_signal_connect_swapped (self->timeline, "notify::selected", G_CALLBACK (show_details), self);
  g_signal_connect_swapped (self->live_button, "toggled", G_CALLBACK (on_live_toggled), self);

  add_column (self, _("Operation"), COL_OPERATION, "operation", TRUE);
  add_column (self, _("Count"), COL_COUNT, "count", FALSE);
  add_column (self, _("Total"), COL_TOTAL, "total-us", FALSE);
  add_column (self, _("Mean"), COL_MEAN, "mean-us", FALSE);
  add_column (self, _("p50"), COL_P50, "p50-us", FALSE);
  add_column (self, _("p99"), COL_P99, "p99-us", FALSE);

  sorted = gtk_sort_list_model_new (g_object_ref (inspector_trace_model_get_statistics (self->model)),
                                    g_object_ref (gtk_column_view_get_sorter (self->stats_view)));
  selection = gtk_no_selection_new (G_LIST_MODEL (sorted));
  gtk_column_view_set_model (self->stats_view, GTK_SELECTION_MODEL (selection));
  g_object_unref (selection);
  update_summary (self);
}
