/* inspector-diagnostics.h — NVRTC log and ptxas verbose output, parsed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <atomr.h>

G_BEGIN_DECLS

typedef enum {
  INSPECTOR_SEVERITY_ERROR,
  INSPECTOR_SEVERITY_WARNING,
  INSPECTOR_SEVERITY_REMARK,
} InspectorSeverity;

#define INSPECTOR_TYPE_DIAGNOSTIC (inspector_diagnostic_get_type ())
G_DECLARE_FINAL_TYPE (InspectorDiagnostic, inspector_diagnostic, INSPECTOR, DIAGNOSTIC, GObject)

InspectorDiagnostic *inspector_diagnostic_new          (const gchar         *file,
                                                        guint                line,
                                                        guint                column,
                                                        InspectorSeverity    severity,
                                                        const gchar         *code,
                                                        const gchar         *message);
const gchar         *inspector_diagnostic_get_file     (InspectorDiagnostic *self);
guint                inspector_diagnostic_get_line     (InspectorDiagnostic *self);
guint                inspector_diagnostic_get_column   (InspectorDiagnostic *self);
InspectorSeverity    inspector_diagnostic_get_severity (InspectorDiagnostic *self);
const gchar         *inspector_diagnostic_get_code     (InspectorDiagnostic *self);
const gchar         *inspector_diagnostic_get_message  (InspectorDiagnostic *self);
const gchar         *inspector_severity_to_string      (InspectorSeverity    severity);

GListStore          *inspector_diagnostics_parse       (const gchar         *log);

/* One "Function properties" block of `ptxas -v`. */
typedef struct {
  gchar *function;
  gchar *arch;
  guint  registers;
  guint  shared_bytes;
  guint  stack_bytes;
  guint  spill_stores;
  guint  spill_loads;
  guint  barriers;
  gboolean spills_known;   /* from ptxas/nvJitLink, not from a CUBIN */
} InspectorKernelResources;

void       inspector_kernel_resources_free (InspectorKernelResources *res);
GPtrArray *inspector_ptxas_parse           (const gchar              *log);
GPtrArray *inspector_cubin_resources       (GBytes                   *cubin,
                                            const gchar              *arch,
                                            GError                  **error);

GPtrArray *inspector_resources_from_json   (const gchar              *json,
                                            GError                  **error);
gchar     *inspector_manifest_resources    (const gchar              *manifest);
void       inspector_resources_merge       (GPtrArray                *cubin,
                                            GPtrArray                *ptxas);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (InspectorKernelResources, inspector_kernel_resources_free)

G_END_DECLS
