/* atomr-reply.c — the reply of a request: a light GAsyncResult
 * (atomr-reply-private.h says what it keeps of GTask's behaviour)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-reply-private.h"

#include <string.h>

#include "atomr-free-list-private.h"

typedef enum {
  OUTCOME_NONE,
  OUTCOME_BOOLEAN,
  OUTCOME_POINTER,
  OUTCOME_DOUBLE,
  OUTCOME_ERROR,
} Outcome;

struct _AtomrReply
{
  GObject              parent_instance;

  gpointer             source_object;   /* owned, nullable */
  GCancellable        *cancellable;     /* owned, nullable */
  gpointer             source_tag;
  GAsyncReadyCallback  callback;
  gpointer             user_data;
  GMainContext        *context;         /* owned: the requester's */
  gint64               creation_time;   /* of the dispatch that made it; 0 outside one */
  AtomrReply          *next;            /* in its context's queue */

  Outcome              outcome;
  gboolean             propagated;      /* the outcome was taken */
  gboolean             delivered;       /* the callback has returned */
  union {
    gboolean           boolean;
    gpointer           pointer;
    gdouble            number;
  }                    value;
  GDestroyNotify       destroy;         /* of value.pointer, until taken */
  GError              *error;
};

static void atomr_reply_async_result_init (GAsyncResultIface *iface);

/* The type is final: an exact type comparison is the whole check, and
 * the casts below need none (GObject's checked casts to an interface
 * were ~400 instructions per request, callgrind). */
#define REPLY(p) ((AtomrReply *) (p))
static inline gboolean
is_reply (gpointer instance)
{
  return instance != NULL && G_TYPE_FROM_INSTANCE (instance) == atomr_reply_get_type ();
}

G_DEFINE_FINAL_TYPE_WITH_CODE (AtomrReply, atomr_reply, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_ASYNC_RESULT,
                                                      atomr_reply_async_result_init))

/* Everything a reply holds, released; the fields after the GObject
 * zeroed (a recycled reply is as new). */
static void
reply_clear (AtomrReply *self)
{
  /* An outcome nobody finished: freed as GTask frees it. */
  if (self->outcome == OUTCOME_POINTER && !self->propagated && self->destroy && self->value.pointer)
    self->destroy (self->value.pointer);
  g_clear_error (&self->error);
  g_clear_object (&self->source_object);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->context, g_main_context_unref);
  memset ((guint8 *) self + sizeof (GObject), 0, sizeof *self - sizeof (GObject));
}

static void
atomr_reply_finalize (GObject *object)
{
  reply_clear (REPLY (object));

  G_OBJECT_CLASS (atomr_reply_parent_class)->finalize (object);
}

static void
atomr_reply_class_init (AtomrReplyClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = atomr_reply_finalize;
}

static void
atomr_reply_init (AtomrReply *self)
{
}

static gpointer
reply_get_user_data (GAsyncResult *result)
{
  return REPLY (result)->user_data;
}

static GObject *
reply_get_source_object (GAsyncResult *result)
{
  AtomrReply *self = REPLY (result);
  return self->source_object ? g_object_ref (self->source_object) : NULL;
}

static gboolean
reply_is_tagged (GAsyncResult *result,
                 gpointer      source_tag)
{
  return REPLY (result)->source_tag == source_tag;
}

static void
atomr_reply_async_result_init (GAsyncResultIface *iface)
{
  iface->get_user_data = reply_get_user_data;
  iface->get_source_object = reply_get_source_object;
  iface->is_tagged = reply_is_tagged;
}

/* Replies kept for reuse, per thread (atomr_reply_release()). */
static __thread AtomrFreeList *tls_reply_list;
static GPrivate reply_list_key = G_PRIVATE_INIT (atomr_free_list_destroy);

AtomrReply *
atomr_reply_new (gpointer             source_object,
                 GCancellable        *cancellable,
                 gpointer             source_tag,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  AtomrReply *self;
  GSource *current;

  g_return_val_if_fail (callback != NULL, NULL);

  self = atomr_free_list_pop (tls_reply_list);
  if (self == NULL)
    self = g_object_new (ATOMR_TYPE_REPLY, NULL);
  self->source_object = source_object ? g_object_ref (source_object) : NULL;
  self->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  self->source_tag = source_tag;
  self->callback = callback;
  self->user_data = user_data;
  self->context = g_main_context_ref_thread_default ();
  /* As g_task_new(): a reply returned in this same iteration of the
   * context that made it is deferred (never inside the _async call). */
  current = g_main_current_source ();
  if (current != NULL && !g_source_is_destroyed (current))
    self->creation_time = g_source_get_time (current);
  return self;
}

/* ------------------------------------------------------------------ */
/* Delivery                                                             */

/* Whether the callbacks of replies to @context need it pushed as this
 * thread's thread-default context (GTask pushes it around every
 * callback): when the thread runs it without having it as its own. */
static inline gboolean
reply_needs_push (GMainContext *context)
{
  GMainContext *own = g_main_context_get_thread_default ();
  return (own != NULL ? own : g_main_context_default ()) != context;
}

static void
reply_deliver (AtomrReply *self,
               gboolean    push)
{
  if (push)
    g_main_context_push_thread_default (self->context);
  self->callback (self->source_object, (GAsyncResult *) self, self->user_data);
  if (push)
    g_main_context_pop_thread_default (self->context);
  self->delivered = TRUE;
}

/* Creating a GObject and taking away its last reference cost about 2 000
 * instructions (g_object_new, then the notify queue frozen around
 * dispose, the closure, weak-reference and weak-location qdata cleared,
 * finalize and the qdata list freed: callgrind on the host device), as
 * much as the rest of a request.  A reply nobody else can see is kept for
 * the next request of this thread instead: we hold its only reference
 * (whoever kept the result holds one of their own, and then it is freed
 * as any GObject, by the last g_object_unref()), and it carries no qdata
 * at all — no weak reference, toggle reference, binding wrapper or
 * signal closure that expects a finalization.  The outcome has been
 * delivered, so nothing of ours refers to it either.  Off with the free
 * lists (valgrind, AddressSanitizer): every reply is then a GObject of its
 * own, freed by g_object_unref(). */
void
atomr_reply_release (AtomrReply *self)
{
  GObject *object = (GObject *) self;

  if (self->delivered &&
      g_atomic_int_get ((gint *) &object->ref_count) == 1 &&
      ((gsize) g_atomic_pointer_get (&object->qdata) & ~(gsize) G_DATALIST_FLAGS_MASK) == 0 &&
      atomr_free_list_enabled ())
    {
      reply_clear (self);
      atomr_free_list_push_full (&tls_reply_list, &reply_list_key, self, g_object_unref);
      return;
    }
  g_object_unref (self);
}

/* One queue of deferred replies per context, drained by one source, which
 * exists while the queue has replies (so a context without pending replies
 * has nothing of ours attached).  The table of queues and the queues are
 * under one lock; the source's prepare and check (called under the
 * context's lock) only read an atomic count. */
typedef struct {
  GSource       source;
  GMainContext *context;   /* the key in reply_queues; not a reference */
  AtomrReply   *head;      /* owned references, in the order returned */
  AtomrReply   *tail;
  gint          n;         /* atomic: replies queued */
} ReplyQueue;

static GMutex      reply_queues_lock;
static GHashTable *reply_queues;   /* GMainContext* → ReplyQueue*, not owned */

static gboolean
reply_queue_prepare (GSource *source,
                     gint    *timeout)
{
  *timeout = -1;
  return g_atomic_int_get (&((ReplyQueue *) source)->n) > 0;
}

static gboolean
reply_queue_check (GSource *source)
{
  return g_atomic_int_get (&((ReplyQueue *) source)->n) > 0;
}

static gboolean
reply_queue_dispatch (GSource     *source,
                      GSourceFunc  unused,
                      gpointer     unused_data)
{
  ReplyQueue *q = (ReplyQueue *) source;
  AtomrReply *batch;
  gboolean done, push;

  /* The replies queued so far: those that callbacks return now (a request
   * answered at once) wait for the next iteration, as with GTask. */
  g_mutex_lock (&reply_queues_lock);
  batch = q->head;
  q->head = q->tail = NULL;
  g_atomic_int_set (&q->n, 0);
  g_mutex_unlock (&reply_queues_lock);

  /* One look-up for the batch: they all go to this context. */
  push = reply_needs_push (q->context);
  while (batch != NULL)
    {
      AtomrReply *reply = batch;
      batch = reply->next;
      reply->next = NULL;
      reply_deliver (reply, push);
      atomr_reply_release (reply);
    }

  g_mutex_lock (&reply_queues_lock);
  done = q->head == NULL;
  if (done)
    g_hash_table_remove (reply_queues, q->context);
  g_mutex_unlock (&reply_queues_lock);
  return done ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static void
reply_queue_finalize (GSource *source)
{
  ReplyQueue *q = (ReplyQueue *) source;
  AtomrReply *left;

  /* Destroyed with replies in it (its context went away, which their
   * references to it normally prevent): nobody can be answered. */
  g_mutex_lock (&reply_queues_lock);
  if (reply_queues != NULL && g_hash_table_lookup (reply_queues, q->context) == q)
    g_hash_table_remove (reply_queues, q->context);
  left = q->head;
  q->head = q->tail = NULL;
  g_mutex_unlock (&reply_queues_lock);
  while (left != NULL)
    {
      AtomrReply *reply = left;
      left = reply->next;
      reply->next = NULL;
      g_object_unref (reply);
    }
}

static GSourceFuncs reply_queue_funcs = {
  .prepare = reply_queue_prepare,
  .check = reply_queue_check,
  .dispatch = reply_queue_dispatch,
  .finalize = reply_queue_finalize,
};

static void
reply_defer (AtomrReply *self)
{
  ReplyQueue *q, *fresh = NULL;
  gboolean wake = FALSE;

  g_mutex_lock (&reply_queues_lock);
  if (G_UNLIKELY (reply_queues == NULL))
    reply_queues = g_hash_table_new (NULL, NULL);
  q = g_hash_table_lookup (reply_queues, self->context);
  if (q == NULL)
    {
      q = fresh = (ReplyQueue *) g_source_new (&reply_queue_funcs, sizeof (ReplyQueue));
      q->context = self->context;
      g_source_set_priority ((GSource *) q, G_PRIORITY_DEFAULT);
      g_source_set_static_name ((GSource *) q, "atomr replies");
      g_hash_table_insert (reply_queues, self->context, q);
    }
  else
    wake = q->head == NULL;   /* else the wake-up of the first one serves */
  self->next = NULL;
  if (q->tail)
    q->tail->next = g_object_ref (self);
  else
    q->head = g_object_ref (self);
  q->tail = self;
  g_atomic_int_inc (&q->n);
  g_mutex_unlock (&reply_queues_lock);

  /* Outside the lock: attaching takes the context's lock, under which the
   * context calls prepare and check.  A fresh queue is in the table before
   * it is attached, so replies returned meanwhile join it; attaching wakes
   * the context up. */
  if (fresh != NULL)
    {
      g_source_attach ((GSource *) fresh, self->context);
      g_source_unref ((GSource *) fresh);
    }
  else if (wake && !g_main_context_is_owner (self->context))
    g_main_context_wakeup (self->context);
}

static void
reply_complete (AtomrReply *self)
{
  GSource *current = g_main_current_source ();

  /* As GTask: at once only from a dispatch of the requester's context in
   * a later iteration than the request's, and not for a cancelled request
   * (its cancellable's handler may be on this stack). */
  if (current != NULL && g_source_get_context (current) == self->context &&
      !g_source_is_destroyed (current) &&
      g_source_get_time (current) > self->creation_time &&
      (self->cancellable == NULL || !g_cancellable_is_cancelled (self->cancellable)))
    {
      /* The caller (the operation) holds a reference across the return:
       * none of our own needed around the callback. */
      reply_deliver (self, reply_needs_push (self->context));
      return;
    }
  reply_defer (self);
}

void
atomr_reply_return_boolean (AtomrReply *self,
                            gboolean    value)
{
  g_return_if_fail (self->outcome == OUTCOME_NONE);

  self->outcome = OUTCOME_BOOLEAN;
  self->value.boolean = value;
  reply_complete (self);
}

void
atomr_reply_return_pointer (AtomrReply     *self,
                            gpointer        value,
                            GDestroyNotify  destroy)
{
  g_return_if_fail (self->outcome == OUTCOME_NONE);

  self->outcome = OUTCOME_POINTER;
  self->value.pointer = value;
  self->destroy = destroy;
  reply_complete (self);
}

void
atomr_reply_return_double (AtomrReply *self,
                           gdouble     value)
{
  g_return_if_fail (self->outcome == OUTCOME_NONE);

  self->outcome = OUTCOME_DOUBLE;
  self->value.number = value;
  reply_complete (self);
}

void
atomr_reply_return_error (AtomrReply *self,
                          GError     *error)
{
  g_return_if_fail (error != NULL);
  if (self->outcome != OUTCOME_NONE)
    {
      g_critical ("atomr_reply_return_error: the reply was answered already (%s)", error->message);
      g_error_free (error);
      return;
    }

  self->outcome = OUTCOME_ERROR;
  self->error = error;
  reply_complete (self);
}

void
atomr_reply_return_new_error (AtomrReply  *self,
                              GQuark       domain,
                              gint         code,
                              const gchar *format,
                              ...)
{
  GError *error;
  va_list args;

  va_start (args, format);
  error = g_error_new_valist (domain, code, format, args);
  va_end (args);
  atomr_reply_return_error (self, error);
}

/* ------------------------------------------------------------------ */
/* Finishing                                                            */

gboolean
atomr_reply_is_valid (GAsyncResult *result,
                      gpointer      source_object,
                      gpointer      source_tag)
{
  if (is_reply (result))
    {
      AtomrReply *self = REPLY (result);
      return self->source_object == source_object && self->source_tag == source_tag;
    }
  return g_task_is_valid (result, source_object) &&
         g_task_get_source_tag (G_TASK (result)) == source_tag;
}

/* The error once, as g_task_propagate_*(); TRUE when there was one. */
static gboolean
reply_take_error (AtomrReply  *self,
                  GError     **error)
{
  if (self->outcome != OUTCOME_ERROR)
    return FALSE;
  if (self->error != NULL)
    g_propagate_error (error, g_steal_pointer (&self->error));
  else
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the reply's error was taken already");
  self->propagated = TRUE;
  return TRUE;
}

gboolean
atomr_reply_propagate_boolean (GAsyncResult  *result,
                               GError       **error)
{
  AtomrReply *self;

  if (!is_reply (result))
    {
      g_return_val_if_fail (G_IS_TASK (result), FALSE);
      return g_task_propagate_boolean (G_TASK (result), error);
    }
  self = REPLY (result);
  if (reply_take_error (self, error))
    return FALSE;
  g_return_val_if_fail (self->outcome == OUTCOME_BOOLEAN, FALSE);
  self->propagated = TRUE;
  return self->value.boolean;
}

gpointer
atomr_reply_propagate_pointer (GAsyncResult  *result,
                               GError       **error)
{
  AtomrReply *self;

  if (!is_reply (result))
    {
      g_return_val_if_fail (G_IS_TASK (result), NULL);
      return g_task_propagate_pointer (G_TASK (result), error);
    }
  self = REPLY (result);
  if (reply_take_error (self, error))
    return NULL;
  g_return_val_if_fail (self->outcome == OUTCOME_POINTER, NULL);
  /* The pointer is the caller's now, once. */
  g_return_val_if_fail (!self->propagated, NULL);
  self->propagated = TRUE;
  return self->value.pointer;
}

gdouble
atomr_reply_propagate_double (GAsyncResult  *result,
                              GError       **error)
{
  AtomrReply *self;

  g_return_val_if_fail (is_reply (result), 0.0);
  self = REPLY (result);
  if (reply_take_error (self, error))
    return 0.0;
  g_return_val_if_fail (self->outcome == OUTCOME_DOUBLE, 0.0);
  self->propagated = TRUE;
  return self->value.number;
}
