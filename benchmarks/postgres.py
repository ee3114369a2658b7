#!/usr/bin/env python3
"""threadfix's read phase of a PostgreSQL table against a floor over the same rows, in the same run.

The generator's threads (generate.py: threads.jsonl) are loaded into two tables of a PostgreSQL
database: ``bench_threads`` (one thread per row, a ``jsonb`` column) and ``bench_items`` (one item per row,
a ``text`` column, indexed on (thread_id, position)). Then, rounds in alternating order, each case in a
fresh process:

  floor          one plain SELECT of the JSON as bytes through a server-side cursor (binary transfer, so the
                 bytes cross as they are, not in bytea's hex), orjson.loads per row,
                 the dangling-call scan (floors.dangling_in): the least any reader can do
  threadfix      the store's read phase: every thread of the table, as lint and repair read it (keyset
                 chunks in a read-only session, parsed), and the same scan
  threadfix -j2  the same with --jobs 2: the table cut in two key ranges, each read on its own connection
                 in a worker process of its own (peak RSS: the parent's)

Reported: median seconds, MB/s of JSON bytes, peak RSS, and floor / case (1.0 = as fast as the floor).

  python benchmarks/postgres.py --mb 150 --start        # a throwaway server (the tests' own), 150 MB
  python benchmarks/postgres.py --url postgresql://me@/bench --data DIR
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

CASES = ("floor", "threadfix", "threadfix-j2")
TABLES = {"thread": "bench_threads", "item": "bench_items"}


def load(url: str, data: Path) -> int:
    """Both tables from threads.jsonl (again, if they exist); the JSON bytes they hold."""
    import orjson
    import psycopg

    total = 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_threads, bench_items")
        conn.execute("CREATE TABLE bench_threads (id text PRIMARY KEY, updated_at text, items jsonb NOT NULL)")
        conn.execute("CREATE TABLE bench_items (id bigserial PRIMARY KEY, thread_id text NOT NULL, position integer "
                     "NOT NULL, created_at text, data text NOT NULL)")
        with conn.cursor() as cur:
            with cur.copy("COPY bench_threads (id, updated_at, items) FROM STDIN") as threads, \
                    open(data / "threads.jsonl", "rb") as lines:
                for line in lines:
                    thread = orjson.loads(line)
                    threads.write_row((thread["id"], thread.get("created_at"), orjson.dumps(thread["items"]).decode()))
            with cur.copy("COPY bench_items (thread_id, position, created_at, data) FROM STDIN") as items, \
                    open(data / "threads.jsonl", "rb") as lines:
                for line in lines:
                    thread = orjson.loads(line)
                    for position, item in enumerate(thread["items"]):
                        raw = orjson.dumps(item).decode()
                        total += len(raw)
                        items.write_row((thread["id"], position, thread.get("created_at"), raw))
        conn.execute("CREATE INDEX ON bench_items (thread_id, position)")
        conn.execute("VACUUM ANALYZE bench_threads")
        conn.execute("VACUUM ANALYZE bench_items")
    return total


def read_part(shard, options) -> tuple[int, set[str]]:
    """In a worker: one share of the table read, and the same scan; its threads and dangling calls."""
    from floors import dangling_in

    from threadfix.stores.postgres import open_postgres_store

    store = open_postgres_store(shard.spec, options)
    store.restrict(shard.part)
    found: set[str] = set()
    count = 0
    for thread in store.threads():
        dangling_in(thread.items, found)
        count += 1
    return count, found


def case(name: str, url: str, layout: str) -> dict:
    """One case in this process: seconds, threads, dangling calls found."""
    import orjson
    import psycopg
    from floors import dangling_in

    from threadfix.stores import StoreOptions
    from threadfix.stores.postgres import open_postgres_store

    found: set[str] = set()
    count = 0
    t0 = time.perf_counter()  # (after the imports, for both)
    if name == "floor":
        with psycopg.connect(url) as conn, conn.cursor(name="floor") as cur:
            cur.itersize = 2000
            if layout == "thread":
                cur.execute("SELECT id, convert_to(items::text, 'UTF8') FROM bench_threads", binary=True)
                for _, raw in cur:
                    dangling_in(orjson.loads(raw), found)
                    count += 1
            else:
                cur.execute("SELECT thread_id, convert_to(data, 'UTF8') FROM bench_items ORDER BY thread_id, position",
                            binary=True)
                thread, items = None, []
                for key, raw in cur:
                    if key != thread:
                        dangling_in(items, found)
                        thread, items, count = key, [], count + 1
                    items.append(orjson.loads(raw))
                dangling_in(items, found)
    elif name.endswith("j2"):  # the medium's cut, each share read in a worker process, as --jobs 2 reads it
        from functools import partial

        from threadfix.parallel import plan_shards, run_sharded

        options = StoreOptions(table=TABLES[layout])
        shards = plan_shards([url], 2, options, by_key=True)
        for part_count, part_found in run_sharded(shards, partial(read_part, options=options), 2):
            count += part_count
            found |= part_found
    else:
        for thread in open_postgres_store(url, StoreOptions(table=TABLES[layout])).threads():
            dangling_in(thread.items, found)
            count += 1
    return {"seconds": time.perf_counter() - t0, "threads": count, "dangling": len(found),
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="a database to load the tables into (default with --start: a throwaway server)")
    ap.add_argument("--start", action="store_true", help="start a throwaway PostgreSQL server for the run")
    ap.add_argument("--data", help="generate.py's output folder (default: generate --mb MB now)")
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--layout", default="thread", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.case:
        print(json.dumps(case(args.case, args.url, args.layout)))
        return 0
    cluster = None
    try:
        if args.start:
            from tests.postgres.conftest import Cluster, server_bindir

            root = Path(tempfile.mkdtemp(prefix="tf-pg-bench-"))
            os.chmod(root, 0o755)
            (root / "socket").mkdir()
            user = "postgres" if os.geteuid() == 0 else None
            if user is not None:
                import pwd

                owner = pwd.getpwnam(user)
                for path in (root, root / "socket"):
                    os.chown(path, owner.pw_uid, owner.pw_gid)
            cluster = Cluster(server_bindir(), root, user)
            cluster.start()
            args.url = args.url or cluster.url()
        if not args.url:
            ap.error("pass --url or --start")
        data = Path(args.data) if args.data else None
        if data is None:
            data = Path(tempfile.mkdtemp(prefix="tf-bench-"))
            subprocess.run([sys.executable, str(HERE / "generate.py"), "--mb", str(args.mb), "--out", str(data)],
                           check=True, stdout=subprocess.DEVNULL)
        started = time.perf_counter()
        size = load(args.url, data)
        print(f"loaded {size / 1e6:.0f} MB of item JSON into both tables in {time.perf_counter() - started:.0f}s",
              file=sys.stderr)
        for layout in ("thread", "item"):
            runs: dict[str, list[dict]] = {c: [] for c in CASES}
            for round_ in range(args.repeat):
                order = CASES[round_ % len(CASES):] + CASES[:round_ % len(CASES)]
                for name in order:
                    out = subprocess.run([sys.executable, __file__, "--case", name, "--url", args.url, "--layout",
                                          layout], check=True, capture_output=True, text=True,
                                         env={**os.environ, "PYTHONPATH": str(HERE.parent)})
                    runs[name].append(json.loads(out.stdout))
            floor = statistics.median(r["seconds"] for r in runs["floor"])
            print(f"\n{TABLES[layout]} ({'one thread per row, jsonb' if layout == 'thread' else 'one item per row, text'}), "
                  f"{size / 1e6:.0f} MB, median of {args.repeat}")
            print(f"  {'case':<14}{'seconds':>9}{'MB/s':>8}{'threads':>9}{'dangling':>10}{'peak RSS':>10}{'vs floor':>10}")
            for name in CASES:
                seconds = statistics.median(r["seconds"] for r in runs[name])
                last = runs[name][-1]
                print(f"  {name:<14}{seconds:>9.2f}{size / 1e6 / seconds:>8.0f}{last['threads']:>9}{last['dangling']:>10}"
                      f"{max(r['rss_mb'] for r in runs[name]):>8.0f}MB{floor / seconds:>9.2f}x")
    finally:
        if cluster is not None:
            cluster.stop()
            import shutil

            shutil.rmtree(cluster.root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
