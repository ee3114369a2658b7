"""The per-dialect baselines of the benchmark runner: the generated stores, the stdlib json script, their checks.

The runner measures ``threadfix repair`` beside the script an engineer writes with the standard library's json
(benchmarks/stdlib_repair.py), on the same threads written in each dialect by benchmarks/generate.py. A ratio is
only worth printing when both sides repair what is there: the stores must hold the manifest's dangling calls as
threadfix reads them, and the runner's check must pass the script's output and threadfix's, and fail a store left
as it was.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import benchmark_store
from threadfix import dialects
from threadfix.model import Action
from threadfix.repair import plan_repair

generate = benchmark_store.generator()
run = benchmark_store.script("run")
stdlib = benchmark_store.script("stdlib_repair")
NAMES = generate.DIALECTS


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, dict]:
    data = tmp_path_factory.mktemp("dialect-store")
    manifest = generate.generate(data, threads=150, seed=11, workers=1)
    generate.write_dialects(data, NAMES, folder_files=60)
    assert manifest["dangling"], "the seed must plant dangling calls"
    return data, manifest


@pytest.mark.parametrize("name", NAMES)
def test_each_dialect_store_holds_the_manifests_dangling_calls_as_threadfix_reads_it(store, name: str) -> None:
    data, manifest = store
    found, files = set(), 0
    for path in (generate.dialect_jsonl(data, name), generate.dialect_folder(data, name)):
        for _, messages in run.dialect_threads(path):
            dialect = dialects.sniff(messages)
            assert dialect is not None and dialect.name == name
            plan = plan_repair(dialect.index(messages), dialect, messages)
            found |= {edit.call.call_id for edit in plan.edits if edit.action is Action.INSERT_OUTPUT}
            assert all(edit.action is Action.INSERT_OUTPUT for edit in plan.edits)
            files += path.is_dir()
    assert found == {d["call_id"] for d in manifest["dangling"]}
    assert files == 60


INTERRUPTED = [  # calls that never got their results, then the model spoke again: the shape most stuck threads end in
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
    {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"cmd": "ls"}'},
    {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
    {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": '{"cmd": "pwd"}'},
    {"type": "function_call", "call_id": "c3", "name": "read_file", "arguments": '{"path": "a.txt"}'},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "the run was cut"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "again"}]},
]


@pytest.mark.parametrize("name", NAMES)
def test_a_converted_thread_is_refused_for_its_dangling_calls_only_and_both_repairs_clear_it(name: str) -> None:
    messages = generate.to_dialect(name, [dict(item) for item in INTERRUPTED])
    dialect = dialects.sniff(messages)
    assert dialect is not None and dialect.name == name
    plan = plan_repair(dialect.index(messages), dialect, messages)
    assert [(e.action, e.call.call_id) for e in plan.edits] == [(Action.INSERT_OUTPUT, "c2"), (Action.INSERT_OUTPUT, "c3")]
    assert dialect.check(dialect.apply(messages, plan)) == []
    assert dialect.check(stdlib.REPAIRS[name](messages)) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_stdlib_script_repairs_each_dialect_and_the_check_tells_repaired_from_not(store, name: str,
                                                                                      tmp_path) -> None:
    data, _ = store
    source, out = generate.dialect_jsonl(data, name), tmp_path / "out.jsonl"
    stdlib.main([name, str(source), str(out)])
    assert run.check_dialect(name, source, out) == "ok"
    left = run.check_dialect(name, source, source)
    assert left.startswith("calls left unanswered:") and "outputs lost" in left
    folder = tmp_path / "folder"
    shutil.copytree(generate.dialect_folder(data, name), folder)
    stdlib.main([name, str(folder)])
    assert run.check_dialect(name, generate.dialect_folder(data, name), folder) == "ok"


def test_the_check_finds_a_thread_lost_and_an_output_doubled(store, tmp_path) -> None:
    import orjson

    data, _ = store
    source = generate.dialect_jsonl(data, "openai-chat")
    lines = source.read_bytes().splitlines(keepends=True)
    (tmp_path / "short.jsonl").write_bytes(b"".join(lines[1:]))
    assert run.check_dialect("openai-chat", source, tmp_path / "short.jsonl").startswith("threads missing")
    out = tmp_path / "out.jsonl"
    stdlib.main(["openai-chat", str(source), str(out)])
    doubled = []
    for thread_id, messages in run.dialect_threads(out):
        answers = [m for m in messages if m.get("role") == "tool"][:1]  # some threads call no tool
        doubled.append(orjson.dumps({"id": thread_id, "messages": [*messages, *answers]}) + b"\n")
    (tmp_path / "doubled.jsonl").write_bytes(b"".join(doubled))
    assert "outputs lost or doubled" in run.check_dialect("openai-chat", source, tmp_path / "doubled.jsonl")


@pytest.mark.parametrize("name", NAMES)
def test_threadfix_repair_of_each_dialect_passes_the_runners_check(store, name: str, tmp_path) -> None:
    data, _ = store
    source, out = generate.dialect_jsonl(data, name), tmp_path / "out.jsonl"
    done = subprocess.run([sys.executable, "-m", "threadfix", "repair", "--min-age", "0", "-o", str(out), str(source)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert run.check_dialect(name, source, out) == "ok"


def test_threadfix_repair_of_a_folder_in_place_passes_the_runners_check(store, tmp_path) -> None:
    data, _ = store
    folder = tmp_path / "folder"
    shutil.copytree(generate.dialect_folder(data, "pydantic-ai"), folder)
    done = subprocess.run([sys.executable, "-m", "threadfix", "repair", "--min-age", "0", str(folder)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert run.check_dialect("pydantic-ai", generate.dialect_folder(data, "pydantic-ai"), folder) == "ok"


def test_every_dialect_has_the_script_and_threadfix_side_by_side_as_a_file_and_a_folder() -> None:
    by_name = run.CASE_BY_NAME
    assert set(run.DIALECTS.values()) == set(NAMES) == set(stdlib.REPAIRS)
    for short, name in run.DIALECTS.items():
        for suffix in ("", "_folder"):
            script, ours = by_name[f"stdlib_{short}{suffix}"], by_name[f"repair_{short}{suffix}"]
            assert ours.against == (script.name,) and ours.kind == run.THREADFIX and script.kind == run.PYTHON
            assert script.check == ours.check and script.check.endswith(":" + name)
            assert script.writes and ours.writes  # they write: after the read cases, each pair back to back
            assert (script.fresh == ours.fresh == f"{short}_folder") == bool(suffix)
            assert run.inputs(ours) == run.inputs(script) == [f"{short}_folder" if suffix else f"{short}_jsonl"]
        assert {c.name for c in run.selected(f"repair_{short}")} >= {f"stdlib_{short}", "help"}
        one = by_name[f"repair_{short}_jobs1"]  # the default --jobs beside one process
        assert one.against == (f"repair_{short}",) and one.check == by_name[f"repair_{short}"].check
        assert one.args[:2] == ("--jobs", "1") and run.inputs(one) == [f"{short}_jsonl"]
    family = next(f for f in run.families(list(run.CASES)) if f[0].name == "stdlib_chat")
    assert [c.name for c in family] == ["stdlib_chat", "repair_chat", "repair_chat_jobs1"]


def test_the_list_shows_the_stdlib_cases_with_their_placeholders() -> None:
    done = subprocess.run([sys.executable, str(run.HERE / "run.py"), "--list"], capture_output=True, text=True,
                          timeout=60, check=True)
    assert "stdlib_repair.py anthropic {anthropic_jsonl} {out}" in done.stdout
    assert "repair --min-age 0 --answer-waiting {work}" in done.stdout  # the script answers waiting calls too
