/* main.c — runs the example actor: on GPU 0 when there is one, else on
 * the mock device.  Prints what it did; exits 1 on any mismatch.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "example-fill-actor.h"

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static void
count_fill (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  if (g_strcmp0 (atomr_launch_info_get_operation (info), "fill-pattern") == 0)
    (*(guint *) user_data)++;
}

static GAsyncResult *
wait_result (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

int
main (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(ExampleFillActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrBuffer) bytes_buffer = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GAsyncResult) refused = NULL;
  g_autoptr(GBytes) bytes = NULL;
  const guint32 *words;
  gsize size;
  guint calls = 0;

  if (device == NULL)
    {
      g_print ("example-actor: no GPU (%s); using the mock device\n", error->message);
      g_clear_error (&error);
      device = atomr_device_new_mock ();
    }

  actor = example_fill_actor_new (device, &error);
  buffer = actor ? atomr_buffer_new (device, ATOMR_DTYPE_F32, 1024, &error) : NULL;
  bytes_buffer = buffer ? atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error) : NULL;
  if (bytes_buffer == NULL)
    {
      g_printerr ("example-actor: %s\n", error->message);
      return 1;
    }
  /* The envelope's signals come for free. */
  g_signal_connect (actor, "after-complete", G_CALLBACK (count_fill), &calls);

  example_fill_actor_fill_async (actor, buffer, 0x3f800000 /* 1.0f */, NULL, store_result, &result);
  if (!example_fill_actor_fill_finish (actor, wait_result (&result), &error))
    {
      g_printerr ("example-actor: fill failed: %s\n", error->message);
      return 1;
    }
  /* The download orders itself after the fill (hazard tracking). */
  bytes = atomr_buffer_download_sync (buffer, NULL, &error);
  if (bytes == NULL)
    {
      g_printerr ("example-actor: download failed: %s\n", error->message);
      return 1;
    }
  words = g_bytes_get_data (bytes, &size);
  for (gsize i = 0; i < size / 4; i++)
    if (words[i] != 0x3f800000)
      {
        g_printerr ("example-actor: element %" G_GSIZE_FORMAT " is 0x%08x, not 0x3f800000\n", i, words[i]);
        return 1;
      }

  example_fill_actor_fill_async (actor, bytes_buffer, 0, NULL, store_result, &refused);
  if (example_fill_actor_fill_finish (actor, wait_result (&refused), &error) ||
      !g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT))
    {
      g_printerr ("example-actor: a u8 buffer was not refused\n");
      return 1;
    }
  if (calls != 1)
    {
      g_printerr ("example-actor: after-complete was emitted %u times for fill-pattern, not once\n", calls);
      return 1;
    }

  g_print ("example-actor: %" G_GSIZE_FORMAT " elements filled with 0x3f800000 on %s by %s; "
           "u8 buffer refused: %s\n",
           size / 4, atomr_device_get_name (device), atomr_actor_get_name (ATOMR_ACTOR (actor)),
           error->message);
  return 0;
}
