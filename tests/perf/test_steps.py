"""benchmarks/steps.py's instruction steps: each command line runs, and measures what its name says (the counts
themselves are taken by running it under callgrind, not here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson

from tests import benchmark_store

ROOT = Path(__file__).resolve().parents[2]


def test_each_instruction_step_runs_and_reads_what_it_says(tmp_path: Path) -> None:
    data = tmp_path / "store"
    data.mkdir()
    manifest = benchmark_store.generator().generate(data, threads=40, seed=5, workers=1)
    steps, run = benchmark_store.script("steps"), benchmark_store.script("run")
    small = tmp_path / "small.jsonl"
    steps.write_small(str(data), small)
    assert small.read_bytes().count(b"\n") == 3
    commands = steps.step_commands(str(data), str(small))
    assert list(commands) == ["floor", "start-up", "read", "lint"]
    done = {step: subprocess.run(command, env=steps.tree_environment(str(ROOT)), cwd=ROOT, capture_output=True,
                                 timeout=120)
            for step, command in commands.items()}
    for step, finished in done.items():
        assert finished.returncode == 0, (step, finished.stderr)
    dangling = {d["call_id"] for d in manifest["dangling"]}
    assert dangling
    # lint finds every planted dangling call; the read step reads every thread and runs no rule that finds anything
    assert run.dangling_from_lint_json(done["lint"].stdout) == dangling
    read = orjson.loads(done["read"].stdout)
    assert read["findings"] == [] and read["summary"]["threads"] == manifest["counts"]["threads"]
    assert orjson.loads(done["start-up"].stdout)["summary"]["threads"] == 3
