/* atomr-rng-actor.h — cuRAND on an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "core/atomr-actor.h"
#include "core/atomr-tensor.h"

G_BEGIN_DECLS

/**
 * AtomrRngKind:
 * @ATOMR_RNG_XORWOW: XORWOW pseudo-random generator (cuRAND's default).
 * @ATOMR_RNG_MRG32K3A: MRG32k3a combined multiple recursive generator.
 * @ATOMR_RNG_PHILOX: Philox4x32-10 counter-based generator.
 * @ATOMR_RNG_MTGP32: Mersenne Twister for GPUs (no offset).
 * @ATOMR_RNG_SOBOL: Sobol32 quasi-random sequence (no seed; see
 *   [property@Atomr.RngActor:dimensions]).
 *
 * The generator an [class@Atomr.RngActor] drives.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_RNG_XORWOW,
  ATOMR_RNG_MRG32K3A,
  ATOMR_RNG_PHILOX,
  ATOMR_RNG_MTGP32,
  ATOMR_RNG_SOBOL,
} AtomrRngKind;

/**
 * AtomrRngDistribution:
 * @ATOMR_RNG_UNIFORM: uniform on (0, 1] into f32, f64, f16 or bf16; raw
 *   32-bit integers into u32.  Both parameters must be 0.
 * @ATOMR_RNG_NORMAL: normal with mean @param1 and standard deviation
 *   @param2 (> 0), into f32, f64, f16 or bf16.
 * @ATOMR_RNG_LOG_NORMAL: exp of a normal of mean @param1 and standard
 *   deviation @param2 (> 0), into f32, f64, f16 or bf16.
 * @ATOMR_RNG_POISSON: Poisson with mean @param1 (λ > 0) into u32;
 *   @param2 must be 0.
 * @ATOMR_RNG_EXPONENTIAL: exponential with rate @param1 (λ > 0, mean
 *   1/λ), as −log(u)/λ of a uniform u, into f32, f64, f16 or bf16;
 *   @param2 must be 0.
 * @ATOMR_RNG_UNIFORM_RANGE: uniform on [@param1, @param2) (finite,
 *   @param1 < @param2), into f32, f64, f16 or bf16.  Rounding to the dtype
 *   can make a value equal @param2's neighbour, never @param2.
 * @ATOMR_RNG_INTEGER: whole numbers uniform on [@param1, @param2) (whole
 *   numbers, at most 2^32 values, fitting the dtype), into i32, i64 or
 *   u32, as @param1 + ⌊w·(@param2 − @param1)/2^32⌋ of a 32-bit word w
 *   (a bias below (@param2 − @param1)/2^32).
 * @ATOMR_RNG_BERNOULLI: 1 with probability @param1 (0 ≤ p ≤ 1), else 0,
 *   into u8, i32, f32, f64, f16 or bf16; @param2 must be 0.
 *
 * What [method@Atomr.RngActor.fill_async] draws.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_RNG_UNIFORM,
  ATOMR_RNG_NORMAL,
  ATOMR_RNG_LOG_NORMAL,
  ATOMR_RNG_POISSON,
  ATOMR_RNG_EXPONENTIAL,
  ATOMR_RNG_UNIFORM_RANGE,
  ATOMR_RNG_INTEGER,
  ATOMR_RNG_BERNOULLI,
} AtomrRngDistribution;

#define ATOMR_TYPE_RNG_ACTOR (atomr_rng_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrRngActor, atomr_rng_actor, ATOMR, RNG_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrRngActor *atomr_rng_actor_new            (AtomrDevice          *device,
                                               AtomrRngKind          kind,
                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
AtomrRngKind   atomr_rng_actor_get_kind       (AtomrRngActor        *self);
ATOMR_AVAILABLE_IN_ALL
guint64        atomr_rng_actor_get_seed       (AtomrRngActor        *self);
ATOMR_AVAILABLE_IN_ALL
void           atomr_rng_actor_set_seed       (AtomrRngActor        *self,
                                               guint64               seed);
ATOMR_AVAILABLE_IN_ALL
guint64        atomr_rng_actor_get_offset     (AtomrRngActor        *self);
ATOMR_AVAILABLE_IN_ALL
void           atomr_rng_actor_set_offset     (AtomrRngActor        *self,
                                               guint64               offset);
ATOMR_AVAILABLE_IN_ALL
guint          atomr_rng_actor_get_dimensions (AtomrRngActor        *self);
ATOMR_AVAILABLE_IN_ALL
void           atomr_rng_actor_set_dimensions (AtomrRngActor        *self,
                                               guint                 dimensions);

ATOMR_AVAILABLE_IN_ALL
void           atomr_rng_actor_fill_async     (AtomrRngActor        *self,
                                               AtomrBuffer          *buffer,
                                               AtomrRngDistribution  distribution,
                                               gdouble               param1,
                                               gdouble               param2,
                                               GCancellable         *cancellable,
                                               GAsyncReadyCallback   callback,
                                               gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean       atomr_rng_actor_fill_finish    (AtomrRngActor        *self,
                                               GAsyncResult         *result,
                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
void           atomr_rng_actor_fill_range_async  (AtomrRngActor        *self,
                                                  AtomrBuffer          *buffer,
                                                  guint64               first,
                                                  guint64               count,
                                                  AtomrRngDistribution  distribution,
                                                  gdouble               param1,
                                                  gdouble               param2,
                                                  GCancellable         *cancellable,
                                                  GAsyncReadyCallback   callback,
                                                  gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean       atomr_rng_actor_fill_range_finish (AtomrRngActor        *self,
                                                  GAsyncResult         *result,
                                                  GError              **error);

ATOMR_AVAILABLE_IN_ALL
void           atomr_rng_actor_fill_tensor_async  (AtomrRngActor        *self,
                                                   AtomrTensor          *tensor,
                                                   AtomrRngDistribution  distribution,
                                                   gdouble               param1,
                                                   gdouble               param2,
                                                   GCancellable         *cancellable,
                                                   GAsyncReadyCallback   callback,
                                                   gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean       atomr_rng_actor_fill_tensor_finish (AtomrRngActor        *self,
                                                   GAsyncResult         *result,
                                                   GError              **error);

G_END_DECLS
