/* atomr-actor-sync.c — the blocking conveniences (_sync helpers)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-actor-impl-private.h"

/* ------------------------------------------------------------------ */
/* Blocking conveniences                                                */

/* The _sync helpers wait on a private context only: iterating any other
 * would dispatch its sources (an application's GTK sources, say) on the
 * wrong thread.  When the actor's context is this thread's to run (we own
 * it, or nobody does), the helper drives the actor itself — its mailbox
 * and completions, nothing else of that context — and the actor's wake-ups
 * reach the private context too. */
void
atomr_sync_begin (AtomrSync  *sync,
                  AtomrActor *actor)
{
  AtomrActorPrivate *priv = atomr_actor_get_instance_private (actor);

  memset (sync, 0, sizeof *sync);
  sync->home = g_main_context_ref_thread_default ();
  sync->context = g_main_context_new ();
  sync->actor = g_object_ref (actor);
  if (g_main_context_acquire (priv->context))
    {
      sync->acquired = TRUE;
      g_mutex_lock (&priv->source->lock);
      sync->saved_wake = priv->source->extra_wake;   /* a nested _sync */
      priv->source->extra_wake = g_main_context_ref (sync->context);
      g_mutex_unlock (&priv->source->lock);
    }
  g_main_context_push_thread_default (sync->context);
  sync->pushed = TRUE;
  sync->saved_sync = tls_sync;
  tls_sync = sync;
}

void
atomr_sync_callback (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  AtomrSync *sync = user_data;
  sync->result = g_object_ref (result);
}

gboolean
watchdog_tick (gpointer data)
{
  return G_SOURCE_REMOVE;   /* only wakes the private context up */
}

/* Runs the actor that must resolve @slot when this thread may (nobody
 * else runs its context: typically the caller's own main context, which
 * it does not iterate while it blocks here), then — when that actor's
 * mailbox head waits in turn — the actor that one waits for, and so on.
 * Without this, a blocking call whose request follows a request queued on
 * an actor of the blocked thread's context would wait forever: the
 * default actor runs on the device thread, the earlier request sits in a
 * mailbox nobody dispatches (test-gpu-graph's capture-replay hung so,
 * behind 50 replays queued without a callback).  Returns TRUE when @slot
 * was resolved. */
gboolean
sync_drive_slot (AtomrSlot    *slot,
                 GMainContext *wake,
                 GMainContext *home)
{
  g_autoptr(AtomrSlot) current = atomr_slot_ref (slot);

  /* A chain longer than this is left to the owners' contexts. */
  for (guint hop = 0; hop < 16; hop++)
    {
      g_autoptr(AtomrActor) owner = atomr_slot_dup_pending_owner (current);
      AtomrActorPrivate *priv;
      AtomrSlot *next = NULL;

      if (owner == NULL)
        return atomr_slot_check (slot, NULL);
      priv = atomr_actor_get_instance_private (owner);
      /* Only actors of the context this thread would run itself (its
       * thread-default one, which it cannot iterate while it blocks here):
       * the actors of other contexts run where their context runs. */
      if ((priv->context ? priv->context : g_main_context_default ()) != home)
        break;
      /* Not from inside that actor's own dispatch (a reply callback
       * blocking): its pass is under way on this stack. */
      if (g_main_current_source () == (GSource *) priv->source)
        break;
      if (!g_main_context_acquire (priv->context))
        break;   /* another thread runs that context: it will go on */
      if (g_atomic_int_get (&priv->source->running) > 0)
        {
          g_main_context_release (priv->context);
          break;   /* inside its enqueue on this stack */
        }
      actor_pump (owner, wake, FALSE);
      if (!atomr_slot_check (current, wake) && priv->source->blocked != NULL)
        next = atomr_slot_ref (priv->source->blocked);
      g_main_context_release (priv->context);
      if (next == NULL)
        break;
      g_clear_pointer (&current, atomr_slot_unref);
      current = next;
    }
  return atomr_slot_check (slot, wake);
}

/* Drives what the _sync's request depends on; TRUE on progress. */
gboolean
sync_drive_deps (AtomrSync *sync)
{
  gboolean progress = FALSE;

  if (sync->deps == NULL)
    return FALSE;
  for (guint i = 0; i < sync->deps->len; )
    {
      if (sync_drive_slot (g_ptr_array_index (sync->deps, i), sync->context, sync->home))
        {
          g_ptr_array_remove_index_fast (sync->deps, i);
          progress = TRUE;
        }
      else
        i++;
    }
  return progress;
}

GAsyncResult *
atomr_sync_wait (AtomrSync *sync)
{
  while (sync->result == NULL)
    {
      GSource *timer = NULL;

      if (sync_drive_deps (sync))
        continue;

      if (sync->acquired)
        {
          AtomrActorPrivate *priv = atomr_actor_get_instance_private (sync->actor);
          AtomrOp *head;
          gint64 remaining;

          actor_pump (sync->actor, sync->context, TRUE);
          if (sync->result != NULL || g_main_context_iteration (sync->context, FALSE))
            continue;
          /* The actor's watchdog must fire while we sleep here too. */
          head = first_unanswered (priv->source);
          remaining = head ? op_watchdog_remaining (priv->source, head, g_get_monotonic_time ()) : -1;
          if (remaining >= 0)
            {
              timer = g_timeout_source_new ((guint) MIN ((remaining + 999) / 1000, G_MAXUINT));
              g_source_set_callback (timer, watchdog_tick, NULL, NULL);
              g_source_attach (timer, sync->context);
            }
        }
      g_main_context_iteration (sync->context, TRUE);
      if (timer)
        {
          g_source_destroy (timer);
          g_source_unref (timer);
        }
    }
  return sync->result;
}

void
atomr_sync_end (AtomrSync *sync)
{
  if (tls_sync == sync)
    tls_sync = sync->saved_sync;
  g_clear_pointer (&sync->deps, g_ptr_array_unref);
  g_clear_pointer (&sync->home, g_main_context_unref);
  if (sync->pushed)
    g_main_context_pop_thread_default (sync->context);
  if (sync->acquired)
    {
      AtomrActorPrivate *priv = atomr_actor_get_instance_private (sync->actor);
      GMainContext *ours;

      g_mutex_lock (&priv->source->lock);
      ours = priv->source->extra_wake;
      priv->source->extra_wake = sync->saved_wake;
      g_mutex_unlock (&priv->source->lock);
      g_main_context_unref (ours);
      /* What the actor's context missed while we drove it. */
      g_main_context_wakeup (priv->context);
      g_main_context_release (priv->context);
    }
  g_clear_object (&sync->result);
  g_clear_pointer (&sync->context, g_main_context_unref);
  g_clear_object (&sync->actor);
}

