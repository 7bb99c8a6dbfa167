#!/usr/bin/env python3
"""trace-check.py TRACE... - read Perfetto / Chrome JSON traces as Perfetto
does (ts and dur in microseconds, each rounded to whole nanoseconds) and
check that on every track (pid, tid) any two slices are disjoint or one
nests inside the other, and that every flow end-point lies inside a slice
of its track, strictly inside unless that slice is shorter than 2 ns (so
it binds to that slice, not to one ending or starting at the same
instant), and that every flow id has exactly one start and one end (the
file need not be sorted: Perfetto sorts on import).  Exit 1 with one line per problem."""
import bisect
import json
import sys
from collections import defaultdict


def ns(us):
    return round(float(us) * 1000)


def check(path):
    bad = []
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    tracks = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            a = ns(e["ts"])
            tracks[(e["pid"], e.get("tid", 0))].append((a, a + ns(e["dur"]), e["name"]))
    for key, slices in tracks.items():
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for a, b, name in slices:
            while stack and stack[-1][1] <= a and not (stack[-1][0] == a == stack[-1][1]):
                stack.pop()
            if stack and b > stack[-1][1]:
                bad.append("%s: track %s: %s [%d, %d) overlaps %s [%d, %d) partly"
                           % (path, key, name, a, b, stack[-1][2], stack[-1][0], stack[-1][1]))
                if len(bad) > 10:
                    return bad
            stack.append((a, b, name))
        tracks[key] = slices
    ends = defaultdict(lambda: [0, 0])
    for e in events:
        if e.get("ph") in ("s", "f"):
            ends[e.get("id")][e["ph"] == "f"] += 1
    for fid, (n_s, n_f) in ends.items():
        if n_s != 1 or n_f != 1:
            bad.append("%s: flow %s has %d starts and %d ends (want 1 and 1)"
                       % (path, fid, n_s, n_f))
            if len(bad) > 10:
                return bad
    starts_of = {k: [s[0] for s in v] for k, v in tracks.items()}
    for e in events:
        if e.get("ph") not in ("s", "f"):
            continue
        t = ns(e["ts"])
        ok = False
        slices = tracks.get((e["pid"], e.get("tid", 0)), [])
        starts = starts_of.get((e["pid"], e.get("tid", 0)), [])
        # the slices starting at or before t, latest first (a few: an
        # enclosing parent is at most a nesting depth back)
        i = bisect.bisect_right(starts, t)
        for a, b, _ in reversed(slices[max(0, i - 64):i]):
            if a < t < b or (b - a < 2 and a <= t <= b):
                ok = True
                break
        if not ok:
            bad.append("%s: flow %s at %d ns on track (%s, %s) lies inside no slice"
                       % (path, e.get("id"), t, e["pid"], e.get("tid", 0)))
            if len(bad) > 10:
                return bad
    return bad


if __name__ == "__main__":
    problems = []
    for p in sys.argv[1:]:
        problems += check(p)
    for line in problems:
        print(line)
    sys.exit(1 if problems else 0)
