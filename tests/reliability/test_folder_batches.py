"""A folder of documents is committed in batches (:class:`threadfix.batch._FolderBatch`): per batch the temp
files are written, the journal appended and synced once, the temp files synced, each file swapped in, the
folder synced once. Kill (SIGKILL) or stop (SIGTERM) the repair at every one of those steps, for every file
of the batch: each file holds its old or its new version, the ones swapped are exactly those the step
reached, the temp files are the killed run's only, what is said names exactly the files swapped, and the
journal undoes exactly those; a rerun converges.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from tests.reliability.harness import repair, stuck_thread, tally, temps, threadfix
from threadfix.batch import FOLDER_BATCH_CHANGED
from threadfix.undo import undo

#: documents of the folder: the stuck ones (even numbers) change, the others are healthy
DOCUMENTS = 7
STUCK = [n for n in range(DOCUMENTS) if n % 2 == 0]


def make_folder(tmp: Path, documents: int = DOCUMENTS) -> tuple[Path, dict[str, bytes], dict[str, bytes]]:
    """A folder of ``documents`` JSON documents (mode 0640), and what each holds before and after a repair."""
    folder = tmp / "store"
    reference = tmp / "reference"
    folder.mkdir(parents=True)
    reference.mkdir()
    before = {f"{n:03d}.json": orjson.dumps(stuck_thread(n), option=orjson.OPT_INDENT_2) for n in range(documents)}
    for name, data in before.items():
        (folder / name).write_bytes(data)
        (folder / name).chmod(0o640)
        (reference / name).write_bytes(data)
    repair([reference], tmp)
    after = {name: (reference / name).read_bytes() for name in before}
    assert sum(after[name] != before[name] for name in before) == len([n for n in range(documents) if n % 2 == 0])
    return folder, before, after


def swapped_at(step: str, nth: int) -> int:
    """How many of the batch's changed files are new when the repair dies at the ``nth`` ``step``."""
    return {"temp-written": 0, "temp-synced": 0, "before-rename": nth - 1, "renamed": nth}.get(step, len(STUCK))


#: every write step of one batch, for every changed file of it (``committed`` comes once per batch)
POINTS = [(step, nth) for step in ("temp-written", "temp-synced", "before-rename", "renamed")
          for nth in range(1, len(STUCK) + 1)] + [("committed", 1)]


def holds(folder: Path, before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """The files that hold their new version; fails when one holds neither version."""
    new = []
    for name in before:
        now = (folder / name).read_bytes()
        assert now in (before[name], after[name]), f"{name} holds neither its old nor its new version"
        assert (folder / name).stat().st_mode & 0o777 == 0o640
        if now != before[name]:
            new.append(name)
    return new


@pytest.mark.parametrize("signal_name", ["KILL", "TERM"])
def test_batch_stopped_at_every_write_step(tmp_path: Path, signal_name: str) -> None:
    def stop(point: tuple[str, int]) -> tuple[tuple[str, int], Path, tuple[Path, dict, dict], object]:
        step, nth = point
        tmp = tmp_path / f"{step}-{nth}"
        made = make_folder(tmp)
        return point, tmp, made, threadfix("repair", "--min-age", "0", str(made[0]), cwd=tmp,
                                           env={"THREADFIX_CRASHPOINT": f"{step}:{nth}",
                                                "THREADFIX_CRASHPOINT_SIGNAL": signal_name})

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for (step, nth), tmp, (folder, before, after), ran in pool.map(stop, POINTS):
            where = (step, nth, signal_name)
            new = holds(folder, before, after)
            swapped = [name for name in sorted(before) if before[name] != after[name]][:swapped_at(step, nth)]
            assert new == swapped, where
            said = ran.stderr.decode()
            journals = sorted((tmp / ".state" / "threadfix" / "journal").glob("*.jsonl"))
            if signal_name == "KILL":
                assert ran.returncode == -9, (where, said)
                tally("repairs killed (SIGKILL) at a write step")
                assert all(p.name.endswith(".tmp") for p in temps(folder)), where
            else:
                assert ran.returncode == 130, (where, said)
                assert temps(folder) == [], where  # an interrupt removes every temp file it made
                listed = {line.split("#")[0] for line in ran.stdout.decode().splitlines()}
                assert listed == {str(folder / name) for name in swapped}, where  # exactly the files swapped
                if swapped:
                    assert f"threadfix: interrupted; repaired {len(swapped)} " in said and "undo journal: " in said, \
                        (where, said)
                else:
                    assert "interrupted; nothing half-written was left behind" in said and "repaired" not in said, \
                        (where, said)
            # the journal is synced before the first swap: it undoes exactly the files swapped
            if swapped or step not in ("temp-written",):
                (journal,) = journals
                statuses = {o.address.split("#")[0]: o.status for o in undo(journal)}
                assert statuses == {str(folder / name): "restored" if name in swapped else "already_original"
                                    for name in before if before[name] != after[name]}, where
            else:
                assert journals == [], where  # killed before the batch's journal append: nothing to undo
            assert holds(folder, before, after) == [], where
            strays = temps(folder)
            rerun = repair([folder], tmp)
            assert rerun.result.exit_code() == 0 and not rerun.result.problems, where
            assert holds(folder, before, after) == [name for name in sorted(before) if before[name] != after[name]]
            assert repair([folder], tmp, dry_run=True).result.changed == 0
            assert temps(folder) == strays, where  # a young temp file may be a running repair's: left


def test_killed_between_batches(tmp_path: Path) -> None:
    """The first batch is committed, the second untouched; the journal undoes exactly the first."""
    count = FOLDER_BATCH_CHANGED + 6
    folder, before, after = make_folder(tmp_path, 2 * count)  # every other document is stuck
    changed = [name for name in sorted(before) if before[name] != after[name]]
    assert len(changed) == count
    killed = threadfix("repair", "--min-age", "0", str(folder), cwd=tmp_path,
                       env={"THREADFIX_CRASHPOINT": "committed:1"})
    assert killed.returncode == -9, killed.stderr
    tally("repairs killed (SIGKILL) at a write step")
    assert holds(folder, before, after) == changed[:FOLDER_BATCH_CHANGED]
    (journal,) = (tmp_path / ".state" / "threadfix" / "journal").iterdir()
    assert [o.status for o in undo(journal)] == ["restored"] * FOLDER_BATCH_CHANGED
    assert holds(folder, before, after) == []
    assert repair([folder], tmp_path).result.changed == count
    assert holds(folder, before, after) == changed
