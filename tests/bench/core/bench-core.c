/* bench-core.c — the envelope against raw CUDA, in one run
 *
 * Round trip: cuMemsetD32Async + event record + wait, raw (the calling
 * thread waits on the event) versus the same fill through an actor with the
 * reply delivered on a GMainLoop, for each completion strategy.
 * Pipelined throughput: the same with a window of operations in flight.
 * Scale: 1, 64 and 1024 actors — threads and CPU time while idle, and the
 * completion latency with one request per actor in flight, against raw
 * streams polled by one thread.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"

#define N_ROUND 3000
#define N_PIPE  60000
#define WINDOW  64
#define N_ELEMS 256

static gdouble
raw_round_trip (AtomrDevice *device, CUdeviceptr ptr, guint event_flags)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gdouble *t = g_new (gdouble, N_ROUND);
  CUstream stream;
  CUevent event;
  gdouble m;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  cu->cuEventCreate (&event, event_flags);
  for (guint i = 0; i < N_ROUND + 100; i++)
    {
      gdouble t0 = bench_now_us ();
      cu->cuMemsetD32Async (ptr, i, N_ELEMS, stream);
      cu->cuEventRecord (event, stream);
      cu->cuEventSynchronize (event);
      if (i >= 100)
        t[i - 100] = (gdouble) (bench_now_us () - t0);
    }
  cu->cuEventDestroy (event);
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  m = bench_median (t, N_ROUND);
  g_free (t);
  return m;
}

/* Raw fills with an event only every @every fills: what per-operation
 * events cost the GPU (the actor records one per operation). */
static gdouble
raw_throughput_sparse_events (AtomrDevice *device, CUdeviceptr ptr, guint every)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUstream stream;
  CUevent events[WINDOW];
  gdouble t0;
  guint k = 0;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  for (guint i = 0; i < WINDOW; i++)
    cu->cuEventCreate (&events[i], CU_EVENT_DISABLE_TIMING);
  t0 = bench_now_us ();
  for (guint i = 0; i < N_PIPE; i++)
    {
      cu->cuMemsetD32Async (ptr, i, N_ELEMS, stream);
      if ((i + 1) % every == 0)
        {
          CUevent ev = events[k % WINDOW];
          if (k >= WINDOW)
            cu->cuEventSynchronize (ev);
          cu->cuEventRecord (ev, stream);
          k++;
        }
    }
  cu->cuStreamSynchronize (stream);
  t0 = bench_now_us () - t0;
  for (guint i = 0; i < WINDOW; i++)
    cu->cuEventDestroy (events[i]);
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return N_PIPE / (t0 / 1e6);
}

static gdouble
raw_throughput (AtomrDevice *device, CUdeviceptr ptr)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUstream stream;
  CUevent events[WINDOW];
  gdouble t0;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  for (guint i = 0; i < WINDOW; i++)
    cu->cuEventCreate (&events[i], CU_EVENT_DISABLE_TIMING);
  t0 = bench_now_us ();
  for (guint i = 0; i < N_PIPE; i++)
    {
      CUevent ev = events[i % WINDOW];
      if (i >= WINDOW)
        cu->cuEventSynchronize (ev);
      cu->cuMemsetD32Async (ptr, i, N_ELEMS, stream);
      cu->cuEventRecord (ev, stream);
    }
  cu->cuStreamSynchronize (stream);
  t0 = bench_now_us () - t0;
  for (guint i = 0; i < WINDOW; i++)
    cu->cuEventDestroy (events[i]);
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return N_PIPE / (t0 / 1e6);
}

typedef struct {
  AtomrActor  *actor;
  AtomrBuffer *buffer;
  GMainLoop   *loop;
  gdouble     *times;
  guint        done;
  guint        submitted;
  guint        total;
  gdouble      t0;
  gboolean     pipelined;
} Bench;

static void submit (Bench *b);

static void
on_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Bench *b = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_fill_finish (b->actor, result, &error))
    g_error ("fill failed: %s", error->message);
  if (!b->pipelined && b->done >= 100)
    b->times[b->done - 100] = (gdouble) (bench_now_us () - b->t0);
  b->done++;
  if (b->done == b->total)
    g_main_loop_quit (b->loop);
  else if (b->submitted < b->total)
    submit (b);
}

static void
submit (Bench *b)
{
  b->t0 = bench_now_us ();
  b->submitted++;
  atomr_actor_fill_async (b->actor, b->buffer, (gdouble) b->submitted, NULL, on_reply, b);
}

static gdouble
envelope_round_trip (AtomrDevice *device, AtomrCompletionMode mode)
{
  g_autoptr(GError) error = NULL;
  Bench b = { 0 };
  gdouble m;

  b.actor = ATOMR_ACTOR (atomr_copy_actor_new (device, &error));
  b.buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
  if (error)
    g_error ("%s", error->message);
  atomr_actor_set_completion_mode (b.actor, mode);
  b.loop = g_main_loop_new (NULL, FALSE);
  b.times = g_new (gdouble, N_ROUND);
  b.total = N_ROUND + 100;
  submit (&b);
  g_main_loop_run (b.loop);
  m = bench_median (b.times, N_ROUND);
  g_free (b.times);
  g_main_loop_unref (b.loop);
  g_object_unref (b.buffer);
  g_object_unref (b.actor);
  return m;
}

static gdouble
envelope_throughput (AtomrDevice *device, AtomrCompletionMode mode)
{
  g_autoptr(GError) error = NULL;
  Bench b = { 0 };
  gdouble t0;

  b.actor = ATOMR_ACTOR (atomr_copy_actor_new (device, &error));
  b.buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
  if (error)
    g_error ("%s", error->message);
  atomr_actor_set_completion_mode (b.actor, mode);
  b.loop = g_main_loop_new (NULL, FALSE);
  b.total = N_PIPE;
  b.pipelined = TRUE;
  t0 = bench_now_us ();
  for (guint i = 0; i < WINDOW; i++)
    submit (&b);
  g_main_loop_run (b.loop);
  t0 = bench_now_us () - t0;
  g_main_loop_unref (b.loop);
  g_object_unref (b.buffer);
  g_object_unref (b.actor);
  return N_PIPE / (t0 / 1e6);
}

/* The same pipeline, written the way a pipeline is: fills without a
 * callback (no reply object at all), and a barrier every WINDOW/2 fills
 * whose reply keeps two half-windows in flight. */
typedef struct {
  AtomrActor  *actor;
  AtomrBuffer *buffer;
  GMainLoop   *loop;
  guint        submitted, barriers_done, barriers_total;
} Stream;

static void submit_half (Stream *s);

static void
on_barrier (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Stream *s = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_barrier_finish (s->actor, result, &error))
    g_error ("barrier failed: %s", error->message);
  if (++s->barriers_done == s->barriers_total)
    g_main_loop_quit (s->loop);
  else if (s->submitted < N_PIPE)
    submit_half (s);
}

static void
submit_half (Stream *s)
{
  for (guint i = 0; i < WINDOW / 2; i++)
    atomr_actor_fill_async (s->actor, s->buffer, (gdouble) ++s->submitted, NULL, NULL, NULL);
  atomr_actor_barrier_async (s->actor, NULL, on_barrier, s);
}

static gdouble
envelope_throughput_no_reply (AtomrDevice *device, AtomrCompletionMode mode)
{
  g_autoptr(GError) error = NULL;
  Stream s = { 0 };
  gdouble t0;

  s.actor = ATOMR_ACTOR (atomr_copy_actor_new (device, &error));
  s.buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
  if (error)
    g_error ("%s", error->message);
  atomr_actor_set_completion_mode (s.actor, mode);
  s.loop = g_main_loop_new (NULL, FALSE);
  s.barriers_total = N_PIPE / (WINDOW / 2);
  t0 = bench_now_us ();
  submit_half (&s);
  submit_half (&s);
  g_main_loop_run (s.loop);
  t0 = bench_now_us () - t0;
  g_main_loop_unref (s.loop);
  g_object_unref (s.buffer);
  g_object_unref (s.actor);
  return s.submitted / (t0 / 1e6);
}

/* ------------------------------------------------------------------ */
/* Scale                                                                */

#define N_SCALE_ROUNDS 20
#define IDLE_MS        1000

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

/* Raw: @n streams, one fill + event each, one thread polls all events. */
static gdouble
raw_many (AtomrDevice *device, CUdeviceptr ptr, guint n)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUstream *streams = g_new (CUstream, n);
  CUevent *events = g_new (CUevent, n);
  gdouble *t0 = g_new (gdouble, n);
  gdouble *lat = g_new (gdouble, (gsize) n * N_SCALE_ROUNDS);
  gboolean *done = g_new (gboolean, n);
  guint k = 0;
  gdouble m;

  atomr_device_enter (device, NULL);
  for (guint i = 0; i < n; i++)
    {
      cu->cuStreamCreate (&streams[i], CU_STREAM_NON_BLOCKING);
      cu->cuEventCreate (&events[i], CU_EVENT_DISABLE_TIMING);
    }
  for (guint r = 0; r < N_SCALE_ROUNDS; r++)
    {
      guint left = n;
      for (guint i = 0; i < n; i++)
        {
          t0[i] = bench_now_us ();
          cu->cuMemsetD32Async (ptr, i, N_ELEMS, streams[i]);
          cu->cuEventRecord (events[i], streams[i]);
          done[i] = FALSE;
        }
      while (left > 0)
        for (guint i = 0; i < n; i++)
          if (!done[i] && cu->cuEventQuery (events[i]) == CUDA_SUCCESS)
            {
              done[i] = TRUE;
              left--;
              lat[k++] = bench_now_us () - t0[i];
            }
    }
  for (guint i = 0; i < n; i++)
    {
      cu->cuEventDestroy (events[i]);
      cu->cuStreamDestroy (streams[i]);
    }
  atomr_device_leave (device);
  m = bench_median (lat, k);
  g_free (streams); g_free (events); g_free (t0); g_free (lat); g_free (done);
  return m;
}

typedef struct {
  gdouble   *lat;
  guint      k;
  guint      left;
  gdouble   *t0;
} Many;

typedef struct {
  Many *many;
  guint index;
} ManyReply;

static void
on_many_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ManyReply *mr = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_fill_finish (ATOMR_ACTOR (source), result, &error))
    g_error ("fill failed: %s", error->message);
  mr->many->lat[mr->many->k++] = bench_now_us () - mr->many->t0[mr->index];
  mr->many->left--;
}

static gboolean
quit_idle (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* @n actors: threads and CPU while idle, then one fill each in flight. */
static void
actors_many (AtomrDevice *device, guint n, AtomrCompletionMode mode, gdouble raw_us)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) actors = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autofree ManyReply *replies = g_new0 (ManyReply, n);
  Many many = { g_new (gdouble, (gsize) n * N_SCALE_ROUNDS), 0, 0, g_new (gdouble, n) };
  guint threads_idle, threads_peak = 0;
  gdouble cpu0, idle_cpu, m;

  for (guint i = 0; i < n; i++)
    {
      AtomrActor *actor = ATOMR_ACTOR (atomr_copy_actor_new (device, &error));
      if (actor == NULL)
        g_error ("%s", error->message);
      atomr_actor_set_completion_mode (actor, mode);
      g_ptr_array_add (actors, actor);
      g_ptr_array_add (buffers, atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error));
      replies[i].many = &many;
      replies[i].index = i;
    }
  /* One round first, so that every lazily made thread exists. */
  for (guint r = 0; r < N_SCALE_ROUNDS + 1; r++)
    {
      if (r == 1)
        many.k = 0;
      many.left = n;
      for (guint i = 0; i < n; i++)
        {
          many.t0[i] = bench_now_us ();
          atomr_actor_fill_async (actors->pdata[i], buffers->pdata[i], (gdouble) r, NULL,
                                  on_many_reply, &replies[i]);
        }
      /* Sampled once a round, all requests in flight: reading /proc in
       * the loop would add to the latency measured. */
      threads_peak = MAX (threads_peak, count_threads ());
      while (many.left > 0)
        g_main_context_iteration (NULL, TRUE);
    }
  m = bench_median (many.lat, many.k);

  /* Idle: nothing in flight, the main loop runs for a second. */
  threads_idle = count_threads ();
  cpu0 = cpu_ms ();
  g_timeout_add (IDLE_MS, quit_idle, loop);
  g_main_loop_run (loop);
  idle_cpu = cpu_ms () - cpu0;

  printf ("%6u actors %-14s %8u %8u %10.1f %10.2f %8.2f\n", n,
          mode == ATOMR_COMPLETION_ADAPTIVE ? "adaptive" : "event thread",
          threads_idle, threads_peak, idle_cpu, m, m / raw_us);
  g_free (many.lat);
  g_free (many.t0);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrBuffer) scratch = NULL;
  static const struct { AtomrCompletionMode mode; const gchar *name; } modes[] = {
    { ATOMR_COMPLETION_ADAPTIVE, "adaptive (default)" },
    { ATOMR_COMPLETION_POLL, "poll" },
    { ATOMR_COMPLETION_EVENT_THREAD, "event thread" },
    { ATOMR_COMPLETION_HOST_FUNC, "host function" },
  };
  gdouble raw, raw_blocking, raw_tp;

  if (device == NULL)
    {
      g_printerr ("bench-core: %s\n", error->message);
      return 77;
    }
  scratch = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
  atomr_buffer_fill_sync (scratch, 0, NULL, &error);

  /* Warm up the driver and the clocks. */
  raw_round_trip (device, atomr_buffer_get_device_pointer (scratch), CU_EVENT_DISABLE_TIMING);

  raw = raw_round_trip (device, atomr_buffer_get_device_pointer (scratch), CU_EVENT_DISABLE_TIMING);
  raw_blocking = raw_round_trip (device, atomr_buffer_get_device_pointer (scratch),
                                 CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC);
  printf ("# bench-core on %s (driver %d)\n", atomr_device_get_name (device),
          atomr_device_get_driver_version ());
  printf ("# round trip: cuMemsetD32Async(%d floats) + event, median of %d\n", N_ELEMS, N_ROUND);
  printf ("%-40s %10s %8s\n", "path", "median_us", "ratio");
  printf ("%-40s %10.2f %8s\n", "raw, spin-wait on event", raw, "1.00");
  printf ("%-40s %10.2f %8.2f\n", "raw, blocking-sync event", raw_blocking, raw_blocking / raw);
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      gdouble us = envelope_round_trip (device, modes[i].mode);
      g_autofree gchar *label = g_strdup_printf ("actor, reply on main loop, %s", modes[i].name);
      printf ("%-40s %10.2f %8.2f\n", label, us, us / raw);
    }

  raw_tp = raw_throughput (device, atomr_buffer_get_device_pointer (scratch));
  printf ("# pipelined throughput, window %d, %d operations\n", WINDOW, N_PIPE);
  printf ("%-40s %10s %8s\n", "path", "ops_per_s", "ratio");
  printf ("%-40s %10.0f %8s\n", "raw", raw_tp, "1.00");
  {
    gdouble sparse = raw_throughput_sparse_events (device, atomr_buffer_get_device_pointer (scratch), 32);
    printf ("%-40s %10.0f %8.2f\n", "raw, one event per 32 fills", sparse, sparse / raw_tp);
  }
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      gdouble tp = envelope_throughput (device, modes[i].mode);
      g_autofree gchar *label = g_strdup_printf ("actor, reply each, %s", modes[i].name);
      printf ("%-40s %10.0f %8.2f\n", label, tp, tp / raw_tp);
    }
  for (guint i = 0; i < 2; i++)
    {
      gdouble tp = envelope_throughput_no_reply (device, modes[i].mode);
      g_autofree gchar *label = g_strdup_printf ("actor, no reply + barriers, %s", modes[i].name);
      printf ("%-40s %10.0f %8.2f\n", label, tp, tp / raw_tp);
    }

  printf ("# scale: one fill per actor in flight, %d rounds; idle for %d ms afterwards\n",
          N_SCALE_ROUNDS, IDLE_MS);
  printf ("# ratio: median completion latency over raw (n streams, one thread polling them)\n");
  printf ("%6s %-21s %8s %8s %10s %10s %8s\n", "n", "", "thr_idle", "thr_peak", "idle_cpu_ms",
          "median_us", "ratio");
  {
    static const guint ns[] = { 1, 64, 1024 };
    for (guint i = 0; i < G_N_ELEMENTS (ns); i++)
      {
        g_autoptr(AtomrBuffer) big = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
        gdouble raw_n = raw_many (device, atomr_buffer_get_device_pointer (big), ns[i]);
        printf ("%6u raw streams %-10s %8s %8s %10s %10.2f %8s\n", ns[i], "", "-", "-", "-", raw_n, "1.00");
        actors_many (device, ns[i], ATOMR_COMPLETION_ADAPTIVE, raw_n);
        actors_many (device, ns[i], ATOMR_COMPLETION_EVENT_THREAD, raw_n);
      }
  }
  return 0;
}
