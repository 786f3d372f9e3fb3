/* atomr-blas-actor-private.h — what tests see of the BLAS actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "actors/blas/atomr-blas-actor.h"

G_BEGIN_DECLS

/* Products run through cuBLASLt (the rest took the classic routines). */
guint64 atomr_blas_actor_get_lt_gemm_count (AtomrBlasActor *self);

G_END_DECLS
