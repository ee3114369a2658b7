"""What keeps the app's data safe: an app writing while repair runs, locks held past lock_timeout, hostile
names and values, bad URLs, refused connections, passwords never shown, the driver missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed: pip install 'threadfix[postgres]'")

from tests.postgres.tables import agents_session, create, healthy, rows, stuck, threads
from tests.sqlite.dbs import App, outputs_per_call, run_cli
from threadfix import dialects
from threadfix.batch import RepairRun, RunOptions
from threadfix.errors import ExitCode
from threadfix.stores import StoreOptions

RESPONSES = dialects.get("openai-responses")
THREADS, TRIALS, APP_SECONDS = 10, 2, 0.6


def repair(url: str, journal: Path, **store) -> RepairRun:
    run = RepairRun([url], RunOptions(store=StoreOptions(writable=True, **store), min_age=0, journal_dir=journal))
    list(run.outcomes())
    return run


class PgApp(App):
    """``app_sim.py`` (this folder's) in its own interpreter, appending turns while the test repairs."""

    def __init__(self, url: str, layout: str, seconds: float, seed: int, threads: int) -> None:
        self.errors = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("app_sim.py")), url, layout,
                                         str(seconds), str(seed), str(threads)],
                                        stdout=subprocess.PIPE, stderr=self.errors, text=True)
        assert self.process.stdout.readline().strip() == "ready", self.stderr()


def app_ids(url: str, layout: str) -> list[str]:
    if layout == "agents":
        found = [json.loads(d) for (d,) in rows(url, "SELECT message_data FROM agent_messages")]
    else:
        found = [i for items in threads(url, layout).values() for i in items]
    return [i["app_id"] for i in found if "app_id" in i]


def read_back(url: str, layout: str) -> dict[str, list]:
    if layout == "agents":  # in the SDK's own order (the SDK reading them back: tests/postgres/test_repair.py)
        found: dict[str, list] = {}
        for key, data in rows(url, "SELECT session_id, message_data FROM agent_messages ORDER BY created_at, id"):
            found.setdefault(key, []).append(json.loads(data))
        return found
    return threads(url, layout)


@pytest.mark.parametrize("layout", ["thread", "item", "agents"])
def test_app_appends_while_repair_runs_nothing_lost_nothing_doubled(cluster, layout, tmp_path):
    conflicts = 0
    for trial in range(TRIALS):
        url = cluster.database()
        seed = {f"t{i}": stuck(i) if i % 3 else healthy(i) for i in range(THREADS)}
        if layout == "agents":
            agents_session(url, seed)
        else:
            create(url, layout, seed, json_type="jsonb" if layout == "thread" else "json")
        seeded = set(app_ids(url, layout))
        with PgApp(url, layout, APP_SECONDS, trial + 1, THREADS) as app:
            during = repair(url, tmp_path / "j", batch_size=1)
            written = app.finish()
        assert written, "the app wrote nothing while repair ran"
        assert all(p.exit_code == ExitCode.BUSY for p in during.result.problems), during.result.problems
        conflicts += bool(during.result.problems)
        assert sorted(app_ids(url, layout)) == sorted(set(written) | seeded), "an app row was lost or duplicated"
        for items in read_back(url, layout).values():
            assert max(outputs_per_call(items).values(), default=0) <= 1, "a call got two outputs"
        after = repair(url, tmp_path / "j")
        assert after.result.exit_code() == ExitCode.OK, after.result.problems
        for key, items in read_back(url, layout).items():
            assert RESPONSES.check(items) == [], key
            assert set(outputs_per_call(items).values()) == {1}, key
        assert repair(url, tmp_path / "j").result.changed == 0
    print(f"{layout}: {conflicts} trial(s) with threads left alone as changed")


def test_a_lock_held_past_lock_timeout_stops_with_75_keeping_what_was_committed(db, tmp_path):
    create(db, "thread", {"a": stuck(1), "b": stuck(2), "c": stuck(3)})
    holder = psycopg.connect(db)
    holder.execute("SELECT 1 FROM conversations WHERE id = 'b' FOR UPDATE")
    try:
        run = repair(db, tmp_path / "j", batch_size=1, busy_timeout=0.3)
    finally:
        holder.rollback()
        holder.close()
    assert run.result.exit_code() == ExitCode.BUSY
    (problem,) = [p for p in run.result.problems if "locked" in p.message]
    assert "longer than --busy-timeout (0.3s)" in problem.message
    assert "nothing more was written" in problem.message and "stopped after 2 threads" in problem.message
    now = threads(db, "thread")
    assert RESPONSES.check(now["a"]) == [] and now["b"] == stuck(2) and now["c"] == stuck(3)
    assert repair(db, tmp_path / "j").result.exit_code() == ExitCode.OK
    assert all(RESPONSES.check(items) == [] for items in threads(db, "thread").values())


def test_a_thread_the_app_changed_under_its_row_lock_is_left_alone(db, tmp_path):
    """The app changes a planned thread before the writer's FOR UPDATE: compared, found changed, left alone."""
    from threadfix.stores import table

    create(db, "item", {"a": stuck(1), "b": stuck(2)})
    original = table.TableWriter._batch

    def app_writes_first(self, conn, batch):
        with psycopg.connect(db, autocommit=True) as app:
            app.execute("UPDATE conversations SET data = jsonb_set(data, '{content}', '\"edited\"') "
                        "WHERE thread_id = 'a' AND position = 0")
        return original(self, conn, batch)

    table.TableWriter._batch = app_writes_first
    try:
        run = repair(db, tmp_path / "j")
    finally:
        table.TableWriter._batch = original
    assert run.result.exit_code() == ExitCode.BUSY
    assert any("changed while threadfix worked on" in p.message for p in run.result.problems)
    now = threads(db, "item")
    assert now["a"][0]["content"] == "edited" and len(now["a"]) == 3  # the app's change kept, nothing added
    assert RESPONSES.check(now["b"]) == []


def test_hostile_names_and_values_are_quoted_bound_and_shown_safely(db, tmp_path, capsys):
    schema, table = 'we"ird sch', 'conv"; DROP TABLE x; --'
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute('CREATE TABLE x (y int)')
        conn.execute('CREATE SCHEMA "we""ird sch"')
        conn.execute('CREATE TABLE "we""ird sch"."conv""; DROP TABLE x; --" (" id""" text PRIMARY KEY, '
                     '"msgs\'; --" jsonb NOT NULL)')
        items = stuck(1)
        items[0]["content"] = "\x1b[31mred\x1b]0;title\x07 '; DROP TABLE x; --"
        conn.execute('INSERT INTO "we""ird sch"."conv""; DROP TABLE x; --" VALUES (%s, %s)',
                     ("k'\"; DROP TABLE x; --\x1b[2J", json.dumps(items)))
    args = ["--table", f"{schema}.{table}", "--json-column", "msgs'; --"]
    code, out, err = run_cli(["lint", db, *args], capsys)
    assert code == 1 and "TF001" in out and "\x1b" not in out + err, err
    code, out, err = run_cli(["repair", db, *args, "--journal-dir", str(tmp_path)], capsys)
    assert code == 0 and "skipped as recent" in err, err  # (no time anywhere: it counts as just changed)
    code, out, err = run_cli(["repair", db, *args, "--min-age", "0", "--journal-dir", str(tmp_path)], capsys)
    assert code == 0 and "\x1b" not in out + err, err
    ((doc,),) = rows(db, 'SELECT "msgs\'; --" FROM "we""ird sch"."conv""; DROP TABLE x; --"')
    assert RESPONSES.check(doc) == [] and doc[0]["content"] == items[0]["content"]
    assert rows(db, "SELECT count(*) FROM x") == [(0,)]  # still there
    code, out, err = run_cli(["undo", str(next(tmp_path.iterdir()))], capsys)
    assert code == 0 and "1 restored" in err, err
    ((doc,),) = rows(db, 'SELECT "msgs\'; --" FROM "we""ird sch"."conv""; DROP TABLE x; --"')
    assert doc == items
    code, out, err = run_cli(["lint", db, "--table", 'nope"; DROP TABLE x; --'], capsys)
    assert code == 2 and "no table named" in err
    assert rows(db, "SELECT count(*) FROM x") == [(0,)]


@pytest.mark.parametrize("url", ["postgresql://u:topsecret@[::1/db", "postgresql://u:topsecret@/db?not_an_option=1",
                                 "postgresql://u:top%zzsecret@/db", "postgres://u@/db?sslmode=sideways&password=topsecret",
                                 "postgresql://u@/db?password=topsecret&host=/x&port=notaport"])
def test_a_bad_url_is_one_error_line_exit_2_and_no_password(url, capsys):
    code, out, err = run_cli(["lint", url], capsys)
    assert code == 2 and out == "", err
    errors = [line for line in err.splitlines() if line.startswith("threadfix: error:")]
    assert len(errors) == 1 and ("valid PostgreSQL URL" in errors[0] or "cannot connect" in errors[0]), err
    assert "secret" not in err and "Traceback" not in err


@pytest.mark.parametrize("where", ["host=/nonexistent-socket-dir", "host=127.0.0.1&port=1"])
def test_a_refused_connection_is_one_line_and_exit_2(where, capsys):
    code, out, err = run_cli(["repair", f"postgresql://app:hunter2secret@/chats?{where}"], capsys)
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("threadfix: error:")]
    assert len(errors) == 1 and "cannot connect" in errors[0], err
    assert "hunter2secret" not in err


def test_no_password_reaches_a_message_the_journal_or_json(cluster, db, tmp_path, capsys, monkeypatch):
    create(db, "thread", {"a": stuck(1)})
    monkeypatch.setenv("PGPASSWORD", "envsecret77")
    name = db.rsplit("/", 1)[1].split("?")[0]
    urls = [f"postgresql://postgres:usersecret55@/{name}?host={cluster.socket}",
            f"postgresql://postgres@/{name}?host={cluster.socket}&password=querysecret66"]
    seen = ""
    for url in urls:
        for argv in (["lint", url, "--format", "json"], ["report", url, "--format", "json"], ["lint", url],
                     ["repair", url, "--dry-run", "--diff"], ["repair", url, "--journal-dir", str(tmp_path)],
                     ["lint", url, "--table", "nope"]):
            code, out, err = run_cli(argv, capsys)
            assert code in (0, 1, 2), err
            seen += out + err
    seen += "".join(p.read_text() for p in tmp_path.iterdir())
    assert "postgresql://postgres@/" in seen
    for secret in ("usersecret55", "querysecret66", "envsecret77"):
        assert secret not in seen
    from threadfix.stores.postgres_layout import pg_error, redact

    assert redact(urls[1]) == f"postgresql://postgres@/{name}?host={cluster.socket}"
    assert "envsecret77" not in str(pg_error(psycopg.OperationalError("auth envsecret77 failed"), urls[0]))


def test_without_the_driver_one_line_names_the_extra(tmp_path):
    code = ("import sys; sys.modules['psycopg'] = None\n"
            "from threadfix.cli import main\nmain(['lint', 'postgresql://u@/db'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.returncode == 2 and done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert errors == ["threadfix: error: postgresql://u@/db: PostgreSQL needs the psycopg driver: "
                      "pip install 'threadfix[postgres]'"], done.stderr
