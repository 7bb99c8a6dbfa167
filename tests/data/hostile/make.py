#!/usr/bin/env python3
"""Write the hand-made hostile inputs of this folder (the others are fuzz
finds, kept as found).  tests/test-hostile.c holds the message each must
give.  Usage: python3 make.py (in this folder)."""
import json
import struct


def st(name, header, data=b""):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    with open("safetensors/" + name, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


st("header-array.safetensors", [1, 2, 3])
st("nan-weight.safetensors",
   {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}},
   f32(1.0, 2.0, float("nan"), 4.0))
st("inf-f16-weight.safetensors",
   {"w": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]}},
   struct.pack("<3H", 0x3c00, 0x7c00, 0x0000))
st("name-newline.safetensors",
   {"w\nhetero-sim: forged": {"dtype": "F32", "shape": "no", "data_offsets": [0, 4]}},
   f32(1.0))
# a raw 0xff byte (invalid UTF-8) in a tensor name and in its dtype
st("name-invalid-utf8.safetensors",
   b'{"w\xff\x1b[2J": {"dtype": "I\xff", "shape": [1], "data_offsets": [0, 4]}}', f32(1.0))
st("shape-negative.safetensors",
   {"w": {"dtype": "F32", "shape": [-1, 4], "data_offsets": [0, 16]}}, f32(1, 2, 3, 4))
st("shape-overflow.safetensors",
   {"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 0]}})
st("offsets-fraction.safetensors",
   {"w": {"dtype": "F32", "shape": [1], "data_offsets": [0.5, 4]}}, f32(1))
st("tensor-not-object.safetensors", {"w": 7})


# a recording's policy options, read by key through their table
base = json.load(open("../replay/base.json"))
base["workload"]["options"]["row_allign"] = 256
with open("record/options-typo.json", "w") as f:
    json.dump(base, f)

# the workload's sync by name through its enum's table (raw bytes escaped)
base = json.load(open("../replay/base.json"))
base["workload"]["sync"] = "fast\u0007\u2028"
with open("record/workload-sync-control.json", "w") as f:
    json.dump(base, f)


# recordings checked against their model's graph and SoC (traces/record.c):
# each file changes one thing of ../replay/base.json
def record(name, fn):
    d = json.load(open("../replay/base.json"))
    fn(d, d["tasks"])
    with open("record/" + name, "w") as f:
        json.dump(d, f)


def first(tasks, **want):
    return next(t for t in tasks if all(t.get(k) == v for k, v in want.items()))


# was SIGFPE in the NPU's tiling (a k of 0)
record("matmul-k-zero.json", lambda d, t: first(t, op="matmul").update(k=0))
# was timed as a kernel of a billion tokens
record("matmul-m-huge.json", lambda d, t: first(t, op="matmul").update(m=1e9))
record("attention-flops.json", lambda d, t: first(t, op="attention").update(flops=5))
record("norm-weight-lhs.json", lambda d, t: first(t, op="rmsnorm").update(weight_lhs=True))
record("sync-to-itself.json",
       lambda d, t: first(t, kind="sync").update(to=first(t, kind="sync")["from"]))
record("processor-twice.json", lambda d, t: d["processors"].append({"name": "gpu", "kind": "gpu"}))
# a batch the tasks were not planned for: the decode graph's rows uncovered
record("batch-mismatch.json", lambda d, t: d["workload"].update(batch=2))
# the recording's own settings against its model (were blamed on --functional
# and --prompt with a usage exit code)
record("functional-layers.json", lambda d, t: d["workload"].update(functional="layers=9"))
record("context-overflow.json", lambda d, t: d["workload"].update(prompt=2048))
# a version that is not 1, printed as written (was "got 1")
record("version-near-1.json", lambda d, t: d.update(hs_record_version=1.0000001))
