/* inspector-compiler.h — NVRTC compiles off the UI thread
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <atomr.h>

G_BEGIN_DECLS

void         inspector_compile_async   (AtomrNvrtcActor      *actor,
                                        const gchar          *source,
                                        const gchar          *program_name,
                                        AtomrCompileOptions  *options,
                                        AtomrKernelCache     *cache,
                                        GCancellable         *cancellable,
                                        GAsyncReadyCallback   callback,
                                        gpointer              user_data);
AtomrModule *inspector_compile_finish  (GAsyncResult         *result,
                                        GError              **error);
gchar      **inspector_find_kernel_names (const gchar        *source);

G_END_DECLS
