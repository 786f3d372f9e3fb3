/* atomr-inspector-env-stub.c — ATOMR_INSPECT in builds without libsoup
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "trace/atomr-inspector-server-private.h"

void
atomr_inspector_env_attach (AtomrActor *actor)
{
  static gsize warned;

  if (g_getenv ("ATOMR_INSPECT") && g_once_init_enter (&warned))
    {
      g_warning ("ATOMR_INSPECT is set but this atomr was built without libsoup (-Dserver)");
      g_once_init_leave (&warned, 1);
    }
}
