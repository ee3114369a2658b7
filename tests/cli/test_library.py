"""The library refuses misuse at once (issue #22): a path given as a string is one path, options are checked
when built, and problems cannot be taken for outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from threadfix import LintOptions, LintRun, Problem, RepairRun, RunOptions, ThreadOutcome, report_paths

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "sample_threads" / "openai-chat"
AS_LIST = sorted(o.address for o in RepairRun([str(FOLDER)], RunOptions(dry_run=True, min_age=0)).threads())


@pytest.mark.parametrize("paths", [str(FOLDER), FOLDER, f"{FOLDER}/", [FOLDER], (str(FOLDER),)],
                         ids=["str", "Path", "str/", "[Path]", "(str,)"])
def test_one_path_as_a_str_or_a_path_is_one_path(paths) -> None:
    run = RepairRun(paths, RunOptions(dry_run=True, min_age=0))
    assert sorted(o.address for o in run.threads()) == AS_LIST and len(AS_LIST) == 4
    assert run.result.problems == []
    assert LintRun(paths).specs == RepairRun(paths).specs == [str(paths[0]) if isinstance(paths, (list, tuple))
                                                              else str(paths)]
    assert report_paths(paths).totals.threads == 5


@pytest.mark.parametrize("paths", [b"chats/", 3, [3], None, [b"chats/"]])
def test_what_is_not_a_path_is_refused_when_the_run_is_built(paths) -> None:
    with pytest.raises((TypeError, ValueError)):
        RepairRun(paths)


def test_durations_are_parsed_or_refused_when_options_are_built() -> None:
    assert RunOptions(min_age="10m").min_age == 600.0 and LintOptions(min_age="30s").min_age == 30.0
    assert RunOptions(min_age=5).min_age == 5.0 and RunOptions(leave_tools="approve_*").leave_tools == ("approve_*",)
    for bad in ("-5m", "soon", -1, float("nan"), [1], True):
        with pytest.raises((TypeError, ValueError), match="min_age|duration"):
            RunOptions(min_age=bad)
        with pytest.raises((TypeError, ValueError), match="min_age|duration"):
            LintOptions(min_age=bad)
    with pytest.raises(ValueError, match="jobs"):
        RunOptions(jobs=0)
    with pytest.raises(TypeError, match="options must be a RunOptions"):
        RepairRun(str(FOLDER), {"dry_run": True})


def test_threads_never_yields_a_problem_and_the_problems_are_kept(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    run = RepairRun([str(FOLDER), str(tmp_path / "bad.jsonl")], RunOptions(dry_run=True, min_age=0))
    seen = list(run.threads())
    assert seen and all(isinstance(outcome, ThreadOutcome) for outcome in seen)
    assert [type(p) for p in run.result.problems] == [Problem] and int(run.result.exit_code()) == 2
    both = list(RepairRun([str(FOLDER), str(tmp_path / "bad.jsonl")], RunOptions(dry_run=True, min_age=0)).outcomes())
    assert [o for o in both if isinstance(o, Problem)] == run.result.problems
