/* bench-scale-host.c — many actors on the host test device, without a GPU
 *
 * For 1, 64 and 1024 actors: the process's threads and CPU time during one
 * idle second, and the median time from submit to reply with one request
 * per actor in flight (fences complete when recorded, so this is the
 * envelope's own path: mailbox, completion service, reply).  Runs on any
 * machine; bench-core measures the same against raw CUDA on a GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <sys/resource.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"

#define ROUNDS  20
#define IDLE_MS 1000

static guint
count_threads (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  guint n = 0;
  while (dir && g_dir_read_name (dir))
    n++;
  return n;
}

static gdouble
cpu_ms (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

typedef struct {
  gdouble *lat;
  gdouble *t0;
  guint    k;
  guint    left;
} Many;

typedef struct {
  Many  *many;
  guint  index;
} Reply;

static void
on_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Reply *r = user_data;

  if (!atomr_actor_fill_finish (ATOMR_ACTOR (source), result, NULL))
    g_error ("fill failed");
  r->many->lat[r->many->k++] = bench_now_us () - r->many->t0[r->index];
  r->many->left--;
}

static gboolean
quit_idle (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

static void
run (guint n, AtomrCompletionMode mode, const gchar *name)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GPtrArray) actors = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autofree Reply *replies = g_new0 (Reply, n);
  Many many = { g_new (gdouble, (gsize) n * ROUNDS), g_new (gdouble, n), 0, 0 };
  guint base = count_threads (), peak = 0, idle;
  gdouble cpu0, idle_cpu, median;

  atomr_device_set_host_autocomplete (device, TRUE);
  for (guint i = 0; i < n; i++)
    {
      AtomrActor *actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, NULL);
      atomr_actor_set_completion_mode (actor, mode);
      atomr_actor_set_spin_usec (actor, 0);
      g_ptr_array_add (actors, actor);
      g_ptr_array_add (buffers, atomr_buffer_new (device, ATOMR_DTYPE_F32, 4, NULL));
      replies[i].many = &many;
      replies[i].index = i;
    }
  for (guint r = 0; r < ROUNDS + 1; r++)
    {
      if (r == 1)
        many.k = 0;   /* the first round makes the lazily made threads */
      many.left = n;
      for (guint i = 0; i < n; i++)
        {
          many.t0[i] = bench_now_us ();
          atomr_actor_fill_async (actors->pdata[i], buffers->pdata[i], 1.0, NULL, on_reply, &replies[i]);
        }
      peak = MAX (peak, count_threads ());
      while (many.left > 0)
        g_main_context_iteration (NULL, TRUE);
    }
  median = bench_median (many.lat, many.k);

  idle = count_threads ();
  cpu0 = cpu_ms ();
  g_timeout_add (IDLE_MS, quit_idle, loop);
  g_main_loop_run (loop);
  idle_cpu = cpu_ms () - cpu0;

  printf ("%6u %-14s %10d %10d %12.1f %12.2f\n", n, name, (gint) idle - (gint) base,
          (gint) peak - (gint) base, idle_cpu, median);
  g_free (many.lat);
  g_free (many.t0);
}

int
main (int argc, char **argv)
{
  static const guint ns[] = { 1, 64, 1024 };

  printf ("# bench-scale-host: host test device, one fill per actor in flight, %d rounds,\n"
          "# then %d ms idle; threads counted above those before the actors existed\n",
          ROUNDS, IDLE_MS);
  printf ("%6s %-14s %10s %10s %12s %12s\n", "actors", "mode", "thr_idle", "thr_peak",
          "idle_cpu_ms", "median_us");
  for (guint i = 0; i < G_N_ELEMENTS (ns); i++)
    {
      run (ns[i], ATOMR_COMPLETION_ADAPTIVE, "adaptive");
      run (ns[i], ATOMR_COMPLETION_EVENT_THREAD, "event-thread");
    }
  return 0;
}
