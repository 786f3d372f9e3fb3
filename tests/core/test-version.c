/* test-version.c — compile-time and run-time version checks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>

static void
test_version (void)
{
  g_assert_cmpuint (atomr_get_major_version (), ==, ATOMR_MAJOR_VERSION);
  g_assert_cmpuint (atomr_get_minor_version (), ==, ATOMR_MINOR_VERSION);
  g_assert_cmpuint (atomr_get_micro_version (), ==, ATOMR_MICRO_VERSION);
  g_assert_true (ATOMR_CHECK_VERSION (ATOMR_MAJOR_VERSION, ATOMR_MINOR_VERSION, ATOMR_MICRO_VERSION));
  g_assert_true (ATOMR_CHECK_VERSION (0, 1, 0));
  g_assert_false (ATOMR_CHECK_VERSION (ATOMR_MAJOR_VERSION + 1, 0, 0));
  g_assert_false (ATOMR_CHECK_VERSION (ATOMR_MAJOR_VERSION, ATOMR_MINOR_VERSION, ATOMR_MICRO_VERSION + 1));
  g_assert_null (atomr_check_version (ATOMR_MAJOR_VERSION, ATOMR_MINOR_VERSION, ATOMR_MICRO_VERSION));
  g_assert_null (atomr_check_version (ATOMR_MAJOR_VERSION, 0, 0));
  g_assert_nonnull (atomr_check_version (ATOMR_MAJOR_VERSION + 1, 0, 0));
  g_assert_nonnull (atomr_check_version (ATOMR_MAJOR_VERSION, ATOMR_MINOR_VERSION + 1, 0));
  g_assert_nonnull (atomr_check_version (ATOMR_MAJOR_VERSION, ATOMR_MINOR_VERSION, ATOMR_MICRO_VERSION + 1));
  g_assert_cmpstr (ATOMR_VERSION_STRING, ==, PACKAGE_VERSION_FOR_TEST);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/version/check", test_version);
  return g_test_run ();
}
