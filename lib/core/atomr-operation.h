/* atomr-operation.h — the public envelope, for actors written outside
 * atomr-accel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-actor.h"
#include "atomr-buffer.h"
#include "atomr-tensor.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_OPERATION (atomr_operation_get_type ())
ATOMR_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (AtomrOperation, atomr_operation, ATOMR, OPERATION, GObject)

/**
 * AtomrOperationEnqueueFunc:
 * @operation: the operation being enqueued
 * @user_data: the data given to atomr_operation_set_enqueue_func()
 * @error: return location for a #GError
 *
 * Enqueues the operation's work on the actor's CUDA stream
 * (atomr_operation_get_cu_stream()).  Runs on the actor's main context
 * with the device's CUDA context current.  On the host test device
 * (atomr_operation_is_host() is %TRUE) there is no stream: do the work on
 * the CPU before returning.
 *
 * Returns: %TRUE when the work was enqueued, %FALSE with @error set
 *   otherwise (the request then fails with that error)
 *
 * Since: 0.2
 */
typedef gboolean (*AtomrOperationEnqueueFunc)  (AtomrOperation  *operation,
                                                gpointer         user_data,
                                                GError         **error);

/**
 * AtomrOperationCompleteFunc:
 * @operation: the operation that completed
 * @task: the request's task: call exactly one g_task_return_*() on it
 * @user_data: the data given to atomr_operation_set_complete_func()
 *
 * Builds the reply once the GPU has finished the work.  Runs on the
 * actor's main context.  Not called when the request failed (the envelope
 * answers with the error) nor when it was made without a callback.
 *
 * Since: 0.2
 */
typedef void     (*AtomrOperationCompleteFunc) (AtomrOperation  *operation,
                                                GTask           *task,
                                                gpointer         user_data);

ATOMR_AVAILABLE_IN_0_2
AtomrOperation *atomr_operation_new               (AtomrActor                 *actor,
                                                   const gchar                *name,
                                                   gpointer                    source_tag,
                                                   GCancellable               *cancellable,
                                                   GAsyncReadyCallback         callback,
                                                   gpointer                    user_data);
ATOMR_AVAILABLE_IN_0_2
AtomrActor     *atomr_operation_get_actor         (AtomrOperation             *self);
ATOMR_AVAILABLE_IN_0_2
const gchar    *atomr_operation_get_name          (AtomrOperation             *self);
ATOMR_AVAILABLE_IN_0_2
gboolean        atomr_operation_get_submitted     (AtomrOperation             *self);

ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_read              (AtomrOperation             *self,
                                                   AtomrBuffer                *buffer);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_write             (AtomrOperation             *self,
                                                   AtomrBuffer                *buffer);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_read_tensor       (AtomrOperation             *self,
                                                   AtomrTensor                *tensor);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_write_tensor      (AtomrOperation             *self,
                                                   AtomrTensor                *tensor);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_set_data          (AtomrOperation             *self,
                                                   gpointer                    data,
                                                   GDestroyNotify              destroy);
ATOMR_AVAILABLE_IN_0_2
gpointer        atomr_operation_get_data          (AtomrOperation             *self);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_set_enqueue_func  (AtomrOperation             *self,
                                                   AtomrOperationEnqueueFunc   func,
                                                   gpointer                    user_data,
                                                   GDestroyNotify              notify);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_set_complete_func (AtomrOperation             *self,
                                                   AtomrOperationCompleteFunc  func,
                                                   gpointer                    user_data,
                                                   GDestroyNotify              notify);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_set_detail        (AtomrOperation             *self,
                                                   const gchar                *detail);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_set_barrier       (AtomrOperation             *self);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_keep              (AtomrOperation             *self,
                                                   GObject                    *object);

ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_submit            (AtomrOperation             *self);
ATOMR_AVAILABLE_IN_0_2
void            atomr_operation_fail              (AtomrOperation             *self,
                                                   const GError               *error);

ATOMR_AVAILABLE_IN_0_2
guint64         atomr_operation_get_cu_stream     (AtomrOperation             *self);
ATOMR_AVAILABLE_IN_0_2
gboolean        atomr_operation_is_host           (AtomrOperation             *self);
ATOMR_AVAILABLE_IN_0_2
guint64         atomr_operation_get_address       (AtomrOperation             *self,
                                                   AtomrBuffer                *buffer);

ATOMR_AVAILABLE_IN_0_2
gboolean        atomr_operation_finish_boolean    (AtomrActor                 *actor,
                                                   GAsyncResult               *result,
                                                   gpointer                    source_tag,
                                                   GError                    **error);
ATOMR_AVAILABLE_IN_0_2
gpointer        atomr_operation_finish_pointer    (AtomrActor                 *actor,
                                                   GAsyncResult               *result,
                                                   gpointer                    source_tag,
                                                   GError                    **error);

ATOMR_AVAILABLE_IN_0_2
guint64         atomr_actor_get_cu_stream_handle  (AtomrActor                 *self);

G_END_DECLS
