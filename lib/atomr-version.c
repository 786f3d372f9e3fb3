/* atomr-version.c — the version of the library that is running
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-version.h"

/**
 * atomr_get_major_version:
 *
 * The major version of the atomr-accel library that is loaded, which may
 * differ from %ATOMR_MAJOR_VERSION the application was compiled against.
 *
 * Returns: the major version
 *
 * Since: 0.2
 */
guint
atomr_get_major_version (void)
{
  return ATOMR_MAJOR_VERSION;
}

/**
 * atomr_get_minor_version:
 *
 * The minor version of the atomr-accel library that is loaded.
 *
 * Returns: the minor version
 *
 * Since: 0.2
 */
guint
atomr_get_minor_version (void)
{
  return ATOMR_MINOR_VERSION;
}

/**
 * atomr_get_micro_version:
 *
 * The micro version of the atomr-accel library that is loaded.
 *
 * Returns: the micro version
 *
 * Since: 0.2
 */
guint
atomr_get_micro_version (void)
{
  return ATOMR_MICRO_VERSION;
}

/**
 * atomr_check_version:
 * @required_major: the required major version
 * @required_minor: the required minor version
 * @required_micro: the required micro version
 *
 * Run-time check, like gtk_check_version(): whether the loaded library is
 * compatible with the given version (same major version, and at least
 * the given minor and micro version).
 *
 * Returns: (nullable): %NULL when compatible, otherwise a string that
 *   says why (owned by the library, do not free)
 *
 * Since: 0.2
 */
const gchar *
atomr_check_version (guint required_major,
                     guint required_minor,
                     guint required_micro)
{
  if (required_major != ATOMR_MAJOR_VERSION)
    return required_major > ATOMR_MAJOR_VERSION ? "atomr-accel version too old (major mismatch)"
                                                : "atomr-accel version too new (major mismatch)";
  if (required_minor > ATOMR_MINOR_VERSION)
    return "atomr-accel version too old (minor mismatch)";
  if (required_minor == ATOMR_MINOR_VERSION && required_micro > ATOMR_MICRO_VERSION)
    return "atomr-accel version too old (micro mismatch)";
  return NULL;
}
