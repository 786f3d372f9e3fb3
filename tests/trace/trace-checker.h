/* trace-checker.h — validates atomr's Chrome trace export (contract v2)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Parses @json with json-glib and checks the invariants listed in
 * trace-checker.c (and docs/DESIGN-NOTES.md, "Trace export").  On failure
 * @error says which event broke which rule.  The counts (optional) tell
 * the caller what was there. */
typedef struct
{
  guint n_gpu_slices;
  guint n_async_ops;
  guint n_flows;
  guint n_lanes;
  guint n_counters;
} TraceCheckCounts;

gboolean trace_check (const gchar       *json,
                      TraceCheckCounts  *counts,
                      GError           **error);

G_END_DECLS
