/* atomr-buffer-private.h — raw access for actors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-buffer.h"
#include "atomr-hazard-private.h"
#include "atomr-stream-private.h"

G_BEGIN_DECLS

/* atomr_dtype_pack() into a caller's buffer; returns the size, 0 if invalid. */
gsize       atomr_dtype_pack_into       (AtomrDtype   dtype,
                                         gdouble      real,
                                         gdouble      imag,
                                         guint8       out[16]);

/* Device address (CUDA) or host address (host device) of the buffer. */
CUdeviceptr atomr_buffer_get_ptr        (AtomrBuffer *self);
gpointer    atomr_buffer_get_host_data  (AtomrBuffer *self);

/* The buffer's hazard state (atomr-hazard-private.h). */
AtomrHazards *atomr_buffer_get_hazards  (AtomrBuffer *self);

/* A buffer over memory someone else owns: never freed by us; @notify
 * (may be NULL) runs once the last work on it has run on the GPU, on the
 * device's thread.  Checked by atomr_buffer_new_for_device_pointer(). */
AtomrBuffer *atomr_buffer_new_foreign   (AtomrDevice    *device,
                                         AtomrDtype      dtype,
                                         guint64         n_elements,
                                         CUdeviceptr     ptr,
                                         gpointer        host_data,
                                         GDestroyNotify  notify,
                                         gpointer        notify_data);

G_END_DECLS
