/* test-inspector-plugins.c — libpeas plugins in the inspector (issue 20)
 *
 * The two example plugins (examples/plugins: C and Python), found through
 * ATOMR_INSPECTOR_PLUGIN_PATH, loaded into a real window: activation adds
 * their page and their mark on the window, unloading takes both back; the
 * preferences' plugin manager loads and unloads them with its switches
 * and remembers them in enabled-plugins.  Runs under Xvfb.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gstdio.h>

#include "inspector-application.h"
#include "inspector-plugins.h"
#include "inspector-preferences.h"
#include "inspector-window.h"
#include "inspector-trace-model.h"
#include "inspector-cache-model.h"
#include "inspector-cache-page.h"
#include "inspector-trace-page.h"

static InspectorApplication *app;

static void
iterate (void)
{
  for (guint i = 0; i < 50 && g_main_context_iteration (NULL, FALSE); i++)
    ;
}

static GtkWidget *
find_named (GtkWidget   *root,
            const gchar *name)
{
  if (g_strcmp0 (gtk_widget_get_name (root), name) == 0)
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_named (c, name);
      if (found)
        return found;
    }
  return NULL;
}

static AdwViewStack *
window_stack (InspectorWindow *window)
{
  /* The stack the pages live in: the parent of the Cache page. */
  GtkWidget *w = GTK_WIDGET (inspector_window_get_cache_page (window));

  while (w && !ADW_IS_VIEW_STACK (w))
    w = gtk_widget_get_parent (w);
  g_assert_nonnull (w);
  return ADW_VIEW_STACK (w);
}

/* The label of item @i of the providers' menu section. */
static gchar *
plugin_menu_label (InspectorWindow *window,
                   gint             i)
{
  GMenuModel *menu = inspector_window_get_plugin_menu (window);
  gchar *label = NULL;

  g_assert_cmpint (i, <, g_menu_model_get_n_items (menu));
  g_assert_true (g_menu_model_get_item_attribute (menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label));
  return label;
}

static PeasPluginInfo *
plugin (const gchar *module)
{
  PeasPluginInfo *info = peas_engine_get_plugin_info (inspector_plugins_get_engine (), module);

  if (info == NULL)
    g_error ("plugin %s not found in ATOMR_INSPECTOR_PLUGIN_PATH=%s", module,
             g_getenv ("ATOMR_INSPECTOR_PLUGIN_PATH"));
  return info;
}

static void
test_c_plugin (void)
{
  InspectorWindow *window = inspector_window_new (ADW_APPLICATION (app));
  PeasEngine *engine = inspector_plugins_get_engine ();
  PeasPluginInfo *info = plugin ("hello-c");
  g_autofree gchar *title = NULL;
  AdwViewStack *stack = window_stack (window);
  GtkWidget *page;

  gtk_window_present (GTK_WINDOW (window));
  iterate ();
  title = g_strdup (gtk_window_get_title (GTK_WINDOW (window)));
  g_assert_false (peas_plugin_info_is_loaded (info));
  g_assert_null (adw_view_stack_get_child_by_name (stack, "plugin-hello-c"));

  g_assert_true (peas_engine_load_plugin (engine, info));
  iterate ();
  g_assert_true (g_str_has_suffix (gtk_window_get_title (GTK_WINDOW (window)), " — Hello from C"));
  page = adw_view_stack_get_child_by_name (stack, "plugin-hello-c");
  g_assert_nonnull (page);
  g_assert_cmpstr (adw_view_stack_page_get_title (adw_view_stack_get_page (stack, page)), ==, "Hello (C)");
  g_assert_nonnull (find_named (page, "hello-c-label"));
  inspector_window_set_page (window, "plugin-hello-c");
  g_assert_cmpstr (inspector_window_get_page (window), ==, "plugin-hello-c");

  /* its kernel cache folder: a menu item, shown on the Cache page */
  {
    g_autofree gchar *dir = g_dir_make_tmp ("hello-cache-XXXXXX", NULL);
    g_autofree gchar *label = plugin_menu_label (window, 0);
    InspectorCacheModel *model = inspector_cache_page_get_model (inspector_window_get_cache_page (window));

    g_assert_cmpstr (label, ==, "Show Kernel Cache From “Hello Cache”");
    g_setenv ("HELLO_CACHE_DIR", dir, TRUE);
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-provided-cache", "s", "hello-c"));
    iterate ();
    g_assert_cmpstr (inspector_cache_model_get_directory (model), ==, dir);
    g_assert_cmpstr (inspector_window_get_page (window), ==, "cache");
    g_unsetenv ("HELLO_CACHE_DIR");
    g_rmdir (dir);
  }

  g_assert_true (peas_engine_unload_plugin (engine, info));
  iterate ();
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (window)), ==, title);
  g_assert_null (adw_view_stack_get_child_by_name (stack, "plugin-hello-c"));
  g_assert_cmpint (g_menu_model_get_n_items (inspector_window_get_plugin_menu (window)), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  iterate ();
}

static void
test_python_plugin (void)
{
  InspectorWindow *window = inspector_window_new (ADW_APPLICATION (app));
  PeasEngine *engine = inspector_plugins_get_engine ();
  PeasPluginInfo *info = plugin ("hello_py");
  g_autoptr(GError) error = NULL;
  AdwViewStack *stack = window_stack (window);
  GtkWidget *page;

  gtk_window_present (GTK_WINDOW (window));
  iterate ();
  g_assert_true (peas_plugin_info_is_available (info, &error));
  g_assert_no_error (error);
  g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (window), "atomr-hello-python"));

  g_assert_true (peas_engine_load_plugin (engine, info));
  iterate ();
  g_assert_true (peas_plugin_info_is_loaded (info));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (window), "atomr-hello-python"));
  page = adw_view_stack_get_child_by_name (stack, "plugin-hello_py");
  g_assert_nonnull (page);
  g_assert_cmpstr (adw_view_stack_page_get_title (adw_view_stack_get_page (stack, page)), ==, "Hello (Python)");
  g_assert_nonnull (find_named (page, "hello-py-label"));

  /* its trace: a menu item, opened on the Trace page (parsed in a worker) */
  {
    g_autofree gchar *label = plugin_menu_label (window, 0);
    InspectorTraceModel *model = inspector_trace_page_get_model (inspector_window_get_trace_page (window));

    g_assert_cmpstr (label, ==, "Open Trace From “Hello Trace”");
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-provided-trace", "s", "hello_py"));
    for (guint i = 0; i < 500 && inspector_trace_model_get_n_slices (model) != 2; i++)
      {
        g_main_context_iteration (NULL, FALSE);
        g_usleep (10000);
      }
    g_assert_cmpuint (inspector_trace_model_get_n_slices (model), ==, 2);
    g_assert_cmpstr (inspector_window_get_page (window), ==, "trace");
  }

  /* A second window gets its own extension, activated at once. */
  {
    InspectorWindow *second = inspector_window_new (ADW_APPLICATION (app));
    gtk_window_present (GTK_WINDOW (second));
    iterate ();
    g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (second), "atomr-hello-python"));
    g_assert_nonnull (adw_view_stack_get_child_by_name (window_stack (second), "plugin-hello_py"));
    gtk_window_destroy (GTK_WINDOW (second));
    iterate ();
  }

  g_assert_true (peas_engine_unload_plugin (engine, info));
  iterate ();
  g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (window), "atomr-hello-python"));
  g_assert_null (adw_view_stack_get_child_by_name (stack, "plugin-hello_py"));
  gtk_window_destroy (GTK_WINDOW (window));
  iterate ();
}

static void
test_plugin_manager (void)
{
  InspectorWindow *window = inspector_window_new (ADW_APPLICATION (app));
  InspectorPreferences *prefs = inspector_preferences_new (GTK_WINDOW (window));
  g_autoptr(GSettings) settings = g_settings_new ("io.github.atomr.Inspector");
  g_auto(GStrv) enabled = NULL;
  GtkSwitch *sw_c, *sw_py;

  gtk_window_present (GTK_WINDOW (prefs));
  iterate ();
  sw_c = inspector_preferences_get_plugin_switch (prefs, "hello-c");
  sw_py = inspector_preferences_get_plugin_switch (prefs, "hello_py");
  g_assert_nonnull (sw_c);
  g_assert_nonnull (sw_py);
  g_assert_nonnull (find_named (GTK_WIDGET (prefs), "hello-c"));   /* the rows */
  g_assert_nonnull (find_named (GTK_WIDGET (prefs), "hello_py"));
  g_assert_false (gtk_switch_get_active (sw_c));

  gtk_switch_set_active (sw_c, TRUE);
  gtk_switch_set_active (sw_py, TRUE);
  iterate ();
  g_assert_true (peas_plugin_info_is_loaded (plugin ("hello-c")));
  g_assert_true (peas_plugin_info_is_loaded (plugin ("hello_py")));
  g_assert_nonnull (adw_view_stack_get_child_by_name (window_stack (window), "plugin-hello-c"));
  enabled = g_settings_get_strv (settings, "enabled-plugins");
  g_assert_true (g_strv_contains ((const gchar * const *) enabled, "hello-c"));
  g_assert_true (g_strv_contains ((const gchar * const *) enabled, "hello_py"));
  g_clear_pointer (&enabled, g_strfreev);

  /* Unloaded elsewhere: the switch follows. */
  peas_engine_unload_plugin (inspector_plugins_get_engine (), plugin ("hello_py"));
  iterate ();
  g_assert_false (gtk_switch_get_active (sw_py));

  gtk_switch_set_active (sw_c, FALSE);
  iterate ();
  g_assert_false (peas_plugin_info_is_loaded (plugin ("hello-c")));
  g_assert_null (adw_view_stack_get_child_by_name (window_stack (window), "plugin-hello-c"));
  enabled = g_settings_get_strv (settings, "enabled-plugins");
  g_assert_cmpuint (g_strv_length (enabled), ==, 0);

  gtk_window_destroy (GTK_WINDOW (prefs));
  gtk_window_destroy (GTK_WINDOW (window));
  iterate ();
}

int
main (int    argc,
      char **argv)
{
  int ret;

  g_setenv ("GSK_RENDERER", "cairo", TRUE);
  g_setenv ("GDK_BACKEND", "x11", TRUE);
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  g_test_init (&argc, &argv, NULL);
  /* Warnings of the session (no D-Bus under Xvfb) are not ours. */
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  if (!gtk_init_check ())
    {
      g_test_message ("no display");
      return 77;
    }
  adw_init ();
  app = inspector_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));

  g_test_add_func ("/inspector/plugins/c", test_c_plugin);
  g_test_add_func ("/inspector/plugins/python", test_python_plugin);
  g_test_add_func ("/inspector/plugins/manager", test_plugin_manager);
  ret = g_test_run ();
  g_clear_object (&app);
  return ret;
}
