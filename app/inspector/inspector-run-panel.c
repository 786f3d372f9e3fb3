/* inspector-run-panel.c — the Editor's Run tab
 *
 * The kernel, its arguments as typed ("f32:2.5, f32[1048576]=random, ..."),
 * the number of threads, the block size and the number of launches; Run
 * (F5 in the Editor) sends them with the source and the compile options
 * to atomr-kernel-runner (inspector-run.c) over a pipe and shows what
 * comes back: GPU time per launch and a sample, the minimum, maximum and
 * mean of every buffer.  The runner's error, its crash (a signal) or a
 * run longer than a minute is shown the same way, as the run's result:
 * the inspector itself never touches the kernel.  Main thread only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "inspector-run.h"
#include "inspector-run-panel.h"

#define RUN_TIMEOUT_S 60

struct _InspectorRunPanel
{
  GtkWidget      parent_instance;

  GtkWidget     *scrolled;
  AdwEntryRow   *kernel_row;
  AdwEntryRow   *args_row;
  GtkSpinButton *threads_spin;
  GtkSpinButton *block_spin;
  GtkSpinButton *repeat_spin;
  GtkLabel      *result_label;
  GtkSpinner    *spinner;

  GCancellable  *cancellable;   /* the run going on */
  const gchar   *state;      /* "idle", "running", "done", "error", "crashed" */
  gchar         *result;
};

G_DEFINE_FINAL_TYPE (InspectorRunPanel, inspector_run_panel, GTK_TYPE_WIDGET)

static void
finish (InspectorRunPanel *self,
        const gchar       *state,
        const gchar       *text)
{
  self->state = state;
  g_free (self->result);
  self->result = g_strdup (text);
  gtk_label_set_text (self->result_label, text);
  gtk_widget_remove_css_class (GTK_WIDGET (self->result_label), "error");
  if (!g_str_equal (state, "done") && !g_str_equal (state, "running"))
    gtk_widget_add_css_class (GTK_WIDGET (self->result_label), "error");
  gtk_spinner_set_spinning (self->spinner, g_str_equal (state, "running"));
}

static gchar *
describe_reply (JsonObject *o)
{
  g_autoptr(GString) out = g_string_new (NULL);
  JsonArray *times = json_object_has_member (o, "gpu_ms") ? json_object_get_array_member (o, "gpu_ms") : NULL;
  JsonArray *outputs = json_object_has_member (o, "outputs") ? json_object_get_array_member (o, "outputs") : NULL;

  /* Translators: the GPU's name and architecture */
  g_string_append_printf (out, _("On %s (%s)"), json_object_get_string_member_with_default (o, "device", "?"),
                          json_object_get_string_member_with_default (o, "arch", "?"));
  g_string_append (out, "\n");
  g_string_append (out, _("GPU time per launch:"));
  for (guint i = 0; times && i < json_array_get_length (times); i++)
    g_string_append_printf (out, " %.3f ms", json_array_get_double_element (times, i));
  g_string_append (out, "\n");
  for (guint i = 0; outputs && i < json_array_get_length (outputs); i++)
    {
      JsonObject *b = json_array_get_object_element (outputs, i);
      JsonArray *sample = json_object_get_array_member (b, "sample");

      /* Translators: argument number, its type, its number of elements */
      g_string_append_printf (out, _("Argument %" G_GINT64_FORMAT " (%s[%" G_GINT64_FORMAT "]):"),
                              json_object_get_int_member (b, "arg"), json_object_get_string_member (b, "dtype"),
                              json_object_get_int_member (b, "count"));
      for (guint k = 0; sample && k < json_array_get_length (sample); k++)
        g_string_append_printf (out, " %g", json_array_get_double_element (sample, k));
      if (sample && (gint64) json_array_get_length (sample) < json_object_get_int_member (b, "count"))
        g_string_append (out, " …");
      g_string_append_printf (out, _("; min %g, max %g, mean %g"), json_object_get_double_member (b, "min"),
                              json_object_get_double_member (b, "max"), json_object_get_double_member (b, "mean"));
      g_string_append (out, "\n");
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
on_reply (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  InspectorRunPanel *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) reply = inspector_run_spawn_finish (result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_object_unref (self);   /* replaced by a newer run, or the panel went away */
      return;
    }
  g_clear_object (&self->cancellable);
  if (reply)
    {
      g_autofree gchar *text = describe_reply (reply);
      finish (self, "done", text);
    }
  else if (g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE))
    finish (self, "crashed", error->message);
  else
    {
      g_autofree gchar *msg = g_strdup_printf (_("The run failed: %s"), error->message);
      finish (self, "error", msg);
    }
  g_object_unref (self);
}

/**
 * inspector_run_panel_start:
 * @self: the panel
 * @source: the kernel source
 * @program_name: its file name
 * @options: the Editor's compile options (inspector_compile_options_from_json())
 * @cache_directory: (nullable): the cache the Editor compiles into
 *
 * Runs the kernel the panel names with the panel's arguments in a new
 * atomr-kernel-runner process; a run still going is stopped.  Bad
 * arguments are a result at once, without a process.
 */
void
inspector_run_panel_start (InspectorRunPanel *self,
                           const gchar       *source,
                           const gchar       *program_name,
                           JsonObject        *options,
                           const gchar       *cache_directory)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) args = NULL;
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree gchar *request = NULL, *runner = NULL;
  const gchar *kernel = gtk_editable_get_text (GTK_EDITABLE (self->kernel_row));

  g_return_if_fail (INSPECTOR_IS_RUN_PANEL (self));
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (kernel == NULL || *kernel == '\0')
    {
      finish (self, "error", _("Name the kernel to run (its name, or a name expression such as scale<float>)."));
      return;
    }
  args = inspector_run_parse_args (gtk_editable_get_text (GTK_EDITABLE (self->args_row)), &error);
  if (args == NULL)
    {
      finish (self, "error", error->message);
      return;
    }
  runner = inspector_run_find_runner ();
  if (runner == NULL)
    {
      g_autofree gchar *msg = g_strdup_printf (_("atomr-kernel-runner is not installed (looked in %s; "
                                                 "ATOMR_INSPECTOR_RUNNER names another)."),
                                               ATOMR_INSPECTOR_LIBEXECDIR);
      finish (self, "error", msg);
      return;
    }

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, source);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, program_name);
  json_builder_set_member_name (b, "kernel");
  json_builder_add_string_value (b, kernel);
  json_builder_set_member_name (b, "options");
  {
    JsonNode *node = json_node_new (JSON_NODE_OBJECT);
    json_node_set_object (node, options);
    json_builder_add_value (b, node);
  }
  json_builder_set_member_name (b, "args");
  json_builder_add_value (b, inspector_run_args_to_json (args));
  json_builder_set_member_name (b, "threads");
  json_builder_add_int_value (b, gtk_spin_button_get_value_as_int (self->threads_spin));
  json_builder_set_member_name (b, "block");
  json_builder_add_int_value (b, gtk_spin_button_get_value_as_int (self->block_spin));
  json_builder_set_member_name (b, "repeat");
  json_builder_add_int_value (b, gtk_spin_button_get_value_as_int (self->repeat_spin));
  if (cache_directory)
    {
      json_builder_set_member_name (b, "cache");
      json_builder_add_string_value (b, cache_directory);
    }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  request = json_generator_to_data (gen, NULL);

  self->cancellable = g_cancellable_new ();
  finish (self, "running", _("Running…"));
  {
    const gchar *argv[] = { runner, NULL };
    inspector_run_spawn_async (argv, request, RUN_TIMEOUT_S, self->cancellable, on_reply, g_object_ref (self));
  }
}

/**
 * inspector_run_panel_set_kernels:
 * @self: the panel
 * @names: (array zero-terminated=1): the kernels of the source
 *
 * Proposes the first kernel when none is named yet.
 */
void
inspector_run_panel_set_kernels (InspectorRunPanel   *self,
                                 const gchar * const *names)
{
  const gchar *now = gtk_editable_get_text (GTK_EDITABLE (self->kernel_row));

  if ((now == NULL || *now == '\0') && names && names[0])
    gtk_editable_set_text (GTK_EDITABLE (self->kernel_row), names[0]);
}

/**
 * inspector_run_panel_get_state:
 * @self: the panel
 *
 * Returns: "idle", "running", "done", "error" or "crashed"
 */
const gchar *
inspector_run_panel_get_state (InspectorRunPanel *self)
{
  return self->state;
}

/**
 * inspector_run_panel_get_result:
 * @self: the panel
 *
 * Returns: (nullable): the text shown for the last run
 */
const gchar *
inspector_run_panel_get_result (InspectorRunPanel *self)
{
  return self->result;
}

/**
 * inspector_run_panel_get_field:
 * @self: the panel
 * @name: "kernel", "args", "threads", "block" or "repeat"
 *
 * Returns: (transfer none) (nullable): that field
 */
GtkWidget *
inspector_run_panel_get_field (InspectorRunPanel *self,
                               const gchar       *name)
{
  if (g_strcmp0 (name, "kernel") == 0)
    return GTK_WIDGET (self->kernel_row);
  if (g_strcmp0 (name, "args") == 0)
    return GTK_WIDGET (self->args_row);
  if (g_strcmp0 (name, "threads") == 0)
    return GTK_WIDGET (self->threads_spin);
  if (g_strcmp0 (name, "block") == 0)
    return GTK_WIDGET (self->block_spin);
  if (g_strcmp0 (name, "repeat") == 0)
    return GTK_WIDGET (self->repeat_spin);
  return NULL;
}

GtkWidget *
inspector_run_panel_new (void)
{
  return g_object_new (INSPECTOR_TYPE_RUN_PANEL, NULL);
}

static void
inspector_run_panel_dispose (GObject *object)
{
  InspectorRunPanel *self = INSPECTOR_RUN_PANEL (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->scrolled, gtk_widget_unparent);
  g_clear_pointer (&self->result, g_free);
  G_OBJECT_CLASS (inspector_run_panel_parent_class)->dispose (object);
}

static void
inspector_run_panel_class_init (InspectorRunPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_run_panel_dispose;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static GtkSpinButton *
spin_row (AdwPreferencesGroup *group,
          const gchar         *title,
          gdouble              lower,
          gdouble              upper,
          gdouble              step,
          gdouble              value)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *spin = gtk_spin_button_new_with_range (lower, upper, step);

  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), value);
  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  gtk_widget_set_valign (spin, GTK_ALIGN_CENTER);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (row), TRUE);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), spin);
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), spin);
  adw_preferences_group_add (group, row);
  return GTK_SPIN_BUTTON (spin);
}

static void
inspector_run_panel_init (InspectorRunPanel *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  AdwPreferencesGroup *group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  GtkWidget *run = gtk_button_new_with_mnemonic (_("_Run on the GPU"));
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);

  self->state = "idle";
  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_widget_set_parent (self->scrolled, GTK_WIDGET (self));
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 12);
  gtk_widget_set_margin_bottom (box, 12);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), box);

  adw_preferences_group_set_description (group, _("In a process of its own: a faulty kernel cannot take the "
                                                  "inspector down."));
  self->kernel_row = ADW_ENTRY_ROW (adw_entry_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->kernel_row), _("Kernel"));
  adw_preferences_group_add (group, GTK_WIDGET (self->kernel_row));
  self->args_row = ADW_ENTRY_ROW (adw_entry_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->args_row),
                                 _("Arguments (f32:2.5, f32[1048576]=random, u32:1048576)"));
  adw_preferences_group_add (group, GTK_WIDGET (self->args_row));
  self->threads_spin = spin_row (group, _("Threads in _All"), 1, G_MAXUINT32, 256, 1024 * 1024);
  self->block_spin = spin_row (group, _("Threads per _Block"), 1, 1024, 32, 256);
  self->repeat_spin = spin_row (group, _("_Launches"), 1, 1000, 1, 3);

  gtk_actionable_set_action_name (GTK_ACTIONABLE (run), "editor.run");
  gtk_widget_add_css_class (run, "suggested-action");
  self->spinner = GTK_SPINNER (gtk_spinner_new ());
  gtk_box_append (GTK_BOX (bar), run);
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->spinner));
  /* the button and the result first: the result stays in sight */
  gtk_box_append (GTK_BOX (box), bar);

  self->result_label = GTK_LABEL (gtk_label_new (_("Run launches the kernel with these arguments and shows the GPU "
                                                   "time and a sample of every buffer.")));
  gtk_label_set_wrap (self->result_label, TRUE);
  gtk_label_set_selectable (self->result_label, TRUE);
  gtk_label_set_xalign (self->result_label, 0);
  gtk_widget_add_css_class (GTK_WIDGET (self->result_label), "monospace");
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->result_label));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (group));
}
