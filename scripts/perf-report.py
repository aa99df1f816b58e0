#!/usr/bin/env python3
"""Markdown performance table from a `shapemc bench` results file (scripts/perf).

Usage: perf-report.py RESULTS.json REFERENCE.tsv [--write README.md]

Prints, per task, the expected verdict, our answer, our seconds and the published
reference time (REFERENCE.tsv: task, reference, seconds, source), then per folder the
number of tasks, correct answers and total seconds. With --write, the block between
`<!-- perf:begin -->` and `<!-- perf:end -->` in README.md is replaced by the table
(the markers are appended when missing).
"""
import json
import sys
from collections import OrderedDict

BEGIN = "<!-- perf:begin -->"
END = "<!-- perf:end -->"


def short(name):
    """`bench/gdsl/x` -> `gdsl/x` (the folder below the shared root and the task)."""
    parts = name.split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 else name


def read_reference(path):
    ref = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 3:
                ref[cols[0]] = (cols[1], float(cols[2]))
    return ref


def table(results, ref):
    run = results["run"]
    rows = [t for t in results["tasks"] if t.get("result") != "skipped"]
    out = []
    out.append(
        f"Run {run['started']}, shapemc {run['version']}, `bench --jobs {run['jobs']} --timeout "
        f"{run['timeout_s']:g}` (`--malloc-never-fails`; with one job each `verify` uses all "
        "cores).\n"
    )
    out.append("| task | expected | got | seconds | reference | reference seconds | ratio |")
    out.append("|---|---|---|---:|---|---:|---:|")
    folders = OrderedDict()
    for t in rows:
        name = short(t["task"])
        folder = name.split("/")[0]
        f = folders.setdefault(folder, [0, 0, 0.0])
        f[0] += 1
        f[1] += t["result"] == "correct"
        f[2] += t["seconds"]
        r = ref.get(name)
        expected = {True: "true", False: "false"}.get(t.get("expected"), "")
        ours = f"{t['seconds']:.2f}"
        if r:
            ratio = "-"
            if t["result"] == "correct" and t["seconds"] > 0:
                # a task slower than the reference read "0x faster" before
                q = r[1] / t["seconds"]
                ratio = f"{q:.0f}x faster" if q >= 1 else f"{1 / q:.0f}x slower"
            out.append(f"| {name} | {expected} | {t['got']} | {ours} | {r[0]} | {r[1]:g} | {ratio} |")
        else:
            out.append(f"| {name} | {expected} | {t['got']} | {ours} | | | |")
    out.append("")
    out.append("| folder | tasks | correct | total seconds |")
    out.append("|---|---:|---:|---:|")
    for folder, (n, c, s) in folders.items():
        out.append(f"| {folder} | {n} | {c} | {s:.1f} |")
    return "\n".join(out) + "\n"


def write_block(readme, text):
    with open(readme, encoding="utf-8") as f:
        old = f.read()
    block = f"{BEGIN}\n{text}{END}"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        new = head + block + tail
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    with open(readme, "w", encoding="utf-8") as f:
        f.write(new)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        results = json.load(f)
    text = table(results, read_reference(argv[2]))
    print(text, end="")
    if len(argv) >= 5 and argv[3] == "--write":
        write_block(argv[4], text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
