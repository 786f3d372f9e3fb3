/* test-inspector-attach.c — "Attach to Process…" against a real inspector
 * server in this process
 *
 * The server (its own thread, a mock-device actor streaming real records)
 * writes its discovery file into a private XDG_RUNTIME_DIR; the window's
 * win.attach action (Ctrl+Shift+A, the menu's item) opens the dialog,
 * which must list it with its stream address and token; a wrong token is
 * refused with a message and the dialog stays; attach.connect then
 * attaches, the trace page follows the stream live, and screenshots of the
 * dialog and the attached window are written to the build directory
 * (attach-dialog.png, attach-live.png).  The stream message parser is
 * tested on its own first.  Runs under Xvfb (meson.build).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gstdio.h>
#include <gdk/x11/gdkx.h>
#include <locale.h>

#include "atomr-attach-dialog.h"
#include "inspector-application.h"
#include "inspector-screenshot.h"
#include "inspector-trace-page.h"
#include "inspector-window.h"

static gboolean
wait_for (gboolean (*cond) (gpointer), gpointer data)
{
  gint64 until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  while (!cond (data))
    {
      if (g_get_monotonic_time () > until)
        return FALSE;
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (2000);
    }
  return TRUE;
}

static void
test_parse_message (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrLaunchInfo) info = NULL;
  guint64 dropped = 0;
  static const gchar record[] =
    "{\"type\":\"record\",\"actor\":\"a\",\"library\":\"driver\",\"operation\":\"fill\",\"sequence\":7,"
    "\"device\":0,\"stream\":3,\"submit_us\":10,\"enqueue_us\":12,\"complete_us\":20,\"gpu_ms\":0.5,"
    "\"mailbox_depth\":2,\"error\":\"boom\",\"gpu_start_ns\":13000,\"gpu_end_ns\":18000}";
  static const gchar *bad[] = {
    "", "[]", "{\"type\":\"record\"}", "{\"type\":\"what\"}", "{\"type\":\"dropped\"}",
    "{\"type\":\"dropped\",\"count\":-3}", "{\"type\":\"record\",\"operation\":5}", "\xff\xfe",
  };

  info = atomr_attach_parse_message (record, sizeof record - 1, &dropped, &error);
  g_assert_no_error (error);
  g_assert_nonnull (info);
  g_assert_cmpstr (atomr_launch_info_get_operation (info), ==, "fill");
  g_assert_cmpuint (atomr_launch_info_get_sequence (info), ==, 7);
  g_assert_cmpint (atomr_launch_info_get_submit_time (info), ==, 10);
  g_assert_cmpint (atomr_launch_info_get_complete_time (info), ==, 20);
  g_assert_cmpint (atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_GPU_END), ==, 18000);
  g_assert_cmpstr (atomr_launch_info_get_error (info)->message, ==, "boom");
  g_assert_null (atomr_attach_parse_message ("{\"type\":\"dropped\",\"count\":5}", 28, &dropped, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (dropped, ==, 5);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_null (atomr_attach_parse_message (bad[i], strlen (bad[i]), &dropped, &error));
      g_assert_nonnull (error);
      g_clear_error (&error);
    }
  g_assert_cmpuint (dropped, ==, 5);
}

/* The batched stream (/v1/stream?batch=1): a batch appends its records in
 * order, a record or a drop notice reads as with
 * atomr_attach_parse_message(), and a batch with one bad element appends
 * nothing (all or nothing), keeping what the array held. */
static void
test_parse_messages (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  guint64 dropped = 0;
  static const gchar batch[] =
    "{\"type\":\"records\",\"records\":["
    "{\"type\":\"record\",\"actor\":\"a\",\"library\":\"driver\",\"operation\":\"fill\",\"sequence\":7,"
    "\"submit_us\":10,\"enqueue_us\":12,\"complete_us\":20,\"gpu_ms\":0.5,\"error\":null},"
    "{\"type\":\"record\",\"actor\":\"a\",\"library\":\"driver\",\"operation\":\"copy\",\"sequence\":8,"
    "\"submit_us\":21,\"enqueue_us\":22,\"complete_us\":30,\"gpu_ms\":null,\"error\":\"boom\"}]}";
  static const gchar single[] = "{\"type\":\"record\",\"operation\":\"one\",\"sequence\":9}";
  static const gchar *bad[] = {
    "{\"type\":\"records\"}", "{\"type\":\"records\",\"records\":5}",
    "{\"type\":\"records\",\"records\":[{\"type\":\"record\",\"operation\":\"x\"},7]}",
    "{\"type\":\"records\",\"records\":[{\"type\":\"record\",\"operation\":\"x\"},{\"type\":\"record\"}]}",
    "{\"type\":\"what\"}", "", "{\"type\":\"dropped\"}",
  };

  g_assert_true (atomr_attach_parse_messages (batch, sizeof batch - 1, records, &dropped, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (records->len, ==, 2);
  g_assert_cmpstr (atomr_launch_info_get_operation (g_ptr_array_index (records, 0)), ==, "fill");
  g_assert_cmpuint (atomr_launch_info_get_sequence (g_ptr_array_index (records, 0)), ==, 7);
  g_assert_cmpint (atomr_launch_info_get_complete_time (g_ptr_array_index (records, 0)), ==, 20);
  g_assert_null (atomr_launch_info_get_error (g_ptr_array_index (records, 0)));
  g_assert_cmpstr (atomr_launch_info_get_operation (g_ptr_array_index (records, 1)), ==, "copy");
  g_assert_cmpstr (atomr_launch_info_get_error (g_ptr_array_index (records, 1))->message, ==, "boom");

  g_assert_true (atomr_attach_parse_messages (single, sizeof single - 1, records, &dropped, &error));
  g_assert_cmpuint (records->len, ==, 3);
  g_assert_cmpuint (atomr_launch_info_get_sequence (g_ptr_array_index (records, 2)), ==, 9);

  g_assert_true (atomr_attach_parse_messages ("{\"type\":\"dropped\",\"count\":5}", 28, records, &dropped, &error));
  g_assert_cmpuint (dropped, ==, 5);
  g_assert_cmpuint (records->len, ==, 3);
  g_assert_true (atomr_attach_parse_messages ("{\"type\":\"records\",\"records\":[]}", strlen ("{\"type\":\"records\",\"records\":[]}"), records, &dropped,
                                              &error));
  g_assert_cmpuint (records->len, ==, 3);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (atomr_attach_parse_messages (bad[i], strlen (bad[i]), records, &dropped, &error));
      g_assert_nonnull (error);
      g_clear_error (&error);
      g_assert_cmpuint (records->len, ==, 3);
    }
  g_assert_cmpuint (dropped, ==, 5);
}

typedef struct
{
  AtomrInspectorServer *server;
  InspectorWindow      *window;
  AtomrActor           *actor;
  AtomrBuffer          *buffer;
} Fixture;

static Fixture f;

static AtomrAttachDialog *
find_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();   /* transfer none */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) w = g_list_model_get_item (toplevels, i);
      if (ATOMR_IS_ATTACH_DIALOG (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return ATOMR_ATTACH_DIALOG (w);
    }
  return NULL;
}

static gboolean
dialog_shown (gpointer data)
{
  return find_dialog () != NULL;
}

static gboolean
status_has (gpointer data)
{
  AtomrAttachDialog *d = find_dialog ();
  return d && strstr (atomr_attach_dialog_get_status (d), data) != NULL;
}

static gboolean
attached (gpointer data)
{
  return atomr_attach_get_client (f.window) != NULL && find_dialog () == NULL;
}

static gboolean
records_in (gpointer data)
{
  AtomrAttachClient *c = atomr_attach_get_client (f.window);
  return c && atomr_attach_client_get_n_records (c) + atomr_attach_client_get_n_dropped (c) >= GPOINTER_TO_UINT (data);
}

static gboolean
timeline_shows (gpointer data)
{
  InspectorTraceModel *m = inspector_trace_page_get_model (inspector_window_get_trace_page (f.window));
  return inspector_trace_model_get_n_slices (m) >= GPOINTER_TO_UINT (data);
}

static void
on_barrier (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error));
  *(gboolean *) user_data = TRUE;
}

static gboolean
flag_set (gpointer data)
{
  return *(gboolean *) data;
}

static void
pump (guint ms)
{
  gint64 until = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < until)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (2000);
}

static void
screenshot (GtkWidget *widget, const gchar *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *path = g_test_build_filename (G_TEST_BUILT, name, NULL);

  g_assert_true (inspector_screenshot_save (widget, path, &error));
  g_assert_no_error (error);
  g_test_message ("screenshot: %s", path);
}

static void
test_attach_live (void)
{
  AtomrAttachDialog *dialog;
  g_autofree gchar *expected_url = NULL;
  gboolean done = FALSE;
  const guint n = 300;

  /* Ctrl+Shift+A's action opens the dialog, listing this process. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "win.attach", NULL));
  g_assert_true (wait_for (dialog_shown, NULL));
  dialog = find_dialog ();
  g_assert_cmpuint (atomr_attach_dialog_get_n_targets (dialog), ==, 1);
  expected_url = g_strdup_printf ("ws://127.0.0.1:%u/v1/stream", atomr_inspector_server_get_port (f.server));
  g_assert_cmpstr (gtk_editable_get_text (atomr_attach_dialog_get_url_entry (dialog)), ==, expected_url);
  g_assert_cmpstr (gtk_editable_get_text (atomr_attach_dialog_get_token_entry (dialog)), ==,
                   atomr_inspector_server_get_token (f.server));
  g_assert_nonnull (strstr (atomr_attach_dialog_get_status (dialog), "1"));
  /* F5's action lists it again, still once. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "attach.refresh", NULL));
  g_assert_cmpuint (atomr_attach_dialog_get_n_targets (dialog), ==, 1);

  /* A wrong token: refused, said, the dialog stays. */
  gtk_editable_set_text (atomr_attach_dialog_get_token_entry (dialog), "not-the-token");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "attach.connect", NULL));
  g_assert_true (wait_for (status_has, (gpointer) "Cannot attach"));
  g_assert_null (atomr_attach_get_client (f.window));
  g_assert_cmpuint (atomr_inspector_server_get_n_clients (f.server), ==, 0);

  /* An address that is no stream address: said, nothing else happens. */
  gtk_editable_set_text (atomr_attach_dialog_get_url_entry (dialog), "http://127.0.0.1:1/");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "attach.connect", NULL));
  g_assert_true (wait_for (status_has, (gpointer) "ws://"));

  /* Select the process again (fills address and token) and connect. */
  atomr_attach_dialog_refresh (dialog);
  g_assert_cmpstr (gtk_editable_get_text (atomr_attach_dialog_get_token_entry (dialog)), ==,
                   atomr_inspector_server_get_token (f.server));
  pump (700);   /* layout and paint cycles before the picture */
  screenshot (GTK_WIDGET (dialog), "attach-dialog.png");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (dialog), "attach.connect", NULL));
  g_assert_true (wait_for (attached, NULL));
  g_assert_cmpstr (inspector_window_get_page (f.window), ==, "trace");
  for (guint i = 0; i < 10000 && atomr_inspector_server_get_n_clients (f.server) == 0; i++)
    g_usleep (1000);
  g_assert_cmpuint (atomr_inspector_server_get_n_clients (f.server), ==, 1);

  /* The workload runs; the window sees it live. */
  for (guint i = 0; i < n; i++)
    atomr_actor_fill_async (f.actor, f.buffer, (gdouble) i, NULL, NULL, NULL);
  atomr_actor_barrier_async (f.actor, NULL, on_barrier, &done);
  g_assert_true (wait_for (flag_set, &done));
  g_assert_true (wait_for (records_in, GUINT_TO_POINTER (n + 1)));
  g_assert_cmpuint (atomr_attach_client_get_n_invalid (atomr_attach_get_client (f.window)), ==, 0);
  g_assert_true (wait_for (timeline_shows, GUINT_TO_POINTER (n)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f.window), "win.zoom", "s", "zoom-fit"));
  pump (900);
  screenshot (GTK_WIDGET (f.window), "attach-live.png");
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(InspectorApplication) app = NULL;
  g_autoptr(AtomrDevice) device = NULL;
  g_autofree gchar *runtime = NULL;
  int rc;

  setlocale (LC_ALL, "");
  g_setenv ("GSK_RENDERER", "cairo", TRUE);
  g_setenv ("GDK_BACKEND", "x11", TRUE);
  g_setenv ("GTK_USE_PORTAL", "0", TRUE);
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  runtime = g_dir_make_tmp ("inspector-attach-XXXXXX", NULL);
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);

  g_test_add_func ("/inspector/attach/parse-message", test_parse_message);
  g_test_add_func ("/inspector/attach/parse-messages", test_parse_messages);
  if (!gtk_init_check () || !GDK_IS_X11_DISPLAY (gdk_display_get_default ()))
    {
      g_test_message ("no X display: the dialog is not tested");
      return g_test_run ();
    }
  g_test_add_func ("/inspector/attach/live", test_attach_live);

  /* The "application": a server, and an actor on the mock device. */
  device = atomr_device_new_mock ();
  f.server = atomr_inspector_server_new ();
  g_assert_true (atomr_inspector_server_start (f.server, &error));
  g_assert_no_error (error);
  f.actor = ATOMR_ACTOR (atomr_copy_actor_new (device, &error));
  g_assert_no_error (error);
  atomr_actor_set_name (f.actor, "live-filler");
  f.buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1024, &error);
  g_assert_no_error (error);
  atomr_inspector_server_add_actor (f.server, f.actor);

  app = inspector_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  g_application_hold (G_APPLICATION (app));
  f.window = inspector_window_new (ADW_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (f.window), 1100, 700);
  gtk_window_present (GTK_WINDOW (f.window));

  rc = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (f.window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  atomr_inspector_server_stop (f.server);
  g_clear_object (&f.buffer);
  g_clear_object (&f.actor);
  g_clear_object (&f.server);
  g_application_release (G_APPLICATION (app));
  g_rmdir (runtime);   /* the atomr/ directory inside stays: harmless */
  return rc;
}
