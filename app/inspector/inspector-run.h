/* inspector-run.h — running a kernel from the editor, in a helper process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef enum {
  INSPECTOR_RUN_SCALAR,
  INSPECTOR_RUN_BUFFER,
} InspectorRunArgKind;

typedef enum {
  INSPECTOR_RUN_FILL_ZEROS,
  INSPECTOR_RUN_FILL_VALUE,
  INSPECTOR_RUN_FILL_LINEAR,   /* element i holds i */
  INSPECTOR_RUN_FILL_RANDOM,   /* uniform in [0, 1), a fixed seed */
} InspectorRunFill;

/* One kernel argument as the user typed it: "f32:2.5", "u32:1024",
 * "f32[1048576]", "f32[1048576]=random", "=linear", "=1.5". */
typedef struct {
  InspectorRunArgKind kind;
  AtomrDtype          dtype;    /* f32, f64, i32, u32, i64, u64 */
  gdouble             value;    /* scalar, or the fill value */
  guint64             count;    /* buffers: elements */
  InspectorRunFill    fill;
} InspectorRunArg;

GArray      *inspector_run_parse_args        (const gchar         *text,
                                              GError             **error);
JsonNode    *inspector_run_args_to_json      (GArray              *args);
GArray      *inspector_run_args_from_json    (JsonNode            *node,
                                              GError             **error);
const gchar *inspector_run_dtype_name        (AtomrDtype           dtype);

AtomrCompileOptions *inspector_compile_options_from_json (JsonObject  *object,
                                                          GError     **error);

gchar       *inspector_run_find_runner       (void);
int          inspector_run_main              (void);

void         inspector_run_spawn_async       (const gchar * const *argv,
                                              const gchar         *request,
                                              guint                timeout_s,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
JsonObject  *inspector_run_spawn_finish      (GAsyncResult        *result,
                                              GError             **error);

G_END_DECLS
