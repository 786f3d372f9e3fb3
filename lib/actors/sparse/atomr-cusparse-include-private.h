/* atomr-cusparse-include-private.h — cusparse.h for the generated table
 *
 * cuSPARSE 12.8 marks cusparseAxpby deprecated; the generated table takes
 * the type of every entry point (__typeof__ (&cusparseAxpby)), which
 * -Werror would refuse.  The sparse actor keeps using it until cuSPARSE
 * ships a replacement.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#ifndef DISABLE_CUSPARSE_DEPRECATED
#define DISABLE_CUSPARSE_DEPRECATED 1
#endif
#include <cusparse.h>
