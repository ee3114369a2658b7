"""A folder's documents are committed in batches (:class:`threadfix.batch._FolderBatch`), in one process or with
``--jobs`` workers planning them: one journal append per batch, the same bytes and outcomes as file by file,
and a file changed between its read and its swap is not overwritten but read and repaired again."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import threadfix.batch as batch
from threadfix.batch import RepairRun, RunOptions
from threadfix.journal import Journal
from threadfix.undo import undo


def stuck(n: int) -> bytes:
    """Thread ``n`` as a document: stuck (a call without output) when ``n`` is even."""
    items = [{"type": "message", "role": "user", "content": f"task {n}"},
             {"type": "function_call", "call_id": f"call_{n}", "name": "deploy", "arguments": "{}"}]
    if n % 2:
        items.append({"type": "function_call_output", "call_id": f"call_{n}", "output": "done"})
    return orjson.dumps({"id": f"t-{n}", "items": items}, option=orjson.OPT_INDENT_2)


def folder(tmp: Path, name: str, count: int) -> Path:
    where = tmp / name
    where.mkdir()
    for n in range(count):
        (where / f"{n:03d}.json").write_bytes(stuck(n))
    return where


def run(path: Path, tmp: Path, **options: object) -> tuple[RepairRun, list[tuple[str, str]]]:
    repair = RepairRun([str(path)], RunOptions(min_age=0, journal_dir=tmp / "journal", **options))
    said = [(o.address.replace(str(path), ""), o.status) for o in repair.threads()]
    return repair, said


@pytest.mark.parametrize("jobs", [1, 2])
def test_one_journal_append_per_batch_and_the_same_result_as_file_by_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          jobs: int) -> None:
    appends: list[int] = []
    record = Journal.record
    monkeypatch.setattr(Journal, "record", lambda self, entries: (appends.append(len(entries)), record(self, entries)))
    monkeypatch.setattr(batch, "FOLDER_BATCH_CHANGED", 4)
    batched, said = run(folder(tmp_path, "batched", 20), tmp_path, jobs=jobs)
    assert appends == [4, 4, 2]  # 10 stuck files, in batches of 4 changed files
    assert batched.result.threads == 20 and batched.result.changed == 10 and not batched.result.problems
    assert said == [(f"/{n:03d}.json", "repaired") for n in range(0, 20, 2)]
    # file by file (each named on its own): the same bytes
    one_by_one = folder(tmp_path, "one-by-one", 20)
    for p in sorted(one_by_one.iterdir()):
        list(RepairRun([str(p)], RunOptions(min_age=0, journal_dir=tmp_path / "j2")).outcomes())
        assert (tmp_path / "batched" / p.name).read_bytes() == p.read_bytes()
    assert batched.result.journal is not None
    assert [o.status for o in undo(batched.result.journal)] == ["restored"] * 10
    assert all((tmp_path / "batched" / f"{n:03d}.json").read_bytes() == stuck(n) for n in range(20))


def test_a_file_changed_before_its_swap_is_read_and_repaired_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The app rewrites a stuck file after repair planned it and before the batch swaps it in: the swap's
    compare-and-swap refuses to overwrite it, and the file is read again and repaired with the app's change."""
    where = folder(tmp_path, "store", 6)
    changed = where / "002.json"
    real = batch.sync_temps

    def app_writes_first(rewriters, meanwhile=None):  # type: ignore[no-untyped-def]
        value = orjson.loads(changed.read_bytes())
        value["items"].insert(0, {"type": "message", "role": "user", "content": "written by the app"})
        changed.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2))
        return real(rewriters, meanwhile)

    monkeypatch.setattr(batch, "sync_temps", app_writes_first)
    repair, said = run(where, tmp_path)
    assert said == [("/000.json", "repaired"), ("/002.json", "repaired"), ("/004.json", "repaired")]
    assert repair.result.exit_code() == 0 and not repair.result.problems
    items = orjson.loads(changed.read_bytes())["items"]
    assert items[0]["content"] == "written by the app"  # the app's change kept
    assert [i["type"] for i in items][-1] == "function_call_output"  # and the call answered


def test_a_stuck_document_its_screen_knew_is_read_as_that_dialect_without_a_sniff(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The files of a folder of many are screened from the first; a stuck thread the screen knew for its dialect's is
    read as that dialect, as a sniff would find it: only the first document is sniffed (to pick the screen tried
    first), and every file is repaired to the same bytes as when named on its own."""
    from threadfix import dialects
    from threadfix.stores import files

    count = files.SCREEN_FOLDER_FILES + 8
    sniffed: list[int] = []
    sniff = dialects.sniff
    monkeypatch.setattr(dialects, "sniff", lambda items: (sniffed.append(len(items)), sniff(items))[1])
    files._folder_screener.cache_clear()  # (a fresh screener: its first document is sniffed)
    repaired, said = run(folder(tmp_path, "many", count), tmp_path)
    assert said == [(f"/{n:03d}.json", "repaired") for n in range(0, count, 2)]
    assert len(sniffed) == 1
    monkeypatch.setattr(dialects, "sniff", sniff)
    one_by_one = folder(tmp_path, "one-by-one", count)
    for p in sorted(one_by_one.iterdir()):
        list(RepairRun([str(p)], RunOptions(min_age=0, journal_dir=tmp_path / "j2")).outcomes())
        assert (tmp_path / "many" / p.name).read_bytes() == p.read_bytes()


def test_a_repair_lists_a_folder_once_and_the_next_run_lists_it_again(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A repair walks the folder it is given to size the run (how many processes), then to read it: the second walk
    gives the first one's entries. Nothing of it outlives the run: the next one sees a file added since."""
    from threadfix.stores import files

    listed: list[str] = []
    walk = files._walk
    monkeypatch.setattr(files, "_walk", lambda top, onerror: (listed.append(top), walk(top, onerror))[1])
    where = folder(tmp_path, "listed", 4)
    first, said = run(where, tmp_path, jobs=None)  # (as the command runs: the processes chosen by size)
    assert listed == [str(where)] and said == [("/000.json", "repaired"), ("/002.json", "repaired")]
    assert files._kept.walks is None
    (where / "004.json").write_bytes(stuck(4))
    again, said = run(where, tmp_path, jobs=None)
    assert listed == [str(where)] * 2 and said == [("/004.json", "repaired")]


def test_a_run_started_while_another_is_paused_lists_the_folder_afresh(tmp_path: Path) -> None:
    """A library caller may take one outcome of a repair and start another before the first is done: the second run
    keeps walks of its own, so it sees a file added after the first listed the folder, and the first's are given
    back to it when the second is over."""
    from threadfix.stores import files

    where = folder(tmp_path, "paused", 4)
    first = RepairRun([str(where)], RunOptions(min_age=0, dry_run=True, journal_dir=tmp_path / "j1")).outcomes()
    next(first)
    kept = files._kept.walks
    assert kept is not None and list(kept) == [str(where)]
    (where / "004.json").write_bytes(stuck(4))
    second = list(RepairRun([str(where)], RunOptions(min_age=0, dry_run=True, journal_dir=tmp_path / "j2")).outcomes())
    assert any("004.json" in str(outcome.address) for outcome in second if hasattr(outcome, "address"))
    assert files._kept.walks is kept
    first.close()
    assert files._kept.walks is None
