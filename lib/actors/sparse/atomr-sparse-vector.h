/* atomr-sparse-vector.h — sparse vectors over device buffers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "core/atomr-buffer.h"
#include "core/atomr-device.h"
#include "core/atomr-dtype.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_SPARSE_VECTOR (atomr_sparse_vector_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrSparseVector, atomr_sparse_vector, ATOMR, SPARSE_VECTOR, GObject)

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseVector *atomr_sparse_vector_new            (gint64        size,
                                                       gint64        nnz,
                                                       AtomrBuffer  *indices,
                                                       AtomrBuffer  *values,
                                                       GError      **error);
ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrSparseVector *atomr_sparse_vector_new_from_bytes (AtomrDevice   *device,
                                                       gint64         size,
                                                       AtomrDtype     index_dtype,
                                                       GBytes        *indices,
                                                       AtomrDtype     value_dtype,
                                                       GBytes        *values,
                                                       GCancellable  *cancellable,
                                                       GError       **error);

ATOMR_AVAILABLE_IN_ALL
gint64       atomr_sparse_vector_get_size        (AtomrSparseVector *self);
ATOMR_AVAILABLE_IN_ALL
gint64       atomr_sparse_vector_get_nnz         (AtomrSparseVector *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype   atomr_sparse_vector_get_index_dtype (AtomrSparseVector *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDtype   atomr_sparse_vector_get_value_dtype (AtomrSparseVector *self);
ATOMR_AVAILABLE_IN_ALL
AtomrDevice *atomr_sparse_vector_get_device      (AtomrSparseVector *self);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer *atomr_sparse_vector_get_indices     (AtomrSparseVector *self);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer *atomr_sparse_vector_get_values      (AtomrSparseVector *self);

G_END_DECLS
