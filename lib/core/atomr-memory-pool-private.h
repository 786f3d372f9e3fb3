/* atomr-memory-pool-private.h — allocation for buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-cuda-private.h"
#include "atomr-stream-private.h"
#include "atomr-memory-pool.h"

G_BEGIN_DECLS

/* At most this many fences of a freed buffer's last users travel with its
 * block in the cache (more: the buffer is ordered on the utility stream
 * and one fence recorded there travels instead). */
#define ATOMR_MEMORY_POOL_MAX_FENCES 4

/* A miss of the block cache: gives every cached block back to the driver
 * on @stream (after their last users) and allocates @size bytes on
 * @stream from the device's pool of the current generation, falling back
 * to the driver's default pool when no pool of our own can be made.  Call
 * while entered.  A capturing @stream is refused
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED): buffers are not allocated in
 * graphs.  Free with cuMemFreeAsync (or atomr_memory_pool_put_cached()). */
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

/* A hit of the block cache (call while entered): a block of exactly @size
 * bytes of the current generation, 0 if there is none.  @fences (room for
 * ATOMR_MEMORY_POOL_MAX_FENCES) receives the references to the fences of
 * the block's last users that had not finished when it was freed, and
 * @n_fences their number: the new buffer's first users wait for them
 * (atomr_hazards_init_after()); 0 means the memory is idle.  No driver
 * call, no stream. */
CUdeviceptr atomr_memory_pool_take_cached (AtomrMemoryPool  *self,
                                           AtomrDevice      *device,
                                           gsize             size,
                                           AtomrFence      **fences,
                                           guint            *n_fences);

/* Keeps the block of a freed buffer of @generation (call while entered)
 * with the references to the @n_fences fences of its last users: TRUE
 * when kept (the references moved in), FALSE when the cache does not take
 * it (another generation, no pool of our own, a release threshold other
 * than G_MAXUINT64): the caller frees it with cuMemFreeAsync after its
 * last users and keeps its references.  Never for foreign memory. */
gboolean atomr_memory_pool_put_cached (AtomrMemoryPool  *self,
                                       AtomrDevice      *device,
                                       guint             generation,
                                       CUdeviceptr       ptr,
                                       gsize             size,
                                       AtomrFence      **fences,
                                       guint             n_fences);

/* The driver's pool of the current generation (made on first use; call
 * while entered), NULL when the default pool is used: for the benchmark's
 * raw baseline. */
CUmemoryPool atomr_memory_pool_get_handle (AtomrMemoryPool *self,
                                           AtomrDevice     *device);

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
