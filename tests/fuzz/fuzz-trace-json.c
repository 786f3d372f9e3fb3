/* fuzz-trace-json.c — the trace JSON loader (atomr_trace_recorder_load_json)
 *
 * Invariant: input either loads or fails with a GError; what loaded
 * exports to JSON that loads again, and from then on export and load are
 * a fixed point (the same number of records).  (The first round trip may
 * differ: the GPU demo fixture loads as 58 records and as 59 after one
 * export, an operation whose host lane and GPU slice the loader pairs
 * differently — reported, not changed here.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr.h"
#include "fuzz-common.h"

int
FUZZ_ENTRY (const uint8_t *data,
            size_t         size)
{
  g_autoptr(AtomrTraceRecorder) recorder = NULL;
  g_autoptr(AtomrTraceRecorder) again = NULL;
  g_autoptr(AtomrTraceRecorder) third = NULL;
  g_autofree gchar *json2 = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = NULL;

  fuzz_isolate ();
  recorder = atomr_trace_recorder_new (4096);
  if (!atomr_trace_recorder_load_json (recorder, (const gchar *) data, (gssize) size, &error))
    {
      if (error == NULL || error->message == NULL)
        g_error ("load_json failed without a GError");
      return 0;
    }
  json = atomr_trace_recorder_to_json (recorder);
  again = atomr_trace_recorder_new (4096);
  if (!atomr_trace_recorder_load_json (again, json, -1, &error))
    g_error ("a loaded trace does not load again after export: %s", error->message);
  json2 = atomr_trace_recorder_to_json (again);
  third = atomr_trace_recorder_new (4096);
  if (!atomr_trace_recorder_load_json (third, json2, -1, &error))
    g_error ("a re-exported trace does not load: %s", error->message);
  if (atomr_trace_recorder_get_n_records (third) != atomr_trace_recorder_get_n_records (again))
    g_error ("round trip: %u records, then %u", atomr_trace_recorder_get_n_records (again),
             atomr_trace_recorder_get_n_records (third));
  return 0;
}
