/* main.c — atomr-inspector
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "inspector-application.h"

int
main (int   argc,
      char *argv[])
{
  g_autoptr(InspectorApplication) app = NULL;
  int status;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, g_getenv ("ATOMR_LOCALEDIR") ? g_getenv ("ATOMR_LOCALEDIR") : ATOMR_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  /* Without its settings schema GSettings would abort: say what is wrong
   * instead (an uninstalled build runs through `meson devenv`). */
  {
    g_autoptr(GSettingsSchema) schema =
      g_settings_schema_source_lookup (g_settings_schema_source_get_default (), ATOMR_APP_ID, TRUE);
    if (schema == NULL)
      {
        g_printerr ("atomr-inspector: the settings schema %s is not installed; install the "
                    "project, or run an uninstalled build through `meson devenv -C BUILDDIR "
                    "atomr-inspector`\n", ATOMR_APP_ID);
        return 1;
      }
  }

  app = inspector_application_new ();
  status = g_application_run (G_APPLICATION (app), argc, argv);
  return status != 0 ? status : inspector_application_get_exit_status (app);
}
