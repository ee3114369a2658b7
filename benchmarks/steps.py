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

With --instructions it counts instead the instructions whole processes execute (callgrind, so
the count does not move with the machine's load), one process per step and tree:

  floor     floor (i) as a process: start-up, orjson's import, the loop
  start-up  `lint` of a file of the store's first three threads
  read      `lint --select TF901` of the store: the read, and no rule that finds anything in it
  lint      `lint` of the store, every rule (run.py's lint_jsonl)

  python benchmarks/steps.py DATA_DIR --tree BEFORE_SRC --tree AFTER_SRC --instructions

Each tree is put first on PYTHONPATH (a checkout's root, or an unpacked `git archive`); the
interpreter is this one, so both trees see the same dependencies. Each counted process follows an
uncounted one that writes the tree's bytecode (``__pycache__``), as an installed package has it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
    out = subprocess.run([sys.executable, "-c", _CHILD, data, str(HERE), str(repeat)], env=tree_environment(tree),
                         check=True, capture_output=True, text=True, cwd=tree).stdout
    return json.loads(out.splitlines()[-1])


#: the steps --instructions counts, each a command line after the interpreter: {data} is the store's folder, {store}
#: its JSONL, {small} a file of its first three threads, {floors} this folder
INSTRUCTION_STEPS = {
    "floor": ("-c", "import sys; sys.path.insert(0, {floors!r}); import floors; floors.jsonl_orjson({data!r})"),
    "start-up": ("-m", "threadfix", "--jobs", "1", "lint", "--format", "json", "--exit-zero", "{small}"),
    "read": ("-m", "threadfix", "--jobs", "1", "lint", "--format", "json", "--exit-zero", "--select", "TF901",
             "{store}"),
    "lint": ("-m", "threadfix", "--jobs", "1", "lint", "--format", "json", "--exit-zero", "{store}"),
}
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def step_commands(data: str, small: str) -> dict[str, list[str]]:
    """Each step's whole command line, for the store in ``data`` and the three-thread file ``small``."""
    places = {"data": data, "store": str(Path(data) / "threads.jsonl"), "small": small, "floors": str(HERE)}
    return {step: [sys.executable, *(arg.format(**places) for arg in args)] for step, args in INSTRUCTION_STEPS.items()}


def write_small(data: str, small: Path) -> None:
    """The store's first three threads, as a file of their own (what a small run reads)."""
    with open(Path(data) / "threads.jsonl", "rb") as store:
        small.write_bytes(b"".join(store.readline() for _ in range(3)))


def tree_environment(tree: str) -> dict[str, str]:
    """The environment a step runs in: ``tree`` first on the path, bytecode written as an install has it."""
    env = {**os.environ, "PYTHONPATH": tree}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiling every module on each start is no user's cost
    return env


def count_instructions(tree: str, command: list[str]) -> int:
    """Instructions one process of ``command`` executes with ``tree`` first on the path, after an uncounted run."""
    env = tree_environment(tree)
    subprocess.run(command, env=env, cwd=tree, check=True, capture_output=True)  # writes the bytecode
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command], env=env,
                         cwd=tree, capture_output=True, text=True)
    found = _COLLECTED.search(run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"steps: callgrind failed on {tree}: {run.stderr[-2000:]}")
    return int(found.group(1))


def instructions(trees: list[str], data: str) -> None:
    """Print the instructions of each step for both trees, and each tree's lint against floor (i)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="threadfix-steps-") as folder:
        small = Path(folder) / "small.jsonl"
        write_small(data, small)
        commands = step_commands(data, str(small))
        found = {step: [count_instructions(tree, command) for tree in trees] for step, command in commands.items()}
    print("instructions (callgrind, whole processes), millions")
    print("| step | before | after | after / before |")
    print("|---|---|---|---|")
    for step, (before, after) in found.items():
        print(f"| {step} | {before / 1e6:,.0f} | {after / 1e6:,.0f} | {after / before:.3f} |")
    floor, lint = found["floor"], found["lint"]
    print(f"lint vs floor (i), by instructions: before {floor[0] / lint[0]:.3f}×, after {floor[1] / lint[1]:.3f}×")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="a store written by generate.py")
    ap.add_argument("--tree", action="append", required=True, help="a source tree (twice: before, then after)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each step per process; the best is kept")
    ap.add_argument("--instructions", action="store_true",
                    help="count whole processes' instructions under callgrind instead of timing steps")
    args = ap.parse_args()
    if len(args.tree) != 2:
        ap.error("give --tree twice: before, then after")
    if args.instructions:
        instructions([str(Path(tree).resolve()) for tree in args.tree], str(Path(args.data).resolve()))
        return
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
