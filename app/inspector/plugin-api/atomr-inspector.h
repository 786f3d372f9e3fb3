/* atomr-inspector.h — the plugin API of atomr-inspector (libpeas 1.x)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-inspector-extension.h"
#include "atomr-inspector-page-provider.h"
#include "atomr-inspector-data-provider.h"
