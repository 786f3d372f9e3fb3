/* atomr-compile-options.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "atomr-compile-options-private.h"
#include "atomr-kernel-cache-key-private.h"
#include "atomr-nvrtc-loader-private.h"
#include "atomr-nvrtc-private.h"
#include "atomr-error.h"

/**
 * AtomrCompileOptions:
 *
 * The options of one NVRTC compilation, built with chained setters:
 *
 * |[<!-- language="C" -->
 * g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
 * atomr_compile_options_add_define (atomr_compile_options_set_arch (o, "sm_90"), "N", "256");
 * ]|
 *
 * [method@Atomr.CompileOptions.get_flags] is the exact argument list handed to
 * nvrtcCompileProgram(), in a fixed order, so equal options always give
 * equal flags (and equal cache keys).
 *
 * Since: 0.1
 */
struct _AtomrCompileOptions
{
  GObject    parent_instance;

  gchar     *arch;
  gchar     *std;
  gboolean   fast_math;
  gboolean   ftz;
  guint      max_registers;
  gboolean   lto;
  gboolean   relocatable;
  gboolean   line_info;
  gboolean   debug;
  gboolean   pch;
  GPtrArray *include_paths;     /* NULL-terminated */
  GPtrArray *defines;           /* "NAME" or "NAME=VALUE" */
  GPtrArray *name_expressions;  /* NULL-terminated */
  GPtrArray *extra_flags;
  GPtrArray *link_objects;      /* AtomrLinkObject */

  /* Bumped by every change: the snapshot below is valid while its
   * revision matches (see atomr_compile_options_get_snapshot()). */
  guint      revision;
  GMutex     snapshot_lock;
  AtomrCompileSnapshot *snapshot;   /* under snapshot_lock; NULL: none yet */
};

G_DEFINE_FINAL_TYPE (AtomrCompileOptions, atomr_compile_options, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ARCH,
  PROP_STD,
  PROP_FAST_MATH,
  PROP_FLUSH_TO_ZERO,
  PROP_MAX_REGISTERS,
  PROP_LTO,
  PROP_RELOCATABLE,
  PROP_LINE_INFO,
  PROP_DEBUG,
  PROP_PRECOMPILED_HEADERS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
link_object_free (gpointer data)
{
  AtomrLinkObject *obj = data;
  g_bytes_unref (obj->data);
  g_free (obj);
}

static GPtrArray *
new_strv_array (void)
{
  GPtrArray *a = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (a, NULL);
  return a;
}

static void
strv_array_add (GPtrArray   *a,
                const gchar *s)
{
  g_ptr_array_insert (a, a->len - 1, g_strdup (s));
}

static void
atomr_compile_options_finalize (GObject *object)
{
  AtomrCompileOptions *self = ATOMR_COMPILE_OPTIONS (object);

  g_free (self->arch);
  g_free (self->std);
  g_ptr_array_unref (self->include_paths);
  g_ptr_array_unref (self->defines);
  g_ptr_array_unref (self->name_expressions);
  g_ptr_array_unref (self->extra_flags);
  g_ptr_array_unref (self->link_objects);
  g_clear_pointer (&self->snapshot, atomr_compile_snapshot_unref);
  g_mutex_clear (&self->snapshot_lock);
  G_OBJECT_CLASS (atomr_compile_options_parent_class)->finalize (object);
}

static void
atomr_compile_options_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  AtomrCompileOptions *self = ATOMR_COMPILE_OPTIONS (object);

  switch (prop_id)
    {
    case PROP_ARCH: g_value_set_string (value, self->arch); break;
    case PROP_STD: g_value_set_string (value, self->std); break;
    case PROP_FAST_MATH: g_value_set_boolean (value, self->fast_math); break;
    case PROP_FLUSH_TO_ZERO: g_value_set_boolean (value, self->ftz); break;
    case PROP_MAX_REGISTERS: g_value_set_uint (value, self->max_registers); break;
    case PROP_LTO: g_value_set_boolean (value, self->lto); break;
    case PROP_RELOCATABLE: g_value_set_boolean (value, self->relocatable); break;
    case PROP_LINE_INFO: g_value_set_boolean (value, self->line_info); break;
    case PROP_DEBUG: g_value_set_boolean (value, self->debug); break;
    case PROP_PRECOMPILED_HEADERS: g_value_set_boolean (value, self->pch); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_compile_options_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  AtomrCompileOptions *self = ATOMR_COMPILE_OPTIONS (object);

  switch (prop_id)
    {
    case PROP_ARCH: atomr_compile_options_set_arch (self, g_value_get_string (value)); break;
    case PROP_STD: atomr_compile_options_set_std (self, g_value_get_string (value)); break;
    case PROP_FAST_MATH: atomr_compile_options_set_fast_math (self, g_value_get_boolean (value)); break;
    case PROP_FLUSH_TO_ZERO: atomr_compile_options_set_flush_to_zero (self, g_value_get_boolean (value)); break;
    case PROP_MAX_REGISTERS: atomr_compile_options_set_max_registers (self, g_value_get_uint (value)); break;
    case PROP_LTO: atomr_compile_options_set_lto (self, g_value_get_boolean (value)); break;
    case PROP_RELOCATABLE: atomr_compile_options_set_relocatable (self, g_value_get_boolean (value)); break;
    case PROP_LINE_INFO: atomr_compile_options_set_line_info (self, g_value_get_boolean (value)); break;
    case PROP_DEBUG: atomr_compile_options_set_debug (self, g_value_get_boolean (value)); break;
    case PROP_PRECOMPILED_HEADERS: atomr_compile_options_set_precompiled_headers (self, g_value_get_boolean (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_compile_options_class_init (AtomrCompileOptionsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = atomr_compile_options_finalize;
  object_class->get_property = atomr_compile_options_get_property;
  object_class->set_property = atomr_compile_options_set_property;

  /**
   * AtomrCompileOptions:arch:
   *
   * The target architecture: "sm_75" … "sm_120", "sm_90a", "compute_NN"
   * for PTX only, or %ATOMR_ARCH_NATIVE; %NULL for NVRTC's default.
   *
   * Since: 0.1
   */
  properties[PROP_ARCH] = g_param_spec_string ("arch", NULL, NULL, NULL, flags);
  /**
   * AtomrCompileOptions:std:
   *
   * The C++ dialect: "c++14", "c++17" or "c++20"; %NULL for NVRTC's default.
   *
   * Since: 0.1
   */
  properties[PROP_STD] = g_param_spec_string ("std", NULL, NULL, NULL, flags);
  /**
   * AtomrCompileOptions:fast-math:
   *
   * Fast, less precise math (`--use_fast_math`).
   *
   * Since: 0.1
   */
  properties[PROP_FAST_MATH] = g_param_spec_boolean ("fast-math", NULL, NULL, FALSE, flags);
  /**
   * AtomrCompileOptions:flush-to-zero:
   *
   * Flush single-precision denormals to zero (`--ftz=true`).
   *
   * Since: 0.1
   */
  properties[PROP_FLUSH_TO_ZERO] = g_param_spec_boolean ("flush-to-zero", NULL, NULL, FALSE, flags);
  /**
   * AtomrCompileOptions:max-registers:
   *
   * Registers per thread at most (`--maxrregcount`); 0 for no limit.
   *
   * Since: 0.1
   */
  properties[PROP_MAX_REGISTERS] = g_param_spec_uint ("max-registers", NULL, NULL, 0, 255, 0, flags);
  /**
   * AtomrCompileOptions:lto:
   *
   * Link-time optimisation: NVRTC emits LTO-IR (`--dlink-time-opt`) and
   * nvJitLink links it, with any extra objects, into a CUBIN.
   *
   * Since: 0.1
   */
  properties[PROP_LTO] = g_param_spec_boolean ("lto", NULL, NULL, FALSE, flags);
  /**
   * AtomrCompileOptions:relocatable:
   *
   * Relocatable device code (`--relocatable-device-code=true`).
   *
   * Since: 0.1
   */
  properties[PROP_RELOCATABLE] = g_param_spec_boolean ("relocatable", NULL, NULL, FALSE, flags);
  /**
   * AtomrCompileOptions:line-info:
   *
   * Line-number information for profilers (`--generate-line-info`).
   *
   * Since: 0.1
   */
  properties[PROP_LINE_INFO] = g_param_spec_boolean ("line-info", NULL, NULL, FALSE, flags);
  /**
   * AtomrCompileOptions:debug:
   *
   * Device debug information (`--device-debug`).
   *
   * Since: 0.1
   */
  properties[PROP_DEBUG] = g_param_spec_boolean ("debug", NULL, NULL, FALSE, flags);
  /**
   * AtomrCompileOptions:precompiled-headers:
   *
   * Let NVRTC precompile and reuse headers (`--pch`).
   *
   * Since: 0.1
   */
  properties[PROP_PRECOMPILED_HEADERS] = g_param_spec_boolean ("precompiled-headers", NULL, NULL, FALSE, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_compile_options_init (AtomrCompileOptions *self)
{
  self->include_paths = new_strv_array ();
  self->defines = g_ptr_array_new_with_free_func (g_free);
  self->name_expressions = new_strv_array ();
  self->extra_flags = g_ptr_array_new_with_free_func (g_free);
  self->link_objects = g_ptr_array_new_with_free_func (link_object_free);
  g_mutex_init (&self->snapshot_lock);
}

/**
 * atomr_compile_options_new:
 *
 * Creates compile options with every default.
 *
 * Returns: (transfer full): options with every default (NVRTC's arch and
 *   dialect, no flags)
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_new (void)
{
  return g_object_new (ATOMR_TYPE_COMPILE_OPTIONS, NULL);
}

/**
 * atomr_compile_options_copy:
 * @self: options
 *
 * Copies the options.
 *
 * Returns: (transfer full): an independent copy of @self
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_copy (AtomrCompileOptions *self)
{
  AtomrCompileOptions *copy;

  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  copy = atomr_compile_options_new ();
  copy->arch = g_strdup (self->arch);
  copy->std = g_strdup (self->std);
  copy->fast_math = self->fast_math;
  copy->ftz = self->ftz;
  copy->max_registers = self->max_registers;
  copy->lto = self->lto;
  copy->relocatable = self->relocatable;
  copy->line_info = self->line_info;
  copy->debug = self->debug;
  copy->pch = self->pch;
  for (guint i = 0; i + 1 < self->include_paths->len; i++)
    strv_array_add (copy->include_paths, g_ptr_array_index (self->include_paths, i));
  for (guint i = 0; i < self->defines->len; i++)
    g_ptr_array_add (copy->defines, g_strdup (g_ptr_array_index (self->defines, i)));
  for (guint i = 0; i + 1 < self->name_expressions->len; i++)
    strv_array_add (copy->name_expressions, g_ptr_array_index (self->name_expressions, i));
  for (guint i = 0; i < self->extra_flags->len; i++)
    g_ptr_array_add (copy->extra_flags, g_strdup (g_ptr_array_index (self->extra_flags, i)));
  for (guint i = 0; i < self->link_objects->len; i++)
    {
      AtomrLinkObject *obj = g_ptr_array_index (self->link_objects, i);
      AtomrLinkObject *c = g_new0 (AtomrLinkObject, 1);
      c->ptx = obj->ptx;
      c->data = g_bytes_ref (obj->data);
      g_ptr_array_add (copy->link_objects, c);
    }
  return copy;
}

static void
set_string (AtomrCompileOptions  *self,
            gchar               **field,
            const gchar          *value,
            guint                 prop)
{
  if (g_strcmp0 (*field, value) == 0)
    return;
  g_free (*field);
  *field = g_strdup (value);
  g_atomic_int_inc (&self->revision);
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

static void
set_boolean (AtomrCompileOptions *self,
             gboolean            *field,
             gboolean             value,
             guint                prop)
{
  value = !!value;
  if (*field == value)
    return;
  *field = value;
  g_atomic_int_inc (&self->revision);
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

/**
 * atomr_compile_options_set_arch:
 * @self: options
 * @arch: (nullable): "sm_NN", "sm_NNa", "compute_NN", %ATOMR_ARCH_NATIVE,
 *   or %NULL for NVRTC's default
 *
 * Sets the target architecture; checked by [method@Atomr.CompileOptions.validate].
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_set_arch (AtomrCompileOptions *self,
                                const gchar         *arch)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  set_string (self, &self->arch, arch, PROP_ARCH);
  return self;
}

/**
 * atomr_compile_options_get_arch:
 * @self: options
 *
 * Gets the target architecture.
 *
 * This is the value of the [property@Atomr.CompileOptions:arch] property.
 *
 * Returns: (nullable): the target architecture
 *
 * Since: 0.1
 */
const gchar *
atomr_compile_options_get_arch (AtomrCompileOptions *self)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  return self->arch;
}

/**
 * atomr_compile_options_set_std:
 * @self: options
 * @std: (nullable): "c++14", "c++17", "c++20" (or "14", "17", "20")
 *
 * Sets the C++ dialect, or with %NULL NVRTC's default.
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_set_std (AtomrCompileOptions *self,
                               const gchar         *std)
{
  g_autofree gchar *canonical = NULL;

  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  if (std && g_ascii_isdigit (std[0]))
    canonical = g_strconcat ("c++", std, NULL);
  set_string (self, &self->std, canonical ? canonical : std, PROP_STD);
  return self;
}

/**
 * atomr_compile_options_get_std:
 * @self: options
 *
 * Gets the C++ dialect.
 *
 * This is the value of the [property@Atomr.CompileOptions:std] property.
 *
 * Returns: (nullable): the C++ dialect
 *
 * Since: 0.1
 */
const gchar *
atomr_compile_options_get_std (AtomrCompileOptions *self)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  return self->std;
}

#define BOOLEAN_OPTION(name, field, PROP)                                      \
AtomrCompileOptions *                                                          \
atomr_compile_options_set_##name (AtomrCompileOptions *self,                   \
                                  gboolean             value)                  \
{                                                                              \
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);                \
  set_boolean (self, &self->field, value, PROP);                               \
  return self;                                                                 \
}                                                                              \
gboolean                                                                       \
atomr_compile_options_get_##name (AtomrCompileOptions *self)                   \
{                                                                              \
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), FALSE);               \
  return self->field;                                                          \
}

/**
 * atomr_compile_options_set_fast_math:
 * @self: options
 * @fast_math: the new value
 *
 * Sets whether fast, less precise math is used (`--use_fast_math`).
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
/**
 * atomr_compile_options_get_fast_math:
 * @self: options
 *
 * Gets whether fast math is on.
 *
 * This is the value of the [property@Atomr.CompileOptions:fast-math] property.
 *
 * Returns: whether fast math is on
 *
 * Since: 0.1
 */
BOOLEAN_OPTION (fast_math, fast_math, PROP_FAST_MATH)
/**
 * atomr_compile_options_set_flush_to_zero:
 * @self: options
 * @ftz: the new value
 *
 * Sets whether single-precision denormals are flushed to zero (`--ftz`).
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
/**
 * atomr_compile_options_get_flush_to_zero:
 * @self: options
 *
 * Gets whether denormals are flushed to zero.
 *
 * This is the value of the [property@Atomr.CompileOptions:flush-to-zero] property.
 *
 * Returns: whether denormals are flushed to zero
 *
 * Since: 0.1
 */
BOOLEAN_OPTION (flush_to_zero, ftz, PROP_FLUSH_TO_ZERO)
/**
 * atomr_compile_options_set_lto:
 * @self: options
 * @lto: the new value
 *
 * Sets whether the program is compiled to LTO-IR and linked with nvJitLink (`-dlto`).
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
/**
 * atomr_compile_options_get_lto:
 * @self: options
 *
 * Gets whether link-time optimisation is on.
 *
 * This is the value of the [property@Atomr.CompileOptions:lto] property.
 *
 * Returns: whether link-time optimisation is on
 *
 * Since: 0.1
 */
BOOLEAN_OPTION (lto, lto, PROP_LTO)
/**
 * atomr_compile_options_set_relocatable:
 * @self: options
 * @relocatable: the new value
 *
 * Sets whether relocatable device code is generated (`-rdc`).
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
/**
 * atomr_compile_options_get_relocatable:
 * @self: options
 *
 * Gets whether relocatable device code is on.
 *
 * This is the value of the [property@Atomr.CompileOptions:relocatable] property.
 *
 * Returns: whether relocatable device code is on
 *
 * Since: 0.1
 */
BOOLEAN_OPTION (relocatable, relocatable, PROP_RELOCATABLE)
/**
 * atomr_compile_options_set_line_info:
 * @self: options
 * @line_info: the new value
 *
 * Sets whether line information for profilers is generated (`-lineinfo`).
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
/**
 * atomr_compile_options_get_line_info:
 * @self: options
 *
 * Gets whether line information is generated.
 *
 * This is the value of the [property@Atomr.CompileOptions:line-info] property.
 *
 * Returns: whether line information is generated
 *
 * Since: 0.1
 */
BOOLEAN_OPTION (line_info, line_info, PROP_LINE_INFO)
/**
 * atomr_compile_options_set_debug:
 * @self: options
 * @debug: the new value
 *
 * Sets whether device debug information is generated (`-G`), which also turns optimisation off.
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
/**
 * atomr_compile_options_get_debug:
 * @self: options
 *
 * Gets whether device debug information is generated.
 *
 * This is the value of the [property@Atomr.CompileOptions:debug] property.
 *
 * Returns: whether device debug information is generated
 *
 * Since: 0.1
 */
BOOLEAN_OPTION (debug, debug, PROP_DEBUG)
/**
 * atomr_compile_options_set_precompiled_headers:
 * @self: options
 * @pch: the new value
 *
 * Sets whether NVRTC may use precompiled headers (`-pch`).
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
/**
 * atomr_compile_options_get_precompiled_headers:
 * @self: options
 *
 * Gets whether precompiled headers are on.
 *
 * This is the value of the [property@Atomr.CompileOptions:precompiled-headers] property.
 *
 * Returns: whether precompiled headers are on
 *
 * Since: 0.1
 */
BOOLEAN_OPTION (precompiled_headers, pch, PROP_PRECOMPILED_HEADERS)

/**
 * atomr_compile_options_set_max_registers:
 * @self: options
 * @max_registers: registers per thread at most, 0 for no limit
 *
 * Sets the most registers a thread may use (`--maxrregcount`).
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_set_max_registers (AtomrCompileOptions *self,
                                         guint                max_registers)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  if (self->max_registers != max_registers)
    {
      self->max_registers = max_registers;
      g_atomic_int_inc (&self->revision);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_REGISTERS]);
    }
  return self;
}

/**
 * atomr_compile_options_get_max_registers:
 * @self: options
 *
 * Gets the register limit, 0 for none.
 *
 * This is the value of the [property@Atomr.CompileOptions:max-registers] property.
 *
 * Returns: the register limit, 0 for none
 *
 * Since: 0.1
 */
guint
atomr_compile_options_get_max_registers (AtomrCompileOptions *self)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), 0);
  return self->max_registers;
}

/**
 * atomr_compile_options_add_include_path:
 * @self: options
 * @path: a directory searched for `#include`; the contents of headers
 *   found there are part of the cache key
 *
 * Adds a directory to the include search path.
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_add_include_path (AtomrCompileOptions *self,
                                        const gchar         *path)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  g_return_val_if_fail (path != NULL, self);
  strv_array_add (self->include_paths, path);
  g_atomic_int_inc (&self->revision);
  return self;
}

/**
 * atomr_compile_options_get_include_paths: (skip)
 * @self: options
 *
 * Gets the include paths.
 *
 * Returns: (transfer none) (array zero-terminated=1): the include paths
 *
 * Since: 0.1
 */
const gchar * const *
atomr_compile_options_get_include_paths (AtomrCompileOptions *self)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  return (const gchar * const *) self->include_paths->pdata;
}

/**
 * atomr_compile_options_add_define:
 * @self: options
 * @name: the macro
 * @value: (nullable): its value, or %NULL to define it empty
 *
 * Defines a preprocessor macro (`-D`), empty when @value is %NULL.
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_add_define (AtomrCompileOptions *self,
                                  const gchar         *name,
                                  const gchar         *value)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  g_return_val_if_fail (name != NULL, self);
  g_ptr_array_add (self->defines, value ? g_strconcat (name, "=", value, NULL) : g_strdup (name));
  g_atomic_int_inc (&self->revision);
  return self;
}

/**
 * atomr_compile_options_add_name_expression:
 * @self: options
 * @expression: a kernel name or a template instance such as
 *   "kernel<float, 256>", whose mangled name the module will know
 *
 * Adds a name expression whose lowered (mangled) name the compiled module will know.
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_add_name_expression (AtomrCompileOptions *self,
                                           const gchar         *expression)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  g_return_val_if_fail (expression != NULL, self);
  strv_array_add (self->name_expressions, expression);
  g_atomic_int_inc (&self->revision);
  return self;
}

/**
 * atomr_compile_options_get_name_expressions: (skip)
 * @self: options
 *
 * Gets the name expressions.
 *
 * Returns: (transfer none) (array zero-terminated=1): the name expressions
 *
 * Since: 0.1
 */
const gchar * const *
atomr_compile_options_get_name_expressions (AtomrCompileOptions *self)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  return (const gchar * const *) self->name_expressions->pdata;
}

/**
 * atomr_compile_options_add_extra_flag:
 * @self: options
 * @flag: an NVRTC option passed as is, after all others
 *
 * Adds an NVRTC option that has no setter of its own.
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_add_extra_flag (AtomrCompileOptions *self,
                                      const gchar         *flag)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  g_return_val_if_fail (flag != NULL, self);
  g_ptr_array_add (self->extra_flags, g_strdup (flag));
  g_atomic_int_inc (&self->revision);
  return self;
}

static AtomrCompileOptions *
add_link_object (AtomrCompileOptions *self,
                 GBytes              *data,
                 gboolean             ptx)
{
  AtomrLinkObject *obj = g_new0 (AtomrLinkObject, 1);

  obj->data = g_bytes_ref (data);
  obj->ptx = ptx;
  g_ptr_array_add (self->link_objects, obj);
  g_atomic_int_inc (&self->revision);
  return self;
}

/**
 * atomr_compile_options_add_link_ltoir:
 * @self: options
 * @ltoir: LTO-IR (from another compile with [property@Atomr.CompileOptions:lto])
 *
 * Links @ltoir into the program; needs [property@Atomr.CompileOptions:lto].
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_add_link_ltoir (AtomrCompileOptions *self,
                                      GBytes              *ltoir)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  g_return_val_if_fail (ltoir != NULL, self);
  return add_link_object (self, ltoir, FALSE);
}

/**
 * atomr_compile_options_add_link_ptx:
 * @self: options
 * @ptx: PTX text of relocatable device code
 *
 * Links @ptx into the program; needs [property@Atomr.CompileOptions:lto].
 *
 * Returns: (transfer none): @self, for chaining
 *
 * Since: 0.1
 */
AtomrCompileOptions *
atomr_compile_options_add_link_ptx (AtomrCompileOptions *self,
                                    GBytes              *ptx)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  g_return_val_if_fail (ptx != NULL, self);
  return add_link_object (self, ptx, TRUE);
}

GPtrArray *
atomr_compile_options_get_link_objects (AtomrCompileOptions *self)
{
  return self->link_objects;
}

/**
 * atomr_compile_options_get_flags:
 * @self: options
 *
 * The exact argument list given to nvrtcCompileProgram(): architecture,
 * dialect, code options, include paths, defines (in the order added), then
 * the extra flags.  %ATOMR_ARCH_NATIVE is resolved at compile time and
 * gives no flag here.
 *
 * Returns: (transfer full) (array zero-terminated=1): the flags
 *
 * Since: 0.1
 */
gchar **
atomr_compile_options_get_flags (AtomrCompileOptions *self)
{
  GPtrArray *flags;

  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  flags = g_ptr_array_new ();
  if (self->arch && g_strcmp0 (self->arch, ATOMR_ARCH_NATIVE) != 0)
    g_ptr_array_add (flags, g_strconcat ("--gpu-architecture=", self->arch, NULL));
  if (self->std)
    g_ptr_array_add (flags, g_strconcat ("--std=", self->std, NULL));
  if (self->relocatable)
    g_ptr_array_add (flags, g_strdup ("--relocatable-device-code=true"));
  if (self->lto)
    g_ptr_array_add (flags, g_strdup ("--dlink-time-opt"));
  if (self->fast_math)
    g_ptr_array_add (flags, g_strdup ("--use_fast_math"));
  if (self->ftz)
    g_ptr_array_add (flags, g_strdup ("--ftz=true"));
  if (self->max_registers)
    g_ptr_array_add (flags, g_strdup_printf ("--maxrregcount=%u", self->max_registers));
  if (self->line_info)
    g_ptr_array_add (flags, g_strdup ("--generate-line-info"));
  if (self->debug)
    g_ptr_array_add (flags, g_strdup ("--device-debug"));
  if (self->pch)
    g_ptr_array_add (flags, g_strdup ("--pch"));
  for (guint i = 0; i + 1 < self->include_paths->len; i++)
    g_ptr_array_add (flags, g_strconcat ("--include-path=",
                                         (gchar *) g_ptr_array_index (self->include_paths, i), NULL));
  for (guint i = 0; i < self->defines->len; i++)
    g_ptr_array_add (flags, g_strconcat ("--define-macro=",
                                         (gchar *) g_ptr_array_index (self->defines, i), NULL));
  for (guint i = 0; i < self->extra_flags->len; i++)
    g_ptr_array_add (flags, g_strdup (g_ptr_array_index (self->extra_flags, i)));
  g_ptr_array_add (flags, NULL);
  return (gchar **) g_ptr_array_free (flags, FALSE);
}

gboolean
atomr_arch_is_valid (const gchar *arch)
{
  const gchar *digits;
  gchar *end;
  guint64 n;

  if (g_str_has_prefix (arch, "sm_"))
    digits = arch + 3;
  else if (g_str_has_prefix (arch, "compute_"))
    digits = arch + 8;
  else
    return FALSE;
  if (!g_ascii_isdigit (*digits))
    return FALSE;
  n = g_ascii_strtoull (digits, &end, 10);
  if ((*end == 'a' || *end == 'f') && end[1] == '\0')
    end++;
  /* Which numbers exist is NVRTC's to say (atomr_nvrtc_check_arch() on
   * the compile path): a future architecture must work unchanged. */
  return *end == '\0' && n > 0;
}

/**
 * atomr_compile_options_validate:
 * @self: options
 * @error: return location for a [struct@GLib.Error]
 *
 * Checks what NVRTC would otherwise reject with a less helpful message:
 * the architecture (against the list NVRTC reports with
 * nvrtcGetSupportedArchs(), with the a/f suffix rules; the message lists
 * the supported ones), the dialect, define names, and link objects without
 * LTO.  Loads NVRTC to ask it; without NVRTC only the form of the
 * architecture is checked.
 *
 * Returns: %TRUE if the options are usable
 *
 * Since: 0.1
 */
gboolean
atomr_compile_options_validate (AtomrCompileOptions  *self,
                                GError              **error)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), FALSE);

  if (!atomr_compile_options_check (self, error))
    return FALSE;
  if (self->arch && g_strcmp0 (self->arch, ATOMR_ARCH_NATIVE) != 0 && atomr_nvrtc_load (NULL))
    return atomr_nvrtc_check_arch (self->arch, error);
  return TRUE;
}

gboolean
atomr_compile_options_check (AtomrCompileOptions  *self,
                             GError              **error)
{
  if (self->arch && g_strcmp0 (self->arch, ATOMR_ARCH_NATIVE) != 0 && !atomr_arch_is_valid (self->arch))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "arch: \"%s\" is not a target architecture (sm_NN or compute_NN with an "
                   "optional a or f suffix, or \"native\")", self->arch);
      return FALSE;
    }
  if (self->std && g_strcmp0 (self->std, "c++14") != 0 && g_strcmp0 (self->std, "c++17") != 0
      && g_strcmp0 (self->std, "c++20") != 0 && g_strcmp0 (self->std, "c++11") != 0
      && g_strcmp0 (self->std, "c++03") != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "std: \"%s\" is not a C++ dialect (c++14, c++17 or c++20)", self->std);
      return FALSE;
    }
  for (guint i = 0; i < self->defines->len; i++)
    {
      const gchar *d = g_ptr_array_index (self->defines, i);
      if (d[0] == '\0' || d[0] == '=' || g_ascii_isdigit (d[0]) || strchr (d, ' ') != NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "define: \"%s\" is not a macro name", d);
          return FALSE;
        }
    }
  if (self->link_objects->len > 0 && !self->lto)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "link objects: %u extra objects need lto to be set", self->link_objects->len);
      return FALSE;
    }
  return TRUE;
}

void
atomr_compile_snapshot_unref (AtomrCompileSnapshot *snapshot)
{
  if (!g_atomic_int_dec_and_test (&snapshot->ref_count))
    return;
  g_clear_error (&snapshot->error);
  g_free (snapshot->arch);
  g_strfreev (snapshot->flags);
  g_strfreev (snapshot->name_expressions);
  g_ptr_array_unref (snapshot->link_objects);
  g_clear_pointer (&snapshot->key_part, g_bytes_unref);
  g_free (snapshot);
}

AtomrCompileSnapshot *
atomr_compile_snapshot_ref (AtomrCompileSnapshot *snapshot)
{
  g_atomic_int_inc (&snapshot->ref_count);
  return snapshot;
}

/* Everything the compile path derives from the options alone, checked
 * once: the checks of atomr_compile_options_check(), LTO's arch and
 * nvJitLink options, the flags, and the options' share of the kernel
 * cache's memory key. */
static AtomrCompileSnapshot *
snapshot_build (AtomrCompileOptions *self,
                guint                revision)
{
  AtomrCompileSnapshot *snap = g_new0 (AtomrCompileSnapshot, 1);
  GError *error = NULL;

  snap->ref_count = 1;
  snap->revision = revision;
  snap->arch = g_strdup (self->arch);
  snap->lto = self->lto;
  snap->native = g_strcmp0 (self->arch, ATOMR_ARCH_NATIVE) == 0;
  snap->flags = atomr_compile_options_get_flags (self);
  snap->name_expressions = g_strdupv ((gchar **) self->name_expressions->pdata);
  snap->link_objects = g_ptr_array_new_with_free_func (link_object_free);
  for (guint i = 0; i < self->link_objects->len; i++)
    {
      AtomrLinkObject *obj = g_ptr_array_index (self->link_objects, i);
      AtomrLinkObject *c = g_new0 (AtomrLinkObject, 1);
      c->ptx = obj->ptx;
      c->data = g_bytes_ref (obj->data);
      g_ptr_array_add (snap->link_objects, c);
    }
  if (!atomr_compile_options_check (self, &error))
    {
      snap->error = error;
      return snap;
    }
  if (snap->native)
    return snap;   /* resolved (and checked further) per device */
  if (snap->lto && (snap->arch == NULL || !g_str_has_prefix (snap->arch, "sm_")))
    {
      snap->error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                 "arch: LTO links a CUBIN and needs an sm_NN architecture, not %s",
                                 snap->arch ? snap->arch : "NVRTC's default");
      return snap;
    }
  if (snap->lto)
    {
      /* Refuse what nvJitLink would not honour before anything runs. */
      g_autoptr(GPtrArray) jl_opts = g_ptr_array_new_with_free_func (g_free);
      if (!atomr_nvrtc_jitlink_options ((const gchar * const *) snap->flags, snap->arch, jl_opts, &error))
        {
          snap->error = error;
          return snap;
        }
    }
  snap->key_part = atomr_cache_options_blob ((const gchar * const *) snap->flags,
                                             (const gchar * const *) snap->name_expressions,
                                             snap->arch, snap->link_objects);
  snap->key_part_hash = atomr_cache_bytes_hash (snap->key_part);
  return snap;
}

AtomrCompileSnapshot *
atomr_compile_options_get_snapshot (AtomrCompileOptions *self)
{
  AtomrCompileSnapshot *snap;
  guint revision;

  g_mutex_lock (&self->snapshot_lock);
  revision = (guint) g_atomic_int_get (&self->revision);
  if (self->snapshot == NULL || self->snapshot->revision != revision)
    {
      g_clear_pointer (&self->snapshot, atomr_compile_snapshot_unref);
      self->snapshot = snapshot_build (self, revision);
    }
  snap = atomr_compile_snapshot_ref (self->snapshot);
  g_mutex_unlock (&self->snapshot_lock);
  return snap;
}
