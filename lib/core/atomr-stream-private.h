/* atomr-stream-private.h — streams, fences and pinned staging memory
 *
 * An AtomrStream is one CUDA stream of one device generation, or — on the
 * host device used by the CPU test suite — an in-process queue whose fences
 * the test completes by hand.  Everything above this layer (envelope,
 * completion strategies, hazard tracking) is written once against it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda.h>
#include <glib-object.h>

#include "atomr-device.h"

G_BEGIN_DECLS

typedef struct _AtomrStream AtomrStream;
typedef struct _AtomrFence  AtomrFence;

struct _AtomrStream {
  gatomicrefcount ref;
  AtomrDevice *device;          /* strong */
  guint        generation;
  guint        id;              /* per device, for traces */
  CUstream     handle;          /* NULL on the host device */
  guint        service_pass;    /* the completion service's thread only */

  /* The fence word (atomr_stream_record_word()): a page of host memory,
   * ours, registered with the context when first asked for; the GPU
   * writes each word fence's number into its first 32 bits.  Under lock. */
  guint32     *word;            /* NULL: not made yet, or failed */
  CUdeviceptr  word_dev;
  guint32      word_next;       /* the number the last word fence took */
  gboolean     word_failed;     /* registration failed once: never again */

  /* host device only */
  GMutex       lock;
  GCond        cond;
  GQueue       pending;         /* AtomrFence* not yet completed, in order */
  GPtrArray   *waits;           /* AtomrFence* this stream was told to wait on */
  gint         fail_records;    /* tests: make the next N records fail */
  gint         n_sync_waiters;  /* threads in atomr_stream_synchronize() */
};

struct _AtomrFence {
  gatomicrefcount ref;
  AtomrStream *stream;          /* strong */
  guint        generation;
  CUevent      event;           /* NULL on the host device */
  CUevent      start;           /* timing start, or NULL */
  gint         kind;            /* AtomrEventKind of @event */
  gint         mode;            /* AtomrCompletionMode it was flushed under */

  /* A word fence: the GPU writes @word_seq into the stream's word after
   * the event; 0 for none.  Queries read the word and ask the driver only
   * every WORD_QUERY_EVERY-th time the word is short (errors, hand-offs). */
  guint32      word_seq;
  gint         word_misses;     /* atomic */

  /* Set by a waiter thread or a host function when the GPU passed it. */
  gint         signalled;       /* atomic */
  gint         result;          /* CUresult seen by the signaller */

  /* host device only: the fence completes once every dependency has */
  gint         host_status;     /* -1 pending, else a CUresult */
  GPtrArray   *host_deps;
};

AtomrStream *atomr_stream_new            (AtomrDevice  *device,
                                          GError      **error);
AtomrStream *atomr_stream_ref            (AtomrStream  *stream);
void         atomr_stream_unref          (AtomrStream  *stream);
gboolean     atomr_stream_is_host        (AtomrStream  *stream);

/* Records a fence after everything enqueued so far. */
AtomrFence  *atomr_stream_record         (AtomrStream  *stream,
                                          gint          kind,
                                          GError      **error);
/* The same, and then (on a GPU whose driver has stream memory operations,
 * for fences of kind ATOMR_EVENT_PLAIN) a write of the fence's number into
 * the stream's word: a query then sees the fence passed with a load from
 * host memory instead of a cuEventQuery, and sees it sooner.  Errors the
 * word cannot report (the GPU never writes it after a fault) are learnt
 * from the event, asked every few queries.  The latency case: a request
 * with nothing else in flight.  The word write failing leaves a plain
 * fence, not an error.  A number is taken and written under the stream's
 * lock, so the numbers the GPU writes only grow, each after its own event;
 * callers may race. */
AtomrFence  *atomr_stream_record_word    (AtomrStream  *stream,
                                          gint          kind,
                                          GError      **error);
/* TRUE when @word (read from memory) has reached @seq: serial number
 * arithmetic, so that the numbers may wrap. */
static inline gboolean
atomr_fence_word_reached (guint32 word,
                          guint32 seq)
{
  return (gint32) (word - seq) >= 0;
}
/* Blocks until everything enqueued on @stream so far has finished (a
 * host stream: until no fence is pending).  For the rare paths that cannot
 * fence (a failed event record) yet must not free what the GPU uses. */
CUresult     atomr_stream_synchronize    (AtomrStream  *stream);
/* Makes later work on @stream wait for @fence, on the GPU. */
gboolean     atomr_stream_wait           (AtomrStream  *stream,
                                          AtomrFence   *fence,
                                          GError      **error);

AtomrFence  *atomr_fence_ref             (AtomrFence   *fence);
void         atomr_fence_unref           (AtomrFence   *fence);
/* CUDA_SUCCESS when passed, CUDA_ERROR_NOT_READY when not yet, else the
 * error the GPU reported.  Never blocks. */
CUresult     atomr_fence_query           (AtomrFence   *fence);
/* Blocks the calling thread until the fence is passed: sleeps in the
 * driver for blocking-sync fences, else polls with short naps. */
CUresult     atomr_fence_synchronize     (AtomrFence   *fence);
/* GPU milliseconds between the timing start and the fence, or -1. */
gdouble      atomr_fence_elapsed_ms      (AtomrFence   *fence);

/* Host device: complete the oldest pending fences of @stream, in order.
 * @result is the CUresult they report (CUDA_SUCCESS or an error).  A fence
 * whose dependencies have not completed stays pending, as on a GPU.
 * Returns how many fences completed. */
guint        atomr_host_stream_complete  (AtomrStream  *stream,
                                          guint         n,
                                          CUresult      result);
guint        atomr_host_stream_get_n_pending (AtomrStream *stream);
/* Host device: the next @n records fail as a driver would (tests). */
void         atomr_host_stream_fail_records (AtomrStream *stream,
                                             guint        n);
/* Host device: how many threads wait in atomr_stream_synchronize(). */
guint        atomr_host_stream_get_n_sync_waiters (AtomrStream *stream);
/* Host device: forget pending fences and waits (they reference the stream,
 * which references them): call when the stream's owner lets go of it. */
void         atomr_host_stream_abandon   (AtomrStream  *stream);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrStream, atomr_stream_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrFence, atomr_fence_unref)

/* Pinned host staging memory, pooled per device generation. */
typedef struct {
  gpointer     data;
  gsize        size;
  guint        generation;
  AtomrDevice *device;          /* strong */
} AtomrPinned;

/* Size classes: powers of two up to PINNED_POW2_LIMIT, then multiples of
 * PINNED_LARGE_STEP (never more than 2 MiB over the request). */
#define PINNED_POW2_LIMIT  ((gsize) 64 << 20)
#define PINNED_LARGE_STEP  ((gsize) 2 << 20)

AtomrPinned *atomr_pinned_acquire        (AtomrDevice  *device,
                                          gsize         size,
                                          GError      **error);
void         atomr_pinned_release        (AtomrPinned  *pinned);

G_END_DECLS
