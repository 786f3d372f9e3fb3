/* hello-c.c — an example atomr-inspector plugin in C
 *
 * It implements AtomrInspectorExtension (activate: the window title gets
 * " — Hello from C"; deactivate: the title comes back) and
 * AtomrInspectorPageProvider (a page with a label) and
 * AtomrInspectorCacheProvider (the folder in $HELLO_CACHE_DIR, else the
 * user's default kernel cache, under “Show Kernel Cache From “Hello
 * Cache””).  Build it as a shared
 * module against atomr-inspector-1 and libpeas-1.0 and put it, with
 * hello-c.plugin, in ~/.local/share/atomr-inspector/plugins.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <libpeas/peas.h>

#include "atomr-inspector.h"

#define HELLO_TYPE_C_PLUGIN (hello_c_plugin_get_type ())
G_DECLARE_FINAL_TYPE (HelloCPlugin, hello_c_plugin, HELLO, C_PLUGIN, GObject)

struct _HelloCPlugin
{
  GObject    parent_instance;
  GtkWindow *window;
  gchar     *saved_title;
};

enum { PROP_0, PROP_WINDOW };

static void extension_iface_init (AtomrInspectorExtensionInterface *iface);
static void page_provider_iface_init (AtomrInspectorPageProviderInterface *iface);
static void cache_provider_iface_init (AtomrInspectorCacheProviderInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (HelloCPlugin, hello_c_plugin, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (ATOMR_INSPECTOR_TYPE_EXTENSION,
                                                               extension_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (ATOMR_INSPECTOR_TYPE_PAGE_PROVIDER,
                                                               page_provider_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (ATOMR_INSPECTOR_TYPE_CACHE_PROVIDER,
                                                               cache_provider_iface_init))

static void
hello_c_plugin_activate (AtomrInspectorExtension *extension)
{
  HelloCPlugin *self = HELLO_C_PLUGIN (extension);
  g_autofree gchar *title = NULL;

  self->saved_title = g_strdup (gtk_window_get_title (self->window));
  title = g_strconcat (self->saved_title ? self->saved_title : "", " — Hello from C", NULL);
  gtk_window_set_title (self->window, title);
}

static void
hello_c_plugin_deactivate (AtomrInspectorExtension *extension)
{
  HelloCPlugin *self = HELLO_C_PLUGIN (extension);

  gtk_window_set_title (self->window, self->saved_title);
  g_clear_pointer (&self->saved_title, g_free);
}

static GtkWidget *
hello_c_plugin_create_page (AtomrInspectorPageProvider *provider)
{
  GtkWidget *label = gtk_label_new ("Hello from a C plugin");

  gtk_widget_set_name (label, "hello-c-label");
  return label;
}

static const gchar *
hello_c_plugin_get_title (AtomrInspectorPageProvider *provider)
{
  return "Hello (C)";
}

static const gchar *
hello_c_plugin_get_cache_title (AtomrInspectorCacheProvider *provider)
{
  return "Hello Cache";
}

static gchar *
hello_c_plugin_get_directory (AtomrInspectorCacheProvider *provider)
{
  const gchar *dir = g_getenv ("HELLO_CACHE_DIR");

  if (dir != NULL && *dir != '\0')
    return g_strdup (dir);
  return g_build_filename (g_get_user_cache_dir (), "atomr", "kernels", NULL);
}

static void
cache_provider_iface_init (AtomrInspectorCacheProviderInterface *iface)
{
  iface->get_cache_title = hello_c_plugin_get_cache_title;
  iface->get_directory = hello_c_plugin_get_directory;
}

static void
extension_iface_init (AtomrInspectorExtensionInterface *iface)
{
  iface->activate = hello_c_plugin_activate;
  iface->deactivate = hello_c_plugin_deactivate;
}

static void
page_provider_iface_init (AtomrInspectorPageProviderInterface *iface)
{
  iface->create_page = hello_c_plugin_create_page;
  iface->get_title = hello_c_plugin_get_title;
}

static void
hello_c_plugin_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  HelloCPlugin *self = HELLO_C_PLUGIN (object);

  switch (prop_id)
    {
    case PROP_WINDOW:
      self->window = g_value_get_object (value);   /* the window outlives us */
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hello_c_plugin_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  HelloCPlugin *self = HELLO_C_PLUGIN (object);

  switch (prop_id)
    {
    case PROP_WINDOW:
      g_value_set_object (value, self->window);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hello_c_plugin_finalize (GObject *object)
{
  HelloCPlugin *self = HELLO_C_PLUGIN (object);

  g_free (self->saved_title);
  G_OBJECT_CLASS (hello_c_plugin_parent_class)->finalize (object);
}

static void
hello_c_plugin_class_init (HelloCPluginClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->set_property = hello_c_plugin_set_property;
  object_class->get_property = hello_c_plugin_get_property;
  object_class->finalize = hello_c_plugin_finalize;
  g_object_class_override_property (object_class, PROP_WINDOW, "window");
}

static void
hello_c_plugin_class_finalize (HelloCPluginClass *klass)
{
}

static void
hello_c_plugin_init (HelloCPlugin *self)
{
}

/* The entry point libpeas looks up in the module. */
G_MODULE_EXPORT void peas_register_types (PeasObjectModule *module);

G_MODULE_EXPORT void
peas_register_types (PeasObjectModule *module)
{
  hello_c_plugin_register_type (G_TYPE_MODULE (module));
  peas_object_module_register_extension_type (module, ATOMR_INSPECTOR_TYPE_EXTENSION, HELLO_TYPE_C_PLUGIN);
}
