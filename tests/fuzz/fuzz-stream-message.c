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

  /* The batched reader (/v1/stream?batch=1) on the same bytes: a record
   * or a batch appended, a drop count, or an error with nothing
   * appended; a single record reads the same through both. */
  {
    g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
    g_autoptr(AtomrLaunchInfo) sentinel = atomr_launch_info_new ("s", "s", "s");
    g_autoptr(GError) batch_error = NULL;
    guint64 batch_dropped = 0;
    gboolean ok;

    g_ptr_array_add (records, atomr_launch_info_ref (sentinel));
    ok = atomr_attach_parse_messages ((const gchar *) data, size, records, &batch_dropped, &batch_error);
    if (ok != (batch_error == NULL))
      g_error ("atomr_attach_parse_messages: result and error disagree");
    if (!ok && records->len != 1)
      g_error ("a failed batch appended %u records", records->len - 1);
    if (g_ptr_array_index (records, 0) != sentinel)
      g_error ("atomr_attach_parse_messages touched what was already there");
    if (info && (records->len != 2 || atomr_launch_info_get_sequence (g_ptr_array_index (records, 1)) !=
                 atomr_launch_info_get_sequence (info)))
      g_error ("a single record reads differently through atomr_attach_parse_messages");
    if (records->len > 1)
      {
        g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (4);
        g_autofree gchar *json = NULL;

        for (guint i = 1; i < records->len; i++)
          atomr_trace_recorder_add_record (recorder, g_ptr_array_index (records, i));
        json = atomr_trace_recorder_to_json (recorder);
        if (json == NULL)
          g_error ("a parsed batch does not export");
      }
  }
  return 0;
}
