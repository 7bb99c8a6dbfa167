#!/usr/bin/env python3
"""Regenerate the broken recordings from base.json (a valid recording of
`hetero-sim run --soc tiny --model tiny --prompt 8 --decode 1
--policy hetero-layer --functional off --record base.json`).

Each broken file changes one thing; tests/test-traces-record.c holds the
message each must produce.  Usage: python3 make.py (in this folder).
"""
import copy
import json

base = json.load(open("base.json"))
tasks = base["tasks"]


def first(pred):
    return next(i for i, t in enumerate(tasks) if pred(t))


kern = first(lambda t: t["kind"] == "kernel" and t["op"] == "matmul")
sync = first(lambda t: t["kind"] == "sync")
dec = first(lambda t: t["phase"] == "decode")
later = first(lambda t: kern in t["deps"])
embed = first(lambda t: t["kind"] == "kernel" and t["op"] == "embed")


def mutate(name, fn):
    d = copy.deepcopy(base)
    fn(d)
    with open(name + ".json", "w") as f:
        json.dump(d, f)


def raw(name, text):
    with open(name + ".json", "w") as f:
        f.write(text)


text = json.dumps(base)
raw("empty", "")
raw("truncated", text[:300])
raw("not-json", "hs_record_version = 1\n")
raw("array-root", "[1, 2, 3]\n")
mutate("version-2", lambda d: d.update(hs_record_version=2))
mutate("version-missing", lambda d: d.pop("hs_record_version"))
mutate("tasks-not-array", lambda d: d.update(tasks={}))
mutate("tasks-empty", lambda d: d.update(tasks=[]))
mutate("unknown-processor", lambda d: d["tasks"][kern].update(proc="dsp"))
mutate("dangling-dep", lambda d: d["tasks"][kern].update(deps=[999999]))
mutate("self-dep", lambda d: d["tasks"][kern].update(deps=[kern]))
mutate("cycle", lambda d: d["tasks"][kern]["deps"].append(later))
def overlap(d):
    dup = copy.deepcopy(d["tasks"][kern])
    dup["id"] = len(d["tasks"])
    d["tasks"].append(dup)          # a second task writing the same slice


mutate("overlap", overlap)
mutate("hole", lambda d: d["tasks"][kern].update(rows=[0, 32]))
mutate("negative-size", lambda d: d["tasks"][kern].update(tokens=[-4, 8]))
mutate("huge-number", lambda d: d["tasks"][kern].update(m=1e30))
mutate("wrong-type", lambda d: d["tasks"][kern].update(flops="many"))
mutate("unknown-kind", lambda d: d["tasks"][kern].update(kind="magic"))
mutate("op-mismatch", lambda d: d["tasks"][kern].update(op="attention"))
mutate("node-out-of-range", lambda d: d["tasks"][kern].update(node=99999))
mutate("step-out-of-range", lambda d: d["tasks"][dec].update(step=5))
mutate("bad-workload", lambda d: d["workload"].update(prompt=0))
mutate("bad-model-config", lambda d: d["model"]["config"].update(hidden_size="x"))
mutate("missing-deps", lambda d: d["tasks"][kern].pop("deps"))
mutate("pad-too-small", lambda d: d["tasks"][kern].update(pad=2))
mutate("id-mismatch", lambda d: d["tasks"][kern].update(id=kern + 100))
mutate("bad-sync-mechanism", lambda d: d["tasks"][sync].update(sync="telepathy"))
mutate("processors-empty", lambda d: d.update(processors=[]))
mutate("tokens-not-pair", lambda d: d["tasks"][kern].update(tokens=[0, 4, 8]))
mutate("functional-bad", lambda d: d["workload"].update(functional="sometimes"))
mutate("render-bad", lambda d: d["workload"].update(render={"fps": 60, "frame_ms": 8, "frame_mb": 48, "llm_priority": "urgent"}))
