/* bench-cache-host.c — the kernel cache's own cost, without a GPU
 *
 * Memory-cache hits through atomr_nvrtc_compile() (what the actor does
 * before loading a module), on any machine: NVRTC compiles the kernel once,
 * then every lookup must be answered from memory.  Useful under
 * `valgrind --tool=callgrind`.  Also: memory hits of a source reaching 577
 * headers (the CUB case) from one and from four threads, disk hits, and
 * eight processes compiling one key at once (must print 1 compile).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "nvrtc/atomr-nvrtc-loader-private.h"

#define EMPTY_SOURCE "extern \"C\" __global__ void empty (void) { }\n"

#define N_HEADERS 576
#define N_THREADS 4

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree gchar *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        rm_rf (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

typedef struct {
  AtomrKernelCache    *cache;
  AtomrCompileOptions *options;
  const gchar         *source;
  guint                n;
} HitJob;

static gpointer
hit_thread (gpointer data)
{
  HitJob *job = data;

  for (guint i = 0; i < job->n; i++)
    {
      g_autoptr(AtomrModule) module = atomr_nvrtc_compile (job->source, NULL, job->options, job->cache, NULL);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_MEMORY_HIT)
        g_error ("lookup %u was not a memory hit", i);
    }
  return NULL;
}

/* The CUB case: a source whose includes reach N_HEADERS headers, so each
 * memory hit stat()s them all (outside the cache lock): one thread, then
 * N_THREADS at once (wall time per hit; with the stat()s under the lock
 * the threads would take turns). */
static void
bench_many_headers (AtomrKernelCache *cache,
                    const gchar      *dir,
                    guint             n)
{
  g_autofree gchar *inc = g_build_filename (dir, "include", NULL);
  g_autoptr(GString) all = g_string_new (NULL);
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *all_path = NULL;
  const gchar *source = "#include \"all.h\"\nextern \"C\" __global__ void many (int *x) { x[0] = SUM; }\n";
  GThread *threads[N_THREADS];
  HitJob job;
  gint64 t0;

  g_mkdir_with_parents (inc, 0755);
  for (guint i = 0; i < N_HEADERS; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("h%03u.h", i);
      g_autofree gchar *path = g_build_filename (inc, name, NULL);
      g_autofree gchar *text = g_strdup_printf ("#define H%03u %u\n", i, i);
      g_file_set_contents (path, text, -1, NULL);
      g_string_append_printf (all, "#include \"h%03u.h\"\n", i);
    }
  g_string_append (all, "#define SUM (H000 + H575)\n");
  all_path = g_build_filename (inc, "all.h", NULL);
  g_file_set_contents (all_path, all->str, -1, NULL);
  atomr_compile_options_add_include_path (options, inc);
  atomr_compile_options_set_arch (options, "sm_90");
  {
    g_autoptr(AtomrModule) first = atomr_nvrtc_compile (source, NULL, options, cache, &error);
    if (first == NULL)
      g_error ("%s", error->message);
  }
  job = (HitJob) { cache, options, source, n };
  t0 = g_get_monotonic_time ();
  hit_thread (&job);
  t0 = g_get_monotonic_time () - t0;
  printf ("memory-cache hit, %u headers, 1 thread: %.3f us (mean of %u)\n", N_HEADERS + 1, (gdouble) t0 / n, n);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < N_THREADS; i++)
    threads[i] = g_thread_new ("hit", hit_thread, &job);
  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  t0 = g_get_monotonic_time () - t0;
  printf ("memory-cache hit, %u headers, %d threads: %.3f us wall per hit (%u hits)\n",
          N_HEADERS + 1, N_THREADS, (gdouble) t0 / (n * N_THREADS), n * N_THREADS);
}

/* Disk hits (the module, no GPU): read, checksum, decode, journal. */
static void
bench_disk_hits (AtomrKernelCache    *cache,
                 AtomrCompileOptions *options,
                 guint                n)
{
  gint64 t0 = g_get_monotonic_time ();

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(AtomrModule) module = NULL;
      atomr_kernel_cache_clear_memory (cache);
      module = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, NULL);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_DISK_HIT)
        g_error ("lookup %u was not a disk hit", i);
    }
  t0 = g_get_monotonic_time () - t0;
  printf ("disk-cache hit (module, no load): %.3f us (mean of %u)\n", (gdouble) t0 / n, n);
}

#define N_PROCESSES 8

/* Child: compiles one fresh key into $BENCH_CACHE_CHILD once DIR/go exists;
 * prints its compile count. */
static int
child_compile (const gchar *spec)
{
  g_auto(GStrv) parts = g_strsplit (spec, ":", 2);
  g_autofree gchar *go = g_build_filename (parts[1], "go", NULL);
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (parts[1]);
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;

  atomr_compile_options_set_arch (options, "sm_90");
  atomr_compile_options_add_define (options, "RUN", parts[0]);
  while (!g_file_test (go, G_FILE_TEST_EXISTS))
    g_usleep (500);
  module = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, &error);
  if (module == NULL)
    g_error ("%s", error->message);
  printf ("%u\n", atomr_nvrtc_get_compile_count ());
  return 0;
}

/* N processes released at once on one key: how many compiles, how long
 * until all have the module, against one compile alone. */
static void
bench_processes (const gchar *self_path,
                 const gchar *dir)
{
  g_autofree gchar *run = g_strdup_printf ("%u", g_random_int ());
  g_autofree gchar *spec = g_strdup_printf ("%s:%s", run, dir);
  g_autofree gchar *go = g_build_filename (dir, "go", NULL);
  g_auto(GStrv) envp = g_environ_setenv (g_get_environ (), "BENCH_CACHE_CHILD", spec, TRUE);
  const gchar *argv[] = { self_path, NULL };
  GPid pids[N_PROCESSES];
  gint fds[N_PROCESSES];
  guint compiles = 0;
  gint64 t0;

  for (guint i = 0; i < N_PROCESSES; i++)
    if (!g_spawn_async_with_pipes (NULL, (gchar **) argv, envp, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                   &pids[i], NULL, &fds[i], NULL, NULL))
      g_error ("cannot spawn %s", self_path);
  g_usleep (200000);   /* let them start */
  t0 = g_get_monotonic_time ();
  g_file_set_contents (go, "", 0, NULL);
  for (guint i = 0; i < N_PROCESSES; i++)
    {
      gchar buf[64] = { 0 };
      int status;
      ssize_t n = read (fds[i], buf, sizeof buf - 1);
      close (fds[i]);
      waitpid (pids[i], &status, 0);
      g_spawn_close_pid (pids[i]);
      if (n > 0)
        compiles += (guint) g_ascii_strtoull (buf, NULL, 10);
    }
  t0 = g_get_monotonic_time () - t0;
  printf ("%d processes, one key at once: %u compile(s), %.1f ms until all had the module\n",
          N_PROCESSES, compiles, t0 / 1000.0);
  g_unlink (go);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("atomr-bench-cache-XXXXXX", &error);
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  guint n = argc > 1 ? (guint) atoi (argv[1]) : 200000;
  gint64 t0;

  if (g_getenv ("BENCH_CACHE_CHILD"))
    return child_compile (g_getenv ("BENCH_CACHE_CHILD"));
  if (dir == NULL)
    g_error ("%s", error->message);
  cache = atomr_kernel_cache_new (dir);
  atomr_compile_options_set_arch (options, "sm_90");
  {
    g_autoptr(AtomrModule) first = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, &error);
    if (first == NULL)
      g_error ("%s", error->message);
  }
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(AtomrModule) module = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, NULL);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_MEMORY_HIT)
        g_error ("lookup %u was not a memory hit", i);
    }
  t0 = g_get_monotonic_time () - t0;
  printf ("memory-cache hit: %.3f us (mean of %u)\n", (gdouble) t0 / n, n);
  bench_many_headers (cache, dir, n / 100 + 1);
  bench_disk_hits (cache, options, n / 1000 + 1);
  bench_processes (argv[0], dir);
  atomr_kernel_cache_gc (cache, 0, NULL, NULL, NULL);
  rm_rf (dir);
  return 0;
}
