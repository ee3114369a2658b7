"""``lint`` on sample_threads/ finds exactly the problems planted there: every one, and nothing else.

Each sample (a JSON or JSONL file, or a SQLite database) has its expected findings in ``tests/lint/expected/<folder>/<file>.lint``: one line per
finding, ``<address>#<item>: <CODE>``, exactly as ``threadfix lint`` prints the start of its line (run
from the repository root); an empty file says the sample must lint clean. Order does not matter.

Adding a sample (for a new dialect, say) means adding its expected file, after checking every line is
a problem planted on purpose. To draft the files of samples that have none (existing ones are never
touched)::

    python -m tests.lint.test_samples --write
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest

from threadfix.lint import LintOptions, LintRun
from threadfix.render.lint import finding_address
from threadfix.stores import is_sqlite

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = "sample_threads"
EXPECTED = Path(__file__).parent / "expected"


def sample_files() -> list[str]:
    """Every sample: JSON and JSONL files, and SQLite databases, each named on its own."""
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / SAMPLES).rglob("*")
                  if p.is_file() and (p.suffix in (".json", ".jsonl") or is_sqlite(p)))


def expected_path(sample: str) -> Path:
    return EXPECTED / Path(sample).relative_to(SAMPLES).with_suffix(Path(sample).suffix + ".lint")


def lint_samples() -> tuple[dict[str, list[str]], list[str]]:
    """Each sample's finding lines, and any problem reading the samples."""
    found: dict[str, list[str]] = defaultdict(list)
    run = LintRun(sample_files(), LintOptions())
    problems = []
    for result in run.results():
        if hasattr(result, "findings"):
            for finding in result.findings:
                found[finding.address.source].append(f"{finding_address(finding)}: {finding.code}")
        else:
            problems.append(f"{result.where}: {result.message}")
    return found, problems


@pytest.fixture(scope="module")
def linted(request) -> tuple[dict[str, list[str]], list[str]]:
    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    request.addfinalizer(mp.undo)
    return lint_samples()


def test_samples_read_without_problems(linted) -> None:
    assert linted[1] == []


@pytest.mark.parametrize("sample", sample_files())
def test_sample_has_exactly_its_planted_findings(linted, sample: str) -> None:
    path = expected_path(sample)
    got = sorted(linted[0].get(sample, []))
    assert path.is_file(), (f"{sample} has no expected lint findings: write {path.relative_to(ROOT)} with the lines "
                            f"below once each is a planted problem (python -m tests.lint.test_samples --write):\n"
                            + "\n".join(got))
    expected = sorted(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    assert got == expected


def test_every_expected_file_has_its_sample() -> None:
    samples = {expected_path(s) for s in sample_files()}
    assert sorted(p for p in EXPECTED.rglob("*.lint") if p not in samples) == []


def write_missing() -> None:
    found, problems = lint_samples()
    for sample in sample_files():
        path = expected_path(sample)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"{line}\n" for line in sorted(found.get(sample, []))), encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}: check each line is a planted problem")
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    write_missing()
