/* fuzz-websocket.c — the inspector's WebSocket stream: a valid upgrade
 * request to /v1/stream with the token, then the input as the client's
 * frames.  Invariant: no crash, no hang; the client is counted while
 * connected and forgotten (handlers disconnected) once it is gone.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr.h"
#include "trace/atomr-inspector-server-private.h"
#include "fuzz-common.h"

static const gchar upgrade[] =
  "GET /v1/stream HTTP/1.1\r\n"
  "Host: 127.0.0.1\r\n"
  "Authorization: Bearer @TOKEN@\r\n"
  "Upgrade: websocket\r\n"
  "Connection: Upgrade\r\n"
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
  "Sec-WebSocket-Version: 13\r\n"
  "\r\n";

int
FUZZ_ENTRY (const uint8_t *data,
            size_t         size)
{
  static AtomrInspectorServer *server;
  static AtomrActor *actor;
  g_autoptr(GByteArray) input = g_byte_array_new ();
  g_autoptr(GBytes) answer = NULL;
  gsize n = 0;
  const gchar *text;

  fuzz_isolate ();
  if (server == NULL)
    {
      server = atomr_inspector_server_new ();
      actor = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);
      atomr_inspector_server_add_actor (server, actor);
    }
  g_byte_array_append (input, (const guint8 *) upgrade, sizeof upgrade - 1);
  g_byte_array_append (input, data, size);
  answer = atomr_inspector_server_serve_bytes (server, input->data, input->len);
  text = g_bytes_get_data (answer, &n);
  if (n < 12 || memcmp (text, "HTTP/1.1 101", 12) != 0)
    g_error ("the upgrade was not accepted: %.*s", (int) MIN (n, 200), text);
  if (atomr_inspector_server_get_n_clients (server) != 0 || atomr_inspector_server_is_hooked (server))
    g_error ("a client that is gone is still counted");
  return 0;
}
