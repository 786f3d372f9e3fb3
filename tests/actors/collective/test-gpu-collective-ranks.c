/* test-gpu-collective-ranks.c — a world of two processes, one GPU each,
 * built from the environment variables torchrun sets, and the failure of
 * one rank: the other's request fails with TIMED_OUT instead of hanging.
 * Needs two GPUs (NCCL runs one rank per GPU); skips otherwise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomr.h>

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static GAsyncResult *
wait_for (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

/* The child: join, all-reduce rank-dependent values, check the sum.
 * With @fault, rank 1 leaves before the collective and rank 0 must time out. */
static int
child (gboolean fault)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCollectiveWorld) world = NULL;
  GAsyncResult *res = NULL;
  AtomrCollectiveActor *actor;
  guint rank, n;
  const guint count = 1 << 16;
  g_autofree gfloat *host = g_new (gfloat, count);
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrTensor) t = NULL;
  g_autoptr(GBytes) out = NULL;
  const gint64 shape[] = { count };

  atomr_collective_world_new_from_environment_async (NULL, NULL, store_result, &res);
  world = atomr_collective_world_new_finish (wait_for (&res), &error);
  g_clear_object (&res);
  if (world == NULL)
    {
      g_printerr ("rank ?: no world: %s\n", error->message);
      return 2;
    }
  actor = atomr_collective_world_get_actor (world, 0);
  rank = atomr_collective_actor_get_rank (actor);
  n = atomr_collective_world_get_n_ranks (world);
  if (fault && rank == 1)
    _exit (0);   /* a rank lost before the collective */
  atomr_collective_world_set_timeout_ms (world, fault ? 3000 : 60000);
  for (guint i = 0; i < count; i++)
    host[i] = (gfloat) (rank + 1) * (gfloat) (i % 100);
  buffer = atomr_buffer_new (atomr_actor_get_device (ATOMR_ACTOR (actor)), ATOMR_DTYPE_F32, count, &error);
  g_assert_no_error (error);
  {
    g_autoptr(GBytes) b = g_bytes_new (host, count * sizeof (gfloat));
    g_assert_true (atomr_buffer_upload_sync (buffer, b, NULL, &error));
  }
  t = atomr_tensor_new (buffer, shape, 1, &error);
  atomr_collective_actor_all_reduce_async (actor, t, t, ATOMR_REDUCE_SUM, NULL, store_result, &res);
  if (!atomr_collective_actor_all_reduce_finish (actor, wait_for (&res), &error))
    {
      g_printerr ("rank %u: all-reduce failed: %s\n", rank, error->message);
      return fault && g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT) ? 3 : 1;
    }
  g_clear_object (&res);
  out = atomr_buffer_download_sync (buffer, NULL, &error);
  g_assert_no_error (error);
  {
    const gfloat *v = g_bytes_get_data (out, NULL);
    gfloat factor = (gfloat) (n * (n + 1) / 2);
    for (guint i = 0; i < count; i += 97)
      if (v[i] != factor * (gfloat) (i % 100))
        {
          g_printerr ("rank %u: element %u is %g, want %g\n", rank, i, v[i], factor * (i % 100));
          return 1;
        }
  }
  g_print ("rank %u of %u: all-reduce ok\n", rank, n);
  return 0;
}

static void
run_world (gboolean fault)
{
  g_autofree gchar *self = g_file_read_link ("/proc/self/exe", NULL);
  GPid pids[2];
  gint status[2];
  guint port = 29500 + g_random_int_range (0, 2000);

  if (atomr_device_get_count () < 2)
    {
      g_test_skip ("needs two GPUs: NCCL runs one rank per GPU (two processes cannot share one)");
      return;
    }
  for (guint r = 0; r < 2; r++)
    {
      g_auto(GStrv) env = g_get_environ ();
      g_autofree gchar *rank = g_strdup_printf ("%u", r);
      g_autofree gchar *p = g_strdup_printf ("%u", port);
      g_autoptr(GError) error = NULL;
      gchar *argv[] = { (gchar *) self, (gchar *) (fault ? "--child-fault" : "--child"), NULL };

      env = g_environ_setenv (env, "RANK", rank, TRUE);
      env = g_environ_setenv (env, "LOCAL_RANK", rank, TRUE);
      env = g_environ_setenv (env, "WORLD_SIZE", "2", TRUE);
      env = g_environ_setenv (env, "MASTER_ADDR", "127.0.0.1", TRUE);
      env = g_environ_setenv (env, "MASTER_PORT", p, TRUE);
      env = g_environ_setenv (env, "NCCL_NVLS_ENABLE", "0", TRUE);
      g_assert_true (g_spawn_async (NULL, argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pids[r], &error));
      g_assert_no_error (error);
    }
  for (guint r = 0; r < 2; r++)
    {
      g_assert_cmpint (waitpid (pids[r], &status[r], 0), ==, pids[r]);
      g_spawn_close_pid (pids[r]);
    }
  if (!fault)
    {
      g_assert_true (g_spawn_check_wait_status (status[0], NULL));
      g_assert_true (g_spawn_check_wait_status (status[1], NULL));
    }
  else
    {
      /* rank 0 saw its request fail with TIMED_OUT (exit 3), within the timeout */
      g_assert_true (WIFEXITED (status[0]));
      g_assert_cmpint (WEXITSTATUS (status[0]), ==, 3);
    }
}

static void
test_two_processes (void)
{
  run_world (FALSE);
}

static void
test_lost_rank_times_out (void)
{
  run_world (TRUE);
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--child") == 0)
    return child (FALSE);
  if (argc > 1 && strcmp (argv[1], "--child-fault") == 0)
    return child (TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gpu-collective/two-processes", test_two_processes);
  g_test_add_func ("/gpu-collective/lost-rank-times-out", test_lost_rank_times_out);
  return g_test_run ();
}
