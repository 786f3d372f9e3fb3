#!/usr/bin/env python3
"""build-aux/export-macros.py on a header with every shape the public
headers use: it marks each declaration once (idempotent), ignores
typedefs, structs, static inline bodies and statement macros, and lists
the names the exported-symbols test compares with nm."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'build-aux', 'export-macros.py')

HEADER = '''#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include <glib-object.h>

G_BEGIN_DECLS
/* atomr_in_a_comment (void); */
typedef struct _AtomrThing AtomrThing;
typedef gboolean (*AtomrThingFunc) (AtomrThing *thing, GError **error);
typedef enum { ATOMR_THING_A, ATOMR_THING_B } AtomrThingKind;
#define ATOMR_TYPE_PAGE (atomr_page_get_type ())
G_DECLARE_INTERFACE (AtomrPage, atomr_page, ATOMR, PAGE, GObject)
struct _AtomrPageInterface
{
  GTypeInterface parent;
  void (*show) (AtomrPage *page);
};
G_GNUC_WARN_UNUSED_RESULT
AtomrPage   *atomr_page_new   (const gchar *name,
                               GError     **error);
static inline int atomr_page_inline (void) { return 1; }
#ifdef ATOMR_SOMETHING
void         atomr_page_maybe (AtomrPage *page);
#endif
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AtomrThing, g_free)
ATOMR_DEPRECATED_IN_0_2_FOR (atomr_page_new)
void         atomr_page_old   (void);
ATOMR_AVAILABLE_IN_0_2
void         atomr_page_done  (void);
G_END_DECLS
'''


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class ExportMacrosScriptTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, 'atomr-page.h')
        with open(self.path, 'w') as f:
            f.write(HEADER)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_check_lists_what_is_missing(self):
        r = run('--check', self.path)
        self.assertEqual(r.returncode, 1)
        for name in ('atomr_page_get_type', 'atomr_page_new', 'atomr_page_maybe'):
            self.assertIn(name + ' is declared without an export macro', r.stderr)
        self.assertNotIn('atomr_page_old', r.stderr)
        self.assertNotIn('atomr_page_done', r.stderr)
        self.assertNotIn('atomr_page_inline', r.stderr)

    def test_fix_is_complete_and_idempotent(self):
        self.assertEqual(run(self.path).returncode, 0)
        once = open(self.path).read()
        self.assertEqual(once.count('ATOMR_AVAILABLE_IN_ALL\n'), 3)
        self.assertEqual(once.count('#include "atomr-visibility.h"'), 1)
        self.assertIn('ATOMR_AVAILABLE_IN_ALL\nG_DECLARE_INTERFACE', once)
        self.assertIn('ATOMR_AVAILABLE_IN_ALL\nG_GNUC_WARN_UNUSED_RESULT', once)
        self.assertEqual(run('--check', self.path).returncode, 0)
        self.assertEqual(run(self.path).returncode, 0)
        self.assertEqual(open(self.path).read(), once)

    def test_list(self):
        names = run('--list', self.path).stdout.split()
        self.assertEqual(names, ['atomr_page_done', 'atomr_page_get_type', 'atomr_page_maybe',
                                 'atomr_page_new', 'atomr_page_old'])


if __name__ == '__main__':
    unittest.main(verbosity=2)
