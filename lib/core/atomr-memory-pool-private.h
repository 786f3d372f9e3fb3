/* atomr-memory-pool-private.h — allocation for buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-cuda-private.h"
#include "atomr-memory-pool.h"

G_BEGIN_DECLS

/* Allocates @size bytes on @stream from the device's pool of the current
 * generation (call while entered), falling back to the driver's default
 * pool when no pool of our own can be made.  Free with cuMemFreeAsync. */
CUresult atomr_memory_pool_alloc_async (AtomrDevice *device,
                                        CUdeviceptr *ptr,
                                        gsize        size,
                                        CUstream     stream);

/* The host test device's buffers are accounted like the pool's, so the
 * statistics behave the same without a GPU: +size on allocation, -size
 * when freed. */
void     atomr_memory_pool_account_host (AtomrDevice *device,
                                         gint64       delta);

G_END_DECLS
