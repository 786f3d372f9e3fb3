/* atomr-nvrtc-bindings.c — binding-friendly forms of NVRTC and kernel
 * cache API
 *
 * Owned copies of the string-array getters: the `const gchar * const *` getters of AtomrCompileOptions, AtomrModule
 * and AtomrKernelCacheEntry stay for C; bindings see these `_dup_`
 * variants under the getters' names (rename-to), returning a plain
 * `gchar **` they own: Vala's generated C then assigns it without a
 * const-dropping conversion (-Wincompatible-pointer-types, an error with
 * GCC 14).
 *
 * Boxed results instead of a boolean and out-parameters:
 * atomr_kernel_cache_query_stats() and atomr_kernel_cache_run_gc() shadow
 * atomr_kernel_cache_get_stats() and atomr_kernel_cache_gc(), which stay
 * for C.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-compile-options.h"
#include "atomr-kernel-cache.h"
#include "atomr-module.h"

static gchar **
dup_strv (const gchar * const *strv)
{
  return strv ? g_strdupv ((gchar **) strv) : g_new0 (gchar *, 1);
}

/**
 * atomr_compile_options_dup_include_paths: (rename-to atomr_compile_options_get_include_paths)
 * @self: compile options
 *
 * Returns a copy of the include paths.
 *
 * Returns: (transfer full) (array zero-terminated=1): a copy of the
 *   include paths
 *
 * Since: 0.2
 */
gchar **
atomr_compile_options_dup_include_paths (AtomrCompileOptions *self)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  return dup_strv (atomr_compile_options_get_include_paths (self));
}

/**
 * atomr_compile_options_dup_name_expressions: (rename-to atomr_compile_options_get_name_expressions)
 * @self: compile options
 *
 * Returns a copy of the name expressions.
 *
 * Returns: (transfer full) (array zero-terminated=1): a copy of the name
 *   expressions
 *
 * Since: 0.2
 */
gchar **
atomr_compile_options_dup_name_expressions (AtomrCompileOptions *self)
{
  g_return_val_if_fail (ATOMR_IS_COMPILE_OPTIONS (self), NULL);
  return dup_strv (atomr_compile_options_get_name_expressions (self));
}

/**
 * atomr_module_dup_kernel_names: (rename-to atomr_module_get_kernel_names)
 * @self: a module
 *
 * Returns a copy of the kernel names and name expressions the module was
 * compiled with.
 *
 * Returns: (transfer full) (array zero-terminated=1): a copy of the kernel
 *   names and name expressions the module was compiled with
 *
 * Since: 0.2
 */
gchar **
atomr_module_dup_kernel_names (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return dup_strv (atomr_module_get_kernel_names (self));
}

/**
 * atomr_module_dup_flags: (rename-to atomr_module_get_flags)
 * @self: a module
 *
 * Returns a copy of the exact NVRTC flags.
 *
 * Returns: (transfer full) (array zero-terminated=1): a copy of the exact
 *   NVRTC flags
 *
 * Since: 0.2
 */
gchar **
atomr_module_dup_flags (AtomrModule *self)
{
  g_return_val_if_fail (ATOMR_IS_MODULE (self), NULL);
  return dup_strv (atomr_module_get_flags (self));
}

/**
 * atomr_kernel_cache_entry_dup_kernel_names: (rename-to atomr_kernel_cache_entry_get_kernel_names)
 * @self: a cache entry
 *
 * Returns a copy of the kernel names and name expressions.
 *
 * Returns: (transfer full) (array zero-terminated=1): a copy of the kernel
 *   names and name expressions
 *
 * Since: 0.2
 */
gchar **
atomr_kernel_cache_entry_dup_kernel_names (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return dup_strv (atomr_kernel_cache_entry_get_kernel_names (self));
}

/**
 * atomr_kernel_cache_entry_dup_lowered_names: (rename-to atomr_kernel_cache_entry_get_lowered_names)
 * @self: a cache entry
 *
 * Returns a copy of the mangled symbols, parallel to the kernel names.
 *
 * Returns: (transfer full) (array zero-terminated=1): a copy of the
 *   mangled symbols, parallel to the kernel names
 *
 * Since: 0.2
 */
gchar **
atomr_kernel_cache_entry_dup_lowered_names (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return dup_strv (atomr_kernel_cache_entry_get_lowered_names (self));
}

/**
 * atomr_kernel_cache_entry_dup_flags: (rename-to atomr_kernel_cache_entry_get_flags)
 * @self: a cache entry
 *
 * Returns a copy of the NVRTC flags.
 *
 * Returns: (transfer full) (array zero-terminated=1): a copy of the NVRTC
 *   flags
 *
 * Since: 0.2
 */
gchar **
atomr_kernel_cache_entry_dup_flags (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return dup_strv (atomr_kernel_cache_entry_get_flags (self));
}

/**
 * atomr_kernel_cache_query_stats: (rename-to atomr_kernel_cache_get_stats)
 * @self: a cache
 * @error: return location for a #GError
 *
 * The state of the cache directory (entries, their size, the hits and
 * misses of every process using it) as one boxed result: the form of
 * atomr_kernel_cache_get_stats() for bindings.  Entries are not verified
 * (see atomr_kernel_cache_get_report()).
 *
 * Returns: (transfer full): the report, or %NULL with @error set
 *
 * Since: 0.2
 */
AtomrKernelCacheReport *
atomr_kernel_cache_query_stats (AtomrKernelCache  *self,
                                GError           **error)
{
  g_autoptr(AtomrKernelCacheReport) report = g_new0 (AtomrKernelCacheReport, 1);

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!atomr_kernel_cache_get_report (self, FALSE, report, error))
    return NULL;
  return g_steal_pointer (&report);
}

/**
 * atomr_kernel_cache_run_gc: (rename-to atomr_kernel_cache_gc)
 * @self: a cache
 * @max_size: bytes on disk to keep at most; 0 removes every entry
 * @error: return location for a #GError
 *
 * Collects the cache like atomr_kernel_cache_collect() (damaged and stale
 * temporary files, then the least recently used entries until the rest
 * fits in @max_size) and returns what it found and removed: the form of
 * atomr_kernel_cache_gc() for bindings.
 *
 * Returns: (transfer full): the report (#AtomrKernelCacheReport:n_removed,
 *   #AtomrKernelCacheReport:bytes_freed ...), or %NULL with @error set
 *
 * Since: 0.2
 */
AtomrKernelCacheReport *
atomr_kernel_cache_run_gc (AtomrKernelCache  *self,
                           guint64            max_size,
                           GError           **error)
{
  g_autoptr(AtomrKernelCacheReport) report = g_new0 (AtomrKernelCacheReport, 1);

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!atomr_kernel_cache_collect (self, max_size, report, error))
    return NULL;
  return g_steal_pointer (&report);
}
