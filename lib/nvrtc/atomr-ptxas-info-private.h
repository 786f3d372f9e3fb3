/* atomr-ptxas-info-private.h — what ptxas and nvJitLink report per kernel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Parses the info output of `ptxas -v` (NVRTC's log with -Xptxas=-v) or of
 * nvJitLink with -verbose (its info log) into a JSON object:
 *
 *   { "tool": @tool, "kernels": [ { "name", "arch", "registers",
 *     "barriers", "shared_bytes", "stack_bytes", "spill_stores",
 *     "spill_loads", "const_bytes" (null: not reported) }, ... ],
 *     "functions": [ { "name", "stack_bytes", "spill_stores",
 *     "spill_loads" }, ... ] }     (device functions: their spills
 *                                   are their callers' too)
 *
 * nvJitLink's link summary ("info : Function properties for 'k':" then
 * "info : used N registers, ...") overrides what ptxas said of a kernel:
 * it is the linked kernel, callees included.  A log without any ptxas or
 * linker info line, a kernel without its "Used N registers" line (a
 * truncated log) or a number that does not parse is an error
 * (%ATOMR_ERROR_INVALID_ARGUMENT naming the line); never a crash.
 * Thread-safe. */
JsonNode *atomr_ptxas_info_parse (const gchar  *log,
                                  const gchar  *tool,
                                  GError      **error);

/* @log without the info lines atomr_ptxas_info_parse() reads (what
 * NVRTC's log is without -Xptxas=-v). */
gchar    *atomr_ptxas_info_strip (const gchar  *log);

/* TRUE if @flags ask ptxas for its info output themselves
 * (-Xptxas=-v, --ptxas-options=--verbose, ...). */
gboolean  atomr_ptxas_flags_verbose (const gchar * const *flags);

G_END_DECLS
