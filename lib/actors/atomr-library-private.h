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
#include "core/atomr-tensor-private.h"

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

/* A dimension, leading dimension or increment that a 32-bit library
 * interface takes: 0 <= value <= G_MAXINT. */
gboolean atomr_check_int32         (const gchar  *op,
                                    const gchar  *arg,
                                    gint64        value,
                                    GError      **error);
/* A column-major @rows x @cols matrix in @buffer with leading dimension
 * @ld (named @ld_arg): ld >= MAX (1, rows), both fit 32 bits, and the
 * buffer holds ld * (cols - 1) + rows elements (plus @stride * (@batch - 1)
 * for a strided batch; pass 0 and 1 for a single matrix, and
 * ATOMR_STRIDE_PACKED for a packed batch whose stride is ld × cols).  All
 * arithmetic is checked. */
#define ATOMR_STRIDE_PACKED G_MININT64
gboolean atomr_check_matrix        (const gchar  *op,
                                    const gchar  *arg,
                                    AtomrBuffer  *buffer,
                                    gint64        rows,
                                    gint64        cols,
                                    const gchar  *ld_arg,
                                    gint64        ld,
                                    gint64        stride,
                                    gint64        batch,
                                    GError      **error);
/* A strided vector of @n elements with increment @inc (named @inc_arg):
 * inc >= 1 and the buffer holds 1 + (n - 1) * inc elements. */
gboolean atomr_check_vector        (const gchar  *op,
                                    const gchar  *arg,
                                    AtomrBuffer  *buffer,
                                    gint64        n,
                                    const gchar  *inc_arg,
                                    gint64        inc,
                                    GError      **error);
/* One buffer or view argument of an operation, for the aliasing check:
 * the elements [offset, offset + count) of @buffer (count 0: to the end),
 * or the bytes @tensor can touch.  Arguments that are NULL are skipped, so
 * optional arguments can be listed as they are. */
typedef struct {
  const gchar *name;
  AtomrBuffer *buffer;
  guint64      offset;
  guint64      count;
  AtomrTensor *tensor;
} AtomrOperand;

#define ATOMR_OPERAND(name, buffer) ((AtomrOperand) { (name), (buffer), 0, 0, NULL })
#define ATOMR_OPERAND_RANGE(name, buffer, offset, count) \
  ((AtomrOperand) { (name), (buffer), (offset), (count), NULL })
#define ATOMR_OPERAND_TENSOR(name, tensor) ((AtomrOperand) { (name), NULL, 0, 0, (tensor) })
#define ATOMR_OPERANDS(...) ((const AtomrOperand[]) { __VA_ARGS__ }), \
  (guint) (sizeof ((const AtomrOperand[]) { __VA_ARGS__ }) / sizeof (AtomrOperand))

/* No output shares a byte with any input or any other output: the GPU
 * libraries read and write them concurrently, so any overlap gives
 * undefined results.  Operations that work in place pass the in-place
 * buffer once, as an output only.  Two arguments overlap when their byte
 * ranges intersect in the same allocation (the same buffer, or buffers
 * wrapping the same memory); views compare with atomr_tensor_overlaps().
 * Fails with ATOMR_ERROR_INVALID_ARGUMENT naming both arguments. */
gboolean atomr_check_no_alias      (const gchar        *op,
                                    const AtomrOperand *outputs,
                                    guint               n_outputs,
                                    const AtomrOperand *inputs,
                                    guint               n_inputs,
                                    GError            **error);

/* Overflow-checked products and sums of sizes derived from user numbers:
 * FALSE with ATOMR_ERROR_INVALID_ARGUMENT "<op>: <what> overflows" when the
 * exact result does not fit 64 bits (or exceeds @limit when non-zero). */
gboolean atomr_size_mul            (const gchar  *op,
                                    const gchar  *what,
                                    guint64       a,
                                    guint64       b,
                                    guint64      *result,
                                    GError      **error);
gboolean atomr_size_add            (const gchar  *op,
                                    const gchar  *what,
                                    guint64       a,
                                    guint64       b,
                                    guint64      *result,
                                    GError      **error);

/* @value is one of the @n_values members of an enum named @type_name. */
gboolean atomr_check_enum          (const gchar  *op,
                                    const gchar  *arg,
                                    gint          value,
                                    gint          n_values,
                                    const gchar  *type_name,
                                    GError      **error);

/* 1 <= value <= G_MAXINT32, for libraries with a 32-bit interface. */
gboolean atomr_check_int32_range   (const gchar  *op,
                                    const gchar  *arg,
                                    gint64        value,
                                    GError      **error);

G_END_DECLS
