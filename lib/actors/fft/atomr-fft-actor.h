/* atomr-fft-actor.h — cuFFT on an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "core/atomr-actor.h"
#include "atomr-fft-plan.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_FFT_ACTOR (atomr_fft_actor_get_type ())
G_DECLARE_FINAL_TYPE (AtomrFftActor, atomr_fft_actor, ATOMR, FFT_ACTOR, AtomrActor)

AtomrFftActor *atomr_fft_actor_new                    (AtomrDevice         *device,
                                                       GError             **error);
guint          atomr_fft_actor_get_plan_cache_capacity (AtomrFftActor      *self);
void           atomr_fft_actor_set_plan_cache_capacity (AtomrFftActor      *self,
                                                       guint                capacity);
guint64        atomr_fft_actor_get_plan_cache_hits    (AtomrFftActor       *self);
guint64        atomr_fft_actor_get_plan_cache_misses  (AtomrFftActor       *self);
guint          atomr_fft_actor_get_plan_cache_size    (AtomrFftActor       *self);

void           atomr_fft_actor_execute_async          (AtomrFftActor       *self,
                                                       AtomrFftPlan        *plan,
                                                       AtomrFftDirection    direction,
                                                       AtomrBuffer         *input,
                                                       AtomrBuffer         *output,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
gboolean       atomr_fft_actor_execute_finish         (AtomrFftActor       *self,
                                                       GAsyncResult        *result,
                                                       GError             **error);
void           atomr_fft_actor_execute_normalized_async  (AtomrFftActor         *self,
                                                          AtomrFftPlan          *plan,
                                                          AtomrFftDirection      direction,
                                                          AtomrFftNormalization  normalization,
                                                          AtomrBuffer           *input,
                                                          AtomrBuffer           *output,
                                                          GCancellable          *cancellable,
                                                          GAsyncReadyCallback    callback,
                                                          gpointer               user_data);
gboolean       atomr_fft_actor_execute_normalized_finish (AtomrFftActor         *self,
                                                          GAsyncResult          *result,
                                                          GError               **error);
guint64        atomr_fft_actor_get_work_area_size     (AtomrFftActor       *self);

G_END_DECLS
