/* test-kernel-params.c — launch arguments checked by parameter type
 *
 * Kernels are compiled by the real NVRTC (no GPU needed); their parameter
 * tables are given to unloaded kernels on the host test device, which is
 * what atomr_kernel_new_loaded() reads from cuFuncGetParamInfo() on a GPU.
 * The types come from the mangled (lowered) name, or the PTX for
 * extern "C" kernels.  Before, only sizes were compared: a float for an
 * int and a u64 for a pointer were accepted.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-device-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"

#include "nvrtc-test-sources.h"

static void
test_demangle (void)
{
  struct { const gchar *mangled; const gchar *types; } cases[] = {
    { "_Z5scaleIfLi256EEvPT_S0_i", "float *|float|int" },
    { "_Z5scalePfS_fi", "float *|float *|float|int" },
    { "_ZN2ns6kernelIdLi3EEEvPKT_PS1_S1_", "const double *|double *|double" },
    { "_Z1kv", "" },
    { "_Z3sumIN2ns4Vec3EEvPT_S2_", "ns::Vec3 *|ns::Vec3" },
    { "_Z1k6__halfPS_", "__half|__half *" },
    { "_ZN12_GLOBAL__N_11kEPi", "int *" },
    { "_Z1kPPfS0_", "float * *|float * *" },
    { "_Z3fooPKfPfiy", "const float *|float *|int|unsigned long long" },
    { "_Z1kSt4pairIifE", "std::pair<...>" },
  };
  const gchar *refused[] = { "saxpy", "_Z", "_Z1kIiJfdEEvT_", "_Z5scaleIfLi256EEvPT_S9_i", "_Z1kT_",
                             "_Z999999x", "_ZN3fooE", "_Z1kPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPf" };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GPtrArray) types = atomr_demangle_param_types (cases[i].mangled);
      g_autoptr(GString) joined = g_string_new (NULL);

      g_assert_nonnull (types);
      for (guint k = 0; k < types->len; k++)
        g_string_append_printf (joined, "%s%s", k ? "|" : "", ((AtomrParamType *) types->pdata[k])->type);
      g_assert_cmpstr (joined->str, ==, cases[i].types);
    }
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr(GPtrArray) types = atomr_demangle_param_types (refused[i]);
      g_assert_null (types);
    }
}

static AtomrModule *
compile (const gchar *source, const gchar *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  AtomrModule *module;

  atomr_compile_options_add_name_expression (o, name);
  module = atomr_nvrtc_compile (source, NULL, o, NULL, &error);
  g_assert_no_error (error);
  return module;
}

static void
expect_rejected (AtomrKernel *kernel, AtomrKernelArgs *args, const gchar *what1, const gchar *what2)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (atomr_kernel_check_args (kernel, args, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, what1));
  g_assert_nonnull (strstr (error->message, what2));
}

/* scale<float, 256> (float *x, float factor, int n) */
static void
test_cpp_kernel (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrModule) module = compile (SCALE_SOURCE, SCALE_FLOAT_256);
  const gsize sizes[] = { 8, 4, 4 };
  g_autoptr(AtomrKernel) kernel = atomr_kernel_new_unloaded (device, module, SCALE_FLOAT_256, sizes, 3);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 0), ==, "float *");
  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 1), ==, "float");
  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 2), ==, "int");
  g_assert_null (atomr_kernel_get_param_type (kernel, 3));

  {
    g_autoptr(AtomrKernelArgs) good = atomr_kernel_args_new ();
    atomr_kernel_args_add_i32 (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (good, x), 2), 16);
    g_assert_true (atomr_kernel_check_args (kernel, good, &error));
    g_assert_no_error (error);
  }
  {
    /* A float for int n: same size, wrong type. */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_f32 (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (a, x), 2), 16);
    expect_rejected (kernel, a, "argument 2", "int");
  }
  {
    /* An int for float factor. */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_i32 (atomr_kernel_args_add_i32 (atomr_kernel_args_add_buffer (a, x), 2), 16);
    expect_rejected (kernel, a, "argument 1", "float");
  }
  {
    /* A u64 (an address, say) for the pointer. */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_i32 (atomr_kernel_args_add_f32 (atomr_kernel_args_add_u64 (a, 0x7f0000001000), 2), 16);
    expect_rejected (kernel, a, "argument 0", "pointer");
  }
  {
    /* Raw bytes are checked by size only. */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    gfloat two = 2;
    g_autoptr(GBytes) b = g_bytes_new (&two, 4);
    atomr_kernel_args_add_i32 (atomr_kernel_args_add_bytes (atomr_kernel_args_add_buffer (a, x), b), 16);
    g_assert_true (atomr_kernel_check_args (kernel, a, &error));
  }
}

/* A buffer for a struct passed by value, and dtype scalars. */
static void
test_struct_and_scalar_kinds (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrModule) module = compile (
    "struct Pair { float *p; float *q; };\n"
    "__global__ void pairs (Pair pair, double scale, unsigned long long n) {}\n", "pairs");
  const gsize sizes[] = { 16, 8, 8 };
  g_autoptr(AtomrKernel) kernel = atomr_kernel_new_unloaded (device, module, "pairs", sizes, 3);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  gchar raw[16] = { 0 };
  g_autoptr(GBytes) pair = g_bytes_new (raw, 16);

  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 0), ==, "Pair");
  {
    g_autoptr(AtomrKernelArgs) good = atomr_kernel_args_new ();
    atomr_kernel_args_add_scalar (atomr_kernel_args_add_scalar (atomr_kernel_args_add_bytes (good, pair),
                                                                ATOMR_DTYPE_F64, 2, 0),
                                  ATOMR_DTYPE_U64, 16, 0);
    g_assert_true (atomr_kernel_check_args (kernel, good, &error));
    g_assert_no_error (error);
  }
  {
    /* dtype I64 for the double. */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_u64 (atomr_kernel_args_add_scalar (atomr_kernel_args_add_bytes (a, pair),
                                                             ATOMR_DTYPE_I64, 2, 0), 16);
    expect_rejected (kernel, a, "argument 1", "double");
  }
  {
    /* A double for unsigned long long n. */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_f64 (atomr_kernel_args_add_f64 (atomr_kernel_args_add_bytes (a, pair), 2), 16);
    expect_rejected (kernel, a, "argument 2", "unsigned long long");
  }
  {
    /* A buffer where a double is passed by value (8 bytes both). */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_u64 (atomr_kernel_args_add_buffer (atomr_kernel_args_add_bytes (a, pair), x), 16);
    expect_rejected (kernel, a, "argument 1", "buffer");
  }
}

/* extern "C": only the PTX classes are known; .u64 may be a pointer or
 * a 64-bit integer (documented). */
static void
test_extern_c_kernel (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrModule) module = compile (SAXPY_SOURCE, "saxpy");
  const gsize sizes[] = { 4, 8, 8, 8 };
  g_autoptr(AtomrKernel) kernel = atomr_kernel_new_unloaded (device, module, "saxpy", sizes, 4);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);

  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 0), ==, ".f32");
  g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 1), ==, "pointer or 64-bit integer");
  {
    g_autoptr(AtomrKernelArgs) good = atomr_kernel_args_new ();
    atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (
        atomr_kernel_args_add_f32 (good, 2), x), x), 16);
    g_assert_true (atomr_kernel_check_args (kernel, good, &error));
    g_assert_no_error (error);
  }
  {
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (
        atomr_kernel_args_add_i32 (a, 2), x), x), 16);
    expect_rejected (kernel, a, "argument 0", ".f32");
  }
  {
    /* A double for the size_t: .u64 is never floating point. */
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    atomr_kernel_args_add_f64 (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (
        atomr_kernel_args_add_f32 (a, 2), x), x), 16);
    expect_rejected (kernel, a, "argument 3", "64-bit");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel-params/demangle", test_demangle);
  if (atomr_nvrtc_load (NULL))
    {
      g_test_add_func ("/kernel-params/cpp-kernel", test_cpp_kernel);
      g_test_add_func ("/kernel-params/struct-and-scalar-kinds", test_struct_and_scalar_kinds);
      g_test_add_func ("/kernel-params/extern-c-kernel", test_extern_c_kernel);
    }
  return g_test_run ();
}
