/* atomr-remote-cache.h — the kernel cache's remote HTTP layer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "atomr-kernel-cache.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_REMOTE_CACHE (atomr_remote_cache_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrRemoteCache, atomr_remote_cache, ATOMR, REMOTE_CACHE, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrRemoteCache *atomr_remote_cache_new              (const gchar      *url,
                                                       GError          **error);
ATOMR_AVAILABLE_IN_ALL
const gchar      *atomr_remote_cache_get_url          (AtomrRemoteCache *self);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_remote_cache_get_read_only    (AtomrRemoteCache *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_remote_cache_set_read_only    (AtomrRemoteCache *self,
                                                       gboolean          read_only);
ATOMR_AVAILABLE_IN_ALL
guint             atomr_remote_cache_get_timeout      (AtomrRemoteCache *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_remote_cache_set_timeout      (AtomrRemoteCache *self,
                                                       guint             seconds);
ATOMR_AVAILABLE_IN_ALL
guint             atomr_remote_cache_get_max_connections (AtomrRemoteCache *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_remote_cache_set_max_connections (AtomrRemoteCache *self,
                                                       guint             max_connections);
ATOMR_AVAILABLE_IN_ALL
GBytes           *atomr_remote_cache_fetch            (AtomrRemoteCache *self,
                                                       const gchar      *key,
                                                       GCancellable     *cancellable,
                                                       GError          **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_remote_cache_contains         (AtomrRemoteCache *self,
                                                       const gchar      *key,
                                                       GCancellable     *cancellable,
                                                       GError          **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_remote_cache_upload           (AtomrRemoteCache *self,
                                                       const gchar      *key,
                                                       GBytes           *data,
                                                       GCancellable     *cancellable,
                                                       GError          **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_remote_cache_push             (AtomrRemoteCache *self,
                                                       AtomrKernelCache *cache,
                                                       guint            *n_pushed,
                                                       guint            *n_present,
                                                       GCancellable     *cancellable,
                                                       GError          **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_remote_cache_pull             (AtomrRemoteCache *self,
                                                       AtomrKernelCache *cache,
                                                       const gchar * const *keys,
                                                       guint            *n_pulled,
                                                       guint            *n_rejected,
                                                       GCancellable     *cancellable,
                                                       GError          **error);
ATOMR_AVAILABLE_IN_ALL
void              atomr_remote_cache_attach           (AtomrRemoteCache *self,
                                                       AtomrKernelCache *cache);
ATOMR_AVAILABLE_IN_ALL
void              atomr_remote_cache_detach           (AtomrRemoteCache *self,
                                                       AtomrKernelCache *cache);
ATOMR_AVAILABLE_IN_ALL
void              atomr_remote_cache_wait_uploads     (AtomrRemoteCache *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_remote_cache_get_counters     (AtomrRemoteCache *self,
                                                       guint64          *hits,
                                                       guint64          *misses,
                                                       guint64          *rejected,
                                                       guint64          *errors,
                                                       guint64          *uploaded);
ATOMR_AVAILABLE_IN_ALL
gchar            *atomr_remote_cache_dup_last_error   (AtomrRemoteCache *self);

G_END_DECLS
