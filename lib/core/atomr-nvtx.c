/* atomr-nvtx.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wshadow"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

#include "atomr-nvtx-private.h"

void
atomr_nvtx_push (const gchar *name)
{
  nvtxRangePushA (name);
}

void
atomr_nvtx_pop (void)
{
  nvtxRangePop ();
}
