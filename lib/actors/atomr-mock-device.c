/* atomr-mock-device.c — the public face of the host test device
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "actors/atomr-mock-device.h"
#include "core/atomr-device-private.h"

/**
 * atomr_device_new_mock:
 *
 * Creates a mock device: a device with no GPU behind it, so that an
 * application can test how it drives actors on a machine without CUDA
 * (the "mock mode" of the seed).
 *
 * Everything up to the GPU is real: buffers (in host memory), the actors'
 * mailboxes, hazard tracking, cancellation, replies on the caller's
 * context, and every argument check, so a bad request fails with the same
 * %ATOMR_ERROR_INVALID_ARGUMENT as on a GPU.  A valid request to a library
 * actor (cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSOLVER) completes with
 * %ATOMR_ERROR_NOT_SUPPORTED, since no library is loaded.  Buffer uploads
 * and downloads work, so data round trips can be tested too, and so do
 * copies, strided tensor copies and fills (on the CPU).  Work completes as
 * soon as it is enqueued.  DLPack exchanges use kDLCPU.
 *
 * A mock device is never returned by [func@Atomr.Device.get]; each call makes a
 * new one, with ordinal -1.
 *
 * Returns: (transfer full): a new mock device
 *
 * Since: 0.2
 */
AtomrDevice *
atomr_device_new_mock (void)
{
  AtomrDevice *device = atomr_device_new_host ();

  /* Nobody calls atomr_host_stream_complete() outside our own tests. */
  atomr_device_set_host_autocomplete (device, TRUE);
  return device;
}

/**
 * atomr_device_is_mock:
 * @self: an [class@Atomr.Device]
 *
 * Tells whether @self has no GPU behind it (see [ctor@Atomr.Device.new_mock]).
 *
 * Returns: %TRUE when @self has no GPU behind it (see
 *   [ctor@Atomr.Device.new_mock])
 *
 * Since: 0.2
 */
gboolean
atomr_device_is_mock (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), FALSE);
  return atomr_device_is_host (self);
}
