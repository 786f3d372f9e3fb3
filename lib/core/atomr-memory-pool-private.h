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

/* The same with the device's pool at hand (@self is @device's pool). */
CUresult atomr_memory_pool_alloc_async_in (AtomrMemoryPool *self,
                                           AtomrDevice     *device,
                                           CUdeviceptr     *ptr,
                                           gsize            size,
                                           CUstream         stream);

/* Frees @ptr (of @size bytes, from atomr_memory_pool_alloc_async () of
 * the current generation) on @stream, which must be the stream it was
 * allocated on, after its last users: kept in the pool's block cache for
 * the next allocation of the same size, or given back to the driver.
 * @self is @device's pool (the buffer keeps it: the lookup is not free). */
void     atomr_memory_pool_free_async   (AtomrMemoryPool *self,
                                         AtomrDevice     *device,
                                         CUdeviceptr      ptr,
                                         gsize            size,
                                         CUstream         stream);

/* The host test device's allocations, with the same block cache (and
 * accounting): zeroed memory of @size bytes, NULL when out of memory. */
gpointer atomr_memory_pool_alloc_host   (AtomrMemoryPool *self,
                                         AtomrDevice     *device,
                                         gsize            size);
void     atomr_memory_pool_free_host    (AtomrMemoryPool *self,
                                         gpointer         data,
                                         gsize            size);

/* The block cache, for tests: allocations served from it, and the bytes
 * of the blocks it holds now. */
guint64  atomr_memory_pool_get_cache_hits   (AtomrMemoryPool *self);
guint64  atomr_memory_pool_get_cached_bytes (AtomrMemoryPool *self);

/* The host test device's buffers are accounted like the pool's, so the
 * statistics behave the same without a GPU: +size on allocation, -size
 * when freed. */
void     atomr_memory_pool_account_host (AtomrDevice *device,
                                         gint64       delta);

G_END_DECLS
