"""Every verdict the classifier gives on real and generated outputs is pinned: a speed-up changes none.

``verdicts.jsonl`` holds, for each corpus text (as stored, with its flag, and once more with no flag),
each case of ``classification_cases.json`` and each output of a small generated store
(``benchmarks/generate.py``), every field of the ``Classification``: kind, is_error, evidence, code,
retry_after, tool_id and excerpt, all of which reach users through lint, report and repair. A change
that means to change a verdict regenerates the file and says why in its commit:

    python -m tests.failures.test_verdict_snapshot
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tests import benchmark_store
from threadfix.failures import classify

HERE = Path(__file__).parent
SNAPSHOT = HERE / "corpus" / "verdicts.jsonl"
CORPUS = HERE / "corpus" / "corpus.jsonl"
CASES = HERE / "classification_cases.json"
#: A small generated store: ordinary results (JSON, file contents, command output) and ~5 % failures.
GENERATED_SEED = 7
GENERATED_THREADS = 120


def _generated_outputs() -> Iterator[object]:
    generate = benchmark_store.generator()
    corpus = generate.build_corpus(GENERATED_SEED)
    for index in range(GENERATED_THREADS):
        thread = generate.ThreadMaker(GENERATED_SEED, index, corpus).make()
        for item in thread.items:
            if item["type"] == "function_call_output":
                yield item["output"]


def _inputs() -> Iterator[tuple[str, object, dict[str, Any]]]:
    """(label, content, classify keywords) for every pinned call, in a stable order."""
    for number, line in enumerate(CORPUS.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        row = orjson.loads(line)
        yield f"corpus:{number}", row["text"], {"is_error": row["flag"]}
        yield f"corpus:{number}:bare", row["text"], {}
    for number, case in enumerate(json.loads(CASES.read_text(encoding="utf-8")), 1):
        yield f"case:{number}", case["content"], {"is_error": case.get("is_error"), "status": case.get("status")}
    for number, content in enumerate(_generated_outputs(), 1):
        yield f"generated:{number}", content, {}


def _digest(content: object) -> str:
    return hashlib.sha256(orjson.dumps(content)).hexdigest()[:16]


def _verdicts() -> list[dict[str, Any]]:
    rows = []
    for label, content, keywords in _inputs():
        said = classify(content, **keywords)
        rows.append({
            "input": label,
            "digest": _digest(content),
            "kind": said.kind.value,
            "is_error": said.is_error,
            "evidence": said.evidence,
            "code": said.code,
            "retry_after": said.retry_after,
            "tool_id": said.tool_id,
            "excerpt": said.excerpt,
        })
    return rows


def test_every_verdict_matches_the_snapshot() -> None:
    pinned = [orjson.loads(line) for line in SNAPSHOT.read_bytes().splitlines() if line.strip()]
    now = _verdicts()
    assert [row["input"] for row in now] == [row["input"] for row in pinned], "inputs changed: regenerate"
    assert [row["digest"] for row in now] == [row["digest"] for row in pinned], "input texts changed: regenerate"
    changed = [(was, got) for was, got in zip(pinned, now) if was != got]
    assert not changed, f"{len(changed)} verdicts changed, first: {changed[0]}"


def test_the_snapshot_covers_every_kind_and_both_verdicts() -> None:
    pinned = [orjson.loads(line) for line in SNAPSHOT.read_bytes().splitlines() if line.strip()]
    kinds = {row["kind"] for row in pinned}
    assert len(kinds) >= 20 and "success" in kinds
    generated = [row for row in pinned if row["input"].startswith("generated:")]
    assert len(generated) >= 500 and any(row["is_error"] for row in generated)
    assert sum(not row["is_error"] for row in generated) > 0.8 * len(generated)


if __name__ == "__main__":
    SNAPSHOT.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in _verdicts()))
    print(f"wrote {SNAPSHOT.relative_to(HERE.parent.parent)}")
