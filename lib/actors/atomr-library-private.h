/* atomr-library-private.h — what every library actor shares
 *
 * The envelope (core/atomr-actor-private.h) runs every operation.  What an
 * operation adds is its request, its validation and one enqueue function:
 *
 *   void
 *   atomr_blas_actor_axpy_async (AtomrBlasActor *self, gdouble alpha,
 *                                AtomrBuffer *x, AtomrBuffer *y,
 *                                GCancellable *cancellable,
 *                                GAsyncReadyCallback callback, gpointer user_data)
 *   {
 *     AtomrOp *op = atomr_op_new (self, "axpy", atomr_blas_actor_axpy_async,
 *                                 cancellable, callback, user_data);
 *     GError *error = NULL;
 *
 *     if (!atomr_check_float_buffer ("axpy", "x", x, &error) ||
 *         !atomr_check_same_dtype ("axpy", "x", x, "y", y, &error) ||
 *         !atomr_check_min_elements ("axpy", "y", y, atomr_buffer_get_n_elements (x), &error))
 *       return atomr_op_fail (op, error);
 *     ...request, atomr_op_read (op, x), atomr_op_write (op, y), enqueue, submit
 *   }
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "core/atomr-actor-private.h"
#include "core/atomr-error.h"

G_BEGIN_DECLS

/* Each check returns TRUE, or FALSE with an ATOMR_ERROR_INVALID_ARGUMENT
 * that names the operation, the argument and the offending value. */
gboolean atomr_check_buffer        (const gchar  *op,
                                    const gchar  *arg,
                                    AtomrBuffer  *buffer,
                                    GError      **error);
gboolean atomr_check_dtype         (const gchar  *op,
                                    const gchar  *arg,
                                    AtomrBuffer  *buffer,
                                    AtomrDtype    expected,
                                    GError      **error);
/* dtype is one of the @n entries of @allowed */
gboolean atomr_check_dtype_in      (const gchar      *op,
                                    const gchar      *arg,
                                    AtomrBuffer      *buffer,
                                    const AtomrDtype *allowed,
                                    guint             n,
                                    GError          **error);
gboolean atomr_check_same_dtype    (const gchar  *op,
                                    const gchar  *arg_a,
                                    AtomrBuffer  *a,
                                    const gchar  *arg_b,
                                    AtomrBuffer  *b,
                                    GError      **error);
gboolean atomr_check_min_elements  (const gchar  *op,
                                    const gchar  *arg,
                                    AtomrBuffer  *buffer,
                                    guint64       needed,
                                    GError      **error);
gboolean atomr_check_positive      (const gchar  *op,
                                    const gchar  *arg,
                                    gint64        value,
                                    GError      **error);
gboolean atomr_check_non_negative  (const gchar  *op,
                                    const gchar  *arg,
                                    gint64        value,
                                    GError      **error);
/* leading dimension: ld >= MAX (1, rows) */
gboolean atomr_check_ld            (const gchar  *op,
                                    const gchar  *arg,
                                    gint64        ld,
                                    gint64        rows,
                                    GError      **error);
gboolean atomr_check_distinct      (const gchar  *op,
                                    const gchar  *arg_a,
                                    AtomrBuffer  *a,
                                    const gchar  *arg_b,
                                    AtomrBuffer  *b,
                                    GError      **error);

/* ATOMR_ERROR_LIBRARY "<library>: <call> failed with <status_name> (<status>)",
 * or ATOMR_ERROR_OUT_OF_MEMORY when @out_of_memory, or
 * ATOMR_ERROR_NOT_SUPPORTED when @not_supported. */
gboolean atomr_library_check       (gboolean      ok,
                                    const gchar  *library,
                                    const gchar  *call,
                                    const gchar  *status_name,
                                    gint          status,
                                    gboolean      out_of_memory,
                                    gboolean      not_supported,
                                    GError      **error);

G_END_DECLS

G_BEGIN_DECLS

/* A column-major matrix (or @batch of them, @ld × @cols apart) of @rows ×
 * @cols with leading dimension @ld (named @ld_arg) fits in @buffer. */
gboolean atomr_check_matrix        (const gchar  *op,
                                    const gchar  *arg,
                                    AtomrBuffer  *buffer,
                                    gint64        rows,
                                    gint64        cols,
                                    const gchar  *ld_arg,
                                    gint64        ld,
                                    gint64        batch,
                                    GError      **error);
/* 1 <= value <= G_MAXINT32, for libraries with a 32-bit interface. */
gboolean atomr_check_int32_range   (const gchar  *op,
                                    const gchar  *arg,
                                    gint64        value,
                                    GError      **error);

G_END_DECLS
