/* atomr-cli-private.h — what the atomr subcommands share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define EXIT_COMPILE 1
#define EXIT_USAGE   2

void atomr_cli_print_json      (JsonBuilder         *b);
void atomr_cli_add_strv_member (JsonBuilder         *b,
                                const gchar         *name,
                                const gchar * const *v);
int  atomr_cli_usage_error     (GOptionContext      *context,
                                const gchar         *message);

/* The subcommands: argv[0] is the subcommand's name. */
int  atomr_cli_compile         (int                  argc,
                                char               **argv);

G_END_DECLS
