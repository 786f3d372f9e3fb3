/* inspector-sass.h — SASS of a CUBIN, through the toolkit's nvdisasm or cuobjdump
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

gchar  *inspector_sass_find_tool          (void);
gchar  *inspector_sass_describe_search    (void);
void    inspector_sass_disassemble_async  (GBytes               *cubin,
                                           GCancellable         *cancellable,
                                           GAsyncReadyCallback   callback,
                                           gpointer              user_data);
gchar  *inspector_sass_disassemble_finish (GAsyncResult         *result,
                                           GError              **error);

G_END_DECLS
