/* inspector-preferences.c — the preferences window: the plugin manager
 *
 * One row per plugin the engine found (hidden ones excepted): its name,
 * description and language, and a switch that loads or unloads it.  The
 * switches follow the engine (a plugin loaded elsewhere shows as on); a
 * plugin that cannot be loaded shows why and its switch is insensitive.
 * Loaded plugins are remembered through the enabled-plugins key
 * (inspector-plugins.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-plugins.h"
#include "inspector-preferences.h"

struct _InspectorPreferences
{
  AdwPreferencesWindow parent_instance;

  PeasEngine          *engine;
  AdwPreferencesGroup *group;
  GHashTable          *switches;   /* module name -> GtkSwitch (owned by its row) */
  GPtrArray           *rows;
  gboolean             syncing;
};

G_DEFINE_FINAL_TYPE (InspectorPreferences, inspector_preferences, ADW_TYPE_PREFERENCES_WINDOW)

static void
on_switch_active (GtkSwitch            *sw,
                  GParamSpec           *pspec,
                  InspectorPreferences *self)
{
  PeasPluginInfo *info = g_object_get_data (G_OBJECT (sw), "plugin-info");

  if (self->syncing)
    return;
  if (gtk_switch_get_active (sw))
    peas_engine_load_plugin (self->engine, info);
  else
    peas_engine_unload_plugin (self->engine, info);
  /* A plugin that failed to load stays off. */
  self->syncing = TRUE;
  gtk_switch_set_active (sw, peas_plugin_info_is_loaded (info));
  self->syncing = FALSE;
}

static void
sync_switches (InspectorPreferences *self)
{
  GHashTableIter iter;
  gpointer sw;

  self->syncing = TRUE;
  g_hash_table_iter_init (&iter, self->switches);
  while (g_hash_table_iter_next (&iter, NULL, &sw))
    gtk_switch_set_active (sw, peas_plugin_info_is_loaded (g_object_get_data (sw, "plugin-info")));
  self->syncing = FALSE;
}

static void
on_plugin_changed (PeasEngine           *engine,
                   PeasPluginInfo       *info,
                   InspectorPreferences *self)
{
  sync_switches (self);
}

static void
rebuild (InspectorPreferences *self)
{
  for (guint i = 0; i < self->rows->len; i++)
    adw_preferences_group_remove (self->group, g_ptr_array_index (self->rows, i));
  g_ptr_array_set_size (self->rows, 0);
  g_hash_table_remove_all (self->switches);

  for (const GList *l = peas_engine_get_plugin_list (self->engine); l; l = l->next)
    {
      PeasPluginInfo *info = l->data;
      g_autoptr(GError) error = NULL;
      const gchar *loader = peas_plugin_info_get_external_data (info, "Loader");
      GtkWidget *row, *sw;
      g_autofree gchar *subtitle = NULL;
      gboolean available;

      if (peas_plugin_info_is_hidden (info))
        continue;
      available = peas_plugin_info_is_available (info, &error);
      subtitle = g_strdup_printf ("%s\n%s", peas_plugin_info_get_description (info) ?: "",
                                  !available && error ? error->message
                                  : loader && g_str_equal (loader, "python3") ? _("Python plugin")
                                  : _("C plugin"));
      row = adw_action_row_new ();
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), peas_plugin_info_get_name (info));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
      gtk_widget_set_name (row, peas_plugin_info_get_module_name (info));
      sw = gtk_switch_new ();
      gtk_widget_set_valign (sw, GTK_ALIGN_CENTER);
      gtk_widget_set_sensitive (sw, available);
      gtk_accessible_update_property (GTK_ACCESSIBLE (sw), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      peas_plugin_info_get_name (info), -1);
      g_object_set_data (G_OBJECT (sw), "plugin-info", info);
      gtk_switch_set_active (GTK_SWITCH (sw), peas_plugin_info_is_loaded (info));
      g_signal_connect (sw, "notify::active", G_CALLBACK (on_switch_active), self);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), sw);
      adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), sw);
      adw_preferences_group_add (self->group, row);
      g_ptr_array_add (self->rows, row);
      g_hash_table_insert (self->switches, g_strdup (peas_plugin_info_get_module_name (info)), sw);
    }
  if (self->rows->len == 0)
    adw_preferences_group_set_description (self->group,
                                           _("No plugins were found. Put plugins in "
                                             "~/.local/share/atomr-inspector/plugins."));
}

static void
inspector_preferences_dispose (GObject *object)
{
  InspectorPreferences *self = INSPECTOR_PREFERENCES (object);

  if (self->engine)
    g_signal_handlers_disconnect_by_data (self->engine, self);
  g_clear_object (&self->engine);
  G_OBJECT_CLASS (inspector_preferences_parent_class)->dispose (object);
}

static void
inspector_preferences_finalize (GObject *object)
{
  InspectorPreferences *self = INSPECTOR_PREFERENCES (object);

  g_hash_table_unref (self->switches);
  g_ptr_array_unref (self->rows);
  G_OBJECT_CLASS (inspector_preferences_parent_class)->finalize (object);
}

static void
inspector_preferences_class_init (InspectorPreferencesClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = inspector_preferences_dispose;
  object_class->finalize = inspector_preferences_finalize;
}

static void
inspector_preferences_init (InspectorPreferences *self)
{
  AdwPreferencesPage *page = ADW_PREFERENCES_PAGE (adw_preferences_page_new ());

  self->switches = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->rows = g_ptr_array_new ();
  self->engine = g_object_ref (inspector_plugins_get_engine ());
  adw_preferences_page_set_title (page, _("Plugins"));
  adw_preferences_page_set_icon_name (page, "application-x-addon-symbolic");
  self->group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  adw_preferences_group_set_title (self->group, _("Plugins"));
  adw_preferences_page_add (page, self->group);
  adw_preferences_window_add (ADW_PREFERENCES_WINDOW (self), page);
  gtk_window_set_title (GTK_WINDOW (self), _("Preferences"));
  rebuild (self);
  g_signal_connect_after (self->engine, "load-plugin", G_CALLBACK (on_plugin_changed), self);
  g_signal_connect_after (self->engine, "unload-plugin", G_CALLBACK (on_plugin_changed), self);
  g_signal_connect_swapped (self->engine, "notify::plugin-list", G_CALLBACK (rebuild), self);
}

InspectorPreferences *
inspector_preferences_new (GtkWindow *parent)
{
  return g_object_new (INSPECTOR_TYPE_PREFERENCES, "transient-for", parent, "modal", TRUE, NULL);
}

/* For tests: the switch of a plugin's row, or NULL. */
GtkSwitch *
inspector_preferences_get_plugin_switch (InspectorPreferences *self,
                                         const gchar          *module_name)
{
  return g_hash_table_lookup (self->switches, module_name);
}
