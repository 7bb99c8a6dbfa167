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
