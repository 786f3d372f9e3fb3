/* test-ptxas-info.c — resource usage (registers, shared, stack, spills)
 * from ptxas' and nvJitLink's info output, and how the compile path
 * records it in the cache entry's manifest without changing the key
 *
 * The logs in data/ are real: CUDA 13.0's NVRTC with -Xptxas=-v and
 * nvJitLink with -verbose, for HEAVY_SOURCE below.  The compile tests need
 * NVRTC (and nvJitLink) but no GPU; they skip without them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include <atomr.h>
#include "nvrtc/atomr-nvrtc-loader-private.h"
#include "nvrtc/atomr-ptxas-info-private.h"

/* The kernels the samples were produced from: `heavy` spills with
 * --maxrregcount=32, and calls a device function that spills too. */
#define HEAVY_SOURCE \
  "__device__ __noinline__ float helper(float *p, int n){ float a[64]; for(int i=0;i<64;i++) a[i]=p[i*n];" \
  " float s=0; for(int i=0;i<64;i++) s+=a[(i*7)%64]*a[i]; return s; }\n" \
  "__constant__ float coef[16];\n" \
  "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n){" \
  " int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) y[i]=a*x[i]+y[i]+coef[i%16]; }\n" \
  "extern \"C\" __global__ void heavy(float *p, int n){ __shared__ float sm[256]; float r[48];\n" \
  " for(int i=0;i<48;i++) r[i]=p[i*n+threadIdx.x];\n" \
  " sm[threadIdx.x]=r[threadIdx.x%48]; __syncthreads();\n" \
  " float s=0; for(int i=0;i<48;i++) for(int j=0;j<48;j++) s+=r[i]*r[j]*sm[(i+j)%256];\n" \
  " p[threadIdx.x]=s+helper(p,n); }\n"

static gchar *
read_sample (const gchar *name)
{
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "nvrtc", "data", name, NULL);
  g_autoptr(GError) error = NULL;
  gchar *text = NULL;

  g_file_get_contents (path, &text, NULL, &error);
  g_assert_no_error (error);
  return text;
}

static JsonObject *
find (JsonNode    *root,
      const gchar *array,
      const gchar *name)
{
  JsonArray *a = json_object_get_array_member (json_node_get_object (root), array);

  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonObject *o = json_array_get_object_element (a, i);
      if (g_str_equal (json_object_get_string_member (o, "name"), name))
        return o;
    }
  g_assert_not_reached ();
  return NULL;
}

static gint64
member (JsonObject  *o,
        const gchar *name)
{
  g_assert_true (json_object_has_member (o, name));
  return json_object_get_int_member (o, name);
}

static void
test_parse_nvrtc (void)
{
  g_autofree gchar *log = read_sample ("ptxas-sm90.log");
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = atomr_ptxas_info_parse (log, "ptxas", &error);
  JsonObject *heavy, *saxpy, *helper;

  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (root), "tool"), ==, "ptxas");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json_node_get_object (root), "kernels")), ==, 2);
  heavy = find (root, "kernels", "heavy");
  g_assert_cmpstr (json_object_get_string_member (heavy, "arch"), ==, "sm_90");
  g_assert_cmpint (member (heavy, "registers"), ==, 128);
  g_assert_cmpint (member (heavy, "barriers"), ==, 1);
  g_assert_cmpint (member (heavy, "shared_bytes"), ==, 1024);
  g_assert_cmpint (member (heavy, "stack_bytes"), ==, 192);
  g_assert_cmpint (member (heavy, "spill_stores"), ==, 0);
  g_assert_cmpint (member (heavy, "spill_loads"), ==, 0);
  g_assert_true (json_object_get_null_member (heavy, "const_bytes"));   /* not reported */
  saxpy = find (root, "kernels", "saxpy");
  g_assert_cmpint (member (saxpy, "registers"), ==, 12);
  g_assert_cmpint (member (saxpy, "barriers"), ==, 0);
  g_assert_cmpint (member (saxpy, "shared_bytes"), ==, 0);
  helper = find (root, "functions", "_Z6helperPfi");
  g_assert_cmpint (member (helper, "stack_bytes"), ==, 0);
}

static void
test_parse_spills (void)
{
  g_autofree gchar *log = read_sample ("ptxas-sm90-maxrregcount32.log");
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = atomr_ptxas_info_parse (log, "ptxas", &error);
  JsonObject *heavy, *helper;

  g_assert_no_error (error);
  heavy = find (root, "kernels", "heavy");
  g_assert_cmpint (member (heavy, "registers"), ==, 32);
  g_assert_cmpint (member (heavy, "stack_bytes"), ==, 608);
  g_assert_cmpint (member (heavy, "spill_stores"), ==, 248);
  g_assert_cmpint (member (heavy, "spill_loads"), ==, 276);
  helper = find (root, "functions", "_Z6helperPfi");
  g_assert_cmpint (member (helper, "spill_stores"), ==, 464);
  g_assert_cmpint (member (helper, "spill_loads"), ==, 504);
}

/* nvJitLink linking PTX: ptxas compiles each function, then the linker's
 * summary gives the linked kernel (callees' registers included). */
static void
test_parse_nvjitlink (void)
{
  g_autofree gchar *log = read_sample ("nvjitlink-ptx-sm90.log");
  g_autofree gchar *lto = read_sample ("nvjitlink-lto-sm90-maxrregcount32.log");
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = atomr_ptxas_info_parse (log, "nvjitlink", &error);
  g_autoptr(JsonNode) lto_root = NULL;
  JsonObject *heavy, *saxpy;

  g_assert_no_error (error);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json_node_get_object (root), "kernels")), ==, 2);
  heavy = find (root, "kernels", "heavy");
  g_assert_cmpint (member (heavy, "registers"), ==, 179);      /* the summary, not ptxas' 106 */
  g_assert_cmpint (member (heavy, "shared_bytes"), ==, 1024);  /* ptxas': the summary adds the reserved 1 KiB */
  g_assert_cmpint (member (heavy, "stack_bytes"), ==, 192);
  g_assert_cmpint (member (heavy, "const_bytes"), ==, 540);
  saxpy = find (root, "kernels", "saxpy");
  g_assert_cmpint (member (saxpy, "registers"), ==, 12);
  g_assert_cmpint (member (saxpy, "const_bytes"), ==, 556);

  lto_root = atomr_ptxas_info_parse (lto, "nvjitlink", &error);
  g_assert_no_error (error);
  heavy = find (lto_root, "kernels", "heavy");
  g_assert_cmpint (member (heavy, "registers"), ==, 32);
  g_assert_cmpint (member (heavy, "spill_stores"), ==, 248);
}

static void
expect_error (const gchar *log)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = atomr_ptxas_info_parse (log, "ptxas", &error);

  g_assert_null (root);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_true (g_str_has_prefix (error->message, "ptxas info") || g_str_has_prefix (error->message, "nvJitLink info"));
}

static void
test_parse_malformed (void)
{
  g_autofree gchar *log = read_sample ("ptxas-sm90-maxrregcount32.log");
  g_autofree gchar *cut = NULL;
  gsize n = strlen (log);
  gchar *p;

  expect_error (NULL);
  expect_error ("");
  expect_error ("program.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n");
  /* cut after the entry line: the kernel has no "Used" line */
  cut = g_strndup (log, strstr (log, "ptxas info    : Function properties for heavy") - log);
  expect_error (cut);
  expect_error ("ptxas info    : Used 12 registers, used 0 barriers\n");
  expect_error ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                "ptxas info    : Used 99999999999 registers\n");
  expect_error ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                "ptxas info    : Used many registers\n");
  expect_error ("ptxas info    : Compiling entry function 'k\n");
  expect_error ("ptxas         .     192 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n");
  expect_error ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                "ptxas info    : Function properties for k\n"
                "ptxas         .     x bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                "ptxas info    : Used 12 registers\n");
  expect_error ("info    : used 12 registers, 0 stack\n");

  /* every prefix, and every single-byte corruption of a line start, parses
   * or fails cleanly */
  for (gsize i = 0; i <= n; i++)
    {
      g_autofree gchar *prefix = g_strndup (log, i);
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) root = atomr_ptxas_info_parse (prefix, "ptxas", &error);
      g_assert_true ((root == NULL) != (error == NULL));
    }
  for (p = log; (p = strchr (p, '\n')) && p[1]; p++)
    {
      g_autofree gchar *copy = g_strdup (log);
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) root = NULL;

      copy[p + 1 - log] = '#';
      root = atomr_ptxas_info_parse (copy, "ptxas", &error);
      g_assert_true ((root == NULL) != (error == NULL));
    }
}

static void
test_strip (void)
{
  g_autofree gchar *log = read_sample ("ptxas-sm90.log");
  g_autofree gchar *mixed = g_strconcat ("program.cu(3): warning #177-D: unused\n", log,
                                       g_str_has_suffix (log, "\n") ? "" : "\n", "ptxas warning : x\n", NULL);
  g_autofree gchar *stripped = atomr_ptxas_info_strip (mixed);
  g_autofree gchar *only = atomr_ptxas_info_strip (log);

  g_assert_cmpstr (stripped, ==, "program.cu(3): warning #177-D: unused\nptxas warning : x\n");
  g_assert_cmpstr (only, ==, "");
  g_assert_null (atomr_ptxas_info_strip (NULL));
}

static void
test_flags_verbose (void)
{
  const gchar *a[] = { "-arch=sm_90", "-Xptxas=-v", NULL };
  const gchar *b[] = { "--ptxas-options=-O3,--verbose", NULL };
  const gchar *c[] = { "--ptxas-options=-O3", "-v", NULL };

  g_assert_true (atomr_ptxas_flags_verbose (a));
  g_assert_true (atomr_ptxas_flags_verbose (b));
  g_assert_false (atomr_ptxas_flags_verbose (c));
  g_assert_false (atomr_ptxas_flags_verbose (NULL));
}

/* ------------------------------------------------------------------ */

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree gchar *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        rm_rf (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static gboolean
have_nvrtc (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *v = atomr_nvrtc_get_version (&error);

  if (v == NULL)
    g_test_skip_printf ("no NVRTC: %s", error->message);
  return v != NULL;
}

static JsonObject *
manifest_resources (AtomrKernelCacheEntry *entry,
                    JsonParser            *parser)
{
  const gchar *manifest = atomr_kernel_cache_entry_get_manifest (entry);
  JsonObject *root;

  g_assert_nonnull (manifest);
  g_assert_true (json_parser_load_from_data (parser, manifest, -1, NULL));
  root = json_node_get_object (json_parser_get_root (parser));
  return json_object_has_member (root, "resources") ? json_object_get_object_member (root, "resources") : NULL;
}

static AtomrCompileOptions *
heavy_options (const gchar *arch,
               gboolean     lto)
{
  AtomrCompileOptions *o = atomr_compile_options_new ();

  atomr_compile_options_add_name_expression (o, "heavy");
  atomr_compile_options_set_arch (o, arch);
  atomr_compile_options_set_max_registers (o, 32);
  atomr_compile_options_set_lto (o, lto);
  return o;
}

/* A compile for a real architecture records ptxas' report in the manifest
 * (spills included), keeps the log and the key as they were without it,
 * and a second process (a fresh cache object on the same directory) hits
 * the entry.  Fails on the old code: there was no "resources" member. */
static void
test_compile_records (void)
{
  g_autofree gchar *dir = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL, again = NULL;
  g_autoptr(AtomrCompileOptions) o = NULL;
  g_autoptr(AtomrModule) module = NULL, hit = NULL;
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) reasons = NULL;
  JsonObject *res, *heavy = NULL;
  JsonArray *kernels;

  if (!have_nvrtc ())
    return;
  dir = g_dir_make_tmp ("atomr-ptxas-info-XXXXXX", &error);
  g_assert_no_error (error);
  cache = atomr_kernel_cache_new (dir);
  o = heavy_options ("sm_90", FALSE);
  module = atomr_nvrtc_compile (HEAVY_SOURCE, NULL, o, cache, &error);
  g_assert_no_error (error);
  g_assert_null (strstr (atomr_module_get_log (module), "ptxas"));
  for (guint i = 0; atomr_module_get_flags (module)[i]; i++)
    g_assert_null (strstr (atomr_module_get_flags (module)[i], "ptxas"));

  entry = atomr_kernel_cache_lookup (cache, atomr_module_get_key (module), &error);
  g_assert_no_error (error);
  res = manifest_resources (entry, parser);
  g_assert_nonnull (res);
  g_assert_cmpstr (json_object_get_string_member (res, "tool"), ==, "ptxas");
  kernels = json_object_get_array_member (res, "kernels");
  for (guint i = 0; i < json_array_get_length (kernels); i++)
    if (g_str_equal (json_object_get_string_member (json_array_get_object_element (kernels, i), "name"), "heavy"))
      heavy = json_array_get_object_element (kernels, i);
  g_assert_nonnull (heavy);
  g_assert_cmpint (json_object_get_int_member (heavy, "registers"), <=, 32);
  g_assert_cmpint (json_object_get_int_member (heavy, "spill_stores"), >, 0);
  g_assert_cmpint (json_object_get_int_member (heavy, "spill_loads"), >, 0);
  for (guint i = 0; atomr_kernel_cache_entry_get_flags (entry)[i]; i++)
    g_assert_null (strstr (atomr_kernel_cache_entry_get_flags (entry)[i], "ptxas"));

  /* the same request from elsewhere: same key, a disk hit */
  again = atomr_kernel_cache_new (dir);
  hit = atomr_nvrtc_compile (HEAVY_SOURCE, NULL, o, again, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_assert_cmpstr (atomr_module_get_key (hit), ==, atomr_module_get_key (module));
  g_assert_cmpstr (atomr_module_get_log (hit), ==, atomr_module_get_log (module));
  /* diff ignores what is not an input of the key */
  reasons = atomr_kernel_cache_entry_diff (entry, entry);
  g_assert_cmpuint (g_strv_length (reasons), ==, 0);

  /* recorded: returned as is */
  {
    g_autofree gchar *json = atomr_kernel_cache_entry_analyse_resources (entry, NULL, NULL, &error);
    g_autoptr(JsonParser) p2 = json_parser_new ();
    g_assert_no_error (error);
    g_assert_true (json_parser_load_from_data (p2, json, -1, NULL));
    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (p2)), "tool"), ==, "ptxas");
  }
  /* another (newer) architecture: the PTX linked through nvJitLink */
  {
    g_autofree gchar *json = atomr_kernel_cache_entry_analyse_resources (entry, "sm_100", NULL, &error);
    g_autoptr(JsonParser) p2 = json_parser_new ();
    JsonObject *r;

    if (json == NULL && g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY))
      g_test_message ("no nvJitLink: %s", error->message);
    else
      {
        g_assert_no_error (error);
        g_assert_true (json_parser_load_from_data (p2, json, -1, NULL));
        r = json_node_get_object (json_parser_get_root (p2));
        g_assert_cmpstr (json_object_get_string_member (r, "tool"), ==, "nvjitlink");
        g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "kernels")), ==, 2);   /* heavy and saxpy */
      }
    g_clear_error (&error);
  }
  /* a virtual architecture has no registers */
  {
    g_autofree gchar *json = atomr_kernel_cache_entry_analyse_resources (entry, "compute_90", NULL, &error);
    g_assert_null (json);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "compute_90"));
    g_clear_error (&error);
  }
  rm_rf (dir);
}

/* LTO: nvJitLink's -verbose info log, recorded the same way. */
static void
test_compile_lto (void)
{
  g_autofree gchar *dir = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrCompileOptions) o = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *res;

  if (!have_nvrtc ())
    return;
  dir = g_dir_make_tmp ("atomr-ptxas-info-XXXXXX", &error);
  g_assert_no_error (error);
  cache = atomr_kernel_cache_new (dir);
  o = heavy_options ("sm_90", TRUE);
  module = atomr_nvrtc_compile (HEAVY_SOURCE, NULL, o, cache, &error);
  if (module == NULL && g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY))
    {
      g_test_skip_printf ("no nvJitLink: %s", error->message);
      rm_rf (dir);
      return;
    }
  g_assert_no_error (error);
  entry = atomr_kernel_cache_lookup (cache, atomr_module_get_key (module), &error);
  g_assert_no_error (error);
  res = manifest_resources (entry, parser);
  g_assert_nonnull (res);
  g_assert_cmpstr (json_object_get_string_member (res, "tool"), ==, "nvjitlink");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (res, "kernels")), >=, 1);
  rm_rf (dir);
}

/* compute_XX: no ptxas at compile time, so no resources, and analysing
 * for it is refused; for a real architecture the PTX is linked. */
static void
test_compile_virtual (void)
{
  g_autofree gchar *dir = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrCompileOptions) o = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = NULL;

  if (!have_nvrtc ())
    return;
  dir = g_dir_make_tmp ("atomr-ptxas-info-XXXXXX", &error);
  g_assert_no_error (error);
  cache = atomr_kernel_cache_new (dir);
  o = heavy_options ("compute_90", FALSE);
  module = atomr_nvrtc_compile (HEAVY_SOURCE, NULL, o, cache, &error);
  g_assert_no_error (error);
  entry = atomr_kernel_cache_lookup (cache, atomr_module_get_key (module), &error);
  g_assert_no_error (error);
  g_assert_null (manifest_resources (entry, parser));
  json = atomr_kernel_cache_entry_analyse_resources (entry, NULL, NULL, &error);
  g_assert_null (json);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  json = atomr_kernel_cache_entry_analyse_resources (entry, "sm_90", NULL, &error);
  if (json == NULL && g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY))
    g_test_message ("no nvJitLink: %s", error->message);
  else
    {
      g_autoptr(JsonParser) p2 = json_parser_new ();
      g_assert_no_error (error);
      g_assert_true (json_parser_load_from_data (p2, json, -1, NULL));
      /* maxrregcount=32 was forwarded: the same spills as the NVRTC compile */
      g_assert_nonnull (strstr (json, "\"registers\":32"));
    }
  rm_rf (dir);
}

static guint64
rd (const guchar *p,
    guint         n)
{
  guint64 v = 0;

  for (guint i = n; i-- > 0;)
    v = v << 8 | p[i];
  return v;
}

/* Section name → contents (NOBITS: its size), of a 64-bit ELF file. */
static GHashTable *
elf_sections (GBytes *elf_bytes)
{
  gsize size;
  const guchar *elf = g_bytes_get_data (elf_bytes, &size);
  GHashTable *out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  guint64 shoff = rd (elf + 0x28, 8);
  guint shentsize = (guint) rd (elf + 0x3a, 2), shnum = (guint) rd (elf + 0x3c, 2), shstrndx = (guint) rd (elf + 0x3e, 2);
  const guchar *names;

  g_assert_cmpmem (elf, 4, "\177ELF", 4);
  g_assert_cmpuint (shoff + (guint64) shnum * shentsize, <=, size);
  names = elf + rd (elf + shoff + (guint64) shstrndx * shentsize + 24, 8);
  for (guint i = 1; i < shnum; i++)
    {
      const guchar *sh = elf + shoff + (guint64) i * shentsize;
      guint32 type = (guint32) rd (sh + 4, 4);
      guint64 off = rd (sh + 24, 8), sz = rd (sh + 32, 8);
      gchar *name = g_strdup ((const gchar *) names + rd (sh, 4));

      if (type == 8)   /* SHT_NOBITS */
        g_hash_table_insert (out, name, g_bytes_new (&sz, sizeof sz));
      else
        {
          g_assert_cmpuint (off + sz, <=, size);
          g_hash_table_insert (out, name, g_bytes_new (elf + off, sz));
        }
    }
  return out;
}

static GBytes *
nvrtc_cubin (const AtomrNvrtcLib  *lib,
             const gchar * const  *flags)
{
  nvrtcProgram prog = NULL;
  size_t size = 0;
  gpointer data;

  g_assert_cmpint (lib->nvrtcCreateProgram (&prog, HEAVY_SOURCE, "heavy.cu", 0, NULL, NULL), ==, NVRTC_SUCCESS);
  g_assert_cmpint (lib->nvrtcCompileProgram (prog, (int) g_strv_length ((gchar **) flags), (const char * const *) flags),
                   ==, NVRTC_SUCCESS);
  g_assert_cmpint (lib->nvrtcGetCUBINSize (prog, &size), ==, NVRTC_SUCCESS);
  data = g_malloc (size);
  g_assert_cmpint (lib->nvrtcGetCUBIN (prog, data), ==, NVRTC_SUCCESS);
  lib->nvrtcDestroyProgram (&prog);
  return g_bytes_new_take (data, size);
}

/* Why -Xptxas=-v may stay out of the key: with and without it, every
 * section of the CUBIN is the same but .note.nv.tkinfo (the toolkit note
 * recording ptxas' command line).  If a new NVRTC breaks this, the key
 * must take the option. */
static void
test_verbose_same_code (void)
{
  static const gchar * const variants[][3] = {
    { "-arch=sm_90", NULL }, { "-arch=sm_90", "--maxrregcount=32", NULL },
    { "-arch=sm_80", "-lineinfo", NULL }, { "-arch=sm_90", "-G", NULL },
  };
  const AtomrNvrtcLib *lib;

  if (!have_nvrtc ())
    return;
  lib = atomr_nvrtc_load (NULL);
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      g_autoptr(GPtrArray) verbose = g_ptr_array_new ();
      g_autoptr(GBytes) plain_cubin = NULL, verbose_cubin = NULL;
      g_autoptr(GHashTable) a = NULL, b = NULL;
      GHashTableIter iter;
      gpointer name, bytes;

      for (guint i = 0; variants[v][i]; i++)
        g_ptr_array_add (verbose, (gpointer) variants[v][i]);
      g_ptr_array_add (verbose, (gpointer) "-Xptxas=-v");
      g_ptr_array_add (verbose, NULL);
      plain_cubin = nvrtc_cubin (lib, variants[v]);
      verbose_cubin = nvrtc_cubin (lib, (const gchar * const *) verbose->pdata);
      a = elf_sections (plain_cubin);
      b = elf_sections (verbose_cubin);
      g_assert_cmpuint (g_hash_table_size (a), ==, g_hash_table_size (b));
      g_assert_true (g_hash_table_contains (a, ".text.heavy"));
      g_hash_table_iter_init (&iter, a);
      while (g_hash_table_iter_next (&iter, &name, &bytes))
        {
          GBytes *other = g_hash_table_lookup (b, name);

          g_assert_nonnull (other);
          if (!g_str_equal (name, ".note.nv.tkinfo") && !g_bytes_equal (bytes, other))
            g_error ("%s %s: section %s differs with -Xptxas=-v", variants[v][0],
                     variants[v][1] ? variants[v][1] : "", (const gchar *) name);
        }
    }
}

/* A binding's bare constructor: a clear error, no crash, no "(null)". */
static void
test_analyse_bare (void)
{
  g_autoptr(AtomrKernelCacheEntry) bare = g_object_new (ATOMR_TYPE_KERNEL_CACHE_ENTRY, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = atomr_kernel_cache_entry_analyse_resources (bare, "sm_90", NULL, &error);

  g_assert_null (json);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "constructed directly"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ptxas-info/parse/nvrtc", test_parse_nvrtc);
  g_test_add_func ("/ptxas-info/parse/spills", test_parse_spills);
  g_test_add_func ("/ptxas-info/parse/nvjitlink", test_parse_nvjitlink);
  g_test_add_func ("/ptxas-info/parse/malformed", test_parse_malformed);
  g_test_add_func ("/ptxas-info/strip", test_strip);
  g_test_add_func ("/ptxas-info/flags-verbose", test_flags_verbose);
  g_test_add_func ("/ptxas-info/analyse-bare", test_analyse_bare);
  g_test_add_func ("/ptxas-info/compile/verbose-same-code", test_verbose_same_code);
  g_test_add_func ("/ptxas-info/compile/records", test_compile_records);
  g_test_add_func ("/ptxas-info/compile/lto", test_compile_lto);
  g_test_add_func ("/ptxas-info/compile/virtual", test_compile_virtual);
  return g_test_run ();
}
