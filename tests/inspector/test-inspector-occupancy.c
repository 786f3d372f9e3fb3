/* test-inspector-occupancy.c — the occupancy calculator against known values
 *
 * Hand-worked cases for sm_90 and sm_80 (the arithmetic is in the
 * comments), then a sweep that compares every result with the toolkit's
 * own calculator, cuda_occupancy.h (header-only, no device), fed the same
 * SM properties.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_occupancy.h>
#include <atomr.h>

#include "inspector-occupancy.h"

static InspectorOccupancy
compute (const gchar *arch,
         gint         regs,
         guint        static_shared,
         guint        dynamic_shared,
         gint         block)
{
  InspectorSmLimits limits;
  InspectorOccupancy occ;
  g_autoptr(GError) error = NULL;

  g_assert_true (inspector_sm_limits_for_arch (arch, &limits, &error));
  g_assert_no_error (error);
  g_assert_true (inspector_occupancy_compute (&limits, regs, static_shared, dynamic_shared, block, &occ, &error));
  g_assert_no_error (error);
  return occ;
}

static void
test_known_sm90 (void)
{
  InspectorOccupancy o;

  /* 32 registers, 256 threads: 8 warps of 1024 registers; 64 warp slots
   * → 8 blocks, registers 65536 / 8192 = 8 blocks: 100 % */
  o = compute ("sm_90", 32, 0, 0, 256);
  g_assert_cmpint (o.blocks_per_sm, ==, 8);
  g_assert_cmpint (o.warps_per_sm, ==, 64);
  g_assert_cmpfloat (o.occupancy, ==, 1.0);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_WARPS);

  /* 64 registers, 256 threads: 2048 per warp, 16384 per block → 4 blocks,
   * 32 of 64 warps: 50 % */
  o = compute ("sm_90", 64, 0, 0, 256);
  g_assert_cmpint (o.blocks_per_sm, ==, 4);
  g_assert_cmpfloat (o.occupancy, ==, 0.5);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_REGISTERS);
  g_assert_cmpint (o.registers_per_block, ==, 16384);

  /* 37 registers round up to 1280 per warp (37 × 32 = 1184 → 5 × 256):
   * 16384 / 1280 = 12 warps per sub-partition, 48 per SM; 128 threads
   * (4 warps) → 12 blocks, 75 % */
  o = compute ("sm_90", 37, 0, 0, 128);
  g_assert_cmpint (o.blocks_per_sm, ==, 12);
  g_assert_cmpfloat (o.occupancy, ==, 0.75);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_REGISTERS);

  /* 32 threads, few registers: 32 block slots → 32 warps, 50 % */
  o = compute ("sm_90", 16, 0, 0, 32);
  g_assert_cmpint (o.blocks_per_sm, ==, 32);
  g_assert_cmpfloat (o.occupancy, ==, 0.5);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_BLOCKS);

  /* 48 KiB static shared + 1 KiB reserve = 50176 bytes: 233472 / 50176
   * = 4 blocks of 256 threads, 50 % */
  o = compute ("sm_90", 32, 48 * 1024, 0, 256);
  g_assert_cmpint (o.blocks_per_sm, ==, 4);
  g_assert_cmpuint (o.shared_per_block, ==, 49 * 1024);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_SHARED_MEMORY);

  /* 100 bytes round up to 128, + 1024: 1152 → 202 blocks by shared
   * memory, so the 8 of the warps */
  o = compute ("sm_90", 32, 100, 0, 256);
  g_assert_cmpuint (o.shared_per_block, ==, 1152);
  g_assert_cmpint (o.limit_shared, ==, 233472 / 1152);
  g_assert_cmpint (o.blocks_per_sm, ==, 8);

  /* 1024 threads at 255 registers: 8192 per warp × 32 warps > 65536: never */
  o = compute ("sm_90", 255, 0, 0, 1024);
  g_assert_cmpint (o.blocks_per_sm, ==, 0);
  g_assert_cmpfloat (o.occupancy, ==, 0.0);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_REGISTERS);

  /* more than 1024 threads: no block */
  o = compute ("sm_90", 16, 0, 0, 1025);
  g_assert_cmpint (o.blocks_per_sm, ==, 0);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_WARPS);

  /* more shared memory than a block may opt in to (227 KiB): no block */
  o = compute ("sm_90", 16, 0, 227 * 1024 + 1, 128);
  g_assert_cmpint (o.blocks_per_sm, ==, 0);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_SHARED_MEMORY);

  /* sm_90a is the same SM */
  o = compute ("sm_90a", 64, 0, 0, 256);
  g_assert_cmpint (o.blocks_per_sm, ==, 4);
}

static void
test_known_other_archs (void)
{
  InspectorOccupancy o;

  /* sm_86: 1536 threads = 48 warps; 256-thread blocks → 6 blocks, 100 % */
  o = compute ("sm_86", 32, 0, 0, 256);
  g_assert_cmpint (o.blocks_per_sm, ==, 6);
  g_assert_cmpfloat (o.occupancy, ==, 1.0);
  /* sm_80: 100 KiB dynamic + 1 KiB: one block in 164 KiB */
  o = compute ("sm_80", 32, 0, 100 * 1024, 256);
  g_assert_cmpint (o.blocks_per_sm, ==, 1);
  g_assert_cmpint (o.limited_by, ==, INSPECTOR_OCCUPANCY_LIMIT_SHARED_MEMORY);
  /* sm_75: no reserve, 16 block slots, 32 warps */
  o = compute ("compute_75", 16, 0, 0, 64);
  g_assert_cmpint (o.blocks_per_sm, ==, 16);
  g_assert_cmpfloat (o.occupancy, ==, 1.0);
}

static void
test_bad_input (void)
{
  InspectorSmLimits limits;
  InspectorOccupancy occ;
  g_autoptr(GError) error = NULL;

  g_assert_false (inspector_sm_limits_for_arch ("sm_61", &limits, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "sm_61"));
  g_clear_error (&error);
  g_assert_false (inspector_sm_limits_for_arch ("banana", &limits, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  g_assert_false (inspector_sm_limits_for_arch (NULL, &limits, &error));
  g_clear_error (&error);

  g_assert_true (inspector_sm_limits_for_arch ("sm_90", &limits, NULL));
  g_assert_false (inspector_occupancy_compute (&limits, 32, 0, 0, 0, &occ, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "0"));
  g_clear_error (&error);
  g_assert_false (inspector_occupancy_compute (&limits, -3, 0, 0, 128, &occ, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "-3"));
}

/* The toolkit's calculator on the same SM, opting in to the largest
 * shared memory a block may have (as the inspector assumes). */
static gint
reference_blocks (const InspectorSmLimits *l,
                  gint                     regs,
                  guint                    static_shared,
                  guint                    dynamic_shared,
                  gint                     block)
{
  cudaOccDeviceProp prop = { 0 };
  cudaOccFuncAttributes attr = { 0 };
  cudaOccDeviceState state = { 0 };
  cudaOccResult result = { 0 };
  cudaOccError status;

  prop.computeMajor = l->major;
  prop.computeMinor = l->minor;
  prop.maxThreadsPerBlock = l->max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = l->max_threads_per_sm;
  prop.regsPerBlock = l->regs_per_block;
  prop.regsPerMultiprocessor = l->regs_per_sm;
  prop.warpSize = l->warp_size;
  prop.sharedMemPerBlock = l->shared_per_block;
  prop.sharedMemPerMultiprocessor = l->shared_per_sm;
  prop.numSms = 132;
  prop.sharedMemPerBlockOptin = l->shared_per_block_optin;
  prop.reservedSharedMemPerBlock = l->shared_reserved_per_block;
  attr.maxThreadsPerBlock = 1024;
  attr.numRegs = regs;
  attr.sharedSizeBytes = static_shared;
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = l->shared_per_block_optin - MIN (static_shared, l->shared_per_block_optin);
  attr.numBlockBarriers = 1;
  state.cacheConfig = CACHE_PREFER_NONE;
  state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
  status = cudaOccMaxActiveBlocksPerMultiprocessor (&result, &prop, &attr, &state, block, dynamic_shared);
  g_assert_cmpint (status, ==, CUDA_OCC_SUCCESS);
  return result.activeBlocksPerMultiprocessor;
}

static void
test_matches_toolkit (gconstpointer data)
{
  const gchar *arch = data;
  static const gint blocks[] = { 1, 32, 33, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1000, 1024 };
  static const guint shared[] = { 0, 100, 4096, 12 * 1024, 48 * 1024, 64 * 1024, 99 * 1024, 150 * 1024 };
  InspectorSmLimits limits;
  guint n = 0;

  g_assert_true (inspector_sm_limits_for_arch (arch, &limits, NULL));
  for (gint regs = 0; regs <= 255; regs += (regs < 40 ? 1 : 7))
    for (guint b = 0; b < G_N_ELEMENTS (blocks); b++)
      for (guint s = 0; s < G_N_ELEMENTS (shared); s++)
        for (guint dyn = 0; dyn < 2; dyn++)
          {
            guint st = dyn ? 0 : MIN (shared[s], 48 * 1024);   /* static shared is at most 48 KiB */
            guint dy = dyn ? shared[s] : 0;
            InspectorOccupancy occ;

            if (st + dy > limits.shared_per_block_optin)
              continue;   /* the toolkit refuses such a launch as bad input */
            g_assert_true (inspector_occupancy_compute (&limits, regs, st, dy, blocks[b], &occ, NULL));
            if (occ.blocks_per_sm != reference_blocks (&limits, regs, st, dy, blocks[b]))
              g_error ("%s, %d registers, %u + %u bytes shared, %d threads: %d blocks, the toolkit says %d",
                       arch, regs, st, dy, blocks[b], occ.blocks_per_sm,
                       reference_blocks (&limits, regs, st, dy, blocks[b]));
            n++;
          }
  g_test_message ("%s: %u cases agree with cuda_occupancy.h", arch, n);
  g_assert_cmpuint (n, >, 1000);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/inspector/occupancy/known-sm90", test_known_sm90);
  g_test_add_func ("/inspector/occupancy/known-other-archs", test_known_other_archs);
  g_test_add_func ("/inspector/occupancy/bad-input", test_bad_input);
  for (const gchar * const *a = inspector_sm_limits_list_archs (); *a; a++)
    {
      g_autofree gchar *path = g_strdup_printf ("/inspector/occupancy/matches-toolkit/%s", *a);
      g_test_add_data_func (path, *a, test_matches_toolkit);
    }
  return g_test_run ();
}
