/* atomr-cudnn-rnn.h — recurrent networks (LSTM, GRU, plain RNNs) on the
 * cuDNN actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "actors/cudnn/atomr-cudnn-actor.h"

G_BEGIN_DECLS

/**
 * AtomrRnnMode:
 * @ATOMR_RNN_RELU: h' = relu (W·x + R·h + b_W + b_R)
 * @ATOMR_RNN_TANH: h' = tanh (W·x + R·h + b_W + b_R)
 * @ATOMR_RNN_LSTM: long short-term memory: input, forget, cell and output
 *   gates, with a cell state c
 * @ATOMR_RNN_GRU: gated recurrent unit: reset, update and new gates
 *
 * The cell of an [class@Atomr.Rnn].
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_RNN_RELU,
  ATOMR_RNN_TANH,
  ATOMR_RNN_LSTM,
  ATOMR_RNN_GRU,
} AtomrRnnMode;

#define ATOMR_TYPE_RNN (atomr_rnn_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrRnn, atomr_rnn, ATOMR, RNN, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrRnn     *atomr_rnn_new                (AtomrRnnMode  mode,
                                            guint         input_size,
                                            guint         hidden_size,
                                            guint         n_layers,
                                            gboolean      bidirectional);
ATOMR_AVAILABLE_IN_ALL
AtomrRnnMode  atomr_rnn_get_mode           (AtomrRnn     *self);
ATOMR_AVAILABLE_IN_ALL
guint         atomr_rnn_get_input_size     (AtomrRnn     *self);
ATOMR_AVAILABLE_IN_ALL
guint         atomr_rnn_get_hidden_size    (AtomrRnn     *self);
ATOMR_AVAILABLE_IN_ALL
guint         atomr_rnn_get_n_layers       (AtomrRnn     *self);
ATOMR_AVAILABLE_IN_ALL
gboolean      atomr_rnn_get_bidirectional  (AtomrRnn     *self);
ATOMR_AVAILABLE_IN_ALL
guint64       atomr_rnn_get_n_weights      (AtomrRnn     *self);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_rnn_forward_async          (AtomrCudnnActor     *self,
                                                       AtomrRnn            *rnn,
                                                       gboolean             training,
                                                       AtomrTensor         *x,
                                                       AtomrTensor         *hx,
                                                       AtomrTensor         *cx,
                                                       AtomrTensor         *w,
                                                       AtomrTensor         *y,
                                                       AtomrTensor         *hy,
                                                       AtomrTensor         *cy,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_rnn_forward_finish         (AtomrCudnnActor     *self,
                                                       GAsyncResult        *result,
                                                       GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_rnn_backward_data_async    (AtomrCudnnActor     *self,
                                                       AtomrRnn            *rnn,
                                                       AtomrTensor         *y,
                                                       AtomrTensor         *dy,
                                                       AtomrTensor         *dhy,
                                                       AtomrTensor         *dcy,
                                                       AtomrTensor         *hx,
                                                       AtomrTensor         *cx,
                                                       AtomrTensor         *w,
                                                       AtomrTensor         *dx,
                                                       AtomrTensor         *dhx,
                                                       AtomrTensor         *dcx,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_rnn_backward_data_finish   (AtomrCudnnActor     *self,
                                                       GAsyncResult        *result,
                                                       GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_rnn_backward_weights_async (AtomrCudnnActor     *self,
                                                       AtomrRnn            *rnn,
                                                       gboolean             accumulate,
                                                       AtomrTensor         *x,
                                                       AtomrTensor         *hx,
                                                       AtomrTensor         *y,
                                                       AtomrTensor         *dw,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_rnn_backward_weights_finish (AtomrCudnnActor    *self,
                                                       GAsyncResult        *result,
                                                       GError             **error);

G_END_DECLS
