/* atomr-cli-private.h — what the atomr subcommands share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define EXIT_COMPILE 1
#define EXIT_USAGE   2
/* Bumped when a member changes meaning or goes away (new members do not);
 * the schema is in docs/DEVELOPING.md, "atomr --json". */
#define ATOMR_CLI_JSON_VERSION 1

/* TRUE once a subcommand saw --json: errors are then JSON documents on
 * stdout too ({"version", "error": {"domain", "code", "message", "log"}}). */
extern gboolean atomr_cli_json_mode;

/* Sets atomr_cli_json_mode from argv before option parsing. */
void         atomr_cli_scan_json_flag    (int                  argc,
                                          char               **argv);
/* Every --json output: an object with "version"; end it and print it. */
JsonBuilder *atomr_cli_begin_document    (void);
void         atomr_cli_print_json        (JsonBuilder         *b);
/* Strings that need not be UTF-8 (paths, logs) are made valid. */
void         atomr_cli_add_string_value  (JsonBuilder         *b,
                                          const gchar         *s);
void         atomr_cli_add_string_member (JsonBuilder         *b,
                                          const gchar         *name,
                                          const gchar         *s);
void         atomr_cli_add_int_member    (JsonBuilder         *b,
                                          const gchar         *name,
                                          gint64               v);
void         atomr_cli_add_strv_member   (JsonBuilder         *b,
                                          const gchar         *name,
                                          const gchar * const *v);
/* Reports @error (stderr, and JSON with --json); returns the exit status:
 * EXIT_COMPILE for ATOMR_ERROR_COMPILE, else EXIT_USAGE. */
int          atomr_cli_fail              (const GError        *error);
int          atomr_cli_usage_error       (GOptionContext      *context,
                                          const gchar         *message);

/* The subcommands: argv[0] is the subcommand's name. */
int          atomr_cli_compile           (int                  argc,
                                          char               **argv);

G_END_DECLS
