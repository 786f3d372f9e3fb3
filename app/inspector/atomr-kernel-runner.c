/* atomr-kernel-runner — runs one kernel for atomr-inspector's Run, in its own process
 *
 * Reads one request (JSON) on stdin, compiles the kernel through the
 * cache, runs it and writes one reply (JSON) on stdout; the protocol is
 * in inspector-run.c.  A kernel that poisons the CUDA context (an illegal
 * address) ends this process at worst, never the inspector.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <locale.h>
#include <stdio.h>

#include "inspector-run.h"

int
main (int   argc,
      char *argv[])
{
  setlocale (LC_ALL, "");
  if (argc > 1)
    {
      fprintf (stderr, "usage: %s < REQUEST.json  (atomr-inspector's Run writes the request)\n", argv[0]);
      return 2;
    }
  return inspector_run_main ();
}
