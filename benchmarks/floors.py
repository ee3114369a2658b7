#!/usr/bin/env python3
"""Floor loops: the least work any Python scanner of a generated store must do.

Each floor takes the data directory that generate.py wrote and returns (seconds, the call ids it
found dangling). Only the loop is timed: interpreter start-up and imports are not in ``seconds``
(run.py measures whole processes as well). threadfix has more to do than these loops (all call
and output types, malformed input, rules, reports), so they are floors, and threadfix's targets are
ratios to them measured in the same run.

  python benchmarks/floors.py DATA_DIR                   # every floor, one line each, checked
  python benchmarks/floors.py DATA_DIR --one jsonl_orjson  # one floor, one JSON line (run.py)
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from collections.abc import Callable, Iterable

import orjson

JSONL_NAME = "threads.jsonl"
THREADS_DB_NAME = "threads.sqlite"
ITEMS_DB_NAME = "items.sqlite"
MANIFEST_NAME = "manifest.json"
COPY_NAME = ".floor-copy.jsonl"
CHUNK = 1 << 20


def dangling_in(items: Iterable[dict], found: set[str]) -> None:
    """Add to ``found`` the call ids of function_call items with no function_call_output in items."""
    calls = []
    outputs = set()
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            calls.append(item["call_id"])
        elif kind == "function_call_output":
            outputs.add(item["call_id"])
    for call_id in calls:
        if call_id not in outputs:
            found.add(call_id)


def jsonl_orjson(data_dir: str | Path) -> tuple[float, set[str]]:
    """(i) Read the JSONL lines as bytes, orjson.loads each, scan its items."""
    found: set[str] = set()
    loads = orjson.loads
    t0 = time.perf_counter()
    with open(Path(data_dir) / JSONL_NAME, "rb") as f:
        for line in f:
            dangling_in(loads(line)["items"], found)
    return time.perf_counter() - t0, found


def jsonl_orjson_2proc(data_dir: str | Path) -> tuple[float, set[str]]:
    """(i) in two processes, each reading half the file (cut at a line start): what a second process gains
    on this machine, for ``--jobs 2`` to be read against. Forking and gathering are timed."""
    path = Path(data_dir) / JSONL_NAME
    t0 = time.perf_counter()
    size = path.stat().st_size
    with open(path, "rb") as f:
        f.seek(size // 2)
        f.readline()
        middle = f.tell()
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        with os.fdopen(write_end, "wb") as out:
            out.write(orjson.dumps(sorted(_jsonl_range(path, middle, size))))
        os._exit(0)
    os.close(write_end)
    found = _jsonl_range(path, 0, middle)
    with os.fdopen(read_end, "rb") as gathered:
        found.update(orjson.loads(gathered.read()))
    os.waitpid(child, 0)
    return time.perf_counter() - t0, found


def _jsonl_range(path: Path, start: int, end: int) -> set[str]:
    """Floor (i)'s loop over the lines of bytes ``start`` to ``end``."""
    found: set[str] = set()
    loads = orjson.loads
    with open(path, "rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            line = f.readline()
            if not line:
                break
            left -= len(line)
            dangling_in(loads(line)["items"], found)
    return found


def _connect_ro(path: Path) -> sqlite3.Connection:
    """Open read-only, as lint and report must: a mistyped path must not create a database."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def sqlite_threads_bytes(data_dir: str | Path) -> tuple[float, set[str]]:
    """(ii) One row per thread: fetch the items column as bytes (no UTF-8 decode), orjson, scan."""
    found: set[str] = set()
    loads = orjson.loads
    t0 = time.perf_counter()
    con = _connect_ro(Path(data_dir) / THREADS_DB_NAME)
    for _, items in con.execute("SELECT id, CAST(items AS BLOB) FROM threads"):
        dangling_in(loads(items), found)
    con.close()
    return time.perf_counter() - t0, found


def json_field_sql(column: str, field: str) -> str:
    """SQL for a JSON field as text: ``->>`` where SQLite has it (3.38+), json_extract before."""
    if sqlite3.sqlite_version_info >= (3, 38, 0):
        return f"{column} ->> '$.{field}'"
    return f"json_extract({column}, '$.{field}')"


def sqlite_items_extract(data_dir: str | Path) -> tuple[float, set[str]]:
    """(iii) One row per item, table order; SQLite extracts type and call_id, so only call and
    output rows reach Python and no item is decoded there. State is per thread, in dicts."""
    kind, call_id = json_field_sql("data", "type"), json_field_sql("data", "call_id")
    query = (f"SELECT thread_id, {kind} AS kind, {call_id} FROM items "
             "WHERE kind IN ('function_call', 'function_call_output')")
    calls: dict[bytes, list[bytes]] = {}
    outputs: dict[bytes, set[bytes]] = {}
    t0 = time.perf_counter()
    con = _connect_ro(Path(data_dir) / ITEMS_DB_NAME)
    con.text_factory = bytes
    for thread_id, item_kind, item_call in con.execute(query):
        if item_kind == b"function_call":
            calls.setdefault(thread_id, []).append(item_call)
        else:
            outputs.setdefault(thread_id, set()).add(item_call)
    con.close()
    found: set[str] = set()
    no_outputs: set[bytes] = set()
    for thread_id, ids in calls.items():
        answered = outputs.get(thread_id, no_outputs)
        found.update(c.decode() for c in ids if c not in answered)
    return time.perf_counter() - t0, found


def jsonl_copy(data_dir: str | Path) -> tuple[float, set[str]]:
    """(iv) Copy the JSONL bytes to a new file in the data directory, fsync: the write floor."""
    src, dst = Path(data_dir) / JSONL_NAME, Path(data_dir) / COPY_NAME
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    t0 = time.perf_counter()
    try:
        with open(src, "rb", buffering=0) as fi, open(dst, "wb", buffering=0) as fo:
            while n := fi.readinto(buf):
                fo.write(view[:n])
            os.fsync(fo.fileno())
        return time.perf_counter() - t0, set()
    finally:
        dst.unlink(missing_ok=True)


Floor = Callable[[str | Path], tuple[float, set[str]]]
FLOORS: dict[str, Floor] = {
    "jsonl_orjson": jsonl_orjson,
    "jsonl_orjson_2proc": jsonl_orjson_2proc,
    "sqlite_threads_bytes": sqlite_threads_bytes,
    "sqlite_items_extract": sqlite_items_extract,
    "jsonl_copy": jsonl_copy,
}
SCANS = ("jsonl_orjson", "jsonl_orjson_2proc", "sqlite_threads_bytes", "sqlite_items_extract")


def expected_dangling(data_dir: str | Path) -> set[str]:
    """The dangling call ids the generator recorded in the manifest."""
    manifest = json.loads((Path(data_dir) / MANIFEST_NAME).read_bytes())
    return {d["call_id"] for d in manifest["dangling"]}


def compare(found: set[str], expected: set[str]) -> str:
    """'ok', or how the found set differs from the expected one (with a few examples)."""
    missing, extra = sorted(expected - found), sorted(found - expected)
    if not missing and not extra:
        return "ok"
    parts = []
    if missing:
        parts.append(f"missing {len(missing)} (e.g. {', '.join(missing[:3])})")
    if extra:
        parts.append(f"extra {len(extra)} (e.g. {', '.join(extra[:3])})")
    return "; ".join(parts)


def peak_rss_kb() -> int:
    """VmHWM of this process: its own peak, which exec resets (ru_maxrss can carry the parent's)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_one(name: str, data_dir: str) -> dict:
    """Run one floor and check it: what run.py reads from the child's stdout."""
    seconds, found = FLOORS[name](data_dir)
    check = compare(found, expected_dangling(data_dir)) if name in SCANS else "ok"
    return {"floor": name, "seconds": seconds, "found": len(found), "check": check, "peak_rss_kb": peak_rss_kb()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", help="a directory written by generate.py")
    ap.add_argument("--one", choices=sorted(FLOORS), help="run one floor and print one JSON line")
    a = ap.parse_args(argv)
    if not (Path(a.data_dir) / MANIFEST_NAME).exists():
        print(f"floors: error: {a.data_dir} has no {MANIFEST_NAME}; write a store with generate.py", file=sys.stderr)
        return 2
    if a.one:
        print(json.dumps(run_one(a.one, a.data_dir)))
        return 0
    jsonl_mb = (Path(a.data_dir) / JSONL_NAME).stat().st_size / 1e6
    for name in FLOORS:
        r = run_one(name, a.data_dir)
        print(f"{name:22s} {r['seconds']:7.3f} s  {jsonl_mb / r['seconds']:8.0f} MB/s  "
              f"found {r['found']:5d}  check {r['check']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
