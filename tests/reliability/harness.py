"""Shared pieces of the reliability campaign: the app process, stores with stuck threads, invariants."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from threadfix.batch import RepairRun, RunOptions

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
APP_SIM = HERE / "app_sim.py"
TEMP_GLOB = ".threadfix-*"


def stuck_thread(n: int) -> dict[str, Any]:
    """Thread ``t-n``: a user turn and a call; every other one has its output, the others dangle."""
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"task {n}"}]},
        {"type": "function_call", "call_id": f"call_{n}", "name": "deploy", "arguments": "{}"},
    ]
    if n % 2:
        items.append({"type": "function_call_output", "call_id": f"call_{n}", "output": "done"})
    return {"id": f"t-{n}", "items": items}


def thread_lines(count: int) -> bytes:
    return b"".join(orjson.dumps(stuck_thread(n)) + b"\n" for n in range(count))


def repair(paths: list[Path], tmp: Path, **options: Any) -> RepairRun:
    """Run repair in this process, as ``threadfix repair --min-age 0`` would, and return the finished run."""
    options.setdefault("min_age", 0)
    options.setdefault("journal_dir", tmp / "journal")
    run = RepairRun([str(p) for p in paths], RunOptions(**options))
    list(run.outcomes())
    return run


def threadfix(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess:
    """``python -m threadfix ARGS`` in a separate interpreter, its journal kept inside ``cwd``."""
    environment = {k: v for k, v in os.environ.items() if k != "THREADFIX_CRASHPOINT"}
    environment.update({"XDG_STATE_HOME": str(cwd / ".state"), "PYTHONPATH": str(ROOT), **(env or {})})
    return subprocess.run([sys.executable, "-m", "threadfix", *args], input=stdin, capture_output=True, cwd=cwd,
                          env=environment, timeout=timeout)


class App:
    """The app process (``app_sim.py``): a separate interpreter driven over its stdin."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, str(APP_SIM)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)

    def ask(self, **command: Any) -> dict[str, Any]:
        self.send(**command)
        return self.reply()

    def send(self, **command: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def replied(self) -> bool:
        """True when an answer is waiting (without reading it)."""
        assert self.process.stdout is not None
        return bool(select.select([self.process.stdout], [], [], 0)[0])

    def reply(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        reply = self.process.stdout.readline()
        if not reply:
            raise RuntimeError(f"the app process died (exit {self.process.wait()})")
        return json.loads(reply)

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(10)

    def __enter__(self) -> App:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None and self.process.poll() is None:
            self.process.kill()
        self.close()


def jsonl_values(data: bytes) -> list[Any]:
    """Every line of a JSONL file parsed; a torn or corrupt line fails the calling test."""
    assert data == b"" or data.endswith(b"\n"), f"the file does not end with a whole line: {data[-80:]!r}"
    values = []
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        try:
            values.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            raise AssertionError(f"line {number} is torn or corrupt: {line[:120]!r}") from None
    return values


def app_sequence(values: list[Any]) -> list[int]:
    return [v["app_seq"] for v in values if isinstance(v, dict) and "app_seq" in v]


def assert_all_app_lines(values: list[Any], written: int) -> None:
    """Each of the app's ``written`` lines is there exactly once, in the order written."""
    seen = app_sequence(values)
    counts = Counter(seen)
    lost = sorted(set(range(written)) - set(seen))
    duplicated = sorted(n for n, c in counts.items() if c > 1)
    assert not lost and not duplicated, f"lost app lines {lost[:10]}, duplicated {duplicated[:10]}"
    assert seen == list(range(written)), "app lines out of order"


def outputs_per_call(items: list[Any]) -> Counter:
    return Counter(i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")


def temps(folder: Path) -> list[Path]:
    return sorted(folder.glob(TEMP_GLOB))


# --------------------------------------------------------------------------- stores for crash and fault runs

def json_document() -> bytes:
    return orjson.dumps({"id": "doc", "items": stuck_thread(0)["items"]}, option=orjson.OPT_INDENT_2) + b"\n"


def item_lines() -> bytes:
    return b"".join(orjson.dumps(item) + b"\n" for item in stuck_thread(2)["items"])


SHAPES = {"thread.json": json_document, "threads.jsonl": lambda: thread_lines(6), "items.jsonl": item_lines,
          "two.jsonl": lambda: thread_lines(2)}


@dataclass
class Store:
    folder: Path
    path: Path
    before: bytes
    after: bytes  # what an uninterrupted repair writes


def make_store(tmp: Path, name: str) -> Store:
    """A store of shape ``name`` in ``tmp/store`` (mode 0640), and what an uninterrupted repair makes of it."""
    folder = tmp / "store"
    folder.mkdir(parents=True)
    path = folder / name
    before = SHAPES[name]()
    path.write_bytes(before)
    path.chmod(0o640)
    reference = tmp / "reference"
    reference.mkdir()
    (reference / name).write_bytes(before)
    repair([reference / name], tmp)
    after = (reference / name).read_bytes()
    assert after != before
    return Store(folder, path, before, after)


#: the system calls through which repair changes anything on disk
WRITE_SIDE = ("write", "pwrite64", "copy_file_range", "fsync", "fdatasync", "fchmod", "fchown", "mkdir",
              "rename", "renameat2", "unlink", "ftruncate", "fcntl")
_CALL = re.compile(r"^(\w+)\((.*)")
STRACE = shutil.which("strace")


@dataclass(frozen=True)
class Syscall:
    """The ``nth`` call of ``name`` in a repair (what strace's ``when=`` counts); ``args`` as strace shows them."""

    name: str
    nth: int
    args: str

    def __str__(self) -> str:
        return f"{self.name}#{self.nth}({self.args[:60]})"


def write_syscalls(store: Store, tmp: Path) -> list[Syscall]:
    """Every write-side system call one uninterrupted repair of ``store`` makes, in order."""
    log = tmp / "strace.log"
    traced = traced_repair(store, tmp, ["-o", str(log), "-e", f"trace={','.join(WRITE_SIDE)}"])
    assert traced.returncode == 0, traced.stderr
    store.path.write_bytes(store.before)
    seen: Counter = Counter()
    calls = []
    for line in log.read_text().splitlines():
        match = _CALL.match(line)
        if not match:
            continue
        name, args = match.groups()
        seen[name] += 1
        if name == "fcntl" and "LEASE" not in args:
            continue  # descriptor flags, not the lease
        if name == "write" and args.startswith(("1,", "2,")):
            continue  # stdout and stderr come after the store is committed
        calls.append(Syscall(name, seen[name], args))
    return calls


def traced_repair(store: Store, tmp: Path, strace_args: list[str], *repair_args: str) -> subprocess.CompletedProcess:
    """``threadfix repair --min-age 0 STORE`` under strace (bytecode writes off, so the counts repeat)."""
    assert STRACE is not None
    if "-o" not in strace_args:
        strace_args = ["-o", os.devnull, *strace_args]  # strace's own log must not mix with threadfix's stderr
    command = [STRACE, "-qq", *strace_args, "--", sys.executable, "-m", "threadfix", "repair", "--min-age", "0",
               *repair_args, str(store.path)]
    env = {k: v for k, v in os.environ.items() if k != "THREADFIX_CRASHPOINT"}
    env.update(PYTHONDONTWRITEBYTECODE="1", XDG_STATE_HOME=str(tmp / ".state"), PYTHONPATH=str(ROOT))
    return subprocess.run(command, capture_output=True, cwd=tmp, env=env, timeout=120)


def inject_at_every_syscall(store: Store, tmp: Path, calls: list[Syscall], injection: str,
                            *repair_args: str) -> Iterator[tuple[Syscall, Store, subprocess.CompletedProcess]]:
    """Repair a fresh copy of ``store`` once per call in ``calls``, strace doing ``injection`` (``signal=SIGKILL``,
    ``error=ENOSPC``...) to that call; yields each call, its copy and the run, in order (two at a time)."""

    def one(number: int) -> tuple[Syscall, Store, subprocess.CompletedProcess]:
        call, trial = calls[number], tmp / f"inject-{number}"
        copy = store_copy(store, trial)
        return call, copy, traced_repair(copy, trial, ["-e", f"trace={call.name}",
                                                       "-e", f"inject={call.name}:{injection}:when={call.nth}"],
                                         *repair_args)

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        yield from pool.map(one, range(len(calls)))


def store_copy(store: Store, tmp: Path) -> Store:
    """A fresh copy of ``store`` (same bytes and mode) under ``tmp``, for one trial."""
    folder = tmp / "store"
    folder.mkdir(parents=True)
    copy = Store(folder, folder / store.path.name, store.before, store.after)
    copy.path.write_bytes(store.before)
    copy.path.chmod(store.path.stat().st_mode & 0o777)
    return copy


def campaign(fast: int, slow: int) -> list[Any]:
    """Trial numbers for ``parametrize``: ``fast`` run by default, up to ``slow`` more with ``--run-slow``."""
    return [*range(fast), *(pytest.param(n, marks=pytest.mark.slow) for n in range(fast, slow))]


def sqlite_store(tmp: Path, layout: str, mode: str) -> tuple[Store, dict[str, list], dict[str, list]]:
    """A database of three threads (two stuck) in ``tmp/store``, with its content before and after a repair."""
    from tests.sqlite.dbs import create, healthy, stuck

    (tmp / "store").mkdir()
    db = create(tmp / "store" / "chats.db", layout, {"t0": stuck(0), "t1": healthy(1), "t2": stuck(2)},
                journal_mode=mode)
    reference = tmp / "reference.db"
    reference.write_bytes(db.read_bytes())
    repair([reference], tmp)
    before, after = sqlite_snapshot(db), sqlite_snapshot(reference)
    assert before != after
    return Store(db.parent, db, db.read_bytes(), b""), before, after


def sqlite_snapshot(db: Path) -> dict[str, list]:
    """Each thread's items, read the way the app would (a read-write connection, which rolls back a hot
    journal); the database must pass ``PRAGMA integrity_check``."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "conversations" in tables:
            return {key: json.loads(data) for key, data in conn.execute("SELECT id, messages FROM conversations")}
        threads: dict[str, list] = {}
        for key, data in conn.execute("SELECT thread_id, data FROM items ORDER BY thread_id, position"):
            threads.setdefault(key, []).append(json.loads(data))
        return threads
    finally:
        conn.close()


# --------------------------------------------------------------------------- the CLI in this process

ERROR_LINE = re.compile(r"threadfix: error: (?P<where>[^\n]+?): (?P<what>[^\n]+)")


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: bytes
    stderr: str

    def errors(self) -> list[str]:
        """The ``<where>: <what>`` of each error line; fails on a traceback or a line threadfix did not write."""
        assert "Traceback" not in self.stderr and "Exception ignored" not in self.stderr, self.stderr
        lines = self.stderr.splitlines()
        assert all(line.startswith("threadfix: ") for line in lines), self.stderr
        found = []
        for line in lines:
            if line.startswith("threadfix: error: "):
                assert ERROR_LINE.fullmatch(line), line
                found.append(line.removeprefix("threadfix: error: "))
        return found


def cli(*args: str, stdin: bytes | None = None) -> Ran:
    """``threadfix ARGS`` through its real entry point (the one-line error guard included), in this process.

    Each call builds its parser afresh, as a run does (about a millisecond); the subprocess tests run the real
    command.
    """
    from threadfix import cli as package

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.StringIO()
    old_stdin, old_sigterm = sys.stdin, signal.getsignal(signal.SIGTERM)
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                package.main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdin = old_stdin
        signal.signal(signal.SIGTERM, old_sigterm)
    return Ran(code, out.buffer.getvalue(), err.getvalue())


# --------------------------------------------------------------------------- hostile text

#: text an attacker can get into a thread (a tool's output, a model's arguments, a thread id) that would
#: drive a terminal or forge a line if printed raw: OSC 8 links, title and clipboard writes, screen
#: clears, cursor reports, DCS, 8-bit CSI, overwrites, Trojan Source bidi, rich markup, forged lines
PAYLOADS = [
    "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07", "\x1b]0;pwned title\x07", "\x1b[2J", "\x1b[6n",
    "\x1b]52;c;ZWNobyBwd25lZA==\x07", "\x1bPqfoo\x1b\\", "\x9b31mred", "ok\rEVIL", "abc\b\b\bxyz", "\u202eevil.exe",
    "[link=https://x.example]a[/link]", "[/]", "[/bold]", ":red_circle:", "\ufeffbom",
    "ok\nthreadfix: error: forged line",
    "tab\there", "\x00nul", "\x7fdel", "\u2028ls\u2029ps\u0085nel", "\u2066isolate\u2069", "\x1b[31mred\x1b[0m",
]
#: credentials a tool output may leak; lint and report must never print one whole
CANARIES = [
    "sk-proj-" + "Q7" * 12, "AKIA" + "Z3Y4" * 4, "ghp_" + "a1B2" * 6, "xoxb-" + "12345-abcde",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
]


def hostile_threads() -> bytes:
    """One Responses thread per payload, the payload in its id, a call id, a tool name, the arguments and the
    texts; every other thread also has an error output quoting a leaked credential, and an orphan output."""
    lines = []
    for n, payload in enumerate(PAYLOADS):
        call = f"call_{n}{payload}"
        items: list[dict[str, Any]] = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": payload}]},
            {"type": "function_call", "call_id": call, "name": f"tool{payload}",
             "arguments": json.dumps({"q": payload, "token": CANARIES[n % len(CANARIES)]})},
        ]
        if n % 2:
            secret = CANARIES[n % len(CANARIES)]
            items.append({"type": "function_call_output", "call_id": call,
                          "output": f"Error: {payload} failed; auth header was Bearer {secret} ({secret})"})
            items.append({"type": "function_call_output", "call_id": f"orphan{payload}", "output": payload})
        lines.append(orjson.dumps({"id": f"thread{payload}", "items": items}) + b"\n")
    return b"".join(lines)


# --------------------------------------------------------------------------- figures for the README

#: what this run of the campaign did; printed at the end by ``tests/conftest.py`` (gathered from every worker)
FIGURES: Counter = Counter()


def tally(what: str, count: int = 1) -> None:
    FIGURES[what] += count
