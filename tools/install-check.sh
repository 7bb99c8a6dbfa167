#!/usr/bin/env bash
# Test: `meson install` into a scratch folder gives a working hetero-sim:
# the binary reads the installed configs and models, its man page is
# there, and a policy plug-in compiles against the installed headers with
# pkg-config alone and runs.   Usage: install-check.sh BUILD_DIR SOURCE_ROOT
set -euo pipefail
build=$1 root=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
prefix=$(meson introspect "$build" --buildoptions |
         python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
top=$dest$prefix
bin=$top/bin/hetero-sim
fail() { echo "install-check: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "no $bin"
man=$(find "$top" -name hetero-sim.1 | head -n 1)
[ -n "$man" ] && grep -q 'COMMANDS' "$man" || fail "no man page with the commands under $top"
data=$top/share/hetero-sim
[ -f "$data/configs/sd8gen3.json" ] && [ -f "$data/models/tiny.json" ] || fail "configs/models not installed in $data"
# (under --destdir the binary is not at its prefix: point it at the data)
export HS_DATA_DIR=$data
"$bin" list socs | grep -q '^sd8gen3' || fail "installed binary does not list the installed SoCs"
pc=$(find "$top" -name hetero-sim.pc | head -n 1)
[ -n "$pc" ] || fail "no hetero-sim.pc"
# the .pc names its real prefix: point it into the scratch install, and
# take its dependencies' flags (glib, cJSON) from the system as they are
real=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags hetero-sim)
case "$real" in *"-I$prefix/include/hetero-sim"*) ;;
    *) fail "pkg-config --cflags hetero-sim lacks -I$prefix/include/hetero-sim: $real";; esac
inc=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$top" \
      --variable=includedir hetero-sim)
cflags="${real//-I$prefix\/include/-I$inc}"
case "$cflags" in *"$dest"*) ;; *) fail "could not point the flags into the install: $cflags";; esac
${CC:-cc} -shared -fPIC $cflags "$root/tests/plugin/plugin-example.c" -o "$dest/plugin.so"
out=$("$bin" run --policy-plugin "$dest/plugin.so" --soc tiny --model tiny --prompt 32 --decode 1 \
      --functional off --format json)
echo "$out" | grep -q '"policy":"gpu-npu-alternate"' || fail "the plug-in built against the install did not run: $out"
echo "install-check: ok ($prefix: binary, man page, configs, models, pkg-config plug-in)"
