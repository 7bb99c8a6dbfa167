#!/usr/bin/env python3
"""Regenerate the recordings of wrong plans from base.json (a valid
recording of `hetero-sim run --soc tiny --model tiny --prompt 64 --decode 1
--policy hetero-layer --functional full --record base.json`).

dropped-sync.json: every sync task removed, its consumers depending on its
  producer directly (the edit a user makes by hand): replay must refuse to
  call it right (exit 3, "no sync between them").
unordered.json: every sync task removed with its edges: consumers start
  before their producers end and compute from stale buffers (exit 3, wrong
  values).
tests/cli/test-cli.c holds what each must print.  Usage: python3 make.py
"""
import copy
import json

base = json.load(open("base.json"))


def drop_syncs(d, rewire):
    tasks = d["tasks"]
    syncs = {i for i, t in enumerate(tasks) if t["kind"] == "sync"}
    keep = [i for i in range(len(tasks)) if i not in syncs]
    new_id = {old: new for new, old in enumerate(keep)}

    def deps_of(i):
        out = []
        for q in tasks[i]["deps"]:
            if q in syncs:
                if rewire:
                    out += deps_of(q)
            else:
                out.append(q)
        return out

    out = []
    for i in keep:
        t = copy.deepcopy(tasks[i])
        t["id"] = new_id[i]
        t["deps"] = sorted({new_id[q] for q in deps_of(i)})
        out.append(t)
    d["tasks"] = out


for name, rewire in (("dropped-sync", True), ("unordered", False)):
    d = copy.deepcopy(base)
    drop_syncs(d, rewire)
    with open(name + ".json", "w") as f:
        json.dump(d, f)
