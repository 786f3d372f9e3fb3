/* atomr-memory-info.c — a device's memory, as one boxed result (the form
 * of atomr_device_get_memory_info() for bindings)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-memory-info.h"

/**
 * atomr_memory_info_copy:
 * @info: a memory info
 *
 * Returns a copy of @info.
 *
 * Returns: (transfer full): a copy of @info
 *
 * Since: 0.2
 */
AtomrMemoryInfo *
atomr_memory_info_copy (const AtomrMemoryInfo *info)
{
  g_return_val_if_fail (info != NULL, NULL);
  return g_memdup2 (info, sizeof *info);
}

/**
 * atomr_memory_info_free:
 * @info: (nullable): a memory info
 *
 * Frees @info.
 *
 * Since: 0.2
 */
void
atomr_memory_info_free (AtomrMemoryInfo *info)
{
  g_free (info);
}

G_DEFINE_BOXED_TYPE (AtomrMemoryInfo, atomr_memory_info, atomr_memory_info_copy, atomr_memory_info_free)

/**
 * atomr_device_query_memory_info: (rename-to atomr_device_get_memory_info)
 * @self: an #AtomrDevice
 * @error: return location for a #GError
 *
 * Asks the driver how much memory is free, as one boxed result: the form
 * of atomr_device_get_memory_info() for bindings.
 *
 * Returns: (transfer full): the device's memory, or %NULL with @error set
 *
 * Since: 0.2
 */
AtomrMemoryInfo *
atomr_device_query_memory_info (AtomrDevice  *self,
                                GError      **error)
{
  g_autoptr(AtomrMemoryInfo) info = g_new0 (AtomrMemoryInfo, 1);

  g_return_val_if_fail (ATOMR_IS_DEVICE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!atomr_device_get_memory_info (self, &info->free_bytes, &info->total_bytes, error))
    return NULL;
  return g_steal_pointer (&info);
}
