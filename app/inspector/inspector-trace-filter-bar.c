/* inspector-trace-filter-bar.c — filter chips over the timeline
 *
 * An actor drop-down ("All Actors" and every actor of the trace) and
 * toggle chips for the kinds of slice (GPU execution, host lifecycles,
 * other spans) and "Errors Only"; each change sets the timeline's filter
 * (inspector_timeline_set_filter()).  Every chip is a focusable toggle
 * button: Tab reaches it, Space flips it.  Main thread only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-trace-filter-bar.h"

struct _InspectorTraceFilterBar
{
  GtkWidget          parent_instance;

  GtkWidget         *box;
  GtkDropDown       *actors;
  GtkStringList     *actor_names;   /* [0] is "All Actors" */
  GtkToggleButton   *gpu, *host, *spans, *errors;
  InspectorTimeline *timeline;
  gulong             changed_id;
  gboolean           rebuilding;
};

G_DEFINE_FINAL_TYPE (InspectorTraceFilterBar, inspector_trace_filter_bar, GTK_TYPE_WIDGET)

static void
apply (InspectorTraceFilterBar *self)
{
  guint a = gtk_drop_down_get_selected (self->actors);
  guint kinds = 0;

  if (self->timeline == NULL || self->rebuilding)
    return;
  if (gtk_toggle_button_get_active (self->gpu))
    kinds |= 1u << INSPECTOR_SLICE_GPU;
  if (gtk_toggle_button_get_active (self->host))
    kinds |= 1u << INSPECTOR_SLICE_HOST;
  if (gtk_toggle_button_get_active (self->spans))
    kinds |= 1u << INSPECTOR_SLICE_SPAN;
  inspector_timeline_set_filter (self->timeline,
                                 a > 0 && a != GTK_INVALID_LIST_POSITION
                                   ? gtk_string_list_get_string (self->actor_names, a) : NULL,
                                 kinds, gtk_toggle_button_get_active (self->errors));
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The actors of the trace, keeping the chosen one when it is still there. */
static void
rebuild_actors (InspectorTraceFilterBar *self)
{
  InspectorTraceModel *model = self->timeline ? inspector_timeline_get_model (self->timeline) : NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autofree gchar *chosen = NULL;
  guint sel = gtk_drop_down_get_selected (self->actors), keep = 0;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->actor_names));

  if (sel > 0 && sel != GTK_INVALID_LIST_POSITION)
    chosen = g_strdup (gtk_string_list_get_string (self->actor_names, sel));
  for (guint i = 0; model && i < inspector_trace_model_get_n_slices (model); i++)
    {
      const gchar *actor = inspector_trace_model_get_slice (model, i)->actor;
      if (actor && *actor && g_hash_table_add (seen, (gpointer) actor))
        g_ptr_array_add (names, (gpointer) actor);
    }
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_insert (names, 0, (gpointer) _("All Actors"));
  for (guint i = 1; chosen && i < names->len; i++)
    if (g_str_equal (g_ptr_array_index (names, i), chosen))
      keep = i;
  g_ptr_array_add (names, NULL);
  self->rebuilding = TRUE;
  gtk_string_list_splice (self->actor_names, 0, n, (const gchar * const *) names->pdata);
  gtk_drop_down_set_selected (self->actors, keep);
  self->rebuilding = FALSE;
  apply (self);
}

/**
 * inspector_trace_filter_bar_set_timeline:
 * @self: the bar
 * @timeline: the timeline it filters
 */
void
inspector_trace_filter_bar_set_timeline (InspectorTraceFilterBar *self,
                                         InspectorTimeline       *timeline)
{
  InspectorTraceModel *model;

  g_return_if_fail (INSPECTOR_IS_TRACE_FILTER_BAR (self));
  if (self->timeline && self->changed_id)
    g_clear_signal_handler (&self->changed_id, inspector_timeline_get_model (self->timeline));
  g_set_object (&self->timeline, timeline);
  model = timeline ? inspector_timeline_get_model (timeline) : NULL;
  if (model)
    self->changed_id = g_signal_connect_swapped (model, "changed", G_CALLBACK (rebuild_actors), self);
  rebuild_actors (self);
}

/**
 * inspector_trace_filter_bar_get_chip:
 * @self: the bar
 * @name: "gpu", "host", "spans" or "errors"
 *
 * Returns: (transfer none) (nullable): that chip
 */
GtkWidget *
inspector_trace_filter_bar_get_chip (InspectorTraceFilterBar *self,
                                     const gchar             *name)
{
  if (g_strcmp0 (name, "gpu") == 0)
    return GTK_WIDGET (self->gpu);
  if (g_strcmp0 (name, "host") == 0)
    return GTK_WIDGET (self->host);
  if (g_strcmp0 (name, "spans") == 0)
    return GTK_WIDGET (self->spans);
  if (g_strcmp0 (name, "errors") == 0)
    return GTK_WIDGET (self->errors);
  return NULL;
}

/**
 * inspector_trace_filter_bar_get_actors:
 * @self: the bar
 *
 * Returns: (transfer none): the actor drop-down
 */
GtkDropDown *
inspector_trace_filter_bar_get_actors (InspectorTraceFilterBar *self)
{
  return self->actors;
}

static void
inspector_trace_filter_bar_dispose (GObject *object)
{
  InspectorTraceFilterBar *self = INSPECTOR_TRACE_FILTER_BAR (object);

  if (self->timeline && self->changed_id && inspector_timeline_get_model (self->timeline))
    g_clear_signal_handler (&self->changed_id, inspector_timeline_get_model (self->timeline));
  g_clear_object (&self->timeline);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_object (&self->actor_names);
  G_OBJECT_CLASS (inspector_trace_filter_bar_parent_class)->dispose (object);
}

static void
inspector_trace_filter_bar_class_init (InspectorTraceFilterBarClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_trace_filter_bar_dispose;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_TOOLBAR);
}

static GtkToggleButton *
chip (InspectorTraceFilterBar *self,
      const gchar             *label,
      const gchar             *tooltip,
      gboolean                 active)
{
  GtkWidget *b = gtk_toggle_button_new_with_label (label);

  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (b), active);
  gtk_widget_set_tooltip_text (b, tooltip);
  gtk_widget_set_focusable (b, TRUE);
  gtk_widget_add_css_class (b, "caption");
  g_signal_connect_swapped (b, "toggled", G_CALLBACK (apply), self);
  gtk_box_append (GTK_BOX (self->box), b);
  return GTK_TOGGLE_BUTTON (b);
}

static void
inspector_trace_filter_bar_init (InspectorTraceFilterBar *self)
{
  GtkWidget *scrolled = gtk_scrolled_window_new ();

  self->box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_start (self->box, 12);
  gtk_widget_set_margin_end (self->box, 12);
  gtk_widget_set_margin_bottom (self->box, 6);
  self->actor_names = gtk_string_list_new (NULL);
  self->actors = GTK_DROP_DOWN (gtk_drop_down_new (g_object_ref (G_LIST_MODEL (self->actor_names)), NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->actors), _("Show one actor’s operations"));
  gtk_widget_add_css_class (GTK_WIDGET (self->actors), "caption");
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->actors));
  g_signal_connect_swapped (self->actors, "notify::selected", G_CALLBACK (apply), self);
  self->gpu = chip (self, _("GPU"), _("GPU execution per stream"), TRUE);
  self->host = chip (self, _("Host"), _("Host lifecycles: submitted to replied"), TRUE);
  self->spans = chip (self, _("Spans"), _("Other spans (plain Chrome traces, NVTX)"), TRUE);
  self->errors = chip (self, _("Errors Only"), _("Only operations that failed"), FALSE);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scrolled), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), self->box);
  self->box = scrolled;   /* the bar's child, unparented at dispose */
  gtk_widget_set_parent (scrolled, GTK_WIDGET (self));
  {
    const gchar *all[] = { _("All Actors"), NULL };
    gtk_string_list_splice (self->actor_names, 0, 0, all);
  }
}
