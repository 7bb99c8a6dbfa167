#!/usr/bin/env python3
"""Print 'N passed, N failed' from meson's testlog.json files.

Counts TAP subtests (the assertions a reader cares about) when a test
reported them, else the test itself.  Usage: count-tests.py [--results
FILE] [LOG...]; with no LOG, every build*/meson-logs/testlog.json (gcc,
ASan, clang builds).  --results FILE adds lines "ok NAME" / "not ok NAME"
(the fuzz targets' short runs in CI).
"""
import glob
import json
import re
import sys

passed = failed = skipped = 0
args = sys.argv[1:]
if args[:1] == ["--results"]:
    for line in open(args[1], encoding="utf-8").read().splitlines():
        if line.startswith("not ok"):
            failed += 1
        elif line.startswith("ok"):
            passed += 1
    args = args[2:]
logs = args or sorted(glob.glob("build*/meson-logs/testlog.json"))
if not logs:
    print("count-tests: no meson-logs/testlog.json found", file=sys.stderr)
    sys.exit(1)
for path in logs:
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        print(f"count-tests: {e}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result", "")
        out = t.get("stdout", "") or ""
        oks = len(re.findall(r"^ok \d+", out, re.M))
        oks_skip = len(re.findall(r"^ok \d+.*# SKIP", out, re.M))
        nots = len(re.findall(r"^not ok \d+", out, re.M))
        if result in ("OK", "EXPECTEDFAIL"):
            if oks:
                passed += oks - oks_skip
                skipped += oks_skip
            else:
                passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            # a crash or timeout may leave no 'not ok' line: count the test
            passed += oks - oks_skip
            failed += max(nots, 1)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
