"""An app appends to (or rewrites) a thread file while repair runs: nothing it wrote is ever lost.

The app is a separate interpreter (``app_sim.py``). Each trial starts it writing at random intervals,
runs a real repair in this process, stops the app, then checks the final file: every line the app
wrote is there exactly once and whole, and every original thread is there once, repaired (exit 0) or
byte-for-byte untouched (exit 75, "busy, retry"). The default run is short; ``--run-slow`` runs the
campaign the README quotes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest

from tests.reliability.harness import (
    App, assert_all_app_lines, campaign, jsonl_values, outputs_per_call, repair, stuck_thread, tally, temps,
    thread_lines,
)
from threadfix import batch
from threadfix.errors import ExitCode
from threadfix.stores import atomic

THREADS = 8


def one_append_trial(app: App, tmp: Path, trial: int, mode: str, kind: str) -> tuple[ExitCode, int]:
    """One race between the app's appends and a repair; asserts the invariants, returns the exit code and how
    many lines the app wrote."""
    folder = tmp / f"trial-{trial}"
    folder.mkdir()
    path = folder / "threads.jsonl"
    if kind == "thread":
        original = thread_lines(THREADS)
    else:  # the file is one thread, an item per line, ending on a dangling call
        original = b"".join(orjson.dumps(item) + b"\n" for item in stuck_thread(0)["items"])
    path.write_bytes(original)
    app.ask(op="append", path=str(path), mode=mode, kind=kind, seed=trial, min_ms=2, max_ms=40,
            delay_ms=30 if mode == "keep" and trial % 2 else 0)
    run = repair([path], folder)
    time.sleep(0.03)  # let the app write after the swap too: a line into the replaced inode would be lost
    written = app.ask(op="stop")["written"]
    code = run.result.exit_code()
    assert code in (ExitCode.OK, ExitCode.BUSY), run.result.problems
    data = path.read_bytes()
    values = jsonl_values(data)
    assert_all_app_lines(values, written)
    if kind == "thread":
        originals = [v for v in values if str(v.get("id", "")).startswith("t-")]
        assert [v["id"] for v in originals] == [f"t-{n}" for n in range(THREADS)]
        if code == ExitCode.BUSY:
            assert data.startswith(original), "exit 75 but the original lines changed"
        else:
            assert all(outputs_per_call(v["items"]) == {f"call_{n}": 1} for n, v in enumerate(originals))
    else:
        if code == ExitCode.BUSY:
            assert data.startswith(original)
        else:
            assert outputs_per_call(values)["call_0"] == 1
    assert not temps(folder), "a temp file was left behind"
    return code, written


def count_trial(written: int) -> None:
    tally("concurrent writer trials (JSON/JSONL)")
    tally("app lines written during a repair, all found once", written)


@pytest.mark.parametrize("mode", ["rename", "inplace"])
@pytest.mark.parametrize("trial", campaign(6, 150))
def test_app_rewriting_a_json_document_loses_nothing(app: App, tmp_path: Path, trial: int, mode: str) -> None:
    """An app that saves the whole document after each new item (atomically, or truncating in place)."""
    path = tmp_path / "thread.json"
    path.write_bytes(orjson.dumps({"id": "doc", "items": stuck_thread(0)["items"]}, option=orjson.OPT_INDENT_2))
    app.ask(op="rewrite", path=str(path), mode=mode, seed=trial, min_ms=2, max_ms=30)
    run = repair([path], tmp_path)
    time.sleep(0.03)
    written = app.ask(op="stop")["written"]
    problems = run.result.problems
    # a truncating app can be caught mid-write: that read fails (exit 2) and nothing is written
    assert all(p.exit_code == ExitCode.BUSY or (mode == "inplace" and "not valid JSON" in p.message)
               for p in problems), problems
    items = orjson.loads(path.read_bytes())["items"]
    assert_all_app_lines(items, written)
    assert outputs_per_call(items)["call_0"] <= 1
    assert not temps(tmp_path)
    count_trial(written)


@pytest.mark.parametrize("kind", ["thread", "item"])
@pytest.mark.parametrize("trial", campaign(12, 300))
def test_appender_that_reopens_loses_nothing(app: App, tmp_path: Path, trial: int, kind: str) -> None:
    count_trial(one_append_trial(app, tmp_path, trial, "reopen", kind)[1])


def leases_work(folder: Path) -> bool:
    """Whether this filesystem grants us a write lease (Linux, local filesystem, our own file)."""
    probe = folder / "lease-probe"
    probe.write_bytes(b"")
    watch = atomic.LeaseWatch(probe)
    try:
        return watch.acquire()
    finally:
        watch.release()


@pytest.fixture()
def lease(tmp_path: Path) -> None:
    if not leases_work(tmp_path):
        pytest.skip("no write leases on this filesystem: only the compare-and-swap guards the file, and a "
                    "kept descriptor can lose lines (see README, Reliability)")


@pytest.mark.parametrize("trial", campaign(8, 200))
def test_appender_that_keeps_its_descriptor_loses_nothing(app: App, tmp_path: Path, trial: int, lease: None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "BUSY_ATTEMPTS", 1)  # each attempt is refused the same way; one is enough
    count_trial(one_append_trial(app, tmp_path, trial, "keep", "thread")[1])


def test_the_lease_is_what_saves_a_kept_descriptor(app: App, tmp_path: Path, lease: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the lease (compare-and-swap alone), the same trials lose lines: the harness sees the loss,
    and the lease is the guard that prevents it."""
    monkeypatch.setattr(batch, "BUSY_ATTEMPTS", 1)
    monkeypatch.setattr(atomic.LeaseWatch, "acquire", lambda self: False)
    for trial in range(40):
        try:
            one_append_trial(app, tmp_path, trial, "keep", "thread")
        except AssertionError as exc:
            assert "lost app lines" in str(exc)
            return
    pytest.fail("40 trials without a lease lost nothing: the harness cannot see the race")


def test_a_file_another_process_holds_open_is_not_replaced(app: App, tmp_path: Path, lease: None) -> None:
    path = tmp_path / "threads.jsonl"
    path.write_bytes(thread_lines(THREADS))
    app.ask(op="append", path=str(path), mode="keep", kind="thread", seed=0, min_ms=10_000, max_ms=10_000)
    run = repair([path], tmp_path)
    app.ask(op="stop")
    assert [(p.exit_code, p.message) for p in run.result.problems] == [
        (ExitCode.BUSY, "another process has the file open; try again when it is closed")]
    assert path.read_bytes().startswith(thread_lines(THREADS))


@pytest.fixture(scope="module")
def app() -> App:
    with App() as process:
        yield process


def lease_is_breaking(pid: int) -> bool:
    """True once the kernel shows a lease of ``pid`` being broken by another process's open."""
    with open("/proc/locks") as locks:
        return any(" BREAKING " in line and f" {pid} " in line for line in locks)


def test_an_open_that_arrives_just_before_the_rename_is_not_lost(app: App, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The narrowest window: the app opens the file after the last check and before the swap.

    Its open is held by our write lease; once we let go it writes into the inode we just swapped out. The
    swap must notice the broken lease and put the original back (exit 75 or a clean retry), not lose the
    line.
    """
    path = tmp_path / "threads.jsonl"
    path.write_bytes(thread_lines(THREADS))
    swaps = []
    real_replace, real_exchange = os.replace, atomic.exchange

    def app_opens_first(swap, *args):
        if not swaps:
            app.ask(op="append", path=str(path), mode="reopen", kind="thread", seed=0, min_ms=5000, max_ms=5000,
                    delay_ms=1)
            deadline = time.monotonic() + 10
            while not lease_is_breaking(os.getpid()) and time.monotonic() < deadline:
                time.sleep(0.001)
            if not lease_is_breaking(os.getpid()):
                pytest.skip("no write lease here (the kernel never showed ours breaking)")
        swaps.append(args)
        return swap(*args)

    monkeypatch.setattr(atomic.os, "replace", lambda *a: app_opens_first(real_replace, *a))
    monkeypatch.setattr(atomic, "exchange", lambda *a: app_opens_first(real_exchange, *a))
    run = repair([path], tmp_path)
    written = app.ask(op="stop")["written"]
    assert written == 1
    values = jsonl_values(path.read_bytes())
    assert_all_app_lines(values, written)
    assert run.result.exit_code() in (ExitCode.OK, ExitCode.BUSY)
    assert not temps(tmp_path)
    count_trial(written)
