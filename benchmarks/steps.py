#!/usr/bin/env python3
"""CPU seconds of lint's steps in one process, for two source trees side by side.

Whole processes on a shared 2-core machine move by more than the gaps between two versions of lint,
so this measures inside one process what run.py measures around it, for each tree in turn (a fresh
process per tree and round, the trees' order reversed every other round), and prints each step's
best and the median of the per-round ratios:

  floor    floor (i)'s loop (floors.jsonl_orjson): read lines, orjson.loads, collect ids
  read     lint's read alone: every thread read, its dialect sniffed and its index built (`scan`)
  lint     LintRun over the store, file to findings, every rule (what `lint --jobs 1` does)
  rules    the rules alone, over threads read and indexed beforehand

  python benchmarks/steps.py DATA_DIR --tree BEFORE_SRC --tree AFTER_SRC --rounds 6

Each tree is put first on PYTHONPATH (a checkout's root, or an unpacked `git archive`); the
interpreter is this one, so both trees see the same dependencies.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = ("floor", "read", "lint", "rules")

_CHILD = r"""
import gc, json, sys, time
sys.path.insert(0, sys.argv[2])
from floors import jsonl_orjson
from threadfix.batch import scan
from threadfix.lint import LintOptions, LintRun, lint_thread
from threadfix.rules import select_rules
from threadfix.stores import StoreOptions

data, repeat = sys.argv[1], int(sys.argv[3])
store = f"{data}/threads.jsonl"


def timed(step):
    gc.collect()
    start = time.process_time()
    step()
    return time.process_time() - start


def lint():
    for _ in LintRun([store], LintOptions(), jobs=1).results():
        pass


try:  # as lint reads (a tree from before lint's typed read has no such argument)
    read = lambda: scan([store], StoreOptions(), indexed=True)
    scanned = list(read())
except TypeError:
    read = lambda: scan([store], StoreOptions())
    scanned = list(read())
rules, options = select_rules(("TF",)), LintOptions()


def only_read():
    for _ in read():
        pass


def only_rules():
    for thread in scanned:
        lint_thread(thread, rules, options, 0.0)


steps = {"floor": lambda: jsonl_orjson(data), "read": only_read, "lint": lint, "rules": only_rules}
for step in steps.values():
    step()  # warm: the page cache, the rules' compiled patterns
print(json.dumps({name: min(timed(step) for _ in range(repeat)) for name, step in steps.items()}))
"""


def measure(tree: str, data: str, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": tree}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiling every module on each start is no user's cost
    out = subprocess.run([sys.executable, "-c", _CHILD, data, str(HERE), str(repeat)], env=env, check=True,
                         capture_output=True, text=True, cwd=tree).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="a store written by generate.py")
    ap.add_argument("--tree", action="append", required=True, help="a source tree (twice: before, then after)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each step per process; the best is kept")
    args = ap.parse_args()
    if len(args.tree) != 2:
        ap.error("give --tree twice: before, then after")
    found: list[list[dict[str, float]]] = [[], []]
    for round_ in range(args.rounds):
        order = (0, 1) if round_ % 2 == 0 else (1, 0)
        for which in order:
            found[which].append(measure(args.tree[which], str(Path(args.data).resolve()), args.repeat))
        print(f"round {round_ + 1}: " + "  ".join(
            f"{step} {found[0][-1][step]:.3f}/{found[1][-1][step]:.3f}" for step in STEPS), file=sys.stderr)
    print(f"load average {os.getloadavg()[0]:.1f}; CPU seconds, best of {args.rounds} rounds (median ratio)")
    print("| step | before | after | after faster | after vs floor (i) |")
    print("|---|---|---|---|---|")
    for step in STEPS:
        before = [r[step] for r in found[0]]
        after = [r[step] for r in found[1]]
        ratio = statistics.median(b / a for b, a in zip(before, after))
        floor = statistics.median(r["floor"] / r[step] for r in found[1])
        print(f"| {step} | {min(before):.3f} s | {min(after):.3f} s | {ratio:.2f}× | {floor:.2f}× |")


if __name__ == "__main__":
    main()
