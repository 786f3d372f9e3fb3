/* bench-pool-host.c — the host (CPU) cost of allocate + free through
 * atomr, counted in instructions by callgrind on the host test device:
 *
 *   atomr_buffer_new + g_object_unref of 256 B and of 1 MiB
 *
 * The program runs itself under `valgrind --tool=callgrind`, collecting
 * only inside measure_loop (), and prints the instructions of one
 * allocate + free pair.  Instruction counts do not depend on the load of
 * the machine.  The host device zeroes every buffer (1 MiB: the memset is
 * most of the count); the 256 B line is the library's own overhead, which
 * is the same on a GPU apart from the driver calls.  Without valgrind it
 * says so and exits 0.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <glib/gstdio.h>
#include <valgrind/valgrind.h>

#include <atomr.h>
#include "core/atomr-device-private.h"

#define N_ITER 1000

static const gsize sizes[] = { 256, 1 << 20 };

G_GNUC_NO_INLINE void measure_loop (AtomrDevice *device, gsize size);

G_GNUC_NO_INLINE void
measure_loop (AtomrDevice *device,
              gsize        size)
{
  for (guint i = 0; i < N_ITER; i++)
    {
      AtomrBuffer *buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, size, NULL);

      g_object_unref (buffer);
    }
}

static int
child (gsize size)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  AtomrBuffer *warm = atomr_buffer_new (device, ATOMR_DTYPE_U8, size, NULL);

  /* the first allocation makes the pool and the device thread */
  g_object_unref (warm);
  measure_loop (device, size);
  return 0;
}

/* The "summary:" (or "totals:") line of a callgrind output file. */
static guint64
read_total (const char *path)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], "summary:") || g_str_has_prefix (lines[i], "totals:"))
      return g_ascii_strtoull (strchr (lines[i], ':') + 1, NULL, 10);
  return 0;
}

int
main (int argc, char **argv)
{
  g_autofree char *valgrind = NULL;

  if (argc == 3 && strcmp (argv[1], "--child") == 0)
    return child ((gsize) g_ascii_strtoull (argv[2], NULL, 10));
  if (RUNNING_ON_VALGRIND)
    return child (sizes[0]);

  valgrind = g_find_program_in_path ("valgrind");
  if (valgrind == NULL)
    {
      printf ("bench-pool-host: valgrind not found; nothing measured\n");
      return 0;
    }
  printf ("%-44s %14s\n", "allocate + free (host device)", "instructions");
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      g_autofree char *out = g_strdup_printf ("%s/bench-pool-host-%d-%u.callgrind",
                                              g_get_tmp_dir (), (int) getpid (), s);
      g_autofree char *out_arg = g_strdup_printf ("--callgrind-out-file=%s", out);
      g_autofree char *size_arg = g_strdup_printf ("%" G_GSIZE_FORMAT, sizes[s]);
      const char *args[] = { valgrind, "--tool=callgrind", "-q", out_arg,
                             "--toggle-collect=measure_loop", argv[0], "--child",
                             size_arg, NULL };
      g_autoptr(GError) error = NULL;
      gint status = 0;
      guint64 total;

      if (!g_spawn_sync (NULL, (char **) args, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                         NULL, NULL, &status, &error) ||
          !g_spawn_check_wait_status (status, &error))
        {
          fprintf (stderr, "bench-pool-host: callgrind failed: %s\n", error->message);
          return 1;
        }
      total = read_total (out);
      g_unlink (out);
      if (total == 0)
        {
          fprintf (stderr, "bench-pool-host: no instruction count in %s\n", out);
          return 1;
        }
      printf ("atomr_buffer_new + g_object_unref, %7" G_GSIZE_FORMAT " B %14.0f\n",
              sizes[s], (double) total / N_ITER);
    }
  return 0;
}
