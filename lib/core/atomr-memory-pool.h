/* atomr-memory-pool.h — the stream-ordered allocator of a device
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-device.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_MEMORY_POOL (atomr_memory_pool_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrMemoryPool, atomr_memory_pool, ATOMR, MEMORY_POOL, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrMemoryPool *atomr_device_get_memory_pool          (AtomrDevice     *device);

ATOMR_AVAILABLE_IN_ALL
AtomrDevice     *atomr_memory_pool_get_device          (AtomrMemoryPool *self);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_memory_pool_get_reserved        (AtomrMemoryPool *self);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_memory_pool_get_used            (AtomrMemoryPool *self);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_memory_pool_get_high_water      (AtomrMemoryPool *self);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_memory_pool_get_release_threshold (AtomrMemoryPool *self);
ATOMR_AVAILABLE_IN_ALL
void             atomr_memory_pool_set_release_threshold (AtomrMemoryPool *self,
                                                          guint64          bytes);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_memory_pool_trim                (AtomrMemoryPool *self,
                                                        guint64          min_bytes_to_keep,
                                                        GError         **error);
ATOMR_AVAILABLE_IN_ALL
void             atomr_memory_pool_reset_high_water    (AtomrMemoryPool *self);

G_END_DECLS
