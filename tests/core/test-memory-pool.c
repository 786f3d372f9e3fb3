/* test-memory-pool.c — the pool statistics, on the host test device
 *
 * The host device accounts its buffers the way a CUmemoryPool does
 * (freed memory stays reserved up to the release threshold), so the
 * semantics of the statistics and of trimming are checked without a GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-buffer-private.h"
#include "core/atomr-device-private.h"
#include "core/atomr-hazard-private.h"
#include "core/atomr-memory-pool-private.h"
#include "core/atomr-stream-private.h"

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
test_statistics (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  AtomrMemoryPool *pool = atomr_device_get_memory_pool (device);
  AtomrBuffer *a, *b;
  guint notified = 0;
  guint64 used = 1;

  g_assert_true (atomr_device_get_memory_pool (device) == pool);
  g_assert_true (atomr_memory_pool_get_device (pool) == device);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_release_threshold (pool), ==, G_MAXUINT64);

  a = atomr_buffer_new (device, ATOMR_DTYPE_F32, 250, &error);     /* 1000 bytes */
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 1000);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 1000);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, 1000);
  g_object_unref (a);
  /* freed memory stays reserved for reuse */
  g_object_get (pool, "used", &used, NULL);
  g_assert_cmpuint (used, ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 1000);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, 1000);

  b = atomr_buffer_new (device, ATOMR_DTYPE_U8, 400, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 400);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 1000);
  {
    /* the same statistics as properties of the device */
    guint64 reserved = 0, high = 0;
    g_object_get (device, "memory-used", &used, "memory-reserved", &reserved,
                  "memory-high-water", &high, NULL);
    g_assert_cmpuint (used, ==, 400);
    g_assert_cmpuint (reserved, ==, 1000);
    g_assert_cmpuint (high, ==, 1000);
  }

  /* a lower threshold gives the excess back; notify once per change */
  g_signal_connect (pool, "notify::release-threshold", G_CALLBACK (count_notify), &notified);
  atomr_memory_pool_set_release_threshold (pool, 500);
  atomr_memory_pool_set_release_threshold (pool, 500);
  g_assert_cmpuint (notified, ==, 1);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 500);
  g_object_set (pool, "release-threshold", G_MAXUINT64, NULL);
  g_assert_cmpuint (notified, ==, 2);

  g_assert_true (atomr_memory_pool_trim (pool, 0, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 400);

  atomr_memory_pool_reset_high_water (pool);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, 400);
  g_object_unref (b);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 0);
  g_signal_handlers_disconnect_by_func (pool, count_notify, &notified);
}

static void
test_bare (void)
{
  g_autoptr(AtomrMemoryPool) pool = g_object_new (ATOMR_TYPE_MEMORY_POOL, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_null (atomr_memory_pool_get_device (pool));
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, 0);
  atomr_memory_pool_set_release_threshold (pool, 10);
  atomr_memory_pool_reset_high_water (pool);
  g_assert_false (atomr_memory_pool_trim (pool, 0, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

/* A freed buffer's block is reused by the next buffer of the same byte
 * size (zeroed again on the host device); the statistics do not count the
 * cached block as used, and it stays reserved. */
static void
test_cache_reuse (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  AtomrMemoryPool *pool = atomr_device_get_memory_pool (device);
  g_autoptr(GBytes) ones = NULL;
  g_autoptr(GBytes) back = NULL;
  guint8 data[4096];
  AtomrBuffer *a, *b;
  gpointer block;
  const guint8 *got;
  gsize len;

  memset (data, 0xab, sizeof data);
  ones = g_bytes_new (data, sizeof data);
  a = atomr_buffer_new (device, ATOMR_DTYPE_U8, sizeof data, &error);
  g_assert_no_error (error);
  block = atomr_buffer_get_host_data (a);
  memcpy (block, g_bytes_get_data (ones, NULL), sizeof data);
  g_object_unref (a);

  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, sizeof data);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, sizeof data);
  g_assert_cmpuint (atomr_memory_pool_get_cache_hits (pool), ==, 0);

  /* an int8 buffer of the same byte size takes the cached block */
  b = atomr_buffer_new (device, ATOMR_DTYPE_I8, sizeof data, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_get_host_data (b) == block);
  g_assert_cmpuint (atomr_memory_pool_get_cache_hits (pool), ==, 1);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, sizeof data);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, sizeof data);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, sizeof data);
  /* no contents of the old buffer show through */
  back = g_bytes_new (atomr_buffer_get_host_data (b), atomr_buffer_get_byte_size (b));
  got = g_bytes_get_data (back, &len);
  g_assert_cmpuint (len, ==, sizeof data);
  for (gsize i = 0; i < len; i++)
    g_assert_cmpuint (got[i], ==, 0);
  g_object_unref (b);

  /* a steady allocate + free cycle takes no new memory */
  for (guint i = 0; i < 100; i++)
    {
      AtomrBuffer *c = atomr_buffer_new (device, ATOMR_DTYPE_U8, sizeof data, &error);
      g_assert_no_error (error);
      g_assert_true (atomr_buffer_get_host_data (c) == block);
      g_object_unref (c);
    }
  g_assert_cmpuint (atomr_memory_pool_get_cache_hits (pool), ==, 101);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, sizeof data);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, sizeof data);
}

/* A miss gives the cached blocks back to the pool first (the pool never
 * reserves more than without the cache); trim and a release threshold
 * empty the cache; the high-water mark does not count cached blocks. */
static void
test_cache_trim (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  AtomrMemoryPool *pool = atomr_device_get_memory_pool (device);
  AtomrBuffer *a, *b;

  a = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1000, &error);   /* 4000 bytes */
  g_assert_no_error (error);
  b = atomr_buffer_new (device, ATOMR_DTYPE_F32, 500, &error);    /* 2000 bytes */
  g_assert_no_error (error);
  g_object_unref (a);
  g_object_unref (b);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 6000);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 6000);
  atomr_memory_pool_reset_high_water (pool);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, 0);

  /* 3000 bytes: no such block; both go back to the pool, which reuses them */
  a = atomr_buffer_new (device, ATOMR_DTYPE_U8, 3000, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_memory_pool_get_cache_hits (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 3000);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 6000);
  g_assert_cmpuint (atomr_memory_pool_get_high_water (pool), ==, 3000);
  g_object_unref (a);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 3000);

  /* trim gives the cached block back too */
  g_assert_true (atomr_memory_pool_trim (pool, 0, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 0);

  /* with a release threshold nothing is cached */
  a = atomr_buffer_new (device, ATOMR_DTYPE_U8, 3000, &error);
  g_assert_no_error (error);
  g_object_unref (a);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 3000);
  atomr_memory_pool_set_release_threshold (pool, 1000);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 1000);
  a = atomr_buffer_new (device, ATOMR_DTYPE_U8, 3000, &error);
  g_assert_no_error (error);
  g_object_unref (a);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), ==, 1000);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, 0);
  g_assert_cmpuint (atomr_memory_pool_get_cache_hits (pool), ==, 0);

  /* blocks still cached when the device goes are freed (valgrind) */
  atomr_memory_pool_set_release_threshold (pool, G_MAXUINT64);
  a = atomr_buffer_new (device, ATOMR_DTYPE_U8, 3000, &error);
  g_assert_no_error (error);
  g_object_unref (a);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 3000);
}

/* What a freed buffer's block carries into the cache: the fences of its
 * last writer and readers that are not known to have finished, each once;
 * nothing when a slot is still pending or there are more than fit.  A
 * buffer that gets the block starts with them as its last writer. */
static void
test_carried_fences (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  AtomrStream *stream = atomr_stream_new (device, &error);
  AtomrFence *f1, *f2, *got[ATOMR_MEMORY_POOL_MAX_FENCES] = { NULL };
  AtomrHazards hazards = { NULL, NULL }, fresh = { NULL, NULL };
  AtomrSlot *r1, *r2, *pending;
  guint n;

  g_assert_no_error (error);
  f1 = atomr_stream_record (stream, ATOMR_EVENT_PLAIN, &error);
  g_assert_no_error (error);
  f2 = atomr_stream_record (stream, ATOMR_EVENT_PLAIN, &error);
  g_assert_no_error (error);

  /* nothing touched it: nothing to carry */
  g_assert_cmpuint (atomr_hazards_take_fences (&hazards, got, G_N_ELEMENTS (got)), ==, 0);

  /* written (f1), read by two actors (f2, and f1 again) */
  atomr_hazards_init_written (&hazards, f1);
  hazards.readers = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_slot_unref);
  r1 = atomr_slot_new (GUINT_TO_POINTER (1));
  atomr_slot_resolve (r1, f2, NULL);
  g_ptr_array_add (hazards.readers, r1);
  r2 = atomr_slot_new (GUINT_TO_POINTER (2));
  atomr_slot_resolve (r2, f1, NULL);
  g_ptr_array_add (hazards.readers, r2);

  n = atomr_hazards_take_fences (&hazards, got, G_N_ELEMENTS (got));
  g_assert_cmpuint (n, ==, 2);
  g_assert_true (got[0] == f1);
  g_assert_true (got[1] == f2);
  /* references of their own: the buffer's slots go, the fences stay */
  atomr_fence_unref (got[0]);
  atomr_fence_unref (got[1]);

  /* more than fit: nothing taken */
  g_assert_cmpuint (atomr_hazards_take_fences (&hazards, got, 1), ==, 2);

  /* finished fences are not carried */
  g_atomic_int_set (&f1->signalled, 1);
  n = atomr_hazards_take_fences (&hazards, got, G_N_ELEMENTS (got));
  g_assert_cmpuint (n, ==, 1);
  g_assert_true (got[0] == f2);

  /* the next buffer of the block starts after them */
  atomr_hazards_init_after (&fresh, got, n);
  g_assert_nonnull (fresh.last_writer);
  g_assert_null (fresh.readers);
  g_assert_cmpuint (atomr_slot_get_n_fences (fresh.last_writer), ==, 1);
  atomr_hazards_clear (&fresh);
  /* an idle block: no hazard at all */
  atomr_hazards_init_after (&fresh, got, 0);
  g_assert_null (fresh.last_writer);

  /* a slot still pending: nothing can be carried */
  pending = atomr_slot_new (GUINT_TO_POINTER (3));
  g_ptr_array_add (hazards.readers, pending);
  g_assert_cmpuint (atomr_hazards_take_fences (&hazards, got, G_N_ELEMENTS (got)), ==, G_MAXUINT);
  atomr_slot_resolve (pending, NULL, NULL);

  atomr_hazards_clear (&hazards);
  atomr_fence_unref (f1);
  atomr_fence_unref (f2);
  atomr_host_stream_complete (stream, G_MAXUINT, CUDA_SUCCESS);
  atomr_stream_unref (stream);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/memory-pool/statistics", test_statistics);
  g_test_add_func ("/memory-pool/bare", test_bare);
  g_test_add_func ("/memory-pool/cache-reuse", test_cache_reuse);
  g_test_add_func ("/memory-pool/cache-trim", test_cache_trim);
  g_test_add_func ("/memory-pool/carried-fences", test_carried_fences);

  return g_test_run ();
}
