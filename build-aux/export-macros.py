#!/usr/bin/env python3
# build-aux/export-macros.py — keep the public headers' export macros right.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# libatomr-1.so is built with hidden default visibility (lib/meson.build), so
# a public function is exported only when its declaration carries an
# ATOMR_AVAILABLE_IN_* / ATOMR_DEPRECATED_IN_* macro (lib/atomr-visibility.h).
#
#   build-aux/export-macros.py [HEADER...]
#       add ATOMR_AVAILABLE_IN_ALL before every declaration that has no
#       macro, and `#include "atomr-visibility.h"` to every header that
#       needs it.  Idempotent: run it again after adding API or merging.
#       Without arguments: every lib/**/*.h that is not *-private.h (nor a
#       generated *-ptx.h), and lib/atomr-version.h.in.
#   build-aux/export-macros.py --check HEADER...
#       change nothing; list the declarations without a macro; exit 1 if
#       there are any (the cpu suite's `export-macros` test).
#   build-aux/export-macros.py --list HEADER...
#       print the names the headers declare.
#   build-aux/export-macros.py --nm LIBRARY HEADER...
#       compare `nm -D --defined-only LIBRARY` with the declared names; exit
#       1 on any difference (the cpu suite's `exported-symbols` test).

import argparse
import os
import re
import subprocess
import sys

MACRO_RE = re.compile(r'\bATOMR_(AVAILABLE_IN_\w+|DEPRECATED_IN_\w+)')
DEFAULT_MACRO = 'ATOMR_AVAILABLE_IN_ALL'
INCLUDE_LINE = '#include "atomr-visibility.h"'
# Statement-level macros that declare a function (their expansion starts with
# `GType prefix_get_type (void);`).
DECLARING_MACROS = re.compile(r'G_DECLARE_(\w+_TYPE|INTERFACE)$')
# Bare macros that are not statements.
NON_STATEMENTS = {'G_BEGIN_DECLS', 'G_END_DECLS', 'G_GNUC_BEGIN_IGNORE_DEPRECATIONS',
                  'G_GNUC_END_IGNORE_DEPRECATIONS'}
IDENT_RE = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


class Decl:
    def __init__(self, start, text, name, macro):
        self.start = start      # offset of the first character of the statement
        self.text = text
        self.name = name        # declared symbol
        self.macro = macro      # has an export macro


def strip_comments(src):
    """Blank out comments, string literals and preprocessor lines (keeping
    offsets) so the scanner sees only C declarations."""
    out = list(src)
    i, n = 0, len(src)
    at_line_start = True
    while i < n:
        c = src[i]
        if src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != '\n':
                    out[k] = ' '
            i = j
            continue
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = ' '
            i = j
            continue
        if c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != '\n':
                    out[k] = ' '
            i = j + 1
            at_line_start = False
            continue
        if at_line_start and c == '#':
            j = i
            while j < n:
                if src[j] == '\n' and src[j - 1] != '\\':
                    break
                j += 1
            for k in range(i, j):
                if out[k] != '\n':
                    out[k] = ' '
            i = j
            continue
        if c == '\n':
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        i += 1
    return ''.join(out)


def matching_paren(s, i):
    depth = 0
    while i < len(s):
        if s[i] == '(':
            depth += 1
        elif s[i] == ')':
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(s) - 1


def scan(src):
    """Yield the top-level declarations of a header."""
    s = strip_comments(src)
    i, n = 0, len(s)
    decls = []
    while i < n:
        if s[i].isspace() or s[i] == ';':
            i += 1
            continue
        start = i
        m = IDENT_RE.match(s, i)
        if m and m.group(0) in NON_STATEMENTS:
            i = m.end()
            continue
        # Skip the export macros in front of a statement (with the argument
        # of a *_FOR (replacement) one) to see what the statement is.
        while m and MACRO_RE.match(m.group(0)):
            i = m.end()
            while i < n and s[i].isspace():
                i += 1
            if m.group(0).endswith('_FOR') and i < n and s[i] == '(':
                i = matching_paren(s, i) + 1
                while i < n and s[i].isspace():
                    i += 1
            m = IDENT_RE.match(s, i)
        # A statement-level macro call without a semicolon.
        if m and m.group(0).isupper() and not MACRO_RE.match(m.group(0)) \
                and not m.group(0).startswith('G_GNUC') and not m.group(0).startswith('G_DEPRECATED'):
            j = m.end()
            while j < n and s[j].isspace():
                j += 1
            end = matching_paren(s, j) + 1 if j < n and s[j] == '(' else m.end()
            if DECLARING_MACROS.match(m.group(0)):
                args = [a.strip() for a in s[j + 1:end - 1].split(',')]
                name = args[1] + '_get_type' if len(args) > 1 else m.group(0)
                decls.append(Decl(start, src[start:end], name, bool(MACRO_RE.search(s[start:end]))))
            i = end
            continue
        # An ordinary statement up to `;` at brace depth 0.
        depth = 0
        j = i
        has_brace = False
        body_brace = False
        while j < n:
            if s[j] == '{':
                if depth == 0 and s[start:j].rstrip().endswith(')'):
                    body_brace = True      # a function body (static inline)
                depth += 1
                has_brace = True
            elif s[j] == '}':
                depth -= 1
                if depth == 0 and body_brace:
                    break
            elif s[j] == ';' and depth == 0:
                break
            j += 1
        stmt = s[start:j]
        i = j + 1
        first = IDENT_RE.match(stmt)
        if has_brace or not first or first.group(0) in ('typedef', 'struct', 'enum', 'union', 'static'):
            continue
        # Skip a possible macro prefix (ATOMR_AVAILABLE_IN_..., ATOMR_DEPRECATED_IN_0_2_FOR (x)).
        body = MACRO_RE.sub(' ', stmt)
        body = re.sub(r'_FOR\s*\([^)]*\)', ' ', body) if 'DEPRECATED' in stmt else body
        fn = re.search(r'\b([A-Za-z_]\w*)\s*\(', body)
        if fn and not re.search(r'\(\s*\*', body[:fn.end() + 2]):
            name = fn.group(1)
        else:
            idents = IDENT_RE.findall(body.split('=')[0].split('[')[0])
            name = idents[-1] if idents else '?'
        decls.append(Decl(start, src[start:j + 1], name, bool(MACRO_RE.search(stmt))))
    return decls


def fix(path):
    src = open(path, encoding='utf-8').read()
    decls = scan(src)
    missing = [d for d in decls if not d.macro]
    new = src
    for d in sorted(missing, key=lambda d: d.start, reverse=True):
        line_start = new.rfind('\n', 0, d.start) + 1
        indent = new[line_start:d.start]
        if indent.strip():          # something else on the line: own line anyway
            new = new[:d.start] + DEFAULT_MACRO + '\n' + new[d.start:]
        else:
            new = new[:line_start] + indent + DEFAULT_MACRO + '\n' + new[line_start:]
    if decls and INCLUDE_LINE not in new and os.path.basename(path) != 'atomr-visibility.h':
        # After the ATOMR_INSIDE guard, else after `#pragma once`.
        m = re.search(r'#error "Only <atomr.h> can be included directly."\n#endif\n', new) \
            or re.search(r'#pragma once\n', new)
        pos = m.end() if m else 0
        new = new[:pos] + '\n' + INCLUDE_LINE + '\n' + new[pos:]
    if new != src:
        with open(path, 'w', encoding='utf-8') as f:
            f.write(new)
        print(f'{path}: {len(missing)} declaration(s) marked')
    return 0


def default_headers():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib')
    headers = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith('.h') and not f.endswith(('-private.h', '-ptx.h')) and f != 'atomr-visibility.h':
                headers.append(os.path.normpath(os.path.join(dirpath, f)))
    headers.append(os.path.normpath(os.path.join(root, 'atomr-version.h.in')))
    return sorted(headers)


def enum_get_type(name):
    # glib-mkenums' conversion: AtomrFftType -> atomr_fft_type_get_type,
    # AtomrDType -> atomr_dtype_get_type (a lone capital joins the next word).
    words = re.findall(r'[A-Z]+(?![a-z])|[A-Z][a-z0-9]*', name)
    return '_'.join(w.lower() for w in words) + '_get_type'


def declared(headers, with_enums=False):
    names = {}
    for h in headers:
        src = open(h, encoding='utf-8').read()
        for d in scan(src):
            names[d.name] = h
        if with_enums:
            # Every public enum is registered through glib-mkenums
            # (atomr_enum_headers in lib/**/meson.build).
            for m in re.finditer(r'typedef\s+enum\b[^{;]*\{[^}]*\}\s*(\w+)\s*;', strip_comments(src)):
                names[enum_get_type(m.group(1))] = h + ' (enum ' + m.group(1) + ', registered by glib-mkenums)'
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--check', action='store_true')
    g.add_argument('--list', action='store_true')
    g.add_argument('--nm', metavar='LIBRARY')
    ap.add_argument('--stamp', metavar='FILE', help='with --check: write FILE on success')
    ap.add_argument('headers', nargs='*')
    a = ap.parse_args()
    headers = a.headers or default_headers()

    if a.check:
        bad = []
        for h in headers:
            for d in scan(open(h, encoding='utf-8').read()):
                if not d.macro:
                    line = open(h, encoding='utf-8').read().count('\n', 0, d.start) + 1
                    bad.append(f'{h}:{line}: {d.name} is declared without an export macro')
        for b in bad:
            print(b, file=sys.stderr)
        if bad:
            print(f'{len(bad)} public declaration(s) without ATOMR_AVAILABLE_IN_*: '
                  'run build-aux/export-macros.py (no arguments) and commit the result',
                  file=sys.stderr)
            return 1
        print(f'{len(headers)} headers: every declaration has an export macro')
        if a.stamp:
            open(a.stamp, 'w').write('ok\n')
        return 0

    if a.list:
        for name in sorted(declared(headers)):
            print(name)
        return 0

    if a.nm:
        out = subprocess.run(['nm', '-D', '--defined-only', a.nm], check=True,
                             capture_output=True, text=True).stdout
        exported = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[-2] not in ('A', 'a') and not parts[-1].startswith('_'):
                exported.add(parts[-1].split('@')[0])
        names = declared(headers, with_enums=True)
        extra = sorted(exported - set(names))
        missing = sorted(set(names) - exported)
        for e in extra:
            print(f'exported but not declared in a public header: {e}', file=sys.stderr)
        for m in missing:
            print(f'declared in {names[m]} but not exported: {m}', file=sys.stderr)
        if extra or missing:
            return 1
        print(f'{len(exported)} exported symbols == the public headers\' declarations')
        return 0

    for h in headers:
        fix(h)
    return 0


if __name__ == '__main__':
    sys.exit(main())
