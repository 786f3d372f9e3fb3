/* test-fuzz-replay.c — every fuzz target's seed corpus
 * (tests/fuzz/corpus/TARGET/), and every crash input found and fixed
 * (kept there too), through the same entry points as the fuzzers, in the
 * normal build (and under valgrind in the valgrind suite).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdint.h>

#include <string.h>

#include <glib.h>

#ifdef ATOMR_HAVE_SOUP
#include "atomr.h"
#include "trace/atomr-inspector-server-private.h"
#endif

typedef int (*FuzzEntry) (const uint8_t *data, size_t size);

int fuzz_trace_json (const uint8_t *data, size_t size);
int fuzz_cache_entry (const uint8_t *data, size_t size);
#ifdef ATOMR_HAVE_SOUP
int fuzz_http_request (const uint8_t *data, size_t size);
int fuzz_websocket (const uint8_t *data, size_t size);
#endif

typedef struct
{
  const gchar *name;
  FuzzEntry    entry;
} Target;

static void
replay_target (gconstpointer user_data)
{
  const Target *t = user_data;
  g_autofree gchar *dir = g_build_filename (FUZZ_CORPUS_DIR, t->name, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) d = g_dir_open (dir, 0, &error);
  const gchar *name;
  guint n = 0;

  g_assert_no_error (error);
  while ((name = g_dir_read_name (d)))
    {
      g_autofree gchar *path = g_build_filename (dir, name, NULL);
      g_autofree gchar *contents = NULL;
      gsize len = 0;

      g_assert_true (g_file_get_contents (path, &contents, &len, &error));
      g_assert_no_error (error);
      g_test_message ("%s: %s (%" G_GSIZE_FORMAT " bytes)", t->name, name, len);
      g_assert_cmpint (t->entry ((const uint8_t *) contents, len), ==, 0);
      n++;
    }
  g_assert_cmpuint (n, >, 0);
}

#ifdef ATOMR_HAVE_SOUP
static gchar *
serve (AtomrInspectorServer *server,
       const gchar          *text)
{
  g_autoptr(GBytes) out = atomr_inspector_server_serve_bytes (server, (const guint8 *) text, strlen (text));
  gsize n = 0;
  const gchar *p = g_bytes_get_data (out, &n);

  return g_strndup (p, n);
}

/* The entry point the HTTP targets use really reaches the handlers: the
 * fuzzers would find nothing through a harness that only ever got 400. */
static void
test_serve_bytes (void)
{
  g_autoptr(AtomrInspectorServer) server = atomr_inspector_server_new ();
  g_autoptr(AtomrActor) actor = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);
  g_autofree gchar *ok = NULL;
  g_autofree gchar *denied = NULL;
  g_autofree gchar *two = NULL;
  g_autofree gchar *upgraded = NULL;

  atomr_actor_set_name (actor, "listed");
  atomr_inspector_server_add_actor (server, actor);
  ok = serve (server, "GET /v1/actors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer @TOKEN@\r\n\r\n");
  g_assert_true (g_str_has_prefix (ok, "HTTP/1.1 200"));
  g_assert_nonnull (strstr (ok, "\"listed\""));
  denied = serve (server, "GET /v1/actors HTTP/1.1\r\nHost: x\r\n\r\n");
  g_assert_true (g_str_has_prefix (denied, "HTTP/1.1 401"));
  two = serve (server, "GET /v1/nope HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer @TOKEN@\r\n\r\n");
  g_assert_true (g_str_has_prefix (two, "HTTP/1.1 404"));
  upgraded = serve (server, "GET /v1/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer @TOKEN@\r\n"
                            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  g_assert_true (g_str_has_prefix (upgraded, "HTTP/1.1 101"));
  g_assert_cmpuint (atomr_inspector_server_get_n_clients (server), ==, 0);
  g_assert_false (atomr_inspector_server_is_hooked (server));
}
#endif

int
main (int argc, char **argv)
{
  static const Target targets[] = {
    { "trace-json", fuzz_trace_json },
    { "cache-entry", fuzz_cache_entry },
#ifdef ATOMR_HAVE_SOUP
    { "http-request", fuzz_http_request },
    { "websocket", fuzz_websocket },
#endif
  };

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (targets); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("/fuzz-replay/%s", targets[i].name);
      g_test_add_data_func (path, &targets[i], replay_target);
    }
#ifdef ATOMR_HAVE_SOUP
  g_test_add_func ("/fuzz-replay/serve-bytes", test_serve_bytes);
#endif
  return g_test_run ();
}
