/* inspector-occupancy.c — theoretical occupancy, the CUDA occupancy calculator's rules
 *
 * How many blocks of a kernel an SM keeps resident is the smallest of four
 * limits (CUDA C++ Best Practices Guide, "Occupancy"; the rules of the
 * toolkit's occupancy calculator, cuda_occupancy.h, for compute
 * capability 7.0 and later):
 *
 * - warps: the SM's warp slots over the block's warps (rounded up);
 * - registers: registers go to warps in units of 256 (registers × 32
 *   rounded up), within each of the 4 sub-partitions of the register
 *   file; a block whose warps (rounded up to the sub-partitions) need more
 *   than the per-block file, or a thread with more than 255, cannot run;
 * - shared memory: static + dynamic + the driver's reserve (1 KiB per
 *   block on sm_80+), rounded up to 128 bytes, against the largest
 *   carveout of the SM; more than the opt-in maximum per block cannot run;
 * - blocks: the SM's block slots.
 *
 * Block barriers (Hopper counts them) are not limiting with the one
 * barrier every block has, and the CUBIN does not record more; the L1 /
 * shared-memory carveout is taken at its largest (the driver's default
 * when a kernel needs it).  Pure arithmetic: no device, no CUDA.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-occupancy.h"

typedef struct {
  const gchar *arch;
  gint         major, minor;
  gint         max_threads_per_sm, max_blocks_per_sm;
  guint        shared_per_sm, shared_per_block_optin, shared_reserved;
} ArchRow;

/* The CUDA C++ Programming Guide, "Technical Specifications per Compute
 * Capability"; everything else is the same from 7.0 to 12.0. */
static const ArchRow archs[] = {
  { "sm_70",  7, 0, 2048, 32,  96 * 1024,  96 * 1024,    0 },
  { "sm_75",  7, 5, 1024, 16,  64 * 1024,  64 * 1024,    0 },
  { "sm_80",  8, 0, 2048, 32, 164 * 1024, 163 * 1024, 1024 },
  { "sm_86",  8, 6, 1536, 16, 100 * 1024,  99 * 1024, 1024 },
  { "sm_89",  8, 9, 1536, 24, 100 * 1024,  99 * 1024, 1024 },
  { "sm_90",  9, 0, 2048, 32, 228 * 1024, 227 * 1024, 1024 },
  { "sm_100", 10, 0, 2048, 32, 228 * 1024, 227 * 1024, 1024 },
  { "sm_120", 12, 0, 1536, 24, 100 * 1024,  99 * 1024, 1024 },
};

static const gchar * const arch_names[] = {
  "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", NULL
};

G_STATIC_ASSERT (G_N_ELEMENTS (arch_names) == G_N_ELEMENTS (archs) + 1);

/**
 * inspector_sm_limits_list_archs:
 *
 * Returns: (transfer none) (array zero-terminated=1): the architectures
 *   inspector_sm_limits_for_arch() knows, oldest first
 */
const gchar * const *
inspector_sm_limits_list_archs (void)
{
  return arch_names;
}

static void
fill (const ArchRow     *row,
      InspectorSmLimits *limits)
{
  *limits = (InspectorSmLimits) {
    .major = row->major,
    .minor = row->minor,
    .n_sms = 0,
    .warp_size = 32,
    .max_threads_per_block = 1024,
    .max_threads_per_sm = row->max_threads_per_sm,
    .max_blocks_per_sm = row->max_blocks_per_sm,
    .regs_per_sm = 64 * 1024,
    .regs_per_block = 64 * 1024,
    .max_regs_per_thread = 255,
    .reg_alloc_unit = 256,
    .sub_partitions = 4,
    .shared_per_sm = row->shared_per_sm,
    .shared_per_block = 48 * 1024,
    .shared_per_block_optin = row->shared_per_block_optin,
    .shared_reserved_per_block = row->shared_reserved,
    .shared_alloc_unit = 128,
  };
}

/**
 * inspector_sm_limits_for_arch:
 * @arch: "sm_90", "compute_90" or "90"; a suffix ("sm_90a") is the same SM
 * @limits: (out caller-allocates): filled in
 * @error: return location for a #GError
 *
 * Returns: %TRUE, or %FALSE with %ATOMR_ERROR_NOT_SUPPORTED naming @arch
 *   when its SM is not in the table (before sm_70, or unknown)
 */
gboolean
inspector_sm_limits_for_arch (const gchar        *arch,
                              InspectorSmLimits  *limits,
                              GError            **error)
{
  const gchar *digits = arch ? arch : "";
  guint64 cc = 0;
  gchar *end = NULL;

  if (g_str_has_prefix (digits, "sm_"))
    digits += 3;
  else if (g_str_has_prefix (digits, "compute_"))
    digits += 8;
  cc = g_ascii_strtoull (digits, &end, 10);
  if (end != digits && (*end == '\0' || *end == 'a' || *end == 'f') && cc < 1000)
    for (guint i = 0; i < G_N_ELEMENTS (archs); i++)
      if ((guint64) (archs[i].major * 10 + archs[i].minor) == cc)
        {
          fill (&archs[i], limits);
          return TRUE;
        }
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
               /* Translators: %s is what the user chose, e.g. "sm_61" */
               _("No occupancy table for the architecture “%s”: known are sm_70, sm_75, sm_80, sm_86, "
                 "sm_89, sm_90, sm_100 and sm_120"), arch ? arch : "");
  return FALSE;
}

/**
 * inspector_sm_limits_for_device:
 * @device: a GPU
 * @limits: (out caller-allocates): filled in
 * @error: return location for a #GError
 *
 * The limits of @device's compute capability, with its number of SMs.
 *
 * Returns: %TRUE, or %FALSE with @error set as inspector_sm_limits_for_arch()
 */
gboolean
inspector_sm_limits_for_device (AtomrDevice        *device,
                                InspectorSmLimits  *limits,
                                GError            **error)
{
  gint major = 0, minor = 0;
  g_autofree gchar *arch = NULL;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), FALSE);
  atomr_device_get_compute_capability (device, &major, &minor);
  arch = g_strdup_printf ("sm_%d%d", major, minor);
  if (!inspector_sm_limits_for_arch (arch, limits, error))
    return FALSE;
  limits->n_sms = atomr_device_get_multiprocessor_count (device);
  return TRUE;
}

static gint
round_up (gint64 x,
          gint64 unit)
{
  return (gint) ((x + unit - 1) / unit * unit);
}

/**
 * inspector_occupancy_compute:
 * @limits: the SM
 * @registers_per_thread: the kernel's registers (EIATTR_REGCOUNT, CU_FUNC_ATTRIBUTE_NUM_REGS)
 * @static_shared: the kernel's static shared memory, bytes
 * @dynamic_shared: the launch's dynamic shared memory, bytes
 * @block_size: threads per block
 * @result: (out caller-allocates): the occupancy
 * @error: return location for a #GError
 *
 * A block the SM cannot hold at all (too many registers, too much shared
 * memory, more threads than a block may have) is a result: 0 blocks, with
 * @result->limited_by saying why.
 *
 * Returns: %FALSE with %ATOMR_ERROR_INVALID_ARGUMENT naming the value when
 *   @block_size is not positive or @registers_per_thread is negative
 */
gboolean
inspector_occupancy_compute (const InspectorSmLimits  *limits,
                             gint                      registers_per_thread,
                             guint                     static_shared,
                             guint                     dynamic_shared,
                             gint                      block_size,
                             InspectorOccupancy       *result,
                             GError                  **error)
{
  gint warps, regs_per_warp;
  guint64 shared;
  gint best;

  g_return_val_if_fail (limits != NULL && limits->warp_size > 0, FALSE);
  g_return_val_if_fail (result != NULL, FALSE);
  if (block_size <= 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   _("The block size must be at least 1 thread, not %d"), block_size);
      return FALSE;
    }
  if (registers_per_thread < 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   _("A kernel cannot use %d registers per thread"), registers_per_thread);
      return FALSE;
    }

  *result = (InspectorOccupancy) { 0 };
  result->max_warps_per_sm = limits->max_threads_per_sm / limits->warp_size;
  warps = (block_size + limits->warp_size - 1) / limits->warp_size;

  /* warps */
  result->limit_warps = block_size > limits->max_threads_per_block ? 0 : result->max_warps_per_sm / warps;

  /* registers: per warp in allocation units, per sub-partition */
  regs_per_warp = round_up ((gint64) registers_per_thread * limits->warp_size, limits->reg_alloc_unit);
  result->registers_per_block = regs_per_warp * warps;
  if (registers_per_thread > limits->max_regs_per_thread ||
      (gint64) regs_per_warp * round_up (warps, limits->sub_partitions) > limits->regs_per_block ||
      (gint64) regs_per_warp * warps > limits->regs_per_block)
    result->limit_registers = 0;
  else if (regs_per_warp == 0)
    result->limit_registers = G_MAXINT;
  else
    result->limit_registers = (limits->regs_per_sm / limits->sub_partitions / regs_per_warp) *
                              limits->sub_partitions / warps;

  /* shared memory, the driver's reserve included */
  shared = (guint64) static_shared + dynamic_shared + limits->shared_reserved_per_block;
  shared = (shared + limits->shared_alloc_unit - 1) / limits->shared_alloc_unit * limits->shared_alloc_unit;
  result->shared_per_block = (guint) MIN (shared, G_MAXUINT);
  if (shared > (guint64) limits->shared_per_block_optin + limits->shared_reserved_per_block)
    result->limit_shared = 0;
  else if (shared == 0)
    result->limit_shared = G_MAXINT;
  else
    result->limit_shared = (gint) (limits->shared_per_sm / shared);

  /* block slots */
  result->limit_blocks = limits->max_blocks_per_sm;

  /* the smallest wins; on a tie the order of the enum (as the calculator lists them) */
  best = result->limit_warps;
  result->limited_by = INSPECTOR_OCCUPANCY_LIMIT_WARPS;
  if (result->limit_registers < best)
    {
      best = result->limit_registers;
      result->limited_by = INSPECTOR_OCCUPANCY_LIMIT_REGISTERS;
    }
  if (result->limit_shared < best)
    {
      best = result->limit_shared;
      result->limited_by = INSPECTOR_OCCUPANCY_LIMIT_SHARED_MEMORY;
    }
  if (result->limit_blocks < best)
    {
      best = result->limit_blocks;
      result->limited_by = INSPECTOR_OCCUPANCY_LIMIT_BLOCKS;
    }
  result->blocks_per_sm = best;
  result->warps_per_sm = best * warps;
  result->occupancy = (gdouble) result->warps_per_sm / result->max_warps_per_sm;
  return TRUE;
}

/**
 * inspector_occupancy_limit_to_string:
 * @limit: a limit
 *
 * Returns: what @limit is, translated
 */
const gchar *
inspector_occupancy_limit_to_string (InspectorOccupancyLimit limit)
{
  switch (limit)
    {
    case INSPECTOR_OCCUPANCY_LIMIT_WARPS:
      return _("Warps per SM");
    case INSPECTOR_OCCUPANCY_LIMIT_REGISTERS:
      return _("Registers");
    case INSPECTOR_OCCUPANCY_LIMIT_SHARED_MEMORY:
      return _("Shared memory");
    case INSPECTOR_OCCUPANCY_LIMIT_BLOCKS:
    default:
      return _("Blocks per SM");
    }
}
