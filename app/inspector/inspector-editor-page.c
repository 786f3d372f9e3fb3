/* inspector-editor-page.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>

#include "inspector-compiler.h"
#include "inspector-diagnostics.h"
#include "inspector-run.h"
#include "inspector-run-panel.h"
#include "inspector-editor-page.h"
#include "inspector-source-util.h"

#define DEFAULT_ARCH "sm_90"

struct _InspectorEditorPage
{
  GtkWidget            parent_instance;

  GtkLabel            *file_label;
  GtkSpinner          *spinner;
  GtkLabel            *status_label;
  AdwFlap             *flap;
  GtkSourceView       *source_view;
  GtkStack            *output_stack;
  GtkListBox          *diagnostics_list;
  GtkSourceView       *ptx_view;
  AdwPreferencesGroup *resources_group;
  AdwEntryRow         *arch_row;
  AdwComboRow         *std_row;
  AdwEntryRow         *defines_row;
  AdwEntryRow         *includes_row;
  AdwEntryRow         *names_row;
  GtkSwitch           *fast_math_switch;
  GtkSwitch           *line_info_switch;
  GtkSwitch           *debug_switch;
  GtkSwitch           *lto_switch;
  GtkSpinButton       *max_registers_spin;
  AdwEntryRow         *extra_flags_row;
  GSettings           *settings;     /* document-options */
  InspectorRunPanel   *run_panel;

  GtkSourceBuffer     *buffer;
  GFile               *file;
  gchar               *name;
  AtomrKernelCache    *cache;
  GCancellable        *cancellable;
  GListStore          *diagnostics;
  GPtrArray           *resource_rows;
  GtkTextTag          *error_tag;
  GtkTextTag          *warning_tag;
  gboolean             compiling;
  gboolean             gpu_checked;
  AtomrNvrtcActor     *actor;       /* NULL without a GPU */
  gchar               *log_name;    /* the file name NVRTC's log uses */
  GtkWidget           *save_dialog; /* "Save Changes?" while it is shown */
};

G_DEFINE_FINAL_TYPE (InspectorEditorPage, inspector_editor_page, GTK_TYPE_WIDGET)

enum {
  COMPILED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static const gchar *
program_name (InspectorEditorPage *self)
{
  return self->name ? self->name : "kernel.cu";
}

static void
update_title (InspectorEditorPage *self)
{
  g_autofree gchar *path = self->file ? g_file_get_path (self->file) : NULL;
  gboolean modified = gtk_text_buffer_get_modified (GTK_TEXT_BUFFER (self->buffer));
  g_autofree gchar *text = g_strdup_printf ("%s%s", modified ? "• " : "", path ? path : program_name (self));

  gtk_label_set_text (self->file_label, text);
}

static void
clear_marks (InspectorEditorPage *self)
{
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (GTK_TEXT_BUFFER (self->buffer), &start, &end);
  gtk_source_buffer_remove_source_marks (self->buffer, &start, &end, NULL);
  gtk_text_buffer_remove_tag (GTK_TEXT_BUFFER (self->buffer), self->error_tag, &start, &end);
  gtk_text_buffer_remove_tag (GTK_TEXT_BUFFER (self->buffer), self->warning_tag, &start, &end);
}

/**
 * inspector_editor_page_set_text:
 * @self: the page
 * @name: the program name NVRTC reports, such as "saxpy.cu"
 * @source: CUDA C++ source
 *
 * Replaces the buffer as one undoable action, unattached to a file.
 */
void
inspector_editor_page_set_text (InspectorEditorPage *self,
                                const gchar         *name,
                                const gchar         *source)
{
  g_clear_object (&self->file);
  g_free (self->name);
  self->name = g_strdup (name);
  clear_marks (self);
  gtk_text_buffer_set_text (GTK_TEXT_BUFFER (self->buffer), source, -1);
  gtk_text_buffer_set_modified (GTK_TEXT_BUFFER (self->buffer), FALSE);
  update_title (self);
}

static gboolean take_contents (InspectorEditorPage *self, GFile *file, const gchar *contents, gsize len,
                               GError **error);
static void restore_document_options (InspectorEditorPage *self);

/**
 * inspector_editor_page_load_file:
 * @self: the page
 * @file: a kernel source
 * @error: return location for a #GError
 *
 * Reads @file on the calling thread (tests); the Open dialog and the
 * command line use inspector_editor_page_open_file(), which reads in the
 * background.
 *
 * Returns: %TRUE on success
 */
gboolean
inspector_editor_page_load_file (InspectorEditorPage  *self,
                                 GFile                *file,
                                 GError              **error)
{
  g_autofree gchar *contents = NULL;
  gsize len = 0;

  if (!g_file_load_contents (file, NULL, &contents, &len, NULL, error))
    return FALSE;
  return take_contents (self, file, contents, len, error);
}

/* Shows what was read from @file; main thread. */
static gboolean
take_contents (InspectorEditorPage  *self,
               GFile                *file,
               const gchar          *contents,
               gsize                 len,
               GError              **error)
{
  g_autofree gchar *basename = NULL;

  if (!g_utf8_validate (contents, len, NULL))
    {
      g_autofree gchar *parse = g_file_get_parse_name (file);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("“%s” is not UTF-8 text"), parse);
      return FALSE;
    }
  basename = g_file_get_basename (file);
  inspector_editor_page_set_text (self, basename, contents);
  g_set_object (&self->file, file);
  update_title (self);
  /* name expressions belong to a source: another file finds its own */
  gtk_editable_set_text (GTK_EDITABLE (self->names_row), "");
  restore_document_options (self);
  return TRUE;
}

static void
set_option_text (AdwEntryRow         *row,
                 const gchar * const *values,
                 const gchar         *sep)
{
  g_autofree gchar *text = values ? g_strjoinv (sep, (gchar **) values) : g_strdup ("");
  gtk_editable_set_text (GTK_EDITABLE (row), text);
}

/* The value of "--name=value" or "-name=value" when @f is that flag. */
static const gchar *
flag_value (const gchar *f,
            const gchar *long_name,
            const gchar *short_name)
{
  if (g_str_has_prefix (f, long_name) && f[strlen (long_name)] == '=')
    return f + strlen (long_name) + 1;
  if (short_name && g_str_has_prefix (f, short_name) && f[strlen (short_name)] == '=')
    return f + strlen (short_name) + 1;
  return NULL;
}

/* Fills the options panel back from NVRTC flags (a cache entry's, or the
 * ones a document used last); what the panel has no field for goes to
 * "Other NVRTC Flags".  @with_arch: the flags carry the architecture. */
static void
options_from_flags (InspectorEditorPage *self,
                    const gchar * const *flags,
                    gboolean             with_arch)
{
  g_autoptr(GStrvBuilder) defines = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) includes = g_strv_builder_new ();
  g_autoptr(GString) extra = g_string_new (NULL);
  g_auto(GStrv) d = NULL, inc = NULL;
  gboolean fast = FALSE, line_info = FALSE, debug = FALSE, lto = FALSE;
  guint64 max_registers = 0;
  const gchar *arch = NULL, *v;

  for (guint i = 0; flags && flags[i]; i++)
    {
      const gchar *f = flags[i];
      if (g_str_has_prefix (f, "-D") && f[2])
        g_strv_builder_add (defines, f + 2);
      else if ((v = flag_value (f, "--define-macro", NULL)))
        g_strv_builder_add (defines, v);
      else if (g_str_has_prefix (f, "-I") && f[2])
        g_strv_builder_add (includes, f + 2);
      else if ((v = flag_value (f, "--include-path", NULL)))
        g_strv_builder_add (includes, v);
      else if (g_str_equal (f, "--use_fast_math") || g_str_equal (f, "-use_fast_math"))
        fast = TRUE;
      else if (g_str_equal (f, "--generate-line-info") || g_str_equal (f, "-lineinfo"))
        line_info = TRUE;
      else if (g_str_equal (f, "--device-debug") || g_str_equal (f, "-G"))
        debug = TRUE;
      else if (g_str_equal (f, "--dlink-time-opt") || g_str_equal (f, "-dlto"))
        lto = TRUE;
      else if ((v = flag_value (f, "--maxrregcount", "-maxrregcount")))
        max_registers = g_ascii_strtoull (v, NULL, 10);
      else if ((v = flag_value (f, "--gpu-architecture", "-arch")))
        arch = v;
      else if ((v = flag_value (f, "--std", "-std")))
        {
          GListModel *stds = adw_combo_row_get_model (self->std_row);
          for (guint k = 0; k < g_list_model_get_n_items (stds); k++)
            if (g_str_equal (gtk_string_list_get_string (GTK_STRING_LIST (stds), k), v))
              adw_combo_row_set_selected (self->std_row, k);
        }
      else
        {
          g_autofree gchar *quoted = g_shell_quote (f);
          if (extra->len)
            g_string_append_c (extra, ' ');
          /* plain flags stay readable; anything with spaces is quoted */
          g_string_append (extra, strpbrk (f, " \t'\"\\") ? quoted : f);
        }
    }
  d = g_strv_builder_end (defines);
  inc = g_strv_builder_end (includes);
  set_option_text (self->defines_row, (const gchar * const *) d, " ");
  set_option_text (self->includes_row, (const gchar * const *) inc, ":");
  gtk_switch_set_active (self->fast_math_switch, fast);
  gtk_switch_set_active (self->line_info_switch, line_info);
  gtk_switch_set_active (self->debug_switch, debug);
  gtk_switch_set_active (self->lto_switch, lto);
  gtk_spin_button_set_value (self->max_registers_spin, (gdouble) MIN (max_registers, 255));
  gtk_editable_set_text (GTK_EDITABLE (self->extra_flags_row), extra->str);
  if (with_arch)
    gtk_editable_set_text (GTK_EDITABLE (self->arch_row), arch ? arch : "");
}

/* The key of the current document in "document-options": its URI; an
 * unsaved buffer has none. */
static gchar *
document_key (InspectorEditorPage *self)
{
  return self->file ? g_file_get_uri (self->file) : NULL;
}

/* The flags the current document used last, back in the panel. */
static void
restore_document_options (InspectorEditorPage *self)
{
  g_autofree gchar *key = document_key (self);
  g_autoptr(GVariant) all = NULL;
  g_autofree const gchar **flags = NULL;

  if (key == NULL || self->settings == NULL)
    return;
  all = g_settings_get_value (self->settings, "document-options");
  if (g_variant_lookup (all, key, "^a&s", &flags))
    options_from_flags (self, flags, TRUE);
}

/* At most this many documents keep their options (the oldest go). */
#define MAX_DOCUMENTS 200

static void
remember_document_options (InspectorEditorPage *self,
                           AtomrCompileOptions *options)
{
  g_autofree gchar *key = document_key (self);
  g_auto(GStrv) flags = NULL;
  g_autoptr(GVariant) all = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a{sas}"));
  GVariantIter iter;
  const gchar *k;
  GVariant *v;
  gsize n, skip;

  if (key == NULL || self->settings == NULL)
    return;
  flags = atomr_compile_options_get_flags (options);
  all = g_settings_get_value (self->settings, "document-options");
  n = g_variant_n_children (all);
  skip = n >= MAX_DOCUMENTS ? n - MAX_DOCUMENTS + 1 : 0;
  g_variant_iter_init (&iter, all);
  /* kept in the order they were last used: this one goes last */
  while (g_variant_iter_next (&iter, "{&s@as}", &k, &v))
    {
      if (!g_str_equal (k, key) && skip == 0)
        g_variant_builder_add (&b, "{s@as}", k, v);
      else if (!g_str_equal (k, key))
        skip--;
      g_variant_unref (v);
    }
  g_variant_builder_add (&b, "{s^as}", key, flags);
  g_settings_set_value (self->settings, "document-options", g_variant_builder_end (&b));
}

/**
 * inspector_editor_page_load_entry:
 * @self: the page
 * @entry: a cache entry that kept its source
 * @error: return location for a #GError
 *
 * Opens the source of @entry with the options it was compiled with.
 *
 * Returns: %TRUE on success
 */
gboolean
inspector_editor_page_load_entry (InspectorEditorPage    *self,
                                  AtomrKernelCacheEntry  *entry,
                                  GError                **error)
{
  g_autofree gchar *source = atomr_kernel_cache_entry_load_source (entry, error);
  const gchar * const *names = atomr_kernel_cache_entry_get_kernel_names (entry);
  g_autofree gchar *name = NULL;

  if (source == NULL)
    return FALSE;
  name = g_strdup_printf ("%s.cu", names && names[0] ? names[0] : atomr_kernel_cache_entry_get_key (entry));
  /* name expressions may contain template arguments: keep a file-safe name */
  g_strcanon (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", '_');
  inspector_editor_page_set_text (self, name, source);
  gtk_editable_set_text (GTK_EDITABLE (self->arch_row), atomr_kernel_cache_entry_get_arch (entry));
  set_option_text (self->names_row, names, "; ");
  options_from_flags (self, atomr_kernel_cache_entry_get_flags (entry), FALSE);
  return TRUE;
}

void
inspector_editor_page_set_cache (InspectorEditorPage *self,
                                 AtomrKernelCache    *cache)
{
  g_set_object (&self->cache, cache);
}

guint
inspector_editor_page_get_n_diagnostics (InspectorEditorPage *self)
{
  return g_list_model_get_n_items (G_LIST_MODEL (self->diagnostics));
}

static gchar **
split_words (const gchar *text,
             const gchar *separators)
{
  g_auto(GStrv) parts = g_strsplit_set (text ? text : "", separators, -1);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();

  for (guint i = 0; parts[i]; i++)
    {
      g_strstrip (parts[i]);
      if (*parts[i])
        g_strv_builder_add (b, parts[i]);
    }
  return g_strv_builder_end (b);
}

static void
add_strings (JsonObject  *object,
             const gchar *name,
             gchar      **values)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; values && values[i]; i++)
    json_array_add_string_element (array, values[i]);
  json_object_set_array_member (object, name, array);
}

/* The options panel as JSON (inspector_compile_options_from_json()): the
 * compile here and the runner's (Run) build the same options from it. */
static JsonObject *
options_json (InspectorEditorPage  *self,
              const gchar          *source,
              GError              **error)
{
  g_autoptr(JsonObject) o = json_object_new ();
  const gchar *arch = gtk_editable_get_text (GTK_EDITABLE (self->arch_row));
  g_auto(GStrv) defines = split_words (gtk_editable_get_text (GTK_EDITABLE (self->defines_row)), " ,");
  g_auto(GStrv) includes = split_words (gtk_editable_get_text (GTK_EDITABLE (self->includes_row)), ":");
  g_auto(GStrv) names = split_words (gtk_editable_get_text (GTK_EDITABLE (self->names_row)), ";");
  GtkStringObject *std = adw_combo_row_get_selected_item (self->std_row);
  const gchar *extra_text = gtk_editable_get_text (GTK_EDITABLE (self->extra_flags_row));
  g_autofree gchar *extra_trimmed = g_strstrip (g_strdup (extra_text ? extra_text : ""));
  g_auto(GStrv) extra = NULL;

  /* other flags as a shell would split them (quotes keep spaces) */
  if (*extra_trimmed != '\0')
    {
      g_autoptr(GError) parse_error = NULL;

      if (!g_shell_parse_argv (extra_text, NULL, &extra, &parse_error))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       /* Translators: the flags the user typed, then why they do not parse */
                       _("Other NVRTC flags “%s” do not parse: %s"), extra_text, parse_error->message);
          return NULL;
        }
    }
  if (arch == NULL || *arch == '\0')
    arch = self->actor ? NULL : DEFAULT_ARCH;   /* the actor compiles for its GPU */
  if (arch)
    json_object_set_string_member (o, "arch", arch);
  if (std)
    json_object_set_string_member (o, "std", gtk_string_object_get_string (std));
  json_object_set_boolean_member (o, "fast_math", gtk_switch_get_active (self->fast_math_switch));
  json_object_set_boolean_member (o, "line_info", gtk_switch_get_active (self->line_info_switch));
  json_object_set_boolean_member (o, "debug", gtk_switch_get_active (self->debug_switch));
  json_object_set_boolean_member (o, "lto", gtk_switch_get_active (self->lto_switch));
  json_object_set_int_member (o, "max_registers", gtk_spin_button_get_value_as_int (self->max_registers_spin));
  add_strings (o, "extra", extra);
  add_strings (o, "defines", defines);
  add_strings (o, "includes", includes);
  if (names[0] == NULL)
    {
      g_strfreev (names);
      names = inspector_find_kernel_names (source);
    }
  add_strings (o, "names", names);
  /* no --ptxas-options=-v: it would change the cache key, so the same
   * source compiled here and by the library would be two entries; the
   * resource usage comes from the CUBIN instead (show_resources) */
  return g_steal_pointer (&o);
}

static AtomrCompileOptions *
build_options (InspectorEditorPage  *self,
               const gchar          *source,
               GError              **error)
{
  g_autoptr(JsonObject) o = options_json (self, source, error);

  return o ? inspector_compile_options_from_json (o, error) : NULL;
}

static void
jump_to (InspectorEditorPage *self,
         guint                line,
         guint                column)
{
  GtkTextIter iter;

  gtk_text_buffer_get_iter_at_line_offset (GTK_TEXT_BUFFER (self->buffer), &iter,
                                           line > 0 ? (gint) line - 1 : 0, column > 0 ? (gint) column - 1 : 0);
  gtk_text_buffer_place_cursor (GTK_TEXT_BUFFER (self->buffer), &iter);
  gtk_text_view_scroll_to_iter (GTK_TEXT_VIEW (self->source_view), &iter, 0.2, FALSE, 0, 0.5);
  gtk_widget_grab_focus (GTK_WIDGET (self->source_view));
}

static void
on_diagnostic_activated (GtkListBox          *list,
                         GtkListBoxRow       *row,
                         InspectorEditorPage *self)
{
  InspectorDiagnostic *d = g_list_model_get_item (G_LIST_MODEL (self->diagnostics),
                                                  (guint) gtk_list_box_row_get_index (row));

  if (d)
    {
      jump_to (self, inspector_diagnostic_get_line (d), inspector_diagnostic_get_column (d));
      g_object_unref (d);
    }
}

static GtkWidget *
create_diagnostic_row (gpointer item,
                       gpointer user_data)
{
  InspectorDiagnostic *d = item;
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *icon;
  g_autofree gchar *title = NULL, *subtitle = NULL, *escaped = NULL;
  gboolean err = inspector_diagnostic_get_severity (d) == INSPECTOR_SEVERITY_ERROR;

  icon = gtk_image_new_from_icon_name (err ? "dialog-error-symbolic" :
                                       inspector_diagnostic_get_severity (d) == INSPECTOR_SEVERITY_WARNING
                                       ? "dialog-warning-symbolic" : "dialog-information-symbolic");
  gtk_widget_add_css_class (icon, err ? "error" : "warning");
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
  title = g_markup_escape_text (inspector_diagnostic_get_message (d), -1);
  if (inspector_diagnostic_get_column (d))
    /* Translators: "Error at saxpy.cu:4:3" */
    subtitle = g_strdup_printf (_("%s at %s:%u:%u"), inspector_severity_to_string (inspector_diagnostic_get_severity (d)),
                                inspector_diagnostic_get_file (d), inspector_diagnostic_get_line (d),
                                inspector_diagnostic_get_column (d));
  else
    subtitle = g_strdup_printf (_("%s at %s:%u"), inspector_severity_to_string (inspector_diagnostic_get_severity (d)),
                                inspector_diagnostic_get_file (d), inspector_diagnostic_get_line (d));
  escaped = g_markup_escape_text (subtitle, -1);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  return row;
}

/**
 * inspector_editor_page_get_line_diagnostics:
 * @self: the page
 * @line: a line of the buffer, from 1
 *
 * What the tooltip over @line says: the diagnostics of the last compile
 * on that line of this file, one per line of text, unless the line was
 * edited since (its markers are gone then).
 *
 * Returns: (transfer full) (nullable): the text, or %NULL
 */
gchar *
inspector_editor_page_get_line_diagnostics (InspectorEditorPage *self,
                                            guint                line)
{
  g_autoptr(GString) out = NULL;
  g_autoptr(GSList) marks = NULL;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->diagnostics));

  if (line == 0)
    return NULL;
  marks = gtk_source_buffer_get_source_marks_at_line (self->buffer, (gint) line - 1, NULL);
  if (marks == NULL)
    return NULL;   /* none, or edited since */
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(InspectorDiagnostic) d = g_list_model_get_item (G_LIST_MODEL (self->diagnostics), i);

      if (inspector_diagnostic_get_line (d) != line || g_strcmp0 (inspector_diagnostic_get_file (d), self->log_name) != 0)
        continue;
      if (out == NULL)
        out = g_string_new (NULL);
      else
        g_string_append_c (out, '\n');
      /* Translators: a tooltip over a marked line: "Error: expected a ;" */
      g_string_append_printf (out, _("%s: %s"), inspector_severity_to_string (inspector_diagnostic_get_severity (d)),
                              inspector_diagnostic_get_message (d));
    }
  return out ? g_string_free (g_steal_pointer (&out), FALSE) : NULL;
}

static gboolean
on_query_tooltip (GtkWidget           *widget,
                  int                  x,
                  int                  y,
                  gboolean             keyboard,
                  GtkTooltip          *tooltip,
                  InspectorEditorPage *self)
{
  GtkTextIter iter;
  int bx, by;
  g_autofree gchar *text = NULL;

  if (keyboard)
    gtk_text_buffer_get_iter_at_mark (GTK_TEXT_BUFFER (self->buffer), &iter,
                                      gtk_text_buffer_get_insert (GTK_TEXT_BUFFER (self->buffer)));
  else
    {
      gtk_text_view_window_to_buffer_coords (GTK_TEXT_VIEW (widget), GTK_TEXT_WINDOW_WIDGET, x, y, &bx, &by);
      gtk_text_view_get_iter_at_location (GTK_TEXT_VIEW (widget), &iter, bx, by);
    }
  text = inspector_editor_page_get_line_diagnostics (self, (guint) gtk_text_iter_get_line (&iter) + 1);
  if (text == NULL)
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* An edit makes the markers of the lines it touched stale: they go. */
static void
clear_lines (InspectorEditorPage *self,
             gint                 first,
             gint                 last)
{
  GtkTextIter start, end;

  gtk_text_buffer_get_iter_at_line (GTK_TEXT_BUFFER (self->buffer), &start, MAX (first, 0));
  gtk_text_buffer_get_iter_at_line (GTK_TEXT_BUFFER (self->buffer), &end, MAX (last, 0));
  if (!gtk_text_iter_ends_line (&end))
    gtk_text_iter_forward_to_line_end (&end);
  gtk_source_buffer_remove_source_marks (self->buffer, &start, &end, NULL);
  gtk_text_buffer_remove_tag (GTK_TEXT_BUFFER (self->buffer), self->error_tag, &start, &end);
  gtk_text_buffer_remove_tag (GTK_TEXT_BUFFER (self->buffer), self->warning_tag, &start, &end);
}

static void
on_insert_text (GtkTextBuffer       *buffer,
                GtkTextIter         *location,
                const gchar         *text,
                gint                 len,
                InspectorEditorPage *self)
{
  gint last = gtk_text_iter_get_line (location), first = last;

  for (gint i = 0; i < len || (len < 0 && text[i]); i++)
    if (text[i] == '\n')
      first--;
  clear_lines (self, first, last);
}

static void
on_delete_range (GtkTextBuffer       *buffer,
                 GtkTextIter         *start,
                 GtkTextIter         *end,
                 InspectorEditorPage *self)
{
  clear_lines (self, gtk_text_iter_get_line (start), gtk_text_iter_get_line (end));
}

static void
mark_diagnostics (InspectorEditorPage *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->diagnostics));
  guint lines = gtk_text_buffer_get_line_count (GTK_TEXT_BUFFER (self->buffer));

  clear_marks (self);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(InspectorDiagnostic) d = g_list_model_get_item (G_LIST_MODEL (self->diagnostics), i);
      gboolean err = inspector_diagnostic_get_severity (d) == INSPECTOR_SEVERITY_ERROR;
      GtkTextIter start, end;
      guint line = inspector_diagnostic_get_line (d);

      /* diagnostics in included headers name another file */
      if (g_strcmp0 (inspector_diagnostic_get_file (d), self->log_name) != 0 || line == 0 || line > lines)
        continue;
      gtk_text_buffer_get_iter_at_line (GTK_TEXT_BUFFER (self->buffer), &start, (gint) line - 1);
      gtk_source_buffer_create_source_mark (self->buffer, NULL, err ? "error" : "warning", &start);
      /* the underline starts at the reported column, over the word there */
      if (inspector_diagnostic_get_column (d) > 1 &&
          (gint) inspector_diagnostic_get_column (d) - 1 < gtk_text_iter_get_chars_in_line (&start))
        gtk_text_iter_set_line_offset (&start, (gint) inspector_diagnostic_get_column (d) - 1);
      end = start;
      if (!gtk_text_iter_ends_line (&end) && !gtk_text_iter_forward_word_end (&end))
        gtk_text_iter_forward_to_line_end (&end);
      if (gtk_text_iter_get_line (&end) != gtk_text_iter_get_line (&start) || gtk_text_iter_equal (&end, &start))
        {
          end = start;
          if (!gtk_text_iter_ends_line (&end))
            gtk_text_iter_forward_to_line_end (&end);
        }
      gtk_text_buffer_apply_tag (GTK_TEXT_BUFFER (self->buffer), err ? self->error_tag : self->warning_tag,
                                 &start, &end);
    }
}

static void
clear_resources (InspectorEditorPage *self)
{
  for (guint i = 0; i < self->resource_rows->len; i++)
    adw_preferences_group_remove (self->resources_group, g_ptr_array_index (self->resource_rows, i));
  g_ptr_array_set_size (self->resource_rows, 0);
}

static void
show_resources (InspectorEditorPage *self,
                AtomrModule         *module)
{
  const gchar *arch = atomr_module_get_arch (module);
  GBytes *cubin = atomr_module_get_cubin (module);
  g_autoptr(GPtrArray) res = NULL;
  g_autoptr(GError) error = NULL;

  clear_resources (self);
  adw_preferences_group_set_title (self->resources_group, _("Registers and Shared Memory"));
  if (cubin == NULL)
    {
      adw_preferences_group_set_description (self->resources_group,
                                             _("Resource usage is read from the CUBIN, which NVRTC produces only "
                                               "when compiling for a real architecture (sm_XX); this compile "
                                               "produced PTX only."));
      return;
    }
  res = inspector_cubin_resources (cubin, arch, &error);
  if (res == NULL || res->len == 0)
    {
      adw_preferences_group_set_description (self->resources_group,
                                             error ? error->message : _("The CUBIN has no kernel."));
      return;
    }
  /* Translators: where the numbers come from */
  adw_preferences_group_set_description (self->resources_group,
                                         _("Read from the compiled CUBIN (the same compile the cache keeps); "
                                           "no GPU needed."));
  for (guint i = 0; i < res->len; i++)
    {
      InspectorKernelResources *r = g_ptr_array_index (res, i);
      GtkWidget *row = adw_action_row_new ();
      g_autofree gchar *title = g_strdup_printf ("%s (%s)", r->function, r->arch);
      g_autofree gchar *sub = g_strdup_printf (_("%u registers, %u bytes shared memory, %u bytes stack frame"),
                                               r->registers, r->shared_bytes, r->stack_bytes);
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), sub);
      adw_preferences_group_add (self->resources_group, row);
      g_ptr_array_add (self->resource_rows, row);
    }
}

/**
 * inspector_editor_page_get_n_resource_rows:
 * @self: the page
 *
 * Returns: how many kernels the Registers panel lists
 */
guint
inspector_editor_page_get_n_resource_rows (InspectorEditorPage *self)
{
  return self->resource_rows->len;
}

static void
show_attributes (InspectorEditorPage *self,
                 AtomrModule         *module)
{
  const gchar * const *names = atomr_module_get_kernel_names (module);
  g_autofree gchar *description = NULL;

  clear_resources (self);
  adw_preferences_group_set_title (self->resources_group, _("Registers and Shared Memory"));
  /* Translators: %s is the GPU's name */
  description = g_strdup_printf (_("Kernel attributes on %s, read from the loaded module."),
                                 atomr_device_get_name (atomr_actor_get_device (ATOMR_ACTOR (self->actor))));
  adw_preferences_group_set_description (self->resources_group, description);
  for (guint i = 0; names && names[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrKernel) kernel = atomr_nvrtc_actor_get_kernel (self->actor, module, names[i], &error);
      GtkWidget *row = adw_action_row_new ();
      g_autofree gchar *sub = NULL, *escaped = NULL;

      if (kernel)
        sub = g_strdup_printf (_("%d registers, %d bytes static shared memory, %d bytes local memory, "
                                 "up to %d threads per block"),
                               atomr_kernel_get_num_registers (kernel),
                               atomr_kernel_get_static_shared_memory (kernel),
                               atomr_kernel_get_local_memory (kernel),
                               atomr_kernel_get_max_threads_per_block (kernel));
      else
        sub = g_strdup (error->message);
      escaped = g_markup_escape_text (sub, -1);
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), names[i]);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped);
      adw_preferences_group_add (self->resources_group, row);
      g_ptr_array_add (self->resource_rows, row);
    }
}

/* The NVRTC actor of GPU 0, made on the first compile; none without a GPU. */
static AtomrNvrtcActor *
ensure_actor (InspectorEditorPage *self)
{
  g_autoptr(AtomrDevice) device = NULL;
  g_autoptr(GError) error = NULL;

  if (self->gpu_checked)
    return self->actor;
  self->gpu_checked = TRUE;
  device = atomr_device_get (0, &error);
  if (device == NULL)
    {
      g_debug ("compiling without a GPU: %s", error->message);
      return NULL;
    }
  self->actor = atomr_nvrtc_actor_new (device, &error);
  if (self->actor == NULL)
    g_warning ("no NVRTC actor on %s: %s", atomr_device_get_name (device), error->message);
  else
    atomr_actor_set_name (ATOMR_ACTOR (self->actor), "inspector-editor");
  return self->actor;
}

static void
set_compiling (InspectorEditorPage *self,
               gboolean             compiling)
{
  self->compiling = compiling;
  gtk_spinner_set_spinning (self->spinner, compiling);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.compile", !compiling);
}

static void
on_compiled (GObject      *source_object,
             GAsyncResult *result,
             gpointer      user_data)
{
  InspectorEditorPage *self = user_data;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GListStore) parsed = NULL;
  g_autofree gchar *status = NULL;
  const gchar *log;
  guint n_err = 0;

  module = inspector_compile_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_object_unref (self);
      return;
    }
  set_compiling (self, FALSE);

  log = module ? atomr_module_get_log (module) : error->message;
  parsed = inspector_diagnostics_parse (log);
  g_list_store_remove_all (self->diagnostics);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (parsed)); i++)
    {
      g_autoptr(InspectorDiagnostic) d = g_list_model_get_item (G_LIST_MODEL (parsed), i);
      if (inspector_diagnostic_get_severity (d) == INSPECTOR_SEVERITY_ERROR)
        n_err++;
      g_list_store_append (self->diagnostics, d);
    }
  mark_diagnostics (self);

  if (module)
    {
      GBytes *ptx = atomr_module_get_ptx (module);
      g_autofree gchar *ptx_s = ptx ? g_strndup (g_bytes_get_data (ptx, NULL), g_bytes_get_size (ptx)) : NULL;
      AtomrCacheStatus cs = atomr_module_get_cache_status (module);

      gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->ptx_view)),
                                ptx_s ? ptx_s : _("NVRTC produced no PTX (CUBIN only)."), -1);
      if (self->actor)
        show_attributes (self, module);
      else
        show_resources (self, module);
      status = cs == ATOMR_CACHE_STATUS_MEMORY_HIT || cs == ATOMR_CACHE_STATUS_DISK_HIT
               ? g_strdup (_("Unchanged: taken from the cache"))
               : g_strdup_printf (_("Compiled in %.0f ms and stored in the cache"),
                                  atomr_module_get_compile_time_ms (module));
      gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "error");
      gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "success");
      if (g_list_model_get_n_items (G_LIST_MODEL (self->diagnostics)) == 0)
        gtk_stack_set_visible_child_name (self->output_stack, "ptx");
    }
  else
    {
      if (n_err > 0)
        status = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u error", "%u errors", n_err), n_err);
      else
        {
          /* not a source error: NVRTC missing, bad option, no lowered name */
          g_autofree gchar *first = g_strndup (error->message, strcspn (error->message, "\n"));
          status = g_strdup (first);
        }
      gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "success");
      gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "error");
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), error->message);
      gtk_stack_set_visible_child_name (self->output_stack, "diagnostics");
      clear_resources (self);
    }
  gtk_label_set_text (self->status_label, status);
  g_signal_emit (self, signals[COMPILED], 0, module != NULL);
  g_object_unref (self);
}

/**
 * inspector_editor_page_compile:
 * @self: the page
 *
 * Compiles the buffer with the panel's options in a worker thread and
 * stores the result in the cache; the page shows a spinner meanwhile.
 */
void
inspector_editor_page_compile (InspectorEditorPage *self)
{
  g_autofree gchar *source = NULL;
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(GError) error = NULL;
  GtkTextIter start, end;

  if (self->compiling)
    return;
  gtk_text_buffer_get_bounds (GTK_TEXT_BUFFER (self->buffer), &start, &end);
  source = gtk_text_buffer_get_text (GTK_TEXT_BUFFER (self->buffer), &start, &end, TRUE);
  ensure_actor (self);
  options = build_options (self, source, &error);
  if (options == NULL)
    {
      /* refused before NVRTC: said where the compile result goes */
      gtk_label_set_text (self->status_label, error->message);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), error->message);
      gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "success");
      gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "error");
      g_signal_emit (self, signals[COMPILED], 0, FALSE);
      return;
    }
  remember_document_options (self, options);
  set_compiling (self, TRUE);
  gtk_label_set_text (self->status_label, _("Compiling…"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), NULL);
  gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "error");
  gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "success");
  g_cancellable_cancel (self->cancellable);
  g_set_object (&self->cancellable, NULL);
  self->cancellable = g_cancellable_new ();
  g_free (self->log_name);
  self->log_name = g_strdup (self->actor ? "program.cu" : program_name (self));
  inspector_compile_async (self->actor, source, program_name (self), options, self->cache, self->cancellable,
                           on_compiled, g_object_ref (self));
}

/**
 * inspector_editor_page_get_status:
 * @self: the page
 *
 * Returns: (transfer none): the status line under the editor (the last
 *   compile's outcome)
 */
const gchar *
inspector_editor_page_get_status (InspectorEditorPage *self)
{
  return gtk_label_get_text (self->status_label);
}

/**
 * inspector_editor_page_get_option_widget:
 * @self: the page
 * @name: "arch", "defines", "fast-math", "line-info", "debug", "lto",
 *   "max-registers" or "extra-flags"
 *
 * Returns: (transfer none) (nullable): the field of the options panel
 */
GtkWidget *
inspector_editor_page_get_option_widget (InspectorEditorPage *self,
                                         const gchar         *name)
{
  const struct { const gchar *name; gpointer widget; } fields[] = {
    { "arch", self->arch_row }, { "defines", self->defines_row },
    { "fast-math", self->fast_math_switch }, { "line-info", self->line_info_switch },
    { "debug", self->debug_switch }, { "lto", self->lto_switch },
    { "max-registers", self->max_registers_spin }, { "extra-flags", self->extra_flags_row },
  };

  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (g_strcmp0 (name, fields[i].name) == 0)
      return fields[i].widget;
  return NULL;
}

/**
 * inspector_editor_page_run:
 * @self: the page
 *
 * Runs the kernel named on the Run tab with its arguments, in
 * atomr-kernel-runner, with the panel's compile options, and shows the
 * Run tab.
 */
void
inspector_editor_page_run (InspectorEditorPage *self)
{
  g_autofree gchar *source = NULL;
  g_autoptr(JsonObject) options = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (GTK_TEXT_BUFFER (self->buffer), &start, &end);
  source = gtk_text_buffer_get_text (GTK_TEXT_BUFFER (self->buffer), &start, &end, TRUE);
  names = inspector_find_kernel_names (source);
  inspector_run_panel_set_kernels (self->run_panel, (const gchar * const *) names);
  gtk_stack_set_visible_child_name (self->output_stack, "run");
  options = options_json (self, source, &error);
  if (options == NULL)
    {
      gtk_label_set_text (self->status_label, error->message);
      return;
    }
  inspector_run_panel_start (self->run_panel, source, program_name (self), options,
                             self->cache ? atomr_kernel_cache_get_directory (self->cache) : NULL);
}

/**
 * inspector_editor_page_get_run_panel:
 * @self: the page
 *
 * Returns: (transfer none): the Run tab
 */
InspectorRunPanel *
inspector_editor_page_get_run_panel (InspectorEditorPage *self)
{
  return self->run_panel;
}

static void
run_action (GtkWidget   *widget,
            const gchar *action_name,
            GVariant    *parameter)
{
  inspector_editor_page_run (INSPECTOR_EDITOR_PAGE (widget));
}

static void
compile_action (GtkWidget   *widget,
                const gchar *action_name,
                GVariant    *parameter)
{
  inspector_editor_page_compile (INSPECTOR_EDITOR_PAGE (widget));
}

static GtkFileFilter *
cuda_filter (void)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, _("CUDA Sources"));
  gtk_file_filter_add_pattern (filter, "*.cu");
  gtk_file_filter_add_pattern (filter, "*.cuh");
  gtk_file_filter_add_mime_type (filter, "text/x-cuda");
  return filter;
}

static void
report (InspectorEditorPage *self,
        const gchar         *message)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s", message);
}

/* Unsaved edits: every action that would replace the buffer (open,
 * "Open in Editor", closing the window, quitting) asks first through
 * inspector_editor_page_save_changes_async(). */

static gboolean save_to (InspectorEditorPage *self, GFile *file, GError **error);

static void
on_save_changes_chooser (GtkNativeDialog *dialog,
                         int              response,
                         GTask           *task)
{
  InspectorEditorPage *self = g_task_get_source_object (task);
  g_autoptr(GError) error = NULL;

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));

      if (save_to (self, file, &error))
        g_task_return_boolean (task, TRUE);
      else
        g_task_return_error (task, g_steal_pointer (&error));
    }
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("The source was not saved"));
  g_object_unref (dialog);
  g_object_unref (task);
}

static void
on_save_changes_response (AdwMessageDialog *dialog,
                          const gchar      *response,
                          GTask            *task)
{
  InspectorEditorPage *self = g_task_get_source_object (task);
  g_autoptr(GError) error = NULL;

  /* once: closing the dialog afterwards must not answer again */
  g_signal_handlers_disconnect_by_func (dialog, on_save_changes_response, task);
  self->save_dialog = NULL;
  if (g_str_equal (response, "discard"))
    {
      gtk_text_buffer_set_modified (GTK_TEXT_BUFFER (self->buffer), FALSE);
      g_task_return_boolean (task, TRUE);
    }
  else if (g_str_equal (response, "save") && self->file)
    {
      if (save_to (self, self->file, &error))
        g_task_return_boolean (task, TRUE);
      else
        g_task_return_error (task, g_steal_pointer (&error));
    }
  else if (g_str_equal (response, "save"))
    {
      GtkFileChooserNative *chooser;

      chooser = gtk_file_chooser_native_new (_("Save Kernel Source"), GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (self))),
                                             GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
      gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), program_name (self));
      g_signal_connect (chooser, "response", G_CALLBACK (on_save_changes_chooser), g_steal_pointer (&task));
      gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
      return;
    }
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Kept the unsaved changes"));
  g_clear_object (&task);
}

/**
 * inspector_editor_page_save_changes_async:
 * @self: the page
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when the user decided
 * @user_data: data for @callback
 *
 * Before the buffer is replaced or the window closes: if the buffer has
 * unsaved edits, asks whether to save them, discard them, or cancel.
 * Finishes with %TRUE at once when there is nothing to lose.
 */
void
inspector_editor_page_save_changes_async (InspectorEditorPage *self,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_autofree gchar *body = NULL;
  GtkWidget *dialog;

  g_task_set_source_tag (task, inspector_editor_page_save_changes_async);
  if (!gtk_text_buffer_get_modified (GTK_TEXT_BUFFER (self->buffer)))
    {
      g_task_return_boolean (task, TRUE);
      g_object_unref (task);
      return;
    }
  if (self->save_dialog)   /* already asking: this request is the same question */
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PENDING, _("Already asking about the unsaved changes"));
      g_object_unref (task);
      gtk_window_present (GTK_WINDOW (self->save_dialog));
      return;
    }
  /* Translators: %s is a file name */
  body = g_strdup_printf (_("“%s” has changes that were not saved. Unsaved changes are lost."), program_name (self));
  dialog = adw_message_dialog_new (GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (self))), _("Save Changes?"), body);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"),
                                    "discard", _("_Discard"),
                                    "save", _("_Save"),
                                    NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "discard", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "save", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "save");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_signal_connect (dialog, "response", G_CALLBACK (on_save_changes_response), task);
  self->save_dialog = dialog;
  gtk_window_present (GTK_WINDOW (dialog));
}

/**
 * inspector_editor_page_save_changes_finish:
 * @self: the page
 * @result: the result
 * @error: return location for a #GError; %G_IO_ERROR_CANCELLED when the
 *   user kept the edits
 *
 * Returns: %TRUE when the buffer may be replaced
 */
gboolean
inspector_editor_page_save_changes_finish (InspectorEditorPage  *self,
                                           GAsyncResult         *result,
                                           GError              **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * inspector_editor_page_get_modified:
 * @self: the page
 *
 * Returns: whether the buffer has unsaved edits
 */
gboolean
inspector_editor_page_get_modified (InspectorEditorPage *self)
{
  return gtk_text_buffer_get_modified (GTK_TEXT_BUFFER (self->buffer));
}

typedef struct {
  GWeakRef page;
  GFile   *file;
} Loading;

static void
on_file_loaded (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Loading *l = user_data;
  g_autoptr(InspectorEditorPage) self = g_weak_ref_get (&l->page);
  g_autofree gchar *contents = NULL;
  g_autoptr(GError) error = NULL;
  gsize len = 0;

  if (!g_file_load_contents_finish (G_FILE (source), result, &contents, &len, NULL, &error) ||
      (self && !take_contents (self, l->file, contents, len, &error)))
    {
      if (self)
        gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s", error->message);
    }
  g_weak_ref_clear (&l->page);
  g_object_unref (l->file);
  g_free (l);
}

/* Reads @file in the background (GFile's async I/O), then shows it. */
static void
load_file_async (InspectorEditorPage *self,
                 GFile               *file)
{
  Loading *l = g_new0 (Loading, 1);

  g_weak_ref_init (&l->page, self);
  l->file = g_object_ref (file);
  g_file_load_contents_async (file, NULL, on_file_loaded, l);
}

static void
on_load_file_confirmed (GObject      *source,
                        GAsyncResult *result,
                        gpointer      user_data)
{
  InspectorEditorPage *self = INSPECTOR_EDITOR_PAGE (source);
  g_autoptr(GFile) file = user_data;
  g_autoptr(GError) error = NULL;

  if (!inspector_editor_page_save_changes_finish (self, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
          !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING))
        gtk_widget_activate_action (GTK_WIDGET (self), "win.show-error", "s", error->message);
      return;
    }
  load_file_async (self, file);
}

/**
 * inspector_editor_page_open_file:
 * @self: the page
 * @file: a kernel source
 *
 * Opens @file after asking about unsaved edits; errors become toasts.
 */
void
inspector_editor_page_open_file (InspectorEditorPage *self,
                                 GFile               *file)
{
  inspector_editor_page_save_changes_async (self, NULL, on_load_file_confirmed, g_object_ref (file));
}

static void
on_open_response (GtkNativeDialog     *dialog,
                  int                  response,
                  InspectorEditorPage *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));

      load_file_async (self, file);
    }
  g_object_unref (dialog);
}

static void
show_open_dialog (InspectorEditorPage *self)
{
  GtkFileChooserNative *dialog;

  dialog = gtk_file_chooser_native_new (_("Open Kernel Source"), GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (self))),
                                        GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), cuda_filter ());
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
on_open_confirmed (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  InspectorEditorPage *self = INSPECTOR_EDITOR_PAGE (source);
  g_autoptr(GError) error = NULL;

  if (inspector_editor_page_save_changes_finish (self, result, &error))
    show_open_dialog (self);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
           !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING))
    report (self, error->message);
}

static void
open_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  inspector_editor_page_save_changes_async (INSPECTOR_EDITOR_PAGE (widget), NULL, on_open_confirmed, NULL);
}

static gboolean
save_to (InspectorEditorPage  *self,
         GFile                *file,
         GError              **error)
{
  g_autofree gchar *text = NULL;
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (GTK_TEXT_BUFFER (self->buffer), &start, &end);
  text = gtk_text_buffer_get_text (GTK_TEXT_BUFFER (self->buffer), &start, &end, TRUE);
  if (!g_file_replace_contents (file, text, strlen (text), NULL, FALSE, G_FILE_CREATE_NONE, NULL, NULL, error))
    return FALSE;
  g_set_object (&self->file, file);
  g_free (self->name);
  self->name = g_file_get_basename (file);
  gtk_text_buffer_set_modified (GTK_TEXT_BUFFER (self->buffer), FALSE);
  update_title (self);
  return TRUE;
}

static void
on_save_response (GtkNativeDialog     *dialog,
                  int                  response,
                  InspectorEditorPage *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr(GError) error = NULL;

      if (!save_to (self, file, &error))
        report (self, error->message);
    }
  g_object_unref (dialog);
}

static void
save_action (GtkWidget   *widget,
             const gchar *action_name,
             GVariant    *parameter)
{
  InspectorEditorPage *self = INSPECTOR_EDITOR_PAGE (widget);
  GtkFileChooserNative *dialog;

  if (self->file && g_str_equal (action_name, "editor.save"))
    {
      g_autoptr(GError) error = NULL;
      if (!save_to (self, self->file, &error))
        report (self, error->message);
      return;
    }
  dialog = gtk_file_chooser_native_new (_("Save Kernel Source"), GTK_WINDOW (gtk_widget_get_root (widget)),
                                        GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), cuda_filter ());
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), program_name (self));
  g_signal_connect (dialog, "response", G_CALLBACK (on_save_response), widget);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
inspector_editor_page_dispose (GObject *object)
{
  InspectorEditorPage *self = INSPECTOR_EDITOR_PAGE (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->save_dialog)
    gtk_window_destroy (GTK_WINDOW (self->save_dialog));
  gtk_widget_dispose_template (GTK_WIDGET (self), INSPECTOR_TYPE_EDITOR_PAGE);
  g_clear_object (&self->file);
  g_clear_object (&self->settings);
  g_clear_object (&self->cache);
  g_clear_object (&self->diagnostics);
  g_clear_pointer (&self->resource_rows, g_ptr_array_unref);
  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->log_name, g_free);
  g_clear_object (&self->actor);
  G_OBJECT_CLASS (inspector_editor_page_parent_class)->dispose (object);
}

static void
inspector_editor_page_class_init (InspectorEditorPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = inspector_editor_page_dispose;

  /* Emitted when a compile ended, with whether it succeeded. */
  signals[COMPILED] = g_signal_new ("compiled", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                    0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

  g_type_ensure (GTK_SOURCE_TYPE_VIEW);
  g_type_ensure (INSPECTOR_TYPE_RUN_PANEL);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/atomr/Inspector/inspector-editor-page.ui");
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, file_label);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, spinner);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, status_label);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, flap);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, source_view);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, output_stack);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, diagnostics_list);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, ptx_view);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, resources_group);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, arch_row);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, std_row);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, defines_row);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, includes_row);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, names_row);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, fast_math_switch);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, debug_switch);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, run_panel);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, lto_switch);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, max_registers_spin);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, extra_flags_row);
  gtk_widget_class_bind_template_child (widget_class, InspectorEditorPage, line_info_switch);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  gtk_widget_class_install_action (widget_class, "editor.compile", NULL, compile_action);
  gtk_widget_class_install_action (widget_class, "editor.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "editor.run", NULL, run_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F5, 0, "editor.run", NULL);
  gtk_widget_class_install_action (widget_class, "editor.save", NULL, save_action);
  gtk_widget_class_install_action (widget_class, "editor.save-as", NULL, save_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK, "editor.save", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "editor.save-as", NULL);
}

static void
add_mark_category (GtkSourceView *view,
                   const gchar   *category,
                   const gchar   *icon,
                   const gchar   *color)
{
  g_autoptr(GtkSourceMarkAttributes) attrs = gtk_source_mark_attributes_new ();
  GdkRGBA bg;

  gdk_rgba_parse (&bg, color);
  gtk_source_mark_attributes_set_icon_name (attrs, icon);
  gtk_source_mark_attributes_set_background (attrs, &bg);
  gtk_source_view_set_mark_attributes (view, category, attrs, 10);
}

static void
inspector_editor_page_init (InspectorEditorPage *self)
{
  g_autoptr(GBytes) sample = NULL;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->settings = g_settings_new (ATOMR_APP_ID);

  /* Ctrl+Enter compiles: in the capture phase, before the source view
   * (which would insert a newline) sees the key */
  {
    GtkEventController *keys = gtk_shortcut_controller_new ();

    gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
    gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (keys),
      gtk_shortcut_new (gtk_alternative_trigger_new (gtk_keyval_trigger_new (GDK_KEY_Return, GDK_CONTROL_MASK),
                                                     gtk_keyval_trigger_new (GDK_KEY_KP_Enter, GDK_CONTROL_MASK)),
                        gtk_named_action_new ("editor.compile")));
    gtk_widget_add_controller (GTK_WIDGET (self), keys);
  }
  self->buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view)));
  self->diagnostics = g_list_store_new (INSPECTOR_TYPE_DIAGNOSTIC);
  self->resource_rows = g_ptr_array_new ();
  self->error_tag = gtk_text_buffer_create_tag (GTK_TEXT_BUFFER (self->buffer), "diagnostic-error",
                                                "underline", PANGO_UNDERLINE_ERROR,
                                                "underline-rgba", &(GdkRGBA) { 0.88, 0.11, 0.14, 1 }, NULL);
  self->warning_tag = gtk_text_buffer_create_tag (GTK_TEXT_BUFFER (self->buffer), "diagnostic-warning",
                                                  "underline", PANGO_UNDERLINE_ERROR,
                                                  "underline-rgba", &(GdkRGBA) { 0.9, 0.65, 0.04, 1 }, NULL);
  inspector_source_view_setup (self->source_view, "cuda");
  inspector_source_view_setup (self->ptx_view, "ptx");
  add_mark_category (self->source_view, "error", "dialog-error-symbolic", "rgba(224,27,36,0.15)");
  add_mark_category (self->source_view, "warning", "dialog-warning-symbolic", "rgba(229,165,10,0.15)");
  gtk_editable_set_text (GTK_EDITABLE (self->arch_row), DEFAULT_ARCH);

  gtk_list_box_bind_model (self->diagnostics_list, G_LIST_MODEL (self->diagnostics),
                           create_diagnostic_row, NULL, NULL);
  g_signal_connect (self->diagnostics_list, "row-activated", G_CALLBACK (on_diagnostic_activated), self);
  g_signal_connect_swapped (self->buffer, "modified-changed", G_CALLBACK (update_title), self);
  g_signal_connect_after (self->buffer, "insert-text", G_CALLBACK (on_insert_text), self);
  g_signal_connect (self->buffer, "delete-range", G_CALLBACK (on_delete_range), self);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self->source_view), TRUE);
  g_signal_connect (self->source_view, "query-tooltip", G_CALLBACK (on_query_tooltip), self);

  adw_preferences_group_set_title (self->resources_group, _("Registers and Shared Memory"));
  adw_preferences_group_set_description (self->resources_group,
                                         _("Compile for a real architecture (sm_XX) to see what ptxas allocates per kernel."));
  sample = g_resources_lookup_data ("/io/github/atomr/Inspector/kernels/saxpy.cu", 0, NULL);
  if (sample)
    {
      g_autofree gchar *text = g_strndup (g_bytes_get_data (sample, NULL), g_bytes_get_size (sample));
      inspector_editor_page_set_text (self, "saxpy.cu", text);
    }
  else
    update_title (self);
}

/**
 * inspector_editor_page_get_buffer:
 * @self: the page
 *
 * Returns: (transfer none): the source buffer
 */
GtkTextBuffer *
inspector_editor_page_get_buffer (InspectorEditorPage *self)
{
  return GTK_TEXT_BUFFER (self->buffer);
}

/**
 * inspector_editor_page_get_source_view:
 * @self: the page
 *
 * Returns: (transfer none): the source view
 */
GtkWidget *
inspector_editor_page_get_source_view (InspectorEditorPage *self)
{
  return GTK_WIDGET (self->source_view);
}
