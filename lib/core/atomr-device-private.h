/* atomr-device-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-cuda-private.h"
#include "atomr-device.h"
#include "atomr-stream-private.h"

G_BEGIN_DECLS

typedef struct _AtomrActor AtomrActor;

/* A device with no GPU behind it: host streams completed by hand, host
 * memory for buffers.  For the CPU test suite. */
AtomrDevice *atomr_device_new_host           (void);
gboolean     atomr_device_is_host            (AtomrDevice *self);
/* Host device: complete every fence as soon as it is recorded (for tests of
 * the blocking conveniences and bindings, where nobody completes by hand). */
void         atomr_device_set_host_autocomplete (AtomrDevice *self,
                                                 gboolean     autocomplete);
gboolean     atomr_device_get_host_autocomplete (AtomrDevice *self);

/* Enter the context for driver calls on this thread; fails when the device
 * is poisoned or stopped.  Every successful enter needs one leave. */
/* The CUDA handles, for code that must name them (peer copies). Valid
 * while the device is entered. */
CUdevice     atomr_device_get_cu_device      (AtomrDevice *self);
CUcontext    atomr_device_get_cu_context     (AtomrDevice *self);

gboolean     atomr_device_enter              (AtomrDevice *self,
                                              GError     **error);
void         atomr_device_leave              (AtomrDevice *self);

/* Hold the context of @generation without checking its health (to query
 * or wait on events of a poisoned context).  FALSE when @generation is no
 * longer current; otherwise pair with atomr_device_release(). */
gboolean     atomr_device_hold               (AtomrDevice *self,
                                              guint        generation);
void         atomr_device_release            (AtomrDevice *self);

/* The stream pool: handles of the current generation that actors let go
 * of, handed to the next actor instead of creating one (call while
 * entered).  take returns NULL when the pool is empty. */
CUstream     atomr_device_take_stream        (AtomrDevice *self);
void         atomr_device_return_stream      (AtomrDevice *self,
                                              guint        generation,
                                              CUstream     stream);

/* The utility stream of the current generation (allocation, frees). */
AtomrStream *atomr_device_get_utility_stream (AtomrDevice *self,
                                              GError     **error);
guint        atomr_device_next_stream_id     (AtomrDevice *self);

/* Events from the per-generation pools (call while entered).  Plain
 * events are the cheapest to record and query; blocking-sync events let a
 * thread sleep in cuEventSynchronize but make the GPU raise an interrupt
 * for each one, which caps a stream's throughput; timing events measure. */
typedef enum {
  ATOMR_EVENT_PLAIN,
  ATOMR_EVENT_BLOCKING,
  ATOMR_EVENT_TIMING,
  ATOMR_EVENT_N_KINDS
} AtomrEventKind;

CUevent      atomr_device_take_event         (AtomrDevice   *self,
                                              AtomrEventKind kind,
                                              GError       **error);
void         atomr_device_return_event       (AtomrDevice   *self,
                                              guint          generation,
                                              CUevent        event,
                                              AtomrEventKind kind);

/* Pinned pool storage, protected by the device lock. */
gpointer     atomr_device_pinned_take        (AtomrDevice *self,
                                              gsize        size,
                                              guint       *generation,
                                              GError     **error);
void         atomr_device_pinned_give        (AtomrDevice *self,
                                              gpointer     data,
                                              gsize        size,
                                              guint        generation);

/* Called with a CUresult seen at completion or enqueue: a sticky error of
 * the current generation poisons the context and triggers the policy. */
void         atomr_device_report_result      (AtomrDevice *self,
                                              guint        generation,
                                              CUresult     result);

/* The device's completion service (atomr-completion-service-private.h),
 * made on first use and owned by the device. */
struct _AtomrCompletionService *atomr_device_get_completion_service (AtomrDevice *self);
/* Host fences completed: let the completion service look again. */
void         atomr_device_kick_completion    (AtomrDevice *self);

/* The device's own thread and main context, for default actors and the
 * supervisor. */
GMainContext *atomr_device_get_thread_context (AtomrDevice *self);

/* atomr_device_get_generation() without the type check, for the
 * envelope's per-request path (the device is known to be one). */
guint        atomr_device_get_generation_internal (AtomrDevice *self);

G_END_DECLS
