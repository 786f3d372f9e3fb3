/* trace-checker.c — validates atomr's Chrome trace export (contract v2)
 *
 * Invariants checked (a real parser, json-glib, reads the text):
 *  1. the text is UTF-8 and JSON; the top level is an object with a
 *     "traceEvents" array, "displayTimeUnit": "ns" and
 *     "otherData"."atomr-trace-version" == 2;
 *  2. every event is an object with a string "ph" and an integer "pid";
 *     every event but metadata has a finite numeric "ts" >= 0;
 *  3. one "process_name" metadata event, its pid the real process id;
 *     every lane (pid, tid) that carries an event has a "thread_name";
 *  4. "X" events have "dur" >= 0; on each lane they nest properly (two
 *     slices are disjoint or one contains the other); "gpu" slices on a
 *     lane never overlap at all, and carry args seq, actor, library, op,
 *     device, generation, stream;
 *  5. "B"/"E" pairs balance per lane, an "E" never before its "B";
 *  6. host async events: per id exactly one "b" and one "e" (same name,
 *     cat "host", same lane), "n" steps only "enqueued", "completed",
 *     "replied", in that order, all within [b.ts, e.ts];
 *  7. counters ("C") carry args whose values are all numbers;
 *  8. flows: per id exactly one "s" and one "f", cat and name
 *     "dependency", the "f" with "bp": "e"; the "s" sits at the end of a
 *     gpu slice on its lane, the "f" at the start of a gpu slice on its
 *     lane, and s.ts <= f.ts.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "trace-checker.h"

#define FAIL(...) G_STMT_START { \
    g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, __VA_ARGS__); \
    return FALSE; \
  } G_STMT_END

/* Times compare in nanoseconds: the text carries µs with 3 decimals. */
static gint64
to_ns (gdouble us)
{
  return (gint64) llround (us * 1000.0);
}

typedef struct
{
  JsonObject *ev;
  guint       index;
  gint64      ts;
  gint64      end;
} Ev;

static gboolean
get_number (JsonObject  *obj,
            const gchar *name,
            gdouble     *out)
{
  JsonNode *n = json_object_get_member (obj, name);
  if (n == NULL || JSON_NODE_TYPE (n) != JSON_NODE_VALUE)
    return FALSE;
  if (json_node_get_value_type (n) == G_TYPE_DOUBLE)
    *out = json_node_get_double (n);
  else if (json_node_get_value_type (n) == G_TYPE_INT64)
    *out = (gdouble) json_node_get_int (n);
  else
    return FALSE;
  return isfinite (*out);
}

static const gchar *
get_string (JsonObject  *obj,
            const gchar *name)
{
  JsonNode *n = obj ? json_object_get_member (obj, name) : NULL;
  if (n == NULL || JSON_NODE_TYPE (n) != JSON_NODE_VALUE || json_node_get_value_type (n) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (n);
}

static gchar *
lane_of (JsonObject *ev)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                          json_object_get_int_member_with_default (ev, "pid", -1),
                          json_object_get_int_member_with_default (ev, "tid", -1));
}

static gint
ev_compare (gconstpointer a,
            gconstpointer b)
{
  const Ev *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  /* Same start: the longer slice is the parent. */
  if (x->end != y->end)
    return x->end > y->end ? -1 : 1;
  return (gint) x->index - (gint) y->index;
}

static void
push (GHashTable  *table,
      const gchar *key,
      Ev          *ev)
{
  GArray *list = g_hash_table_lookup (table, key);
  if (list == NULL)
    {
      list = g_array_new (FALSE, FALSE, sizeof (Ev));
      g_hash_table_insert (table, g_strdup (key), list);
    }
  g_array_append_val (list, *ev);
}

static GHashTable *
table_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
}

gboolean
trace_check (const gchar       *json,
             TraceCheckCounts  *counts,
             GError           **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GHashTable) named = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) used = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) slices = table_new ();      /* lane -> X events */
  g_autoptr(GHashTable) gpu = table_new ();         /* lane -> gpu X events */
  g_autoptr(GHashTable) async = table_new ();       /* id -> b/n/e */
  g_autoptr(GHashTable) flows = table_new ();       /* id -> s/f */
  g_autoptr(GHashTable) be = table_new ();          /* lane -> open B */
  TraceCheckCounts c = { 0, };
  JsonObject *root, *other;
  JsonArray *events;
  GError *local = NULL;
  guint n_process = 0;
  gdouble v;

  if (!g_utf8_validate (json, -1, NULL))
    FAIL ("the trace is not valid UTF-8");
  if (!json_parser_load_from_data (parser, json, -1, &local))
    {
      g_propagate_prefixed_error (error, local, "json-glib rejects the trace: ");
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    FAIL ("the top level is not an object");
  root = json_node_get_object (json_parser_get_root (parser));
  if (!json_object_has_member (root, "traceEvents") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (root, "traceEvents")))
    FAIL ("no traceEvents array");
  if (g_strcmp0 (get_string (root, "displayTimeUnit"), "ns") != 0)
    FAIL ("displayTimeUnit is not \"ns\"");
  if (!json_object_has_member (root, "otherData") ||
      !JSON_NODE_HOLDS_OBJECT (json_object_get_member (root, "otherData")))
    FAIL ("no otherData object");
  other = json_object_get_object_member (root, "otherData");
  if (!get_number (other, "atomr-trace-version", &v) || v != 2)
    FAIL ("otherData.atomr-trace-version is not 2");

  events = json_object_get_array_member (root, "traceEvents");
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonNode *node = json_array_get_element (events, i);
      JsonObject *ev, *args;
      const gchar *ph;
      g_autofree gchar *lane = NULL;
      Ev e = { NULL, i, 0, 0 };
      gdouble ts = 0, dur = 0;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        FAIL ("event %u is not an object", i);
      ev = e.ev = json_node_get_object (node);
      ph = get_string (ev, "ph");
      if (ph == NULL)
        FAIL ("event %u has no phase", i);
      if (!json_object_has_member (ev, "pid") || !get_number (ev, "pid", &v) || v != floor (v))
        FAIL ("event %u (%s) has no integer pid", i, ph);
      lane = lane_of (ev);
      args = json_object_has_member (ev, "args") && JSON_NODE_HOLDS_OBJECT (json_object_get_member (ev, "args"))
             ? json_object_get_object_member (ev, "args") : NULL;

      if (g_str_equal (ph, "M"))
        {
          const gchar *what = get_string (ev, "name");
          if (get_string (args, "name") == NULL)
            FAIL ("metadata event %u has no args.name", i);
          if (g_strcmp0 (what, "process_name") == 0)
            {
              n_process++;
              if ((gint64) v != (gint64) getpid ())
                FAIL ("process_name has pid %g, the process is %d", v, (gint) getpid ());
            }
          else if (g_strcmp0 (what, "thread_name") == 0)
            {
              if (g_hash_table_contains (named, lane))
                FAIL ("lane %s is named twice", lane);
              g_hash_table_add (named, g_steal_pointer (&lane));
            }
          continue;
        }

      if (!get_number (ev, "ts", &ts) || ts < 0)
        FAIL ("event %u (%s) has no finite ts >= 0", i, ph);
      e.ts = e.end = to_ns (ts);
      if (!g_str_equal (ph, "C"))
        g_hash_table_add (used, g_strdup (lane));

      if (g_str_equal (ph, "X"))
        {
          if (!get_number (ev, "dur", &dur) || dur < 0)
            FAIL ("complete event %u has no dur >= 0", i);
          e.end = e.ts + to_ns (dur);
          if (get_string (ev, "name") == NULL)
            FAIL ("complete event %u has no name", i);
          push (slices, lane, &e);
          if (g_strcmp0 (get_string (ev, "cat"), "gpu") == 0)
            {
              static const gchar *required[] = { "seq", "actor", "library", "op", "device", "generation", "stream" };
              for (guint k = 0; k < G_N_ELEMENTS (required); k++)
                if (args == NULL || !json_object_has_member (args, required[k]))
                  FAIL ("gpu slice %u lacks args.%s", i, required[k]);
              push (gpu, lane, &e);
              c.n_gpu_slices++;
            }
        }
      else if (g_str_equal (ph, "B"))
        push (be, lane, &e);
      else if (g_str_equal (ph, "E"))
        {
          GArray *open = g_hash_table_lookup (be, lane);
          if (open == NULL || open->len == 0)
            FAIL ("E event %u on lane %s ends nothing", i, lane);
          if (g_array_index (open, Ev, open->len - 1).ts > e.ts)
            FAIL ("E event %u ends before its B", i);
          g_array_set_size (open, open->len - 1);
        }
      else if (g_str_equal (ph, "b") || g_str_equal (ph, "n") || g_str_equal (ph, "e"))
        {
          const gchar *id = get_string (ev, "id");
          if (id == NULL)
            FAIL ("async event %u has no string id", i);
          if (g_strcmp0 (get_string (ev, "cat"), "host") != 0)
            FAIL ("async event %u is not in category \"host\"", i);
          push (async, id, &e);
        }
      else if (g_str_equal (ph, "s") || g_str_equal (ph, "f"))
        {
          const gchar *id = get_string (ev, "id");
          if (id == NULL)
            FAIL ("flow event %u has no string id", i);
          if (g_strcmp0 (get_string (ev, "cat"), "dependency") != 0 ||
              g_strcmp0 (get_string (ev, "name"), "dependency") != 0)
            FAIL ("flow event %u is not a \"dependency\"", i);
          if (g_str_equal (ph, "f") && g_strcmp0 (get_string (ev, "bp"), "e") != 0)
            FAIL ("flow end %u does not bind to its enclosing slice (bp != \"e\")", i);
          push (flows, id, &e);
        }
      else if (g_str_equal (ph, "C"))
        {
          JsonObjectIter it;
          const gchar *series;
          JsonNode *value;

          if (args == NULL || json_object_get_size (args) == 0)
            FAIL ("counter %u has no args", i);
          json_object_iter_init (&it, args);
          while (json_object_iter_next (&it, &series, &value))
            if (!JSON_NODE_HOLDS_VALUE (value) ||
                (json_node_get_value_type (value) != G_TYPE_INT64 &&
                 json_node_get_value_type (value) != G_TYPE_DOUBLE))
              FAIL ("counter %u: series \"%s\" is not a number", i, series);
          c.n_counters++;
        }
      else
        FAIL ("event %u has a phase \"%s\" the contract does not use", i, ph);
    }

  if (n_process != 1)
    FAIL ("%u process_name events, expected 1", n_process);
  {
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init (&it, used);
    while (g_hash_table_iter_next (&it, &key, NULL))
      if (!g_hash_table_contains (named, key))
        FAIL ("lane %s carries events but has no thread_name", (const gchar *) key);
    c.n_lanes = g_hash_table_size (named);
  }

  /* 4. Nesting per lane; gpu lanes: no overlap at all. */
  {
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init (&it, slices);
    while (g_hash_table_iter_next (&it, &key, &value))
      {
        GArray *list = value;
        g_autoptr(GArray) stack = g_array_new (FALSE, FALSE, sizeof (Ev));
        g_array_sort (list, ev_compare);
        for (guint i = 0; i < list->len; i++)
          {
            Ev *cur = &g_array_index (list, Ev, i);
            while (stack->len && g_array_index (stack, Ev, stack->len - 1).end <= cur->ts)
              g_array_set_size (stack, stack->len - 1);
            if (stack->len && g_array_index (stack, Ev, stack->len - 1).end < cur->end)
              FAIL ("slices %u and %u on lane %s overlap without nesting",
                    g_array_index (stack, Ev, stack->len - 1).index, cur->index, (const gchar *) key);
            g_array_append_val (stack, *cur);
          }
      }
    g_hash_table_iter_init (&it, gpu);
    while (g_hash_table_iter_next (&it, &key, &value))
      {
        GArray *list = value;
        g_array_sort (list, ev_compare);
        for (guint i = 1; i < list->len; i++)
          if (g_array_index (list, Ev, i - 1).end > g_array_index (list, Ev, i).ts)
            FAIL ("gpu slices %u and %u on lane %s overlap (a stream is serial)",
                  g_array_index (list, Ev, i - 1).index, g_array_index (list, Ev, i).index,
                  (const gchar *) key);
      }
  }

  /* 5. */
  {
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init (&it, be);
    while (g_hash_table_iter_next (&it, &key, &value))
      if (((GArray *) value)->len)
        FAIL ("a B event on lane %s is never ended", (const gchar *) key);
  }

  /* 6. Host lifecycle. */
  {
    GHashTableIter it;
    gpointer key, value;
    static const gchar *order[] = { "enqueued", "completed", "replied" };
    g_hash_table_iter_init (&it, async);
    while (g_hash_table_iter_next (&it, &key, &value))
      {
        GArray *list = value;
        Ev *b = NULL, *e = NULL;
        gint last_step = -1;
        gint64 last_ts = 0;
        g_autofree gchar *lane = NULL;

        for (guint i = 0; i < list->len; i++)
          {
            Ev *x = &g_array_index (list, Ev, i);
            const gchar *ph = get_string (x->ev, "ph");
            if (g_str_equal (ph, "b"))
              {
                if (b)
                  FAIL ("async id %s begins twice", (const gchar *) key);
                b = x;
                lane = lane_of (x->ev);
              }
            else if (g_str_equal (ph, "e"))
              {
                if (e)
                  FAIL ("async id %s ends twice", (const gchar *) key);
                e = x;
              }
          }
        if (b == NULL || e == NULL)
          FAIL ("async id %s lacks its %s", (const gchar *) key, b ? "end" : "begin");
        if (g_strcmp0 (get_string (b->ev, "name"), get_string (e->ev, "name")) != 0)
          FAIL ("async id %s begins and ends under different names", (const gchar *) key);
        if (e->ts < b->ts)
          FAIL ("async id %s ends before it begins", (const gchar *) key);
        last_ts = b->ts;
        for (guint i = 0; i < list->len; i++)
          {
            Ev *x = &g_array_index (list, Ev, i);
            g_autofree gchar *l = lane_of (x->ev);
            gint step = -1;
            if (g_strcmp0 (l, lane) != 0)
              FAIL ("async id %s moves between lanes", (const gchar *) key);
            if (!g_str_equal (get_string (x->ev, "ph"), "n"))
              continue;
            for (guint k = 0; k < G_N_ELEMENTS (order); k++)
              if (g_strcmp0 (get_string (x->ev, "name"), order[k]) == 0)
                step = (gint) k;
            if (step < 0)
              FAIL ("async id %s has an unknown step \"%s\"", (const gchar *) key, get_string (x->ev, "name"));
            if (step <= last_step || x->ts < last_ts || x->ts > e->ts)
              FAIL ("step \"%s\" of async id %s is out of order or outside its operation",
                    order[step], (const gchar *) key);
            last_step = step;
            last_ts = x->ts;
          }
        c.n_async_ops++;
      }
  }

  /* 8. Flows bind to gpu slices. */
  {
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init (&it, flows);
    while (g_hash_table_iter_next (&it, &key, &value))
      {
        GArray *list = value;
        Ev *s = NULL, *f = NULL;
        for (guint i = 0; i < list->len; i++)
          {
            Ev *x = &g_array_index (list, Ev, i);
            Ev **slot = g_str_equal (get_string (x->ev, "ph"), "s") ? &s : &f;
            if (*slot)
              FAIL ("flow %s has two %s events", (const gchar *) key, get_string (x->ev, "ph"));
            *slot = x;
          }
        if (s == NULL || f == NULL)
          FAIL ("flow %s lacks its %s", (const gchar *) key, s ? "end" : "start");
        if (s->ts > f->ts)
          FAIL ("flow %s goes back in time", (const gchar *) key);
        for (guint pass = 0; pass < 2; pass++)
          {
            Ev *x = pass ? f : s;
            g_autofree gchar *lane = lane_of (x->ev);
            GArray *lane_slices = g_hash_table_lookup (gpu, lane);
            gboolean bound = FALSE;
            for (guint i = 0; lane_slices && i < lane_slices->len; i++)
              {
                Ev *sl = &g_array_index (lane_slices, Ev, i);
                if ((pass == 0 && sl->end == x->ts) || (pass == 1 && sl->ts == x->ts))
                  bound = TRUE;
              }
            if (!bound)
              FAIL ("flow %s: its %s is not at the %s of a gpu slice on lane %s", (const gchar *) key,
                    pass ? "end" : "start", pass ? "start" : "end", lane);
          }
        c.n_flows++;
      }
  }

  if (counts)
    *counts = c;
  return TRUE;
}
