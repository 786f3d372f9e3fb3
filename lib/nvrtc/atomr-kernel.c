/* atomr-kernel.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-buffer-private.h"
#include "atomr-device-private.h"
#include "atomr-error.h"
#include "atomr-kernel-private.h"
#include "atomr-module-private.h"

/**
 * AtomrKernel:
 *
 * One launchable function of a compiled module, loaded on a device for
 * one context generation.  After [method@Atomr.Device.reset] (or a supervisor
 * restart) the kernel is stale: launches fail fast with
 * %ATOMR_ERROR_STALE and it must be compiled (from the cache) again.
 *
 * The parameter table (offset and size of each parameter, from
 * cuFuncGetParamInfo()) is what every launch's [struct@Atomr.KernelArgs] are
 * checked against before anything is enqueued.
 *
 * Since: 0.1
 */
struct _AtomrKernel
{
  GObject      parent_instance;
  AtomrDevice *device;
  AtomrModule *module;
  gchar       *name;
  gchar       *lowered_name;
  guint        generation;
  CUmodule     cu_module;
  CUfunction   function;
  GArray      *param_sizes;    /* gsize */
  GArray      *param_offsets;  /* gsize */
  GArray      *param_types;    /* AtomrParamType */
  /* The function attributes below are asked of the driver on first use
   * (attributes_once), on whichever thread asks first: loading a kernel
   * does not wait for them (the driver may load a lazily loaded function
   * to answer).  max_dynamic_shared is also written by the setter. */
  gsize        attributes_once;
  gint         num_regs;
  gint         static_shared;
  gint         max_dynamic_shared;
  gint         max_threads;
  gint         local_size;
};

G_DEFINE_FINAL_TYPE (AtomrKernel, atomr_kernel, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_NAME,
  PROP_LOWERED_NAME,
  PROP_MODULE,
  PROP_DEVICE,
  PROP_GENERATION,
  PROP_N_PARAMS,
  PROP_NUM_REGISTERS,
  PROP_STATIC_SHARED_MEMORY,
  PROP_MAX_THREADS_PER_BLOCK,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
atomr_kernel_finalize (GObject *object)
{
  AtomrKernel *self = ATOMR_KERNEL (object);

  /* A module of an older generation died with its context. */
  if (self->cu_module && atomr_device_hold (self->device, self->generation))
    {
      ATOMR_CU->cuModuleUnload (self->cu_module);
      atomr_device_release (self->device);
    }
  g_clear_object (&self->device);
  g_clear_object (&self->module);
  g_free (self->name);
  g_free (self->lowered_name);
  g_array_unref (self->param_sizes);
  g_array_unref (self->param_offsets);
  g_clear_pointer (&self->param_types, g_array_unref);
  G_OBJECT_CLASS (atomr_kernel_parent_class)->finalize (object);
}

static void
atomr_kernel_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  AtomrKernel *self = ATOMR_KERNEL (object);

  switch (prop_id)
    {
    case PROP_NAME: g_value_set_string (value, self->name); break;
    case PROP_LOWERED_NAME: g_value_set_string (value, self->lowered_name); break;
    case PROP_MODULE: g_value_set_object (value, self->module); break;
    case PROP_DEVICE: g_value_set_object (value, self->device); break;
    case PROP_GENERATION: g_value_set_uint (value, self->generation); break;
    case PROP_N_PARAMS: g_value_set_uint (value, self->param_sizes->len); break;
    case PROP_NUM_REGISTERS: g_value_set_int (value, atomr_kernel_get_num_registers (self)); break;
    case PROP_STATIC_SHARED_MEMORY: g_value_set_int (value, atomr_kernel_get_static_shared_memory (self)); break;
    case PROP_MAX_THREADS_PER_BLOCK: g_value_set_int (value, atomr_kernel_get_max_threads_per_block (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_kernel_class_init (AtomrKernelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags f = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = atomr_kernel_finalize;
  object_class->get_property = atomr_kernel_get_property;

  /**
   * AtomrKernel:name:
   *
   * The kernel name or name expression it was compiled with.
   *
   * Since: 0.1
   */
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, f);
  /**
   * AtomrKernel:lowered-name:
   *
   * The mangled symbol loaded.
   *
   * Since: 0.1
   */
  properties[PROP_LOWERED_NAME] = g_param_spec_string ("lowered-name", NULL, NULL, NULL, f);
  /**
   * AtomrKernel:module:
   *
   * The compiled module.
   *
   * Since: 0.1
   */
  properties[PROP_MODULE] = g_param_spec_object ("module", NULL, NULL, ATOMR_TYPE_MODULE, f);
  /**
   * AtomrKernel:device:
   *
   * The device the kernel is loaded on.
   *
   * Since: 0.1
   */
  properties[PROP_DEVICE] = g_param_spec_object ("device", NULL, NULL, ATOMR_TYPE_DEVICE, f);
  /**
   * AtomrKernel:generation:
   *
   * The context generation the kernel is loaded in.
   *
   * Since: 0.1
   */
  properties[PROP_GENERATION] = g_param_spec_uint ("generation", NULL, NULL, 0, G_MAXUINT, 0, f);
  /**
   * AtomrKernel:n-params:
   *
   * Number of kernel parameters.
   *
   * Since: 0.1
   */
  properties[PROP_N_PARAMS] = g_param_spec_uint ("n-params", NULL, NULL, 0, G_MAXUINT, 0, f);
  /**
   * AtomrKernel:num-registers:
   *
   * Registers per thread.
   *
   * Since: 0.1
   */
  properties[PROP_NUM_REGISTERS] = g_param_spec_int ("num-registers", NULL, NULL, 0, G_MAXINT, 0, f);
  /**
   * AtomrKernel:static-shared-memory:
   *
   * Bytes of statically allocated shared memory.
   *
   * Since: 0.1
   */
  properties[PROP_STATIC_SHARED_MEMORY] = g_param_spec_int ("static-shared-memory", NULL, NULL, 0, G_MAXINT, 0, f);
  /**
   * AtomrKernel:max-threads-per-block:
   *
   * The largest block this kernel can be launched with.
   *
   * Since: 0.1
   */
  properties[PROP_MAX_THREADS_PER_BLOCK] = g_param_spec_int ("max-threads-per-block", NULL, NULL, 0, G_MAXINT, 0, f);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_kernel_init (AtomrKernel *self)
{
  self->param_sizes = g_array_new (FALSE, FALSE, sizeof (gsize));
  self->param_offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
}

static AtomrKernel *
kernel_new (AtomrDevice *device,
            AtomrModule *module,
            const gchar *name)
{
  AtomrKernel *self = g_object_new (ATOMR_TYPE_KERNEL, NULL);
  const gchar *lowered = atomr_module_get_lowered_name (module, name);

  self->device = g_object_ref (device);
  self->module = g_object_ref (module);
  self->name = g_strdup (name);
  self->lowered_name = g_strdup (lowered ? lowered : name);
  self->generation = atomr_device_get_generation (device);
  return self;
}

/* What the mangled name or the PTX say about the parameters. */
static void
read_param_types (AtomrKernel *self)
{
  GBytes *ptx = atomr_module_get_ptx (self->module);
  gsize len = 0;
  const gchar *text = ptx ? g_bytes_get_data (ptx, &len) : NULL;

  g_clear_pointer (&self->param_types, g_array_unref);
  self->param_types = atomr_kernel_param_types (self->lowered_name, text, len, self->param_sizes->len);
}

/* Offsets, sizes and types from a layout string (the module's, read off
 * the PTX at compile time); FALSE (and nothing set) if it does not parse,
 * or if it contradicts what the mangled name says (count, pointers as
 * 64-bit words, float and double): then the driver is asked. */
static gboolean
set_layout (AtomrKernel *self,
            const gchar *layout)
{
  g_autoptr(GPtrArray) named = atomr_demangle_param_types (self->lowered_name);
  g_autoptr(GArray) offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GArray) sizes = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GArray) classes = g_array_new (FALSE, TRUE, sizeof (AtomrParamType));

  g_array_set_clear_func (classes, atomr_param_type_clear);
  if (!atomr_param_layout_parse (layout, offsets, sizes, classes))
    return FALSE;
  if (named && named->len != sizes->len)
    return FALSE;
  for (guint i = 0; named && i < named->len; i++)
    {
      const AtomrParamType *n = g_ptr_array_index (named, i);
      const AtomrParamType *c = &g_array_index (classes, AtomrParamType, i);
      gsize size = g_array_index (sizes, gsize, i);

      if ((n->kind == ATOMR_PARAM_POINTER && (c->kind != ATOMR_PARAM_INT_OR_POINTER || size != sizeof (gpointer)))
          || (g_strcmp0 (n->type, "float") == 0 && (c->kind != ATOMR_PARAM_FLOAT || size != 4))
          || (g_strcmp0 (n->type, "double") == 0 && (c->kind != ATOMR_PARAM_FLOAT || size != 8)))
        return FALSE;
    }
  g_array_set_size (self->param_offsets, 0);
  g_array_set_size (self->param_sizes, 0);
  g_array_append_vals (self->param_offsets, offsets->data, offsets->len);
  g_array_append_vals (self->param_sizes, sizes->data, sizes->len);
  /* Types: the mangled name's where it names them all, else the classes
   * (what the PTX scan of read_param_types() would say). */
  for (guint i = 0; named && i < named->len; i++)
    {
      AtomrParamType *c = &g_array_index (classes, AtomrParamType, i);
      const AtomrParamType *n = g_ptr_array_index (named, i);
      g_free (c->type);
      c->kind = n->kind;
      c->type = g_strdup (n->type);
    }
  g_clear_pointer (&self->param_types, g_array_unref);
  self->param_types = g_steal_pointer (&classes);
  return TRUE;
}

AtomrKernel *
atomr_kernel_new_unloaded_layout (AtomrDevice *device,
                                  AtomrModule *module,
                                  const gchar *name)
{
  g_autoptr(AtomrKernel) self = kernel_new (device, module, name);
  const gchar *layout = atomr_module_get_param_layout (module, name);

  if (layout == NULL || !set_layout (self, layout))
    return NULL;
  return g_steal_pointer (&self);
}

AtomrKernel *
atomr_kernel_new_unloaded (AtomrDevice *device,
                           AtomrModule *module,
                           const gchar *name,
                           const gsize *param_sizes,
                           guint        n_params)
{
  AtomrKernel *self = kernel_new (device, module, name);
  gsize offset = 0;

  for (guint i = 0; i < n_params; i++)
    {
      offset = (offset + param_sizes[i] - 1) / param_sizes[i] * param_sizes[i];
      g_array_append_val (self->param_sizes, param_sizes[i]);
      g_array_append_val (self->param_offsets, offset);
      offset += param_sizes[i];
    }
  read_param_types (self);
  return self;
}

AtomrKernel *
atomr_kernel_new_loaded (AtomrDevice  *device,
                         AtomrModule  *module,
                         const gchar  *name,
                         GError      **error)
{
  return atomr_kernel_new_loaded_full (device, module, name, NULL, error);
}

AtomrKernel *
atomr_kernel_new_loaded_full (AtomrDevice  *device,
                              AtomrModule  *module,
                              const gchar  *name,
                              gboolean     *bad_image,
                              GError      **error)
{
  g_autoptr(AtomrKernel) self = NULL;
  const AtomrCudaDriver *cu;
  const gchar *layout;
  GBytes *image;
  CUresult res;

  if (device == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "kernel %s: no device (the actor was constructed without its _new() function)", name);
      return NULL;
    }
  if (bad_image)
    *bad_image = FALSE;

  if (atomr_device_is_host (device))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "kernel %s: the host test device cannot load CUDA modules", name);
      return NULL;
    }
  image = atomr_module_get_cubin (module);
  if (image == NULL)
    image = atomr_module_get_ptx (module);
  if (image == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "kernel %s: the module has neither CUBIN nor PTX (LTO-IR only?)", name);
      return NULL;
    }
  if (!atomr_device_enter (device, error))
    return NULL;
  cu = ATOMR_CU;
  self = kernel_new (device, module, name);
  res = cu->cuModuleLoadData (&self->cu_module, g_bytes_get_data (image, NULL));
  if (!atomr_cuda_check (res, "cuModuleLoadData", error))
    {
      if (bad_image)
        *bad_image = res == CUDA_ERROR_INVALID_IMAGE || res == CUDA_ERROR_INVALID_PTX
                     || res == CUDA_ERROR_NO_BINARY_FOR_GPU;
      self->cu_module = NULL;
      atomr_device_leave (device);
      return NULL;
    }
  res = cu->cuModuleGetFunction (&self->function, self->cu_module, self->lowered_name);
  if (res != CUDA_SUCCESS)
    {
      g_autoptr(GError) local_error = NULL;
      atomr_cuda_check (res, "cuModuleGetFunction", &local_error);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "name: no function \"%s\" (symbol %s) in the module: %s", name,
                   self->lowered_name, local_error->message);
      atomr_device_leave (device);
      return NULL;
    }
  /* The parameter table: from the layout the compile read off the PTX
   * (stored in the cache entry, checked when read), else from the
   * driver. */
  layout = atomr_module_get_param_layout (module, name);
  if (layout && !set_layout (self, layout))
    layout = NULL;
  if (layout == NULL)
    for (guint i = 0;; i++)
      {
        size_t offset = 0, size = 0;
        gsize o, s;

        res = cu->cuFuncGetParamInfo (self->function, i, &offset, &size);
        if (res != CUDA_SUCCESS)
          break;
        o = offset;
        s = size;
        g_array_append_val (self->param_offsets, o);
        g_array_append_val (self->param_sizes, s);
      }
  atomr_device_leave (device);
  if (layout == NULL)
    read_param_types (self);
  return g_steal_pointer (&self);
}

/* The function attributes, asked of the driver once, on first use.  A
 * kernel whose context is gone (stale) or that has no function keeps
 * zeros. */
static void
ensure_attributes (AtomrKernel *self)
{
  const AtomrCudaDriver *cu;

  if (!g_once_init_enter (&self->attributes_once))
    return;
  if (self->function && self->device && atomr_device_hold (self->device, self->generation))
    {
      gint max_dynamic = 0;

      cu = ATOMR_CU;
      cu->cuFuncGetAttribute (&self->num_regs, CU_FUNC_ATTRIBUTE_NUM_REGS, self->function);
      cu->cuFuncGetAttribute (&self->static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, self->function);
      cu->cuFuncGetAttribute (&max_dynamic, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self->function);
      cu->cuFuncGetAttribute (&self->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, self->function);
      cu->cuFuncGetAttribute (&self->local_size, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, self->function);
      g_atomic_int_set (&self->max_dynamic_shared, max_dynamic);
      atomr_device_release (self->device);
    }
  g_once_init_leave (&self->attributes_once, 1);
}

CUfunction
atomr_kernel_get_function (AtomrKernel *self)
{
  return self->function;
}

gboolean
atomr_kernel_check_args (AtomrKernel      *self,
                         AtomrKernelArgs  *args,
                         GError          **error)
{
  if (args->args->len != self->param_sizes->len)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "args: %u arguments for kernel %s, which takes %u parameters",
                   args->args->len, self->name, self->param_sizes->len);
      return FALSE;
    }
  for (guint i = 0; i < args->args->len; i++)
    {
      const AtomrKernelArg *a = &g_array_index (args->args, AtomrKernelArg, i);
      gsize want = g_array_index (self->param_sizes, gsize, i);

      if (a->size != want)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "args: argument %u of kernel %s is %" G_GSIZE_FORMAT " bytes (%s); "
                       "the parameter is %" G_GSIZE_FORMAT " bytes",
                       i, self->name, a->size, a->buffer ? "a buffer pointer" : "a scalar", want);
          return FALSE;
        }
      if (self->param_types && i < self->param_types->len)
        {
          g_autofree gchar *why = atomr_param_check (&g_array_index (self->param_types, AtomrParamType, i), a->kind);
          if (why)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "args: argument %u of kernel %s: %s", i, self->name, why);
              return FALSE;
            }
        }
    }
  return TRUE;
}

/**
 * atomr_kernel_get_name:
 * @self: a kernel
 *
 * Gets the kernel name or name expression.
 *
 * This is the value of the [property@Atomr.Kernel:name] property.
 *
 * Returns: the kernel name or name expression
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_get_name (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), NULL);
  return self->name;
}

/**
 * atomr_kernel_get_lowered_name:
 * @self: a kernel
 *
 * Gets the mangled symbol.
 *
 * This is the value of the [property@Atomr.Kernel:lowered-name] property.
 *
 * Returns: the mangled symbol
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_get_lowered_name (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), NULL);
  return self->lowered_name;
}

/**
 * atomr_kernel_get_module:
 * @self: a kernel
 *
 * Gets the module the kernel comes from.
 *
 * This is the value of the [property@Atomr.Kernel:module] property.
 *
 * Returns: (transfer none): the module the kernel comes from
 *
 * Since: 0.1
 */
AtomrModule *
atomr_kernel_get_module (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), NULL);
  return self->module;
}

/**
 * atomr_kernel_get_device:
 * @self: a kernel
 *
 * Gets the device.
 *
 * This is the value of the [property@Atomr.Kernel:device] property.
 *
 * Returns: (transfer none): the device
 *
 * Since: 0.1
 */
AtomrDevice *
atomr_kernel_get_device (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), NULL);
  return self->device;
}

/**
 * atomr_kernel_get_generation:
 * @self: a kernel
 *
 * Gets the context generation the kernel was loaded in.
 *
 * This is the value of the [property@Atomr.Kernel:generation] property.
 *
 * Returns: the context generation the kernel was loaded in
 *
 * Since: 0.1
 */
guint
atomr_kernel_get_generation (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  return self->generation;
}

/**
 * atomr_kernel_is_stale:
 * @self: a kernel
 *
 * Tells whether the device's context was rebuilt since loading.
 *
 * Returns: %TRUE once the device's context was rebuilt since loading
 *
 * Since: 0.1
 */
gboolean
atomr_kernel_is_stale (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), TRUE);
  if (self->device == NULL)
    return TRUE;    /* built bare: nothing loaded */
  return atomr_device_get_generation (self->device) != self->generation;
}

/**
 * atomr_kernel_get_n_params:
 * @self: a kernel
 *
 * Gets the number of parameters.
 *
 * This is the value of the [property@Atomr.Kernel:n-params] property.
 *
 * Returns: the number of parameters
 *
 * Since: 0.1
 */
guint
atomr_kernel_get_n_params (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  return self->param_sizes->len;
}

/**
 * atomr_kernel_get_param_size:
 * @self: a kernel
 * @index: a parameter index
 *
 * Gets the parameter's size in bytes, 0 when @index is out of range.
 *
 * Returns: the parameter's size in bytes, 0 when @index is out of range
 *
 * Since: 0.1
 */
gsize
atomr_kernel_get_param_size (AtomrKernel *self,
                             guint        index)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  return index < self->param_sizes->len ? g_array_index (self->param_sizes, gsize, index) : 0;
}

/**
 * atomr_kernel_get_param_type:
 * @self: a kernel
 * @index: a parameter index
 *
 * What is known of the parameter's type: from the mangled name of a C++
 * kernel the C++ type ("const float *", "int", "__half"); from the PTX of
 * an `extern "C"` kernel only its class (".f32", "integer", "pointer or
 * 64-bit integer", "struct"); "unknown" when neither is available (an
 * `extern "C"` kernel without PTX).  Launch arguments are checked against
 * it: buffers only for pointers, floating-point values not for integers
 * and the reverse; raw bytes only by size.
 *
 * Returns: (nullable): the type, %NULL when @index is out of range
 *
 * Since: 0.2
 */
const gchar *
atomr_kernel_get_param_type (AtomrKernel *self,
                             guint        index)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), NULL);
  if (self->param_types == NULL || index >= self->param_types->len)
    return NULL;
  return g_array_index (self->param_types, AtomrParamType, index).type;
}

/**
 * atomr_kernel_get_param_offset:
 * @self: a kernel
 * @index: a parameter index
 *
 * Gets the parameter's offset in the parameter buffer, 0 when @index is out of range.
 *
 * Returns: the parameter's offset in the parameter buffer, 0 when @index
 *   is out of range
 *
 * Since: 0.1
 */
gsize
atomr_kernel_get_param_offset (AtomrKernel *self,
                               guint        index)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  return index < self->param_offsets->len ? g_array_index (self->param_offsets, gsize, index) : 0;
}

/**
 * atomr_kernel_get_num_registers:
 * @self: a kernel
 *
 * Gets the registers per thread.
 *
 * This is the value of the [property@Atomr.Kernel:num-registers] property.
 *
 * Returns: registers per thread
 *
 * Since: 0.1
 */
gint
atomr_kernel_get_num_registers (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  ensure_attributes (self);
  return self->num_regs;
}

/**
 * atomr_kernel_get_static_shared_memory:
 * @self: a kernel
 *
 * Gets the bytes of static shared memory.
 *
 * This is the value of the [property@Atomr.Kernel:static-shared-memory] property.
 *
 * Returns: bytes of static shared memory
 *
 * Since: 0.1
 */
gint
atomr_kernel_get_static_shared_memory (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  ensure_attributes (self);
  return self->static_shared;
}

/**
 * atomr_kernel_get_max_dynamic_shared_memory:
 * @self: a kernel
 *
 * Gets the bytes of dynamic shared memory a launch may ask for.
 *
 * Returns: bytes of dynamic shared memory a launch may ask for
 *
 * Since: 0.1
 */
gint
atomr_kernel_get_max_dynamic_shared_memory (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  ensure_attributes (self);
  return g_atomic_int_get (&self->max_dynamic_shared);
}

/**
 * atomr_kernel_get_max_threads_per_block:
 * @self: a kernel
 *
 * Gets the largest block size.
 *
 * This is the value of the [property@Atomr.Kernel:max-threads-per-block] property.
 *
 * Returns: the largest block size
 *
 * Since: 0.1
 */
gint
atomr_kernel_get_max_threads_per_block (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  ensure_attributes (self);
  return self->max_threads;
}

/**
 * atomr_kernel_get_local_memory:
 * @self: a kernel
 *
 * Gets the bytes of local memory per thread.
 *
 * Returns: bytes of local memory per thread
 *
 * Since: 0.1
 */
gint
atomr_kernel_get_local_memory (AtomrKernel *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL (self), 0);
  ensure_attributes (self);
  return self->local_size;
}

/**
 * atomr_kernel_set_max_dynamic_shared_memory:
 * @self: a kernel
 * @bytes: dynamic shared memory launches may ask for (above 48 KiB needs
 *   this opt-in)
 * @error: return location for a [struct@GLib.Error]
 *
 * Lets launches of the kernel ask for up to @bytes of dynamic shared memory.
 *
 * Returns: %TRUE if the driver accepted it
 *
 * Since: 0.1
 */
gboolean
atomr_kernel_set_max_dynamic_shared_memory (AtomrKernel  *self,
                                            gint          bytes,
                                            GError      **error)
{
  CUresult res;

  g_return_val_if_fail (ATOMR_IS_KERNEL (self), FALSE);
  if (self->function == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "kernel %s is not loaded on a GPU", self->name);
      return FALSE;
    }
  if (!atomr_device_hold (self->device, self->generation))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE,
                   "kernel %s belongs to generation %u; the device is at %u",
                   self->name, self->generation, atomr_device_get_generation (self->device));
      return FALSE;
    }
  res = ATOMR_CU->cuFuncSetAttribute (self->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  atomr_device_release (self->device);
  /* After the first query, so that it cannot overwrite what is set. */
  ensure_attributes (self);
  if (res == CUDA_SUCCESS)
    g_atomic_int_set (&self->max_dynamic_shared, bytes);
  if (res != CUDA_SUCCESS)
    {
      atomr_cuda_check (res, "cuFuncSetAttribute", error);
      g_prefix_error (error, "bytes: %d: ", bytes);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */

/**
 * AtomrLaunchConfig:
 *
 * Grid, block, dynamic shared memory and (sm_90 and later) cluster
 * dimensions of one launch.
 *
 * Since: 0.1
 */
G_DEFINE_BOXED_TYPE (AtomrLaunchConfig, atomr_launch_config, atomr_launch_config_copy, atomr_launch_config_free)

/**
 * atomr_launch_config_new:
 * @grid_x: blocks in x
 * @grid_y: blocks in y
 * @grid_z: blocks in z
 * @block_x: threads per block in x
 * @block_y: threads per block in y
 * @block_z: threads per block in z
 *
 * Creates a launch configuration from its grid and block dimensions.
 *
 * Returns: (transfer full): a launch configuration without dynamic shared
 *   memory or clusters
 *
 * Since: 0.1
 */
AtomrLaunchConfig *
atomr_launch_config_new (guint grid_x,
                         guint grid_y,
                         guint grid_z,
                         guint block_x,
                         guint block_y,
                         guint block_z)
{
  AtomrLaunchConfig *config = g_new0 (AtomrLaunchConfig, 1);

  config->grid[0] = grid_x;
  config->grid[1] = grid_y;
  config->grid[2] = grid_z;
  config->block[0] = block_x;
  config->block[1] = block_y;
  config->block[2] = block_z;
  return config;
}

/**
 * atomr_launch_config_new_1d:
 * @n_threads: threads wanted in total
 * @block_size: threads per block
 *
 * Creates a one-dimensional launch configuration that covers @n_threads threads.
 *
 * Returns: (transfer full): a 1-D configuration with enough blocks of
 *   @block_size threads to cover @n_threads
 *
 * Since: 0.1
 */
AtomrLaunchConfig *
atomr_launch_config_new_1d (guint64 n_threads,
                            guint   block_size)
{
  guint64 blocks = block_size ? (n_threads + block_size - 1) / block_size : 0;
  return atomr_launch_config_new ((guint) MIN (blocks, G_MAXUINT), 1, 1, block_size, 1, 1);
}

/**
 * atomr_launch_config_copy:
 * @config: a configuration
 *
 * Copies a launch configuration.
 *
 * Returns: (transfer full): a copy
 *
 * Since: 0.1
 */
AtomrLaunchConfig *
atomr_launch_config_copy (const AtomrLaunchConfig *config)
{
  return g_memdup2 (config, sizeof *config);
}

/**
 * atomr_launch_config_free:
 * @config: a configuration
 *
 * Frees @config.
 *
 * Since: 0.1
 */
void
atomr_launch_config_free (AtomrLaunchConfig *config)
{
  g_free (config);
}

/**
 * atomr_launch_config_set_shared_memory:
 * @config: a configuration
 * @bytes: dynamic shared memory per block
 *
 * Sets the dynamic shared memory (`extern __shared__`).
 *
 * Since: 0.1
 */
void
atomr_launch_config_set_shared_memory (AtomrLaunchConfig *config,
                                       guint              bytes)
{
  config->shared_mem = bytes;
}

/**
 * atomr_launch_config_get_shared_memory:
 * @config: a configuration
 *
 * Gets the dynamic shared memory per block.
 *
 * Returns: dynamic shared memory per block
 *
 * Since: 0.1
 */
guint
atomr_launch_config_get_shared_memory (const AtomrLaunchConfig *config)
{
  return config->shared_mem;
}

/**
 * atomr_launch_config_set_cluster:
 * @config: a configuration
 * @x: blocks per cluster in x (0 for no cluster)
 * @y: blocks per cluster in y
 * @z: blocks per cluster in z
 *
 * Launches thread-block clusters (sm_90 and later); the grid must be a
 * multiple of the cluster.
 *
 * Since: 0.1
 */
void
atomr_launch_config_set_cluster (AtomrLaunchConfig *config,
                                 guint              x,
                                 guint              y,
                                 guint              z)
{
  config->cluster[0] = x;
  config->cluster[1] = y;
  config->cluster[2] = z;
}

/**
 * atomr_launch_config_get_cluster:
 * @config: a configuration
 * @x: (out) (optional): blocks per cluster in x, 0 for none
 * @y: (out) (optional): blocks per cluster in y
 * @z: (out) (optional): blocks per cluster in z
 *
 * Gets the cluster dimensions.
 *
 * Since: 0.1
 */
void
atomr_launch_config_get_cluster (const AtomrLaunchConfig *config,
                                 guint                   *x,
                                 guint                   *y,
                                 guint                   *z)
{
  if (x) *x = config->cluster[0];
  if (y) *y = config->cluster[1];
  if (z) *z = config->cluster[2];
}

/**
 * atomr_launch_config_get_grid:
 * @config: a configuration
 * @x: (out) (optional): blocks in x
 * @y: (out) (optional): blocks in y
 * @z: (out) (optional): blocks in z
 *
 * Gets the grid dimensions.
 *
 * Since: 0.1
 */
void
atomr_launch_config_get_grid (const AtomrLaunchConfig *config,
                              guint                   *x,
                              guint                   *y,
                              guint                   *z)
{
  if (x) *x = config->grid[0];
  if (y) *y = config->grid[1];
  if (z) *z = config->grid[2];
}

/**
 * atomr_launch_config_get_block:
 * @config: a configuration
 * @x: (out) (optional): threads in x
 * @y: (out) (optional): threads in y
 * @z: (out) (optional): threads in z
 *
 * Gets the block dimensions.
 *
 * Since: 0.1
 */
void
atomr_launch_config_get_block (const AtomrLaunchConfig *config,
                               guint                   *x,
                               guint                   *y,
                               guint                   *z)
{
  if (x) *x = config->block[0];
  if (y) *y = config->block[1];
  if (z) *z = config->block[2];
}

/* ------------------------------------------------------------------ */

/**
 * AtomrKernelArgs:
 *
 * The arguments of a launch, in parameter order, added with typed adders
 * that chain:
 *
 * |[<!-- language="C" -->
 * g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
 * atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (
 *     atomr_kernel_args_add_f32 (args, 2.0f), x), n);
 * ]|
 *
 * Buffers are kept alive and ordered against other streams by the launch.
 * Each argument's size is checked against the kernel's parameter table.
 *
 * Since: 0.1
 */
G_DEFINE_BOXED_TYPE (AtomrKernelArgs, atomr_kernel_args, atomr_kernel_args_ref, atomr_kernel_args_unref)

/**
 * atomr_kernel_args_new:
 *
 * Creates an empty kernel argument list.
 *
 * Returns: (transfer full): an empty argument list
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_new (void)
{
  AtomrKernelArgs *args = g_new0 (AtomrKernelArgs, 1);

  args->ref_count = 1;
  args->args = g_array_new (FALSE, TRUE, sizeof (AtomrKernelArg));
  args->values = g_byte_array_new ();
  return args;
}

/**
 * atomr_kernel_args_ref:
 * @args: arguments
 *
 * Takes a reference to an argument list.
 *
 * Returns: (transfer full): @args
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_ref (AtomrKernelArgs *args)
{
  g_return_val_if_fail (args != NULL, NULL);
  g_atomic_int_inc (&args->ref_count);
  return args;
}

/**
 * atomr_kernel_args_unref:
 * @args: arguments
 *
 * Drops a reference.
 *
 * Since: 0.1
 */
void
atomr_kernel_args_unref (AtomrKernelArgs *args)
{
  g_return_if_fail (args != NULL);
  if (!g_atomic_int_dec_and_test (&args->ref_count))
    return;
  for (guint i = 0; i < args->args->len; i++)
    g_clear_object (&g_array_index (args->args, AtomrKernelArg, i).buffer);
  g_array_unref (args->args);
  g_byte_array_unref (args->values);
  g_free (args);
}

/**
 * atomr_kernel_args_get_n_args:
 * @args: arguments
 *
 * Gets the number of arguments.
 *
 * Returns: the number of arguments
 *
 * Since: 0.1
 */
guint
atomr_kernel_args_get_n_args (AtomrKernelArgs *args)
{
  g_return_val_if_fail (args != NULL, 0);
  return args->args->len;
}

/**
 * atomr_kernel_args_get_arg_size:
 * @args: arguments
 * @index: an argument index
 *
 * Gets the size of argument @index in bytes, 0 when out of range.
 *
 * Returns: the size of argument @index in bytes, 0 when out of range
 *
 * Since: 0.1
 */
gsize
atomr_kernel_args_get_arg_size (AtomrKernelArgs *args,
                                guint            index)
{
  g_return_val_if_fail (args != NULL, 0);
  return index < args->args->len ? g_array_index (args->args, AtomrKernelArg, index).size : 0;
}

static AtomrKernelArgs *
add_value (AtomrKernelArgs *args,
           gconstpointer    data,
           gsize            size,
           AtomrArgKind     kind)
{
  AtomrKernelArg a = { 0 };
  static const guint8 zeros[16] = { 0 };

  /* 16-byte aligned slots so the launch can point at any value. */
  while (args->values->len % 16)
    g_byte_array_append (args->values, zeros, 1);
  a.size = size;
  a.kind = kind;
  a.offset = args->values->len;
  g_byte_array_append (args->values, data, size);
  g_array_append_val (args->args, a);
  return args;
}

static AtomrKernelArgs *
add_buffer (AtomrKernelArgs *args,
            AtomrBuffer     *buffer,
            gboolean         write)
{
  AtomrKernelArg a = { 0 };

  a.size = sizeof (CUdeviceptr);
  a.kind = ATOMR_ARG_BUFFER;
  a.buffer = g_object_ref (buffer);
  a.write = write;
  g_array_append_val (args->args, a);
  return args;
}

/**
 * atomr_kernel_args_add_buffer:
 * @args: arguments
 * @buffer: a device buffer, passed as a pointer the kernel may write through
 *
 * Appends a device pointer to @buffer; the launch writes @buffer.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_buffer (AtomrKernelArgs *args,
                              AtomrBuffer     *buffer)
{
  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail (ATOMR_IS_BUFFER (buffer), args);
  return add_buffer (args, buffer, TRUE);
}

/**
 * atomr_kernel_args_add_buffer_read_only:
 * @args: arguments
 * @buffer: a device buffer the kernel only reads (so other readers may
 *   overlap with the launch)
 *
 * Appends a device pointer to @buffer; the launch only reads @buffer.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_buffer_read_only (AtomrKernelArgs *args,
                                        AtomrBuffer     *buffer)
{
  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail (ATOMR_IS_BUFFER (buffer), args);
  return add_buffer (args, buffer, FALSE);
}

static AtomrArgKind
dtype_arg_kind (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F32:
    case ATOMR_DTYPE_F64:
      return ATOMR_ARG_FLOAT;
    case ATOMR_DTYPE_I8:
    case ATOMR_DTYPE_U8:
    case ATOMR_DTYPE_I32:
    case ATOMR_DTYPE_U32:
    case ATOMR_DTYPE_I64:
    case ATOMR_DTYPE_U64:
      return ATOMR_ARG_INT;
    default:
      /* __half, __nv_bfloat16, fp8 and complex are structs in CUDA. */
      return ATOMR_ARG_BYTES;
    }
}

/**
 * atomr_kernel_args_add_scalar:
 * @args: arguments
 * @dtype: the parameter's type
 * @real: the value (real part)
 * @imag: the imaginary part, for complex types
 *
 * Adds a scalar converted to @dtype (see [func@Atomr.Dtype.pack]).
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_scalar (AtomrKernelArgs *args,
                              AtomrDtype       dtype,
                              gdouble          real,
                              gdouble          imag)
{
  g_autoptr(GBytes) packed = NULL;
  gsize size;
  gconstpointer data;

  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail ((guint) dtype < ATOMR_DTYPE_LAST, args);
  packed = atomr_dtype_pack (dtype, real, imag);
  data = g_bytes_get_data (packed, &size);
  return add_value (args, data, size, dtype_arg_kind (dtype));
}

#define SCALAR_ADDER(suffix, ctype, storage, kind)                             \
AtomrKernelArgs *                                                              \
atomr_kernel_args_add_##suffix (AtomrKernelArgs *args,                         \
                                ctype            value)                        \
{                                                                              \
  storage v = value;                                                           \
  g_return_val_if_fail (args != NULL, NULL);                                   \
  return add_value (args, &v, sizeof v, kind);                                 \
}

/**
 * atomr_kernel_args_add_f32:
 * @args: arguments
 * @value: a `float`
 *
 * Appends a `float` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (f32, gfloat, gfloat, ATOMR_ARG_FLOAT)
/**
 * atomr_kernel_args_add_f64:
 * @args: arguments
 * @value: a `double`
 *
 * Appends a `double` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (f64, gdouble, gdouble, ATOMR_ARG_FLOAT)
/**
 * atomr_kernel_args_add_i8:
 * @args: arguments
 * @value: a `signed char`
 *
 * Appends a `signed char` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (i8, gint8, gint8, ATOMR_ARG_INT)
/**
 * atomr_kernel_args_add_u8:
 * @args: arguments
 * @value: an `unsigned char`
 *
 * Appends an `unsigned char` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (u8, guint8, guint8, ATOMR_ARG_INT)
/**
 * atomr_kernel_args_add_i32:
 * @args: arguments
 * @value: an `int`
 *
 * Appends an `int` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (i32, gint32, gint32, ATOMR_ARG_INT)
/**
 * atomr_kernel_args_add_u32:
 * @args: arguments
 * @value: an `unsigned int`
 *
 * Appends an `unsigned int` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (u32, guint32, guint32, ATOMR_ARG_INT)
/**
 * atomr_kernel_args_add_i64:
 * @args: arguments
 * @value: a `long long`
 *
 * Appends a `long long` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (i64, gint64, gint64, ATOMR_ARG_INT)
/**
 * atomr_kernel_args_add_u64:
 * @args: arguments
 * @value: an `unsigned long long`
 *
 * Appends an `unsigned long long` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (u64, guint64, guint64, ATOMR_ARG_INT)
/**
 * atomr_kernel_args_add_size:
 * @args: arguments
 * @value: a `size_t` (8 bytes on every CUDA platform)
 *
 * Appends a `size_t` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
SCALAR_ADDER (size, guint64, guint64, ATOMR_ARG_INT)

/**
 * atomr_kernel_args_add_f16:
 * @args: arguments
 * @value: the value, rounded to a `__half`
 *
 * Appends a `__half` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_f16 (AtomrKernelArgs *args,
                           gfloat           value)
{
  return atomr_kernel_args_add_scalar (args, ATOMR_DTYPE_F16, value, 0);
}

/**
 * atomr_kernel_args_add_bf16:
 * @args: arguments
 * @value: the value, rounded to a `__nv_bfloat16`
 *
 * Appends a `__nv_bfloat16` argument.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_bf16 (AtomrKernelArgs *args,
                            gfloat           value)
{
  return atomr_kernel_args_add_scalar (args, ATOMR_DTYPE_BF16, value, 0);
}

/**
 * atomr_kernel_args_add_c64:
 * @args: arguments
 * @real: real part
 * @imag: imaginary part
 *
 * Adds a `cuFloatComplex` (`float2`).
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_c64 (AtomrKernelArgs *args,
                           gfloat           real,
                           gfloat           imag)
{
  gfloat v[2] = { real, imag };
  g_return_val_if_fail (args != NULL, NULL);
  return add_value (args, v, sizeof v, ATOMR_ARG_BYTES);
}

/**
 * atomr_kernel_args_add_c128:
 * @args: arguments
 * @real: real part
 * @imag: imaginary part
 *
 * Adds a `cuDoubleComplex` (`double2`).
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_c128 (AtomrKernelArgs *args,
                            gdouble          real,
                            gdouble          imag)
{
  gdouble v[2] = { real, imag };
  g_return_val_if_fail (args != NULL, NULL);
  return add_value (args, v, sizeof v, ATOMR_ARG_BYTES);
}

/**
 * atomr_kernel_args_add_bytes:
 * @args: arguments
 * @value: the bytes of a parameter passed by value (a struct)
 *
 * Appends an argument passed by value from its bytes.
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.1
 */
AtomrKernelArgs *
atomr_kernel_args_add_bytes (AtomrKernelArgs *args,
                             GBytes          *value)
{
  gsize size;
  gconstpointer data;

  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail (value != NULL, args);
  data = g_bytes_get_data (value, &size);
  return add_value (args, data, size, ATOMR_ARG_BYTES);
}

/**
 * atomr_kernel_args_add_graph_condition:
 * @args: arguments
 *
 * Appends the handle of the conditional graph node whose body the launch
 * is recorded into: an `unsigned long long` parameter (a
 * `cudaGraphConditionalHandle`) that the kernel passes to
 * `cudaGraphSetConditional (handle, value)` to set the node's condition
 * itself.  A while body uses it to decide on the GPU whether to go on
 * (see [method@Atomr.Graph.replay_while_async]); in the body of an if or
 * a switch node the value is no longer read once the body runs.
 *
 * The launch must be recorded into a graph (see
 * [method@Atomr.Graph.begin_capture]) that then serves as the body of a
 * conditional node: [method@Atomr.Graph.replay_while_async],
 * [method@Atomr.Graph.replay_if_async] or
 * [func@Atomr.Graph.replay_switch_async], recorded into another graph or
 * not.  The handle exists only there: such a graph cannot be replayed on
 * its own or as a child graph, and an unrecorded launch with this
 * argument fails (%ATOMR_ERROR_NOT_SUPPORTED).
 *
 * NVRTC has no CUDA runtime headers: declare the device function in the
 * kernel's source as the CUDA headers do (it is a builtin the driver
 * resolves when it loads the module; no `-rdc`, no device runtime
 * library):
 *
 * |[<!-- language="C" -->
 * typedef unsigned long long cudaGraphConditionalHandle;
 * extern "C" __device__ __cudart_builtin__ void
 * cudaGraphSetConditional (cudaGraphConditionalHandle handle, unsigned int value);
 *
 * extern "C" __global__ void
 * count_down (cudaGraphConditionalHandle handle, int *n)
 * {
 *   int left = --*n;
 *   cudaGraphSetConditional (handle, left > 0);
 * }
 * ]|
 *
 * Returns: (transfer none): @args, for chaining
 *
 * Since: 0.2
 */
AtomrKernelArgs *
atomr_kernel_args_add_graph_condition (AtomrKernelArgs *args)
{
  guint64 placeholder = ATOMR_GRAPH_CONDITION_PLACEHOLDER;

  g_return_val_if_fail (args != NULL, NULL);
  add_value (args, &placeholder, sizeof placeholder, ATOMR_ARG_INT);
  g_array_index (args->args, AtomrKernelArg, args->args->len - 1).condition = TRUE;
  return args;
}
