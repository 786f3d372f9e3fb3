/* bench-inspector.c — what the live-attach server costs a pipeline, against
 * raw CUDA, in one run
 *
 * The pipelined-launch pattern of bench-trace: 1 KiB fills
 * (cuMemsetD32Async), 64 in flight, a barrier every 32.  Rows: the raw
 * loop (one event per fill; the 1.00 baseline), the actor alone, the
 * actor added to a running AtomrInspectorServer with no client (goal: the
 * same as alone), the same with always-record on (every record kept in
 * the recorder: no goal, for information), and with one WebSocket client
 * streaming every record on its own thread (goal: at most 5% slower than
 * alone).
 *
 * Made to give ratios that mean something (issue 18: two runs of the old
 * bench on the same code disagreed by 2x, and rows doing more work came
 * out faster than rows doing less):
 *  - one actor for every row (the same state: stream, completion service,
 *    warm caches), added to and removed from the server per row;
 *  - WARMUP passes of every row first;
 *  - many short rounds (the 19:00 run of 9 rounds of 30000 fills had
 *    worst/best spreads of 0.34-0.77 for every row, the actor alone
 *    included, so a ratio of two medians moved by more than the 5% it was
 *    to judge): in each round every row, in a rotated order, runs right
 *    next to a run of the actor alone, before it in even rounds and after
 *    it in odd ones, and "vs alone" is the median over the rounds of the
 *    ratio of the two (with its quartiles): a drift of the machine within
 *    the run (clocks, other tenants, the completion thread's wake-ups)
 *    hits both runs of a pair alike instead of the row that happened to
 *    run then;
 *  - a pause after each row, long (250 ms) after the rows whose records
 *    the server thread moves on in its housekeeping tick (200 ms);
 *  - the CPU the application's thread runs on reported (how often it
 *    changed during a timed run), and pinned in the timed rounds with
 *    ATOMR_BENCH_PIN_CPU=N (not by default: the threads the library
 *    starts inherit the mask of the thread that starts them);
 *  - each completion mode that matters measured separately: poll (the
 *    actor's thread polls its fences: the ratio is the server's cost on
 *    that thread) and adaptive (the default: it polls a fence for
 *    spin-usec, 100 µs, then hands it to the device's completion thread.
 *    A batch of 32 fills takes about 80 µs on an H100, so the wait for a
 *    barrier sits right at the spin window and a row lands on either
 *    side of it — spinning, or waiting for the completion thread's
 *    wake-up — by small changes in timing.  That, not the server, is the
 *    likely reason the old single-shot rows differed by 2x (the server
 *    with no client adds one atomic read per operation: see
 *    bench-inspector-host); the spread column (worst over best of the
 *    rounds) shows it).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE   /* sched_getcpu(), sched_setaffinity() */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libsoup/soup.h>

#include <atomr.h>
#include "../bench-util.h"
#include "bench-inspector-client.h"
#include "core/atomr-actor-private.h"

#define N_OPS   10000
#define ROUNDS  21    /* ATOMR_BENCH_ROUNDS=N (3 to MAX_ROUNDS) for more */
#define MAX_ROUNDS 101
#define WARMUP  2
#define WINDOW  64
#define BATCH   32
#define N_ELEMS 256

static guint n_rounds = ROUNDS;

static gdouble
raw_throughput (AtomrDevice *device,
                CUdeviceptr  ptr,
                gboolean     timed)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUstream stream;
  CUevent ends[WINDOW], starts[WINDOW];
  gdouble t0;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  for (guint i = 0; i < WINDOW; i++)
    {
      cu->cuEventCreate (&ends[i], timed ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
      cu->cuEventCreate (&starts[i], CU_EVENT_DEFAULT);
    }
  t0 = bench_now_us ();
  for (guint i = 0; i < N_OPS; i++)
    {
      guint k = i % WINDOW;
      if (i >= WINDOW)
        {
          cu->cuEventSynchronize (ends[k]);
          if (timed)
            {
              float ms;
              cu->cuEventElapsedTime (&ms, starts[k], ends[k]);
            }
        }
      if (timed)
        cu->cuEventRecord (starts[k], stream);
      cu->cuMemsetD32Async (ptr, i, N_ELEMS, stream);
      cu->cuEventRecord (ends[k], stream);
    }
  cu->cuStreamSynchronize (stream);
  t0 = bench_now_us () - t0;
  for (guint i = 0; i < WINDOW; i++)
    {
      cu->cuEventDestroy (ends[i]);
      cu->cuEventDestroy (starts[i]);
    }
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return N_OPS / (t0 / 1e6);
}

typedef struct
{
  guint done;   /* barriers answered */
} Window;

static void
barrier_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Window *w = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error))
    g_error ("barrier: %s", error->message);
  w->done++;
}

static gdouble
actor_throughput (AtomrActor  *actor,
                  AtomrBuffer *buffer)
{
  Window w = { 0 };
  guint barriers = 0;
  gdouble t0;

  t0 = bench_now_us ();
  for (guint i = 0; i < N_OPS; i++)
    {
      atomr_actor_fill_async (actor, buffer, i, NULL, NULL, NULL);
      if ((i + 1) % BATCH == 0)
        {
          atomr_actor_barrier_async (actor, NULL, barrier_done, &w);
          barriers++;
          while (barriers - w.done > WINDOW / BATCH)
            g_main_context_iteration (NULL, TRUE);
        }
    }
  atomr_actor_barrier_async (actor, NULL, barrier_done, &w);
  barriers++;
  while (w.done < barriers)
    g_main_context_iteration (NULL, TRUE);
  t0 = bench_now_us () - t0;
  return N_OPS / (t0 / 1e6);
}

typedef struct
{
  AtomrDevice          *device;
  AtomrBuffer          *buffer;
  AtomrActor           *actor;
  AtomrInspectorServer *server;
  BenchClient           client;
  gint                  expected;   /* records the client should have had */
  guint64               record_dropped;   /* by the server in always-record rows */
  gint64                streamed[N_ROWS];       /* records a streaming row's client received */
  gint64                stream_dropped[N_ROWS]; /* and was told were dropped */
  guint                 n_runs;           /* timed runs */
  guint                 n_migrated;       /* of which this thread changed CPU */
  guint64               cpus_seen;        /* bit i: ran (started or ended) on CPU i (< 64) */
  gint                  pin;              /* ATOMR_BENCH_PIN_CPU, -1: not pinned */
} Bench;

static void
note_cpu (Bench *b,
          gint   cpu)
{
  if (cpu >= 0 && cpu < 64)
    b->cpus_seen |= G_GUINT64_CONSTANT (1) << cpu;
}

/* Pins this thread (the application's: it submits and completes) to
 * b->pin, or lets it run anywhere again (@on FALSE).  Only around the
 * timed rounds: threads started by this one inherit its mask, and the
 * device's completion thread is started on the first hand-off (during
 * the warm-up); the client thread sets its own mask back to all CPUs. */
static void
pin_thread (Bench    *b,
            gboolean  on)
{
  if (b->pin < 0)
    return;
  if (on)
    {
      cpu_set_t set;
      CPU_ZERO (&set);
      CPU_SET (b->pin, &set);
      if (sched_setaffinity (0, sizeof set, &set) != 0)
        g_error ("pinning to CPU %d: %s", b->pin, g_strerror (errno));
    }
  else
    bench_unpin_thread ();
}

/* One row on the bench's one actor: the server set up for it, the
 * pipeline, the server set back, and a pause for its thread to settle
 * (long after the rows whose records the server thread moves on). */
static gdouble
run_row (Bench   *b,
         BenchRow row)
{
  guint64 dropped = atomr_inspector_server_get_n_dropped (b->server);
  gint received0 = g_atomic_int_get (&b->client.received), dropped0 = g_atomic_int_get (&b->client.dropped);
  gint cpu0, cpu1;
  gdouble ops;

  if (row == ROW_RECORD)
    atomr_inspector_server_set_always_record (b->server, TRUE);
  b->client.batched = row == ROW_STREAM_BATCH;
  if (bench_row_streams (row))
    bench_client_start (&b->client, b->server);
  if (row != ROW_ALONE)
    atomr_inspector_server_add_actor (b->server, b->actor);
  cpu0 = sched_getcpu ();
  ops = actor_throughput (b->actor, b->buffer);
  cpu1 = sched_getcpu ();
  b->n_runs++;
  b->n_migrated += cpu0 != cpu1;
  note_cpu (b, cpu0);
  note_cpu (b, cpu1);
  if (row != ROW_ALONE)
    atomr_inspector_server_remove_actor (b->server, b->actor);
  if (bench_row_streams (row))
    {
      b->expected += N_OPS + N_OPS / BATCH + 1;
      bench_client_stop (&b->client, b->expected);
      b->streamed[row] += g_atomic_int_get (&b->client.received) - received0;
      b->stream_dropped[row] += g_atomic_int_get (&b->client.dropped) - dropped0;
    }
  if (row == ROW_RECORD)
    atomr_inspector_server_set_always_record (b->server, FALSE);
  /* The housekeeping tick (200 ms) moves the records of the rows that
   * made any on; the other rows leave nothing behind. */
  g_usleep (row == ROW_RECORD || bench_row_streams (row) ? 250000 : 20000);
  if (row == ROW_RECORD)
    b->record_dropped += atomr_inspector_server_get_n_dropped (b->server) - dropped;
  return ops;
}

/* The raw loop as a row: timed the same way, with the same pause. */
static gdouble
run_raw (Bench *b)
{
  gdouble ops = raw_throughput (b->device, atomr_buffer_get_device_pointer (b->buffer), FALSE);

  g_usleep (20000);
  return ops;
}

/* Quartiles of @n samples (sorts @v). */
static void
quartiles (gdouble *v,
           guint    n,
           gdouble *q1,
           gdouble *q2,
           gdouble *q3)
{
  bench_median (v, n);   /* sorts */
  *q1 = v[n / 4];
  *q2 = v[n / 2];
  *q3 = v[(3 * n) / 4];
}

static void
run_mode (Bench               *b,
          AtomrCompletionMode  mode,
          const gchar         *mode_name)
{
  /* Per round and per compared row (the raw loop at ROW_ALONE's place):
   * that row, the actor alone run right next to it, and their ratio. */
  gdouble row[N_ROWS][MAX_ROUNDS], ratio[N_ROWS][MAX_ROUNDS];
  gdouble all_alone[(N_ROWS) * MAX_ROUNDS];
  guint n_alone = 0;

  atomr_actor_set_completion_mode (b->actor, mode);
  /* Warm-up: every row (and the raw loop) WARMUP times. */
  for (guint w = 0; w < WARMUP; w++)
    {
      run_raw (b);
      for (guint k = 0; k < N_ROWS; k++)
        run_row (b, k);
    }

  pin_thread (b, TRUE);
  for (guint r = 0; r < n_rounds; r++)
    for (guint j = 0; j < N_ROWS; j++)
      {
        /* The compared rows in a rotated order, each right next to a run
         * of the actor alone, before it in even rounds and after it in
         * odd ones: a slow drift of the machine (clocks, other tenants)
         * cancels in the ratio instead of landing on whichever row ran
         * in the slow part of the run. */
        guint k = (j + r) % N_ROWS;
        gdouble a = 0, x;

        if (r % 2 == 0)
          a = run_row (b, ROW_ALONE);
        x = k == ROW_ALONE ? run_raw (b) : run_row (b, k);
        if (r % 2 == 1)
          a = run_row (b, ROW_ALONE);
        row[k][r] = x;
        ratio[k][r] = x / a;
        all_alone[n_alone++] = a;
      }
  pin_thread (b, FALSE);

  printf ("\n## completion mode %s: %d rounds; every row next to a run of the actor alone\n", mode_name, n_rounds);
  printf ("%-42s %10s %10s %7s %9s %17s\n", "path", "median/s", "best/s", "spread", "vs alone", "(quartiles)");
  for (guint k = 0; k < N_ROWS; k++)
    {
      gdouble q1, q2, q3, m, best, worst;
      const gchar *name = k == ROW_ALONE ? "raw, an event per fill" : bench_row_names[k];

      quartiles (row[k], n_rounds, &q1, &m, &q3);
      worst = row[k][0];
      best = row[k][n_rounds - 1];
      quartiles (ratio[k], n_rounds, &q1, &q2, &q3);
      printf ("%-42s %10.0f %10.0f %7.2f %9.3f   (%.3f - %.3f)\n", name, m, best, worst / best, q2, q1, q3);
    }
  {
    gdouble q1, q2, q3;
    quartiles (all_alone, n_alone, &q1, &q2, &q3);
    printf ("%-42s %10.0f %10.0f %7.2f %9s   (%.0f - %.0f /s)\n", "actor alone (all its runs)", q2,
            all_alone[n_alone - 1], all_alone[0] / all_alone[n_alone - 1], "1.000", q1, q3);
  }
  /* raw's ratio is raw/alone: print the actor over raw as well, the
   * number the other benchmarks give. */
  {
    gdouble inv[MAX_ROUNDS], q1, q2, q3;
    for (guint r = 0; r < n_rounds; r++)
      inv[r] = 1.0 / ratio[ROW_ALONE][r];
    quartiles (inv, n_rounds, &q1, &q2, &q3);
    printf ("actor alone / raw (median of the pairs): %.3f (%.3f - %.3f)\n", q2, q1, q3);
  }
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrInspectorServer) server = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autofree gchar *runtime = g_dir_make_tmp ("atomr-bench-inspect-XXXXXX", NULL);
  Bench b = { 0 };

  if (device == NULL)
    {
      printf ("bench-inspector: %s (skipped)\n", error->message);
      return 77;
    }
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
  g_assert_no_error (error);
  actor = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  server = atomr_inspector_server_new ();
  if (!atomr_inspector_server_start (server, &error))
    g_error ("%s", error->message);

  b.device = device;
  b.buffer = buffer;
  b.actor = ATOMR_ACTOR (actor);
  b.server = server;
  b.pin = -1;
  if (g_getenv ("ATOMR_BENCH_ROUNDS"))
    {
      gint64 n = g_ascii_strtoll (g_getenv ("ATOMR_BENCH_ROUNDS"), NULL, 10);
      if (n < 3 || n > MAX_ROUNDS)
        g_error ("ATOMR_BENCH_ROUNDS=%s: from 3 to %d rounds", g_getenv ("ATOMR_BENCH_ROUNDS"), MAX_ROUNDS);
      n_rounds = (guint) n;
    }
  bench_save_affinity ();
  if (g_getenv ("ATOMR_BENCH_PIN_CPU"))
    {
      b.pin = (gint) g_ascii_strtoll (g_getenv ("ATOMR_BENCH_PIN_CPU"), NULL, 10);
      if (b.pin < 0 || b.pin >= CPU_SETSIZE || !CPU_ISSET (b.pin, &bench_all_cpus))
        g_error ("ATOMR_BENCH_PIN_CPU=%s: not a CPU this process may run on", g_getenv ("ATOMR_BENCH_PIN_CPU"));
    }

  printf ("# %s, %d fills of %d B, %d in flight, a barrier every %d; %d CPUs online, %d allowed; "
          "the application's thread %s\n", atomr_device_get_name (device), N_OPS, N_ELEMS * 4, WINDOW, BATCH,
          (gint) sysconf (_SC_NPROCESSORS_ONLN), CPU_COUNT (&bench_all_cpus),
          b.pin >= 0 ? "pinned (ATOMR_BENCH_PIN_CPU) in the timed rounds" : "not pinned (ATOMR_BENCH_PIN_CPU=N pins it)");
  printf ("# %d warm-up passes, then %d rounds: in each, every row (in a rotated order) right next to a run of\n"
          "# the actor alone (before it in even rounds, after it in odd ones).  vs alone = the median over the\n"
          "# rounds of row/that adjacent alone run, with its quartiles; median/s, best/s and spread (worst/best)\n"
          "# describe the row's own runs.  The raw row's ratio is raw/alone.\n", WARMUP, n_rounds);
  run_mode (&b, ATOMR_COMPLETION_POLL, "poll");
  run_mode (&b, ATOMR_COMPLETION_ADAPTIVE, "adaptive (the default)");

  printf ("\nstreamed %d records, %d dropped (of %d over the streaming rows, warm-ups included)\n",
          g_atomic_int_get (&b.client.received), g_atomic_int_get (&b.client.dropped), b.expected);
  for (guint k = 0; k < N_ROWS; k++)
    if (bench_row_streams (k))
      printf ("  %s: %" G_GINT64_FORMAT " received, %" G_GINT64_FORMAT " dropped\n", bench_row_names[k],
              b.streamed[k], b.stream_dropped[k]);
  printf ("always-record rows: the server dropped %" G_GUINT64_FORMAT " records (must be 0 since the flush timer runs "
          "for always-record)\n", b.record_dropped);
  printf ("the application's thread changed CPU during %u of %u timed runs; CPUs it ran on:", b.n_migrated, b.n_runs);
  for (guint i = 0; i < 64; i++)
    if (b.cpus_seen & (G_GUINT64_CONSTANT (1) << i))
      printf (" %u", i);
  printf ("\ngoal: no client >= 0.99, one client >= 0.95 of the actor alone (vs alone: medians of the ratios)\n");
  atomr_inspector_server_stop (server);
  return 0;
}
