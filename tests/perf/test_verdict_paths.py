"""benchmarks/verdict_paths.py: every output of a store on exactly one path, each path what its name says, and the
failures it counts those the manifest planted (the timings themselves are taken by running it, not here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import benchmark_store
from threadfix import verdicts
from threadfix.failures import classifier


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    data = tmp_path_factory.mktemp("store")
    manifest = benchmark_store.generator().generate(data, threads=60, seed=11, workers=1)
    return data, manifest


def test_every_output_takes_one_named_path_and_each_path_is_what_it_says(store: tuple[Path, dict]) -> None:
    data, manifest = store
    paths = benchmark_store.script("verdict_paths")
    outputs = paths.outputs(data)
    assert len(outputs) == manifest["counts"]["function_call_outputs"]
    taken = [paths.path_of(*output) for output in outputs]
    assert {path.removesuffix(" (one part)") for path in taken} <= set(paths.PATHS)
    seen = set(taken)
    assert {"{: plain object", "{: exited 0", "text: screened out", "text: screen passes"} <= seen
    failures = 0
    for (content, is_error, status), path in zip(outputs, taken):
        found = verdicts.failure_of(content, is_error, status)
        failures += found is not None
        text = classifier.lone_text(content) if path.endswith("(one part)") else content
        if path.startswith(("{: plain object", "{: exited 0", "text: screened out")):
            if path.startswith(("{: plain object", "text: screened out")):
                assert found is None, content  # a result without the classifier
        if path.startswith("{:"):
            assert text[:1] == "{", content
        if path.startswith("text: screened out"):
            assert classifier.screen(text) is None, content
        if path.startswith("text: screen passes"):
            assert classifier.screen(text) not in (None, ("", False)), content
        if path == "flagged":
            assert is_error is not None or status is not None
    assert failures == manifest["counts"]["error_outputs"]


def test_the_table_has_a_row_per_path_and_one_for_every_output(store: tuple[Path, dict], capsys) -> None:
    data, manifest = store
    assert benchmark_store.script("verdict_paths").main([str(data), "--rounds", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| path |")
    last = rows[-1].split(" | ")
    assert last[0] == "| every output, in store order"
    assert int(last[1].replace(",", "")) == manifest["counts"]["function_call_outputs"]
    assert int(last[2].replace(",", "")) == manifest["counts"]["error_outputs"]
    assert sum(int(row.split(" | ")[1].replace(",", "")) for row in rows[1:-1]) == int(last[1].replace(",", ""))


def test_values_the_benchmark_store_does_not_hold_take_their_own_paths() -> None:
    path_of = benchmark_store.script("verdict_paths").path_of
    assert path_of({"error": "boom"}, None, None) == "other value"
    assert path_of("ok", True, None) == path_of("ok", None, "failed") == "flagged"
    assert path_of([{"type": "text", "text": "ok"}, {"type": "text", "text": "done"}], None, None) == "parts, read whole"
    assert path_of([{"type": "text", "text": "Plan updated"}], None, None) == "text: screened out (one part)"
    assert path_of('{"results": []}', None, None) == "{: plain object"
    assert path_of('{"output": "ok", "metadata": {"exit_code": 0}}', None, None) == "{: exited 0"
    assert path_of('{"error": "rate limited"}', None, None) == "{: other object"
    assert path_of("{not json", None, None) == "{: not JSON"
    assert path_of("Error: rate limit exceeded", None, None) == "text: screen passes"
