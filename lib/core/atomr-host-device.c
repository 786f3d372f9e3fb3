/* atomr-host-device.c — a device without a GPU, for tests of code that
 * uses atomr
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-device-private.h"
#include "atomr-host-device.h"

/**
 * atomr_device_new_for_testing:
 *
 * A device with no GPU behind it, for the tests of applications and
 * bindings on machines without one: buffers live in host memory, actors
 * run the whole envelope (validation, hazards, replies) and do copies,
 * uploads, downloads and fills on the CPU; library work (cuBLAS, cuFFT...)
 * fails with %ATOMR_ERROR_NOT_SUPPORTED after validation.  Every operation
 * completes as soon as it is enqueued.  DLPack exchanges use kDLCPU.
 *
 * Returns: (transfer full): a new host test device (ordinal -1)
 *
 * Since: 0.2
 */
AtomrDevice *
atomr_device_new_for_testing (void)
{
  AtomrDevice *device = atomr_device_new_host ();

  atomr_device_set_host_autocomplete (device, TRUE);
  return device;
}
