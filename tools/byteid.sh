#!/bin/sh
# byteid.sh - the byte-identity harness of a change of cost, not of the
# model: runs several requests (prompts 32/256/1024, decode
# 0/8/64, both sync mechanisms, batch 4, a game on the GPU, replays of
# recordings, several policies, values checked and not) and writes each
# one's `--format json` (sim.wall_s dropped: wall time), trace and
# recording into OUTDIR, and checks every trace with tools/trace-check.py.
#
#   tools/byteid.sh BIN OUTDIR          write the outputs
#   tools/byteid.sh BIN OUTDIR SUMS     ... and compare their sha256 with
#                                       SUMS (tests/data/byteid.sha256)
#   tools/byteid.sh --update BIN        rewrite tests/data/byteid.sha256
#
# To compare two builds file by file: run it with each binary into two
# directories and `diff -r` them.
set -eu
update=0
if [ "$1" = "--update" ]; then
    update=1
    shift
fi
bin=$1
here=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$(mktemp -d)}
sums=${3:-}
mkdir -p "$out"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# run NAME ARGS...: json (without the wall time, and without the values
# check's float errors, whose last bits may differ between compilers: the
# harness checks timing; determinism of values is /cli/determinism-*) into
# NAME.json; ARGS may name -t/-r files inside $out
# Every output's provenance (the git version and the command line that
# made it) is set to "V" and "C": the harness checks what was simulated,
# not which commit or which file names.
unprov='s/"version": *"[^"]*"/"version":"V"/g; s/"command": *"\([^"\\]\|\\.\)*"/"command":"C"/g'
run() {
    name=$1
    shift
    (cd "$out" && "$bin" "$@" --format json) |
        sed -e 's/"wall_s":[-0-9.e+]*/"wall_s":0/g' \
            -e 's/"\(max_abs_err\|max_abs_ref\|precision_err\)":[-0-9.e+]*/"\1":0/g' \
            -e "$unprov" > "$out/$name.json"
    for a in "$@"; do
        case $a in
            *.trace | *.rec) if [ -f "$out/$a" ]; then sed -i -e "$unprov" "$out/$a"; fi ;;
        esac
    done
}

run a1 run -p 32 -d 8 -t a1.trace -r a1.rec
run a2 run -p 256 -d 0 --sync driver -P hetero-layer --functional off -t a2.trace
run a3 run -p 1024 -d 64 --functional off -t a3.trace -r a3.rec
run a4 run -p 256 -d 8 --batch 4 -P gpu-only -r a4.rec
run a5 run -p 256 -d 8 --render 60 --llm-priority low --functional off -t a5.trace
run a6 run -p 32 -d 64 --sync driver -P npu-only --functional off -t a6.trace
run a7 run -p 1024 -d 8 -P chunked --sync driver --functional off -t a7.trace
run a8 run -p 256 -d 8 -P cpu-only --functional off
run a9 run -p 256 -d 8 -P online-prepare --sync driver --functional off -r a9.rec
run a10 run -p 32 -d 8 -P npu-pipe --batch 4 --sync driver --functional off -t a10.trace
run a11 run -m tiny -p 32 -d 8 --functional full -t a11.trace -r a11.rec
run a12 run -p 256 -d 64 --batch 4 --render 60 --functional off -t a12.trace
run a13 run -m qwen1.5-1.8b -p 512 -d 8 -P mllm-npu --functional off -t a13.trace
run a14 run -p 128 -d 16 -P npu-tts --batch 8 --functional off -t a14.trace
# the same requests streamed (no values check: phases planned as the run
# goes and forgotten once ended; a run with a trace or a recording and no
# check, as a3, is streamed too)
run s3 run -p 1024 -d 64 --functional off
run s5 run -p 256 -d 8 --render 60 --llm-priority low --functional off
run s6 run -p 32 -d 64 --sync driver -P npu-only --functional off
run s7 run -p 1024 -d 8 -P chunked --sync driver --functional off
run s10 run -p 32 -d 8 -P npu-pipe --batch 4 --sync driver --functional off
run s12 run -p 256 -d 64 --batch 4 --render 60 --functional off
run s13 run -m qwen1.5-1.8b -p 512 -d 8 -P mllm-npu --functional off
run s14 run -p 128 -d 16 -P npu-tts --batch 8 --functional off
# streamed and whole-plan runs of one request report the same bytes
for n in 3 5 6 7 10 12 13 14; do
    if ! cmp -s "$out/s$n.json" "$out/a$n.json"; then
        echo "byteid: streamed s$n.json differs from a$n.json (whole plan)" >&2
        exit 1
    fi
done
# a trace and a recording are written as the run goes: a3's run above was
# streamed with both, its replay runs the whole recorded plan; the same
# bytes (results and trace)
run r3s replay a3.rec -t r3s.trace
for f in json trace; do
    if ! cmp -s "$out/r3s.$f" "$out/a3.$f"; then
        echo "byteid: whole-plan replay r3s.$f differs from a3.$f (streamed)" >&2
        exit 1
    fi
done
run r1 replay a1.rec -t r1.trace
run r3 replay a3.rec --sync driver -t r3.trace
run r9 replay a9.rec --functional off
run r11 replay a11.rec
run c1 compare -p 32 -d 8 --functional off

# every trace as Perfetto reads it: strict nesting per track, flows bound
python3 "$here/tools/trace-check.py" "$out"/*.trace

if [ $update = 1 ]; then
    (cd "$out" && sha256sum *) > "$here/tests/data/byteid.sha256"
    echo "wrote $here/tests/data/byteid.sha256"
elif [ -n "$sums" ]; then
    (cd "$out" && sha256sum --quiet -c "$sums")
fi
