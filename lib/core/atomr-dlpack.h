/* atomr-dlpack.h — zero-copy exchange with DLPack and
 * __cuda_array_interface__ producers and consumers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-actor.h"
#include "atomr-tensor.h"

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
guint64      atomr_tensor_export_dlpack      (AtomrTensor    *self,
                                              gboolean        versioned,
                                              GError        **error);
ATOMR_AVAILABLE_IN_ALL
AtomrTensor *atomr_tensor_import_dlpack      (guint64         managed_tensor,
                                              gboolean        versioned,
                                              AtomrDevice    *device,
                                              GError        **error);
ATOMR_AVAILABLE_IN_ALL
AtomrTensor *atomr_tensor_new_for_device_pointer (AtomrDevice *device,
                                              AtomrDtype      dtype,
                                              guint64         device_pointer,
                                              const gint64   *shape,
                                              guint           n_dims,
                                              const gint64   *strides,
                                              guint           n_strides,
                                              GDestroyNotify  notify,
                                              gpointer        user_data,
                                              GError        **error);
ATOMR_AVAILABLE_IN_ALL
const gchar *atomr_dtype_get_typestr         (AtomrDtype      dtype);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_dtype_from_typestr        (const gchar    *typestr,
                                              AtomrDtype     *dtype);

G_END_DECLS
