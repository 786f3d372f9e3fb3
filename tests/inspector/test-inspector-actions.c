/* test-inspector-actions.c — the inspector's window driven as a user would
 *
 * Runs the real InspectorApplication and InspectorWindow in this process
 * (under Xvfb, see meson.build) and drives them through real key presses
 * and clicks: XTest (libXtst.so.6, loaded with dlopen) makes the X server
 * send them, so they travel the same way as a user's (GDK, the capture and
 * bubble phases, the text view's own bindings).  Where a test needs no
 * input device it activates the same GActions the menus and buttons use.
 *
 * Every test reads what the window shows afterwards (the page, the buffer,
 * the list, the dialogs), and the whole program runs twice: in English
 * and with LANGUAGE=de.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dlfcn.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <gdk/x11/gdkx.h>
#include <locale.h>

#include "inspector-application.h"
#include "inspector-demo.h"
#include "inspector-diagnostics.h"
#include "inspector-operation-stats.h"
#include "inspector-screenshot.h"
#include "inspector-window.h"

static void
remove_tree (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree gchar *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

typedef int (*XTestFakeKeyEventFunc) (Display *, unsigned int, Bool, unsigned long);
typedef int (*XTestFakeButtonEventFunc) (Display *, unsigned int, Bool, unsigned long);
typedef int (*XTestFakeMotionEventFunc) (Display *, int, int, int, unsigned long);

static struct {
  InspectorApplication    *app;
  InspectorWindow         *window;
  gchar                   *dir;
  gchar                   *cache_dir;
  gboolean                 have_cache;
  gchar                   *keys[4];
  XTestFakeKeyEventFunc    fake_key;
  XTestFakeButtonEventFunc fake_button;
  XTestFakeMotionEventFunc fake_motion;
} t;

static const gchar *kernels[][2] = {
  { "alpha", "extern \"C\" __global__ void alpha (float *y) { y[threadIdx.x] = 1.0f; }\n" },
  { "beta", "extern \"C\" __global__ void beta (float *y) { y[threadIdx.x] *= 2.0f; }\n" },
  { "gamma", "extern \"C\" __global__ void gamma (double *y) { y[threadIdx.x] += 3.0; }\n" },
  { "delta", "extern \"C\" __global__ void delta (int *y) { y[threadIdx.x] -= 4; }\n" },
};

/* Compiles kernels[i] into the fixture cache (as the library would). */
static gchar *
compile_into_cache (guint    i,
                    GError **error)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (t.cache_dir);
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrModule) module = NULL;

  atomr_compile_options_set_arch (options, "sm_90");
  atomr_compile_options_add_name_expression (options, kernels[i][0]);
  module = atomr_nvrtc_compile (kernels[i][1], "fixture.cu", options, cache, error);
  return module ? g_strdup (atomr_module_get_key (module)) : NULL;
}

/* Runs the main loop for @ms milliseconds. */
static void
pump (guint ms)
{
  gint64 until = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (2000);
    }
}

typedef gboolean (*Condition) (gpointer data);

/* Runs the main loop until @cond holds (at most 20 s: a hang fails). */
static gboolean
wait_for (Condition cond,
          gpointer  data)
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

static Display *
xdisplay (void)
{
  return gdk_x11_display_get_xdisplay (gdk_display_get_default ());
}

static Window
xwindow (GtkWindow *window)
{
  return gdk_x11_surface_get_xid (gtk_native_get_surface (GTK_NATIVE (window)));
}

static void
focus_window (GtkWindow *window)
{
  gtk_window_present (window);
  pump (50);
  XSetInputFocus (xdisplay (), xwindow (window), RevertToParent, CurrentTime);
  XSync (xdisplay (), False);
  pump (150);
}

/* Presses and releases @keysym with @mods held, through the X server. */
static void
press_key (GtkWindow      *window,
           KeySym          keysym,
           GdkModifierType mods)
{
  Display *d = xdisplay ();
  KeyCode ctrl = XKeysymToKeycode (d, XK_Control_L), shift = XKeysymToKeycode (d, XK_Shift_L);
  KeyCode alt = XKeysymToKeycode (d, XK_Alt_L), key = XKeysymToKeycode (d, keysym);

  g_assert_cmpuint (key, !=, 0);
  focus_window (window);
  if (mods & GDK_CONTROL_MASK)
    t.fake_key (d, ctrl, True, 0);
  if (mods & GDK_SHIFT_MASK)
    t.fake_key (d, shift, True, 0);
  if (mods & GDK_ALT_MASK)
    t.fake_key (d, alt, True, 0);
  t.fake_key (d, key, True, 0);
  t.fake_key (d, key, False, 0);
  if (mods & GDK_ALT_MASK)
    t.fake_key (d, alt, False, 0);
  if (mods & GDK_SHIFT_MASK)
    t.fake_key (d, shift, False, 0);
  if (mods & GDK_CONTROL_MASK)
    t.fake_key (d, ctrl, False, 0);
  XSync (d, False);
  pump (400);   /* generous: the suite runs on loaded machines */
}

/* Clicks the middle of @widget with the first button, through the X server. */
static void
click (GtkWidget *widget)
{
  GtkNative *native = gtk_widget_get_native (widget);
  Display *d = xdisplay ();
  graphene_rect_t bounds;
  double sx = 0, sy = 0;
  int rx = 0, ry = 0;
  Window child;

  g_assert_true (gtk_widget_compute_bounds (widget, GTK_WIDGET (native), &bounds));
  gtk_native_get_surface_transform (native, &sx, &sy);
  focus_window (GTK_WINDOW (native));
  XTranslateCoordinates (d, xwindow (GTK_WINDOW (native)), DefaultRootWindow (d),
                         (int) (sx + bounds.origin.x + bounds.size.width / 2),
                         (int) (sy + bounds.origin.y + bounds.size.height / 2), &rx, &ry, &child);
  t.fake_motion (d, -1, rx, ry, 0);
  XSync (d, False);
  pump (100);
  t.fake_button (d, 1, True, 0);
  t.fake_button (d, 1, False, 0);
  XSync (d, False);
  pump (250);
}

/* The "Save Changes?" dialog over the window, if one is shown. */
static AdwMessageDialog *
find_message_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) w = g_list_model_get_item (toplevels, i);

      if (ADW_IS_MESSAGE_DIALOG (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return ADW_MESSAGE_DIALOG (w);
    }
  return NULL;
}

static gboolean
dialog_shown (gpointer data)
{
  return find_message_dialog () != NULL;
}

static gboolean
no_dialog (gpointer data)
{
  return find_message_dialog () == NULL;
}

static GtkWidget *find_labelled (GtkWidget *root, GType type, const gchar *text);
static void save_picture (const gchar *name);

/* Presses the dialog's button for @response ("cancel", "discard", "save"). */
static void
respond (const gchar *response)
{
  AdwMessageDialog *dialog = find_message_dialog ();
  g_autofree gchar *label = NULL;
  GtkWidget *button;

  g_assert_nonnull (dialog);
  label = g_strdup (adw_message_dialog_get_response_label (dialog, response));
  g_assert_nonnull (label);
  /* the button shows the label without its mnemonic underscore */
  g_strdelimit (label, "_", '\x01');
  {
    GString *plain = g_string_new (NULL);
    for (const gchar *c = label; *c; c++)
      if (*c != '\x01')
        g_string_append_c (plain, *c);
    g_free (label);
    label = g_string_free (plain, FALSE);
  }
  button = find_labelled (GTK_WIDGET (dialog), GTK_TYPE_LABEL, label);
  g_assert_nonnull (button);
  button = gtk_widget_get_ancestor (button, GTK_TYPE_BUTTON);
  g_assert_nonnull (button);
  /* as Space or Enter on the focused button would */
  g_assert_true (gtk_widget_activate (button));
  g_assert_true (wait_for (no_dialog, NULL));
  pump (100);
}

static gchar *
buffer_text (GtkWidget *editor)
{
  GtkTextBuffer *buffer = inspector_editor_page_get_buffer (INSPECTOR_EDITOR_PAGE (editor));
  GtkTextIter s, e;

  gtk_text_buffer_get_bounds (buffer, &s, &e);
  return gtk_text_buffer_get_text (buffer, &s, &e, TRUE);
}

static GtkTextBuffer *
editor_buffer (void)
{
  return inspector_editor_page_get_buffer (inspector_window_get_editor_page (t.window));
}

static GtkWidget *
editor_view (void)
{
  return inspector_editor_page_get_source_view (inspector_window_get_editor_page (t.window));
}

/* The first mapped button of @root bound to @action. */
static GtkWidget *
find_actionable (GtkWidget   *root,
                 const gchar *action)
{
  if (GTK_IS_ACTIONABLE (root) && gtk_widget_get_mapped (root) &&
      g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (root)), action) == 0)
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_actionable (c, action);
      if (found)
        return found;
    }
  return NULL;
}

/* A fresh window on the fixture cache, the source unmodified. */
static void
reset_window (void)
{
  GtkTextBuffer *buffer;

  if (t.window == NULL)
    {
      t.window = inspector_window_new (ADW_APPLICATION (t.app));
      g_object_add_weak_pointer (G_OBJECT (t.window), (gpointer *) &t.window);
      inspector_window_set_cache_directory (t.window, t.cache_dir);
      gtk_window_set_default_size (GTK_WINDOW (t.window), 1100, 760);
      gtk_window_present (GTK_WINDOW (t.window));
      pump (300);
    }
  buffer = editor_buffer ();
  gtk_text_buffer_set_modified (buffer, FALSE);
  inspector_window_set_page (t.window, "editor");
  pump (100);
}

/* A new window: nothing loaded in it. */
static void
fresh_window (void)
{
  if (t.window)
    {
      gtk_text_buffer_set_modified (editor_buffer (), FALSE);
      gtk_window_destroy (GTK_WINDOW (t.window));
      pump (100);
    }
  reset_window ();
}

/* 1. Unsaved edits: quitting (Ctrl+Q) asks; Cancel keeps the window and
 * the edits; Discard closes it. */
static void
test_unsaved_quit (void)
{
  GtkWidget *view;
  AdwMessageDialog *dialog;
  g_autofree gchar *before = NULL, *after = NULL;

  reset_window ();
  view = editor_view ();
  gtk_widget_grab_focus (view);
  press_key (GTK_WINDOW (t.window), XK_End, GDK_CONTROL_MASK);
  press_key (GTK_WINDOW (t.window), XK_x, 0);   /* the user types */
  g_assert_true (inspector_editor_page_get_modified (inspector_window_get_editor_page (t.window)));
  before = buffer_text (GTK_WIDGET (inspector_window_get_editor_page (t.window)));

  press_key (GTK_WINDOW (t.window), XK_q, GDK_CONTROL_MASK);
  g_assert_true (wait_for (dialog_shown, NULL));
  g_assert_nonnull (t.window);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (t.window)));
  dialog = find_message_dialog ();
  g_assert_true (adw_message_dialog_has_response (dialog, "save"));
  respond ("cancel");
  g_assert_nonnull (t.window);
  after = buffer_text (GTK_WIDGET (inspector_window_get_editor_page (t.window)));
  g_assert_cmpstr (before, ==, after);
  g_assert_true (inspector_editor_page_get_modified (inspector_window_get_editor_page (t.window)));

  /* closing the window (Ctrl+W) asks too; Discard closes */
  press_key (GTK_WINDOW (t.window), XK_w, GDK_CONTROL_MASK);
  g_assert_true (wait_for (dialog_shown, NULL));
  respond ("discard");
  g_assert_null (t.window);
}

/* 1. Unsaved edits: "Open in Editor" on the Cache page asks before it
 * replaces the buffer; Cancel keeps the edits. */
static void
test_unsaved_open_entry (void)
{
  InspectorCachePage *cache;
  GtkTextIter end;
  g_autofree gchar *text = NULL;

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  reset_window ();
  gtk_text_buffer_get_end_iter (editor_buffer (), &end);
  gtk_text_buffer_insert (editor_buffer (), &end, "// my unsaved work\n", -1);
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  inspector_cache_page_select (cache, 0);
  pump (100);
  gtk_widget_activate_action (GTK_WIDGET (cache), "cache.open-in-editor", NULL);
  g_assert_true (wait_for (dialog_shown, NULL));
  respond ("cancel");
  text = buffer_text (GTK_WIDGET (inspector_window_get_editor_page (t.window)));
  g_assert_nonnull (strstr (text, "// my unsaved work"));

  /* Discard: the entry's source replaces the buffer */
  gtk_widget_activate_action (GTK_WIDGET (cache), "cache.open-in-editor", NULL);
  g_assert_true (wait_for (dialog_shown, NULL));
  respond ("discard");
  g_free (text);
  text = buffer_text (GTK_WIDGET (inspector_window_get_editor_page (t.window)));
  g_assert_null (strstr (text, "// my unsaved work"));
  g_assert_nonnull (strstr (text, "__global__"));
  g_assert_cmpstr (inspector_window_get_page (t.window), ==, "editor");

  /* Ctrl+O on the Editor asks before opening another source */
  gtk_text_buffer_get_end_iter (editor_buffer (), &end);
  gtk_text_buffer_insert (editor_buffer (), &end, "// more\n", -1);
  press_key (GTK_WINDOW (t.window), XK_o, GDK_CONTROL_MASK);
  g_assert_true (wait_for (dialog_shown, NULL));
  respond ("cancel");
  g_assert_true (inspector_editor_page_get_modified (inspector_window_get_editor_page (t.window)));
}

static gboolean
compiled (gpointer data)
{
  return *(gint *) data >= 0;
}

static void
on_compiled (InspectorEditorPage *editor,
             gboolean             success,
             gint                *result)
{
  *result = success;
}

/* 2. Ctrl+Enter in the source view compiles and inserts nothing. */
static void
test_ctrl_enter_compiles (void)
{
  InspectorEditorPage *editor;
  g_autofree gchar *before = NULL, *after = NULL;
  gint result = -1;
  gulong id;

  reset_window ();
  editor = inspector_window_get_editor_page (t.window);
  inspector_editor_page_set_text (editor, "k.cu", "extern \"C\" __global__ void k (float *y) { y[0] = 1.0f; }\n");
  before = buffer_text (GTK_WIDGET (editor));
  gtk_widget_grab_focus (editor_view ());
  id = g_signal_connect (editor, "compiled", G_CALLBACK (on_compiled), &result);
  press_key (GTK_WINDOW (t.window), XK_Return, GDK_CONTROL_MASK);
  after = buffer_text (GTK_WIDGET (editor));
  g_assert_cmpstr (before, ==, after);
  g_assert_true (wait_for (compiled, &result));
  g_signal_handler_disconnect (editor, id);
  g_assert_false (inspector_editor_page_get_modified (editor));
}

static gboolean
buffer_has (gpointer needle)
{
  g_autofree gchar *text = buffer_text (GTK_WIDGET (inspector_window_get_editor_page (t.window)));
  return strstr (text, needle) != NULL;
}

/* 11. Opening a source reads it in the background: the call returns
 * before the buffer changes (the old code read on the main thread). */
static void
test_open_source_async (void)
{
  g_autofree gchar *path = g_build_filename (t.dir, "async.cu", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  const gchar *src = "// opened in the background\nextern \"C\" __global__ void bg (float *y) { }\n";

  reset_window ();
  g_assert_true (g_file_set_contents (path, src, -1, NULL));
  inspector_editor_page_open_file (inspector_window_get_editor_page (t.window), file);
  g_assert_false (buffer_has ((gpointer) "opened in the background"));
  g_assert_true (wait_for (buffer_has, (gpointer) "opened in the background"));
  g_assert_false (inspector_editor_page_get_modified (inspector_window_get_editor_page (t.window)));
  g_unlink (path);
}

/* Inline diagnostics: the marked lines say what is wrong when hovered;
 * typing on a line clears its (now stale) markers, not the others'. */
static void
test_inline_diagnostics (void)
{
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-broken.cu", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  InspectorEditorPage *editor;
  g_autofree gchar *on_error = NULL, *on_warning = NULL, *after = NULL, *still = NULL;
  GtkTextIter iter;
  gint result = -1;
  gulong id;

  if (!t.have_cache)
    {
      g_test_skip ("no NVRTC");
      return;
    }
  reset_window ();
  editor = inspector_window_get_editor_page (t.window);
  g_assert_true (inspector_editor_page_load_file (editor, file, &error));
  g_assert_no_error (error);
  id = g_signal_connect (editor, "compiled", G_CALLBACK (on_compiled), &result);
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.compile", NULL);
  g_assert_true (wait_for (compiled, &result));
  g_signal_handler_disconnect (editor, id);
  g_assert_cmpint (result, ==, FALSE);
  on_error = inspector_editor_page_get_line_diagnostics (editor, 8);
  on_warning = inspector_editor_page_get_line_diagnostics (editor, 6);
  g_assert_nonnull (on_error);
  g_assert_nonnull (strstr (on_error, "undefined_value"));
  g_assert_nonnull (on_warning);
  g_assert_null (inspector_editor_page_get_line_diagnostics (editor, 2));

  /* the user types on line 8 */
  gtk_widget_grab_focus (editor_view ());
  gtk_text_buffer_get_iter_at_line_offset (editor_buffer (), &iter, 7, 4);
  gtk_text_buffer_place_cursor (editor_buffer (), &iter);
  gtk_text_buffer_set_modified (editor_buffer (), FALSE);
  press_key (GTK_WINDOW (t.window), XK_x, 0);
  /* under a heavy load the X server may hand the key to no one: then type
   * it the way the key press would (the same insert-text path) */
  if (!gtk_text_buffer_get_modified (editor_buffer ()))
    {
      g_test_message ("the key press did not arrive; inserting at the cursor instead");
      gtk_text_buffer_insert_interactive_at_cursor (editor_buffer (), "x", 1, TRUE);
    }
  g_assert_true (gtk_text_buffer_get_modified (editor_buffer ()));
  after = inspector_editor_page_get_line_diagnostics (editor, 8);
  still = inspector_editor_page_get_line_diagnostics (editor, 6);
  g_assert_null (after);
  g_assert_nonnull (still);
  gtk_text_buffer_set_modified (editor_buffer (), FALSE);
}

/* 6. The editor's compile is the library's: no --ptxas-options=-v in the
 * entry's flags (the old code added it, so the same source compiled by
 * the library got a second entry), and the registers come from the CUBIN. */
static void
test_compile_shares_cache_key (void)
{
  InspectorEditorPage *editor;
  const gchar *src = "extern \"C\" __global__ void shared_key (float *y) { y[threadIdx.x] += 1.0f; }\n";
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;
  gint result = -1;
  gulong id;

  if (!t.have_cache)
    {
      g_test_skip ("no NVRTC");
      return;
    }
  reset_window ();
  editor = inspector_window_get_editor_page (t.window);
  inspector_editor_page_set_text (editor, "shared_key.cu", src);
  id = g_signal_connect (editor, "compiled", G_CALLBACK (on_compiled), &result);
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.compile", NULL);
  g_assert_true (wait_for (compiled, &result));
  g_signal_handler_disconnect (editor, id);
  g_assert_cmpint (result, ==, TRUE);
  g_assert_cmpuint (inspector_editor_page_get_n_resource_rows (editor), ==, 1);

  /* the library, same source and options: a hit on the editor's entry */
  cache = atomr_kernel_cache_new (t.cache_dir);
  atomr_compile_options_set_arch (options, "sm_90");
  atomr_compile_options_set_std (options, "c++17");
  atomr_compile_options_add_name_expression (options, "shared_key");
  module = atomr_nvrtc_compile (src, "shared_key.cu", options, cache, &error);
  g_assert_no_error (error);
  for (guint i = 0; atomr_module_get_flags (module)[i]; i++)
    g_assert_null (strstr (atomr_module_get_flags (module)[i], "ptxas"));
  g_test_message ("library compile after the editor's: cache status %d", atomr_module_get_cache_status (module));
  g_assert_cmpint (atomr_module_get_cache_status (module), ==, ATOMR_CACHE_STATUS_DISK_HIT);
}

static void
on_demo_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  gint *done = user_data;
  g_autoptr(GError) error = NULL;

  *done = inspector_demo_run_finish (result, &error) ? 1 : 2;
  if (error)
    g_test_message ("demo: %s", error->message);
}

static gboolean
demo_done (gpointer data)
{
  return *(gint *) data != 0;
}

/* 6, for the demo: without a GPU it compiles for sm_90, and its entries are
 * the library's too (it used to add --ptxas-options=-v, giving the same
 * sources other keys than the CLI's compiles). */
static void
test_demo_shares_cache_key (void)
{
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(GListModel) entries = NULL;
  g_autoptr(GError) error = NULL;
  gint done = 0;

  if (!t.have_cache)
    {
      g_test_skip ("no NVRTC");
      return;
    }
  reset_window ();
  inspector_demo_run_async (t.window, NULL, on_demo_done, &done);
  g_assert_true (wait_for (demo_done, &done));
  cache = atomr_kernel_cache_new (t.cache_dir);
  entries = atomr_kernel_cache_list (cache, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (entries), >, 0);
  for (guint i = 0; i < g_list_model_get_n_items (entries); i++)
    {
      g_autoptr(AtomrKernelCacheEntry) entry = g_list_model_get_item (entries, i);
      const gchar *const *flags = atomr_kernel_cache_entry_get_flags (entry);
      gboolean fixture = FALSE;

      for (guint f = 0; flags && flags[f]; f++)
        g_assert_null (strstr (flags[f], "ptxas"));
      /* the tests after this one count the directory's entries: the
       * demo's own go, the fixture's stay */
      for (guint k = 0; k < G_N_ELEMENTS (t.keys); k++)
        fixture |= g_strcmp0 (t.keys[k], atomr_kernel_cache_entry_get_key (entry)) == 0;
      if (!fixture)
        {
          g_assert_true (atomr_kernel_cache_remove (cache, atomr_kernel_cache_entry_get_key (entry), &error));
          g_assert_no_error (error);
        }
    }
}

/* 8. Ctrl+O opens what the page shows: a source chooser on the Editor. */
static GtkFileChooser *
find_file_chooser (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) w = g_list_model_get_item (toplevels, i);

      if (GTK_IS_FILE_CHOOSER (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return GTK_FILE_CHOOSER (w);
    }
  return NULL;
}

static gboolean
chooser_shown (gpointer data)
{
  return find_file_chooser () != NULL;
}

static void
close_chooser (void)
{
  GtkFileChooser *chooser = find_file_chooser ();

  if (chooser)
    gtk_window_destroy (GTK_WINDOW (chooser));
  pump (100);
}

static void
test_ctrl_o_per_page (void)
{
  struct { const gchar *page; const gchar *title; } cases[] = {
    { "editor", N_("Open Kernel Source") },
    { "trace", N_("Open Trace") },
    { "cache", N_("Choose Cache Folder") },
  };

  g_setenv ("GTK_USE_PORTAL", "0", TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GtkFileChooser *chooser;

      reset_window ();
      inspector_window_set_page (t.window, cases[i].page);
      pump (100);
      press_key (GTK_WINDOW (t.window), XK_o, GDK_CONTROL_MASK);
      g_assert_true (wait_for (chooser_shown, NULL));
      chooser = find_file_chooser ();
      g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (chooser)), ==, _(cases[i].title));
      close_chooser ();
    }
}

/* A file as the chooser's filter sees it. */
static GFileInfo *
file_info (const gchar *name,
           const gchar *content_type)
{
  GFileInfo *info = g_file_info_new ();

  g_file_info_set_display_name (info, name);
  g_file_info_set_name (info, name);
  g_file_info_set_content_type (info, content_type);
  return info;
}

/* The trace open dialog shows atomr's traces (application/x-atomr-trace+json)
 * first, not every JSON file; plain Chrome traces are the second filter. */
static void
test_trace_open_filter (void)
{
  g_autoptr(GFileInfo) trace = file_info ("run.json", "application/x-atomr-trace+json");
  g_autoptr(GFileInfo) named = file_info ("run.atomr-trace", "application/octet-stream");
  g_autoptr(GFileInfo) plain = file_info ("package.json", "application/json");
  g_autoptr(GListModel) filters = NULL;
  GtkFileChooser *chooser;
  GtkFilter *selected;

  g_setenv ("GTK_USE_PORTAL", "0", TRUE);
  reset_window ();
  inspector_window_set_page (t.window, "trace");
  pump (100);
  gtk_widget_activate_action (GTK_WIDGET (inspector_window_get_trace_page (t.window)), "trace.open", NULL);
  g_assert_true (wait_for (chooser_shown, NULL));
  chooser = find_file_chooser ();
  filters = gtk_file_chooser_get_filters (chooser);
  g_assert_cmpuint (g_list_model_get_n_items (filters), ==, 2);
  selected = GTK_FILTER (gtk_file_chooser_get_filter (chooser));
  g_assert_nonnull (selected);
  g_assert_true (gtk_filter_match (selected, trace));
  g_assert_true (gtk_filter_match (selected, named));
  g_assert_false (gtk_filter_match (selected, plain));
  {
    g_autoptr(GtkFilter) json = g_list_model_get_item (filters, 1);
    g_assert_true (gtk_filter_match (json, plain));
  }
  close_chooser ();
}

/* 8. Alt+C shows the Cache page and compiles nothing; no two mnemonics
 * of the window share a key (in the language the test runs in). */
static void
collect_mnemonics (GtkWidget  *widget,
                   GHashTable *seen,
                   GPtrArray  *clashes)
{
  if (!gtk_widget_get_mapped (widget))
    return;
  if (GTK_IS_LABEL (widget) && gtk_label_get_use_underline (GTK_LABEL (widget)))
    {
      guint key = gdk_keyval_to_lower (gtk_label_get_mnemonic_keyval (GTK_LABEL (widget)));
      const gchar *other = g_hash_table_lookup (seen, GUINT_TO_POINTER (key));

      if (key != GDK_KEY_VoidSymbol && other && g_strcmp0 (other, gtk_label_get_label (GTK_LABEL (widget))) != 0)
        g_ptr_array_add (clashes, g_strdup_printf ("%s / %s", other, gtk_label_get_label (GTK_LABEL (widget))));
      if (key != GDK_KEY_VoidSymbol)
        g_hash_table_insert (seen, GUINT_TO_POINTER (key), (gpointer) gtk_label_get_label (GTK_LABEL (widget)));
    }
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    if (!GTK_IS_NATIVE (c))
      collect_mnemonics (c, seen, clashes);
}

static void
test_mnemonics (void)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) clashes = g_ptr_array_new_with_free_func (g_free);
  InspectorEditorPage *editor;
  gint result = -1;
  gulong id;

  reset_window ();
  collect_mnemonics (GTK_WIDGET (t.window), seen, clashes);
  for (guint i = 0; i < clashes->len; i++)
    g_test_message ("mnemonic clash: %s", (gchar *) g_ptr_array_index (clashes, i));
  g_assert_cmpuint (clashes->len, ==, 0);

  editor = inspector_window_get_editor_page (t.window);
  id = g_signal_connect (editor, "compiled", G_CALLBACK (on_compiled), &result);
  press_key (GTK_WINDOW (t.window), gdk_keyval_to_lower (g_unichar_tolower (_("_Cache")[1])), GDK_ALT_MASK);
  pump (300);
  g_assert_cmpstr (inspector_window_get_page (t.window), ==, "cache");
  g_assert_cmpint (result, ==, -1);   /* no compile started */
  g_signal_handler_disconnect (editor, id);
}

/* The new tabs' mnemonics clash with none of the window's (Alt+T is the
 * Trace page, not "Threads…"), in the language the test runs in. */
static void
test_mnemonics_tabs (void)
{
  GtkWidget *pages[2];

  reset_window ();
  pages[0] = GTK_WIDGET (inspector_editor_page_get_run_panel (inspector_window_get_editor_page (t.window)));
  pages[1] = GTK_WIDGET (inspector_cache_page_get_occupancy_panel (inspector_window_get_cache_page (t.window)));
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
      g_autoptr(GPtrArray) clashes = g_ptr_array_new_with_free_func (g_free);

      inspector_window_set_page (t.window, i == 0 ? "editor" : "cache");
      gtk_stack_set_visible_child (GTK_STACK (gtk_widget_get_parent (pages[i])), pages[i]);
      pump (200);
      g_assert_true (gtk_widget_get_mapped (pages[i]));
      collect_mnemonics (GTK_WIDGET (t.window), seen, clashes);
      for (guint k = 0; k < clashes->len; k++)
        g_test_message ("mnemonic clash: %s", (gchar *) g_ptr_array_index (clashes, k));
      g_assert_cmpuint (clashes->len, ==, 0);
    }
}

/* 8 and 10. Zoom keys work with the focus anywhere on the Trace page; an
 * empty Trace page has nothing to save or zoom. */
static void
test_trace_shortcuts (void)
{
  InspectorTracePage *trace;
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-trace.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  GtkWidget *timeline;
  gdouble scale0, scale1;

  fresh_window ();
  inspector_window_set_page (t.window, "trace");
  trace = inspector_window_get_trace_page (t.window);
  pump (200);
  /* empty: the Save and zoom buttons are insensitive, Ctrl+plus does nothing */
  g_assert_cmpuint (inspector_trace_model_get_n_slices (inspector_trace_page_get_model (trace)), ==, 0);
  for (guint i = 0; i < 4; i++)
    {
      const gchar *names[] = { "trace.save", "trace.zoom-in", "trace.zoom-out", "trace.zoom-fit" };
      GtkWidget *button = find_actionable (GTK_WIDGET (trace), names[i]);

      g_assert_nonnull (button);
      g_assert_false (gtk_widget_is_sensitive (button));
    }
  g_assert_nonnull (find_actionable (GTK_WIDGET (trace), "trace.open"));
  g_assert_true (gtk_widget_is_sensitive (find_actionable (GTK_WIDGET (trace), "trace.open")));
  g_assert_true (inspector_trace_page_load (trace, file, &error));
  g_assert_no_error (error);
  pump (300);
  timeline = GTK_WIDGET (inspector_trace_page_get_timeline (trace));
  g_assert_true (gtk_widget_is_sensitive (find_actionable (GTK_WIDGET (trace), "trace.save")));
  scale0 = inspector_timeline_get_scale (INSPECTOR_TIMELINE (timeline));
  /* the focus on the statistics, not on the timeline */
  gtk_widget_grab_focus (inspector_trace_page_get_stats_view (trace));
  press_key (GTK_WINDOW (t.window), XK_plus, GDK_CONTROL_MASK);
  scale1 = inspector_timeline_get_scale (INSPECTOR_TIMELINE (timeline));
  g_assert_cmpfloat (scale1, >, scale0 * 1.2);
  press_key (GTK_WINDOW (t.window), XK_0, GDK_CONTROL_MASK);
  g_assert_cmpfloat_with_epsilon (inspector_timeline_get_scale (INSPECTOR_TIMELINE (timeline)), scale0, scale0 * 1e-6);
}


/* Filter chips: Space on "Errors Only" leaves the failed operations, the
 * actor drop-down one actor's, the GPU chip off hides GPU execution; what
 * is hidden is neither drawn nor counted. */
static void
test_trace_filter_chips (void)
{
  InspectorTracePage *trace;
  InspectorTraceFilterBar *bar;
  InspectorTimeline *timeline;
  InspectorTraceModel *model;
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-trace.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  GtkWidget *errors, *gpu;
  GtkDropDown *actors;
  GListModel *names;
  guint n, n_failed = 0, drawn_all, blas = GTK_INVALID_LIST_POSITION;

  fresh_window ();
  inspector_window_set_page (t.window, "trace");
  trace = inspector_window_get_trace_page (t.window);
  g_assert_true (inspector_trace_page_load (trace, file, &error));
  g_assert_no_error (error);
  pump (300);
  bar = inspector_trace_page_get_filter_bar (trace);
  timeline = inspector_trace_page_get_timeline (trace);
  model = inspector_trace_page_get_model (trace);
  n = inspector_trace_model_get_n_slices (model);
  g_assert_cmpuint (n, >, 0);
  for (guint i = 0; i < n; i++)
    {
      g_assert_true (inspector_timeline_is_shown (timeline, i));
      n_failed += inspector_trace_model_get_slice (model, i)->failed;
    }
  g_assert_cmpuint (n_failed, >, 0);
  drawn_all = inspector_timeline_get_n_drawn_boxes (timeline);
  g_assert_cmpuint (drawn_all, >, 0);

  /* Tab reaches the chip; Space flips it */
  errors = inspector_trace_filter_bar_get_chip (bar, "errors");
  g_assert_true (gtk_widget_get_focusable (errors));
  gtk_widget_grab_focus (errors);
  press_key (GTK_WINDOW (t.window), XK_space, 0);
  g_assert_true (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (errors)));
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (inspector_timeline_is_shown (timeline, i), ==, inspector_trace_model_get_slice (model, i)->failed);
  pump (200);
  g_assert_cmpuint (inspector_timeline_get_n_drawn_boxes (timeline), <=, n_failed);
  g_assert_cmpuint (inspector_timeline_get_n_drawn_boxes (timeline), <, drawn_all);
  save_picture ("trace-errors-only");
  press_key (GTK_WINDOW (t.window), XK_space, 0);
  g_assert_false (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (errors)));

  /* one actor */
  actors = inspector_trace_filter_bar_get_actors (bar);
  names = gtk_drop_down_get_model (actors);
  for (guint i = 0; i < g_list_model_get_n_items (names); i++)
    if (g_str_equal (gtk_string_list_get_string (GTK_STRING_LIST (names), i), "blas"))
      blas = i;
  g_assert_cmpuint (blas, !=, GTK_INVALID_LIST_POSITION);
  gtk_drop_down_set_selected (actors, blas);
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (inspector_timeline_is_shown (timeline, i), ==,
                     g_strcmp0 (inspector_trace_model_get_slice (model, i)->actor, "blas") == 0);
  gtk_drop_down_set_selected (actors, 0);

  /* no GPU execution */
  gpu = inspector_trace_filter_bar_get_chip (bar, "gpu");
  gtk_widget_grab_focus (gpu);
  press_key (GTK_WINDOW (t.window), XK_space, 0);
  g_assert_false (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (gpu)));
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (inspector_timeline_is_shown (timeline, i), ==,
                     inspector_trace_model_get_slice (model, i)->kind != INSPECTOR_SLICE_GPU);
  press_key (GTK_WINDOW (t.window), XK_space, 0);
  for (guint i = 0; i < n; i++)
    g_assert_true (inspector_timeline_is_shown (timeline, i));
}

/* The first mapped widget of @type under @root whose label or title is @text. */
static GtkWidget *
find_labelled (GtkWidget   *root,
               GType        type,
               const gchar *text)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type) && gtk_widget_get_mapped (root))
    {
      if (text == NULL)
        return root;
      if (GTK_IS_LABEL (root) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (root)), text) == 0)
        return root;
      if (ADW_IS_STATUS_PAGE (root) && g_strcmp0 (adw_status_page_get_title (ADW_STATUS_PAGE (root)), text) == 0)
        return root;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_labelled (c, type, text);
      if (found)
        return found;
    }
  return NULL;
}

typedef struct {
  InspectorCacheModel *model;
  guint                n;
} Entries;

static gboolean
has_n_entries (gpointer data)
{
  Entries *e = data;
  return inspector_cache_model_get_n_entries (e->model) == e->n;
}

static gboolean
has_n_visible (gpointer data)
{
  Entries *e = data;
  return g_list_model_get_n_items (G_LIST_MODEL (e->model)) == e->n;
}

/* 3. The selection follows the entry, not the row, when another process
 * adds one; Delete offers an undo and selects nothing, so a second Delete
 * deletes nothing; the entry leaves the disk when the toast goes. */
static void
test_cache_delete (void)
{
  InspectorCachePage *cache;
  InspectorCacheModel *model;
  g_autoptr(GError) error = NULL;
  GtkWidget *list;
  Entries e;

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  reset_window ();
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  model = inspector_cache_page_get_model (cache);
  e.model = model;
  e.n = 3;
  g_assert_true (wait_for (has_n_entries, &e));
  inspector_cache_page_select_key (cache, t.keys[1]);
  g_assert_cmpstr (inspector_cache_page_get_selected_key (cache), ==, t.keys[1]);

  /* another process adds "delta": the list reloads, beta stays selected */
  t.keys[3] = compile_into_cache (3, &error);
  g_assert_no_error (error);
  e.n = 4;
  g_assert_true (wait_for (has_n_entries, &e));
  pump (100);
  g_assert_cmpstr (inspector_cache_page_get_selected_key (cache), ==, t.keys[1]);

  /* Delete, twice: beta leaves the list, nothing else does */
  list = find_labelled (GTK_WIDGET (cache), GTK_TYPE_LIST_VIEW, NULL);
  g_assert_nonnull (list);
  gtk_widget_grab_focus (list);
  press_key (GTK_WINDOW (t.window), XK_Delete, 0);
  g_assert_cmpuint (inspector_cache_model_find (model, t.keys[1]), ==, G_MAXUINT);
  g_assert_null (inspector_cache_page_get_selected_key (cache));
  press_key (GTK_WINDOW (t.window), XK_Delete, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 3);

  /* Undo: back, and selected */
  gtk_widget_activate_action (GTK_WIDGET (cache), "cache.undo-delete", NULL);
  pump (100);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), ==, 4);
  g_assert_cmpuint (inspector_cache_model_find (model, t.keys[1]), !=, G_MAXUINT);
  g_assert_cmpstr (inspector_cache_page_get_selected_key (cache), ==, t.keys[1]);

  /* Delete without undo: gone from the disk once the toast is gone */
  press_key (GTK_WINDOW (t.window), XK_Delete, 0);
  e.n = 3;
  g_assert_true (wait_for (has_n_entries, &e));
  g_assert_cmpuint (inspector_cache_model_find (model, t.keys[1]), ==, G_MAXUINT);
  g_assert_cmpuint (inspector_cache_model_find (model, t.keys[0]), !=, G_MAXUINT);
  g_assert_cmpuint (inspector_cache_model_find (model, t.keys[2]), !=, G_MAXUINT);
  g_assert_cmpuint (inspector_cache_model_find (model, t.keys[3]), !=, G_MAXUINT);
}

static void
on_export_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GError **error = user_data;

  if (!inspector_cache_page_export_finish (INSPECTOR_CACHE_PAGE (source), result, error) && *error == NULL)
    g_assert_not_reached ();
  g_object_set_data (source, "export-done", GINT_TO_POINTER (1));
}

static gboolean
export_done (gpointer page)
{
  return g_object_get_data (page, "export-done") != NULL;
}

/* Add: export the selected entry's CUBIN (an ELF file) and PTX. */
static void
test_cache_export (void)
{
  InspectorCachePage *cache;
  const gchar *parts[] = { "cubin", "ptx" };

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  reset_window ();
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  pump (200);
  inspector_cache_page_select_key (cache, t.keys[0]);
  g_assert_cmpstr (inspector_cache_page_get_selected_key (cache), ==, t.keys[0]);
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("%s/export.%s", t.dir, parts[i]);
      g_autoptr(GFile) file = g_file_new_for_path (path);
      g_autoptr(GError) error = NULL;
      g_autofree gchar *contents = NULL;
      gsize len = 0;

      g_object_set_data (G_OBJECT (cache), "export-done", NULL);
      inspector_cache_page_export_async (cache, parts[i], file, NULL, on_export_done, &error);
      g_assert_true (wait_for (export_done, cache));
      if (error)
        {
          /* an entry without that part says which part and which entry */
          g_assert_nonnull (strstr (error->message, i == 0 ? "CUBIN" : "PTX"));
          continue;
        }
      g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
      if (i == 0)
        g_assert_true (len > 64 && memcmp (contents, "\177ELF", 4) == 0);
      else
        g_assert_nonnull (strstr (contents, ".version"));
      g_unlink (path);
    }
}

/* Leaves a picture of the window in the build directory, to look at. */
static void
save_picture (const gchar *name)
{
  const gchar *lang = g_getenv ("LANGUAGE");
  g_autofree gchar *file = g_strdup_printf ("actions-%s-%s.png", name, lang && *lang ? lang : "C");
  g_autofree gchar *path = g_test_build_filename (G_TEST_BUILT, file, NULL);
  g_autoptr(GError) error = NULL;

  pump (200);
  if (!inspector_screenshot_save (GTK_WIDGET (t.window), path, &error))
    g_test_message ("no picture %s: %s", path, error->message);
}

/* A fixture key still in the cache (the delete test removes one). */
static guint
present_key (InspectorCachePage *cache)
{
  for (guint i = 0; i < G_N_ELEMENTS (t.keys); i++)
    if (t.keys[i] && inspector_cache_model_find (inspector_cache_page_get_model (cache), t.keys[i]) != G_MAXUINT)
      return i;
  g_assert_not_reached ();
  return 0;
}

/* Selects the entry @key again, so that its files are read again. */
static void
reselect (InspectorCachePage *cache,
          guint               key)
{
  inspector_cache_page_select (cache, GTK_INVALID_LIST_POSITION);
  pump (50);
  inspector_cache_page_select_key (cache, t.keys[key]);
}

/* Shows the details tab titled @title by clicking its switcher button;
 * @page is the tab's content. */
static void
show_details_tab (InspectorCachePage *cache,
                  const gchar        *title,
                  GtkWidget          *page)
{
  GtkWidget *label = find_labelled (GTK_WIDGET (cache), GTK_TYPE_LABEL, title);
  GtkStack *stack = GTK_STACK (gtk_widget_get_parent (page));
  GtkWidget *button;

  g_assert_nonnull (label);
  button = gtk_widget_get_ancestor (label, GTK_TYPE_TOGGLE_BUTTON);
  g_assert_nonnull (button);
  click (button);
  if (gtk_stack_get_visible_child (stack) != page)
    {
      g_test_message ("the click on “%s” did not arrive; activating the button instead", title);
      /* (scrolled out of sight in a narrow pane); a button clicks 250 ms
       * after its activation */
      gtk_widget_activate (button);
      pump (400);
    }
  g_assert_true (gtk_stack_get_visible_child (stack) == page);
  g_assert_true (gtk_widget_get_mapped (page));
}

static gboolean
panel_has_kernels (gpointer data)
{
  return inspector_occupancy_panel_get_n_kernels (data) > 0 && inspector_occupancy_panel_get_result (data) != NULL;
}

/* What the panel should say for the selected entry's kernel. */
static InspectorOccupancy
expected_occupancy (guint  key,
                    gint   block)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (t.cache_dir);
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  g_autoptr(GBytes) cubin = NULL;
  g_autoptr(GPtrArray) res = NULL;
  g_autoptr(GError) error = NULL;
  InspectorKernelResources *r;
  InspectorSmLimits limits;
  InspectorOccupancy occ;

  entry = atomr_kernel_cache_lookup (cache, t.keys[key], &error);
  g_assert_no_error (error);
  cubin = atomr_kernel_cache_entry_load_cubin (entry, &error);
  g_assert_no_error (error);
  res = inspector_cubin_resources (cubin, "sm_90", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (res->len, ==, 1);
  r = g_ptr_array_index (res, 0);
  g_assert_true (inspector_sm_limits_for_arch ("sm_90", &limits, NULL));
  g_assert_true (inspector_occupancy_compute (&limits, (gint) r->registers, r->shared_bytes, 0, block, &occ, NULL));
  return occ;
}

/* Cache page, Resources tab: the entry's kernel with its registers, and
 * the occupancy for sm_90 (the entry's architecture; no GPU here); typing
 * another block size recomputes it. */
static void
test_cache_occupancy (void)
{
  InspectorCachePage *cache;
  InspectorOccupancyPanel *panel;
  GtkSpinButton *spin;
  InspectorOccupancy want;
  const InspectorOccupancy *got;
  guint key;

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  reset_window ();
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  panel = inspector_cache_page_get_occupancy_panel (cache);
  pump (200);
  key = present_key (cache);
  inspector_cache_page_select_key (cache, t.keys[key]);
  show_details_tab (cache, _("Resources"), GTK_WIDGET (panel));
  g_assert_true (wait_for (panel_has_kernels, panel));
  g_assert_cmpuint (inspector_occupancy_panel_get_n_kernels (panel), ==, 1);
  g_assert_cmpstr (inspector_occupancy_panel_get_arch (panel), ==, "sm_90");
  want = expected_occupancy (key, 256);
  got = inspector_occupancy_panel_get_result (panel);
  g_assert_cmpint (got->blocks_per_sm, ==, want.blocks_per_sm);
  g_assert_cmpfloat (got->occupancy, ==, want.occupancy);

  /* the user types 1000 threads per block */
  spin = inspector_occupancy_panel_get_block_spin (panel);
  gtk_widget_grab_focus (GTK_WIDGET (spin));
  press_key (GTK_WINDOW (t.window), XK_a, GDK_CONTROL_MASK);
  press_key (GTK_WINDOW (t.window), XK_1, 0);
  press_key (GTK_WINDOW (t.window), XK_0, 0);
  press_key (GTK_WINDOW (t.window), XK_0, 0);
  press_key (GTK_WINDOW (t.window), XK_0, 0);
  press_key (GTK_WINDOW (t.window), XK_Return, 0);
  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 1000);
  want = expected_occupancy (key, 1000);
  got = inspector_occupancy_panel_get_result (panel);
  g_assert_nonnull (got);
  g_assert_cmpint (got->blocks_per_sm, ==, want.blocks_per_sm);
  g_assert_cmpint (got->warps_per_sm, ==, want.warps_per_sm);
  {
    g_autofree gchar *summary = inspector_occupancy_panel_get_summary (panel);
    g_autofree gchar *blocks = g_strdup_printf ("%d", want.warps_per_sm);
    g_assert_nonnull (strstr (summary, blocks));
  }
  save_picture ("cache-occupancy");
}

static gboolean
sass_state_is (gpointer data)
{
  InspectorSassView *view = inspector_cache_page_get_sass_view (inspector_window_get_cache_page (t.window));
  return g_strcmp0 (inspector_sass_view_get_state (view), data) == 0;
}

/* Cache page, SASS tab: with nvdisasm on PATH (a fake one here) the
 * entry's CUBIN disassembled; when it fails, what it printed; without
 * one, a clear "nvdisasm Not Found" with how to get it. */
static void
test_cache_sass (void)
{
  g_autofree gchar *root = g_dir_make_tmp ("inspector-sass-XXXXXX", NULL);
  g_autofree gchar *bin = g_build_filename (root, "bin", NULL);
  g_autofree gchar *tool = g_build_filename (bin, "nvdisasm", NULL);
  g_autofree gchar *src = g_test_build_filename (G_TEST_DIST, "fake-nvdisasm", NULL);
  g_autofree gchar *script = NULL, *text = NULL, *old_path = g_strdup (g_getenv ("PATH"));
  g_autofree gchar *old_home = g_strdup (g_getenv ("CUDA_HOME"));
  InspectorCachePage *cache;
  InspectorSassView *view;
  guint key;

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (bin, 0755), ==, 0);
  g_assert_true (g_file_get_contents (src, &script, NULL, NULL));
  g_assert_true (g_file_set_contents (tool, script, -1, NULL));
  g_assert_cmpint (g_chmod (tool, 0755), ==, 0);
  g_setenv ("PATH", bin, TRUE);
  g_setenv ("CUDA_HOME", root, TRUE);   /* no bin/nvdisasm under it... */
  g_unlink (tool);                      /* ...and none on PATH: not found */

  reset_window ();
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  view = inspector_cache_page_get_sass_view (cache);
  pump (200);
  key = present_key (cache);
  inspector_cache_page_select_key (cache, t.keys[key]);
  show_details_tab (cache, _("SASS"), GTK_WIDGET (view));
  g_assert_true (wait_for (sass_state_is, (gpointer) "missing"));
  g_assert_nonnull (find_labelled (GTK_WIDGET (cache), ADW_TYPE_STATUS_PAGE, _("nvdisasm Not Found")));
  text = inspector_sass_view_get_text (view);
  g_assert_nonnull (strstr (text, bin));
  g_assert_nonnull (strstr (text, "CUDA_HOME"));
  g_clear_pointer (&text, g_free);
  save_picture ("cache-sass-missing");

  /* installed: the entry, selected again, is disassembled */
  g_assert_true (g_file_set_contents (tool, script, -1, NULL));
  g_assert_cmpint (g_chmod (tool, 0755), ==, 0);
  reselect (cache, key);
  g_assert_true (wait_for (sass_state_is, (gpointer) "code"));
  text = inspector_sass_view_get_text (view);
  g_assert_nonnull (strstr (text, "fake nvdisasm"));
  g_assert_nonnull (strstr (text, "EXIT ;"));
  g_clear_pointer (&text, g_free);
  save_picture ("cache-sass");

  /* failing: its message */
  g_setenv ("FAKE_NVDISASM_FAIL", "1", TRUE);
  reselect (cache, key);
  g_assert_true (wait_for (sass_state_is, (gpointer) "error"));
  text = inspector_sass_view_get_text (view);
  g_assert_nonnull (strstr (text, "Unsupported ELF machine"));
  g_unsetenv ("FAKE_NVDISASM_FAIL");

  g_setenv ("PATH", old_path, TRUE);
  if (old_home)
    g_setenv ("CUDA_HOME", old_home, TRUE);
  else
    g_unsetenv ("CUDA_HOME");
  g_unlink (tool);
  g_rmdir (bin);
  g_rmdir (root);
}

/* The cache entry whose flags contain every one of @want, or NULL. */
static AtomrKernelCacheEntry *
entry_with_flags (const gchar * const *want)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (t.cache_dir);
  g_autoptr(GListModel) list = atomr_kernel_cache_list (cache, NULL);

  for (guint i = 0; list && i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
      const gchar * const *flags = atomr_kernel_cache_entry_get_flags (e);
      gboolean all = TRUE;

      for (guint w = 0; want[w] && all; w++)
        all = flags && g_strv_contains (flags, want[w]);
      if (all)
        return g_steal_pointer (&e);
    }
  return NULL;
}

/* Editor flags: maximum registers (typed), device debug (Space on the
 * switch) and other flags go into the compile, so into the cache key; they
 * are kept per document and come back when the file is opened again;
 * flags that do not parse are refused with a message. */
static void
test_editor_flags (void)
{
  g_autofree gchar *path = g_build_filename (t.dir, "flags.cu", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  const gchar *src = "extern \"C\" __global__ void flagged (float *y) { y[threadIdx.x] *= 3.0f; }\n";
  const gchar *want[] = { "--maxrregcount=32", "--device-debug", "--extra-device-vectorization", NULL };
  InspectorEditorPage *editor;
  GtkWidget *spin, *debug, *extra;
  gint result = -1;
  gulong id;

  if (!t.have_cache)
    {
      g_test_skip ("no NVRTC");
      return;
    }
  g_assert_true (g_file_set_contents (path, src, -1, NULL));
  reset_window ();
  editor = inspector_window_get_editor_page (t.window);
  g_assert_true (inspector_editor_page_load_file (editor, file, &error));
  g_assert_no_error (error);
  spin = inspector_editor_page_get_option_widget (editor, "max-registers");
  debug = inspector_editor_page_get_option_widget (editor, "debug");
  extra = inspector_editor_page_get_option_widget (editor, "extra-flags");
  g_assert_nonnull (spin);
  g_assert_nonnull (debug);
  g_assert_nonnull (extra);

  /* the user types 32 registers and switches device debug on */
  gtk_widget_grab_focus (spin);
  press_key (GTK_WINDOW (t.window), XK_a, GDK_CONTROL_MASK);
  press_key (GTK_WINDOW (t.window), XK_3, 0);
  press_key (GTK_WINDOW (t.window), XK_2, 0);
  press_key (GTK_WINDOW (t.window), XK_Return, 0);
  g_assert_cmpint (gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (spin)), ==, 32);
  gtk_widget_grab_focus (debug);
  press_key (GTK_WINDOW (t.window), XK_space, 0);
  g_assert_true (gtk_switch_get_active (GTK_SWITCH (debug)));
  gtk_editable_set_text (GTK_EDITABLE (extra), "--extra-device-vectorization");

  id = g_signal_connect (editor, "compiled", G_CALLBACK (on_compiled), &result);
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.compile", NULL);
  g_assert_true (wait_for (compiled, &result));
  g_test_message ("compile: %s", inspector_editor_page_get_status (editor));
  g_assert_cmpint (result, ==, TRUE);

  /* in the key: an entry with these flags, another than the plain one's */
  entry = entry_with_flags (want);
  g_assert_nonnull (entry);
  g_assert_nonnull (strstr (atomr_kernel_cache_entry_get_arch (entry), "sm_"));

  /* another document, then this one again: its flags come back */
  inspector_editor_page_set_text (editor, "other.cu", "// nothing\n");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), 0);
  gtk_switch_set_active (GTK_SWITCH (debug), FALSE);
  gtk_editable_set_text (GTK_EDITABLE (extra), "");
  g_assert_true (inspector_editor_page_load_file (editor, file, &error));
  g_assert_no_error (error);
  g_assert_cmpint (gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (spin)), ==, 32);
  g_assert_true (gtk_switch_get_active (GTK_SWITCH (debug)));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (extra)), ==, "--extra-device-vectorization");

  /* flags that do not parse: refused, said why */
  result = -1;
  gtk_editable_set_text (GTK_EDITABLE (extra), "--define-macro='unclosed");
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.compile", NULL);
  g_assert_true (wait_for (compiled, &result));
  g_assert_cmpint (result, ==, FALSE);
  g_assert_nonnull (strstr (inspector_editor_page_get_status (editor), "unclosed"));
  g_signal_handler_disconnect (editor, id);

  /* leave the panel as the other tests expect it */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), 0);
  gtk_switch_set_active (GTK_SWITCH (debug), FALSE);
  gtk_editable_set_text (GTK_EDITABLE (extra), "");
  inspector_editor_page_set_text (editor, "kernel.cu", "");
  g_unlink (path);
}

static gboolean
run_finished (gpointer data)
{
  InspectorRunPanel *panel = data;
  const gchar *state = inspector_run_panel_get_state (panel);

  return g_strcmp0 (state, "running") != 0 && g_strcmp0 (state, "idle") != 0;
}

/* Run (F5) launches the kernel in atomr-kernel-runner: arguments that do
 * not parse are refused at once; a runner that crashes (here a stand-in
 * that kills itself) is reported and the window carries on; the real
 * runner's error (no GPU here) is shown. */
static void
test_editor_run (void)
{
  g_autofree gchar *root = g_dir_make_tmp ("inspector-run-XXXXXX", NULL);
  g_autofree gchar *crasher = g_build_filename (root, "crashing-runner", NULL);
  g_autofree gchar *real = g_strdup (g_getenv ("ATOMR_INSPECTOR_RUNNER"));
  InspectorEditorPage *editor;
  InspectorRunPanel *panel;
  GtkWidget *args, *kernel;

  g_assert_nonnull (real);
  g_assert_true (g_file_set_contents (crasher, "#!/bin/sh\necho 'illegal memory access' >&2\nkill -SEGV $$\n", -1, NULL));
  g_assert_cmpint (g_chmod (crasher, 0755), ==, 0);

  reset_window ();
  editor = inspector_window_get_editor_page (t.window);
  inspector_editor_page_set_text (editor, "saxpy.cu",
                                  "extern \"C\" __global__ void saxpy (float a, const float *x, float *y, unsigned n)\n"
                                  "{ unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }\n");
  panel = inspector_editor_page_get_run_panel (editor);
  args = inspector_run_panel_get_field (panel, "args");
  kernel = inspector_run_panel_get_field (panel, "kernel");

  /* a typo: said at once, no process */
  gtk_editable_set_text (GTK_EDITABLE (args), "f32:2.0, f32[1024]=random, f32[1024]=lots, u32:1024");
  gtk_widget_grab_focus (editor_view ());
  press_key (GTK_WINDOW (t.window), XK_F5, 0);
  g_assert_true (wait_for (run_finished, panel));
  g_assert_cmpstr (inspector_run_panel_get_state (panel), ==, "error");
  g_assert_nonnull (strstr (inspector_run_panel_get_result (panel), "=lots"));
  /* the kernel was found in the source */
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (kernel)), ==, "saxpy");

  /* the runner crashes: reported, the window lives on */
  gtk_editable_set_text (GTK_EDITABLE (args), "f32:2.0, f32[1024]=random, f32[1024]=linear, u32:1024");
  g_setenv ("ATOMR_INSPECTOR_RUNNER", crasher, TRUE);
  press_key (GTK_WINDOW (t.window), XK_F5, 0);
  g_assert_true (wait_for (run_finished, panel));
  g_assert_cmpstr (inspector_run_panel_get_state (panel), ==, "crashed");
  g_assert_nonnull (strstr (inspector_run_panel_get_result (panel), "signal 11"));
  save_picture ("editor-run-crashed");

  /* and still runs: the real runner, which says what it found */
  g_setenv ("ATOMR_INSPECTOR_RUNNER", real, TRUE);
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.run", NULL);
  g_assert_true (wait_for (run_finished, panel));
  g_test_message ("run: %s: %s", inspector_run_panel_get_state (panel), inspector_run_panel_get_result (panel));
  g_assert_true (g_str_equal (inspector_run_panel_get_state (panel), "error") ||
                 g_str_equal (inspector_run_panel_get_state (panel), "done"));
  g_assert_nonnull (t.window);

  gtk_text_buffer_set_modified (editor_buffer (), FALSE);
  g_unlink (crasher);
  g_rmdir (root);
}

/* 10. A search without a match says so (not "run the demo"). */
static void
test_cache_search_empty (void)
{
  InspectorCachePage *cache;
  GtkWidget *entry;
  Entries e;

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  reset_window ();
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  pump (100);
  entry = find_labelled (GTK_WIDGET (cache), GTK_TYPE_SEARCH_ENTRY, NULL);
  g_assert_nonnull (entry);
  gtk_editable_set_text (GTK_EDITABLE (entry), "no-such-kernel-zzz");
  e.model = inspector_cache_page_get_model (cache);
  e.n = 0;
  g_assert_true (wait_for (has_n_visible, &e));
  pump (100);
  g_assert_null (find_labelled (GTK_WIDGET (cache), ADW_TYPE_STATUS_PAGE, _("No Cached Kernels")));
  g_assert_nonnull (find_labelled (GTK_WIDGET (cache), ADW_TYPE_STATUS_PAGE, _("No Matching Kernels")));
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  e.n = inspector_cache_model_get_n_entries (e.model);
  g_assert_true (wait_for (has_n_visible, &e));
}

/* The filter chips of the Cache page (architecture, last used, size)
 * narrow the list with the search, and say so when nothing is left. */
static void
test_cache_filter_chips (void)
{
  InspectorCachePage *cache;
  InspectorCacheModel *model;
  g_auto(GStrv) archs = NULL;
  Entries e;

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  reset_window ();
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  pump (100);
  model = inspector_cache_page_get_model (cache);
  archs = inspector_cache_model_dup_archs (model);
  g_assert_cmpuint (g_strv_length (archs), >=, 1);

  inspector_cache_page_set_filters (cache, archs[0], INSPECTOR_CACHE_AGE_ANY, INSPECTOR_CACHE_SIZE_ANY);
  pump (50);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (model)), >, 0);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (model)); i++)
    {
      g_autoptr(AtomrKernelCacheEntry) entry = g_list_model_get_item (G_LIST_MODEL (model), i);
      g_assert_cmpstr (atomr_kernel_cache_entry_get_arch (entry), ==, archs[0]);
    }

  inspector_cache_page_set_filters (cache, NULL, INSPECTOR_CACHE_AGE_ANY, INSPECTOR_CACHE_SIZE_LARGE);
  e.model = model;
  e.n = 0;
  g_assert_true (wait_for (has_n_visible, &e));
  pump (100);
  g_assert_nonnull (find_labelled (GTK_WIDGET (cache), ADW_TYPE_STATUS_PAGE, _("No Matching Kernels")));

  inspector_cache_page_set_filters (cache, NULL, INSPECTOR_CACHE_AGE_ANY, INSPECTOR_CACHE_SIZE_ANY);
  e.n = inspector_cache_model_get_n_entries (model);
  g_assert_true (wait_for (has_n_visible, &e));
}

/* 4. Clicking a statistics header sorts by that column, and again the
 * other way round. */
static gboolean
counts_sorted (GListModel *rows,
               gint        direction)
{
  guint n = g_list_model_get_n_items (rows);

  for (guint i = 1; i < n; i++)
    {
      g_autoptr(InspectorOperationStats) a = g_list_model_get_item (rows, i - 1);
      g_autoptr(InspectorOperationStats) b = g_list_model_get_item (rows, i);
      gint c = (gint) inspector_operation_stats_get_count (b) - (gint) inspector_operation_stats_get_count (a);

      if (c * direction < 0)
        return FALSE;
    }
  return TRUE;
}

static void
test_stats_sort (void)
{
  InspectorTracePage *trace;
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-trace.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  GtkWidget *view, *header;
  GListModel *rows;
  gboolean up, down;

  reset_window ();
  inspector_window_set_page (t.window, "trace");
  trace = inspector_window_get_trace_page (t.window);
  g_assert_true (inspector_trace_page_load (trace, file, &error));
  g_assert_no_error (error);
  pump (400);
  view = inspector_trace_page_get_stats_view (trace);
  rows = G_LIST_MODEL (gtk_column_view_get_model (GTK_COLUMN_VIEW (view)));
  g_assert_cmpuint (g_list_model_get_n_items (rows), >, 2);
  /* the fixture's totals order is not its counts order */
  g_assert_false (counts_sorted (rows, 1) && counts_sorted (rows, -1));
  header = find_labelled (view, GTK_TYPE_LABEL, _("Count"));
  g_assert_nonnull (header);
  click (header);
  up = counts_sorted (rows, 1);
  down = counts_sorted (rows, -1);
  g_assert_true (up || down);
  click (header);
  g_assert_true (up ? counts_sorted (rows, -1) : counts_sorted (rows, 1));
}

/* Widgets that need more than @limit pixels, deepest first, for the log. */
static gboolean
report_wide (GtkWidget *widget,
             int        limit,
             guint      depth)
{
  gboolean child_wide = FALSE;
  int min = 0;

  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    if (!GTK_IS_NATIVE (c) && gtk_widget_get_visible (c))
      child_wide |= report_wide (c, limit, depth + 1);
  gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  if (min > limit && !child_wide)
    {
      g_autoptr(GString) path = g_string_new (NULL);

      for (GtkWidget *w = widget; w; w = gtk_widget_get_parent (w))
        g_string_prepend (path, G_OBJECT_TYPE_NAME (w)), g_string_prepend (path, "/");
      g_test_message ("too wide: %s %s (%d px)", path->str,
                      GTK_IS_LABEL (widget) ? gtk_label_get_label (GTK_LABEL (widget)) : "", min);
    }
  return min > limit;
}

/* 7. The window fits 360 px (what the metainfo promises), in English and
 * in German, on every page. */
static void
test_narrow (void)
{
  int min = 0;

  fresh_window ();
  for (guint i = 0; i < 3; i++)
    {
      const gchar *pages[] = { "cache", "editor", "trace" };
      inspector_window_set_page (t.window, pages[i]);
      pump (100);
      gtk_widget_measure (gtk_window_get_child (GTK_WINDOW (t.window)), GTK_ORIENTATION_HORIZONTAL, -1,
                          &min, NULL, NULL, NULL);
      g_test_message ("%s page: %d px", pages[i], min);
      if (min > 360)
        report_wide (gtk_window_get_child (GTK_WINDOW (t.window)), 360, 0);
      g_assert_cmpint (min, <=, 360);
    }
}

static gboolean
model_has_key (gpointer data)
{
  InspectorCachePage *cache = inspector_window_get_cache_page (t.window);
  return inspector_cache_model_find (inspector_cache_page_get_model (cache), data) != G_MAXUINT;
}

static gboolean
description_is (gpointer data)
{
  InspectorOccupancyPanel *panel = inspector_cache_page_get_occupancy_panel (inspector_window_get_cache_page (t.window));
  g_autofree gchar *text = inspector_occupancy_panel_get_description (panel);
  return g_str_equal (text, data);
}

/* The subtitle the panel must show for @r (the panel's own format). */
static gchar *
expected_subtitle (InspectorKernelResources *r)
{
  g_autofree gchar *shared = g_format_size_full (r->shared_bytes, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree gchar *stack = g_format_size_full (r->stack_bytes, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree gchar *stores = g_format_size_full (r->spill_stores, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree gchar *loads = g_format_size_full (r->spill_loads, G_FORMAT_SIZE_IEC_UNITS);

  return g_strdup_printf (_("%u registers · %s static shared memory · %s stack (local memory) · "
                            "spills: %s stored, %s loaded"),
                          r->registers, shared, stack, stores, loads);
}

#define SPILL_SOURCE \
  "extern \"C\" __global__ void spiller(float *p, int n){ __shared__ float sm[256]; float r[48];\n" \
  " for(int i=0;i<48;i++) r[i]=p[i*n+threadIdx.x];\n" \
  " sm[threadIdx.x]=r[threadIdx.x%48]; __syncthreads();\n" \
  " float s=0; for(int i=0;i<48;i++) for(int j=0;j<48;j++) s+=r[i]*r[j]*sm[(i+j)%256];\n" \
  " p[threadIdx.x]=s; }\n"

/* Cache page, Resources tab, spills (issue 19): an entry the library
 * compiled for sm_90 shows ptxas' spills as recorded (Analyse off); a PTX
 * entry (compute_90, --maxrregcount=32, a kernel that spills) says its
 * spills are unknown, and Analyse (the button, in a worker) shows what
 * ptxas reports through nvJitLink — the same numbers the library's
 * atomr_kernel_cache_entry_analyse_resources() gives. */
static void
test_cache_resources (void)
{
  InspectorCachePage *cache;
  InspectorOccupancyPanel *panel;
  GtkWidget *button;
  g_autoptr(AtomrKernelCache) lib_cache = NULL;
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  g_autoptr(GPtrArray) want = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *key = NULL, *arch = NULL, *json = NULL, *done = NULL, *sub = NULL, *exp = NULL;
  guint fixture;

  if (!t.have_cache)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  reset_window ();
  inspector_window_set_page (t.window, "cache");
  cache = inspector_window_get_cache_page (t.window);
  panel = inspector_cache_page_get_occupancy_panel (cache);
  button = inspector_occupancy_panel_get_analyse_button (panel);
  pump (200);

  /* recorded at compile time */
  fixture = present_key (cache);
  inspector_cache_page_select_key (cache, t.keys[fixture]);
  show_details_tab (cache, _("Resources"), GTK_WIDGET (panel));
  g_assert_true (wait_for (description_is, (gpointer) _("Registers, shared memory and stack from the entry’s CUBIN; "
                                                       "spills as ptxas reported them when the entry was compiled")));
  g_assert_cmpuint (inspector_occupancy_panel_get_n_kernels (panel), ==, 1);
  sub = inspector_occupancy_panel_dup_kernel_subtitle (panel, 0);
  g_assert_nonnull (sub);
  g_test_message ("%s: %s", kernels[fixture][0], sub);
  g_assert_false (gtk_widget_is_sensitive (button));
  g_clear_pointer (&sub, g_free);

  /* a PTX entry: not recorded */
  lib_cache = atomr_kernel_cache_new (t.cache_dir);
  options = atomr_compile_options_new ();
  atomr_compile_options_set_arch (options, "compute_90");
  atomr_compile_options_set_max_registers (options, 32);
  atomr_compile_options_add_name_expression (options, "spiller");
  module = atomr_nvrtc_compile (SPILL_SOURCE, "spiller.cu", options, lib_cache, &error);
  g_assert_no_error (error);
  key = g_strdup (atomr_module_get_key (module));
  g_assert_true (wait_for (model_has_key, key));
  inspector_cache_page_select_key (cache, key);
  g_assert_true (wait_for (description_is, (gpointer) _("Spills unknown: ptxas’ report was not recorded for this "
                                                       "entry (compiled for a virtual architecture, or before the "
                                                       "library recorded it). Analyse asks ptxas.")));
  g_assert_true (gtk_widget_is_sensitive (button));
  arch = inspector_occupancy_panel_dup_target_arch (panel);
  g_assert_cmpstr (arch, ==, "sm_90");

  /* what the library says for it */
  entry = atomr_kernel_cache_lookup (lib_cache, key, &error);
  g_assert_no_error (error);
  json = atomr_kernel_cache_entry_analyse_resources (entry, arch, NULL, &error);
  if (json == NULL && g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY))
    {
      g_test_skip_printf ("no nvJitLink: %s", error->message);
      atomr_kernel_cache_remove (lib_cache, key, NULL);
      return;
    }
  g_assert_no_error (error);
  want = inspector_resources_from_json (json, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (want->len, ==, 1);
  g_assert_cmpuint (((InspectorKernelResources *) g_ptr_array_index (want, 0))->spill_stores, >, 0);

  /* the user clicks Analyse */
  gtk_widget_activate (button);
  done = g_strdup_printf (_("Analysed by ptxas through nvJitLink for %s (not stored in the cache)"), arch);
  g_assert_true (wait_for (description_is, done));
  g_assert_cmpuint (inspector_occupancy_panel_get_n_kernels (panel), ==, 1);
  sub = inspector_occupancy_panel_dup_kernel_subtitle (panel, 0);
  exp = expected_subtitle (g_ptr_array_index (want, 0));
  g_assert_cmpstr (sub, ==, exp);
  g_assert_false (gtk_widget_is_sensitive (button));
  save_picture ("cache-resources");

  g_assert_true (atomr_kernel_cache_remove (lib_cache, key, &error));
  g_assert_no_error (error);
}

/* The German run is German: the window's strings come translated. */
static void
test_language (void)
{
  const gchar *lang = g_getenv ("LANGUAGE");

  if (lang == NULL || !g_str_has_prefix (lang, "de"))
    {
      g_test_skip ("runs in English");
      return;
    }
  g_assert_cmpstr (_("Save Changes?"), !=, "Save Changes?");
  g_assert_cmpstr (_("No Matching Kernels"), !=, "No Matching Kernels");
  g_assert_cmpstr (_("Co_mpile"), !=, "Co_mpile");
  g_assert_cmpstr (_("A_nalyse"), !=, "A_nalyse");
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  void *xtst;
  int rc;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, g_getenv ("ATOMR_LOCALEDIR") ? g_getenv ("ATOMR_LOCALEDIR") : ATOMR_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_setenv ("GSK_RENDERER", "cairo", TRUE);
  g_setenv ("GDK_BACKEND", "x11", TRUE);
  g_setenv ("GTK_USE_PORTAL", "0", TRUE);
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  g_test_init (&argc, &argv, NULL);
  /* GTK warns about the environment (no session bus under Xvfb, no
   * accessibility bus): criticals stay fatal, warnings do not */
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);

  if (!gtk_init_check () || !GDK_IS_X11_DISPLAY (gdk_display_get_default ()))
    {
      g_test_message ("no X display");
      return 77;
    }
  xtst = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_LOCAL);
  if (xtst == NULL)
    {
      g_test_message ("libXtst.so.6 is missing: no synthesized input");
      return 77;
    }
  t.fake_key = (XTestFakeKeyEventFunc) dlsym (xtst, "XTestFakeKeyEvent");
  t.fake_button = (XTestFakeButtonEventFunc) dlsym (xtst, "XTestFakeButtonEvent");
  t.fake_motion = (XTestFakeMotionEventFunc) dlsym (xtst, "XTestFakeMotionEvent");
  g_assert_nonnull (t.fake_key);

  t.dir = g_dir_make_tmp ("inspector-actions-XXXXXX", NULL);
  t.cache_dir = g_build_filename (t.dir, "cache", NULL);
  /* Sources are kept only on request: every cache this test makes (the
   * fixture's and the app's) keeps them, so "Open in Editor" has one. */
  g_setenv ("ATOMR_CACHE_STORE_SOURCE", "1", TRUE);
  t.have_cache = TRUE;
  for (guint i = 0; i < 3 && t.have_cache; i++)
    {
      t.keys[i] = compile_into_cache (i, &error);
      if (t.keys[i] == NULL)
        {
          g_test_message ("no fixture cache: %s", error->message);
          t.have_cache = FALSE;
        }
    }

  t.app = inspector_application_new ();
  g_application_set_flags (G_APPLICATION (t.app), G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (t.app), NULL, NULL));
  g_application_hold (G_APPLICATION (t.app));

  g_test_add_func ("/inspector/actions/demo-shares-cache-key", test_demo_shares_cache_key);
  g_test_add_func ("/inspector/actions/cache-delete", test_cache_delete);
  g_test_add_func ("/inspector/actions/cache-search-empty", test_cache_search_empty);
  g_test_add_func ("/inspector/actions/cache-filter-chips", test_cache_filter_chips);
  g_test_add_func ("/inspector/actions/cache-export", test_cache_export);
  g_test_add_func ("/inspector/actions/cache-occupancy", test_cache_occupancy);
  g_test_add_func ("/inspector/actions/cache-sass", test_cache_sass);
  g_test_add_func ("/inspector/actions/ctrl-enter-compiles", test_ctrl_enter_compiles);
  g_test_add_func ("/inspector/actions/compile-shares-cache-key", test_compile_shares_cache_key);
  g_test_add_func ("/inspector/actions/stats-sort", test_stats_sort);
  g_test_add_func ("/inspector/actions/ctrl-o-per-page", test_ctrl_o_per_page);
  g_test_add_func ("/inspector/actions/trace-open-filter", test_trace_open_filter);
  g_test_add_func ("/inspector/actions/inline-diagnostics", test_inline_diagnostics);
  g_test_add_func ("/inspector/actions/open-source-async", test_open_source_async);
  g_test_add_func ("/inspector/actions/language", test_language);
  g_test_add_func ("/inspector/actions/mnemonics", test_mnemonics);
  g_test_add_func ("/inspector/actions/mnemonics-tabs", test_mnemonics_tabs);
  g_test_add_func ("/inspector/actions/narrow", test_narrow);
  g_test_add_func ("/inspector/actions/trace-shortcuts", test_trace_shortcuts);
  g_test_add_func ("/inspector/actions/trace-filter-chips", test_trace_filter_chips);
  g_test_add_func ("/inspector/actions/unsaved-open-entry", test_unsaved_open_entry);
  g_test_add_func ("/inspector/actions/editor-flags", test_editor_flags);
  g_test_add_func ("/inspector/actions/editor-run", test_editor_run);
  g_test_add_func ("/inspector/actions/cache-resources", test_cache_resources);
  g_test_add_func ("/inspector/actions/unsaved-quit", test_unsaved_quit);
  rc = g_test_run ();

  if (t.window)
    {
      gtk_text_buffer_set_modified (editor_buffer (), FALSE);
      gtk_window_destroy (GTK_WINDOW (t.window));
    }
  g_application_release (G_APPLICATION (t.app));
  g_clear_object (&t.app);
  for (guint i = 0; i < G_N_ELEMENTS (t.keys); i++)
    g_free (t.keys[i]);
  remove_tree (t.dir);
  g_free (t.cache_dir);
  g_free (t.dir);
  return rc;
}
