#!/usr/bin/python3
# API reference (issue 20): `gi-docgen check` on Atomr-1.gir reports
# nothing, `gi-docgen generate --fatal-warnings` with docs/reference's
# configuration builds the reference without a warning, and every public
# symbol of the GIR has a Since: version.  Skips when gi-docgen is missing.
#
# usage: test_gidocgen.py ATOMR_GIR ATOMR_TOML_IN CONTENT_DIR
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

GIR, TOML_IN, CONTENT_DIR = sys.argv[1:4]
del sys.argv[1:4]
CORE = '{http://www.gtk.org/introspection/core/1.0}'
C = '{http://www.gtk.org/introspection/c/1.0}'
GLIB = '{http://www.gtk.org/introspection/glib/1.0}'
ANSI = re.compile(r'\x1b\[[0-9;]*m')


def gi_docgen():
    path = shutil.which('gi-docgen')
    if path is None:
        raise unittest.SkipTest('gi-docgen is not installed')
    return path


def warnings(res):
    text = ANSI.sub('', res.stdout + res.stderr)
    return [line for line in text.splitlines() if 'WARNING' in line or 'ERROR' in line]


class GiDocgenTest(unittest.TestCase):
    def test_check_is_clean(self):
        res = subprocess.run([gi_docgen(), 'check', GIR], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(warnings(res), [])

    def test_generate_without_warnings(self):
        tool = gi_docgen()
        with tempfile.TemporaryDirectory() as tmp:
            toml = os.path.join(tmp, 'atomr.toml')
            with open(TOML_IN) as f, open(toml, 'w') as out:
                out.write(f.read().replace('@version@', 'test'))
            outdir = os.path.join(tmp, 'html')
            res = subprocess.run([tool, 'generate', '--quiet', '--fatal-warnings',
                                  '--config=' + toml, '--output-dir=' + outdir,
                                  '--no-namespace-dir', '--content-dir=' + CONTENT_DIR, GIR],
                                 capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
            self.assertEqual(warnings(res), [])
            for page in ('index.html', 'class.Actor.html', 'class.FftActor.html',
                         'class.RngActor.html', 'class.SolverActor.html',
                         'vfunc.Actor.setup.html', 'vfunc.Actor.teardown.html'):
                self.assertTrue(os.path.exists(os.path.join(outdir, page)), page)


class SinceTest(unittest.TestCase):
    def test_every_symbol_has_since(self):
        ns = ET.parse(GIR).getroot().find(CORE + 'namespace')
        missing = []
        kinds = ('class', 'record', 'enumeration', 'bitfield', 'function', 'method',
                 'constructor', 'property', 'constant', 'callback', 'interface',
                 'virtual-method', 'signal')

        def walk(element, depth):
            for e in element:
                tag = e.tag.replace(CORE, '').replace(GLIB, '')
                if tag not in kinds:
                    continue
                if tag == 'record' and e.get(GLIB + 'is-gtype-struct-for'):
                    continue   # class structs of G_DECLARE_*_TYPE
                if e.get('introspectable') == '0' and e.find(CORE + 'doc') is None:
                    continue
                if e.get('version') is None:
                    missing.append(e.get(C + 'identifier') or e.get(C + 'type') or
                                   (element.get('name') + '.' + e.get('name')))
                if depth == 0:
                    walk(e, 1)
        walk(ns, 0)
        self.assertEqual(missing, [], 'symbols without Since:')


if __name__ == '__main__':
    unittest.main(verbosity=2)
