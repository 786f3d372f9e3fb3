/* atomr-gpu-clock-private.h — GPU timing events on the host's clock
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "core/atomr-device-private.h"
#include "core/atomr-stream-private.h"

G_BEGIN_DECLS

/* A reference CUDA event whose GPU time is known on the host's monotonic
 * clock.  cuEventElapsedTime() from it to an operation's timing events puts
 * them on the host clock.  One per device and generation, recalibrated
 * every second (a float of milliseconds keeps ~0.1 µs only that far).
 * Immutable once made; refcounted, so operations in flight keep theirs. */
typedef struct _AtomrGpuClock AtomrGpuClock;

/* Call while the device is entered (its context current), on any thread.
 * NULL on the host device or when calibration fails: timing then simply
 * has no GPU times. */
AtomrGpuClock *atomr_gpu_clock_acquire (AtomrDevice   *device,
                                        guint          generation);
void           atomr_gpu_clock_release (AtomrGpuClock *clock);

/* Converts a timed fence (start and end events) to host nanoseconds.
 * FALSE when the fence has no timing events, belongs to another
 * generation, or a query fails. */
gboolean       atomr_gpu_clock_convert (AtomrGpuClock *clock,
                                        AtomrFence    *fence,
                                        gint64        *start_ns,
                                        gint64        *end_ns);

G_END_DECLS
