/* test-nvrtc.c — NVRTC compiles, kernel cache and NVRTC actor without a GPU
 *
 * NVRTC needs no GPU: everything here runs on a CPU-only machine (CI).
 * Processes that must start fresh (lazy loading, concurrent writers) are
 * this program re-executed with ATOMR_TEST_CHILD set.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "nvrtc/atomr-kernel-cache-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"

#include "nvrtc-test-sources.h"
#include "cache-test-log.h"

static const gchar *self_path;

static gchar *
make_tmpdir (void)
{
  g_autoptr(GError) error = NULL;
  gchar *dir = g_dir_make_tmp ("atomr-nvrtc-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  if (dir)
    {
      while ((name = g_dir_read_name (dir)))
        {
          g_autofree gchar *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR))
            rm_rf (child);
          else
            g_unlink (child);
        }
    }
  g_rmdir (path);
}

static AtomrCompileOptions *
options_for (const gchar *name)
{
  AtomrCompileOptions *o = atomr_compile_options_new ();
  atomr_compile_options_add_name_expression (o, name);
  return o;
}

static AtomrModule *
compile_ok (const gchar *source, AtomrCompileOptions *options, AtomrKernelCache *cache)
{
  g_autoptr(GError) error = NULL;
  AtomrModule *module = atomr_nvrtc_compile (source, NULL, options, cache, &error);
  g_assert_no_error (error);
  g_assert_nonnull (module);
  return module;
}

static guint
count_files (const gchar *dir_path, const gchar *prefix, const gchar *suffix)
{
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const gchar *name;
  guint n = 0;

  while (dir && (name = g_dir_read_name (dir)))
    if ((prefix == NULL || g_str_has_prefix (name, prefix)) && (suffix == NULL || g_str_has_suffix (name, suffix)))
      n++;
  return n;
}

static gchar *
entry_file (const gchar *dir, AtomrModule *module)
{
  g_autofree gchar *name = g_strconcat (atomr_module_get_key (module), ".akc", NULL);
  return g_build_filename (dir, name, NULL);
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

static void
test_flags_every_option (void)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_auto(GStrv) empty = atomr_compile_options_get_flags (o);
  g_auto(GStrv) flags = NULL;
  const gchar *expected[] = {
    "--gpu-architecture=sm_90a",
    "--std=c++17",
    "--relocatable-device-code=true",
    "--dlink-time-opt",
    "--use_fast_math",
    "--ftz=true",
    "--maxrregcount=64",
    "--generate-line-info",
    "--device-debug",
    "--pch",
    "--include-path=/opt/inc",
    "--include-path=/opt/inc2",
    "--define-macro=N=256",
    "--define-macro=USE_FAST",
    "-Xptxas=-v",
    NULL
  };

  g_assert_cmpuint (g_strv_length (empty), ==, 0);
  atomr_compile_options_set_arch (o, "sm_90a");
  atomr_compile_options_set_std (o, "17");
  g_assert_cmpstr (atomr_compile_options_get_std (o), ==, "c++17");
  atomr_compile_options_set_fast_math (o, TRUE);
  atomr_compile_options_set_flush_to_zero (o, TRUE);
  atomr_compile_options_set_max_registers (o, 64);
  atomr_compile_options_set_lto (o, TRUE);
  atomr_compile_options_set_relocatable (o, TRUE);
  atomr_compile_options_set_line_info (o, TRUE);
  atomr_compile_options_set_debug (o, TRUE);
  atomr_compile_options_set_precompiled_headers (o, TRUE);
  atomr_compile_options_add_include_path (atomr_compile_options_add_include_path (o, "/opt/inc"), "/opt/inc2");
  atomr_compile_options_add_define (atomr_compile_options_add_define (o, "N", "256"), "USE_FAST", NULL);
  atomr_compile_options_add_name_expression (o, "k<int>");
  atomr_compile_options_add_extra_flag (o, "-Xptxas=-v");
  flags = atomr_compile_options_get_flags (o);
  g_assert_cmpstrv (flags, expected);
  g_assert_true (atomr_compile_options_validate (o, NULL));

  /* Name expressions are not flags; copies are equal; properties notify. */
  {
    g_autoptr(AtomrCompileOptions) copy = atomr_compile_options_copy (o);
    g_auto(GStrv) copy_flags = atomr_compile_options_get_flags (copy);
    g_assert_cmpstrv (copy_flags, expected);
    g_assert_cmpstr (atomr_compile_options_get_name_expressions (copy)[0], ==, "k<int>");
  }
  {
    g_autoptr(AtomrCompileOptions) n = atomr_compile_options_new ();
    g_auto(GStrv) native_flags = NULL;
    guint max = 0;
    atomr_compile_options_set_arch (n, ATOMR_ARCH_NATIVE);
    native_flags = atomr_compile_options_get_flags (n);
    g_assert_cmpuint (g_strv_length (native_flags), ==, 0);
    g_object_set (n, "max-registers", 32, "fast-math", TRUE, NULL);
    g_object_get (n, "max-registers", &max, NULL);
    g_assert_cmpuint (max, ==, 32);
    g_assert_true (atomr_compile_options_get_fast_math (n));
  }
}

static void
test_options_validation (void)
{
  const gchar *bad_arch[] = { "sm_7", "sm_50", "gfx90a", "sm_90x", "sm_", "sm_130" };
  const gchar *good_arch[] = { "sm_75", "sm_80", "sm_90a", "sm_100f", "sm_120", "compute_90" };

  for (guint i = 0; i < G_N_ELEMENTS (bad_arch); i++)
    {
      g_autoptr(AtomrCompileOptions) o = atomr_compile_options_set_arch (atomr_compile_options_new (), bad_arch[i]);
      g_autoptr(GError) error = NULL;
      /* set_arch returns self for chaining; keep the only reference once */
      g_assert_false (atomr_compile_options_validate (o, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, bad_arch[i]));
    }
  for (guint i = 0; i < G_N_ELEMENTS (good_arch); i++)
    {
      g_autoptr(AtomrCompileOptions) o = atomr_compile_options_set_arch (atomr_compile_options_new (), good_arch[i]);
      g_assert_true (atomr_compile_options_validate (o, NULL));
    }
  {
    g_autoptr(AtomrCompileOptions) o = atomr_compile_options_set_std (atomr_compile_options_new (), "c++98x");
    g_autoptr(GError) error = NULL;
    g_assert_false (atomr_compile_options_validate (o, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "c++98x"));
  }
  {
    g_autoptr(AtomrCompileOptions) o = atomr_compile_options_add_define (atomr_compile_options_new (), "1BAD", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_false (atomr_compile_options_validate (o, &error));
    g_assert_nonnull (strstr (error->message, "1BAD"));
  }
  {
    g_autoptr(GBytes) obj = g_bytes_new_static ("x", 1);
    g_autoptr(AtomrCompileOptions) o = atomr_compile_options_add_link_ltoir (atomr_compile_options_new (), obj);
    g_autoptr(GError) error = NULL;
    g_assert_false (atomr_compile_options_validate (o, &error));
    g_assert_nonnull (strstr (error->message, "lto"));
  }
  {
    /* LTO needs a real architecture. */
    g_autoptr(AtomrCompileOptions) o = options_for ("saxpy");
    g_autoptr(GError) error = NULL;
    atomr_compile_options_set_lto (o, TRUE);
    g_assert_null (atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, NULL, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "sm_NN"));
  }
}

/* ------------------------------------------------------------------ */
/* Compiles                                                            */

static void
test_compile_plain (void)
{
  g_autoptr(AtomrCompileOptions) o = options_for ("saxpy");
  g_autoptr(AtomrModule) ptx_module = NULL;
  g_autoptr(AtomrModule) cubin_module = NULL;
  g_autofree gchar *version = NULL;
  const gchar *ptx;
  gsize size;

  ptx_module = compile_ok (SAXPY_SOURCE, o, NULL);
  g_assert_cmpint (atomr_module_get_cache_status (ptx_module), ==, ATOMR_CACHE_STATUS_NONE);
  g_assert_nonnull (atomr_module_get_ptx (ptx_module));
  ptx = g_bytes_get_data (atomr_module_get_ptx (ptx_module), &size);
  g_assert_nonnull (g_strstr_len (ptx, size, ".entry saxpy"));
  g_assert_cmpstr (atomr_module_get_lowered_name (ptx_module, "saxpy"), ==, "saxpy");
  g_assert_null (atomr_module_get_lowered_name (ptx_module, "nope"));
  version = atomr_nvrtc_get_version (NULL);
  g_assert_cmpstr (atomr_module_get_nvrtc_version (ptx_module), ==, version);
  g_assert_cmpfloat (atomr_module_get_compile_time_ms (ptx_module), >, 0);

  /* A real architecture gives a CUBIN (an ELF file). */
  atomr_compile_options_set_arch (o, "sm_90");
  cubin_module = compile_ok (SAXPY_SOURCE, o, NULL);
  g_assert_nonnull (atomr_module_get_cubin (cubin_module));
  g_assert_cmpmem (g_bytes_get_data (atomr_module_get_cubin (cubin_module), NULL), 4, "\177ELF", 4);
  g_assert_cmpstr (atomr_module_get_arch (cubin_module), ==, "sm_90");
  g_assert_cmpstr (atomr_module_get_flags (cubin_module)[0], ==, "--gpu-architecture=sm_90");
}

static void
test_compile_template_lowered_names (void)
{
  g_autoptr(AtomrCompileOptions) o = options_for (SCALE_FLOAT_256);
  g_autoptr(AtomrModule) module = NULL;
  const gchar *ptx;
  gsize size;

  atomr_compile_options_add_name_expression (o, SCALE_DOUBLE_128);
  module = compile_ok (SCALE_SOURCE, o, NULL);
  /* Real mangled names from nvrtcGetLoweredName, not the expressions. */
  g_assert_cmpstr (atomr_module_get_lowered_name (module, SCALE_FLOAT_256), ==, SCALE_FLOAT_256_LOWERED);
  g_assert_cmpstr (atomr_module_get_lowered_name (module, SCALE_DOUBLE_128), ==, SCALE_DOUBLE_128_LOWERED);
  g_assert_cmpuint (g_strv_length ((gchar **) atomr_module_get_kernel_names (module)), ==, 2);
  ptx = g_bytes_get_data (atomr_module_get_ptx (module), &size);
  g_assert_nonnull (g_strstr_len (ptx, size, SCALE_FLOAT_256_LOWERED));
  g_assert_nonnull (g_strstr_len (ptx, size, SCALE_DOUBLE_128_LOWERED));
}

static void
test_compile_error_log (void)
{
  g_autoptr(AtomrCompileOptions) o = options_for ("broken");
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) error2 = NULL;
  g_autoptr(AtomrCompileOptions) o2 = options_for ("does_not_exist");

  g_assert_null (atomr_nvrtc_compile (BROKEN_SOURCE, "broken.cu", o, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE);
  /* NVRTC's log, with the file name and the line number (3). */
  g_assert_nonnull (strstr (error->message, "broken.cu(3)"));
  g_assert_nonnull (strstr (error->message, "undeclared_variable"));

  /* A name expression that names nothing. */
  g_assert_null (atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o2, NULL, &error2));
  g_assert_error (error2, ATOMR_ERROR, ATOMR_ERROR_COMPILE);
  g_assert_nonnull (strstr (error2->message, "does_not_exist"));
}

#define LTO_LIB_SOURCE \
  "__device__ float twice (float x) { return 2.0f * x; }\n"
#define LTO_MAIN_SOURCE \
  "extern __device__ float twice (float x);\n" \
  "extern \"C\" __global__ void doubler (float *x) { x[threadIdx.x] = twice (x[threadIdx.x]); }\n"

static void
test_lto_compile_and_link (void)
{
  g_autoptr(AtomrCompileOptions) lib_options = atomr_compile_options_new ();
  g_autoptr(AtomrCompileOptions) main_options = options_for ("doubler");
  g_autoptr(AtomrCompileOptions) unresolved = NULL;
  g_autoptr(AtomrModule) lib = NULL;
  g_autoptr(AtomrModule) linked = NULL;
  g_autoptr(GError) error = NULL;

  /* The library: relocatable LTO-IR of a device function, no kernel. */
  atomr_compile_options_set_arch (lib_options, "sm_90");
  atomr_compile_options_set_lto (lib_options, TRUE);
  atomr_compile_options_set_relocatable (lib_options, TRUE);
  lib = atomr_nvrtc_compile (LTO_LIB_SOURCE, "lib.cu", lib_options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (atomr_module_get_ltoir (lib));
  g_assert_nonnull (atomr_module_get_cubin (lib));   /* linked on its own too */

  atomr_compile_options_set_arch (main_options, "sm_90");
  atomr_compile_options_set_lto (main_options, TRUE);
  atomr_compile_options_set_relocatable (main_options, TRUE);
  unresolved = atomr_compile_options_copy (main_options);
  atomr_compile_options_add_link_ltoir (main_options, atomr_module_get_ltoir (lib));
  linked = atomr_nvrtc_compile (LTO_MAIN_SOURCE, "main.cu", main_options, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (atomr_module_get_ltoir (linked));
  g_assert_nonnull (atomr_module_get_cubin (linked));
  g_assert_cmpmem (g_bytes_get_data (atomr_module_get_cubin (linked), NULL), 4, "\177ELF", 4);

  /* Without the library the link fails, with nvJitLink's log. */
  g_assert_null (atomr_nvrtc_compile (LTO_MAIN_SOURCE, "main.cu", unresolved, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE);
  g_assert_nonnull (strstr (error->message, "nvJitLink"));
}

/* ------------------------------------------------------------------ */
/* Cache                                                               */

static void
test_cache_levels (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = options_for (SCALE_FLOAT_256);
  g_autoptr(AtomrModule) miss = NULL;
  g_autoptr(AtomrModule) mem = NULL;
  g_autoptr(AtomrModule) disk = NULL;
  guint compiles;
  guint64 mh, dh, mi;

  atomr_compile_options_set_arch (o, "sm_80");
  miss = compile_ok (SCALE_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (miss), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpuint (strlen (atomr_module_get_key (miss)), ==, 64);
  g_assert_cmpuint (count_files (dir, NULL, ".akc"), ==, 1);

  compiles = atomr_nvrtc_get_compile_count ();
  mem = compile_ok (SCALE_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (mem), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
  g_assert_cmpstr (atomr_module_get_key (mem), ==, atomr_module_get_key (miss));

  atomr_kernel_cache_clear_memory (cache);
  disk = compile_ok (SCALE_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (disk), ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_assert_cmpuint (atomr_nvrtc_get_compile_count (), ==, compiles);
  g_assert_true (g_bytes_equal (atomr_module_get_cubin (disk), atomr_module_get_cubin (miss)));
  g_assert_cmpstr (atomr_module_get_lowered_name (disk, SCALE_FLOAT_256), ==, SCALE_FLOAT_256_LOWERED);
  g_assert_cmpstrv (atomr_module_get_flags (disk), atomr_module_get_flags (miss));
  g_assert_cmpstr (atomr_module_get_nvrtc_version (disk), ==, atomr_module_get_nvrtc_version (miss));

  atomr_kernel_cache_get_counters (cache, &mh, &dh, &mi);
  g_assert_cmpuint (mh, ==, 1);
  g_assert_cmpuint (dh, ==, 1);
  g_assert_cmpuint (mi, ==, 1);
  rm_rf (dir);
}

static void
test_cache_key_inputs (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) base = options_for ("saxpy");
  g_autoptr(GHashTable) keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  AtomrCompileOptions *variants[5];

  variants[0] = atomr_compile_options_copy (base);
  variants[1] = atomr_compile_options_set_arch (atomr_compile_options_copy (base), "sm_90");
  variants[2] = atomr_compile_options_set_fast_math (atomr_compile_options_copy (base), TRUE);
  variants[3] = atomr_compile_options_add_define (atomr_compile_options_copy (base), "X", "1");
  variants[4] = atomr_compile_options_add_name_expression (atomr_compile_options_copy (base), "saxpy2");
  for (guint i = 0; i < G_N_ELEMENTS (variants); i++)
    {
      const gchar *src = i == 4 ? SAXPY_SOURCE "extern \"C\" __global__ void saxpy2 () {}\n" : SAXPY_SOURCE;
      g_autoptr(AtomrModule) m = compile_ok (src, variants[i], cache);
      g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_MISS);
      g_assert_true (g_hash_table_add (keys, g_strdup (atomr_module_get_key (m))));
      g_object_unref (variants[i]);
    }
  {
    /* A one-character source change is a different entry. */
    g_autoptr(AtomrModule) m = compile_ok (SAXPY_SOURCE " ", base, cache);
    g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_MISS);
    g_assert_true (g_hash_table_add (keys, g_strdup (atomr_module_get_key (m))));
  }
  g_assert_cmpuint (count_files (dir, NULL, ".akc"), ==, 6);
  rm_rf (dir);
}

#define HEADER_SOURCE \
  "#include \"params.h\"\n" \
  "extern \"C\" __global__ void fill (float *x) { x[threadIdx.x] = VALUE; }\n"

static void
test_cache_header_edit (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *inc = make_tmpdir ();
  g_autofree gchar *header = g_build_filename (inc, "params.h", NULL);
  g_autofree gchar *nested = g_build_filename (inc, "nested.h", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = options_for ("fill");
  g_autoptr(AtomrModule) first = NULL;
  g_autoptr(AtomrModule) again = NULL;
  g_autoptr(AtomrModule) edited = NULL;
  g_autoptr(AtomrModule) nested_edit = NULL;
  g_autoptr(AtomrModule) fresh_process_view = NULL;
  const gchar *ptx;
  gsize size;

  atomr_compile_options_add_include_path (o, inc);
  g_assert_true (g_file_set_contents (header, "#include \"nested.h\"\n#define VALUE 1.5f\n", -1, NULL));
  g_assert_true (g_file_set_contents (nested, "/* v1 */\n", -1, NULL));
  first = compile_ok (HEADER_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (first), ==, ATOMR_CACHE_STATUS_MISS);
  again = compile_ok (HEADER_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (again), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);

  /* Edit the header (the size changes, so the stamp changes too). */
  g_assert_true (g_file_set_contents (header, "#include \"nested.h\"\n#define VALUE 2.75f\n", -1, NULL));
  edited = compile_ok (HEADER_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (edited), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpstr (atomr_module_get_key (edited), !=, atomr_module_get_key (first));
  ptx = g_bytes_get_data (atomr_module_get_ptx (edited), &size);
  g_assert_nonnull (g_strstr_len (ptx, size, "1076887552"));   /* 2.75f = 0x40300000 */

  /* A header included by a header counts too. */
  g_assert_true (g_file_set_contents (nested, "/* v2, longer */\n", -1, NULL));
  nested_edit = compile_ok (HEADER_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (nested_edit), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpstr (atomr_module_get_key (nested_edit), !=, atomr_module_get_key (edited));

  /* A header that did not exist at the first compile, created afterwards
   * in an include path, changes the output: a miss, not a memory hit. */
  {
    const gchar *optional_src =
      "#if __has_include(<opt.h>)\n"
      "#include <opt.h>\n"
      "#else\n"
      "#define OPT 1.0f\n"
      "#endif\n"
      "extern \"C\" __global__ void fill (float *x) { x[threadIdx.x] = OPT; }\n";
    g_autofree gchar *opt = g_build_filename (inc, "opt.h", NULL);
    g_autoptr(AtomrModule) without = compile_ok (optional_src, o, cache);
    g_autoptr(AtomrModule) hit = compile_ok (optional_src, o, cache);
    g_autoptr(AtomrModule) with = NULL;

    g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
    g_assert_true (g_file_set_contents (opt, "#define OPT 2.75f\n", -1, NULL));
    with = compile_ok (optional_src, o, cache);
    g_assert_cmpint (atomr_module_get_cache_status (with), ==, ATOMR_CACHE_STATUS_MISS);
    ptx = g_bytes_get_data (atomr_module_get_ptx (with), &size);
    g_assert_nonnull (g_strstr_len (ptx, size, "1076887552"));
    g_unlink (opt);
  }

  /* Another cache object on the same directory (as a new process would)
   * finds the current version on disk. */
  {
    g_autoptr(AtomrKernelCache) other = atomr_kernel_cache_new (dir);
    fresh_process_view = compile_ok (HEADER_SOURCE, o, other);
    g_assert_cmpint (atomr_module_get_cache_status (fresh_process_view), ==, ATOMR_CACHE_STATUS_DISK_HIT);
    g_assert_cmpstr (atomr_module_get_key (fresh_process_view), ==, atomr_module_get_key (nested_edit));
  }
  rm_rf (dir);
  rm_rf (inc);
}

typedef enum {
  CORRUPT_TRUNCATE_PAYLOAD,
  CORRUPT_TRUNCATE_HEADER,
  CORRUPT_EMPTY,
  CORRUPT_FLIP_PAYLOAD,
  CORRUPT_FLIP_HEADER_SIZES,
  CORRUPT_FLIP_KEY,
  CORRUPT_WRONG_VERSION,
  CORRUPT_FOREIGN,
  CORRUPT_OTHER_KEY,
  N_CORRUPTIONS
} Corruption;

static const gchar *corruption_names[] = {
  "truncated payload", "truncated header", "empty", "bit flip in payload",
  "bit flip in sizes", "bit flip in key", "wrong version", "foreign file", "another key's file",
};

static void
corrupt_file (const gchar *path, Corruption kind, const gchar *other_path)
{
  g_autofree gchar *data = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  switch (kind)
    {
    case CORRUPT_TRUNCATE_PAYLOAD: len -= 7; break;
    case CORRUPT_TRUNCATE_HEADER: len = 100; break;
    case CORRUPT_EMPTY: len = 0; break;
    case CORRUPT_FLIP_PAYLOAD: data[len - 10] ^= 0x10; break;
    case CORRUPT_FLIP_HEADER_SIZES: data[104] ^= 0x01; break;
    case CORRUPT_FLIP_KEY: data[20] = data[20] == 'a' ? 'b' : 'a'; break;
    case CORRUPT_WRONG_VERSION: data[8] = (gchar) (ATOMR_CACHE_FORMAT_VERSION + 1); break;
    case CORRUPT_FOREIGN:
      g_free (data);
      data = g_strdup ("#!/bin/sh\necho this is not a cache entry\n");
      len = strlen (data);
      break;
    case CORRUPT_OTHER_KEY:
      g_free (data);
      g_assert_true (g_file_get_contents (other_path, &data, &len, NULL));
      break;
    default: g_assert_not_reached ();
    }
  g_assert_true (g_file_set_contents (path, data, len, NULL));
}

static void
test_cache_corruption (void)
{
  for (guint kind = 0; kind < N_CORRUPTIONS; kind++)
    {
      g_autofree gchar *dir = make_tmpdir ();
      g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
      g_autoptr(AtomrCompileOptions) o = options_for ("saxpy");
      g_autoptr(AtomrCompileOptions) other_o = options_for ("saxpy");
      g_autoptr(AtomrModule) first = NULL;
      g_autoptr(AtomrModule) other = NULL;
      g_autoptr(AtomrModule) again = NULL;
      g_autoptr(AtomrModule) after = NULL;
      g_autofree gchar *path = NULL;
      g_autofree gchar *other_path = NULL;
      guint compiles;

      g_test_message ("corruption: %s", corruption_names[kind]);
      atomr_compile_options_set_arch (o, "sm_90");
      first = compile_ok (SAXPY_SOURCE, o, cache);
      other = compile_ok (SAXPY_SOURCE, other_o, cache);
      path = entry_file (dir, first);
      other_path = entry_file (dir, other);
      corrupt_file (path, kind, other_path);

      /* Never served from disk: a miss, the file replaced, a recompile. */
      atomr_kernel_cache_clear_memory (cache);
      compiles = atomr_nvrtc_get_compile_count ();
      again = compile_ok (SAXPY_SOURCE, o, cache);
      g_assert_cmpint (atomr_module_get_cache_status (again), ==, ATOMR_CACHE_STATUS_MISS);
      g_assert_cmpuint (atomr_nvrtc_get_compile_count (), ==, compiles + 1);
      g_assert_true (g_bytes_equal (atomr_module_get_cubin (again), atomr_module_get_cubin (first)));

      /* The rewritten entry is good again. */
      atomr_kernel_cache_clear_memory (cache);
      after = compile_ok (SAXPY_SOURCE, o, cache);
      g_assert_cmpint (atomr_module_get_cache_status (after), ==, ATOMR_CACHE_STATUS_DISK_HIT);
      rm_rf (dir);
    }
}

static void
test_cache_corrupt_file_removed_by_gc (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = options_for ("saxpy");
  g_autoptr(AtomrModule) m = compile_ok (SAXPY_SOURCE, o, cache);
  g_autofree gchar *path = entry_file (dir, m);
  g_autofree gchar *junk = g_build_filename (dir, "0000.akc", NULL);
  g_autoptr(GListModel) list = NULL;
  guint removed = 99;

  corrupt_file (path, CORRUPT_FLIP_PAYLOAD, NULL);
  g_assert_true (g_file_set_contents (junk, "junk", -1, NULL));
  /* Listing never shows damaged entries (the header is intact here but
   * the checksum is checked when the payload is loaded). */
  list = atomr_kernel_cache_list (cache, NULL);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 1);
  {
    g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, 0);
    g_autoptr(GError) error = NULL;
    g_assert_null (atomr_kernel_cache_entry_load_ptx (e, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  }
  g_assert_true (atomr_kernel_cache_gc (cache, G_MAXUINT64, &removed, NULL, NULL));
  g_assert_false (g_file_test (junk, G_FILE_TEST_EXISTS));
  rm_rf (dir);
}

static void
test_cache_metadata (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = options_for (SCALE_FLOAT_256);
  g_autoptr(AtomrModule) m = NULL;
  g_autoptr(AtomrModule) hit = NULL;
  g_autoptr(GListModel) list = NULL;
  g_autoptr(AtomrKernelCacheEntry) e = NULL;
  g_autoptr(AtomrKernelCacheEntry) e2 = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *source = NULL;
  g_autofree gchar *log = NULL;
  g_autoptr(GBytes) cubin = NULL;
  g_autoptr(GBytes) ltoir = NULL;
  g_auto(GStrv) names = NULL;
  guint64 hits = 0;
  guint n = 0;
  guint64 bytes = 0, dh = 0, mi = 0;

  atomr_compile_options_set_arch (o, "sm_90");
  atomr_compile_options_set_std (o, "c++17");
  g_assert_false (atomr_kernel_cache_get_store_source (cache));   /* off unless asked */
  atomr_kernel_cache_set_store_source (cache, TRUE);
  m = compile_ok (SCALE_SOURCE, o, cache);
  atomr_kernel_cache_clear_memory (cache);
  hit = compile_ok (SCALE_SOURCE, o, cache);
  g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);

  list = atomr_kernel_cache_list (cache, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 1);
  g_assert_true (g_list_model_get_item_type (list) == ATOMR_TYPE_KERNEL_CACHE_ENTRY);
  e = g_list_model_get_item (list, 0);
  g_assert_cmpstr (atomr_kernel_cache_entry_get_key (e), ==, atomr_module_get_key (m));
  g_assert_cmpstr (atomr_kernel_cache_entry_get_kernel_names (e)[0], ==, SCALE_FLOAT_256);
  g_assert_cmpstr (atomr_kernel_cache_entry_get_lowered_names (e)[0], ==, SCALE_FLOAT_256_LOWERED);
  g_assert_cmpstr (atomr_kernel_cache_entry_lookup_lowered_name (e, SCALE_FLOAT_256), ==, SCALE_FLOAT_256_LOWERED);
  g_assert_cmpstrv (atomr_kernel_cache_entry_get_flags (e), atomr_module_get_flags (m));
  g_assert_cmpstr (atomr_kernel_cache_entry_get_arch (e), ==, "sm_90");
  g_assert_cmpstr (atomr_kernel_cache_entry_get_nvrtc_version (e), ==, atomr_module_get_nvrtc_version (m));
  g_assert_cmpuint (atomr_kernel_cache_entry_get_cubin_size (e), ==, g_bytes_get_size (atomr_module_get_cubin (m)));
  g_assert_cmpuint (atomr_kernel_cache_entry_get_ltoir_size (e), ==, 0);
  g_assert_cmpuint (atomr_kernel_cache_entry_get_source_size (e), ==, strlen (SCALE_SOURCE));
  g_assert_true (atomr_kernel_cache_entry_has_source (e));
  g_assert_cmpfloat (atomr_kernel_cache_entry_get_compile_time_ms (e), ==, atomr_module_get_compile_time_ms (m));
  g_assert_cmpuint (atomr_kernel_cache_entry_get_hit_count (e), ==, 1);
  g_assert_cmpint (g_date_time_compare (atomr_kernel_cache_entry_get_last_used (e),
                                        atomr_kernel_cache_entry_get_created (e)), >=, 0);
  g_object_get (e, "hit-count", &hits, "kernel-names", &names, NULL);
  g_assert_cmpuint (hits, ==, 1);
  g_assert_cmpstr (names[0], ==, SCALE_FLOAT_256);

  source = atomr_kernel_cache_entry_load_source (e, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (source, ==, SCALE_SOURCE);
  log = atomr_kernel_cache_entry_load_log (e, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (log, ==, atomr_module_get_log (m));
  cubin = atomr_kernel_cache_entry_load_cubin (e, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (cubin, atomr_module_get_cubin (m)));
  ltoir = atomr_kernel_cache_entry_load_ltoir (e, &error);
  g_assert_no_error (error);
  g_assert_null (ltoir);

  /* Lookup by key and by prefix; stats; remove. */
  e2 = atomr_kernel_cache_lookup (cache, atomr_module_get_key (m), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (atomr_kernel_cache_entry_get_path (e2), ==, atomr_kernel_cache_entry_get_path (e));
  g_clear_object (&e2);
  {
    g_autofree gchar *prefix = g_strndup (atomr_module_get_key (m), 8);
    e2 = atomr_kernel_cache_lookup (cache, prefix, &error);
    g_assert_no_error (error);
    g_assert_nonnull (e2);
  }
  g_assert_true (atomr_kernel_cache_get_stats (cache, &n, &bytes, &dh, &mi, &error));
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (bytes, ==, atomr_kernel_cache_entry_get_file_size (e));
  g_assert_cmpuint (dh, ==, 1);
  g_assert_cmpuint (mi, ==, 1);
  g_assert_true (atomr_kernel_cache_remove (cache, atomr_module_get_key (m), &error));
  g_assert_no_error (error);
  g_assert_null (atomr_kernel_cache_lookup (cache, atomr_module_get_key (m), &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (atomr_kernel_cache_lookup (cache, "zz", &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Removing also drops the memory copy: the next compile is a miss. */
  {
    g_autoptr(AtomrModule) m3 = compile_ok (SCALE_SOURCE, o, cache);
    g_assert_cmpint (atomr_module_get_cache_status (m3), ==, ATOMR_CACHE_STATUS_MISS);
  }

  /* Without the source. */
  atomr_kernel_cache_set_store_source (cache, FALSE);
  {
    g_autoptr(AtomrCompileOptions) so = options_for ("saxpy");
    g_autoptr(AtomrModule) m2 = compile_ok (SAXPY_SOURCE, so, cache);
    g_autoptr(AtomrKernelCacheEntry) e3 = atomr_kernel_cache_lookup (cache, atomr_module_get_key (m2), &error);
    g_assert_no_error (error);
    g_assert_false (atomr_kernel_cache_entry_has_source (e3));
    g_assert_null (atomr_kernel_cache_entry_load_source (e3, &error));
    g_assert_no_error (error);
  }
  rm_rf (dir);
}

static void
test_cache_eviction (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(GListModel) list = NULL;
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  guint64 one_size, total = 0;
  guint removed = 0;
  guint64 freed = 0;

  atomr_kernel_cache_set_store_source (cache, FALSE);
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(AtomrCompileOptions) o = options_for ("saxpy");
      g_autoptr(AtomrModule) m = NULL;
      g_autofree gchar *value = g_strdup_printf ("%u", i);

      atomr_compile_options_add_define (o, "VARIANT", value);
      if (i == 1)
        {
          /* Cap at about three entries once we know an entry's size. */
          g_autoptr(GListModel) l = atomr_kernel_cache_list (cache, NULL);
          g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (l, 0);
          one_size = atomr_kernel_cache_entry_get_file_size (e);
          atomr_kernel_cache_set_max_size (cache, one_size * 3 + one_size / 2);
        }
      if (i == 4)
        {
          /* Touch entry 1 so it is more recently used than 2 and 3. */
          g_autoptr(AtomrCompileOptions) o1 = options_for ("saxpy");
          g_autoptr(AtomrModule) again = NULL;
          atomr_compile_options_add_define (o1, "VARIANT", "1");
          atomr_kernel_cache_clear_memory (cache);
          g_usleep (2000);
          again = compile_ok (SAXPY_SOURCE, o1, cache);
          g_assert_cmpint (atomr_module_get_cache_status (again), ==, ATOMR_CACHE_STATUS_DISK_HIT);
        }
      g_usleep (2000);   /* distinct last-use times */
      m = compile_ok (SAXPY_SOURCE, o, cache);
      g_ptr_array_add (keys, g_strdup (atomr_module_get_key (m)));
    }
  list = atomr_kernel_cache_list (cache, NULL);
  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
      total += atomr_kernel_cache_entry_get_file_size (e);
    }
  g_assert_cmpuint (total, <=, atomr_kernel_cache_get_max_size (cache));
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 3);
  /* Least recently used went first: 0 and 2; 1 (touched), 3 and 4 stay. */
  {
    g_autoptr(AtomrKernelCacheEntry) e0 = atomr_kernel_cache_lookup (cache, keys->pdata[0], NULL);
    g_autoptr(AtomrKernelCacheEntry) e1 = atomr_kernel_cache_lookup (cache, keys->pdata[1], NULL);
    g_autoptr(AtomrKernelCacheEntry) e2 = atomr_kernel_cache_lookup (cache, keys->pdata[2], NULL);
    g_autoptr(AtomrKernelCacheEntry) e4 = atomr_kernel_cache_lookup (cache, keys->pdata[4], NULL);
    g_assert_null (e0);
    g_assert_nonnull (e1);
    g_assert_null (e2);
    g_assert_nonnull (e4);
  }
  g_assert_true (atomr_kernel_cache_gc (cache, 0, &removed, &freed, NULL));
  g_assert_cmpuint (removed, ==, 3);
  g_assert_cmpuint (freed, ==, total);
  g_assert_cmpuint (count_files (dir, NULL, ".akc"), ==, 0);
  rm_rf (dir);
}

static void
test_cache_unwritable (void)
{
  /* We may run as root, for whom permission bits mean nothing: make the
   * directory impossible instead — below a regular file (ENOTDIR), and
   * inside /proc (which refuses new files even to root). */
  g_autofree gchar *tmp = make_tmpdir ();
  g_autofree gchar *file = g_build_filename (tmp, "a-file", NULL);
  g_autofree gchar *below_file = g_build_filename (file, "cache", NULL);
  const gchar *dirs[] = { below_file, "/proc/atomr-kernel-cache-test" };

  g_assert_true (g_file_set_contents (file, "x", 1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dirs[i]);
      g_autoptr(AtomrCompileOptions) o = options_for ("saxpy");
      g_autoptr(AtomrModule) m = NULL;
      g_autoptr(AtomrModule) m2 = NULL;
      g_autoptr(GListModel) list = NULL;
      g_autoptr(GError) error = NULL;

      /* The failure to store is warned about once per cache. */
      cache_test_take_warnings ();
      m = compile_ok (SAXPY_SOURCE, o, cache);
      g_assert_cmpint (cache_test_take_warnings (), ==, 1);
      g_assert_nonnull (atomr_kernel_cache_get_store_error (cache));
      g_assert_false (atomr_kernel_cache_check_writable (cache, NULL));
      g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_MISS);
      g_assert_nonnull (atomr_module_get_ptx (m));
      g_assert_false (g_file_test (dirs[i], G_FILE_TEST_EXISTS));
      /* The memory level still works. */
      m2 = compile_ok (SAXPY_SOURCE, o, cache);
      g_assert_cmpint (atomr_module_get_cache_status (m2), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
      {
        /* A second failed store is not reported again (an unexpected
         * warning would abort the test). */
        g_autoptr(AtomrCompileOptions) o2 = options_for ("saxpy");
        g_autoptr(AtomrModule) m3 = NULL;
        atomr_compile_options_add_define (o2, "OTHER", "1");
        m3 = compile_ok (SAXPY_SOURCE, o2, cache);
        g_assert_cmpint (atomr_module_get_cache_status (m3), ==, ATOMR_CACHE_STATUS_MISS);
        g_assert_cmpint (cache_test_take_warnings (), ==, 0);
      }
      /* Browsing an unreadable directory is an error, not a crash. */
      list = atomr_kernel_cache_list (cache, &error);
      if (list)
        g_assert_cmpuint (g_list_model_get_n_items (list), ==, 0);
    }
  rm_rf (tmp);
}

static void
test_default_directory (void)
{
  g_autofree gchar *saved = g_strdup (g_getenv ("ATOMR_CACHE_DIR"));
  g_autofree gchar *from_env = NULL;
  g_autofree gchar *from_xdg = NULL;
  g_autofree gchar *expected = g_build_filename (g_get_user_cache_dir (), "atomr", "kernels", NULL);

  g_setenv ("ATOMR_CACHE_DIR", "/some/where", TRUE);
  from_env = atomr_kernel_cache_get_default_directory ();
  g_assert_cmpstr (from_env, ==, "/some/where");
  g_unsetenv ("ATOMR_CACHE_DIR");
  from_xdg = atomr_kernel_cache_get_default_directory ();
  g_assert_cmpstr (from_xdg, ==, expected);
  if (saved)
    g_setenv ("ATOMR_CACHE_DIR", saved, TRUE);
}

/* ------------------------------------------------------------------ */
/* Fresh processes                                                     */

static gboolean
maps_mention (const gchar *what)
{
  g_autofree gchar *maps = NULL;
  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  return strstr (maps, what) != NULL;
}

/* Child: one compile into $dir; prints "status key". */
static int
child_main (const gchar *mode, const gchar *dir, const gchar *variant)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = options_for (SCALE_FLOAT_256);
  g_autoptr(AtomrModule) m = NULL;
  g_autoptr(GError) error = NULL;

  atomr_compile_options_add_name_expression (o, SCALE_DOUBLE_128);
  atomr_compile_options_set_arch (o, "sm_90");
  atomr_compile_options_add_define (o, "VARIANT", variant);
  m = atomr_nvrtc_compile (SCALE_SOURCE, NULL, o, cache, &error);
  if (m == NULL)
    {
      g_printerr ("compile failed: %s\n", error->message);
      return 2;
    }
  if (g_str_equal (mode, "lazy"))
    {
      /* A disk hit: NVRTC never loaded (nor mapped), never called. */
      if (atomr_module_get_cache_status (m) != ATOMR_CACHE_STATUS_DISK_HIT
          || atomr_nvrtc_get_load_count () != 0 || atomr_nvrtc_get_compile_count () != 0
          || maps_mention ("libnvrtc") || maps_mention ("libnvJitLink"))
        {
          g_printerr ("lazy: status %d, loads %u, compiles %u, mapped %d\n",
                      atomr_module_get_cache_status (m), atomr_nvrtc_get_load_count (),
                      atomr_nvrtc_get_compile_count (), maps_mention ("libnvrtc"));
          return 3;
        }
    }
  g_print ("%d %s %s\n", atomr_module_get_cache_status (m), atomr_module_get_key (m),
           atomr_module_get_lowered_name (m, SCALE_DOUBLE_128));
  return 0;
}

static GPid
spawn_child (const gchar *mode, const gchar *dir, const gchar *variant, gint *out_fd)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) envp = g_get_environ ();
  g_autofree gchar *spec = g_strdup_printf ("%s:%s:%s", mode, variant, dir);
  const gchar *argv[] = { self_path, NULL };
  GPid pid;

  envp = g_environ_setenv (envp, "ATOMR_TEST_CHILD", spec, TRUE);
  g_assert_true (g_spawn_async_with_pipes (NULL, (gchar **) argv, envp, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &pid, NULL, out_fd, NULL, &error));
  g_assert_no_error (error);
  return pid;
}

static gchar *
wait_child (GPid pid, gint fd)
{
  GString *out = g_string_new (NULL);
  gchar buf[256];
  ssize_t n;
  int status = 0;

  while ((n = read (fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      g_string_append_len (out, buf, n);
  close (fd);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_spawn_close_pid (pid);
  return g_string_free (out, FALSE);
}

static void
test_disk_hit_never_loads_nvrtc (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  gint fd;
  GPid pid;
  g_autofree gchar *first = NULL;
  g_autofree gchar *second = NULL;

  pid = spawn_child ("fill", dir, "lazy", &fd);
  first = wait_child (pid, fd);
  g_assert_true (g_str_has_prefix (first, "1 "));      /* miss */
  pid = spawn_child ("lazy", dir, "lazy", &fd);
  second = wait_child (pid, fd);
  g_assert_true (g_str_has_prefix (second, "3 "));     /* disk hit, checked inside */
  g_assert_cmpstr (first + 2, ==, second + 2);          /* same key, same lowered name */
  rm_rf (dir);
}

static void
test_concurrent_processes (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(GHashTable) keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GListModel) list = NULL;
  GPid pids[8];
  gint fds[8];

  /* 8 at once: 4 compile the same kernel, 4 different ones. */
  for (guint i = 0; i < 8; i++)
    {
      g_autofree gchar *variant = g_strdup_printf ("%u", i < 4 ? 0 : i);
      pids[i] = spawn_child ("fill", dir, variant, &fds[i]);
    }
  for (guint i = 0; i < 8; i++)
    {
      g_autofree gchar *out = wait_child (pids[i], fds[i]);
      g_auto(GStrv) parts = g_strsplit (g_strstrip (out), " ", 3);
      g_assert_cmpuint (g_strv_length (parts), ==, 3);
      g_assert_cmpstr (parts[2], ==, SCALE_DOUBLE_128_LOWERED);
      g_hash_table_add (keys, g_strdup (parts[1]));
    }
  g_assert_cmpuint (g_hash_table_size (keys), ==, 5);
  /* No torn entry: each of the 5 files is whole, no temporary file left. */
  {
    g_autoptr(AtomrKernelCache) reader = atomr_kernel_cache_new (dir);
    list = atomr_kernel_cache_list (reader, NULL);
  }
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 5);
  g_assert_cmpuint (count_files (dir, ".tmp-", NULL), ==, 0);
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) cubin = atomr_kernel_cache_entry_load_cubin (e, &error);
      g_assert_no_error (error);
      g_assert_nonnull (cubin);
      g_assert_true (g_hash_table_contains (keys, atomr_kernel_cache_entry_get_key (e)));
    }
  /* And all of them are hits for a ninth process. */
  for (guint i = 0; i < 8; i += 4)
    {
      g_autofree gchar *variant = g_strdup_printf ("%u", i == 0 ? 0 : 5);
      gint fd;
      GPid pid = spawn_child ("lazy", dir, variant, &fd);
      g_autofree gchar *out = wait_child (pid, fd);
      g_assert_true (g_str_has_prefix (out, "3 "));
    }
  rm_rf (dir);
}

/* ------------------------------------------------------------------ */
/* The actor, on the host test device                                  */

static void
on_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **slot = user_data;
  *slot = g_object_ref (result);
}

static void
iterate_until (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static void
test_actor_parallel_module_compiles (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrNvrtcActor) actor = atomr_nvrtc_actor_new (device, &error);
  GAsyncResult *results[4] = { NULL };

  g_assert_no_error (error);
  g_assert_cmpstr (atomr_actor_get_library (ATOMR_ACTOR (actor)), ==, "nvrtc");
  g_assert_true (atomr_nvrtc_actor_get_cache (actor) == atomr_kernel_cache_get_default ());
  atomr_nvrtc_actor_set_cache (actor, NULL);
  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(AtomrCompileOptions) o = options_for (i % 2 ? SCALE_DOUBLE_128 : SCALE_FLOAT_256);
      g_autofree gchar *value = g_strdup_printf ("%u", i);
      atomr_compile_options_add_define (o, "VARIANT", value);
      atomr_nvrtc_actor_compile_module_async (actor, SCALE_SOURCE, o, NULL, on_result, &results[i]);
    }
  /* A broken compile fails alone, with the log. */
  {
    GAsyncResult *bad = NULL;
    g_autoptr(AtomrModule) none = NULL;
    g_autoptr(AtomrCompileOptions) bo = options_for ("broken");
    atomr_nvrtc_actor_compile_module_async (actor, BROKEN_SOURCE, bo, NULL, on_result, &bad);
    iterate_until (&bad);
    none = atomr_nvrtc_actor_compile_module_finish (actor, bad, &error);
    g_assert_null (none);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE);
    g_assert_nonnull (strstr (error->message, "undeclared_variable"));
    g_clear_error (&error);
    g_object_unref (bad);
  }
  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(AtomrModule) m = NULL;
      iterate_until (&results[i]);
      m = atomr_nvrtc_actor_compile_module_finish (actor, results[i], &error);
      g_assert_no_error (error);
      g_assert_cmpstr (atomr_module_get_lowered_name (m, i % 2 ? SCALE_DOUBLE_128 : SCALE_FLOAT_256), ==,
                       i % 2 ? SCALE_DOUBLE_128_LOWERED : SCALE_FLOAT_256_LOWERED);
      g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_NONE);
      g_object_unref (results[i]);
    }
  /* compile_async loads the kernel: impossible on the host device. */
  {
    GAsyncResult *r = NULL;
    g_autoptr(AtomrKernel) k = NULL;
    atomr_nvrtc_actor_compile_async (actor, SAXPY_SOURCE, "saxpy", NULL, NULL, on_result, &r);
    iterate_until (&r);
    k = atomr_nvrtc_actor_compile_finish (actor, r, &error);
    g_assert_null (k);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
    g_clear_error (&error);
    g_object_unref (r);
  }
}

static gboolean
launch_and_wait (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
                 AtomrKernelArgs *args, GError **error)
{
  GAsyncResult *r = NULL;
  gboolean ok;

  atomr_nvrtc_actor_launch_async (actor, kernel, config, args, NULL, on_result, &r);
  iterate_until (&r);
  ok = atomr_nvrtc_actor_launch_finish (actor, r, error);
  g_object_unref (r);
  return ok;
}

static void
test_actor_argument_checks (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrNvrtcActor) actor = atomr_nvrtc_actor_new (device, &error);
  g_autoptr(AtomrCompileOptions) so = options_for ("saxpy");
  g_autoptr(AtomrModule) module = compile_ok (SAXPY_SOURCE, so, NULL);
  /* saxpy (float a, const float *x, float *y, size_t n) */
  const gsize sizes[] = { 4, 8, 8, 8 };
  g_autoptr(AtomrKernel) kernel = atomr_kernel_new_unloaded (device, module, "saxpy", sizes, 4);
  g_autoptr(AtomrBuffer) x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  g_autoptr(AtomrBuffer) y = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (16, 32);
  g_autoptr(AtomrKernelArgs) too_few = atomr_kernel_args_new ();
  g_autoptr(AtomrKernelArgs) wrong_size = atomr_kernel_args_new ();
  g_autoptr(AtomrKernelArgs) good = atomr_kernel_args_new ();

  g_assert_no_error (error);
  g_assert_cmpuint (atomr_kernel_get_n_params (kernel), ==, 4);
  g_assert_cmpuint (atomr_kernel_get_param_offset (kernel, 3), ==, 24);
  g_assert_cmpstr (atomr_kernel_get_lowered_name (kernel), ==, "saxpy");

  atomr_kernel_args_add_buffer (atomr_kernel_args_add_f32 (too_few, 2.0f), x);
  g_assert_false (launch_and_wait (actor, kernel, config, too_few, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "2 arguments"));
  g_clear_error (&error);

  /* a double where a float is expected, an int where size_t is. */
  atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer_read_only (
      atomr_kernel_args_add_f64 (wrong_size, 2.0), x), y), 16);
  g_assert_cmpuint (atomr_kernel_args_get_arg_size (wrong_size, 0), ==, 8);
  g_assert_false (launch_and_wait (actor, kernel, config, wrong_size, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "argument 0"));
  g_clear_error (&error);

  /* Every check passes; only the host device cannot run CUDA code. */
  atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer_read_only (
      atomr_kernel_args_add_f32 (good, 2.0f), x), y), 16);
  g_assert_false (launch_and_wait (actor, kernel, config, good, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);

  /* An impossible configuration. */
  {
    g_autoptr(AtomrLaunchConfig) zero = atomr_launch_config_new (0, 1, 1, 32, 1, 1);
    g_autoptr(AtomrLaunchConfig) cluster = atomr_launch_config_new (3, 1, 1, 32, 1, 1);
    guint cx;
    atomr_launch_config_set_cluster (cluster, 2, 1, 1);
    atomr_launch_config_get_cluster (cluster, &cx, NULL, NULL);
    g_assert_cmpuint (cx, ==, 2);
    g_assert_false (launch_and_wait (actor, kernel, zero, good, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_false (launch_and_wait (actor, kernel, cluster, good, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "cluster"));
    g_clear_error (&error);
  }

  /* Every scalar adder has its C size. */
  {
    g_autoptr(AtomrKernelArgs) a = atomr_kernel_args_new ();
    const gsize expect[] = { 2, 2, 4, 8, 8, 16, 1, 1, 4, 4, 8, 8, 8, 8, 12 };
    g_autoptr(GBytes) blob = g_bytes_new_static ("0123456789ab", 12);
    atomr_kernel_args_add_f16 (a, 1);
    atomr_kernel_args_add_bf16 (a, 1);
    atomr_kernel_args_add_f32 (a, 1);
    atomr_kernel_args_add_f64 (a, 1);
    atomr_kernel_args_add_c64 (a, 1, 2);
    atomr_kernel_args_add_c128 (a, 1, 2);
    atomr_kernel_args_add_i8 (a, 1);
    atomr_kernel_args_add_u8 (a, 1);
    atomr_kernel_args_add_i32 (a, 1);
    atomr_kernel_args_add_u32 (a, 1);
    atomr_kernel_args_add_i64 (a, 1);
    atomr_kernel_args_add_u64 (a, 1);
    atomr_kernel_args_add_size (a, 1);
    atomr_kernel_args_add_scalar (a, ATOMR_DTYPE_C64, 1, 1);
    atomr_kernel_args_add_bytes (a, blob);
    g_assert_cmpuint (atomr_kernel_args_get_n_args (a), ==, G_N_ELEMENTS (expect));
    for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
      g_assert_cmpuint (atomr_kernel_args_get_arg_size (a, i), ==, expect[i]);
  }
}

int
main (int argc, char **argv)
{
  const gchar *child = g_getenv ("ATOMR_TEST_CHILD");

  if (child)
    {
      g_auto(GStrv) parts = g_strsplit (child, ":", 3);
      return child_main (parts[0], parts[2], parts[1]);
    }
  self_path = argv[0];
  cache_test_log_init ();
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/nvrtc/options/flags-every-option", test_flags_every_option);
  g_test_add_func ("/nvrtc/options/validation", test_options_validation);
  g_test_add_func ("/nvrtc/compile/plain", test_compile_plain);
  g_test_add_func ("/nvrtc/compile/template-lowered-names", test_compile_template_lowered_names);
  g_test_add_func ("/nvrtc/compile/error-log", test_compile_error_log);
  g_test_add_func ("/nvrtc/compile/lto-link", test_lto_compile_and_link);
  g_test_add_func ("/nvrtc/cache/levels", test_cache_levels);
  g_test_add_func ("/nvrtc/cache/key-inputs", test_cache_key_inputs);
  g_test_add_func ("/nvrtc/cache/header-edit", test_cache_header_edit);
  g_test_add_func ("/nvrtc/cache/corruption", test_cache_corruption);
  g_test_add_func ("/nvrtc/cache/gc-removes-damage", test_cache_corrupt_file_removed_by_gc);
  g_test_add_func ("/nvrtc/cache/metadata", test_cache_metadata);
  g_test_add_func ("/nvrtc/cache/eviction", test_cache_eviction);
  g_test_add_func ("/nvrtc/cache/unwritable", test_cache_unwritable);
  g_test_add_func ("/nvrtc/cache/default-directory", test_default_directory);
  g_test_add_func ("/nvrtc/cache/disk-hit-never-loads-nvrtc", test_disk_hit_never_loads_nvrtc);
  g_test_add_func ("/nvrtc/cache/concurrent-processes", test_concurrent_processes);
  g_test_add_func ("/nvrtc/actor/parallel-module-compiles", test_actor_parallel_module_compiles);
  g_test_add_func ("/nvrtc/actor/argument-checks", test_actor_argument_checks);
  return g_test_run ();
}
