"""Checks shared by the gemini, bedrock and ai-sdk dialect tests: case files, repair invariants, the CLI run.

The invariants are the ones every repair promises: the provider's rules (the dialect's ``check``) find
nothing, every call has exactly one output, every original part is still there, equal and the same object
(an output possibly kept as text naming its call), the input is never mutated, and a second run changes
nothing.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from tests.core.test_cases import test_case as run_core_case
from threadfix import dialects
from threadfix.dialects.base import Dialect, text_of
from threadfix.failures.classifier import classify
from threadfix.model import Action, RepairPlan
from threadfix.repair import repair_items
from threadfix.stores import StoreOptions, open_stores

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).parent / "cases"


def cases(dialect: str) -> list[Path]:
    return sorted((CASES / dialect).glob("*.json"))


def run_case(path: Path) -> None:
    """The core case runner (input, edits, skips, expected), plus the provider's words for the input."""
    run_core_case(path)
    case = json.loads(path.read_text())
    dialect = dialects.get(path.parent.name)
    assert [v.message for v in dialect.check(case["input"])] == case["violations"]


def _key(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def assert_sound_repair(
    dialect: Dialect, items: list[Any], *, content_key: str, is_output: Callable[[Any], bool],
) -> tuple[RepairPlan, list[Any] | None]:
    """Repair ``items`` (a blocks-family thread) and assert every invariant; returns the plan and result."""
    pristine = copy.deepcopy(items)
    plan, repaired = repair_items(items, dialect)
    assert items == pristine, "repair must never mutate its input"
    if repaired is None:
        assert dialect.check(items) == [], plan
        return plan, None
    assert dialect.check(repaired) == [], (plan, repaired)

    index = dialect.index(repaired)
    assert sorted(str(o.call_id) for o in index.outputs) == sorted(str(c.call_id) for c in index.calls)

    def flat(thread: list[Any]) -> list[tuple[Any, Any]]:
        return [(m.get("role"), part) for m in thread for part in m[content_key]]

    # every part that is not an output is still there, in the same order, as the same object
    before = [(r, p) for r, p in flat(items) if not is_output(p)]
    after = [(r, p) for r, p in flat(repaired) if not is_output(p)]
    remaining = iter(after)
    assert all(any(r == r2 and p is p2 for r2, p2 in remaining) for r, p in before), "a part was lost or reordered"

    # every output is still an output somewhere, or kept as a text saying what it said
    texts = [json.dumps(p, ensure_ascii=False) for _, p in after]
    kept = {_key(p) for _, p in flat(repaired)}
    for output in dialect.index(items).outputs:
        part = items[output.at[0]][content_key][output.at[1]]
        said = json.dumps(text_of(output.content, 100_000), ensure_ascii=False)[1:-1]
        assert _key(part) in kept or any("[threadfix]" in t and said in t for t in texts), output

    assert_written_outputs_read_back(dialect, plan, repaired)
    assert_quick_healthy_is_sound(dialect, items)
    if type(dialect).quick_healthy is not Dialect.quick_healthy:  # a dialect with a fast path must use it
        assert dialect.quick_healthy(repaired) or plan.skips, "the fast path misses a freshly repaired thread"
    plan2, again = repair_items(repaired, dialect)
    assert again is None and not plan2.edits, plan2
    return plan, repaired


def assert_written_outputs_read_back(dialect: Dialect, plan: RepairPlan, repaired: list[Any]) -> None:
    """The outputs repair wrote are read back as threadfix's, classified as the kinds they were written
    for: what lint and report count in a repaired thread. (Compared as a multiset: a Gemini call without
    id is keyed by its place, which an inserted content shifts.)"""
    written = sorted(e.kind.value for e in plan.edits if e.action is Action.INSERT_OUTPUT)
    read = sorted(classify(o.content, is_error=o.is_error, status=o.status).kind.value
                  for o in dialect.index(repaired).outputs if o.by_threadfix)
    assert read == written


def answered_in_place(dialect: Dialect, items: list[Any]) -> tuple[RepairPlan, list[Any] | None, list[Any]]:
    """Repair a thread of a format whose calls carry their own outputs: it reads as ``dialect``, its input is
    left as it was, every edit answers a call where it stands, and the provider accepts the result.
    (plan, repaired or None, the thread as repair leaves it)."""
    pristine = copy.deepcopy(items)
    assert dialects.sniff(items) is dialect
    plan, repaired = repair_items(items, dialect)
    assert items == pristine, "repair must never mutate its input"
    assert all(e.action is Action.INSERT_OUTPUT for e in plan.edits)
    result = repaired if repaired is not None else items
    assert dialect.check(result) == []
    return plan, repaired, result


def threadfix_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "XDG_STATE_HOME": str(cwd / ".state")}
    return subprocess.run([sys.executable, "-m", "threadfix", *args], capture_output=True, cwd=cwd, env=environment,
                          timeout=60, check=False)


def repair_sample_with_cli(sample: Path, tmp_path: Path, dialect: Dialect) -> list[list[Any]]:
    """``threadfix repair --min-age 0 -o OUT sample``; every thread of OUT, each checked to read as
    ``dialect`` and to break none of its provider's rules."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / sample.name
    result = threadfix_cli("repair", "--min-age", "0", "-o", str(out), str(sample), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode().startswith("threadfix: repaired "), result.stderr
    assert all(line.startswith(str(sample)) for line in result.stdout.decode().splitlines()), result.stdout
    threads = [thread.items for store in open_stores(str(out), StoreOptions()) for thread in store.threads()]
    assert threads
    for items in threads:
        assert dialects.sniff(items) is dialect
        assert dialect.check(items) == []
    return threads


def same_reading_as_chat(dialect: Dialect, items: list[Any], chat_items: list[Any]) -> None:
    """The thread reads like its OpenAI Chat twin: same calls, same number of outputs, the same repairs
    (where a misplaced output lands differs by rendering, so moves are left out): the counts lint and
    report give come from exactly these."""
    chat = dialects.get("openai-chat")
    mine, twin = dialect.index(items), chat.index(chat_items)
    assert sorted(c.call_id for c in mine.calls) == sorted(c.call_id for c in twin.calls)
    assert len(mine.outputs) == len(twin.outputs)

    def edits(d: Dialect, thread: list[Any]) -> list[tuple[str, Any]]:
        plan, _ = repair_items(thread, d)
        return sorted((e.action.value, e.call_id) for e in plan.edits if e.action.value != "move_output")

    assert edits(dialect, items) == edits(chat, chat_items)


def hostile_threads(keys: Sequence[str]) -> st.SearchStrategy[list[Any]]:
    """Lists of JSON values built from a format's own keys, with any JSON in any place."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([*keys, "", "x"]))
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(keys), inner, max_size=5)), max_leaves=25)
    return st.lists(values, max_size=6)


def assert_never_crashes(dialect: Dialect, items: list[Any]) -> None:
    """Reading, checking and repairing whatever a file holds never raises (a crash would stop a batch)."""
    dialect.sniff(items)
    dialect.index(items)
    dialect.check(items)
    assert_quick_healthy_is_sound(dialect, items)
    _, repaired = repair_items(items, dialect)
    if repaired is not None:
        dialect.index(repaired)


def assert_quick_healthy_is_sound(dialect: Dialect, items: list[Any]) -> None:
    """The fast path may only call a thread healthy when the planner finds nothing to do or report."""
    if dialect.quick_healthy(items):
        plan, repaired = repair_items(items, dialect)
        assert repaired is None and not plan.edits and not plan.skips, plan
