/* atomr-nvrtc-actor.h — compiles CUDA C++ and launches the kernels
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "core/atomr-actor.h"
#include "atomr-compile-options.h"
#include "atomr-kernel.h"
#include "atomr-kernel-cache.h"
#include "atomr-module.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_NVRTC_ACTOR (atomr_nvrtc_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrNvrtcActor, atomr_nvrtc_actor, ATOMR, NVRTC_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrNvrtcActor  *atomr_nvrtc_actor_new                 (AtomrDevice          *device,
                                                         GError              **error);
ATOMR_AVAILABLE_IN_ALL
AtomrKernelCache *atomr_nvrtc_actor_get_cache           (AtomrNvrtcActor      *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_nvrtc_actor_set_cache           (AtomrNvrtcActor      *self,
                                                         AtomrKernelCache     *cache);
ATOMR_AVAILABLE_IN_ALL
void              atomr_nvrtc_actor_compile_async       (AtomrNvrtcActor      *self,
                                                         const gchar          *source,
                                                         const gchar          *kernel_name,
                                                         AtomrCompileOptions  *options,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrKernel      *atomr_nvrtc_actor_compile_finish      (AtomrNvrtcActor      *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);
ATOMR_AVAILABLE_IN_ALL
void              atomr_nvrtc_actor_compile_module_async (AtomrNvrtcActor     *self,
                                                         const gchar          *source,
                                                         AtomrCompileOptions  *options,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
AtomrModule      *atomr_nvrtc_actor_compile_module_finish (AtomrNvrtcActor    *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);
ATOMR_AVAILABLE_IN_ALL
AtomrKernel      *atomr_nvrtc_actor_get_kernel          (AtomrNvrtcActor      *self,
                                                         AtomrModule          *module,
                                                         const gchar          *kernel_name,
                                                         GError              **error);
ATOMR_AVAILABLE_IN_ALL
void              atomr_nvrtc_actor_launch_async        (AtomrNvrtcActor      *self,
                                                         AtomrKernel          *kernel,
                                                         const AtomrLaunchConfig *config,
                                                         AtomrKernelArgs      *args,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_nvrtc_actor_launch_finish       (AtomrNvrtcActor      *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);

G_END_DECLS
