/* test-cudnn-backend.c — the backend-graph plan cache without a GPU
 *
 * The cache is a bounded LRU map from byte keys to plans: hits and misses
 * are counted, the least recently used entries go first, a key inserted
 * twice keeps one entry, capacity 0 still keeps the entry just inserted,
 * and every value is freed exactly once (on eviction, replacement, clear
 * or free).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "actors/cudnn/atomr-cudnn-backend-private.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"

/* What a caller's key looks like: a zero-filled struct of plain fields. */
typedef struct {
  gint32 kind;
  gint32 dtype;
  gint64 dims[4];
} Key;

static guint n_freed;

static void
value_free (gpointer value)
{
  n_freed++;
  g_free (value);
}

static Key
key (gint32 kind, gint64 d0)
{
  Key k;

  memset (&k, 0, sizeof k);
  k.kind = kind;
  k.dtype = 7;
  k.dims[0] = d0;
  k.dims[3] = 1;
  return k;
}

static gpointer
value (gint tag)
{
  return g_memdup2 (&tag, sizeof tag);
}

static void
test_lru (void)
{
  AtomrCudnnPlanCache *cache = atomr_cudnn_plan_cache_new (2, value_free);
  Key a = key (1, 32), b = key (1, 64), c = key (2, 32);
  gint *got;

  n_freed = 0;
  g_assert_null (atomr_cudnn_plan_cache_lookup (cache, &a, sizeof a));
  atomr_cudnn_plan_cache_insert (cache, &a, sizeof a, value (1));
  g_assert_null (atomr_cudnn_plan_cache_lookup (cache, &b, sizeof b));
  atomr_cudnn_plan_cache_insert (cache, &b, sizeof b, value (2));
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_size (cache), ==, 2);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_misses (cache), ==, 2);

  /* a is used again: b becomes the least recently used and goes first */
  got = atomr_cudnn_plan_cache_lookup (cache, &a, sizeof a);
  g_assert_nonnull (got);
  g_assert_cmpint (*got, ==, 1);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_hits (cache), ==, 1);
  atomr_cudnn_plan_cache_insert (cache, &c, sizeof c, value (3));
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_size (cache), ==, 2);
  g_assert_cmpuint (n_freed, ==, 1);
  g_assert_null (atomr_cudnn_plan_cache_lookup (cache, &b, sizeof b));
  g_assert_nonnull (atomr_cudnn_plan_cache_lookup (cache, &a, sizeof a));
  got = atomr_cudnn_plan_cache_lookup (cache, &c, sizeof c);
  g_assert_cmpint (*got, ==, 3);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_hits (cache), ==, 3);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_misses (cache), ==, 3);

  /* one byte of the key differs: another entry */
  {
    Key a2 = a;
    a2.dims[3] = 2;
    g_assert_null (atomr_cudnn_plan_cache_lookup (cache, &a2, sizeof a2));
  }

  /* the same key again replaces (and frees) the old value */
  atomr_cudnn_plan_cache_insert (cache, &c, sizeof c, value (4));
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_size (cache), ==, 2);
  g_assert_cmpuint (n_freed, ==, 2);
  got = atomr_cudnn_plan_cache_lookup (cache, &c, sizeof c);
  g_assert_cmpint (*got, ==, 4);

  /* capacity 0 keeps the newest entry only */
  atomr_cudnn_plan_cache_set_capacity (cache, 0);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_size (cache), ==, 0);
  g_assert_cmpuint (n_freed, ==, 4);
  atomr_cudnn_plan_cache_insert (cache, &a, sizeof a, value (5));
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_size (cache), ==, 1);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_capacity (cache), ==, 0);

  atomr_cudnn_plan_cache_set_capacity (cache, 8);
  atomr_cudnn_plan_cache_insert (cache, &b, sizeof b, value (6));
  atomr_cudnn_plan_cache_clear (cache);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_size (cache), ==, 0);
  g_assert_cmpuint (n_freed, ==, 6);
  /* counters survive a clear */
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_hits (cache), ==, 4);

  atomr_cudnn_plan_cache_insert (cache, &c, sizeof c, value (7));
  atomr_cudnn_plan_cache_free (cache);
  g_assert_cmpuint (n_freed, ==, 7);
}

/* Lookups and inserts from several threads: counters add up, the bound
 * holds, nothing is freed twice (valgrind variant). */
static gpointer
hammer (gpointer data)
{
  AtomrCudnnPlanCache *cache = data;

  for (gint i = 0; i < 2000; i++)
    {
      Key k = key (i % 3, i % 17);
      if (atomr_cudnn_plan_cache_lookup (cache, &k, sizeof k) == NULL)
        atomr_cudnn_plan_cache_insert (cache, &k, sizeof k, value (i));
    }
  return NULL;
}

static void
test_threads (void)
{
  AtomrCudnnPlanCache *cache = atomr_cudnn_plan_cache_new (8, value_free);
  GThread *threads[4];

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("cache", hammer, cache);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_hits (cache) + atomr_cudnn_plan_cache_get_misses (cache),
                    ==, 4 * 2000);
  g_assert_cmpuint (atomr_cudnn_plan_cache_get_size (cache), <=, 8);
  atomr_cudnn_plan_cache_free (cache);
}

/* An empty graph is refused before cuDNN is asked anything; a graph never
 * built frees without cuDNN loaded. */
static void
test_empty_graph (void)
{
  g_autoptr(AtomrCudnnBackendGraph) g = atomr_cudnn_backend_graph_new ("layer-norm-fwd");
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (atomr_cudnn_backend_graph_get_opname (g), ==, "layer-norm-fwd");
  g_assert_cmpuint (atomr_cudnn_backend_graph_get_n_operations (g), ==, 0);
  g_assert_null (atomr_cudnn_backend_graph_build_plan (g, NULL, 1 << 20, 0, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "layer-norm-fwd"));
}

/* The actor's cache counters include the graph plans' counters. */
static void
test_actor_counters (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  AtomrCudnnActor *actor = atomr_cudnn_actor_new (device, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_hits (actor), ==, 0);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_misses (actor), ==, 0);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (actor), ==, 0);
  atomr_cudnn_actor_set_cache_capacity (actor, 3);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_capacity (actor), ==, 3);
  g_assert_finalize_object (actor);
}

static void
count_free (gpointer data)
{
  (*(guint *) data)++;
}

/* A context rebuild (the actor's teardown with a dead context) drops the
 * plans of other files (attention and graph plans hold backend execution
 * plans finalized against the old handle); they used to survive it. */
static void
test_rebuild_drops_ext_plans (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  AtomrCudnnActor *actor = atomr_cudnn_actor_new (device, &error);
  g_autoptr(GBytes) key = g_bytes_new_static ("attention plan key", 18);
  guint freed = 0;

  g_assert_no_error (error);
  atomr_cudnn_actor_insert_plan_internal (actor, key, &freed, count_free);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (actor), ==, 1);
  g_assert_true (atomr_cudnn_actor_lookup_plan_internal (actor, key) == &freed);
  ATOMR_ACTOR_GET_CLASS (actor)->teardown (ATOMR_ACTOR (actor), FALSE);
  g_assert_cmpuint (freed, ==, 1);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (actor), ==, 0);
  g_assert_null (atomr_cudnn_actor_lookup_plan_internal (actor, key));
  g_assert_finalize_object (actor);
  g_assert_cmpuint (freed, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cudnn-backend/plan-cache-lru", test_lru);
  g_test_add_func ("/cudnn-backend/plan-cache-threads", test_threads);
  g_test_add_func ("/cudnn-backend/empty-graph", test_empty_graph);
  g_test_add_func ("/cudnn-backend/actor-counters", test_actor_counters);
  g_test_add_func ("/cudnn-backend/rebuild-drops-ext-plans", test_rebuild_drops_ext_plans);
  return g_test_run ();
}
