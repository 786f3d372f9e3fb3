#!/usr/bin/python3
# MIME definitions and the desktop file (issue 20): data/mime/*.xml must be
# accepted by update-mime-database without a warning, the database built from
# it must give traces written by AtomrTraceRecorder (compact and
# pretty-printed, and version 1) application/x-atomr-trace+json and *.cu
# text/x-cuda, while
# any other JSON stays application/json; the built desktop file must pass
# desktop-file-validate and claim only MIME types that are defined.
#
# usage: test_mime.py MIME_XML DESKTOP_FILE
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

MIME_XML, DESKTOP_FILE = sys.argv[1:3]
del sys.argv[1:3]

FREEDESKTOP_XML = '/usr/share/mime/packages/freedesktop.org.xml'
TRACE_TYPE = 'application/x-atomr-trace+json'

GUESS = r'''
import json, sys
from gi.repository import Gio
out = {}
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        data = f.read()
    name = path.rsplit('/', 1)[-1]
    out[name] = [Gio.content_type_guess(name, data)[0],
                 Gio.content_type_guess(None, data)[0]]
print(json.dumps(out))
'''


def need(program):
    path = shutil.which(program)
    if path is None:
        raise unittest.SkipTest(program + ' is not installed')
    return path


def trace_json():
    """What AtomrTraceRecorder writes, from the built library."""
    import gi
    gi.require_version('Atomr', '1')
    from gi.repository import Atomr
    return Atomr.TraceRecorder.new(16).to_json()


class MimeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        need('update-mime-database')
        if not os.path.exists(FREEDESKTOP_XML):
            raise unittest.SkipTest(FREEDESKTOP_XML + ' is missing')
        cls.tmp = tempfile.TemporaryDirectory()
        packages = os.path.join(cls.tmp.name, 'mime', 'packages')
        os.makedirs(packages)
        shutil.copy(FREEDESKTOP_XML, packages)
        shutil.copy(MIME_XML, packages)
        cls.update = subprocess.run(['update-mime-database', os.path.join(cls.tmp.name, 'mime')],
                                    capture_output=True, text=True,
                                    env=dict(os.environ, XDG_DATA_HOME=cls.tmp.name))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def guess(self, files):
        """Content types from GIO, reading only the temporary database."""
        env = dict(os.environ, XDG_DATA_HOME=self.tmp.name,
                   XDG_DATA_DIRS=os.path.join(self.tmp.name, 'none'))
        res = subprocess.run(['/usr/bin/python3', '-c', GUESS] + files,
                             env=env, capture_output=True, text=True, check=True)
        return json.loads(res.stdout)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_update_mime_database_is_silent(self):
        self.assertEqual(self.update.returncode, 0, self.update.stderr)
        self.assertEqual(self.update.stderr.strip(), '')
        with open(os.path.join(self.tmp.name, 'mime', 'types')) as f:
            types = f.read().split()
        self.assertIn(TRACE_TYPE, types)
        self.assertIn('text/x-cuda', types)

    def test_recorder_output_is_a_trace(self):
        compact = trace_json()
        # version 1 traces (atomr-accel 0.1) named only the producer
        v1 = '{"displayTimeUnit":"ns","otherData":{"producer":"atomr-accel 0.1.0"},"traceEvents":[]}'
        self.assertIn('atomr-trace-version', compact)
        pretty = json.dumps(json.loads(compact), indent=2)
        spaced = json.dumps(json.loads(compact), indent=1, separators=(',', ' : '))
        files = [self.write('compact.json', compact),
                 self.write('pretty.json', pretty),
                 self.write('spaced.json', spaced),
                 self.write('named.atomr-trace', '{}'),
                 self.write('v1.json', v1)]
        got = self.guess(files)
        for name in ('compact.json', 'pretty.json', 'spaced.json', 'v1.json'):
            self.assertEqual(got[name], [TRACE_TYPE, TRACE_TYPE], name)
        self.assertEqual(got['named.atomr-trace'][0], TRACE_TYPE)

    def test_other_json_is_not_a_trace(self):
        other = json.dumps({'traceEvents': [], 'otherData': {'producer': 'chrome'}})
        got = self.guess([self.write('other.json', other)])
        self.assertEqual(got['other.json'][0], 'application/json')

    def test_cuda_sources(self):
        kernel = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 0.0f; }\n'
        got = self.guess([self.write('k.cu', kernel), self.write('k.cuh', kernel)])
        self.assertEqual(got['k.cu'][0], 'text/x-cuda')
        self.assertEqual(got['k.cuh'][0], 'text/x-cuda')

    def test_desktop_file(self):
        validate = need('desktop-file-validate')
        res = subprocess.run([validate, DESKTOP_FILE], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertEqual((res.stdout + res.stderr).strip(), '')
        mime_types = []
        with open(DESKTOP_FILE) as f:
            for line in f:
                if line.startswith('MimeType='):
                    mime_types = [t for t in line.strip()[len('MimeType='):].split(';') if t]
        self.assertIn(TRACE_TYPE, mime_types)
        self.assertIn('text/x-cuda', mime_types)
        self.assertNotIn('application/json', mime_types)
        with open(os.path.join(self.tmp.name, 'mime', 'types')) as f:
            defined = set(f.read().split())
        for t in mime_types:
            self.assertIn(t, defined, t + ' is claimed by the desktop file but not defined')


if __name__ == '__main__':
    unittest.main(verbosity=2)
