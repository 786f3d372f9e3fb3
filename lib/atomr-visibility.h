/* atomr-visibility.h — export and availability macros of atomr-accel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libatomr-1.so is built with hidden default visibility: only declarations
 * marked with one of these macros are exported.  Every function declared
 * in a public header carries one; `build-aux/export-macros.py` adds
 * ATOMR_AVAILABLE_IN_ALL where it is missing, and the `export-macros` and
 * `exported-symbols` tests of the cpu suite fail when a declaration lacks
 * it or the shared library exports anything else.
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include <glib.h>

#if defined(_WIN32) || defined(__CYGWIN__)
# if defined(ATOMR_COMPILATION)
#  define _ATOMR_EXTERN __declspec(dllexport) extern
# else
#  define _ATOMR_EXTERN __declspec(dllimport) extern
# endif
#elif defined(__GNUC__)
# define _ATOMR_EXTERN __attribute__((visibility ("default"))) extern
#else
# define _ATOMR_EXTERN extern
#endif

/**
 * ATOMR_AVAILABLE_IN_ALL:
 *
 * Marks a declaration that is part of the public ABI of every version of
 * atomr-accel (exported from libatomr-1.so).
 *
 * Since: 0.2
 */
#define ATOMR_AVAILABLE_IN_ALL _ATOMR_EXTERN

/**
 * ATOMR_AVAILABLE_IN_0_2:
 *
 * Marks a declaration added in atomr-accel 0.2.
 *
 * Since: 0.2
 */
#define ATOMR_AVAILABLE_IN_0_2 _ATOMR_EXTERN

/**
 * ATOMR_DEPRECATED_IN_0_2_FOR:
 * @f: the replacement
 *
 * Marks an exported declaration deprecated in atomr-accel 0.2 in favour of
 * @f; callers get a compiler warning naming @f.
 *
 * Since: 0.2
 */
#if defined(ATOMR_COMPILATION) || defined(ATOMR_DISABLE_DEPRECATION_WARNINGS)
# define ATOMR_DEPRECATED_IN_0_2_FOR(f) _ATOMR_EXTERN
#else
# define ATOMR_DEPRECATED_IN_0_2_FOR(f) G_DEPRECATED_FOR (f) _ATOMR_EXTERN
#endif
