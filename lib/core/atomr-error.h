/* atomr-error.h — the ATOMR_ERROR domain
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <glib.h>

G_BEGIN_DECLS

/**
 * ATOMR_ERROR:
 *
 * The error domain of atomr-accel.  Codes are [error@Atomr.Error] values.
 */
#define ATOMR_ERROR (atomr_error_quark ())

/**
 * AtomrError:
 * @ATOMR_ERROR_NO_DEVICE: no NVIDIA driver, no GPU, or no GPU of that ordinal.
 * @ATOMR_ERROR_STALE: a buffer, kernel or handle belongs to an older
 *   generation of its device's context (the context was rebuilt since).
 * @ATOMR_ERROR_CONTEXT_POISONED: a sticky CUDA error (illegal address, launch
 *   failure, ...) broke the context; the device supervisor decides what follows.
 * @ATOMR_ERROR_OUT_OF_MEMORY: device or pinned host memory ran out; the
 *   context is still usable.
 * @ATOMR_ERROR_INVALID_ARGUMENT: an argument was wrong; the message names it
 *   and its value.
 * @ATOMR_ERROR_NOT_SUPPORTED: the device, driver or build cannot do this.
 * @ATOMR_ERROR_COMPILE: NVRTC or nvJitLink rejected a program; the message
 *   holds the compiler log.
 * @ATOMR_ERROR_LIBRARY: a CUDA library call failed; the message names the
 *   library, the call and its status string.
 * @ATOMR_ERROR_UNRECOVERABLE: the device was stopped by its supervisor and
 *   accepts no more work.
 * @ATOMR_ERROR_DEPENDENCY_FAILED: the request was not run because an earlier
 *   request whose output it reads failed (the message names that request,
 *   its actor and sequence number, and quotes its error); from a barrier:
 *   requests without a callback failed since the previous barrier (the
 *   message lists them).
 * @ATOMR_ERROR_TIMED_OUT: the request ran past its actor's
 *   [property@Atomr.Actor:timeout-ms] on the GPU; the work itself may still finish, and
 *   its buffers stay alive until it does.  Also a collective that ran past
 *   [property@Atomr.CollectiveWorld:timeout-ms] (its world was aborted).
 * @ATOMR_ERROR_WOULD_DEADLOCK: a blocking (`_sync`) call was made where
 *   waiting could never end, such as from a [signal@Atomr.Actor::before-enqueue]
 *   handler, or a collective request that could never complete (ranks of
 *   a local world missing, a send without its receive); it failed at once
 *   instead.
 *
 * Error codes of the %ATOMR_ERROR domain.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_ERROR_NO_DEVICE,
  ATOMR_ERROR_STALE,
  ATOMR_ERROR_CONTEXT_POISONED,
  ATOMR_ERROR_OUT_OF_MEMORY,
  ATOMR_ERROR_INVALID_ARGUMENT,
  ATOMR_ERROR_NOT_SUPPORTED,
  ATOMR_ERROR_COMPILE,
  ATOMR_ERROR_LIBRARY,
  ATOMR_ERROR_UNRECOVERABLE,
  ATOMR_ERROR_DEPENDENCY_FAILED,
  ATOMR_ERROR_TIMED_OUT,
  ATOMR_ERROR_WOULD_DEADLOCK,
} AtomrError;

ATOMR_AVAILABLE_IN_ALL
GQuark atomr_error_quark (void);

G_END_DECLS
