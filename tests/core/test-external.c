/* test-external.c — foreign memory, streams and events on the host test
 * device (argument checks, ownership, hazards); the GPU side is in
 * test-gpu-tensor.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-device-private.h"

static void
count_calls (gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

static void
test_wrap_host (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  gfloat memory[6] = { 1, 2, 3, 4, 5, 6 };
  gint released = 0;
  AtomrBuffer *buffer;
  g_autoptr(GBytes) bytes = NULL;

  atomr_device_set_host_autocomplete (device, TRUE);
  buffer = atomr_buffer_new_for_device_pointer (device, ATOMR_DTYPE_F32, 6, (guint64) (guintptr) memory,
                                                count_calls, &released, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_buffer_get_byte_size (buffer), ==, 24);
  bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), 24, memory, sizeof memory);
  g_assert_true (atomr_buffer_fill_sync (buffer, 7.0, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (memory[5], ==, 7.0f);
  g_assert_cmpuint (released, ==, 0);
  g_object_unref (buffer);
  /* given back once, and never freed by atomr (it is on our stack); the
   * default actor's thread may drop its last reference a moment after the
   * reply */
  for (guint i = 0; i < 10000 && g_atomic_int_get (&released) == 0; i++)
    g_usleep (1000);
  g_assert_cmpuint (g_atomic_int_get (&released), ==, 1);

  /* failures release at once */
  g_assert_null (atomr_buffer_new_for_device_pointer (device, ATOMR_DTYPE_F32, 6, 0,
                                                      count_calls, &released, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "null address"));
  g_clear_error (&error);
  g_assert_cmpuint (g_atomic_int_get (&released), ==, 2);
  g_assert_null (atomr_buffer_new_for_device_pointer (device, ATOMR_DTYPE_F32, 0, (guint64) (guintptr) memory,
                                                      NULL, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

static void
test_events (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrDevice) other = atomr_device_new_host ();
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrBuffer) a = NULL;
  g_autoptr(AtomrBuffer) b = NULL;
  AtomrBuffer *both[2];

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = ATOMR_ACTOR (atomr_copy_actor_new (device, &error));
  g_assert_no_error (error);
  a = atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, &error);
  b = atomr_buffer_new (other, ATOMR_DTYPE_F32, 4, &error);
  g_assert_no_error (error);

  both[0] = a;
  both[1] = b;
  g_assert_false (atomr_actor_wait_event_sync (actor, 0, &a, 1, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "the event handle is 0"));
  g_clear_error (&error);
  g_assert_false (atomr_actor_wait_event_sync (actor, 0x1234, both, 2, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "buffers[1] lives on device"));
  g_clear_error (&error);
  g_assert_false (atomr_actor_signal_stream_sync (actor, 0, NULL, 3, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* the host device has no GPU timeline: valid requests pass through */
  g_assert_true (atomr_actor_wait_event_sync (actor, 0x1234, &a, 1, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_actor_signal_stream_sync (actor, 0, &a, 1, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_actor_signal_stream_sync (actor, 0, NULL, 0, NULL, &error));
  g_assert_no_error (error);
  g_assert_finalize_object (g_steal_pointer (&actor));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/external/wrap-host", test_wrap_host);
  g_test_add_func ("/external/events", test_events);

  return g_test_run ();
}
