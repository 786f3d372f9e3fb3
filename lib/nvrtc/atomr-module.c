/* atomr-module.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-module-private.h"

/**
 * AtomrModule:
 *
 * The output of one NVRTC program: PTX, CUBIN and/or LTO-IR, the
 * compiler's log, and for every kernel name or name expression the
 * lowered (mangled) symbol that nvrtcGetLoweredName() reported.  Modules
 * are immutable; they need no GPU.
 *
 * Since: 0.1
 */
struct _AtomrModule
{
  GObject             parent_instance;
  AtomrModuleContent *content;
  AtomrCacheStatus    status;
};

G_DEFINE_FINAL_TYPE (AtomrModule, atomr_module, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_LOG,
  PROP_ARCH,
  PROP_KEY,
  PROP_CACHE_STATUS,
  PROP_COMPILE_TIME_MS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

AtomrModuleContent *
atomr_module_content_new (void)
{
  AtomrModuleContent *content = g_new0 (AtomrModuleContent, 1);
  content->ref_count = 1;
  return content;
}

AtomrModuleContent *
atomr_module_content_ref (AtomrModuleContent *content)
{
  g_atomic_int_inc (&content->ref_count);
  return content;
}

void
atomr_module_content_unref (AtomrModuleContent *content)
{
  if (!g_atomic_int_dec_and_test (&content->ref_count))
    return;
  g_clear_pointer (&content->ptx, g_bytes_unref);
  g_clear_pointer (&content->cubin, g_bytes_unref);
  g_clear_pointer (&content->ltoir, g_bytes_unref);
  g_free (content->log);
  g_strfreev (content->kernel_names);
  g_strfreev (content->lowered_names);
  g_strfreev (content->param_layouts);
  g_strfreev (content->flags);
  g_free (content->arch);
  g_free (content->nvrtc_version);
  g_free (content->key);
  g_clear_pointer (&content->resources, json_node_unref);
  g_free (content);
}

AtomrModule *
atomr_module_new (AtomrModuleContent *content,
                  AtomrCacheStatus    status)
{
  AtomrModule *self = g_object_new (ATOMR_TYPE_MODULE, NULL);

  g_clear_pointer (&self->content, atomr_module_content_unref);
  self->content = atomr_module_content_ref (content);
  self->status = status;
  return self;
}

AtomrModuleContent *
atomr_module_get_content (AtomrModule *self)
{
  return self->content;
}

static void
atomr_module_finalize (GObject *object)
{
  AtomrModule *self = ATOMR_MODULE (object);

  g_clear_pointer (&self->content, atomr_module_content_unref);
  G_OBJECT_CLASS (atomr_module_parent_class)->finalize (object);
}

static void
atomr_module_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  AtomrModule *self = ATOMR_MODULE (object);

  switch (prop_id)
    {
    case PROP_LOG: g_value_set_string (value, atomr_module_get_log (self)); break;
    case PROP_ARCH: g_value_set_string (value, atomr_module_get_arch (self)); break;
    case PROP_KEY: g_value_set_string (value, atomr_module_get_key (self)); break;
    case PROP_CACHE_STATUS: g_value_set_enum (value, self->status); break;
    case PROP_COMPILE_TIME_MS: g_value_set_double (value, atomr_module_get_compile_time_ms (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_module_class_init (AtomrModuleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = atomr_module_finalize;
  object_class->get_property = atomr_module_get_property;

  /**
   * AtomrModule:log:
   *
   * NVRTC's log (warnings), possibly empty.
   *
   * Since: 0.1
   */
  properties[PROP_LOG] = g_param_spec_string ("log", NULL, NULL, NULL, flags);
  /**
   * AtomrModule:arch:
   *
   * The architecture compiled for, %NULL for NVRTC's default.
   *
   * Since: 0.1
   */
  properties[PROP_ARCH] = g_param_spec_string ("arch", NULL, NULL, NULL, flags);
  /**
   * AtomrModule:key:
   *
   * The cache key, %NULL when compiled without a cache.
   *
   * Since: 0.1
   */
  properties[PROP_KEY] = g_param_spec_string ("key", NULL, NULL, NULL, flags);
  /**
   * AtomrModule:cache-status:
   *
   * Whether the module was compiled now or found in a cache.
   *
   * Since: 0.1
   */
  properties[PROP_CACHE_STATUS] = g_param_spec_enum ("cache-status", NULL, NULL,
                                                     ATOMR_TYPE_CACHE_STATUS,
                                                     ATOMR_CACHE_STATUS_NONE, flags);
  /**
   * AtomrModule:compile-time-ms:
   *
   * How long NVRTC (and nvJitLink) took when the module was compiled.
   *
   * Since: 0.1
   */
  properties[PROP_COMPILE_TIME_MS] = g_param_spec_double ("compile-time-ms", NULL, NULL,
                                                          0, G_MAXDOUBLE, 0, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_module_init (AtomrModule *self)
{
  /* Empty until atomr_module_new() gives it a compiled program: a module
   * built bare (a binding's constructor) then answers every getter with
   * "nothing" instead of crashing. */
  self->content = atomr_module_content_new ();
}

/**
 * atomr_module_get_ptx:
 * @self: a module
 *
 * Gets the PTX text (NUL-terminated), or %NULL when NVRTC produced none (LTO, or a CUBIN-only compile).
 *
 * Returns: (transfer none) (nullable): the PTX text (NUL-terminated), or
 *   %NULL when NVRTC produced none (LTO, or a CUBIN-only compile)
 *
 * Since: 0.1
 */
GBytes *
atomr_module_get_ptx (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return self->content->ptx;
}

/**
 * atomr_module_get_cubin:
 * @self: a module
 *
 * Gets the CUBIN, when compiled for an sm_NN architecture (or linked with LTO).
 *
 * Returns: (transfer none) (nullable): the CUBIN, when compiled for an
 *   sm_NN architecture (or linked with LTO)
 *
 * Since: 0.1
 */
GBytes *
atomr_module_get_cubin (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return self->content->cubin;
}

/**
 * atomr_module_get_ltoir:
 * @self: a module
 *
 * Gets the LTO-IR of an LTO compile.
 *
 * Returns: (transfer none) (nullable): the LTO-IR of an LTO compile
 *
 * Since: 0.1
 */
GBytes *
atomr_module_get_ltoir (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return self->content->ltoir;
}

/**
 * atomr_module_get_log:
 * @self: a module
 *
 * Gets NVRTC's log, possibly empty.
 *
 * This is the value of the [property@Atomr.Module:log] property.
 *
 * Returns: NVRTC's log, possibly empty
 *
 * Since: 0.1
 */
const gchar *
atomr_module_get_log (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return self->content->log ? self->content->log : "";
}

/**
 * atomr_module_get_kernel_names: (skip)
 * @self: a module
 *
 * Gets the kernel names and name expressions the module was compiled with.
 *
 * Returns: (transfer none) (array zero-terminated=1): the kernel names and
 *   name expressions the module was compiled with
 *
 * Since: 0.1
 */
const gchar * const *
atomr_module_get_kernel_names (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return (const gchar * const *) self->content->kernel_names;
}

/**
 * atomr_module_get_lowered_name:
 * @self: a module
 * @kernel_name: a name expression given at compile time
 *
 * Gets the mangled symbol of @kernel_name, as reported by nvrtcGetLoweredName(), or %NULL if it was not a name expression.
 *
 * Returns: (nullable): the mangled symbol of @kernel_name, as reported by
 *   nvrtcGetLoweredName(), or %NULL if it was not a name expression
 *
 * Since: 0.1
 */
const gchar *
atomr_module_get_lowered_name (AtomrModule *self,
                               const gchar *kernel_name)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  g_return_val_if_fail (kernel_name != NULL, NULL);
  for (guint i = 0; self->content->kernel_names && self->content->kernel_names[i]; i++)
    if (g_str_equal (self->content->kernel_names[i], kernel_name))
      return self->content->lowered_names[i];
  return NULL;
}

const gchar *
atomr_module_get_param_layout (AtomrModule *self,
                               const gchar *kernel_name)
{
  AtomrModuleContent *c = self->content;

  if (c->param_layouts == NULL || c->lowered_names == NULL || kernel_name == NULL)
    return NULL;
  for (guint i = 0; c->lowered_names[i] && c->param_layouts[i]; i++)
    if ((c->kernel_names && c->kernel_names[i] && g_str_equal (c->kernel_names[i], kernel_name))
        || g_str_equal (c->lowered_names[i], kernel_name))
      return g_str_equal (c->param_layouts[i], "?") ? NULL : c->param_layouts[i];
  return NULL;
}

/**
 * atomr_module_get_flags: (skip)
 * @self: a module
 *
 * Gets the exact NVRTC flags.
 *
 * Returns: (transfer none) (array zero-terminated=1): the exact NVRTC flags
 *
 * Since: 0.1
 */
const gchar * const *
atomr_module_get_flags (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return (const gchar * const *) self->content->flags;
}

/**
 * atomr_module_get_arch:
 * @self: a module
 *
 * Gets the target architecture.
 *
 * This is the value of the [property@Atomr.Module:arch] property.
 *
 * Returns: (nullable): the target architecture
 *
 * Since: 0.1
 */
const gchar *
atomr_module_get_arch (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return self->content->arch;
}

/**
 * atomr_module_get_nvrtc_version:
 * @self: a module
 *
 * Gets the NVRTC version that compiled the module ("13.0").
 *
 * Returns: the NVRTC version that compiled the module ("13.0")
 *
 * Since: 0.1
 */
const gchar *
atomr_module_get_nvrtc_version (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return self->content->nvrtc_version;
}

/**
 * atomr_module_get_key:
 * @self: a module
 *
 * Gets the cache key, %NULL when compiled without a cache.
 *
 * This is the value of the [property@Atomr.Module:key] property.
 *
 * Returns: (nullable): the cache key, %NULL when compiled without a cache
 *
 * Since: 0.1
 */
const gchar *
atomr_module_get_key (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return self->content->key;
}

/**
 * atomr_module_get_cache_status:
 * @self: a module
 *
 * Gets where the module came from.
 *
 * This is the value of the [property@Atomr.Module:cache-status] property.
 *
 * Returns: where the module came from
 *
 * Since: 0.1
 */
AtomrCacheStatus
atomr_module_get_cache_status (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), ATOMR_CACHE_STATUS_NONE);
  return self->status;
}

/**
 * atomr_module_get_compile_time_ms:
 * @self: a module
 *
 * Gets the compile time when the module was built (also for cache hits).
 *
 * This is the value of the [property@Atomr.Module:compile-time-ms] property.
 *
 * Returns: the compile time when the module was built (also for cache hits)
 *
 * Since: 0.1
 */
gdouble
atomr_module_get_compile_time_ms (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), 0);
  return self->content->compile_time_ms;
}
