/* test-gpu-nvrtc.c — compiling and launching kernels on a real GPU
 *
 * Skips without a device.  Covers: saxpy and a templated kernel on random
 * data against a CPU reference, argument count/size mismatches rejected
 * without launching, dynamic shared memory (and its opt-in above the
 * default), parameter tables and attributes, clusters on sm_90+, a kernel
 * of an older generation rejected after atomr_device_reset(), and a cache
 * hit in a fresh process (this program re-executed) that launches
 * correctly without loading NVRTC.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core/atomr-device-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-module-private.h"
#include "nvrtc/atomr-nvrtc-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"

#include "nvrtc-test-sources.h"

static AtomrDevice *device;
static const gchar *self_path;
static gchar *cache_dir;

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

static AtomrNvrtcActor *
new_actor (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (cache_dir);
  AtomrNvrtcActor *actor = atomr_nvrtc_actor_new (device, &error);

  g_assert_no_error (error);
  atomr_nvrtc_actor_set_cache (actor, cache);
  return actor;
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

static AtomrBuffer *
buffer_with (AtomrDtype dtype, gconstpointer data, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new (data, n * atomr_dtype_get_size (dtype));
  AtomrBuffer *buffer = atomr_buffer_new (device, dtype, n, &error);

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  return buffer;
}

static gpointer
download (AtomrBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);

  g_assert_no_error (error);
  return g_bytes_unref_to_data (g_steal_pointer (&bytes), &(gsize) { 0 });
}

static gfloat *
random_floats (gsize n)
{
  gfloat *v = g_new (gfloat, n);
  for (gsize i = 0; i < n; i++)
    v[i] = (gfloat) g_random_double_range (-10, 10);
  return v;
}

/* Runs saxpy on @n random elements and checks every one. */
static void
run_saxpy (AtomrNvrtcActor *actor, AtomrKernel *kernel, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_autofree gfloat *x = random_floats (n);
  g_autofree gfloat *y = random_floats (n);
  g_autoptr(AtomrBuffer) bx = buffer_with (ATOMR_DTYPE_F32, x, n);
  g_autoptr(AtomrBuffer) by = buffer_with (ATOMR_DTYPE_F32, y, n);
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (n, 256);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autofree gfloat *got = NULL;
  const gfloat a = 1.75f;

  atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer_read_only (
      atomr_kernel_args_add_f32 (args, a), bx), by), n);
  g_assert_true (launch (actor, kernel, config, args, &error));
  g_assert_no_error (error);
  got = download (by);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (got[i], a * x[i] + y[i], 1e-4f * (1 + fabsf (a * x[i] + y[i])));
}

static void
test_saxpy (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *arch = NULL;

  if (!need_device ())
    return;
  actor = new_actor ();
  atomr_compile_options_set_arch (options, ATOMR_ARCH_NATIVE);
  kernel = compile_kernel (actor, SAXPY_SOURCE, "saxpy", options, &error);
  g_assert_no_error (error);
  arch = atomr_device_get_arch (device);
  g_assert_cmpstr (atomr_module_get_arch (atomr_kernel_get_module (kernel)), ==, arch);
  g_assert_nonnull (atomr_module_get_cubin (atomr_kernel_get_module (kernel)));

  /* The parameter table of (float, const float *, float *, size_t). */
  g_assert_cmpuint (atomr_kernel_get_n_params (kernel), ==, 4);
  g_assert_cmpuint (atomr_kernel_get_param_size (kernel, 0), ==, 4);
  g_assert_cmpuint (atomr_kernel_get_param_size (kernel, 1), ==, 8);
  g_assert_cmpuint (atomr_kernel_get_param_size (kernel, 3), ==, 8);
  g_assert_cmpuint (atomr_kernel_get_param_offset (kernel, 1), ==, 8);
  g_assert_cmpint (atomr_kernel_get_num_registers (kernel), >, 0);
  g_assert_cmpint (atomr_kernel_get_max_threads_per_block (kernel), >=, 256);
  g_assert_cmpuint (atomr_kernel_get_generation (kernel), ==, atomr_device_get_generation (device));
  g_assert_false (atomr_kernel_is_stale (kernel));

  run_saxpy (actor, kernel, 100003);
  run_saxpy (actor, kernel, 1);
}

static void
test_templated (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kf = NULL;
  g_autoptr(AtomrKernel) kd = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const gint n = 70000;
  g_autofree gfloat *xf = random_floats (n);
  g_autofree gdouble *xd = g_new (gdouble, n);

  if (!need_device ())
    return;
  actor = new_actor ();
  for (gint i = 0; i < n; i++)
    xd[i] = g_random_double_range (-100, 100);
  atomr_compile_options_set_arch (options, ATOMR_ARCH_NATIVE);
  atomr_compile_options_add_name_expression (options, SCALE_FLOAT_256);
  atomr_compile_options_add_name_expression (options, SCALE_DOUBLE_128);
  atomr_nvrtc_actor_compile_module_async (actor, SCALE_SOURCE, options, NULL, store_result, &result);
  wait_for (&result);
  module = atomr_nvrtc_actor_compile_module_finish (actor, result, &error);
  g_assert_no_error (error);
  kf = atomr_nvrtc_actor_get_kernel (actor, module, SCALE_FLOAT_256, &error);
  g_assert_no_error (error);
  kd = atomr_nvrtc_actor_get_kernel (actor, module, SCALE_DOUBLE_128, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (atomr_kernel_get_lowered_name (kf), ==, SCALE_FLOAT_256_LOWERED);
  g_assert_cmpstr (atomr_kernel_get_lowered_name (kd), ==, SCALE_DOUBLE_128_LOWERED);

  {
    g_autoptr(AtomrBuffer) b = buffer_with (ATOMR_DTYPE_F32, xf, n);
    g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (n, 256);
    g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
    g_autofree gfloat *got = NULL;

    atomr_kernel_args_add_i32 (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, b), -0.5f), n);
    g_assert_true (launch (actor, kf, config, args, &error));
    g_assert_no_error (error);
    got = download (b);
    for (gint i = 0; i < n; i++)
      g_assert_cmpfloat_with_epsilon (got[i], xf[i] * -0.5f + 256.0f, 1e-3f);
  }
  {
    g_autoptr(AtomrBuffer) b = buffer_with (ATOMR_DTYPE_F64, xd, n);
    g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (n, 128);
    g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
    g_autofree gdouble *got = NULL;

    atomr_kernel_args_add_i32 (atomr_kernel_args_add_f64 (atomr_kernel_args_add_buffer (args, b), 3.0), n);
    g_assert_true (launch (actor, kd, config, args, &error));
    g_assert_no_error (error);
    got = download (b);
    for (gint i = 0; i < n; i++)
      g_assert_cmpfloat_with_epsilon (got[i], xd[i] * 3.0 + 128.0, 1e-9);
  }
}

static void
test_argument_mismatch (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(GError) error = NULL;
  const gsize n = 1000;
  g_autofree gfloat *x = random_floats (n);
  g_autofree gfloat *y = random_floats (n);
  g_autoptr(AtomrBuffer) bx = NULL;
  g_autoptr(AtomrBuffer) by = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (n, 128);
  g_autoptr(AtomrKernelArgs) too_few = atomr_kernel_args_new ();
  g_autoptr(AtomrKernelArgs) too_many = atomr_kernel_args_new ();
  g_autoptr(AtomrKernelArgs) wrong_size = atomr_kernel_args_new ();
  g_autofree gfloat *after = NULL;

  if (!need_device ())
    return;
  actor = new_actor ();
  kernel = compile_kernel (actor, SAXPY_SOURCE, "saxpy", NULL, &error);
  g_assert_no_error (error);
  bx = buffer_with (ATOMR_DTYPE_F32, x, n);
  by = buffer_with (ATOMR_DTYPE_F32, y, n);

  atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (atomr_kernel_args_add_f32 (too_few, 2), bx), by);
  g_assert_false (launch (actor, kernel, config, too_few, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "3 arguments"));
  g_clear_error (&error);

  atomr_kernel_args_add_i32 (atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (
      atomr_kernel_args_add_buffer (atomr_kernel_args_add_f32 (too_many, 2), bx), by), n), 0);
  g_assert_false (launch (actor, kernel, config, too_many, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* n passed as a 4-byte int where the kernel takes a size_t. */
  atomr_kernel_args_add_i32 (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (
      atomr_kernel_args_add_f32 (wrong_size, 2), bx), by), (gint32) n);
  g_assert_false (launch (actor, kernel, config, wrong_size, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "argument 3"));
  g_clear_error (&error);

  /* Nothing ran: y is untouched. */
  after = download (by);
  g_assert_cmpmem (after, n * sizeof (gfloat), y, n * sizeof (gfloat));
}

static void
test_dynamic_shared_memory (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(GError) error = NULL;
  const guint block = 256, blocks = 40, n = block * blocks;
  g_autofree gint32 *in = g_new (gint32, n);
  g_autoptr(AtomrBuffer) bin = NULL;
  g_autoptr(AtomrBuffer) bout = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new (blocks, 1, 1, block, 1, 1);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autofree gint32 *got = NULL;

  if (!need_device ())
    return;
  for (guint i = 0; i < n; i++)
    in[i] = (gint32) g_random_int ();
  actor = new_actor ();
  kernel = compile_kernel (actor, REVERSE_SOURCE, "reverse_blocks", NULL, &error);
  g_assert_no_error (error);
  bin = buffer_with (ATOMR_DTYPE_I32, in, n);
  bout = atomr_buffer_new (device, ATOMR_DTYPE_I32, n, &error);
  atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer_read_only (args, bin), bout);

  atomr_launch_config_set_shared_memory (config, block * sizeof (gint32));
  g_assert_true (launch (actor, kernel, config, args, &error));
  g_assert_no_error (error);
  got = download (bout);
  for (guint b = 0; b < blocks; b++)
    for (guint t = 0; t < block; t++)
      g_assert_cmpint (got[b * block + t], ==, in[b * block + block - 1 - t]);

  /* Above the default limit: refused before launch, accepted after the
   * opt-in. */
  atomr_launch_config_set_shared_memory (config, 64 * 1024);
  g_assert_false (launch (actor, kernel, config, args, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "shared memory"));
  g_clear_error (&error);
  g_assert_true (atomr_kernel_set_max_dynamic_shared_memory (kernel, 64 * 1024, &error));
  g_assert_no_error (error);
  g_assert_cmpint (atomr_kernel_get_max_dynamic_shared_memory (kernel), ==, 64 * 1024);
  g_assert_true (launch (actor, kernel, config, args, &error));
  g_assert_no_error (error);
}

static void
test_cluster_launch (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new (8, 1, 1, 128, 1, 1);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(AtomrBuffer) out = NULL;
  g_autofree guint32 *got = NULL;
  gint major = 0, minor = 0;
  const gchar *source =
    "extern \"C\" __global__ void cluster_rank (unsigned *out)\n"
    "{\n"
    "  unsigned rank, size;\n"
    "  asm (\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\" (rank));\n"
    "  asm (\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\" (size));\n"
    "  if (threadIdx.x == 0)\n"
    "    out[blockIdx.x] = rank + 100u * size;\n"
    "}\n";

  if (!need_device ())
    return;
  atomr_device_get_compute_capability (device, &major, &minor);
  if (major < 9)
    {
      g_test_skip ("clusters need sm_90 or later");
      return;
    }
  actor = new_actor ();
  atomr_compile_options_set_arch (options, ATOMR_ARCH_NATIVE);
  atomr_compile_options_set_std (options, "c++17");
  kernel = compile_kernel (actor, source, "cluster_rank", options, &error);
  g_assert_no_error (error);
  out = atomr_buffer_new (device, ATOMR_DTYPE_U32, 8, &error);
  atomr_kernel_args_add_buffer (args, out);
  atomr_launch_config_set_cluster (config, 2, 1, 1);
  g_assert_true (launch (actor, kernel, config, args, &error));
  g_assert_no_error (error);
  got = download (out);
  for (guint i = 0; i < 8; i++)
    g_assert_cmpuint (got[i], ==, 200 + i % 2);
}

static void
test_stale_after_reset (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) old = NULL;
  g_autoptr(AtomrKernel) fresh = NULL;
  g_autoptr(AtomrBuffer) b = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new (1, 1, 1, 1, 1, 1);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(GError) error = NULL;
  guint generation;

  if (!need_device ())
    return;
  actor = new_actor ();
  old = compile_kernel (actor, EMPTY_SOURCE, "empty", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (launch (actor, old, config, args, &error));
  generation = atomr_device_get_generation (device);

  g_assert_true (atomr_device_reset (device, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_kernel_is_stale (old));
  g_assert_false (launch (actor, old, config, args, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE);
  g_assert_nonnull (strstr (error->message, "generation"));
  g_clear_error (&error);
  {
    g_autoptr(GError) attr_error = NULL;
    g_assert_false (atomr_kernel_set_max_dynamic_shared_memory (old, 1024, &attr_error));
    g_assert_error (attr_error, ATOMR_ERROR, ATOMR_ERROR_STALE);
  }

  /* Compiling again (a memory hit) gives a kernel of the new generation. */
  fresh = compile_kernel (actor, EMPTY_SOURCE, "empty", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (atomr_kernel_get_module (fresh)), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
  g_assert_cmpuint (atomr_kernel_get_generation (fresh), ==, generation + 1);
  g_assert_true (launch (actor, fresh, config, args, &error));
  g_assert_no_error (error);
}

/* The child of test_fresh_process_cache_hit. */
static int
child_main (const gchar *dir)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();

  cache_dir = g_strdup (dir);
  device = atomr_device_get (0, &error);
  if (device == NULL)
    {
      g_printerr ("child: %s\n", error->message);
      return 2;
    }
  actor = new_actor ();
  atomr_compile_options_set_arch (options, ATOMR_ARCH_NATIVE);
  kernel = compile_kernel (actor, SAXPY_SOURCE, "saxpy", options, &error);
  if (kernel == NULL)
    {
      g_printerr ("child: %s\n", error->message);
      return 3;
    }
  if (atomr_module_get_cache_status (atomr_kernel_get_module (kernel)) != ATOMR_CACHE_STATUS_DISK_HIT
      || atomr_nvrtc_get_load_count () != 0)
    {
      g_printerr ("child: cache status %d, NVRTC loaded %u times\n",
                  atomr_module_get_cache_status (atomr_kernel_get_module (kernel)),
                  atomr_nvrtc_get_load_count ());
      return 4;
    }
  run_saxpy (actor, kernel, 4097);   /* aborts on a wrong element */
  g_clear_object (&kernel);
  g_clear_object (&actor);
  g_clear_object (&device);
  g_print ("child ok\n");
  return 0;
}

static void
test_fresh_process_cache_hit (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = NULL;
  g_autofree gchar *out = NULL;
  g_autofree gchar *err = NULL;
  g_auto(GStrv) envp = g_get_environ ();
  const gchar *argv[] = { self_path, NULL };
  gint status = 0;

  if (!need_device ())
    return;
  dir = g_dir_make_tmp ("atomr-gpu-cache-XXXXXX", &error);
  g_assert_no_error (error);
  {
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
    actor = new_actor ();
    atomr_nvrtc_actor_set_cache (actor, cache);
  }
  atomr_compile_options_set_arch (options, ATOMR_ARCH_NATIVE);
  kernel = compile_kernel (actor, SAXPY_SOURCE, "saxpy", options, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (atomr_kernel_get_module (kernel)), ==, ATOMR_CACHE_STATUS_MISS);

  envp = g_environ_setenv (envp, "ATOMR_TEST_GPU_CHILD", dir, TRUE);
  g_assert_true (g_spawn_sync (NULL, (gchar **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  g_test_message ("child: %s%s", out, err);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_nonnull (strstr (out, "child ok"));
  {
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
    g_assert_true (atomr_kernel_cache_gc (cache, 0, NULL, NULL, NULL));
  }
  g_rmdir (dir);
}

/* Parameter layouts read off the PTX at compile time (and stored in cache
 * entries) stand for cuFuncGetParamInfo() at load: for every kind of
 * parameter PTX declares (integers of each width, floats, 64-bit words,
 * __restrict__ pointers, structs of odd size and of 16-byte alignment,
 * many parameters, templates) they must be exactly what the driver says,
 * from a fresh compile and from a disk hit, and launches with them must
 * deliver every argument intact. */
#define LAYOUT_SOURCE \
  "struct __align__(16) V4 { float x, y, z, w; };\n" \
  "struct C3 { char a, b, c; };\n" \
  "struct D { char c; double d; };\n" \
  "extern \"C\" __global__ void mixed (char c, short s, int i, long long ll, float f, double d,\n" \
  "    C3 c3, V4 v, D dd, const float * __restrict__ p, unsigned char uc, float *out)\n" \
  "{ out[0] = c + s + i + (float) ll + f + (float) d + c3.a + c3.b + c3.c + v.x + v.y + v.z + v.w\n" \
  "           + dd.c + (float) dd.d + p[0] + uc; }\n" \
  "#define P8(x) int x##0, int x##1, int x##2, int x##3, int x##4, int x##5, int x##6, int x##7\n" \
  "extern \"C\" __global__ void many (P8(a), P8(b), P8(c), P8(d), P8(e), int *out)\n" \
  "{ out[0] = a0 + b1 + c2 + d3 + e7; }\n" \
  "extern \"C\" __global__ void noparams (void) { }\n" \
  "template <typename T> __global__ void tmpl (T a, const T *x, T *y, int n)\n" \
  "{ int k = blockIdx.x * blockDim.x + threadIdx.x; if (k < n) y[k] = a * x[k]; }\n"

static void
check_against_driver (AtomrKernel *kernel)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUfunction f = atomr_kernel_get_function (kernel);
  guint n = atomr_kernel_get_n_params (kernel);
  size_t offset = 0, size = 0;

  g_assert_nonnull (f);
  g_assert_true (atomr_device_enter (device, NULL));
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpint (cu->cuFuncGetParamInfo (f, i, &offset, &size), ==, CUDA_SUCCESS);
      g_test_message ("%s param %u: driver %zu+%zu, layout %" G_GSIZE_FORMAT "+%" G_GSIZE_FORMAT,
                      atomr_kernel_get_name (kernel), i, offset, size,
                      atomr_kernel_get_param_offset (kernel, i), atomr_kernel_get_param_size (kernel, i));
      g_assert_cmpuint (atomr_kernel_get_param_offset (kernel, i), ==, offset);
      g_assert_cmpuint (atomr_kernel_get_param_size (kernel, i), ==, size);
    }
  /* ... and no parameter more. */
  g_assert_cmpint (cu->cuFuncGetParamInfo (f, n, &offset, &size), !=, CUDA_SUCCESS);
  atomr_device_leave (device);
}

static void
test_param_layouts_match_driver (void)
{
  const gchar *names[] = { "mixed", "many", "noparams", "tmpl<float>", "tmpl<double>", "tmpl<char>" };
  g_autofree gchar *dir = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrKernelCache) writer = NULL;
  g_autoptr(AtomrKernelCache) reader = NULL;
  g_autofree gchar *arch = NULL;

  if (!need_device ())
    return;
  dir = g_dir_make_tmp ("atomr-gpu-layout-XXXXXX", NULL);
  writer = atomr_kernel_cache_new (dir);
  reader = atomr_kernel_cache_new (dir);
  atomr_kernel_cache_set_memory_capacity (reader, 0);
  arch = atomr_device_get_arch (device);
  atomr_compile_options_set_arch (options, arch);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    atomr_compile_options_add_name_expression (options, names[i]);

  for (guint pass = 0; pass < 2; pass++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrModule) module = atomr_nvrtc_compile_for_device (LAYOUT_SOURCE, NULL, options,
                                                                       pass == 0 ? writer : reader, device, &error);

      g_assert_no_error (error);
      g_assert_cmpint (atomr_module_get_cache_status (module), ==,
                       pass == 0 ? ATOMR_CACHE_STATUS_MISS : ATOMR_CACHE_STATUS_DISK_HIT);
      for (guint i = 0; i < G_N_ELEMENTS (names); i++)
        {
          g_autoptr(AtomrKernel) kernel = NULL;

          /* The layout is there, so the load used it. */
          g_assert_nonnull (atomr_module_get_param_layout (module, names[i]));
          g_test_message ("%s: %s", names[i], atomr_module_get_param_layout (module, names[i]));
          kernel = atomr_kernel_new_loaded (device, module, names[i], &error);
          g_assert_no_error (error);
          check_against_driver (kernel);
          /* Attributes come on demand. */
          g_assert_cmpint (atomr_kernel_get_max_threads_per_block (kernel), >, 0);
        }
    }

  /* A launch of mixed() through the actor (a disk hit now) delivers every
   * argument where the kernel reads it. */
  {
    g_autoptr(AtomrNvrtcActor) actor = NULL;
    g_autoptr(AtomrKernel) kernel = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
    g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new (1, 1, 1, 1, 1, 1);
    const gfloat p0 = 16, zero = 0;
    g_autoptr(AtomrBuffer) p = buffer_with (ATOMR_DTYPE_F32, &p0, 1);
    g_autoptr(AtomrBuffer) out = buffer_with (ATOMR_DTYPE_F32, &zero, 1);
    const gint16 s = 2;
    const gchar c3[3] = { 7, 8, 9 };
    const gfloat v4[4] = { 10, 11, 12, 13 };
    struct { gchar c; gdouble d; } dd = { 14, 15.5 };
    g_autofree gfloat *got = NULL;
    g_autoptr(GBytes) bs = g_bytes_new_static (&s, 2);
    g_autoptr(GBytes) bc3 = g_bytes_new_static (c3, 3);
    g_autoptr(GBytes) bv4 = g_bytes_new_static (v4, 16);
    g_autoptr(GBytes) bdd = g_bytes_new_static (&dd, sizeof dd);

    actor = atomr_nvrtc_actor_new (device, &error);
    g_assert_no_error (error);
    atomr_nvrtc_actor_set_cache (actor, reader);
    kernel = compile_kernel (actor, LAYOUT_SOURCE, "mixed", options, &error);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_module_get_cache_status (atomr_kernel_get_module (kernel)), ==,
                     ATOMR_CACHE_STATUS_DISK_HIT);
    check_against_driver (kernel);
    atomr_kernel_args_add_i8 (args, 1);
    atomr_kernel_args_add_bytes (args, bs);
    atomr_kernel_args_add_i32 (args, 3);
    atomr_kernel_args_add_i64 (args, 4);
    atomr_kernel_args_add_f32 (args, 5.5f);
    atomr_kernel_args_add_f64 (args, 6.25);
    atomr_kernel_args_add_bytes (args, bc3);
    atomr_kernel_args_add_bytes (args, bv4);
    atomr_kernel_args_add_bytes (args, bdd);
    atomr_kernel_args_add_buffer_read_only (args, p);
    atomr_kernel_args_add_u8 (args, 17);
    atomr_kernel_args_add_buffer (args, out);
    g_assert_true (launch (actor, kernel, config, args, &error));
    g_assert_no_error (error);
    got = download (out);
    g_assert_cmpfloat (got[0], ==, 154.25f);
  }
  {
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
    atomr_kernel_cache_gc (cache, 0, NULL, NULL, NULL);
  }
  g_rmdir (dir);
}

/* Where a launch's request lives: in the operation for a few arguments,
 * in an allocation of its own for many (wip6/soup).  Sixty-four launches
 * of put() are submitted back to back without a callback, each with
 * arguments that are dropped at once, so the requests wait in the
 * mailbox (their parameter pointers into the operation's storage) and the
 * operations are recycled; then wide() with 24 scalars (past the inline
 * storage).  Every value must land where the kernel reads it. */
static const gchar STORAGE_SOURCE[] =
  "extern \"C\" __global__ void put (int *out, int i, int v) { out[i] = v; }\n"
  "extern \"C\" __global__ void wide (int *out,\n"
  "  int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7,\n"
  "  int a8, int a9, int a10, int a11, int a12, int a13, int a14, int a15,\n"
  "  int a16, int a17, int a18, int a19, int a20, int a21, int a22, int a23)\n"
  "{\n"
  "  int a[24] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11,\n"
  "                a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23 };\n"
  "  int s = 0;\n"
  "  for (int k = 0; k < 24; k++) s += a[k] * (k + 1);\n"
  "  out[0] = s;\n"
  "}\n";

static void
test_launch_request_storage (void)
{
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) put = NULL;
  g_autoptr(AtomrKernel) wide = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrLaunchConfig) one = atomr_launch_config_new (1, 1, 1, 1, 1, 1);
  gint zeros[64] = { 0 };
  g_autoptr(AtomrBuffer) out = NULL;
  g_autoptr(AtomrBuffer) sum = NULL;
  g_autoptr(AtomrKernelArgs) wide_args = atomr_kernel_args_new ();
  g_autofree gint *got = NULL;
  gint expected = 0;

  if (!need_device ())
    return;
  actor = new_actor ();
  put = compile_kernel (actor, STORAGE_SOURCE, "put", NULL, &error);
  g_assert_no_error (error);
  wide = compile_kernel (actor, STORAGE_SOURCE, "wide", NULL, &error);
  g_assert_no_error (error);
  out = buffer_with (ATOMR_DTYPE_I32, zeros, 64);
  sum = buffer_with (ATOMR_DTYPE_I32, zeros, 1);

  for (gint i = 0; i < 64; i++)
    {
      AtomrKernelArgs *args = atomr_kernel_args_new ();
      atomr_kernel_args_add_buffer (args, out);
      atomr_kernel_args_add_i32 (args, i);
      atomr_kernel_args_add_i32 (args, 3 * i + 1);
      atomr_nvrtc_actor_launch_async (actor, put, one, args, NULL, NULL, NULL);
      atomr_kernel_args_unref (args);
    }
  atomr_kernel_args_add_buffer (wide_args, sum);
  for (gint k = 0; k < 24; k++)
    {
      atomr_kernel_args_add_i32 (wide_args, 100 + 7 * k);
      expected += (100 + 7 * k) * (k + 1);
    }
  g_assert_true (launch (actor, wide, one, wide_args, &error));
  g_assert_no_error (error);

  got = download (out);
  for (gint i = 0; i < 64; i++)
    g_assert_cmpint (got[i], ==, 3 * i + 1);
  g_clear_pointer (&got, g_free);
  got = download (sum);
  g_assert_cmpint (got[0], ==, expected);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  const gchar *child = g_getenv ("ATOMR_TEST_GPU_CHILD");
  int rc;

  if (child)
    return child_main (child);
  self_path = argv[0];
  g_test_init (&argc, &argv, NULL);
  device = atomr_device_get (0, &error);
  if (device == NULL)
    g_test_message ("skipping: %s", error->message);
  cache_dir = g_dir_make_tmp ("atomr-gpu-nvrtc-XXXXXX", NULL);

  g_test_add_func ("/gpu/nvrtc/saxpy", test_saxpy);
  g_test_add_func ("/gpu/nvrtc/templated", test_templated);
  g_test_add_func ("/gpu/nvrtc/argument-mismatch", test_argument_mismatch);
  g_test_add_func ("/gpu/nvrtc/dynamic-shared-memory", test_dynamic_shared_memory);
  g_test_add_func ("/gpu/nvrtc/cluster-launch", test_cluster_launch);
  g_test_add_func ("/gpu/nvrtc/fresh-process-cache-hit", test_fresh_process_cache_hit);
  g_test_add_func ("/gpu/nvrtc/param-layouts-match-driver", test_param_layouts_match_driver);
  g_test_add_func ("/gpu/nvrtc/stale-after-reset", test_stale_after_reset);
  g_test_add_func ("/gpu/nvrtc/launch-request-storage", test_launch_request_storage);

  rc = g_test_run ();
  {
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (cache_dir);
    atomr_kernel_cache_gc (cache, 0, NULL, NULL, NULL);
    g_rmdir (cache_dir);
  }
  g_free (cache_dir);
  g_clear_object (&device);
  return rc;
}
