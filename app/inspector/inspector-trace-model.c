/* inspector-trace-model.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "inspector-operation-stats.h"
#include "inspector-trace-model.h"

/* A Chrome trace (the atomr trace contract, version 2, or any Chrome trace
 * with X events, B/E pairs and flows) as lanes of slices.
 *
 * Reading: a small JSON reader walks the text once and turns each event
 * into a compact InspectorSlice (no JSON tree is built: a 100 000-event
 * trace costs its slices, about 150 bytes each, not a DOM of every
 * member).  Lanes are (pid, tid) pairs: pid is a process, never a GPU.
 * GPU execution (X, cat "gpu") goes on its stream's lane; host lifecycles
 * (async b/e, cat "host") on the actor's host lane, packed into rows since
 * operations in flight overlap; other X and B/E slices nest by time.
 * Flows (s/f) join the slices they bind to; counters (C) become lanes.
 *
 * Slices are sorted by (lane, start); per lane, `max_end[i]` is the latest
 * end among the lane's slices up to i, so the first slice that can reach
 * into a view is found by binary search (find_visible), and the drawing
 * visits only what it shows.
 *
 * Threads: the parse runs in a GTask worker and builds a TraceData that no
 * one else sees; the model adopts it on the main thread.  A TraceData is
 * immutable once built and reference counted, so a save in a worker reads
 * the same data the view draws. */

typedef struct {
  gchar             *label;
  gint64             pid, tid;
  InspectorLaneKind  kind;
  guint              first, n;     /* slices[first .. first+n) */
  guint              depth;        /* rows */
  GArray            *times;        /* counters: gdouble */
  GArray            *values;       /* counters: gdouble */
} Lane;

typedef struct {
  gatomicrefcount  ref;
  GArray          *slices;   /* InspectorSlice, by (lane, start) */
  GArray          *max_end;  /* gdouble per slice */
  GPtrArray       *lanes;    /* Lane* */
  GArray          *flows;    /* guint pairs */
  GStringChunk    *strings;
  GHashTable      *interned;
  gdouble          origin;   /* µs, the smallest timestamp */
  gdouble          end;      /* µs after origin */
  guint            n_gpu;
  guint            n_host;
  guint            n_operations;   /* see is_operation() */
  guint64          n_ignored;
} TraceData;

struct _InspectorTraceModel
{
  GObject             parent_instance;
  TraceData          *data;
  GListStore         *statistics;
  AtomrTraceRecorder *recorder;
  guint               recorder_n;
  guint64             recorder_dropped;
};

G_DEFINE_FINAL_TYPE (InspectorTraceModel, inspector_trace_model, G_TYPE_OBJECT)

enum {
  CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
lane_free (Lane *l)
{
  g_free (l->label);
  if (l->times)
    g_array_unref (l->times);
  if (l->values)
    g_array_unref (l->values);
  g_free (l);
}

static TraceData *
trace_data_new (void)
{
  TraceData *d = g_new0 (TraceData, 1);

  g_atomic_ref_count_init (&d->ref);
  d->slices = g_array_new (FALSE, FALSE, sizeof (InspectorSlice));
  d->max_end = g_array_new (FALSE, FALSE, sizeof (gdouble));
  d->lanes = g_ptr_array_new_with_free_func ((GDestroyNotify) lane_free);
  d->flows = g_array_new (FALSE, FALSE, sizeof (guint));
  d->strings = g_string_chunk_new (4096);
  d->interned = g_hash_table_new (g_str_hash, g_str_equal);
  return d;
}

static TraceData *
trace_data_ref (TraceData *d)
{
  g_atomic_ref_count_inc (&d->ref);
  return d;
}

static void
trace_data_unref (TraceData *d)
{
  if (!g_atomic_ref_count_dec (&d->ref))
    return;
  g_array_unref (d->slices);
  g_array_unref (d->max_end);
  g_ptr_array_unref (d->lanes);
  g_array_unref (d->flows);
  g_hash_table_unref (d->interned);
  g_string_chunk_free (d->strings);
  g_free (d);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TraceData, trace_data_unref)

static const gchar *
intern (TraceData   *d,
        const gchar *s)
{
  const gchar *found;

  if (s == NULL)
    return NULL;
  found = g_hash_table_lookup (d->interned, s);
  if (found == NULL)
    {
      found = g_string_chunk_insert (d->strings, s);
      g_hash_table_add (d->interned, (gpointer) found);
    }
  return found;
}

/* ------------------------------------------------------------------ */
/* The JSON reader: just enough JSON for trace events.                 */

typedef struct {
  const gchar *p, *end, *start;
  GString     *buf;     /* the last string read, unescaped */
  GError     **error;
  gboolean     failed;
} Reader;

static gboolean
fail (Reader      *r,
      const gchar *what)
{
  if (!r->failed)
    g_set_error (r->error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                 _("Not a Chrome trace: %s at byte %lu"), what, (gulong) (r->p - r->start));
  r->failed = TRUE;
  return FALSE;
}

static void
skip_ws (Reader *r)
{
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
    r->p++;
}

static gboolean
peek (Reader *r,
      gchar   c)
{
  skip_ws (r);
  return r->p < r->end && *r->p == c;
}

static gboolean
expect (Reader *r,
        gchar   c)
{
  skip_ws (r);
  if (r->p >= r->end || *r->p != c)
    {
      gchar what[32];
      g_snprintf (what, sizeof what, "expected “%c”", c);
      return fail (r, what);
    }
  r->p++;
  return TRUE;
}

/* Reads a string into r->buf. */
static gboolean
read_string (Reader *r)
{
  if (!expect (r, '"'))
    return FALSE;
  g_string_truncate (r->buf, 0);
  while (r->p < r->end && *r->p != '"')
    {
      const gchar *run = r->p;

      while (r->p < r->end && *r->p != '"' && *r->p != '\\')
        r->p++;
      g_string_append_len (r->buf, run, r->p - run);
      if (r->p < r->end && *r->p == '\\')
        {
          gchar e;

          if (r->p + 1 >= r->end)
            return fail (r, "unterminated string");
          e = r->p[1];
          r->p += 2;
          switch (e)
            {
            case 'n': g_string_append_c (r->buf, '\n'); break;
            case 't': g_string_append_c (r->buf, '\t'); break;
            case 'r': g_string_append_c (r->buf, '\r'); break;
            case 'b': g_string_append_c (r->buf, '\b'); break;
            case 'f': g_string_append_c (r->buf, '\f'); break;
            case 'u':
              {
                gunichar c = 0;

                if (r->end - r->p < 4)
                  return fail (r, "bad \\u escape");
                for (guint i = 0; i < 4; i++)
                  {
                    gint v = g_ascii_xdigit_value (r->p[i]);
                    if (v < 0)
                      return fail (r, "bad \\u escape");
                    c = c * 16 + (gunichar) v;
                  }
                r->p += 4;
                /* a surrogate pair */
                if (c >= 0xd800 && c < 0xdc00 && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u')
                  {
                    gunichar lo = 0;
                    gboolean ok = TRUE;

                    for (guint i = 0; i < 4; i++)
                      {
                        gint v = g_ascii_xdigit_value (r->p[2 + i]);
                        if (v < 0)
                          ok = FALSE;
                        lo = lo * 16 + (gunichar) MAX (v, 0);
                      }
                    if (ok && lo >= 0xdc00 && lo < 0xe000)
                      {
                        c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
                        r->p += 6;
                      }
                  }
                if (g_unichar_validate (c))
                  g_string_append_unichar (r->buf, c);
                else
                  g_string_append (r->buf, "\xef\xbf\xbd");
              }
              break;
            default: g_string_append_c (r->buf, e); break;
            }
        }
    }
  if (r->p >= r->end)
    return fail (r, "unterminated string");
  r->p++;
  return TRUE;
}

static gboolean
read_number (Reader  *r,
             gdouble *out)
{
  gchar *endp = NULL;
  gchar tmp[64];
  gsize n = 0;

  skip_ws (r);
  while (r->p + n < r->end && n < sizeof tmp - 1 &&
         (g_ascii_isdigit (r->p[n]) || r->p[n] == '-' || r->p[n] == '+' || r->p[n] == '.' ||
          r->p[n] == 'e' || r->p[n] == 'E'))
    n++;
  if (n == 0)
    return fail (r, "expected a number");
  memcpy (tmp, r->p, n);
  tmp[n] = '\0';
  *out = g_ascii_strtod (tmp, &endp);
  if (endp != tmp + n || !isfinite (*out))
    return fail (r, "bad number");
  r->p += n;
  return TRUE;
}

static gboolean skip_value (Reader *r, guint depth);

static gboolean
skip_value (Reader *r,
            guint   depth)
{
  gdouble unused;

  if (depth > 64)
    return fail (r, "nested too deeply");
  skip_ws (r);
  if (r->p >= r->end)
    return fail (r, "unexpected end");
  switch (*r->p)
    {
    case '"':
      return read_string (r);
    case '{':
      r->p++;
      if (peek (r, '}'))
        return expect (r, '}');
      do
        {
          if (!read_string (r) || !expect (r, ':') || !skip_value (r, depth + 1))
            return FALSE;
        }
      while (peek (r, ',') && expect (r, ','));
      return expect (r, '}');
    case '[':
      r->p++;
      if (peek (r, ']'))
        return expect (r, ']');
      do
        if (!skip_value (r, depth + 1))
          return FALSE;
      while (peek (r, ',') && expect (r, ','));
      return expect (r, ']');
    case 't':
      if (r->end - r->p >= 4 && strncmp (r->p, "true", 4) == 0) { r->p += 4; return TRUE; }
      return fail (r, "bad literal");
    case 'f':
      if (r->end - r->p >= 5 && strncmp (r->p, "false", 5) == 0) { r->p += 5; return TRUE; }
      return fail (r, "bad literal");
    case 'n':
      if (r->end - r->p >= 4 && strncmp (r->p, "null", 4) == 0) { r->p += 4; return TRUE; }
      return fail (r, "bad literal");
    default:
      return read_number (r, &unused);
    }
}

/* A value that is a string or a number, as text (ids are either). */
static gboolean
read_scalar_text (Reader  *r,
                  gchar  **out)
{
  skip_ws (r);
  if (r->p < r->end && *r->p == '"')
    {
      if (!read_string (r))
        return FALSE;
      *out = g_strdup (r->buf->str);
      return TRUE;
    }
  if (r->p < r->end && (g_ascii_isdigit (*r->p) || *r->p == '-'))
    {
      const gchar *s = r->p;
      gdouble v;

      if (!read_number (r, &v))
        return FALSE;
      *out = g_strndup (s, r->p - s);
      return TRUE;
    }
  *out = NULL;
  return skip_value (r, 1);
}

/* ------------------------------------------------------------------ */
/* One event.                                                           */

typedef struct {
  gchar    ph;
  gchar   *name, *cat, *id, *bp, *scope;
  gdouble  ts, dur;
  gboolean has_ts, has_dur, has_tid;
  gint64   pid, tid;
  /* args */
  gchar   *actor, *library, *op, *error, *detail, *arg_name;
  gint64   seq;
  gdouble  gpu_ms;          /* version 1 traces: GPU time inside the host span */
  gint32   device, stream;
  guint32  generation;
  guint32  grid[3], block[3];
  GArray  *counter_keys;    /* gchar* */
  GArray  *counter_values;  /* gdouble */
} Event;

static void
event_clear (Event *e)
{
  g_free (e->name); g_free (e->cat); g_free (e->id); g_free (e->bp); g_free (e->scope);
  g_free (e->actor); g_free (e->library); g_free (e->op); g_free (e->error); g_free (e->detail);
  g_free (e->arg_name);
  if (e->counter_keys)
    {
      for (guint i = 0; i < e->counter_keys->len; i++)
        g_free (g_array_index (e->counter_keys, gchar *, i));
      g_array_unref (e->counter_keys);
    }
  if (e->counter_values)
    g_array_unref (e->counter_values);
  memset (e, 0, sizeof *e);
}

static gboolean
read_int (Reader *r,
          gint64 *out)
{
  gdouble v;

  skip_ws (r);
  if (r->p < r->end && *r->p == '"')   /* some writers quote numbers */
    {
      if (!read_string (r))
        return FALSE;
      *out = g_ascii_strtoll (r->buf->str, NULL, 10);
      return TRUE;
    }
  if (!read_number (r, &v))
    return FALSE;
  *out = (gint64) v;
  return TRUE;
}

static gboolean
read_dim3 (Reader  *r,
           guint32 *out)
{
  guint i = 0;

  if (!peek (r, '['))
    return skip_value (r, 2);
  r->p++;
  if (peek (r, ']'))
    return expect (r, ']');
  do
    {
      gint64 v;
      if (!read_int (r, &v))
        return FALSE;
      if (i < 3)
        out[i++] = (guint32) CLAMP (v, 0, G_MAXUINT32);
    }
  while (peek (r, ',') && expect (r, ','));
  return expect (r, ']');
}

static gboolean
read_args (Reader *r,
           Event  *e)
{
  if (!peek (r, '{'))
    return skip_value (r, 1);
  r->p++;
  if (peek (r, '}'))
    return expect (r, '}');
  do
    {
      gchar key[32];

      if (!read_string (r))
        return FALSE;
      g_strlcpy (key, r->buf->str, sizeof key);
      if (r->buf->len >= sizeof key)
        key[0] = '\0';
      if (!expect (r, ':'))
        return FALSE;
      if (e->ph == 'C')
        {
          gdouble v;

          skip_ws (r);
          if (r->p < r->end && (g_ascii_isdigit (*r->p) || *r->p == '-'))
            {
              gchar *k = g_strdup (r->buf->str);
              if (!read_number (r, &v))
                {
                  g_free (k);
                  return FALSE;
                }
              if (e->counter_keys == NULL)
                {
                  e->counter_keys = g_array_new (FALSE, FALSE, sizeof (gchar *));
                  e->counter_values = g_array_new (FALSE, FALSE, sizeof (gdouble));
                }
              g_array_append_val (e->counter_keys, k);
              g_array_append_val (e->counter_values, v);
            }
          else if (!skip_value (r, 2))
            return FALSE;
          continue;
        }
#define STR_ARG(field) \
        { skip_ws (r); if (r->p < r->end && *r->p == '"') { if (!read_string (r)) return FALSE; \
            g_free (e->field); e->field = g_strdup (r->buf->str); } else if (!skip_value (r, 2)) return FALSE; }
      if (g_str_equal (key, "actor")) STR_ARG (actor)
      else if (g_str_equal (key, "library")) STR_ARG (library)
      else if (g_str_equal (key, "op")) STR_ARG (op)
      else if (g_str_equal (key, "error")) STR_ARG (error)
      else if (g_str_equal (key, "detail")) STR_ARG (detail)
      else if (g_str_equal (key, "name")) STR_ARG (arg_name)
      else if (g_str_equal (key, "seq") || g_str_equal (key, "sequence"))
        {
          if (!read_int (r, &e->seq))
            return FALSE;
        }
      else if (g_str_equal (key, "device") || g_str_equal (key, "stream") || g_str_equal (key, "generation"))
        {
          gint64 v;

          skip_ws (r);
          if (r->p < r->end && (g_ascii_isdigit (*r->p) || *r->p == '-'))
            {
              if (!read_int (r, &v))
                return FALSE;
              if (key[0] == 'd')
                e->device = (gint32) CLAMP (v, -1, G_MAXINT32);
              else if (key[0] == 's')
                e->stream = (gint32) CLAMP (v, -1, G_MAXINT32);
              else
                e->generation = (guint32) CLAMP (v, 0, G_MAXUINT32);
            }
          else if (!skip_value (r, 2))
            return FALSE;
        }
      else if (g_str_equal (key, "gpu_ms"))
        {
          if (!read_number (r, &e->gpu_ms))
            return FALSE;
        }
      else if (g_str_equal (key, "grid"))
        {
          if (!read_dim3 (r, e->grid))
            return FALSE;
        }
      else if (g_str_equal (key, "block"))
        {
          if (!read_dim3 (r, e->block))
            return FALSE;
        }
      else if (!skip_value (r, 2))
        return FALSE;
#undef STR_ARG
    }
  while (peek (r, ',') && expect (r, ','));
  return expect (r, '}');
}

static gboolean
read_event (Reader *r,
            Event  *e)
{
  memset (e, 0, sizeof *e);
  e->seq = -1;
  e->gpu_ms = NAN;
  e->device = -1;
  e->stream = -1;
  if (!peek (r, '{'))
    return skip_value (r, 1);   /* not an event: ignored */
  r->p++;
  if (peek (r, '}'))
    return expect (r, '}');
  do
    {
      gchar key[16];

      if (!read_string (r))
        return FALSE;
      g_strlcpy (key, r->buf->str, sizeof key);
      if (r->buf->len >= sizeof key)
        key[0] = '\0';
      if (!expect (r, ':'))
        return FALSE;
      if (g_str_equal (key, "ph"))
        {
          skip_ws (r);
          if (r->p < r->end && *r->p == '"')
            {
              if (!read_string (r))
                return FALSE;
              e->ph = r->buf->len == 1 ? r->buf->str[0] : '?';
            }
          else if (!skip_value (r, 1))
            return FALSE;
        }
      else if (g_str_equal (key, "name"))
        {
          g_free (e->name);
          if (!read_scalar_text (r, &e->name))
            return FALSE;
        }
      else if (g_str_equal (key, "cat"))
        {
          g_free (e->cat);
          if (!read_scalar_text (r, &e->cat))
            return FALSE;
        }
      else if (g_str_equal (key, "id") || g_str_equal (key, "id2"))
        {
          g_free (e->id);
          if (!read_scalar_text (r, &e->id))
            return FALSE;
        }
      else if (g_str_equal (key, "bp"))
        {
          g_free (e->bp);
          if (!read_scalar_text (r, &e->bp))
            return FALSE;
        }
      else if (g_str_equal (key, "ts"))
        {
          if (!read_number (r, &e->ts))
            return FALSE;
          e->has_ts = TRUE;
        }
      else if (g_str_equal (key, "dur"))
        {
          if (!read_number (r, &e->dur))
            return FALSE;
          e->has_dur = TRUE;
        }
      else if (g_str_equal (key, "pid"))
        {
          if (!read_int (r, &e->pid))
            return FALSE;
        }
      else if (g_str_equal (key, "tid"))
        {
          if (!read_int (r, &e->tid))
            return FALSE;
          e->has_tid = TRUE;
        }
      else if (g_str_equal (key, "args"))
        {
          if (!read_args (r, e))
            return FALSE;
        }
      else if (!skip_value (r, 1))
        return FALSE;
    }
  while (peek (r, ',') && expect (r, ','));
  return expect (r, '}');
}

/* ------------------------------------------------------------------ */
/* Building.                                                            */

typedef struct {
  TraceData  *d;
  GHashTable *lane_of;     /* "pid/tid" or "C/pid/name/key" → lane+1 */
  GHashTable *process;     /* pid → name */
  GHashTable *open_async;  /* "pid/cat/id/name" → slice+1 */
  GHashTable *open_b;      /* lane → GArray of slice indices (B/E stack) */
  GArray     *flow_ends;   /* FlowEnd */
  gdouble     min_ts;
  gboolean    any;
} Builder;

typedef struct {
  gchar   *id;
  gint64   pid, tid;
  gdouble  ts;
  gboolean finish, enclosing;
} FlowEnd;

static guint
lane_for (Builder          *b,
          gint64            pid,
          gint64            tid,
          InspectorLaneKind kind,
          const gchar      *counter)
{
  g_autofree gchar *key = counter ? g_strdup_printf ("C/%" G_GINT64_FORMAT "/%s", pid, counter)
                                  : g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, pid, tid);
  guint idx = GPOINTER_TO_UINT (g_hash_table_lookup (b->lane_of, key));
  Lane *l;

  if (idx > 0)
    {
      l = g_ptr_array_index (b->d->lanes, idx - 1);
      /* a GPU slice makes the lane a GPU lane, async host events a host lane */
      if (kind == INSPECTOR_LANE_GPU || (kind == INSPECTOR_LANE_HOST && l->kind == INSPECTOR_LANE_THREAD))
        l->kind = kind;
      return idx - 1;
    }
  l = g_new0 (Lane, 1);
  l->pid = pid;
  l->tid = tid;
  l->kind = kind;
  if (counter)
    {
      l->label = g_strdup (counter);
      l->times = g_array_new (FALSE, FALSE, sizeof (gdouble));
      l->values = g_array_new (FALSE, FALSE, sizeof (gdouble));
    }
  g_ptr_array_add (b->d->lanes, l);
  g_hash_table_insert (b->lane_of, g_steal_pointer (&key), GUINT_TO_POINTER (b->d->lanes->len));
  return b->d->lanes->len - 1;
}

static InspectorSlice *
add_slice (Builder     *b,
           Event       *e,
           guint        lane,
           guint8       kind,
           const gchar *name)
{
  InspectorSlice s = { 0 };

  s.start = e->ts;
  s.dur = e->has_dur ? MAX (e->dur, 0.0) : 0.0;
  s.lane = lane;
  s.kind = kind;
  s.name = intern (b->d, name ? name : (e->op ? e->op : (e->name ? e->name : "")));
  s.library = intern (b->d, e->library ? e->library : (e->cat ? e->cat : ""));
  s.actor = intern (b->d, e->actor ? e->actor : "");
  s.detail = e->detail ? intern (b->d, e->detail) : NULL;
  s.error = e->error ? g_string_chunk_insert (b->d->strings, e->error) : NULL;
  s.failed = e->error != NULL;
  s.seq = e->seq;
  s.device = e->device;
  s.stream = e->stream;
  s.generation = e->generation;
  memcpy (s.grid, e->grid, sizeof s.grid);
  memcpy (s.block, e->block, sizeof s.block);
  s.peer = -1;
  s.enqueued = s.completed = s.replied = NAN;
  g_array_append_val (b->d->slices, s);
  return &g_array_index (b->d->slices, InspectorSlice, b->d->slices->len - 1);
}

static void
builder_event (Builder *b,
               Event   *e)
{
  TraceData *d = b->d;

  if (e->ph == 'M')
    {
      if (g_strcmp0 (e->name, "thread_name") == 0 && e->arg_name)
        {
          guint lane = lane_for (b, e->pid, e->tid, INSPECTOR_LANE_THREAD, NULL);   /* may grow d->lanes */
          Lane *l = g_ptr_array_index (d->lanes, lane);
          g_free (l->label);
          l->label = g_strdup (e->arg_name);
        }
      else if (g_strcmp0 (e->name, "process_name") == 0 && e->arg_name)
        g_hash_table_insert (b->process, g_memdup2 (&e->pid, sizeof e->pid), g_strdup (e->arg_name));
      return;
    }
  if (!e->has_ts)
    {
      d->n_ignored++;
      return;
    }
  if (!b->any || e->ts < b->min_ts)
    b->min_ts = e->ts;
  b->any = TRUE;

  switch (e->ph)
    {
    case 'X':
      {
        gboolean gpu = g_strcmp0 (e->cat, "gpu") == 0;

        /* a version 1 atomr trace: the span is host enqueue → completion,
         * the GPU time (args.gpu_ms) ends at completion */
        if (!gpu && !isnan (e->gpu_ms) && e->gpu_ms >= 0 && e->has_dur)
          {
            gdouble g = MIN (e->gpu_ms * 1000.0, e->dur);
            e->ts += e->dur - g;
            e->dur = g;
            g_free (e->library);
            e->library = g_strdup (e->cat);
            gpu = TRUE;
          }
        guint lane = lane_for (b, e->pid, e->tid, gpu ? INSPECTOR_LANE_GPU : INSPECTOR_LANE_THREAD, NULL);
        add_slice (b, e, lane, gpu ? INSPECTOR_SLICE_GPU : INSPECTOR_SLICE_SPAN, NULL);
        if (gpu)
          d->n_gpu++;
      }
      break;
    case 'B':
    case 'E':
      {
        guint lane = lane_for (b, e->pid, e->tid, INSPECTOR_LANE_THREAD, NULL);
        GArray *stack = g_hash_table_lookup (b->open_b, GUINT_TO_POINTER (lane + 1));

        if (stack == NULL)
          {
            stack = g_array_new (FALSE, FALSE, sizeof (guint));
            g_hash_table_insert (b->open_b, GUINT_TO_POINTER (lane + 1), stack);
          }
        if (e->ph == 'B')
          {
            guint idx = d->slices->len;
            InspectorSlice *s = add_slice (b, e, lane, INSPECTOR_SLICE_SPAN, NULL);
            s->dur = -1;   /* open */
            g_array_append_val (stack, idx);
          }
        else if (stack->len > 0)
          {
            guint idx = g_array_index (stack, guint, stack->len - 1);
            InspectorSlice *s = &g_array_index (d->slices, InspectorSlice, idx);
            s->dur = MAX (e->ts - s->start, 0.0);
            if (e->error && s->error == NULL)
              {
                s->error = g_string_chunk_insert (d->strings, e->error);
                s->failed = TRUE;
              }
            g_array_set_size (stack, stack->len - 1);
          }
        else
          d->n_ignored++;   /* an E without its B */
      }
      break;
    case 'b':
    case 'e':
    case 'n':
      {
        g_autofree gchar *key = g_strdup_printf ("%" G_GINT64_FORMAT "/%s/%s", e->pid, e->cat ? e->cat : "",
                                                 e->id ? e->id : "");
        guint idx = GPOINTER_TO_UINT (g_hash_table_lookup (b->open_async, key));

        if (e->ph == 'b')
          {
            guint lane = lane_for (b, e->pid, e->tid, INSPECTOR_LANE_HOST, NULL);
            InspectorSlice *s = add_slice (b, e, lane, INSPECTOR_SLICE_HOST, e->name);

            s->dur = -1;
            if (s->seq < 0 && e->id)
              {
                gchar *endp = NULL;
                gint64 v = g_ascii_strtoll (e->id, &endp, 10);
                if (endp && *endp == '\0')
                  s->seq = v;
              }
            g_hash_table_insert (b->open_async, g_steal_pointer (&key), GUINT_TO_POINTER (d->slices->len));
          }
        else if (idx == 0)
          d->n_ignored++;
        else if (e->ph == 'n')
          {
            InspectorSlice *s = &g_array_index (d->slices, InspectorSlice, idx - 1);
            if (g_strcmp0 (e->name, "enqueued") == 0)
              s->enqueued = e->ts;
            else if (g_strcmp0 (e->name, "completed") == 0)
              s->completed = e->ts;
            else if (g_strcmp0 (e->name, "replied") == 0)
              s->replied = e->ts;
          }
        else
          {
            InspectorSlice *s = &g_array_index (d->slices, InspectorSlice, idx - 1);
            s->dur = MAX (e->ts - s->start, 0.0);
            if (e->error && s->error == NULL)
              {
                s->error = g_string_chunk_insert (d->strings, e->error);
                s->failed = TRUE;
              }
            g_hash_table_remove (b->open_async, key);
          }
      }
      break;
    case 's':
    case 't':
    case 'f':
      {
        FlowEnd f = { 0 };

        f.id = g_strdup (e->id ? e->id : "");
        f.pid = e->pid;
        f.tid = e->tid;
        f.ts = e->ts;
        f.finish = e->ph == 'f';
        /* "bp":"e" binds to the enclosing slice; a finish without it to
         * the next slice that begins */
        f.enclosing = e->ph != 'f' || g_strcmp0 (e->bp, "e") == 0;
        if (e->ph != 't')
          g_array_append_val (b->flow_ends, f);
        else
          g_free (f.id);
      }
      break;
    case 'C':
      for (guint i = 0; e->counter_keys && i < e->counter_keys->len; i++)
        {
          const gchar *k = g_array_index (e->counter_keys, gchar *, i);
          g_autofree gchar *label = g_strcmp0 (k, "value") == 0 || e->counter_keys->len == 1
                                    ? g_strdup_printf ("%s (%s)", e->name ? e->name : "counter", k)
                                    : g_strdup_printf ("%s (%s)", e->name ? e->name : "counter", k);
          guint lane = lane_for (b, e->pid, 0, INSPECTOR_LANE_COUNTER, label);   /* may grow d->lanes */
          Lane *l = g_ptr_array_index (d->lanes, lane);
          g_array_append_val (l->times, e->ts);
          g_array_append_val (l->values, g_array_index (e->counter_values, gdouble, i));
        }
      break;
    default:
      d->n_ignored++;   /* instants, objects, samples, memory dumps */
      break;
    }
}

static gint
compare_slices (gconstpointer a,
                gconstpointer b)
{
  const InspectorSlice *x = a, *y = b;

  if (x->lane != y->lane)
    return x->lane < y->lane ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  /* the longer (enclosing) slice first */
  if (x->dur != y->dur)
    return x->dur > y->dur ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

typedef struct {
  Lane  *lane;
  guint  index;
} LaneOrder;

static gint
compare_lanes (gconstpointer a,
               gconstpointer b)
{
  const Lane *x = *(Lane **) a, *y = *(Lane **) b;

  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;   /* GPU, host, threads, counters */
  return g_utf8_collate (x->label, y->label);
}

/* The slice of @lane that a flow end at @ts binds to, or -1. */
static gint
bind_flow (TraceData *d,
           guint      lane,
           gdouble    ts,
           gboolean   enclosing)
{
  Lane *l = g_ptr_array_index (d->lanes, lane);
  const InspectorSlice *s = (const InspectorSlice *) (gpointer) d->slices->data;
  gint best = -1;
  guint lo = l->first, hi = l->first + l->n;

  /* first slice starting after ts */
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      if (s[mid].start <= ts)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (!enclosing)
    return lo < l->first + l->n ? (gint) lo : -1;
  /* the deepest slice containing ts (ends count: a flow starts at the end
   * of its producer); slack of a nanosecond for rounded timestamps */
  for (guint i = lo; i-- > l->first;)
    {
      if (s[i].start + s[i].dur + 1e-3 >= ts && (best < 0 || s[i].depth > s[best].depth))
        best = (gint) i;
      if (g_array_index (d->max_end, gdouble, i) + 1e-3 < ts)
        break;
    }
  if (best < 0 && lo < l->first + l->n && s[lo].start - 1e-3 <= ts)
    best = (gint) lo;
  return best;
}


/* Is @s an operation of its own?  An operation is drawn as its GPU slice
 * when it ran on the GPU, else as its host lifecycle: compiles and cache
 * lookups, barriers, host-only work, operations that failed before their
 * launch, and operations of actors whose timing is off have no GPU slice
 * (version 2).  Traces without host lifecycles (version 1, plain Chrome
 * traces) have GPU slices and spans. */
static gboolean
is_operation (const TraceData      *d,
              const InspectorSlice *s)
{
  switch ((InspectorSliceKind) s->kind)
    {
    case INSPECTOR_SLICE_GPU:
      return TRUE;
    case INSPECTOR_SLICE_HOST:
      return s->peer < 0;
    case INSPECTOR_SLICE_SPAN:
    default:
      return d->n_host == 0;
    }
}

static void
builder_finish (Builder *b)
{
  TraceData *d = b->d;
  InspectorSlice *s;
  g_autoptr(GArray) remap = NULL;
  g_autoptr(GHashTable) starts = NULL;
  g_autoptr(GHashTable) gpu_by_seq = NULL;
  GHashTableIter iter;
  gpointer key, value;

  d->origin = b->any ? b->min_ts : 0;

  /* lanes: labels, then order */
  for (guint i = 0; i < d->lanes->len; i++)
    {
      Lane *l = g_ptr_array_index (d->lanes, i);

      if (l->label == NULL)
        {
          const gchar *proc = g_hash_table_lookup (b->process, &l->pid);
          g_autofree gchar *pid = g_strdup_printf ("%" G_GINT64_FORMAT, l->pid);
          g_autofree gchar *tid = g_strdup_printf ("%" G_GINT64_FORMAT, l->tid);
          /* Translators: a timeline row of a trace without thread names:
           * the process (its name or number), then the thread number */
          l->label = proc ? g_strdup_printf (_("%s · thread %s"), proc, tid)
                          : g_strdup_printf (_("process %s · thread %s"), pid, tid);
        }
    }
  remap = g_array_sized_new (FALSE, FALSE, sizeof (guint), d->lanes->len);
  g_array_set_size (remap, d->lanes->len);
  {
    g_autoptr(GPtrArray) order = g_ptr_array_new ();
    for (guint i = 0; i < d->lanes->len; i++)
      {
        Lane *l = g_ptr_array_index (d->lanes, i);
        l->first = i;   /* the old index, for the moment */
        g_ptr_array_add (order, l);
      }
    g_ptr_array_sort (order, compare_lanes);
    for (guint i = 0; i < order->len; i++)
      {
        Lane *l = g_ptr_array_index (order, i);
        g_array_index (remap, guint, l->first) = i;
      }
    /* reorder in place: steal, then put back */
    g_ptr_array_set_free_func (d->lanes, NULL);
    g_ptr_array_set_size (d->lanes, 0);
    for (guint i = 0; i < order->len; i++)
      g_ptr_array_add (d->lanes, g_ptr_array_index (order, i));
    g_ptr_array_set_free_func (d->lanes, (GDestroyNotify) lane_free);
  }

  /* slices: open ones end at the last timestamp seen; times after origin */
  for (guint i = 0; i < d->slices->len; i++)
    {
      s = &g_array_index (d->slices, InspectorSlice, i);
      s->lane = g_array_index (remap, guint, s->lane);
      s->start -= d->origin;
      if (s->dur < 0)
        s->dur = 0;
      if (!isnan (s->enqueued)) s->enqueued -= d->origin;
      if (!isnan (s->completed)) s->completed -= d->origin;
      if (!isnan (s->replied)) s->replied -= d->origin;
    }
  g_array_sort (d->slices, compare_slices);
  g_array_set_size (d->max_end, d->slices->len);
  for (guint i = 0; i < d->lanes->len; i++)
    {
      Lane *l = g_ptr_array_index (d->lanes, i);
      l->first = 0;
      l->n = 0;
      l->depth = 1;
    }

  /* per lane: range, rows (nesting or packing), running max end */
  {
    guint i = 0;
    g_autoptr(GArray) open = g_array_new (FALSE, FALSE, sizeof (gdouble));   /* end per row */

    while (i < d->slices->len)
      {
        guint lane = g_array_index (d->slices, InspectorSlice, i).lane;
        Lane *l = g_ptr_array_index (d->lanes, lane);
        gdouble max_end = -G_MAXDOUBLE;

        l->first = i;
        g_array_set_size (open, 0);
        for (; i < d->slices->len && g_array_index (d->slices, InspectorSlice, i).lane == lane; i++)
          {
            gdouble end;
            guint row;

            s = &g_array_index (d->slices, InspectorSlice, i);
            end = s->start + s->dur;
            if (l->kind == INSPECTOR_LANE_HOST)
              {
                /* operations in flight overlap: the first free row */
                for (row = 0; row < open->len && g_array_index (open, gdouble, row) > s->start; row++)
                  ;
                if (row == open->len)
                  g_array_append_val (open, end);
                else
                  g_array_index (open, gdouble, row) = end;
              }
            else
              {
                /* nesting: pop what ended before this one starts */
                while (open->len > 0 && g_array_index (open, gdouble, open->len - 1) <= s->start)
                  g_array_set_size (open, open->len - 1);
                row = open->len;
                g_array_append_val (open, end);
              }
            s->depth = (guint16) MIN (row, G_MAXUINT16);
            l->depth = MAX (l->depth, row + 1);
            max_end = MAX (max_end, end);
            g_array_index (d->max_end, gdouble, i) = max_end;
            d->end = MAX (d->end, end);
          }
        l->n = i - l->first;
      }
  }
  for (guint i = 0; i < d->lanes->len; i++)
    {
      Lane *l = g_ptr_array_index (d->lanes, i);
      for (guint j = 0; l->times && j < l->times->len; j++)
        {
          g_array_index (l->times, gdouble, j) -= d->origin;
          d->end = MAX (d->end, g_array_index (l->times, gdouble, j));
        }
    }

  /* GPU slice ↔ host lifecycle of the same operation: same process and seq */
  gpu_by_seq = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < d->slices->len; i++)
    {
      s = &g_array_index (d->slices, InspectorSlice, i);
      if (s->kind == INSPECTOR_SLICE_GPU && s->seq >= 0)
        g_hash_table_insert (gpu_by_seq, g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                                          ((Lane *) g_ptr_array_index (d->lanes, s->lane))->pid, s->seq),
                             GUINT_TO_POINTER (i + 1));
    }
  for (guint i = 0; i < d->slices->len; i++)
    {
      g_autofree gchar *k = NULL;
      guint g;

      s = &g_array_index (d->slices, InspectorSlice, i);
      if (s->kind != INSPECTOR_SLICE_HOST || s->seq < 0)
        continue;
      k = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                           ((Lane *) g_ptr_array_index (d->lanes, s->lane))->pid, s->seq);
      g = GPOINTER_TO_UINT (g_hash_table_lookup (gpu_by_seq, k));
      if (g > 0)
        {
          InspectorSlice *gs = &g_array_index (d->slices, InspectorSlice, g - 1);
          s->peer = (gint32) (g - 1);
          gs->peer = (gint32) i;
          /* the host's b/e events name no library: the GPU slice's colours it */
          if (*s->library == '\0' || g_str_equal (s->library, "host"))
            s->library = gs->library;
          if (*s->actor == '\0')
            s->actor = gs->actor;
          /* v2 writes the detail (a launch's kernel) on the host events
           * only: the GPU slice, which the statistics and the timeline
           * label, takes it from there */
          if (gs->detail == NULL && s->detail != NULL)
            gs->detail = s->detail;
          gs->enqueued = s->enqueued;
          gs->completed = s->completed;
          gs->replied = s->replied;
          if (gs->error == NULL && s->error)
            {
              gs->error = s->error;
              gs->failed = TRUE;
            }
        }
    }

  /* every operation once, GPU slice or not */
  for (guint i = 0; i < d->slices->len; i++)
    d->n_host += g_array_index (d->slices, InspectorSlice, i).kind == INSPECTOR_SLICE_HOST;
  for (guint i = 0; i < d->slices->len; i++)
    d->n_operations += is_operation (d, &g_array_index (d->slices, InspectorSlice, i));

  /* flows: each start joins the finishes with its id */
  starts = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < b->flow_ends->len; i++)
    {
      FlowEnd *f = &g_array_index (b->flow_ends, FlowEnd, i);
      if (!f->finish)
        g_hash_table_insert (starts, f->id, f);
    }
  for (guint i = 0; i < b->flow_ends->len; i++)
    {
      FlowEnd *f = &g_array_index (b->flow_ends, FlowEnd, i);
      FlowEnd *st;
      g_autofree gchar *k1 = NULL, *k2 = NULL;
      guint l1, l2;
      gint from, to;

      if (!f->finish || (st = g_hash_table_lookup (starts, f->id)) == NULL)
        continue;
      k1 = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, st->pid, st->tid);
      k2 = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, f->pid, f->tid);
      l1 = GPOINTER_TO_UINT (g_hash_table_lookup (b->lane_of, k1));
      l2 = GPOINTER_TO_UINT (g_hash_table_lookup (b->lane_of, k2));
      if (l1 == 0 || l2 == 0)
        {
          d->n_ignored++;
          continue;
        }
      from = bind_flow (d, g_array_index (remap, guint, l1 - 1), st->ts - d->origin, TRUE);
      to = bind_flow (d, g_array_index (remap, guint, l2 - 1), f->ts - d->origin, f->enclosing);
      if (from < 0 || to < 0)
        {
          d->n_ignored++;
          continue;
        }
      g_array_append_val (d->flows, from);
      g_array_append_val (d->flows, to);
    }

  g_hash_table_iter_init (&iter, b->open_b);
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_array_unref (value);
}

static void
builder_clear (Builder *b)
{
  g_hash_table_unref (b->lane_of);
  g_hash_table_unref (b->process);
  g_hash_table_unref (b->open_async);
  g_hash_table_unref (b->open_b);
  for (guint i = 0; i < b->flow_ends->len; i++)
    g_free (g_array_index (b->flow_ends, FlowEnd, i).id);
  g_array_unref (b->flow_ends);
}

static gboolean
read_events (Reader  *r,
             Builder *b)
{
  if (!expect (r, '['))
    return FALSE;
  if (peek (r, ']'))
    return expect (r, ']');
  do
    {
      Event e;
      gboolean ok = read_event (r, &e);

      if (ok)
        builder_event (b, &e);
      event_clear (&e);
      if (!ok)
        return FALSE;
    }
  while (peek (r, ',') && expect (r, ','));
  return expect (r, ']');
}

/* Parses a whole trace; any thread. */
static TraceData *
parse_trace (const gchar  *data,
             gsize         length,
             GError      **error)
{
  g_autoptr(TraceData) d = trace_data_new ();
  g_autoptr(GString) buf = g_string_sized_new (256);
  Reader r = { data, data + length, data, buf, error, FALSE };
  Builder b = { 0 };
  gboolean ok = TRUE, found = FALSE;

  b.d = d;
  b.lane_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b.process = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  b.open_async = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b.open_b = g_hash_table_new (NULL, NULL);
  b.flow_ends = g_array_new (FALSE, FALSE, sizeof (FlowEnd));

  /* a byte-order mark */
  if (length >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    r.p += 3;
  if (peek (&r, '['))   /* the JSON array format */
    {
      ok = read_events (&r, &b);
      found = TRUE;
    }
  else if (expect (&r, '{'))
    {
      if (!peek (&r, '}'))
        do
          {
            if (!read_string (&r) || !expect (&r, ':'))
              {
                ok = FALSE;
                break;
              }
            if (g_str_equal (r.buf->str, "traceEvents"))
              {
                found = TRUE;
                ok = read_events (&r, &b);
              }
            else
              ok = skip_value (&r, 1);
            if (!ok)
              break;
          }
        while (peek (&r, ',') && expect (&r, ','));
      ok = ok && expect (&r, '}');
    }
  else
    ok = FALSE;
  if (ok && !found)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   _("Not a Chrome trace: the object has no “traceEvents” array"));
      ok = FALSE;
    }
  if (ok)
    builder_finish (&b);
  else
    {
      GHashTableIter iter;
      gpointer key, value;

      g_hash_table_iter_init (&iter, b.open_b);
      while (g_hash_table_iter_next (&iter, &key, &value))
        g_array_unref (value);
    }
  builder_clear (&b);
  return ok ? g_steal_pointer (&d) : NULL;
}

/* ------------------------------------------------------------------ */
/* The model.                                                           */

static void
inspector_trace_model_finalize (GObject *object)
{
  InspectorTraceModel *self = INSPECTOR_TRACE_MODEL (object);

  g_clear_pointer (&self->data, trace_data_unref);
  g_object_unref (self->statistics);
  g_clear_object (&self->recorder);
  G_OBJECT_CLASS (inspector_trace_model_parent_class)->finalize (object);
}

static void
inspector_trace_model_class_init (InspectorTraceModelClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = inspector_trace_model_finalize;

  /* Emitted after the slices, lanes and statistics were replaced. */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
inspector_trace_model_init (InspectorTraceModel *self)
{
  self->data = trace_data_new ();
  self->statistics = g_list_store_new (INSPECTOR_TYPE_OPERATION_STATS);
}

InspectorTraceModel *
inspector_trace_model_new (void)
{
  return g_object_new (INSPECTOR_TYPE_TRACE_MODEL, NULL);
}

/**
 * inspector_format_duration:
 * @us: a duration in microseconds
 *
 * Returns: (transfer full): @us for people: "850.0 µs", "1.25 ms", "2.00 s"
 */
gchar *
inspector_format_duration (gdouble us)
{
  if (us >= 1e6)
    return g_strdup_printf (_("%.2f s"), us / 1e6);
  if (us >= 1e3)
    return g_strdup_printf (_("%.2f ms"), us / 1e3);
  return g_strdup_printf (_("%.1f µs"), us);
}

/**
 * inspector_slice_get_label:
 * @slice: a slice
 *
 * What the operation is called in the timeline and the statistics: its
 * name, and for kernel launches (operation "launch", the kernel in the
 * detail) the kernel's name too.
 *
 * Returns: (transfer full): the label
 */
gchar *
inspector_slice_get_label (const InspectorSlice *slice)
{
  if (g_strcmp0 (slice->name, "launch") == 0 && slice->detail && *slice->detail)
    return g_strdup_printf ("launch %s", slice->detail);
  return g_strdup (slice->name);
}

static gint
compare_stats (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  gdouble x = inspector_operation_stats_get_total_us ((InspectorOperationStats *) a);
  gdouble y = inspector_operation_stats_get_total_us ((InspectorOperationStats *) b);

  if (x != y)
    return x > y ? -1 : 1;
  return g_strcmp0 (inspector_operation_stats_get_operation ((InspectorOperationStats *) a),
                    inspector_operation_stats_get_operation ((InspectorOperationStats *) b));
}

/* Statistics: one duration per operation (is_operation()), the same the
 * timeline draws: GPU time where the operation ran on the GPU, else its
 * host lifecycle (or, in plain Chrome traces, its span).  Failed
 * operations are left out. */
static void
rebuild_statistics (InspectorTraceModel *self)
{
  TraceData *d = self->data;
  g_autoptr(GHashTable) durations = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                           (GDestroyNotify) g_array_unref);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer key, value;

  for (guint i = 0; i < d->slices->len; i++)
    {
      const InspectorSlice *s = &g_array_index (d->slices, InspectorSlice, i);
      g_autofree gchar *label = NULL, *k = NULL;
      GArray *dur;

      if (!is_operation (d, s) || s->failed)
        continue;
      label = inspector_slice_get_label (s);
      k = g_strdup_printf ("%s\x1f%s", s->library, label);
      dur = g_hash_table_lookup (durations, k);
      if (dur == NULL)
        {
          dur = g_array_new (FALSE, FALSE, sizeof (gdouble));
          g_hash_table_insert (durations, g_steal_pointer (&k), dur);
        }
      g_array_append_val (dur, s->dur);
    }
  g_hash_table_iter_init (&iter, durations);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_auto(GStrv) parts = g_strsplit (key, "\x1f", 2);
      GArray *dur = value;

      g_ptr_array_add (items, inspector_operation_stats_new (parts[0], parts[1], (gdouble *) (gpointer) dur->data,
                                                             dur->len));
    }
  g_list_store_remove_all (self->statistics);
  for (guint i = 0; i < items->len; i++)
    g_list_store_insert_sorted (self->statistics, g_ptr_array_index (items, i), compare_stats, NULL);
}

static void
adopt (InspectorTraceModel *self,
       TraceData           *data)
{
  g_clear_pointer (&self->data, trace_data_unref);
  self->data = data;
  rebuild_statistics (self);
  g_signal_emit (self, signals[CHANGED], 0);
}

/**
 * inspector_trace_model_load_data:
 * @self: a model
 * @data: (array length=length): Chrome trace JSON
 * @length: its length
 * @error: return location for a #GError
 *
 * Replaces the model with the trace in @data; on error the model keeps
 * what it had.
 *
 * Returns: %TRUE on success
 */
gboolean
inspector_trace_model_load_data (InspectorTraceModel  *self,
                                 const gchar          *data,
                                 gsize                 length,
                                 GError              **error)
{
  TraceData *d;

  g_return_val_if_fail (INSPECTOR_IS_TRACE_MODEL (self), FALSE);
  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  d = parse_trace (data, length, error);
  if (d == NULL)
    return FALSE;
  inspector_trace_model_set_recorder (self, NULL);
  adopt (self, d);
  return TRUE;
}

gboolean
inspector_trace_model_load (InspectorTraceModel  *self,
                            const gchar          *path,
                            GError              **error)
{
  g_autofree gchar *contents = NULL;
  gsize len = 0;

  g_return_val_if_fail (INSPECTOR_IS_TRACE_MODEL (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  if (!g_file_get_contents (path, &contents, &len, error))
    return FALSE;
  return inspector_trace_model_load_data (self, contents, len, error);
}

static void
load_thread (GTask        *task,
             gpointer      source,
             gpointer      task_data,
             GCancellable *cancellable)
{
  GFile *file = task_data;
  g_autofree gchar *contents = NULL;
  gsize len = 0;
  GError *error = NULL;
  TraceData *d;

  if (!g_file_load_contents (file, cancellable, &contents, &len, NULL, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  d = parse_trace (contents, len, &error);
  if (d == NULL)
    {
      g_autofree gchar *name = g_file_get_parse_name (file);
      g_task_return_new_error (task, error->domain, error->code, "%s: %s", name, error->message);
      g_error_free (error);
      return;
    }
  g_task_return_pointer (task, d, (GDestroyNotify) trace_data_unref);
}

/**
 * inspector_trace_model_load_async:
 * @self: a model
 * @file: a Chrome trace
 * @cancellable: (nullable): a #GCancellable
 * @callback: called on the calling thread's main context when done
 * @user_data: data for @callback
 *
 * Reads and parses @file in a worker thread; the model changes when the
 * result is taken with inspector_trace_model_load_finish().
 */
void
inspector_trace_model_load_async (InspectorTraceModel *self,
                                  GFile               *file,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, inspector_trace_model_load_async);
  g_task_set_task_data (task, g_object_ref (file), g_object_unref);
  g_task_run_in_thread (task, load_thread);
}

gboolean
inspector_trace_model_load_finish (InspectorTraceModel  *self,
                                   GAsyncResult         *result,
                                   GError              **error)
{
  TraceData *d;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  d = g_task_propagate_pointer (G_TASK (result), error);
  if (d == NULL)
    return FALSE;
  inspector_trace_model_set_recorder (self, NULL);
  adopt (self, d);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Writing: the same contract back, so a saved trace loads the same.   */

static void
append_json_string (GString     *out,
                    const gchar *s)
{
  g_string_append_c (out, '"');
  for (const gchar *c = s ? s : ""; *c; c++)
    {
      switch (*c)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\t': g_string_append (out, "\\t"); break;
        case '\r': g_string_append (out, "\\r"); break;
        default:
          if ((guchar) *c < 0x20)
            g_string_append_printf (out, "\\u%04x", (guint) (guchar) *c);
          else
            g_string_append_c (out, *c);
        }
    }
  g_string_append_c (out, '"');
}

static void
append_time (GString *out,
             gdouble  us)
{
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

  /* nanoseconds: three decimals of a microsecond */
  g_ascii_formatd (buf, sizeof buf, "%.3f", us);
  g_string_append (out, buf);
}

static gchar *
trace_data_to_json (TraceData *d)
{
  GString *out = g_string_sized_new (256 + d->slices->len * 200);
  g_autoptr(GHashTable) pids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  gboolean first = TRUE;

#define SEP() G_STMT_START { g_string_append (out, first ? "\n" : ",\n"); first = FALSE; } G_STMT_END
  g_string_append (out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2,"
                        "\"producer\":\"atomr-inspector\"},\"traceEvents\":[");
  for (guint i = 0; i < d->lanes->len; i++)
    {
      Lane *l = g_ptr_array_index (d->lanes, i);

      if (l->kind == INSPECTOR_LANE_COUNTER)
        continue;
      SEP ();
      g_string_append_printf (out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" G_GINT64_FORMAT
                              ",\"tid\":%" G_GINT64_FORMAT ",\"args\":{\"name\":", l->pid, l->tid);
      append_json_string (out, l->label);
      g_string_append (out, "}}");
    }
  for (guint i = 0; i < d->slices->len; i++)
    {
      const InspectorSlice *s = &g_array_index (d->slices, InspectorSlice, i);
      Lane *l = g_ptr_array_index (d->lanes, s->lane);

      SEP ();
      if (s->kind == INSPECTOR_SLICE_HOST)
        {
          g_autofree gchar *id = s->seq >= 0 ? g_strdup_printf ("%" G_GINT64_FORMAT, s->seq)
                                             : g_strdup_printf ("slice-%u", i);
          const struct { const gchar *name; gdouble t; } steps[] = {
            { "enqueued", s->enqueued }, { "completed", s->completed }, { "replied", s->replied } };

          g_string_append (out, "{\"ph\":\"b\",\"cat\":\"host\",\"name\":");
          append_json_string (out, s->name);
          g_string_append_printf (out, ",\"id\":\"%s\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT
                                  ",\"ts\":", id, l->pid, l->tid);
          append_time (out, s->start + d->origin);
          g_string_append (out, ",\"args\":{\"actor\":");
          append_json_string (out, s->actor);
          g_string_append (out, "}}");
          for (guint k = 0; k < G_N_ELEMENTS (steps); k++)
            if (!isnan (steps[k].t))
              {
                g_string_append_printf (out, ",\n{\"ph\":\"n\",\"cat\":\"host\",\"name\":\"%s\",\"id\":\"%s\",\"pid\":%"
                                        G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"ts\":",
                                        steps[k].name, id, l->pid, l->tid);
                append_time (out, steps[k].t + d->origin);
                g_string_append (out, "}");
              }
          g_string_append (out, ",\n{\"ph\":\"e\",\"cat\":\"host\",\"name\":");
          append_json_string (out, s->name);
          g_string_append_printf (out, ",\"id\":\"%s\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT
                                  ",\"ts\":", id, l->pid, l->tid);
          append_time (out, s->start + s->dur + d->origin);
          if (s->error && (s->peer < 0 || g_array_index (d->slices, InspectorSlice, s->peer).error != s->error))
            {
              g_string_append (out, ",\"args\":{\"error\":");
              append_json_string (out, s->error);
              g_string_append (out, "}");
            }
          g_string_append (out, "}");
          continue;
        }
      g_string_append (out, "{\"ph\":\"X\",\"cat\":");
      append_json_string (out, s->kind == INSPECTOR_SLICE_GPU ? "gpu" : s->library);
      g_string_append (out, ",\"name\":");
      append_json_string (out, s->name);
      g_string_append_printf (out, ",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"ts\":",
                              l->pid, l->tid);
      append_time (out, s->start + d->origin);
      g_string_append (out, ",\"dur\":");
      append_time (out, s->dur);
      g_string_append (out, ",\"args\":{\"library\":");
      append_json_string (out, s->library);
      g_string_append (out, ",\"actor\":");
      append_json_string (out, s->actor);
      g_string_append (out, ",\"op\":");
      append_json_string (out, s->name);
      if (s->seq >= 0)
        g_string_append_printf (out, ",\"seq\":%" G_GINT64_FORMAT, s->seq);
      if (s->device >= 0)
        g_string_append_printf (out, ",\"device\":%d", s->device);
      if (s->stream >= 0)
        g_string_append_printf (out, ",\"stream\":%d", s->stream);
      if (s->generation)
        g_string_append_printf (out, ",\"generation\":%u", s->generation);
      if (s->grid[0])
        g_string_append_printf (out, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", s->grid[0], s->grid[1],
                                s->grid[2], s->block[0], s->block[1], s->block[2]);
      if (s->detail)
        {
          g_string_append (out, ",\"detail\":");
          append_json_string (out, s->detail);
        }
      if (s->error)
        {
          g_string_append (out, ",\"error\":");
          append_json_string (out, s->error);
        }
      g_string_append (out, "}}");
    }
  for (guint i = 0; i + 1 < d->flows->len; i += 2)
    {
      const InspectorSlice *p = &g_array_index (d->slices, InspectorSlice, g_array_index (d->flows, guint, i));
      const InspectorSlice *c = &g_array_index (d->slices, InspectorSlice, g_array_index (d->flows, guint, i + 1));
      Lane *lp = g_ptr_array_index (d->lanes, p->lane), *lc = g_ptr_array_index (d->lanes, c->lane);

      SEP ();
      g_string_append_printf (out, "{\"ph\":\"s\",\"cat\":\"dependency\",\"name\":\"dependency\",\"id\":\"flow-%u\","
                              "\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"ts\":", i / 2, lp->pid, lp->tid);
      append_time (out, p->start + p->dur + d->origin);
      g_string_append_printf (out, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dependency\",\"name\":\"dependency\","
                              "\"id\":\"flow-%u\",\"pid\":%" G_GINT64_FORMAT ",\"tid\":%" G_GINT64_FORMAT ",\"ts\":",
                              i / 2, lc->pid, lc->tid);
      append_time (out, c->start + d->origin);
      g_string_append (out, "}");
    }
  for (guint i = 0; i < d->lanes->len; i++)
    {
      Lane *l = g_ptr_array_index (d->lanes, i);
      g_autofree gchar *name = NULL, *key = NULL;
      const gchar *open;

      if (l->kind != INSPECTOR_LANE_COUNTER)
        continue;
      /* the label is "NAME (KEY)" */
      open = strrchr (l->label, '(');
      name = open && open > l->label ? g_strndup (l->label, open - l->label - 1) : g_strdup (l->label);
      key = open ? g_strndup (open + 1, strlen (open + 1) - 1) : g_strdup ("value");
      for (guint j = 0; j < l->times->len; j++)
        {
          gchar v[G_ASCII_DTOSTR_BUF_SIZE];

          SEP ();
          g_string_append (out, "{\"ph\":\"C\",\"name\":");
          append_json_string (out, name);
          g_string_append_printf (out, ",\"pid\":%" G_GINT64_FORMAT ",\"ts\":", l->pid);
          append_time (out, g_array_index (l->times, gdouble, j) + d->origin);
          g_string_append (out, ",\"args\":{");
          append_json_string (out, key);
          g_ascii_dtostr (v, sizeof v, g_array_index (l->values, gdouble, j));
          g_string_append_printf (out, ":%s}}", v);
        }
    }
  g_string_append (out, "\n]}\n");
#undef SEP
  return g_string_free (out, FALSE);
}

/**
 * inspector_trace_model_to_json:
 * @self: a model
 *
 * Returns: (transfer full): the trace as Chrome trace JSON (the atomr
 *   trace contract, version 2; Perfetto and chrome://tracing read it)
 */
gchar *
inspector_trace_model_to_json (InspectorTraceModel *self)
{
  g_return_val_if_fail (INSPECTOR_IS_TRACE_MODEL (self), NULL);
  return trace_data_to_json (self->data);
}

gboolean
inspector_trace_model_save (InspectorTraceModel  *self,
                            const gchar          *path,
                            GError              **error)
{
  g_autofree gchar *json = NULL;

  g_return_val_if_fail (INSPECTOR_IS_TRACE_MODEL (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  json = trace_data_to_json (self->data);
  return g_file_set_contents (path, json, -1, error);
}

static void
save_thread (GTask        *task,
             gpointer      source,
             gpointer      task_data,
             GCancellable *cancellable)
{
  TraceData *d = g_object_get_data (G_OBJECT (task), "trace-data");
  GFile *file = task_data;
  g_autofree gchar *json = trace_data_to_json (d);
  GError *error = NULL;

  if (!g_file_replace_contents (file, json, strlen (json), NULL, FALSE, G_FILE_CREATE_NONE, NULL,
                                cancellable, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/**
 * inspector_trace_model_save_async:
 * @self: a model
 * @file: where to write
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the file is written
 * @user_data: data for @callback
 *
 * Writes the trace (inspector_trace_model_to_json()) in a worker thread.
 */
void
inspector_trace_model_save_async (InspectorTraceModel *self,
                                  GFile               *file,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, inspector_trace_model_save_async);
  g_task_set_task_data (task, g_object_ref (file), g_object_unref);
  g_object_set_data_full (G_OBJECT (task), "trace-data", trace_data_ref (self->data),
                          (GDestroyNotify) trace_data_unref);
  g_task_run_in_thread (task, save_thread);
}

gboolean
inspector_trace_model_save_finish (InspectorTraceModel  *self,
                                   GAsyncResult         *result,
                                   GError              **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * inspector_trace_model_clear:
 * @self: a model
 *
 * Empties the model.
 */
void
inspector_trace_model_clear (InspectorTraceModel *self)
{
  g_return_if_fail (INSPECTOR_IS_TRACE_MODEL (self));
  inspector_trace_model_set_recorder (self, NULL);
  adopt (self, trace_data_new ());
}

/**
 * inspector_trace_model_set_recorder:
 * @self: a model
 * @recorder: (nullable): a live recorder, or %NULL to stop following one
 *
 * Follows @recorder: each inspector_trace_model_refresh() takes its
 * records when they changed (through its Chrome trace export, so a live
 * trace reads exactly as a saved one).
 */
void
inspector_trace_model_set_recorder (InspectorTraceModel *self,
                                    AtomrTraceRecorder  *recorder)
{
  g_return_if_fail (INSPECTOR_IS_TRACE_MODEL (self));

  if (!g_set_object (&self->recorder, recorder))
    return;
  self->recorder_n = G_MAXUINT;
  inspector_trace_model_refresh (self);
}

AtomrTraceRecorder *
inspector_trace_model_get_recorder (InspectorTraceModel *self)
{
  return self->recorder;
}

void
inspector_trace_model_refresh (InspectorTraceModel *self)
{
  g_autofree gchar *json = NULL;
  g_autoptr(GError) error = NULL;
  TraceData *d;
  guint n;
  guint64 dropped;

  g_return_if_fail (INSPECTOR_IS_TRACE_MODEL (self));

  if (self->recorder == NULL)
    return;
  n = atomr_trace_recorder_get_n_records (self->recorder);
  dropped = atomr_trace_recorder_get_n_dropped (self->recorder);
  if (n == self->recorder_n && dropped == self->recorder_dropped)
    return;
  self->recorder_n = n;
  self->recorder_dropped = dropped;
  json = atomr_trace_recorder_to_json (self->recorder);
  d = parse_trace (json, strlen (json), &error);
  if (d == NULL)
    {
      g_warning ("The live recording's trace does not parse: %s", error->message);
      return;
    }
  adopt (self, d);
}

guint inspector_trace_model_get_n_slices (InspectorTraceModel *self) { return self->data->slices->len; }
guint inspector_trace_model_get_n_gpu_slices (InspectorTraceModel *self) { return self->data->n_gpu; }

/**
 * inspector_trace_model_get_n_operations:
 * @self: a model
 *
 * Returns: the number of operations in the trace, each counted once: by its
 *   GPU slice when it has one, else by its host lifecycle (host-only work,
 *   compiles, barriers, failures before launch, untimed actors); spans in
 *   traces without host lifecycles
 */
guint inspector_trace_model_get_n_operations (InspectorTraceModel *self) { return self->data->n_operations; }
guint inspector_trace_model_get_n_lanes (InspectorTraceModel *self) { return self->data->lanes->len; }
gdouble inspector_trace_model_get_duration (InspectorTraceModel *self) { return self->data->end; }
gdouble inspector_trace_model_get_origin (InspectorTraceModel *self) { return self->data->origin; }
guint64 inspector_trace_model_get_n_ignored (InspectorTraceModel *self) { return self->data->n_ignored; }

/**
 * inspector_trace_model_get_slice:
 * @self: a model
 * @index: a slice index
 *
 * Returns: (transfer none): the slice
 */
const InspectorSlice *
inspector_trace_model_get_slice (InspectorTraceModel *self,
                                 guint                index)
{
  g_return_val_if_fail (index < self->data->slices->len, NULL);
  return &g_array_index (self->data->slices, InspectorSlice, index);
}

static Lane *
get_lane (InspectorTraceModel *self,
          guint                lane)
{
  g_return_val_if_fail (lane < self->data->lanes->len, NULL);
  return g_ptr_array_index (self->data->lanes, lane);
}

const gchar *
inspector_trace_model_get_lane_label (InspectorTraceModel *self,
                                      guint                lane)
{
  Lane *l = get_lane (self, lane);
  return l ? l->label : NULL;
}

InspectorLaneKind
inspector_trace_model_get_lane_kind (InspectorTraceModel *self,
                                     guint                lane)
{
  Lane *l = get_lane (self, lane);
  return l ? l->kind : INSPECTOR_LANE_THREAD;
}

gint64
inspector_trace_model_get_lane_pid (InspectorTraceModel *self,
                                    guint                lane)
{
  Lane *l = get_lane (self, lane);
  return l ? l->pid : 0;
}

guint
inspector_trace_model_get_lane_depth (InspectorTraceModel *self,
                                      guint                lane)
{
  Lane *l = get_lane (self, lane);
  return l ? l->depth : 1;
}

/**
 * inspector_trace_model_get_lane_range:
 * @self: a model
 * @lane: a lane
 * @first: (out): its first slice
 * @n: (out): how many slices it has (by start time)
 */
void
inspector_trace_model_get_lane_range (InspectorTraceModel *self,
                                      guint                lane,
                                      guint               *first,
                                      guint               *n)
{
  Lane *l = get_lane (self, lane);

  *first = l ? l->first : 0;
  *n = l ? l->n : 0;
}

/**
 * inspector_trace_model_find_visible:
 * @self: a model
 * @lane: a lane
 * @from: a time (µs after the origin)
 *
 * Binary search: the first slice of @lane that can still be visible at
 * @from (no slice before it ends at or after @from).
 *
 * Returns: a slice index (the lane's end if none)
 */
guint
inspector_trace_model_find_visible (InspectorTraceModel *self,
                                    guint                lane,
                                    gdouble              from)
{
  Lane *l = get_lane (self, lane);
  const gdouble *max_end = (const gdouble *) (gpointer) self->data->max_end->data;
  guint lo, hi;

  if (l == NULL)
    return 0;
  lo = l->first;
  hi = l->first + l->n;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (max_end[mid] < from)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/**
 * inspector_trace_model_find_start:
 * @self: a model
 * @lane: a lane
 * @t: a time (µs after the origin)
 *
 * Returns: the first slice of @lane starting at or after @t (the lane's
 *   end if none)
 */
guint
inspector_trace_model_find_start (InspectorTraceModel *self,
                                  guint                lane,
                                  gdouble              t)
{
  Lane *l = get_lane (self, lane);
  const InspectorSlice *s = (const InspectorSlice *) (gpointer) self->data->slices->data;
  guint lo, hi;

  if (l == NULL)
    return 0;
  lo = l->first;
  hi = l->first + l->n;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (s[mid].start < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

guint
inspector_trace_model_get_n_flows (InspectorTraceModel *self)
{
  return self->data->flows->len / 2;
}

/**
 * inspector_trace_model_get_flow:
 * @self: a model
 * @index: a flow
 * @from: (out): the producer's slice
 * @to: (out): the consumer's slice
 */
void
inspector_trace_model_get_flow (InspectorTraceModel *self,
                                guint                index,
                                guint               *from,
                                guint               *to)
{
  g_return_if_fail (index < self->data->flows->len / 2);
  *from = g_array_index (self->data->flows, guint, 2 * index);
  *to = g_array_index (self->data->flows, guint, 2 * index + 1);
}

/**
 * inspector_trace_model_get_dependencies:
 * @self: a model
 * @slice: a slice
 * @producers: %TRUE for what @slice waited for, %FALSE for what waited
 *   for it
 *
 * Returns: (transfer full) (element-type guint): slice indices
 */
GArray *
inspector_trace_model_get_dependencies (InspectorTraceModel *self,
                                        guint                slice,
                                        gboolean             producers)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *f = self->data->flows;

  for (guint i = 0; i + 1 < f->len; i += 2)
    {
      guint a = g_array_index (f, guint, i), b = g_array_index (f, guint, i + 1);
      if (producers && b == slice)
        g_array_append_val (out, a);
      else if (!producers && a == slice)
        g_array_append_val (out, b);
    }
  return out;
}

/**
 * inspector_trace_model_get_counter_points:
 * @self: a model
 * @lane: a counter lane
 * @times: (out) (transfer none): the times (µs after the origin)
 * @values: (out) (transfer none): the values
 *
 * Returns: how many points the counter has
 */
guint
inspector_trace_model_get_counter_points (InspectorTraceModel *self,
                                          guint                lane,
                                          const gdouble      **times,
                                          const gdouble      **values)
{
  Lane *l = get_lane (self, lane);

  if (l == NULL || l->times == NULL)
    {
      *times = *values = NULL;
      return 0;
    }
  *times = (const gdouble *) (gpointer) l->times->data;
  *values = (const gdouble *) (gpointer) l->values->data;
  return l->times->len;
}

/**
 * inspector_trace_model_get_statistics:
 * @self: a model
 *
 * Returns: (transfer none): a list of #InspectorOperationStats, by total
 *   time, longest first
 */
GListModel *
inspector_trace_model_get_statistics (InspectorTraceModel *self)
{
  return G_LIST_MODEL (self->statistics);
}

/**
 * inspector_trace_model_search:
 * @self: a model
 * @text: what to find (case-insensitive) in names, libraries, actors,
 *   details and errors
 * @after: the slice to search from (-1: the start or the end)
 * @forward: the direction
 *
 * Returns: the next matching slice in time order of its lane order, or -1
 */
gint
inspector_trace_model_search (InspectorTraceModel *self,
                              const gchar         *text,
                              gint                 after,
                              gboolean             forward)
{
  g_autofree gchar *needle = NULL;
  guint n = self->data->slices->len;

  if (text == NULL || *text == '\0' || n == 0)
    return -1;
  needle = g_utf8_casefold (text, -1);
  for (guint k = 1; k <= n; k++)
    {
      guint i = after < 0 ? (forward ? k - 1 : n - k)
                          : (guint) (((gint64) after + (forward ? (gint64) k : -(gint64) k) + n) % n);
      const InspectorSlice *s = &g_array_index (self->data->slices, InspectorSlice, i);
      const gchar *fields[] = { s->name, s->library, s->actor, s->detail, s->error };

      for (guint f = 0; f < G_N_ELEMENTS (fields); f++)
        {
          g_autofree gchar *hay = NULL;

          if (fields[f] == NULL || *fields[f] == '\0')
            continue;
          hay = g_utf8_casefold (fields[f], -1);
          if (strstr (hay, needle))
            return (gint) i;
        }
    }
  return -1;
}
