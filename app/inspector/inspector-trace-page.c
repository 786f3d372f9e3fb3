/* inspector-trace-page.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>

#include <glib/gi18n.h>

#include "inspector-operation-stats.h"
#include "inspector-timeline.h"
#include "inspector-trace-filter-bar.h"
#include "inspector-trace-page.h"

struct _InspectorTracePage
{
  GtkWidget            parent_instance;

  GtkStack            *stack;
  GtkLabel            *summary_label;
  GtkToggleButton     *live_button;
  GtkToggleButton     *flows_button;
  GtkSearchEntry      *search_entry;
  GCancellable        *cancellable;
  InspectorTimeline   *timeline;
  InspectorTraceFilterBar *filter_bar;
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

static gchar *
at (gdouble t)
{
  /* Translators: a time after the start of the trace */
  return isnan (t) ? g_strdup ("—") : g_strdup_printf (_("%+.3f µs"), t);
}

static gchar *
list_slices (InspectorTracePage *self,
             GArray             *indices)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (guint i = 0; i < indices->len; i++)
    {
      const InspectorSlice *s = inspector_trace_model_get_slice (self->model, g_array_index (indices, guint, i));
      g_autofree gchar *label = inspector_slice_get_label (s);

      if (out->len)
        g_string_append (out, "\n");
      if (s->seq >= 0)
        g_string_append_printf (out, "%s #%" G_GINT64_FORMAT " (%s)", label, s->seq, s->actor);
      else
        g_string_append_printf (out, "%s (%s)", label, s->actor);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
show_details (InspectorTracePage *self)
{
  gint sel = inspector_timeline_get_selected (self->timeline);
  const InspectorSlice *s, *gpu = NULL, *host = NULL;
  g_autofree gchar *label = NULL, *op = NULL, *where = NULL, *gpu_time = NULL, *queue = NULL, *life = NULL;
  g_autofree gchar *steps = NULL, *seq = NULL, *geo = NULL, *waited = NULL, *fed = NULL;
  g_autofree gchar *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  g_autoptr(GArray) producers = NULL, consumers = NULL;

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
  s = inspector_trace_model_get_slice (self->model, (guint) sel);
  /* the operation: its GPU slice and its host lifecycle, whichever was picked */
  if (s->kind == INSPECTOR_SLICE_GPU)
    gpu = s;
  else if (s->kind == INSPECTOR_SLICE_HOST)
    host = s;
  if (s->peer >= 0)
    {
      const InspectorSlice *p = inspector_trace_model_get_slice (self->model, (guint) s->peer);
      if (p->kind == INSPECTOR_SLICE_GPU)
        gpu = p;
      else
        host = p;
    }
  label = inspector_slice_get_label (s);
  op = g_markup_escape_text (label, -1);
  adw_preferences_group_set_title (self->details_group, op);
  adw_preferences_group_set_description (self->details_group, s->failed ? _("Failed") : _("Completed"));
  add_row (self, _("Library"), s->library);
  add_row (self, _("Actor"), s->actor);
  where = s->device >= 0 && s->stream >= 0
          ? g_strdup_printf (_("GPU %d, stream %d"), s->device, s->stream)
          : g_strdup (inspector_trace_model_get_lane_label (self->model, s->lane));
  add_row (self, _("Lane"), where);
  if (s->seq >= 0)
    {
      seq = g_strdup_printf ("%" G_GINT64_FORMAT, s->seq);
      if (s->generation)
        {
          /* Translators: the operation's sequence number, then the CUDA context generation */
          g_autofree gchar *g = g_strdup_printf (_("%s (context generation %u)"), seq, s->generation);
          g_free (seq);
          seq = g_steal_pointer (&g);
        }
      add_row (self, _("Sequence"), seq);
    }
  if (gpu)
    {
      gpu_time = inspector_format_duration (gpu->dur);
      add_row (self, _("GPU Time"), gpu_time);
    }
  else if (s->kind == INSPECTOR_SLICE_SPAN)
    {
      gpu_time = inspector_format_duration (s->dur);
      add_row (self, _("Duration"), gpu_time);
    }
  else
    add_row (self, _("GPU Time"), _("Not measured (the actor's timing is off)"));
  if (gpu && host)
    {
      /* queued: from the enqueue on the stream (or the submission) to the GPU start */
      gdouble from = !isnan (host->enqueued) ? host->enqueued : host->start;
      queue = inspector_format_duration (MAX (gpu->start - from, 0.0));
      add_row (self, _("Queue Time"), queue);
    }
  if (host)
    {
      life = inspector_format_duration (host->dur);
      add_row (self, _("Submit to Reply"), life);
      a = at (host->start);
      b = at (host->enqueued);
      c = at (host->completed);
      d = at (host->replied);
      steps = g_strdup_printf (_("submitted %s, enqueued %s, completed %s, replied %s"), a, b, c, d);
      add_row (self, _("Host Timestamps"), steps);
    }
  if (s->grid[0])
    {
      geo = g_strdup_printf (_("grid %u×%u×%u, block %u×%u×%u"), s->grid[0], s->grid[1], s->grid[2],
                             s->block[0], s->block[1], s->block[2]);
      add_row (self, _("Launch Geometry"), geo);
    }
  if (s->detail)
    add_row (self, _("Detail"), s->detail);
  producers = inspector_trace_model_get_dependencies (self->model, gpu ? (guint) (gpu - inspector_trace_model_get_slice (self->model, 0)) : (guint) sel, TRUE);
  consumers = inspector_trace_model_get_dependencies (self->model, gpu ? (guint) (gpu - inspector_trace_model_get_slice (self->model, 0)) : (guint) sel, FALSE);
  if (producers->len)
    {
      waited = list_slices (self, producers);
      add_row (self, _("Waited For"), waited);
    }
  if (consumers->len)
    {
      fed = list_slices (self, consumers);
      add_row (self, _("Waited On By"), fed);
    }
  if (s->error)
    add_row (self, _("Error"), s->error);
  gtk_stack_set_visible_child_name (self->details_stack, "details");
}

static void
update_summary (InspectorTracePage *self)
{
  guint n = inspector_trace_model_get_n_slices (self->model);
  guint lanes = inspector_trace_model_get_n_lanes (self->model);
  g_autofree gchar *span = NULL, *text = NULL, *ops = NULL;

  gtk_stack_set_visible_child_name (self->stack, n + lanes > 0 ? "trace" : "empty");
  /* nothing to save, zoom or find in an empty page */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.save", n + lanes > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.zoom-in", n + lanes > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.zoom-out", n + lanes > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "trace.zoom-fit", n + lanes > 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->search_entry), n > 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->flows_button), inspector_trace_model_get_n_flows (self->model) > 0);
  span = inspector_format_duration (inspector_trace_model_get_duration (self->model));
  ops = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u slice", "%u slices", n), n);
  /* Translators: "842 slices on 6 lanes over 12.3 ms" */
  text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s on %u lane over %s", "%s on %u lanes over %s", lanes),
                          ops, lanes, span);
  gtk_label_set_text (self->summary_label, text);
}

/**
 * inspector_trace_page_load:
 * @self: the page
 * @file: a Chrome trace
 * @error: return location for a #GError
 *
 * Reads @file on the calling thread (the tests and the screenshots use
 * this; the Open dialog uses inspector_trace_page_open()).
 *
 * Returns: %TRUE on success
 */
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

typedef struct {
  GWeakRef  page;
  GFile    *file;
} Pending;

static void
pending_free (Pending *p)
{
  g_weak_ref_clear (&p->page);
  g_object_unref (p->file);
  g_free (p);
}

static Pending *
pending_new (InspectorTracePage *self,
             GFile              *file)
{
  Pending *p = g_new0 (Pending, 1);

  g_weak_ref_init (&p->page, self);
  p->file = g_object_ref (file);
  return p;
}

static void
on_opened (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Pending *p = user_data;
  g_autoptr(InspectorTracePage) self = g_weak_ref_get (&p->page);
  g_autoptr(GError) error = NULL;

  if (!inspector_trace_model_load_finish (INSPECTOR_TRACE_MODEL (source), result, &error))
    {
      if (self && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s", error->message);
    }
  else if (self)
    g_set_object (&self->file, p->file);
  pending_free (p);
}

/**
 * inspector_trace_page_open:
 * @self: the page
 * @file: a Chrome trace
 *
 * Reads and parses @file in a worker thread (the window stays responsive
 * with large traces); errors become toasts.
 */
void
inspector_trace_page_open (InspectorTracePage *self,
                           GFile              *file)
{
  gtk_toggle_button_set_active (self->live_button, FALSE);
  g_cancellable_cancel (self->cancellable);
  g_set_object (&self->cancellable, NULL);
  self->cancellable = g_cancellable_new ();
  inspector_trace_model_load_async (self->model, file, self->cancellable, on_opened, pending_new (self, file));
}

static void
on_saved (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  Pending *p = user_data;
  g_autoptr(InspectorTracePage) self = g_weak_ref_get (&p->page);
  g_autoptr(GError) error = NULL;

  if (!inspector_trace_model_save_finish (INSPECTOR_TRACE_MODEL (source), result, &error))
    {
      if (self)
        gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s", error->message);
    }
  else if (self)
    g_set_object (&self->file, p->file);
  pending_free (p);
}

static void
on_search (InspectorTracePage *self)
{
  const gchar *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  gint found = inspector_trace_model_search (self->model, text, inspector_timeline_get_selected (self->timeline), TRUE);

  if (found >= 0)
    inspector_timeline_reveal (self->timeline, found);
  else if (text && *text)
    gtk_widget_error_bell (GTK_WIDGET (self->search_entry));
}

static void
on_search_changed (InspectorTracePage *self)
{
  const gchar *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  gint found = inspector_trace_model_search (self->model, text, -1, TRUE);

  if (found >= 0)
    inspector_timeline_reveal (self->timeline, found);
}

static void
on_flows_toggled (InspectorTracePage *self)
{
  inspector_timeline_set_show_flows (self->timeline, gtk_toggle_button_get_active (self->flows_button));
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
 * inspector_trace_page_get_filter_bar:
 * @self: the page
 *
 * Returns: (transfer none): the filter chips over the timeline
 */
InspectorTraceFilterBar *
inspector_trace_page_get_filter_bar (InspectorTracePage *self)
{
  return self->filter_bar;
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

      inspector_trace_page_open (self, file);
    }
  g_object_unref (dialog);
}

/* Traces written by AtomrTraceRecorder (data/mime/io.github.atomr.Inspector.xml:
 * by content, or named *.atomr-trace[.json]) */
static GtkFileFilter *
atomr_trace_filter (void)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("atomr Traces"));
  gtk_file_filter_add_mime_type (filter, "application/x-atomr-trace+json");
  gtk_file_filter_add_pattern (filter, "*.atomr-trace");
  gtk_file_filter_add_pattern (filter, "*.atomr-trace.json");
  return filter;
}

/* Any Chrome trace (Perfetto, chrome://tracing, other tools) */
static GtkFileFilter *
json_filter (void)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("Chrome Traces (JSON)"));
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
  {
    g_autoptr(GtkFileFilter) atomr = atomr_trace_filter ();
    g_autoptr(GtkFileFilter) json = json_filter ();

    /* the first is the one selected: atomr's own traces */
    gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), atomr);
    gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), json);
    gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (dialog), atomr);
  }
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

      inspector_trace_model_save_async (self->model, file, NULL, on_saved, pending_new (self, file));
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
  {
    g_autoptr(GtkFileFilter) atomr = atomr_trace_filter ();
    g_autoptr(GtkFileFilter) json = json_filter ();

    gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), atomr);
    gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), json);
  }
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), "trace.atomr-trace.json");
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
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
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
  g_type_ensure (INSPECTOR_TYPE_TRACE_FILTER_BAR);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/atomr/Inspector/inspector-trace-page.ui");
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, stack);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, summary_label);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, live_button);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, flows_button);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, search_entry);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, timeline);
  gtk_widget_class_bind_template_child (widget_class, InspectorTracePage, filter_bar);
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
  inspector_trace_filter_bar_set_timeline (self->filter_bar, self->timeline);
  g_signal_connect_swapped (self->model, "changed", G_CALLBACK (update_summary), self);
  g_signal_connect_swapped (self->timeline, "notify::selected", G_CALLBACK (show_details), self);
  g_signal_connect_swapped (self->live_button, "toggled", G_CALLBACK (on_live_toggled), self);
  g_signal_connect_swapped (self->flows_button, "toggled", G_CALLBACK (on_flows_toggled), self);
  g_signal_connect_swapped (self->search_entry, "activate", G_CALLBACK (on_search), self);
  g_signal_connect_swapped (self->search_entry, "search-changed", G_CALLBACK (on_search_changed), self);

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
