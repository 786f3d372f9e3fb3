/* fuzz-http-request.c — the inspector server's HTTP request parsing and
 * routing: the input is the bytes of one connection, served by a server
 * set up exactly as the running one (auth domain, limits, handlers; see
 * atomr_inspector_server_serve_bytes()).  "@TOKEN@" in the input stands
 * for the server's token.  Invariant: no crash, no hang (the entry point
 * is bounded), and a request without the token is never answered 200.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr.h"
#include "trace/atomr-inspector-server-private.h"
#include "fuzz-common.h"

int
FUZZ_ENTRY (const uint8_t *data,
            size_t         size)
{
  static AtomrInspectorServer *server;
  static AtomrActor *actor;
  g_autoptr(GBytes) answer = NULL;
  gsize n = 0;
  const gchar *text;

  fuzz_isolate ();
  if (server == NULL)
    {
      server = atomr_inspector_server_new ();
      actor = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);   /* bare: listed, no device */
      atomr_actor_set_name (actor, "fuzzed");
      atomr_inspector_server_add_actor (server, actor);
    }
  answer = atomr_inspector_server_serve_bytes (server, data, size);
  if (answer == NULL)
    g_error ("serve_bytes returned nothing");
  text = g_bytes_get_data (answer, &n);
  if (n >= 12 && memcmp (text, "HTTP/1.1 200", 12) == 0
      && g_strstr_len ((const gchar *) data, (gssize) size, "@TOKEN@") == NULL
      && g_strstr_len ((const gchar *) data, (gssize) size, atomr_inspector_server_get_token (server)) == NULL)
    g_error ("answered 200 to a request without the token");
  return 0;
}
