/* fuzz-stream-message.c — the inspector's side of the WebSocket stream:
 * atomr_attach_parse_message() (app/inspector/atomr-attach-client.c) on
 * one message, and the record it makes added to a recorder and exported.
 * Invariant: a record or a drop count or a GError, never a crash.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr.h"
#include "atomr-attach-client.h"
#include "fuzz-common.h"

int
FUZZ_ENTRY (const uint8_t *data,
            size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrLaunchInfo) info = NULL;
  guint64 dropped = 0;

  fuzz_isolate ();
  info = atomr_attach_parse_message ((const gchar *) data, size, &dropped, &error);
  if (info)
    {
      g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (4);
      g_autofree gchar *json = NULL;

      atomr_trace_recorder_add_record (recorder, info);
      json = atomr_trace_recorder_to_json (recorder);
      if (json == NULL)
        g_error ("a parsed record does not export");
    }
  else if (error == NULL && dropped == 0 && size > 0)
    {
      /* a drop notice of 0 is fine; anything else must say why */
      if (g_strstr_len ((const gchar *) data, (gssize) size, "dropped") == NULL)
        g_error ("no record, no drop notice and no error");
    }
  return 0;
}
