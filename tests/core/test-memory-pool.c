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
#include "core/atomr-device-private.h"

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/memory-pool/statistics", test_statistics);
  g_test_add_func ("/memory-pool/bare", test_bare);

  return g_test_run ();
}
