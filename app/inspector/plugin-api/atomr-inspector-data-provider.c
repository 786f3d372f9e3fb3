/* atomr-inspector-data-provider.c — plugins that hand the inspector traces
 * and kernel cache folders
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "atomr-inspector-data-provider.h"

/**
 * AtomrInspectorTraceProvider:
 *
 * Implemented, next to [iface@AtomrInspector.Extension], by a plugin that
 * supplies traces: a benchmark farm's latest run, a trace fetched from a
 * bug tracker, one written by another tool.  While the extension is
 * active, the window's menu has “Open Trace From <title>”; choosing it
 * calls [method@AtomrInspector.TraceProvider.get_trace] on the main thread
 * and opens the file on the Trace page (parsed in a worker thread; errors
 * become toasts).  Return a file the plugin already has or can write
 * quickly; fetch slow things in the background after activation.
 *
 * Since: 0.2
 */
G_DEFINE_INTERFACE (AtomrInspectorTraceProvider, atomr_inspector_trace_provider, G_TYPE_OBJECT)

static void
atomr_inspector_trace_provider_default_init (AtomrInspectorTraceProviderInterface *iface)
{
}

/**
 * atomr_inspector_trace_provider_get_trace_title:
 * @self: an [iface@AtomrInspector.TraceProvider]
 *
 * Gets what the menu item names.
 *
 * Returns: (transfer none): the title
 *
 * Since: 0.2
 */
const gchar *
atomr_inspector_trace_provider_get_trace_title (AtomrInspectorTraceProvider *self)
{
  AtomrInspectorTraceProviderInterface *iface;

  g_return_val_if_fail (ATOMR_INSPECTOR_IS_TRACE_PROVIDER (self), NULL);
  iface = ATOMR_INSPECTOR_TRACE_PROVIDER_GET_IFACE (self);
  return iface->get_trace_title ? iface->get_trace_title (self) : G_OBJECT_TYPE_NAME (self);
}

/**
 * atomr_inspector_trace_provider_get_trace:
 * @self: an [iface@AtomrInspector.TraceProvider]
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the trace to open: an atomr trace or a Chrome trace (JSON) in a
 * local file.
 *
 * Returns: (transfer full): the file, or %NULL with @error set
 *
 * Since: 0.2
 */
GFile *
atomr_inspector_trace_provider_get_trace (AtomrInspectorTraceProvider  *self,
                                          GError                      **error)
{
  AtomrInspectorTraceProviderInterface *iface;
  GFile *file;

  g_return_val_if_fail (ATOMR_INSPECTOR_IS_TRACE_PROVIDER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  iface = ATOMR_INSPECTOR_TRACE_PROVIDER_GET_IFACE (self);
  if (iface->get_trace == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "%s implements AtomrInspectorTraceProvider without get_trace",
                   G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  file = iface->get_trace (self, error);
  if (file == NULL && error != NULL && *error == NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s gave no trace and no reason",
                 G_OBJECT_TYPE_NAME (self));
  return file;
}

/**
 * AtomrInspectorCacheProvider:
 *
 * Implemented, next to [iface@AtomrInspector.Extension], by a plugin that
 * knows kernel cache folders: a team's shared cache, a CI runner's, a
 * mounted remote store.  While the extension is active, the window's menu
 * has “Show Kernel Cache From <title>”; choosing it shows that folder on
 * the Cache page, as “Choose Cache Folder…” does.
 *
 * Since: 0.2
 */
G_DEFINE_INTERFACE (AtomrInspectorCacheProvider, atomr_inspector_cache_provider, G_TYPE_OBJECT)

static void
atomr_inspector_cache_provider_default_init (AtomrInspectorCacheProviderInterface *iface)
{
}

/**
 * atomr_inspector_cache_provider_get_cache_title:
 * @self: an [iface@AtomrInspector.CacheProvider]
 *
 * Gets what the menu item names.
 *
 * Returns: (transfer none): the title
 *
 * Since: 0.2
 */
const gchar *
atomr_inspector_cache_provider_get_cache_title (AtomrInspectorCacheProvider *self)
{
  AtomrInspectorCacheProviderInterface *iface;

  g_return_val_if_fail (ATOMR_INSPECTOR_IS_CACHE_PROVIDER (self), NULL);
  iface = ATOMR_INSPECTOR_CACHE_PROVIDER_GET_IFACE (self);
  return iface->get_cache_title ? iface->get_cache_title (self) : G_OBJECT_TYPE_NAME (self);
}

/**
 * atomr_inspector_cache_provider_get_directory:
 * @self: an [iface@AtomrInspector.CacheProvider]
 *
 * Gets the kernel cache folder to show.
 *
 * Returns: (transfer full) (type filename) (nullable): its path, or %NULL
 *   when there is none now
 *
 * Since: 0.2
 */
gchar *
atomr_inspector_cache_provider_get_directory (AtomrInspectorCacheProvider *self)
{
  AtomrInspectorCacheProviderInterface *iface;

  g_return_val_if_fail (ATOMR_INSPECTOR_IS_CACHE_PROVIDER (self), NULL);
  iface = ATOMR_INSPECTOR_CACHE_PROVIDER_GET_IFACE (self);
  return iface->get_directory ? iface->get_directory (self) : NULL;
}
