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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "nvrtc/atomr-kernel-cache-private.h"
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

int
main (int argc, char **argv)
{
  self_path = argv[0];
  cache_test_log_init ();
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cache-store/disk-hit-writes-nothing", test_disk_hit_writes_nothing);
  g_test_add_func ("/cache-store/read-only-directory-hits", test_read_only_directory_hits);
  g_test_add_func ("/cache-store/directory-in-the-way", test_directory_in_the_way);
  g_test_add_func ("/cache-store/unchecked-fields-cannot-hide", test_unchecked_fields_cannot_hide);
  g_test_add_func ("/cache-store/report-and-gc", test_report_and_gc);
  g_test_add_func ("/cache-store/parse-size", test_parse_size);
  return g_test_run ();
}
