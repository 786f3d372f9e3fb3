/* atomr-buffer-private.h — hazard tracking and raw access for actors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-buffer.h"
#include "atomr-stream-private.h"
#include "atomr-vec-private.h"

G_BEGIN_DECLS

/* atomr_dtype_pack() into a caller's buffer; returns the size, 0 if invalid. */
gsize       atomr_dtype_pack_into       (AtomrDtype   dtype,
                                         gdouble      real,
                                         gdouble      imag,
                                         guint8       out[16]);

/* Device address (CUDA) or host address (host device) of the buffer. */
CUdeviceptr atomr_buffer_get_ptr        (AtomrBuffer *self);
gpointer    atomr_buffer_get_host_data  (AtomrBuffer *self);

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

/* Hazard tracking in program order.
 *
 * Every operation that touches buffers gets a slot when it is submitted
 * (on the caller's thread, under one lock, so the order of submission is
 * the order of the hazards).  A buffer remembers the slot of its last
 * writer and of its readers since.  The operation depends on the slots it
 * found: the last writer (read or write), and the readers too (write).
 *
 * When the operation is enqueued, its slot is resolved with its fence;
 * when it fails before enqueue, with the fences of its own dependencies
 * (so that later operations still wait for what came before).  An actor
 * runs an operation only once all its dependency slots are resolved, and
 * then makes its stream wait for their fences on the GPU. */
typedef struct _AtomrSlot AtomrSlot;

AtomrSlot *atomr_slot_new          (gpointer      owner);
gpointer   atomr_slot_get_owner    (AtomrSlot    *slot);
AtomrSlot *atomr_slot_ref          (AtomrSlot    *slot);
void       atomr_slot_unref        (AtomrSlot    *slot);
/* TRUE if resolved; otherwise @wake is woken when it is. */
gboolean   atomr_slot_check        (AtomrSlot    *slot,
                                    GMainContext *wake);
/* Resolves with @fence, or with the fences of @deps when @fence is NULL. */
void       atomr_slot_resolve      (AtomrSlot    *slot,
                                    AtomrFence   *fence,
                                    AtomrVec     *deps);
/* Makes @stream wait on the GPU for the fences of a resolved slot. */
gboolean   atomr_slot_order        (AtomrSlot    *slot,
                                    AtomrStream  *stream,
                                    GError      **error);

/* Registers @slot as reader of @reads and writer of @writes (AtomrBuffer*)
 * and appends to @deps (AtomrSlot*, owned) what it must wait for. */
void       atomr_hazards_register  (AtomrSlot    *slot,
                                    AtomrVec     *reads,
                                    AtomrVec     *writes,
                                    AtomrVec     *deps);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrSlot, atomr_slot_unref)

G_END_DECLS
