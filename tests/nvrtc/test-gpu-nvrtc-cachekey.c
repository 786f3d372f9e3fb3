/* test-gpu-nvrtc-cachekey.c — issue 9 part A on a real GPU
 *
 * Skips without a device.  Covers: launch arguments rejected by parameter
 * type on a kernel loaded through cuFuncGetParamInfo (a float for an int,
 * a u64 for a pointer, a buffer for a float) without anything running;
 * a correct launch with the same kernel; and -maxrregcount reaching
 * nvJitLink under LTO (the register count of the linked kernel).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>

#include "nvrtc-test-sources.h"

static AtomrDevice *device;

static gboolean
need_device (void)
{
  if (device == NULL)
    {
      g_test_skip ("no CUDA device");
      return FALSE;
    }
  return TRUE;
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static void
wait_for (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static AtomrKernel *
compile_kernel (AtomrNvrtcActor *actor, const gchar *source, const gchar *name,
                AtomrCompileOptions *options, GError **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  atomr_nvrtc_actor_compile_async (actor, source, name, options, NULL, store_result, &result);
  wait_for (&result);
  return atomr_nvrtc_actor_compile_finish (actor, result, error);
}

static gboolean
launch (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
        AtomrKernelArgs *args, GError **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  atomr_nvrtc_actor_launch_async (actor, kernel, config, args, NULL, store_result, &result);
  wait_for (&result);
  return atomr_nvrtc_actor_launch_finish (actor, result, error);
}

static void
expect_rejected (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
                 AtomrKernelArgs *args, const gchar *what)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (launch (actor, kernel, config, args, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_test_message ("rejected: %s", error->message);
  g_assert_nonnull (strstr (error->message, what));
}

/* scale<float, 256> (float *x, float factor, int n) */
static void
test_argument_types (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autoptr(AtomrBuffer) x = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (256, 256);
  g_autoptr(GBytes) ones = NULL;
  g_autoptr(GBytes) after = NULL;
  gfloat host[256];

  if (!need_device ())
    return;
  actor = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_compile_options_set_arch (o, ATOMR_ARCH_NATIVE);
  kernel = compile_kernel (actor, SCALE_SOURCE, SCALE_FLOAT_256, o, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 0), ==, "float *");
  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 2), ==, "int");

  for (guint i = 0; i < 256; i++)
    host[i] = 1.0f;
  ones = g_bytes_new (host, sizeof host);
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 256, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (x, ones, NULL, &error));

  {
    /* float for int n */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_f32 (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (a, x), 2), 256);
    expect_rejected (actor, kernel, config, a, "argument 2");
  }
  {
    /* u64 (a raw address) for float *x */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_i32 (atomr_kernel_args_add_f32 (atomr_kernel_args_add_u64 (a, 0x1000), 2), 256);
    expect_rejected (actor, kernel, config, a, "pointer");
  }
  {
    /* int for float factor */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_i32 (atomr_kernel_args_add_i32 (atomr_kernel_args_add_buffer (a, x), 2), 256);
    expect_rejected (actor, kernel, config, a, "argument 1");
  }
  /* Nothing ran. */
  after = atomr_buffer_download_sync (x, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (after, ones));
  g_clear_pointer (&after, g_bytes_unref);

  {
    g_autoptr(AtomrKernelArgs) good = atomr_kernel_args_new ();
    const gfloat *got;
    atomr_kernel_args_add_i32 (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (good, x), 2), 256);
    g_assert_true (launch (actor, kernel, config, good, &error));
    g_assert_no_error (error);
    after = atomr_buffer_download_sync (x, NULL, &error);
    g_assert_no_error (error);
    got = g_bytes_get_data (after, NULL);
    for (guint i = 0; i < 256; i++)
      g_assert_cmpfloat (got[i], ==, 1.0f * 2 + 256);
  }
}

#define HEAVY_SOURCE \
  "extern \"C\" __global__ void heavy (const float *x, float *y)\n" \
  "{\n" \
  "  float acc[64];\n" \
  "#pragma unroll\n" \
  "  for (int i = 0; i < 64; i++) acc[i] = x[threadIdx.x + i * 256];\n" \
  "#pragma unroll\n" \
  "  for (int k = 1; k < 8; k++)\n" \
  "#pragma unroll\n" \
  "    for (int i = 0; i < 64; i++) acc[i] = acc[i] * acc[(i + k) % 64] + 1.0f;\n" \
  "  float s = 0;\n" \
  "#pragma unroll\n" \
  "  for (int i = 0; i < 64; i++) s += acc[i];\n" \
  "  y[threadIdx.x] = s;\n" \
  "}\n"

static gint
lto_registers (AtomrNvrtcActor *actor, guint max_registers)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autofree gchar *arch = atomr_device_get_arch (device);

  atomr_compile_options_set_arch (o, arch);
  atomr_compile_options_set_lto (o, TRUE);
  if (max_registers)
    atomr_compile_options_set_max_registers (o, max_registers);
  kernel = compile_kernel (actor, HEAVY_SOURCE, "heavy", o, &error);
  g_assert_no_error (error);
  return atomr_kernel_get_num_registers (kernel);
}

/* Before, nvJitLink got only -arch and -lto: maxrregcount=32 was lost. */
static void
test_lto_maxrregcount (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  gint free_regs, capped;

  if (!need_device ())
    return;
  actor = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  free_regs = lto_registers (actor, 0);
  capped = lto_registers (actor, 32);
  g_test_message ("LTO registers: %d unconstrained, %d with maxrregcount=32", free_regs, capped);
  g_assert_cmpint (free_regs, >, 32);
  g_assert_cmpint (capped, <=, 32);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  device = atomr_device_get (0, &error);
  if (device == NULL)
    g_test_message ("skipping: %s", error->message);
  g_test_add_func ("/gpu/cachekey/argument-types", test_argument_types);
  g_test_add_func ("/gpu/cachekey/lto-maxrregcount", test_lto_maxrregcount);
  rc = g_test_run ();
  g_clear_object (&device);
  return rc;
}
