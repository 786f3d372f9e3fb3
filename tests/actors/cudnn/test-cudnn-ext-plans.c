/* test-cudnn-ext-plans.c — the byte-keyed plans of atomr-cudnn-ext-private.h
 * share the cuDNN actor's LRU cache (mock device, no cuDNN needed: the plan
 * data here are plain host objects)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "actors/cudnn/atomr-cudnn-ext-private.h"

static guint freed;

static void
count_free (gpointer data)
{
  freed++;
  g_free (data);
}

static GBytes *
key (const gchar *s)
{
  return g_bytes_new (s, strlen (s) + 1);
}

static void
test_ext_plans (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_mock ();
  AtomrCudnnActor *actor = atomr_cudnn_actor_new (device, &error);
  g_autoptr(GBytes) a = key ("sdpa-fwd 8x16x1024x128"), a2 = key ("sdpa-fwd 8x16x1024x128");
  g_autoptr(GBytes) b = key ("sdpa-fwd 8x16x4096x128"), c = key ("rnn lstm 5x3x8");

  g_assert_no_error (error);
  freed = 0;
  g_assert_null (atomr_cudnn_actor_lookup_plan_internal (actor, a));
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_misses (actor), ==, 1);
  atomr_cudnn_actor_insert_plan_internal (actor, a, g_strdup ("A"), count_free);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (actor), ==, 1);
  /* equal bytes, another GBytes: a hit */
  g_assert_cmpstr (atomr_cudnn_actor_lookup_plan_internal (actor, a2), ==, "A");
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_hits (actor), ==, 1);
  g_assert_null (atomr_cudnn_actor_lookup_plan_internal (actor, b));
  atomr_cudnn_actor_insert_plan_internal (actor, b, g_strdup ("B"), count_free);
  /* the capacity bounds the whole cache: the least recently used goes */
  atomr_cudnn_actor_set_cache_capacity (actor, 2);
  g_assert_cmpstr (atomr_cudnn_actor_lookup_plan_internal (actor, a), ==, "A");   /* a is now recent */
  atomr_cudnn_actor_insert_plan_internal (actor, c, g_strdup ("C"), count_free);
  g_assert_cmpuint (freed, ==, 1);
  g_assert_null (atomr_cudnn_actor_lookup_plan_internal (actor, b));
  g_assert_cmpstr (atomr_cudnn_actor_lookup_plan_internal (actor, a), ==, "A");
  g_assert_cmpstr (atomr_cudnn_actor_lookup_plan_internal (actor, c), ==, "C");
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (actor), ==, 2);
  /* a plan inserted again under its key replaces the old one */
  atomr_cudnn_actor_insert_plan_internal (actor, c, g_strdup ("C2"), count_free);
  g_assert_cmpuint (freed, ==, 2);
  g_assert_cmpstr (atomr_cudnn_actor_lookup_plan_internal (actor, c), ==, "C2");
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (actor), ==, 2);
  /* the rest go with the actor */
  g_assert_finalize_object (actor);
  g_assert_cmpuint (freed, ==, 4);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cudnn-ext-plans/shared-lru", test_ext_plans);
  return g_test_run ();
}
