#!/usr/bin/env bash
# build-aux/bundle-python.sh OUTDIR BUILDDIR — add Debian's Python 3.11 with
# PyGObject and the built Atomr typelib to a device bundle made by the
# project's bundle script, so that tests/python/*.py can run on a GPU machine
# that has no GLib stack.  Then: OUTDIR/run-python tests/python/test_blas.py
set -euo pipefail
out=${1:?usage: bundle-python.sh OUTDIR BUILDDIR}
build=${2:?usage: bundle-python.sh OUTDIR BUILDDIR}
py=$out/python
mkdir -p "$py/bin" "$py/lib" "$py/dist" "$py/typelib" "$out/lib"
cp -L /usr/bin/python3.11 "$py/bin/"
# The standard library, less what tests never import.
rm -rf "$py/lib/python3.11"
tar -C /usr/lib -cf - \
  --exclude=python3.11/test --exclude=python3.11/idlelib --exclude=python3.11/tkinter \
  --exclude=python3.11/turtledemo --exclude=python3.11/ensurepip --exclude=python3.11/lib2to3 \
  --exclude=python3.11/pydoc_data --exclude=python3.11/distutils --exclude=__pycache__ \
  --exclude=python3.11/config-3.11-x86_64-linux-gnu --exclude=python3.11/site-packages \
  python3.11 | tar -C "$py/lib" -xf -
cp -r /usr/lib/python3/dist-packages/gi "$py/dist/"
cp introspection/python/gi/overrides/Atomr.py "$py/dist/gi/overrides/"
find "$py/dist" -name __pycache__ -prune -exec rm -rf {} +
for t in GLib-2.0 GObject-2.0 Gio-2.0 GModule-2.0 GIRepository-2.0; do
  cp /usr/lib/x86_64-linux-gnu/girepository-1.0/$t.typelib "$py/typelib/"
done
cp "$build/introspection/Atomr-1.typelib" "$py/typelib/"
for lib in libgirepository-1.0.so.1 libffi.so.8 libglib-2.0.so.0 libgobject-2.0.so.0 libgio-2.0.so.0 \
           libgmodule-2.0.so.0 libjson-glib-1.0.so.0 libexpat.so.1 libz.so.1 libpcre2-8.so.0 \
           libmount.so.1 libselinux.so.1 libblkid.so.1; do
  cp -L /usr/lib/x86_64-linux-gnu/$lib "$out/lib/" 2>/dev/null || cp -L /lib/x86_64-linux-gnu/$lib "$out/lib/"
done
cp -L "$build/lib/libatomr-1.so.0" "$out/lib/"
mkdir -p "$out/tests"
cp tests/python/*.py "$out/tests/"
cat > "$out/run-python" <<'RUN'
#!/usr/bin/env bash
# Runs a Python test with the bundled interpreter, PyGObject and typelibs.
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONHOME="$here/python" PYTHONPATH="$here/python/dist" PYTHONDONTWRITEBYTECODE=1
export GI_TYPELIB_PATH="$here/python/typelib" NCCL_NVLS_ENABLE=0
exec "$here/python/bin/python3.11" "$@"
RUN
chmod +x "$out/run-python"
du -sh "$out" | awk '{print "bundle-python: "$1" in '"$out"'"}'
