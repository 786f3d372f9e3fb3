/* inspector-demo.h — what `atomr-inspector --demo` does
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "inspector-window.h"

G_BEGIN_DECLS

void     inspector_demo_run_async  (InspectorWindow     *window,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data);
gboolean inspector_demo_run_finish (GAsyncResult        *result,
                                    GError             **error);
gchar   *inspector_find_data_file  (const gchar         *name);

G_END_DECLS
