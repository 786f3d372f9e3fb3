/* atomr-tensor.h — strided views of device buffers
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
#include "atomr-buffer.h"
#include "atomr-device.h"
#include "atomr-dtype.h"

G_BEGIN_DECLS

/**
 * ATOMR_TENSOR_MAX_DIMS:
 *
 * The largest rank of an [class@Atomr.Tensor].
 *
 * Since: 0.2
 */
#define ATOMR_TENSOR_MAX_DIMS 8

#define ATOMR_TYPE_TENSOR (atomr_tensor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrTensor, atomr_tensor, ATOMR, TENSOR, GObject)

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_new             (AtomrBuffer   *buffer,
                                            const gint64  *shape,
                                            guint          n_dims,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_new_strided     (AtomrBuffer   *buffer,
                                            AtomrDtype     dtype,
                                            guint64        byte_offset,
                                            const gint64  *shape,
                                            guint          n_dims,
                                            const gint64  *strides,
                                            guint          n_strides,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_new_for_buffer  (AtomrBuffer   *buffer);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_empty           (AtomrDevice   *device,
                                            AtomrDtype     dtype,
                                            const gint64  *shape,
                                            guint          n_dims,
                                            GError       **error);

ATOMR_AVAILABLE_IN_ALL
AtomrBuffer  *atomr_tensor_get_buffer      (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDevice  *atomr_tensor_get_device      (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype    atomr_tensor_get_dtype       (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
guint         atomr_tensor_get_n_dims      (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
const gint64 *atomr_tensor_get_shape       (AtomrTensor   *self,
                                            guint         *n_dims);
ATOMR_AVAILABLE_IN_ALL
const gint64 *atomr_tensor_get_strides     (AtomrTensor   *self,
                                            guint         *n_dims);
ATOMR_AVAILABLE_IN_ALL
gint64        atomr_tensor_get_dim         (AtomrTensor   *self,
                                            guint          dim);
ATOMR_AVAILABLE_IN_ALL
gint64        atomr_tensor_get_stride      (AtomrTensor   *self,
                                            guint          dim);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_tensor_get_byte_offset (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_tensor_get_n_elements  (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_tensor_get_byte_size   (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_tensor_get_device_pointer (AtomrTensor *self);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_tensor_is_contiguous   (AtomrTensor   *self);
ATOMR_AVAILABLE_IN_ALL
gchar        *atomr_tensor_to_string       (AtomrTensor   *self);

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_slice           (AtomrTensor   *self,
                                            guint          dim,
                                            gint64         start,
                                            gint64         stop,
                                            gint64         step,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_select          (AtomrTensor   *self,
                                            guint          dim,
                                            gint64         index,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_transpose       (AtomrTensor   *self,
                                            guint          dim0,
                                            guint          dim1,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_permute         (AtomrTensor   *self,
                                            const guint   *perm,
                                            guint          n_perm,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_reshape         (AtomrTensor   *self,
                                            const gint64  *shape,
                                            guint          n_dims,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_broadcast_to    (AtomrTensor   *self,
                                            const gint64  *shape,
                                            guint          n_dims,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_unsqueeze       (AtomrTensor   *self,
                                            guint          dim,
                                            GError       **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensor  *atomr_tensor_squeeze         (AtomrTensor   *self,
                                            GError       **error);

ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_tensor_broadcast_shapes (const gint64  *shape_a,
                                             guint          n_a,
                                             const gint64  *shape_b,
                                             guint          n_b,
                                             gint64       **out_shape,
                                             guint         *out_n_dims,
                                             GError       **error);

/* Copies of views: methods of every actor (atomr-tensor-copy.c). */
ATOMR_AVAILABLE_IN_ALL
void          atomr_actor_copy_tensor_async      (AtomrActor          *self,
                                                  AtomrTensor         *src,
                                                  AtomrTensor         *dst,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_actor_copy_tensor_finish     (AtomrActor          *self,
                                                  GAsyncResult        *result,
                                                  GError             **error);
ATOMR_AVAILABLE_IN_ALL
void          atomr_actor_upload_tensor_async    (AtomrActor          *self,
                                                  AtomrTensor         *tensor,
                                                  GBytes              *data,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_actor_upload_tensor_finish   (AtomrActor          *self,
                                                  GAsyncResult        *result,
                                                  GError             **error);
ATOMR_AVAILABLE_IN_ALL
void          atomr_actor_download_tensor_async  (AtomrActor          *self,
                                                  AtomrTensor         *tensor,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
GBytes       *atomr_actor_download_tensor_finish (AtomrActor          *self,
                                                  GAsyncResult        *result,
                                                  GError             **error);

ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_actor_copy_tensor_sync       (AtomrActor          *self,
                                                  AtomrTensor         *src,
                                                  AtomrTensor         *dst,
                                                  GCancellable        *cancellable,
                                                  GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_actor_upload_tensor_sync     (AtomrActor          *self,
                                                  AtomrTensor         *tensor,
                                                  GBytes              *data,
                                                  GCancellable        *cancellable,
                                                  GError             **error);
ATOMR_AVAILABLE_IN_ALL
GBytes       *atomr_actor_download_tensor_sync   (AtomrActor          *self,
                                                  AtomrTensor         *tensor,
                                                  GCancellable        *cancellable,
                                                  GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_actor_upload_tensor_from_address_sync (AtomrActor    *self,
                                                  AtomrTensor         *tensor,
                                                  guint64              address,
                                                  guint64              size,
                                                  GCancellable        *cancellable,
                                                  GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_actor_download_tensor_to_address_sync (AtomrActor    *self,
                                                  AtomrTensor         *tensor,
                                                  guint64              address,
                                                  guint64              size,
                                                  GCancellable        *cancellable,
                                                  GError             **error);

G_END_DECLS
