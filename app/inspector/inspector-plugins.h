/* inspector-plugins.h — the libpeas engine and each window's extensions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libpeas/peas.h>

#include "inspector-window.h"

G_BEGIN_DECLS

PeasEngine *inspector_plugins_get_engine (void);
void        inspector_plugins_attach     (InspectorWindow *window);

G_END_DECLS
