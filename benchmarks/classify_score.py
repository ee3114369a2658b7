"""Score threadfix's failure classifier against the real-text corpus, beside a baseline revision's.

    python benchmarks/classify_score.py                  # the development split, baseline = main
    python benchmarks/classify_score.py --split heldout19 # the nineteenth held-out split (scored once; the latest)
    python benchmarks/classify_score.py --split heldout18 # the eighteenth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout17 # the seventeenth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout16 # the sixteenth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout15 # the fifteenth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout14 # the fourteenth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout13 # the thirteenth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout12 # the twelfth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout11 # the eleventh held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout10 # the tenth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout9 # the ninth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout8 # the eighth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout7 # the seventh held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout6 # the sixth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout5 # the fifth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout4 # the fourth held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout3 # the third held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout2 # the second held-out split (already seen: scored once)
    python benchmarks/classify_score.py --split heldout  # the first held-out split (already seen: scored once)
    python benchmarks/classify_score.py --json scores.json
    python benchmarks/classify_score.py --baseline 'REV^' --baseline BRANCH   # more than one baseline
    python benchmarks/classify_score.py --changes --baseline 'HEAD^'   # where a change moves verdicts, split by split

Each corpus line is a real text with its source and the kind the seed taxonomy gives it
(tests/failures/corpus/README.md). A text is classified as stored (with its wire flag, if its source had
one); every error text is classified once more with no flag at all, as a Chat or Responses store holds it.
Reported for the code here and for each baseline (``git show REV:threadfix/failures/classify.py``, the
module before it was renamed, or ``classifier.py``), measured in the same run, the classifiers taking
turns in each timing round: accuracy, per-kind
precision and recall, the worst confusions, the share of healthy texts read as errors, the share of
unflagged errors detected, and classify's cost per output on healthy and on error texts.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import orjson

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "failures" / "corpus" / "corpus.jsonl"
sys.path.insert(0, str(ROOT))


def load(split: str) -> list[dict[str, Any]]:
    rows = [orjson.loads(line) for line in CORPUS.read_bytes().splitlines() if line.strip()]
    return [row for row in rows if split == "all" or row["split"] == split]


def baseline(rev: str) -> Callable[..., Any] | None:
    """The ``classify`` of revision ``rev``, loaded from git beside the package here (None when unreadable)."""
    for path in ("threadfix/failures/classify.py", "threadfix/failures/classifier.py"):
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True)
        if shown.returncode == 0:
            break
    else:
        return None
    folder = Path(tempfile.mkdtemp(prefix="classify-baseline-"))
    source = folder / "baseline_classifier.py"
    source.write_bytes(shown.stdout)
    spec = importlib.util.spec_from_file_location("baseline_classifier", source)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.classify


#: Healthy texts that are tool results as a tool returns them (command output, file contents, API JSON, a
#: grep), as opposed to prose that speaks of failures (docstrings, documentation, issue titles...).
TOOL_RESULTS = ("shell", "grep", "claude-code", "codex", "command", "tool_result")


def tool_result(row: dict[str, Any]) -> bool:
    return row["origin"].startswith(TOOL_RESULTS)


#: Healthy texts as agents' tools return them day to day (session files, real commands), as opposed to the
#: corpus's healthy texts chosen because they look like errors.
ORDINARY = ("claude-code tool_result", "codex function_call_output", "shell success")


def cost(classify: Callable[..., Any], group: list[dict[str, Any]]) -> float:
    """CPU microseconds per output for one pass over ``group`` (process time: other load on the machine
    does not count)."""
    start = time.process_time()
    for row in group:
        classify(row["text"], is_error=row["flag"])
    return (time.process_time() - start) / max(len(group), 1) * 1e6


def timings(classifiers: dict[str, Callable[..., Any]], rows: list[dict[str, Any]], repeat: int) -> dict[str, dict[str, float]]:
    """The best of ``repeat`` rounds for each classifier and group, the classifiers taking turns in each round."""
    groups = {
        "us_per_healthy_output": [row for row in rows if row["kind"] == "success"],
        "us_per_ordinary_healthy_output": [
            row for row in rows if row["kind"] == "success" and row["origin"].startswith(ORDINARY)
        ],
        "us_per_error_output": [row for row in rows if row["kind"] != "success"],
    }
    best = {name: {key: float("inf") for key in groups} for name in classifiers}
    for _ in range(repeat):
        for key, group in groups.items():
            for name, classify in classifiers.items():
                best[name][key] = min(best[name][key], cost(classify, group))
    return best


def score(classify: Callable[..., Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    confusion: collections.Counter[tuple[str, str]] = collections.Counter()
    right = 0
    healthy = [row for row in rows if row["kind"] == "success"]
    errors = [row for row in rows if row["kind"] != "success"]
    healthy_as_error = 0
    for row in rows:
        got = classify(row["text"], is_error=row["flag"]).kind.value
        confusion[(row["kind"], got)] += 1
        right += got == row["kind"]
        if row["kind"] == "success" and got != "success":
            healthy_as_error += 1
    detected = sum(classify(row["text"]).is_error for row in errors)
    groups = {}
    for name, group in (("tool_results", [row for row in healthy if tool_result(row)]),
                        ("prose", [row for row in healthy if not tool_result(row)])):
        wrong = sum(classify(row["text"], is_error=row["flag"]).is_error for row in group)
        groups[name] = {"texts": len(group), "read_as_error": wrong}
    kinds = sorted({kind for pair in confusion for kind in pair})
    per_kind = {}
    for kind in kinds:
        true_pos = confusion[(kind, kind)]
        said = sum(count for (_, got), count in confusion.items() if got == kind)
        real = sum(count for (want, _), count in confusion.items() if want == kind)
        per_kind[kind] = {
            "precision": true_pos / said if said else None,
            "recall": true_pos / real if real else None,
            "support": real,
        }
    worst = [
        {"expected": want, "got": got, "count": count}
        for (want, got), count in confusion.most_common()
        if want != got
    ][:10]
    return {
        "texts": len(rows),
        "accuracy": right / len(rows),
        "healthy_read_as_error": healthy_as_error / max(len(healthy), 1),
        "unflagged_errors_detected": detected / max(len(errors), 1),
        "healthy_by_group": groups,
        "per_kind": per_kind,
        "worst_confusions": worst,
    }


SPLITS = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8",
          "heldout9", "heldout10", "heldout11", "heldout12", "heldout13", "heldout14",
          "heldout15", "heldout16", "heldout17", "heldout18", "heldout19")


def changes(before: Callable[..., Any], after: Callable[..., Any], rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Split by split, the verdicts (kind as stored, and error or not with no flag) that differ between two
    classifiers: made right, made wrong, or moved from one wrong kind to another; and of the healthy texts,
    how many are newly read as errors. A rule that moves verdicts on one split only, the one it was
    studied on, is fitted to it; one that mends misses on several splits reads something general."""
    table: dict[str, dict[str, int]] = {}
    for row in rows:
        was = before(row["text"], is_error=row["flag"]).kind.value
        now = after(row["text"], is_error=row["flag"]).kind.value
        counts = table.setdefault(row["split"], dict.fromkeys(("changed", "fixed", "broken", "wrong_to_wrong", "new_false_alarms", "false_alarms_gone"), 0))
        if was == now:
            continue
        counts["changed"] += 1
        if now == row["kind"]:
            counts["fixed"] += 1
        elif was == row["kind"]:
            counts["broken"] += 1
        else:
            counts["wrong_to_wrong"] += 1
        if row["kind"] == "success":
            counts["new_false_alarms" if now != "success" else "false_alarms_gone"] += 1
    return {split: table[split] for split in SPLITS if split in table}


def print_changes(before: Callable[..., Any], after: Callable[..., Any], rows: list[dict[str, Any]], name: str) -> None:
    table = changes(before, after, rows)
    print(f"verdicts changed against {name}, by split: changed / made right / made wrong / wrong to wrong /"
          " healthy newly read as errors / false alarms gone")
    for split, counts in table.items():
        print(f"  {split:10}" + "".join(f"{value:>6}" for value in counts.values()))
    totals = [sum(counts[key] for counts in table.values()) for key in next(iter(table.values()), {})]
    print(f"  {'all':10}" + "".join(f"{value:>6}" for value in totals))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="dev")
    parser.add_argument("--baseline", action="append",
                        help="git revision to compare with (default: main); give it again for more columns")
    parser.add_argument("--repeat", type=int, default=15, help="timing rounds; the best is kept")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--changes", action="store_true",
                        help="only print, split by split, the verdicts that differ from the (first) baseline's")
    args = parser.parse_args()
    rows = load("all" if args.changes else args.split)
    if not rows:
        print(f"classify_score: the corpus holds no texts of split {args.split!r}", file=sys.stderr)
        return 2
    from threadfix.failures import classify

    revisions = args.baseline or ["main"]
    classifiers: dict[str, Callable[..., Any]] = {}
    for rev in revisions:
        before = baseline(rev)
        if before is None:
            print(f"classify_score: no classifier at revision {rev!r}; left out", file=sys.stderr)
            continue
        # One baseline is "before", as it always was; several are named by their revisions.
        classifiers["before" if len(revisions) == 1 else rev] = before
    if args.changes:
        if not classifiers:
            return 2
        name, before = next(iter(classifiers.items()))
        print_changes(before, classify, rows, revisions[0])
        return 0
    classifiers["after"] = classify
    results = {name: score(function, rows) for name, function in classifiers.items()}
    for name, figures in timings(classifiers, rows, args.repeat).items():
        results[name].update(figures)
    columns = list(classifiers)
    width = max(12, *(len(name) + 2 for name in columns))
    seen = " (already seen: its misses are known, so it no longer measures the classifier unseen)" if args.split not in ("dev", SPLITS[-1], "all") else ""
    print(f"split {args.split}: {len(rows)} texts ({sum(r['kind'] == 'success' for r in rows)} healthy){seen}")
    print(f"{'':34}" + "".join(f"{name:>{width}}" for name in columns))
    for key, label, unit in (
        ("accuracy", "right", "%"),
        ("healthy_read_as_error", "healthy read as errors", "%"),
        ("unflagged_errors_detected", "unflagged errors detected", "%"),
        ("us_per_healthy_output", "classify per healthy output", "us"),
        ("us_per_ordinary_healthy_output", "  of them ordinary results", "us"),
        ("us_per_error_output", "classify per error output", "us"),
    ):
        cells = "".join(
            f"{results[name][key] * 100:{width - 1}.1f}%" if unit == "%" else f"{results[name][key]:{width - 2}.1f}us"
            for name in columns
        )
        print(f"{label:34}{cells}")
    after = results["after"]
    for name, label in (("tool_results", "real tool results"), ("prose", "prose look-alikes")):
        group = after["healthy_by_group"][name]
        share = group["read_as_error"] / max(group["texts"], 1) * 100
        print(f"  healthy {label} read as errors (after): {group['read_as_error']} of {group['texts']} ({share:.1f}%)")
    print("\nper kind (after): precision / recall / support")
    for kind, figures in after["per_kind"].items():
        precision = "-" if figures["precision"] is None else f"{figures['precision'] * 100:.0f}%"
        recall = "-" if figures["recall"] is None else f"{figures['recall'] * 100:.0f}%"
        print(f"  {kind:28}{precision:>6} {recall:>6} {figures['support']:>6}")
    print("\nworst confusions (after): expected -> got")
    for pair in after["worst_confusions"]:
        print(f"  {pair['expected']:>24} -> {pair['got']:<24}{pair['count']:>5}")
    if args.json:
        args.json.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
