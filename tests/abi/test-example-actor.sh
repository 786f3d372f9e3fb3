#!/bin/sh
# Builds and runs examples/example-actor against the INSTALLED project: a
# `meson install --destdir` of this build tree, found through its
# atomr-1.pc only (so nothing from the source tree, private headers
# included, is on the include path).
#   test-example-actor.sh MESON BUILD_ROOT SOURCE_ROOT
set -eu
meson=$1 build_root=$2 source_root=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$meson" install -C "$build_root" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/root" -name atomr-1.pc | head -n 1)
[ -n "$pc" ] || { echo "atomr-1.pc was not installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")

# The installed atomr-1.pc, with its prefix moved into the destdir.
mkdir "$tmp/pc"
sed "s|^prefix=|prefix=$tmp/root|" "$pc" >"$tmp/pc/atomr-1.pc"
export PKG_CONFIG_PATH="$tmp/pc"
"$meson" setup "$tmp/build" "$source_root/examples/example-actor" >"$tmp/setup.log" 2>&1 \
  || { cat "$tmp/setup.log"; exit 1; }
# The include path is the installed one.
grep -q "$tmp/root" "$tmp/build/compile_commands.json" \
  || { echo "example-actor is not compiled against the installed headers"; exit 1; }
if grep -q -- "-I$source_root/lib" "$tmp/build/compile_commands.json"; then
  echo "example-actor sees the source tree's headers"; exit 1
fi
ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
LD_LIBRARY_PATH="$libdir" "$tmp/build/example-actor"
