#!/usr/bin/env bash
# Install the Debian packages hetero-sim needs, only if some are missing.
# Used by tools/run.sh, tools/test.sh and .ci/run.  Needs root (or sudo).
set -euo pipefail

# libsqlite3-dev: sweep results; libopenmpi-dev + openmpi-bin: sweeps over
# MPI ranks (optional at build time, but CI tests it); python3-numpy: the
# architectures' independent reference forward passes (tests/arch-reference.py)
# libnlopt-dev: calibrate's optimiser (BOBYQA, sim/calibrate/fit-bobyqa.c)
# help2man: the man page (meson install); valgrind: tests/cli/test-outputs
# runs the binary under memcheck (skipped without)
PKGS=(gcc pkg-config meson ninja-build python3 python3-numpy
      libglib2.0-dev libcjson-dev libopenblas-dev libgomp1
      libsqlite3-dev libopenmpi-dev openmpi-bin help2man valgrind
      libnlopt-dev)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO="sudo"
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}"
