/* inspector-diagnostics.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include <json-glib/json-glib.h>

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

/* Resources recorded by the library ------------------------------------- */

static gboolean
json_uint (JsonObject  *o,
           const gchar *name,
           guint       *out,
           GError     **error)
{
  JsonNode *n = json_object_has_member (o, name) ? json_object_get_member (o, name) : NULL;
  gint64 v;

  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64
      || (v = json_node_get_int (n)) < 0 || v > G_MAXUINT)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "resources: \"%s\" is missing or not a count", name);
      return FALSE;
    }
  *out = (guint) v;
  return TRUE;
}

/**
 * inspector_resources_from_json:
 * @json: the `resources` member of an entry's manifest (or what
 *   atomr_kernel_cache_entry_analyse_resources() returns), as JSON text
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (element-type InspectorKernelResources): one per
 *   kernel, spills known, or %NULL with @error set when @json is not such
 *   an object
 */
GPtrArray *
inspector_resources_from_json (const gchar  *json,
                               GError      **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) inspector_kernel_resources_free);
  JsonNode *root;
  JsonNode *kernels;

  if (json == NULL || !json_parser_load_from_data (parser, json, -1, error))
    {
      if (json == NULL)
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "resources: none");
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root)
      || !json_object_has_member (json_node_get_object (root), "kernels")
      || !JSON_NODE_HOLDS_ARRAY ((kernels = json_object_get_member (json_node_get_object (root), "kernels"))))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "resources: no \"kernels\" array");
      return NULL;
    }
  for (guint i = 0; i < json_array_get_length (json_node_get_array (kernels)); i++)
    {
      JsonNode *e = json_array_get_element (json_node_get_array (kernels), i);
      g_autoptr(InspectorKernelResources) r = g_new0 (InspectorKernelResources, 1);
      JsonObject *o;
      const gchar *name, *arch;

      if (!JSON_NODE_HOLDS_OBJECT (e))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "resources: kernel %u is not an object", i);
          return NULL;
        }
      o = json_node_get_object (e);
      name = json_object_get_string_member_with_default (o, "name", NULL);
      if (name == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "resources: kernel %u has no name", i);
          return NULL;
        }
      arch = json_object_get_string_member_with_default (o, "arch", NULL);
      r->function = g_strdup (name);
      r->arch = g_strdup (arch);
      if (!json_uint (o, "registers", &r->registers, error) || !json_uint (o, "shared_bytes", &r->shared_bytes, error)
          || !json_uint (o, "stack_bytes", &r->stack_bytes, error)
          || !json_uint (o, "spill_stores", &r->spill_stores, error)
          || !json_uint (o, "spill_loads", &r->spill_loads, error)
          || !json_uint (o, "barriers", &r->barriers, error))
        {
          g_prefix_error (error, "kernel %s: ", name);
          return NULL;
        }
      r->spills_known = TRUE;
      g_ptr_array_add (out, g_steal_pointer (&r));
    }
  return g_steal_pointer (&out);
}

/**
 * inspector_manifest_resources:
 * @manifest: (nullable): an entry's manifest
 *
 * Returns: (transfer full) (nullable): its `resources` member as JSON
 *   text, %NULL when it has none (an entry for a virtual architecture or
 *   written before the library recorded them)
 */
gchar *
inspector_manifest_resources (const gchar *manifest)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;

  if (manifest == NULL || !json_parser_load_from_data (parser, manifest, -1, NULL))
    return NULL;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root) || !json_object_has_member (json_node_get_object (root), "resources"))
    return NULL;
  return json_to_string (json_object_get_member (json_node_get_object (root), "resources"), FALSE);
}

/**
 * inspector_resources_merge:
 * @cubin: (element-type InspectorKernelResources): read from a CUBIN
 * @ptxas: (element-type InspectorKernelResources): what ptxas reported
 *
 * Gives each kernel of @cubin the spills @ptxas reported for it (by
 * name); the CUBIN's registers, shared memory and stack stay.
 */
void
inspector_resources_merge (GPtrArray *cubin,
                           GPtrArray *ptxas)
{
  for (guint i = 0; i < cubin->len; i++)
    {
      InspectorKernelResources *c = g_ptr_array_index (cubin, i);
      for (guint k = 0; k < ptxas->len; k++)
        {
          InspectorKernelResources *p = g_ptr_array_index (ptxas, k);
          if (g_strcmp0 (c->function, p->function) == 0)
            {
              c->spill_stores = p->spill_stores;
              c->spill_loads = p->spill_loads;
              c->barriers = p->barriers;
              c->spills_known = TRUE;
              break;
            }
        }
    }
}

/* CUBIN resource usage --------------------------------------------------- */

static guint64
rd (const guchar *p,
    guint         n)
{
  guint64 v = 0;

  for (guint i = n; i-- > 0;)
    v = v << 8 | p[i];
  return v;
}

/**
 * inspector_cubin_resources:
 * @cubin: a CUBIN (an ELF file of the CUDA toolchain)
 * @arch: (nullable): the architecture it was built for, for the labels
 * @error: return location for a #GError
 *
 * Reads what each kernel of @cubin uses from the file itself, as
 * `cuobjdump --dump-resource-usage` does (the toolkit's tools may be
 * missing): registers and the stack frame from the attributes
 * EIATTR_REGCOUNT and EIATTR_FRAME_SIZE of `.nv.info` (keyed by the
 * kernel's symbol, the sh_info of its `.text.KERNEL` section; older
 * files keep them in `.nv.info.KERNEL`), and shared memory from the size
 * of `.nv.shared.KERNEL`, less the 1 KiB the driver reserves per block
 * when the file has a `.nv.shared.reserved.` section (sm_80 and later).
 * Spills and barriers are not recorded in a CUBIN: they stay 0.  No
 * compile option is needed, so the inspector's compiles share the
 * library's cache keys.
 *
 * Returns: (transfer full) (element-type InspectorKernelResources): one
 *   entry per kernel, or %NULL with @error set when @cubin is not an ELF
 *   file this function understands
 */
GPtrArray *
inspector_cubin_resources (GBytes       *cubin,
                           const gchar  *arch,
                           GError      **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) inspector_kernel_resources_free);
  g_autoptr(GHashTable) by_name = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) by_symbol = g_hash_table_new (NULL, NULL);
  gboolean reserved = FALSE;
  gsize size = 0;
  const guchar *elf = cubin ? g_bytes_get_data (cubin, &size) : NULL;
  guint64 shoff;
  guint shentsize, shnum, shstrndx;
  const guchar *strtab;
  guint64 strtab_size;

#define BAD(what) G_STMT_START { \
    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, \
                 "Not a CUBIN this inspector reads: %s", what); \
    return NULL; } G_STMT_END
  if (elf == NULL || size < 64 || memcmp (elf, "\177ELF", 4) != 0)
    BAD ("no ELF header");
  if (elf[4] != 2 || elf[5] != 1)
    BAD ("not a 64-bit little-endian ELF file");
  shoff = rd (elf + 0x28, 8);
  shentsize = (guint) rd (elf + 0x3a, 2);
  shnum = (guint) rd (elf + 0x3c, 2);
  shstrndx = (guint) rd (elf + 0x3e, 2);
  if (shentsize < 64 || shnum == 0 || shstrndx >= shnum || shoff > size ||
      (guint64) shnum * shentsize > size - shoff)
    BAD ("section headers out of the file");
  {
    const guchar *sh = elf + shoff + (guint64) shstrndx * shentsize;
    guint64 off = rd (sh + 24, 8);
    strtab_size = rd (sh + 32, 8);
    if (off > size || strtab_size > size - off)
      BAD ("section names out of the file");
    strtab = elf + off;
  }

  for (guint pass = 0; pass < 2; pass++)
    for (guint i = 0; i < shnum; i++)
      {
        const guchar *sh = elf + shoff + (guint64) i * shentsize;
        guint32 name_off = (guint32) rd (sh, 4);
        guint64 flags = rd (sh + 8, 8), off = rd (sh + 24, 8), sz = rd (sh + 32, 8);
        guint32 info = (guint32) rd (sh + 44, 4);
        const gchar *name;
        InspectorKernelResources *r;

        if (name_off >= strtab_size || memchr (strtab + name_off, '\0', strtab_size - name_off) == NULL)
          BAD ("a section name out of the table");
        name = (const gchar *) strtab + name_off;
        if (pass == 0)
          {
            /* the kernels: one .text.NAME each */
            if (!g_str_has_prefix (name, ".text.") || name[6] == '\0')
              continue;
            r = g_new0 (InspectorKernelResources, 1);
            r->function = g_strdup (name + 6);
            r->arch = g_strdup (arch ? arch : "");
            g_ptr_array_add (out, r);
            g_hash_table_insert (by_name, r->function, r);
            g_hash_table_insert (by_symbol, GUINT_TO_POINTER (info + 1), r);
            (void) flags;
            continue;
          }
        if (g_str_has_prefix (name, ".nv.shared.reserved."))
          reserved = TRUE;
        if (g_str_has_prefix (name, ".nv.shared.") &&
            (r = g_hash_table_lookup (by_name, name + strlen (".nv.shared."))))
          r->shared_bytes = (guint) MIN (sz, G_MAXUINT);
        else if (g_str_equal (name, ".nv.info") ||
                 (g_str_has_prefix (name, ".nv.info.") &&
                  g_hash_table_lookup (by_name, name + strlen (".nv.info."))))
          {
            InspectorKernelResources *own = name[8] == '.' ? g_hash_table_lookup (by_name, name + 9) : NULL;

            const guchar *p, *end;

            if (off > size || sz > size - off)
              BAD ("a kernel's attributes out of the file");
            /* attributes: format byte, attribute byte, then by format
             * nothing (1), a byte (2), a 16-bit value (3), or a 16-bit
             * size and that many bytes (4) */
            for (p = elf + off, end = p + sz; p + 2 <= end;)
              {
                guint fmt = p[0], attr = p[1];
                guint len;

                p += 2;
                if (fmt == 1)
                  len = 0;
                else if (fmt == 2)
                  len = 1;
                else if (fmt == 3)
                  len = 2;
                else if (fmt == 4 && p + 2 <= end)
                  {
                    len = (guint) rd (p, 2);
                    p += 2;
                  }
                else
                  break;
                if (len > (guint) (end - p))
                  break;
                /* EIATTR_REGCOUNT (0x2f), EIATTR_FRAME_SIZE (0x11): symbol, value */
                if (fmt == 4 && (attr == 0x2f || attr == 0x11) && len >= 8)
                  {
                    InspectorKernelResources *k = own ? own
                      : g_hash_table_lookup (by_symbol, GUINT_TO_POINTER ((guint) rd (p, 4) + 1));
                    if (k && attr == 0x2f)
                      k->registers = (guint) rd (p + 4, 4);
                    else if (k)
                      k->stack_bytes = (guint) rd (p + 4, 4);
                  }
                p += len;
              }
          }
      }
#undef BAD
  for (guint i = 0; reserved && i < out->len; i++)
    {
      InspectorKernelResources *k = g_ptr_array_index (out, i);
      k->shared_bytes = k->shared_bytes >= 1024 ? k->shared_bytes - 1024 : 0;
    }
  return g_steal_pointer (&out);
}
