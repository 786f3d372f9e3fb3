/* inspector-occupancy-panel.c — the Resources tab of the Cache page
 *
 * What each kernel of the selected entry uses (registers, shared memory,
 * stack, read from its CUBIN by inspector_cubin_resources()) and an
 * occupancy calculator: kernel, architecture (this GPU when there is one,
 * else any of the table's), threads per block and dynamic shared memory
 * in, theoretical occupancy and the limiting resource out
 * (inspector-occupancy.c).  GPU 0 is looked for once, in a worker thread.
 * Main thread only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-diagnostics.h"
#include "inspector-occupancy-panel.h"

struct _InspectorOccupancyPanel
{
  GtkWidget            parent_instance;

  GtkWidget           *scrolled;
  AdwPreferencesGroup *resources_group;
  GtkWidget           *analyse_button;
  GPtrArray           *resource_rows;
  AdwComboRow         *kernel_row;
  AdwComboRow         *arch_row;
  GtkSpinButton       *block_spin;
  GtkSpinButton       *shared_spin;
  AdwActionRow        *result_row;
  GtkLevelBar         *level;

  GPtrArray           *resources;     /* InspectorKernelResources*, or NULL */
  GtkStringList       *kernel_names;
  GtkStringList       *arch_labels;
  GPtrArray           *arch_ids;      /* "device" or an arch, parallel to arch_labels */
  gchar               *entry_arch;
  InspectorSmLimits    device_limits;
  gchar               *device_arch;   /* NULL: no GPU (yet) */
  InspectorOccupancy   result;
  gboolean             have_result;
  gchar               *summary;
  GCancellable        *probing;
};

G_DEFINE_FINAL_TYPE (InspectorOccupancyPanel, inspector_occupancy_panel, GTK_TYPE_WIDGET)

static const gchar *
selected_arch_id (InspectorOccupancyPanel *self)
{
  guint i = adw_combo_row_get_selected (self->arch_row);

  return i < self->arch_ids->len ? g_ptr_array_index (self->arch_ids, i) : NULL;
}

static void
set_summary (InspectorOccupancyPanel *self,
             const gchar             *text)
{
  g_autofree gchar *escaped = g_markup_escape_text (text, -1);

  g_free (self->summary);
  self->summary = g_strdup (text);
  adw_action_row_set_subtitle (self->result_row, escaped);
}

static void
recompute (InspectorOccupancyPanel *self)
{
  guint k = adw_combo_row_get_selected (self->kernel_row);
  const gchar *id = selected_arch_id (self);
  InspectorKernelResources *res;
  InspectorSmLimits limits;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *text = NULL;

  self->have_result = FALSE;
  gtk_level_bar_set_value (self->level, 0);
  if (self->resources == NULL || k >= self->resources->len || id == NULL)
    {
      set_summary (self, _("No kernel to compute for."));
      return;
    }
  res = g_ptr_array_index (self->resources, k);
  if (g_str_equal (id, "device"))
    limits = self->device_limits;
  else if (!inspector_sm_limits_for_arch (id, &limits, &error))
    {
      set_summary (self, error->message);
      return;
    }
  if (!inspector_occupancy_compute (&limits, (gint) res->registers, res->shared_bytes,
                                    (guint) gtk_spin_button_get_value_as_int (self->shared_spin),
                                    gtk_spin_button_get_value_as_int (self->block_spin), &self->result, &error))
    {
      set_summary (self, error->message);
      return;
    }
  self->have_result = TRUE;
  gtk_level_bar_set_value (self->level, self->result.occupancy);
  if (self->result.blocks_per_sm == 0)
    /* Translators: %s is a resource, e.g. "Registers" */
    text = g_strdup_printf (_("A block of this size cannot run on this SM: not enough %s."),
                            inspector_occupancy_limit_to_string (self->result.limited_by));
  else
    /* Translators: occupancy in percent, blocks, warps, warps, the limiting resource */
    text = g_strdup_printf (_("%.0f %% — %d blocks, %d of %d warps per SM; limited by %s"),
                            100.0 * self->result.occupancy, self->result.blocks_per_sm, self->result.warps_per_sm,
                            self->result.max_warps_per_sm,
                            inspector_occupancy_limit_to_string (self->result.limited_by));
  set_summary (self, text);
}

static void
clear_resource_rows (InspectorOccupancyPanel *self)
{
  for (guint i = 0; i < self->resource_rows->len; i++)
    adw_preferences_group_remove (self->resources_group, g_ptr_array_index (self->resource_rows, i));
  g_ptr_array_set_size (self->resource_rows, 0);
}

static void
add_resource_row (InspectorOccupancyPanel *self,
                  const gchar             *title,
                  const gchar             *subtitle)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree gchar *escaped = g_markup_escape_text (subtitle, -1);

  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped);
  adw_preferences_group_add (self->resources_group, row);
  g_ptr_array_add (self->resource_rows, row);
}

/* The architectures offered: this GPU first when there is one. */
static void
rebuild_archs (InspectorOccupancyPanel *self,
               const gchar             *select)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->arch_labels));
  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  guint chosen = 0;

  g_ptr_array_set_size (self->arch_ids, 0);
  if (self->device_arch)
    {
      g_ptr_array_add (self->arch_ids, g_strdup ("device"));
      /* Translators: %s is an architecture such as sm_90, %d a number of SMs */
      g_ptr_array_add (labels, g_strdup_printf (_("This GPU (%s, %d SMs)"), self->device_arch,
                                                self->device_limits.n_sms));
    }
  for (const gchar * const *a = inspector_sm_limits_list_archs (); *a; a++)
    {
      g_ptr_array_add (self->arch_ids, g_strdup (*a));
      g_ptr_array_add (labels, g_strdup (*a));
    }
  g_ptr_array_add (labels, NULL);
  for (guint i = 0; i < self->arch_ids->len; i++)
    if (g_strcmp0 (g_ptr_array_index (self->arch_ids, i), select) == 0)
      {
        chosen = i;
        break;
      }
  g_signal_handlers_block_by_func (self->arch_row, recompute, self);
  gtk_string_list_splice (self->arch_labels, 0, n, (const gchar * const *) labels->pdata);
  adw_combo_row_set_selected (self->arch_row, chosen);
  g_signal_handlers_unblock_by_func (self->arch_row, recompute, self);
}

/* The entry's architecture ("sm_90a" is sm_90's table), or this GPU's
 * when the entry was built for it, or sm_90. */
static gchar *
default_arch (InspectorOccupancyPanel *self)
{
  InspectorSmLimits limits;
  g_autofree gchar *base = NULL;

  if (self->entry_arch && inspector_sm_limits_for_arch (self->entry_arch, &limits, NULL))
    {
      base = g_strdup_printf ("sm_%d%d", limits.major, limits.minor);
      if (self->device_arch && g_str_equal (base, self->device_arch))
        return g_strdup ("device");
      return g_steal_pointer (&base);
    }
  return g_strdup (self->device_arch ? "device" : "sm_90");
}

/**
 * inspector_occupancy_panel_set_resources:
 * @self: the panel
 * @resources: (nullable) (element-type InspectorKernelResources): what each kernel uses
 * @arch: (nullable): the architecture the entry was built for
 * @message: (nullable): why there are no resources, when @resources is %NULL
 *
 * Shows @resources and computes the occupancy of the first kernel.
 */
void
inspector_occupancy_panel_set_resources (InspectorOccupancyPanel *self,
                                         GPtrArray               *resources,
                                         const gchar             *arch,
                                         const gchar             *message)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->kernel_names));
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autofree gchar *select = NULL;

  g_return_if_fail (INSPECTOR_IS_OCCUPANCY_PANEL (self));
  g_clear_pointer (&self->resources, g_ptr_array_unref);
  self->resources = resources ? g_ptr_array_ref (resources) : NULL;
  g_free (self->entry_arch);
  self->entry_arch = g_strdup (arch);
  clear_resource_rows (self);
  for (guint i = 0; resources && i < resources->len; i++)
    {
      InspectorKernelResources *r = g_ptr_array_index (resources, i);
      g_autofree gchar *shared = g_format_size_full (r->shared_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree gchar *stack = g_format_size_full (r->stack_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree gchar *stores = g_format_size_full (r->spill_stores, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree gchar *loads = g_format_size_full (r->spill_loads, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree gchar *sub = NULL;

      if (r->spills_known)
        /* Translators: registers, shared memory, stack (local memory), spill stores, spill loads of a kernel */
        sub = g_strdup_printf (_("%u registers · %s static shared memory · %s stack (local memory) · "
                                 "spills: %s stored, %s loaded"),
                               r->registers, shared, stack, stores, loads);
      else
        /* Translators: registers, shared memory, stack (local memory) of a kernel */
        sub = g_strdup_printf (_("%u registers · %s static shared memory · %s stack (local memory) · "
                                 "spills: unknown"),
                               r->registers, shared, stack);

      add_resource_row (self, r->function, sub);
      g_ptr_array_add (names, r->function);
    }
  if (resources == NULL || resources->len == 0)
    add_resource_row (self, _("No Resources"), message ? message : _("The entry has no kernel in its CUBIN."));
  g_ptr_array_add (names, NULL);
  g_signal_handlers_block_by_func (self->kernel_row, recompute, self);
  gtk_string_list_splice (self->kernel_names, 0, n, (const gchar * const *) names->pdata);
  adw_combo_row_set_selected (self->kernel_row, 0);
  g_signal_handlers_unblock_by_func (self->kernel_row, recompute, self);
  select = default_arch (self);
  rebuild_archs (self, select);
  recompute (self);
}

static void
on_device (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  InspectorOccupancyPanel *self = user_data;
  g_autoptr(AtomrDevice) device = g_task_propagate_pointer (G_TASK (result), NULL);
  g_autofree gchar *keep = NULL;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    {
      g_object_unref (self);
      return;
    }
  g_clear_object (&self->probing);
  if (device && inspector_sm_limits_for_device (device, &self->device_limits, NULL))
    {
      self->device_arch = g_strdup_printf ("sm_%d%d", self->device_limits.major, self->device_limits.minor);
      keep = g_strdup (selected_arch_id (self));
      if (self->resources)
        {
          g_free (keep);
          keep = default_arch (self);
        }
      rebuild_archs (self, keep);
      recompute (self);
    }
  g_object_unref (self);
}

static void
probe_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  g_autoptr(GError) error = NULL;
  AtomrDevice *device = atomr_device_get (0, &error);

  if (device == NULL)
    g_debug ("occupancy without a GPU: %s", error->message);
  g_task_return_pointer (task, device, g_object_unref);
}

/**
 * inspector_occupancy_panel_dup_target_arch:
 * @self: the panel
 *
 * Returns: (transfer full) (nullable): the chosen architecture as sm_XX
 *   (this GPU's for "device")
 */
gchar *
inspector_occupancy_panel_dup_target_arch (InspectorOccupancyPanel *self)
{
  const gchar *id = selected_arch_id (self);

  if (g_strcmp0 (id, "device") == 0)
    return g_strdup (self->device_arch);
  return g_strdup (id);
}

/**
 * inspector_occupancy_panel_set_description:
 * @self: the panel
 * @text: where the resources come from, or why spills are unknown
 */
void
inspector_occupancy_panel_set_description (InspectorOccupancyPanel *self,
                                           const gchar             *text)
{
  g_autofree gchar *escaped = g_markup_escape_text (text ? text : "", -1);

  adw_preferences_group_set_description (self->resources_group, escaped);
}

/**
 * inspector_occupancy_panel_get_description:
 * @self: the panel
 *
 * Returns: (transfer full): the Resources group's description, unescaped
 */
gchar *
inspector_occupancy_panel_get_description (InspectorOccupancyPanel *self)
{
  const gchar *markup = adw_preferences_group_get_description (self->resources_group);
  gchar *text = NULL;

  if (markup == NULL || !pango_parse_markup (markup, -1, 0, NULL, &text, NULL, NULL))
    return g_strdup (markup ? markup : "");
  return text;
}

/**
 * inspector_occupancy_panel_get_analyse_button:
 * @self: the panel
 *
 * Returns: (transfer none): the Analyse button (action cache.analyse)
 */
GtkWidget *
inspector_occupancy_panel_get_analyse_button (InspectorOccupancyPanel *self)
{
  return self->analyse_button;
}

/**
 * inspector_occupancy_panel_dup_kernel_subtitle:
 * @self: the panel
 * @i: a kernel's index
 *
 * Returns: (transfer full) (nullable): what the panel says @i uses, as shown
 */
gchar *
inspector_occupancy_panel_dup_kernel_subtitle (InspectorOccupancyPanel *self,
                                               guint                    i)
{
  const gchar *markup;
  gchar *text = NULL;

  if (self->resources == NULL || i >= self->resources->len || i >= self->resource_rows->len)
    return NULL;
  markup = adw_action_row_get_subtitle (g_ptr_array_index (self->resource_rows, i));
  if (markup == NULL || !pango_parse_markup (markup, -1, 0, NULL, &text, NULL, NULL))
    return g_strdup (markup);
  return text;
}

/**
 * inspector_occupancy_panel_get_n_kernels:
 * @self: the panel
 *
 * Returns: the kernels shown
 */
guint
inspector_occupancy_panel_get_n_kernels (InspectorOccupancyPanel *self)
{
  return self->resources ? self->resources->len : 0;
}

/**
 * inspector_occupancy_panel_get_result:
 * @self: the panel
 *
 * Returns: (nullable): the occupancy shown, %NULL when none is
 */
const InspectorOccupancy *
inspector_occupancy_panel_get_result (InspectorOccupancyPanel *self)
{
  return self->have_result ? &self->result : NULL;
}

/**
 * inspector_occupancy_panel_get_arch:
 * @self: the panel
 *
 * Returns: (nullable): the chosen architecture, "device" for this GPU
 */
const gchar *
inspector_occupancy_panel_get_arch (InspectorOccupancyPanel *self)
{
  return selected_arch_id (self);
}

/**
 * inspector_occupancy_panel_get_block_spin:
 * @self: the panel
 *
 * Returns: (transfer none): the threads-per-block field
 */
GtkSpinButton *
inspector_occupancy_panel_get_block_spin (InspectorOccupancyPanel *self)
{
  return self->block_spin;
}

/**
 * inspector_occupancy_panel_get_summary:
 * @self: the panel
 *
 * Returns: (transfer full): the result line as shown
 */
gchar *
inspector_occupancy_panel_get_summary (InspectorOccupancyPanel *self)
{
  return g_strdup (self->summary ? self->summary : "");
}

GtkWidget *
inspector_occupancy_panel_new (void)
{
  return g_object_new (INSPECTOR_TYPE_OCCUPANCY_PANEL, NULL);
}

static void
inspector_occupancy_panel_dispose (GObject *object)
{
  InspectorOccupancyPanel *self = INSPECTOR_OCCUPANCY_PANEL (object);

  g_cancellable_cancel (self->probing);
  g_clear_object (&self->probing);
  g_clear_pointer (&self->scrolled, gtk_widget_unparent);
  g_clear_pointer (&self->resource_rows, g_ptr_array_unref);
  g_clear_pointer (&self->resources, g_ptr_array_unref);
  g_clear_pointer (&self->arch_ids, g_ptr_array_unref);
  g_clear_object (&self->kernel_names);
  g_clear_object (&self->arch_labels);
  g_clear_pointer (&self->entry_arch, g_free);
  g_clear_pointer (&self->device_arch, g_free);
  g_clear_pointer (&self->summary, g_free);
  G_OBJECT_CLASS (inspector_occupancy_panel_parent_class)->dispose (object);
}

static void
inspector_occupancy_panel_class_init (InspectorOccupancyPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_occupancy_panel_dispose;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static GtkSpinButton *
add_spin_row (AdwPreferencesGroup *group,
              const gchar         *title,
              const gchar         *subtitle,
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
  if (subtitle)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), spin);
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), spin);
  gtk_accessible_update_relation (GTK_ACCESSIBLE (spin), GTK_ACCESSIBLE_RELATION_LABELLED_BY, row, NULL, -1);
  adw_preferences_group_add (group, row);
  return GTK_SPIN_BUTTON (spin);
}

static void
inspector_occupancy_panel_init (InspectorOccupancyPanel *self)
{
  GtkWidget *clamp = adw_clamp_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 18);
  AdwPreferencesGroup *calc = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  GtkWidget *result_box;

  self->resource_rows = g_ptr_array_new ();
  self->arch_ids = g_ptr_array_new_with_free_func (g_free);
  self->kernel_names = gtk_string_list_new (NULL);
  self->arch_labels = gtk_string_list_new (NULL);

  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_widget_set_parent (self->scrolled, GTK_WIDGET (self));
  adw_clamp_set_maximum_size (ADW_CLAMP (clamp), 720);
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 12);
  gtk_widget_set_margin_bottom (box, 12);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), clamp);
  adw_clamp_set_child (ADW_CLAMP (clamp), box);

  self->resources_group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  adw_preferences_group_set_title (self->resources_group, _("Resources per Kernel"));
  adw_preferences_group_set_description (self->resources_group,
                                         _("Read from the entry’s CUBIN, as cuobjdump --dump-resource-usage does"));
  /* spills come from ptxas: recorded at compile time, else asked on demand */
  self->analyse_button = gtk_button_new_with_mnemonic (_("A_nalyse"));
  gtk_widget_set_valign (self->analyse_button, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (self->analyse_button,
                               _("Ask ptxas (through nvJitLink) what each kernel uses, spills included"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->analyse_button), "cache.analyse");
  adw_preferences_group_set_header_suffix (self->resources_group, self->analyse_button);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->resources_group));

  adw_preferences_group_set_title (calc, _("Occupancy Calculator"));
  adw_preferences_group_set_description (calc, _("Theoretical occupancy of one SM, by the CUDA occupancy "
                                                 "calculator’s rules"));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (calc));
  self->kernel_row = ADW_COMBO_ROW (adw_combo_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->kernel_row), _("_Kernel"));
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (self->kernel_row), TRUE);
  adw_combo_row_set_model (self->kernel_row, G_LIST_MODEL (self->kernel_names));
  adw_preferences_group_add (calc, GTK_WIDGET (self->kernel_row));
  self->arch_row = ADW_COMBO_ROW (adw_combo_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->arch_row), _("_Architecture"));
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (self->arch_row), TRUE);
  adw_combo_row_set_model (self->arch_row, G_LIST_MODEL (self->arch_labels));
  adw_preferences_group_add (calc, GTK_WIDGET (self->arch_row));
  self->block_spin = add_spin_row (calc, _("Threads per _Block"), NULL, 1, 1024, 32, 256);
  self->shared_spin = add_spin_row (calc, _("_Dynamic Shared Memory"), _("Bytes per block, at launch"),
                                    0, 227 * 1024, 1024, 0);

  self->result_row = ADW_ACTION_ROW (adw_action_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->result_row), _("Theoretical Occupancy"));
  result_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  self->level = GTK_LEVEL_BAR (gtk_level_bar_new_for_interval (0, 1));
  gtk_widget_set_size_request (GTK_WIDGET (self->level), 96, -1);
  gtk_widget_set_valign (GTK_WIDGET (self->level), GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (result_box), GTK_WIDGET (self->level));
  adw_action_row_add_suffix (self->result_row, result_box);
  adw_preferences_group_add (calc, GTK_WIDGET (self->result_row));

  g_signal_connect_swapped (self->kernel_row, "notify::selected", G_CALLBACK (recompute), self);
  g_signal_connect_swapped (self->arch_row, "notify::selected", G_CALLBACK (recompute), self);
  g_signal_connect_swapped (self->block_spin, "value-changed", G_CALLBACK (recompute), self);
  g_signal_connect_swapped (self->shared_spin, "value-changed", G_CALLBACK (recompute), self);

  rebuild_archs (self, "sm_90");
  inspector_occupancy_panel_set_resources (self, NULL, NULL, _("Select a cache entry."));

  /* this GPU, when there is one (the driver loads in a worker) */
  self->probing = g_cancellable_new ();
  {
    g_autoptr(GTask) task = g_task_new (NULL, self->probing, on_device, g_object_ref (self));
    g_task_run_in_thread (task, probe_thread);
  }
}
