#!/usr/bin/env python3
"""Re-indent SoC config files, keeping each {"value", "source"} pair on one line.

Usage: tools/fmt-config.py configs/*.json
"""
import json
import sys


def fmt(v, ind=0):
    pad = "  " * ind
    if isinstance(v, dict):
        if set(v) <= {"value", "source"} and "value" in v:
            return json.dumps(v, ensure_ascii=False)
        items = [f'{pad}  {json.dumps(k)}: {fmt(x, ind + 1)}' for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        items = [pad + "  " + fmt(x, ind + 1) for x in v]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(v, ensure_ascii=False)


for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    with open(path, "w", encoding="utf-8") as f:
        f.write(fmt(data) + "\n")
