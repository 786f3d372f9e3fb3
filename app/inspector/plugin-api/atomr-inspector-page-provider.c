/* atomr-inspector-page-provider.c — a plugin's page in the inspector window
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "atomr-inspector-page-provider.h"

/**
 * AtomrInspectorPageProvider:
 *
 * Implemented, next to [iface@AtomrInspector.Extension], by a plugin that
 * adds a page to the inspector window: the inspector asks for the widget
 * once the extension is activated, shows it in the window's view stack
 * under [method@AtomrInspector.PageProvider.get_title], and removes it
 * before the extension is deactivated.
 *
 * Since: 0.2
 */
G_DEFINE_INTERFACE (AtomrInspectorPageProvider, atomr_inspector_page_provider, G_TYPE_OBJECT)

static void
atomr_inspector_page_provider_default_init (AtomrInspectorPageProviderInterface *iface)
{
}

/**
 * atomr_inspector_page_provider_create_page:
 * @self: an [iface@AtomrInspector.PageProvider]
 *
 * Makes the widget of the page.
 *
 * Returns: (transfer full): the page's widget
 *
 * Since: 0.2
 */
GtkWidget *
atomr_inspector_page_provider_create_page (AtomrInspectorPageProvider *self)
{
  AtomrInspectorPageProviderInterface *iface;

  g_return_val_if_fail (ATOMR_INSPECTOR_IS_PAGE_PROVIDER (self), NULL);
  iface = ATOMR_INSPECTOR_PAGE_PROVIDER_GET_IFACE (self);
  g_return_val_if_fail (iface->create_page != NULL, NULL);
  return iface->create_page (self);
}

/**
 * atomr_inspector_page_provider_get_title:
 * @self: an [iface@AtomrInspector.PageProvider]
 *
 * Gets the title of the page.
 *
 * Returns: (transfer none): the title, as the view switcher shows it
 *
 * Since: 0.2
 */
const gchar *
atomr_inspector_page_provider_get_title (AtomrInspectorPageProvider *self)
{
  AtomrInspectorPageProviderInterface *iface;

  g_return_val_if_fail (ATOMR_INSPECTOR_IS_PAGE_PROVIDER (self), NULL);
  iface = ATOMR_INSPECTOR_PAGE_PROVIDER_GET_IFACE (self);
  return iface->get_title ? iface->get_title (self) : G_OBJECT_TYPE_NAME (self);
}
