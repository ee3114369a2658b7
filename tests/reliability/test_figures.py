"""The reliability figures reach the end of a run on workers: each worker counts its own, the controller prints their
sum (tests/conftest.py), so the campaign's figures that tests/reliability/README.md quotes are not lost under
pytest-xdist."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("xdist")


PROBE = """
import pytest

from tests.reliability.harness import tally


@pytest.mark.parametrize("n", range(6))
def test_tally(n):
    tally("probe trials", n + 1)
"""


def _run_probe(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """pytest over a file of six tests that count 1 to 6 "probe trials", beside a copy of the suite's conftest (loaded as
    the suite loads it), with ``options``."""
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_probe.py").write_text(PROBE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, "test_probe.py"],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_figures_of_every_worker_are_summed(tmp_path: Path) -> None:
    done = _run_probe(tmp_path, "-n", "2", "--dist", "load")
    assert "reliability figures" in done.stdout, done.stdout
    assert "       21  probe trials" in done.stdout.splitlines(), done.stdout


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="two workers are the default only on two cores or more")
def test_the_suite_runs_on_workers_by_default_and_in_one_process_with_n_0(tmp_path: Path) -> None:
    assert "bringing up nodes" in _run_probe(tmp_path).stdout
    alone = _run_probe(tmp_path, "-n", "0").stdout
    assert "bringing up nodes" not in alone and "       21  probe trials" in alone.splitlines()
