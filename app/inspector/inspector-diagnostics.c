/* inspector-diagnostics.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "inspector-diagnostics.h"

/* An NVRTC diagnostic: `file.cu(12): error: message`, optionally followed
 * by the offending source line (indented by two spaces) and a caret line
 * that points at the column. */
struct _InspectorDiagnostic
{
  GObject            parent_instance;
  gchar             *file;
  guint              line;
  guint              column;
  InspectorSeverity  severity;
  gchar             *code;
  gchar             *message;
};

G_DEFINE_FINAL_TYPE (InspectorDiagnostic, inspector_diagnostic, G_TYPE_OBJECT)

static void
inspector_diagnostic_finalize (GObject *object)
{
  InspectorDiagnostic *self = INSPECTOR_DIAGNOSTIC (object);

  g_free (self->file);
  g_free (self->code);
  g_free (self->message);
  G_OBJECT_CLASS (inspector_diagnostic_parent_class)->finalize (object);
}

static void
inspector_diagnostic_class_init (InspectorDiagnosticClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = inspector_diagnostic_finalize;
}

static void
inspector_diagnostic_init (InspectorDiagnostic *self)
{
}

InspectorDiagnostic *
inspector_diagnostic_new (const gchar       *file,
                          guint              line,
                          guint              column,
                          InspectorSeverity  severity,
                          const gchar       *code,
                          const gchar       *message)
{
  InspectorDiagnostic *self = g_object_new (INSPECTOR_TYPE_DIAGNOSTIC, NULL);

  self->file = g_strdup (file);
  self->line = line;
  self->column = column;
  self->severity = severity;
  self->code = g_strdup (code);
  self->message = g_strdup (message);
  return self;
}

const gchar *inspector_diagnostic_get_file (InspectorDiagnostic *self) { return self->file; }
guint inspector_diagnostic_get_line (InspectorDiagnostic *self) { return self->line; }
guint inspector_diagnostic_get_column (InspectorDiagnostic *self) { return self->column; }
InspectorSeverity inspector_diagnostic_get_severity (InspectorDiagnostic *self) { return self->severity; }
const gchar *inspector_diagnostic_get_code (InspectorDiagnostic *self) { return self->code; }
const gchar *inspector_diagnostic_get_message (InspectorDiagnostic *self) { return self->message; }

const gchar *
inspector_severity_to_string (InspectorSeverity severity)
{
  switch (severity)
    {
    case INSPECTOR_SEVERITY_ERROR: return _("Error");
    case INSPECTOR_SEVERITY_WARNING: return _("Warning");
    case INSPECTOR_SEVERITY_REMARK: return _("Remark");
    default: return "";
    }
}

static gboolean
is_caret_line (const gchar *line,
               guint       *caret)
{
  const gchar *p = line;

  while (*p == ' ')
    p++;
  if (*p != '^')
    return FALSE;
  for (const gchar *q = p + 1; *q; q++)
    if (*q != ' ' && *q != '\r')
      return FALSE;
  *caret = (guint) (p - line);
  return TRUE;
}

/**
 * inspector_diagnostics_parse:
 * @log: an NVRTC program log
 *
 * Returns: (transfer full): a #GListStore of #InspectorDiagnostic, in log order
 */
GListStore *
inspector_diagnostics_parse (const gchar *log)
{
  static GRegex *head_re;
  GListStore *store = g_list_store_new (INSPECTOR_TYPE_DIAGNOSTIC);
  g_auto(GStrv) lines = NULL;
  guint n;

  if (log == NULL)
    return store;
  if (g_once_init_enter (&head_re))
    g_once_init_leave (&head_re,
                               g_regex_new ("^(.+?)\\((\\d+)\\): (catastrophic error|error|warning|remark|note)"
                                            "(?: #([0-9A-Za-z-]+))?: (.*)$",
                                            0, 0, NULL));

  lines = g_strsplit (log, "\n", -1);
  n = g_strv_length (lines);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GMatchInfo) m = NULL;
      g_autofree gchar *file = NULL, *num = NULL, *kind = NULL, *code = NULL, *msg = NULL;
      InspectorSeverity sev;
      g_autoptr(InspectorDiagnostic) d = NULL;
      guint caret = 0, column = 0;
      guint64 line_no;

      g_strchomp (lines[i]);
      if (!g_regex_match (head_re, lines[i], 0, &m))
        continue;
      file = g_match_info_fetch (m, 1);
      num = g_match_info_fetch (m, 2);
      kind = g_match_info_fetch (m, 3);
      code = g_match_info_fetch (m, 4);
      msg = g_match_info_fetch (m, 5);
      if (!g_ascii_string_to_unsigned (num, 10, 1, G_MAXUINT, &line_no, NULL))
        continue;
      if (g_str_has_suffix (kind, "error"))
        sev = INSPECTOR_SEVERITY_ERROR;
      else if (g_str_equal (kind, "warning"))
        sev = INSPECTOR_SEVERITY_WARNING;
      else
        sev = INSPECTOR_SEVERITY_REMARK;
      /* NVRTC echoes the line with a two-space indent, then the caret. */
      if (i + 2 < n && g_str_has_prefix (lines[i + 1], "  ") && is_caret_line (lines[i + 2], &caret) && caret >= 2)
        {
          column = caret - 2 + 1;
          i += 2;
        }
      d = inspector_diagnostic_new (file, (guint) line_no, column, sev, code && *code ? code : NULL, msg);
      g_list_store_append (store, d);
    }
  return store;
}

void
inspector_kernel_resources_free (InspectorKernelResources *res)
{
  if (res == NULL)
    return;
  g_free (res->function);
  g_free (res->arch);
  g_free (res);
}

static guint
fetch_uint (GMatchInfo *m,
            gint        group)
{
  g_autofree gchar *s = g_match_info_fetch (m, group);
  guint64 v = 0;

  if (s && *s)
    g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT, &v, NULL);
  return (guint) v;
}

/**
 * inspector_ptxas_parse:
 * @log: a program log compiled with `--ptxas-options=-v`
 *
 * Returns: (transfer full): an array of #InspectorKernelResources, one per
 *   entry function, in log order
 */
GPtrArray *
inspector_ptxas_parse (const gchar *log)
{
  static GRegex *entry_re, *frame_re, *used_re;
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) inspector_kernel_resources_free);
  InspectorKernelResources *cur = NULL;
  g_auto(GStrv) lines = NULL;

  if (log == NULL)
    return out;
  if (g_once_init_enter (&entry_re))
    {
      frame_re = g_regex_new ("(\\d+) bytes stack frame, (\\d+) bytes spill stores, (\\d+) bytes spill loads",
                              0, 0, NULL);
      used_re = g_regex_new ("Used (\\d+) registers(?:, used (\\d+) barriers)?(?:.*?(\\d+) bytes smem)?",
                             0, 0, NULL);
      g_once_init_leave (&entry_re,
                                 g_regex_new ("Compiling entry function '([^']+)' for '([^']+)'",
                                              0, 0, NULL));
    }

  lines = g_strsplit (log, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_autoptr(GMatchInfo) m = NULL;

      if (!g_str_has_prefix (lines[i], "ptxas"))
        continue;
      if (g_regex_match (entry_re, lines[i], 0, &m))
        {
          cur = g_new0 (InspectorKernelResources, 1);
          cur->function = g_match_info_fetch (m, 1);
          cur->arch = g_match_info_fetch (m, 2);
          g_ptr_array_add (out, cur);
          continue;
        }
      g_clear_pointer (&m, g_match_info_unref);
      if (cur && g_regex_match (frame_re, lines[i], 0, &m))
        {
          cur->stack_bytes = fetch_uint (m, 1);
          cur->spill_stores = fetch_uint (m, 2);
          cur->spill_loads = fetch_uint (m, 3);
          continue;
        }
      g_clear_pointer (&m, g_match_info_unref);
      if (cur && g_regex_match (used_re, lines[i], 0, &m))
        {
          cur->registers = fetch_uint (m, 1);
          cur->barriers = fetch_uint (m, 2);
          cur->shared_bytes = fetch_uint (m, 3);
        }
    }
  return out;
}
