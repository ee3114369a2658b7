#!/usr/bin/env python3
"""Where report's classification of a store's outputs goes: each output by the path ``verdicts.failure_of`` takes
for it, and what each path costs, in one process.

    python benchmarks/verdict_paths.py DATA_DIR                 # a store generate.py wrote
    python benchmarks/verdict_paths.py DATA_DIR --rounds 9

The outputs are read as report reads them (``threadfix.batch.scan``, indexed: the typed read where it takes a
thread), and each is put on one path, in the order ``failure_of`` tries them:

  parts, read whole     a list that is not one text part read as its text (``lone_text`` says None): classified
  flagged               a wire flag or a status: cached by (text, flag, status), classified
  {: not JSON           a text opening with "{" that orjson refuses: read as text by the classifier
  {: plain object       an object no reader of error shapes looks at (``plain_result_object``): a result at once
  {: exited 0           a shell result that exited 0, read by its output's words (``exited_zero_output``)
  {: other object       any other object: classified from the parsed object
  text: screened out    a text the screen settles as a result (``screen`` says None)
  text: screen passes   a text the screen lets through: classified from where the screen left it
  text: read whole      a text the screen sends to classify whole (it may open as JSON, or is past the parse limit)
  other value           an object or any other value as content (other dialects): classified

A list read as its one text part is put on its text's path, marked "(one part)". Each path's outputs are then
answered by ``failure_of`` in store order, the caches emptied before each round (every path as a first reading
of the store), and the best round of CPU time is printed with the failures found; last, all outputs in store
order, as report answers them.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

import orjson

#: the paths, in the order failure_of tries them (the table's rows)
PATHS = ("parts, read whole", "flagged", "{: not JSON", "{: plain object", "{: exited 0", "{: other object",
         "text: screened out", "text: screen passes", "text: read whole", "other value")


def outputs(data: Path) -> list[tuple[Any, Any, Any]]:
    """(content, flag, status) of every output of the store's ``threads.jsonl``, as report reads them."""
    from threadfix.batch import scan
    from threadfix.stores import StoreOptions

    found = []
    for scanned in scan([str(data / "threads.jsonl")], StoreOptions(), indexed=True):
        index = getattr(scanned, "index", None)
        if index is not None:
            found.extend((output.content, output.is_error, output.status) for output in index.outputs)
    return found


def path_of(content: Any, is_error: Any, status: Any) -> str:
    """The path failure_of takes for one output (see the module's docstring)."""
    from threadfix.failures import classifier

    one_part = ""
    if content.__class__ is list and is_error is None and status is None:
        text = classifier.lone_text(content)
        if text is None:
            return PATHS[0]
        content, one_part = text, " (one part)"
    if is_error is not None or status is not None:
        return PATHS[1]
    if content.__class__ is not str:
        return PATHS[9]
    if content[:1] == "{" and len(content) <= classifier.PARSE_LIMIT:
        try:
            parsed = orjson.loads(content)
        except orjson.JSONDecodeError:
            return PATHS[2] + one_part
        if classifier.plain_result_object(parsed):
            return PATHS[3] + one_part
        return (PATHS[4] if classifier.exited_zero_output(parsed) is not None else PATHS[5]) + one_part
    screened = classifier.screen(content)
    if screened is None:
        return PATHS[6] + one_part
    return (PATHS[8] if screened == ("", False) else PATHS[7]) + one_part


def best_round(group: list[tuple[Any, Any, Any]], rounds: int) -> tuple[float, int]:
    """The best CPU seconds of failure_of over ``group`` with empty caches, and the failures it found."""
    from threadfix import verdicts

    best, failures = float("inf"), 0
    for _ in range(rounds):
        verdicts._cache.clear()
        verdicts._results.clear()
        gc.collect()
        start = time.process_time()
        failures = sum(verdicts.failure_of(*output) is not None for output in group)
        best = min(best, time.process_time() - start)
    return best, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="a store written by generate.py")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per path; the best is kept (default 5)")
    args = parser.parse_args(argv)
    from threadfix import verdicts

    every = outputs(args.data)
    for output in every:
        verdicts.failure_of(*output)  # warm: the classifier's patterns compile on first use
    by_path: dict[str, list[tuple[Any, Any, Any]]] = {}
    for output in every:
        by_path.setdefault(path_of(*output), []).append(output)
    order = {path: at for at, path in enumerate(PATHS)}
    print("| path | outputs | failures | CPU ms | µs each |\n|---|---|---|---|---|")
    for path, group in sorted(by_path.items(), key=lambda entry: (order[entry[0].split(" (")[0]], entry[0])):
        seconds, failures = best_round(group, args.rounds)
        print(f"| {path} | {len(group):,} | {failures:,} | {seconds * 1e3:.1f} | {seconds / len(group) * 1e6:.2f} |")
    seconds, failures = best_round(every, args.rounds)
    print(f"| every output, in store order | {len(every):,} | {failures:,} | {seconds * 1e3:.1f} | "
          f"{seconds / max(len(every), 1) * 1e6:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
