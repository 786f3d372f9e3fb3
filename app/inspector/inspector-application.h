/* inspector-application.h — io.github.atomr.Inspector
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define INSPECTOR_TYPE_APPLICATION (inspector_application_get_type ())
G_DECLARE_FINAL_TYPE (InspectorApplication, inspector_application, INSPECTOR, APPLICATION, AdwApplication)

InspectorApplication *inspector_application_new             (void);
gint                  inspector_application_get_exit_status (InspectorApplication *self);

G_END_DECLS
