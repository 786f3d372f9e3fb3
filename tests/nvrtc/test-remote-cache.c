/* test-remote-cache.c — the kernel cache's remote HTTP layer against a real
 * nginx (WebDAV PUT) that this test starts on 127.0.0.1, and against small
 * misbehaving servers of its own (slow, truncated).  Skips without nginx.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "nvrtc/atomr-kernel-cache-private.h"
#include "nvrtc/atomr-module-private.h"

static gchar       *work_dir;
static gchar       *www_dir;
static GSubprocess *nginx;
static guint        nginx_port;
static gchar       *base_url;

static guint
free_port (void)
{
  g_autoptr(GSocket) s = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (lo, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_assert_true (g_socket_bind (s, any, FALSE, NULL));
  bound = g_socket_get_local_address (s, NULL);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static gboolean
port_answers (guint port)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, NULL);

  return conn != NULL;
}

static gboolean
nginx_start (void)
{
  g_autofree gchar *program = g_find_program_in_path ("nginx");
  g_autofree gchar *conf_path = NULL;
  g_autofree gchar *conf = NULL;
  g_autofree gchar *err_log = NULL;
  g_autoptr(GError) error = NULL;

  if (program == NULL && g_file_test ("/usr/sbin/nginx", G_FILE_TEST_IS_EXECUTABLE))
    program = g_strdup ("/usr/sbin/nginx");
  if (program == NULL)
    return FALSE;
  nginx_port = free_port ();
  www_dir = g_build_filename (work_dir, "www", NULL);
  g_assert_cmpint (g_mkdir_with_parents (www_dir, 0755), ==, 0);
  err_log = g_build_filename (work_dir, "error.log", NULL);
  conf = g_strdup_printf ("daemon off;\n"
                          "master_process off;\n"
                          "worker_processes 1;\n"
                          "pid %s/nginx.pid;\n"
                          "error_log %s;\n"
                          "events { worker_connections 64; }\n"
                          "http {\n"
                          "  access_log off;\n"
                          "  client_body_temp_path %s/body;\n"
                          "  proxy_temp_path %s/proxy;\n"
                          "  fastcgi_temp_path %s/fastcgi;\n"
                          "  server {\n"
                          "    listen 127.0.0.1:%u;\n"
                          "    root %s;\n"
                          "    location / { dav_methods PUT; create_full_put_path on; client_max_body_size 0; }\n"
                          "    location /fail/ { return 500; }\n"
                          "    location /mirror/ { limit_except GET HEAD { deny all; } }\n"
                          "  }\n"
                          "}\n",
                          work_dir, err_log, work_dir, work_dir, work_dir, nginx_port, www_dir);
  conf_path = g_build_filename (work_dir, "nginx.conf", NULL);
  g_assert_true (g_file_set_contents (conf_path, conf, -1, NULL));
  nginx = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                            program, "-p", work_dir, "-c", conf_path, "-e", err_log, NULL);
  if (nginx == NULL)
    {
      g_printerr ("# nginx: %s\n", error->message);
      return FALSE;
    }
  for (guint i = 0; i < 200; i++)
    {
      if (port_answers (nginx_port))
        {
          base_url = g_strdup_printf ("http://127.0.0.1:%u/cache", nginx_port);
          return TRUE;
        }
      if (g_subprocess_get_identifier (nginx) == NULL)   /* exited (reaped) */
        break;
      g_usleep (50000);
    }
  g_printerr ("# nginx did not start (see %s)\n", err_log);
  g_subprocess_force_exit (nginx);
  g_clear_object (&nginx);
  return FALSE;
}

static void
nginx_stop (void)
{
  if (nginx == NULL)
    return;
  g_subprocess_send_signal (nginx, SIGTERM);
  g_subprocess_wait (nginx, NULL, NULL);
  g_clear_object (&nginx);
}

static void
remove_tree (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree gchar *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static AtomrKernelCache *
new_cache (const gchar *name)
{
  g_autofree gchar *dir = g_build_filename (work_dir, name, NULL);

  remove_tree (dir);
  return atomr_kernel_cache_new (dir);
}

static gchar *
make_key (const gchar *seed)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, seed, -1);
}

static AtomrModuleContent *
make_content (const gchar *ptx)
{
  AtomrModuleContent *c = atomr_module_content_new ();
  const gchar *names[] = { "k", NULL };

  c->ptx = g_bytes_new (ptx, strlen (ptx) + 1);
  c->log = g_strdup ("");
  c->kernel_names = g_strdupv ((gchar **) names);
  c->lowered_names = g_strdupv ((gchar **) names);
  c->flags = g_new0 (gchar *, 1);
  c->arch = g_strdup ("compute_90");
  c->nvrtc_version = g_strdup ("13.0");
  return c;
}

static gchar *
write_entry (AtomrKernelCache *cache,
             const gchar      *seed)
{
  g_autoptr(AtomrModuleContent) c = make_content (seed);
  g_autoptr(GError) error = NULL;
  gchar *key = make_key (seed);

  g_assert_true (atomr_kernel_cache_write_entry (cache, key, c, "// source", &error));
  g_assert_no_error (error);
  return key;
}

static GBytes *
entry_bytes (AtomrKernelCache *cache,
             const gchar      *key)
{
  g_autofree gchar *name = g_strconcat (key, ".akc", NULL);
  g_autofree gchar *path = g_build_filename (atomr_kernel_cache_get_directory (cache), name, NULL);
  gchar *data = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  return g_bytes_new_take (data, len);
}

static gboolean
has_entry_file (AtomrKernelCache *cache,
                const gchar      *key)
{
  g_autofree gchar *name = g_strconcat (key, ".akc", NULL);
  g_autofree gchar *path = g_build_filename (atomr_kernel_cache_get_directory (cache), name, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* Puts @data on the server as www/@sub/@name, bypassing the client. */
static void
serve_file (const gchar *sub,
            const gchar *name,
            const void  *data,
            gsize        len)
{
  g_autofree gchar *dir = g_build_filename (www_dir, sub, NULL);
  g_autofree gchar *path = g_build_filename (dir, name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, data, len, NULL));
}

static AtomrRemoteCache *
remote_at (const gchar *sub)
{
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/%s", nginx_port, sub);
  g_autoptr(GError) error = NULL;
  AtomrRemoteCache *remote = atomr_remote_cache_new (url, &error);

  g_assert_no_error (error);
  atomr_remote_cache_set_timeout (remote, 20);
  return remote;
}

static gboolean
need_nginx (void)
{
  if (nginx)
    return TRUE;
  g_test_skip ("nginx (Debian package nginx-light) is not installed or did not start");
  return FALSE;
}

static void
test_url (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrRemoteCache) bare = g_object_new (ATOMR_TYPE_REMOTE_CACHE, NULL);
  g_autofree gchar *key = make_key ("bare");
  const gchar *bad[] = { "", "ftp://127.0.0.1/x", "127.0.0.1:80/x", "http:///nohost", "http://127.0.0.1/c?q=1",
                         "http://127.0.0.1/c#f" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(AtomrRemoteCache) r = atomr_remote_cache_new (bad[i], &error);
      g_assert_null (r);
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }
  /* A binding's bare constructor: clear errors, no crash. */
  g_assert_null (atomr_remote_cache_fetch (bare, key, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "atomr_remote_cache_new"));
  g_clear_error (&error);
  /* Keys are checked before any request (no path escapes the base). */
  {
    g_autoptr(AtomrRemoteCache) r = atomr_remote_cache_new ("http://127.0.0.1:9/c", &error);
    g_assert_null (atomr_remote_cache_fetch (r, "../../etc/passwd", NULL, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_cmpstr (atomr_remote_cache_get_url (r), ==, "http://127.0.0.1:9/c/");
  }
}

static void
test_push_pull (void)
{
  g_autoptr(AtomrKernelCache) a = NULL;
  g_autoptr(AtomrKernelCache) b = NULL;
  g_autoptr(AtomrRemoteCache) remote = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *k1 = NULL;
  g_autofree gchar *k2 = NULL;
  g_autofree gchar *k3 = make_key ("damaged");
  g_autofree gchar *damaged = NULL;
  guint pushed = 99, present = 99, pulled = 99, rejected = 99;

  if (!need_nginx ())
    return;
  a = new_cache ("push-a");
  b = new_cache ("push-b");
  remote = remote_at ("cache/push");
  k1 = write_entry (a, "one");
  k2 = write_entry (a, "two");
  /* A damaged local entry is never pushed. */
  damaged = g_strdup_printf ("%s/%s.akc", atomr_kernel_cache_get_directory (a), k3);
  g_assert_true (g_file_set_contents (damaged, "ATOMRKC\ngarbage", -1, NULL));

  g_assert_true (atomr_remote_cache_push (remote, a, &pushed, &present, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (pushed, ==, 2);
  g_assert_cmpuint (present, ==, 0);
  g_assert_true (atomr_remote_cache_contains (remote, k1, NULL, &error));
  g_assert_false (atomr_remote_cache_contains (remote, k3, NULL, &error));
  g_assert_no_error (error);

  g_assert_true (atomr_remote_cache_push (remote, a, &pushed, &present, NULL, &error));
  g_assert_cmpuint (pushed, ==, 0);
  g_assert_cmpuint (present, ==, 2);

  /* Pull everything the index lists into an empty cache. */
  g_assert_true (atomr_remote_cache_pull (remote, b, NULL, &pulled, &rejected, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (pulled, ==, 2);
  g_assert_cmpuint (rejected, ==, 0);
  {
    g_autoptr(GBytes) x = entry_bytes (a, k1);
    g_autoptr(GBytes) y = entry_bytes (b, k1);
    g_autoptr(AtomrKernelCacheEntry) e = atomr_kernel_cache_lookup (b, k2, &error);
    g_assert_true (g_bytes_equal (x, y));
    g_assert_no_error (error);
    g_assert_nonnull (e);
  }
}

static void
test_bad_content (void)
{
  g_autoptr(AtomrKernelCache) a = new_cache ("bad-a");
  g_autoptr(AtomrKernelCache) b = new_cache ("bad-b");
  g_autoptr(AtomrRemoteCache) remote = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) good = NULL;
  g_autofree gchar *k1 = NULL;
  g_autofree gchar *wrong = make_key ("wrong-key");
  g_autofree gchar *garbage = make_key ("garbage");
  g_autofree gchar *truncated = make_key ("truncated");
  g_autofree gchar *flipped = make_key ("flipped");
  guint64 rejected = 0, hits = 0;
  guint pulled = 9, n_rejected = 9;
  gsize len;
  const guint8 *data;

  if (!need_nginx ())
    return;
  remote = remote_at ("cache/bad");
  k1 = write_entry (a, "payload");
  good = entry_bytes (a, k1);
  data = g_bytes_get_data (good, &len);

  {
    g_autofree gchar *n1 = g_strconcat (wrong, ".akc", NULL);
    g_autofree gchar *n2 = g_strconcat (garbage, ".akc", NULL);
    g_autofree gchar *n3 = g_strconcat (truncated, ".akc", NULL);
    g_autofree gchar *n4 = g_strconcat (flipped, ".akc", NULL);
    g_autofree guint8 *copy = g_memdup2 (data, len);
    g_autofree gchar *hdr_key = g_strndup ((const gchar *) data + 16, 64);

    g_assert_cmpstr (hdr_key, ==, k1);
    serve_file ("cache/bad", n1, data, len);                    /* another key's entry */
    serve_file ("cache/bad", n2, "<html>not found</html>", 22); /* wrong content */
    serve_file ("cache/bad", n3, data, len / 2);                /* truncated entry */
    copy[len - 1] ^= 0x55;                                      /* one flipped bit */
    memcpy (copy + 16, flipped, 64);
    serve_file ("cache/bad", n4, copy, len);
  }
  {
    const gchar *keys[] = { wrong, garbage, truncated, flipped };
    for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
      {
        g_autoptr(GBytes) got = atomr_remote_cache_fetch (remote, keys[i], NULL, &error);
        g_assert_null (got);
        g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
        g_test_message ("rejected: %s", error->message);
        g_clear_error (&error);
      }
  }
  atomr_remote_cache_get_counters (remote, &hits, NULL, &rejected, NULL, NULL);
  g_assert_cmpuint (hits, ==, 0);
  g_assert_cmpuint (rejected, ==, 4);
  {
    g_autofree gchar *last = atomr_remote_cache_dup_last_error (remote);
    g_assert_nonnull (last);
    g_assert_nonnull (strstr (last, flipped));
  }

  /* Pulled, they are refused and nothing reaches the local cache. */
  {
    const gchar *keys[] = { wrong, garbage, truncated, flipped, NULL };
    g_assert_true (atomr_remote_cache_pull (remote, b, keys, &pulled, &n_rejected, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (pulled, ==, 0);
    g_assert_cmpuint (n_rejected, ==, 4);
    for (guint i = 0; keys[i]; i++)
      g_assert_false (has_entry_file (b, keys[i]));
  }
}

static void
test_http_errors (void)
{
  g_autoptr(AtomrRemoteCache) failing = NULL;
  g_autoptr(AtomrRemoteCache) remote = NULL;
  g_autoptr(AtomrRemoteCache) down = NULL;
  g_autoptr(AtomrRemoteCache) mirror = NULL;
  g_autoptr(AtomrKernelCache) a = new_cache ("errors-a");
  g_autoptr(GError) error = NULL;
  g_autofree gchar *key = make_key ("absent");
  g_autofree gchar *url = NULL;
  g_autofree gchar *k1 = NULL;
  g_autoptr(GBytes) bytes = NULL;
  guint64 misses = 0, errors = 0;

  if (!need_nginx ())
    return;
  /* 404 is a miss. */
  remote = remote_at ("cache/errors");
  g_assert_null (atomr_remote_cache_fetch (remote, key, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  atomr_remote_cache_get_counters (remote, NULL, &misses, NULL, &errors, NULL);
  g_assert_cmpuint (misses, ==, 1);
  g_assert_cmpuint (errors, ==, 0);

  /* 500s. */
  failing = remote_at ("fail");
  g_assert_null (atomr_remote_cache_fetch (failing, key, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "500"));
  g_clear_error (&error);
  k1 = write_entry (a, "for-500");
  bytes = entry_bytes (a, k1);
  g_assert_false (atomr_remote_cache_upload (failing, k1, bytes, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_clear_error (&error);
  atomr_remote_cache_get_counters (failing, NULL, NULL, NULL, &errors, NULL);
  g_assert_cmpuint (errors, ==, 2);

  /* A read-only mirror (the server refuses PUT, and so does the client
   * once told). */
  mirror = remote_at ("mirror");
  g_assert_false (atomr_remote_cache_upload (mirror, k1, bytes, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_clear_error (&error);
  atomr_remote_cache_set_read_only (mirror, TRUE);
  g_assert_false (atomr_remote_cache_upload (mirror, k1, bytes, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  g_assert_false (atomr_remote_cache_push (mirror, a, NULL, NULL, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);

  /* Server down: nothing listens on the port. */
  url = g_strdup_printf ("http://127.0.0.1:%u/cache", free_port ());
  down = atomr_remote_cache_new (url, &error);
  g_assert_no_error (error);
  g_assert_null (atomr_remote_cache_fetch (down, key, NULL, &error));
  g_assert_nonnull (error);
  g_assert_false (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND));
  g_clear_error (&error);
  g_assert_false (atomr_remote_cache_push (down, a, NULL, NULL, NULL, &error));
  g_assert_nonnull (error);
}

/* A misbehaving server of our own, one connection at a time. */
typedef enum { FAKE_SLOW, FAKE_TRUNCATED } FakeMode;

static gboolean
fake_run (GThreadedSocketService *service,
          GSocketConnection      *connection,
          GObject                *source,
          gpointer                user_data)
{
  FakeMode mode = GPOINTER_TO_INT (user_data);
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (connection));
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (connection));
  guint8 buf[4096];

  if (mode == FAKE_TRUNCATED)
    {
      const gchar *head = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nConnection: close\r\n\r\nATOMRKC\n";
      g_input_stream_read (in, buf, sizeof buf, NULL, NULL);
      g_output_stream_write_all (out, head, strlen (head), NULL, NULL, NULL);
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return TRUE;
    }
  /* Slow: read the request, answer nothing until the client gives up. */
  while (g_input_stream_read (in, buf, sizeof buf, NULL, NULL) > 0)
    ;
  return TRUE;
}

static GSocketService *
fake_start (FakeMode mode,
            guint   *port)
{
  GSocketService *service = g_threaded_socket_service_new (4);
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
  g_autoptr(GSocketAddress) effective = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_socket_listener_add_address (G_SOCKET_LISTENER (service), addr, G_SOCKET_TYPE_STREAM,
                                                G_SOCKET_PROTOCOL_TCP, NULL, &effective, &error));
  g_assert_no_error (error);
  *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
  g_signal_connect (service, "run", G_CALLBACK (fake_run), GINT_TO_POINTER (mode));
  g_socket_service_start (service);
  return service;
}

static void
test_slow_and_truncated (void)
{
  g_autofree gchar *key = make_key ("fake");
  g_autoptr(GError) error = NULL;
  guint port = 0;

  {
    g_autoptr(GSocketService) service = fake_start (FAKE_SLOW, &port);
    g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/cache", port);
    g_autoptr(AtomrRemoteCache) remote = atomr_remote_cache_new (url, &error);
    guint64 errors = 0;

    atomr_remote_cache_set_timeout (remote, 1);
    g_assert_null (atomr_remote_cache_fetch (remote, key, NULL, &error));
    g_assert_nonnull (error);
    g_test_message ("slow: %s", error->message);
    g_assert_false (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND));
    g_clear_error (&error);
    atomr_remote_cache_get_counters (remote, NULL, NULL, NULL, &errors, NULL);
    g_assert_cmpuint (errors, ==, 1);
    g_socket_service_stop (service);
    g_socket_listener_close (G_SOCKET_LISTENER (service));
  }
  {
    g_autoptr(GSocketService) service = fake_start (FAKE_TRUNCATED, &port);
    g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/cache", port);
    g_autoptr(AtomrRemoteCache) remote = atomr_remote_cache_new (url, &error);
    guint64 hits = 0;

    /* Whether the short body shows as an early EOF or as a stall, it is
     * an error and never a hit. */
    atomr_remote_cache_set_timeout (remote, 2);
    g_assert_null (atomr_remote_cache_fetch (remote, key, NULL, &error));
    g_assert_nonnull (error);
    g_test_message ("truncated: %s", error->message);
    g_clear_error (&error);
    atomr_remote_cache_get_counters (remote, &hits, NULL, NULL, NULL, NULL);
    g_assert_cmpuint (hits, ==, 0);
    g_socket_service_stop (service);
    g_socket_listener_close (G_SOCKET_LISTENER (service));
  }
}

/* The layers through the compile path's API: a store uploads in the
 * background; another cache's disk miss fetches, verifies and backfills;
 * a bad remote entry is a miss. */
static void
test_layers (void)
{
  g_autoptr(AtomrKernelCache) a = NULL;
  g_autoptr(AtomrKernelCache) b = NULL;
  g_autoptr(AtomrKernelCache) c = NULL;
  g_autoptr(AtomrRemoteCache) remote = NULL;
  g_autoptr(AtomrModuleContent) content = make_content ("// ptx of the layers test");
  g_autoptr(GError) error = NULL;
  const gchar *flags[] = { NULL };
  AtomrCacheKeyInput in = { .source = "extern \"C\" __global__ void k() {}\n", .program_name = "layers.cu",
                            .flags = flags, .arch = "compute_90" };
  AtomrCacheRequest *request = NULL;
  AtomrModule *module;
  g_autofree gchar *key = NULL;
  guint64 uploaded = 0, rejected = 0;

  if (!need_nginx ())
    return;
  a = new_cache ("layers-a");
  b = new_cache ("layers-b");
  c = new_cache ("layers-c");
  remote = remote_at ("cache/layers");
  atomr_remote_cache_attach (remote, a);
  atomr_remote_cache_attach (remote, b);
  atomr_remote_cache_attach (remote, c);

  module = atomr_kernel_cache_lookup_request (a, &in, &request);
  if (module == NULL && request == NULL)
    {
      g_test_skip ("the request cannot be keyed here (NVRTC cannot be loaded)");
      return;
    }
  g_assert_null (module);
  key = g_strdup (atomr_cache_request_get_key (request));
  atomr_kernel_cache_store (a, request, content, in.source);
  atomr_cache_request_free (request);
  request = NULL;
  atomr_remote_cache_wait_uploads (remote);
  atomr_remote_cache_get_counters (remote, NULL, NULL, NULL, NULL, &uploaded);
  g_assert_cmpuint (uploaded, ==, 1);
  g_assert_true (atomr_remote_cache_contains (remote, key, NULL, &error));
  g_assert_no_error (error);

  /* B: memory and disk miss, remote hit, backfilled. */
  g_assert_false (has_entry_file (b, key));
  module = atomr_kernel_cache_lookup_request (b, &in, &request);
  g_assert_nonnull (module);
  g_assert_null (request);
  g_assert_cmpint (atomr_module_get_cache_status (module), ==, ATOMR_CACHE_STATUS_DISK_HIT);
  g_assert_cmpstr (atomr_module_get_key (module), ==, key);
  g_object_unref (module);
  g_assert_cmpuint (atomr_kernel_cache_get_remote_hits (b), ==, 1);
  g_assert_true (has_entry_file (b, key));

  /* The remote entry replaced by garbage: C misses, nothing is written. */
  {
    g_autofree gchar *name = g_strconcat (key, ".akc", NULL);
    serve_file ("cache/layers", name, "ATOMRKC\nnot really", 18);
  }
  module = atomr_kernel_cache_lookup_request (c, &in, &request);
  g_assert_null (module);
  g_assert_nonnull (request);
  atomr_cache_request_free (request);
  g_assert_cmpuint (atomr_kernel_cache_get_remote_hits (c), ==, 0);
  g_assert_false (has_entry_file (c, key));
  atomr_remote_cache_get_counters (remote, NULL, NULL, &rejected, NULL, NULL);
  g_assert_cmpuint (rejected, ==, 1);

  atomr_remote_cache_detach (remote, a);
  atomr_remote_cache_detach (remote, b);
  atomr_remote_cache_detach (remote, c);
}

/* atomr cache push / pull: the CLI's side, exit status and JSON. */
static void
test_cli (void)
{
  const gchar *cli = g_getenv ("ATOMR_CLI");
  g_autoptr(AtomrKernelCache) a = NULL;
  g_autoptr(AtomrKernelCache) b = NULL;
  g_autofree gchar *key = NULL;
  g_autofree gchar *url = NULL;
  g_autofree gchar *out = NULL;
  g_autofree gchar *err = NULL;
  g_autoptr(GError) error = NULL;
  gint status = 0;

  if (!need_nginx ())
    return;
  if (cli == NULL)
    {
      g_test_skip ("ATOMR_CLI is not set (run through meson test)");
      return;
    }
  a = new_cache ("cli-a");
  b = new_cache ("cli-b");
  key = write_entry (a, "cli");
  url = g_strdup_printf ("http://127.0.0.1:%u/cache/cli", nginx_port);
  {
    const gchar *argv[] = { cli, "cache", "push", "--json", "--remote", url, "--cache-dir",
                            atomr_kernel_cache_get_directory (a), NULL };
    g_assert_true (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
    g_assert_no_error (error);
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    g_assert_nonnull (strstr (out, "\"pushed\" : 1"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }
  {
    const gchar *argv[] = { cli, "cache", "pull", "--remote", url, "--cache-dir",
                            atomr_kernel_cache_get_directory (b), key, NULL };
    g_assert_true (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    g_assert_nonnull (strstr (out, "pulled 1 entries"));
    g_assert_true (has_entry_file (b, key));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }
  {
    /* A bad URL is an error naming it; no URL at all is a usage error. */
    const gchar *argv[] = { cli, "cache", "pull", "--remote", "ftp://127.0.0.1/x", NULL };
    const gchar *argv2[] = { cli, "cache", "push", NULL };
    const gchar *envp[] = { NULL };
    g_assert_true (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
    g_assert_false (g_spawn_check_wait_status (status, NULL));
    g_assert_nonnull (strstr (err, "ftp://127.0.0.1/x"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_true (g_spawn_sync (NULL, (gchar **) argv2, (gchar **) envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
    g_assert_true (WIFEXITED (status));
    g_assert_cmpint (WEXITSTATUS (status), ==, 2);
  }
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  work_dir = g_dir_make_tmp ("atomr-remote-XXXXXX", NULL);
  nginx_start ();

  g_test_add_func ("/remote-cache/url", test_url);
  g_test_add_func ("/remote-cache/push-pull", test_push_pull);
  g_test_add_func ("/remote-cache/bad-content", test_bad_content);
  g_test_add_func ("/remote-cache/http-errors", test_http_errors);
  g_test_add_func ("/remote-cache/slow-and-truncated", test_slow_and_truncated);
  g_test_add_func ("/remote-cache/layers", test_layers);
  g_test_add_func ("/remote-cache/cli", test_cli);
  rc = g_test_run ();

  nginx_stop ();
  remove_tree (work_dir);
  g_free (work_dir);
  g_free (www_dir);
  g_free (base_url);
  return rc;
}
