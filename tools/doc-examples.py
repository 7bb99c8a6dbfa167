#!/usr/bin/env python3
"""Test: the examples in README.md and docs/*.md are what this build prints.

Every fenced block holding a line `$ hetero-sim ...` is an example: its
commands run in order, in one scratch folder (so a later command may read
what an earlier one wrote), and each output line the block shows under a
command must appear in that command's output (stderr, then stdout), in the
order shown.  Lines may be left out of an example; a shown line must not
differ.  In a shown line `...` stands for any text, and a line that is
only `...` for any lines.  The build's version (`0.1.0+g<hash>[-dirty]`)
and a wall time (`in 0.07 s`) are not compared.  A command that fails must
show its error line (`hetero-sim: ...`) in the example.

A block that cannot run here (it needs a file the text only describes)
carries `<!-- example not run: WHY -->` on the line before its fence.

Usage: doc-examples.py BINARY SOURCE_ROOT [FILE.md ...]
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

VERSION = re.compile(r"\b\d+\.\d+\.\d+\+g[0-9a-f]+(-dirty)?")
WALL = re.compile(r"\bin \d+(\.\d+)? s\b")
SKIP = re.compile(r"<!--\s*example not run:\s*\S")


def normalise(line):
    return WALL.sub("in T s", VERSION.sub("VERSION", line.rstrip()))


def blocks(path):
    """Yield (line number, lines) of each fenced block that holds a command."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start = i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = lines[start + 1:j]
            skipped = start > 0 and SKIP.search(lines[start - 1])
            if not skipped and any(l.startswith("$ hetero-sim") for l in body):
                yield start + 2, body
            i = j + 1
        else:
            i += 1


def commands(first_line, body):
    """Split a block into (line number, command, shown output lines)."""
    out = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith("$ "):
            lineno = first_line + i
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(body):
                i += 1
                cmd = cmd[:-1] + " " + body[i].strip()
            out.append((lineno, cmd, []))
        elif out:
            out[-1][2].append(line)
        i += 1
    return out


def line_matches(shown, actual):
    parts = normalise(shown).split("...")
    actual = normalise(actual)
    if len(parts) == 1:
        return actual == parts[0]
    if not actual.startswith(parts[0]) or not actual.endswith(parts[-1]):
        return False
    pos = len(parts[0])
    for p in parts[1:-1]:
        k = actual.find(p, pos)
        if k < 0:
            return False
        pos = k + len(p)
    return pos <= len(actual) - len(parts[-1])


def check(shown, actual):
    """None if every shown line appears in order in actual, else the first one missing."""
    pos = 0
    for s in shown:
        if s.strip() in ("...", ""):
            continue
        while pos < len(actual) and not line_matches(s, actual[pos]):
            pos += 1
        if pos == len(actual):
            return s
        pos += 1
    return None


def main():
    binary, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    files = sys.argv[3:] or [os.path.join(root, "README.md")] + sorted(
        f for f in glob.glob(os.path.join(root, "docs", "*.md"))
        if os.path.basename(f) not in ("cli.md", "config.md"))
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(binary) + os.pathsep + env.get("PATH", "")
    failures = examples = 0
    for path in files:
        rel = os.path.relpath(path, root)
        for first, body in blocks(path):
            with tempfile.TemporaryDirectory() as work:
                # the examples name configs/... and models/... as from a clone
                for d in ("configs", "models"):
                    os.symlink(os.path.join(root, d), os.path.join(work, d))
                for lineno, cmd, shown in commands(first, body):
                    examples += 1
                    r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env,
                                       capture_output=True, text=True)
                    actual = (r.stderr + r.stdout).split("\n")
                    where = f"{rel}:{lineno}: $ {cmd}"
                    missing = check(shown, actual)
                    shows_error = any(s.startswith("hetero-sim: ")
                                      and not s.startswith("hetero-sim: note:")
                                      for s in shown)
                    if missing is not None:
                        failures += 1
                        print(f"not ok - {where}\n#   shown:  {missing.rstrip()}", flush=True)
                        for a in actual[:60]:
                            print(f"#   | {a}")
                    elif r.returncode != 0 and not shows_error:
                        failures += 1
                        print(f"not ok - {where}\n#   exit {r.returncode}: "
                              f"{r.stderr.strip().splitlines()[-1:]}", flush=True)
                    else:
                        print(f"ok - {where}", flush=True)
    print(f"1..{examples}")
    if examples == 0:
        print("# no examples found", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
