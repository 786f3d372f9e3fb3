/* atomr-kernel-cache-key.c — the kernel cache's key: the request blob and
 * every file NVRTC may read for it
 *
 * Read "Kernel cache keys" in docs/DESIGN-NOTES.md first: this file
 * implements the argument made there.  In short, NVRTC 13 (measured, see
 * the tests) resolves
 *   #include "x"   in the directory of the file holding the directive (for
 *                  the program itself: the directory of its *name*, "."
 *                  when the name has none; not with --no-source-include),
 *                  then the -I paths in order;
 *   #include <x>   in the -I paths in order;
 *   -include x     as a path (relative to the working directory), then
 *                  in the -I paths;
 * and finally in its built-in headers (covered by its identity).  It
 * searches no system directory.  We do the same, hash every file found with
 * its path as spelled, and stamp every place searched before it, so that a
 * header that appears in front of (shadows) the one used is noticed too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <sys/stat.h>

#include "atomr-error.h"

#include "atomr-kernel-cache-key-private.h"
#include "atomr-compile-options-private.h"
#include "atomr-nvrtc-loader-private.h"

void
atomr_cache_header_stamp_free (gpointer data)
{
  AtomrCacheHeaderStamp *s = data;
  g_free (s->path);
  g_free (s);
}

static void
blob_add (GByteArray   *blob,
          gconstpointer data,
          gsize         len)
{
  guint64 le = GUINT64_TO_LE ((guint64) len);
  g_byte_array_append (blob, (const guint8 *) &le, 8);
  if (len)
    g_byte_array_append (blob, data, len);
}

static void
blob_add_count (GByteArray *blob,
                guint64     n)
{
  guint64 le = GUINT64_TO_LE (n);
  g_byte_array_append (blob, (const guint8 *) &le, 8);
}

static void
blob_add_string (GByteArray  *blob,
                 const gchar *s)
{
  if (s == NULL)
    {
      guint64 none = G_MAXUINT64;
      g_byte_array_append (blob, (const guint8 *) &none, 8);
      return;
    }
  blob_add (blob, s, strlen (s));
}

static void
blob_add_strv (GByteArray          *blob,
               const gchar * const *v)
{
  guint n = v ? g_strv_length ((gchar **) v) : 0;
  blob_add_count (blob, n);
  for (guint i = 0; i < n; i++)
    blob_add_string (blob, v[i]);
}

static void
stamp_fill (AtomrCacheHeaderStamp *s)
{
  struct stat st;

  s->exists = stat (s->path, &st) == 0;
  if (s->exists)
    {
      s->size = st.st_size;
      s->mtime_ns = (gint64) st.st_mtim.tv_sec * G_GINT64_CONSTANT (1000000000) + st.st_mtim.tv_nsec;
      s->inode = st.st_ino;
      s->device = st.st_dev;
    }
}

gboolean
atomr_cache_stamps_unchanged (GPtrArray *headers)
{
  for (guint i = 0; i < headers->len; i++)
    {
      AtomrCacheHeaderStamp *old = g_ptr_array_index (headers, i);
      AtomrCacheHeaderStamp now = { old->path };

      stamp_fill (&now);
      if (now.exists != old->exists
          || (now.exists && (now.size != old->size || now.mtime_ns != old->mtime_ns
                             || now.inode != old->inode || now.device != old->device)))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Flags                                                               */

/* Options whose whole effect is their text (which is in the key).
 * Matched as "-name", "--name", "-name=...", "--name=...".  Anything not
 * here, and not handled below, makes the request unkeyable: a future NVRTC
 * option that reads a file must not slip through. */
static const gchar * const text_options[] = {
  "arch", "gpu-architecture", "std", "D", "define-macro", "U", "undefine-macro",
  "dc", "device-c", "dw", "device-w", "rdc", "relocatable-device-code",
  "ewp", "extensible-whole-program", "dlto", "dlink-time-opt", "gen-opt-lto",
  "G", "device-debug", "lineinfo", "generate-line-info", "dopt",
  "Ofast-compile", "Ofc", "maxrregcount", "ftz", "prec-sqrt", "prec-div", "fmad",
  "use_fast_math", "extra-device-vectorization", "modify-stack-limit",
  "builtin-move-forward", "builtin-initializer-list", "disable-warnings", "w",
  "restrict", "default-device", "device-as-default-execution-space",
  "device-int128", "device-float128", "no-device-int128", "no-device-float128",
  "optimization-info", "display-error-number", "no-display-error-number",
  "diag-error", "diag-suppress", "diag-warn", "brief-diagnostics",
  "split-compile", "fdevice-syntax-only", "minimal", "device-stack-protector",
  "ptxas-options", "Xptxas", "jump-table-density", "frandom-seed",
  "no-source-include", "pch", "instantiate-templates-in-pch", "pch-messages",
  "pch-verbose", "Werror", "err-no", "optix-ir", "opt-lto", "no-cache",
  "fassociative-math", "return-at-end", "no-lineinfo-inlined-at", "m64",
  NULL
};

typedef struct {
  GPtrArray *include_dirs;   /* gchar*, in order */
  GPtrArray *pre_includes;   /* gchar*, in order */
  gboolean   source_include;
} FlagPlan;

static void
flag_plan_clear (FlagPlan *plan)
{
  g_clear_pointer (&plan->include_dirs, g_ptr_array_unref);
  g_clear_pointer (&plan->pre_includes, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (FlagPlan, flag_plan_clear)

/* If @flag is -@name / --@name (optionally with "=value", or for one-letter
 * names directly followed by the value), returns the value ("" when there
 * is none). */
static const gchar *
option_value (const gchar *flag,
              const gchar *name)
{
  gsize n = strlen (name);
  const gchar *p = flag;

  if (*p != '-')
    return NULL;
  p++;
  if (*p == '-')
    p++;
  if (strncmp (p, name, n) != 0)
    return NULL;
  p += n;
  if (*p == '\0')
    return p;
  if (*p == '=')
    return p + 1;
  if (n == 1)   /* -Ipath, -DNAME */
    return p;
  return NULL;
}

/* A path-taking option: "-I dir" (two elements), "-Idir", "-I=dir",
 * "--include-path=dir", "--include-path dir". */
static gboolean
path_option (const gchar * const *flags,
             guint               *i,
             const gchar * const *names,
             const gchar        **value)
{
  for (guint k = 0; names[k]; k++)
    {
      const gchar *v = option_value (flags[*i], names[k]);
      if (v == NULL)
        continue;
      if (*v == '\0')
        {
          if (flags[*i + 1] == NULL)
            return FALSE;
          *i += 1;
          v = flags[*i];
        }
      *value = v;
      return TRUE;
    }
  return FALSE;
}

static gboolean
plan_flags (const gchar * const *flags,
            FlagPlan            *plan,
            GError             **error)
{
  static const gchar * const include_names[] = { "I", "include-path", NULL };
  static const gchar * const pre_names[] = { "include", "pre-include", "preinclude", NULL };

  plan->include_dirs = g_ptr_array_new_with_free_func (g_free);
  plan->pre_includes = g_ptr_array_new_with_free_func (g_free);
  plan->source_include = TRUE;
  for (guint i = 0; flags && flags[i]; i++)
    {
      const gchar *f = flags[i], *value = NULL;
      gboolean known = FALSE;

      /* Longer names first: "-include" is not "-I" + "nclude". */
      gboolean pre = path_option (flags, &i, pre_names, &value);
      if (pre || path_option (flags, &i, include_names, &value))
        {
          gsize n = strlen (value);
          /* NVRTC trims blanks around paths ("-I inc"); rather than guess
           * exactly which, such paths are not keyed. */
          if (n == 0 || g_ascii_isspace (value[0]) || g_ascii_isspace (value[n - 1]))
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                           "flag \"%s\": a path with blanks around it is not keyed", f);
              return FALSE;
            }
          g_ptr_array_add (pre ? plan->pre_includes : plan->include_dirs, g_strdup (value));
          continue;
        }
      if (option_value (f, "no-source-include"))
        plan->source_include = FALSE;
      for (guint k = 0; !known && text_options[k]; k++)
        known = option_value (f, text_options[k]) != NULL;
      /* -O0 .. -O3, -Os: the optimisation level. */
      if (!known && f[0] == '-' && f[1] == 'O' && f[2] != '\0' && f[3] == '\0')
        known = TRUE;
      if (!known)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "flag \"%s\" may make NVRTC read or write files the cache key "
                       "cannot see, or is unknown to the cache", f);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
atomr_cache_flags_use_lto (const gchar * const *flags)
{
  for (guint i = 0; flags && flags[i]; i++)
    if (option_value (flags[i], "dlto") || option_value (flags[i], "dlink-time-opt"))
      return TRUE;
  return FALSE;
}

/* ------------------------------------------------------------------ */
/* Reading C++ as the preprocessor does (enough to find directives)    */

/* Removes backslash-newline splices and replaces comments by one space
 * (so a comment spanning lines continues the directive it is in, as in
 * C), skipping string, character and raw string literals.  Literal
 * recognition errs towards "not a comment": a missed comment only makes the
 * scan see more directives (more hashing, or a refusal), never fewer. */
static gchar *
logical_text (const gchar *text,
              gsize        len,
              gsize       *out_len)
{
  GString *spliced = g_string_sized_new (len);
  GString *out;
  const gchar *p, *end;

  for (gsize i = 0; i < len; i++)
    {
      if (text[i] == '\\')
        {
          gsize j = i + 1;
          if (j < len && text[j] == '\r')
            j++;
          if (j < len && text[j] == '\n')
            {
              i = j;
              continue;
            }
        }
      g_string_append_c (spliced, text[i]);
    }

  out = g_string_sized_new (spliced->len);
  p = spliced->str;
  end = spliced->str + spliced->len;
  while (p < end)
    {
      gchar c = *p;

      if (c == '/' && p + 1 < end && p[1] == '/')
        {
          while (p < end && *p != '\n')
            p++;
          g_string_append_c (out, ' ');
          continue;
        }
      if (c == '/' && p + 1 < end && p[1] == '*')
        {
          const gchar *close = g_strstr_len (p + 2, end - p - 2, "*/");
          p = close ? close + 2 : end;
          g_string_append_c (out, ' ');
          continue;
        }
      if (g_ascii_isdigit (c) || (c == '.' && p + 1 < end && g_ascii_isdigit (p[1])))
        {
          /* A pp-number, digit separators included (1'000). */
          while (p < end && (g_ascii_isalnum (*p) || *p == '_' || *p == '.'
                             || (*p == '\'' && p + 1 < end && (g_ascii_isalnum (p[1]) || p[1] == '_'))
                             || ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E'
                                                              || p[-1] == 'p' || p[-1] == 'P'))))
            g_string_append_c (out, *p++);
          continue;
        }
      if (g_ascii_isalpha (c) || c == '_')
        {
          const gchar *id = p;
          while (p < end && (g_ascii_isalnum (*p) || *p == '_'))
            p++;
          g_string_append_len (out, id, p - id);
          /* Raw string: R"delim( ... )delim", with an optional prefix. */
          if (p < end && *p == '"' && p[-1] == 'R'
              && (p - id == 1 || (p - id == 2 && strchr ("LuU", id[0])) || (p - id == 3 && id[0] == 'u' && id[1] == '8')))
            {
              const gchar *open = memchr (p, '(', MIN ((gsize) (end - p), 18));
              if (open)
                {
                  g_autofree gchar *terminator = g_strdup_printf (")%.*s\"", (int) (open - p - 1), p + 1);
                  const gchar *close = g_strstr_len (open, end - open, terminator);
                  p = close ? close + strlen (terminator) : end;
                  g_string_append (out, "\"\"");
                  continue;
                }
            }
          continue;
        }
      if (c == '"' || c == '\'')
        {
          g_string_append_c (out, c);
          p++;
          while (p < end && *p != c && *p != '\n')
            {
              if (*p == '\\' && p + 1 < end && p[1] != '\n')
                {
                  g_string_append_c (out, *p++);
                }
              g_string_append_c (out, *p++);
            }
          if (p < end && *p == c)
            g_string_append_c (out, *p++);
          continue;
        }
      g_string_append_c (out, c);
      p++;
    }
  g_string_free (spliced, TRUE);
  *out_len = out->len;
  return g_string_free (out, FALSE);
}

typedef enum { OPERAND_QUOTED, OPERAND_ANGLED } OperandKind;

/* Parses a header-name operand at @p ("x" or <x>).  NULL when it is not
 * one (a macro: a computed include). */
static gchar *
header_operand (const gchar  *p,
                const gchar  *end,
                OperandKind  *kind)
{
  const gchar *stop;

  while (p < end && (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v' || *p == '\r'))
    p++;
  if (p >= end || (*p != '"' && *p != '<'))
    return NULL;
  *kind = *p == '"' ? OPERAND_QUOTED : OPERAND_ANGLED;
  stop = memchr (p + 1, *p == '"' ? '"' : '>', end - p - 1);
  if (stop == NULL || stop == p + 1)
    return NULL;
  return g_strndup (p + 1, stop - p - 1);
}

static gboolean
is_ident_char (gchar c)
{
  return g_ascii_isalnum (c) || c == '_';
}

/* ------------------------------------------------------------------ */
/* The scan                                                            */

typedef struct {
  const FlagPlan *plan;
  GHashTable     *visited;    /* found path -> NULL */
  GHashTable     *stamped;    /* path -> NULL */
  GPtrArray      *headers;    /* AtomrCacheHeaderStamp */
  GChecksum      *sum;
  guint           depth;
  GError         *refusal;
} Scan;

static void
refuse (Scan        *scan,
        const gchar *format,
        ...) G_GNUC_PRINTF (2, 3);

static void
refuse (Scan        *scan,
        const gchar *format,
        ...)
{
  va_list args;
  g_autofree gchar *message = NULL;

  if (scan->refusal)
    return;
  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  scan->refusal = g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED, message);
}

static void
stamp (Scan        *scan,
       const gchar *path)
{
  AtomrCacheHeaderStamp *s;

  if (g_hash_table_contains (scan->stamped, path))
    return;
  g_hash_table_add (scan->stamped, g_strdup (path));
  s = g_new0 (AtomrCacheHeaderStamp, 1);
  s->path = g_strdup (path);
  stamp_fill (s);
  g_ptr_array_add (scan->headers, s);
}

static void
sum_string (GChecksum   *sum,
            const gchar *tag,
            const gchar *s)
{
  guint64 le = GUINT64_TO_LE ((guint64) strlen (s));
  g_checksum_update (sum, (const guchar *) tag, strlen (tag) + 1);
  g_checksum_update (sum, (const guchar *) &le, 8);
  g_checksum_update (sum, (const guchar *) s, -1);
}

/* The candidate paths for @name, in NVRTC's order.  @includer_dir: the
 * directory of the file holding the directive for a quoted name (NULL to
 * skip it). */
static GPtrArray *
candidates (Scan        *scan,
            const gchar *name,
            const gchar *first_dir,
            gboolean     use_first_dir)
{
  GPtrArray *c = g_ptr_array_new_with_free_func (g_free);

  if (g_path_is_absolute (name))
    {
      g_ptr_array_add (c, g_strdup (name));
      return c;
    }
  if (use_first_dir)
    g_ptr_array_add (c, first_dir ? g_build_filename (first_dir, name, NULL) : g_strdup (name));
  for (guint i = 0; i < scan->plan->include_dirs->len; i++)
    g_ptr_array_add (c, g_build_filename (g_ptr_array_index (scan->plan->include_dirs, i), name, NULL));
  return c;
}

static void scan_file (Scan *scan, const gchar *path, gboolean follow);

/* Resolves one header reference like NVRTC; hashes what was found (or
 * that nothing was) and stamps every place looked at. */
static void
resolve (Scan        *scan,
         const gchar *directive,
         const gchar *name,
         const gchar *first_dir,
         gboolean     use_first_dir,
         gboolean     follow)
{
  g_autoptr(GPtrArray) c = candidates (scan, name, first_dir, use_first_dir);
  const gchar *found = NULL;

  sum_string (scan->sum, directive, name);
  for (guint i = 0; i < c->len && found == NULL; i++)
    {
      const gchar *path = g_ptr_array_index (c, i);
      stamp (scan, path);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        found = path;
    }
  /* Not found: NVRTC's built-in header (its identity is in the key) or an
   * error (never cached).  The stamps notice one appearing. */
  sum_string (scan->sum, "found", found ? found : "");
  if (found == NULL || !follow)
    {
      if (found)
        scan_file (scan, found, FALSE);
      return;
    }
  if (g_hash_table_contains (scan->visited, found))
    return;
  g_hash_table_add (scan->visited, g_strdup (found));
  scan_file (scan, found, TRUE);
}

static const gchar *
skip_blank (const gchar *p,
            const gchar *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v' || *p == '\r'))
    p++;
  return p;
}

/* Finds every directive and operator that makes NVRTC look for a file in
 * @text (the contents of @path, NULL for the program itself). */
static void
scan_text (Scan        *scan,
           const gchar *what,
           const gchar *text,
           gsize        len,
           const gchar *dir,
           gboolean     use_dir)
{
  gsize n = 0;
  g_autofree gchar *logical = logical_text (text, len, &n);
  const gchar *p = logical, *end = logical + n;
  static const gchar * const time_macros[] = { "__DATE__", "__TIME__", "__TIMESTAMP__", NULL };
  static const gchar * const has_ops[] = { "__has_include_next", "__has_include", "__has_embed", NULL };

  /* Expansions that differ between two compiles of the same input. */
  for (guint k = 0; time_macros[k]; k++)
    {
      const gchar *hit = logical;
      gsize l = strlen (time_macros[k]);
      while ((hit = g_strstr_len (hit, end - hit, time_macros[k])))
        {
          if ((hit == logical || !is_ident_char (hit[-1])) && !is_ident_char (hit[l]))
            {
              refuse (scan, "%s uses %s, which differs between compiles", what,
                      time_macros[k]);
              return;
            }
          hit += l;
        }
    }
  /* __has_include ("x") / <x>: the answer depends on the file system. */
  for (guint k = 0; has_ops[k]; k++)
    {
      const gchar *hit = logical;
      gsize l = strlen (has_ops[k]);
      while ((hit = g_strstr_len (hit, end - hit, has_ops[k])))
        {
          const gchar *q = hit + l;
          if ((hit == logical || !is_ident_char (hit[-1])) && !is_ident_char (*q))
            {
              OperandKind kind;
              g_autofree gchar *name = NULL;

              if (k == 0)
                {
                  refuse (scan, "__has_include_next cannot be keyed");
                  return;
                }
              q = skip_blank (q, end);
              if (q < end && *q == '(')
                name = header_operand (q + 1, end, &kind);
              if (name == NULL)
                {
                  /* The macro tests "#ifdef __has_include" are fine. */
                  const gchar *line_start = hit;
                  while (line_start > logical && line_start[-1] != '\n')
                    line_start--;
                  line_start = skip_blank (line_start, end);
                  if (*line_start == '#' && (q >= end || *q != '('))
                    {
                      hit += l;
                      continue;
                    }
                  refuse (scan, "%s: a computed %s operand cannot be keyed",
                          what, has_ops[k]);
                  return;
                }
              resolve (scan, has_ops[k], name, dir, use_dir && kind == OPERAND_QUOTED, FALSE);
            }
          hit += l;
        }
    }

  while (p < end)
    {
      const gchar *line_end = memchr (p, '\n', end - p);
      const gchar *q;

      if (line_end == NULL)
        line_end = end;
      q = skip_blank (p, line_end);
      if (q < line_end && (*q == '#' || (*q == '%' && q + 1 < line_end && q[1] == ':')))
        {
          const gchar *word;
          gsize wlen;

          q = skip_blank (q + (*q == '#' ? 1 : 2), line_end);
          word = q;
          while (q < line_end && is_ident_char (*q))
            q++;
          wlen = q - word;
#define IS(w) (wlen == strlen (w) && strncmp (word, w, wlen) == 0)
          if (IS ("include") || IS ("import") || IS ("embed"))
            {
              OperandKind kind;
              g_autofree gchar *directive = g_strndup (word, wlen);
              g_autofree gchar *name = header_operand (q, line_end, &kind);

              if (name == NULL)
                {
                  g_autofree gchar *line = g_strndup (p, line_end - p);
                  refuse (scan, "%s: the computed include \"%s\" cannot be keyed",
                          what, g_strstrip (line));
                  return;
                }
              resolve (scan, directive, name, dir, use_dir && kind == OPERAND_QUOTED,
                       !IS ("embed"));
            }
          else if (IS ("include_next"))
            {
              refuse (scan, "%s: #include_next cannot be keyed", what);
              return;
            }
          else if (IS ("pragma"))
            {
              const gchar *w = skip_blank (q, line_end);
              if (line_end - w >= 13 && strncmp (w, "include_alias", 13) == 0)
                {
                  refuse (scan, "#pragma include_alias cannot be keyed");
                  return;
                }
            }
#undef IS
        }
      if (scan->refusal)
        return;
      p = line_end + 1;
    }
}

static void
scan_file (Scan        *scan,
           const gchar *path,
           gboolean     follow)
{
  g_autofree gchar *contents = NULL;
  g_autofree gchar *dir = NULL;
  gsize len = 0;
  guint64 le;

  stamp (scan, path);
  sum_string (scan->sum, "file", path);
  if (!g_file_get_contents (path, &contents, &len, NULL))
    {
      refuse (scan, "%s cannot be read", path);
      return;
    }
  le = GUINT64_TO_LE ((guint64) len);
  g_checksum_update (scan->sum, (const guchar *) &le, 8);
  g_checksum_update (scan->sum, (const guchar *) contents, len);
  if (!follow)
    return;
  if (scan->depth >= 200)
    {
      refuse (scan, "%s: includes nest deeper than 200", path);
      return;
    }
  dir = g_path_get_dirname (path);
  scan->depth++;
  scan_text (scan, path, contents, len, dir, TRUE);
  scan->depth--;
}

GBytes *
atomr_cache_request_blob (const AtomrCacheKeyInput *in)
{
  GByteArray *blob = g_byte_array_sized_new (strlen (in->source) + 256);
  guint32 version = GUINT32_TO_LE (ATOMR_CACHE_FORMAT_VERSION);
  gboolean lto = atomr_cache_flags_use_lto (in->flags);

  blob_add (blob, "atomr-kernel-cache-2", 20);
  blob_add (blob, &version, 4);
  blob_add_string (blob, atomr_nvrtc_get_identity ());
  blob_add_string (blob, lto ? atomr_jitlink_get_identity () : NULL);
  blob_add_string (blob, in->program_name ? in->program_name : ATOMR_DEFAULT_PROGRAM_NAME);
  blob_add_string (blob, in->arch);
  blob_add_strv (blob, in->flags);
  blob_add_strv (blob, in->kernel_names);
  blob_add_string (blob, in->source);
  blob_add_count (blob, in->link_objects ? in->link_objects->len : 0);
  for (guint i = 0; in->link_objects && i < in->link_objects->len; i++)
    {
      AtomrLinkObject *obj = g_ptr_array_index (in->link_objects, i);
      gsize len;
      gconstpointer data = g_bytes_get_data (obj->data, &len);
      blob_add (blob, obj->ptx ? "ptx" : "ltoir", obj->ptx ? 3 : 5);
      blob_add (blob, data, len);
    }
  return g_byte_array_free_to_bytes (blob);
}

/* The options' share of the memory key.  Together with the program name
 * and the source (compared whole: atomr_cache_memory_key_equal()) it
 * holds everything atomr_cache_request_blob() holds, so two requests with
 * equal memory keys have equal blobs. */
GBytes *
atomr_cache_options_blob (const gchar * const *flags,
                          const gchar * const *kernel_names,
                          const gchar         *arch,
                          GPtrArray           *link_objects)
{
  GByteArray *blob = g_byte_array_sized_new (256);
  guint32 version = GUINT32_TO_LE (ATOMR_CACHE_FORMAT_VERSION);
  gboolean lto = atomr_cache_flags_use_lto (flags);

  blob_add (blob, "atomr-memory-key-1", 18);
  blob_add (blob, &version, 4);
  blob_add_string (blob, atomr_nvrtc_get_identity ());
  blob_add_string (blob, lto ? atomr_jitlink_get_identity () : NULL);
  blob_add_string (blob, arch);
  blob_add_strv (blob, flags);
  blob_add_strv (blob, kernel_names);
  blob_add_count (blob, link_objects ? link_objects->len : 0);
  for (guint i = 0; link_objects && i < link_objects->len; i++)
    {
      AtomrLinkObject *obj = g_ptr_array_index (link_objects, i);
      gsize len;
      gconstpointer data = g_bytes_get_data (obj->data, &len);
      blob_add (blob, obj->ptx ? "ptx" : "ltoir", obj->ptx ? 3 : 5);
      blob_add (blob, data, len);
    }
  return g_byte_array_free_to_bytes (blob);
}

/* g_bytes_hash() and g_str_hash() go a byte at a time; eight at a time,
 * mixed with a multiply, is several times faster and spreads as well. */
guint
atomr_cache_hash_data (gconstpointer data,
                       gsize         len,
                       guint64       seed)
{
  const guint8 *p = data;
  guint64 h = 0x9e3779b97f4a7c15ull ^ len ^ (seed * 0xc2b2ae3d27d4eb4full);

  for (; len >= 8; p += 8, len -= 8)
    {
      guint64 w;
      memcpy (&w, p, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
  if (len > 0)
    {
      guint64 w = 0;
      memcpy (&w, p, len);
      h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    }
  h ^= h >> 29;
  return (guint) (h ^ (h >> 32));
}

guint
atomr_cache_bytes_hash (GBytes *bytes)
{
  gsize len;
  gconstpointer data = g_bytes_get_data (bytes, &len);

  return atomr_cache_hash_data (data, len, 0);
}

gchar *
atomr_cache_key_compute (GBytes                   *blob,
                         const AtomrCacheKeyInput *in,
                         GPtrArray               **headers_out,
                         GError                  **error)
{
  g_auto(FlagPlan) plan = { 0 };
  g_autoptr(GHashTable) visited = NULL;
  g_autoptr(GHashTable) stamped = NULL;
  g_autoptr(GChecksum) sum = NULL;
  g_autoptr(GPtrArray) headers = NULL;
  g_autofree gchar *program_dir = NULL;
  Scan scan = { 0 };
  gsize blob_len;
  gconstpointer blob_data;

  if (!plan_flags (in->flags, &plan, error))
    return NULL;

  sum = g_checksum_new (G_CHECKSUM_SHA256);
  blob_data = g_bytes_get_data (blob, &blob_len);
  g_checksum_update (sum, blob_data, blob_len);
  visited = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  stamped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  headers = g_ptr_array_new_with_free_func (atomr_cache_header_stamp_free);
  scan.plan = &plan;
  scan.visited = visited;
  scan.stamped = stamped;
  scan.headers = headers;
  scan.sum = sum;

  /* -include files: a path from the working directory, then -I. */
  for (guint i = 0; i < plan.pre_includes->len && scan.refusal == NULL; i++)
    resolve (&scan, "pre-include", g_ptr_array_index (plan.pre_includes, i), NULL, TRUE, TRUE);

  /* The program's quoted includes start in the directory of its name. */
  program_dir = g_path_get_dirname (in->program_name ? in->program_name : ATOMR_DEFAULT_PROGRAM_NAME);
  if (scan.refusal == NULL)
    scan_text (&scan, in->program_name ? in->program_name : ATOMR_DEFAULT_PROGRAM_NAME, in->source,
               strlen (in->source), program_dir, plan.source_include);

  if (scan.refusal)
    {
      g_propagate_error (error, scan.refusal);
      return NULL;
    }
  *headers_out = g_steal_pointer (&headers);
  return g_strdup (g_checksum_get_string (sum));
}
