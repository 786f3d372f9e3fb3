/* atomr-memory-info.h — a device's memory, as one boxed result
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <glib-object.h>

#include "atomr-device.h"

G_BEGIN_DECLS

/**
 * AtomrMemoryInfo:
 * @free_bytes: free device memory, in bytes
 * @total_bytes: total device memory, in bytes
 *
 * How much memory a device has, from atomr_device_query_memory_info().
 *
 * Since: 0.2
 */
typedef struct {
  guint64 free_bytes;
  guint64 total_bytes;
} AtomrMemoryInfo;

#define ATOMR_TYPE_MEMORY_INFO (atomr_memory_info_get_type ())
ATOMR_AVAILABLE_IN_0_2
GType            atomr_memory_info_get_type      (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_0_2
AtomrMemoryInfo *atomr_memory_info_copy          (const AtomrMemoryInfo *info);
ATOMR_AVAILABLE_IN_0_2
void             atomr_memory_info_free          (AtomrMemoryInfo       *info);

ATOMR_AVAILABLE_IN_0_2
AtomrMemoryInfo *atomr_device_query_memory_info  (AtomrDevice           *self,
                                                  GError               **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrMemoryInfo, atomr_memory_info_free)

G_END_DECLS
