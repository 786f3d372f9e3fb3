/* atomr-buffer.h — device memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-device.h"
#include "atomr-dtype.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_BUFFER (atomr_buffer_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrBuffer, atomr_buffer, ATOMR, BUFFER, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrBuffer  *atomr_buffer_new             (AtomrDevice   *device,
                                            AtomrDtype     dtype,
                                            guint64        n_elements,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer  *atomr_buffer_new_with_shape  (AtomrDevice   *device,
                                            AtomrDtype     dtype,
                                            const gint64  *shape,
                                            guint          n_dims,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
AtomrDevice  *atomr_buffer_get_device      (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype    atomr_buffer_get_dtype       (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_buffer_get_n_elements  (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_buffer_get_byte_size   (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
const gint64 *atomr_buffer_get_shape       (AtomrBuffer   *self,
                                            guint         *n_dims);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_set_shape       (AtomrBuffer   *self,
                                            const gint64  *shape,
                                            guint          n_dims,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
guint         atomr_buffer_get_generation  (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_is_stale        (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_get_read_only   (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
void          atomr_buffer_mark_read_only  (AtomrBuffer   *self);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_check           (AtomrBuffer   *self,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_buffer_get_device_pointer (AtomrBuffer *self);

ATOMR_AVAILABLE_IN_ALL
void          atomr_buffer_upload_async    (AtomrBuffer         *self,
                                            GBytes              *data,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_upload_finish   (AtomrBuffer         *self,
                                            GAsyncResult        *result,
                                            GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_upload_sync     (AtomrBuffer         *self,
                                            GBytes              *data,
                                            GCancellable        *cancellable,
                                            GError             **error);
ATOMR_AVAILABLE_IN_ALL
void          atomr_buffer_download_async  (AtomrBuffer         *self,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
GBytes       *atomr_buffer_download_finish (AtomrBuffer         *self,
                                            GAsyncResult        *result,
                                            GError             **error);
ATOMR_AVAILABLE_IN_ALL
GBytes       *atomr_buffer_download_sync   (AtomrBuffer         *self,
                                            GCancellable        *cancellable,
                                            GError             **error);
ATOMR_AVAILABLE_IN_ALL
void          atomr_buffer_fill_async      (AtomrBuffer         *self,
                                            gdouble              value,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_fill_finish     (AtomrBuffer         *self,
                                            GAsyncResult        *result,
                                            GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_buffer_fill_sync       (AtomrBuffer         *self,
                                            gdouble              value,
                                            GCancellable        *cancellable,
                                            GError             **error);

ATOMR_AVAILABLE_IN_ALL
GBytes       *atomr_dtype_pack             (AtomrDtype           dtype,
                                            gdouble              real,
                                            gdouble              imag);

G_END_DECLS
