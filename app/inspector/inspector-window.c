/* inspector-window.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-window.h"
#include "inspector-plugins.h"
#include "atomr-inspector.h"
#ifdef ATOMR_HAVE_SOUP
#include "atomr-attach-dialog.h"
#endif

struct _InspectorWindow
{
  AdwApplicationWindow  parent_instance;

  AdwToastOverlay      *toasts;
  AdwViewStack         *stack;
  GtkSpinner           *demo_spinner;
  InspectorCachePage   *cache_page;
  InspectorEditorPage  *editor_page;
  InspectorTracePage   *trace_page;

  GSettings            *settings;
  gboolean              close_confirmed;  /* the editor's edits were saved or discarded */

  GMenu                *primary_menu;
  GMenu                *plugin_section;   /* the providers' items */
  GHashTable           *providers;        /* module name -> trace or cache provider */
};

G_DEFINE_FINAL_TYPE (InspectorWindow, inspector_window, ADW_TYPE_APPLICATION_WINDOW)

void
inspector_window_toast (InspectorWindow *self,
                        const gchar     *message)
{
  AdwToast *toast = adw_toast_new (message);

  adw_toast_set_timeout (toast, 5);
  adw_toast_overlay_add_toast (self->toasts, toast);
}

static void
show_error_action (GtkWidget   *widget,
                   const gchar *action_name,
                   GVariant    *parameter)
{
  const gchar *message = g_variant_get_string (parameter, NULL);

  g_message ("%s", message);
  inspector_window_toast (INSPECTOR_WINDOW (widget), message);
}

static void
show_toast_action (GtkWidget   *widget,
                   const gchar *action_name,
                   GVariant    *parameter)
{
  inspector_window_toast (INSPECTOR_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

static void
page_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  inspector_window_set_page (INSPECTOR_WINDOW (widget), g_variant_get_string (parameter, NULL));
}

static void
open_trace_action (GtkWidget   *widget,
                   const gchar *action_name,
                   GVariant    *parameter)
{
  InspectorWindow *self = INSPECTOR_WINDOW (widget);

  inspector_window_set_page (self, "trace");
  gtk_widget_activate_action (GTK_WIDGET (self->trace_page), "trace.open", NULL);
}

static void
open_source_action (GtkWidget   *widget,
                    const gchar *action_name,
                    GVariant    *parameter)
{
  InspectorWindow *self = INSPECTOR_WINDOW (widget);

  inspector_window_set_page (self, "editor");
  gtk_widget_activate_action (GTK_WIDGET (self->editor_page), "editor.open", NULL);
}

/* Ctrl+O opens what the visible page shows: a kernel source on the
 * Editor, a trace on the Trace page, a cache folder on the Cache page. */
static void
open_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  InspectorWindow *self = INSPECTOR_WINDOW (widget);
  const gchar *page = adw_view_stack_get_visible_child_name (self->stack);

  if (g_strcmp0 (page, "editor") == 0)
    gtk_widget_activate_action (GTK_WIDGET (self->editor_page), "editor.open", NULL);
  else if (g_strcmp0 (page, "cache") == 0)
    gtk_widget_activate_action (widget, "win.choose-cache-dir", NULL);
  else
    gtk_widget_activate_action (GTK_WIDGET (self->trace_page), "trace.open", NULL);
}

/* Zoom keys work wherever the focus is, while the Trace page shows. */
static void
zoom_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  InspectorWindow *self = INSPECTOR_WINDOW (widget);
  g_autofree gchar *name = g_strconcat ("trace.", g_variant_get_string (parameter, NULL), NULL);

  if (g_strcmp0 (adw_view_stack_get_visible_child_name (self->stack), "trace") == 0)
    gtk_widget_activate_action (GTK_WIDGET (self->trace_page), name, NULL);
}

static void
on_cache_dir_response (GtkNativeDialog *dialog,
                       int              response,
                       InspectorWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) dir = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree gchar *path = g_file_get_path (dir);

      if (path)
        g_settings_set_string (self->settings, "cache-directory", path);
    }
  g_object_unref (dialog);
}

#ifdef ATOMR_HAVE_SOUP
/* Attach to Process… (app/inspector/atomr-attach-dialog.c) */
static void
attach_action (GtkWidget   *widget,
               const gchar *action_name,
               GVariant    *parameter)
{
  gtk_window_present (GTK_WINDOW (atomr_attach_dialog_new (INSPECTOR_WINDOW (widget))));
}
#endif

/* Plugins' data providers (inspector-plugins.c adds and removes them). */
static void
rebuild_plugin_section (InspectorWindow *self)
{
  g_autoptr(GList) names = g_hash_table_get_keys (self->providers);

  g_menu_remove_all (self->plugin_section);
  names = g_list_sort (names, (GCompareFunc) g_strcmp0);
  for (GList *l = names; l; l = l->next)
    {
      GObject *provider = g_hash_table_lookup (self->providers, l->data);
      g_autoptr(GMenuItem) item = NULL;
      g_autofree gchar *label = NULL;

      if (ATOMR_INSPECTOR_IS_TRACE_PROVIDER (provider))
        {
          /* Translators: %s is the name a plugin gives its traces */
          label = g_strdup_printf (_("Open Trace From “%s”"),
                                   atomr_inspector_trace_provider_get_trace_title (ATOMR_INSPECTOR_TRACE_PROVIDER (provider)));
          item = g_menu_item_new (label, NULL);
          g_menu_item_set_action_and_target_value (item, "win.open-provided-trace", g_variant_new_string (l->data));
          g_menu_append_item (self->plugin_section, item);
          g_clear_object (&item);
          g_clear_pointer (&label, g_free);
        }
      if (ATOMR_INSPECTOR_IS_CACHE_PROVIDER (provider))
        {
          /* Translators: %s is the name a plugin gives its kernel cache */
          label = g_strdup_printf (_("Show Kernel Cache From “%s”"),
                                   atomr_inspector_cache_provider_get_cache_title (ATOMR_INSPECTOR_CACHE_PROVIDER (provider)));
          item = g_menu_item_new (label, NULL);
          g_menu_item_set_action_and_target_value (item, "win.show-provided-cache", g_variant_new_string (l->data));
          g_menu_append_item (self->plugin_section, item);
        }
    }
}

/**
 * inspector_window_add_provider:
 * @self: the window
 * @name: the plugin's module name
 * @provider: an AtomrInspectorTraceProvider and/or AtomrInspectorCacheProvider
 *
 * Adds the provider's items to the window's menu.
 */
void
inspector_window_add_provider (InspectorWindow *self,
                               const gchar     *name,
                               GObject         *provider)
{
  if (self->providers == NULL)   /* disposed */
    return;
  g_hash_table_insert (self->providers, g_strdup (name), g_object_ref (provider));
  rebuild_plugin_section (self);
}

/* The menu section of the providers' items (for the tests). */
GMenuModel *
inspector_window_get_plugin_menu (InspectorWindow *self)
{
  return G_MENU_MODEL (self->plugin_section);
}

void
inspector_window_remove_provider (InspectorWindow *self,
                                  const gchar     *name)
{
  if (self->providers != NULL && g_hash_table_remove (self->providers, name))
    rebuild_plugin_section (self);
}

static void
open_provided_trace_action (GtkWidget   *widget,
                            const gchar *action_name,
                            GVariant    *parameter)
{
  InspectorWindow *self = INSPECTOR_WINDOW (widget);
  const gchar *name = g_variant_get_string (parameter, NULL);
  GObject *provider = g_hash_table_lookup (self->providers, name);
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = NULL;

  if (provider == NULL || !ATOMR_INSPECTOR_IS_TRACE_PROVIDER (provider))
    {
      g_autofree gchar *message = g_strdup_printf (_("No plugin “%s” provides traces"), name);
      inspector_window_toast (self, message);
      return;
    }
  file = atomr_inspector_trace_provider_get_trace (ATOMR_INSPECTOR_TRACE_PROVIDER (provider), &error);
  if (file == NULL)
    {
      g_autofree gchar *message = g_strdup_printf (_("“%s” gave no trace: %s"),
                                                   atomr_inspector_trace_provider_get_trace_title (ATOMR_INSPECTOR_TRACE_PROVIDER (provider)),
                                                   error->message);
      inspector_window_toast (self, message);
      return;
    }
  inspector_window_set_page (self, "trace");
  inspector_trace_page_open (self->trace_page, file);
}

static void
show_provided_cache_action (GtkWidget   *widget,
                            const gchar *action_name,
                            GVariant    *parameter)
{
  InspectorWindow *self = INSPECTOR_WINDOW (widget);
  const gchar *name = g_variant_get_string (parameter, NULL);
  GObject *provider = g_hash_table_lookup (self->providers, name);
  g_autofree gchar *dir = NULL;

  if (provider == NULL || !ATOMR_INSPECTOR_IS_CACHE_PROVIDER (provider))
    {
      g_autofree gchar *message = g_strdup_printf (_("No plugin “%s” provides a kernel cache"), name);
      inspector_window_toast (self, message);
      return;
    }
  dir = atomr_inspector_cache_provider_get_directory (ATOMR_INSPECTOR_CACHE_PROVIDER (provider));
  if (dir == NULL)
    {
      g_autofree gchar *message = g_strdup_printf (_("“%s” has no kernel cache folder now"),
                                                   atomr_inspector_cache_provider_get_cache_title (ATOMR_INSPECTOR_CACHE_PROVIDER (provider)));
      inspector_window_toast (self, message);
      return;
    }
  /* for this window only: the setting keeps the user's own folder */
  inspector_window_set_cache_directory (self, dir);
  inspector_window_set_page (self, "cache");
}

static void
choose_cache_dir_action (GtkWidget   *widget,
                         const gchar *action_name,
                         GVariant    *parameter)
{
  InspectorWindow *self = INSPECTOR_WINDOW (widget);
  GtkFileChooserNative *dialog;
  g_autoptr(GFile) current = g_file_new_for_path (inspector_cache_model_get_directory (
                                                    inspector_cache_page_get_model (self->cache_page)));

  dialog = gtk_file_chooser_native_new (_("Choose Cache Folder"), GTK_WINDOW (self),
                                        GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("_Select"), _("_Cancel"));
  gtk_file_chooser_set_file (GTK_FILE_CHOOSER (dialog), current, NULL);
  g_signal_connect (dialog, "response", G_CALLBACK (on_cache_dir_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/**
 * inspector_window_set_cache_directory:
 * @self: the window
 * @directory: (nullable): a cache directory, %NULL for the default one
 *
 * Shows @directory on the Cache page; the Editor compiles into it.
 */
void
inspector_window_set_cache_directory (InspectorWindow *self,
                                      const gchar     *directory)
{
  InspectorCacheModel *model = inspector_cache_page_get_model (self->cache_page);

  inspector_cache_page_set_directory (self->cache_page, directory);
  inspector_editor_page_set_cache (self->editor_page, inspector_cache_model_get_cache (model));
}

static void
on_cache_directory_changed (InspectorWindow *self)
{
  g_autofree gchar *dir = g_settings_get_string (self->settings, "cache-directory");

  /* ATOMR_CACHE_DIR (what the library honours) wins over the setting */
  if (g_getenv ("ATOMR_CACHE_DIR") && *g_getenv ("ATOMR_CACHE_DIR") && *dir == '\0')
    {
      g_free (dir);
      dir = g_strdup (g_getenv ("ATOMR_CACHE_DIR"));
    }
  inspector_window_set_cache_directory (self, dir);
}

typedef struct {
  InspectorWindow       *window;
  AtomrKernelCacheEntry *entry;
} OpenEntry;

static void
on_open_entry_confirmed (GObject      *source,
                         GAsyncResult *result,
                         gpointer      user_data)
{
  OpenEntry *op = user_data;
  g_autoptr(GError) error = NULL;

  if (inspector_editor_page_save_changes_finish (INSPECTOR_EDITOR_PAGE (source), result, &error))
    {
      if (!inspector_editor_page_load_entry (op->window->editor_page, op->entry, &error))
        inspector_window_toast (op->window, error->message);
      else
        inspector_window_set_page (op->window, "editor");
    }
  g_object_unref (op->window);
  g_object_unref (op->entry);
  g_free (op);
}

static void
on_open_entry (InspectorCachePage    *page,
               AtomrKernelCacheEntry *entry,
               InspectorWindow       *self)
{
  OpenEntry *op = g_new0 (OpenEntry, 1);

  op->window = g_object_ref (self);
  op->entry = g_object_ref (entry);
  /* the editor is about to be replaced: show it while asking about its edits */
  if (inspector_editor_page_get_modified (self->editor_page))
    inspector_window_set_page (self, "editor");
  inspector_editor_page_save_changes_async (self->editor_page, NULL, on_open_entry_confirmed, op);
}

static gboolean
close_later (gpointer data)
{
  gtk_window_close (GTK_WINDOW (data));
  return G_SOURCE_REMOVE;
}

static void
on_close_confirmed (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(InspectorWindow) self = user_data;

  /* closed from an idle: the dialog, transient for this window, is still
   * closing itself when its answer arrives here */
  if (inspector_editor_page_save_changes_finish (INSPECTOR_EDITOR_PAGE (source), result, NULL))
    {
      self->close_confirmed = TRUE;
      g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, close_later, g_object_ref (self), g_object_unref);
    }
}

static gboolean
inspector_window_close_request (GtkWindow *window)
{
  InspectorWindow *self = INSPECTOR_WINDOW (window);
  int width, height;

  /* unsaved edits: ask, and close again once they are saved or discarded */
  if (!self->close_confirmed && inspector_editor_page_get_modified (self->editor_page))
    {
      inspector_window_set_page (self, "editor");
      inspector_editor_page_save_changes_async (self->editor_page, NULL, on_close_confirmed, g_object_ref (self));
      return TRUE;
    }
  gtk_window_get_default_size (window, &width, &height);
  g_settings_set (self->settings, "window-size", "(ii)", width, height);
  g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
  {
    const gchar *page = adw_view_stack_get_visible_child_name (self->stack);
    /* A plugin's page is not remembered (the plugin may be gone). */
    if (page != NULL && !g_str_has_prefix (page, "plugin-"))
      g_settings_set_string (self->settings, "last-page", page);
  }
  return GTK_WINDOW_CLASS (inspector_window_parent_class)->close_request (window);
}

void
inspector_window_set_page (InspectorWindow *self,
                           const gchar     *name)
{
  if (adw_view_stack_get_child_by_name (self->stack, name))
    adw_view_stack_set_visible_child_name (self->stack, name);
}

/**
 * inspector_window_get_page:
 * @self: the window
 *
 * Returns: the name of the page shown: "cache", "editor" or "trace"
 */
const gchar *
inspector_window_get_page (InspectorWindow *self)
{
  return adw_view_stack_get_visible_child_name (self->stack);
}

void
inspector_window_set_busy (InspectorWindow *self,
                           gboolean         busy)
{
  gtk_spinner_set_spinning (self->demo_spinner, busy);
}

InspectorCachePage *inspector_window_get_cache_page (InspectorWindow *self) { return self->cache_page; }
InspectorEditorPage *inspector_window_get_editor_page (InspectorWindow *self) { return self->editor_page; }
InspectorTracePage *inspector_window_get_trace_page (InspectorWindow *self) { return self->trace_page; }

static void
inspector_window_dispose (GObject *object)
{
  InspectorWindow *self = INSPECTOR_WINDOW (object);

  if (self->settings)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->providers, g_hash_table_unref);
  g_clear_object (&self->plugin_section);
  gtk_widget_dispose_template (GTK_WIDGET (self), INSPECTOR_TYPE_WINDOW);
  G_OBJECT_CLASS (inspector_window_parent_class)->dispose (object);
}

static void
inspector_window_class_init (InspectorWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = inspector_window_dispose;
  window_class->close_request = inspector_window_close_request;

  g_type_ensure (INSPECTOR_TYPE_CACHE_PAGE);
  g_type_ensure (INSPECTOR_TYPE_EDITOR_PAGE);
  g_type_ensure (INSPECTOR_TYPE_TRACE_PAGE);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/atomr/Inspector/inspector-window.ui");
  gtk_widget_class_bind_template_child (widget_class, InspectorWindow, toasts);
  gtk_widget_class_bind_template_child (widget_class, InspectorWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, InspectorWindow, demo_spinner);
  gtk_widget_class_bind_template_child (widget_class, InspectorWindow, cache_page);
  gtk_widget_class_bind_template_child (widget_class, InspectorWindow, editor_page);
  gtk_widget_class_bind_template_child (widget_class, InspectorWindow, trace_page);
  gtk_widget_class_bind_template_child (widget_class, InspectorWindow, primary_menu);

  gtk_widget_class_install_action (widget_class, "win.show-error", "s", show_error_action);
  gtk_widget_class_install_action (widget_class, "win.show-toast", "s", show_toast_action);
  gtk_widget_class_install_action (widget_class, "win.page", "s", page_action);
  gtk_widget_class_install_action (widget_class, "win.open-trace", NULL, open_trace_action);
  gtk_widget_class_install_action (widget_class, "win.open-source", NULL, open_source_action);
  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.zoom", "s", zoom_action);
  gtk_widget_class_install_action (widget_class, "win.choose-cache-dir", NULL, choose_cache_dir_action);
  gtk_widget_class_install_action (widget_class, "win.open-provided-trace", "s", open_provided_trace_action);
  gtk_widget_class_install_action (widget_class, "win.show-provided-cache", "s", show_provided_cache_action);
#ifdef ATOMR_HAVE_SOUP
  gtk_widget_class_install_action (widget_class, "win.attach", NULL, attach_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_a, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.attach", NULL);
#endif
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, GDK_ALT_MASK, "win.page", "s", "cache");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_2, GDK_ALT_MASK, "win.page", "s", "editor");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_3, GDK_ALT_MASK, "win.page", "s", "trace");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK, "win.zoom", "s", "zoom-in");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK, "win.zoom", "s", "zoom-in");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, GDK_CONTROL_MASK, "win.zoom", "s", "zoom-in");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK, "win.zoom", "s", "zoom-out");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, GDK_CONTROL_MASK, "win.zoom", "s", "zoom-out");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK, "win.zoom", "s", "zoom-fit");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_0, GDK_CONTROL_MASK, "win.zoom", "s", "zoom-fit");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.open-source", NULL);
}

static void
inspector_window_init (InspectorWindow *self)
{
  g_autofree gchar *page = NULL;
  int width, height;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->providers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->plugin_section = g_menu_new ();
  g_menu_insert_section (self->primary_menu, 1, NULL, G_MENU_MODEL (self->plugin_section));
  self->settings = g_settings_new (ATOMR_APP_ID);
  g_settings_get (self->settings, "window-size", "(ii)", &width, &height);
  gtk_window_set_default_size (GTK_WINDOW (self), width, height);
  if (g_settings_get_boolean (self->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));
  page = g_settings_get_string (self->settings, "last-page");
  inspector_window_set_page (self, page);

  g_signal_connect_swapped (self->settings, "changed::cache-directory",
                            G_CALLBACK (on_cache_directory_changed), self);
  on_cache_directory_changed (self);
  g_signal_connect (self->cache_page, "open-entry", G_CALLBACK (on_open_entry), self);
}

InspectorWindow *
inspector_window_new (AdwApplication *application)
{
  InspectorWindow *self = g_object_new (INSPECTOR_TYPE_WINDOW, "application", application, NULL);

  inspector_plugins_attach (self);    /* activates the loaded plugins */
  return self;
}

/* A plugin's page (inspector-plugins.c), after the built-in ones. */
void
inspector_window_add_page (InspectorWindow *self,
                           const gchar     *name,
                           const gchar     *title,
                           GtkWidget       *page)
{
  AdwViewStackPage *stack_page = adw_view_stack_add_titled (self->stack, page, name, title);

  adw_view_stack_page_set_icon_name (stack_page, "application-x-addon-symbolic");
}

void
inspector_window_remove_page (InspectorWindow *self,
                              const gchar     *name)
{
  GtkWidget *page = adw_view_stack_get_child_by_name (self->stack, name);

  if (page != NULL)
    adw_view_stack_remove (self->stack, page);
}
