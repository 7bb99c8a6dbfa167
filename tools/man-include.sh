#!/usr/bin/env bash
# help2man's include file for hetero-sim.1: every command's --help (its
# option table) as a COMMANDS section, and where the rest is documented.
#   tools/man-include.sh BINARY > hetero-sim.h2m
set -euo pipefail
bin=$1
export LC_ALL=C.UTF-8 COLUMNS=100
echo "[COMMANDS]"
for c in $("$bin" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
    echo ".SS $c"
    echo ".nf"
    "$bin" "$c" --help | sed -e 's/\\/\\\\/g' -e 's/^\./\\\&./'
    echo ".fi"
done
echo "[SEE ALSO]"
echo "The guide, the lesson, the config reference and the sources of every"
echo "number are in the docs/ folder of the source tree (docs/guide.md,"
echo "docs/config.md, docs/references.md); the configs and models the program"
echo "reads are installed in share/hetero-sim/."
