/* atomr-inspector-server-private.h — the actor's hook for ATOMR_INSPECT
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "core/atomr-actor.h"

G_BEGIN_DECLS

/* Called by every actor once constructed: with ATOMR_INSPECT=1 (not "0" or
 * empty) starts the process's inspector server on first use and adds the
 * actor to it; otherwise one atomic read.  A no-op in builds without
 * libsoup. */
void atomr_inspector_env_attach (AtomrActor *actor);

G_END_DECLS
