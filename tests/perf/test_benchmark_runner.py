"""The benchmark runner's own command line (the figures themselves are measured by running it, not here)."""

from __future__ import annotations

import subprocess
import sys

from tests import benchmark_store
from tests.benchmark_store import BENCHMARKS


def test_list_names_every_case_with_its_command_and_unfilled_placeholders() -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / "run.py"), "--list"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    names = [line.split()[0] for line in lines[0::2]]
    commands = lines[1::2]
    assert len(names) == len(commands) and {"floor_jsonl", "help", "tiny_lint", "scan_items"} <= set(names)
    assert len(set(names)) == len(names)
    assert any("{tiny}" in command for command in commands)  # filled only when a run has a store
    assert any("{jsonl}" in command and "--jobs 2" in command for command in commands)


def test_the_two_process_floor_finds_what_the_one_process_floor_finds(tmp_path) -> None:
    """Its halves meet at a line start: no thread is read twice or skipped (run.py checks it on real stores)."""
    data = tmp_path / "store"
    data.mkdir()
    manifest = benchmark_store.generator().generate(data, threads=120, seed=5, workers=1)
    floors = benchmark_store.script("floors")
    one = floors.jsonl_orjson(data)[1]
    two = floors.jsonl_orjson_2proc(data)[1]
    assert one == two == {d["call_id"] for d in manifest["dangling"]} and one


def test_every_case_is_warmed_with_the_store_file_it_reads() -> None:
    """The runner reads a case's input untimed before timing it: each floor and threadfix case names its file."""
    run = benchmark_store.script("run")
    by_name = {case.name: run.inputs(case) for case in run.CASES}
    assert by_name["floor_items"] == ["items_db"] and by_name["floor_jsonl_2proc"] == ["jsonl"]
    assert by_name["scan_threads"] == ["threads_db"] and by_name["repair_jsonl"] == ["jsonl"]
    assert by_name["help"] == by_name["tiny_lint"] == by_name["python_bare"] == []
    for case in run.CASES:
        assert set(by_name[case.name]) <= {*run.STORE_FILES, *run.DIALECT_FILES, *(f"{s}_folder" for s in run.DIALECTS)}
        assert (len(by_name[case.name]) == 1) == case.per_store, case.name


def test_the_header_says_when_threadfix_is_installed_editable(tmp_path, monkeypatch) -> None:
    """An editable install's import hook runs at every start-up: the figures must say they include it."""
    import site

    run = benchmark_store.script("run")
    manifest = {"jsonl_bytes": 10**6, "counts": {"threads": 1, "items": 2, "dangling_calls": 0, "stuck_threads": 0}}
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(tmp_path)])
    (tmp_path / "__editable__.other-1.0.pth").write_text("")
    assert not run.installed_editable() and "editable" not in run.header(tmp_path, manifest, 1)
    (tmp_path / "__editable__.threadfix-0.1.0.pth").write_text("")
    assert run.installed_editable() and "installed editable" in run.header(tmp_path, manifest, 1)


def test_the_database_repair_check_tells_a_repaired_copy_from_the_original(tmp_path) -> None:
    data = tmp_path / "store"
    data.mkdir()
    manifest = benchmark_store.generator().generate(data, threads=120, seed=5, workers=1)
    dangling = len(manifest["dangling"])
    assert dangling
    run = benchmark_store.script("run")
    for name in ("threads.sqlite", "items.sqlite"):
        source, out = data / name, tmp_path / f"out-{name}"
        done = subprocess.run([sys.executable, "-m", "threadfix", "--jobs", "1", "repair", "--min-age", "0", "-o", str(out),
                               str(source)], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert run.check_repair_db(source, out, manifest) == "ok"
        assert run.check_repair_db(source, source, manifest) == f"dangling calls left: {dangling}; items lost: {dangling}"
        assert run.check_repair_db(source, tmp_path / "none.sqlite", manifest) == "no output database none.sqlite"


def test_the_report_check_agrees_with_the_generated_labels(tmp_path) -> None:
    """The generator labels each failure text by the corpus's rules (a KeyError traceback is not_found, an
    "invalid literal" one invalid_arguments), so report's kinds by tool match the manifest: run.py's check."""
    data = tmp_path / "store"
    data.mkdir()
    manifest = benchmark_store.generator().generate(data, threads=1500, seed=3, workers=1)
    done = subprocess.run([sys.executable, "-m", "threadfix", "--jobs", "1", "report", "--format", "json",
                           str(data / "threads.jsonl")], capture_output=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert {"not_found", "invalid_arguments"} <= set(manifest["errors_by_kind_tool"])
    assert benchmark_store.script("run").check_report(done.stdout, manifest) == "ok"
