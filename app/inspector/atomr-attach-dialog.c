/* atomr-attach-dialog.c — "Attach to Process…"
 *
 * Lists the live processes this user runs with an inspector server (their
 * discovery files), fills the stream address and token from the one
 * selected (both editable: another machine's server, reached over TLS, is
 * typed in), and connects: the window's trace page then follows the
 * client's recorder live, and the toast says how it went.  Actions:
 * attach.refresh (F5), attach.connect (Enter, or the button); Escape
 * closes.  Main thread only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "atomr-attach-dialog.h"
#include "inspector-trace-page.h"

struct _AtomrAttachDialog
{
  AdwWindow        parent_instance;

  InspectorWindow *window;       /* weak: the dialog is transient for it */
  GtkListBox      *list;
  GtkWidget       *placeholder;
  GtkEditable     *url_entry;
  GtkEditable     *token_entry;
  GtkLabel        *status;
  GtkWidget       *connect_button;
  GPtrArray       *targets;      /* AtomrAttachTarget*, in list order */
  gchar           *pin;          /* of the selected target */
  GCancellable    *cancellable;
  AtomrAttachClient *pending;
};

G_DEFINE_FINAL_TYPE (AtomrAttachDialog, atomr_attach_dialog, ADW_TYPE_WINDOW)

static void
set_status (AtomrAttachDialog *self,
            const gchar       *text)
{
  gtk_label_set_text (self->status, text);
}

static void
on_row_selected (GtkListBox    *list,
                 GtkListBoxRow *row,
                 gpointer       user_data)
{
  AtomrAttachDialog *self = user_data;
  AtomrAttachTarget *t;
  gint i;

  if (row == NULL)
    return;
  i = gtk_list_box_row_get_index (row);
  if (i < 0 || (guint) i >= self->targets->len)
    return;
  t = g_ptr_array_index (self->targets, i);
  gtk_editable_set_text (self->url_entry, t->stream_url);
  gtk_editable_set_text (self->token_entry, t->token);
  g_free (self->pin);
  self->pin = g_strdup (t->pin);
}

void
atomr_attach_dialog_refresh (AtomrAttachDialog *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) targets = atomr_attach_list_targets (&error);
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))))
    gtk_list_box_remove (self->list, child);
  g_clear_pointer (&self->targets, g_ptr_array_unref);
  self->targets = targets ? g_steal_pointer (&targets)
                          : g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_attach_target_free);
  if (error)
    set_status (self, error->message);
  for (guint i = 0; i < self->targets->len; i++)
    {
      AtomrAttachTarget *t = g_ptr_array_index (self->targets, i);
      GtkWidget *row = adw_action_row_new ();
      g_autofree gchar *title = g_strdup_printf ("%s", *t->program ? t->program : _("(unnamed program)"));
      g_autofree gchar *subtitle = g_strdup_printf (_("PID %" G_GINT64_FORMAT " · %s · atomr %s"), t->pid, t->url,
                                                    t->version);

      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      if (t->pin)
        {
          GtkWidget *lock = gtk_image_new_from_icon_name ("channel-secure-symbolic");
          gtk_widget_set_tooltip_text (lock, _("TLS, certificate pinned by the discovery file"));
          adw_action_row_add_suffix (ADW_ACTION_ROW (row), lock);
        }
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
      gtk_list_box_append (self->list, row);
    }
  if (self->targets->len > 0)
    gtk_list_box_select_row (self->list, gtk_list_box_get_row_at_index (self->list, 0));
  if (error == NULL)
    {
      g_autofree gchar *text = g_strdup_printf (ngettext ("%u live process", "%u live processes",
                                                          self->targets->len), self->targets->len);
      set_status (self, text);
    }
}

static void
refresh_action (GtkWidget   *widget,
                const gchar *action_name,
                GVariant    *parameter)
{
  atomr_attach_dialog_refresh (ATOMR_ATTACH_DIALOG (widget));
}

static void
connected_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(AtomrAttachDialog) self = user_data;
  AtomrAttachClient *client = ATOMR_ATTACH_CLIENT (source);
  g_autoptr(GError) error = NULL;
  g_autofree gchar *toast = NULL;

  if (self->pending == client)
    self->pending = NULL;
  gtk_widget_set_sensitive (self->connect_button, TRUE);
  if (!atomr_attach_client_connect_finish (client, result, &error))
    {
      g_autofree gchar *text = g_strdup_printf (_("Cannot attach: %s"), error->message);
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        set_status (self, text);
      g_object_unref (client);
      return;
    }
  if (self->window)
    {
      InspectorTracePage *page = inspector_window_get_trace_page (self->window);
      /* The window keeps the connection (and drops the previous one). */
      g_object_set_data_full (G_OBJECT (self->window), "atomr-attach-client", client, g_object_unref);
      inspector_trace_page_follow_recorder (page, atomr_attach_client_get_recorder (client));
      gtk_widget_activate_action (GTK_WIDGET (self->window), "win.page", "s", "trace");
      toast = g_strdup_printf (_("Attached to %s"), gtk_editable_get_text (self->url_entry));
      gtk_widget_activate_action (GTK_WIDGET (self->window), "win.show-toast", "s", toast);
    }
  else
    g_object_unref (client);
  set_status (self, _("Attached"));
  gtk_window_close (GTK_WINDOW (self));
}

static void
connect_action (GtkWidget   *widget,
                const gchar *action_name,
                GVariant    *parameter)
{
  AtomrAttachDialog *self = ATOMR_ATTACH_DIALOG (widget);
  const gchar *url = gtk_editable_get_text (self->url_entry);
  const gchar *token = gtk_editable_get_text (self->token_entry);
  AtomrAttachClient *client;

  if (self->pending)
    return;
  if (*url == '\0')
    {
      set_status (self, _("Choose a process, or type a ws:// or wss:// stream address"));
      return;
    }
  /* A typed address other than the selected target's has no pin. */
  {
    GtkListBoxRow *row = gtk_list_box_get_selected_row (self->list);
    gint i = row ? gtk_list_box_row_get_index (row) : -1;
    AtomrAttachTarget *t = i >= 0 && (guint) i < self->targets->len ? g_ptr_array_index (self->targets, i) : NULL;
    client = atomr_attach_client_new (url, token, t && g_str_equal (t->stream_url, url) ? self->pin : NULL);
  }
  self->pending = client;
  gtk_widget_set_sensitive (self->connect_button, FALSE);
  set_status (self, _("Connecting…"));
  atomr_attach_client_connect_async (client, self->cancellable, connected_cb, g_object_ref (self));
}

static void
on_row_activated (GtkListBox    *list,
                  GtkListBoxRow *row,
                  gpointer       user_data)
{
  gtk_widget_activate_action (GTK_WIDGET (user_data), "attach.connect", NULL);
}

static void
atomr_attach_dialog_dispose (GObject *object)
{
  AtomrAttachDialog *self = ATOMR_ATTACH_DIALOG (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->targets, g_ptr_array_unref);
  g_clear_pointer (&self->pin, g_free);
  g_clear_weak_pointer (&self->window);
  G_OBJECT_CLASS (atomr_attach_dialog_parent_class)->dispose (object);
}

static void
atomr_attach_dialog_class_init (AtomrAttachDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = atomr_attach_dialog_dispose;
  gtk_widget_class_install_action (widget_class, "attach.refresh", NULL, refresh_action);
  gtk_widget_class_install_action (widget_class, "attach.connect", NULL, connect_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F5, 0, "attach.refresh", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "attach.refresh", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static GtkWidget *
labelled (const gchar *mnemonic,
          GtkWidget   *field)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *label = gtk_label_new_with_mnemonic (mnemonic);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_mnemonic_widget (GTK_LABEL (label), field);
  gtk_widget_add_css_class (label, "heading");
  gtk_box_append (GTK_BOX (box), label);
  gtk_box_append (GTK_BOX (box), field);
  return box;
}

static void
atomr_attach_dialog_init (AtomrAttachDialog *self)
{
  GtkWidget *view = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *refresh = gtk_button_new_from_icon_name ("view-refresh-symbolic");
  GtkWidget *content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  GtkWidget *scrolled = gtk_scrolled_window_new ();
  GtkWidget *url = gtk_entry_new ();
  GtkWidget *token = gtk_password_entry_new ();
  GtkWidget *status = gtk_label_new (NULL);

  self->cancellable = g_cancellable_new ();
  gtk_window_set_title (GTK_WINDOW (self), _("Attach to Process"));
  gtk_window_set_default_size (GTK_WINDOW (self), 560, 480);
  gtk_window_set_modal (GTK_WINDOW (self), TRUE);

  gtk_actionable_set_action_name (GTK_ACTIONABLE (refresh), "attach.refresh");
  gtk_widget_set_tooltip_text (refresh, _("Look for processes again (F5)"));
  adw_header_bar_pack_start (ADW_HEADER_BAR (header), refresh);
  gtk_box_append (GTK_BOX (view), header);

  gtk_widget_set_margin_top (content, 12);
  gtk_widget_set_margin_bottom (content, 12);
  gtk_widget_set_margin_start (content, 12);
  gtk_widget_set_margin_end (content, 12);

  self->list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_widget_add_css_class (GTK_WIDGET (self->list), "boxed-list");
  gtk_list_box_set_selection_mode (self->list, GTK_SELECTION_SINGLE);
  self->placeholder = adw_status_page_new ();
  adw_status_page_set_icon_name (ADW_STATUS_PAGE (self->placeholder), "network-offline-symbolic");
  adw_status_page_set_title (ADW_STATUS_PAGE (self->placeholder), _("No Live Processes"));
  adw_status_page_set_description (ADW_STATUS_PAGE (self->placeholder),
                                   _("Run an atomr application with ATOMR_INSPECT=1, or type the stream address "
                                     "of a server below."));
  gtk_list_box_set_placeholder (self->list, self->placeholder);
  g_signal_connect (self->list, "row-selected", G_CALLBACK (on_row_selected), self);
  g_signal_connect (self->list, "row-activated", G_CALLBACK (on_row_activated), self);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), GTK_WIDGET (self->list));
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_widget_set_vexpand (scrolled, TRUE);
  gtk_box_append (GTK_BOX (content), labelled (_("_Processes"), scrolled));

  self->url_entry = GTK_EDITABLE (url);
  gtk_entry_set_placeholder_text (GTK_ENTRY (url), "wss://host:port/v1/stream");
  gtk_entry_set_activates_default (GTK_ENTRY (url), TRUE);
  gtk_box_append (GTK_BOX (content), labelled (_("Stream _address"), url));
  self->token_entry = GTK_EDITABLE (token);
  gtk_password_entry_set_show_peek_icon (GTK_PASSWORD_ENTRY (token), TRUE);
  g_object_set (token, "activates-default", TRUE, NULL);
  gtk_box_append (GTK_BOX (content), labelled (_("_Token"), token));

  self->status = GTK_LABEL (status);
  gtk_label_set_xalign (self->status, 0);
  gtk_label_set_wrap (self->status, TRUE);
  gtk_widget_add_css_class (status, "dim-label");
  gtk_box_append (GTK_BOX (content), status);

  self->connect_button = gtk_button_new_with_mnemonic (_("_Connect"));
  gtk_widget_add_css_class (self->connect_button, "suggested-action");
  gtk_widget_add_css_class (self->connect_button, "pill");
  gtk_widget_set_halign (self->connect_button, GTK_ALIGN_CENTER);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->connect_button), "attach.connect");
  gtk_box_append (GTK_BOX (content), self->connect_button);
  gtk_window_set_default_widget (GTK_WINDOW (self), self->connect_button);

  gtk_widget_set_vexpand (content, TRUE);
  gtk_box_append (GTK_BOX (view), content);
  adw_window_set_content (ADW_WINDOW (self), view);
}

AtomrAttachDialog *
atomr_attach_dialog_new (InspectorWindow *window)
{
  AtomrAttachDialog *self = g_object_new (ATOMR_TYPE_ATTACH_DIALOG, "transient-for", window, NULL);

  g_set_weak_pointer (&self->window, window);
  atomr_attach_dialog_refresh (self);
  return self;
}

GtkListBox *
atomr_attach_dialog_get_list (AtomrAttachDialog *self)
{
  return self->list;
}

guint
atomr_attach_dialog_get_n_targets (AtomrAttachDialog *self)
{
  return self->targets ? self->targets->len : 0;
}

const gchar *
atomr_attach_dialog_get_status (AtomrAttachDialog *self)
{
  return gtk_label_get_text (self->status);
}

GtkEditable *
atomr_attach_dialog_get_url_entry (AtomrAttachDialog *self)
{
  return self->url_entry;
}

GtkEditable *
atomr_attach_dialog_get_token_entry (AtomrAttachDialog *self)
{
  return self->token_entry;
}

AtomrAttachClient *
atomr_attach_get_client (InspectorWindow *window)
{
  return g_object_get_data (G_OBJECT (window), "atomr-attach-client");
}
