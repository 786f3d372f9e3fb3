/* atomr-host-device.h — a device without a GPU, for tests of code that
 * uses atomr
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "atomr-device.h"

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrDevice *atomr_device_new_for_testing (void);

G_END_DECLS
