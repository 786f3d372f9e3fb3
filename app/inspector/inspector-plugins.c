/* inspector-plugins.c — the libpeas engine and each window's extensions
 *
 * One engine per process (main thread only), made on first use: the
 * python3 loader enabled, plugins searched in $ATOMR_INSPECTOR_PLUGIN_PATH
 * (colon-separated; the tests use it), the user's data directory
 * (~/.local/share/atomr-inspector/plugins) and LIBDIR/atomr-inspector/plugins.
 * Which plugins are loaded is the GSettings key enabled-plugins, bound to
 * the engine's loaded-plugins: loading one in the preferences enables it
 * for the next start.
 *
 * Each window gets a PeasExtensionSet of AtomrInspectorExtension made with
 * its "window": an extension is activated when its plugin loads (and its
 * page, if it is an AtomrInspectorPageProvider, added to the window) and
 * deactivated when the plugin unloads or the window leaves the application
 * (gtk_window_destroy()).  Trace and cache providers get menu items in the
 * window (“Open Trace From …”, “Show Kernel Cache From …”).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-inspector.h"
#include "inspector-plugins.h"

#define PAGE_KEY "inspector-plugin-page"
#define SET_KEY "inspector-plugin-set"

static void
add_search_path (PeasEngine  *engine,
                 const gchar *dir)
{
  if (dir != NULL && *dir != '\0')
    peas_engine_add_search_path (engine, dir, dir);
}

PeasEngine *
inspector_plugins_get_engine (void)
{
  static PeasEngine *engine;

  if (engine == NULL)
    {
      const gchar *env = g_getenv ("ATOMR_INSPECTOR_PLUGIN_PATH");
      g_autofree gchar *user_dir = g_build_filename (g_get_user_data_dir (), "atomr-inspector", "plugins", NULL);
      g_autoptr(GSettings) settings = g_settings_new ("io.github.atomr.Inspector");

      engine = peas_engine_new ();
      peas_engine_enable_loader (engine, "python3");
      if (env != NULL)
        {
          g_auto(GStrv) dirs = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);
          for (guint i = 0; dirs[i]; i++)
            add_search_path (engine, dirs[i]);
        }
      add_search_path (engine, user_dir);
      add_search_path (engine, ATOMR_INSPECTOR_PLUGINDIR);
      /* The engine keeps the binding (and the settings) alive. */
      g_settings_bind (settings, "enabled-plugins", engine, "loaded-plugins", G_SETTINGS_BIND_DEFAULT);
    }
  return engine;
}

static void
extension_added (PeasExtensionSet *set,
                 PeasPluginInfo   *info,
                 PeasExtension    *exten,
                 gpointer          user_data)
{
  InspectorWindow *window = user_data;

  atomr_inspector_extension_activate (ATOMR_INSPECTOR_EXTENSION (exten));
  if (ATOMR_INSPECTOR_IS_TRACE_PROVIDER (exten) || ATOMR_INSPECTOR_IS_CACHE_PROVIDER (exten))
    inspector_window_add_provider (window, peas_plugin_info_get_module_name (info), G_OBJECT (exten));
  if (ATOMR_INSPECTOR_IS_PAGE_PROVIDER (exten))
    {
      AtomrInspectorPageProvider *provider = ATOMR_INSPECTOR_PAGE_PROVIDER (exten);
      GtkWidget *page = atomr_inspector_page_provider_create_page (provider);
      g_autofree gchar *name = g_strconcat ("plugin-", peas_plugin_info_get_module_name (info), NULL);

      if (page == NULL)
        return;
      g_object_ref_sink (page);
      inspector_window_add_page (window, name, atomr_inspector_page_provider_get_title (provider), page);
      g_object_unref (page);
      g_object_set_data_full (G_OBJECT (exten), PAGE_KEY, g_steal_pointer (&name), g_free);
    }
}

static void
extension_removed (PeasExtensionSet *set,
                   PeasPluginInfo   *info,
                   PeasExtension    *exten,
                   gpointer          user_data)
{
  InspectorWindow *window = user_data;
  const gchar *page = g_object_get_data (G_OBJECT (exten), PAGE_KEY);

  inspector_window_remove_provider (window, peas_plugin_info_get_module_name (info));

  if (page != NULL)
    {
      inspector_window_remove_page (window, page);
      g_object_set_data (G_OBJECT (exten), PAGE_KEY, NULL);
    }
  atomr_inspector_extension_deactivate (ATOMR_INSPECTOR_EXTENSION (exten));
}

/* Takes the extensions back from @window and drops its set (which holds a
 * reference on the window through its "window" parameter). */
static void
detach (GtkWindow *window)
{
  PeasExtensionSet *set = g_object_get_data (G_OBJECT (window), SET_KEY);

  if (set == NULL)
    return;
  g_signal_handlers_disconnect_by_data (set, window);
  peas_extension_set_foreach (set, extension_removed, window);
  g_object_set_data (G_OBJECT (window), SET_KEY, NULL);
}

/* GTK 4's gtk_window_destroy() does not dispose the window (the set's
 * reference would keep it alive for good): it leaves the application,
 * which is when its extensions go. */
static void
on_window_removed (GtkApplication *application,
                   GtkWindow      *window,
                   gpointer        user_data)
{
  detach (window);
}

static void
on_destroy (GtkWidget *window,
            gpointer   user_data)
{
  detach (GTK_WINDOW (window));
}

void
inspector_plugins_attach (InspectorWindow *window)
{
  GtkApplication *application = gtk_window_get_application (GTK_WINDOW (window));
  PeasExtensionSet *set;

  set = peas_extension_set_new (inspector_plugins_get_engine (), ATOMR_INSPECTOR_TYPE_EXTENSION,
                                "window", window, NULL);
  g_object_set_data_full (G_OBJECT (window), SET_KEY, set, g_object_unref);
  peas_extension_set_foreach (set, extension_added, window);
  g_signal_connect (set, "extension-added", G_CALLBACK (extension_added), window);
  g_signal_connect (set, "extension-removed", G_CALLBACK (extension_removed), window);
  g_signal_connect (window, "destroy", G_CALLBACK (on_destroy), NULL);
  if (application != NULL && g_object_get_data (G_OBJECT (application), "inspector-plugins") == NULL)
    {
      g_object_set_data (G_OBJECT (application), "inspector-plugins", GINT_TO_POINTER (1));
      g_signal_connect (application, "window-removed", G_CALLBACK (on_window_removed), NULL);
    }
}
