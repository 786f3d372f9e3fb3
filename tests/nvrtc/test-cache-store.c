/* test-cache-store.c — how the kernel cache stores, reports and repairs
 *
 * Needs NVRTC but no GPU.  Processes that must start fresh are this program
 * re-executed with ATOMR_TEST_CHILD set.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "core/atomr-device-private.h"
#include "nvrtc/atomr-kernel-cache-private.h"
#include "nvrtc/atomr-kernel-cache-format-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"

#include "nvrtc-test-sources.h"
#include "cache-test-log.h"

static const gchar *self_path;

static gchar *
make_tmpdir (void)
{
  g_autoptr(GError) error = NULL;
  gchar *dir = g_dir_make_tmp ("atomr-cache-store-XXXXXX", &error);
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
          if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            rm_rf (child);
          else
            g_unlink (child);
        }
    }
  g_rmdir (path);
}

static AtomrCompileOptions *
saxpy_options (const gchar *variant)
{
  AtomrCompileOptions *o = atomr_compile_options_new ();
  atomr_compile_options_add_name_expression (o, "saxpy");
  atomr_compile_options_set_arch (o, "sm_80");
  if (variant)
    atomr_compile_options_add_define (o, "VARIANT", variant);
  return o;
}

static AtomrModule *
compile_ok (AtomrKernelCache *cache, const gchar *variant)
{
  g_autoptr(AtomrCompileOptions) o = saxpy_options (variant);
  g_autoptr(GError) error = NULL;
  AtomrModule *module = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, cache, &error);

  g_assert_no_error (error);
  g_assert_nonnull (module);
  return module;
}

static gchar *
entry_file (const gchar *dir, AtomrModule *module)
{
  g_autofree gchar *name = g_strconcat (atomr_module_get_key (module), ".akc", NULL);
  return g_build_filename (dir, name, NULL);
}

static guint
list_length (AtomrKernelCache *cache)
{
  g_autoptr(GListModel) list = atomr_kernel_cache_list (cache, NULL);
  return list ? g_list_model_get_n_items (list) : 0;
}

/* ------------------------------------------------------------------ */

/* A disk hit reads the entry and writes nothing into it: the old code
 * rewrote last-use and hit count in place (mtime, ctime and bytes changed),
 * which copied every entry up in an overlay and failed on read-only caches. */
static void
test_disk_hit_writes_nothing (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrModule) miss = compile_ok (cache, NULL);
  g_autoptr(AtomrModule) hit = NULL;
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  g_autofree gchar *path = entry_file (dir, miss);
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  gsize before_len, after_len;
  struct stat st1, st2;

  g_assert_true (g_file_get_contents (path, &before, &before_len, NULL));
  g_assert_cmpint (stat (path, &st1), ==, 0);
  g_usleep (20000);
  for (guint i = 0; i < 3; i++)
    {
      atomr_kernel_cache_clear_memory (cache);
      g_clear_object (&hit);
      hit = compile_ok (cache, NULL);
      g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);
    }
  g_assert_cmpint (stat (path, &st2), ==, 0);
  g_assert_true (g_file_get_contents (path, &after, &after_len, NULL));
  g_assert_cmpmem (before, before_len, after, after_len);
  g_assert_cmpint (st1.st_mtim.tv_sec, ==, st2.st_mtim.tv_sec);
  g_assert_cmpint (st1.st_mtim.tv_nsec, ==, st2.st_mtim.tv_nsec);
  g_assert_cmpint (st1.st_ctim.tv_sec, ==, st2.st_ctim.tv_sec);
  g_assert_cmpint (st1.st_ctim.tv_nsec, ==, st2.st_ctim.tv_nsec);

  /* The hits are in the journal, and browsing sees them. */
  entry = atomr_kernel_cache_lookup (cache, atomr_module_get_key (miss), NULL);
  g_assert_nonnull (entry);
  g_assert_cmpuint (atomr_kernel_cache_entry_get_hit_count (entry), ==, 3);
  g_assert_cmpint (g_date_time_compare (atomr_kernel_cache_entry_get_last_used (entry),
                                        atomr_kernel_cache_entry_get_created (entry)), >, 0);
  /* ... and still after gc compacted the journal. */
  g_assert_true (atomr_kernel_cache_gc (cache, G_MAXUINT64, NULL, NULL, NULL));
  g_clear_object (&entry);
  entry = atomr_kernel_cache_lookup (cache, atomr_module_get_key (miss), NULL);
  g_assert_cmpuint (atomr_kernel_cache_entry_get_hit_count (entry), ==, 3);
  g_assert_null (atomr_kernel_cache_get_store_error (cache));
  rm_rf (dir);
}

/* A cache whose directory cannot be written still hits, and says so.  As
 * root permission bits mean nothing, so the journal is made impossible to
 * write by a directory in its place. */
static void
test_read_only_directory_hits (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *usage = g_build_filename (dir, "usage", NULL);
  g_autoptr(AtomrModule) miss = NULL;
  g_autoptr(AtomrModule) hit = NULL;
  g_autoptr(AtomrKernelCache) reader = NULL;
  gboolean root = geteuid () == 0;

  {
    g_autoptr(AtomrKernelCache) writer = atomr_kernel_cache_new (dir);
    miss = compile_ok (writer, NULL);
  }
  if (root)
    g_assert_cmpint (g_mkdir (usage, 0755), ==, 0);
  else
    g_assert_cmpint (g_chmod (dir, 0555), ==, 0);

  reader = atomr_kernel_cache_new (dir);
  cache_test_take_warnings ();
  hit = compile_ok (reader, NULL);   /* no warning: reading is all it needs */
  g_assert_cmpint (cache_test_take_warnings (), ==, 0);
  g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_assert_true (g_bytes_equal (atomr_module_get_cubin (hit), atomr_module_get_cubin (miss)));
  g_assert_nonnull (atomr_kernel_cache_get_store_error (reader));
  g_assert_nonnull (strstr (atomr_kernel_cache_get_store_error (reader), "read-only"));
  g_assert_cmpuint (list_length (reader), ==, 1);
  if (!root)
    {
      g_assert_false (atomr_kernel_cache_check_writable (reader, NULL));
      g_assert_cmpint (g_chmod (dir, 0755), ==, 0);
    }
  rm_rf (dir);
}

/* An entry's path taken by a directory: the store fails, is warned about
 * once, and is visible in the cache's store error. */
static void
test_directory_in_the_way (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *path = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrModule) first = NULL;
  g_autoptr(AtomrModule) again = NULL;
  g_autoptr(AtomrModule) other = NULL;

  {
    g_autoptr(AtomrKernelCache) probe = atomr_kernel_cache_new (dir);
    g_autoptr(AtomrModule) m = compile_ok (probe, NULL);
    path = entry_file (dir, m);
  }
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_mkdir (path, 0755), ==, 0);

  cache = atomr_kernel_cache_new (dir);
  cache_test_take_warnings ();
  first = compile_ok (cache, NULL);
  g_assert_cmpint (cache_test_take_warnings (), ==, 1);
  g_assert_cmpint (atomr_module_get_cache_status (first), ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_nonnull (strstr (atomr_kernel_cache_get_store_error (cache), path));
  atomr_kernel_cache_clear_memory (cache);
  again = compile_ok (cache, NULL);     /* fails again: not reported again */
  g_assert_cmpint (atomr_module_get_cache_status (again), ==, ATOMR_CACHE_STATUS_MISS);
  other = compile_ok (cache, "2");      /* another key stores fine */
  g_assert_cmpuint (list_length (cache), ==, 1);
  g_assert_cmpint (cache_test_take_warnings (), ==, 0);
  rm_rf (dir);
}

/* The 16 bytes after the checksum used to hold last-use and hit count,
 * outside the checksum: a last-use out of range hid an entry from list and
 * stats while it was still served.  Now they are reserved, zero and
 * checksummed: whatever they hold, what is listed is what is served. */
static void
test_unchecked_fields_cannot_hide (void)
{
  const guint8 patterns[][8] = {
    { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f },   /* year 292277 */
    { 0x01, 0, 0, 0, 0, 0, 0, 0 },
  };

  for (guint p = 0; p < G_N_ELEMENTS (patterns); p++)
    {
      g_autofree gchar *dir = make_tmpdir ();
      g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
      g_autoptr(AtomrModule) miss = compile_ok (cache, NULL);
      g_autoptr(AtomrModule) again = NULL;
      g_autofree gchar *path = entry_file (dir, miss);
      AtomrKernelCacheReport report;
      guint listed;
      int fd;

      fd = g_open (path, O_WRONLY, 0);
      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpint (pwrite (fd, patterns[p], 8, 160), ==, 8);
      close (fd);

      listed = list_length (cache);
      g_assert_true (atomr_kernel_cache_get_report (cache, FALSE, &report, NULL));
      g_assert_cmpuint (report.n_entries, ==, listed);
      atomr_kernel_cache_clear_memory (cache);
      again = compile_ok (cache, NULL);
      /* Served from disk if and only if listed. */
      g_assert_cmpint (atomr_module_get_cache_status (again) == ATOMR_CACHE_STATUS_DISK_HIT, ==, listed == 1);
      g_assert_cmpuint (listed, ==, 0);
      rm_rf (dir);
    }
}

/* gc and the report count damaged entries and stale temporary files, and
 * bytes really freed; gc verifies payload checksums (a payload bit flip is
 * invisible to a header-only listing). */
static void
test_report_and_gc (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrModule) a = compile_ok (cache, "1");
  g_autoptr(AtomrModule) b = compile_ok (cache, "2");
  g_autoptr(AtomrModule) c = compile_ok (cache, "3");
  g_autofree gchar *path_b = entry_file (dir, b);
  g_autofree gchar *stale = g_build_filename (dir, ".tmp-0123-dead", NULL);
  g_autofree gchar *fresh = g_build_filename (dir, ".tmp-4567-alive", NULL);
  g_autofree gchar *junk = g_build_filename (dir, "0000.akc", NULL);
  struct utimbuf old = { 1000000000, 1000000000 };
  struct stat st_b;
  AtomrKernelCacheReport report;
  guint64 size_b;
  guint8 byte;
  int fd;

  /* Flip a bit in b's CUBIN (the last bytes of the file). */
  g_assert_cmpint (stat (path_b, &st_b), ==, 0);
  size_b = st_b.st_size;
  fd = g_open (path_b, O_RDWR, 0);
  g_assert_cmpint (pread (fd, &byte, 1, size_b - 10), ==, 1);
  byte ^= 0x10;
  g_assert_cmpint (pwrite (fd, &byte, 1, size_b - 10), ==, 1);
  close (fd);
  g_assert_true (g_file_set_contents (stale, "partial", 7, NULL));
  g_assert_cmpint (utime (stale, &old), ==, 0);
  g_assert_true (g_file_set_contents (fresh, "writing", 7, NULL));
  g_assert_true (g_file_set_contents (junk, "not an entry", 12, NULL));

  /* Header-only: b looks fine; the junk file is damaged. */
  g_assert_true (atomr_kernel_cache_get_report (cache, FALSE, &report, NULL));
  g_assert_cmpuint (report.n_entries, ==, 3);
  g_assert_cmpuint (report.n_damaged, ==, 1);
  g_assert_cmpuint (report.damaged_bytes, ==, 12);
  g_assert_cmpuint (report.n_stale_temp, ==, 1);
  g_assert_cmpuint (report.stale_temp_bytes, ==, 7);
  g_assert_cmpuint (report.misses, ==, 3);
  g_assert_true (report.writable);
  /* Verified: b is damaged too.  Nothing was removed by reporting. */
  g_assert_true (atomr_kernel_cache_get_report (cache, TRUE, &report, NULL));
  g_assert_cmpuint (report.n_entries, ==, 2);
  g_assert_cmpuint (report.n_damaged, ==, 2);
  g_assert_cmpuint (report.damaged_bytes, ==, 12 + size_b);
  g_assert_true (g_file_test (path_b, G_FILE_TEST_EXISTS));

  g_assert_true (atomr_kernel_cache_collect (cache, G_MAXUINT64, &report, NULL));
  g_assert_cmpuint (report.n_damaged, ==, 2);
  g_assert_cmpuint (report.n_stale_temp, ==, 1);
  g_assert_cmpuint (report.n_removed, ==, 0);
  g_assert_cmpuint (report.bytes_freed, ==, 12 + size_b + 7);
  g_assert_cmpuint (report.n_entries, ==, 2);
  g_assert_false (g_file_test (path_b, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (fresh, G_FILE_TEST_EXISTS));   /* a live writer's */

  /* Fitting a size: bytes freed are the files removed. */
  g_assert_true (atomr_kernel_cache_collect (cache, 0, &report, NULL));
  g_assert_cmpuint (report.n_removed, ==, 2);
  g_assert_cmpuint (report.n_entries, ==, 0);
  g_assert_cmpuint (report.entry_bytes, ==, 0);
  g_assert_cmpuint (report.bytes_freed, >, 0);
  g_assert_cmpuint (list_length (cache), ==, 0);
  rm_rf (dir);
}

static void
test_parse_size (void)
{
  struct { const gchar *text; guint64 value; } good[] = {
    { "0", 0 }, { "512", 512 }, { "20k", 20 * 1024 }, { "20K", 20 * 1024 }, { "3M", 3 << 20 },
    { "1G", G_GUINT64_CONSTANT (1) << 30 }, { "2T", G_GUINT64_CONSTANT (2) << 40 },
    { "1GB", G_GUINT64_CONSTANT (1) << 30 }, { "1GiB", G_GUINT64_CONSTANT (1) << 30 },
  };
  const gchar *bad[] = { "", "k", "-1", "1x", "1 G", "1Gb", "99999999999999999999", "16777216T", "1.5G" };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      guint64 v = 1;
      g_autoptr(GError) error = NULL;
      g_assert_true (atomr_parse_size (good[i].text, &v, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (v, ==, good[i].value);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      guint64 v = 7;
      g_autoptr(GError) error = NULL;
      g_assert_false (atomr_parse_size (bad[i], &v, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, bad[i]));
      g_assert_cmpuint (v, ==, 7);
    }
}

/* Memory hits skip the headers' stat() calls while nothing changed in
 * their directories (inotify generation); every kind of edit after a
 * fast-path hit is still noticed. */
static void
test_memory_hit_header_generation (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *inc = make_tmpdir ();
  g_autofree gchar *header = g_build_filename (inc, "v.h", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  const gchar *src = "#include \"v.h\"\nextern \"C\" __global__ void fill (float *x) { x[0] = V; }\n";
  const gchar *edits[] = { "in-place", "rename-over", "delete-recreate" };

  atomr_compile_options_add_name_expression (o, "fill");
  atomr_compile_options_add_include_path (o, inc);
  g_assert_true (g_file_set_contents (header, "#define V 1.5f\n", -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (edits); i++)
    {
      g_autoptr(AtomrModule) m = NULL;
      g_autoptr(AtomrModule) h1 = NULL;
      g_autoptr(AtomrModule) h2 = NULL;
      g_autoptr(AtomrModule) after = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree gchar *text = g_strdup_printf ("#define V %u.5f\n", i + 2);   /* same size */

      m = atomr_nvrtc_compile (src, NULL, o, cache, &error);
      g_assert_no_error (error);
      h1 = atomr_nvrtc_compile (src, NULL, o, cache, NULL);
      h2 = atomr_nvrtc_compile (src, NULL, o, cache, NULL);   /* the fast path */
      g_assert_cmpint (atomr_module_get_cache_status (h1), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
      g_assert_cmpint (atomr_module_get_cache_status (h2), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
      g_test_message ("edit: %s", edits[i]);
      if (i == 0)
        {
          int fd = g_open (header, O_WRONLY, 0);
          g_assert_cmpint (pwrite (fd, text, strlen (text), 0), ==, (gssize) strlen (text));
          close (fd);
        }
      else if (i == 1)
        g_assert_true (g_file_set_contents (header, text, -1, NULL));
      else
        {
          g_assert_cmpint (g_unlink (header), ==, 0);
          g_assert_true (g_file_set_contents (header, text, -1, NULL));
        }
      after = atomr_nvrtc_compile (src, NULL, o, cache, &error);
      g_assert_no_error (error);
      g_assert_cmpint (atomr_module_get_cache_status (after), !=, ATOMR_CACHE_STATUS_MEMORY_HIT);
      g_assert_cmpstr (atomr_module_get_key (after), !=, atomr_module_get_key (m));
    }
  rm_rf (dir);
  rm_rf (inc);
}

/* A watched include directory that is removed and created again: the
 * old watch died with it (inotify reports IN_DELETE_SELF/IN_IGNORED, and
 * nothing after), so entries must not trust it any more.  Before, the
 * directory stayed in the watched set, the recompiled entry counted on the
 * dead watch, and an in-place edit after its first hit was never seen (a
 * stale binary).  (<v.h>: only -I directories, all watched; a quoted
 * include would add the relative "./v.h", stat()ed on every hit.) */
static void
test_memory_hit_watched_directory_replaced (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *inc = make_tmpdir ();
  g_autofree gchar *header = g_build_filename (inc, "v.h", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  const gchar *src = "#include <v.h>\nextern \"C\" __global__ void fill (float *x) { x[0] = V; }\n";
  g_autofree gchar *key = NULL;

  atomr_compile_options_add_name_expression (o, "fill");
  atomr_compile_options_add_include_path (o, inc);
  g_assert_true (g_file_set_contents (header, "#define V 1.5f\n", -1, NULL));
  for (guint round = 0; round < 2; round++)
    {
      g_autoptr(AtomrModule) m = NULL;
      g_autoptr(AtomrModule) h1 = NULL;
      g_autoptr(AtomrModule) h2 = NULL;
      g_autoptr(GError) error = NULL;

      m = atomr_nvrtc_compile (src, NULL, o, cache, &error);
      g_assert_no_error (error);
      h1 = atomr_nvrtc_compile (src, NULL, o, cache, NULL);
      h2 = atomr_nvrtc_compile (src, NULL, o, cache, NULL);
      g_assert_cmpint (atomr_module_get_cache_status (h2), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
      g_clear_pointer (&key, g_free);
      key = g_strdup (atomr_module_get_key (m));
      if (round == 0)
        {
          /* Replace the directory (same path, same header text). */
          g_assert_cmpint (g_unlink (header), ==, 0);
          g_assert_cmpint (g_rmdir (inc), ==, 0);
          g_assert_cmpint (g_mkdir (inc, 0700), ==, 0);
          g_assert_true (g_file_set_contents (header, "#define V 1.5f\n", -1, NULL));
        }
    }
  {
    /* In place, same size: only the watch (or a stat) can see it. */
    g_autoptr(AtomrModule) after = NULL;
    g_autoptr(GError) error = NULL;
    int fd = g_open (header, O_WRONLY, 0);

    g_assert_cmpint (pwrite (fd, "#define V 7.5f\n", 15, 0), ==, 15);
    close (fd);
    after = atomr_nvrtc_compile (src, NULL, o, cache, &error);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_module_get_cache_status (after), !=, ATOMR_CACHE_STATUS_MEMORY_HIT);
    g_assert_cmpstr (atomr_module_get_key (after), !=, key);
  }
  rm_rf (dir);
  rm_rf (inc);
}

/* The compile path keeps what it derives from an options object (flags,
 * checks, the memory key's part) per revision of the object: every kind
 * of change made after a hit must still reach the key. */
static void
test_options_change_after_hit (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *inc = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = saxpy_options (NULL);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  const gchar *changes[] = { "define", "property", "setter", "extra flag", "include path", "arch", "dialect" };

  for (guint i = 0; i <= G_N_ELEMENTS (changes); i++)
    {
      g_autoptr(AtomrModule) m = NULL;
      g_autoptr(AtomrModule) hit = NULL;
      g_autoptr(GError) error = NULL;

      m = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, cache, &error);
      g_assert_no_error (error);
      g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_MISS);
      for (guint k = 0; k < keys->len; k++)
        g_assert_cmpstr (atomr_module_get_key (m), !=, g_ptr_array_index (keys, k));
      g_ptr_array_add (keys, g_strdup (atomr_module_get_key (m)));
      hit = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, cache, &error);
      g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
      g_assert_cmpstr (atomr_module_get_key (hit), ==, atomr_module_get_key (m));
      if (i == G_N_ELEMENTS (changes))
        break;
      g_test_message ("change: %s", changes[i]);
      switch (i)
        {
        case 0: atomr_compile_options_add_define (o, "VARIANT", "2"); break;
        case 1: g_object_set (o, "fast-math", TRUE, NULL); break;
        case 2: atomr_compile_options_set_max_registers (o, 32); break;
        case 3: atomr_compile_options_add_extra_flag (o, "-DEXTRA=1"); break;
        case 4: atomr_compile_options_add_include_path (o, inc); break;
        case 5: atomr_compile_options_set_arch (o, "sm_90"); break;
        default: atomr_compile_options_set_std (o, "c++20"); break;
        }
    }
  {
    /* A refused change is refused on the next compile, not remembered as
     * the last good one. */
    g_autoptr(AtomrModule) m = NULL;
    g_autoptr(GError) error = NULL;

    atomr_compile_options_add_define (o, "1BAD", NULL);
    m = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, o, cache, &error);
    g_assert_null (m);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  }
  {
    /* Equal options in another object: the same memory entry. */
    g_autoptr(AtomrCompileOptions) again = saxpy_options (NULL);
    g_autoptr(AtomrModule) m = atomr_nvrtc_compile (SAXPY_SOURCE, NULL, again, cache, NULL);

    g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
    g_assert_cmpstr (atomr_module_get_key (m), ==, g_ptr_array_index (keys, 0));
  }
  rm_rf (dir);
  rm_rf (inc);
}

static void store_async_result (GObject *source, GAsyncResult *result, gpointer user_data);

/* compile_module_async answers a memory hit that needs no stat() on the
 * caller's thread (no worker): the reply still comes later, from the
 * caller's context, and a header edited after the hit is still noticed. */
static void
test_actor_memory_hit_on_caller (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *inc = make_tmpdir ();
  g_autofree gchar *header = g_build_filename (inc, "v.h", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *first_key = NULL;
  const gchar *src = "#include \"v.h\"\nextern \"C\" __global__ void fill (float *x) { x[0] = V; }\n";
  AtomrCacheStatus want[] = { ATOMR_CACHE_STATUS_MISS, ATOMR_CACHE_STATUS_MEMORY_HIT, ATOMR_CACHE_STATUS_MEMORY_HIT,
                              ATOMR_CACHE_STATUS_MISS };

  actor = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_nvrtc_actor_set_cache (actor, cache);
  atomr_compile_options_add_name_expression (o, "fill");
  atomr_compile_options_add_include_path (o, inc);
  g_assert_true (g_file_set_contents (header, "#define V 1.5f\n", -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(AtomrModule) m = NULL;

      if (i == 3)
        g_assert_true (g_file_set_contents (header, "#define V 2.5f\n", -1, NULL));
      atomr_nvrtc_actor_compile_module_async (actor, src, o, NULL, store_async_result, &result);
      g_assert_null (result);   /* never called back from inside the call */
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);
      m = atomr_nvrtc_actor_compile_module_finish (actor, result, &error);
      g_assert_no_error (error);
      g_test_message ("compile %u: status %d", i, atomr_module_get_cache_status (m));
      g_assert_cmpint (atomr_module_get_cache_status (m), ==, want[i]);
      if (i == 0)
        first_key = g_strdup (atomr_module_get_key (m));
      else if (i < 3)
        g_assert_cmpstr (atomr_module_get_key (m), ==, first_key);
      else
        g_assert_cmpstr (atomr_module_get_key (m), !=, first_key);
    }
  rm_rf (dir);
  rm_rf (inc);
}

/* One compile_module_async() of @src; *@inline_hit: whether a disk hit
 * was counted before the call returned (answered on this thread). */
static AtomrModule *
actor_compile_module (AtomrNvrtcActor     *actor,
                      AtomrKernelCache    *cache,
                      const gchar         *src,
                      AtomrCompileOptions *o,
                      gboolean            *inline_hit)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  guint64 disk_before = 0, disk_after = 0, mem = 0, miss = 0;
  AtomrModule *m;

  atomr_kernel_cache_get_counters (cache, &mem, &disk_before, &miss);
  atomr_nvrtc_actor_compile_module_async (actor, src, o, NULL, store_async_result, &result);
  g_assert_null (result);   /* never called back from inside the call */
  atomr_kernel_cache_get_counters (cache, &mem, &disk_after, &miss);
  *inline_hit = disk_after == disk_before + 1;
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  m = atomr_nvrtc_actor_compile_module_finish (actor, result, &error);
  g_assert_no_error (error);
  return m;
}

/* A disk hit of a key this process computed before, valid without a
 * stat() and in the page cache, is answered on the caller's thread too
 * (the memory level is off here): the hit is counted before
 * compile_module_async() returns.  Before, every disk hit went through a
 * worker thread.  A source with a quoted include keeps a stat() per hit
 * (the program's directory and the current directory are relative
 * candidates): worker, and an edit of the header is noticed. */
static void
test_actor_disk_hit_on_caller (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *inc = make_tmpdir ();
  g_autofree gchar *header = g_build_filename (inc, "v.h", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrCompileOptions) o = atomr_compile_options_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *first_key = NULL;
  const gchar *plain = "extern \"C\" __global__ void fill (float *x) { x[0] = 1.5f; }\n";
  const gchar *src = "#include \"v.h\"\nextern \"C\" __global__ void fill (float *x) { x[0] = V; }\n";
  AtomrCacheStatus want[] = { ATOMR_CACHE_STATUS_MISS, ATOMR_CACHE_STATUS_DISK_HIT, ATOMR_CACHE_STATUS_DISK_HIT,
                              ATOMR_CACHE_STATUS_MISS };
  gboolean inline_hit;

  atomr_kernel_cache_set_memory_capacity (cache, 0);
  actor = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_nvrtc_actor_set_cache (actor, cache);
  atomr_compile_options_add_name_expression (o, "fill");
  atomr_compile_options_add_include_path (o, inc);

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(AtomrModule) m = actor_compile_module (actor, cache, plain, o, &inline_hit);

      g_assert_cmpint (atomr_module_get_cache_status (m), ==,
                       i == 0 ? ATOMR_CACHE_STATUS_MISS : ATOMR_CACHE_STATUS_DISK_HIT);
      /* The first request computes the key (worker); the others are
       * read here. */
      g_assert_true (inline_hit == (i > 0));
    }

  g_assert_true (g_file_set_contents (header, "#define V 1.5f\n", -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_autoptr(AtomrModule) m = NULL;

      if (i == 3)
        g_assert_true (g_file_set_contents (header, "#define V 2.5f\n", -1, NULL));
      m = actor_compile_module (actor, cache, src, o, &inline_hit);
      g_test_message ("compile %u: status %d", i, atomr_module_get_cache_status (m));
      g_assert_cmpint (atomr_module_get_cache_status (m), ==, want[i]);
      if (i == 0)
        first_key = g_strdup (atomr_module_get_key (m));
      else if (i < 3)
        g_assert_cmpstr (atomr_module_get_key (m), ==, first_key);
      else
        g_assert_cmpstr (atomr_module_get_key (m), !=, first_key);
    }

  /* On the host device a kernel cannot be loaded: the caller's-thread
   * path gives the worker's error. */
  {
    g_autoptr(GAsyncResult) result = NULL;
    g_autoptr(AtomrKernel) k = NULL;

    atomr_nvrtc_actor_compile_async (actor, plain, "fill", o, NULL, store_async_result, &result);
    g_assert_null (result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    k = atomr_nvrtc_actor_compile_finish (actor, result, &error);
    g_assert_null (k);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
    g_clear_error (&error);
  }
  rm_rf (dir);
  rm_rf (inc);
}

/* Entry metadata is read by a small reader of what the cache writes, with
 * json-glib for anything else: both must give back exactly what was
 * stored (escapes, UTF-8, control characters, null arch). */
static void
test_metadata_strings (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  const gchar *ascii[] = { "f<\"q\">", "g\\h\t/", "", NULL };
  const gchar *unicode[] = { "sum<\xc3\xa9>", "ctl\x01\x1f", "k\xf0\x9f\x98\x80", NULL };
  const gchar *flags[] = { "--define-macro=X=\"a b\"", "--include-path=/tmp/\xc3\xbc", NULL };
  const gchar * const *sets[] = { ascii, unicode };

  for (guint i = 0; i < G_N_ELEMENTS (sets); i++)
    {
      g_autoptr(AtomrModuleContent) c = atomr_module_content_new ();
      g_autoptr(AtomrKernelCacheEntry) entry = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree gchar *key = g_compute_checksum_for_string (G_CHECKSUM_SHA256, sets[i][0], -1);

      c->kernel_names = g_strdupv ((gchar **) sets[i]);
      c->lowered_names = g_strdupv ((gchar **) sets[i]);
      c->flags = g_strdupv ((gchar **) flags);
      c->arch = i == 0 ? NULL : g_strdup ("sm_90a");
      c->nvrtc_version = g_strdup (i == 0 ? "13.0" : "\xc3\xa9");
      c->compile_time_ms = 1.25 + i;
      c->cubin = g_bytes_new_static ("\x7f" "ELF", 4);
      g_assert_true (atomr_kernel_cache_write_entry (cache, key, c, "// s", &error));
      g_assert_no_error (error);
      entry = atomr_kernel_cache_lookup (cache, key, &error);
      g_assert_no_error (error);
      g_assert_nonnull (entry);
      g_assert_true (g_strv_equal ((const gchar * const *) atomr_kernel_cache_entry_get_kernel_names (entry), sets[i]));
      g_assert_true (g_strv_equal ((const gchar * const *) atomr_kernel_cache_entry_get_lowered_names (entry), sets[i]));
      g_assert_true (g_strv_equal ((const gchar * const *) atomr_kernel_cache_entry_get_flags (entry), flags));
      g_assert_cmpstr (atomr_kernel_cache_entry_get_arch (entry), ==, c->arch);
      g_assert_cmpstr (atomr_kernel_cache_entry_get_nvrtc_version (entry), ==, c->nvrtc_version);
      g_assert_cmpfloat (atomr_kernel_cache_entry_get_compile_time_ms (entry), ==, c->compile_time_ms);
    }
  rm_rf (dir);
}

/* ------------------------------------------------------------------ */
/* The entry checksum                                                  */

/* The checksum's digests are part of the file format: entries written
 * by any earlier build must still verify.  These were computed by an
 * independent implementation of the documented algorithm (and match the
 * code before the lanes moved into registers). */
static void
test_checksum_stable (void)
{
  static const struct { gsize len; const gchar *hex; } cases[] = {
    { 0, "ec88b4b7d6aa1bcf5b93d7ceafc69ae025c0a83a5feb8d9f857a1c574175fa21" },
    { 1, "cfcca810aa026bfe8590ee5b467ca3095d3f81bda36b4957ce01edc25f46201d" },
    { 31, "4c9720087ed27f7b971d2b9165c124ac336157ce18556b269e6919f9d8198049" },
    { 32, "c8da0646e5ec46502b91e0d7033c202ef7dd33f71c96e8486857dc8c6be16f0d" },
    { 33, "7ed8123afe98198f8edde6b0ec141653de57a8e49e035cf4db1165aae79323c5" },
    { 1000, "0591952a516a56bc9fc98d1d6877d6d583ebc858a71c8018f7647f2593cc371d" },
    { 4099, "74552122aac6ea3e31009613e48dbb84dfc7ba4dbb25d53e1e34c097c46b7808" },
  };
  guint8 header[ATOMR_CACHE_HEADER_SIZE];
  g_autofree guint8 *payload = g_malloc (4099);

  for (guint i = 0; i < sizeof header; i++)
    header[i] = (guint8) (i * 7 + 3);
  for (guint i = 0; i < 4099; i++)
    payload[i] = (guint8) (i * 131 + 17);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      guint8 digest[32];
      gchar hex[65];

      atomr_cache_compute_checksum (header, payload, cases[c].len, digest);
      for (guint i = 0; i < 32; i++)
        g_snprintf (hex + 2 * i, 3, "%02x", digest[i]);
      g_assert_cmpstr (hex, ==, cases[c].hex);
    }
}

/* ------------------------------------------------------------------ */
/* Parameter layouts in the entry                                      */

#define SAXPY_LAYOUT "0:4:f,8:8:q,16:8:q,24:8:q"

/* @m's content with @layouts (NULL: an entry written before layouts
 * were stored) written as entry @key. */
static void
write_with_layouts (AtomrKernelCache *cache,
                    AtomrModule      *m,
                    const gchar     **layouts)
{
  AtomrModuleContent *src = atomr_module_get_content (m);
  g_autoptr(AtomrModuleContent) c = atomr_module_content_new ();
  g_autoptr(GError) error = NULL;

  c->kernel_names = g_strdupv (src->kernel_names);
  c->lowered_names = g_strdupv (src->lowered_names);
  c->param_layouts = g_strdupv ((gchar **) layouts);
  c->flags = g_strdupv (src->flags);
  c->arch = g_strdup (src->arch);
  c->nvrtc_version = g_strdup (src->nvrtc_version);
  c->log = g_strdup (src->log);
  c->ptx = src->ptx ? g_bytes_ref (src->ptx) : NULL;
  c->cubin = src->cubin ? g_bytes_ref (src->cubin) : NULL;
  g_assert_true (atomr_kernel_cache_write_entry (cache, atomr_module_get_key (m), c, SAXPY_SOURCE, &error));
  g_assert_no_error (error);
}

/* Each kernel's parameter layout is stored with the entry and comes back
 * with a disk hit (a GPU load then asks the driver nothing about the
 * parameters); entries without it still hit (the driver is asked); a
 * layout that is not exactly valid makes the entry a miss. */
static void
test_param_layouts (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) writer = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrKernelCache) reader = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrDevice) host = atomr_device_new_host ();
  g_autoptr(AtomrModule) first = compile_ok (writer, NULL);
  const gchar *none_known[] = { "?", NULL };
  const gchar *bad[][3] = {
    { "0:3:i,8:8:q,16:8:q,24:8:q", NULL },            /* a 3-byte integer */
    { "0:4:f,2:8:q,16:8:q,24:8:q", NULL },            /* overlapping */
    { SAXPY_LAYOUT, SAXPY_LAYOUT, NULL },              /* two layouts, one kernel */
    { "0:4:f,8:8:q,16:8:q,24:8:q,", NULL },           /* trailing junk */
  };

  atomr_kernel_cache_set_memory_capacity (reader, 0);
  g_assert_cmpstr (atomr_module_get_param_layout (first, "saxpy"), ==, SAXPY_LAYOUT);
  {
    g_autoptr(AtomrModule) hit = compile_ok (reader, NULL);
    g_autoptr(AtomrKernel) kernel = NULL;

    g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);
    g_assert_cmpstr (atomr_module_get_param_layout (hit, "saxpy"), ==, SAXPY_LAYOUT);
    kernel = atomr_kernel_new_unloaded_layout (host, hit, "saxpy");
    g_assert_nonnull (kernel);
    g_assert_cmpuint (atomr_kernel_get_n_params (kernel), ==, 4);
    g_assert_cmpstr (atomr_kernel_get_param_type (kernel, 0), ==, ".f32");
  }

  /* Written before layouts were stored, or with none known: a hit without
   * a layout. */
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(AtomrModule) hit = NULL;

      write_with_layouts (writer, first, i == 0 ? NULL : none_known);
      hit = compile_ok (reader, NULL);
      g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);
      g_assert_null (atomr_module_get_param_layout (hit, "saxpy"));
      g_assert_null (atomr_kernel_new_unloaded_layout (host, hit, "saxpy"));
    }

  /* Damaged layouts (checksum intact): a miss, compiled again, and the
   * entry is replaced by a good one. */
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(AtomrModule) again = NULL;
      g_autoptr(AtomrModule) hit = NULL;

      write_with_layouts (writer, first, bad[i]);
      again = compile_ok (reader, NULL);
      g_assert_cmpint (atomr_module_get_cache_status (again), ==, ATOMR_CACHE_STATUS_MISS);
      g_assert_cmpstr (atomr_module_get_param_layout (again, "saxpy"), ==, SAXPY_LAYOUT);
      hit = compile_ok (reader, NULL);
      g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);
      g_assert_cmpstr (atomr_module_get_param_layout (hit, "saxpy"), ==, SAXPY_LAYOUT);
    }
  rm_rf (dir);
}

/* ------------------------------------------------------------------ */
/* Bundles                                                             */

static gchar *
key_of (AtomrModule *m)
{
  return g_strdup (atomr_module_get_key (m));
}

/* Export to a directory and to a tar file, import into fresh caches (as a
 * container or CI job would): the imported entries are disk hits there.
 * Damaged, misnamed and traversing members are refused one by one. */
static void
test_export_import (void)
{
  g_autofree gchar *work = make_tmpdir ();
  g_autofree gchar *src_dir = g_build_filename (work, "src", NULL);
  g_autofree gchar *bundle_dir = g_build_filename (work, "bundle", NULL);
  g_autofree gchar *bundle_tar = g_build_filename (work, "bundle.tar", NULL);
  g_autofree gchar *k1 = NULL;
  g_autofree gchar *k2 = NULL;
  g_autoptr(GError) error = NULL;
  guint n = 0, rejected = 0;

  {
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (src_dir);
    g_autoptr(AtomrModule) m1 = compile_ok (cache, "e1");
    g_autoptr(AtomrModule) m2 = compile_ok (cache, "e2");
    k1 = key_of (m1);
    k2 = key_of (m2);
    g_assert_true (atomr_kernel_cache_export (cache, bundle_dir, &n, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (n, ==, 2);
    g_assert_true (atomr_kernel_cache_export (cache, bundle_tar, &n, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (n, ==, 2);
  }
  for (guint i = 0; i < 2; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("dst%u", i);
      g_autofree gchar *dst = g_build_filename (work, name, NULL);
      g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dst);
      g_autoptr(AtomrModule) hit = NULL;
      guint compiles;

      g_assert_true (atomr_kernel_cache_import (cache, i == 0 ? bundle_dir : bundle_tar, &n, &rejected, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (n, ==, 2);
      g_assert_cmpuint (rejected, ==, 0);
      g_assert_cmpuint (list_length (cache), ==, 2);
      compiles = atomr_nvrtc_get_compile_count ();
      hit = compile_ok (cache, "e2");
      g_assert_cmpint (atomr_module_get_cache_status (hit), ==, ATOMR_CACHE_STATUS_DISK_HIT);
      g_assert_cmpstr (atomr_module_get_key (hit), ==, k2);
      g_assert_cmpuint (atomr_nvrtc_get_compile_count (), ==, compiles);
    }

  /* The tar is a real ustar archive, if tar(1) is there to say so. */
  g_autofree gchar *tar_program = g_find_program_in_path ("tar");
  if (tar_program)
    {
      g_autofree gchar *cmd = g_strdup_printf ("tar -tf %s", bundle_tar);
      g_autofree gchar *out = NULL;
      gint status = 0;
      g_assert_true (g_spawn_command_line_sync (cmd, &out, NULL, &status, NULL));
      g_assert_true (g_spawn_check_wait_status (status, NULL));
      g_assert_nonnull (strstr (out, k1));
      g_assert_nonnull (strstr (out, k2));
    }

  /* Damage: flip a payload byte of the first member of the tar; add a
   * misnamed copy and a traversing name to the directory bundle. */
  {
    g_autofree gchar *data = NULL;
    gsize len;
    g_autofree gchar *dst = g_build_filename (work, "dst-damaged", NULL);
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dst);

    g_assert_true (g_file_get_contents (bundle_tar, &data, &len, NULL));
    data[512 + 300] ^= 0x01;   /* inside the first entry, after its header */
    g_assert_true (g_file_set_contents (bundle_tar, data, len, NULL));
    g_assert_true (atomr_kernel_cache_import (cache, bundle_tar, &n, &rejected, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (n, ==, 1);
    g_assert_cmpuint (rejected, ==, 1);
  }
  {
    g_autofree gchar *src = g_strconcat (bundle_dir, "/", k1, ".akc", NULL);
    g_autofree gchar *wrong = g_strconcat (bundle_dir, "/", k2, ".akc", NULL);
    g_autofree gchar *data = NULL;
    gsize len;
    g_autofree gchar *dst = g_build_filename (work, "dst-misnamed", NULL);
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dst);

    g_assert_true (g_file_get_contents (src, &data, &len, NULL));
    g_assert_true (g_file_set_contents (wrong, data, len, NULL));   /* k1's entry named k2 */
    g_assert_true (atomr_kernel_cache_import (cache, bundle_dir, &n, &rejected, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (n, ==, 1);
    g_assert_cmpuint (rejected, ==, 1);
    g_assert_cmpuint (list_length (cache), ==, 1);
  }
  {
    /* Not a tar at all, and a source that does not exist: errors. */
    g_autofree gchar *junk = g_build_filename (work, "junk.tar", NULL);
    g_autofree gchar *dst = g_build_filename (work, "dst-junk", NULL);
    g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dst);
    gchar block[1024];

    memset (block, 'x', sizeof block);
    g_assert_true (g_file_set_contents (junk, block, sizeof block, NULL));
    g_assert_false (atomr_kernel_cache_import (cache, junk, &n, &rejected, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "junk.tar"));
    g_clear_error (&error);
    g_assert_false (atomr_kernel_cache_import (cache, "/nonexistent/bundle.tar", &n, &rejected, &error));
    g_assert_nonnull (error);
    g_assert_nonnull (strstr (error->message, "/nonexistent/bundle.tar"));
    g_clear_error (&error);
  }
  rm_rf (work);
}

/* ------------------------------------------------------------------ */
/* Manifests, explain, diff                                            */

static gboolean
strv_has (gchar **v, const gchar *needle)
{
  for (guint i = 0; v && v[i]; i++)
    if (strstr (v[i], needle))
      return TRUE;
  return FALSE;
}

static void
test_explain_and_diff (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *inc = make_tmpdir ();
  g_autofree gchar *header = g_build_filename (inc, "v.h", NULL);
  g_autofree gchar *usage = g_build_filename (dir, "usage", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrCompileOptions) o = saxpy_options ("x");
  g_autoptr(AtomrCompileOptions) o2 = saxpy_options ("y");
  g_autoptr(AtomrModule) m = compile_ok (cache, "x");
  g_autoptr(AtomrModule) m2 = NULL;
  g_autoptr(AtomrKernelCacheEntry) e1 = NULL;
  g_autoptr(AtomrKernelCacheEntry) e2 = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *key = NULL;
  g_autofree gchar *nearest = NULL;
  g_auto(GStrv) reasons = NULL;
  g_auto(GStrv) diffs = NULL;
  gsize usage_before = 0, usage_after = 0;
  g_autofree gchar *usage_text = NULL;

  /* The manifest is stored. */
  e1 = atomr_kernel_cache_lookup (cache, atomr_module_get_key (m), &error);
  g_assert_no_error (error);
  g_assert_nonnull (atomr_kernel_cache_entry_get_manifest (e1));
  g_assert_nonnull (strstr (atomr_kernel_cache_entry_get_manifest (e1), "source_sha256"));

  /* Hits: memory, then disk; explain records nothing. */
  g_assert_cmpint (atomr_kernel_cache_explain (cache, SAXPY_SOURCE, o, &key, &nearest, &reasons, &error),
                   ==, ATOMR_CACHE_STATUS_MEMORY_HIT);
  g_assert_no_error (error);
  g_assert_cmpstr (key, ==, atomr_module_get_key (m));
  g_assert_cmpuint (g_strv_length (reasons), ==, 0);
  g_clear_pointer (&key, g_free);
  g_clear_pointer (&reasons, g_strfreev);
  atomr_kernel_cache_clear_memory (cache);
  if (g_file_get_contents (usage, &usage_text, &usage_before, NULL))
    g_clear_pointer (&usage_text, g_free);
  g_assert_cmpint (atomr_kernel_cache_explain (cache, SAXPY_SOURCE, o, &key, NULL, &reasons, &error),
                   ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_file_get_contents (usage, &usage_text, &usage_after, NULL);
  g_assert_cmpuint (usage_after, ==, usage_before);
  g_clear_pointer (&key, g_free);
  g_clear_pointer (&reasons, g_strfreev);

  /* A define changed: a miss, and why. */
  g_assert_cmpint (atomr_kernel_cache_explain (cache, SAXPY_SOURCE, o2, &key, &nearest, &reasons, &error),
                   ==, ATOMR_CACHE_STATUS_MISS);
  g_assert_cmpstr (nearest, ==, atomr_module_get_key (m));
  g_assert_cmpstr (key, !=, atomr_module_get_key (m));
  g_assert_true (strv_has (reasons, "flag removed: --define-macro=VARIANT=x"));
  g_assert_true (strv_has (reasons, "flag added: --define-macro=VARIANT=y"));
  g_assert_cmpuint (g_strv_length (reasons), ==, 2);
  g_clear_pointer (&key, g_free);
  g_clear_pointer (&nearest, g_free);
  g_clear_pointer (&reasons, g_strfreev);

  /* diff of two entries says the same. */
  m2 = compile_ok (cache, "y");
  e2 = atomr_kernel_cache_lookup (cache, atomr_module_get_key (m2), &error);
  diffs = atomr_kernel_cache_entry_diff (e1, e2);
  g_assert_true (strv_has (diffs, "flag added: --define-macro=VARIANT=y"));
  g_assert_cmpuint (g_strv_length (diffs), ==, 2);
  g_clear_pointer (&diffs, g_strfreev);
  diffs = atomr_kernel_cache_entry_diff (e1, e1);
  g_assert_cmpuint (g_strv_length (diffs), ==, 0);

  /* A header edited: "header changed: PATH". */
  {
    const gchar *src = "#include \"v.h\"\nextern \"C\" __global__ void fill (float *x) { x[0] = V; }\n";
    g_autoptr(AtomrCompileOptions) ho = atomr_compile_options_new ();
    g_autoptr(AtomrModule) hm = NULL;

    atomr_compile_options_add_name_expression (ho, "fill");
    atomr_compile_options_add_include_path (ho, inc);
    g_assert_true (g_file_set_contents (header, "#define V 1.5f\n", -1, NULL));
    hm = atomr_nvrtc_compile (src, NULL, ho, cache, &error);
    g_assert_no_error (error);
    g_assert_true (g_file_set_contents (header, "#define V 2.5f\n", -1, NULL));
    g_assert_cmpint (atomr_kernel_cache_explain (cache, src, ho, &key, &nearest, &reasons, &error),
                     ==, ATOMR_CACHE_STATUS_MISS);
    g_assert_cmpstr (nearest, ==, atomr_module_get_key (hm));
    g_assert_true (strv_has (reasons, "header changed: "));
    g_assert_true (strv_has (reasons, header));
    g_assert_cmpuint (g_strv_length (reasons), ==, 1);
    g_clear_pointer (&key, g_free);
    g_clear_pointer (&nearest, g_free);
    g_clear_pointer (&reasons, g_strfreev);
  }
  /* What the key cannot cover is not cached: NONE, no error, a reason. */
  {
    const gchar *timed = "extern \"C\" __global__ void saxpy (int *x) { x[0] = __TIME__[0]; }\n";
    g_assert_cmpint (atomr_kernel_cache_explain_program (cache, timed, "timed.cu", o, &key, &nearest, &reasons, &error),
                     ==, ATOMR_CACHE_STATUS_NONE);
    g_assert_no_error (error);
    g_assert_null (key);
    g_assert_true (strv_has (reasons, "not cacheable: "));
    g_assert_true (strv_has (reasons, "__TIME__"));
    g_clear_pointer (&nearest, g_free);
    g_clear_pointer (&reasons, g_strfreev);
  }
  /* Bad options are errors, not verdicts. */
  {
    g_autoptr(AtomrCompileOptions) bad = saxpy_options (NULL);
    atomr_compile_options_set_arch (bad, ATOMR_ARCH_NATIVE);
    g_assert_cmpint (atomr_kernel_cache_explain (cache, SAXPY_SOURCE, bad, &key, &nearest, &reasons, &error),
                     ==, ATOMR_CACHE_STATUS_NONE);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_null (key);
    g_clear_error (&error);
  }
  rm_rf (dir);
  rm_rf (inc);
}

/* ------------------------------------------------------------------ */
/* One compile per key                                                 */

typedef struct {
  AtomrKernelCache *cache;
  const gchar      *variant;
  gint             *start;
  AtomrModule      *module;
} CompileJob;

static gpointer
compile_thread (gpointer data)
{
  CompileJob *job = data;

  while (!g_atomic_int_get (job->start))
    g_thread_yield ();
  job->module = compile_ok (job->cache, job->variant);
  return NULL;
}

/* N threads compiling one key at once compile it once: the old code let
 * every thread that missed compile. */
static void
test_single_flight_threads (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autofree gchar *variant = g_strdup_printf ("%d", g_random_int_range (0, G_MAXINT32));
  CompileJob jobs[6];
  GThread *threads[6];
  gint start = 0;
  guint before = atomr_nvrtc_get_compile_count ();
  guint misses = 0;

  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      jobs[i] = (CompileJob) { cache, variant, &start, NULL };
      threads[i] = g_thread_new ("compile", compile_thread, &jobs[i]);
    }
  g_atomic_int_set (&start, 1);
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    g_thread_join (threads[i]);
  g_assert_cmpuint (atomr_nvrtc_get_compile_count () - before, ==, 1);
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      AtomrCacheStatus st = atomr_module_get_cache_status (jobs[i].module);
      misses += st == ATOMR_CACHE_STATUS_MISS;
      g_assert_cmpstr (atomr_module_get_key (jobs[i].module), ==, atomr_module_get_key (jobs[0].module));
      g_assert_true (g_bytes_equal (atomr_module_get_cubin (jobs[i].module), atomr_module_get_cubin (jobs[0].module)));
    }
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    g_object_unref (jobs[i].module);
  g_assert_cmpuint (misses, ==, 1);
  rm_rf (dir);
}

/* Child: waits for DIR/go, compiles, prints how many compiles it ran. */
static int
child_compile (const gchar *dir)
{
  g_autofree gchar *go = g_build_filename (dir, "go", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrModule) m = NULL;

  while (!g_file_test (go, G_FILE_TEST_EXISTS))
    g_usleep (1000);
  m = compile_ok (cache, "processes");
  g_print ("%u %d %s\n", atomr_nvrtc_get_compile_count (), atomr_module_get_cache_status (m),
           atomr_module_get_key (m));
  return 0;
}

/* N processes starting together on one key compile it once (a per-key
 * lock file, O_EXCL); the old code compiled in every process. */
static void
test_processes_compile_once (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *go = g_build_filename (dir, "go", NULL);
  g_auto(GStrv) envp = g_environ_setenv (g_get_environ (), "ATOMR_TEST_CHILD", dir, TRUE);
  const gchar *argv[] = { self_path, NULL };
  g_autofree gchar *first_key = NULL;
  GPid pids[5];
  gint fds[5];
  guint compiles = 0;

  for (guint i = 0; i < G_N_ELEMENTS (pids); i++)
    {
      g_autoptr(GError) error = NULL;
      g_assert_true (g_spawn_async_with_pipes (NULL, (gchar **) argv, envp, G_SPAWN_DO_NOT_REAP_CHILD,
                                               NULL, NULL, &pids[i], NULL, &fds[i], NULL, &error));
      g_assert_no_error (error);
    }
  g_assert_true (g_file_set_contents (go, "", 0, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (pids); i++)
    {
      GString *out = g_string_new (NULL);
      g_auto(GStrv) parts = NULL;
      gchar buf[256];
      ssize_t n;
      int status = 0;

      while ((n = read (fds[i], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
          g_string_append_len (out, buf, n);
      close (fds[i]);
      g_assert_cmpint (waitpid (pids[i], &status, 0), ==, pids[i]);
      g_assert_true (g_spawn_check_wait_status (status, NULL));
      parts = g_strsplit (g_strstrip (out->str), " ", 3);
      g_string_free (out, TRUE);
      g_assert_cmpuint (g_strv_length (parts), ==, 3);
      compiles += (guint) g_ascii_strtoull (parts[0], NULL, 10);
      if (first_key == NULL)
        first_key = g_strdup (parts[2]);
      g_assert_cmpstr (parts[2], ==, first_key);
    }
  g_assert_cmpuint (compiles, ==, 1);
  {
    g_autofree gchar *lock = g_strconcat (dir, "/", first_key, ".lock", NULL);
    g_assert_false (g_file_test (lock, G_FILE_TEST_EXISTS));
  }
  rm_rf (dir);
}

static gchar *
lock_path_for (const gchar *dir, const gchar *variant)
{
  g_autofree gchar *probe_dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) probe = atomr_kernel_cache_new (probe_dir);
  g_autoptr(AtomrModule) m = compile_ok (probe, variant);
  gchar *path = g_strconcat (dir, "/", atomr_module_get_key (m), ".lock", NULL);

  rm_rf (probe_dir);
  return path;
}

/* Locks left by a dead process (same host) or old locks of another host
 * are taken over at once; a live foreign lock is waited for until the
 * timeout, then the compile goes ahead. */
static void
test_stale_locks (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *lock = lock_path_for (dir, "locks");
  g_autofree gchar *dead_owner = NULL;
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  struct utimbuf old = { 1000000000, 1000000000 };
  AtomrKernelCacheReport report;
  pid_t pid;
  int status;

  pid = fork ();
  if (pid == 0)
    _exit (0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  dead_owner = g_strdup_printf ("%s %d 1\n", g_get_host_name (), (int) pid);

  /* Dead owner on this host. */
  g_assert_true (g_file_set_contents (lock, dead_owner, -1, NULL));
  g_assert_true (atomr_kernel_cache_get_report (cache, FALSE, &report, NULL));
  g_assert_cmpuint (report.n_stale_temp, ==, 1);
  {
    g_autoptr(AtomrModule) m = compile_ok (cache, "locks");
    g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_MISS);
    g_assert_false (g_file_test (lock, G_FILE_TEST_EXISTS));
  }
  /* Another host's, old: gc removes it as stale too. */
  g_assert_true (g_file_set_contents (lock, "elsewhere 1 1\n", -1, NULL));
  g_assert_cmpint (utime (lock, &old), ==, 0);
  g_assert_true (atomr_kernel_cache_collect (cache, G_MAXUINT64, &report, NULL));
  g_assert_cmpuint (report.n_stale_temp, ==, 1);
  g_assert_false (g_file_test (lock, G_FILE_TEST_EXISTS));
  /* Another host's, fresh: not stale; with a zero timeout the compile
   * goes ahead and leaves the lock alone. */
  atomr_kernel_cache_gc (cache, 0, NULL, NULL, NULL);
  atomr_kernel_cache_clear_memory (cache);
  g_assert_true (g_file_set_contents (lock, "elsewhere 1 1\n", -1, NULL));
  g_setenv ("ATOMR_CACHE_LOCK_TIMEOUT", "0", TRUE);
  {
    g_autoptr(AtomrModule) m = compile_ok (cache, "locks");
    g_assert_cmpint (atomr_module_get_cache_status (m), ==, ATOMR_CACHE_STATUS_MISS);
    g_assert_true (g_file_test (lock, G_FILE_TEST_EXISTS));
  }
  g_unsetenv ("ATOMR_CACHE_LOCK_TIMEOUT");
  g_assert_true (atomr_kernel_cache_get_report (cache, FALSE, &report, NULL));
  g_assert_cmpuint (report.n_stale_temp, ==, 0);
  rm_rf (dir);
}

/* Child: files may grow to 1000 bytes at most (a full disk as far as the
 * cache can tell: write() fails with EFBIG); compiles twice into DIR and
 * prints "WARNINGS STATUS1 STATUS2". */
static int
child_full_disk (const gchar *dir)
{
  struct rlimit lim = { 1000, 1000 };
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrModule) a = NULL;
  g_autoptr(AtomrModule) b = NULL;

  signal (SIGXFSZ, SIG_IGN);
  if (setrlimit (RLIMIT_FSIZE, &lim) != 0)
    return 5;
  a = compile_ok (cache, "full-1");
  b = compile_ok (cache, "full-2");
  g_print ("%d %d %d %s\n", cache_test_take_warnings (), atomr_module_get_cache_status (a),
           atomr_module_get_cache_status (b), atomr_kernel_cache_get_store_error (cache) ? "error" : "none");
  return 0;
}

/* A full disk (simulated with RLIMIT_FSIZE in a child): compiles succeed,
 * the failure is warned about once, no partial entry or temporary file is
 * left. */
static void
test_full_disk (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autofree gchar *spec = g_strconcat ("full:", dir, NULL);
  g_auto(GStrv) envp = g_environ_setenv (g_get_environ (), "ATOMR_TEST_CHILD", spec, TRUE);
  const gchar *argv[] = { self_path, NULL };
  g_autofree gchar *out = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) d = NULL;
  const gchar *name;
  gint status = 0;

  g_assert_true (g_spawn_sync (NULL, (gchar **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_cmpstr (g_strstrip (out), ==, "1 1 1 error");
  d = g_dir_open (dir, 0, NULL);
  while ((name = g_dir_read_name (d)))
    {
      g_assert_false (g_str_has_suffix (name, ".akc"));
      g_assert_false (g_str_has_prefix (name, ".tmp-"));
      g_assert_false (g_str_has_suffix (name, ".lock"));
    }
  rm_rf (dir);
}

static void
store_async_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static gboolean
has_record (AtomrTraceRecorder *recorder, const gchar *operation, const gchar *detail)
{
  g_autoptr(GPtrArray) records = atomr_trace_recorder_get_records (recorder);

  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      if (g_str_equal (atomr_launch_info_get_library (info), "nvrtc")
          && g_str_equal (atomr_launch_info_get_operation (info), operation)
          && g_strcmp0 (atomr_launch_info_get_detail (info), detail) == 0
          && atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_COMPLETED)
             >= atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_SUBMITTED))
        return TRUE;
    }
  return FALSE;
}

/* Compiles through the NVRTC actor leave spans in a trace recorder: the
 * cache lookup (miss, memory hit, disk read) and the compile. */
static void
test_compile_spans (void)
{
  g_autofree gchar *dir = make_tmpdir ();
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (64);
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *key = NULL;

  actor = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_nvrtc_actor_set_cache (actor, cache);
  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (actor));
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(AtomrCompileOptions) o = saxpy_options ("spans");
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(AtomrModule) m = NULL;

      if (i == 2)
        atomr_kernel_cache_clear_memory (cache);
      atomr_nvrtc_actor_compile_module_async (actor, SAXPY_SOURCE, o, NULL, store_async_result, &result);
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);
      m = atomr_nvrtc_actor_compile_module_finish (actor, result, &error);
      g_assert_no_error (error);
      if (key == NULL)
        key = g_strdup (atomr_module_get_key (m));
    }
  /* The spans are emitted on the actor's context: let them arrive. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_true (has_record (recorder, "cache lookup: miss", key));
  g_assert_true (has_record (recorder, "compile (NVRTC)", key));
  g_assert_true (has_record (recorder, "cache lookup: memory hit", key));
  g_assert_true (has_record (recorder, "cache lookup: disk read", key));
  {
    /* ... and they export as a Chrome trace. */
    g_autofree gchar *json = atomr_trace_recorder_to_json (recorder);
    g_assert_nonnull (strstr (json, "cache lookup: disk read"));
  }
  rm_rf (dir);
}

int
main (int argc, char **argv)
{
  const gchar *child = g_getenv ("ATOMR_TEST_CHILD");

  if (child && g_str_has_prefix (child, "full:"))
    {
      cache_test_log_init ();
      return child_full_disk (child + 5);
    }
  if (child)
    return child_compile (child);
  self_path = argv[0];
  cache_test_log_init ();
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cache-store/disk-hit-writes-nothing", test_disk_hit_writes_nothing);
  g_test_add_func ("/cache-store/read-only-directory-hits", test_read_only_directory_hits);
  g_test_add_func ("/cache-store/directory-in-the-way", test_directory_in_the_way);
  g_test_add_func ("/cache-store/unchecked-fields-cannot-hide", test_unchecked_fields_cannot_hide);
  g_test_add_func ("/cache-store/report-and-gc", test_report_and_gc);
  g_test_add_func ("/cache-store/parse-size", test_parse_size);
  g_test_add_func ("/cache-store/memory-hit-header-generation", test_memory_hit_header_generation);
  g_test_add_func ("/cache-store/memory-hit-watched-directory-replaced", test_memory_hit_watched_directory_replaced);
  g_test_add_func ("/cache-store/options-change-after-hit", test_options_change_after_hit);
  g_test_add_func ("/cache-store/metadata-strings", test_metadata_strings);
  g_test_add_func ("/cache-store/param-layouts", test_param_layouts);
  g_test_add_func ("/cache-store/checksum-stable", test_checksum_stable);
  g_test_add_func ("/cache-store/actor-memory-hit-on-caller", test_actor_memory_hit_on_caller);
  g_test_add_func ("/cache-store/actor-disk-hit-on-caller", test_actor_disk_hit_on_caller);
  g_test_add_func ("/cache-store/export-import", test_export_import);
  g_test_add_func ("/cache-store/explain-and-diff", test_explain_and_diff);
  g_test_add_func ("/cache-store/single-flight-threads", test_single_flight_threads);
  g_test_add_func ("/cache-store/processes-compile-once", test_processes_compile_once);
  g_test_add_func ("/cache-store/stale-locks", test_stale_locks);
  g_test_add_func ("/cache-store/full-disk", test_full_disk);
  g_test_add_func ("/cache-store/compile-spans", test_compile_spans);
  return g_test_run ();
}
