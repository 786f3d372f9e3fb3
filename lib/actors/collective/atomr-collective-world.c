/* atomr-collective-world.c — the communicators of one group of ranks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "atomr-collective-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-device-private.h"

/**
 * AtomrCollectiveWorld:
 *
 * The NCCL communicators of one group of ranks, and one
 * [class@Atomr.CollectiveActor] per rank that lives in this process.
 *
 * A world is built either from GPUs of this process
 * ([ctor@Atomr.CollectiveWorld.new_local], one rank per device, like
 * `ncclCommInitAll`), or as one rank of a job spread over processes
 * ([ctor@Atomr.CollectiveWorld.new_rank] with a unique id that the
 * application hands to every rank its own way, or
 * [func@Atomr.CollectiveWorld.new_from_environment_async], which reads the
 * `RANK`/`WORLD_SIZE`/`LOCAL_RANK`/`MASTER_ADDR`/`MASTER_PORT` variables a
 * launcher such as torchrun sets and exchanges the id over a socket).
 * Multi-node jobs work through NCCL's own transports.
 *
 * Collectives in a local world of several ranks must be submitted with
 * one call per rank in one [class@Atomr.CollectiveGroup] (NCCL would otherwise
 * wait forever for the missing ranks); this is checked before anything
 * is enqueued.
 *
 * Failures: asynchronous NCCL errors are polled while requests are in
 * flight, and a request that runs longer than [property@Atomr.CollectiveWorld:timeout-ms]
 * counts as hung.  Either way the world aborts its communicators
 * (`ncclCommAbort`, which also ends hung kernels), the requests in flight
 * fail, [signal@Atomr.CollectiveWorld::world-failed] is emitted, and
 * [method@Atomr.CollectiveWorld.rebuild] makes new communicators for the same
 * actors.
 *
 * The world owns its actors: keep it alive while you use them.  Its
 * actors and its watchdog run on the thread-default main context of the
 * thread that built it.  NCCL supports one rank per GPU: two processes
 * (or two ranks of one world) on the same GPU are refused.
 *
 * On host test devices (no GPU) a local world runs the collectives on the
 * CPU with the same validation, for tests of application logic.
 *
 * Since: 0.2
 */

#define DEFAULT_TIMEOUT_MS (5 * 60 * 1000)
#define WATCHDOG_PERIOD_MS 20

struct _AtomrCollectiveWorld
{
  GObject       parent_instance;

  gboolean      host;
  guint         n_ranks;
  guint         first_rank;   /* rank of local index 0 */
  GPtrArray    *devices;      /* AtomrDevice*, one per local rank */
  GPtrArray    *actors;       /* AtomrCollectiveActor* */
  GMainContext *context;
  gint          nccl_version;

  GMutex        lock;
  ncclComm_t   *comms;        /* n_local, NULL entries once aborted */
  GError       *failure;
  guint         failure_count;
  guint         timeout_ms;
  GList        *tracked;      /* Tracked* */
  GSource      *watchdog;
};

typedef struct {
  AtomrCollectiveWorld *world;   /* ref */
  gchar                *operation;
  guint64               seq;
  gint64                deadline; /* monotonic µs, 0: none */
} Tracked;

G_DEFINE_FINAL_TYPE (AtomrCollectiveWorld, atomr_collective_world, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_N_RANKS,
  PROP_N_LOCAL_RANKS,
  PROP_NCCL_VERSION,
  PROP_TIMEOUT_MS,
  PROP_FAILED,
  PROP_NVLS_AVAILABLE,
  PROP_FP8_REDUCTIONS,
  N_PROPS
};

enum {
  SIGNAL_WORLD_FAILED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

gboolean
atomr_nccl_check (ncclResult_t  result,
                  const gchar  *call,
                  GError      **error)
{
  if (result == ncclSuccess || result == ncclInProgress)
    return TRUE;
  g_set_error (error, ATOMR_ERROR,
               result == ncclInvalidArgument || result == ncclInvalidUsage
                 ? ATOMR_ERROR_INVALID_ARGUMENT : ATOMR_ERROR_LIBRARY,
               "NCCL: %s failed: %s (ncclResult_t %d)", call,
               ncclGetErrorString (result), (gint) result);
  return FALSE;
}

static gboolean
check_world (AtomrCollectiveWorld  *self,
             GError               **error)
{
  if (self->devices == NULL || self->devices->len == 0)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective world: this world was not built by one of its constructors "
                           "(atomr_collective_world_new_local(), _new_rank(), ...)");
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Unique ids                                                           */

/**
 * atomr_collective_unique_id_new:
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes the NCCL unique id of a new multi-process world (on rank 0), as a
 * base64 string that the application hands to every rank its own way
 * (a file, its own socket, an environment variable) for
 * [ctor@Atomr.CollectiveWorld.new_rank].
 *
 * Returns: (transfer full): the id, or %NULL when NCCL is not available
 *
 * Since: 0.2
 */
gchar *
atomr_collective_unique_id_new (GError **error)
{
  ncclUniqueId id;

  if (!atomr_nccl_load (error))
    return NULL;
  if (!atomr_nccl_check (ncclGetUniqueId (&id), "ncclGetUniqueId", error))
    return NULL;
  return g_base64_encode ((const guchar *) id.internal, sizeof id.internal);
}

static gboolean
parse_unique_id (const gchar   *text,
                 ncclUniqueId  *id,
                 GError       **error)
{
  g_autofree guchar *raw = NULL;
  gsize len = 0;

  if (text == NULL || *text == '\0')
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective world: the unique id is empty (make one with "
                           "atomr_collective_unique_id_new() on rank 0)");
      return FALSE;
    }
  raw = g_base64_decode (text, &len);
  if (len != sizeof id->internal)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective world: the unique id decodes to %" G_GSIZE_FORMAT " bytes, not the "
                   "%" G_GSIZE_FORMAT " of an NCCL unique id (is it the base64 text of "
                   "atomr_collective_unique_id_new()?)", len, sizeof id->internal);
      return FALSE;
    }
  memcpy (id->internal, raw, len);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Communicators                                                        */

gboolean
atomr_collective_world_wait_ready (AtomrCollectiveWorld  *self,
                                   const gchar           *what,
                                   GError               **error)
{
  gint64 deadline = self->timeout_ms ? g_get_monotonic_time () + (gint64) self->timeout_ms * 1000 : 0;
  guint spins = 0;

  for (guint i = 0; i < self->devices->len; i++)
    {
      ncclComm_t comm = self->comms ? self->comms[i] : NULL;

      if (comm == NULL)
        continue;
      for (;;)
        {
          ncclResult_t state = ncclInProgress;
          ncclResult_t res = ncclCommGetAsyncError (comm, &state);

          if (res != ncclSuccess)
            return atomr_nccl_check (res, "ncclCommGetAsyncError", error);
          if (state == ncclSuccess)
            break;
          if (state != ncclInProgress)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                           "NCCL: %s failed on rank %u: %s (%s)", what, self->first_rank + i,
                           ncclGetErrorString (state), ncclGetLastError (comm));
              return FALSE;
            }
          if (deadline && g_get_monotonic_time () > deadline)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT,
                           "NCCL: %s on rank %u did not finish within %u ms (are all %u ranks "
                           "running?)", what, self->first_rank + i, self->timeout_ms, self->n_ranks);
              return FALSE;
            }
          if (++spins > 64)
            g_usleep (spins > 4096 ? 1000 : 50);
        }
    }
  return TRUE;
}

static void
abort_comms_locked (AtomrCollectiveWorld *self)
{
  if (self->comms == NULL)
    return;
  for (guint i = 0; i < self->devices->len; i++)
    if (self->comms[i])
      {
        ncclCommAbort (self->comms[i]);
        self->comms[i] = NULL;
      }
}

static void
destroy_comms (AtomrCollectiveWorld *self)
{
  if (self->comms == NULL)
    return;
  for (guint i = 0; i < self->devices->len; i++)
    if (self->comms[i])
      {
        AtomrDevice *device = g_ptr_array_index (self->devices, i);

        /* A device that cannot be entered (poisoned, stopped) only allows
         * the abort path. */
        if (atomr_device_enter (device, NULL))
          {
            ncclCommDestroy (self->comms[i]);
            atomr_device_leave (device);
          }
        else
          ncclCommAbort (self->comms[i]);
        self->comms[i] = NULL;
      }
}

/* One communicator per local device, made together (ncclCommInitAll does
 * the same), nonblocking so that a missing peer is a timeout, not a hang. */
static gboolean
init_comms (AtomrCollectiveWorld  *self,
            const ncclUniqueId    *id,
            GError               **error)
{
  guint n_local = self->devices->len;
  gboolean ok = TRUE;

  if (self->comms == NULL)
    self->comms = g_new0 (ncclComm_t, n_local);
  if (!atomr_nccl_check (ncclGroupStart (), "ncclGroupStart", error))
    return FALSE;
  for (guint i = 0; i < n_local && ok; i++)
    {
      AtomrDevice *device = g_ptr_array_index (self->devices, i);
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;

      config.blocking = 0;
      if (!atomr_device_enter (device, error))
        {
          ok = FALSE;
          break;
        }
      ok = atomr_nccl_check (ncclCommInitRankConfig (&self->comms[i], (int) self->n_ranks, *id,
                                                     (int) (self->first_rank + i), &config),
                             "ncclCommInitRankConfig", error);
      atomr_device_leave (device);
    }
  if (!atomr_nccl_check (ncclGroupEnd (), "ncclGroupEnd", ok ? error : NULL))
    ok = FALSE;
  if (ok)
    ok = atomr_collective_world_wait_ready (self, "communicator set-up", error);
  if (!ok)
    {
      g_mutex_lock (&self->lock);
      abort_comms_locked (self);
      g_mutex_unlock (&self->lock);
    }
  return ok;
}

static gboolean
create_actors (AtomrCollectiveWorld  *self,
               GError               **error)
{
  self->actors = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < self->devices->len; i++)
    {
      AtomrCollectiveActor *actor =
        atomr_collective_actor_new_internal (self, g_ptr_array_index (self->devices, i),
                                             self->first_rank + i, i, error);
      if (actor == NULL)
        return FALSE;
      g_ptr_array_add (self->actors, actor);
    }
  return TRUE;
}

static AtomrCollectiveWorld *
world_new (AtomrDevice **devices,
           guint         n_devices,
           guint         n_ranks,
           guint         first_rank,
           gboolean      host)
{
  AtomrCollectiveWorld *self = g_object_new (ATOMR_TYPE_COLLECTIVE_WORLD, NULL);

  self->host = host;
  self->n_ranks = n_ranks;
  self->first_rank = first_rank;
  self->devices = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < n_devices; i++)
    g_ptr_array_add (self->devices, g_object_ref (devices[i]));
  return self;
}

static gboolean
check_devices (AtomrDevice **devices,
               guint         n_devices,
               gboolean     *host,
               GError      **error)
{
  guint n_host = 0;

  if (n_devices == 0)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective world: no devices given");
      return FALSE;
    }
  for (guint i = 0; i < n_devices; i++)
    {
      if (!ATOMR_IS_DEVICE (devices[i]))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective world: devices[%u] is not an AtomrDevice", i);
          return FALSE;
        }
      n_host += atomr_device_is_host (devices[i]);
      for (guint j = 0; j < i; j++)
        if (devices[j] == devices[i])
          {
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                         "collective world: devices[%u] and devices[%u] are the same GPU (%s); "
                         "NCCL runs one rank per GPU", j, i, atomr_device_get_name (devices[i]));
            return FALSE;
          }
    }
  if (n_host != 0 && n_host != n_devices)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective world: host test devices and GPUs cannot be mixed");
      return FALSE;
    }
  *host = n_host != 0;
  return TRUE;
}

static gint
query_version (void)
{
  gint version = 0;

  if (ncclGetVersion (&version) != ncclSuccess)
    return 0;
  return version;
}

/**
 * atomr_collective_world_new_local:
 * @devices: (array length=n_devices): one device per rank, all different
 * @n_devices: the number of ranks
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a world of @n_devices ranks, all in this process: rank i runs on
 * @devices[i] (like `ncclCommInitAll`).  Its actors are bound to the
 * calling thread's thread-default main context.
 *
 * Returns: (transfer full): the world, or %NULL with NOT_SUPPORTED when
 *   NCCL cannot be loaded, INVALID_ARGUMENT for bad devices
 *
 * Since: 0.2
 */
AtomrCollectiveWorld *
atomr_collective_world_new_local (AtomrDevice **devices,
                                  guint         n_devices,
                                  GError      **error)
{
  g_autoptr(AtomrCollectiveWorld) self = NULL;
  gboolean host = FALSE;
  ncclUniqueId id;

  if (!check_devices (devices, n_devices, &host, error))
    return NULL;
  self = world_new (devices, n_devices, n_devices, 0, host);
  if (!host)
    {
      if (!atomr_nccl_load (error) ||
          !atomr_nccl_check (ncclGetUniqueId (&id), "ncclGetUniqueId", error) ||
          !init_comms (self, &id, error))
        return NULL;
      self->nccl_version = query_version ();
    }
  if (!create_actors (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

/**
 * atomr_collective_world_new_all_devices:
 * @error: return location for a [struct@GLib.Error]
 *
 * A local world of every visible GPU (see [ctor@Atomr.CollectiveWorld.new_local]).
 *
 * Returns: (transfer full): the world, or %NULL with NO_DEVICE when
 *   there is no GPU
 *
 * Since: 0.2
 */
AtomrCollectiveWorld *
atomr_collective_world_new_all_devices (GError **error)
{
  g_autoptr(GPtrArray) devices = g_ptr_array_new_with_free_func (g_object_unref);
  gint n = atomr_device_get_count ();

  if (n <= 0)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE,
                           "collective world: no CUDA device is visible");
      return NULL;
    }
  for (gint i = 0; i < n; i++)
    {
      AtomrDevice *device = atomr_device_get (i, error);
      if (device == NULL)
        return NULL;
      g_ptr_array_add (devices, device);
    }
  return atomr_collective_world_new_local ((AtomrDevice **) devices->pdata, devices->len, error);
}

/**
 * atomr_collective_world_new_rank:
 * @device: the GPU of this rank
 * @unique_id: the world's id, from [func@Atomr.collective_unique_id_new] on rank 0
 * @rank: this process's rank, below @n_ranks
 * @n_ranks: the number of ranks of the world
 * @error: return location for a [struct@GLib.Error]
 *
 * Joins a world spread over processes (or machines) as @rank.  This
 * blocks until every rank has joined or [property@Atomr.CollectiveWorld:timeout-ms]
 * (5 minutes) has passed: call it from a worker thread, or use
 * [func@Atomr.CollectiveWorld.new_rank_async].
 *
 * Returns: (transfer full): the world, or %NULL on error
 *
 * Since: 0.2
 */
AtomrCollectiveWorld *
atomr_collective_world_new_rank (AtomrDevice  *device,
                                 const gchar  *unique_id,
                                 guint         rank,
                                 guint         n_ranks,
                                 GError      **error)
{
  g_autoptr(AtomrCollectiveWorld) self = NULL;
  gboolean host = FALSE;
  ncclUniqueId id;

  if (!check_devices (&device, 1, &host, error))
    return NULL;
  if (n_ranks == 0 || rank >= n_ranks)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective world: rank %u is not below the world size %u", rank, n_ranks);
      return NULL;
    }
  if (!parse_unique_id (unique_id, &id, error))
    return NULL;
  if (host && n_ranks != 1)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "collective world: the host test device runs local worlds and one-rank worlds "
                   "only, not rank %u of %u", rank, n_ranks);
      return NULL;
    }
  self = world_new (&device, 1, n_ranks, rank, host);
  if (!host)
    {
      if (!atomr_nccl_load (error) || !init_comms (self, &id, error))
        return NULL;
      self->nccl_version = query_version ();
    }
  if (!create_actors (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

typedef struct {
  AtomrDevice *device;
  gchar       *unique_id;
  guint        rank;
  guint        n_ranks;
  gboolean     from_env;
  GMainContext *context;
} NewData;

static void
new_data_free (gpointer p)
{
  NewData *d = p;

  g_clear_object (&d->device);
  g_free (d->unique_id);
  g_main_context_unref (d->context);
  g_free (d);
}

static gboolean
env_uint (const gchar  *name,
          guint        *value,
          GError      **error)
{
  const gchar *text = g_getenv (name);
  guint64 v;

  if (text == NULL || !g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT, &v, NULL))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective world: the environment variable %s is %s%s%s; a launcher such as "
                   "torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT",
                   name, text ? "'" : "", text ? text : "not set", text ? "', not a number" : "");
      return FALSE;
    }
  *value = (guint) v;
  return TRUE;
}

#define ID_MAGIC "ATOMR-NCCL-ID-1\n"

/* Rank 0 serves the id to the other ranks over TCP; they retry until it
 * listens.  The port is ATOMR_COLLECTIVE_PORT, else MASTER_PORT + 1 (the
 * launcher's own store uses MASTER_PORT). */
static gboolean
exchange_id (NewData       *d,
             GCancellable  *cancellable,
             GError       **error)
{
  const gchar *addr = g_getenv ("MASTER_ADDR");
  const gchar *port_text = g_getenv ("ATOMR_COLLECTIVE_PORT");
  guint port = 0;
  gint64 deadline = g_get_monotonic_time () + (gint64) DEFAULT_TIMEOUT_MS * 1000;

  if (addr == NULL || *addr == '\0')
    addr = "127.0.0.1";
  if (port_text)
    {
      if (!env_uint ("ATOMR_COLLECTIVE_PORT", &port, error))
        return FALSE;
    }
  else
    {
      if (!env_uint ("MASTER_PORT", &port, error))
        return FALSE;
      port += 1;
    }
  if (port == 0 || port > 65535)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "collective world: port %u is out of range", port);
      return FALSE;
    }

  if (d->rank == 0)
    {
      g_autoptr(GSocketListener) listener = g_socket_listener_new ();
      g_autoptr(GInetAddress) inet = g_inet_address_new_from_string (addr);
      g_autoptr(GSocketAddress) sa = NULL;
      g_autofree gchar *line = NULL;

      d->unique_id = atomr_collective_unique_id_new (error);
      if (d->unique_id == NULL)
        return FALSE;
      line = g_strconcat (ID_MAGIC, d->unique_id, "\n", NULL);
      if (inet == NULL)
        inet = g_inet_address_new_any (G_SOCKET_FAMILY_IPV4);
      sa = g_inet_socket_address_new (inet, (guint16) port);
      if (!g_socket_listener_add_address (listener, sa, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                          NULL, NULL, error))
        return FALSE;
      for (guint served = 1; served < d->n_ranks; served++)
        {
          g_autoptr(GSocketConnection) conn = g_socket_listener_accept (listener, NULL, cancellable, error);
          if (conn == NULL ||
              !g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), line,
                                          strlen (line), NULL, cancellable, error))
            return FALSE;
        }
      return TRUE;
    }

  for (;;)
    {
      g_autoptr(GSocketClient) client = g_socket_client_new ();
      g_autoptr(GSocketConnection) conn = NULL;
      g_autoptr(GError) local = NULL;

      g_socket_client_set_timeout (client, 10);
      conn = g_socket_client_connect_to_host (client, addr, (guint16) port, cancellable, &local);
      if (conn)
        {
          g_autoptr(GDataInputStream) in =
            g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (conn)));
          g_autofree gchar *magic = g_data_input_stream_read_line (in, NULL, cancellable, error);
          if (magic == NULL)
            return FALSE;
          if (strcmp (magic, "ATOMR-NCCL-ID-1") != 0)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "collective world: %s:%u is not an atomr rank 0 (it said \"%.32s\")",
                           addr, port, magic);
              return FALSE;
            }
          d->unique_id = g_data_input_stream_read_line (in, NULL, cancellable, error);
          return d->unique_id != NULL;
        }
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (g_get_monotonic_time () > deadline)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT,
                       "collective world: rank 0 did not serve the unique id at %s:%u within %d s: %s",
                       addr, port, DEFAULT_TIMEOUT_MS / 1000, local->message);
          return FALSE;
        }
      g_usleep (200 * 1000);
    }
}

static void
new_in_thread (GTask        *task,
               gpointer      source,
               gpointer      task_data,
               GCancellable *cancellable)
{
  NewData *d = task_data;
  GError *error = NULL;
  AtomrCollectiveWorld *world;

  if (d->from_env)
    {
      guint local_rank = 0;

      if (!env_uint ("RANK", &d->rank, &error) || !env_uint ("WORLD_SIZE", &d->n_ranks, &error))
        return g_task_return_error (task, error);
      if (d->device == NULL)
        {
          if (!env_uint ("LOCAL_RANK", &local_rank, &error) ||
              (d->device = atomr_device_get ((gint) local_rank, &error)) == NULL)
            return g_task_return_error (task, error);
        }
      if (d->n_ranks == 0 || d->rank >= d->n_ranks)
        return g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                        "collective world: RANK %u is not below WORLD_SIZE %u",
                                        d->rank, d->n_ranks);
      if (d->n_ranks == 1)
        d->unique_id = atomr_collective_unique_id_new (&error);
      else if (!exchange_id (d, cancellable, &error))
        g_clear_pointer (&d->unique_id, g_free);
      if (d->unique_id == NULL && d->n_ranks > 0)
        return g_task_return_error (task, error ? error
                                    : g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                                                           "collective world: no unique id"));
    }
  /* The actors belong to the caller's context, not to this thread's. */
  g_main_context_push_thread_default (d->context);
  world = atomr_collective_world_new_rank (d->device, d->unique_id, d->rank, d->n_ranks, &error);
  g_main_context_pop_thread_default (d->context);
  if (world)
    g_task_return_pointer (task, world, g_object_unref);
  else
    g_task_return_error (task, error);
}

static void
start_new (NewData             *d,
           GCancellable        *cancellable,
           GAsyncReadyCallback  callback,
           gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, atomr_collective_world_new_finish);
  d->context = g_main_context_ref_thread_default ();
  g_task_set_task_data (task, d, new_data_free);
  g_task_run_in_thread (task, new_in_thread);
}

/**
 * atomr_collective_world_new_rank_async:
 * @device: the GPU of this rank
 * @unique_id: the world's id
 * @rank: this process's rank
 * @n_ranks: the number of ranks
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the world is ready
 * @user_data: data for @callback
 *
 * [ctor@Atomr.CollectiveWorld.new_rank] on a worker thread; the actors are
 * bound to the caller's thread-default main context.  Finish with
 * [ctor@Atomr.CollectiveWorld.new_finish].
 *
 * Since: 0.2
 */
void
atomr_collective_world_new_rank_async (AtomrDevice         *device,
                                       const gchar         *unique_id,
                                       guint                rank,
                                       guint                n_ranks,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  NewData *d = g_new0 (NewData, 1);

  d->device = device ? g_object_ref (device) : NULL;
  d->unique_id = g_strdup (unique_id);
  d->rank = rank;
  d->n_ranks = n_ranks;
  start_new (d, cancellable, callback, user_data);
}

/**
 * atomr_collective_world_new_from_environment_async:
 * @device: (nullable): the GPU of this rank, or %NULL for the device
 *   numbered `LOCAL_RANK`
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the world is ready
 * @user_data: data for @callback
 *
 * Joins the world a launcher describes in the environment, as torchrun
 * does: `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR` (default
 * 127.0.0.1) and `MASTER_PORT`.  Rank 0 makes the unique id and serves it
 * over TCP on `ATOMR_COLLECTIVE_PORT`, or `MASTER_PORT` + 1 (the launcher's
 * own store listens on `MASTER_PORT`); the other ranks connect, retrying
 * for up to 5 minutes.  Finish with [ctor@Atomr.CollectiveWorld.new_finish].
 *
 * Since: 0.2
 */
void
atomr_collective_world_new_from_environment_async (AtomrDevice         *device,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data)
{
  NewData *d = g_new0 (NewData, 1);

  d->device = device ? g_object_ref (device) : NULL;
  d->from_env = TRUE;
  start_new (d, cancellable, callback, user_data);
}

/**
 * atomr_collective_world_new_finish:
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the creation of a world started with [func@Atomr.CollectiveWorld.new_rank_async] or [func@Atomr.CollectiveWorld.new_from_environment_async].
 *
 * Returns: (transfer full): the world, or %NULL on error
 *
 * Since: 0.2
 */
AtomrCollectiveWorld *
atomr_collective_world_new_finish (GAsyncResult  *result,
                                   GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == atomr_collective_world_new_finish,
                        NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------------ */
/* Failure and the watchdog                                             */

static gboolean
emit_failed (gpointer data)
{
  AtomrCollectiveWorld *self = data;
  g_autoptr(GError) failure = atomr_collective_world_get_failure (self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FAILED]);
  if (failure)
    g_signal_emit (self, signals[SIGNAL_WORLD_FAILED], 0, failure);
  return G_SOURCE_REMOVE;
}

void
atomr_collective_world_fail (AtomrCollectiveWorld *self,
                             GError               *error)
{
  gboolean first;

  g_mutex_lock (&self->lock);
  first = self->failure == NULL;
  if (first)
    {
      self->failure = error;
      self->failure_count++;
      abort_comms_locked (self);
    }
  g_mutex_unlock (&self->lock);
  if (!first)
    {
      g_error_free (error);
      return;
    }
  g_main_context_invoke_full (self->context, G_PRIORITY_DEFAULT, emit_failed,
                              g_object_ref (self), g_object_unref);
}

static gboolean
watchdog_tick (gpointer data)
{
  AtomrCollectiveWorld *self = data;
  GError *error = NULL;
  gint64 now = g_get_monotonic_time ();

  g_mutex_lock (&self->lock);
  for (guint i = 0; self->comms && i < self->devices->len && !error; i++)
    {
      ncclResult_t state = ncclSuccess;

      if (self->comms[i] && ncclCommGetAsyncError (self->comms[i], &state) == ncclSuccess &&
          state != ncclSuccess && state != ncclInProgress)
        error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                             "NCCL reported an asynchronous error on rank %u: %s (%s)",
                             self->first_rank + i, ncclGetErrorString (state),
                             ncclGetLastError (self->comms[i]));
    }
  for (GList *l = self->tracked; l && !error; l = l->next)
    {
      Tracked *t = l->data;

      if (t->deadline && now > t->deadline)
        error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT,
                             "collective %s (request %" G_GUINT64_FORMAT ") did not complete within "
                             "%u ms; the world was aborted (is a rank missing or stuck?)",
                             t->operation, t->seq, self->timeout_ms);
    }
  g_mutex_unlock (&self->lock);
  if (error)
    atomr_collective_world_fail (self, error);
  return G_SOURCE_CONTINUE;
}

gpointer
atomr_collective_world_track (AtomrCollectiveWorld *self,
                              const gchar          *operation,
                              guint64               seq)
{
  Tracked *t = g_new0 (Tracked, 1);

  t->world = g_object_ref (self);
  t->operation = g_strdup (operation);
  t->seq = seq;
  g_mutex_lock (&self->lock);
  if (self->timeout_ms)
    t->deadline = g_get_monotonic_time () + (gint64) self->timeout_ms * 1000;
  self->tracked = g_list_prepend (self->tracked, t);
  if (self->watchdog == NULL && !self->host)
    {
      self->watchdog = g_timeout_source_new (WATCHDOG_PERIOD_MS);
      g_source_set_name (self->watchdog, "atomr collective watchdog");
      /* The source holds no reference: untrack() removes it before the
       * last tracked request drops the world. */
      g_source_set_callback (self->watchdog, watchdog_tick, self, NULL);
      g_source_attach (self->watchdog, self->context);
    }
  g_mutex_unlock (&self->lock);
  return t;
}

void
atomr_collective_world_untrack (gpointer token)
{
  Tracked *t = token;
  AtomrCollectiveWorld *self = t->world;

  g_mutex_lock (&self->lock);
  self->tracked = g_list_remove (self->tracked, t);
  if (self->tracked == NULL && self->watchdog)
    {
      g_source_destroy (self->watchdog);
      g_clear_pointer (&self->watchdog, g_source_unref);
    }
  g_mutex_unlock (&self->lock);
  g_free (t->operation);
  g_object_unref (t->world);
  g_free (t);
}

/* ------------------------------------------------------------------ */
/* Accessors                                                            */

gboolean
atomr_collective_world_is_host (AtomrCollectiveWorld *self)
{
  return self->host;
}

guint
atomr_collective_world_get_first_rank (AtomrCollectiveWorld *self)
{
  return self->first_rank;
}

ncclComm_t
atomr_collective_world_get_comm (AtomrCollectiveWorld *self,
                                 guint                 local_index)
{
  ncclComm_t comm;

  g_mutex_lock (&self->lock);
  comm = self->comms && local_index < self->devices->len ? self->comms[local_index] : NULL;
  g_mutex_unlock (&self->lock);
  return comm;
}

guint
atomr_collective_world_get_failure_count (AtomrCollectiveWorld *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->failure_count;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * atomr_collective_world_get_n_ranks:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Gets the number of ranks of the whole world, in every process.
 *
 * This is the value of the [property@Atomr.CollectiveWorld:n-ranks] property.
 *
 * Returns: the number of ranks of the whole world, in every process
 *
 * Since: 0.2
 */
guint
atomr_collective_world_get_n_ranks (AtomrCollectiveWorld *self)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), 0);
  return self->n_ranks;
}

/**
 * atomr_collective_world_get_n_local_ranks:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Gets the number of ranks (and actors) in this process.
 *
 * This is the value of the [property@Atomr.CollectiveWorld:n-local-ranks] property.
 *
 * Returns: the number of ranks (and actors) in this process
 *
 * Since: 0.2
 */
guint
atomr_collective_world_get_n_local_ranks (AtomrCollectiveWorld *self)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), 0);
  return self->actors ? self->actors->len : 0;
}

/**
 * atomr_collective_world_get_actor:
 * @self: an [class@Atomr.CollectiveWorld]
 * @local_index: which of this process's ranks, below
 *   [method@Atomr.CollectiveWorld.get_n_local_ranks] (in a local world, the rank)
 *
 * Gets the actor of that rank, owned by the world; %NULL when @local_index is out of range.
 *
 * Returns: (transfer none) (nullable): the actor of that rank, owned by
 *   the world; %NULL when @local_index is out of range
 *
 * Since: 0.2
 */
AtomrCollectiveActor *
atomr_collective_world_get_actor (AtomrCollectiveWorld *self,
                                  guint                 local_index)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), NULL);
  if (self->actors == NULL || local_index >= self->actors->len)
    return NULL;
  return g_ptr_array_index (self->actors, local_index);
}

/**
 * atomr_collective_world_get_nccl_version:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Gets the version of the NCCL library in use, as NCCL encodes it (22809 for 2.28.9), 0 on the host test device.
 *
 * This is the value of the [property@Atomr.CollectiveWorld:nccl-version] property.
 *
 * Returns: the version of the NCCL library in use, as NCCL encodes it
 *   (22809 for 2.28.9), 0 on the host test device
 *
 * Since: 0.2
 */
guint
atomr_collective_world_get_nccl_version (AtomrCollectiveWorld *self)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), 0);
  return (guint) self->nccl_version;
}

/**
 * atomr_collective_world_get_nvls_available:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Whether NCCL may use NVLink SHARP (NVLS) for this world's collectives:
 * the world has two ranks or more, every local GPU supports switch
 * multicast (`CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED`, an NVSwitch
 * system), and `NCCL_NVLS_ENABLE` is not `0` in the environment.  NCCL
 * still decides per call; %FALSE means it cannot.  Some shared machines
 * require `NCCL_NVLS_ENABLE=0`: this property then reports %FALSE.
 *
 * Returns: %TRUE when NVLS can be used
 *
 * Since: 0.2
 */
gboolean
atomr_collective_world_get_nvls_available (AtomrCollectiveWorld *self)
{
  const gchar *env;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), FALSE);
  if (self->host || self->devices == NULL || self->devices->len == 0 || self->n_ranks < 2)
    return FALSE;
  env = g_getenv ("NCCL_NVLS_ENABLE");
  if (env != NULL && g_ascii_strtoll (env, NULL, 10) == 0 && env[0] != '\0')
    return FALSE;
  for (guint i = 0; i < self->devices->len; i++)
    {
      AtomrDevice *device = g_ptr_array_index (self->devices, i);
      int multicast = 0;

      if (ATOMR_CU == NULL ||
          ATOMR_CU->cuDeviceGetAttribute (&multicast, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED,
                                          atomr_device_get_cu_device (device)) != CUDA_SUCCESS ||
          !multicast)
        return FALSE;
    }
  return TRUE;
}

/**
 * atomr_collective_world_get_fp8_reductions:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Whether fp8 (E4M3 and E5M2) buffers can be reduced: NCCL 2.24 or newer
 * and a compute capability of 9.0 or more on every local GPU.  The same
 * as [method@Atomr.CollectiveWorld.supports_dtype] for
 * %ATOMR_DTYPE_F8_E4M3 with @reduction %TRUE.
 *
 * Returns: %TRUE when fp8 reductions are supported
 *
 * Since: 0.2
 */
gboolean
atomr_collective_world_get_fp8_reductions (AtomrCollectiveWorld *self)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), FALSE);
  return atomr_collective_world_supports_dtype (self, ATOMR_DTYPE_F8_E4M3, TRUE);
}

/**
 * atomr_collective_world_supports_dtype:
 * @self: an [class@Atomr.CollectiveWorld]
 * @dtype: an element type
 * @reduction: whether the elements are combined (all-reduce, reduce,
 *   reduce-scatter) rather than moved
 *
 * Every dtype can be moved (broadcast, gathers, all-to-all, send/receive:
 * they move bytes).  Reductions need a type NCCL adds: f16, bf16, f32,
 * f64 and the integers; complex types reduce with sum and average (as
 * pairs of reals); fp8 reductions need NCCL 2.24 and a Hopper (sm_90) or
 * newer GPU on every local rank.
 *
 * Returns: %TRUE when @dtype can be used that way
 *
 * Since: 0.2
 */
gboolean
atomr_collective_world_supports_dtype (AtomrCollectiveWorld *self,
                                       AtomrDtype            dtype,
                                       gboolean              reduction)
{
  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), FALSE);
  if ((guint) dtype >= ATOMR_DTYPE_LAST)
    return FALSE;
  if (!reduction)
    return TRUE;
  if (dtype == ATOMR_DTYPE_F8_E4M3 || dtype == ATOMR_DTYPE_F8_E5M2)
    {
      if (self->host || self->nccl_version < 22400 || self->devices == NULL)
        return FALSE;
      for (guint i = 0; i < self->devices->len; i++)
        {
          gint major = 0, minor = 0;
          atomr_device_get_compute_capability (g_ptr_array_index (self->devices, i), &major, &minor);
          if (major < 9)
            return FALSE;
        }
      return TRUE;
    }
  if (self->host && (dtype == ATOMR_DTYPE_F16 || dtype == ATOMR_DTYPE_BF16))
    return FALSE;
  return TRUE;
}

/**
 * atomr_collective_world_get_timeout_ms:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Gets the watchdog timeout, see [property@Atomr.CollectiveWorld:timeout-ms].
 *
 * This is the value of the [property@Atomr.CollectiveWorld:timeout-ms] property.
 *
 * Returns: the watchdog timeout, see [property@Atomr.CollectiveWorld:timeout-ms]
 *
 * Since: 0.2
 */
guint
atomr_collective_world_get_timeout_ms (AtomrCollectiveWorld *self)
{
  guint t;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), 0);
  g_mutex_lock (&self->lock);
  t = self->timeout_ms;
  g_mutex_unlock (&self->lock);
  return t;
}

/**
 * atomr_collective_world_set_timeout_ms:
 * @self: an [class@Atomr.CollectiveWorld]
 * @timeout_ms: milliseconds, 0 for none
 *
 * Sets [property@Atomr.CollectiveWorld:timeout-ms] for requests enqueued from now on.
 *
 * Since: 0.2
 */
void
atomr_collective_world_set_timeout_ms (AtomrCollectiveWorld *self,
                                       guint                 timeout_ms)
{
  gboolean changed;

  g_return_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self));
  g_mutex_lock (&self->lock);
  changed = self->timeout_ms != timeout_ms;
  self->timeout_ms = timeout_ms;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT_MS]);
}

/**
 * atomr_collective_world_is_failed:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Tells whether the world failed, until it is rebuilt.
 *
 * Returns: %TRUE once the world failed, until it is rebuilt
 *
 * Since: 0.2
 */
gboolean
atomr_collective_world_is_failed (AtomrCollectiveWorld *self)
{
  gboolean failed;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), FALSE);
  g_mutex_lock (&self->lock);
  failed = self->failure != NULL;
  g_mutex_unlock (&self->lock);
  return failed;
}

/**
 * atomr_collective_world_get_failure:
 * @self: an [class@Atomr.CollectiveWorld]
 *
 * Gets why the world failed, or %NULL.
 *
 * Returns: (transfer full) (nullable): why the world failed, or %NULL
 *
 * Since: 0.2
 */
GError *
atomr_collective_world_get_failure (AtomrCollectiveWorld *self)
{
  GError *copy;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), NULL);
  g_mutex_lock (&self->lock);
  copy = self->failure ? g_error_copy (self->failure) : NULL;
  g_mutex_unlock (&self->lock);
  return copy;
}

/**
 * atomr_collective_world_abort:
 * @self: an [class@Atomr.CollectiveWorld]
 * @reason: (nullable): why, for the error of the requests in flight
 *
 * Aborts the world's communicators (`ncclCommAbort`): requests in flight
 * fail, hung kernels end, [signal@Atomr.CollectiveWorld::world-failed] is emitted.
 * Rebuild it with [method@Atomr.CollectiveWorld.rebuild].
 *
 * Since: 0.2
 */
void
atomr_collective_world_abort (AtomrCollectiveWorld *self,
                              const gchar          *reason)
{
  g_return_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self));
  atomr_collective_world_fail (self, g_error_new (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                  "collective world aborted: %s",
                                                  reason ? reason : "by the application"));
}

/**
 * atomr_collective_world_rebuild:
 * @self: a failed (or aborted) [class@Atomr.CollectiveWorld]
 * @unique_id: (nullable): for a world spread over processes, the new id
 *   every rank rebuilds with (from [func@Atomr.collective_unique_id_new] on
 *   rank 0); %NULL for a local world
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes new communicators for the same ranks and actors after a failure
 * (the seed's "NCCL world rebuild").  A world spread over processes
 * blocks until every rank has rebuilt, like [ctor@Atomr.CollectiveWorld.new_rank].
 *
 * Returns: %TRUE when the world works again
 *
 * Since: 0.2
 */
gboolean
atomr_collective_world_rebuild (AtomrCollectiveWorld  *self,
                                const gchar           *unique_id,
                                GError               **error)
{
  ncclUniqueId id;
  gboolean local;

  g_return_val_if_fail (ATOMR_IS_COLLECTIVE_WORLD (self), FALSE);
  if (!check_world (self, error))
    return FALSE;
  local = self->n_ranks == self->devices->len;
  if (!self->host)
    {
      if (unique_id)
        {
          if (!parse_unique_id (unique_id, &id, error))
            return FALSE;
        }
      else if (!local)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "collective world: rank %u of a world of %u processes needs the new "
                       "unique id of rank 0 to rebuild", self->first_rank, self->n_ranks);
          return FALSE;
        }
      else if (!atomr_nccl_check (ncclGetUniqueId (&id), "ncclGetUniqueId", error))
        return FALSE;
      g_mutex_lock (&self->lock);
      abort_comms_locked (self);
      g_mutex_unlock (&self->lock);
      if (!init_comms (self, &id, error))
        return FALSE;
    }
  g_mutex_lock (&self->lock);
  g_clear_error (&self->failure);
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FAILED]);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* GObject                                                              */

static void
atomr_collective_world_dispose (GObject *object)
{
  AtomrCollectiveWorld *self = ATOMR_COLLECTIVE_WORLD (object);

  if (self->actors)
    {
      for (guint i = 0; i < self->actors->len; i++)
        atomr_collective_actor_detach (g_ptr_array_index (self->actors, i));
      g_clear_pointer (&self->actors, g_ptr_array_unref);
    }
  G_OBJECT_CLASS (atomr_collective_world_parent_class)->dispose (object);
}

static void
atomr_collective_world_finalize (GObject *object)
{
  AtomrCollectiveWorld *self = ATOMR_COLLECTIVE_WORLD (object);

  if (self->devices)
    destroy_comms (self);
  g_free (self->comms);
  g_clear_pointer (&self->devices, g_ptr_array_unref);
  g_clear_error (&self->failure);
  g_main_context_unref (self->context);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (atomr_collective_world_parent_class)->finalize (object);
}

static void
atomr_collective_world_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  AtomrCollectiveWorld *self = ATOMR_COLLECTIVE_WORLD (object);

  switch (prop_id)
    {
    case PROP_N_RANKS:
      g_value_set_uint (value, self->n_ranks);
      break;
    case PROP_N_LOCAL_RANKS:
      g_value_set_uint (value, atomr_collective_world_get_n_local_ranks (self));
      break;
    case PROP_NCCL_VERSION:
      g_value_set_uint (value, (guint) self->nccl_version);
      break;
    case PROP_TIMEOUT_MS:
      g_value_set_uint (value, atomr_collective_world_get_timeout_ms (self));
      break;
    case PROP_FAILED:
      g_value_set_boolean (value, atomr_collective_world_is_failed (self));
      break;
    case PROP_NVLS_AVAILABLE:
      g_value_set_boolean (value, atomr_collective_world_get_nvls_available (self));
      break;
    case PROP_FP8_REDUCTIONS:
      g_value_set_boolean (value, atomr_collective_world_get_fp8_reductions (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_collective_world_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  switch (prop_id)
    {
    case PROP_TIMEOUT_MS:
      atomr_collective_world_set_timeout_ms (ATOMR_COLLECTIVE_WORLD (object), g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_collective_world_class_init (AtomrCollectiveWorldClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = atomr_collective_world_dispose;
  object_class->finalize = atomr_collective_world_finalize;
  object_class->get_property = atomr_collective_world_get_property;
  object_class->set_property = atomr_collective_world_set_property;

  /**
   * AtomrCollectiveWorld:n-ranks:
   *
   * The number of ranks of the whole world.
   *
   * Since: 0.2
   */
  properties[PROP_N_RANKS] =
    g_param_spec_uint ("n-ranks", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCollectiveWorld:n-local-ranks:
   *
   * The number of ranks in this process.
   *
   * Since: 0.2
   */
  properties[PROP_N_LOCAL_RANKS] =
    g_param_spec_uint ("n-local-ranks", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCollectiveWorld:nccl-version:
   *
   * The NCCL version code (22809 for 2.28.9), 0 on the host test device.
   *
   * Since: 0.2
   */
  properties[PROP_NCCL_VERSION] =
    g_param_spec_uint ("nccl-version", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCollectiveWorld:timeout-ms:
   *
   * How long a request may run, and communicator set-up may take, before
   * the world counts it as hung, fails it and aborts (0: wait forever).
   * Default 5 minutes.
   *
   * Since: 0.2
   */
  properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", NULL, NULL, 0, G_MAXUINT, DEFAULT_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCollectiveWorld:failed:
   *
   * Whether the world failed (and was aborted) and awaits a rebuild.
   *
   * Since: 0.2
   */
  properties[PROP_FAILED] =
    g_param_spec_boolean ("failed", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCollectiveWorld:nvls-available:
   *
   * Whether NCCL may use NVLink SHARP; see
   * [method@Atomr.CollectiveWorld.get_nvls_available].
   *
   * Since: 0.2
   */
  properties[PROP_NVLS_AVAILABLE] =
    g_param_spec_boolean ("nvls-available", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCollectiveWorld:fp8-reductions:
   *
   * Whether fp8 buffers can be reduced; see
   * [method@Atomr.CollectiveWorld.get_fp8_reductions].
   *
   * Since: 0.2
   */
  properties[PROP_FP8_REDUCTIONS] =
    g_param_spec_boolean ("fp8-reductions", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * AtomrCollectiveWorld::world-failed:
   * @self: the world
   * @error: why: an asynchronous NCCL error, a request that timed out
   *   (%ATOMR_ERROR_TIMED_OUT) or an abort
   *
   * Emitted on the main context of the thread that built the world once
   * it failed and its communicators were aborted.  Requests in flight
   * fail; rebuild with [method@Atomr.CollectiveWorld.rebuild].
   *
   * Since: 0.2
   */
  signals[SIGNAL_WORLD_FAILED] =
    g_signal_new ("world-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
atomr_collective_world_init (AtomrCollectiveWorld *self)
{
  g_mutex_init (&self->lock);
  self->timeout_ms = DEFAULT_TIMEOUT_MS;
  self->context = g_main_context_ref_thread_default ();
}
