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
#include "nvrtc/atomr-module-private.h"
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

/* Parameter layouts read off PTX .entry declarations: offsets are each
 * parameter's alignment (.align N, else the scalar's size) applied to the
 * running end, as the driver lays the parameter buffer out. */
static void
test_ptx_layout (void)
{
  static const gchar ptx[] =
    ".visible .entry empty()\n{\n ret;\n}\n"
    ".visible .entry k2(\n .param .u32 k2_param_0\n)\n{ ret; }\n"
    ".visible .entry k(\n"
    "\t.param .u64 k_param_0,\n"
    "\t.param .u32 k_param_1,\n"
    "\t.param .align 8 .b8 k_param_2[16],\n"
    "\t.param .u8 k_param_3,\n"
    "\t.param .f64 k_param_4,\n"
    "\t.param .u64 .ptr .global .align 16 k_param_5,\n"
    "\t.param .u16 k_param_6,\n"
    "\t.param .u64 .ptr.global.align 4 k_param_7,\n"
    "\t.param .f32 k_param_8,\n"
    "\t.param .align 4 .b8 k_param_9 [3]\n"
    ")\n{ ret; }\n"
    ".visible .entry h(\n .param .f16 h_param_0\n)\n{ ret; }\n"
    ".visible .entry v(\n .param .v2 .u32 v_param_0\n)\n{ ret; }\n";
  struct { const gchar *name; const gchar *layout; } cases[] = {
    { "empty", "" },
    { "k2", "0:4:i" },
    { "k", "0:8:q,8:4:i,16:16:s,32:1:i,40:8:f,48:8:q,56:2:i,64:8:q,72:4:f,76:3:s" },
    { "h", NULL },        /* .f16: not followed, the driver is asked */
    { "v", NULL },        /* vector types likewise */
    { "absent", NULL },
    { "emp", NULL },      /* a prefix of an entry is not the entry */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *layout = atomr_ptx_param_layout (ptx, sizeof ptx - 1, cases[i].name);
      g_test_message ("%s: %s", cases[i].name, layout ? layout : "(none)");
      g_assert_cmpstr (layout, ==, cases[i].layout);
      if (layout)
        g_assert_true (atomr_param_layout_parse (layout, NULL, NULL, NULL));
    }
}

/* Stored layouts are checked strictly; anything off is refused (a cache
 * entry holding it is damaged, a miss). */
static void
test_layout_parse (void)
{
  const gchar *good[] = { "", "0:4:i", "0:8:q,8:4:i,16:16:s,32:1:i,40:8:f", "0:1:i,1:3:s,4:4:f", "0:32764:s" };
  const gchar *bad[] = {
    "0:8:q,4:4:i",      /* overlap */
    "2:4:i",            /* a misaligned scalar */
    "0:3:i",            /* no such integer */
    "0:4:q",            /* a 64-bit word of 4 bytes */
    "0:2:f",            /* no 16-bit float class */
    "0:8:x",            /* unknown class */
    "0:8:q,",           /* trailing comma */
    "0:8:q,,8:4:i",
    "-1:4:i",
    "0:0:s",
    "0:32768:s",        /* beyond the parameter space */
    "32764:4:i",
    " 0:8:q",
    "0:8:q8",
    "0:8",
    "0:8:",
    "99999999999:4:i",
    "?",
  };
  g_autoptr(GArray) offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr(GArray) sizes = g_array_new (FALSE, FALSE, sizeof (gsize));

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    g_assert_true (atomr_param_layout_parse (good[i], NULL, NULL, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_test_message ("%s", bad[i]);
      g_assert_false (atomr_param_layout_parse (bad[i], NULL, NULL, NULL));
    }
  g_assert_true (atomr_param_layout_parse (good[2], offsets, sizes, NULL));
  g_assert_cmpuint (offsets->len, ==, 5);
  g_assert_cmpuint (g_array_index (offsets, gsize, 2), ==, 16);
  g_assert_cmpuint (g_array_index (sizes, gsize, 2), ==, 16);
  g_assert_cmpuint (g_array_index (offsets, gsize, 4), ==, 40);
}

/* A compile records each kernel's layout, and a kernel built from it has
 * the table and the types the driver query and the PTX scan gave. */
static void
test_kernel_from_layout (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);

  g_assert_no_error (error);
  {
    g_autoptr(AtomrModule) module = compile (SAXPY_SOURCE, "saxpy");
    const gsize sizes[] = { 4, 8, 8, 8 };
    g_autoptr(AtomrKernel) old = atomr_kernel_new_unloaded (device, module, "saxpy", sizes, 4);
    g_autoptr(AtomrKernel) kernel = NULL;

    g_assert_cmpstr (atomr_module_get_param_layout (module, "saxpy"), ==, "0:4:f,8:8:q,16:8:q,24:8:q");
    kernel = atomr_kernel_new_unloaded_layout (device, module, "saxpy");
    g_assert_nonnull (kernel);
    g_assert_cmpuint (atomr_kernel_get_n_params (kernel), ==, 4);
    for (guint i = 0; i < 4; i++)
      {
        g_assert_cmpuint (atomr_kernel_get_param_size (kernel, i), ==, sizes[i]);
        g_assert_cmpstr (atomr_kernel_get_param_type (kernel, i), ==, atomr_kernel_get_param_type (old, i));
      }
    g_assert_cmpuint (atomr_kernel_get_param_offset (kernel, 1), ==, 8);
    {
      g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
      atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (
          atomr_kernel_args_add_i32 (a, 2), x), x), 16);
      expect_rejected (kernel, a, "argument 0", ".f32");
    }
    /* No attribute query on a kernel without a function: zeros. */
    g_assert_cmpint (atomr_kernel_get_num_registers (kernel), ==, 0);
    g_assert_cmpint (atomr_kernel_get_max_threads_per_block (kernel), ==, 0);
  }
  {
    g_autoptr(AtomrModule) module = compile (SCALE_SOURCE, SCALE_FLOAT_256);
    g_autoptr(AtomrKernel) kernel = NULL;

    g_assert_cmpstr (atomr_module_get_param_layout (module, SCALE_FLOAT_256), ==, "0:8:q,8:4:f,12:4:i");
    /* by lowered name too */
    g_assert_cmpstr (atomr_module_get_param_layout (module, SCALE_FLOAT_256_LOWERED), ==, "0:8:q,8:4:f,12:4:i");
    kernel = atomr_kernel_new_unloaded_layout (device, module, SCALE_FLOAT_256);
    g_assert_nonnull (kernel);
    /* Types from the mangled name where it names them. */
    g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 0), ==, "float *");
    g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 1), ==, "float");
    g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 2), ==, "int");
  }
}

/* A layout that contradicts the mangled name (a pointer in 4 bytes, a
 * double as an integer, a parameter too many) is not used. */
static void
test_layout_contradicting_name (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  const gchar *bad[] = { "0:4:i,4:4:f,8:4:i", "0:8:q,8:8:q,16:4:i", "0:8:q,8:4:f", "0:8:q,8:4:f,12:4:i,16:4:i" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(AtomrModule) module = compile (SCALE_SOURCE, SCALE_FLOAT_256);
      AtomrModuleContent *c = atomr_module_get_content (module);
      g_autoptr(AtomrKernel) kernel = NULL;

      g_free (c->param_layouts[0]);
      c->param_layouts[0] = g_strdup (bad[i]);
      kernel = atomr_kernel_new_unloaded_layout (device, module, SCALE_FLOAT_256);
      g_assert_null (kernel);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel-params/demangle", test_demangle);
  g_test_add_func ("/kernel-params/ptx-layout", test_ptx_layout);
  g_test_add_func ("/kernel-params/layout-parse", test_layout_parse);
  if (atomr_nvrtc_load (NULL))
    {
      g_test_add_func ("/kernel-params/cpp-kernel", test_cpp_kernel);
      g_test_add_func ("/kernel-params/struct-and-scalar-kinds", test_struct_and_scalar_kinds);
      g_test_add_func ("/kernel-params/extern-c-kernel", test_extern_c_kernel);
      g_test_add_func ("/kernel-params/kernel-from-layout", test_kernel_from_layout);
      g_test_add_func ("/kernel-params/layout-contradicting-name", test_layout_contradicting_name);
    }
  return g_test_run ();
}
