#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the
# main job on the embedded defaults.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
exec ./build/sim/cli/hetero-sim "$@"
