/* atomr-kernel-params.c — kernel parameter types from the mangled name or
 * the PTX, and the checks of launch arguments against them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-kernel-params-private.h"

void
atomr_param_type_clear (gpointer data)
{
  AtomrParamType *t = data;
  g_clear_pointer (&t->type, g_free);
}

static AtomrParamType *
param_new (AtomrParamKind kind,
           gchar         *type)
{
  AtomrParamType *t = g_new0 (AtomrParamType, 1);
  t->kind = kind;
  t->type = type;
  return t;
}

static AtomrParamType *
param_copy (const AtomrParamType *t)
{
  return param_new (t->kind, g_strdup (t->type));
}

static void
param_free (gpointer data)
{
  if (data == NULL)
    return;
  atomr_param_type_clear (data);
  g_free (data);
}

/* ------------------------------------------------------------------ */
/* A demangler for the subset of the Itanium C++ ABI kernels use       */

typedef struct {
  const gchar *p;
  GPtrArray   *subs;        /* AtomrParamType: substitution candidates */
  GPtrArray   *targs;       /* AtomrParamType: the function's template args */
  guint        depth;
  gboolean     failed;
} Demangler;

static AtomrParamType *parse_type (Demangler *d);

static gboolean
fail (Demangler *d)
{
  d->failed = TRUE;
  return FALSE;
}

static void
add_sub (Demangler            *d,
         const AtomrParamType *t)
{
  g_ptr_array_add (d->subs, param_copy (t));
}

static gchar *
parse_source_name (Demangler *d)
{
  guint64 n = 0;
  gchar *name;

  if (!g_ascii_isdigit (*d->p))
    {
      fail (d);
      return NULL;
    }
  while (g_ascii_isdigit (*d->p))
    {
      n = n * 10 + (guint64) (*d->p++ - '0');
      if (n > 4096)
        {
          fail (d);
          return NULL;
        }
    }
  if (strnlen (d->p, n) < n)
    {
      fail (d);
      return NULL;
    }
  name = g_strndup (d->p, n);
  d->p += n;
  return name;
}

/* S_ = 0, S0_ = 1, S1_ = 2, ..., base 36 with upper-case letters. */
static AtomrParamType *
parse_substitution (Demangler *d)
{
  guint64 index = 0;

  d->p++;   /* S */
  if (*d->p == '_')
    index = 0;
  else
    {
      guint64 seq = 0;
      while (g_ascii_isdigit (*d->p) || g_ascii_isupper (*d->p))
        {
          seq = seq * 36 + (guint64) (g_ascii_isdigit (*d->p) ? *d->p - '0' : *d->p - 'A' + 10);
          d->p++;
          if (seq > 100000)
            break;
        }
      if (*d->p != '_')
        {
          fail (d);
          return NULL;
        }
      index = seq + 1;
    }
  d->p++;   /* _ */
  if (index >= d->subs->len)
    {
      fail (d);
      return NULL;
    }
  return param_copy (g_ptr_array_index (d->subs, index));
}

static AtomrParamType *
parse_template_param (Demangler *d)
{
  guint64 index = 0;

  d->p++;   /* T */
  if (*d->p != '_')
    {
      if (!g_ascii_isdigit (*d->p))
        {
          fail (d);
          return NULL;
        }
      while (g_ascii_isdigit (*d->p))
        index = index * 10 + (guint64) (*d->p++ - '0');
      index += 1;
    }
  if (*d->p != '_' || d->targs == NULL || index >= d->targs->len)
    {
      fail (d);
      return NULL;
    }
  d->p++;
  if (g_ptr_array_index (d->targs, index) == NULL)
    {
      fail (d);
      return NULL;
    }
  return param_copy (g_ptr_array_index (d->targs, index));
}

/* I <arg>* E.  Types go into @out (when not NULL) as themselves, values
 * as NULL. */
static gboolean
parse_template_args (Demangler *d,
                     GPtrArray *out)
{
  d->p++;   /* I */
  while (*d->p && *d->p != 'E' && !d->failed)
    {
      if (*d->p == 'L')
        {
          /* A literal: L <type> <value> E, or L_Z <encoding> E. */
          if (d->p[1] == '_' || d->p[1] == 'Z')
            return fail (d);
          while (*d->p && *d->p != 'E')
            d->p++;
          if (*d->p != 'E')
            return fail (d);
          d->p++;
          if (out)
            g_ptr_array_add (out, NULL);
        }
      else if (*d->p == 'X' || *d->p == 'J')
        return fail (d);
      else
        {
          AtomrParamType *t = parse_type (d);
          if (t == NULL)
            return fail (d);
          if (out)
            g_ptr_array_add (out, t);
          else
            param_free (t);
        }
    }
  if (*d->p != 'E')
    return fail (d);
  d->p++;
  return TRUE;
}

/* A name: nested (N ... E), std:: (St), a substitution, or a source name,
 * with template args.  @is_function: the encoding's own name (whose full
 * form is not a substitution candidate; its template args become the
 * function's).  Returns the readable name. */
static gchar *
parse_name (Demangler *d,
            gboolean   is_function)
{
  g_autoptr(GString) name = g_string_new (NULL);

  if (*d->p == 'N')
    {
      gboolean last_was_template = FALSE;
      guint components = 0;

      d->p++;
      while (*d->p == 'K' || *d->p == 'V' || *d->p == 'r')
        d->p++;
      while (*d->p && *d->p != 'E' && !d->failed)
        {
          /* "last_was_template": the prefix so far is a candidate already
           * (a template prefix, a substitution) or none (std). */
          if (*d->p == 'S' && d->p[1] == 't')
            {
              d->p += 2;
              g_string_append (name, "std");
              components++;
              last_was_template = TRUE;
              continue;
            }
          if (*d->p == 'S')
            {
              AtomrParamType *s = parse_substitution (d);
              if (s == NULL)
                return NULL;
              g_string_append (name, s->type);
              param_free (s);
              components++;
              last_was_template = TRUE;
              continue;
            }
          if (*d->p == 'I')
            {
              GPtrArray *targs = NULL;
              AtomrParamType prefix = { ATOMR_PARAM_STRUCT, name->str };

              /* The template prefix is a candidate. */
              if (components == 0)
                return (fail (d), NULL);
              add_sub (d, &prefix);
              if (is_function)
                {
                  targs = g_ptr_array_new_with_free_func (param_free);
                  if (!parse_template_args (d, targs))
                    {
                      g_ptr_array_unref (targs);
                      return NULL;
                    }
                  g_clear_pointer (&d->targs, g_ptr_array_unref);
                  d->targs = targs;
                }
              else if (!parse_template_args (d, NULL))
                return NULL;
              g_string_append (name, "<...>");
              last_was_template = TRUE;
              if (*d->p != 'E' || !is_function)
                {
                  AtomrParamType full = { ATOMR_PARAM_STRUCT, name->str };
                  if (*d->p != 'E')
                    add_sub (d, &full);
                }
              continue;
            }
          if (*d->p == 'L')
            d->p++;
          if (g_ascii_isdigit (*d->p))
            {
              g_autofree gchar *part = parse_source_name (d);
              if (part == NULL)
                return NULL;
              /* Everything before this component is a prefix candidate. */
              if (components > 0 && !last_was_template)
                {
                  AtomrParamType prefix = { ATOMR_PARAM_STRUCT, name->str };
                  add_sub (d, &prefix);
                }
              if (components > 0)
                g_string_append (name, "::");
              g_string_append (name, part);
              components++;
              last_was_template = FALSE;
              continue;
            }
          return (fail (d), NULL);
        }
      if (*d->p != 'E')
        return (fail (d), NULL);
      d->p++;
      /* As a type, the whole nested name is a candidate too. */
      if (!is_function)
        {
          AtomrParamType full = { ATOMR_PARAM_STRUCT, name->str };
          add_sub (d, &full);
        }
      return g_string_free (g_steal_pointer (&name), FALSE);
    }

  if (*d->p == 'S' && d->p[1] == 't')
    {
      d->p += 2;
      g_string_append (name, "std::");
    }
  else if (*d->p == 'S')
    {
      AtomrParamType *s = parse_substitution (d);
      if (s == NULL)
        return NULL;
      g_string_append (name, s->type);
      param_free (s);
      if (*d->p == 'I')
        {
          if (!parse_template_args (d, NULL))
            return NULL;
          g_string_append (name, "<...>");
          if (!is_function)
            {
              AtomrParamType full = { ATOMR_PARAM_STRUCT, name->str };
              add_sub (d, &full);
            }
        }
      return g_string_free (g_steal_pointer (&name), FALSE);
    }
  if (*d->p == 'L')
    d->p++;
  {
    g_autofree gchar *part = parse_source_name (d);
    if (part == NULL)
      return NULL;
    g_string_append (name, part);
  }
  if (*d->p == 'I')
    {
      AtomrParamType tname = { ATOMR_PARAM_STRUCT, name->str };
      add_sub (d, &tname);   /* the unscoped template name */
      if (is_function)
        {
          GPtrArray *targs = g_ptr_array_new_with_free_func (param_free);
          if (!parse_template_args (d, targs))
            {
              g_ptr_array_unref (targs);
              return NULL;
            }
          g_clear_pointer (&d->targs, g_ptr_array_unref);
          d->targs = targs;
        }
      else if (!parse_template_args (d, NULL))
        return NULL;
      g_string_append (name, "<...>");
    }
  if (!is_function)
    {
      AtomrParamType full = { ATOMR_PARAM_STRUCT, name->str };
      add_sub (d, &full);
    }
  return g_string_free (g_steal_pointer (&name), FALSE);
}

typedef struct {
  const gchar   *code;
  AtomrParamKind kind;
  const gchar   *name;
} Builtin;

static const Builtin builtins[] = {
  { "v", ATOMR_PARAM_UNKNOWN, "void" },
  { "b", ATOMR_PARAM_INT, "bool" },
  { "c", ATOMR_PARAM_INT, "char" },
  { "a", ATOMR_PARAM_INT, "signed char" },
  { "h", ATOMR_PARAM_INT, "unsigned char" },
  { "s", ATOMR_PARAM_INT, "short" },
  { "t", ATOMR_PARAM_INT, "unsigned short" },
  { "i", ATOMR_PARAM_INT, "int" },
  { "j", ATOMR_PARAM_INT, "unsigned int" },
  { "l", ATOMR_PARAM_INT, "long" },
  { "m", ATOMR_PARAM_INT, "unsigned long" },
  { "x", ATOMR_PARAM_INT, "long long" },
  { "y", ATOMR_PARAM_INT, "unsigned long long" },
  { "n", ATOMR_PARAM_INT, "__int128" },
  { "o", ATOMR_PARAM_INT, "unsigned __int128" },
  { "w", ATOMR_PARAM_INT, "wchar_t" },
  { "f", ATOMR_PARAM_FLOAT, "float" },
  { "d", ATOMR_PARAM_FLOAT, "double" },
  { "e", ATOMR_PARAM_FLOAT, "long double" },
  { "g", ATOMR_PARAM_FLOAT, "__float128" },
  { "Dh", ATOMR_PARAM_FLOAT, "half" },
  { "DF16_", ATOMR_PARAM_FLOAT, "_Float16" },
  { "DF16b", ATOMR_PARAM_FLOAT, "__bf16" },
  { "Di", ATOMR_PARAM_INT, "char32_t" },
  { "Ds", ATOMR_PARAM_INT, "char16_t" },
  { "Du", ATOMR_PARAM_INT, "char8_t" },
};

static AtomrParamType *parse_type_inner (Demangler *d);

static AtomrParamType *
parse_type (Demangler *d)
{
  AtomrParamType *t;

  if (d->failed || d->depth > 64)
    return (fail (d), NULL);
  d->depth++;
  t = parse_type_inner (d);
  d->depth--;
  return t;
}

static AtomrParamType *
parse_type_inner (Demangler *d)
{
  AtomrParamType *t = NULL;
  gchar c = *d->p;

  if (c == '\0')
    return (fail (d), NULL);

  for (guint i = 0; i < G_N_ELEMENTS (builtins); i++)
    {
      gsize n = strlen (builtins[i].code);
      if (strncmp (d->p, builtins[i].code, n) == 0)
        {
          d->p += n;
          return param_new (builtins[i].kind, g_strdup (builtins[i].name));
        }
    }

  switch (c)
    {
    case 'P':
      {
        AtomrParamType *pointee;
        d->p++;
        pointee = parse_type (d);
        if (pointee == NULL)
          return NULL;
        t = param_new (ATOMR_PARAM_POINTER, g_strconcat (pointee->type, " *", NULL));
        param_free (pointee);
        add_sub (d, t);
        return t;
      }
    case 'K':
    case 'V':
    case 'r':
      {
        const gchar *qual = c == 'K' ? "const " : c == 'V' ? "volatile " : "__restrict__ ";
        AtomrParamType *inner;
        d->p++;
        inner = parse_type (d);
        if (inner == NULL)
          return NULL;
        t = param_new (inner->kind, g_strconcat (qual, inner->type, NULL));
        param_free (inner);
        add_sub (d, t);
        return t;
      }
    case 'T':
      t = parse_template_param (d);
      if (t)
        add_sub (d, t);
      return t;
    case 'S':
      if (d->p[1] == 't')
        {
          gchar *name = parse_name (d, FALSE);
          return name ? param_new (ATOMR_PARAM_STRUCT, name) : NULL;
        }
      if (d->p[1] != '_' && !g_ascii_isdigit (d->p[1]) && !g_ascii_isupper (d->p[1]))
        return (fail (d), NULL);   /* Sa, Ss, ...: std classes, not kernel parameters */
      t = parse_substitution (d);
      if (t && *d->p == 'I')
        {
          /* A substituted template name with args: a class. */
          if (!parse_template_args (d, NULL))
            {
              param_free (t);
              return NULL;
            }
          t->kind = ATOMR_PARAM_STRUCT;
          add_sub (d, t);
        }
      return t;
    case 'N':
      {
        gchar *name = parse_name (d, FALSE);
        return name ? param_new (ATOMR_PARAM_STRUCT, name) : NULL;
      }
    case 'A':
    case 'D':
      if (c == 'D' && d->p[1] == 'v')
        {
          /* Dv <n> _ <type>: a vector type, passed by value. */
          AtomrParamType *inner;
          d->p += 2;
          while (g_ascii_isdigit (*d->p))
            d->p++;
          if (*d->p != '_')
            return (fail (d), NULL);
          d->p++;
          inner = parse_type (d);
          if (inner == NULL)
            return NULL;
          t = param_new (ATOMR_PARAM_STRUCT, g_strconcat ("vector of ", inner->type, NULL));
          param_free (inner);
          add_sub (d, t);
          return t;
        }
      if (c == 'A')
        {
          AtomrParamType *inner;
          d->p++;
          while (g_ascii_isdigit (*d->p))
            d->p++;
          if (*d->p != '_')
            return (fail (d), NULL);
          d->p++;
          inner = parse_type (d);
          if (inner == NULL)
            return NULL;
          t = param_new (ATOMR_PARAM_STRUCT, g_strconcat (inner->type, " []", NULL));
          param_free (inner);
          add_sub (d, t);
          return t;
        }
      return (fail (d), NULL);
    default:
      if (g_ascii_isdigit (c))
        {
          gchar *name = parse_name (d, FALSE);
          return name ? param_new (ATOMR_PARAM_STRUCT, name) : NULL;
        }
      return (fail (d), NULL);
    }
}

GPtrArray *
atomr_demangle_param_types (const gchar *mangled)
{
  Demangler d = { 0 };
  g_autoptr(GPtrArray) params = NULL;
  g_autofree gchar *name = NULL;

  if (mangled == NULL || !g_str_has_prefix (mangled, "_Z"))
    return NULL;
  d.p = mangled + 2;
  d.subs = g_ptr_array_new_with_free_func (param_free);
  name = parse_name (&d, TRUE);
  if (name && d.targs)
    {
      /* A template function's return type comes first. */
      AtomrParamType *ret = parse_type (&d);
      if (ret)
        param_free (ret);
    }
  /* A function always has a parameter list ("v" when empty). */
  if (name && *d.p == '\0')
    d.failed = TRUE;
  params = g_ptr_array_new_with_free_func (param_free);
  while (!d.failed && name && *d.p)
    {
      AtomrParamType *t;

      /* A CUDA clone suffix (".cloned") ends the encoding. */
      if (*d.p == '.')
        break;
      t = parse_type (&d);
      if (t == NULL)
        break;
      g_ptr_array_add (params, t);
    }
  g_ptr_array_unref (d.subs);
  g_clear_pointer (&d.targs, g_ptr_array_unref);
  if (d.failed || name == NULL)
    return NULL;
  /* f(void) has no parameters. */
  if (params->len == 1 && g_strcmp0 (((AtomrParamType *) params->pdata[0])->type, "void") == 0)
    g_ptr_array_set_size (params, 0);
  for (guint i = 0; i < params->len; i++)
    if (g_strcmp0 (((AtomrParamType *) params->pdata[i])->type, "void") == 0)
      return NULL;
  return g_steal_pointer (&params);
}

/* ------------------------------------------------------------------ */
/* PTX                                                                 */

/* Finds ".entry NAME(" in @ptx: *@open just after the '(', *@close at
 * the ')'.  FALSE if absent. */
static gboolean
ptx_find_entry (const gchar  *ptx,
                gsize         len,
                const gchar  *name,
                const gchar **open,
                const gchar **close)
{
  g_autofree gchar *needle = g_strconcat (".entry ", name, NULL);
  gsize nlen = strlen (needle);
  const gchar *end = ptx + len, *p = ptx;

  for (;;)
    {
      p = g_strstr_len (p, end - p, needle);
      if (p == NULL)
        return FALSE;
      p += nlen;
      while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
      if (p < end && *p == '(')
        break;
    }
  *open = p + 1;
  *close = memchr (p, ')', end - p);
  return *close != NULL;
}

/* The parameter types of ".entry NAME(" in @ptx, NULL if absent. */
static GPtrArray *
ptx_param_types (const gchar *ptx,
                 gsize        len,
                 const gchar *name)
{
  const gchar *p, *close;
  GPtrArray *params;

  if (!ptx_find_entry (ptx, len, name, &p, &close))
    return NULL;
  params = g_ptr_array_new_with_free_func (param_free);
  for (const gchar *q = p; q < close;)
    {
      const gchar *param = g_strstr_len (q, close - q, ".param");
      const gchar *stop;
      g_autofree gchar *decl = NULL;
      AtomrParamKind kind = ATOMR_PARAM_UNKNOWN;
      const gchar *type = NULL;

      if (param == NULL)
        break;
      stop = memchr (param, ',', close - param);
      if (stop == NULL)
        stop = close;
      decl = g_strndup (param, stop - param);
      if (strchr (decl, '['))
        kind = ATOMR_PARAM_STRUCT, type = "struct";
      else if (strstr (decl, ".f32") || strstr (decl, ".f64"))
        kind = ATOMR_PARAM_FLOAT, type = strstr (decl, ".f32") ? ".f32" : ".f64";
      else if (strstr (decl, ".u64") || strstr (decl, ".s64") || strstr (decl, ".b64"))
        kind = ATOMR_PARAM_INT_OR_POINTER, type = "pointer or 64-bit integer";
      else if (strstr (decl, "32") || strstr (decl, "16") || strstr (decl, "8"))
        kind = ATOMR_PARAM_INT, type = "integer";
      g_ptr_array_add (params, param_new (kind, g_strdup (type ? type : "unknown")));
      q = stop + 1;
    }
  return params;
}

/* ------------------------------------------------------------------ */
/* Parameter layouts                                                   */

/* A parameter's size and class from its PTX scalar type: b/s/u 8 to 64
 * bits and f32/f64.  0 for anything else (.f16, .pred, vectors...). */
static guint
ptx_scalar (const gchar *tok,
            gsize        len,
            gchar       *cls)
{
  static const struct { const gchar *name; guint size; gchar cls; } types[] = {
    { ".b8", 1, 'i' }, { ".s8", 1, 'i' }, { ".u8", 1, 'i' },
    { ".b16", 2, 'i' }, { ".s16", 2, 'i' }, { ".u16", 2, 'i' },
    { ".b32", 4, 'i' }, { ".s32", 4, 'i' }, { ".u32", 4, 'i' }, { ".f32", 4, 'f' },
    { ".b64", 8, 'q' }, { ".s64", 8, 'q' }, { ".u64", 8, 'q' }, { ".f64", 8, 'f' },
  };

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    if (strlen (types[i].name) == len && memcmp (types[i].name, tok, len) == 0)
      {
        *cls = types[i].cls;
        return types[i].size;
      }
  return 0;
}

static gboolean
parse_decimal (const gchar *s,
               gsize        len,
               guint64      max,
               guint64     *out)
{
  guint64 v = 0;

  if (len == 0 || len > 10)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return FALSE;
      v = v * 10 + (guint64) (s[i] - '0');
    }
  if (v > max)
    return FALSE;
  *out = v;
  return TRUE;
}

/* One ".param" declaration of an entry (between '(' or ',' and ',' or
 * ')'), as PTX writes them:
 *   .param .u32 NAME
 *   .param .align 8 .b8 NAME[16]
 *   .param .u64 .ptr .global .align 16 NAME   (the .align is the pointee's)
 * Size, alignment and class, FALSE for anything else. */
static gboolean
ptx_param_decl (const gchar *p,
                const gchar *end,
                guint64     *size,
                guint64     *align,
                gchar       *cls)
{
  enum { PARAM, ATTRS, AFTER_TYPE, ARRAY, DONE } state = PARAM;
  guint64 explicit_align = 0, elem = 0, count = 1;
  gboolean skip_number = FALSE, pending_align = FALSE, array = FALSE;

  while (p < end)
    {
      const gchar *tok;
      gsize len;

      while (p < end && g_ascii_isspace (*p))
        p++;
      if (p >= end)
        break;
      tok = p;
      if (*p == '[')
        len = 1;
      else
        {
          while (p < end && !g_ascii_isspace (*p) && *p != '[')
            p++;
          len = p - tok;
          p = tok;
        }
      p += len;

      if (pending_align || skip_number)
        {
          guint64 v;
          if (!parse_decimal (tok, len, 4096, &v) || v == 0 || (v & (v - 1)) != 0)
            return FALSE;
          if (pending_align)
            explicit_align = v;
          pending_align = skip_number = FALSE;
          continue;
        }
      switch (state)
        {
        case PARAM:
          if (len != 6 || memcmp (tok, ".param", 6) != 0)
            return FALSE;
          state = ATTRS;
          break;
        case ATTRS:
          if (len == 6 && memcmp (tok, ".align", 6) == 0)
            pending_align = TRUE;
          else if ((elem = ptx_scalar (tok, len, cls)) != 0)
            state = AFTER_TYPE;
          else
            return FALSE;
          break;
        case AFTER_TYPE:
          if (len >= 4 && memcmp (tok, ".ptr", 4) == 0)
            {
              /* ".ptr", ".ptr.global", ".ptr.global.align" N, or the
               * same as separate tokens: all about the pointee. */
              if (g_strstr_len (tok, len, ".align"))
                skip_number = TRUE;
            }
          else if ((len == 7 && (memcmp (tok, ".global", 7) == 0 || memcmp (tok, ".shared", 7) == 0))
                   || (len == 6 && (memcmp (tok, ".const", 6) == 0 || memcmp (tok, ".local", 6) == 0)))
            ;
          else if (len == 6 && memcmp (tok, ".align", 6) == 0)
            skip_number = TRUE;
          else if (tok[0] == '.' || tok[0] == '[' || g_ascii_isdigit (tok[0]))
            return FALSE;
          else
            state = ARRAY;   /* the name */
          break;
        case ARRAY:
          {
            const gchar *rb;
            if (tok[0] != '[' || (rb = memchr (p, ']', end - p)) == NULL
                || !parse_decimal (p, rb - p, ATOMR_PARAM_MAX_BYTES, &count) || count == 0)
              return FALSE;
            array = TRUE;
            p = rb + 1;
            state = DONE;
          }
          break;
        case DONE:
          return FALSE;
        }
    }
  if (state != ARRAY && state != DONE)
    return FALSE;
  if (pending_align || skip_number)
    return FALSE;
  *size = elem * count;
  *align = explicit_align ? explicit_align : elem;
  if (array)
    *cls = 's';
  return *size <= ATOMR_PARAM_MAX_BYTES;
}

gchar *
atomr_ptx_param_layout (const gchar *ptx,
                        gsize        len,
                        const gchar *name)
{
  g_autoptr(GString) out = g_string_new (NULL);
  const gchar *p, *close;
  guint64 offset = 0;

  if (ptx == NULL || name == NULL || !ptx_find_entry (ptx, len, name, &p, &close))
    return NULL;
  /* f() : nothing but blanks between the parentheses. */
  while (p < close && g_ascii_isspace (*p))
    p++;
  while (p < close)
    {
      const gchar *stop = memchr (p, ',', close - p);
      guint64 size, align;
      gchar cls = 0;

      if (stop == NULL)
        stop = close;
      if (!ptx_param_decl (p, stop, &size, &align, &cls))
        return NULL;
      offset = (offset + align - 1) / align * align;
      if (offset + size > ATOMR_PARAM_MAX_BYTES)
        return NULL;
      g_string_append_printf (out, "%s%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ":%c",
                              out->len ? "," : "", offset, size, cls);
      offset += size;
      p = stop < close ? stop + 1 : close;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
layout_type (gchar           cls,
             guint64         size,
             AtomrParamType *t)
{
  switch (cls)
    {
    case 'f': t->kind = ATOMR_PARAM_FLOAT; t->type = g_strdup (size == 4 ? ".f32" : ".f64"); break;
    case 'i': t->kind = ATOMR_PARAM_INT; t->type = g_strdup ("integer"); break;
    case 'q': t->kind = ATOMR_PARAM_INT_OR_POINTER; t->type = g_strdup ("pointer or 64-bit integer"); break;
    default:  t->kind = ATOMR_PARAM_STRUCT; t->type = g_strdup ("struct"); break;
    }
}

gboolean
atomr_param_layout_parse (const gchar *layout,
                          GArray      *offsets,
                          GArray      *sizes,
                          GArray      *types)
{
  guint64 end = 0;

  if (layout == NULL)
    return FALSE;
  for (const gchar *p = layout; *p;)
    {
      const gchar *c1 = strchr (p, ':'), *c2, *next;
      guint64 offset, size;
      gchar cls;

      if (c1 == NULL || (c2 = strchr (c1 + 1, ':')) == NULL)
        return FALSE;
      if (!parse_decimal (p, c1 - p, ATOMR_PARAM_MAX_BYTES, &offset)
          || !parse_decimal (c1 + 1, c2 - c1 - 1, ATOMR_PARAM_MAX_BYTES, &size))
        return FALSE;
      cls = c2[1];
      next = c2 + 2;
      if (*next == ',')
        {
          next++;
          if (*next == '\0')
            return FALSE;   /* a trailing comma */
        }
      else if (*next != '\0')
        return FALSE;
      /* What PTX can declare: integers of 1, 2 or 4 bytes, 64-bit words,
       * f32/f64 and byte arrays; scalars at their natural alignment; no
       * overlap; within the parameter space. */
      switch (cls)
        {
        case 'i': if (size != 1 && size != 2 && size != 4) return FALSE; break;
        case 'q': if (size != 8) return FALSE; break;
        case 'f': if (size != 4 && size != 8) return FALSE; break;
        case 's': if (size == 0) return FALSE; break;
        default: return FALSE;
        }
      if (offset < end || (cls != 's' && offset % size != 0) || offset + size > ATOMR_PARAM_MAX_BYTES)
        return FALSE;
      end = offset + size;
      if (offsets)
        {
          gsize o = offset, s = size;
          g_array_append_val (offsets, o);
          g_array_append_val (sizes, s);
        }
      if (types)
        {
          AtomrParamType t = { ATOMR_PARAM_UNKNOWN, NULL };
          layout_type (cls, size, &t);
          g_array_append_val (types, t);
        }
      p = next;
    }
  return TRUE;
}

GArray *
atomr_kernel_param_types (const gchar *lowered_name,
                          const gchar *ptx,
                          gsize        ptx_len,
                          guint        n_params)
{
  GArray *types = g_array_sized_new (FALSE, TRUE, sizeof (AtomrParamType), n_params);
  g_autoptr(GPtrArray) found = atomr_demangle_param_types (lowered_name);

  g_array_set_clear_func (types, atomr_param_type_clear);
  if ((found == NULL || found->len != n_params) && ptx && lowered_name)
    {
      g_clear_pointer (&found, g_ptr_array_unref);
      found = ptx_param_types (ptx, ptx_len, lowered_name);
    }
  for (guint i = 0; i < n_params; i++)
    {
      AtomrParamType t = { ATOMR_PARAM_UNKNOWN, NULL };
      if (found && found->len == n_params)
        {
          AtomrParamType *f = g_ptr_array_index (found, i);
          t.kind = f->kind;
          t.type = g_strdup (f->type);
        }
      else
        t.type = g_strdup ("unknown");
      g_array_append_val (types, t);
    }
  return types;
}

gchar *
atomr_param_check (const AtomrParamType *param,
                   AtomrArgKind          arg)
{
  static const gchar * const arg_names[] = { "bytes", "a buffer", "a floating-point value", "an integer" };

  switch (param->kind)
    {
    case ATOMR_PARAM_UNKNOWN:
      return NULL;
    case ATOMR_PARAM_POINTER:
      if (arg == ATOMR_ARG_BUFFER)
        return NULL;
      return g_strdup_printf ("the parameter is a pointer (%s) and takes a buffer, not %s",
                              param->type, arg_names[arg]);
    case ATOMR_PARAM_FLOAT:
      if (arg == ATOMR_ARG_FLOAT || arg == ATOMR_ARG_BYTES)
        return NULL;
      break;
    case ATOMR_PARAM_INT:
      if (arg == ATOMR_ARG_INT || arg == ATOMR_ARG_BYTES)
        return NULL;
      break;
    case ATOMR_PARAM_INT_OR_POINTER:
      if (arg != ATOMR_ARG_FLOAT)
        return NULL;
      break;
    case ATOMR_PARAM_STRUCT:
      if (arg != ATOMR_ARG_BUFFER)
        return NULL;
      break;
    }
  return g_strdup_printf ("the parameter is %s%s, not %s", param->kind == ATOMR_PARAM_STRUCT ? "passed by value: " : "",
                          param->type, arg_names[arg]);
}
