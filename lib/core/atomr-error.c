/* atomr-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-error.h"

G_DEFINE_QUARK (atomr-error-quark, atomr_error)
