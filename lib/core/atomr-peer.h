/* atomr-peer.h — GPU-to-GPU copies and the topology between devices
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "atomr-actor.h"
#include "atomr-buffer.h"
#include "atomr-device.h"

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_device_can_access_peer    (AtomrDevice          *self,
                                           AtomrDevice          *peer);
ATOMR_AVAILABLE_IN_ALL
gint      atomr_device_get_peer_rank      (AtomrDevice          *self,
                                           AtomrDevice          *peer);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_device_enable_peer_access (AtomrDevice          *self,
                                           AtomrDevice          *peer,
                                           GError              **error);

ATOMR_AVAILABLE_IN_ALL
void      atomr_actor_copy_peer_async     (AtomrActor           *self,
                                           AtomrBuffer          *dst,
                                           AtomrBuffer          *src,
                                           GCancellable         *cancellable,
                                           GAsyncReadyCallback   callback,
                                           gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_actor_copy_peer_finish    (AtomrActor           *self,
                                           GAsyncResult         *result,
                                           GError              **error);

G_END_DECLS
