/* inspector-preferences.h — the preferences window: the plugin manager
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define INSPECTOR_TYPE_PREFERENCES (inspector_preferences_get_type ())
G_DECLARE_FINAL_TYPE (InspectorPreferences, inspector_preferences, INSPECTOR, PREFERENCES, AdwPreferencesWindow)

InspectorPreferences *inspector_preferences_new               (GtkWindow            *parent);
GtkSwitch            *inspector_preferences_get_plugin_switch (InspectorPreferences *self,
                                                               const gchar          *module_name);

G_END_DECLS
