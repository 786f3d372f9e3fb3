/* atomr-fft-actor.h — cuFFT on an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "core/atomr-actor.h"
#include "atomr-fft-plan.h"
#include "core/atomr-tensor.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_FFT_ACTOR (atomr_fft_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrFftActor, atomr_fft_actor, ATOMR, FFT_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrFftActor *atomr_fft_actor_new                    (AtomrDevice         *device,
                                                       GError             **error);
ATOMR_AVAILABLE_IN_ALL
guint          atomr_fft_actor_get_plan_cache_capacity (AtomrFftActor      *self);
ATOMR_AVAILABLE_IN_ALL
void           atomr_fft_actor_set_plan_cache_capacity (AtomrFftActor      *self,
                                                       guint                capacity);
ATOMR_AVAILABLE_IN_ALL
guint64        atomr_fft_actor_get_plan_cache_hits    (AtomrFftActor       *self);
ATOMR_AVAILABLE_IN_ALL
guint64        atomr_fft_actor_get_plan_cache_misses  (AtomrFftActor       *self);
ATOMR_AVAILABLE_IN_ALL
guint          atomr_fft_actor_get_plan_cache_size    (AtomrFftActor       *self);

ATOMR_AVAILABLE_IN_ALL
void           atomr_fft_actor_execute_async          (AtomrFftActor       *self,
                                                       AtomrFftPlan        *plan,
                                                       AtomrFftDirection    direction,
                                                       AtomrBuffer         *input,
                                                       AtomrBuffer         *output,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean       atomr_fft_actor_execute_finish         (AtomrFftActor       *self,
                                                       GAsyncResult        *result,
                                                       GError             **error);
ATOMR_AVAILABLE_IN_ALL
void           atomr_fft_actor_execute_normalized_async  (AtomrFftActor         *self,
                                                          AtomrFftPlan          *plan,
                                                          AtomrFftDirection      direction,
                                                          AtomrFftNormalization  normalization,
                                                          AtomrBuffer           *input,
                                                          AtomrBuffer           *output,
                                                          GCancellable          *cancellable,
                                                          GAsyncReadyCallback    callback,
                                                          gpointer               user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean       atomr_fft_actor_execute_normalized_finish (AtomrFftActor         *self,
                                                          GAsyncResult          *result,
                                                          GError               **error);
ATOMR_AVAILABLE_IN_ALL
guint64        atomr_fft_actor_get_work_area_size     (AtomrFftActor       *self);
ATOMR_AVAILABLE_IN_ALL
void           atomr_fft_actor_execute_tensor_async   (AtomrFftActor         *self,
                                                       guint                  rank,
                                                       AtomrFftDirection      direction,
                                                       AtomrFftNormalization  normalization,
                                                       AtomrTensor           *input,
                                                       AtomrTensor           *output,
                                                       GCancellable          *cancellable,
                                                       GAsyncReadyCallback    callback,
                                                       gpointer               user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean       atomr_fft_actor_execute_tensor_finish  (AtomrFftActor         *self,
                                                       GAsyncResult          *result,
                                                       GError               **error);

G_END_DECLS
