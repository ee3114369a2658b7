"""``--leave-tool``: a thread with an open call to a tool whose output comes from elsewhere (an approval, a
deferred or external run) is waiting, not broken. Repair leaves it whole and lint does not report its open
calls, while every other thread is handled as before."""

from __future__ import annotations

import fnmatch
import io
import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core import threadgen
from tests.core.test_cli_repair import threadfix
from threadfix import dialects, parallel
from threadfix.batch import RepairRun, RunOptions, ThreadOutcome
from threadfix.lint import LintOptions, lint_items
from threadfix.model import Action, RepairPlan
from threadfix.repair import plan_repair, waiting_on
from threadfix.stores import StoreOptions


def _thread(ident: str, *tools: str) -> dict:
    """A thread whose last turn calls ``tools`` in parallel and ends there, no call answered."""
    calls = [{"type": "function_call", "call_id": f"call_{ident}_{n}", "name": tool, "arguments": "{}"}
             for n, tool in enumerate(tools)]
    return {"id": ident, "items": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "refund order 7"}]}, *calls]}


WAITING = _thread("w", "lookup_order", "approve_refund")  # one call waits on a person, one crashed beside it
STUCK = _thread("s", "lookup_order")


@pytest.fixture()
def store(tmp_path):
    path = tmp_path / "chats.jsonl"
    path.write_bytes(b"".join(orjson.dumps(t) + b"\n" for t in (WAITING, STUCK)))
    return path


def test_repair_leaves_a_waiting_thread_whole_and_repairs_the_rest(store) -> None:
    before = store.read_bytes().splitlines()
    done = threadfix("repair", "--min-age", "0", "--leave-tool", "approve_*", str(store), cwd=store.parent)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode().splitlines()
    assert out[0] == (f"{store}:1:id=w: skipped: its call call_w_1 waits on approve_refund, a tool left to others "
                      "(--leave-tool)")
    assert [line for line in out[1:] if "call_w" in line] == []  # its crashed call is left too: the app resumes the turn
    assert "id=s#1: add error output for call_s_0 (lookup_order)" in out[1]
    assert done.stderr.decode().splitlines()[0] == ("threadfix: repaired 1 of 2 threads (1 insert output); "
                                                    "1 waiting on a person or another process (--leave-tool, --answer-waiting)")
    after = store.read_bytes().splitlines()
    assert after[0] == before[0]
    assert after[1] != before[1]


def test_without_the_option_both_threads_are_repaired(store) -> None:
    done = threadfix("repair", "--dry-run", "--min-age", "0", str(store), cwd=store.parent)
    assert done.stderr.decode().startswith("threadfix: would repair 2 of 2 threads (3 insert output)")


def test_json_gives_the_waiting_status_and_count(store) -> None:
    done = threadfix("repair", "--dry-run", "--min-age", "0", "--leave-tool", "approve_refund", "--leave-tool", "x",
                     "--format", "json", str(store), cwd=store.parent)
    document = json.loads(done.stdout)
    assert [t["status"] for t in document["threads"]] == ["waiting", "would_repair"]
    assert document["summary"]["waiting"] == 1 and document["summary"]["changed"] == 1


def test_jobs_2_leaves_the_same_threads(tmp_path, monkeypatch) -> None:
    """The workers of --jobs plan with the option too: the same threads wait, in a file cut into ranges."""
    monkeypatch.setattr(parallel, "MIN_SHARD_BYTES", 2048)
    path = tmp_path / "many.jsonl"
    threads = [_thread(f"t{n}", *(("lookup_order", "approve_refund") if n % 3 == 0 else ("lookup_order",)))
               for n in range(120)]
    path.write_bytes(b"".join(orjson.dumps(t) + b"\n" for t in threads))
    assert len(parallel.plan_shards([str(path)], 2)) > 1

    def statuses(jobs: int) -> list[tuple[str, str]]:
        options = RunOptions(dry_run=True, min_age=0, leave_tools=("approve_*",), jobs=jobs)
        return [(o.address, o.status) for o in RepairRun([str(path)], options).outcomes() if isinstance(o, ThreadOutcome)]

    one = statuses(1)
    assert [status for _, status in one].count("waiting") == 40
    assert statuses(2) == one


@pytest.mark.parametrize("command", ["repair", "lint"])
def test_an_empty_tool_name_is_a_usage_error(store, command: str) -> None:
    done = threadfix(command, "--min-age", "0", "--leave-tool", " ", str(store), cwd=store.parent)
    assert done.returncode == 2
    assert done.stderr.decode() == ("threadfix: error: --leave-tool must name tools (a name or a glob such as "
                                    "approve_*), not an empty string\n")


def test_lint_does_not_report_the_waiting_threads_open_calls(store) -> None:
    done = threadfix("lint", "--select", "TF001", "--leave-tool", "approve_*", "--format", "json", str(store),
                     cwd=store.parent)
    document = json.loads(done.stdout)
    assert [f["call_id"] for f in document["findings"]] == ["call_s_0"]
    assert document["summary"]["waiting"] == 1
    assert "1 thread waiting on a person or another process (--leave-tool, --answer-waiting), open calls not reported" in done.stderr.decode()
    plain = threadfix("lint", "--select", "TF001", "--format", "json", str(store), cwd=store.parent)
    assert len(json.loads(plain.stdout)["findings"]) == 3


def test_lint_reads_leave_tools_from_its_settings(store) -> None:
    (store.parent / "threadfix.toml").write_text('[lint]\nleave-tools = ["approve_*"]\n')
    done = threadfix("lint", "--select", "TF001", "--format", "json", str(store), cwd=store.parent)
    assert [f["call_id"] for f in json.loads(done.stdout)["findings"]] == ["call_s_0"]
    (store.parent / "threadfix.toml").write_text('[lint]\nleave-tools = [""]\n')
    bad = threadfix("lint", str(store), cwd=store.parent)
    assert bad.returncode == 2
    assert bad.stderr.decode().startswith(f"threadfix: error: {store.parent / 'threadfix.toml'}: [lint] leave-tools "
                                          "must name tools")


PATTERNS = st.lists(st.sampled_from([*threadgen.TOOLS, "*", "read_*", "s?ell", "[gs]*", "nothing"]), max_size=3)


@pytest.mark.parametrize("name", list(threadgen.RENDERERS))
@given(conversation=threadgen.conversations(), patterns=PATTERNS)
def test_a_thread_is_left_whole_exactly_when_an_open_call_names_a_left_tool(name: str, conversation, patterns) -> None:
    """Over generated threads: repair leaves the thread as it was iff one of the calls it would answer is to a
    left tool (by glob), and otherwise does what it does without the option; lint agrees on which calls to report."""
    items = threadgen.RENDERERS[name](conversation)
    dialect = dialects.get(name)
    plan = plan_repair(dialect.index(items), dialect, items)
    answered = {e.call.name for e in plan.edits if e.action is Action.INSERT_OUTPUT and e.call is not None}
    left = any(fnmatch.fnmatchcase(tool, p) for tool in answered for p in patterns)
    assert (waiting_on(plan, tuple(patterns)) is not None) is left

    def outcome(leave_tools: tuple[str, ...]) -> tuple[str, RepairPlan]:
        options = RunOptions(dry_run=True, min_age=0, leave_tools=leave_tools, store=StoreOptions(dialect=name))
        run = RepairRun(["-"], options, stdin=io.BytesIO(orjson.dumps(items)))
        told = [(o.status, o.plan) for o in run.outcomes() if isinstance(o, ThreadOutcome)]
        return told[0] if told else ("healthy", RepairPlan())  # (healthy threads are only counted)

    status, planned = outcome(tuple(patterns))
    if left:
        assert status == "waiting"
    else:
        assert (status, planned) == outcome(())

    findings = lint_items(items, name, LintOptions(select=("TF001",), leave_tools=tuple(patterns)))
    assert (findings == []) is (left or not answered)
