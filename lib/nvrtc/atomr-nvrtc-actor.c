/* atomr-nvrtc-actor.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-error.h"
#include "atomr-kernel-cache-private.h"
#include "atomr-kernel-private.h"
#include "atomr-nvrtc-actor.h"
#include "atomr-nvrtc-private.h"

/**
 * AtomrNvrtcActor:
 *
 * Compiles CUDA C++ with NVRTC and launches the kernels on its stream.
 *
 * Compiles run on GIO's worker pool, never on the actor's context, so the
 * mailbox keeps serving launches and several compiles proceed in parallel.
 * A cache hit that needs no I/O wait (in memory, or an entry this process
 * keyed before that is in the page cache) is loaded on the calling thread
 * instead, saving the two thread hops.
 * Every compile goes through the actor's [class@Atomr.KernelCache] (the default
 * cache unless set otherwise): a hit neither loads nor calls NVRTC.
 *
 * Launches go through the envelope like every other operation: the
 * arguments are checked against the kernel's parameter table before
 * anything is enqueued, buffers are kept alive and ordered against the
 * other streams that use them, and the reply comes once the kernel has
 * run.
 *
 * Since: 0.1
 */
struct _AtomrNvrtcActor
{
  AtomrActor        parent_instance;
  AtomrKernelCache *cache;
};

G_DEFINE_FINAL_TYPE (AtomrNvrtcActor, atomr_nvrtc_actor, ATOMR_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_CACHE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
atomr_nvrtc_actor_dispose (GObject *object)
{
  AtomrNvrtcActor *self = ATOMR_NVRTC_ACTOR (object);

  g_clear_object (&self->cache);
  G_OBJECT_CLASS (atomr_nvrtc_actor_parent_class)->dispose (object);
}

static void
atomr_nvrtc_actor_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  AtomrNvrtcActor *self = ATOMR_NVRTC_ACTOR (object);

  switch (prop_id)
    {
    case PROP_CACHE: g_value_set_object (value, self->cache); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_nvrtc_actor_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  AtomrNvrtcActor *self = ATOMR_NVRTC_ACTOR (object);

  switch (prop_id)
    {
    case PROP_CACHE: atomr_nvrtc_actor_set_cache (self, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_nvrtc_actor_class_init (AtomrNvrtcActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = atomr_nvrtc_actor_dispose;
  object_class->get_property = atomr_nvrtc_actor_get_property;
  object_class->set_property = atomr_nvrtc_actor_set_property;
  ATOMR_ACTOR_CLASS (klass)->library = "nvrtc";

  /**
   * AtomrNvrtcActor:cache:
   *
   * The kernel cache compiles go through; %NULL to always compile.
   *
   * Since: 0.1
   */
  properties[PROP_CACHE] = g_param_spec_object ("cache", NULL, NULL, ATOMR_TYPE_KERNEL_CACHE,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_nvrtc_actor_init (AtomrNvrtcActor *self)
{
  self->cache = g_object_ref (atomr_kernel_cache_get_default ());
}

/**
 * atomr_nvrtc_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates an NVRTC actor with its own stream, bound to the calling
 * thread's thread-default main context, using the default kernel cache.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrNvrtcActor *
atomr_nvrtc_actor_new (AtomrDevice  *device,
                       GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_NVRTC_ACTOR, device, NULL, error);
}

/**
 * atomr_nvrtc_actor_get_cache:
 * @self: an NVRTC actor
 *
 * Gets the kernel cache, %NULL when off.
 *
 * This is the value of the [property@Atomr.NvrtcActor:cache] property.
 *
 * Returns: (transfer none) (nullable): the kernel cache, %NULL when off
 *
 * Since: 0.1
 */
AtomrKernelCache *
atomr_nvrtc_actor_get_cache (AtomrNvrtcActor *self)
{
  g_return_val_if_fail (ATOMR_IS_NVRTC_ACTOR (self), NULL);
  return self->cache;
}

/**
 * atomr_nvrtc_actor_set_cache:
 * @self: an NVRTC actor
 * @cache: (nullable): a kernel cache, %NULL to always compile
 *
 * Sets [property@Atomr.NvrtcActor:cache] for later compiles.
 *
 * Since: 0.1
 */
void
atomr_nvrtc_actor_set_cache (AtomrNvrtcActor  *self,
                             AtomrKernelCache *cache)
{
  g_return_if_fail (ATOMR_IS_NVRTC_ACTOR (self));
  g_return_if_fail (cache == NULL || ATOMR_IS_KERNEL_CACHE (cache));
  if (g_set_object (&self->cache, cache))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CACHE]);
}

/* ------------------------------------------------------------------ */
/* Compiles                                                            */

typedef struct {
  gchar               *source;
  gchar               *kernel_name;    /* NULL: module only */
  AtomrCompileOptions *options;        /* a copy, for "native" only */
  AtomrCompileSnapshot *snapshot;      /* the options at the call */
  AtomrKernelCache    *cache;
  AtomrDevice         *device;
} CompileRequest;

static void
compile_request_free (gpointer data)
{
  CompileRequest *req = data;

  g_free (req->source);
  g_free (req->kernel_name);
  g_clear_object (&req->options);
  g_clear_pointer (&req->snapshot, atomr_compile_snapshot_unref);
  g_clear_object (&req->cache);
  g_clear_object (&req->device);
  g_free (req);
}

/* ------------------------------------------------------------------ */
/* Compile spans for the trace recorder                                */

typedef struct {
  AtomrActor *actor;
  GPtrArray  *spans;   /* AtomrLaunchInfo */
} SpanBatch;

static void
span_batch_free (gpointer data)
{
  SpanBatch *b = data;
  g_object_unref (b->actor);
  g_ptr_array_unref (b->spans);
  g_free (b);
}

static gboolean
emit_spans (gpointer data)
{
  SpanBatch *b = data;

  for (guint i = 0; i < b->spans->len; i++)
    g_signal_emit_by_name (b->actor, "after-complete", g_ptr_array_index (b->spans, i));
  return G_SOURCE_REMOVE;
}

static void
add_span (GPtrArray   *spans,
          AtomrActor  *actor,
          const gchar *operation,
          gint64       start_ns,
          gint64       end_ns,
          const gchar *detail)
{
  AtomrLaunchInfo *info = atomr_launch_info_new (atomr_actor_get_name (actor), "nvrtc", operation);

  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED, start_ns);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_ENQUEUED, start_ns);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, end_ns);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_REPLIED, end_ns);
  if (detail)
    atomr_launch_info_set_detail (info, detail);
  g_ptr_array_add (spans, info);
}

/* Host-side spans of one compile, emitted as #AtomrActor::after-complete
 * on the actor's context (where a trace recorder watching the actor
 * records them): the cache lookup (memory hit, disk read, or the key and
 * misses), the compile (NVRTC and nvJitLink), and the module load. */
static void
record_spans (AtomrActor  *actor,
              AtomrModule *module,
              gint64       t0,
              gint64       t1,
              gint64       t2)
{
  g_autoptr(GPtrArray) spans = NULL;
  const gchar *key;
  SpanBatch *batch;

  if (module == NULL)
    return;
  /* Nobody listens (no trace recorder attached): no batch, and no extra
   * dispatch on the actor's context before the reply. */
  if (ATOMR_ACTOR_GET_CLASS (actor)->after_complete == NULL
      && !g_signal_has_handler_pending (actor, g_signal_lookup ("after-complete", ATOMR_TYPE_ACTOR), 0, FALSE))
    return;
  spans = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  key = atomr_module_get_key (module);
  switch (atomr_module_get_cache_status (module))
    {
    case ATOMR_CACHE_STATUS_MEMORY_HIT:
      add_span (spans, actor, "cache lookup: memory hit", t0, t1, key);
      break;
    case ATOMR_CACHE_STATUS_DISK_HIT:
      add_span (spans, actor, "cache lookup: disk read", t0, t1, key);
      break;
    case ATOMR_CACHE_STATUS_MISS:
    case ATOMR_CACHE_STATUS_NONE:
    default:
      {
        gint64 compile_ns = (gint64) (atomr_module_get_compile_time_ms (module) * 1e6);
        gint64 split = MAX (t0, t1 - compile_ns);
        if (atomr_module_get_cache_status (module) == ATOMR_CACHE_STATUS_MISS)
          add_span (spans, actor, "cache lookup: miss", t0, split, key);
        add_span (spans, actor, atomr_module_get_ltoir (module) ? "compile (NVRTC + nvJitLink)" : "compile (NVRTC)",
                  split, t1, key);
      }
    }
  if (t2 > t1)
    add_span (spans, actor, "module load", t1, t2, key);
  batch = g_new0 (SpanBatch, 1);
  batch->actor = g_object_ref (actor);
  batch->spans = g_steal_pointer (&spans);
  g_main_context_invoke_full (atomr_actor_get_context (actor), G_PRIORITY_DEFAULT, emit_spans, batch,
                              span_batch_free);
}

static void
compile_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  CompileRequest *req = task_data;
  g_autoptr(AtomrModule) module = NULL;
  GError *error = NULL;
  gint64 t0, t1;

  if (g_task_return_error_if_cancelled (task))
    return;
  t0 = atomr_launch_info_now_ns ();
  module = atomr_nvrtc_compile_snapshot (req->source, NULL, req->snapshot, req->options, req->cache,
                                           req->device, &error);
  t1 = atomr_launch_info_now_ns ();
  if (module == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (req->kernel_name == NULL)
    {
      record_spans (ATOMR_ACTOR (source_object), module, t0, t1, t1);
      g_task_return_pointer (task, g_steal_pointer (&module), g_object_unref);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;
  {
    gboolean bad_image = FALSE;
    AtomrKernel *kernel = atomr_kernel_new_loaded_full (req->device, module, req->kernel_name,
                                                        &bad_image, &error);
    AtomrCacheStatus status = atomr_module_get_cache_status (module);

    /* Self-healing: the driver rejected a cached image (built by another
     * driver or toolkit, or damaged before it was checksummed): evict the
     * entry, compile once more, load once more. */
    if (kernel == NULL && bad_image && req->cache
        && (status == ATOMR_CACHE_STATUS_MEMORY_HIT || status == ATOMR_CACHE_STATUS_DISK_HIT))
      {
        g_autoptr(AtomrModule) fresh = NULL;

        atomr_kernel_cache_evict_rejected (req->cache, atomr_module_get_key (module), error->message);
        g_clear_error (&error);
        fresh = atomr_nvrtc_compile_snapshot (req->source, NULL, req->snapshot, req->options, req->cache,
                                                req->device, &error);
        if (fresh)
          kernel = atomr_kernel_new_loaded (req->device, fresh, req->kernel_name, &error);
      }
    record_spans (ATOMR_ACTOR (source_object), module, t0, t1, atomr_launch_info_now_ns ());
    if (kernel == NULL)
      g_task_return_error (task, error);
    else
      g_task_return_pointer (task, kernel, g_object_unref);
  }
}

static void
start_compile (AtomrNvrtcActor     *self,
               const gchar         *source,
               const gchar         *kernel_name,
               AtomrCompileOptions *options,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data,
               gpointer             source_tag)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  CompileRequest *req;

  g_task_set_source_tag (task, source_tag);
  g_task_set_name (task, kernel_name ? "atomr nvrtc compile" : "atomr nvrtc compile module");
  if (source == NULL)
    {
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "source: NULL");
      return;
    }
  if (options != NULL && !ATOMR_IS_COMPILE_OPTIONS (options))
    {
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                               "options: not an AtomrCompileOptions");
      return;
    }
  req = g_new0 (CompileRequest, 1);
  req->source = g_strdup (source);
  req->kernel_name = g_strdup (kernel_name);
  /* The options as they are now: their snapshot (kept on the caller's
   * options object, so repeated requests with unchanged options share
   * one) stands for a copy.  A copy is made only to add the kernel's name
   * or to resolve "native" later. */
  req->snapshot = atomr_nvrtc_snapshot_options (options);
  if (req->snapshot->native
      || (kernel_name && !g_strv_contains ((const gchar * const *) req->snapshot->name_expressions, kernel_name)))
    {
      req->options = options ? atomr_compile_options_copy (options) : atomr_compile_options_new ();
      if (kernel_name && !g_strv_contains ((const gchar * const *) req->snapshot->name_expressions, kernel_name))
        atomr_compile_options_add_name_expression (req->options, kernel_name);
      atomr_compile_snapshot_unref (req->snapshot);
      req->snapshot = atomr_compile_options_get_snapshot (req->options);
    }
  req->cache = self->cache ? g_object_ref (self->cache) : NULL;
  /* NULL for an actor built bare: a module still compiles, loading a
   * kernel then fails with an error. */
  req->device = atomr_actor_get_device (ATOMR_ACTOR (self))
                ? g_object_ref (atomr_actor_get_device (ATOMR_ACTOR (self))) : NULL;
  g_task_set_task_data (task, req, compile_request_free);
  /* A request the cache answers without waiting on I/O (the memory
   * level without a stat(), or a disk entry whose key this process
   * computed before, read only if it is all in the page cache: see
   * atomr_kernel_cache_lookup_nonblocking()) is answered here, kernel
   * load included (cuModuleLoadData, about as long as the two thread
   * wake-ups it saves): the reply comes in the next iteration of the
   * caller's context (GTask defers it), without a worker thread.
   * Everything else (key computation, a stat(), a read that would block,
   * a compile, healing a rejected image) runs on a worker. */
  if (req->cache && req->snapshot->key_part
      && (kernel_name == NULL || req->device != NULL)
      && !atomr_kernel_cache_disabled_by_env (req->cache)
      && (cancellable == NULL || !g_cancellable_is_cancelled (cancellable)))
    {
      AtomrCacheKeyInput input = {
        .source = req->source,
        .kernel_names = (const gchar * const *) req->snapshot->name_expressions,
        .flags = (const gchar * const *) req->snapshot->flags,
        .arch = req->snapshot->arch,
        .link_objects = req->snapshot->link_objects,
        .key_part = req->snapshot->key_part,
        .key_part_hash = req->snapshot->key_part_hash,
      };
      gint64 t0 = atomr_launch_info_now_ns ();
      g_autoptr(AtomrModule) module = atomr_kernel_cache_lookup_nonblocking (req->cache, &input);
      gint64 t1 = atomr_launch_info_now_ns ();

      if (module && kernel_name == NULL)
        {
          record_spans (ATOMR_ACTOR (self), module, t0, t1, t1);
          g_task_return_pointer (task, g_steal_pointer (&module), g_object_unref);
          return;
        }
      if (module)
        {
          GError *error = NULL;
          gboolean bad_image = FALSE;
          AtomrKernel *kernel = atomr_kernel_new_loaded_full (req->device, module, kernel_name,
                                                              &bad_image, &error);

          /* A rejected image is healed on the worker (evict, compile,
           * load), as compile_thread() does. */
          if (kernel || !bad_image)
            {
              record_spans (ATOMR_ACTOR (self), module, t0, t1, atomr_launch_info_now_ns ());
              if (kernel)
                g_task_return_pointer (task, kernel, g_object_unref);
              else
                g_task_return_error (task, error);
              return;
            }
          g_clear_error (&error);
        }
    }
  g_task_run_in_thread (task, compile_thread);
}

/**
 * atomr_nvrtc_actor_compile_async:
 * @self: an NVRTC actor
 * @source: CUDA C++ source
 * @kernel_name: the kernel: a plain name or a name expression such as
 *   "scale<float, 256>" (added to the options' name expressions)
 * @options: (nullable): compile options
 * @cancellable: (nullable): a [class@Gio.Cancellable], checked before the compile
 *   and before loading
 * @callback: (scope async): called with the kernel
 * @user_data: data for @callback
 *
 * Compiles @source (through the cache) on a worker thread and loads
 * @kernel_name on the actor's device.  A cache hit that needs no I/O wait
 * is loaded on the calling thread (as long as cuModuleLoadData() takes)
 * and replied to in the next iteration of the caller's main context.  A compile error is
 * %ATOMR_ERROR_COMPILE with NVRTC's log.
 *
 * Since: 0.1
 */
void
atomr_nvrtc_actor_compile_async (AtomrNvrtcActor     *self,
                                 const gchar         *source,
                                 const gchar         *kernel_name,
                                 AtomrCompileOptions *options,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_NVRTC_ACTOR (self));
  g_return_if_fail (kernel_name != NULL);
  start_compile (self, source, kernel_name, options, cancellable, callback, user_data,
                 atomr_nvrtc_actor_compile_async);
}

/**
 * atomr_nvrtc_actor_compile_finish:
 * @self: an NVRTC actor
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.NvrtcActor.compile_async].
 *
 * Returns: (transfer full): the loaded kernel, or %NULL on error
 *
 * Since: 0.1
 */
AtomrKernel *
atomr_nvrtc_actor_compile_finish (AtomrNvrtcActor  *self,
                                  GAsyncResult     *result,
                                  GError          **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == atomr_nvrtc_actor_compile_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * atomr_nvrtc_actor_compile_module_async:
 * @self: an NVRTC actor
 * @source: CUDA C++ source
 * @options: (nullable): compile options naming every kernel wanted with
 *   [method@Atomr.CompileOptions.add_name_expression]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the module
 * @user_data: data for @callback
 *
 * Compiles @source (through the cache) on a worker thread without loading
 * it; get kernels with [method@Atomr.NvrtcActor.get_kernel].  Works on the host
 * test device too.
 *
 * Since: 0.1
 */
void
atomr_nvrtc_actor_compile_module_async (AtomrNvrtcActor     *self,
                                        const gchar         *source,
                                        AtomrCompileOptions *options,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_NVRTC_ACTOR (self));
  start_compile (self, source, NULL, options, cancellable, callback, user_data,
                 atomr_nvrtc_actor_compile_module_async);
}

/**
 * atomr_nvrtc_actor_compile_module_finish:
 * @self: an NVRTC actor
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.NvrtcActor.compile_module_async].
 *
 * Returns: (transfer full): the module, or %NULL on error
 *
 * Since: 0.1
 */
AtomrModule *
atomr_nvrtc_actor_compile_module_finish (AtomrNvrtcActor  *self,
                                         GAsyncResult     *result,
                                         GError          **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == atomr_nvrtc_actor_compile_module_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * atomr_nvrtc_actor_get_kernel:
 * @self: an NVRTC actor
 * @module: a compiled module
 * @kernel_name: one of its kernel names or name expressions (or an
 *   `extern "C"` symbol)
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads one kernel of @module on the actor's device (blocking, about as
 * long as cuModuleLoadData()).
 *
 * Returns: (transfer full): the kernel, or %NULL on error
 *
 * Since: 0.1
 */
AtomrKernel *
atomr_nvrtc_actor_get_kernel (AtomrNvrtcActor  *self,
                              AtomrModule      *module,
                              const gchar      *kernel_name,
                              GError          **error)
{
  g_return_val_if_fail (ATOMR_IS_NVRTC_ACTOR (self), NULL);
  g_return_val_if_fail (ATOMR_IS_MODULE (module), NULL);
  g_return_val_if_fail (kernel_name != NULL, NULL);
  return atomr_kernel_new_loaded (atomr_actor_get_device (ATOMR_ACTOR (self)), module,
                                  kernel_name, error);
}

/* ------------------------------------------------------------------ */
/* Launches                                                            */

typedef struct {
  AtomrKernel       *kernel;
  AtomrKernelArgs   *args;
  AtomrLaunchConfig  config;
  void             **params;    /* into the same allocation */
  CUdeviceptr       *ptrs;
} LaunchRequest;

/* For a request in the operation's inline storage (atomr_op_alloc_data). */
static void
launch_request_clear (gpointer data)
{
  LaunchRequest *req = data;

  g_object_unref (req->kernel);
  atomr_kernel_args_unref (req->args);
}

static void
launch_request_free (gpointer data)
{
  launch_request_clear (data);
  g_free (data);
}

static gboolean
launch_enqueue (AtomrOp  *op,
                GError  **error)
{
  LaunchRequest *req = atomr_op_get_data (op);
  const AtomrLaunchConfig *c = &req->config;
  AtomrKernelArgs *args = req->args;
  CUfunction function;
  CUresult res;

  for (guint i = 0; i < args->args->len; i++)
    {
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;

      /* A conditional node's handle exists only in a graph: the launch
       * must be captured (into a graph that becomes such a node's body). */
      if (!g_array_index (args->args, AtomrKernelArg, i).condition)
        continue;
      if (!atomr_op_is_host (op) &&
          ATOMR_CU->cuStreamGetCaptureInfo (atomr_op_get_cu_stream (op), &status, NULL, NULL, NULL,
                                            NULL, NULL) == CUDA_SUCCESS &&
          status == CU_STREAM_CAPTURE_STATUS_ACTIVE)
        break;
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "launch: argument %u of kernel %s is a graph condition handle, which exists only "
                   "in the body of a conditional graph node; record the launch into a graph and "
                   "replay that with atomr_graph_replay_while/if/switch_async", i,
                   atomr_kernel_get_name (req->kernel));
      return FALSE;
    }
  if (atomr_op_is_host (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "launch: kernel %s cannot run on the host test device",
                   atomr_kernel_get_name (req->kernel));
      return FALSE;
    }
  if (atomr_kernel_get_generation (req->kernel) != atomr_op_get_generation (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE,
                   "kernel: %s was loaded in generation %u; the context is at %u",
                   atomr_kernel_get_name (req->kernel), atomr_kernel_get_generation (req->kernel),
                   atomr_op_get_generation (op));
      return FALSE;
    }
  for (guint i = 0; i < args->args->len; i++)
    {
      AtomrKernelArg *a = &g_array_index (args->args, AtomrKernelArg, i);
      if (a->buffer)
        req->ptrs[i] = atomr_buffer_get_ptr (a->buffer);
    }
  function = atomr_kernel_get_function (req->kernel);
  if (c->cluster[0])
    {
      CUlaunchAttribute attr = { 0 };
      CUlaunchConfig lc = { 0 };

      attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr.value.clusterDim.x = c->cluster[0];
      attr.value.clusterDim.y = MAX (c->cluster[1], 1);
      attr.value.clusterDim.z = MAX (c->cluster[2], 1);
      lc.gridDimX = c->grid[0];
      lc.gridDimY = c->grid[1];
      lc.gridDimZ = c->grid[2];
      lc.blockDimX = c->block[0];
      lc.blockDimY = c->block[1];
      lc.blockDimZ = c->block[2];
      lc.sharedMemBytes = c->shared_mem;
      lc.hStream = atomr_op_get_cu_stream (op);
      lc.attrs = &attr;
      lc.numAttrs = 1;
      res = ATOMR_CU->cuLaunchKernelEx (&lc, function, req->params, NULL);
      return atomr_cuda_check (res, "cuLaunchKernelEx", error);
    }
  res = ATOMR_CU->cuLaunchKernel (function, c->grid[0], c->grid[1], c->grid[2],
                                  c->block[0], c->block[1], c->block[2], c->shared_mem,
                                  atomr_op_get_cu_stream (op), req->params, NULL);
  return atomr_cuda_check (res, "cuLaunchKernel", error);
}

/* One block: the request, the parameter pointers, the buffer addresses
 * and a private copy of the scalar values (so @args may be changed or
 * reused at once).  Adds the buffers to @op's hazards.  With @in_op the
 * block is @op's data, in the operation itself when it fits (no
 * allocation for a launch of a few arguments: the host cost of a
 * pipelined launch); else a new allocation the caller hands to
 * atomr_op_replace_data() with launch_request_free(). */
static LaunchRequest *
launch_request_new (AtomrOp                 *op,
                    AtomrKernel             *kernel,
                    const AtomrLaunchConfig *config,
                    AtomrKernelArgs         *args,
                    gboolean                 in_op)
{
  guint n = args->args->len;
  gsize size = sizeof (LaunchRequest) + n * sizeof (void *) + n * sizeof (CUdeviceptr) +
               args->values->len + 16;
  LaunchRequest *req = in_op ? atomr_op_alloc_data (op, size, launch_request_clear) : g_malloc0 (size);
  guint8 *values;

  req->params = (void **) (req + 1);
  req->ptrs = (CUdeviceptr *) (req->params + n);
  values = (guint8 *) (req->ptrs + n);
  values = (guint8 *) (((guintptr) values + 15) & ~(guintptr) 15);
  memcpy (values, args->values->data, args->values->len);
  for (guint i = 0; i < n; i++)
    {
      AtomrKernelArg *a = &g_array_index (args->args, AtomrKernelArg, i);
      if (a->buffer)
        {
          req->params[i] = &req->ptrs[i];
          if (a->write)
            atomr_op_write (op, a->buffer);
          else
            atomr_op_read (op, a->buffer);
        }
      else
        req->params[i] = values + a->offset;
    }
  req->kernel = g_object_ref (kernel);
  req->args = atomr_kernel_args_ref (args);
  req->config = *config;
  return req;
}

gboolean
atomr_nvrtc_op_is_launch (AtomrOp *op)
{
  return atomr_op_get_enqueue (op) == launch_enqueue;
}

gboolean
atomr_kernel_args_have_condition (AtomrKernelArgs *args)
{
  for (guint i = 0; i < args->args->len; i++)
    if (g_array_index (args->args, AtomrKernelArg, i).condition)
      return TRUE;
  return FALSE;
}

gboolean
atomr_nvrtc_launch_takes_condition (AtomrOp *op)
{
  return atomr_nvrtc_op_is_launch (op) &&
         atomr_kernel_args_have_condition (((LaunchRequest *) atomr_op_get_data (op))->args);
}

gboolean
atomr_nvrtc_launch_check_args (AtomrOp          *op,
                               AtomrKernelArgs  *args,
                               GError          **error)
{
  LaunchRequest *req = atomr_op_get_data (op);
  AtomrDevice *device = atomr_kernel_get_device (req->kernel);

  if (!atomr_kernel_check_args (req->kernel, args, error))
    return FALSE;
  for (guint i = 0; i < args->args->len; i++)
    {
      AtomrKernelArg *a = &g_array_index (args->args, AtomrKernelArg, i);
      if (a->buffer == NULL)
        continue;
      if (!atomr_buffer_check (a->buffer, error))
        {
          g_prefix_error (error, "argument %u: ", i);
          return FALSE;
        }
      if (atomr_buffer_get_device (a->buffer) != device)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "argument %u: the buffer lives on device %d, kernel %s on device %d", i,
                       atomr_device_get_ordinal (atomr_buffer_get_device (a->buffer)),
                       atomr_kernel_get_name (req->kernel), atomr_device_get_ordinal (device));
          return FALSE;
        }
    }
  return TRUE;
}

void
atomr_nvrtc_launch_set_args (AtomrOp         *op,
                             AtomrKernelArgs *args)
{
  LaunchRequest *old = atomr_op_get_data (op);
  LaunchRequest *req;

  atomr_op_clear_buffers (op);
  /* A new block: the old one (perhaps in the operation) is read here. */
  req = launch_request_new (op, old->kernel, &old->config, args, FALSE);
  atomr_op_replace_data (op, req, launch_request_free);
}

void **
atomr_nvrtc_launch_get_params (AtomrOp *op)
{
  LaunchRequest *req = atomr_op_get_data (op);

  /* The buffer addresses as of now (a rebuilt context moves nothing:
   * buffers are stale then). */
  for (guint i = 0; i < req->args->args->len; i++)
    {
      AtomrKernelArg *a = &g_array_index (req->args->args, AtomrKernelArg, i);
      if (a->buffer)
        req->ptrs[i] = atomr_buffer_get_ptr (a->buffer);
    }
  return req->params;
}

static gboolean
check_config (AtomrKernel              *kernel,
              const AtomrLaunchConfig  *c,
              GError                  **error)
{
  guint64 threads = (guint64) c->block[0] * c->block[1] * c->block[2];
  gint max_threads = atomr_kernel_get_max_threads_per_block (kernel);
  gint max_dynamic = atomr_kernel_get_max_dynamic_shared_memory (kernel);

  for (guint i = 0; i < 3; i++)
    if (c->grid[i] == 0 || c->block[i] == 0)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "config: grid %u×%u×%u, block %u×%u×%u: every dimension must be at least 1",
                     c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2]);
        return FALSE;
      }
  if (max_threads > 0 && threads > (guint64) max_threads)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "config: a block of %" G_GUINT64_FORMAT " threads; kernel %s allows %d",
                   threads, atomr_kernel_get_name (kernel), max_threads);
      return FALSE;
    }
  if (atomr_kernel_get_function (kernel) != NULL && c->shared_mem > (guint) MAX (max_dynamic, 0))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "config: %u bytes of dynamic shared memory; kernel %s allows %d "
                   "(raise it with atomr_kernel_set_max_dynamic_shared_memory())",
                   c->shared_mem, atomr_kernel_get_name (kernel), max_dynamic);
      return FALSE;
    }
  for (guint i = 0; c->cluster[0] && i < 3; i++)
    {
      guint cl = MAX (c->cluster[i], 1);
      if (c->grid[i] % cl != 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "config: grid dimension %u (%u) is not a multiple of the cluster (%u)",
                       i, c->grid[i], cl);
          return FALSE;
        }
    }
  return TRUE;
}

/**
 * atomr_nvrtc_actor_launch_async:
 * @self: an NVRTC actor
 * @kernel: a kernel loaded on the actor's device
 * @config: grid, block, dynamic shared memory, clusters
 * @args: the arguments, checked against the kernel's parameter table
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called once the kernel has run
 * @user_data: data for @callback
 *
 * Launches @kernel on the actor's stream.  Wrong argument counts or sizes,
 * an impossible configuration and stale kernels are answered with an
 * error without enqueuing anything.
 *
 * Since: 0.1
 */
void
atomr_nvrtc_actor_launch_async (AtomrNvrtcActor         *self,
                                AtomrKernel             *kernel,
                                const AtomrLaunchConfig *config,
                                AtomrKernelArgs         *args,
                                GCancellable            *cancellable,
                                GAsyncReadyCallback      callback,
                                gpointer                 user_data)
{
  AtomrOp *op;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_NVRTC_ACTOR (self));

  op = atomr_op_new (self, "launch", atomr_nvrtc_actor_launch_async, cancellable, callback, user_data);
  if (!ATOMR_IS_KERNEL (kernel) || config == NULL || args == NULL)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "launch: %s is missing",
                                      !ATOMR_IS_KERNEL (kernel) ? "kernel" : config == NULL ? "config" : "args"));
      return;
    }
  if (atomr_kernel_get_device (kernel) == NULL || atomr_actor_get_device (ATOMR_ACTOR (self)) == NULL)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "launch: the %s was constructed directly (a binding's constructor) "
                                      "and has no device; use %s",
                                      atomr_kernel_get_device (kernel) == NULL ? "kernel" : "actor",
                                      atomr_kernel_get_device (kernel) == NULL
                                      ? "atomr_nvrtc_actor_compile_async()" : "atomr_nvrtc_actor_new()"));
      return;
    }
  if (atomr_kernel_get_device (kernel) != atomr_actor_get_device (ATOMR_ACTOR (self)))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "kernel: %s is loaded on device %d, the actor runs on device %d",
                                      atomr_kernel_get_name (kernel),
                                      atomr_device_get_ordinal (atomr_kernel_get_device (kernel)),
                                      atomr_device_get_ordinal (atomr_actor_get_device (ATOMR_ACTOR (self)))));
      return;
    }
  if (atomr_kernel_is_stale (kernel))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_STALE,
                                      "kernel: %s was loaded in generation %u; the device is at %u",
                                      atomr_kernel_get_name (kernel), atomr_kernel_get_generation (kernel),
                                      atomr_device_get_generation (atomr_kernel_get_device (kernel))));
      return;
    }
  if (!atomr_kernel_check_args (kernel, args, &error) || !check_config (kernel, config, &error))
    {
      atomr_op_fail (op, error);
      return;
    }

  launch_request_new (op, kernel, config, args, TRUE);
  atomr_op_set_geometry (op, config->grid, config->block, config->shared_mem);
  /* The request holds the kernel, whose name lives as long. */
  atomr_op_set_detail_static (op, atomr_kernel_get_name (kernel));
  atomr_op_set_enqueue (op, launch_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_nvrtc_actor_launch_finish:
 * @self: an NVRTC actor
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.NvrtcActor.launch_async].
 *
 * Returns: %TRUE once the kernel has run
 *
 * Since: 0.1
 */
gboolean
atomr_nvrtc_actor_launch_finish (AtomrNvrtcActor  *self,
                                 GAsyncResult     *result,
                                 GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_nvrtc_actor_launch_async, error);
}
