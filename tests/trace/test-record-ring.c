/* test-record-ring.c — the inspector's lock-free record queue
 * (lib/trace/atomr-record-ring.c): order, wrap-around, exact drop counts,
 * error texts, many producer threads against one consumer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib.h>

#include "trace/atomr-record-ring-private.h"

static const gchar *const names[] = { "actor-0", "actor-1", "actor-2", "actor-3" };

static gboolean
push (AtomrRecordRing *ring,
      const gchar     *tag,
      guint64          sequence,
      const gchar     *error)
{
  AtomrRingRecord *r = atomr_record_ring_push_begin (ring);

  if (r == NULL)
    return FALSE;
  r->actor = tag;
  r->library = "test";
  r->sequence = sequence;
  r->t_submit = (gint64) sequence * 10;
  g_snprintf (r->operation, sizeof r->operation, "op-%" G_GUINT64_FORMAT, sequence);
  r->error = error ? g_strdup (error) : NULL;
  atomr_record_ring_push_end (ring, r);
  return TRUE;
}

typedef struct
{
  GArray    *sequences;   /* guint64 */
  GPtrArray *errors;      /* stolen texts */
} Taken;

static void
take (AtomrRingRecord *r,
      gpointer         user_data)
{
  Taken *t = user_data;
  g_autofree gchar *op = g_strdup_printf ("op-%" G_GUINT64_FORMAT, r->sequence);

  g_assert_cmpstr (r->operation, ==, op);
  g_assert_cmpint (r->t_submit, ==, (gint64) r->sequence * 10);
  g_array_append_val (t->sequences, r->sequence);
  if (r->error && t->errors)
    g_ptr_array_add (t->errors, g_steal_pointer (&r->error));
}

static void
taken_init (Taken *t)
{
  t->sequences = g_array_new (FALSE, FALSE, sizeof (guint64));
  t->errors = g_ptr_array_new_with_free_func (g_free);
}

static void
taken_clear (Taken *t)
{
  g_array_unref (t->sequences);
  g_ptr_array_unref (t->errors);
}

/* Capacity rounds up to a power of two; a full ring drops and counts
 * exactly what did not fit; records come out in push order. */
static void
test_full (void)
{
  AtomrRecordRing *ring = atomr_record_ring_new (6);
  Taken t;
  guint n_ok = 0;

  taken_init (&t);
  g_assert_cmpuint (atomr_record_ring_get_capacity (ring), ==, 8);
  for (guint64 i = 0; i < 13; i++)
    n_ok += push (ring, NULL, i, NULL);
  g_assert_cmpuint (n_ok, ==, 8);
  g_assert_cmpuint (atomr_record_ring_get_pushed (ring), ==, 8);
  g_assert_cmpuint (atomr_record_ring_get_dropped (ring), ==, 5);
  g_assert_cmpuint (atomr_record_ring_take_dropped (ring), ==, 5);
  g_assert_cmpuint (atomr_record_ring_take_dropped (ring), ==, 0);

  /* At most max, then the rest. */
  g_assert_cmpuint (atomr_record_ring_pop (ring, take, &t, 3), ==, 3);
  g_assert_cmpuint (atomr_record_ring_pop (ring, take, &t, 0), ==, 5);
  g_assert_cmpuint (atomr_record_ring_pop (ring, take, &t, 0), ==, 0);
  g_assert_cmpuint (t.sequences->len, ==, 8);
  for (guint i = 0; i < 8; i++)
    g_assert_cmpuint (g_array_index (t.sequences, guint64, i), ==, i);

  /* Room again after the consumer took them. */
  g_assert_true (push (ring, NULL, 100, NULL));
  g_assert_cmpuint (atomr_record_ring_get_dropped (ring), ==, 5);
  atomr_record_ring_free (ring);
  taken_clear (&t);
}

/* Many laps of a small ring, pushes and pops interleaved at varying
 * depths: every record once, in order, none lost or duplicated. */
static void
test_wrap_around (void)
{
  AtomrRecordRing *ring = atomr_record_ring_new (4);
  Taken t;
  guint64 next = 0;

  taken_init (&t);
  for (guint lap = 0; lap < 1000; lap++)
    {
      guint held = (guint) (next - t.sequences->len);
      guint burst = MIN (1 + lap % 4, 4 - held);   /* never more than fits */
      for (guint k = 0; k < burst; k++)
        g_assert_true (push (ring, NULL, next++, NULL));
      g_assert_cmpuint (atomr_record_ring_pop (ring, take, &t, 1 + lap % 3), ==, MIN (held + burst, 1 + lap % 3));
    }
  atomr_record_ring_pop (ring, take, &t, 0);
  g_assert_cmpuint (t.sequences->len, ==, next);
  for (guint i = 0; i < t.sequences->len; i++)
    g_assert_cmpuint (g_array_index (t.sequences, guint64, i), ==, i);
  g_assert_cmpuint (atomr_record_ring_get_dropped (ring), ==, 0);
  g_assert_cmpuint (atomr_record_ring_get_pushed (ring), ==, next);
  atomr_record_ring_free (ring);
  taken_clear (&t);
}

/* Error texts: stolen by the consumer, freed by pop when not stolen, and
 * freed by the ring's free for records never taken (valgrind checks). */
static void
test_errors (void)
{
  AtomrRecordRing *ring = atomr_record_ring_new (8);
  Taken t;

  taken_init (&t);
  g_assert_true (push (ring, NULL, 0, "first failure"));
  g_assert_true (push (ring, NULL, 1, NULL));
  g_assert_true (push (ring, NULL, 2, "third"));
  g_assert_cmpuint (atomr_record_ring_pop (ring, take, &t, 0), ==, 3);
  g_assert_cmpuint (t.errors->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (t.errors, 0), ==, "first failure");
  g_assert_cmpstr (g_ptr_array_index (t.errors, 1), ==, "third");

  {
    Taken keep = { t.sequences, NULL };   /* does not steal */
    g_assert_true (push (ring, NULL, 3, "not stolen"));
    g_assert_cmpuint (atomr_record_ring_pop (ring, take, &keep, 0), ==, 1);
  }
  g_assert_true (push (ring, NULL, 4, "never taken"));
  atomr_record_ring_free (ring);
  taken_clear (&t);
}

#define N_PRODUCERS 4
#define N_EACH      200000

typedef struct
{
  AtomrRecordRing *ring;
  guint            id;
  guint64          pushed;
  gint            *go;
} Producer;

static gpointer
producer_thread (gpointer data)
{
  Producer *p = data;

  while (!g_atomic_int_get (p->go))
    ;
  for (guint64 i = 0; i < N_EACH; i++)
    if (push (p->ring, names[p->id], i, (i % 997) == 0 ? "failed" : NULL))
      p->pushed++;
    else
      g_thread_yield ();   /* full: let the consumer run, so that both paths are exercised */
  return NULL;
}

typedef struct
{
  guint64 last[N_PRODUCERS];
  guint64 count[N_PRODUCERS];
  guint64 errors;
} Consumed;

static void
consume (AtomrRingRecord *r,
         gpointer         user_data)
{
  Consumed *c = user_data;
  guint id = (guint) (strrchr (r->actor, '-')[1] - '0');
  g_autofree gchar *op = g_strdup_printf ("op-%" G_GUINT64_FORMAT, r->sequence);

  g_assert_cmpuint (id, <, N_PRODUCERS);
  g_assert_true (r->actor == names[id]);
  g_assert_cmpstr (r->library, ==, "test");
  /* Each producer's records in its own order, each complete. */
  if (c->count[id] > 0)
    g_assert_cmpuint (r->sequence, >, c->last[id]);
  g_assert_cmpstr (r->operation, ==, op);
  g_assert_cmpint (r->t_submit, ==, (gint64) r->sequence * 10);
  g_assert_cmpint (r->error != NULL, ==, (r->sequence % 997) == 0);
  c->errors += r->error != NULL;
  c->last[id] = r->sequence;
  c->count[id]++;
}

/* Four producer threads against one consumer on a ring small enough to
 * fill: per producer, records arrive in order and whole; taken + dropped
 * = pushed exactly, and the drop counters agree with the producers'. */
static void
test_many_producers (void)
{
  AtomrRecordRing *ring = atomr_record_ring_new (256);
  GThread *threads[N_PRODUCERS];
  Producer producers[N_PRODUCERS];
  Consumed c = { { 0 }, { 0 }, 0 };
  guint64 taken = 0, dropped = 0, pushed = 0, attempted = (guint64) N_PRODUCERS * N_EACH;
  gint go = 0;
  gboolean done = FALSE;

  for (guint i = 0; i < N_PRODUCERS; i++)
    {
      producers[i] = (Producer) { ring, i, 0, &go };
      threads[i] = g_thread_new ("producer", producer_thread, &producers[i]);
    }
  g_atomic_int_set (&go, 1);
  while (!done)
    {
      guint64 seen = atomr_record_ring_get_pushed (ring) + atomr_record_ring_get_dropped (ring);
      taken += atomr_record_ring_pop (ring, consume, &c, 0);
      dropped += atomr_record_ring_take_dropped (ring);
      done = seen == attempted;   /* every push claimed or dropped */
    }
  for (guint i = 0; i < N_PRODUCERS; i++)
    g_thread_join (threads[i]);   /* and published */
  taken += atomr_record_ring_pop (ring, consume, &c, 0);
  dropped += atomr_record_ring_take_dropped (ring);
  for (guint i = 0; i < N_PRODUCERS; i++)
    {
      pushed += producers[i].pushed;
      g_assert_cmpuint (c.count[i], ==, producers[i].pushed);
    }
  g_assert_cmpuint (taken, ==, pushed);
  g_assert_cmpuint (taken + dropped, ==, attempted);
  g_assert_cmpuint (atomr_record_ring_get_dropped (ring), ==, dropped);
  g_assert_cmpuint (atomr_record_ring_get_pushed (ring), ==, pushed);
  g_test_message ("%" G_GUINT64_FORMAT " taken, %" G_GUINT64_FORMAT " dropped, %" G_GUINT64_FORMAT
                  " errors", taken, dropped, c.errors);
  g_assert_cmpuint (atomr_record_ring_pop (ring, consume, &c, 0), ==, 0);
  atomr_record_ring_free (ring);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/record-ring/full", test_full);
  g_test_add_func ("/record-ring/wrap-around", test_wrap_around);
  g_test_add_func ("/record-ring/errors", test_errors);
  g_test_add_func ("/record-ring/many-producers", test_many_producers);
  return g_test_run ();
}
