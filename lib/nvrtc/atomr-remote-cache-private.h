/* atomr-remote-cache-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-remote-cache.h"

G_BEGIN_DECLS

/* $ATOMR_CACHE_REMOTE (an http:// or https:// URL) set: attaches a remote
 * layer to @cache ($ATOMR_CACHE_REMOTE_READ_ONLY=1: fetch only).  A bad
 * URL is logged with g_warning() and ignored. */
void atomr_remote_cache_attach_from_env (AtomrKernelCache *cache);

G_END_DECLS
