/* atomr-inspector-data-provider.h — plugins that hand the inspector traces
 * and kernel cache folders
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATOMR_INSPECTOR_TYPE_TRACE_PROVIDER (atomr_inspector_trace_provider_get_type ())
G_MODULE_EXPORT
G_DECLARE_INTERFACE (AtomrInspectorTraceProvider, atomr_inspector_trace_provider, ATOMR_INSPECTOR,
                     TRACE_PROVIDER, GObject)

/**
 * AtomrInspectorTraceProviderInterface:
 * @get_trace_title: what the menu item names (“Nightly Benchmarks”)
 * @get_trace: the trace to open: a local file
 *
 * The virtual methods of [iface@AtomrInspector.TraceProvider].
 *
 * Since: 0.2
 */
struct _AtomrInspectorTraceProviderInterface
{
  GTypeInterface parent_iface;

  const gchar *(*get_trace_title) (AtomrInspectorTraceProvider  *self);
  GFile       *(*get_trace)       (AtomrInspectorTraceProvider  *self,
                                   GError                      **error);
};

G_MODULE_EXPORT
const gchar *atomr_inspector_trace_provider_get_trace_title (AtomrInspectorTraceProvider  *self);
G_MODULE_EXPORT
GFile       *atomr_inspector_trace_provider_get_trace (AtomrInspectorTraceProvider  *self,
                                                       GError                      **error);

#define ATOMR_INSPECTOR_TYPE_CACHE_PROVIDER (atomr_inspector_cache_provider_get_type ())
G_MODULE_EXPORT
G_DECLARE_INTERFACE (AtomrInspectorCacheProvider, atomr_inspector_cache_provider, ATOMR_INSPECTOR,
                     CACHE_PROVIDER, GObject)

/**
 * AtomrInspectorCacheProviderInterface:
 * @get_cache_title: what the menu item names (“Team Cache”)
 * @get_directory: the kernel cache folder to show
 *
 * The virtual methods of [iface@AtomrInspector.CacheProvider].
 *
 * Since: 0.2
 */
struct _AtomrInspectorCacheProviderInterface
{
  GTypeInterface parent_iface;

  const gchar *(*get_cache_title) (AtomrInspectorCacheProvider *self);
  gchar       *(*get_directory) (AtomrInspectorCacheProvider *self);
};

G_MODULE_EXPORT
const gchar *atomr_inspector_cache_provider_get_cache_title     (AtomrInspectorCacheProvider *self);
G_MODULE_EXPORT
gchar       *atomr_inspector_cache_provider_get_directory (AtomrInspectorCacheProvider *self);

G_END_DECLS
