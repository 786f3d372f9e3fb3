/* cudnn-validation-util.h — the reply helpers shared by the cuDNN CPU
 * tests (validation on the mock device: every request must fail with a
 * named error before anything reaches cuDNN)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include <atomr.h>
#include "core/atomr-reply-private.h"

#define INVALID ATOMR_ERROR_INVALID_ARGUMENT
#define NOSUP   ATOMR_ERROR_NOT_SUPPORTED

/* A GAsyncReadyCallback that keeps the result in *user_data (which must
 * be empty: a second reply is a test failure). */
static inline void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

/* Checks that @error has @code in the atomr domain and that its message
 * contains @needle. */
static inline void
expect_error (const GError *error, gint code, const gchar *needle)
{
  g_assert_error (error, ATOMR_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("expected \"%s\" in: %s", needle, error->message);
}

/* Waits for the reply (a boolean), then checks that it failed with
 * @code and a message containing @needle. */
static inline void
expect (GAsyncResult **result, gint code, const gchar *needle)
{
  g_autoptr(GError) error = NULL;

  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (atomr_reply_propagate_boolean (*result, &error));
  g_clear_object (result);
  expect_error (error, code, needle);
}

#ifdef CUDNN_TEST_MOCK_FIXTURE
/* With CUDNN_TEST_MOCK_FIXTURE defined before the include: the fixture of
 * the tests that run a cuDNN actor on the public mock device (requests
 * are checked, then refused before anything reaches cuDNN).  With
 * CUDNN_TEST_OWN_TEARDOWN defined too, the test writes fixture_teardown()
 * itself (checks of its own, then fixture_release()). */
typedef struct {
  AtomrDevice     *device;
  AtomrCudnnActor *actor;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->device = atomr_device_new_mock ();
  f->actor = atomr_cudnn_actor_new (f->device, &error);
  g_assert_no_error (error);
}

/* The actor must go with its last reference. */
static inline void
fixture_release (Fixture *f)
{
  g_assert_finalize_object (f->actor);
  g_object_unref (f->device);
}

#ifndef CUDNN_TEST_OWN_TEARDOWN
static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  fixture_release (f);
}
#endif
#endif
