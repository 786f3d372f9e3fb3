/* atomr-ptxas-info.c — what ptxas and nvJitLink report per kernel
 *
 * The compile path asks ptxas for its info output (-Xptxas=-v, or
 * nvJitLink's -verbose with LTO) without putting the option in the cache
 * key, and keeps what this file reads from it in the entry's manifest
 * ("resources"): spills are not recorded in a CUBIN, only ptxas knows
 * them.  Samples of both formats are in tests/nvrtc/test-ptxas-info.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-error.h"
#include "atomr-ptxas-info-private.h"

typedef struct {
  gchar   *name;
  gchar   *arch;
  gboolean kernel;
  gboolean have_used;
  guint32  registers, barriers, shared_bytes, stack_bytes, spill_stores, spill_loads;
  gboolean have_const;
  guint64  const_bytes;
} Func;

static void
func_free (Func *f)
{
  g_free (f->name);
  g_free (f->arch);
  g_free (f);
}

typedef struct {
  GPtrArray  *funcs;     /* Func*, in log order */
  GHashTable *kernels;   /* name → Func*, kernels */
  GHashTable *others;    /* name → Func*, device functions */
} Parse;

static Func *
lookup (Parse       *p,
        const gchar *name,
        gboolean     kernel)
{
  GHashTable *table = kernel ? p->kernels : p->others;
  Func *f = g_hash_table_lookup (table, name);

  if (f == NULL)
    {
      f = g_new0 (Func, 1);
      f->name = g_strdup (name);
      f->kernel = kernel;
      g_ptr_array_add (p->funcs, f);
      g_hash_table_insert (table, f->name, f);
    }
  return f;
}

static gboolean
number (const gchar  *text,
        gsize         len,
        guint64       max,
        guint64      *out,
        const gchar  *line,
        GError      **error)
{
  g_autofree gchar *s = g_strndup (text, len);

  if (!g_ascii_string_to_unsigned (s, 10, 0, max, out, NULL))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "ptxas info: \"%s\" is not a number this parser accepts (0 to %" G_GUINT64_FORMAT
                   ") in line \"%s\"", s, max, line);
      return FALSE;
    }
  return TRUE;
}

/* The ", "-separated items after "Used N registers" (ptxas) or "used N
 * registers" (nvJitLink's summary): "used 1 barriers", "192 bytes
 * cumulative stack size", "1024 bytes smem", "556 bytes cmem[0]", "0
 * stack", "0 bytes lmem".  Unknown items are skipped (newer tools add
 * some); a malformed number is an error. */
static gboolean
items (Func         *f,
       const gchar  *rest,
       gboolean      linker,
       const gchar  *line,
       GError      **error)
{
  g_auto(GStrv) parts = g_strsplit (rest, ",", -1);

  for (guint i = 0; parts[i]; i++)
    {
      const gchar *s = g_strstrip (parts[i]);
      const gchar *end = s;
      guint64 v;

      if (*s == '\0')
        continue;
      if (g_str_has_prefix (s, "used "))
        {
          s += 5;
          for (end = s; g_ascii_isdigit (*end); end++)
            ;
          if (end == s || !number (s, end - s, G_MAXUINT32, &v, line, error))
            {
              if (end == s)
                g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                             "ptxas info: no number after \"used\" in line \"%s\"", line);
              return FALSE;
            }
          if (g_str_equal (end, " barriers"))
            f->barriers = (guint32) v;
          continue;
        }
      for (end = s; g_ascii_isdigit (*end); end++)
        ;
      if (end == s)
        continue;   /* an item this parser does not know */
      if (!number (s, end - s, G_MAXUINT32, &v, line, error))
        return FALSE;
      if (g_str_equal (end, " bytes smem"))
        {
          if (!linker || !f->have_used)
            f->shared_bytes = (guint32) v;
        }
      else if (g_str_has_prefix (end, " bytes cmem["))
        {
          f->const_bytes += v;
          f->have_const = TRUE;
        }
      else if (g_str_equal (end, " stack") && (!f->have_used || f->stack_bytes == 0))
        f->stack_bytes = (guint32) v;
    }
  return TRUE;
}

/* "ptxas info    : TEXT" → TEXT; "info    : TEXT" (nvJitLink) likewise. */
static const gchar *
after_colon (const gchar *line,
             const gchar *prefix)
{
  const gchar *p;

  if (!g_str_has_prefix (line, prefix))
    return NULL;
  p = line + strlen (prefix);
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p != ':')
    return NULL;
  p++;
  while (*p == ' ')
    p++;
  return p;
}

/* "ptxas         .     192 bytes stack frame, ..." */
static const gchar *
continuation (const gchar *line)
{
  const gchar *p;

  if (!g_str_has_prefix (line, "ptxas"))
    return NULL;
  p = line + 5;
  if (*p != ' ')
    return NULL;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p != '.')
    return NULL;
  p++;
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

static gboolean
is_info_line (const gchar *line)
{
  return after_colon (line, "ptxas info") || continuation (line) || after_colon (line, "info");
}

static gboolean
parse_line (Parse        *p,
            const gchar  *line,
            Func        **current,     /* the kernel "Used" lines are about */
            Func        **props,       /* the function a frame line is about */
            Func        **linked,      /* the kernel a summary line is about */
            gboolean     *seen,
            GError      **error)
{
  const gchar *t;
  g_autofree gchar *name = NULL, *arch = NULL;

  if ((t = after_colon (line, "ptxas info")))
    {
      *seen = TRUE;
      if (g_str_has_prefix (t, "Compiling entry function '"))
        {
          const gchar *s = t + strlen ("Compiling entry function '");
          const gchar *q = strchr (s, '\'');
          const gchar *a;

          if (q == NULL || q == s || !g_str_has_prefix (q, "' for '") || (a = strchr (q + 7, '\'')) == NULL)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "ptxas info: cannot read the function and architecture in line \"%s\"", line);
              return FALSE;
            }
          name = g_strndup (s, q - s);
          arch = g_strndup (q + 7, a - (q + 7));
          *current = lookup (p, name, TRUE);
          g_free ((*current)->arch);
          (*current)->arch = g_steal_pointer (&arch);
          *props = NULL;
        }
      else if (g_str_has_prefix (t, "Function properties for "))
        {
          const gchar *s = t + strlen ("Function properties for ");
          if (*s == '\0')
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "ptxas info: no function name in line \"%s\"", line);
              return FALSE;
            }
          *props = g_hash_table_lookup (p->kernels, s);
          if (*props == NULL)
            *props = lookup (p, s, FALSE);
        }
      else if (g_str_has_prefix (t, "Used "))
        {
          const gchar *s = t + 5, *end;
          guint64 v;

          for (end = s; g_ascii_isdigit (*end); end++)
            ;
          if (*current == NULL || end == s || !g_str_has_prefix (end, " registers"))
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           *current == NULL ? "ptxas info: a \"Used\" line before any entry function: \"%s\""
                                            : "ptxas info: cannot read the registers in line \"%s\"", line);
              return FALSE;
            }
          if (!number (s, end - s, G_MAXUINT32, &v, line, error))
            return FALSE;
          (*current)->registers = (guint32) v;
          if (!items (*current, end + strlen (" registers"), FALSE, line, error))
            return FALSE;
          (*current)->have_used = TRUE;
        }
      /* "0 bytes gmem", "Compile time = ...", "Overriding ...": not per kernel */
      return TRUE;
    }
  if ((t = continuation (line)))
    {
      guint64 frame, stores, loads;
      const gchar *a = t, *b, *c;

      *seen = TRUE;
      b = strstr (a, " bytes stack frame, ");
      c = b ? strstr (b, " bytes spill stores, ") : NULL;
      if (*props == NULL || b == NULL || c == NULL || !g_str_has_suffix (c, " bytes spill loads"))
        {
          if (*props == NULL && b != NULL)
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "ptxas info: a stack frame line without its \"Function properties\" line: \"%s\"", line);
          else if (b == NULL)
            return TRUE;   /* another continuation this parser does not know */
          else
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "ptxas info: cannot read the stack frame and spills in line \"%s\"", line);
          return FALSE;
        }
      b += strlen (" bytes stack frame, ");
      if (!number (a, strcspn (a, " "), G_MAXUINT32, &frame, line, error)
          || !number (b, strcspn (b, " "), G_MAXUINT32, &stores, line, error)
          || !number (c + strlen (" bytes spill stores, "), strcspn (c + strlen (" bytes spill stores, "), " "),
                      G_MAXUINT32, &loads, line, error))
        return FALSE;
      (*props)->stack_bytes = (guint32) frame;
      (*props)->spill_stores = (guint32) stores;
      (*props)->spill_loads = (guint32) loads;
      *props = NULL;
      return TRUE;
    }
  if ((t = after_colon (line, "info")))
    {
      *seen = TRUE;
      if (g_str_has_prefix (t, "Function properties for '"))
        {
          const gchar *s = t + strlen ("Function properties for '");
          const gchar *q = strchr (s, '\'');
          if (q == NULL || q == s)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "nvJitLink info: no function name in line \"%s\"", line);
              return FALSE;
            }
          name = g_strndup (s, q - s);
          *linked = lookup (p, name, TRUE);
        }
      else if (g_str_has_prefix (t, "used "))
        {
          const gchar *s = t + 5, *end;
          guint64 v;
          gboolean had = FALSE;

          for (end = s; g_ascii_isdigit (*end); end++)
            ;
          if (*linked == NULL || end == s || !g_str_has_prefix (end, " registers"))
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           *linked == NULL ? "nvJitLink info: a \"used\" line without its function: \"%s\""
                                           : "nvJitLink info: cannot read the registers in line \"%s\"", line);
              return FALSE;
            }
          if (!number (s, end - s, G_MAXUINT32, &v, line, error))
            return FALSE;
          /* the linked kernel, callees included, is what runs */
          had = (*linked)->have_used;
          (*linked)->registers = (guint32) v;
          (*linked)->have_const = FALSE;
          (*linked)->const_bytes = 0;
          if (!items (*linked, end + strlen (" registers"), had, line, error))
            return FALSE;
          (*linked)->have_used = TRUE;
          *linked = NULL;
        }
      return TRUE;
    }
  return TRUE;   /* not an info line (a warning, NVRTC's own messages) */
}

JsonNode *
atomr_ptxas_info_parse (const gchar  *log,
                        const gchar  *tool,
                        GError      **error)
{
  Parse p = { 0 };
  g_auto(GStrv) lines = NULL;
  g_autoptr(JsonBuilder) b = NULL;
  Func *current = NULL, *props = NULL, *linked = NULL;
  gboolean seen = FALSE, ok = TRUE;
  JsonNode *root = NULL;

  if (log == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "ptxas info: no log");
      return NULL;
    }
  p.funcs = g_ptr_array_new_with_free_func ((GDestroyNotify) func_free);
  p.kernels = g_hash_table_new (g_str_hash, g_str_equal);
  p.others = g_hash_table_new (g_str_hash, g_str_equal);
  lines = g_strsplit (log, "\n", -1);
  for (guint i = 0; ok && lines[i]; i++)
    {
      gsize n = strlen (lines[i]);
      if (n > 0 && lines[i][n - 1] == '\r')
        lines[i][n - 1] = '\0';
      ok = parse_line (&p, lines[i], &current, &props, &linked, &seen, error);
    }
  if (ok && !seen)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "ptxas info: the log has no ptxas or nvJitLink info line (compiled without -Xptxas=-v?)");
      ok = FALSE;
    }
  for (guint i = 0; ok && i < p.funcs->len; i++)
    {
      Func *f = g_ptr_array_index (p.funcs, i);
      if (f->kernel && !f->have_used)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "ptxas info: kernel '%s' has no \"Used N registers\" line (a truncated log?)", f->name);
          ok = FALSE;
        }
    }
  if (ok)
    {
      b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "tool");
      json_builder_add_string_value (b, tool ? tool : "ptxas");
      for (guint pass = 0; pass < 2; pass++)
        {
          json_builder_set_member_name (b, pass == 0 ? "kernels" : "functions");
          json_builder_begin_array (b);
          for (guint i = 0; i < p.funcs->len; i++)
            {
              Func *f = g_ptr_array_index (p.funcs, i);
              if (f->kernel != (pass == 0))
                continue;
              json_builder_begin_object (b);
              json_builder_set_member_name (b, "name");
              json_builder_add_string_value (b, f->name);
              if (pass == 0)
                {
                  json_builder_set_member_name (b, "arch");
                  if (f->arch)
                    json_builder_add_string_value (b, f->arch);
                  else
                    json_builder_add_null_value (b);
                  json_builder_set_member_name (b, "registers");
                  json_builder_add_int_value (b, f->registers);
                  json_builder_set_member_name (b, "barriers");
                  json_builder_add_int_value (b, f->barriers);
                  json_builder_set_member_name (b, "shared_bytes");
                  json_builder_add_int_value (b, f->shared_bytes);
                }
              json_builder_set_member_name (b, "stack_bytes");
              json_builder_add_int_value (b, f->stack_bytes);
              json_builder_set_member_name (b, "spill_stores");
              json_builder_add_int_value (b, f->spill_stores);
              json_builder_set_member_name (b, "spill_loads");
              json_builder_add_int_value (b, f->spill_loads);
              if (pass == 0)
                {
                  json_builder_set_member_name (b, "const_bytes");
                  if (f->have_const)
                    json_builder_add_int_value (b, (gint64) f->const_bytes);
                  else
                    json_builder_add_null_value (b);
                }
              json_builder_end_object (b);
            }
          json_builder_end_array (b);
        }
      json_builder_end_object (b);
      root = json_builder_get_root (b);
    }
  g_hash_table_unref (p.kernels);
  g_hash_table_unref (p.others);
  g_ptr_array_unref (p.funcs);
  return root;
}

gchar *
atomr_ptxas_info_strip (const gchar *log)
{
  g_auto(GStrv) lines = NULL;
  GString *out;

  if (log == NULL)
    return NULL;
  lines = g_strsplit (log, "\n", -1);
  out = g_string_new (NULL);
  for (guint i = 0; lines[i]; i++)
    {
      g_autofree gchar *l = g_strdup (lines[i]);
      gsize n = strlen (l);

      if (n > 0 && l[n - 1] == '\r')
        l[n - 1] = '\0';
      if (is_info_line (l))
        continue;
      if (lines[i + 1] == NULL && *lines[i] == '\0')
        break;   /* the text after the last newline */
      g_string_append (out, lines[i]);
      g_string_append_c (out, '\n');
    }
  /* no trailing newline added where the log had none */
  if (out->len > 0 && !g_str_has_suffix (log, "\n"))
    g_string_truncate (out, out->len - 1);
  return g_string_free (out, FALSE);
}

gboolean
atomr_ptxas_flags_verbose (const gchar * const *flags)
{
  for (guint i = 0; flags && flags[i]; i++)
    {
      const gchar *f = flags[i], *v = NULL;
      g_auto(GStrv) opts = NULL;

      if (g_str_has_prefix (f, "-Xptxas="))
        v = f + strlen ("-Xptxas=");
      else if (g_str_has_prefix (f, "--Xptxas="))
        v = f + strlen ("--Xptxas=");
      else if (g_str_has_prefix (f, "--ptxas-options="))
        v = f + strlen ("--ptxas-options=");
      else if (g_str_has_prefix (f, "-ptxas-options="))
        v = f + strlen ("-ptxas-options=");
      if (v == NULL)
        continue;
      opts = g_strsplit (v, ",", -1);
      for (guint k = 0; opts[k]; k++)
        if (g_str_equal (opts[k], "-v") || g_str_equal (opts[k], "--verbose"))
          return TRUE;
    }
  return FALSE;
}
