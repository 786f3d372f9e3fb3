/* atomr-cusolver-loader-private.h — cuSOLVER, loaded on first use
 *
 * libcusolver needs libnvJitLink (and cuSPARSE): linking it would map
 * them into every process using libatomr, which breaks the promise that a
 * process that only reads cached kernels never loads nvJitLink.  So the
 * solver actor dlopen()s cuSOLVER when the first one is made on a GPU,
 * and calls it through this table, typed from the headers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
/* cusolverDn.h declares a function with () */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cusolverDn.h>
#pragma GCC diagnostic pop

G_BEGIN_DECLS

#define ATOMR_CUSOLVER_FUNCS(X) \
  X (cusolverDnCreate) \
  X (cusolverDnDestroy) \
  X (cusolverDnSetStream) \
  X (cusolverDnCreateParams) \
  X (cusolverDnDestroyParams) \
  X (cusolverDnCreateGesvdjInfo) \
  X (cusolverDnDestroyGesvdjInfo) \
  X (cusolverDnXgetrf_bufferSize) \
  X (cusolverDnXgetrf) \
  X (cusolverDnXgetrs) \
  X (cusolverDnXgeqrf_bufferSize) \
  X (cusolverDnXgeqrf) \
  X (cusolverDnXpotrf_bufferSize) \
  X (cusolverDnXpotrf) \
  X (cusolverDnXpotrs) \
  X (cusolverDnXgesvd_bufferSize) \
  X (cusolverDnXgesvd) \
  X (cusolverDnXsyevd_bufferSize) \
  X (cusolverDnXsyevd) \
  X (cusolverDnSorgqr_bufferSize) \
  X (cusolverDnDorgqr_bufferSize) \
  X (cusolverDnCungqr_bufferSize) \
  X (cusolverDnZungqr_bufferSize) \
  X (cusolverDnSorgqr) \
  X (cusolverDnDorgqr) \
  X (cusolverDnCungqr) \
  X (cusolverDnZungqr) \
  X (cusolverDnSgesvdjBatched_bufferSize) \
  X (cusolverDnDgesvdjBatched_bufferSize) \
  X (cusolverDnCgesvdjBatched_bufferSize) \
  X (cusolverDnZgesvdjBatched_bufferSize) \
  X (cusolverDnSgesvdjBatched) \
  X (cusolverDnDgesvdjBatched) \
  X (cusolverDnCgesvdjBatched) \
  X (cusolverDnZgesvdjBatched) \
  X (cusolverDnSsygvd_bufferSize) \
  X (cusolverDnDsygvd_bufferSize) \
  X (cusolverDnChegvd_bufferSize) \
  X (cusolverDnZhegvd_bufferSize) \
  X (cusolverDnSsygvd) \
  X (cusolverDnDsygvd) \
  X (cusolverDnChegvd) \
  X (cusolverDnZhegvd) \
  X (cusolverDnSpotrfBatched) \
  X (cusolverDnDpotrfBatched) \
  X (cusolverDnCpotrfBatched) \
  X (cusolverDnZpotrfBatched) \
  X (cusolverDnSpotrsBatched) \
  X (cusolverDnDpotrsBatched) \
  X (cusolverDnCpotrsBatched) \
  X (cusolverDnZpotrsBatched) \
  X (cusolverDnSgesvdj_bufferSize) \
  X (cusolverDnDgesvdj_bufferSize) \
  X (cusolverDnCgesvdj_bufferSize) \
  X (cusolverDnZgesvdj_bufferSize) \
  X (cusolverDnSgesvdj) \
  X (cusolverDnDgesvdj) \
  X (cusolverDnCgesvdj) \
  X (cusolverDnZgesvdj) \
  X (cusolverDnCreateSyevjInfo) \
  X (cusolverDnDestroySyevjInfo) \
  X (cusolverDnSsyevj_bufferSize) \
  X (cusolverDnDsyevj_bufferSize) \
  X (cusolverDnCheevj_bufferSize) \
  X (cusolverDnZheevj_bufferSize) \
  X (cusolverDnSsyevj) \
  X (cusolverDnDsyevj) \
  X (cusolverDnCheevj) \
  X (cusolverDnZheevj) \
  X (cusolverDnSSgels_bufferSize) \
  X (cusolverDnDDgels_bufferSize) \
  X (cusolverDnCCgels_bufferSize) \
  X (cusolverDnZZgels_bufferSize) \
  X (cusolverDnSSgels) \
  X (cusolverDnDDgels) \
  X (cusolverDnCCgels) \
  X (cusolverDnZZgels) \
  X (cusolverDnXgeev_bufferSize) \
  X (cusolverDnXgeev)

typedef struct {
#define ATOMR_CUSOLVER_FIELD(name) __typeof__ (&name) name;
  ATOMR_CUSOLVER_FUNCS (ATOMR_CUSOLVER_FIELD)
#undef ATOMR_CUSOLVER_FIELD
} AtomrCusolverLib;

/* Loads cuSOLVER once (thread-safe); ATOMR_ERROR_NOT_SUPPORTED naming the
 * paths tried, or the missing entry point. */
const AtomrCusolverLib *atomr_cusolver_load (GError **error);

/* The table once atomr_cusolver_load() succeeded, else NULL. */
const AtomrCusolverLib *atomr_cusolver_get  (void);

G_END_DECLS
