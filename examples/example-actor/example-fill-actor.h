/* example-fill-actor.h — a third-party actor: fills 32-bit buffers with
 * a bit pattern (cuMemsetD32Async on a GPU, a loop on the host test
 * device)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>

G_BEGIN_DECLS

#define EXAMPLE_TYPE_FILL_ACTOR (example_fill_actor_get_type ())
G_DECLARE_FINAL_TYPE (ExampleFillActor, example_fill_actor, EXAMPLE, FILL_ACTOR, AtomrActor)

ExampleFillActor *example_fill_actor_new          (AtomrDevice          *device,
                                                   GError              **error);
void              example_fill_actor_fill_async   (ExampleFillActor     *self,
                                                   AtomrBuffer          *buffer,
                                                   guint32               pattern,
                                                   GCancellable         *cancellable,
                                                   GAsyncReadyCallback   callback,
                                                   gpointer              user_data);
gboolean          example_fill_actor_fill_finish  (ExampleFillActor     *self,
                                                   GAsyncResult         *result,
                                                   GError              **error);

G_END_DECLS
