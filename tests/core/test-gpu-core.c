/* test-gpu-core.c — the core runtime on a real GPU
 *
 * Skips without a device.  Covers: device properties, round trips of every
 * dtype with random data, fill, stale buffers after a reset, cross-stream
 * hazard ordering, out-of-memory, every completion strategy, and a sticky
 * error (illegal address) handled by the supervisor.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core/atomr-stream-private.h"
#include "core/atomr-completion-service-private.h"
#include "core/atomr-memory-pool-private.h"

static AtomrDevice *device;

static gboolean
need_device (void)
{
  if (device == NULL)
    {
      g_test_skip ("no CUDA device");
      return FALSE;
    }
  return TRUE;
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static void
wait_for (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static GBytes *
random_bytes (gsize n)
{
  guint32 *data = g_malloc (n + 4);
  for (gsize i = 0; i < n / 4 + 1; i++)
    data[i] = g_random_int ();
  return g_bytes_new_take (data, n);
}

static void
test_properties (void)
{
  gint major = 0, minor = 0;
  g_autofree gchar *arch = NULL;

  if (!need_device ())
    return;
  atomr_device_get_compute_capability (device, &major, &minor);
  g_test_message ("device 0: %s, sm_%d%d, %d SMs, %" G_GUINT64_FORMAT " bytes, driver %d",
                  atomr_device_get_name (device), major, minor,
                  atomr_device_get_multiprocessor_count (device),
                  atomr_device_get_total_memory (device), atomr_device_get_driver_version ());
  g_assert_cmpint (major, >=, 5);
  g_assert_cmpint (atomr_device_get_multiprocessor_count (device), >, 0);
  g_assert_cmpuint (atomr_device_get_total_memory (device), >, 1u << 30);
  g_assert_cmpstr (atomr_device_get_name (device), !=, "");
  arch = atomr_device_get_arch (device);
  g_assert_true (g_str_has_prefix (arch, "sm_"));
  g_assert_cmpint (atomr_device_get_count (), >=, 1);
  g_assert_true (atomr_device_get (0, NULL) == device);
  g_object_unref (device);   /* the extra reference from get */
}

static void
test_round_trip_every_dtype (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;

  if (!need_device ())
    return;
  actor = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);

  for (guint d = 0; d < ATOMR_DTYPE_LAST; d++)
    {
      guint64 n = 1 + g_random_int_range (1000, 300000);
      g_autoptr(AtomrBuffer) a = atomr_buffer_new (device, d, n, &error);
      g_autoptr(AtomrBuffer) b = atomr_buffer_new (device, d, n, &error);
      g_autoptr(GBytes) data = random_bytes (n * atomr_dtype_get_size (d));
      g_autoptr(GAsyncResult) up = NULL, cp = NULL, down = NULL;
      g_autoptr(GBytes) got = NULL;

      g_assert_no_error (error);
      atomr_actor_upload_async (ATOMR_ACTOR (actor), a, data, NULL, store_result, &up);
      atomr_actor_copy_async (ATOMR_ACTOR (actor), b, a, NULL, store_result, &cp);
      atomr_actor_download_async (ATOMR_ACTOR (actor), b, NULL, store_result, &down);
      wait_for (&up); wait_for (&cp); wait_for (&down);
      g_assert_true (atomr_actor_upload_finish (ATOMR_ACTOR (actor), up, &error));
      g_assert_true (atomr_actor_copy_finish (ATOMR_ACTOR (actor), cp, &error));
      got = atomr_actor_download_finish (ATOMR_ACTOR (actor), down, &error);
      g_assert_no_error (error);
      g_assert_true (g_bytes_equal (got, data));
    }
}

/* Transfers larger than the staging chunk stream through one pinned chunk
 * with host functions in stream order (atomr-copy-actor.c): every piece
 * lands at its offset, the odd tail included, and a kernel-free chain of
 * upload → copy → download on two actors keeps its order. */
static void
test_streamed_staging (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) a1 = NULL;
  g_autoptr(AtomrCopyActor) a2 = NULL;
  gsize sizes[] = { (16u << 20) + 1, (100u << 20) + 7 };

  if (!need_device ())
    return;
  a1 = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  a2 = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_U8, sizes[s], &error);
      g_autoptr(AtomrBuffer) y = atomr_buffer_new (device, ATOMR_DTYPE_U8, sizes[s], &error);
      g_autoptr(GBytes) data = random_bytes (sizes[s]);
      g_autoptr(GBytes) data2 = random_bytes (sizes[s]);
      g_autoptr(GAsyncResult) up = NULL, cp = NULL, down = NULL, up2 = NULL, down2 = NULL;
      g_autoptr(GBytes) got = NULL;
      g_autoptr(GBytes) got2 = NULL;

      g_assert_no_error (error);
      atomr_actor_upload_async (ATOMR_ACTOR (a1), x, data, NULL, store_result, &up);
      atomr_actor_copy_async (ATOMR_ACTOR (a2), y, x, NULL, store_result, &cp);
      atomr_actor_download_async (ATOMR_ACTOR (a1), y, NULL, store_result, &down);
      /* overwrite x while the copy may still read it: the hazard orders it */
      atomr_actor_upload_async (ATOMR_ACTOR (a2), x, data2, NULL, store_result, &up2);
      atomr_actor_download_async (ATOMR_ACTOR (a1), x, NULL, store_result, &down2);
      wait_for (&up); wait_for (&cp); wait_for (&down); wait_for (&up2); wait_for (&down2);
      g_assert_true (atomr_actor_upload_finish (ATOMR_ACTOR (a1), up, &error));
      g_assert_true (atomr_actor_copy_finish (ATOMR_ACTOR (a2), cp, &error));
      got = atomr_actor_download_finish (ATOMR_ACTOR (a1), down, &error);
      g_assert_no_error (error);
      g_assert_true (atomr_actor_upload_finish (ATOMR_ACTOR (a2), up2, &error));
      got2 = atomr_actor_download_finish (ATOMR_ACTOR (a1), down2, &error);
      g_assert_no_error (error);
      g_assert_true (g_bytes_equal (got, data));
      g_assert_true (g_bytes_equal (got2, data2));
    }
}

static void
test_fill_every_dtype (void)
{
  g_autoptr(GError) error = NULL;

  if (!need_device ())
    return;
  for (guint d = 0; d < ATOMR_DTYPE_LAST; d++)
    {
      guint64 n = 100003;
      g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, d, n, &error);
      g_autoptr(GBytes) expected = atomr_dtype_pack (d, -7.25, 0);
      g_autoptr(GBytes) got = NULL;
      gsize elem = atomr_dtype_get_size (d);
      const guint8 *p;

      g_assert_no_error (error);
      g_assert_true (atomr_buffer_fill_sync (buffer, -7.25, NULL, &error));
      g_assert_no_error (error);
      got = atomr_buffer_download_sync (buffer, NULL, &error);
      g_assert_no_error (error);
      p = g_bytes_get_data (got, NULL);
      for (guint64 i = 0; i < n; i += 997)
        g_assert_cmpmem (p + i * elem, elem, g_bytes_get_data (expected, NULL), elem);
      g_assert_cmpmem (p + (n - 1) * elem, elem, g_bytes_get_data (expected, NULL), elem);
    }
}

/* A long writer on one stream, a reader on another submitted right after:
 * the reader must see what the writer wrote, without the host waiting. */
static void
test_hazard_two_streams (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) writer = NULL, reader = NULL;
  guint64 n = 64ull << 20;   /* 256 MiB of f32 */
  g_autoptr(AtomrBuffer) x = NULL;
  g_autoptr(AtomrBuffer) small = NULL;
  GAsyncResult *fills[20] = { NULL };
  g_autoptr(GAsyncResult) down = NULL, refill = NULL, down2 = NULL, over = NULL;
  g_autoptr(GBytes) got = NULL;
  const float *v;

  if (!need_device ())
    return;
  writer = atomr_copy_actor_new (device, &error);
  reader = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_actor_get_stream_id (ATOMR_ACTOR (writer)), !=,
                    atomr_actor_get_stream_id (ATOMR_ACTOR (reader)));
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, n, &error);
  g_assert_no_error (error);

  /* ~20 fills of 256 MiB: milliseconds of GPU work on the writer. */
  for (guint i = 0; i < G_N_ELEMENTS (fills); i++)
    atomr_actor_fill_async (ATOMR_ACTOR (writer), x, (gdouble) i, NULL, store_result, &fills[i]);
  atomr_actor_download_async (ATOMR_ACTOR (reader), x, NULL, store_result, &down);
  /* Write after read: this fill must wait for the download. */
  atomr_actor_fill_async (ATOMR_ACTOR (writer), x, 1000.0, NULL, store_result, &refill);
  wait_for (&down);
  got = atomr_actor_download_finish (ATOMR_ACTOR (reader), down, &error);
  g_assert_no_error (error);
  v = g_bytes_get_data (got, NULL);
  for (guint64 i = 0; i < n; i += 4093)
    g_assert_cmpfloat (v[i], ==, 19.0f);
  g_assert_cmpfloat (v[n - 1], ==, 19.0f);
  for (guint i = 0; i < G_N_ELEMENTS (fills); i++)
    {
      wait_for (&fills[i]);
      g_assert_true (atomr_actor_fill_finish (ATOMR_ACTOR (writer), fills[i], &error));
      g_object_unref (fills[i]);
    }
  wait_for (&refill);
  g_assert_true (atomr_actor_fill_finish (ATOMR_ACTOR (writer), refill, &error));
  atomr_actor_download_async (ATOMR_ACTOR (reader), x, NULL, store_result, &down2);
  wait_for (&down2);
  g_clear_pointer (&got, g_bytes_unref);
  got = atomr_actor_download_finish (ATOMR_ACTOR (reader), down2, &error);
  g_assert_cmpfloat (((const float *) g_bytes_get_data (got, NULL))[n / 2], ==, 1000.0f);
  (void) small; (void) over;
}

static void
test_out_of_memory (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) huge = NULL, fine = NULL;
  g_autoptr(GBytes) data = random_bytes (4096);
  g_autoptr(GBytes) got = NULL;

  if (!need_device ())
    return;
  huge = atomr_buffer_new (device, ATOMR_DTYPE_U8, atomr_device_get_total_memory (device) * 2, &error);
  g_assert_null (huge);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_OUT_OF_MEMORY);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  /* The context is still fine. */
  g_assert_cmpint (atomr_device_get_state (device), ==, ATOMR_DEVICE_STATE_READY);
  fine = atomr_buffer_new (device, ATOMR_DTYPE_U8, 4096, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (fine, data, NULL, &error));
  got = atomr_buffer_download_sync (fine, NULL, &error);
  g_assert_true (g_bytes_equal (got, data));
}

static void
test_completion_modes (void)
{
  g_autoptr(GError) error = NULL;

  if (!need_device ())
    return;
  for (guint mode = ATOMR_COMPLETION_ADAPTIVE; mode <= ATOMR_COMPLETION_SYNC; mode++)
    {
      g_autoptr(AtomrCopyActor) actor = atomr_copy_actor_new (device, &error);
      g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_I32, 1 << 20, &error);
      g_autoptr(GBytes) data = random_bytes (4 << 20);
      GAsyncResult *results[64] = { NULL };
      g_autoptr(GAsyncResult) down = NULL;
      g_autoptr(GBytes) got = NULL;

      g_assert_no_error (error);
      atomr_actor_set_completion_mode (ATOMR_ACTOR (actor), mode);
      atomr_actor_set_timing (ATOMR_ACTOR (actor), mode == ATOMR_COMPLETION_EVENT_THREAD);
      for (guint i = 0; i < G_N_ELEMENTS (results); i++)
        {
          if (i == 10)
            atomr_actor_upload_async (ATOMR_ACTOR (actor), buffer, data, NULL, store_result, &results[i]);
          else if (i < 10)
            atomr_actor_fill_async (ATOMR_ACTOR (actor), buffer, i, NULL, store_result, &results[i]);
          else
            atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, store_result, &results[i]);
        }
      atomr_actor_download_async (ATOMR_ACTOR (actor), buffer, NULL, store_result, &down);
      wait_for (&down);
      for (guint i = 0; i < G_N_ELEMENTS (results); i++)
        {
          wait_for (&results[i]);
          g_assert_true (atomr_reply_propagate_boolean (results[i], &error));
          g_assert_no_error (error);
          g_object_unref (results[i]);
        }
      got = atomr_actor_download_finish (ATOMR_ACTOR (actor), down, &error);
      g_assert_no_error (error);
      g_assert_true (g_bytes_equal (got, data));
      g_assert_cmpuint (atomr_actor_get_n_completed (ATOMR_ACTOR (actor)), ==, 65);
    }
}

static void
record_gpu_ms (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  *(gdouble *) user_data = atomr_launch_info_get_gpu_duration_ms (info);
}

static void
test_timing_and_trace (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (1000);
  g_autoptr(GAsyncResult) result = NULL;
  gdouble gpu_ms = -1;
  const gchar *out = g_getenv ("OUT");

  if (!need_device ())
    return;
  actor = atomr_copy_actor_new (device, &error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16 << 20, &error);
  g_assert_no_error (error);
  atomr_actor_set_timing (ATOMR_ACTOR (actor), TRUE);
  atomr_actor_set_nvtx (ATOMR_ACTOR (actor), TRUE);
  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (actor));
  g_signal_connect (actor, "after-complete", G_CALLBACK (record_gpu_ms), &gpu_ms);
  atomr_actor_fill_async (ATOMR_ACTOR (actor), buffer, 1.0, NULL, store_result, &result);
  wait_for (&result);
  g_assert_true (atomr_actor_fill_finish (ATOMR_ACTOR (actor), result, &error));
  g_test_message ("64 MiB fill: %.3f ms on the GPU", gpu_ms);
  g_assert_cmpfloat (gpu_ms, >, 0.0);
  g_assert_cmpfloat (gpu_ms, <, 1000.0);
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (recorder), ==, 1);
  if (out)
    {
      g_autofree gchar *path = g_build_filename (out, "gpu-core-trace.json", NULL);
      g_assert_true (atomr_trace_recorder_save (recorder, path, &error));
    }
}

/* Hand-written PTX that stores to the address it is given. */
static const char crash_ptx[] =
  ".version 8.0\n"
  ".target sm_80\n"
  ".address_size 64\n"
  ".visible .entry store_to(.param .u64 p)\n"
  "{\n"
  "  .reg .u64 %rd<2>;\n"
  "  .reg .u32 %r<2>;\n"
  "  ld.param.u64 %rd1, [p];\n"
  "  mov.u32 %r1, 42;\n"
  "  st.global.u32 [%rd1], %r1;\n"
  "  ret;\n"
  "}\n";

typedef struct {
  CUfunction function;
  CUdeviceptr address;
} StoreRequest;

static gboolean
store_enqueue (AtomrOp *op, GError **error)
{
  StoreRequest *req = atomr_op_get_data (op);
  void *args[] = { &req->address };
  return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (req->function, 1, 1, 1, 1, 1, 1, 0,
                                                     atomr_op_get_cu_stream (op), args, NULL),
                           "cuLaunchKernel", error);
}

/* Uploads fresh random bytes to @buffer through @writer and at once
 * downloads them through @reader: the download must wait for the upload
 * (another actor's write), and see exactly its bytes. */
static void
upload_then_download (AtomrActor *writer, AtomrActor *reader, AtomrBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) data = random_bytes (atomr_buffer_get_byte_size (buffer));
  g_autoptr(GAsyncResult) up = NULL, down = NULL;
  g_autoptr(GBytes) got = NULL;

  atomr_actor_upload_async (writer, buffer, data, NULL, store_result, &up);
  atomr_actor_download_async (reader, buffer, NULL, store_result, &down);
  wait_for (&down);
  got = atomr_actor_download_finish (reader, down, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, data));
  wait_for (&up);
  g_assert_true (atomr_actor_upload_finish (writer, up, &error));
  g_assert_no_error (error);
}

/* Hand-written PTX: spins @cycles clocks, then stores @v at @p. */
static const char spin_store_ptx[] =
  ".version 8.0\n"
  ".target sm_80\n"
  ".address_size 64\n"
  ".visible .entry spin_store(.param .u64 p, .param .u32 v, .param .u64 cycles)\n"
  "{\n"
  "  .reg .u64 %rd<6>;\n"
  "  .reg .u32 %r<2>;\n"
  "  .reg .pred %p<2>;\n"
  "  ld.param.u64 %rd1, [p];\n"
  "  ld.param.u32 %r1, [v];\n"
  "  ld.param.u64 %rd2, [cycles];\n"
  "  mov.u64 %rd3, %clock64;\n"
  "SPIN:\n"
  "  mov.u64 %rd4, %clock64;\n"
  "  sub.u64 %rd5, %rd4, %rd3;\n"
  "  setp.lt.u64 %p1, %rd5, %rd2;\n"
  "  @%p1 bra SPIN;\n"
  "  st.global.u32 [%rd1], %r1;\n"
  "  ret;\n"
  "}\n";

typedef struct {
  CUfunction   function;
  CUdeviceptr  address;
  guint32      value;
  guint64      cycles;
  AtomrStream *stream;    /* seen by the enqueue: the actor's */
} SpinStoreRequest;

static gboolean
spin_store_enqueue (AtomrOp *op, GError **error)
{
  SpinStoreRequest *req = atomr_op_get_data (op);
  void *args[] = { &req->address, &req->value, &req->cycles };

  req->stream = atomr_op_get_stream (op);
  return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (req->function, 1, 1, 1, 1, 1, 1, 0,
                                                     atomr_op_get_cu_stream (op), args, NULL),
                           "cuLaunchKernel", error);
}

/* Issue 17: a request with nothing else in flight, on a polled actor, is
 * fenced with a word the GPU writes into host memory after the event.  The
 * reply must come after the kernel's store is visible to the host (a word
 * taken as passed too early — a wrong number, a write before the work —
 * shows the old value), for short and long kernels (a long one finds the
 * word short many times and asks the event in between), in poll and
 * adaptive mode (adaptive hands a long request to the completion service,
 * which queries the same fence); and a request of another actor that reads
 * the output waits on the word fence's event. */
static void
test_word_fence (void)
{
  g_autoptr(GError) error = NULL;
  CUmodule module;
  CUfunction function;
  volatile guint32 *host = NULL;
  CUdeviceptr dev = 0;
  guint32 value = 0;

  if (!need_device ())
    return;
  g_assert_true (atomr_device_enter (device, &error));
  g_assert_true (atomr_cuda_check (ATOMR_CU->cuModuleLoadData (&module, spin_store_ptx), "cuModuleLoadData", &error));
  g_assert_true (atomr_cuda_check (ATOMR_CU->cuModuleGetFunction (&function, module, "spin_store"),
                                   "cuModuleGetFunction", &error));
  g_assert_true (atomr_cuda_check (ATOMR_CU->cuMemHostAlloc ((void **) &host, 64, CU_MEMHOSTALLOC_DEVICEMAP),
                                   "cuMemHostAlloc", &error));
  g_assert_true (atomr_cuda_check (ATOMR_CU->cuMemHostGetDevicePointer (&dev, (void *) host, 0),
                                   "cuMemHostGetDevicePointer", &error));
  atomr_device_leave (device);
  *host = 0;

  for (guint mode = ATOMR_COMPLETION_ADAPTIVE; mode <= ATOMR_COMPLETION_POLL; mode++)
    {
      g_autoptr(AtomrCopyActor) actor = atomr_copy_actor_new (device, &error);
      AtomrStream *stream = NULL;
      guint32 words_before = 0;

      g_assert_no_error (error);
      atomr_actor_set_completion_mode (ATOMR_ACTOR (actor), mode);
      if (mode == ATOMR_COMPLETION_ADAPTIVE)
        atomr_actor_set_spin_usec (ATOMR_ACTOR (actor), 50);
      for (guint i = 0; i < 300; i++)
        {
          g_autoptr(GAsyncResult) result = NULL;
          SpinStoreRequest *req = g_new0 (SpinStoreRequest, 1);
          AtomrOp *op;

          req->function = function;
          req->address = dev;
          req->value = ++value;
          /* most short; every 25th about a millisecond at 2 GHz */
          req->cycles = i % 25 == 24 ? 2000000 : i % 5 == 4 ? 20000 : 0;
          op = atomr_op_new (ATOMR_ACTOR (actor), "spin-store", NULL, NULL, store_result, &result);
          atomr_op_set_data (op, req, g_free);
          atomr_op_set_enqueue (op, spin_store_enqueue);
          atomr_op_submit (op);
          wait_for (&result);
          g_assert_true (atomr_reply_propagate_boolean (result, &error));
          g_assert_no_error (error);
          g_assert_cmpuint (*host, ==, value);
          if (i == 0)
            {
              stream = req->stream;
              words_before = stream->word_next;
            }
        }
      g_assert_nonnull (stream);
      if (ATOMR_CU->cuStreamWriteValue32 == NULL || g_strcmp0 (g_getenv ("ATOMR_FENCE_WORD"), "0") == 0)
        g_test_message ("no fence words here (driver or ATOMR_FENCE_WORD=0)");
      else
        /* every request after the first was fenced with a word */
        g_assert_cmpuint (stream->word_next - words_before, >=, 299);
    }

  /* The word fence's event orders another actor: a lone upload on one,
   * at once a download of the same buffer on another. */
  {
    g_autoptr(AtomrCopyActor) writer = atomr_copy_actor_new (device, &error);
    g_autoptr(AtomrCopyActor) reader = atomr_copy_actor_new (device, &error);
    g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 8 << 20, &error);

    g_assert_no_error (error);
    atomr_actor_set_completion_mode (ATOMR_ACTOR (writer), ATOMR_COMPLETION_POLL);
    for (guint i = 0; i < 20; i++)
      upload_then_download (ATOMR_ACTOR (writer), ATOMR_ACTOR (reader), buffer);
  }

  g_assert_true (atomr_device_enter (device, &error));
  ATOMR_CU->cuMemFreeHost ((void *) host);
  ATOMR_CU->cuModuleUnload (module);
  atomr_device_leave (device);
}

/* An actor with a thread of its own on the GPU: a burst of fills enqueued
 * there while this thread submits, a download by an actor of this thread
 * ordered after them, then the other way round (the own-thread actor
 * reads what this thread's actor wrote). */
static void
test_own_thread (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) threaded = NULL, local = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GAsyncResult) down = NULL;
  g_autoptr(GBytes) got = NULL;
  const gint32 *v;

  if (!need_device ())
    return;
  threaded = g_initable_new (ATOMR_TYPE_COPY_ACTOR, NULL, &error, "device", device, "own-thread", TRUE, NULL);
  g_assert_no_error (error);
  local = atomr_copy_actor_new (device, &error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_I32, 1 << 18, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < 500; i++)
    atomr_actor_fill_async (ATOMR_ACTOR (threaded), buffer, i, NULL, NULL, NULL);
  atomr_actor_download_async (ATOMR_ACTOR (local), buffer, NULL, store_result, &down);
  wait_for (&down);
  got = atomr_actor_download_finish (ATOMR_ACTOR (local), down, &error);
  g_assert_no_error (error);
  v = g_bytes_get_data (got, NULL);
  g_assert_cmpint (v[0], ==, 499);
  g_assert_cmpint (v[(1 << 18) - 1], ==, 499);

  upload_then_download (ATOMR_ACTOR (local), ATOMR_ACTOR (threaded), buffer);
  g_assert_cmpuint (atomr_actor_get_n_completed (ATOMR_ACTOR (threaded)), >=, 501);
}

/* Issue 8, item 12: another library switched this thread's context (here:
 * to none).  The old cache of the current context went stale, and the next
 * allocation ran without a context (CUDA_ERROR_INVALID_CONTEXT). */
static void
test_stale_current_context (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) a = NULL, b = NULL;
  g_autoptr(GBytes) data = random_bytes (256);
  g_autoptr(GBytes) got = NULL;

  if (!need_device ())
    return;
  a = atomr_buffer_new (device, ATOMR_DTYPE_U8, 256, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ATOMR_CU->cuCtxSetCurrent (NULL), ==, CUDA_SUCCESS);
  b = atomr_buffer_new (device, ATOMR_DTYPE_U8, 256, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (b, data, NULL, &error));
  got = atomr_buffer_download_sync (b, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, data));
}

/* A request submitted from before-enqueue runs after the one being
 * enqueued (issue 8, defect 2), on a real stream. */
typedef struct {
  AtomrBuffer  *buffer;
  GAsyncResult *download;
  gboolean      done;
} Reentrant;

static void
download_from_handler (AtomrActor *actor, AtomrLaunchInfo *info, gpointer data)
{
  Reentrant *re = data;
  if (re->done || g_strcmp0 (atomr_launch_info_get_operation (info), "upload") != 0)
    return;
  re->done = TRUE;
  atomr_actor_download_async (actor, re->buffer, NULL, store_result, &re->download);
}

static void
test_reentrant_order (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GBytes) data = random_bytes (1 << 20);
  g_autoptr(GAsyncResult) upload = NULL;
  g_autoptr(GBytes) got = NULL;
  Reentrant re = { NULL, NULL, FALSE };

  if (!need_device ())
    return;
  actor = atomr_copy_actor_new (device, &error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 1 << 20, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (buffer, 0, NULL, &error));
  re.buffer = buffer;
  g_signal_connect (actor, "before-enqueue", G_CALLBACK (download_from_handler), &re);
  atomr_actor_upload_async (ATOMR_ACTOR (actor), buffer, data, NULL, store_result, &upload);
  wait_for (&upload);
  wait_for (&re.download);
  g_assert_true (atomr_actor_upload_finish (ATOMR_ACTOR (actor), upload, &error));
  got = atomr_actor_download_finish (ATOMR_ACTOR (actor), re.download, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, data));
  g_clear_object (&re.download);
}

/* The watchdog: a "kernel" that runs too long (a host function that
 * blocks the stream until the test opens the gate) fails with
 * ATOMR_ERROR_TIMED_OUT while the main context keeps running; its buffer
 * stays alive until the GPU is really done. */
typedef struct {
  GMutex   lock;
  GCond    cond;
  gboolean open;
} Gate;

static void CUDA_CB
wait_at_gate (void *data)
{
  Gate *gate = data;
  g_mutex_lock (&gate->lock);
  while (!gate->open)
    g_cond_wait (&gate->cond, &gate->lock);
  g_mutex_unlock (&gate->lock);
}

static gboolean
gate_enqueue (AtomrOp *op, GError **error)
{
  return atomr_cuda_check (ATOMR_CU->cuLaunchHostFunc (atomr_op_get_cu_stream (op), wait_at_gate,
                                                       atomr_op_get_data (op)),
                           "cuLaunchHostFunc", error);
}

static gboolean
count_tick (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

static void
test_watchdog (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  AtomrBuffer *buffer;
  gpointer weak;
  Gate gate = { 0 };
  guint ticks = 0, tick_id;
  AtomrOp *op;

  if (!need_device ())
    return;
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  actor = atomr_copy_actor_new (device, &error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_U8, 4096, &error);
  g_assert_no_error (error);
  weak = buffer;
  g_object_add_weak_pointer (G_OBJECT (buffer), &weak);
  atomr_actor_set_timeout_ms (ATOMR_ACTOR (actor), 200);
  tick_id = g_timeout_add (10, count_tick, &ticks);

  op = atomr_op_new (actor, "gate", test_watchdog, NULL, store_result, &result);
  atomr_op_write (op, buffer);
  atomr_op_set_data (op, &gate, NULL);
  atomr_op_set_enqueue (op, gate_enqueue);
  atomr_op_submit (op);
  g_object_unref (buffer);
  wait_for (&result);
  g_assert_false (atomr_reply_propagate_boolean (result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT);
  g_test_message ("%s", error->message);
  /* The main context ran meanwhile, and the work still holds its buffer. */
  g_assert_cmpuint (ticks, >, 0);
  g_assert_nonnull (weak);

  g_mutex_lock (&gate.lock);
  gate.open = TRUE;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
  while (weak != NULL)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick_id);
  g_mutex_clear (&gate.lock);
  g_cond_clear (&gate.cond);
}

static guint
count_threads (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  guint n = 0;
  while (dir && g_dir_read_name (dir))
    n++;
  return n;
}

/* 256 actors, one request each in flight, every completion strategy that
 * sleeps: threads stay O(devices) (issue 8, defect 6). */
static void
test_many_actors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) actors = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func (g_object_unref);
  GAsyncResult *results[256] = { NULL };
  guint before, peak = 0;

  if (!need_device ())
    return;
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    {
      g_ptr_array_add (actors, atomr_copy_actor_new (device, &error));
      g_assert_no_error (error);
      g_ptr_array_add (buffers, atomr_buffer_new (device, ATOMR_DTYPE_F32, 1 << 16, &error));
      g_assert_no_error (error);
      atomr_actor_set_completion_mode (actors->pdata[i], i % 2 ? ATOMR_COMPLETION_EVENT_THREAD
                                                                : ATOMR_COMPLETION_ADAPTIVE);
      atomr_actor_set_spin_usec (actors->pdata[i], 0);
    }
  before = count_threads ();
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    atomr_actor_fill_async (actors->pdata[i], buffers->pdata[i], (gdouble) i, NULL,
                            store_result, &results[i]);
  for (guint i = 0; i < G_N_ELEMENTS (results); i++)
    {
      peak = MAX (peak, count_threads ());
      wait_for (&results[i]);
      g_assert_true (atomr_actor_fill_finish (actors->pdata[i], results[i], &error));
      g_assert_no_error (error);
      g_clear_object (&results[i]);
    }
  g_test_message ("threads: %u before, %u at the peak", before, peak);
  g_assert_cmpuint (peak, <=, before + 2);
  {
    g_autoptr(GBytes) got = atomr_buffer_download_sync (buffers->pdata[255], NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (((const gfloat *) g_bytes_get_data (got, NULL))[100], ==, 255.0f);
  }
}

static void
on_rebuilt (AtomrDevice *d, guint generation, gpointer user_data)
{
  g_atomic_int_set ((gint *) user_data, (gint) generation);
}

static void
on_lost (AtomrDevice *d, guint generation, GError *error, gpointer user_data)
{
  g_test_message ("context-lost: %s", error->message);
  g_atomic_int_set ((gint *) user_data, 1);
}

static void
test_sticky_error_restart (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autoptr(AtomrBuffer) before = NULL, after = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) data = random_bytes (1024);
  g_autoptr(GBytes) got = NULL;
  StoreRequest *req;
  CUmodule module;
  AtomrOp *op;
  guint generation;
  gint rebuilt = 0;
  static gint lost = 0;
  gint64 deadline;

  if (!need_device ())
    return;
  actor = atomr_copy_actor_new (device, &error);
  before = atomr_buffer_new (device, ATOMR_DTYPE_U8, 1024, &error);
  g_assert_no_error (error);
  generation = atomr_device_get_generation (device);
  atomr_device_set_supervisor_policy (device, ATOMR_SUPERVISOR_RESTART);
  g_signal_connect (device, "context-rebuilt", G_CALLBACK (on_rebuilt), &rebuilt);
  g_signal_connect (device, "context-lost", G_CALLBACK (on_lost), &lost);

  g_assert_true (atomr_device_enter (device, &error));
  g_assert_true (atomr_cuda_check (ATOMR_CU->cuModuleLoadData (&module, crash_ptx), "cuModuleLoadData", &error));
  req = g_new0 (StoreRequest, 1);
  g_assert_true (atomr_cuda_check (ATOMR_CU->cuModuleGetFunction (&req->function, module, "store_to"),
                                   "cuModuleGetFunction", &error));
  atomr_device_leave (device);
  req->address = 0x10;   /* not mapped: an illegal address */

  op = atomr_op_new (actor, "store-to-bad-address", test_sticky_error_restart, NULL, store_result, &result);
  atomr_op_set_data (op, req, g_free);
  atomr_op_set_enqueue (op, store_enqueue);
  atomr_op_submit (op);
  wait_for (&result);
  g_assert_false (atomr_reply_propagate_boolean (result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_CONTEXT_POISONED);
  g_test_message ("%s", error->message);
  g_clear_error (&error);

  /* The supervisor either rebuilds the context or, when the driver cannot
   * (CUDA documents an illegal address as needing a new process), stops
   * the device with a reason.  Either way nothing hangs or aborts. */
  deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (g_atomic_int_get (&rebuilt) == 0 &&
         atomr_device_get_state (device) != ATOMR_DEVICE_STATE_STOPPED &&
         g_get_monotonic_time () < deadline)
    g_usleep (1000);
  if (atomr_device_get_state (device) == ATOMR_DEVICE_STATE_STOPPED)
    {
      /* the dead context's generation is over either way */
      g_assert_true (atomr_buffer_is_stale (before));
      g_assert_null (atomr_buffer_new (device, ATOMR_DTYPE_U8, 16, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE);
      g_assert_nonnull (strstr (error->message, "CUDA_ERROR_ILLEGAL_ADDRESS"));
      g_test_message ("driver could not rebuild the context: %s", error->message);
      g_clear_error (&error);
      g_clear_object (&result);
      atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, store_result, &result);
      wait_for (&result);
      g_assert_false (atomr_actor_barrier_finish (ATOMR_ACTOR (actor), result, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE);
      /* The application was told what to do (emitted right after). */
      while (!g_atomic_int_get (&lost))
        g_usleep (1000);
      return;
    }
  g_assert_cmpuint (atomr_device_get_generation (device), ==, generation + 1);
  g_assert_cmpint (atomr_device_get_state (device), ==, ATOMR_DEVICE_STATE_READY);

  /* Old buffers fail fast; new work runs on the new context. */
  g_assert_true (atomr_buffer_is_stale (before));
  g_assert_false (atomr_buffer_upload_sync (before, data, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE);
  g_clear_error (&error);
  after = atomr_buffer_new (device, ATOMR_DTYPE_U8, 1024, &error);
  g_assert_no_error (error);
  g_clear_object (&result);
  atomr_actor_upload_async (ATOMR_ACTOR (actor), after, data, NULL, store_result, &result);
  wait_for (&result);
  g_assert_true (atomr_actor_upload_finish (ATOMR_ACTOR (actor), result, &error));
  g_assert_no_error (error);
  got = atomr_buffer_download_sync (after, NULL, &error);
  g_assert_true (g_bytes_equal (got, data));
}

static void
test_stale_after_reset (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autoptr(AtomrBuffer) old = NULL, fresh = NULL;
  g_autoptr(GBytes) data = random_bytes (4096);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) got = NULL;
  guint generation;

  if (!need_device ())
    return;
  actor = atomr_copy_actor_new (device, &error);
  old = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1024, &error);
  g_assert_true (atomr_buffer_upload_sync (old, data, NULL, &error));
  generation = atomr_device_get_generation (device);

  g_assert_true (atomr_device_reset (device, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_device_get_generation (device), ==, generation + 1);
  g_assert_true (atomr_buffer_is_stale (old));

  atomr_actor_download_async (ATOMR_ACTOR (actor), old, NULL, store_result, &result);
  wait_for (&result);
  g_assert_null (atomr_actor_download_finish (ATOMR_ACTOR (actor), result, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE);
  g_clear_error (&error);

  fresh = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1024, &error);
  g_assert_true (atomr_buffer_upload_sync (fresh, data, NULL, &error));
  got = atomr_buffer_download_sync (fresh, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (got, data));
}

/* Waits until the pool's cache holds at least @bytes (the last operation
 * on a dropped buffer lets it go once it has completed, on its actor's
 * thread). */
static void
wait_cached (AtomrMemoryPool *pool,
             guint64          bytes)
{
  for (guint i = 0; i < 10000 && atomr_memory_pool_get_cached_bytes (pool) < bytes; i++)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), >=, bytes);
}

/* Every element of @got (n i32) is @want; names the first that is not. */
static void
assert_all_i32 (GBytes  *got,
                guint64  n,
                gint32   want)
{
  gsize size = 0;
  const gint32 *v = g_bytes_get_data (got, &size);

  g_assert_cmpuint (size, ==, n * 4);
  for (guint64 i = 0; i < n; i++)
    if (v[i] != want)
      g_error ("element %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " is %d, expected %d",
               i, n, v[i], want);
}

static void
synchronize_checked (void)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = atomr_device_synchronize (device, &error);

  /* the message names the CUDA error (CUDA_ERROR_…) */
  g_assert_no_error (error);
  g_assert_true (ok);
}

/* A freed buffer's block comes back from the pool's block cache for the
 * next buffer of the same size, with no driver call and no stream; the new
 * buffer's users on other streams see only their own writes, after every
 * use of the old buffer. */
static void
test_pool_cache_reuse (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) writer = NULL, reader = NULL;
  guint64 n = 16ull << 20;   /* 64 MiB of i32 */
  AtomrMemoryPool *pool;
  AtomrBuffer *x;
  g_autoptr(AtomrBuffer) y = NULL;
  GAsyncResult *fills[8] = { NULL };
  g_autoptr(GAsyncResult) fill_y = NULL, down = NULL;
  g_autoptr(GBytes) got = NULL;
  guint64 old_ptr, hits, used, cached, reserved;
  gboolean ok;

  if (!need_device ())
    return;
  pool = atomr_device_get_memory_pool (device);
  writer = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  reader = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  x = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
  g_assert_no_error (error);
  old_ptr = atomr_buffer_get_device_pointer (x);
  for (guint i = 0; i < G_N_ELEMENTS (fills); i++)
    atomr_actor_fill_async (ATOMR_ACTOR (writer), x, (gdouble) i + 100, NULL, store_result, &fills[i]);
  /* dropped while its fills may still run: cached after them */
  g_object_unref (x);
  for (guint i = 0; i < G_N_ELEMENTS (fills); i++)
    {
      wait_for (&fills[i]);
      ok = atomr_actor_fill_finish (ATOMR_ACTOR (writer), fills[i], &error);
      g_assert_no_error (error);
      g_assert_true (ok);
      g_object_unref (fills[i]);
    }
  wait_cached (pool, n * 4);
  hits = atomr_memory_pool_get_cache_hits (pool);
  used = atomr_memory_pool_get_used (pool);
  cached = atomr_memory_pool_get_cached_bytes (pool);

  y = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_buffer_get_device_pointer (y), ==, old_ptr);
  g_assert_cmpuint (atomr_memory_pool_get_cache_hits (pool), ==, hits + 1);
  /* no driver allocation: the driver's used bytes (used + cached) stay */
  g_assert_cmpuint (atomr_memory_pool_get_used (pool) + atomr_memory_pool_get_cached_bytes (pool),
                    ==, used + cached);
  g_assert_cmpuint (atomr_memory_pool_get_used (pool), ==, used + n * 4);

  /* written on one stream, read on another: every element is the new value */
  atomr_actor_fill_async (ATOMR_ACTOR (reader), y, 7.0, NULL, store_result, &fill_y);
  atomr_actor_download_async (ATOMR_ACTOR (writer), y, NULL, store_result, &down);
  wait_for (&fill_y);
  ok = atomr_actor_fill_finish (ATOMR_ACTOR (reader), fill_y, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  wait_for (&down);
  got = atomr_actor_download_finish (ATOMR_ACTOR (writer), down, &error);
  g_assert_no_error (error);
  assert_all_i32 (got, n, 7);

  /* trim gives the cached blocks back to the driver */
  g_clear_object (&y);
  synchronize_checked ();
  wait_cached (pool, n * 4);
  reserved = atomr_memory_pool_get_reserved (pool);
  ok = atomr_memory_pool_trim (pool, 0, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, 0);
  g_test_message ("reserved before trim %" G_GUINT64_FORMAT ", after %" G_GUINT64_FORMAT,
                  reserved, atomr_memory_pool_get_reserved (pool));
  g_assert_cmpuint (atomr_memory_pool_get_reserved (pool), <, reserved);
  synchronize_checked ();
}

/* Blocks passed from buffer to buffer while their users still run, on
 * two streams: each buffer is written on one actor's stream and read on
 * the other's right after the previous buffer of the same size was dropped
 * with its own fill and download in flight.  A block handed out before its
 * last users finished would show another round's value. */
static void
test_pool_cache_ordering (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) a = NULL, b = NULL;
  enum { ROUNDS = 48 };
  guint64 n = 1ull << 20;   /* 4 MiB of i32 */
  GAsyncResult *fills[ROUNDS] = { NULL }, *downs[ROUNDS] = { NULL };
  AtomrMemoryPool *pool;
  guint64 hits;

  if (!need_device ())
    return;
  pool = atomr_device_get_memory_pool (device);
  a = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  b = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  hits = atomr_memory_pool_get_cache_hits (pool);
  for (guint r = 0; r < ROUNDS; r++)
    {
      AtomrActor *w = ATOMR_ACTOR (r % 2 ? a : b), *rd = ATOMR_ACTOR (r % 2 ? b : a);
      AtomrBuffer *buf = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);

      g_assert_no_error (error);
      atomr_actor_fill_async (w, buf, (gdouble) r, NULL, store_result, &fills[r]);
      atomr_actor_download_async (rd, buf, NULL, store_result, &downs[r]);
      g_object_unref (buf);
      /* let some operations complete so that later rounds reuse blocks */
      if (r % 3 == 2)
        wait_for (&downs[r - 1]);
    }
  for (guint r = 0; r < ROUNDS; r++)
    {
      g_autoptr(GBytes) got = NULL;
      gboolean ok;

      wait_for (&fills[r]);
      ok = atomr_actor_fill_finish (ATOMR_ACTOR (r % 2 ? a : b), fills[r], &error);
      g_assert_no_error (error);
      g_assert_true (ok);
      wait_for (&downs[r]);
      got = atomr_actor_download_finish (ATOMR_ACTOR (r % 2 ? b : a), downs[r], &error);
      g_assert_no_error (error);
      assert_all_i32 (got, n, (gint32) r);
      g_object_unref (fills[r]);
      g_object_unref (downs[r]);
    }
  /* how many hit depends on when the operations let go of the buffers */
  g_test_message ("%" G_GUINT64_FORMAT " of %d allocations came from the block cache",
                  atomr_memory_pool_get_cache_hits (pool) - hits, ROUNDS);

  /* A block whose buffer was never used carries that buffer's first
   * fence (its allocation's, or what its block carried): the next buffer,
   * handed the same block, waits for it on other streams.  Another size
   * than above: a block of the loop above let go late must not come
   * between the two. */
  n += 1024;
  for (guint r = 0; r < 8; r++)
    {
      AtomrBuffer *unused = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
      g_autoptr(AtomrBuffer) fresh = NULL;
      g_autoptr(GAsyncResult) fill = NULL, down = NULL;
      g_autoptr(GBytes) got = NULL;
      guint64 unused_ptr;
      gboolean ok;

      g_assert_no_error (error);
      unused_ptr = atomr_buffer_get_device_pointer (unused);
      g_object_unref (unused);
      fresh = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (atomr_buffer_get_device_pointer (fresh), ==, unused_ptr);
      atomr_actor_fill_async (ATOMR_ACTOR (r % 2 ? a : b), fresh, 1000.0 + r, NULL, store_result, &fill);
      atomr_actor_download_async (ATOMR_ACTOR (r % 2 ? b : a), fresh, NULL, store_result, &down);
      wait_for (&fill);
      ok = atomr_actor_fill_finish (ATOMR_ACTOR (r % 2 ? a : b), fill, &error);
      g_assert_no_error (error);
      g_assert_true (ok);
      wait_for (&down);
      got = atomr_actor_download_finish (ATOMR_ACTOR (r % 2 ? b : a), down, &error);
      g_assert_no_error (error);
      assert_all_i32 (got, n, 1000 + (gint32) r);
    }
  synchronize_checked ();
}

/* A buffer of an older generation never gives its (dead) block to the
 * cache of the new context; blocks of the new one are reused. */
static void
test_pool_cache_generation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = NULL;
  g_autoptr(GAsyncResult) fill = NULL, down = NULL;
  g_autoptr(GBytes) got = NULL;
  AtomrMemoryPool *pool;
  AtomrBuffer *old, *fresh, *again;
  guint64 n = 3 << 18, fresh_ptr, cached;
  gboolean ok;

  if (!need_device ())
    return;
  pool = atomr_device_get_memory_pool (device);
  old = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
  g_assert_no_error (error);
  ok = atomr_device_reset (device, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_true (atomr_buffer_is_stale (old));

  fresh = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
  g_assert_no_error (error);
  fresh_ptr = atomr_buffer_get_device_pointer (fresh);
  cached = atomr_memory_pool_get_cached_bytes (pool);
  g_object_unref (old);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, cached);
  g_object_unref (fresh);
  g_assert_cmpuint (atomr_memory_pool_get_cached_bytes (pool), ==, cached + n * 4);

  again = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_buffer_get_device_pointer (again), ==, fresh_ptr);
  actor = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_actor_fill_async (ATOMR_ACTOR (actor), again, 5.0, NULL, store_result, &fill);
  atomr_actor_download_async (ATOMR_ACTOR (actor), again, NULL, store_result, &down);
  wait_for (&fill);
  ok = atomr_actor_fill_finish (ATOMR_ACTOR (actor), fill, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  wait_for (&down);
  got = atomr_actor_download_finish (ATOMR_ACTOR (actor), down, &error);
  g_assert_no_error (error);
  assert_all_i32 (got, n, 5);
  g_object_unref (again);
  synchronize_checked ();
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;

  g_test_init (&argc, &argv, NULL);
  device = atomr_device_get (0, &error);
  if (device == NULL)
    g_test_message ("skipping: %s", error->message);

  g_test_add_func ("/gpu/core/properties", test_properties);
  g_test_add_func ("/gpu/core/round-trip-every-dtype", test_round_trip_every_dtype);
  g_test_add_func ("/gpu/core/fill-every-dtype", test_fill_every_dtype);
  g_test_add_func ("/gpu/core/streamed-staging", test_streamed_staging);
  g_test_add_func ("/gpu/core/hazard-two-streams", test_hazard_two_streams);
  g_test_add_func ("/gpu/core/out-of-memory", test_out_of_memory);
  g_test_add_func ("/gpu/core/pool-cache-reuse", test_pool_cache_reuse);
  g_test_add_func ("/gpu/core/pool-cache-ordering", test_pool_cache_ordering);
  g_test_add_func ("/gpu/core/completion-modes", test_completion_modes);
  g_test_add_func ("/gpu/core/word-fence", test_word_fence);
  g_test_add_func ("/gpu/core/own-thread", test_own_thread);
  g_test_add_func ("/gpu/core/timing-and-trace", test_timing_and_trace);
  g_test_add_func ("/gpu/core/stale-after-reset", test_stale_after_reset);
  g_test_add_func ("/gpu/core/pool-cache-generation", test_pool_cache_generation);
  g_test_add_func ("/gpu/core/stale-current-context", test_stale_current_context);
  g_test_add_func ("/gpu/core/reentrant-order", test_reentrant_order);
  g_test_add_func ("/gpu/core/watchdog", test_watchdog);
  g_test_add_func ("/gpu/core/many-actors", test_many_actors);
  /* Last: it may leave the GPU unusable for this process. */
  g_test_add_func ("/gpu/core/sticky-error-supervisor", test_sticky_error_restart);

  return g_test_run ();
}
