/* inspector-application.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>

#include "inspector-application.h"
#include "inspector-preferences.h"
#include "inspector-demo.h"
#include "inspector-screenshot.h"
#include "inspector-timeline.h"
#include "inspector-window.h"

/* Command line: FILE... opens traces (*.json) and kernel sources (*.cu);
 * --demo runs the demo; --cache-dir shows another cache.  --screenshot and
 * --screenshot-page (hidden, for the tests) render one page to a PNG once
 * everything is loaded, print what the page shows and quit. */
struct _InspectorApplication
{
  AdwApplication  parent_instance;

  gboolean        demo;
  gchar          *cache_dir;
  gchar          *screenshot;
  gchar          *screenshot_page;
  gint            select;
  gint            shot_width, shot_height;
  gboolean        shot_dark;
  gboolean        compile;
  gboolean        demo_running;
  gint            exit_status;
};

G_DEFINE_FINAL_TYPE (InspectorApplication, inspector_application, ADW_TYPE_APPLICATION)

static InspectorWindow *
get_window (InspectorApplication *self)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  if (window == NULL)
    {
      window = GTK_WINDOW (inspector_window_new (ADW_APPLICATION (self)));
      /* --screenshot-size: the window as a phone or a desktop shows it */
      if (self->shot_width > 0 && self->shot_height > 0)
        gtk_window_set_default_size (window, self->shot_width, self->shot_height);
      if (self->shot_dark)
        adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_FORCE_DARK);
      if (self->cache_dir)
        inspector_window_set_cache_directory (INSPECTOR_WINDOW (window), self->cache_dir);
    }
  return INSPECTOR_WINDOW (window);
}

static gboolean
take_screenshot (gpointer data)
{
  InspectorApplication *self = data;
  InspectorWindow *window = get_window (self);
  InspectorTracePage *trace = inspector_window_get_trace_page (window);
  InspectorCacheModel *cache = inspector_cache_page_get_model (inspector_window_get_cache_page (window));
  InspectorTraceModel *model = inspector_trace_page_get_model (trace);
  InspectorEditorPage *editor = inspector_window_get_editor_page (window);
  g_autoptr(GError) error = NULL;
  int min_width = 0;

  /* how narrow the window may get: the pages fold below that */
  gtk_widget_measure (gtk_window_get_child (GTK_WINDOW (window)), GTK_ORIENTATION_HORIZONTAL, -1,
                      &min_width, NULL, NULL, NULL);
  if (!inspector_screenshot_save (GTK_WIDGET (window), self->screenshot, &error))
    {
      g_printerr ("atomr-inspector: %s\n", error->message);
      self->exit_status = 1;
    }
  /* what the page showed, for the tests to compare with their fixtures */
  g_print ("page=%s cache-entries=%u cache-visible=%u cache-bytes=%" G_GUINT64_FORMAT
           " trace-records=%u trace-gpu=%u trace-tracks=%u trace-flows=%u trace-operations=%u trace-boxes=%u"
           " diagnostics=%u min-width=%d\n",
           self->screenshot_page ? self->screenshot_page : "",
           inspector_cache_model_get_n_entries (cache),
           g_list_model_get_n_items (G_LIST_MODEL (cache)),
           inspector_cache_model_get_total_bytes (cache),
           inspector_trace_model_get_n_slices (model),
           inspector_trace_model_get_n_gpu_slices (model),
           inspector_trace_model_get_n_lanes (model),
           inspector_trace_model_get_n_flows (model),
           g_list_model_get_n_items (inspector_trace_model_get_statistics (model)),
           inspector_trace_page_get_n_drawn_boxes (trace),
           inspector_editor_page_get_n_diagnostics (editor),
           min_width);
  g_application_quit (G_APPLICATION (self));
  return G_SOURCE_REMOVE;
}

static gboolean
prepare_screenshot (gpointer data)
{
  InspectorApplication *self = data;
  InspectorWindow *window = get_window (self);

  if (self->screenshot_page)
    inspector_window_set_page (window, self->screenshot_page);
  if (self->select >= 0)
    {
      inspector_trace_page_select (inspector_window_get_trace_page (window), self->select);
      inspector_cache_page_select (inspector_window_get_cache_page (window), (guint) self->select);
    }
  /* two more layout and paint cycles after the page switch */
  g_timeout_add (700, take_screenshot, self);
  return G_SOURCE_REMOVE;
}

static void
schedule_screenshot (InspectorApplication *self)
{
  if (self->screenshot)
    g_timeout_add (800, prepare_screenshot, self);
}

static void
on_demo_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(InspectorApplication) self = user_data;
  g_autoptr(GError) error = NULL;

  self->demo_running = FALSE;
  g_simple_action_set_enabled (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "demo")), TRUE);
  if (!inspector_demo_run_finish (result, &error))
    {
      g_printerr ("atomr-inspector: demo: %s\n", error->message);
      inspector_window_toast (INSPECTOR_WINDOW (source), error->message);
    }
  schedule_screenshot (self);
}

static void
start_demo (InspectorApplication *self)
{
  if (self->demo_running)
    return;
  self->demo_running = TRUE;
  g_simple_action_set_enabled (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "demo")), FALSE);
  inspector_demo_run_async (get_window (self), NULL, on_demo_done, g_object_ref (self));
}

static void
on_compiled (InspectorEditorPage  *editor,
             gboolean              success,
             InspectorApplication *self)
{
  g_signal_handlers_disconnect_by_func (editor, on_compiled, self);
  schedule_screenshot (self);
}

static void
inspector_application_activate (GApplication *app)
{
  InspectorApplication *self = INSPECTOR_APPLICATION (app);
  InspectorWindow *window = get_window (self);

  gtk_window_present (GTK_WINDOW (window));
  if (self->compile)
    {
      InspectorEditorPage *editor = inspector_window_get_editor_page (window);

      self->compile = FALSE;
      g_signal_connect (editor, "compiled", G_CALLBACK (on_compiled), self);
      inspector_editor_page_compile (editor);
    }
  else if (self->demo)
    {
      self->demo = FALSE;
      start_demo (self);
    }
  else
    schedule_screenshot (self);
}

static void
inspector_application_open (GApplication  *app,
                            GFile        **files,
                            gint           n_files,
                            const gchar   *hint)
{
  InspectorApplication *self = INSPECTOR_APPLICATION (app);
  InspectorWindow *window = get_window (self);

  for (gint i = 0; i < n_files; i++)
    {
      g_autofree gchar *name = g_file_get_basename (files[i]);
      g_autoptr(GError) error = NULL;
      gboolean ok;

      if (g_str_has_suffix (name, ".cu") || g_str_has_suffix (name, ".cuh"))
        {
          /* read in the background, after asking about unsaved edits;
           * --compile needs the text before it starts */
          if (self->compile)
            ok = inspector_editor_page_load_file (inspector_window_get_editor_page (window), files[i], &error);
          else
            {
              inspector_editor_page_open_file (inspector_window_get_editor_page (window), files[i]);
              ok = TRUE;
            }
          inspector_window_set_page (window, "editor");
        }
      else
        {
          /* parsed in a worker thread; errors become toasts */
          inspector_trace_page_open (inspector_window_get_trace_page (window), files[i]);
          inspector_window_set_page (window, "trace");
          ok = TRUE;
        }
      if (!ok)
        {
          g_printerr ("atomr-inspector: %s\n", error->message);
          inspector_window_toast (window, error->message);
          self->exit_status = 1;
        }
    }
  inspector_application_activate (app);
}

static gint
inspector_application_handle_local_options (GApplication *app,
                                            GVariantDict *options)
{
  InspectorApplication *self = INSPECTOR_APPLICATION (app);

  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("atomr-inspector %s\n", PACKAGE_VERSION);
      return 0;
    }
  self->demo = g_variant_dict_contains (options, "demo");
  self->compile = g_variant_dict_contains (options, "compile");
  g_variant_dict_lookup (options, "cache-dir", "^ay", &self->cache_dir);
  g_variant_dict_lookup (options, "screenshot", "^ay", &self->screenshot);
  g_variant_dict_lookup (options, "screenshot-page", "s", &self->screenshot_page);
  if (!g_variant_dict_lookup (options, "select", "i", &self->select))
    self->select = -1;
  self->shot_dark = g_variant_dict_contains (options, "screenshot-dark");
  {
    const gchar *size = NULL;

    if (g_variant_dict_lookup (options, "screenshot-size", "&s", &size) &&
        sscanf (size, "%dx%d", &self->shot_width, &self->shot_height) != 2)
      {
        g_printerr ("atomr-inspector: --screenshot-size must be WIDTHxHEIGHT, not “%s”\n", size);
        return 2;
      }
  }
  if (self->screenshot_page && !g_strv_contains ((const gchar *[]) { "cache", "editor", "trace", NULL },
                                                 self->screenshot_page))
    {
      g_printerr (_("atomr-inspector: --screenshot-page must be cache, editor or trace, not “%s”\n"),
                  self->screenshot_page);
      return 2;
    }
  /* screenshots and demos of a second instance must not end up in the first */
  if (self->screenshot || self->cache_dir)
    g_application_set_flags (app, g_application_get_flags (app) | G_APPLICATION_NON_UNIQUE);
  return -1;
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  InspectorApplication *self = user_data;
  const gchar *developers[] = { "The atomr-accel developers", NULL };
  GtkWidget *about;

  about = adw_about_window_new ();
  gtk_window_set_transient_for (GTK_WINDOW (about), gtk_application_get_active_window (GTK_APPLICATION (self)));
  adw_about_window_set_application_name (ADW_ABOUT_WINDOW (about), _("Atomr Inspector"));
  adw_about_window_set_application_icon (ADW_ABOUT_WINDOW (about), ATOMR_APP_ID);
  adw_about_window_set_version (ADW_ABOUT_WINDOW (about), PACKAGE_VERSION);
  adw_about_window_set_developer_name (ADW_ABOUT_WINDOW (about), _("The atomr-accel developers"));
  adw_about_window_set_developers (ADW_ABOUT_WINDOW (about), developers);
  adw_about_window_set_comments (ADW_ABOUT_WINDOW (about),
                                 _("Browse the kernel cache, edit and compile CUDA kernels with NVRTC, "
                                   "and see what ran on the GPU."));
  adw_about_window_set_website (ADW_ABOUT_WINDOW (about), "https://github.com/atomr/atomr-accel");
  adw_about_window_set_issue_url (ADW_ABOUT_WINDOW (about), "https://github.com/atomr/atomr-accel/issues");
  adw_about_window_set_license_type (ADW_ABOUT_WINDOW (about), GTK_LICENSE_LGPL_2_1);
  /* Translators: put your names here, one per line */
  adw_about_window_set_translator_credits (ADW_ABOUT_WINDOW (about), _("translator-credits"));
  gtk_window_present (GTK_WINDOW (about));
}

static void
demo_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  start_demo (user_data);
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (user_data));

  for (GList *l = windows; l; l = l->next)
    gtk_window_close (l->data);
}

static void
preferences_action (GSimpleAction *action,
                    GVariant      *parameter,
                    gpointer       user_data)
{
  InspectorPreferences *prefs;

  prefs = inspector_preferences_new (gtk_application_get_active_window (GTK_APPLICATION (user_data)));
  gtk_window_present (GTK_WINDOW (prefs));
}

static const GActionEntry app_actions[] = {
  { "about", about_action },
  { "preferences", preferences_action },
  { "demo", demo_action },
  { "quit", quit_action },
};

static void
inspector_application_startup (GApplication *app)
{
  static const gchar *quit_accels[] = { "<Control>q", NULL };
  static const gchar *close_accels[] = { "<Control>w", NULL };
  static const gchar *preferences_accels[] = { "<Control>comma", NULL };

  G_APPLICATION_CLASS (inspector_application_parent_class)->startup (app);
  g_type_ensure (INSPECTOR_TYPE_TIMELINE);
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions), app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "window.close", close_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.preferences", preferences_accels);
}

static void
inspector_application_finalize (GObject *object)
{
  InspectorApplication *self = INSPECTOR_APPLICATION (object);

  g_free (self->cache_dir);
  g_free (self->screenshot);
  g_free (self->screenshot_page);
  G_OBJECT_CLASS (inspector_application_parent_class)->finalize (object);
}

static void
inspector_application_class_init (InspectorApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = inspector_application_finalize;
  app_class->activate = inspector_application_activate;
  app_class->open = inspector_application_open;
  app_class->startup = inspector_application_startup;
  app_class->handle_local_options = inspector_application_handle_local_options;
}

static void
inspector_application_init (InspectorApplication *self)
{
  const GOptionEntry entries[] = {
    { "demo", 0, 0, G_OPTION_ARG_NONE, NULL,
      N_("Compile the demo kernels into the cache, run them on a GPU while recording a trace, "
         "or show the sample trace without one"), NULL },
    { "compile", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Compile the opened kernel source at once"), NULL },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, NULL, N_("Show the kernel cache in DIR"), N_("DIR") },
    { "version", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Print the version and exit"), NULL },
    { "screenshot", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, NULL, NULL, NULL },
    { "screenshot-page", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, NULL, NULL, NULL },
    { "select", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, NULL, NULL, NULL },
    { "screenshot-size", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, NULL, NULL, NULL },
    { "screenshot-dark", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, NULL, NULL, NULL },
    { NULL }
  };

  self->select = -1;
  g_application_add_main_option_entries (G_APPLICATION (self), entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), _("[TRACE.json|KERNEL.cu…]"));
}

InspectorApplication *
inspector_application_new (void)
{
  return g_object_new (INSPECTOR_TYPE_APPLICATION,
                       "application-id", ATOMR_APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/io/github/atomr/Inspector",
                       NULL);
}

gint
inspector_application_get_exit_status (InspectorApplication *self)
{
  return self->exit_status;
}
