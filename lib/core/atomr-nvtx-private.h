/* atomr-nvtx-private.h — NVTX ranges (header-only NVTX 3; no library is
 * linked: the ranges cost nothing unless a tool injects itself)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

void atomr_nvtx_push (const gchar *name);
void atomr_nvtx_pop  (void);

G_END_DECLS
