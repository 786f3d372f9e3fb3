/* atomr-attach-dialog.h — "Attach to Process…": pick a live process, stream it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "atomr-attach-client.h"
#include "inspector-window.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_ATTACH_DIALOG (atomr_attach_dialog_get_type ())
G_DECLARE_FINAL_TYPE (AtomrAttachDialog, atomr_attach_dialog, ATOMR, ATTACH_DIALOG, AdwWindow)

AtomrAttachDialog *atomr_attach_dialog_new          (InspectorWindow   *window);
void               atomr_attach_dialog_refresh      (AtomrAttachDialog *self);
GtkListBox        *atomr_attach_dialog_get_list     (AtomrAttachDialog *self);
guint              atomr_attach_dialog_get_n_targets (AtomrAttachDialog *self);
const gchar       *atomr_attach_dialog_get_status   (AtomrAttachDialog *self);
GtkEditable       *atomr_attach_dialog_get_url_entry   (AtomrAttachDialog *self);
GtkEditable       *atomr_attach_dialog_get_token_entry (AtomrAttachDialog *self);
/* The window's live connection (set by a successful connect), or NULL. */
AtomrAttachClient *atomr_attach_get_client          (InspectorWindow   *window);

G_END_DECLS
