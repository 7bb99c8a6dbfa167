#!/usr/bin/env bash
# Test: docs/cli.md, docs/config.md and the validate table of
# docs/accuracy.md are what tools/gen-docs.sh makes of this build (an
# option or config key added, or a simulated figure changed, without
# regenerating them fails here).  Usage: docs-fresh.sh BINARY SOURCE_ROOT
set -euo pipefail
bin=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$root/tools/gen-docs.sh" "$bin" "$tmp"
status=0
for f in cli.md config.md accuracy.md; do
    if ! diff -u "$root/docs/$f" "$tmp/$f" > "$tmp/$f.diff"; then
        echo "docs/$f is stale: regenerate with bash tools/gen-docs.sh $bin" >&2
        head -n 40 "$tmp/$f.diff" >&2
        status=1
    fi
done
exit $status
