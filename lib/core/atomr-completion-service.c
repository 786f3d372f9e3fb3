/* atomr-completion-service.c — one thread per device learns of completion
 *
 * It replaces a waiter thread per actor (1000 actors made 1000 threads that
 * were never reclaimed, each polling).  See the header for the contract
 * and docs/DESIGN-NOTES.md ("The completion service") for the figures.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-completion-service-private.h"

#ifdef __linux__
#include <sys/prctl.h>
#endif

#define NAP_MIN_USEC 20
#define NAP_MAX_USEC 250

typedef struct
{
  AtomrFence     *fence;
  GFunc           notify;
  gpointer        data;
  GDestroyNotify  destroy;
  gint64          since;
} Watch;

struct _AtomrCompletionService
{
  GMutex     lock;
  GCond      cond;
  GPtrArray *watched;        /* Watch*, under lock */
  GThread   *thread;         /* started on the first watch */
  gboolean   stop;
  gboolean   kicked;
  gboolean   polling;        /* a pass runs (unlocked) */
  gint       refs;           /* the owner and the thread */
};

static void
watch_free (Watch *w,
            gboolean notify)
{
  if (notify && w->notify)
    w->notify (w->data, NULL);
  if (w->destroy)
    w->destroy (w->data);
  atomr_fence_unref (w->fence);
  g_free (w);
}

static void
service_unref (AtomrCompletionService *service)
{
  if (!g_atomic_int_dec_and_test (&service->refs))
    return;
  for (guint i = 0; i < service->watched->len; i++)
    watch_free (g_ptr_array_index (service->watched, i), FALSE);
  g_ptr_array_unref (service->watched);
  g_mutex_clear (&service->lock);
  g_cond_clear (&service->cond);
  g_free (service);
}

/* A thirty-second of the time the youngest fence has waited, 20 to 250
 * µs: a fence passes on average half a nap before it is seen, so a long
 * wait's reply comes ~1.5% of it late, at most 250 µs.  An eighth and up
 * to 2 ms (before) made 20 pipelined SGEMMs of 4096 (54 ms) reply 0.4-0.5
 * ms after raw CUDA's synchronize returned: 0.7-0.9% on each call, the
 * whole gap of the peers table's SGEMM 4096 rows.  At least four times the
 * pass itself, so that the service never takes more than a fifth of a
 * core however many streams it queries (1024 busy actors: a query each). */
gint64
atomr_completion_service_nap_usec (gint64 waited_usec,
                                   gint64 pass_usec)
{
  gint64 nap = CLAMP (waited_usec / 32, NAP_MIN_USEC, NAP_MAX_USEC);

  return MAX (nap, 4 * MAX (pass_usec, 0));
}

static gboolean
fence_is_host (AtomrFence *fence)
{
  return fence->event == NULL;
}

static gpointer
service_main (gpointer data)
{
  AtomrCompletionService *service = data;
  g_autoptr(GPtrArray) done = g_ptr_array_new ();
  g_autoptr(GPtrArray) pending = g_ptr_array_new ();
  guint pass = 0;
  gint64 pass_start, pass_usec = 0;

#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
  /* Linux lets a timed wait run up to 50 µs late by default (timer
   * slack): as long as the shorter naps themselves.  1 µs. */
  prctl (PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
  g_mutex_lock (&service->lock);
  for (;;)
    {
      gint64 youngest = 0;
      gboolean any_gpu = FALSE;

      /* Nothing watched: sleep until there is (no CPU while idle). */
      while (!service->stop && service->watched->len == 0)
        g_cond_wait (&service->cond, &service->lock);
      if (service->stop)
        break;
      service->kicked = FALSE;

      /* Query outside the lock: a query takes the device's context lock,
       * and watchers must never wait for the driver. */
      g_ptr_array_extend_and_steal (pending, g_steal_pointer (&service->watched));
      service->watched = g_ptr_array_new ();
      service->polling = TRUE;
      g_mutex_unlock (&service->lock);

      /* A stream passes its fences in order, and watches are in the order
       * they came: once one fence of a stream is not ready, its later ones
       * are not either (one query per busy stream and pass). */
      if (++pass == 0)
        pass = 1;
      pass_start = g_get_monotonic_time ();
      for (guint i = 0; i < pending->len; i++)
        {
          Watch *w = g_ptr_array_index (pending, i);
          CUresult res;

          if (w->fence->stream->service_pass == pass)
            continue;
          res = atomr_fence_query (w->fence);
          if (res == CUDA_ERROR_NOT_READY)
            {
              w->fence->stream->service_pass = pass;
              continue;
            }
          w->fence->result = res;
          g_atomic_int_set (&w->fence->signalled, 1);
          g_ptr_array_add (done, w);
          pending->pdata[i] = NULL;
        }
      pass_usec = g_get_monotonic_time () - pass_start;
      for (guint i = 0; i < done->len; i++)
        watch_free (g_ptr_array_index (done, i), TRUE);
      g_ptr_array_set_size (done, 0);

      g_mutex_lock (&service->lock);
      service->polling = FALSE;
      {
        /* What is left goes before what arrived meanwhile: order matters
         * (see above). */
        GPtrArray *kept = g_ptr_array_new ();
        for (guint i = 0; i < pending->len; i++)
          {
            Watch *w = g_ptr_array_index (pending, i);
            if (w == NULL)
              continue;
            g_ptr_array_add (kept, w);
            youngest = MAX (youngest, w->since);
            any_gpu |= !fence_is_host (w->fence);
          }
        g_ptr_array_extend_and_steal (kept, service->watched);
        service->watched = kept;
        g_ptr_array_set_size (pending, 0);
      }
      if (service->stop)
        break;
      if (service->watched->len == 0 || service->kicked)
        continue;
      if (any_gpu)
        {
          /* The GPU tells nobody: nap (a new watch or a kick cuts it
           * short). */
          gint64 now = g_get_monotonic_time ();
          g_cond_wait_until (&service->cond, &service->lock,
                             now + atomr_completion_service_nap_usec (now - youngest, pass_usec));
        }
      else
        {
          /* Host fences: completing them kicks us. */
          while (!service->kicked && !service->stop)
            g_cond_wait (&service->cond, &service->lock);
        }
    }
  g_mutex_unlock (&service->lock);
  service_unref (service);
  return NULL;
}

AtomrCompletionService *
atomr_completion_service_new (void)
{
  AtomrCompletionService *service = g_new0 (AtomrCompletionService, 1);

  g_mutex_init (&service->lock);
  g_cond_init (&service->cond);
  service->watched = g_ptr_array_new ();
  service->refs = 1;
  return service;
}

void
atomr_completion_service_free (AtomrCompletionService *service)
{
  GThread *thread;

  if (service == NULL)
    return;
  g_mutex_lock (&service->lock);
  service->stop = TRUE;
  g_cond_broadcast (&service->cond);
  thread = g_steal_pointer (&service->thread);
  g_mutex_unlock (&service->lock);
  if (thread && thread != g_thread_self ())
    g_thread_join (thread);
  else if (thread)
    g_thread_unref (thread);   /* the last fence held the device: finish the pass */
  service_unref (service);
}

void
atomr_completion_service_watch (AtomrCompletionService *service,
                                AtomrFence             *fence,
                                GFunc                   notify,
                                gpointer                data,
                                GDestroyNotify          destroy)
{
  Watch *w = g_new0 (Watch, 1);

  w->fence = atomr_fence_ref (fence);
  w->notify = notify;
  w->data = data;
  w->destroy = destroy;
  w->since = g_get_monotonic_time ();

  g_mutex_lock (&service->lock);
  if (service->stop)
    {
      g_mutex_unlock (&service->lock);
      watch_free (w, FALSE);
      return;
    }
  g_ptr_array_add (service->watched, w);
  if (service->thread == NULL)
    {
      g_atomic_int_inc (&service->refs);
      service->thread = g_thread_new ("atomr-completion", service_main, service);
    }
  service->kicked = TRUE;
  g_cond_signal (&service->cond);
  g_mutex_unlock (&service->lock);
}

void
atomr_completion_service_kick (AtomrCompletionService *service)
{
  g_mutex_lock (&service->lock);
  /* Nothing watched and no pass running: nobody to tell (a wake-up for
   * nothing costs a context switch on every host fence). */
  if (service->watched->len > 0 || service->polling)
    {
      service->kicked = TRUE;
      g_cond_signal (&service->cond);
    }
  g_mutex_unlock (&service->lock);
}

guint
atomr_completion_service_get_n_watched (AtomrCompletionService *service)
{
  guint n;

  g_mutex_lock (&service->lock);
  n = service->watched->len;
  g_mutex_unlock (&service->lock);
  return n;
}

gboolean
atomr_completion_service_has_thread (AtomrCompletionService *service)
{
  gboolean has;

  g_mutex_lock (&service->lock);
  has = service->thread != NULL;
  g_mutex_unlock (&service->lock);
  return has;
}
