/* inspector-source-util.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <adwaita.h>

#include "inspector-source-util.h"

/* The style scheme follows the libadwaita light/dark preference. */
static void
update_scheme (AdwStyleManager *manager,
               GParamSpec      *pspec,
               GtkSourceBuffer *buffer)
{
  GtkSourceStyleSchemeManager *schemes = gtk_source_style_scheme_manager_get_default ();
  const gchar *id = adw_style_manager_get_dark (manager) ? "Adwaita-dark" : "Adwaita";

  gtk_source_buffer_set_style_scheme (buffer, gtk_source_style_scheme_manager_get_scheme (schemes, id));
}

static GtkSourceLanguageManager *
language_manager (void)
{
  static gsize done;
  GtkSourceLanguageManager *lm = gtk_source_language_manager_get_default ();

  /* our ptx.lang lives in the GResource */
  if (g_once_init_enter (&done))
    {
      gtk_source_language_manager_append_search_path (lm, "resource:///io/github/atomr/Inspector/language-specs/");
      g_once_init_leave (&done, 1);
    }
  return lm;
}

/**
 * inspector_source_view_setup:
 * @view: a source view
 * @language_id: (nullable): a GtkSourceView language id, such as "cuda"
 *
 * Highlights @view's buffer as @language_id, with the scheme of the
 * current light or dark style.
 */
void
inspector_source_view_setup (GtkSourceView *view,
                             const gchar   *language_id)
{
  GtkSourceBuffer *buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (view)));
  AdwStyleManager *manager = adw_style_manager_get_default ();

  if (language_id)
    gtk_source_buffer_set_language (buffer, gtk_source_language_manager_get_language (language_manager (), language_id));
  gtk_source_buffer_set_highlight_syntax (buffer, TRUE);
  update_scheme (manager, NULL, buffer);
  g_signal_connect_object (manager, "notify::dark", G_CALLBACK (update_scheme), buffer, 0);
}
