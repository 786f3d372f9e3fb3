/* atomr-tensor-copy-private.h — planning strided copies as 1-D/2-D/3-D
 * memcpy pieces
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One cuMemcpy{,2D,3D}Async: @depth slices of @height rows of @width bytes.
 * Offsets are in bytes from element (0, …, 0) of each side (negative when
 * a reversed dimension was flipped); pitches are bytes between rows, slices
 * bytes between slices (a multiple of the pitch: cuMemcpy3D's height is
 * slice / pitch). */
typedef struct {
  gint64  src_offset, dst_offset;
  guint64 width, height, depth;
  guint64 src_pitch, dst_pitch;
  guint64 src_slice, dst_slice;
} AtomrCopyPiece;

/* The most pieces a copy may need before it is refused as NOT_SUPPORTED. */
#define ATOMR_COPY_MAX_PIECES 65536

/* Plans dst[i] = src[i] for every index of @shape, elements of @elem bytes.
 * Returns the pieces (AtomrCopyPiece, empty for an empty shape), or NULL
 * with NOT_SUPPORTED when the layout needs more than ATOMR_COPY_MAX_PIECES
 * (dimensions no pitch expresses — reversed on one side only, broadcast,
 * overlapping rows — are looped over, one piece per index). */
GArray *atomr_copy_plan          (gsize          elem,
                                  guint          n_dims,
                                  const gint64  *shape,
                                  const gint64  *src_strides,
                                  const gint64  *dst_strides,
                                  GError       **error);

/* Runs the pieces on host memory exactly as the driver would. */
void    atomr_copy_plan_run_host (GArray        *pieces,
                                  const guint8  *src,
                                  guint8        *dst);

G_END_DECLS
