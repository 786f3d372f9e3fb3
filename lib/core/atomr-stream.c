/* atomr-stream.c — streams, fences and pinned staging memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-device-private.h"
#include "atomr-error.h"
#include "atomr-stream-private.h"
#include "atomr-completion-service-private.h"

/* A word fence whose word is short asks the driver about its event every
 * this many queries: a fault stops the GPU before it writes the word, and
 * only the event reports the error. */
#define WORD_QUERY_EVERY 16

static gboolean
stream_is_current (AtomrStream *stream)
{
  return stream->generation == atomr_device_get_generation_internal (stream->device);
}

AtomrStream *
atomr_stream_new (AtomrDevice  *device,
                  GError      **error)
{
  g_autoptr(AtomrStream) stream = g_new0 (AtomrStream, 1);

  g_atomic_ref_count_init (&stream->ref);
  stream->device = g_object_ref (device);
  g_mutex_init (&stream->lock);
  g_cond_init (&stream->cond);
  g_queue_init (&stream->pending);
  stream->waits = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_fence_unref);
  stream->id = atomr_device_next_stream_id (device);

  if (!atomr_device_enter (device, error))
    return NULL;
  stream->generation = atomr_device_get_generation (device);
  if (!atomr_device_is_host (device) && (stream->handle = atomr_device_take_stream (device)) == NULL)
    {
      CUresult res = ATOMR_CU->cuStreamCreate (&stream->handle, CU_STREAM_NON_BLOCKING);
      if (!atomr_cuda_check (res, "cuStreamCreate", error))
        {
          stream->handle = NULL;
          atomr_device_leave (device);
          return NULL;
        }
    }
  atomr_device_leave (device);
  return g_steal_pointer (&stream);
}

AtomrStream *
atomr_stream_ref (AtomrStream *stream)
{
  g_atomic_ref_count_inc (&stream->ref);
  return stream;
}

void
atomr_stream_unref (AtomrStream *stream)
{
  if (!g_atomic_ref_count_dec (&stream->ref))
    return;

  if (stream->word)
    {
      /* A context that is gone took the registration with it. */
      if (stream_is_current (stream) && atomr_device_hold (stream->device, stream->generation))
        {
          ATOMR_CU->cuMemHostUnregister (stream->word);
          atomr_device_release (stream->device);
        }
      g_aligned_free (stream->word);
    }
  if (stream->handle && stream_is_current (stream))
    atomr_device_return_stream (stream->device, stream->generation, stream->handle);
  g_queue_foreach (&stream->pending, (GFunc) atomr_fence_unref, NULL);
  g_queue_clear (&stream->pending);
  g_ptr_array_unref (stream->waits);
  g_mutex_clear (&stream->lock);
  g_cond_clear (&stream->cond);
  g_object_unref (stream->device);
  g_free (stream);
}

gboolean
atomr_stream_is_host (AtomrStream *stream)
{
  return stream->handle == NULL;
}

static AtomrFence *
fence_new (AtomrStream *stream,
           gint         kind)
{
  AtomrFence *fence = g_new0 (AtomrFence, 1);

  g_atomic_ref_count_init (&fence->ref);
  fence->stream = atomr_stream_ref (stream);
  fence->generation = stream->generation;
  fence->kind = kind;
  fence->host_status = -1;
  return fence;
}

AtomrFence *
atomr_stream_record (AtomrStream *stream,
                     gint         kind,
                     GError     **error)
{
  AtomrFence *fence;
  CUresult res;

  if (stream->handle == NULL && g_atomic_int_get (&stream->fail_records) > 0)
    {
      g_atomic_int_add (&stream->fail_records, -1);
      return (atomr_cuda_check (CUDA_ERROR_OUT_OF_MEMORY, "cuEventRecord", error), NULL);
    }
  fence = fence_new (stream, kind);
  if (stream->handle == NULL)
    {
      g_mutex_lock (&stream->lock);
      /* A host stream runs in order: the new fence depends on whatever
       * the stream was told to wait for since the previous fence. */
      if (stream->waits->len > 0)
        {
          fence->host_deps = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_fence_unref);
          for (guint i = 0; i < stream->waits->len; i++)
            g_ptr_array_add (fence->host_deps, atomr_fence_ref (g_ptr_array_index (stream->waits, i)));
        }
      g_queue_push_tail (&stream->pending, atomr_fence_ref (fence));
      g_mutex_unlock (&stream->lock);
      if (atomr_device_get_host_autocomplete (stream->device))
        atomr_host_stream_complete (stream, G_MAXUINT, CUDA_SUCCESS);
      return fence;
    }

  fence->event = atomr_device_take_event (stream->device, kind, error);
  if (fence->event == NULL)
    {
      atomr_fence_unref (fence);
      return NULL;
    }
  res = ATOMR_CU->cuEventRecord (fence->event, stream->handle);
  if (!atomr_cuda_check (res, "cuEventRecord", error))
    {
      atomr_fence_unref (fence);
      return NULL;
    }
  return fence;
}

/* ATOMR_FENCE_WORD=0 turns the words off; read when a stream first asks
 * for its word, so a benchmark can compare two actors in one process. */
static gboolean
words_wanted (void)
{
  return g_strcmp0 (g_getenv ("ATOMR_FENCE_WORD"), "0") != 0;
}

/* Under stream->lock, the context held and current. */
static gboolean
stream_ensure_word (AtomrStream *stream)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gsize page = 4096;

  if (stream->word || stream->word_failed)
    return stream->word != NULL;
  stream->word_failed = TRUE;
  if (cu->cuStreamWriteValue32 == NULL || cu->cuMemHostRegister == NULL ||
      cu->cuMemHostUnregister == NULL || !words_wanted ())
    return FALSE;
  stream->word = g_aligned_alloc0 (1, page, page);
  if (cu->cuMemHostRegister (stream->word, page, CU_MEMHOSTREGISTER_DEVICEMAP) != CUDA_SUCCESS)
    {
      g_clear_pointer (&stream->word, g_aligned_free);
      return FALSE;
    }
  if (cu->cuMemHostGetDevicePointer (&stream->word_dev, stream->word, 0) != CUDA_SUCCESS)
    {
      cu->cuMemHostUnregister (stream->word);
      g_clear_pointer (&stream->word, g_aligned_free);
      return FALSE;
    }
  stream->word_failed = FALSE;
  return TRUE;
}

AtomrFence *
atomr_stream_record_word (AtomrStream *stream,
                          gint         kind,
                          GError     **error)
{
  AtomrFence *fence = atomr_stream_record (stream, kind, error);

  if (fence == NULL || stream->handle == NULL || kind != ATOMR_EVENT_PLAIN)
    return fence;
  /* The caller holds the context (actor_flush); hold() made it current. */
  g_mutex_lock (&stream->lock);
  if (stream_ensure_word (stream))
    {
      guint32 seq = stream->word_next + 1;

      if (seq == 0)
        seq = 1;   /* 0 means "no word" */
      /* Default flags: a memory barrier before the write, so the work's
       * results are visible once the word is. */
      if (ATOMR_CU->cuStreamWriteValue32 (stream->handle, stream->word_dev, seq, 0) == CUDA_SUCCESS)
        {
          stream->word_next = seq;
          fence->word_seq = seq;
        }
    }
  g_mutex_unlock (&stream->lock);
  return fence;
}

CUresult
atomr_stream_synchronize (AtomrStream *stream)
{
  CUresult res;

  if (stream->handle == NULL)
    {
      g_mutex_lock (&stream->lock);
      stream->n_sync_waiters++;
      g_cond_broadcast (&stream->cond);
      while (!g_queue_is_empty (&stream->pending))
        g_cond_wait (&stream->cond, &stream->lock);
      stream->n_sync_waiters--;
      g_mutex_unlock (&stream->lock);
      return CUDA_SUCCESS;
    }
  if (!atomr_device_hold (stream->device, stream->generation))
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  res = ATOMR_CU->cuStreamSynchronize (stream->handle);
  atomr_device_release (stream->device);
  return res;
}

gboolean
atomr_stream_wait (AtomrStream *stream,
                   AtomrFence  *fence,
                   GError     **error)
{
  if (fence->stream == stream)
    return TRUE;  /* same stream: already ordered */

  if (fence->generation != stream->generation)
    return TRUE;  /* work of a dead context: nothing to wait for */

  if (stream->handle == NULL)
    {
      g_mutex_lock (&stream->lock);
      g_ptr_array_add (stream->waits, atomr_fence_ref (fence));
      g_mutex_unlock (&stream->lock);
      return TRUE;
    }

  return atomr_cuda_check (ATOMR_CU->cuStreamWaitEvent (stream->handle, fence->event, 0),
                           "cuStreamWaitEvent", error);
}

AtomrFence *
atomr_fence_ref (AtomrFence *fence)
{
  g_atomic_ref_count_inc (&fence->ref);
  return fence;
}

void
atomr_fence_unref (AtomrFence *fence)
{
  if (!g_atomic_ref_count_dec (&fence->ref))
    return;

  if (fence->event)
    atomr_device_return_event (fence->stream->device, fence->generation, fence->event, fence->kind);
  if (fence->start)
    atomr_device_return_event (fence->stream->device, fence->generation, fence->start, ATOMR_EVENT_TIMING);
  g_clear_pointer (&fence->host_deps, g_ptr_array_unref);
  atomr_stream_unref (fence->stream);
  g_free (fence);
}

CUresult
atomr_fence_query (AtomrFence *fence)
{
  AtomrDevice *device = fence->stream->device;
  CUresult res;

  if (fence->event == NULL)
    {
      gint status = g_atomic_int_get (&fence->host_status);
      return status < 0 ? CUDA_ERROR_NOT_READY : (CUresult) status;
    }

  if (fence->generation != atomr_device_get_generation_internal (device))
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  /* Once passed, always passed: don't ask the driver again. */
  if (g_atomic_int_get (&fence->signalled))
    return (CUresult) fence->result;

  /* The word is in host memory of ours, valid whatever became of the
   * context; the GPU wrote it after the event, so the event passed too. */
  if (fence->word_seq != 0)
    {
      guint32 word = (guint32) g_atomic_int_get ((gint *) fence->stream->word);

      if (atomr_fence_word_reached (word, fence->word_seq))
        {
          fence->result = CUDA_SUCCESS;
          g_atomic_int_set (&fence->signalled, 1);
          return CUDA_SUCCESS;
        }
      if ((g_atomic_int_add (&fence->word_misses, 1) + 1) % WORD_QUERY_EVERY != 0)
        return CUDA_ERROR_NOT_READY;
    }

  /* Not enter(): a query must work on a poisoned context, to learn its
   * error; holding the context keeps a rebuild out meanwhile. */
  if (!atomr_device_hold (device, fence->generation))
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  res = ATOMR_CU->cuEventQuery (fence->event);
  atomr_device_release (device);
  if (res != CUDA_ERROR_NOT_READY)
    {
      fence->result = res;
      g_atomic_int_set (&fence->signalled, 1);
    }
  return res;
}

CUresult
atomr_fence_synchronize (AtomrFence *fence)
{
  AtomrStream *stream = fence->stream;

  if (fence->event == NULL)
    {
      CUresult res;
      g_mutex_lock (&stream->lock);
      while (g_atomic_int_get (&fence->host_status) < 0)
        g_cond_wait (&stream->cond, &stream->lock);
      res = (CUresult) fence->host_status;
      g_mutex_unlock (&stream->lock);
      return res;
    }

  if (fence->kind == ATOMR_EVENT_BLOCKING)
    {
      CUresult res;
      if (!atomr_device_hold (stream->device, fence->generation))
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
      res = ATOMR_CU->cuEventSynchronize (fence->event);
      atomr_device_release (stream->device);
      return res;
    }

  /* A plain event: cuEventSynchronize would spin a core for as long as the
   * work takes.  Nap instead, as the completion service does (a
   * thirty-second of the time waited so far, 20 to 250 µs): the wake-up
   * lags completion by ~3% of a short wait, at most 250 µs. */
  {
    gint64 start = g_get_monotonic_time ();
    for (;;)
      {
        CUresult res = atomr_fence_query (fence);
        gint64 waited;
        if (res != CUDA_ERROR_NOT_READY)
          return res;
        waited = g_get_monotonic_time () - start;
        g_usleep ((gulong) atomr_completion_service_nap_usec (waited, 0));
      }
  }
}

gdouble
atomr_fence_elapsed_ms (AtomrFence *fence)
{
  float ms = -1.f;

  if (fence->event == NULL || fence->start == NULL)
    return -1.0;
  if (!atomr_device_hold (fence->stream->device, fence->generation))
    return -1.0;
  if (ATOMR_CU->cuEventElapsedTime (&ms, fence->start, fence->event) != CUDA_SUCCESS)
    ms = -1.f;
  atomr_device_release (fence->stream->device);
  return ms;
}

static gboolean
host_deps_done (AtomrFence *fence)
{
  if (fence->host_deps == NULL)
    return TRUE;
  for (guint i = 0; i < fence->host_deps->len; i++)
    {
      AtomrFence *dep = g_ptr_array_index (fence->host_deps, i);
      if (g_atomic_int_get (&dep->host_status) < 0)
        return FALSE;
    }
  return TRUE;
}

guint
atomr_host_stream_complete (AtomrStream *stream,
                            guint        n,
                            CUresult     result)
{
  guint done = 0;

  g_return_val_if_fail (stream->handle == NULL, 0);

  g_mutex_lock (&stream->lock);
  while (done < n && !g_queue_is_empty (&stream->pending))
    {
      AtomrFence *fence = g_queue_peek_head (&stream->pending);
      if (!host_deps_done (fence))
        break;
      g_queue_pop_head (&stream->pending);
      g_atomic_int_set (&fence->host_status, (gint) result);
      atomr_fence_unref (fence);
      done++;
    }
  /* Waits are consumed by the fences recorded after them. */
  if (g_queue_is_empty (&stream->pending))
    g_ptr_array_set_size (stream->waits, 0);
  g_cond_broadcast (&stream->cond);
  g_mutex_unlock (&stream->lock);
  /* A fence of another stream that waited for these may be ready now. */
  if (done > 0)
    atomr_device_kick_completion (stream->device);
  return done;
}

guint
atomr_host_stream_get_n_pending (AtomrStream *stream)
{
  guint n;

  g_mutex_lock (&stream->lock);
  n = g_queue_get_length (&stream->pending);
  g_mutex_unlock (&stream->lock);
  return n;
}

void
atomr_host_stream_fail_records (AtomrStream *stream,
                                guint        n)
{
  g_atomic_int_set (&stream->fail_records, (gint) n);
}

guint
atomr_host_stream_get_n_sync_waiters (AtomrStream *stream)
{
  guint n;

  g_mutex_lock (&stream->lock);
  n = stream->n_sync_waiters;
  g_mutex_unlock (&stream->lock);
  return n;
}

void
atomr_host_stream_abandon (AtomrStream *stream)
{
  GQueue pending = G_QUEUE_INIT;

  if (stream->handle != NULL)
    return;
  g_mutex_lock (&stream->lock);
  pending = stream->pending;
  g_queue_init (&stream->pending);
  g_ptr_array_set_size (stream->waits, 0);
  g_mutex_unlock (&stream->lock);
  /* Whoever still waits on them learns they will never complete. */
  for (GList *l = pending.head; l; l = l->next)
    {
      AtomrFence *fence = l->data;
      g_atomic_int_set (&fence->host_status, CUDA_ERROR_CONTEXT_IS_DESTROYED);
    }
  g_mutex_lock (&stream->lock);
  g_cond_broadcast (&stream->cond);
  g_mutex_unlock (&stream->lock);
  g_queue_foreach (&pending, (GFunc) atomr_fence_unref, NULL);
  g_queue_clear (&pending);
  atomr_device_kick_completion (stream->device);
}

AtomrPinned *
atomr_pinned_acquire (AtomrDevice *device,
                      gsize        size,
                      GError     **error)
{
  AtomrPinned *pinned;
  guint generation = 0;
  gsize rounded = 4096;
  gpointer data;

  /* Power-of-two size classes keep the pool small and reusable, but only
   * up to PINNED_POW2_LIMIT: beyond it doubling wastes too much pinned
   * (unswappable) memory — 512 MiB + 4 B took 1 GiB — so larger requests
   * round up to whole PINNED_LARGE_STEP units instead (less than 2 MiB
   * over).  The device's pool keeps at most 256 MiB of either. */
  if (size > PINNED_POW2_LIMIT)
    {
      if (size > G_MAXSIZE - PINNED_LARGE_STEP)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_OUT_OF_MEMORY,
                       "Pinned staging of %" G_GSIZE_FORMAT " bytes is beyond any host memory", size);
          return NULL;
        }
      rounded = (size + PINNED_LARGE_STEP - 1) / PINNED_LARGE_STEP * PINNED_LARGE_STEP;
    }
  else
    while (rounded < size)
      rounded <<= 1;

  data = atomr_device_pinned_take (device, rounded, &generation, error);
  if (data == NULL)
    return NULL;
  pinned = g_new0 (AtomrPinned, 1);
  pinned->data = data;
  pinned->size = rounded;
  pinned->generation = generation;
  pinned->device = g_object_ref (device);
  return pinned;
}

void
atomr_pinned_release (AtomrPinned *pinned)
{
  if (pinned == NULL)
    return;
  atomr_device_pinned_give (pinned->device, pinned->data, pinned->size, pinned->generation);
  g_object_unref (pinned->device);
  g_free (pinned);
}
