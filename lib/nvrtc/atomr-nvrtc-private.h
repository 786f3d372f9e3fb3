/* atomr-nvrtc-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-device.h"
#include "atomr-nvrtc.h"

G_BEGIN_DECLS

/* atomr_nvrtc_compile() with "native" resolved against @device (nullable:
 * device 0). */
AtomrModule *atomr_nvrtc_compile_for_device (const gchar         *source,
                                             const gchar         *program_name,
                                             AtomrCompileOptions *options,
                                             AtomrKernelCache    *cache,
                                             AtomrDevice         *device,
                                             GError             **error);

G_END_DECLS
