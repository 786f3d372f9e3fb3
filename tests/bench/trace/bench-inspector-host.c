/* bench-inspector-host.c — what the inspector server costs the
 * application's thread, on the mock device (no GPU needed)
 *
 * The pipelined pattern of bench-inspector (fills without a callback, a
 * barrier every 32, 64 in flight) on one copy actor of the mock device,
 * in poll mode.  For each row: CPU time of this thread
 * (CLOCK_THREAD_CPUTIME_ID: the submitting and completing thread, where
 * the envelope runs) per operation, the median of ROUNDS rounds whose
 * rows run in a rotated order (after a warm-up of every row), and its
 * ratio to the actor alone's median; then the server's debug counters
 * (records observed, queued, serialized) over the idle rows, which must
 * be 0 (the exit status says).  Rows: alone, a running server with no
 * client, always-record, one WebSocket client streaming on its own
 * thread, and the same client asking for batched frames
 * (`/v1/stream?batch=1`).  Times are printed in ns per operation.  The
 * CPU time is still noisy on a shared host; the counters are not.
 *
 * `bench-inspector-host ROW [N]` (alone, idle, record, stream or batch) runs the
 * warm-up and then that row only, ROUNDS times with N fills each (default
 * N_OPS): for callgrind, whose instruction counts per operation compare
 * exactly, e.g.
 *   valgrind --tool=callgrind --toggle-collect=measure_row bench-inspector-host idle
 * tests/bench/trace/inspector-ir.py runs that with N and 2N fills for
 * every row and prints the application thread's instructions per
 * operation (the warm-up, of N_OPS fills, cancels out).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE   /* sched_getcpu(), sched_setaffinity() */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include <libsoup/soup.h>

#include <atomr.h>
#include "../bench-util.h"
#include "bench-inspector-client.h"
#include "trace/atomr-inspector-server-private.h"

#define N_OPS   20000   /* fills per row, and per warm-up row */
#define ROUNDS  5
#define WINDOW  64
#define BATCH   32

static gdouble
thread_cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static gdouble
process_cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU µs per operation of the process's other threads (the server's,
 * the client's, the mock device's) during the last measure_row(), up to
 * its last barrier: what the server costs besides the application's
 * thread. */
static gdouble last_other_us;

static void
barrier_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error))
    g_error ("barrier: %s", error->message);
  (*(guint *) user_data)++;
}

/* CPU µs of this thread per operation.  Not static and not inlined: the
 * function callgrind's --toggle-collect names. */
G_GNUC_NO_INLINE gdouble measure_row (AtomrActor *actor, AtomrBuffer *buffer, guint n_ops);

G_GNUC_NO_INLINE gdouble
measure_row (AtomrActor  *actor,
             AtomrBuffer *buffer,
             guint        n_ops)
{
  guint done = 0, barriers = 0;
  gdouble t0, p0;

  p0 = process_cpu_us ();
  t0 = thread_cpu_us ();
  for (guint i = 0; i < n_ops; i++)
    {
      atomr_actor_fill_async (actor, buffer, i, NULL, NULL, NULL);
      if ((i + 1) % BATCH == 0)
        {
          atomr_actor_barrier_async (actor, NULL, barrier_done, &done);
          barriers++;
          while (barriers - done > WINDOW / BATCH)
            g_main_context_iteration (NULL, TRUE);
        }
    }
  while (done < barriers)
    g_main_context_iteration (NULL, TRUE);
  t0 = thread_cpu_us () - t0;
  last_other_us = (process_cpu_us () - p0 - t0) / n_ops;
  return t0 / n_ops;
}

typedef struct
{
  AtomrBuffer          *buffer;
  AtomrActor           *actor;
  AtomrInspectorServer *server;
  BenchClient           client;
  gint                  expected;
  guint64               idle_work;   /* observed + queued + serialized during idle rows */
  guint64               stream_server_ns[N_ROWS];   /* the server thread's CPU over a streaming row */
  guint64               stream_serialized[N_ROWS];  /* records it turned into JSON then */
  guint64               stream_observed[N_ROWS];    /* records the actors handed it then */
  guint64               record_dropped;   /* by the server in always-record rows */
  guint                 n_ops;            /* fills per row now */
} Bench;

/* CPU ns the server's thread ("atomr-inspector") has run so far, from
 * /proc/self/task/TID/schedstat; 0 if not found. */
static guint64
server_thread_ns (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  const gchar *tid;

  while (dir && (tid = g_dir_read_name (dir)))
    {
      g_autofree gchar *comm_path = g_strdup_printf ("/proc/self/task/%s/comm", tid);
      g_autofree gchar *stat_path = g_strdup_printf ("/proc/self/task/%s/schedstat", tid);
      g_autofree gchar *comm = NULL;
      g_autofree gchar *stat = NULL;

      if (g_file_get_contents (comm_path, &comm, NULL, NULL) && g_str_has_prefix (comm, "atomr-inspector") &&
          g_file_get_contents (stat_path, &stat, NULL, NULL))
        return g_ascii_strtoull (stat, NULL, 10);
    }
  return 0;
}

static void
counters_sum (AtomrInspectorServer *server,
              guint64              *sum)
{
  guint64 observed, published, serialized;

  atomr_inspector_server_get_debug_counters (server, &observed, &published, &serialized, NULL);
  *sum = observed + published + serialized;
}

static gdouble other[N_ROWS][ROUNDS];

static gdouble
run_row (Bench   *b,
         BenchRow row)
{
  guint64 before = 0, after = 0, dropped = atomr_inspector_server_get_n_dropped (b->server);
  gdouble us;

  if (row == ROW_RECORD)
    atomr_inspector_server_set_always_record (b->server, TRUE);
  guint64 ns0 = server_thread_ns (), ser0 = 0, obs0 = 0;

  atomr_inspector_server_get_debug_counters (b->server, &obs0, NULL, &ser0, NULL);
  b->client.batched = row == ROW_STREAM_BATCH;
  if (bench_row_streams (row))
    bench_client_start (&b->client, b->server);
  if (row != ROW_ALONE)
    atomr_inspector_server_add_actor (b->server, b->actor);
  counters_sum (b->server, &before);
  us = measure_row (b->actor, b->buffer, b->n_ops);
  if (bench_row_streams (row))
    {
      /* The server's work for the row's records is done once the client
       * has them all (or was told they were dropped). */
      gint64 deadline = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
      gdouble p0 = process_cpu_us () - thread_cpu_us ();
      while (g_atomic_int_get (&b->client.received) + g_atomic_int_get (&b->client.dropped) <
               b->expected + (gint) (b->n_ops + b->n_ops / BATCH) &&
             g_get_monotonic_time () < deadline)
        g_usleep (1000);
      last_other_us += (process_cpu_us () - thread_cpu_us () - p0) / b->n_ops;
      {
        guint64 ser1 = 0, obs1 = 0;
        g_usleep (50000);   /* the last flush */
        atomr_inspector_server_get_debug_counters (b->server, &obs1, NULL, &ser1, NULL);
        b->stream_server_ns[row] += server_thread_ns () - ns0;
        b->stream_serialized[row] += ser1 - ser0;
        b->stream_observed[row] += obs1 - obs0;
      }
    }
  counters_sum (b->server, &after);
  if (row == ROW_IDLE)
    b->idle_work += after - before;
  if (row != ROW_ALONE)
    atomr_inspector_server_remove_actor (b->server, b->actor);
  if (bench_row_streams (row))
    {
      b->expected += (gint) (b->n_ops + b->n_ops / BATCH);
      bench_client_stop (&b->client, b->expected);
    }
  if (row == ROW_RECORD)
    atomr_inspector_server_set_always_record (b->server, FALSE);
  g_usleep (250000);   /* the housekeeping tick moves the row's records on */
  if (row == ROW_RECORD)
    b->record_dropped += atomr_inspector_server_get_n_dropped (b->server) - dropped;
  return us;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 256, &error);
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autofree gchar *runtime = g_dir_make_tmp ("atomr-bench-inspect-XXXXXX", NULL);
  gdouble rows[N_ROWS][ROUNDS], alone;
  gint only = -1;
  guint n_ops = N_OPS;
  Bench b = { 0 };

  g_assert_no_error (error);
  if (argc > 1)
    {
      const gchar *const keys[N_ROWS] = { "alone", "idle", "record", "stream", "batch" };
      for (guint k = 0; k < N_ROWS; k++)
        if (g_str_equal (argv[1], keys[k]))
          only = (gint) k;
      if (only < 0)
        {
          fprintf (stderr, "usage: %s [alone|idle|record|stream|batch [N]] (not '%s')\n", argv[0], argv[1]);
          return 2;
        }
    }
  if (argc > 2 && (n_ops = (guint) g_ascii_strtoull (argv[2], NULL, 10)) < BATCH)
    {
      fprintf (stderr, "%s: N must be at least %d (not '%s')\n", argv[0], BATCH, argv[2]);
      return 2;
    }
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  actor = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_actor_set_completion_mode (ATOMR_ACTOR (actor), ATOMR_COMPLETION_POLL);
  if (!atomr_inspector_server_start (server, &error))
    g_error ("%s", error->message);
  b.buffer = buffer;
  b.actor = ATOMR_ACTOR (actor);
  b.server = server;
  b.n_ops = N_OPS;

  for (guint k = 0; k < N_ROWS; k++)   /* warm-up */
    run_row (&b, k);
  b.idle_work = 0;
  memset (b.stream_server_ns, 0, sizeof b.stream_server_ns);
  memset (b.stream_serialized, 0, sizeof b.stream_serialized);
  memset (b.stream_observed, 0, sizeof b.stream_observed);
  b.n_ops = n_ops;

  if (only >= 0)
    {
      gdouble v[ROUNDS];
      for (guint r = 0; r < ROUNDS; r++)
        v[r] = run_row (&b, only);
      printf ("%s: %.0f CPU ns/op (median of %d rounds of %u fills)\n", bench_row_names[only],
              bench_median (v, ROUNDS) * 1e3, ROUNDS, n_ops);
    }
  else
    {
      for (guint r = 0; r < ROUNDS; r++)
        for (guint k = 0; k < N_ROWS; k++)
          {
            BenchRow row = (k + r) % N_ROWS;
            rows[row][r] = run_row (&b, row);
            other[row][r] = last_other_us;
          }
      printf ("# mock device, %d fills, a barrier every %d, %d in flight, poll mode; CPU of the application's "
              "thread, median of %d rounds\n", N_OPS, BATCH, WINDOW, ROUNDS);
      printf ("%-48s %12s %10s %20s\n", "path", "CPU ns/op", "vs alone", "other threads ns/op");
      alone = bench_median (rows[ROW_ALONE], ROUNDS);
      for (guint k = 0; k < N_ROWS; k++)
        {
          gdouble m = bench_median (rows[k], ROUNDS);
          printf ("%-48s %12.0f %10.3f %20.0f\n", bench_row_names[k], m * 1e3, m / alone,
                  bench_median (other[k], ROUNDS) * 1e3);
        }
      printf ("  streamed %d records, %d dropped (of %d)\n", g_atomic_int_get (&b.client.received),
              g_atomic_int_get (&b.client.dropped), b.expected);
    }
  for (guint k = 0; k < N_ROWS; k++)
    if (b.stream_observed[k] > 0)
      printf ("  %s: the server thread ran %.0f CPU ns per record the actors handed it (%" G_GUINT64_FORMAT
              "), %" G_GUINT64_FORMAT " of them serialized\n", bench_row_names[k],
              b.stream_server_ns[k] / (gdouble) b.stream_observed[k], b.stream_observed[k], b.stream_serialized[k]);
  printf ("  the idle rows made the server observe, queue or serialize %" G_GUINT64_FORMAT " records (must be 0)\n",
          b.idle_work);
  printf ("  the always-record rows dropped %" G_GUINT64_FORMAT " records (should be 0)\n", b.record_dropped);
  atomr_inspector_server_stop (server);
  return b.idle_work == 0 ? 0 : 1;
}
