#!/usr/bin/env bash
# The README's second command: build and run the whole test suite.
# Extra arguments go to `meson test` (e.g. --suite hw).
# BUILD_DIR and MESON_OPTS select another build (CI uses them for the
# sanitizer run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
BUILD_DIR=${BUILD_DIR:-build}
[ -f "$BUILD_DIR/build.ninja" ] || meson setup "$BUILD_DIR" ${MESON_OPTS:-} >/dev/null
# quiet when it builds; the compiler's errors when it does not
if ! ninja -C "$BUILD_DIR" > "$BUILD_DIR/ninja.log" 2>&1; then
    grep -v '^\[' "$BUILD_DIR/ninja.log" | head -n 60 >&2
    echo "test.sh: build failed ($BUILD_DIR/ninja.log)" >&2
    exit 1
fi
exec meson test -C "$BUILD_DIR" --print-errorlogs "$@"
