/* atomr-completion-service-private.h — learning that fences have passed
 *
 * One service per device, one thread per service: actors hand it the
 * fences they no longer want to poll from their own context, and it wakes
 * them when the GPU has passed each one.  The thread sleeps on a condition
 * variable while nothing is watched (no CPU while idle); while fences are
 * watched it queries them all, then naps a thirty-second of the time the
 * youngest has waited (20 to 250 µs, and at least four times the pass:
 * atomr_completion_service_nap_usec()).  Host-device fences are not polled:
 * completing them kicks the service.
 *
 * Threads: watch() and kick() from any thread; the notify functions run
 * on the service thread and must only wake somebody up.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-stream-private.h"

G_BEGIN_DECLS

typedef struct _AtomrCompletionService AtomrCompletionService;

AtomrCompletionService *atomr_completion_service_new   (void);
/* Stops the thread (if the caller is the service thread itself, it stops
 * after the current pass) and frees the service once it has stopped.  Fences
 * still watched are dropped, their notify functions never called. */
void                    atomr_completion_service_free  (AtomrCompletionService *service);

/* Calls @notify (@data) on the service thread once @fence has passed (or
 * failed); @fence->signalled and @fence->result are set before.  @destroy
 * (may be NULL) frees @data afterwards, also when the service stops first. */
void                    atomr_completion_service_watch (AtomrCompletionService *service,
                                                        AtomrFence             *fence,
                                                        GFunc                   notify,
                                                        gpointer                data,
                                                        GDestroyNotify          destroy);
/* Something may have completed: look again now. */
void                    atomr_completion_service_kick  (AtomrCompletionService *service);
/* How many fences are watched (tests, benchmarks). */
guint                   atomr_completion_service_get_n_watched (AtomrCompletionService *service);
/* How long the service naps after a pass of @pass_usec µs when the
 * youngest fence watched has waited @waited_usec µs (tests). */
gint64                  atomr_completion_service_nap_usec (gint64 waited_usec,
                                                           gint64 pass_usec);
/* Whether the service has started its thread (tests, benchmarks). */
gboolean                atomr_completion_service_has_thread (AtomrCompletionService *service);

G_END_DECLS
