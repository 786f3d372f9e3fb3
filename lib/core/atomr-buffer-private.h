/* atomr-buffer-private.h — hazard tracking and raw access for actors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-buffer.h"
#include "atomr-stream-private.h"

G_BEGIN_DECLS

/* Device address (CUDA) or host address (host device) of the buffer. */
CUdeviceptr atomr_buffer_get_ptr        (AtomrBuffer *self);
gpointer    atomr_buffer_get_host_data  (AtomrBuffer *self);

/* Hazards: makes @stream wait on the GPU for the buffer's last writer (a
 * read), or for the last writer and every reader since (a write). */
gboolean    atomr_buffer_order_on       (AtomrBuffer *self,
                                         AtomrStream *stream,
                                         gboolean     write,
                                         GError     **error);
/* Records that work up to @fence reads or writes the buffer. */
void        atomr_buffer_mark           (AtomrBuffer *self,
                                         AtomrFence  *fence,
                                         gboolean     write);

G_END_DECLS
