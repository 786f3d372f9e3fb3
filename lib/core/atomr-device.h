/* atomr-device.h — one GPU, its context and its supervisor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * AtomrSupervisorPolicy:
 * @ATOMR_SUPERVISOR_RESTART: rebuild the context at once, bump the
 *   generation, and go on; older buffers and kernels fail as stale.
 * @ATOMR_SUPERVISOR_STOP: stop the device; every later request fails with
 *   %ATOMR_ERROR_UNRECOVERABLE.
 * @ATOMR_SUPERVISOR_ESCALATE: leave the context poisoned and emit
 *   [signal@Atomr.Device::context-poisoned]; the application decides (usually by
 *   calling [method@Atomr.Device.reset]).
 *
 * What a device does when a sticky CUDA error poisons its context.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_SUPERVISOR_RESTART,
  ATOMR_SUPERVISOR_STOP,
  ATOMR_SUPERVISOR_ESCALATE,
} AtomrSupervisorPolicy;

/**
 * AtomrDeviceState:
 * @ATOMR_DEVICE_STATE_READY: the context accepts work.
 * @ATOMR_DEVICE_STATE_POISONED: a sticky error broke the context.
 * @ATOMR_DEVICE_STATE_STOPPED: the supervisor stopped the device.
 *
 * The health of a device's context.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_DEVICE_STATE_READY,
  ATOMR_DEVICE_STATE_POISONED,
  ATOMR_DEVICE_STATE_STOPPED,
} AtomrDeviceState;

#define ATOMR_TYPE_DEVICE (atomr_device_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrDevice, atomr_device, ATOMR, DEVICE, GObject)

ATOMR_AVAILABLE_IN_ALL
gint                  atomr_device_get_count             (void);
ATOMR_AVAILABLE_IN_ALL
AtomrDevice          *atomr_device_get                   (gint          ordinal,
                                                          GError      **error);
ATOMR_AVAILABLE_IN_ALL
gint                  atomr_device_get_ordinal           (AtomrDevice  *self);
ATOMR_AVAILABLE_IN_ALL
const gchar          *atomr_device_get_name              (AtomrDevice  *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_device_get_compute_capability (AtomrDevice *self,
                                                          gint         *major,
                                                          gint         *minor);
ATOMR_AVAILABLE_IN_ALL
gchar                *atomr_device_get_arch              (AtomrDevice  *self);
ATOMR_AVAILABLE_IN_ALL
guint64               atomr_device_get_total_memory      (AtomrDevice  *self);
ATOMR_AVAILABLE_IN_ALL
gint                  atomr_device_get_multiprocessor_count (AtomrDevice *self);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_device_get_generation        (AtomrDevice  *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDeviceState      atomr_device_get_state             (AtomrDevice  *self);
ATOMR_AVAILABLE_IN_ALL
AtomrSupervisorPolicy atomr_device_get_supervisor_policy (AtomrDevice  *self);
ATOMR_AVAILABLE_IN_ALL
void                  atomr_device_set_supervisor_policy (AtomrDevice  *self,
                                                          AtomrSupervisorPolicy policy);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_device_reset                 (AtomrDevice  *self,
                                                          GError      **error);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_device_synchronize           (AtomrDevice  *self,
                                                          GError      **error);
ATOMR_AVAILABLE_IN_ALL
gboolean              atomr_device_get_memory_info       (AtomrDevice  *self,
                                                          guint64      *free_bytes,
                                                          guint64      *total_bytes,
                                                          GError      **error);
ATOMR_AVAILABLE_IN_ALL
gint                  atomr_device_get_driver_version    (void);

G_END_DECLS
