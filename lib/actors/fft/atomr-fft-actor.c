/* atomr-fft-actor.c — cuFFT on an actor, with an LRU plan cache
 *
 * cuFFT plan creation is CPU work measured in tens to hundreds of
 * microseconds; execution of a small transform is a few.  So plans are
 * made once per distinct transform and kept, bound to the actor's stream,
 * in a least-recently-used cache.  The cache lives and dies with the
 * context generation: teardown drops it and the first call after a rebuild
 * fills it again.
 *
 * Plans are made on a worker thread (atomr_op_run_on_worker), not on the
 * actor's context: the request's prepare function (on the context) looks
 * in the cache; on a miss the worker makes the plan with the device
 * entered, and the enqueue (on the context again) files it in the cache,
 * binds it to the stream and runs it.  A plan made for an older context
 * generation (a rebuild happened in between) is forgotten and made again
 * inline; so is one for a request replayed from a graph.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "atomr-cufft-table-private.h"

#include "actors/atomr-library-private.h"
#include "atomr-fft-actor.h"
#include "atomr-fft-plan-private.h"
#include "atomr-fft-kernels-ptx.h"
#include "core/atomr-tensor-private.h"

#define DEFAULT_CAPACITY 32

typedef struct {
  AtomrFftPlan *plan;   /* the key, owned */
  cufftHandle   handle;
  gsize         work_size;   /* bytes of the shared work area it needs */
  CUdeviceptr   work_area;   /* the area last given to the handle */
  GList         link;   /* in lru, data = the entry */
} PlanEntry;

struct _AtomrFftActor
{
  AtomrActor  parent_instance;

  /* Touched only on the actor's context (enqueue, setup, teardown). */
  GHashTable *cache;    /* AtomrFftPlan* -> PlanEntry* */
  GQueue      lru;      /* most recent first */
  CUdeviceptr work_area;        /* one for every plan of the actor */
  gsize       work_area_size;   /* also read (atomically) from any thread */
  CUmodule    module;           /* the normalisation kernel, on first use */
  CUfunction  scale;

  /* Read from any thread. */
  guint       capacity; /* atomic */
  GMutex      stats_lock;
  guint64     hits;
  guint64     misses;
  guint       size;
};

/**
 * AtomrFftActor:
 *
 * An actor that runs cuFFT transforms on its stream.
 *
 * A transform is described by an [struct@Atomr.FftPlan] and run with
 * [method@Atomr.FftActor.execute_async] (or
 * [method@Atomr.FftActor.execute_normalized_async], which also scales the
 * result by 1/n).  cuFFT plans are costly to make, so the actor keeps one
 * per distinct plan in a least-recently-used cache whose size is the
 * [property@Atomr.FftActor:plan-cache-capacity] property; all cached plans
 * share one work area.  libcufft is loaded when the first transform needs
 * it.
 *
 * Like every [class@Atomr.Actor], the actor orders its operations against
 * the hazards of the buffers they touch and completes them on the thread
 * of its [struct@GLib.MainContext].
 *
 * Since: 0.1
 */
G_DEFINE_FINAL_TYPE (AtomrFftActor, atomr_fft_actor, ATOMR_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_PLAN_CACHE_CAPACITY,
  PROP_PLAN_CACHE_HITS,
  PROP_PLAN_CACHE_MISSES,
  PROP_PLAN_CACHE_SIZE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const gchar *
cufft_status_name (cufftResult r)
{
  switch (r)
    {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    case CUFFT_MISSING_DEPENDENCY: return "CUFFT_MISSING_DEPENDENCY";
    case CUFFT_NVRTC_FAILURE: return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE: return "CUFFT_NVJITLINK_FAILURE";
    case CUFFT_NVSHMEM_FAILURE: return "CUFFT_NVSHMEM_FAILURE";
    default: return NULL;
    }
}

static gboolean
cufft_check (cufftResult   r,
             const gchar  *call,
             GError      **error)
{
  return atomr_library_check (r == CUFFT_SUCCESS, "cufft", call, cufft_status_name (r), r,
                              r == CUFFT_ALLOC_FAILED, r == CUFFT_NOT_SUPPORTED, error);
}

static void
plan_entry_free (gpointer data)
{
  PlanEntry *entry = data;
  atomr_fft_plan_unref (entry->plan);
  g_free (entry);
}

static void
update_size (AtomrFftActor *self)
{
  g_mutex_lock (&self->stats_lock);
  self->size = g_hash_table_size (self->cache);
  g_mutex_unlock (&self->stats_lock);
}

/* Forgets every plan; destroys them only when their context still lives. */
static void
drop_cache (AtomrFftActor *self,
            gboolean       context_alive)
{
  GList *link;

  while ((link = g_queue_pop_head_link (&self->lru)))
    {
      PlanEntry *entry = link->data;

      if (context_alive)
        cufftDestroy (entry->handle);
      g_hash_table_remove (self->cache, entry->plan);
    }
  update_size (self);
}

static void
evict_to (AtomrFftActor *self,
          guint          capacity)
{
  while (self->lru.length > capacity)
    {
      PlanEntry *entry = g_queue_pop_tail_link (&self->lru)->data;
      /* cufftDestroy frees the plan's work area, which waits for work
       * still using it: evicting a plan in flight is safe. */
      cufftDestroy (entry->handle);
      g_hash_table_remove (self->cache, entry->plan);
    }
}

static gboolean
fft_setup (AtomrActor  *actor,
           GError     **error)
{
  /* Plans are made on demand in the enqueue function; the library is
   * loaded here so that a missing cuFFT fails the actor's construction. */
  if (atomr_device_is_host (atomr_actor_get_device (actor)))
    return TRUE;
  return atomr_cufft_load (error);
}

static void
fft_teardown (AtomrActor *actor,
              gboolean    context_alive)
{
  AtomrFftActor *self = ATOMR_FFT_ACTOR (actor);

  drop_cache (self, context_alive);
  if (context_alive && self->work_area)
    ATOMR_CU->cuMemFreeAsync (self->work_area, atomr_actor_get_cu_stream (actor));
  if (context_alive && self->module)
    ATOMR_CU->cuModuleUnload (self->module);
  self->work_area = 0;
  __atomic_store_n (&self->work_area_size, 0, __ATOMIC_RELAXED);
  self->module = NULL;
  self->scale = NULL;
}

static cufftType
cufft_type (AtomrFftPlan *plan)
{
  gboolean dbl = plan->key.precision == ATOMR_DTYPE_F64;

  switch (plan->key.kind)
    {
    case ATOMR_FFT_R2C: return dbl ? CUFFT_D2Z : CUFFT_R2C;
    case ATOMR_FFT_C2R: return dbl ? CUFFT_Z2D : CUFFT_C2R;
    case ATOMR_FFT_C2C:
    default: return dbl ? CUFFT_Z2Z : CUFFT_C2C;
    }
}

typedef struct {
  AtomrFftPlan     *plan;
  AtomrFftDirection direction;
  gdouble           scale;      /* applied to the output afterwards; 1: none */
  AtomrBuffer      *input;     /* kept by the op */
  AtomrBuffer      *output;
  guint64           in_offset;  /* bytes (views) */
  guint64           out_offset;
  AtomrDevice      *device;     /* the actor's, alive as long as the op */
  /* Made by the worker (exec_make_plan), taken by the enqueue. */
  gboolean          made;
  cufftHandle       made_handle;
  gsize             made_work;
  guint             made_generation;
} ExecRequest;

static void
exec_request_clear (gpointer data)
{
  ExecRequest *req = data;

  /* A plan the worker made for a request that never ran (cancelled,
   * failed): destroy it while its context lives. */
  if (req->made && atomr_device_enter (req->device, NULL))
    {
      if (atomr_device_get_generation (req->device) == req->made_generation)
        cufftDestroy (req->made_handle);
      atomr_device_leave (req->device);
    }
  atomr_fft_plan_unref (req->plan);
}

static cudaDataType
half_type (AtomrDtype precision,
           gboolean   complex_side)
{
  if (precision == ATOMR_DTYPE_BF16)
    return complex_side ? CUDA_C_16BF : CUDA_R_16BF;
  return complex_side ? CUDA_C_16F : CUDA_R_16F;
}

/* cufftCreate + cufftMakePlanMany64 (cufftXtMakePlanMany for halves),
 * without a work area of its own.  The calling thread has the device's
 * context current. */
static gboolean
create_cufft_plan (AtomrFftPlan  *plan,
                   cufftHandle   *handle,
                   gsize         *work,
                   GError       **error)
{
  long long n[3], inembed[3], onembed[3];
  size_t work_size = 0;
  cufftHandle h;
  gboolean ok;

  for (gint d = 0; d < plan->key.rank; d++)
    {
      n[d] = plan->key.n[d];
      inembed[d] = plan->key.inembed[d];
      onembed[d] = plan->key.onembed[d];
    }
  if (!cufft_check (cufftCreate (&h), "cufftCreate", error))
    return FALSE;
  /* No work area per plan: the actor's one, set before each execution. */
  ok = cufft_check (cufftSetAutoAllocation (h, 0), "cufftSetAutoAllocation", error);
  if (ok && atomr_fft_plan_is_half (plan))
    {
      gboolean in_c = plan->key.kind != ATOMR_FFT_R2C, out_c = plan->key.kind != ATOMR_FFT_C2R;
      ok = cufft_check (cufftXtMakePlanMany (h, plan->key.rank, n,
                                             inembed, plan->key.istride, plan->key.idist,
                                             half_type (plan->key.precision, in_c),
                                             onembed, plan->key.ostride, plan->key.odist,
                                             half_type (plan->key.precision, out_c),
                                             plan->key.batch, &work_size,
                                             half_type (plan->key.precision, TRUE)),
                        "cufftXtMakePlanMany", error);
    }
  else if (ok)
    ok = cufft_check (cufftMakePlanMany64 (h, plan->key.rank, n,
                                           inembed, plan->key.istride, plan->key.idist,
                                           onembed, plan->key.ostride, plan->key.odist,
                                           cufft_type (plan), plan->key.batch, &work_size),
                      "cufftMakePlanMany64", error);
  if (!ok)
    {
      cufftDestroy (h);
      return FALSE;
    }
  *handle = h;
  *work = work_size;
  return TRUE;
}

/* The cuFFT plan for @plan on this actor's stream: from the cache, made
 * by the worker for this request, or made now.  With a capacity of 0 the plan is made for this call only and
 * *transient is set. */
static gboolean
lookup_plan (AtomrFftActor *self,
             AtomrOp       *op,
             ExecRequest   *req,
             cufftHandle   *handle,
             gsize         *work,
             gboolean      *transient,
             PlanEntry    **cached,
             GError       **error)
{
  AtomrFftPlan *plan = req->plan;
  PlanEntry *entry = g_hash_table_lookup (self->cache, plan);
  guint capacity = g_atomic_int_get (&self->capacity);
  gsize work_size = 0;
  cufftHandle h;

  *transient = FALSE;
  *cached = NULL;
  if (entry)
    {
      g_queue_unlink (&self->lru, &entry->link);
      g_queue_push_head_link (&self->lru, &entry->link);
      g_mutex_lock (&self->stats_lock);
      self->hits++;
      g_mutex_unlock (&self->stats_lock);
      *handle = entry->handle;
      *work = entry->work_size;
      *cached = entry;
      return TRUE;
    }

  if (req->made && req->made_generation == atomr_device_get_generation (req->device))
    {
      h = req->made_handle;
      work_size = req->made_work;
    }
  else if (!create_cufft_plan (plan, &h, &work_size, error))
    return FALSE;
  /* From here on the handle is ours (a stale one died with its context). */
  req->made = FALSE;
  if (!cufft_check (cufftSetStream (h, (cudaStream_t) atomr_op_get_cu_stream (op)),
                    "cufftSetStream", error))
    {
      cufftDestroy (h);
      return FALSE;
    }

  g_mutex_lock (&self->stats_lock);
  self->misses++;
  g_mutex_unlock (&self->stats_lock);
  *handle = h;
  *work = work_size;

  if (capacity == 0)
    {
      *transient = TRUE;
      evict_to (self, 0);
      update_size (self);
      return TRUE;
    }
  evict_to (self, capacity - 1);
  entry = g_new0 (PlanEntry, 1);
  entry->plan = atomr_fft_plan_ref (plan);
  entry->handle = h;
  entry->work_size = work_size;
  entry->link.data = entry;
  g_hash_table_insert (self->cache, entry->plan, entry);
  g_queue_push_head_link (&self->lru, &entry->link);
  update_size (self);
  *cached = entry;
  return TRUE;
}

/* Grows the shared work area to @work bytes if needed and hands it to @h.
 * Executions are ordered on the actor's stream, so one area serves every
 * plan; the old area is freed in stream order after the work using it. */
static gboolean
attach_work_area (AtomrFftActor  *self,
                  CUstream        stream,
                  cufftHandle     h,
                  gsize           work,
                  PlanEntry      *entry,
                  GError        **error)
{
  if (work > self->work_area_size)
    {
      CUdeviceptr area = 0;

      if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&area, work, stream),
                             "cuMemAllocAsync (cuFFT work area)", error))
        return FALSE;
      if (self->work_area)
        ATOMR_CU->cuMemFreeAsync (self->work_area, stream);
      self->work_area = area;
      __atomic_store_n (&self->work_area_size, work, __ATOMIC_RELAXED);
    }
  /* A cached plan keeps the area it was given until the area moves. */
  if (entry && entry->work_area == self->work_area)
    return TRUE;
  if (!cufft_check (cufftSetWorkArea (h, (void *) (guintptr) self->work_area), "cufftSetWorkArea", error))
    return FALSE;
  if (entry)
    entry->work_area = self->work_area;
  return TRUE;
}

/* Multiplies exactly the output elements (not the gaps of an advanced
 * layout) by req->scale. */
static gboolean
normalize (AtomrFftActor  *self,
           CUstream        stream,
           ExecRequest    *req,
           GError        **error)
{
  AtomrFftPlan *plan = req->plan;
  gint64 dims[3];
  long long d[3] = { 1, 1, 1 }, e1 = 1, e2 = 1, stride = plan->key.ostride, dist = plan->key.odist;
  AtomrDtype dtype = atomr_fft_plan_get_output_dtype (plan);
  int kind = dtype == ATOMR_DTYPE_F32 ? 0 : dtype == ATOMR_DTYPE_F64 ? 1 : dtype == ATOMR_DTYPE_C64 ? 2 : 3;
  CUdeviceptr data = atomr_buffer_get_ptr (req->output) + req->out_offset;
  double scale = req->scale;
  unsigned long long total = 1;
  guint blocks;

  /* Halves (the complex side as pairs of the half dtype), scaled in f32. */
  if (dtype == ATOMR_DTYPE_F16 || dtype == ATOMR_DTYPE_BF16)
    kind = (dtype == ATOMR_DTYPE_F16 ? 4 : 5) + (plan->key.kind != ATOMR_FFT_C2R ? 2 : 0);
  atomr_fft_plan_get_output_dims (plan, dims);
  for (gint i = 0; i < plan->key.rank; i++)
    {
      d[i] = dims[i];
      total *= (unsigned long long) dims[i];
    }
  if (plan->key.rank >= 2)
    e1 = plan->key.onembed[1];
  if (plan->key.rank >= 3)
    e2 = plan->key.onembed[2];
  total *= (unsigned long long) plan->key.batch;   /* ≤ the checked output extent */
  blocks = (guint) MIN ((total + 255) / 256, 8192);

  if (self->scale == NULL)
    {
      if (!atomr_cuda_check (ATOMR_CU->cuModuleLoadData (&self->module, atomr_fft_kernels_ptx),
                             "cuModuleLoadData (FFT normalisation kernel)", error))
        {
          self->module = NULL;
          return FALSE;
        }
      if (!atomr_cuda_check (ATOMR_CU->cuModuleGetFunction (&self->scale, self->module, "atomr_fft_scale"),
                             "cuModuleGetFunction (atomr_fft_scale)", error))
        {
          ATOMR_CU->cuModuleUnload (self->module);
          self->module = NULL;
          self->scale = NULL;
          return FALSE;
        }
    }
  {
    void *params[] = { &data, &kind, &scale, &total, &d[0], &d[1], &d[2], &e1, &e2, &stride, &dist };
    return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (self->scale, MAX (blocks, 1), 1, 1, 256, 1, 1, 0,
                                                       stream, params, NULL),
                             "cuLaunchKernel (atomr_fft_scale)", error);
  }
}

/* On a worker: makes the plan the prepare function did not find in the
 * cache.  Touches only the request, never the actor's cache. */
static gboolean
exec_make_plan (AtomrOp  *op,
                GError  **error)
{
  ExecRequest *req = atomr_op_get_data (op);
  gboolean ok;

  if (!atomr_device_enter (req->device, error))
    return FALSE;
  req->made_generation = atomr_device_get_generation (req->device);
  ok = create_cufft_plan (req->plan, &req->made_handle, &req->made_work, error);
  req->made = ok;
  atomr_device_leave (req->device);
  return ok;
}

/* On the actor's context, before the device is held: a plan not in the
 * cache is made on a worker. */
static gboolean
exec_prepare (AtomrOp  *op,
              GError  **error)
{
  AtomrFftActor *self = ATOMR_FFT_ACTOR (atomr_op_get_actor (op));
  ExecRequest *req = atomr_op_get_data (op);

  if (!atomr_device_is_host (req->device) && !g_hash_table_contains (self->cache, req->plan))
    atomr_op_run_on_worker (op, exec_make_plan);
  return TRUE;
}

static gboolean
exec_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrFftActor *self = ATOMR_FFT_ACTOR (atomr_op_get_actor (op));
  ExecRequest *req = atomr_op_get_data (op);
  gpointer in, out;
  cufftHandle h;
  gsize work = 0;
  gboolean transient, ok;
  PlanEntry *entry;
  int sign = req->direction == ATOMR_FFT_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE;
  cufftResult r;

  if (atomr_op_is_host (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "fft execute: cuFFT needs a CUDA device; %s is the host test device",
                   atomr_device_get_name (atomr_actor_get_device (ATOMR_ACTOR (self))));
      return FALSE;
    }
  if (!lookup_plan (self, op, req, &h, &work, &transient, &entry, error))
    return FALSE;
  if (work > 0 && !attach_work_area (self, atomr_op_get_cu_stream (op), h, work, entry, error))
    {
      if (transient)
        cufftDestroy (h);
      return FALSE;
    }

  in = (gpointer) (guintptr) (atomr_buffer_get_ptr (req->input) + req->in_offset);
  out = (gpointer) (guintptr) (atomr_buffer_get_ptr (req->output) + req->out_offset);
  if (atomr_fft_plan_is_half (req->plan))
    r = cufftXtExec (h, in, out, sign);
  else switch (cufft_type (req->plan))
    {
    case CUFFT_C2C: r = cufftExecC2C (h, in, out, sign); break;
    case CUFFT_Z2Z: r = cufftExecZ2Z (h, in, out, sign); break;
    case CUFFT_R2C: r = cufftExecR2C (h, in, out); break;
    case CUFFT_D2Z: r = cufftExecD2Z (h, in, out); break;
    case CUFFT_C2R: r = cufftExecC2R (h, in, out); break;
    case CUFFT_Z2D: r = cufftExecZ2D (h, in, out); break;
    default: r = CUFFT_INVALID_TYPE; break;
    }
  ok = cufft_check (r, "cufftExec", error);
  if (transient)
    cufftDestroy (h);
  if (ok && req->scale != 1.0)
    ok = normalize (self, atomr_op_get_cu_stream (op), req, error);
  return ok;
}

static AtomrFftPlan *
infer_plan (AtomrBuffer  *input,
            AtomrBuffer  *output,
            GError      **error)
{
  AtomrDtype in = atomr_buffer_get_dtype (input), out = atomr_buffer_get_dtype (output);
  gboolean in_c = atomr_dtype_is_complex (in), out_c = atomr_dtype_is_complex (out);
  AtomrFftKind kind;
  AtomrBuffer *real_side;
  AtomrDtype precision;
  const gint64 *shape;
  guint n_dims = 0;
  gint64 flat[1];

  if (in_c && out_c)
    kind = ATOMR_FFT_C2C, real_side = input;
  else if (!in_c && out_c)
    kind = ATOMR_FFT_R2C, real_side = input;
  else if (in_c && !out_c)
    kind = ATOMR_FFT_C2R, real_side = output;
  else if (in == ATOMR_DTYPE_F16 || in == ATOMR_DTYPE_BF16)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "fft execute: input and output are %s; a half-precision transform cannot be "
                   "told from the dtypes (the complex side holds (re, im) pairs): pass an "
                   "AtomrFftPlan", atomr_dtype_get_name (in));
      return NULL;
    }
  else
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "fft execute: input (%s) and output (%s) are both real; one side of an FFT "
                   "must be complex", atomr_dtype_get_name (in), atomr_dtype_get_name (out));
      return NULL;
    }
  precision = (in == ATOMR_DTYPE_F64 || in == ATOMR_DTYPE_C128) ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
  shape = atomr_buffer_get_shape (real_side, &n_dims);
  if (n_dims == 0)
    {
      /* A buffer without a shape is one signal. */
      flat[0] = (gint64) atomr_buffer_get_n_elements (real_side);
      shape = flat;
      n_dims = 1;
    }
  if (n_dims > 3)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "fft execute: without a plan the %s buffer's shape gives the transform, but it "
                   "has %u dimensions; pass an AtomrFftPlan for batched or higher-rank transforms",
                   real_side == input ? "input" : "output", n_dims);
      return NULL;
    }
  return atomr_fft_plan_new_many (kind, precision, shape, n_dims, NULL, 0, 1, 1, NULL, 0, 1, 1, 1, error);
}

/**
 * atomr_fft_actor_execute_async:
 * @self: an [class@Atomr.FftActor]
 * @plan: (nullable): the transform, or %NULL to take it from the buffers:
 *   one unbatched transform whose kind and precision follow the dtypes and
 *   whose dimensions are the shape of the real side (the input for C2C),
 *   or its element count for a buffer without a shape
 * @direction: %ATOMR_FFT_FORWARD or %ATOMR_FFT_INVERSE (R2C is forward
 *   only, C2R inverse only)
 * @input: the input, of the plan's input dtype; a C2R transform may
 *   overwrite it
 * @output: the output, of the plan's output dtype; may be @input for C2C
 *   transforms with the same layout on both sides
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the transform has run
 * @user_data: data for @callback
 *
 * Runs an FFT on the actor's stream.  The cuFFT plan comes from the
 * actor's plan cache (see [property@Atomr.FftActor:plan-cache-capacity]) or is made
 * on first use.  Transforms are unnormalised.
 *
 * Since: 0.1
 */
static void execute_submit (AtomrFftActor *self, gpointer source_tag, AtomrFftPlan *plan,
                            AtomrFftDirection direction, AtomrFftNormalization normalization,
                            AtomrBuffer *input, AtomrBuffer *output, GCancellable *cancellable,
                            GAsyncReadyCallback callback, gpointer user_data);

void
atomr_fft_actor_execute_async (AtomrFftActor       *self,
                               AtomrFftPlan        *plan,
                               AtomrFftDirection    direction,
                               AtomrBuffer         *input,
                               AtomrBuffer         *output,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_FFT_ACTOR (self));
  execute_submit (self, atomr_fft_actor_execute_async, plan, direction, ATOMR_FFT_NORM_NONE, input,
                  output, cancellable, callback, user_data);
}

/**
 * atomr_fft_actor_execute_normalized_async:
 * @self: an [class@Atomr.FftActor]
 * @plan: (nullable): the transform (as for [method@Atomr.FftActor.execute_async])
 * @direction: %ATOMR_FFT_FORWARD or %ATOMR_FFT_INVERSE
 * @normalization: how to scale the result
 * @input: the input, of the plan's input dtype
 * @output: the output, of the plan's output dtype
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the scaled transform is in @output
 * @user_data: data for @callback
 *
 * Like [method@Atomr.FftActor.execute_async], then scales the output as
 * @normalization says for @direction (1/N, 1/√N or 1, N the product of
 * the transform sizes).  Only the output elements are scaled, never the
 * gaps of an advanced layout.  The scaling is one extra pass over the
 * output on the actor's stream.
 *
 * Since: 0.2
 */
void
atomr_fft_actor_execute_normalized_async (AtomrFftActor         *self,
                                          AtomrFftPlan          *plan,
                                          AtomrFftDirection      direction,
                                          AtomrFftNormalization  normalization,
                                          AtomrBuffer           *input,
                                          AtomrBuffer           *output,
                                          GCancellable          *cancellable,
                                          GAsyncReadyCallback    callback,
                                          gpointer               user_data)
{
  g_return_if_fail (ATOMR_IS_FFT_ACTOR (self));
  execute_submit (self, atomr_fft_actor_execute_normalized_async, plan, direction, normalization,
                  input, output, cancellable, callback, user_data);
}

/**
 * atomr_fft_actor_execute_normalized_finish:
 * @self: an [class@Atomr.FftActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.FftActor.execute_normalized_async].
 *
 * Returns: %TRUE when the scaled transform is in the output
 *
 * Since: 0.2
 */
gboolean
atomr_fft_actor_execute_normalized_finish (AtomrFftActor  *self,
                                           GAsyncResult   *result,
                                           GError        **error)
{
  return atomr_op_finish_boolean (self, result, atomr_fft_actor_execute_normalized_async, error);
}

/**
 * atomr_fft_actor_get_work_area_size:
 * @self: an [class@Atomr.FftActor]
 *
 * All the actor's cuFFT plans share one work area, as large as the
 * largest plan executed so far needs (plans are made with
 * cufftSetAutoAllocation (0)).  May be called from any thread.
 *
 * Returns: the size of that work area in bytes (0 before the first
 *   transform that needs one)
 *
 * Since: 0.2
 */
guint64
atomr_fft_actor_get_work_area_size (AtomrFftActor *self)
{
  g_return_val_if_fail (ATOMR_IS_FFT_ACTOR (self), 0);
  return __atomic_load_n (&self->work_area_size, __ATOMIC_RELAXED);
}

/* Everything after the operands were found: the plan against them (at
 * byte offsets @in_offset / @out_offset of their buffers), then submit. */
static void
execute_submit_plan (AtomrOp               *op,
                     AtomrFftActor         *self,
                     AtomrFftPlan          *plan,
                     AtomrFftDirection      direction,
                     AtomrFftNormalization  normalization,
                     AtomrBuffer           *input,
                     guint64                in_offset,
                     AtomrBuffer           *output,
                     guint64                out_offset)
{
  ExecRequest *req;
  GError *error = NULL;
  gdouble n_total = 1;

  if (plan->key.kind == ATOMR_FFT_R2C && direction != ATOMR_FFT_FORWARD)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "fft execute: direction is inverse but R2C transforms "
                                           "are forward only; use a C2R plan"));
  if (plan->key.kind == ATOMR_FFT_C2R && direction != ATOMR_FFT_INVERSE)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "fft execute: direction is forward but C2R transforms "
                                           "are inverse only; use an R2C plan"));
  if (!atomr_check_dtype ("fft execute", "input", input, atomr_fft_plan_get_input_dtype (plan), &error) ||
      !atomr_check_dtype ("fft execute", "output", output, atomr_fft_plan_get_output_dtype (plan), &error))
    return atomr_op_fail (op, error);
  if (in_offset == 0 && out_offset == 0 &&
      (!atomr_check_min_elements ("fft execute", "input", input,
                                  atomr_fft_plan_get_input_elements (plan), &error) ||
       !atomr_check_min_elements ("fft execute", "output", output,
                                  atomr_fft_plan_get_output_elements (plan), &error)))
    return atomr_op_fail (op, error);
  if (input == output && in_offset == out_offset &&
      (plan->key.kind != ATOMR_FFT_C2C ||
       plan->key.istride != plan->key.ostride || plan->key.idist != plan->key.odist ||
       memcmp (plan->key.inembed, plan->key.onembed, sizeof plan->key.inembed) != 0))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "fft execute: input and output are the same buffer; "
                                           "in place is supported for C2C with equal input and "
                                           "output layouts only"));

  /* In the operation's own storage, cleared (not freed) with it. */
  req = atomr_op_alloc_data (op, sizeof *req, exec_request_clear);
  req->plan = atomr_fft_plan_ref (plan);
  req->direction = direction;
  for (gint d = 0; d < plan->key.rank; d++)
    n_total *= (gdouble) plan->key.n[d];
  switch (normalization)
    {
    case ATOMR_FFT_NORM_BACKWARD: req->scale = direction == ATOMR_FFT_INVERSE ? 1.0 / n_total : 1.0; break;
    case ATOMR_FFT_NORM_FORWARD: req->scale = direction == ATOMR_FFT_FORWARD ? 1.0 / n_total : 1.0; break;
    case ATOMR_FFT_NORM_ORTHO: req->scale = 1.0 / sqrt (n_total); break;
    case ATOMR_FFT_NORM_NONE:
    default: req->scale = 1.0; break;
    }
  req->input = input;
  req->output = output;
  req->in_offset = in_offset;
  req->out_offset = out_offset;
  req->device = atomr_actor_get_device (ATOMR_ACTOR (self));
  /* The plan's own text, alive as long as the request holds the plan. */
  atomr_op_set_detail_static (op, atomr_fft_plan_get_description (plan));
  if (input == output || plan->key.kind == ATOMR_FFT_C2R)
    atomr_op_write (op, input);
  else
    atomr_op_read (op, input);
  if (input != output)
    atomr_op_write (op, output);
  atomr_op_set_prepare (op, exec_prepare);
  atomr_op_set_enqueue (op, exec_enqueue);
  atomr_op_submit (op);
}

static gboolean
check_direction_and_normalization (AtomrFftDirection      direction,
                                   AtomrFftNormalization  normalization,
                                   GError               **error)
{
  if ((guint) direction > ATOMR_FFT_INVERSE)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "fft execute: direction %d is not an AtomrFftDirection", (gint) direction);
      return FALSE;
    }
  if ((guint) normalization > ATOMR_FFT_NORM_ORTHO)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "fft execute: normalization %d is not an AtomrFftNormalization", (gint) normalization);
      return FALSE;
    }
  return TRUE;
}

static void
execute_submit (AtomrFftActor         *self,
                gpointer               source_tag,
                AtomrFftPlan          *plan,
                AtomrFftDirection      direction,
                AtomrFftNormalization  normalization,
                AtomrBuffer           *input,
                AtomrBuffer           *output,
                GCancellable          *cancellable,
                GAsyncReadyCallback    callback,
                gpointer               user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  g_autoptr(AtomrFftPlan) owned = NULL;

  op = atomr_op_new (self, "fft", source_tag, cancellable, callback, user_data);
  if (!atomr_check_buffer ("fft execute", "input", input, &error) ||
      !atomr_check_buffer ("fft execute", "output", output, &error) ||
      !check_direction_and_normalization (direction, normalization, &error))
    return atomr_op_fail (op, error);
  if (plan == NULL && (owned = infer_plan (input, output, &error)) == NULL)
    return atomr_op_fail (op, error);
  execute_submit_plan (op, self, plan ? plan : owned, direction, normalization, input, 0, output, 0);
}

/* ------------------------------------------------------------------ */
/* Views: the plan from shapes and strides                              */

/* The cuFFT advanced layout of the last @rank dimensions of @t, and one
 * batch dimension for all the leading ones.  Element (i0, i1, i2) of
 * batch b is at b·dist + ((i0·embed[1] + i1)·embed[2] + i2)·stride: the
 * strides of the transform dimensions must nest (each a multiple of the
 * next one's, by at least that dimension's extent), and the leading
 * dimensions must collapse into one.  Dimensions of extent 1 take any
 * stride. */
static gboolean
view_layout (AtomrTensor  *t,
             const gchar  *what,
             guint         rank,
             gint64        embed[3],
             gint64       *stride,
             gint64       *dist,
             gint64       *batch,
             GError      **error)
{
  guint n_dims = atomr_tensor_get_n_dims (t), lead = n_dims - rank;
  gint64 inner;

  for (guint d = 0; d < n_dims; d++)
    if (atomr_tensor_get_dim (t, d) > 1 && atomr_tensor_get_stride (t, d) < 1)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "fft execute: %s has stride %" G_GINT64_FORMAT " in dimension %u; cuFFT "
                     "layouts need positive strides (copy the view to a new tensor first)",
                     what, atomr_tensor_get_stride (t, d), d);
        return FALSE;
      }

  /* The transform dimensions, innermost first. */
  *stride = atomr_tensor_get_dim (t, n_dims - 1) > 1 ? atomr_tensor_get_stride (t, n_dims - 1) : 1;
  inner = *stride;
  embed[rank - 1] = atomr_tensor_get_dim (t, n_dims - 1);
  for (guint k = rank - 1; k >= 1; k--)
    {
      gint64 dim = atomr_tensor_get_dim (t, lead + k), outer_dim = atomr_tensor_get_dim (t, lead + k - 1);
      gint64 outer = atomr_tensor_get_stride (t, lead + k - 1);

      if (outer_dim <= 1)
        embed[k] = dim;
      else if (outer % inner != 0 || outer / inner < dim)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "fft execute: %s has strides that cuFFT's layout cannot express: "
                       "dimension %u has stride %" G_GINT64_FORMAT ", which is not a multiple "
                       "of %" G_GINT64_FORMAT " at least %" G_GINT64_FORMAT " times (the "
                       "transform dimensions must nest as in row-major order; copy the view "
                       "to a new tensor first)", what, lead + k - 1, outer, inner, dim);
          return FALSE;
        }
      else
        embed[k] = outer / inner;
      if (__builtin_mul_overflow (inner, embed[k], &inner))
        inner = G_MAXINT64;
    }
  embed[0] = MAX (atomr_tensor_get_dim (t, lead), 1);

  /* The leading dimensions: one batch of a single distance. */
  *batch = 1;
  *dist = 0;
  for (gint d = (gint) lead - 1; d >= 0; d--)
    {
      gint64 dim = atomr_tensor_get_dim (t, d), st = atomr_tensor_get_stride (t, d);

      if (dim == 1)
        continue;
      if (*dist == 0)
        *dist = st;
      else if (st != *dist * *batch)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "fft execute: the batch dimensions of %s (all but the last %u) do not "
                       "collapse into one: dimension %d has stride %" G_GINT64_FORMAT ", not %"
                       G_GINT64_FORMAT " (copy the view to a new tensor first)",
                       what, rank, d, st, *dist * *batch);
          return FALSE;
        }
      if (__builtin_mul_overflow (*batch, dim, batch))
        *batch = G_MAXINT64;    /* refused by the plan */
    }
  if (*dist == 0)
    *dist = MAX (inner * embed[0], 1);   /* one transform: any distance */
  return TRUE;
}

/**
 * atomr_fft_actor_execute_tensor_async:
 * @self: an [class@Atomr.FftActor]
 * @rank: how many trailing dimensions to transform: 1, 2 or 3; the
 *   dimensions before them are a batch
 * @direction: %ATOMR_FFT_FORWARD or %ATOMR_FFT_INVERSE (R2C is forward
 *   only, C2R inverse only)
 * @normalization: how to scale the result
 * @input: the input view (f32, f64, c64 or c128)
 * @output: the output view, of the matching dtype
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the transform is in @output
 * @user_data: data for @callback
 *
 * Runs an FFT over the last @rank dimensions of two views, as
 * `numpy.fft.fftn (x, axes=range (-rank, 0))` does (or `rfftn`/`irfftn`):
 * the kind follows the dtypes (complex → complex: C2C, real → complex:
 * R2C, complex → real: C2R) and the transform sizes are the real side's
 * shape; the complex side of R2C and C2R has n/2 + 1 in its last
 * dimension, and every other dimension of the two views must be equal.
 *
 * The cuFFT advanced layout (strides, embeddings, batch distance) is taken
 * from the views' strides, so sub-views and interleaved views need no
 * copy.  Layouts cuFFT cannot express fail with
 * %ATOMR_ERROR_INVALID_ARGUMENT naming the view and the dimension:
 * negative or zero strides, transform dimensions that do not nest as in
 * row-major order (a transposed view), or batch dimensions that do not
 * collapse into one.  In place (@output the same view as @input) works
 * for C2C; otherwise overlapping views are refused.  Half precision needs
 * an [struct@Atomr.FftPlan] (there is no complex-half dtype).
 *
 * Since: 0.2
 */
void
atomr_fft_actor_execute_tensor_async (AtomrFftActor         *self,
                                      guint                  rank,
                                      AtomrFftDirection      direction,
                                      AtomrFftNormalization  normalization,
                                      AtomrTensor           *input,
                                      AtomrTensor           *output,
                                      GCancellable          *cancellable,
                                      GAsyncReadyCallback    callback,
                                      gpointer               user_data)
{
  AtomrDevice *device;
  AtomrOp *op;
  GError *error = NULL;
  AtomrDtype in_dtype, out_dtype, precision;
  gboolean in_c, out_c, same_view;
  AtomrFftKind kind;
  AtomrTensor *real_side;
  gint64 n[3], inembed[3], onembed[3], istride, ostride, idist, odist, ibatch, obatch;
  guint n_dims;
  g_autoptr(AtomrFftPlan) plan = NULL;

  g_return_if_fail (ATOMR_IS_FFT_ACTOR (self));
  device = atomr_actor_get_device (ATOMR_ACTOR (self));
  op = atomr_op_new (self, "fft", atomr_fft_actor_execute_tensor_async, cancellable, callback, user_data);
  if (!atomr_tensor_check (input, device, "fft execute: input", &error) ||
      !atomr_tensor_check (output, device, "fft execute: output", &error) ||
      !check_direction_and_normalization (direction, normalization, &error))
    return atomr_op_fail (op, error);

  in_dtype = atomr_tensor_get_dtype (input);
  out_dtype = atomr_tensor_get_dtype (output);
  in_c = atomr_dtype_is_complex (in_dtype);
  out_c = atomr_dtype_is_complex (out_dtype);
  if (in_dtype == ATOMR_DTYPE_F16 || in_dtype == ATOMR_DTYPE_BF16 ||
      out_dtype == ATOMR_DTYPE_F16 || out_dtype == ATOMR_DTYPE_BF16)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                                           "fft execute: %s views have no complex counterpart; "
                                           "half-precision transforms take an AtomrFftPlan and "
                                           "buffers of (re, im) pairs",
                                           atomr_dtype_get_name (in_c ? out_dtype : in_dtype)));
  if (!in_c && !out_c)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "fft execute: input (%s) and output (%s) are both real; "
                                           "one side of an FFT must be complex",
                                           atomr_dtype_get_name (in_dtype), atomr_dtype_get_name (out_dtype)));
  kind = in_c && out_c ? ATOMR_FFT_C2C : out_c ? ATOMR_FFT_R2C : ATOMR_FFT_C2R;
  real_side = kind == ATOMR_FFT_C2R ? output : input;
  precision = (in_dtype == ATOMR_DTYPE_F64 || in_dtype == ATOMR_DTYPE_C128) ? ATOMR_DTYPE_F64
                                                                           : ATOMR_DTYPE_F32;

  n_dims = atomr_tensor_get_n_dims (real_side);
  if (rank < 1 || rank > 3)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "fft execute: rank is %u; it must be 1, 2 or 3", rank));
  if (n_dims < rank || atomr_tensor_get_n_dims (input) != atomr_tensor_get_n_dims (output))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "fft execute: input has %u dimensions and output %u; both "
                                           "need the same number, at least the rank %u",
                                           atomr_tensor_get_n_dims (input),
                                           atomr_tensor_get_n_dims (output), rank));
  for (guint d = 0; d < n_dims; d++)
    {
      gint64 real_dim = atomr_tensor_get_dim (real_side, d);
      gint64 want = real_dim, got;
      AtomrTensor *other = real_side == input ? output : input;

      if (kind != ATOMR_FFT_C2C && d == n_dims - 1)
        want = real_dim / 2 + 1;
      got = atomr_tensor_get_dim (other, d);
      if (got != want)
        return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                               "fft execute: dimension %u of the %s is %" G_GINT64_FORMAT
                                               " but the %s needs %" G_GINT64_FORMAT "%s", d,
                                               other == input ? "input" : "output", got,
                                               kind == ATOMR_FFT_C2C ? "transform" : "real side's shape",
                                               want,
                                               kind != ATOMR_FFT_C2C && d == n_dims - 1
                                                 ? " (n/2 + 1 on the complex side)" : ""));
    }
  for (guint k = 0; k < rank; k++)
    n[k] = atomr_tensor_get_dim (real_side, n_dims - rank + k);

  same_view = atomr_tensor_get_buffer (input) == atomr_tensor_get_buffer (output) &&
              atomr_tensor_get_byte_offset (input) == atomr_tensor_get_byte_offset (output) &&
              memcmp (atomr_tensor_get_strides (input, NULL), atomr_tensor_get_strides (output, NULL),
                      n_dims * sizeof (gint64)) == 0 &&
              kind == ATOMR_FFT_C2C;
  if (!same_view && atomr_tensor_overlaps (input, output))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "fft execute: output overlaps input in memory; in place "
                                           "takes the same C2C view for both"));

  if (!view_layout (input, "input", rank, inembed, &istride, &idist, &ibatch, &error) ||
      !view_layout (output, "output", rank, onembed, &ostride, &odist, &obatch, &error))
    return atomr_op_fail (op, error);
  if (ibatch != obatch)    /* equal shapes: only extents of 1 could differ */
    ibatch = MAX (ibatch, obatch);
  plan = atomr_fft_plan_new_many (kind, precision, n, rank, inembed, rank, istride, idist,
                                  onembed, rank, ostride, odist, ibatch, &error);
  if (plan == NULL)
    return atomr_op_fail (op, error);
  execute_submit_plan (op, self, plan, direction, normalization,
                       atomr_tensor_get_buffer (input), atomr_tensor_get_byte_offset (input),
                       atomr_tensor_get_buffer (output), atomr_tensor_get_byte_offset (output));
}

/**
 * atomr_fft_actor_execute_tensor_finish:
 * @self: an [class@Atomr.FftActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.FftActor.execute_tensor_async].
 *
 * Returns: %TRUE when the transform is in the output view
 *
 * Since: 0.2
 */
gboolean
atomr_fft_actor_execute_tensor_finish (AtomrFftActor  *self,
                                       GAsyncResult   *result,
                                       GError        **error)
{
  return atomr_op_finish_boolean (self, result, atomr_fft_actor_execute_tensor_async, error);
}

/**
 * atomr_fft_actor_execute_finish:
 * @self: an [class@Atomr.FftActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.FftActor.execute_async].
 *
 * Returns: %TRUE when the transform ran
 *
 * Since: 0.1
 */
gboolean
atomr_fft_actor_execute_finish (AtomrFftActor  *self,
                                GAsyncResult   *result,
                                GError        **error)
{
  return atomr_op_finish_boolean (self, result, atomr_fft_actor_execute_async, error);
}

/**
 * atomr_fft_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates an FFT actor with its own stream, bound to the calling thread's
 * thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrFftActor *
atomr_fft_actor_new (AtomrDevice  *device,
                     GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_FFT_ACTOR, device, NULL, error);
}

/**
 * atomr_fft_actor_get_plan_cache_capacity:
 * @self: an [class@Atomr.FftActor]
 *
 * Gets how many cuFFT plans the actor keeps.
 *
 * This is the value of the [property@Atomr.FftActor:plan-cache-capacity] property.
 *
 * Returns: how many cuFFT plans the actor keeps
 *
 * Since: 0.1
 */
guint
atomr_fft_actor_get_plan_cache_capacity (AtomrFftActor *self)
{
  g_return_val_if_fail (ATOMR_IS_FFT_ACTOR (self), 0);
  return g_atomic_int_get (&self->capacity);
}

/**
 * atomr_fft_actor_set_plan_cache_capacity:
 * @self: an [class@Atomr.FftActor]
 * @capacity: how many plans to keep; 0 makes and destroys a plan per call
 *
 * Sets [property@Atomr.FftActor:plan-cache-capacity].  A smaller capacity takes
 * effect at the next plan the actor makes.
 *
 * Since: 0.1
 */
void
atomr_fft_actor_set_plan_cache_capacity (AtomrFftActor *self,
                                         guint          capacity)
{
  g_return_if_fail (ATOMR_IS_FFT_ACTOR (self));
  if ((guint) g_atomic_int_exchange (&self->capacity, capacity) != capacity)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PLAN_CACHE_CAPACITY]);
}

/**
 * atomr_fft_actor_get_plan_cache_hits:
 * @self: an [class@Atomr.FftActor]
 *
 * Gets how many transforms found their plan in the cache.
 *
 * This is the value of the [property@Atomr.FftActor:plan-cache-hits] property.
 *
 * Returns: how many transforms found their plan in the cache
 *
 * Since: 0.1
 */
guint64
atomr_fft_actor_get_plan_cache_hits (AtomrFftActor *self)
{
  guint64 v;

  g_return_val_if_fail (ATOMR_IS_FFT_ACTOR (self), 0);
  g_mutex_lock (&self->stats_lock);
  v = self->hits;
  g_mutex_unlock (&self->stats_lock);
  return v;
}

/**
 * atomr_fft_actor_get_plan_cache_misses:
 * @self: an [class@Atomr.FftActor]
 *
 * Gets how many transforms had to make a cuFFT plan.
 *
 * This is the value of the [property@Atomr.FftActor:plan-cache-misses] property.
 *
 * Returns: how many transforms had to make a cuFFT plan
 *
 * Since: 0.1
 */
guint64
atomr_fft_actor_get_plan_cache_misses (AtomrFftActor *self)
{
  guint64 v;

  g_return_val_if_fail (ATOMR_IS_FFT_ACTOR (self), 0);
  g_mutex_lock (&self->stats_lock);
  v = self->misses;
  g_mutex_unlock (&self->stats_lock);
  return v;
}

/**
 * atomr_fft_actor_get_plan_cache_size:
 * @self: an [class@Atomr.FftActor]
 *
 * Gets how many plans the cache holds now.
 *
 * This is the value of the [property@Atomr.FftActor:plan-cache-size] property.
 *
 * Returns: how many plans the cache holds now
 *
 * Since: 0.1
 */
guint
atomr_fft_actor_get_plan_cache_size (AtomrFftActor *self)
{
  guint v;

  g_return_val_if_fail (ATOMR_IS_FFT_ACTOR (self), 0);
  g_mutex_lock (&self->stats_lock);
  v = self->size;
  g_mutex_unlock (&self->stats_lock);
  return v;
}

static void
atomr_fft_actor_finalize (GObject *object)
{
  AtomrFftActor *self = ATOMR_FFT_ACTOR (object);

  /* The parent's finalize runs teardown, which empties the cache. */
  G_OBJECT_CLASS (atomr_fft_actor_parent_class)->finalize (object);
  g_hash_table_unref (self->cache);
  g_mutex_clear (&self->stats_lock);
}

static void
atomr_fft_actor_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  AtomrFftActor *self = ATOMR_FFT_ACTOR (object);

  switch (prop_id)
    {
    case PROP_PLAN_CACHE_CAPACITY:
      g_value_set_uint (value, atomr_fft_actor_get_plan_cache_capacity (self));
      break;
    case PROP_PLAN_CACHE_HITS:
      g_value_set_uint64 (value, atomr_fft_actor_get_plan_cache_hits (self));
      break;
    case PROP_PLAN_CACHE_MISSES:
      g_value_set_uint64 (value, atomr_fft_actor_get_plan_cache_misses (self));
      break;
    case PROP_PLAN_CACHE_SIZE:
      g_value_set_uint (value, atomr_fft_actor_get_plan_cache_size (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_fft_actor_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  AtomrFftActor *self = ATOMR_FFT_ACTOR (object);

  switch (prop_id)
    {
    case PROP_PLAN_CACHE_CAPACITY:
      atomr_fft_actor_set_plan_cache_capacity (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_fft_actor_class_init (AtomrFftActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->finalize = atomr_fft_actor_finalize;
  object_class->get_property = atomr_fft_actor_get_property;
  object_class->set_property = atomr_fft_actor_set_property;
  actor_class->library = "cufft";
  actor_class->setup = fft_setup;
  actor_class->teardown = fft_teardown;

  /**
   * AtomrFftActor:plan-cache-capacity:
   *
   * How many cuFFT plans the actor keeps, least recently used evicted
   * first.  0 makes a plan for each call and destroys it after.
   *
   * Since: 0.1
   */
  properties[PROP_PLAN_CACHE_CAPACITY] =
    g_param_spec_uint ("plan-cache-capacity", NULL, NULL, 0, G_MAXUINT, DEFAULT_CAPACITY,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrFftActor:plan-cache-hits:
   *
   * Transforms that found their plan in the cache (not notified: read it
   * when needed).
   *
   * Since: 0.1
   */
  properties[PROP_PLAN_CACHE_HITS] =
    g_param_spec_uint64 ("plan-cache-hits", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrFftActor:plan-cache-misses:
   *
   * Transforms that made a cuFFT plan (not notified).
   *
   * Since: 0.1
   */
  properties[PROP_PLAN_CACHE_MISSES] =
    g_param_spec_uint64 ("plan-cache-misses", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrFftActor:plan-cache-size:
   *
   * Plans the cache holds now (not notified).
   *
   * Since: 0.1
   */
  properties[PROP_PLAN_CACHE_SIZE] =
    g_param_spec_uint ("plan-cache-size", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_fft_actor_init (AtomrFftActor *self)
{
  self->cache = g_hash_table_new_full (atomr_fft_plan_hash, atomr_fft_plan_equal,
                                       NULL, plan_entry_free);
  self->capacity = DEFAULT_CAPACITY;
  g_mutex_init (&self->stats_lock);
}
