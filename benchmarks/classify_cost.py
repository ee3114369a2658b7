#!/usr/bin/env python3
"""What classify costs per output, by instruction count and by CPU time, for source trees side by side.

    python benchmarks/classify_cost.py                          # fe9db85 (before issue #24) and this tree
    python benchmarks/classify_cost.py --tree fe9db85 --tree main --tree .
    python benchmarks/classify_cost.py --split dev --rounds 9   # the development split only
    python benchmarks/classify_cost.py --no-instructions        # CPU time only (no valgrind)

Each ``--tree`` is a directory holding a ``threadfix`` package (a checkout's root) or a git revision,
whose package is unpacked from ``git archive`` into a temporary directory. Every tree classifies the same
texts: the corpus of the tree this script is in (tests/failures/corpus/corpus.jsonl), in three groups,
each text as stored (with its wire flag, as ``classify_score.py`` times it):

  healthy    every healthy text (the path a result takes: most outputs in a store)
  ordinary   of them, the results agents' tools return day to day (session files, real commands)
  errors     every error text
  store      with ``--store``: the tool outputs of a store ``generate.py`` wrote (``threads.jsonl``), as report
             reads them (``verdicts.failure_of``: the pre-check, then classify where it lets an output through;
             a tree without it classifies every output)

**Instructions** (``valgrind --tool=callgrind``, the instructions the interpreter executes, which load
on the machine does not move): a fresh process per tree and group classifies the group once to warm
(patterns compile on first use) and then ``--passes`` more times; the same run with the warm pass
alone is subtracted, so start-up, imports, reading the corpus and the warm pass cancel out, and what is left
is divided by the texts classified. ``PYTHONHASHSEED`` is fixed so that two runs of one tree execute
the same instructions.

**CPU time**: one long-lived process per tree; in each round every group is classified once by every
tree in turn, the trees' order rotated round by round. Printed: the best pass, in microseconds per
output, and the median of the per-round ratios to the first tree (a ratio taken within a round is
steadier on a loaded machine than two bests taken apart).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT / "tests" / "failures" / "corpus" / "corpus.jsonl"
GROUPS = ("healthy", "ordinary", "errors", "store")
#: Healthy texts as agents' tools return them day to day (classify_score.py's ORDINARY).
ORDINARY = ("claude-code tool_result", "codex function_call_output", "shell success")

# The child process: argv = tree, calls file (JSON: group -> [[text, flag], ...]), mode, then
# "count GROUP PASSES" (classify the group 1 + PASSES times and exit) or "serve" (read a group's name per
# line on stdin, classify it once, print its CPU and wall microseconds per output).
_CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import orjson
from threadfix.failures import classify

calls = orjson.loads(open(sys.argv[2], "rb").read())
try:  # as report asks: screened, then classified if the screen lets it through (cached by text)
    from threadfix import verdicts
except ImportError:  # a tree from before report's pre-check
    verdicts = None


def one_pass(group):
    if group is calls.get("store") and verdicts is not None:
        verdicts._cache.clear()  # each pass classifies as a first reading of the store does
        for content, flag in group:
            verdicts.failure_of(content)
        return
    for text, flag in group:
        classify(text, is_error=flag)


if sys.argv[3] == "count":
    group = calls[sys.argv[4]]
    for _ in range(1 + int(sys.argv[5])):
        one_pass(group)
else:
    for group in calls.values():
        one_pass(group)  # warm: patterns compile on first use
    print("ready", flush=True)
    for line in sys.stdin:
        group = calls[line.strip()]
        cpu, wall = time.process_time(), time.perf_counter()
        one_pass(group)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(cpu / len(group) * 1e6, wall / len(group) * 1e6, flush=True)
"""

_COLLECTED = re.compile(rb"Collected\s*:\s*(\d+)")


def store_outputs(path: Path, limit: int) -> list[list[Any]]:
    """The first ``limit`` tool outputs of a Responses JSONL store, each as (content, no flag)."""
    found: list[list[Any]] = []
    with path.open("rb") as lines:
        for line in lines:
            for item in orjson.loads(line).get("items", ()):
                if item.get("type") == "function_call_output":
                    found.append([item["output"], None])
                    if len(found) >= limit:
                        return found
    return found


def groups(split: str) -> dict[str, list[list[Any]]]:
    """The (text, flag) pairs of each group, from the corpus of this tree."""
    rows = [orjson.loads(line) for line in CORPUS.read_bytes().splitlines() if line.strip()]
    rows = [row for row in rows if split == "all" or row["split"] == split]
    healthy = [row for row in rows if row["kind"] == "success"]
    chosen = {
        "healthy": healthy,
        "ordinary": [row for row in healthy if row["origin"].startswith(ORDINARY)],
        "errors": [row for row in rows if row["kind"] != "success"],
    }
    return {name: [[row["text"], row["flag"]] for row in group] for name, group in chosen.items()}


def source_tree(tree: str, scratch: Path) -> Path:
    """A directory holding the ``threadfix`` package of ``tree``: the directory itself, or a revision's
    package unpacked from ``git archive``."""
    path = Path(tree)
    if (path / "threadfix").is_dir():
        return path.resolve()
    folder = scratch / re.sub(r"[^\w.-]", "_", tree)
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", tree, "threadfix"], capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"classify_cost: {tree!r} is neither a source tree nor a git revision: "
                         f"{archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def _environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiling every module on each start is no user's cost
    return env


def instructions(tree: Path, calls: Path, group: str, passes: int) -> int:
    """Instructions the interpreter executes classifying ``group`` a warm pass and then ``passes`` times."""
    # Both runs of a tree compile its modules alike (a run that wrote the bytecode the next one reads
    # would count the compiler).
    env = {**_environment(), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _CHILD,
         str(tree), str(calls), "count", group, str(passes)],
        capture_output=True, env=env, cwd=tree,
    )
    found = _COLLECTED.search(run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"classify_cost: callgrind failed on {tree}: {run.stderr.decode(errors='replace')[-2000:]}")
    return int(found.group(1))


def per_output_instructions(tree: Path, calls: Path, group: str, size: int, passes: int) -> float:
    """Instructions per output of ``passes`` passes over ``group``, once the warm pass and start-up are subtracted."""
    return (instructions(tree, calls, group, passes) - instructions(tree, calls, group, 0)) / (size * passes)


def cpu_rounds(trees: list[Path], calls: Path, names: list[str], rounds: int) -> dict[str, list[list[tuple[float, float]]]]:
    """(CPU, wall) microseconds per output of each round, by group, per tree (in the order of ``trees``)."""
    children = [
        subprocess.Popen([sys.executable, "-c", _CHILD, str(tree), str(calls), "serve"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=_environment(), cwd=tree)
        for tree in trees
    ]
    found: dict[str, list[list[tuple[float, float]]]] = {name: [[] for _ in trees] for name in names}
    try:
        for child in children:
            if child.stdout.readline().strip() != "ready":  # type: ignore[union-attr]
                raise SystemExit("classify_cost: a timing process failed to start")
        for round_ in range(rounds):
            order = [(round_ + offset) % len(trees) for offset in range(len(trees))]
            for name in names:
                for which in order:
                    child = children[which]
                    child.stdin.write(name + "\n")  # type: ignore[union-attr]
                    child.stdin.flush()  # type: ignore[union-attr]
                    cpu, wall = map(float, child.stdout.readline().split())  # type: ignore[union-attr]
                    found[name][which].append((cpu, wall))
    finally:
        for child in children:
            child.stdin.close()  # type: ignore[union-attr]
            child.wait()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append",
                        help="a source tree or a git revision (default: fe9db85, then this tree); the first is the base")
    parser.add_argument("--split", default="all", help="a corpus split, or all (default)")
    parser.add_argument("--passes", type=int, default=2, help="passes counted after the warm one (default 2)")
    parser.add_argument("--rounds", type=int, default=7, help="CPU-time rounds (default 7); 0 for none")
    parser.add_argument("--store", type=Path, help="a store's threads.jsonl (generate.py): its outputs as report reads them")
    parser.add_argument("--store-outputs", type=int, default=5000, help="outputs of --store read (default 5,000)")
    parser.add_argument("--groups", help="the groups measured, comma-separated (default: every group with texts)")
    parser.add_argument("--jobs", type=int, default=2, help="callgrind runs at a time (default 2)")
    parser.add_argument("--no-instructions", action="store_true", help="skip the callgrind counts")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    labels = args.tree or ["fe9db85", str(ROOT)]
    if not args.no_instructions and shutil.which("valgrind") is None:
        parser.error("valgrind is not installed: pass --no-instructions")
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    texts = groups(args.split)
    texts["store"] = store_outputs(args.store, args.store_outputs) if args.store else []
    if not texts["healthy"] and not texts["errors"]:
        parser.error(f"the corpus holds no texts of split {args.split!r}")
    names = [name for name in (args.groups.split(",") if args.groups else GROUPS) if texts.get(name)]
    results: dict[str, Any] = {"split": args.split, "trees": labels, "texts": {n: len(texts[n]) for n in names}}
    with tempfile.TemporaryDirectory(prefix="classify-cost-") as scratch:
        calls = Path(scratch) / "calls.json"
        calls.write_bytes(orjson.dumps(texts))
        trees = [source_tree(label, Path(scratch)) for label in labels]
        width = max(18, *(len(label) + 2 for label in labels))
        header = f"{'group':10}{'texts':>7}" + "".join(f"{label:>{width}}" for label in labels)
        if not args.no_instructions:
            with ThreadPoolExecutor(args.jobs) as pool:  # each run is a valgrind process
                futures = {name: [pool.submit(per_output_instructions, tree, calls, name, len(texts[name]), args.passes)
                                  for tree in trees] for name in names}
                counts = {name: [future.result() for future in futures[name]] for name in names}
            results["instructions_per_output"] = counts
            print(f"instructions per output (callgrind; ratio to {labels[0]})")
            print(header)
            for name in names:
                base = counts[name][0]
                print(f"{name:10}{len(texts[name]):>7}" + "".join(
                    f"{value / 1000:>{width - 8}.1f}k {value / base:5.2f}x" for value in counts[name]))
        if args.rounds:
            timed = cpu_rounds(trees, calls, names, args.rounds)
            results["cpu_us_per_output"] = {name: [[cpu for cpu, _ in runs] for runs in timed[name]] for name in names}
            results["wall_us_per_output"] = {name: [[wall for _, wall in runs] for runs in timed[name]] for name in names}
            for index, what in ((0, "CPU"), (1, "wall")):
                print(f"\n{what} us per output, best of {args.rounds} alternating rounds "
                      f"(median per-round ratio to {labels[0]}); load average {os.getloadavg()[0]:.1f}")
                print(header)
                for name in names:
                    runs = [[pair[index] for pair in tree_runs] for tree_runs in timed[name]]
                    cells = "".join(
                        f"{min(values):>{width - 7}.2f} {statistics.median(v / b for v, b in zip(values, runs[0])):5.2f}x"
                        for values in runs)
                    print(f"{name:10}{len(texts[name]):>7}" + cells)
    if args.json:
        args.json.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
