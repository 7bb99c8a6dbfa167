#!/usr/bin/env bash
# Build (if needed) and run one libFuzzer target for SECONDS:
#   tools/fuzz.sh soc|model|record|safetensors|points|stack|sweep|replay|sweep-db|calibrate SECONDS [libFuzzer options...]
# The build is build-fuzz/ (clang, -Dfuzz=true, ASan + UBSan); the growing
# corpus is build-fuzz/corpus/TARGET, seeded from configs/, models/,
# tests/data/ and fuzz/seeds/; a crash is saved as build-fuzz/artifacts/
# TARGET-crash-* and the script exits non-zero (so CI fails).  Each crash
# becomes a tests/data/hostile/ file with its message (tests/test-hostile.c).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET SECONDS [libFuzzer options]}
secs=${2:?usage: tools/fuzz.sh TARGET SECONDS [libFuzzer options]}
shift 2
build=${FUZZ_BUILD_DIR:-build-fuzz}

if [ ! -f "$build/build.ninja" ]; then
    CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined \
        -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$build" "fuzz/fuzz-$target" >/dev/null

case "$target" in
soc)         seeds="configs tests/data/bad-configs" ;;
model)       seeds="models" ;;
record)      seeds="tests/data/bad-traces" ;;
# a recording taken as `replay` takes it: valid ones, and every hostile one
replay)      seeds="tests/data/replay tests/data/bad-traces tests/data/hostile/record" ;;
safetensors) seeds="fuzz/seeds/safetensors" ;;
points)      seeds="configs/points tests/data/bad-points" ;;
stack)       seeds="configs/stacks" ;;
sweep)       seeds="configs/sweeps" ;;
sweep-db)    seeds="" ;;             # fuzz/seeds/sweep-db: small sweep databases
calibrate)   seeds="configs/calibration" ;;
*)           seeds="" ;;
esac
[ -d "tests/data/hostile/$target" ] && seeds="$seeds tests/data/hostile/$target"
[ -d "fuzz/seeds/$target" ] && [ "$target" != safetensors ] && seeds="$seeds fuzz/seeds/$target"

corpus="$build/corpus/$target"
mkdir -p "$corpus" "$build/artifacts"
# every format is JSON or holds a JSON header
dict=(-dict=fuzz/json.dict)

# detect_leaks: a leak is a failure; halt_on_error: UBSan too
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OMP_NUM_THREADS=1
# shellcheck disable=SC2086
exec "$build/fuzz/fuzz-$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$build/artifacts/$target-" "$@" "$corpus" $seeds
