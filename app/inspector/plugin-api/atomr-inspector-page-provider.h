/* atomr-inspector-page-provider.h — a plugin's page in the inspector window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATOMR_INSPECTOR_TYPE_PAGE_PROVIDER (atomr_inspector_page_provider_get_type ())
G_MODULE_EXPORT
G_DECLARE_INTERFACE (AtomrInspectorPageProvider, atomr_inspector_page_provider, ATOMR_INSPECTOR,
                     PAGE_PROVIDER, GObject)

/**
 * AtomrInspectorPageProviderInterface:
 * @create_page: makes the page's widget
 * @get_title: the page's title, as the view switcher shows it
 *
 * The virtual methods of [iface@AtomrInspector.PageProvider].
 *
 * Since: 0.2
 */
struct _AtomrInspectorPageProviderInterface
{
  GTypeInterface parent_iface;

  GtkWidget   *(*create_page) (AtomrInspectorPageProvider *self);
  const gchar *(*get_title)   (AtomrInspectorPageProvider *self);
};

G_MODULE_EXPORT
GtkWidget   *atomr_inspector_page_provider_create_page (AtomrInspectorPageProvider *self);
G_MODULE_EXPORT
const gchar *atomr_inspector_page_provider_get_title   (AtomrInspectorPageProvider *self);

G_END_DECLS
