/* atomr-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-error.h"

/**
 * atomr_error_quark:
 *
 * The error domain of atomr-accel; use the `ATOMR_ERROR` macro in C.
 *
 * Returns: the quark of the [error@Atomr.Error] domain
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (atomr-error-quark, atomr_error)
