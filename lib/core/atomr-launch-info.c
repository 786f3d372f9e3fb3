/* atomr-launch-info.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <time.h>

#include "atomr-launch-info.h"

/**
 * AtomrLaunchInfo:
 *
 * A record of one operation of an actor: who ran it (actor, library,
 * operation name), in which order (sequence number, device generation,
 * stream), how (launch geometry, where there is one), when (the moments of
 * [enum@Atomr.LaunchEvent] in nanoseconds on the host's monotonic clock: submitted,
 * enqueued, completed, replied, and — when the actor's timing is on — GPU
 * start and end), which earlier operations it waited for on the GPU
 * ([method@Atomr.LaunchInfo.get_dependencies]), and the error if it failed.
 *
 * Sequence numbers are unique within the process, shared by all actors, so
 * a sequence number names one operation.
 *
 * The four lifecycle signals of [class@Atomr.Actor] pass one; [class@Atomr.TraceRecorder]
 * keeps them.  Reference counted; treat it as read-only once emitted.
 *
 * Since: 0.1
 */
struct _AtomrLaunchInfo
{
  gatomicrefcount ref;
  gchar   *actor_name;
  gchar   *library;
  gchar   *operation;
  gchar   *detail;
  guint64  sequence;
  guint    generation;
  gint     device_ordinal;
  guint    stream_id;
  gboolean has_geometry;
  guint    grid[3];
  guint    block[3];
  guint    shared_mem;
  gint64   times[ATOMR_LAUNCH_N_EVENTS];   /* ns, 0 = unknown */
  GArray  *deps;                           /* guint64 producer sequences */
  gint     mailbox_depth;                  /* -1 unknown */
  gdouble  gpu_ms;
  GError  *error;
};

G_DEFINE_BOXED_TYPE (AtomrLaunchInfo, atomr_launch_info, atomr_launch_info_ref, atomr_launch_info_unref)

/**
 * atomr_launch_info_new:
 * @actor_name: the actor's name
 * @library: the library ("cuda", "nvrtc", "cublas", ...)
 * @operation: the operation ("upload", "gemm", "launch:saxpy", ...)
 *
 * Creates a record.  Actors make these; tools that import traces may too.
 *
 * Returns: (transfer full): a new [struct@Atomr.LaunchInfo]
 *
 * Since: 0.1
 */
AtomrLaunchInfo *
atomr_launch_info_new (const gchar *actor_name,
                       const gchar *library,
                       const gchar *operation)
{
  AtomrLaunchInfo *info = g_new0 (AtomrLaunchInfo, 1);

  g_atomic_ref_count_init (&info->ref);
  info->actor_name = g_strdup (actor_name ? actor_name : "");
  info->library = g_strdup (library ? library : "");
  info->operation = g_strdup (operation ? operation : "");
  info->gpu_ms = -1.0;
  info->device_ordinal = -1;
  info->mailbox_depth = -1;
  return info;
}

/**
 * atomr_launch_info_ref:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Takes a reference to a record.
 *
 * Returns: (transfer full): @info
 *
 * Since: 0.1
 */
AtomrLaunchInfo *
atomr_launch_info_ref (AtomrLaunchInfo *info)
{
  g_return_val_if_fail (info != NULL, NULL);
  g_atomic_ref_count_inc (&info->ref);
  return info;
}

/**
 * atomr_launch_info_unref:
 * @info: (transfer full): an [struct@Atomr.LaunchInfo]
 *
 * Drops a reference.
 *
 * Since: 0.1
 */
void
atomr_launch_info_unref (AtomrLaunchInfo *info)
{
  g_return_if_fail (info != NULL);
  if (!g_atomic_ref_count_dec (&info->ref))
    return;
  g_free (info->actor_name);
  g_free (info->library);
  g_free (info->operation);
  g_free (info->detail);
  g_clear_error (&info->error);
  g_clear_pointer (&info->deps, g_array_unref);
  g_free (info);
}

/**
 * atomr_launch_info_get_actor_name:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the name of the actor that ran the operation.
 *
 * Returns: (transfer none): the name of the actor that ran the operation
 *
 * Since: 0.1
 */
const gchar *
atomr_launch_info_get_actor_name (AtomrLaunchInfo *info)
{
  return info->actor_name;
}

/**
 * atomr_launch_info_get_library:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the library, such as "cublas" or "nvrtc".
 *
 * Returns: (transfer none): the library, such as "cublas" or "nvrtc"
 *
 * Since: 0.1
 */
const gchar *
atomr_launch_info_get_library (AtomrLaunchInfo *info)
{
  return info->library;
}

/**
 * atomr_launch_info_get_operation:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the operation, such as "gemm".
 *
 * Returns: (transfer none): the operation, such as "gemm"
 *
 * Since: 0.1
 */
const gchar *
atomr_launch_info_get_operation (AtomrLaunchInfo *info)
{
  return info->operation;
}

/**
 * atomr_launch_info_get_sequence:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the operation's sequence number, unique in the process (all actors draw from one counter, from 1).
 *
 * Returns: the operation's sequence number, unique in the process (all
 *   actors draw from one counter, from 1)
 *
 * Since: 0.1
 */
guint64
atomr_launch_info_get_sequence (AtomrLaunchInfo *info)
{
  return info->sequence;
}

/**
 * atomr_launch_info_set_sequence:
 * @info: an [struct@Atomr.LaunchInfo]
 * @sequence: the sequence number
 *
 * Sets the per-actor sequence number.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_sequence (AtomrLaunchInfo *info,
                                guint64          sequence)
{
  info->sequence = sequence;
}

/**
 * atomr_launch_info_get_generation:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the device generation the operation ran in.
 *
 * Returns: the device generation the operation ran in
 *
 * Since: 0.1
 */
guint
atomr_launch_info_get_generation (AtomrLaunchInfo *info)
{
  return info->generation;
}

/**
 * atomr_launch_info_set_generation:
 * @info: an [struct@Atomr.LaunchInfo]
 * @generation: the device generation
 *
 * Sets the device generation.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_generation (AtomrLaunchInfo *info,
                                  guint            generation)
{
  info->generation = generation;
}

/**
 * atomr_launch_info_get_device_ordinal:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the device ordinal, -1 when unknown.
 *
 * Returns: the device ordinal, -1 when unknown
 *
 * Since: 0.1
 */
gint
atomr_launch_info_get_device_ordinal (AtomrLaunchInfo *info)
{
  return info->device_ordinal;
}

/**
 * atomr_launch_info_set_device_ordinal:
 * @info: an [struct@Atomr.LaunchInfo]
 * @ordinal: the device ordinal
 *
 * Sets the device ordinal.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_device_ordinal (AtomrLaunchInfo *info,
                                      gint             ordinal)
{
  info->device_ordinal = ordinal;
}

/**
 * atomr_launch_info_get_stream_id:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the per-device number of the stream the operation ran on.
 *
 * Returns: the per-device number of the stream the operation ran on
 *
 * Since: 0.1
 */
guint
atomr_launch_info_get_stream_id (AtomrLaunchInfo *info)
{
  return info->stream_id;
}

/**
 * atomr_launch_info_set_stream_id:
 * @info: an [struct@Atomr.LaunchInfo]
 * @stream_id: the stream number
 *
 * Sets the stream number.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_stream_id (AtomrLaunchInfo *info,
                                 guint            stream_id)
{
  info->stream_id = stream_id;
}

/**
 * atomr_launch_info_get_geometry:
 * @info: an [struct@Atomr.LaunchInfo]
 * @grid_x: (out) (optional): grid size in x
 * @grid_y: (out) (optional): grid size in y
 * @grid_z: (out) (optional): grid size in z
 * @block_x: (out) (optional): block size in x
 * @block_y: (out) (optional): block size in y
 * @block_z: (out) (optional): block size in z
 * @shared_mem_bytes: (out) (optional): dynamic shared memory
 *
 * Gets the launch geometry of a kernel launch.
 *
 * Returns: %TRUE if the operation had a launch geometry
 *
 * Since: 0.1
 */
gboolean
atomr_launch_info_get_geometry (AtomrLaunchInfo *info,
                                guint *grid_x, guint *grid_y, guint *grid_z,
                                guint *block_x, guint *block_y, guint *block_z,
                                guint *shared_mem_bytes)
{
  if (grid_x) *grid_x = info->grid[0];
  if (grid_y) *grid_y = info->grid[1];
  if (grid_z) *grid_z = info->grid[2];
  if (block_x) *block_x = info->block[0];
  if (block_y) *block_y = info->block[1];
  if (block_z) *block_z = info->block[2];
  if (shared_mem_bytes) *shared_mem_bytes = info->shared_mem;
  return info->has_geometry;
}

/**
 * atomr_launch_info_set_geometry:
 * @info: an [struct@Atomr.LaunchInfo]
 * @grid_x: grid size in x
 * @grid_y: grid size in y
 * @grid_z: grid size in z
 * @block_x: block size in x
 * @block_y: block size in y
 * @block_z: block size in z
 * @shared_mem_bytes: dynamic shared memory
 *
 * Sets the launch geometry.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_geometry (AtomrLaunchInfo *info,
                                guint grid_x, guint grid_y, guint grid_z,
                                guint block_x, guint block_y, guint block_z,
                                guint shared_mem_bytes)
{
  info->has_geometry = TRUE;
  info->grid[0] = grid_x; info->grid[1] = grid_y; info->grid[2] = grid_z;
  info->block[0] = block_x; info->block[1] = block_y; info->block[2] = block_z;
  info->shared_mem = shared_mem_bytes;
}

/**
 * atomr_launch_info_get_submit_time:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets when the request was made, g_get_monotonic_time() microseconds.
 *
 * Returns: when the request was made, g_get_monotonic_time() microseconds
 *
 * Since: 0.1
 */
gint64
atomr_launch_info_get_submit_time (AtomrLaunchInfo *info)
{
  return info->times[ATOMR_LAUNCH_SUBMITTED] / 1000;
}

/**
 * atomr_launch_info_get_enqueue_time:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets when the work was enqueued on the stream, in monotonic microseconds, or 0 if it never was.
 *
 * Returns: when the work was enqueued on the stream, in monotonic
 *   microseconds, or 0 if it never was
 *
 * Since: 0.1
 */
gint64
atomr_launch_info_get_enqueue_time (AtomrLaunchInfo *info)
{
  return info->times[ATOMR_LAUNCH_ENQUEUED] / 1000;
}

/**
 * atomr_launch_info_get_complete_time:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets when the actor learnt the GPU had finished, in monotonic microseconds, or 0 before completion.
 *
 * Returns: when the actor learnt the GPU had finished, in monotonic
 *   microseconds, or 0 before completion
 *
 * Since: 0.1
 */
gint64
atomr_launch_info_get_complete_time (AtomrLaunchInfo *info)
{
  return info->times[ATOMR_LAUNCH_COMPLETED] / 1000;
}

/**
 * atomr_launch_info_set_times:
 * @info: an [struct@Atomr.LaunchInfo]
 * @submit_time: request time, monotonic microseconds
 * @enqueue_time: enqueue time, or 0
 * @complete_time: completion time, or 0
 *
 * Sets the host timestamps in microseconds; see
 * [method@Atomr.LaunchInfo.set_timestamp] for nanoseconds.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_times (AtomrLaunchInfo *info,
                             gint64 submit_time,
                             gint64 enqueue_time,
                             gint64 complete_time)
{
  info->times[ATOMR_LAUNCH_SUBMITTED] = submit_time * 1000;
  info->times[ATOMR_LAUNCH_ENQUEUED] = enqueue_time * 1000;
  info->times[ATOMR_LAUNCH_COMPLETED] = complete_time * 1000;
}

/**
 * atomr_launch_info_now_ns:
 *
 * The clock of every [enum@Atomr.LaunchEvent]: the host's monotonic clock (that
 * of g_get_monotonic_time()) in nanoseconds.
 *
 * Returns: the current time in nanoseconds
 *
 * Since: 0.1
 */
gint64
atomr_launch_info_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/**
 * atomr_launch_info_get_timestamp:
 * @info: an [struct@Atomr.LaunchInfo]
 * @event: which moment
 *
 * Gets when @event happened, in nanoseconds on the host's monotonic clock ([func@Atomr.LaunchInfo.now_ns]), or 0 when it did not happen or was not measured.
 *
 * Returns: when @event happened, in nanoseconds on the host's monotonic
 *   clock ([func@Atomr.LaunchInfo.now_ns]), or 0 when it did not happen or was
 *   not measured
 *
 * Since: 0.1
 */
gint64
atomr_launch_info_get_timestamp (AtomrLaunchInfo  *info,
                                 AtomrLaunchEvent  event)
{
  if ((guint) event >= ATOMR_LAUNCH_N_EVENTS)
    return 0;
  return info->times[event];
}

/**
 * atomr_launch_info_set_timestamp:
 * @info: an [struct@Atomr.LaunchInfo]
 * @event: which moment
 * @time_ns: when, in nanoseconds on the host's monotonic clock; 0 for
 *   unknown
 *
 * Sets when @event happened.  An @event outside [enum@Atomr.LaunchEvent] is
 * ignored.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_timestamp (AtomrLaunchInfo  *info,
                                 AtomrLaunchEvent  event,
                                 gint64            time_ns)
{
  if ((guint) event >= ATOMR_LAUNCH_N_EVENTS)
    return;
  info->times[event] = time_ns;
}

/**
 * atomr_launch_info_get_gpu_times:
 * @info: an [struct@Atomr.LaunchInfo]
 * @start_ns: (out) (optional): when the GPU started the work
 * @end_ns: (out) (optional): when the GPU finished it
 *
 * Gets the GPU execution interval on the host's monotonic clock, measured
 * with CUDA timing events when the actor's [property@Atomr.Actor:timing] was on.
 *
 * Returns: %TRUE if the GPU times are known
 *
 * Since: 0.1
 */
gboolean
atomr_launch_info_get_gpu_times (AtomrLaunchInfo *info,
                                 gint64          *start_ns,
                                 gint64          *end_ns)
{
  gint64 start = info->times[ATOMR_LAUNCH_GPU_START];
  gint64 end = info->times[ATOMR_LAUNCH_GPU_END];
  gboolean known = start > 0 && end >= start;

  if (start_ns)
    *start_ns = known ? start : 0;
  if (end_ns)
    *end_ns = known ? end : 0;
  return known;
}

/**
 * atomr_launch_info_get_dependencies:
 * @info: an [struct@Atomr.LaunchInfo]
 * @n_dependencies: (out): how many
 *
 * The operations this one was ordered after on the GPU (the hazards the
 * envelope resolved: the last writer of what it reads, the last writer
 * and readers of what it writes), by sequence number.
 *
 * Returns: (array length=n_dependencies) (transfer none) (nullable): the
 *   producers' sequence numbers, in the order they were waited for
 *
 * Since: 0.1
 */
const guint64 *
atomr_launch_info_get_dependencies (AtomrLaunchInfo *info,
                                    guint           *n_dependencies)
{
  *n_dependencies = info->deps ? info->deps->len : 0;
  return info->deps && info->deps->len ? (const guint64 *) info->deps->data : NULL;
}

/**
 * atomr_launch_info_add_dependency:
 * @info: an [struct@Atomr.LaunchInfo]
 * @producer_sequence: the sequence number of an operation @info waited for
 *
 * Records a dependency (once; 0 is ignored).
 *
 * Since: 0.1
 */
void
atomr_launch_info_add_dependency (AtomrLaunchInfo *info,
                                  guint64          producer_sequence)
{
  if (producer_sequence == 0)
    return;
  if (info->deps == NULL)
    info->deps = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i < info->deps->len; i++)
    if (g_array_index (info->deps, guint64, i) == producer_sequence)
      return;
  g_array_append_val (info->deps, producer_sequence);
}

/**
 * atomr_launch_info_get_gpu_duration_ms:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the GPU time in milliseconds measured with events, or a negative value when the actor's timing was off.
 *
 * Returns: GPU time in milliseconds measured with events, or a negative
 *   value when the actor's timing was off
 *
 * Since: 0.1
 */
gdouble
atomr_launch_info_get_gpu_duration_ms (AtomrLaunchInfo *info)
{
  return info->gpu_ms;
}

/**
 * atomr_launch_info_set_gpu_duration_ms:
 * @info: an [struct@Atomr.LaunchInfo]
 * @ms: milliseconds, negative for unknown
 *
 * Sets the GPU duration.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_gpu_duration_ms (AtomrLaunchInfo *info,
                                       gdouble          ms)
{
  info->gpu_ms = ms;
}

/**
 * atomr_launch_info_get_error:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the error the operation failed with, or %NULL.
 *
 * Returns: (transfer none) (nullable): the error the operation failed
 *   with, or %NULL
 *
 * Since: 0.1
 */
const GError *
atomr_launch_info_get_error (AtomrLaunchInfo *info)
{
  return info->error;
}

/**
 * atomr_launch_info_set_error:
 * @info: an [struct@Atomr.LaunchInfo]
 * @error: (nullable): the error, copied
 *
 * Sets the error.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_error (AtomrLaunchInfo *info,
                             const GError    *error)
{
  g_clear_error (&info->error);
  if (error)
    info->error = g_error_copy (error);
}

/**
 * atomr_launch_info_get_detail:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets the free-form detail of the operation (sizes, dtypes, kernel name), or %NULL.
 *
 * Returns: (transfer none) (nullable): free-form detail of the operation
 *   (sizes, dtypes, kernel name), or %NULL
 *
 * Since: 0.1
 */
const gchar *
atomr_launch_info_get_detail (AtomrLaunchInfo *info)
{
  return info->detail;
}

/**
 * atomr_launch_info_set_detail:
 * @info: an [struct@Atomr.LaunchInfo]
 * @detail: (nullable): the detail text
 *
 * Sets free-form detail text.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_detail (AtomrLaunchInfo *info,
                              const gchar     *detail)
{
  g_free (info->detail);
  info->detail = g_strdup (detail);
}

/**
 * atomr_launch_info_get_mailbox_depth:
 * @info: an [struct@Atomr.LaunchInfo]
 *
 * Gets how many requests were still waiting in the actor's mailbox when this one was taken out of it, or -1 when unknown.
 *
 * Returns: how many requests were still waiting in the actor's mailbox
 *   when this one was taken out of it, or -1 when unknown
 *
 * Since: 0.1
 */
gint
atomr_launch_info_get_mailbox_depth (AtomrLaunchInfo *info)
{
  return info->mailbox_depth;
}

/**
 * atomr_launch_info_set_mailbox_depth:
 * @info: an [struct@Atomr.LaunchInfo]
 * @depth: requests waiting behind this one, -1 for unknown
 *
 * Sets the mailbox depth.
 *
 * Since: 0.1
 */
void
atomr_launch_info_set_mailbox_depth (AtomrLaunchInfo *info,
                                     gint             depth)
{
  info->mailbox_depth = depth;
}
