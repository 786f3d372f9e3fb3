/* test-cache-versions.c — library versions and the default size cap
 *
 * Issue 9, item 4: when only the dynamic linker can find NVRTC (or
 * nvJitLink), the key holds the version the library reports, so a library
 * that reports another version misses; the manifest records the reported
 * versions.  The library is named by a bare name through
 * ATOMR_NVRTC_LIBRARY / ATOMR_NVJITLINK_LIBRARY; "fake" names a shim
 * (fake-library-version.c) that reports $ATOMR_FAKE_*_VERSION and forwards
 * everything else to the real library, so the two runs differ in the
 * reported version only.
 *
 * Also `ATOMR_CACHE_MAX_SIZE`: the default cache takes its cap from it
 * (units as in 20k, 1G), stays under it, and a bad value is a warning
 * naming the value; `ATOMR_CACHE_DISABLE`; and a warm hit replaying the
 * compile log.
 *
 * Each case runs in child processes: the identities and the default
 * cache are computed once per process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include <atomr.h>
#include "nvrtc/atomr-kernel-cache-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"
#include "nvrtc-test-sources.h"

#define FAKE_NAME "libatomr-fake-library-version.so"

static const gchar *self_path;

static gchar *
make_tmpdir (void)
{
  g_autoptr(GError) error = NULL;
  gchar *dir = g_dir_make_tmp ("atomr-cache-versions-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  if (dir)
    while ((name = g_dir_read_name (dir)))
      {
        g_autofree gchar *child = g_build_filename (path, name, NULL);
        g_unlink (child);
      }
  g_rmdir (path);
}

static AtomrCompileOptions *
saxpy_options (const gchar *variant)
{
  AtomrCompileOptions *o = atomr_compile_options_new ();
  atomr_compile_options_add_name_expression (o, "saxpy");
  atomr_compile_options_set_arch (o, "sm_90");
  if (g_getenv ("ATOMR_TEST_LTO"))
    atomr_compile_options_set_lto (o, TRUE);
  if (variant)
    atomr_compile_options_add_define (o, "VARIANT", variant);
  return o;
}

/* ---- children: print "name=value" lines ---------------------------- */

static int
child_compile (const gchar *dir)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = saxpy_options (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrModule) m = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, cache, &error);
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  const AtomrNvrtcLib *lib = atomr_nvrtc_load (NULL);
  const AtomrJitLinkLib *jl = g_getenv ("ATOMR_TEST_LTO") ? atomr_jitlink_load (NULL) : NULL;

  if (m == NULL)
    {
      g_printerr ("compile: %s\n", error->message);
      return 1;
    }
  entry = atomr_kernel_cache_lookup (cache, atomr_module_get_key (m), &error);
  if (entry == NULL)
    {
      g_printerr ("lookup: %s\n", error ? error->message : "no entry");
      return 1;
    }
  g_print ("status=%d\n", atomr_module_get_cache_status (m));
  g_print ("key=%s\n", atomr_module_get_key (m));
  g_print ("nvrtc=%s\n", atomr_nvrtc_get_identity ());
  g_print ("reported=%d.%d\n", lib ? lib->major : -1, lib ? lib->minor : -1);
  if (jl)
    {
      g_print ("jitlink=%s\n", atomr_jitlink_get_identity ());
      g_print ("jitlink-reported=%u.%u\n", jl->major, jl->minor);
    }
  g_print ("manifest=%s\n", atomr_kernel_cache_entry_get_manifest (entry));
  return 0;
}

static int
child_explain (const gchar *dir)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = saxpy_options (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree gchar *key = NULL;
  g_auto(GStrv) reasons = NULL;
  AtomrCacheStatus status;

  status = atomr_kernel_cache_explain (cache, SAXPY_SOURCE, o, &key, NULL, &reasons, &error);
  if (error)
    {
      g_printerr ("explain: %s\n", error->message);
      return 1;
    }
  g_print ("status=%d\n", status);
  g_print ("key=%s\n", key);
  for (guint i = 0; reasons && reasons[i]; i++)
    g_print ("reason=%s\n", reasons[i]);
  return 0;
}

static guint64
akc_bytes (const gchar *dir, guint *count)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const gchar *name;
  guint64 total = 0;

  *count = 0;
  while (d && (name = g_dir_read_name (d)))
    if (g_str_has_suffix (name, ".akc"))
      {
        g_autofree gchar *path = g_build_filename (dir, name, NULL);
        GStatBuf st;
        if (g_stat (path, &st) == 0)
          {
            total += (guint64) st.st_size;
            (*count)++;
          }
      }
  return total;
}

/* The default cache (ATOMR_CACHE_DIR, ATOMR_CACHE_MAX_SIZE from the
 * parent): prints its cap, then compiles @n variants into it. */
static int
child_max_size (const gchar *arg)
{
  AtomrKernelCache *cache = atomr_kernel_cache_get_default ();
  guint n = (guint) g_ascii_strtoull (arg, NULL, 10);
  guint64 largest = 0, total;
  guint count = 0;

  g_print ("max=%" G_GUINT64_FORMAT "\n", atomr_kernel_cache_get_max_size (cache));
  for (guint i = 0; i < n; i++)
    {
      g_autofree gchar *variant = g_strdup_printf ("v%u", i);
      g_autoptr(AtomrCompileOptions) o = saxpy_options (variant);
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrModule) m = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, cache, &error);
      g_autofree gchar *name = NULL, *path = NULL;
      GStatBuf st;

      if (m == NULL)
        {
          g_printerr ("compile: %s\n", error->message);
          return 1;
        }
      name = g_strconcat (atomr_module_get_key (m), ".akc", NULL);
      path = g_build_filename (g_getenv ("ATOMR_CACHE_DIR"), name, NULL);
      if (g_stat (path, &st) == 0)
        largest = MAX (largest, (guint64) st.st_size);
    }
  total = akc_bytes (g_getenv ("ATOMR_CACHE_DIR"), &count);
  g_print ("entry=%" G_GUINT64_FORMAT "\n", largest);
  g_print ("total=%" G_GUINT64_FORMAT "\n", total);
  g_print ("count=%u\n", count);
  return 0;
}

/* Compiles twice into a cache on @dir (ATOMR_CACHE_DISABLE from the
 * parent) and prints both statuses. */
static int
child_disable (const gchar *dir)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(AtomrCompileOptions) o = saxpy_options ("disable");
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrModule) m = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, cache, &error);

      if (m == NULL)
        {
          g_printerr ("compile: %s\n", error->message);
          return 1;
        }
      g_print ("status%u=%d\n", i, atomr_module_get_cache_status (m));
    }
  g_print ("compiles=%u\n", atomr_nvrtc_get_compile_count ());
  return 0;
}

/* ---- the parent ---------------------------------------------------- */

/* Runs this program as a child (@mode:@arg) with @vars ("NAME", "VALUE",
 * ..., NULL; a NULL value unsets) added to the environment; returns its
 * stdout as name → value (the last of repeated names; "reason" lines are
 * joined with newlines) and its stderr in @err. */
static GHashTable *
run_child (const gchar  *mode,
           const gchar  *arg,
           gchar       **err,
           ...)
{
  g_auto(GStrv) envp = g_get_environ ();
  g_autofree gchar *child = g_strconcat (mode, ":", arg, NULL);
  const gchar *argv[] = { self_path, NULL };
  g_autofree gchar *out = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  GHashTable *result = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const gchar *name;
  gint status = 0;
  va_list ap;

  envp = g_environ_setenv (envp, "ATOMR_TEST_VERSION_CHILD", child, TRUE);
  envp = g_environ_unsetenv (envp, "G_DEBUG");     /* the bad-value warning must not abort */
  va_start (ap, err);
  while ((name = va_arg (ap, const gchar *)))
    {
      const gchar *value = va_arg (ap, const gchar *);
      envp = value ? g_environ_setenv (envp, name, value, TRUE) : g_environ_unsetenv (envp, name);
    }
  va_end (ap);
  g_assert_true (g_spawn_sync (NULL, (gchar **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, &error))
    g_error ("child %s failed: %s; stderr: %s", child, error->message, *err);
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      const gchar *eq = strchr (lines[i], '=');
      g_autofree gchar *k = NULL;
      const gchar *old;

      if (eq == NULL)
        continue;
      k = g_strndup (lines[i], eq - lines[i]);
      old = g_hash_table_lookup (result, k);
      if (old && g_str_equal (k, "reason"))
        g_hash_table_insert (result, g_strdup (k), g_strconcat (old, "\n", eq + 1, NULL));
      else
        g_hash_table_insert (result, g_strdup (k), g_strdup (eq + 1));
    }
  return result;
}

/* LD_LIBRARY_PATH for children: the shim's folder (built next to this
 * program), the real libraries'. */
static gchar *
library_path (void)
{
  g_autofree gchar *fake_dir = g_path_get_dirname (self_path);
  const gchar *old = g_getenv ("LD_LIBRARY_PATH");

  return g_strjoin (":", fake_dir, TEST_CUDA_LIBDIR, old ? old : "", NULL);
}

static const gchar *
manifest_string (const gchar *manifest, const gchar *member)
{
  static gchar buf[256];
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *o;

  g_assert_true (json_parser_load_from_data (parser, manifest, -1, NULL));
  o = json_node_get_object (json_parser_get_root (parser));
  if (!json_object_has_member (o, member) || JSON_NODE_HOLDS_NULL (json_object_get_member (o, member)))
    return NULL;
  g_strlcpy (buf, json_object_get_string_member (o, member), sizeof buf);
  return buf;
}

/* NVRTC found by the dynamic linker only: the key holds the version it
 * reports, so another reported version is a miss (and explain says so). */
static void
test_nvrtc_version (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *ld = library_path ();
  g_autofree gchar *err = NULL;
  g_autoptr(GHashTable) real = NULL, a = NULL, same = NULL, other = NULL;
  g_autofree gchar *prefix = NULL;

  /* The real library by its soname: the identity and the manifest carry
   * the version nvrtcVersion() reports. */
  real = run_child ("compile", dir, &err, "LD_LIBRARY_PATH", ld,
                    "ATOMR_NVRTC_LIBRARY", "libnvrtc.so.13", NULL);
  g_clear_pointer (&err, g_free);
  prefix = g_strdup_printf ("libnvrtc.so.13:%s:", (gchar *) g_hash_table_lookup (real, "reported"));
  g_assert_true (g_str_has_prefix (g_hash_table_lookup (real, "nvrtc"), prefix));
  g_assert_cmpstr (manifest_string (g_hash_table_lookup (real, "manifest"), "nvrtc_version"), ==,
                   g_hash_table_lookup (real, "reported"));
  g_assert_cmpstr (manifest_string (g_hash_table_lookup (real, "manifest"), "nvjitlink_version"), ==, NULL);

  /* The shim reporting 13.0, then again (a hit), then 13.99 (a miss). */
  a = run_child ("compile", dir, &err, "LD_LIBRARY_PATH", ld, "ATOMR_NVRTC_LIBRARY", FAKE_NAME,
                 "ATOMR_FAKE_NVRTC_VERSION", "13.0", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpstr (g_hash_table_lookup (a, "reported"), ==, "13.0");
  g_assert_true (g_str_has_prefix (g_hash_table_lookup (a, "nvrtc"), "libnvrtc.so.13:13.0:"));
  g_assert_nonnull (strstr (g_hash_table_lookup (a, "nvrtc"), FAKE_NAME));
  g_assert_cmpstr (manifest_string (g_hash_table_lookup (a, "manifest"), "nvrtc_version"), ==, "13.0");

  same = run_child ("explain", dir, &err, "LD_LIBRARY_PATH", ld, "ATOMR_NVRTC_LIBRARY", FAKE_NAME,
                    "ATOMR_FAKE_NVRTC_VERSION", "13.0", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (atoi (g_hash_table_lookup (same, "status")), ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_assert_cmpstr (g_hash_table_lookup (same, "key"), ==, g_hash_table_lookup (a, "key"));

  other = run_child ("explain", dir, &err, "LD_LIBRARY_PATH", ld, "ATOMR_NVRTC_LIBRARY", FAKE_NAME,
                     "ATOMR_FAKE_NVRTC_VERSION", "13.99", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (atoi (g_hash_table_lookup (other, "status")), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpstr (g_hash_table_lookup (other, "key"), !=, g_hash_table_lookup (a, "key"));
  g_assert_nonnull (g_hash_table_lookup (other, "reason"));
  g_assert_nonnull (strstr (g_hash_table_lookup (other, "reason"), "nvrtc_version"));
  rm_rf (dir);
}

/* nvJitLink found by the dynamic linker only: an LTO entry's key holds the
 * version it reports; a non-LTO key does not depend on nvJitLink. */
static void
test_jitlink_version (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *ld = library_path ();
  g_autofree gchar *err = NULL;
  g_autoptr(GHashTable) a = NULL, same = NULL, other = NULL, plain_a = NULL, plain_b = NULL;

  a = run_child ("compile", dir, &err, "LD_LIBRARY_PATH", ld, "ATOMR_TEST_LTO", "1",
                 "ATOMR_NVJITLINK_LIBRARY", FAKE_NAME, "ATOMR_FAKE_NVJITLINK_VERSION", "13.0", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpstr (g_hash_table_lookup (a, "jitlink-reported"), ==, "13.0");
  g_assert_true (g_str_has_prefix (g_hash_table_lookup (a, "jitlink"), "libnvJitLink.so.13:13.0:"));
  g_assert_cmpstr (manifest_string (g_hash_table_lookup (a, "manifest"), "nvjitlink_version"), ==, "13.0");

  same = run_child ("explain", dir, &err, "LD_LIBRARY_PATH", ld, "ATOMR_TEST_LTO", "1",
                    "ATOMR_NVJITLINK_LIBRARY", FAKE_NAME, "ATOMR_FAKE_NVJITLINK_VERSION", "13.0", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (atoi (g_hash_table_lookup (same, "status")), ==, ATOMR_CACHE_STATUS_DISK_HIT);

  other = run_child ("explain", dir, &err, "LD_LIBRARY_PATH", ld, "ATOMR_TEST_LTO", "1",
                     "ATOMR_NVJITLINK_LIBRARY", FAKE_NAME, "ATOMR_FAKE_NVJITLINK_VERSION", "13.99", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (atoi (g_hash_table_lookup (other, "status")), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_nonnull (strstr (g_hash_table_lookup (other, "reason"), "nvjitlink_version"));

  /* Without LTO nvJitLink plays no part: same key under both versions. */
  plain_a = run_child ("compile", dir, &err, "LD_LIBRARY_PATH", ld,
                       "ATOMR_NVJITLINK_LIBRARY", FAKE_NAME, "ATOMR_FAKE_NVJITLINK_VERSION", "13.0", NULL);
  g_clear_pointer (&err, g_free);
  plain_b = run_child ("explain", dir, &err, "LD_LIBRARY_PATH", ld,
                       "ATOMR_NVJITLINK_LIBRARY", FAKE_NAME, "ATOMR_FAKE_NVJITLINK_VERSION", "13.99", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (atoi (g_hash_table_lookup (plain_b, "status")), ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_assert_cmpstr (g_hash_table_lookup (plain_b, "key"), ==, g_hash_table_lookup (plain_a, "key"));
  rm_rf (dir);
}

/* ATOMR_CACHE_MAX_SIZE bounds the default cache, with units. */
static void
test_max_size (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *err = NULL;
  g_autoptr(GHashTable) r = NULL;
  guint64 entry, total, count;

  /* Unset: 1 GiB. */
  r = run_child ("max-size", "0", &err, "ATOMR_CACHE_DIR", dir, "ATOMR_CACHE_MAX_SIZE", NULL, NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpstr (g_hash_table_lookup (r, "max"), ==, "1073741824");
  g_clear_pointer (&r, g_hash_table_unref);

  r = run_child ("max-size", "0", &err, "ATOMR_CACHE_DIR", dir, "ATOMR_CACHE_MAX_SIZE", "1G", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpstr (g_hash_table_lookup (r, "max"), ==, "1073741824");
  g_clear_pointer (&r, g_hash_table_unref);

  /* 20k with 12 entries of several KB: the cache evicts to stay under
   * 20480 bytes and keeps what fits. */
  r = run_child ("max-size", "12", &err, "ATOMR_CACHE_DIR", dir, "ATOMR_CACHE_MAX_SIZE", "20k", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpstr (g_hash_table_lookup (r, "max"), ==, "20480");
  entry = g_ascii_strtoull (g_hash_table_lookup (r, "entry"), NULL, 10);
  total = g_ascii_strtoull (g_hash_table_lookup (r, "total"), NULL, 10);
  count = g_ascii_strtoull (g_hash_table_lookup (r, "count"), NULL, 10);
  g_test_message ("entry %" G_GUINT64_FORMAT " B, %" G_GUINT64_FORMAT " entries, %" G_GUINT64_FORMAT " B",
                  entry, count, total);
  g_assert_cmpuint (entry, >, 0);
  g_assert_cmpuint (entry * 12, >, 20480);     /* the cap really binds */
  g_assert_cmpuint (total, <=, 20480);
  g_assert_cmpuint (count, >=, 1);
  g_assert_cmpuint (count, <, 12);
  g_clear_pointer (&r, g_hash_table_unref);

  /* A bad value: a warning naming the variable and the value, and the
   * default cap. */
  r = run_child ("max-size", "0", &err, "ATOMR_CACHE_DIR", dir, "ATOMR_CACHE_MAX_SIZE", "12Q", NULL);
  g_assert_cmpstr (g_hash_table_lookup (r, "max"), ==, "1073741824");
  g_assert_nonnull (strstr (err, "ATOMR_CACHE_MAX_SIZE"));
  g_assert_nonnull (strstr (err, "\"12Q\""));
  g_clear_pointer (&err, g_free);
  rm_rf (dir);
}

/* ATOMR_CACHE_DISABLE=1 sends compiles around the cache (status none,
 * nothing written, the second compile compiles again); "0" does not. */
static void
test_disable (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *err = NULL;
  g_autoptr(GHashTable) off = NULL, on = NULL;
  guint count = 0;

  off = run_child ("disable", dir, &err, "ATOMR_CACHE_DISABLE", "1", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (atoi (g_hash_table_lookup (off, "status0")), ==, ATOMR_CACHE_STATUS_NONE);
  g_assert_cmpint (atoi (g_hash_table_lookup (off, "status1")), ==, ATOMR_CACHE_STATUS_NONE);
  g_assert_cmpstr (g_hash_table_lookup (off, "compiles"), ==, "2");
  akc_bytes (dir, &count);
  g_assert_cmpuint (count, ==, 0);

  on = run_child ("disable", dir, &err, "ATOMR_CACHE_DISABLE", "0", NULL);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (atoi (g_hash_table_lookup (on, "status0")), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpint (atoi (g_hash_table_lookup (on, "status1")), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
  g_assert_cmpstr (g_hash_table_lookup (on, "compiles"), ==, "1");
  akc_bytes (dir, &count);
  g_assert_cmpuint (count, ==, 1);
  rm_rf (dir);
}

/* A warm hit replays the compile's diagnostics: the log NVRTC wrote on
 * the miss comes back with memory and disk hits. */
static void
test_log_replay (void)
{
  const gchar *source = "extern \"C\" __global__ void warn_me () { int unused_var; }\n";
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrKernelCache) fresh = NULL;
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autoptr(AtomrModule) miss = NULL, memory = NULL, disk = NULL;
  g_autoptr(GError) error = NULL;

  atomr_compile_options_set_arch (o, "sm_90");
  miss = atomr_nvrtc_compile (source, "warn.cu", o, cache, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (miss), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_nonnull (strstr (atomr_module_get_log (miss), "unused_var"));

  memory = atomr_nvrtc_compile (source, "warn.cu", o, cache, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (memory), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
  g_assert_cmpstr (atomr_module_get_log (memory), ==, atomr_module_get_log (miss));

  fresh = atomr_kernel_cache_new (dir);
  disk = atomr_nvrtc_compile (source, "warn.cu", o, fresh, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_module_get_cache_status (disk), ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_assert_cmpstr (atomr_module_get_log (disk), ==, atomr_module_get_log (miss));
  g_clear_object (&cache);
  g_clear_object (&fresh);
  rm_rf (dir);
}

static void
skip_without_nvrtc (void)
{
  g_test_skip ("NVRTC cannot be loaded");
}

int
main (int argc, char **argv)
{
  const gchar *child = g_getenv ("ATOMR_TEST_VERSION_CHILD");
  g_autoptr(GError) error = NULL;

  if (child)
    {
      const gchar *colon = strchr (child, ':');
      g_autofree gchar *mode = g_strndup (child, colon - child);

      if (g_str_equal (mode, "compile"))
        return child_compile (colon + 1);
      if (g_str_equal (mode, "explain"))
        return child_explain (colon + 1);
      if (g_str_equal (mode, "disable"))
        return child_disable (colon + 1);
      return child_max_size (colon + 1);
    }
  self_path = argv[0];
  g_test_init (&argc, &argv, NULL);
  if (atomr_nvrtc_load (&error) == NULL || atomr_jitlink_load (NULL) == NULL)
    {
      g_test_message ("NVRTC unavailable: %s", error ? error->message : "nvJitLink missing");
      g_test_add_func ("/cache-versions/skip", skip_without_nvrtc);
      return g_test_run ();
    }
  g_test_add_func ("/cache-versions/nvrtc-version", test_nvrtc_version);
  g_test_add_func ("/cache-versions/jitlink-version", test_jitlink_version);
  g_test_add_func ("/cache-versions/max-size", test_max_size);
  g_test_add_func ("/cache-versions/disable", test_disable);
  g_test_add_func ("/cache-versions/log-replay", test_log_replay);
  return g_test_run ();
}
