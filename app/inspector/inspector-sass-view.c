/* inspector-sass-view.c — the SASS tab of the Cache page
 *
 * Shows the selected entry's CUBIN disassembled by the toolkit's nvdisasm
 * (inspector-sass.c), or says why it cannot: no entry, no CUBIN, no
 * disassembler installed (and how to get one), or what the tool printed
 * when it failed.  The tool runs when the tab is shown, never on the main
 * thread, and a newer entry cancels it.  Main thread only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>

#include "inspector-sass.h"
#include "inspector-sass-view.h"

struct _InspectorSassView
{
  GtkWidget      parent_instance;

  GtkStack      *stack;
  AdwStatusPage *status;
  GtkTextView   *text_view;
  GBytes        *cubin;         /* what to show, NULL for none */
  gboolean       done;          /* cubin's disassembly is shown (or failed) */
  GCancellable  *running;
  const gchar   *state;         /* "empty", "missing", "running", "error", "code" */
};

G_DEFINE_FINAL_TYPE (InspectorSassView, inspector_sass_view, GTK_TYPE_WIDGET)

static void
show_status (InspectorSassView *self,
             const gchar       *state,
             const gchar       *icon,
             const gchar       *title,
             const gchar       *description)
{
  g_autofree gchar *escaped = description ? g_markup_escape_text (description, -1) : NULL;

  self->state = state;
  adw_status_page_set_icon_name (self->status, icon);
  adw_status_page_set_title (self->status, title);
  adw_status_page_set_description (self->status, escaped);
  gtk_stack_set_visible_child_name (self->stack, "status");
}

static void
on_disassembled (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  InspectorSassView *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *sass = inspector_sass_disassemble_finish (result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_object_unref (self);
      return;
    }
  g_clear_object (&self->running);
  self->done = TRUE;
  if (sass == NULL)
    show_status (self, "error", "dialog-error-symbolic", _("Disassembly Failed"), error->message);
  else
    {
      gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->text_view), sass, -1);
      self->state = "code";
      gtk_stack_set_visible_child_name (self->stack, "code");
    }
  g_object_unref (self);
}

/* Runs the tool once per CUBIN, when the tab is on screen. */
static void
update (InspectorSassView *self)
{
  g_autofree gchar *tool = NULL;

  if (self->done || self->running || !gtk_widget_get_mapped (GTK_WIDGET (self)))
    return;
  if (self->cubin == NULL)
    {
      show_status (self, "empty", "application-x-executable-symbolic", _("No CUBIN"),
                   _("Select a cache entry compiled for a real architecture (sm_XX) to see its SASS."));
      return;
    }
  tool = inspector_sass_find_tool ();
  if (tool == NULL)
    {
      g_autofree gchar *where = inspector_sass_describe_search ();
      /* Translators: %s is a list of folders */
      g_autofree gchar *text = g_strdup_printf (_("The SASS view runs the CUDA toolkit’s nvdisasm (or cuobjdump), "
                                                  "which is not in %s. Install the toolkit’s binary utilities "
                                                  "(for example the cuda-nvdisasm package from NVIDIA’s repository) "
                                                  "or set CUDA_HOME to the toolkit."), where);
      show_status (self, "missing", "system-search-symbolic", _("nvdisasm Not Found"), text);
      self->done = TRUE;
      return;
    }
  show_status (self, "running", "content-loading-symbolic", _("Disassembling…"), tool);
  self->running = g_cancellable_new ();
  inspector_sass_disassemble_async (self->cubin, self->running, on_disassembled, g_object_ref (self));
}

/**
 * inspector_sass_view_set_cubin:
 * @self: the view
 * @cubin: (nullable): the CUBIN to show
 *
 * Shows @cubin's SASS (disassembled when the view is next on screen).
 */
void
inspector_sass_view_set_cubin (InspectorSassView *self,
                               GBytes            *cubin)
{
  g_return_if_fail (INSPECTOR_IS_SASS_VIEW (self));
  g_cancellable_cancel (self->running);
  g_clear_object (&self->running);
  g_clear_pointer (&self->cubin, g_bytes_unref);
  self->cubin = cubin && g_bytes_get_size (cubin) > 0 ? g_bytes_ref (cubin) : NULL;
  self->done = FALSE;
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->text_view), "", -1);
  show_status (self, "empty", "application-x-executable-symbolic", _("No CUBIN"),
               _("Select a cache entry compiled for a real architecture (sm_XX) to see its SASS."));
  update (self);
}

/**
 * inspector_sass_view_get_state:
 * @self: the view
 *
 * Returns: what the view shows: "empty", "missing" (no disassembler),
 *   "running", "error" or "code"
 */
const gchar *
inspector_sass_view_get_state (InspectorSassView *self)
{
  return self->state;
}

/**
 * inspector_sass_view_get_text:
 * @self: the view
 *
 * Returns: (transfer full): the SASS shown, or the status text
 */
gchar *
inspector_sass_view_get_text (InspectorSassView *self)
{
  GtkTextIter s, e;

  if (g_strcmp0 (self->state, "code") != 0)
    return g_strdup_printf ("%s\n%s", adw_status_page_get_title (self->status),
                            adw_status_page_get_description (self->status) ? adw_status_page_get_description (self->status) : "");
  gtk_text_buffer_get_bounds (gtk_text_view_get_buffer (self->text_view), &s, &e);
  return gtk_text_buffer_get_text (gtk_text_view_get_buffer (self->text_view), &s, &e, FALSE);
}

GtkWidget *
inspector_sass_view_new (void)
{
  return g_object_new (INSPECTOR_TYPE_SASS_VIEW, NULL);
}

static void
inspector_sass_view_map (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (inspector_sass_view_parent_class)->map (widget);
  update (INSPECTOR_SASS_VIEW (widget));
}

static void
inspector_sass_view_dispose (GObject *object)
{
  InspectorSassView *self = INSPECTOR_SASS_VIEW (object);
  GtkWidget *child;

  g_cancellable_cancel (self->running);
  g_clear_object (&self->running);
  g_clear_pointer (&self->cubin, g_bytes_unref);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (inspector_sass_view_parent_class)->dispose (object);
}

static void
inspector_sass_view_class_init (InspectorSassViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_sass_view_dispose;
  widget_class->map = inspector_sass_view_map;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
inspector_sass_view_init (InspectorSassView *self)
{
  GtkWidget *scrolled = gtk_scrolled_window_new ();
  GtkWidget *view = gtk_source_view_new ();

  self->stack = GTK_STACK (gtk_stack_new ());
  self->status = ADW_STATUS_PAGE (adw_status_page_new ());
  self->text_view = GTK_TEXT_VIEW (view);
  gtk_text_view_set_editable (self->text_view, FALSE);
  gtk_text_view_set_monospace (self->text_view, TRUE);
  gtk_text_view_set_left_margin (self->text_view, 6);
  gtk_text_view_set_top_margin (self->text_view, 6);
  gtk_source_view_set_show_line_numbers (GTK_SOURCE_VIEW (view), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), view);
  gtk_stack_add_named (self->stack, GTK_WIDGET (self->status), "status");
  gtk_stack_add_named (self->stack, scrolled, "code");
  gtk_widget_set_parent (GTK_WIDGET (self->stack), GTK_WIDGET (self));
  show_status (self, "empty", "application-x-executable-symbolic", _("No CUBIN"),
               _("Select a cache entry compiled for a real architecture (sm_XX) to see its SASS."));
}
