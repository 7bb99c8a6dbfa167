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


# a model's rope_scaling that is not an object (was ignored: run unscaled)
with open("model/rope-scaling-string.json", "w") as f:
    json.dump({"model_type": "llama", "hidden_size": 64, "intermediate_size": 176,
               "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 256,
               "rope_scaling": "llama3"}, f)


# model directories (config.json + model.safetensors, Llama names, F32):
# a config's options against its tensors (engine/model.c)
H, F, V = 8, 16, 16
CONFIG = {"model_type": "llama", "hidden_size": H, "intermediate_size": F,
          "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
          "vocab_size": V, "max_position_embeddings": 64, "tie_word_embeddings": False}


def values(n, seed, scale=0.3):
    out, x = [], seed * 2654435761 % 2**32
    for _ in range(n):
        x = (1103515245 * x + 12345) % 2**31
        out.append(scale * (x / 2**30 - 1))
    return out


def model_dir(name, edit=None, config=CONFIG):
    t = {"model.embed_tokens.weight": ([V, H], values(V * H, 1, 1.0)),
         "model.norm.weight": ([H], [1.0] * H),
         "lm_head.weight": ([V, H], values(V * H, 2))}
    for l in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % l
        for i, (w, shape) in enumerate((("self_attn.q_proj", [H, H]),
                                        ("self_attn.k_proj", [H, H]),
                                        ("self_attn.v_proj", [H, H]),
                                        ("self_attn.o_proj", [H, H]),
                                        ("mlp.gate_proj", [F, H]), ("mlp.up_proj", [F, H]),
                                        ("mlp.down_proj", [H, F]))):
            t[p + w + ".weight"] = (shape, values(shape[0] * shape[1], 10 * l + i + 3))
        t[p + "input_layernorm.weight"] = ([H], [1.0] * H)
        t[p + "post_attention_layernorm.weight"] = ([H], [1.0] * H)
    if edit:
        edit(t)
    import os
    os.makedirs("model-dir/" + name, exist_ok=True)
    with open("model-dir/%s/config.json" % name, "w") as f:
        json.dump(config, f)
    header, data = {}, b""
    for k in sorted(t):
        shape, v = t[k]
        header[k] = {"dtype": "F32", "shape": shape,
                     "data_offsets": [len(data), len(data) + 4 * len(v)]}
        data += f32(*v)
    h = json.dumps(header).encode()
    with open("model-dir/%s/model.safetensors" % name, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


model_dir("valid")
# untied, and no head of its own (was: the embedding used as the head)
model_dir("untied-no-head", lambda t: t.pop("lm_head.weight"))
# tensors the config does not declare (were left out silently)
model_dir("layer-past-config", lambda t: t.update({"model.layers.1.mlp.down_proj.weight":
                                                    ([H, F], values(H * F, 99))}))
model_dir("bias-undeclared", lambda t: t.update({"model.layers.0.self_attn.q_proj.bias":
                                                  ([H], values(H, 98))}))
# finite weights whose products overflow FP32: the reference's values are
# not finite from the first FFN down projection on (was blamed on the policy)
model_dir("overflow", lambda t: t.update({"model.layers.0.mlp.down_proj.weight":
                                           ([H, F], [3e38] * (H * F))}))


# points: a metric against its workload (sim/cli/points.c); a row that
# divides by zero (sim/cli/cmd-validate.c)
POINT = {"id": "p", "paper": "test §1", "soc": "tiny", "model": "tiny",
         "metric": "prefill_tokens_per_s", "policy": "gpu-only", "sync": "fast",
         "workload": {"prompt": 64, "decode": 0, "batch": 1}, "published": 10,
         "tolerance_pct": 15}


def points(name, **change):
    p = json.loads(json.dumps(POINT))
    p.update(change)
    with open("points/" + name, "w") as f:
        json.dump({"points": [p]}, f)


# was: a NaN mean absolute percentage error (0 decode tokens / 0 s)
points("decode-metric-no-decode.json", metric="decode_speedup", published=1.2,
       baseline={"policy": "cpu-only", "sync": "fast"})
# was: a ratio of 1 by definition, "validated"
points("baseline-is-the-point.json", metric="prefill_speedup", published=1.2,
       baseline={"policy": "gpu-only", "sync": "fast"})
# read fine, and the run gives the metric no value (gpu-only: no CPU time
# in prefill): was a 0 compared with the published value, now refused
points("share-of-nothing.json", metric="prefill_npu_over_cpu_busy", published=2)


# a processor the recorded SoC does not have (was matched by kind, silently)
def rename_npu(d, tasks):
    d["processors"] = [dict(p, name="dsp") if p["name"] == "npu" else p
                       for p in d["processors"]]
    for t in tasks:
        for k in ("proc", "from", "to"):
            if t.get(k) == "npu":
                t[k] = "dsp"


record("processor-not-in-soc.json", rename_npu)
