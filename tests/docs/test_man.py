#!/usr/bin/python3
# Man pages (issue 20): docs/man/atomr.1 and atomr-inspector.1 must format
# without a groff warning and stay true to the programs: every long option
# that `atomr compile --help`, `atomr cache --help` and
# `atomr-inspector --help-all` list is described in the page, and every
# option the page describes exists in the help text.
#
# usage: test_man.py ATOMR_1 ATOMR ATOMR_INSPECTOR_1 [ATOMR_INSPECTOR]
import os
import re
import shutil
import subprocess
import sys
import unittest

ARGS = sys.argv[1:]
del sys.argv[1:]
ATOMR_MAN, ATOMR, INSPECTOR_MAN = ARGS[:3]
INSPECTOR = ARGS[3] if len(ARGS) > 3 else None

LONG_OPTION = re.compile(r'--[a-zA-Z][a-zA-Z0-9-]*')


def help_options(argv, env=None):
    res = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert res.returncode == 0, (argv, res.returncode, res.stderr)
    options = set()
    for line in res.stdout.splitlines():
        line = line.strip()
        if line.startswith('-'):
            # "-k, --kernel=NAME   A kernel …": the option names before the text
            head = re.split(r'\s{2,}', line)[0]
            options.update(LONG_OPTION.findall(head))
    return options


def man_text(path):
    """The page as a reader sees it, from groff, with its warnings."""
    groff = shutil.which('groff')
    if groff is None:
        raise unittest.SkipTest('groff is not installed')
    res = subprocess.run([groff, '-man', '-Tutf8', '-ww', '-rLL=200n', path],
                         capture_output=True, text=True,
                         env=dict(os.environ, GROFF_NO_SGR='1', LC_ALL='C.UTF-8'))
    return res, re.sub(r'.\x08', '', res.stdout).replace('\u2010', '-').replace('\u2212', '-')


def man_options(text):
    """Options the page describes: those that start a line (.TP tags)."""
    options = set()
    for line in text.splitlines():
        if line.lstrip().startswith('-'):
            options.update(LONG_OPTION.findall(line))
    return options


class ManTest(unittest.TestCase):
    def check(self, page, helped, name):
        res, text = man_text(page)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stderr.strip(), '', 'groff warnings for ' + page)
        self.assertIn(name, text)
        described = man_options(text)
        self.assertTrue(helped)
        self.assertEqual(helped - described, set(), 'options of --help missing from ' + page)
        self.assertEqual(described - helped, set(), 'options in ' + page + ' that --help does not list')

    def test_atomr(self):
        helped = help_options([ATOMR, 'compile', '--help']) | help_options([ATOMR, 'cache', '--help'])
        helped.add('--version')
        helped.discard('--help')
        res = subprocess.run([ATOMR, '--version'], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0)
        self.check(ATOMR_MAN, helped, 'atomr')

    def test_atomr_inspector(self):
        if INSPECTOR is None:
            self.skipTest('atomr-inspector is not built')
        env = dict(os.environ)
        helped = help_options([INSPECTOR, '--help-all'], env=env)
        self.check(INSPECTOR_MAN, helped, 'atomr-inspector')


if __name__ == '__main__':
    unittest.main(verbosity=2)
