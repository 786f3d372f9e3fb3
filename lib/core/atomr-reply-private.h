/* atomr-reply-private.h — the reply of a request: a light GAsyncResult
 *
 * Every request made with a callback gets one AtomrReply (atomr_op_new()),
 * instead of the GTask it had until issue 17: a GTask is about 5 000 of
 * the 8 500 instructions of a request with a reply (callgrind on the host
 * device, tests/bench/core/envelope-ir.py).  What a reply keeps of
 * GTask's behaviour, and what the tests of test-reply check:
 *
 *  - the callback runs in the thread-default main context of the thread
 *    that made the request (captured by atomr_reply_new()), with that
 *    context pushed as thread-default when the dispatching thread has
 *    another one;
 *  - never inside the call that made the request: a reply returned in the
 *    main-loop iteration that made it (or outside any dispatch of that
 *    context, or after its cancellable fired) is deferred to the next
 *    iteration.  Deferred replies of one context wait in one queue,
 *    drained by one GSource, in the order they were returned; GTask made
 *    an idle source per reply;
 *  - the finish functions get exactly the outcome, once; an outcome
 *    nobody took (a pointer and its GDestroyNotify) is freed with the
 *    reply;
 *  - cancellation is not checked when finishing (GTask's
 *    check_cancellable FALSE): work that reached the GPU reports what it
 *    did.
 *
 * The public AtomrOperation keeps its GTask (its complete function takes
 * one, atomr-operation.h): the propagate functions below accept a GTask
 * too, so every _finish takes what its _async gave.
 *
 * Replies are recycled per thread only when nobody but the envelope can
 * see them (atomr_reply_release()): a caller may keep a reference to the
 * result past its callback, and bindings attach wrappers to it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define ATOMR_TYPE_REPLY (atomr_reply_get_type ())
G_GNUC_INTERNAL
G_DECLARE_FINAL_TYPE (AtomrReply, atomr_reply, ATOMR, REPLY, GObject)

/* @source_object (nullable) and @cancellable (nullable) are referenced;
 * @callback must not be NULL.  Captures this thread's thread-default
 * context and the current dispatch's time, as g_task_new() does. */
G_GNUC_INTERNAL
AtomrReply *atomr_reply_new             (gpointer             source_object,
                                         GCancellable        *cancellable,
                                         gpointer             source_tag,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data);

/* Drops the envelope's reference: use instead of g_object_unref() (keeps
 * the reply for reuse when nobody else can see it). */
G_GNUC_INTERNAL
void        atomr_reply_release         (AtomrReply          *self);

/* Exactly one of these per reply (from any thread), by a holder of a
 * reference that it keeps across the call (the operation's): sets the
 * outcome and has the callback run (now, or from the requester's
 * context). */
G_GNUC_INTERNAL
void        atomr_reply_return_boolean  (AtomrReply          *self,
                                         gboolean             value);
G_GNUC_INTERNAL
void        atomr_reply_return_pointer  (AtomrReply          *self,
                                         gpointer             value,
                                         GDestroyNotify       destroy);
G_GNUC_INTERNAL
void        atomr_reply_return_double   (AtomrReply          *self,
                                         gdouble              value);
/* Consumes @error. */
G_GNUC_INTERNAL
void        atomr_reply_return_error    (AtomrReply          *self,
                                         GError              *error);
G_GNUC_INTERNAL
void        atomr_reply_return_new_error (AtomrReply         *self,
                                          GQuark              domain,
                                          gint                code,
                                          const gchar        *format,
                                          ...) G_GNUC_PRINTF (4, 5);

/* @result is an AtomrReply or a GTask made for @source_object (either may
 * be NULL) with @source_tag. */
G_GNUC_INTERNAL
gboolean    atomr_reply_is_valid        (GAsyncResult        *result,
                                         gpointer             source_object,
                                         gpointer             source_tag);
/* The outcome of an AtomrReply or a GTask (the transfer of GTask's
 * propagate functions: a pointer is the caller's, an error is set at most
 * once). */
G_GNUC_INTERNAL
gboolean    atomr_reply_propagate_boolean (GAsyncResult      *result,
                                           GError           **error);
G_GNUC_INTERNAL
gpointer    atomr_reply_propagate_pointer (GAsyncResult      *result,
                                           GError           **error);
/* An AtomrReply only (GTask has no double). */
G_GNUC_INTERNAL
gdouble     atomr_reply_propagate_double  (GAsyncResult      *result,
                                           GError           **error);

G_END_DECLS
