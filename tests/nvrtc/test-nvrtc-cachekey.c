/* test-nvrtc-cachekey.c — the kernel cache never serves a stale binary
 *
 * Every case edits something NVRTC reads (a header next to the program, a
 * computed include, a shadowing header, a -include file, the program name,
 * ...) between two compiles of the same request and checks that the second
 * one sees the edit: it recompiles (miss) or bypasses the cache (none), and
 * the PTX shows the new contents.  Each runs against the memory level (same
 * cache object) and the disk level (a fresh cache object on the same
 * directory).  NVRTC needs no GPU.
 *
 * The programs name their kernel after a macro V that the header under
 * test defines, so the PTX says which version of the header was used.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "nvrtc/atomr-kernel-cache-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"
#include "nvrtc/atomr-nvrtc-private.h"

#define KERNEL_BY_V \
  "#define CAT_(a, b) a##b\n" \
  "#define CAT(a, b) CAT_(a, b)\n" \
  "extern \"C\" __global__ void CAT(MARK_, V) () {}\n"

typedef struct {
  gchar            *dir;        /* the working directory during the test */
  gchar            *saved_cwd;
  AtomrKernelCache *cache;
} Fixture;

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  if (dir)
    while ((name = g_dir_read_name (dir)))
      {
        g_autofree gchar *child = g_build_filename (path, name, NULL);
        if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
          rm_rf (child);
        else
          g_unlink (child);
      }
  g_rmdir (path);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *cache_dir = NULL;

  f->dir = g_dir_make_tmp ("atomr-cachekey-XXXXXX", &error);
  g_assert_no_error (error);
  f->saved_cwd = g_get_current_dir ();
  g_assert_cmpint (g_chdir (f->dir), ==, 0);
  cache_dir = g_build_filename (f->dir, "cache", NULL);
  f->cache = atomr_kernel_cache_new (cache_dir);
  /* "memory-off": every warm compile is a disk hit whose key comes from
   * the cache's key memo, which must notice the same edits. */
  if (g_strcmp0 (data, "memory-off") == 0)
    atomr_kernel_cache_set_memory_capacity (f->cache, 0);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->cache);
  g_assert_cmpint (g_chdir (f->saved_cwd), ==, 0);
  rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->saved_cwd);
}

/* Writes @contents to @path (relative to the test directory), creating
 * folders.  Every write gets a new inode, as editors that save by rename
 * do; same-size edits are checked by their contents at the disk level. */
static void
put (const gchar *path, const gchar *contents)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static void
put_v (const gchar *path, const gchar *v)
{
  g_autofree gchar *text = g_strdup_printf ("#define V %s\n", v);
  put (path, text);
}

/* Compiles and returns which MARK_ kernel the PTX holds. */
static gchar *
compile_mark (AtomrKernelCache    *cache,
              const gchar         *source,
              const gchar         *program_name,
              AtomrCompileOptions *options,
              AtomrCacheStatus    *status)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrModule) module = atomr_nvrtc_compile (source, program_name, options, cache, &error);
  GBytes *ptx;
  g_autofree gchar *text = NULL;
  const gchar *mark;
  gsize len = 0;

  g_assert_no_error (error);
  g_assert_nonnull (module);
  ptx = atomr_module_get_ptx (module);
  g_assert_nonnull (ptx);
  text = g_strndup (g_bytes_get_data (ptx, &len), g_bytes_get_size (ptx));
  mark = strstr (text, ".entry MARK_");
  g_assert_nonnull (mark);
  mark += strlen (".entry ");
  if (status)
    *status = atomr_module_get_cache_status (module);
  return g_strndup (mark, strcspn (mark, "( \n"));
}

typedef void (*EditFunc) (void);

/* The shared pattern: compile, edit, compile again with the same cache
 * (memory level) and with a fresh cache on the same directory (disk
 * level); both must see @after. */
static void
check_edit (Fixture             *f,
            const gchar         *source,
            const gchar         *program_name,
            AtomrCompileOptions *options,
            const gchar         *before,
            EditFunc             edit,
            const gchar         *after)
{
  g_autofree gchar *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL;
  g_autoptr(AtomrKernelCache) fresh = NULL;
  AtomrCacheStatus status;

  m1 = compile_mark (f->cache, source, program_name, options, NULL);
  g_assert_cmpstr (m1, ==, before);
  /* Warm: the second compile of an unchanged request is a hit unless the
   * request cannot be keyed at all. */
  m2 = compile_mark (f->cache, source, program_name, options, &status);
  g_assert_cmpstr (m2, ==, before);

  edit ();
  m3 = compile_mark (f->cache, source, program_name, options, &status);
  g_assert_cmpstr (m3, ==, after);
  g_assert_true (status == ATOMR_CACHE_STATUS_MISS || status == ATOMR_CACHE_STATUS_NONE);

  fresh = atomr_kernel_cache_new (atomr_kernel_cache_get_directory (f->cache));
  m4 = compile_mark (fresh, source, program_name, options, NULL);
  g_assert_cmpstr (m4, ==, after);
}

/* 1. A quoted include next to the program (found through its name), with
 * no -I at all: the old key scanned only -I paths. */
static void edit_k_x (void) { put_v ("k/x.h", "new"); }

static void
test_quoted_program_dir (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();

  put_v ("k/x.h", "old");
  check_edit (f, "#include \"x.h\"\n" KERNEL_BY_V, "k/rel.cu", o, "MARK_old", edit_k_x, "MARK_new");
}

/* A program without a directory in its name includes from the working
 * directory (measured: NVRTC 13 uses "." then). */
static void edit_x (void) { put_v ("x.h", "new"); }

static void
test_quoted_cwd (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();

  put_v ("x.h", "old");
  check_edit (f, "#include \"x.h\"\n" KERNEL_BY_V, NULL, o, "MARK_old", edit_x, "MARK_new");
}

/* A header's own quoted include is looked up next to that header. */
static void edit_inc_y (void) { put_v ("inc/y.h", "new"); }

static void
test_quoted_nested (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autofree gchar *inc = g_build_filename (f->dir, "inc", NULL);

  put ("inc/x.h", "#include \"y.h\"\n");
  put_v ("inc/y.h", "old");
  atomr_compile_options_add_include_path (o, inc);
  check_edit (f, "#include <x.h>\n" KERNEL_BY_V, "k/a.cu", o, "MARK_old", edit_inc_y, "MARK_new");
}

/* 2. A computed include: keyed correctly or refused; never stale. */
static void edit_m (void) { put_v ("m.h", "new"); }

static void
test_computed_include (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autofree gchar *m = NULL;
  AtomrCacheStatus status;

  put_v ("m.h", "old");
  check_edit (f, "#define HDR \"m.h\"\n#include HDR\n" KERNEL_BY_V, NULL, o,
              "MARK_old", edit_m, "MARK_new");
  /* It is refused: the cache cannot see which file HDR names. */
  m = compile_mark (f->cache, "#define HDR \"m.h\"\n#include HDR\n" KERNEL_BY_V, NULL, o, &status);
  g_assert_cmpint (status, ==, ATOMR_CACHE_STATUS_NONE);
}

/* Directives the preprocessor sees that a line-by-line scan would not:
 * comments between # and include, spliced lines, digraphs. */
static void
test_hidden_directives (Fixture *f, gconstpointer data)
{
  const gchar *sources[] = {
    "#/* comment */include \"x.h\"\n" KERNEL_BY_V,
    "#inc\\\nlude \"x.h\"\n" KERNEL_BY_V,
    "%:include \"x.h\"\n" KERNEL_BY_V,
    "/* a comment with \" in it */ #include \"x.h\"\n" KERNEL_BY_V,
    "  # include \"x.h\" // trailing\n" KERNEL_BY_V,
  };

  for (guint i = 0; i < G_N_ELEMENTS (sources); i++)
    {
      g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
      g_autofree gchar *name = g_strdup_printf ("hidden-%u.cu", i);
      g_autofree gchar *m = NULL;
      AtomrCacheStatus status;

      /* Not a directive in C (the comment is not at the start of the
       * line), but harmless: NVRTC then fails, and nothing is cached. */
      if (i == 3)
        continue;
      put_v ("x.h", "old");
      m = compile_mark (f->cache, sources[i], name, o, NULL);
      g_assert_cmpstr (m, ==, "MARK_old");
      g_clear_pointer (&m, g_free);
      put_v ("x.h", "new");
      m = compile_mark (f->cache, sources[i], name, o, &status);
      g_assert_cmpstr (m, ==, "MARK_new");
    }
}

/* __has_include: creating the file changes the program. */
static void create_opt (void) { put ("opt.h", "#define V new\n"); }

static void
test_has_include (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();

  check_edit (f,
              "#if __has_include(\"opt.h\")\n#include \"opt.h\"\n#else\n#define V old\n#endif\n" KERNEL_BY_V,
              NULL, o, "MARK_old", create_opt, "MARK_new");
}

/* -I / --include-path / "-I" "dir" passed as extra flags. */
static void edit_inc_x (void) { put_v ("inc/x.h", "new"); }

static void
test_extra_flag_include_path (Fixture *f, gconstpointer data)
{
  const gchar *forms[][2] = { { "-Iinc", NULL }, { "--include-path=inc", NULL }, { "-I", "inc" }, { "-I=inc", NULL } };

  for (guint i = 0; i < G_N_ELEMENTS (forms); i++)
    {
      g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
      g_autofree gchar *name = g_strdup_printf ("flags-%u.cu", i);

      atomr_compile_options_add_extra_flag (o, forms[i][0]);
      if (forms[i][1])
        atomr_compile_options_add_extra_flag (o, forms[i][1]);
      put_v ("inc/x.h", "old");
      check_edit (f, "#include <x.h>\n" KERNEL_BY_V, name, o, "MARK_old", edit_inc_x, "MARK_new");
    }
}

/* -include / --pre-include: the file is read before the program. */
static void edit_p (void) { put_v ("pre/p.h", "new"); }

static void
test_extra_flag_pre_include (Fixture *f, gconstpointer data)
{
  const gchar *forms[][3] = {
    { "-include", "p.h", "-Ipre" }, { "--pre-include=pre/p.h", NULL, NULL }, { "-include=p.h", "-Ipre", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (forms); i++)
    {
      g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
      g_autofree gchar *name = g_strdup_printf ("pre-%u.cu", i);

      for (guint k = 0; k < 3 && forms[i][k]; k++)
        atomr_compile_options_add_extra_flag (o, forms[i][k]);
      put_v ("pre/p.h", "old");
      check_edit (f, KERNEL_BY_V, name, o, "MARK_old", edit_p, "MARK_new");
    }
}

/* -I A -I B with B/v.h; then A/v.h appears and shadows it. */
static void create_a_v (void) { put_v ("A/v.h", "A"); }

static void
test_shadowing (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();

  put_v ("B/v.h", "B");
  g_assert_cmpint (g_mkdir_with_parents ("A", 0700), ==, 0);
  atomr_compile_options_add_include_path (o, "A");
  atomr_compile_options_add_include_path (o, "B");
  check_edit (f, "#include <v.h>\n" KERNEL_BY_V, NULL, o, "MARK_B", create_a_v, "MARK_A");
}

/* The same for a quoted include: the program's directory shadows -I. */
static void create_k_v (void) { put_v ("k/v.h", "K"); }

static void
test_shadowing_quoted (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();

  put_v ("B/v.h", "B");
  g_assert_cmpint (g_mkdir_with_parents ("k", 0700), ==, 0);
  atomr_compile_options_add_include_path (o, "B");
  check_edit (f, "#include \"v.h\"\n" KERNEL_BY_V, "k/s.cu", o, "MARK_B", create_k_v, "MARK_K");
}

/* The working directory changes between two compiles of the same request
 * with the same cache object: "x.h" (next to "program.cu") is another
 * file now.  Memory entries validated by inotify watches must not
 * outlive the directory they were resolved in. */
static void
test_working_directory_change (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  const gchar *source = "#include \"x.h\"\n" KERNEL_BY_V;
  g_autofree gchar *m1 = NULL, *m2 = NULL, *m3 = NULL, *m4 = NULL;
  g_autofree gchar *a = g_build_filename (f->dir, "A", NULL);
  g_autofree gchar *b = g_build_filename (f->dir, "B", NULL);

  put_v ("A/x.h", "a");
  put_v ("B/x.h", "b");
  g_assert_cmpint (g_chdir (a), ==, 0);
  m1 = compile_mark (f->cache, source, NULL, o, NULL);
  m2 = compile_mark (f->cache, source, NULL, o, NULL);
  g_assert_cmpstr (m1, ==, "MARK_a");
  g_assert_cmpstr (m2, ==, "MARK_a");
  g_assert_cmpint (g_chdir (b), ==, 0);
  m3 = compile_mark (f->cache, source, NULL, o, NULL);
  m4 = compile_mark (f->cache, source, NULL, o, NULL);
  g_assert_cmpstr (m3, ==, "MARK_b");
  g_assert_cmpstr (m4, ==, "MARK_b");
  g_assert_cmpint (g_chdir (f->dir), ==, 0);
}

/* 3. The program name is in the key: __FILE__ and the log differ. */
static void
test_program_name (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autoptr(GError) error = NULL;
  const gchar *source = "extern \"C\" __global__ void MARK_f (char *p) { const char *f = __FILE__; *p = f[0]; }\n";
  g_autoptr(AtomrModule) a = NULL;
  g_autoptr(AtomrModule) b = NULL;

  a = atomr_nvrtc_compile (source, "a.cu", o, f->cache, &error);
  g_assert_no_error (error);
  b = atomr_nvrtc_compile (source, "b.cu", o, f->cache, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (b), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpstr (atomr_module_get_key (a), !=, atomr_module_get_key (b));
}

/* What the cache cannot key is compiled without it: unknown flags, flags
 * that read or write files, time macros. */
static void
test_refusals (Fixture *f, gconstpointer data)
{
  struct { const gchar *source; const gchar *flag; } cases[] = {
    { "extern \"C\" __global__ void MARK_t (int *p) { *p = sizeof (__TIME__); }\n", NULL },
    { "extern \"C\" __global__ void MARK_t () {}\n", "--fdevice-time-trace=trace.json" },
    { "extern \"C\" __global__ void MARK_t () {}\n", "--some-future-option" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrModule) m = NULL;
      g_autoptr(GPtrArray) headers = NULL;
      g_autoptr(GBytes) blob = NULL;
      const gchar *flags[] = { cases[i].flag, NULL };
      AtomrCacheKeyInput in = { .source = cases[i].source, .program_name = "t.cu", .flags = flags };
      gchar *key;

      blob = atomr_cache_request_blob (&in);
      key = atomr_cache_key_compute (blob, &in, &headers, &error);
      g_assert_null (key);
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_test_message ("refused: %s", error->message);
      g_clear_error (&error);

      if (i == 0)
        {
          m = atomr_nvrtc_compile (cases[i].source, "t.cu", o, f->cache, &error);
          g_assert_no_error (error);
          g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_NONE);
        }
    }
}

/* Flags that change nothing but their own text are keyed, not refused. */
static void
test_keyable_flags (Fixture *f, gconstpointer data)
{
  const gchar *flags[] = { "-DX=1", "--std=c++17", "-arch=sm_90", "--use_fast_math", "-lineinfo",
                           "--maxrregcount=32", "-Iinc", "--no-source-include", NULL };
  AtomrCacheKeyInput in = { .source = "#include <cuda_fp16.h>\n", .program_name = "p.cu", .flags = flags };
  g_autoptr(GBytes) blob = atomr_cache_request_blob (&in);
  g_autoptr(GPtrArray) headers = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *key = atomr_cache_key_compute (blob, &in, &headers, &error);

  g_assert_no_error (error);
  g_assert_nonnull (key);
  /* The built-in header is NVRTC's (its identity is keyed); where a user
   * header of that name could shadow it is stamped. */
  g_assert_cmpuint (headers->len, ==, 1);
  g_assert_cmpstr (((AtomrCacheHeaderStamp *) g_ptr_array_index (headers, 0))->path, ==, "inc/cuda_fp16.h");
}

/* 5. LTO: every code-generation option reaches nvJitLink, or the compile
 * is refused. */
static void
test_lto_options (void)
{
  const gchar *flags[] = { "--gpu-architecture=sm_90", "--dlink-time-opt", "--maxrregcount=32",
                           "--ftz=true", "--prec-div=false", "--prec-sqrt=false", "--fmad=false",
                           "--generate-line-info", "--device-debug", "-O2", "--std=c++17",
                           "--define-macro=X", "--include-path=/tmp", NULL };
  const gchar *expected[] = { "-arch=sm_90", "-lto", "-maxrregcount=32", "-ftz=1", "-prec-div=0",
                              "-prec-sqrt=0", "-fma=0", "-lineinfo", "-g", "-O2" };
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_nvrtc_jitlink_options (flags, "sm_90", out, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (out->len, ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (g_ptr_array_index (out, i), ==, expected[i]);

  {
    const gchar *bad[] = { "--dlink-time-opt", "--extra-device-vectorization", NULL };
    g_autoptr(GPtrArray) o2 = g_ptr_array_new_with_free_func (g_free);
    g_assert_false (atomr_nvrtc_jitlink_options (bad, "sm_90", o2, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
    g_assert_nonnull (strstr (error->message, "--extra-device-vectorization"));
    g_clear_error (&error);
  }
  /* Through the public API: refused before anything compiles. */
  {
    g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
    g_autoptr(AtomrModule) m = NULL;
    atomr_compile_options_set_arch (o, "sm_90");
    atomr_compile_options_set_lto (o, TRUE);
    atomr_compile_options_add_extra_flag (o, "--extra-device-vectorization");
    m = atomr_nvrtc_compile ("extern \"C\" __global__ void k () {}\n", NULL, o, NULL, &error);
    g_assert_null (m);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  }
}

/* The register count the CUBIN records for its (only) kernel: the
 * EIATTR_REGCOUNT attribute of .nv.info (format EIFMT_SVAL = 4, attribute
 * 0x2f, 8 bytes: symbol index, count); -1 when absent. */
static gint
cubin_regcount (GBytes *cubin)
{
  gsize len = 0;
  const guint8 *d = g_bytes_get_data (cubin, &len);

  for (gsize i = 0; i + 12 <= len; i++)
    if (d[i] == 0x04 && d[i + 1] == 0x2f && d[i + 2] == 0x08 && d[i + 3] == 0x00)
      {
        guint32 regs;
        memcpy (&regs, d + i + 8, 4);
        return (gint) GUINT32_FROM_LE (regs);
      }
  return -1;
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

/* With LTO, maxrregcount reaches nvJitLink: the linked CUBIN says 32
 * registers (before: the same count as without the option, 72 here). */
static void
test_lto_maxrregcount_reaches_link (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCompileOptions) plain = atomr_compile_options_new ();
  g_autoptr(AtomrCompileOptions) capped = atomr_compile_options_new ();
  g_autoptr(AtomrModule) a = NULL;
  g_autoptr(AtomrModule) b = NULL;
  gint free_regs, capped_regs;

  atomr_compile_options_set_lto (atomr_compile_options_set_arch (plain, "sm_90"), TRUE);
  atomr_compile_options_set_lto (atomr_compile_options_set_arch (capped, "sm_90"), TRUE);
  atomr_compile_options_set_max_registers (capped, 32);
  a = atomr_nvrtc_compile (HEAVY_SOURCE, NULL, plain, NULL, &error);
  g_assert_no_error (error);
  b = atomr_nvrtc_compile (HEAVY_SOURCE, NULL, capped, NULL, &error);
  g_assert_no_error (error);
  free_regs = cubin_regcount (atomr_module_get_cubin (a));
  capped_regs = cubin_regcount (atomr_module_get_cubin (b));
  g_test_message ("registers: %d free, %d with maxrregcount=32", free_regs, capped_regs);
  g_assert_cmpint (free_regs, >, 32);
  g_assert_cmpint (capped_regs, >, 0);
  g_assert_cmpint (capped_regs, <=, 32);
}

/* 6. Architectures are NVRTC's to list. */
static void
test_arch_validation (void)
{
  const gchar *bad[] = { "sm_50", "sm_130", "sm_80a", "sm_90f", "compute_999", "sm_8" };
  const gchar *good[] = { "sm_75", "sm_90", "sm_90a", "sm_100f", "compute_120a" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
      g_autoptr(AtomrModule) m = NULL;

      g_assert_false (atomr_nvrtc_check_arch (bad[i], &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, bad[i]));
      g_assert_nonnull (strstr (error->message, "sm_90a"));   /* the list */
      g_clear_error (&error);
      /* The compile says the same (not a compile error). */
      atomr_compile_options_set_arch (o, bad[i]);
      m = atomr_nvrtc_compile ("extern \"C\" __global__ void k () {}\n", NULL, o, NULL, &error);
      g_assert_null (m);
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    }
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;
      g_assert_true (atomr_nvrtc_check_arch (good[i], &error));
      g_assert_no_error (error);
    }
}

/* 7. A byte NVRTC cannot read is refused, with its offset. */
static void
test_non_text (void)
{
  const gchar *source = "extern \"C\" __global__ void a () {}\n// \xff\nextern \"C\" __global__ void b () {}\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrModule) m = NULL;
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();

  m = atomr_nvrtc_compile (source, "bad.cu", o, NULL, &error);
  g_assert_null (m);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "0xFF"));
  g_assert_nonnull (strstr (error->message, "offset 38"));
  g_assert_nonnull (strstr (error->message, "line 2"));
  g_clear_error (&error);

  g_assert_false (atomr_nvrtc_check_text ("ab\0cd", 5, "x.cu", &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "offset 2"));
  g_clear_error (&error);
  g_assert_true (atomr_nvrtc_check_text ("// caf\xc3\xa9\n", -1, NULL, &error));
  g_assert_no_error (error);
}

static void
skip_without_nvrtc (void)
{
  g_test_skip ("NVRTC cannot be loaded");
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;

  g_test_init (&argc, &argv, NULL);
  if (atomr_nvrtc_load (&error) == NULL)
    {
      g_test_message ("NVRTC unavailable: %s", error->message);
      g_test_add_func ("/cachekey/skip", skip_without_nvrtc);
      return g_test_run ();
    }
#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/cachekey/include/quoted-program-dir", test_quoted_program_dir);
  ADD ("/cachekey/include/quoted-cwd", test_quoted_cwd);
  ADD ("/cachekey/include/quoted-nested", test_quoted_nested);
  ADD ("/cachekey/include/computed", test_computed_include);
  ADD ("/cachekey/include/hidden-directives", test_hidden_directives);
  ADD ("/cachekey/include/has-include", test_has_include);
  ADD ("/cachekey/include/extra-flag-include-path", test_extra_flag_include_path);
  ADD ("/cachekey/include/extra-flag-pre-include", test_extra_flag_pre_include);
  ADD ("/cachekey/include/shadowing", test_shadowing);
  ADD ("/cachekey/include/shadowing-quoted", test_shadowing_quoted);
  ADD ("/cachekey/program-name", test_program_name);
  ADD ("/cachekey/working-directory-change", test_working_directory_change);
  ADD ("/cachekey/refusals", test_refusals);
  ADD ("/cachekey/keyable-flags", test_keyable_flags);
#undef ADD
#define ADD_OFF(path, func) g_test_add (path, Fixture, "memory-off", fixture_set_up, func, fixture_tear_down)
  ADD_OFF ("/cachekey/memory-off/include/quoted-program-dir", test_quoted_program_dir);
  ADD_OFF ("/cachekey/memory-off/include/quoted-cwd", test_quoted_cwd);
  ADD_OFF ("/cachekey/memory-off/include/quoted-nested", test_quoted_nested);
  ADD_OFF ("/cachekey/memory-off/include/computed", test_computed_include);
  ADD_OFF ("/cachekey/memory-off/include/extra-flag-include-path", test_extra_flag_include_path);
  ADD_OFF ("/cachekey/memory-off/include/extra-flag-pre-include", test_extra_flag_pre_include);
  ADD_OFF ("/cachekey/memory-off/include/shadowing", test_shadowing);
  ADD_OFF ("/cachekey/memory-off/include/shadowing-quoted", test_shadowing_quoted);
  ADD_OFF ("/cachekey/memory-off/working-directory-change", test_working_directory_change);
#undef ADD_OFF
  g_test_add_func ("/cachekey/lto/options", test_lto_options);
  g_test_add_func ("/cachekey/lto/maxrregcount-reaches-link", test_lto_maxrregcount_reaches_link);
  g_test_add_func ("/cachekey/arch", test_arch_validation);
  g_test_add_func ("/cachekey/non-text", test_non_text);
  return g_test_run ();
}
