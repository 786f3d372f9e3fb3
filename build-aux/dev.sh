#!/usr/bin/env bash
# build-aux/dev.sh — set up, build, and run atomr-accel on Debian 12.
#
#   bash build-aux/dev.sh demo   install what is missing, build, run the demo
#   bash build-aux/dev.sh test   install what is missing, build, run every test
#   bash build-aux/dev.sh build  install what is missing and build
#
# Without a GPU the demo shows the kernel cache, the editor and a bundled
# trace; GPU tests skip.  BUILD_DIR (default: build) selects the build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}

install_packages() {
  local missing=()
  while read -r pkg; do
    [[ -z $pkg || $pkg == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < build-aux/debian-packages.txt
  if ((${#missing[@]})); then
    echo "dev.sh: installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

build() {
  install_packages
  if [[ ! -d $build_dir ]]; then
    meson setup "$build_dir" -Dintrospection=true
  fi
  ninja -C "$build_dir"
}

summarize() {
  # One plain closing line for whoever reads the log: "N passed, N failed, N skipped".
  /usr/bin/python3 - "$build_dir/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    res = r.get("result")
    if res in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif res == "SKIP":
        skipped += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
}

case ${1:-} in
  build)
    build
    ;;
  test)
    build
    rc=0
    meson test -C "$build_dir" --print-errorlogs --num-processes 2 || rc=$?
    summarize
    exit $rc
    ;;
  demo)
    build
    if [[ ! -x $build_dir/app/inspector/atomr-inspector ]]; then
      echo "dev.sh: atomr-inspector was not built (GTK 4 / libadwaita missing?)" >&2
      exit 1
    fi
    if [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} ]]; then
      exec meson devenv -C "$build_dir" atomr-inspector --demo
    fi
    # No display (a server, CI): run the demo in a virtual one and keep a
    # picture of each page, at 1280x800 and 360 px wide, light and dark.
    for page in cache editor trace; do
      for size in 1280x800 360x720; do
        for scheme in light dark; do
          png=$PWD/$build_dir/demo-$page-${size%%x*}-$scheme.png
          dark=()
          [[ $scheme == dark ]] && dark=(--screenshot-dark)
          meson devenv -C "$build_dir" xvfb-run -a -s "-screen 0 1400x900x24" \
            atomr-inspector --demo --screenshot="$png" --screenshot-page=$page \
            --screenshot-size=$size "${dark[@]}" --select=1
          echo "dev.sh: no display; the demo's $page page ($size, $scheme) is in $png"
        done
      done
    done
    ;;
  *)
    sed -n '2,10p' "$0"
    exit 2
    ;;
esac
