/* inspector-occupancy.h — theoretical occupancy of a kernel on an SM
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>

G_BEGIN_DECLS

/* What one SM of an architecture offers (the CUDA C++ Programming Guide's
 * table of compute capabilities; the same fields as cudaDeviceProp). */
typedef struct {
  gint  major, minor;
  gint  n_sms;                      /* 0 when not known (an architecture, no device) */
  gint  warp_size;                  /* 32 */
  gint  max_threads_per_block;      /* 1024 */
  gint  max_threads_per_sm;
  gint  max_blocks_per_sm;
  gint  regs_per_sm;
  gint  regs_per_block;
  gint  max_regs_per_thread;        /* 255 */
  gint  reg_alloc_unit;             /* registers, per warp */
  gint  sub_partitions;             /* registers are split among these */
  guint shared_per_sm;              /* bytes, the largest carveout */
  guint shared_per_block;           /* bytes without opting in */
  guint shared_per_block_optin;     /* bytes with cudaFuncAttributeMaxDynamicSharedMemorySize */
  guint shared_reserved_per_block;  /* bytes the driver keeps per block (sm_80+) */
  guint shared_alloc_unit;          /* bytes */
} InspectorSmLimits;

/* What limits the number of resident blocks (the smallest limit). */
typedef enum {
  INSPECTOR_OCCUPANCY_LIMIT_WARPS,
  INSPECTOR_OCCUPANCY_LIMIT_REGISTERS,
  INSPECTOR_OCCUPANCY_LIMIT_SHARED_MEMORY,
  INSPECTOR_OCCUPANCY_LIMIT_BLOCKS,
} InspectorOccupancyLimit;

typedef struct {
  gint                    blocks_per_sm;     /* resident blocks; 0: the block cannot run */
  gint                    warps_per_sm;      /* resident warps */
  gint                    max_warps_per_sm;
  gdouble                 occupancy;         /* warps_per_sm / max_warps_per_sm, 0…1 */
  gint                    limit_warps;       /* blocks each resource allows (G_MAXINT: unlimited) */
  gint                    limit_registers;
  gint                    limit_shared;
  gint                    limit_blocks;
  InspectorOccupancyLimit limited_by;
  gint                    registers_per_block;  /* allocated */
  guint                   shared_per_block;     /* allocated, reserved bytes included */
} InspectorOccupancy;

const gchar * const *inspector_sm_limits_list_archs (void);
gboolean    inspector_sm_limits_for_arch    (const gchar              *arch,
                                             InspectorSmLimits        *limits,
                                             GError                  **error);
gboolean    inspector_sm_limits_for_device  (AtomrDevice              *device,
                                             InspectorSmLimits        *limits,
                                             GError                  **error);
gboolean    inspector_occupancy_compute     (const InspectorSmLimits  *limits,
                                             gint                      registers_per_thread,
                                             guint                     static_shared,
                                             guint                     dynamic_shared,
                                             gint                      block_size,
                                             InspectorOccupancy       *result,
                                             GError                  **error);
const gchar *inspector_occupancy_limit_to_string (InspectorOccupancyLimit limit);

G_END_DECLS
