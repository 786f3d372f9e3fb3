/* atomr-mock-device.h — a device without a GPU, for applications' tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "core/atomr-device.h"

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
AtomrDevice *atomr_device_new_mock (void);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_device_is_mock  (AtomrDevice *self);

G_END_DECLS
