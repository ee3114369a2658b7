#!/usr/bin/env python3
"""Measure threadfix against the floors on the same store, in the same run.

Absolute speeds move from machine to machine and from run to run (2-core machines are noisy), so
threadfix's targets are ratios to hand-written floor loops (floors.py) measured on the same data
moments apart. The runner writes a store with generate.py (or reuses one with --data), then runs
every case --repeat times, each time in a fresh process (so imports and peak RSS belong to that
case), rotating the order every round, and reports medians:

  seconds     wall time of the whole process, start-up included, for floors and threadfix alike
  MB/s        JSONL payload bytes / seconds, whatever the storage, so rows compare like for like
  threads/s   threads in the store / seconds
  peak RSS    the process's own peak (see measure.py)
  vs floor    the floor's seconds / this case's seconds: 1.0 = as fast as the floor

Then it checks lint's dangling-call findings and repair's output against the generator's ground
truth, and prints the targets with PASS / FAIL (and, as "info", figures that have no target).

  python benchmarks/run.py --mb 5                    # quick
  python benchmarks/run.py                           # 50 MB, 3 rounds
  python benchmarks/run.py --mb 1000 --json results.json
  python benchmarks/run.py --data DIR --cases lint_jsonl,repair_jsonl

Each case is one line of CASES; its command line is a parameter there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

from floors import ITEMS_DB_NAME, compare, dangling_in  # benchmarks/ is on sys.path: it is the script's directory

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
MB = 1_000_000
REPAIR_OUT = ".repair-out.jsonl"
REPAIR_OUT_DB = ".repair-out.sqlite"
REPAIR_WORK = ".repair-work"
TINY = "tiny.jsonl"
STACK_IMPORTS = "import argparse, msgspec, orjson"

# --------------------------------------------------------------------------------------- cases
FLOOR, THREADFIX, PYTHON = "floor", "threadfix", "python"


@dataclass(frozen=True, slots=True)
class Case:
    """One measured command.

    ``args`` follow ``python floors.py --one``, ``python -m threadfix`` or ``python``, by ``kind``;
    {jsonl}, {threads_db}, {items_db}, {data}, {out} and {out_db} stand for the store's paths.
    ``against``: the cases whose summed median seconds this one's are compared with.
    ``check``: how its output is checked (lint, report, repair), ``writes``: runs last in a round.
    ``per_store``: False for start-up cases, whose figures do not depend on the store: each timed run of
    them follows an untimed one (see :func:`run_case`). ``fresh``: see the field.
    """

    name: str
    kind: str
    args: tuple[str, ...]
    what: str
    against: tuple[str, ...] = ()
    check: str = ""
    writes: bool = False
    per_store: bool = True
    #: a folder (a key of the paths) copied to {work}, untimed, before each run: the case repairs it in place
    fresh: str = ""


ONE = ("--jobs", "1")  # single-process cases compare with single-process floors
LINT = ("lint", "--format", "json", "--exit-zero")
REPORT = ("report", "--format", "json")
#: the read phase every command shares: read, decode, index, find what needs repair; nothing written
SCAN = ("repair", "--dry-run", "--min-age", "0", "--format", "json")
CASES: tuple[Case, ...] = (
    Case("floor_jsonl", FLOOR, ("jsonl_orjson",), "(i) JSONL lines + orjson.loads + minimal scan"),
    Case("floor_jsonl_2proc", FLOOR, ("jsonl_orjson_2proc",),
         "(i) in 2 processes, half the file each: what a second process gains on this machine", ("floor_jsonl",)),
    Case("floor_threads", FLOOR, ("sqlite_threads_bytes",), "(ii) threads.sqlite, CAST(items AS BLOB) + orjson"),
    Case("floor_items", FLOOR, ("sqlite_items_extract",), "(iii) items.sqlite, type/call_id extracted in SQL"),
    Case("floor_copy", FLOOR, ("jsonl_copy",), "(iv) copy the JSONL bytes + fsync", writes=True),
    Case("python_bare", PYTHON, ("-c", "pass"), "python -c pass", per_store=False),
    # the libraries a small run imports before its own code: the parser, and the two that decode and encode JSON
    Case("python_imports", PYTHON, ("-c", STACK_IMPORTS), f"python -c '{STACK_IMPORTS}'", per_store=False),
    Case("help", THREADFIX, ("--help",), "threadfix --help: start-up", ("python_imports",), per_store=False),
    Case("version", THREADFIX, ("--version",), "threadfix --version: start-up", ("python_imports",), per_store=False),
    Case("tiny_repair", THREADFIX, (*SCAN, "{tiny}"), "repair --dry-run of a 3-thread file: a small run",
         ("python_imports",), per_store=False),
    Case("tiny_lint", THREADFIX, (*LINT, "{tiny}"), "lint of a 3-thread file: a small run", ("python_imports",),
         per_store=False),
    Case("scan_jsonl", THREADFIX, (*ONE, *SCAN, "{jsonl}"), "read phase (repair --dry-run), JSONL",
         ("floor_jsonl",), "scan"),
    Case("scan_threads", THREADFIX, (*ONE, *SCAN, "{threads_db}"), "read phase, SQLite row per thread",
         ("floor_threads",), "scan"),
    Case("scan_items", THREADFIX, (*ONE, *SCAN, "{items_db}"), "read phase, SQLite row per item",
         ("floor_items",), "scan"),
    Case("lint_jsonl", THREADFIX, (*ONE, *LINT, "{jsonl}"), "lint, every rule, JSONL", ("floor_jsonl",), "lint"),
    Case("lint_threads", THREADFIX, (*ONE, *LINT, "{threads_db}"), "lint, SQLite row per thread",
         ("floor_threads",), "lint"),
    Case("lint_items", THREADFIX, (*ONE, *LINT, "{items_db}"), "lint, SQLite row per item", ("floor_items",),
         "lint"),
    Case("report_jsonl", THREADFIX, (*ONE, *REPORT, "{jsonl}"), "report, JSONL", ("floor_jsonl",), "report"),
    Case("report_threads", THREADFIX, (*ONE, *REPORT, "{threads_db}"), "report, SQLite row per thread",
         ("floor_threads",), "report"),
    Case("report_items", THREADFIX, (*ONE, *REPORT, "{items_db}"), "report, SQLite row per item", ("floor_items",),
         "report"),
    Case("repair_jsonl", THREADFIX, (*ONE, "repair", "--min-age", "0", "-o", "{out}", "{jsonl}"),
         "repair JSONL to a new file", ("floor_jsonl", "floor_copy"), "repair", writes=True),
    Case("repair_threads", THREADFIX, (*ONE, "repair", "--min-age", "0", "-o", "{out_db}", "{threads_db}"),
         "repair SQLite row per thread to a new database", ("floor_threads",), "repair_db", writes=True),
    Case("repair_items", THREADFIX, (*ONE, "repair", "--min-age", "0", "-o", "{out_db}", "{items_db}"),
         "repair SQLite row per item to a new database", ("floor_items",), "repair_db", writes=True),
    Case("scan_jsonl_jobs2", THREADFIX, ("--jobs", "2", *SCAN, "{jsonl}"), "read phase, --jobs 2 (vs --jobs 1)",
         ("scan_jsonl",), "scan"),
    Case("lint_jsonl_jobs2", THREADFIX, ("--jobs", "2", *LINT, "{jsonl}"), "lint, JSONL, --jobs 2 (vs --jobs 1)",
         ("lint_jsonl",), "lint"),
    Case("report_jsonl_jobs2", THREADFIX, ("--jobs", "2", *REPORT, "{jsonl}"), "report, JSONL, --jobs 2 (vs 1)",
         ("report_jsonl",), "report"),
    Case("scan_threads_jobs2", THREADFIX, ("--jobs", "2", *SCAN, "{threads_db}"),
         "read phase, SQLite row per thread, --jobs 2 (vs 1)", ("scan_threads",), "scan"),
    Case("scan_items_jobs2", THREADFIX, ("--jobs", "2", *SCAN, "{items_db}"),
         "read phase, SQLite row per item, --jobs 2 (vs 1)", ("scan_items",), "scan"),
    Case("lint_items_jobs2", THREADFIX, ("--jobs", "2", *LINT, "{items_db}"),
         "lint, SQLite row per item, --jobs 2 (vs 1)", ("lint_items",), "lint"),
    Case("lint_jsonl_auto", THREADFIX, (*LINT, "{jsonl}"), "lint, JSONL, --jobs by input size (vs --jobs 1)",
         ("lint_jsonl",), "lint"),
    Case("repair_items_jobs2", THREADFIX, ("--jobs", "2", "repair", "--min-age", "0", "-o", "{out_db}", "{items_db}"),
         "repair SQLite row per item to a new database, --jobs 2 (vs 1)", ("repair_items",), "repair_db", writes=True),
    Case("repair_jsonl_jobs2", THREADFIX, ("--jobs", "2", "repair", "--min-age", "0", "-o", "{out}", "{jsonl}"),
         "repair JSONL to a new file, --jobs 2 (vs 1)", ("repair_jsonl",), "repair", writes=True),
)
#: the dialects the stdlib script is measured against, by the short name their paths use: {<short>_jsonl},
#: {<short>_folder} (generate.write_dialects writes them)
DIALECTS = {"responses": "openai-responses", "chat": "openai-chat", "anthropic": "anthropic",
            "langchain": "langchain", "pydantic": "pydantic-ai", "gemini": "gemini", "bedrock": "bedrock",
            "aisdk": "ai-sdk"}
STDLIB = str(HERE / "stdlib_repair.py")
#: the script answers every open call; threadfix leaves a call its format marks as waiting (a pydantic-ai history
#: that ends on calls) unless told to answer it, so it is told, and both do the same work
ANSWER_ALL = ("--answer-waiting",)


def dialect_cases() -> tuple[Case, ...]:
    """Per dialect: the stdlib script and threadfix repair (--jobs left to its default) over the same threads, as
    JSONL to a new file and as a folder of small files repaired in place; each threadfix case beside the script."""
    cases = []
    for short, name in DIALECTS.items():
        jsonl, folder = "{" + short + "_jsonl}", short + "_folder"
        cases += [
            Case(f"stdlib_{short}", PYTHON, (STDLIB, name, jsonl, "{out}"),
                 f"the stdlib json script, {name} JSONL to a new file", check=f"dialect:{name}", writes=True),
            Case(f"repair_{short}", THREADFIX, ("repair", "--min-age", "0", *ANSWER_ALL, "-o", "{out}", jsonl),
                 f"repair {name} JSONL to a new file (vs the stdlib script)", (f"stdlib_{short}",),
                 f"dialect:{name}", writes=True),
            Case(f"repair_{short}_jobs1", THREADFIX,
                 ("--jobs", "1", "repair", "--min-age", "0", *ANSWER_ALL, "-o", "{out}", jsonl),
                 f"repair {name} JSONL to a new file in one process (vs --jobs by input size)", (f"repair_{short}",),
                 f"dialect:{name}", writes=True),
            Case(f"stdlib_{short}_folder", PYTHON, (STDLIB, name, "{work}"),
                 f"the stdlib json script, a folder of {name} files, in place", check=f"folder:{name}", writes=True,
                 fresh=folder),
            Case(f"repair_{short}_folder", THREADFIX, ("repair", "--min-age", "0", *ANSWER_ALL, "{work}"),
                 f"repair a folder of {name} files in place (vs the stdlib script)", (f"stdlib_{short}_folder",),
                 f"folder:{name}", writes=True, fresh=folder),
        ]
    return tuple(cases)


CASES += dialect_cases()
CASE_BY_NAME = {c.name: c for c in CASES}


# ------------------------------------------------------------------------------ output checks
DANGLING_CODES: frozenset[str] = frozenset({"TF001"})  # lint's dangling-call rule


def dangling_from_lint_json(stdout: bytes) -> set[str]:
    """Call ids of the dangling-call findings in `threadfix lint --format json` output.

    Assumed (adjust here, and only here, when lint's JSON settles): a JSON array of findings, an
    object holding them under "findings", or JSON Lines; a finding is an object with "code",
    "call_id" and "thread" or "address"; it is about a dangling call when its code is in
    DANGLING_CODES or its code, rule or name says "dangling".
    """
    try:
        doc = json.loads(stdout or b"[]")
    except ValueError:
        doc = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    findings = doc.get("findings", []) if isinstance(doc, dict) else doc
    found = set()
    for f in findings:
        if not isinstance(f, dict) or not f.get("call_id"):
            continue
        labels = " ".join(str(f.get(k, "")) for k in ("code", "rule", "name")).lower()
        if f.get("code") in DANGLING_CODES or "dangling" in labels:
            found.add(str(f["call_id"]))
    return found


def dangling_from_repair_json(stdout: bytes) -> set[str]:
    """Call ids repair would answer with an inserted output, from `repair --dry-run --format json`."""
    doc = json.loads(stdout)
    return {edit["call_id"] for thread in doc.get("threads", []) for edit in thread.get("edits", [])
            if edit.get("action") == "insert_output"}


def check_scan(stdout: bytes, manifest: dict) -> str:
    try:
        found = dangling_from_repair_json(stdout)
    except (ValueError, AttributeError, KeyError, TypeError) as e:
        return f"repair output is not as expected ({type(e).__name__}: {e})"
    return compare(found, {d["call_id"] for d in manifest["dangling"]})


def check_lint(stdout: bytes, manifest: dict) -> str:
    try:
        found = dangling_from_lint_json(stdout)
    except ValueError as e:
        return f"lint output is not JSON ({e})"
    return compare(found, {d["call_id"] for d in manifest["dangling"]})


# report's "totals" keys -> the manifest's "counts" keys
REPORT_TOTALS = {"threads": "threads", "calls": "function_calls", "outputs": "function_call_outputs",
                 "error_outputs": "error_outputs", "dangling_calls": "dangling_calls", "stuck_threads": "stuck_threads"}


def counts_from_report_json(stdout: bytes) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """The totals and the error outputs per kind x tool in `threadfix report --format json` output.

    Assumed (adjust here, and only here, when report's JSON changes): {"totals": {...}, "kinds":
    [{"kind", "error_outputs", "dangling_calls", "tools": {tool: n}}, ...]}. A kind's tools are
    counted as error outputs only when it has no dangling calls (those count into "tools" too).
    """
    doc = json.loads(stdout)
    kinds = {k["kind"]: k.get("tools", {}) for k in doc.get("kinds", [])
             if k.get("error_outputs") and not k.get("dangling_calls")}
    return doc.get("totals", {}), kinds


def check_report(stdout: bytes, manifest: dict) -> str:
    """Report's totals and failures by kind x tool against the manifest (kinds as far as listed)."""
    try:
        totals, kinds = counts_from_report_json(stdout)
    except (ValueError, AttributeError, KeyError, TypeError) as e:
        return f"report output is not as expected ({type(e).__name__}: {e})"
    counts, expected = manifest["counts"], manifest["errors_by_kind_tool"]
    diffs = [f"{key} {totals[key]} ≠ {counts[ours]}" for key, ours in REPORT_TOTALS.items()
             if key in totals and totals[key] != counts[ours]]
    diffs += [f"{kind}×{tool} {n} ≠ {expected.get(kind, {}).get(tool, 0)}" for kind, tools in kinds.items()
              for tool, n in tools.items() if n != expected.get(kind, {}).get(tool, 0)]
    if not totals:
        diffs.append("no totals")
    return ("; ".join(diffs[:4]) + (f" (+{len(diffs) - 4} more)" if len(diffs) > 4 else "")) or "ok"


def _thread_id(line: bytes) -> str:
    """The id of a generated JSONL line without parsing it: generate.py writes "id" first."""
    start = line.find(b'"id":"') + 6
    return line[start:line.find(b'"', start)].decode()


def check_repair(source: Path, repaired: Path, manifest: dict) -> str:
    """Every thread still there, in order; clean lines byte for byte; stuck ones with no dangling
    call left and nothing lost (one item more per dangling call)."""
    import orjson

    if not repaired.exists():
        return f"no output file {repaired.name}"
    per_thread: dict[str, int] = {}
    for d in manifest["dangling"]:
        per_thread[d["thread"]] = per_thread.get(d["thread"], 0) + 1
    problems = {"lines missing or extra": 0, "clean lines changed": 0, "stuck threads not repaired": 0,
                "repaired threads with items lost": 0}
    with open(source, "rb") as a, open(repaired, "rb") as b:
        for old, new in zip_longest(a, b):
            if old is None or new is None:
                problems["lines missing or extra"] += 1
                continue
            expected_new = per_thread.get(_thread_id(old), 0)
            if not expected_new:
                problems["clean lines changed"] += old != new
                continue
            items, left = orjson.loads(new)["items"], set()
            dangling_in(items, left)
            problems["stuck threads not repaired"] += bool(left)
            problems["repaired threads with items lost"] += len(items) < len(orjson.loads(old)["items"]) + expected_new
    return "; ".join(f"{label}: {n}" for label, n in problems.items() if n) or "ok"


def check_repair_db(source: Path, repaired: Path, manifest: dict) -> str:
    """No dangling call left in the repaired database, and one item more per dangling call (none lost)."""
    import orjson

    if not repaired.exists():
        return f"no output database {repaired.name}"
    items_per_row = source.name == ITEMS_DB_NAME

    def scan(path: Path) -> tuple[int, set[str]]:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        count, left, threads = 0, set(), {}
        try:
            if items_per_row:
                for thread_id, data in con.execute("SELECT thread_id, CAST(data AS BLOB) FROM items ORDER BY rowid"):
                    threads.setdefault(thread_id, []).append(orjson.loads(data))
                    count += 1
                for items in threads.values():
                    dangling_in(items, left)
            else:
                for (data,) in con.execute("SELECT CAST(items AS BLOB) FROM threads"):
                    items = orjson.loads(data)
                    count += len(items)
                    dangling_in(items, left)
        finally:
            con.close()
        return count, left

    before, _ = scan(source)
    after, left = scan(repaired)
    problems = {"dangling calls left": len(left), "items lost": max(0, before + len(manifest["dangling"]) - after),
                "items more than outputs inserted": max(0, after - before - len(manifest["dangling"]))}
    return "; ".join(f"{label}: {n}" for label, n in problems.items() if n) or "ok"


def dialect_threads(path: Path) -> Iterator[tuple[str, list]]:
    """(name, messages) of every thread of a dialect store generate.write_dialects wrote: a JSONL file of
    ``{"id", "messages"}`` lines, or a folder of one JSON document (the message list) per file."""
    import orjson

    if path.is_dir():
        for file in sorted(path.iterdir()):
            yield file.name, orjson.loads(file.read_bytes())
        return
    with open(path, "rb") as f:
        for line in f:
            thread = orjson.loads(line)
            yield thread["id"], thread["messages"]


def _unanswered(dialect, messages: list) -> tuple[int, int]:
    """(calls no output answers, outputs) of one thread, as threadfix's dialect reads it."""
    index = dialect.index(messages)
    answered = {output.call_id for output in index.outputs}
    return sum(call.call_id not in answered for call in index.calls), len(index.outputs)


def check_dialect(name: str, source: Path, repaired: Path) -> str:
    """A repair of a dialect store (threadfix's or the stdlib script's), read with threadfix's own dialect: every
    thread still there, in order; no call left without an output; one output more per call that had none (nothing
    lost, nothing answered twice); and nothing the provider's rules, as the dialect checks them, refuse."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from threadfix import dialects

    if not repaired.exists():
        return f"no output {repaired.name}"
    dialect = dialects.get(name)
    problems = {"threads missing, extra or out of order": 0, "calls left unanswered": 0,
                "threads with outputs lost or doubled": 0, "threads the provider would refuse": 0}
    for before, after in zip_longest(dialect_threads(source), dialect_threads(repaired)):
        if before is None or after is None or before[0] != after[0]:
            problems["threads missing, extra or out of order"] += 1
            continue
        open_before, outputs_before = _unanswered(dialect, before[1])
        open_after, outputs_after = _unanswered(dialect, after[1])
        problems["calls left unanswered"] += open_after
        problems["threads with outputs lost or doubled"] += outputs_after != outputs_before + open_before
        problems["threads the provider would refuse"] += bool(open_before and dialect.check(after[1]))
    return "; ".join(f"{label}: {n}" for label, n in problems.items() if n) or "ok"


def check_dialect_case(case: Case, paths: dict[str, str], manifest: dict) -> str:
    """check_dialect for a ``dialect:NAME`` (JSONL to {out}) or ``folder:NAME`` (a folder in place) case."""
    how, _, name = case.check.partition(":")
    if how not in ("dialect", "folder"):
        return "ok"
    short = next(s for s, n in DIALECTS.items() if n == name)
    if how == "folder":
        return check_dialect(name, Path(paths[f"{short}_folder"]), Path(paths["work"]))
    return check_dialect(name, Path(paths[f"{short}_jsonl"]), Path(paths["out"]))


# ---------------------------------------------------------------------------------- measuring
@dataclass(slots=True)
class Outcome:
    """The runs of one case, and why it stopped if it did."""

    case: Case
    runs: list[dict] = field(default_factory=list)
    skipped: str = ""
    check: str = ""

    def median(self, key: str = "wall") -> float | None:
        values = [r[key] for r in self.runs if key in r]
        return statistics.median(values) if values else None


#: where the cases' bytecode is cached, outside the repository (set once the scratch folder exists)
PYCACHE: list[str] = []


def child_env() -> dict[str, str]:
    """The environment of every case: the working tree's threadfix first on the path, no colour, and its
    bytecode cached as an installed package's is (a PYTHONDONTWRITEBYTECODE left in the environment would
    have every case compile threadfix again, which no installed threadfix does)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["NO_COLOR"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if PYCACHE:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE[0]
    return env


class _Unfilled(dict):
    """Placeholders shown as themselves (``--list`` has no store to fill them from)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def command(case: Case, paths: dict[str, str]) -> list[str]:
    """The case's full command line, its placeholders filled in."""
    args = [a.format_map(paths) for a in case.args]
    if case.kind == FLOOR:
        return [sys.executable, str(HERE / "floors.py"), paths["data"], "--one", *args]
    if case.kind == THREADFIX:
        return [sys.executable, "-m", "threadfix", *args]
    return [sys.executable, *args]


def spawn(cmd: list[str], scratch: Path, timeout: float) -> tuple[dict, bytes, bytes]:
    """Run cmd through measure.py; return its figures, stdout and stderr."""
    out, err = scratch / "stdout", scratch / "stderr"
    helper = [sys.executable, str(HERE / "measure.py"), "--timeout", str(timeout), "--stdout", str(out),
              "--stderr", str(err), "--", *cmd]
    p = subprocess.run(helper, capture_output=True, env=child_env(), cwd=scratch, timeout=timeout + 60)
    try:
        figures = json.loads(p.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        figures = {"error": (p.stderr.decode().strip().splitlines() or ["measure.py failed"])[-1]}
    read = lambda path: path.read_bytes() if path.exists() else b""  # noqa: E731
    return figures, read(out), read(err)


def failure(figures: dict, stderr: bytes) -> str:
    """Why a run does not count, or '' if it does (exit status 0 or 1)."""
    if "error" in figures:
        return figures["error"]
    if figures["timed_out"]:
        return "timed out"
    if figures["rc"] not in (0, 1):
        last = (stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        return f"exit {figures['rc']}: {last[:160]}"
    return ""


def threadfix_missing(scratch: Path) -> str:
    """Why `python -m threadfix` cannot run here, or '' if it can."""
    probe = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('threadfix.__main__') else 3)"
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=child_env(), cwd=scratch)
    if p.returncode == 0:
        return ""
    if p.returncode == 3:
        return "threadfix has no __main__ module (python -m threadfix)"
    return "threadfix is not importable: " + (p.stderr.decode().strip().splitlines() or ["?"])[-1][:160]


#: the store file each floor reads (a threadfix case names its own in its arguments)
FLOOR_INPUTS = {"jsonl_orjson": "jsonl", "jsonl_orjson_2proc": "jsonl", "sqlite_threads_bytes": "threads_db",
                "sqlite_items_extract": "items_db", "jsonl_copy": "jsonl"}
STORE_FILES = ("jsonl", "threads_db", "items_db")
DIALECT_FILES = tuple(f"{short}_jsonl" for short in DIALECTS)


def inputs(case: Case) -> list[str]:
    """The store files (keys of the paths) a case reads."""
    if case.kind == FLOOR:
        return [FLOOR_INPUTS[case.args[0]]]
    if case.fresh:
        return [case.fresh]
    return [key for key in STORE_FILES + DIALECT_FILES if any("{" + key + "}" in arg for arg in case.args)]


def warm(files: list[str]) -> None:
    """Read the files once, untimed, so that every case starts from a warm page cache: the three stores
    together can be larger than a small machine's cache, and a case would otherwise read part of its file
    from disk or not by the order it ran in (the floors of the performance reference are measured warm)."""
    for name in files:
        for path in sorted(Path(name).iterdir()) if os.path.isdir(name) else [Path(name)]:
            with open(path, "rb", buffering=0) as f:
                while f.read(8 << 20):
                    pass


def round_order(cases: list[Case], r: int) -> list[Case]:
    """Each case beside what it is compared with (:func:`families`); the families rotated by the round number and
    the whole order reversed every other round, so that a pair runs in both orders; the writing cases last (so
    their writeback can't slow reads)."""
    def turned(xs: list[list[Case]]) -> list[Case]:
        k = r % len(xs) if xs else 0
        order = [case for family in xs[k:] + xs[:k] for case in family]
        return order[::-1] if r % 2 else order

    return turned(families([c for c in cases if not c.writes])) + turned(families([c for c in cases if c.writes]))


def families(cases: list[Case]) -> list[list[Case]]:
    """``cases`` as families: a case with nothing to be compared with among them, then, depth first, the cases
    compared with it (with the last of what they are compared with), so that every pair runs back to back or
    nearly, in the order given."""
    names = {c.name for c in cases}
    children: dict[str, list[Case]] = {}
    roots = []
    for case in cases:
        anchor = next((b for b in reversed(case.against) if b in names), None)
        if anchor is None:
            roots.append(case)
        else:
            children.setdefault(anchor, []).append(case)

    def family(case: Case) -> list[Case]:
        return [case] + [member for child in children.get(case.name, []) for member in family(child)]

    return [family(root) for root in roots]


def run_case(o: Outcome, paths: dict[str, str], scratch: Path, manifest: dict, timeout: float) -> None:
    """One run of one case: measure, record, and check the output the first time."""
    out_file, out_db = Path(paths["out"]), Path(paths["out_db"])
    out_file.unlink(missing_ok=True)
    out_db.unlink(missing_ok=True)
    work = Path(paths["work"])
    if o.case.fresh:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(paths[o.case.fresh], work)
    os.sync()  # no writeback left from the previous case
    warm([str(work)] if o.case.fresh else [paths[key] for key in inputs(o.case)])
    if not o.case.per_store:
        # start-up is measured with the interpreter's and threadfix's files in the page cache, as on any machine
        # that runs threadfix: reading a store larger than the cache has just evicted them
        spawn(command(o.case, paths), scratch, timeout)
    figures, stdout, stderr = spawn(command(o.case, paths), scratch, timeout)
    why = failure(figures, stderr)
    if not why and o.case.kind == FLOOR:
        try:
            floor = json.loads(stdout)
            figures["loop"], o.check = floor["seconds"], o.check or floor["check"]
        except (ValueError, KeyError):
            why = "floors.py printed no result"
    if why:
        o.skipped = why
    else:
        o.runs.append(figures)
        if not o.check:
            o.check = {"scan": lambda: check_scan(stdout, manifest),
                       "lint": lambda: check_lint(stdout, manifest),
                       "report": lambda: check_report(stdout, manifest),
                       "repair": lambda: check_repair(Path(paths["jsonl"]), out_file, manifest),
                       "repair_db": lambda: check_repair_db(Path(paths[inputs(o.case)[0]]), out_db, manifest),
                       }.get(o.case.check, lambda: check_dialect_case(o.case, paths, manifest))()
    out_file.unlink(missing_ok=True)
    out_db.unlink(missing_ok=True)
    shutil.rmtree(work, ignore_errors=True)


def measure_all(cases: list[Case], data: Path, repeat: int, timeout: float) -> dict[str, Outcome]:
    """Every case, ``repeat`` rounds, each run a fresh process; a failing case is skipped from then on."""
    manifest = json.loads((data / "manifest.json").read_bytes())
    outcomes = {c.name: Outcome(c) for c in cases}
    scratch = Path(tempfile.mkdtemp(prefix="threadfix-bench-run-"))
    PYCACHE[:] = [str(scratch / "pycache")]
    paths = {"data": str(data), "jsonl": str(data / "threads.jsonl"), "threads_db": str(data / "threads.sqlite"),
             "items_db": str(data / "items.sqlite"), "out": str(data / REPAIR_OUT),
             "out_db": str(data / REPAIR_OUT_DB), "tiny": str(scratch / TINY), "work": str(data / REPAIR_WORK)}
    import generate

    for short, name in DIALECTS.items():
        paths[f"{short}_jsonl"] = str(generate.dialect_jsonl(data, name))
        paths[f"{short}_folder"] = str(generate.dialect_folder(data, name))
    with open(data / "threads.jsonl", "rb") as whole:
        (scratch / TINY).write_bytes(b"".join(whole.readline() for _ in range(3)))
    try:
        missing = threadfix_missing(scratch)
        for o in outcomes.values():
            if o.case.kind == THREADFIX and missing:
                o.skipped = missing
        if not missing:  # compile threadfix's bytecode before anything is timed
            spawn(command(CASE_BY_NAME["help"], paths), scratch, timeout)
        for r in range(repeat):
            for case in round_order(cases, r):
                o = outcomes[case.name]
                if o.skipped:
                    continue
                run_case(o, paths, scratch, manifest, timeout)
                last = o.runs[-1] if o.runs and not o.skipped else None
                note = (f"{last['wall']:8.3f} s  {last['peak_rss_kb'] / 1024:6.0f} MB  {o.check}" if last
                        else f"skipped: {o.skipped}")
                print(f"[{r + 1}/{repeat}] {case.name:18s} {note}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return outcomes


# ---------------------------------------------------------------------------------- reporting
def speed_ratio(o: Outcome, outcomes: dict[str, Outcome]) -> float | None:
    """How fast o is next to what it is compared with, round by round: the median over the rounds of their summed
    seconds in that round / o's (a round where one of them did not run is left out).

    Each case runs right beside what it is compared with (:func:`round_order`), so the pair sees the same
    machine: on a shared 2-vCPU machine speed drifts by a third over minutes, which moves two medians taken
    minutes apart by more than the gaps the targets are about.
    """
    base = _baselines(o, outcomes)
    if base is None:
        return None
    ratios = [sum(b.runs[r]["wall"] for b in base) / o.runs[r]["wall"]
              for r in range(len(o.runs)) if all(r < len(b.runs) for b in base)]
    return statistics.median(ratios) if ratios else None


def medians_ratio(o: Outcome, outcomes: dict[str, Outcome]) -> float | None:
    """The same as their summed median seconds / o's median (printed beside it: what earlier runs reported)."""
    base = _baselines(o, outcomes)
    if base is None or not all(b.runs for b in base):
        return None
    return sum(b.median() for b in base) / o.median()


def _baselines(o: Outcome, outcomes: dict[str, Outcome]) -> list[Outcome] | None:
    """What o is compared with, when o ran and all of them were measured in this run."""
    if not o.case.against or not o.runs or not all(n in outcomes for n in o.case.against):
        return None
    return [outcomes[n] for n in o.case.against]


def rows(outcomes: dict[str, Outcome], manifest: dict) -> list[dict]:
    """One dict of figures per case: what the table prints and --json writes."""
    out = []
    for o in outcomes.values():
        row: dict = {"case": o.case.name, "what": o.case.what, "command": list(o.case.args), "runs": o.runs}
        if o.skipped and not o.runs:
            row["skipped"] = o.skipped
            out.append(row)
            continue
        wall = o.median()
        row.update(seconds=wall, min=min(r["wall"] for r in o.runs), max=max(r["wall"] for r in o.runs),
                   peak_rss_mb=max(r["peak_rss_kb"] for r in o.runs) / 1024, check=o.check,
                   vs=speed_ratio(o, outcomes), vs_medians=medians_ratio(o, outcomes))
        if o.case.per_store:
            row.update(mb_per_s=manifest["jsonl_bytes"] / MB / wall, threads_per_s=manifest["counts"]["threads"] / wall)
        if o.case.kind == FLOOR:
            row["loop_seconds"] = o.median("loop")
        if o.skipped:  # it ran, then failed in a later round
            row["skipped"] = o.skipped
            row["check"] += f"; a later run failed: {o.skipped}"
        out.append(row)
    return out


def fmt(x: float | None, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def render_table(table: list[dict]) -> str:
    """Plain aligned text: numbers right-aligned, one case a line."""
    head = ("case", "seconds", "min–max", "loop s", "MB/s", "threads/s", "peak RSS MB", "vs floor", "check")
    lines = []
    for r in table:
        if "seconds" not in r:
            lines.append((r["case"], "skipped: " + r["skipped"]))
            continue
        lines.append((r["case"], fmt(r["seconds"], ".3f"), f"{r['min']:.3f}–{r['max']:.3f}",
                      fmt(r.get("loop_seconds"), ".3f"), fmt(r.get("mb_per_s"), ",.0f"),
                      fmt(r.get("threads_per_s"), ",.0f"), fmt(r["peak_rss_mb"], ".0f"), fmt(r["vs"], ".2f"),
                      r["check"]))
    full = [ln for ln in lines if len(ln) == len(head)]
    widths = [max(len(x[i]) for x in [head, *full]) for i in range(len(head) - 1)]
    text = []
    for ln in [head, *lines]:
        if len(ln) == 2:
            text.append(f"{ln[0]:<{widths[0]}}  {ln[1]}")
            continue
        cells = [ln[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(ln[1:-1], widths[1:], strict=True)] + [ln[-1]]
        text.append("  ".join(cells))
    return "\n".join(text)


def targets(table: list[dict], manifest: dict) -> list[dict]:
    """The performance targets, each PASS, FAIL or n/a, with the figures behind it; "info": figures without one."""
    by = {r["case"]: r for r in table if "seconds" in r}
    out = []

    def add(name: str, status: str, detail: str) -> None:
        out.append({"target": name, "status": status, "detail": detail})

    def ratio_target(name: str, cases: tuple[str, ...], goal: float | None) -> None:
        """PASS or FAIL against ``goal``; no goal: the figures alone ("info")."""
        got = [(c, by[c]["vs"]) for c in cases if c in by and by[c]["vs"] is not None]
        if not got:
            return add(name, "n/a", "not measured")
        worst = min(v for _, v in got)
        detail = ", ".join(f"{c} {v:.2f}× (of the medians {fmt(by[c]['vs_medians'], '.2f')}×; "
                           f"{_ex_startup(by, c, CASE_BY_NAME[c].against[0])})" for c, v in got)
        add(name, "info" if goal is None else "PASS" if worst >= goal else "FAIL", detail)

    ratio_target("JSONL read phase ≥ 0.85 × floor (i)", ("scan_jsonl",), 0.85)
    ratio_target("SQLite per-thread read phase ≥ 0.85 × floor (ii)", ("scan_threads",), 0.85)
    ratio_target("SQLite per-item read phase ≥ 0.85 × floor (iii)", ("scan_items",), 0.85)
    # lint's rules and report's classifier are work no floor loop does: lower targets than the read phase's
    ratio_target("lint with every rule, JSONL, ≥ 0.6 × floor (i)", ("lint_jsonl",), 0.6)
    ratio_target("report, every output classified, JSONL, ≥ 0.5 × floor (i)", ("report_jsonl",), 0.5)
    ratio_target("lint and report with all their work, SQLite, vs floors (ii), (iii)",
                 ("lint_threads", "report_threads", "lint_items", "report_items"), None)
    ratio_target("repair SQLite to a new database (a copy, then the changed threads), vs floors (ii), (iii)",
                 ("repair_threads", "repair_items"), None)
    big = manifest["jsonl_bytes"] >= 100 * MB
    spread = [(c, by[c]["vs"]) for c in ("scan_jsonl_jobs2", "lint_jsonl_jobs2", "report_jsonl_jobs2",
                                         "scan_threads_jobs2", "scan_items_jobs2", "lint_items_jobs2")
              if c in by and by[c]["vs"] is not None]
    if not spread:
        add("--jobs 2 ≥ 1.6 × --jobs 1 (inputs ≥ 100 MB)", "n/a", "not measured")
    else:
        worst = min(v for _, v in spread)
        add("--jobs 2 ≥ 1.6 × --jobs 1 (inputs ≥ 100 MB)", ("PASS" if worst >= 1.6 else "FAIL") if big else "n/a",
            ", ".join(f"{c} {v:.2f}×" for c, v in spread)
            + ("" if big else f" on {manifest['jsonl_bytes'] / MB:.0f} MB (< 100 MB)"))
    if "floor_jsonl_2proc" in by and by["floor_jsonl_2proc"]["vs"] is not None:
        # the same loop in two processes: what this machine gives a second process, --jobs 2's ceiling
        add("a second process on this machine", "info",
            f"floor (i) in 2 processes {by['floor_jsonl_2proc']['vs']:.2f}× floor (i) in one")
    if all(c in by for c in ("repair_jsonl_jobs2", "repair_jsonl", "floor_copy")):
        # writing the new file is the same I/O in any number of processes: one process's repair within
        # k × the copy floor can gain at most k from more of them
        bound = by["repair_jsonl"]["seconds"] / by["floor_copy"]["seconds"]
        add("repair -o with --jobs 2 (bounded by the write)", "info",
            f"{by['repair_jsonl_jobs2']['vs']:.2f}× --jobs 1; --jobs 1 takes {bound:.2f}× the copy floor (iv), "
            "the most any number of processes can gain")
    one = [(c.name, by[c.name]["vs"]) for c in CASES if c.name.endswith("_jobs1") and c.name in by
           and by[c.name]["vs"] is not None]
    if one:
        # vs = the default case's seconds / --jobs 1's: the default is "never slower" within 5 %
        slow = [f"{n} {1 / v:.2f}×" for n, v in one if v > 1 / 0.95]
        add("repair with --jobs by input size never slower than --jobs 1, every dialect",
            "FAIL" if slow else "PASS", ", ".join(slow) if slow else
            ", ".join(f"{n.removesuffix('_jobs1')} {1 / v:.2f}×" for n, v in one) + " (--jobs 1 time / default)")
    ratio_target("repair ≥ 1.5 × the stdlib json script, every dialect, JSONL and a folder of small files",
                 tuple(c.name for c in CASES if c.kind == THREADFIX and c.against and c.against[0].startswith("stdlib_")),
                 1.5)
    if "lint_jsonl_auto" in by and by["lint_jsonl_auto"]["vs"] is not None:
        auto = by["lint_jsonl_auto"]["vs"]
        # "never slower" within the noise of one run: 5 %
        add("--jobs by input size never slower than --jobs 1", "PASS" if auto >= 0.95 else "FAIL", f"{auto:.2f}×")
    tf = [r for r in table if "seconds" in r and CASE_BY_NAME[r["case"]].kind == THREADFIX]
    if tf:
        heavy = [f"{r['case']} {r['peak_rss_mb']:.0f} MB" for r in tf if r["peak_rss_mb"] > 100]
        worst = max(tf, key=lambda r: r["peak_rss_mb"])
        add("peak RSS ≤ 100 MB", "FAIL" if heavy else "PASS",
            ", ".join(heavy) if heavy else f"largest: {worst['case']} {worst['peak_rss_mb']:.0f} MB")
    else:
        add("peak RSS ≤ 100 MB", "n/a", "no threadfix case measured")
    small = [c for c in ("help", "version", "tiny_repair", "tiny_lint") if c in by]
    if small:
        slowest = max(by[c]["seconds"] for c in small) * 1000
        floor = by.get("python_imports", {}).get("seconds")
        add("start-up (--help and small runs) ≤ 100 ms", "PASS" if slowest <= 100 else "FAIL",
            ", ".join(f"{c} {by[c]['seconds'] * 1000:.0f} ms" for c in small)
            + (f"; {STACK_IMPORTS.replace('import ', 'importing ')}: {floor * 1000:.0f} ms" if floor else ""))
    else:
        add("start-up (--help and small runs) ≤ 100 ms", "n/a", "not measured")
    if all(c in by for c in ("repair_jsonl", "floor_jsonl", "floor_copy")):
        limit = by["floor_jsonl"]["seconds"] + 1.5 * by["floor_copy"]["seconds"]
        got = by["repair_jsonl"]["seconds"]
        add("repair JSONL ≤ floor (i) + 1.5 × copy floor", "PASS" if got <= limit else "FAIL",
            f"{got:.3f} s vs {limit:.3f} s")
    else:
        add("repair JSONL ≤ floor (i) + 1.5 × copy floor", "n/a", "not measured")
    return out


def _ex_startup(by: dict, case: str, floor: str) -> str:
    """The same ratio without start-up: the floor's loop time / (case − threadfix --help)."""
    if "help" not in by or floor not in by or by[floor].get("loop_seconds") is None:
        return "no start-up figure"
    work = by[case]["seconds"] - by["help"]["seconds"]
    return f"{by[floor]['loop_seconds'] / work:.2f}× without start-up" if work > 0 else "all start-up"


def render_targets(items: list[dict], manifest: dict) -> str:
    lines = ["targets:"]
    lines += [f"  {t['status']:4s}  {t['target']}: {t['detail']}" for t in items]
    if manifest["jsonl_bytes"] < 500 * MB:
        lines.append(f"  note: on {manifest['jsonl_bytes'] / MB:.0f} MB, start-up weighs heavily in the ratios; "
                     "the targets are set for ~1 GB (--mb 1000)")
    return "\n".join(lines)


def check_line(table: list[dict]) -> str:
    """'check: ok' when every checked case agrees with the manifest, else what differs."""
    bad = [f"{r['case']}: {r['check']}" for r in table
           if "check" in r and not r["check"].startswith("ok")]
    checked = sum("check" in r for r in table)
    skipped = sum("check" not in r for r in table)
    counts = f"{checked} cases checked" + (f", {skipped} skipped" if skipped else "")
    return f"check: ok ({counts})" if not bad else f"check: differs ({counts})\n  " + "\n  ".join(bad)


def header(data: Path, manifest: dict, repeat: int) -> str:
    c = manifest["counts"]
    text = (f"store {data}: {manifest['jsonl_bytes'] / MB:,.1f} MB JSONL, {c['threads']:,} threads, "
            f"{c['items']:,} items, {c['dangling_calls']:,} dangling calls in {c['stuck_threads']:,} threads\n"
            f"python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs, "
            f"{repeat} rounds, medians")
    if installed_editable():
        text += ("\nnote: threadfix is installed editable (pip install -e) in this Python: its import hook runs at "
                 "every start-up, python_bare's included, which an install by pip install . does not")
    return text


def installed_editable() -> bool:
    """Whether this Python has threadfix installed editable: start-up figures then include its hook's imports."""
    import site

    return any(next(Path(folder).glob("__editable__*threadfix*.pth"), None) for folder in site.getsitepackages())


# -------------------------------------------------------------------------------------- driver
def inside_repo(path: Path) -> bool:
    resolved = path.expanduser().resolve()
    return resolved == REPO_ROOT or REPO_ROOT in resolved.parents


def get_store(a: argparse.Namespace) -> tuple[Path, bool]:
    """The data directory, and whether this run made it (and so should delete it)."""
    if a.data:
        data = Path(a.data)
        if inside_repo(data):
            raise SystemExit(f"run: error: {data} is inside the repository; benchmark data must live outside it")
        if not (data / "manifest.json").exists():
            raise SystemExit(f"run: error: {data} has no manifest.json; write a store with generate.py")
        return data.resolve(), False
    import generate

    data = generate.prepare_out(a.out)
    mb = None if a.threads else a.mb
    print(f"generating into {data}", file=sys.stderr)
    m = generate.generate(data, mb=mb, threads=a.threads, seed=a.seed,
                          progress=lambda s: print("  " + s, file=sys.stderr))
    print(generate.summary(m), file=sys.stderr)
    return data, not a.keep


def selected(names: str | None) -> list[Case]:
    """The cases asked for, with the ones they are compared with; all of them by default."""
    if not names:
        return list(CASES)
    wanted = {n.strip() for n in names.split(",") if n.strip()}
    unknown = wanted - set(CASE_BY_NAME)
    if unknown:
        raise SystemExit(f"run: error: unknown case(s) {', '.join(sorted(unknown))}; see --list")
    todo = set(wanted)
    while True:
        more = {d for n in todo for d in CASE_BY_NAME[n].against} - todo
        if not more:
            break
        todo |= more
    if any(CASE_BY_NAME[n].kind == THREADFIX for n in todo):
        todo.add("help")  # for the ratios without start-up
    if any(n.endswith(("_jobs2", "_auto")) for n in todo):
        todo |= {"floor_jsonl_2proc", "floor_jsonl"}  # what a second process can gain here
    return [c for c in CASES if c.name in todo]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--data", help="reuse a store written by generate.py (it is not deleted)")
    src.add_argument("--mb", type=float, default=50, help="generate N MB of JSONL (default 50; quick 5, large 1000)")
    src.add_argument("--threads", type=int, help="generate N threads instead")
    ap.add_argument("--out", help="where to generate (default: a fresh temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated store (it is deleted by default)")
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; medians are reported (default 3)")
    ap.add_argument("--cases", help="comma-separated case names (default: all); see --list")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per run before it is killed")
    ap.add_argument("--json", metavar="OUT", help="also write every figure to this JSON file")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.list:
        placeholders = _Unfilled(data="{data}")
        for c in CASES:
            print(f"{c.name:18s} {c.what}\n{'':18s} python {' '.join(command(c, placeholders)[1:])}")
        return 0
    if a.json and inside_repo(Path(a.json)):
        raise SystemExit(f"run: error: {a.json} is inside the repository; write results outside it")
    cases = selected(a.cases)
    data, delete = get_store(a)
    try:
        wanted = tuple(dict.fromkeys(case.check.partition(":")[2] for case in cases if ":" in case.check))
        if wanted:
            import generate

            print(f"writing the threads as {', '.join(wanted)} (once per store)", file=sys.stderr)
            generate.write_dialects(data, wanted)
        manifest = json.loads((data / "manifest.json").read_bytes())
        outcomes = measure_all(cases, data, a.repeat, a.timeout)
        table = rows(outcomes, manifest)
        goals = targets(table, manifest)
        print(header(data, manifest, a.repeat), "", render_table(table), "", check_line(table), "",
              render_targets(goals, manifest), sep="\n")
        if a.json:
            doc = {"meta": {"data": str(data), "repeat": a.repeat, "python": platform.python_version(),
                            "sqlite": sqlite3.sqlite_version, "cpus": os.cpu_count(), "machine": platform.machine(),
                            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
                            "store": {k: manifest[k] for k in ("jsonl_bytes", "file_bytes", "counts", "seed")}},
                   "cases": table, "targets": goals}
            Path(a.json).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    finally:
        if delete:
            shutil.rmtree(data, ignore_errors=True)
            print(f"deleted {data} (pass --keep to keep it)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
