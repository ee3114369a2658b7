"""A deterministic generator of thread stores whose report is known in advance.

Each thread is planned first (rounds of: a user message, an assistant turn of 1-3 calls, their outputs,
sometimes assistant text); each call's fate is chosen from a seeded random: answered, answered with an
error of a known kind, answered by an output threadfix wrote, or left dangling (the user moved on, the
thread ended, the turn was cut off, the arguments never parsed). The plan is written in one of three wire
formats and counted into a :class:`Truth` by the generator itself, never by threadfix.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson

DIALECTS = ("openai-responses", "openai-chat", "anthropic")
TOOLS = ("shell", "read_file", "search", "get_weather", "sql_query")
FIRST_DAY = date(2025, 3, 1)

#: kind -> error texts with placeholders ({n} number, {id} id, {path} path, {host}, {uuid}); each
#: template is one masked pattern, whatever the placeholders become
ERRORS: dict[str, tuple[str, ...]] = {
    "timeout": ("TimeoutError: request to {host} timed out after {n} seconds",),
    "rate_limited": ("HTTP 429 Too Many Requests: rate limit exceeded for key {id}, retry after {n}s",),
    "not_found": ("FileNotFoundError: [Errno 2] No such file or directory: '{path}'",),
    "permission_denied": ("PermissionError: [Errno 13] Permission denied: '{path}'",),
    "service_unavailable": ("HTTP 503 Service Unavailable: upstream {host} is overloaded (request {uuid})",),
}
SUCCESS = ("{{\"rows\": {n}, \"status\": \"ok\"}}", "total {n}\nREADME.md\nsetup.py", "It is {n} degrees and sunny.")
#: an error message that tries to clear the screen, plant live links (terminal, rich markup, markdown)
#: and carries a key
SECRET = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234"
HOSTILE_MESSAGE = ("TimeoutError: timed out \x1b[2J\x1b]8;;http://evil\x07click\x1b]8;;\x07 [link=http://evil]here[/link] "
                   f"[click](http://evil) <b>bold</b> token {SECRET}")
HOSTILE_TOOL = "evil\x1b]8;;http://evil\x07tool[link=http://evil]x[/link]"
THREADFIX_TEXT = ("This call did not return a result: the conversation stopped before its output was recorded. "
                  "It may have run in part, so check its effects before repeating it.")


@dataclass
class CallPlan:
    call_id: str
    tool: str
    #: ok | error | threadfix | dangling | truncated | malformed
    fate: str
    kind: str | None = None
    text: str = ""
    template: str | None = None


@dataclass
class RoundPlan:
    calls: list[CallPlan]
    text_after: bool


@dataclass
class ThreadPlan:
    thread_id: str
    dialect: str
    rounds: list[RoundPlan]
    #: day number of round 0 (days since FIRST_DAY), or None
    day0: int | None
    #: every message carries its own time (round r on day0 + r); otherwise only the thread does
    item_times: bool
    orphan: bool = False


@dataclass
class ToolTruth:
    calls: int = 0
    outputs: int = 0
    error_outputs: int = 0
    dangling_calls: int = 0
    kinds: Counter[str] = field(default_factory=Counter)


@dataclass
class Truth:
    threads: int = 0
    unrecognised_threads: int = 0
    calls: int = 0
    outputs: int = 0
    error_outputs: int = 0
    threadfix_outputs: int = 0
    dangling_calls: int = 0
    stuck_threads: int = 0
    refused_threads: int = 0
    repaired_threads: int = 0
    undated_threads: int = 0
    unreadable: int = 0
    tools: dict[str, ToolTruth] = field(default_factory=lambda: defaultdict(ToolTruth))
    days: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    #: thread id -> (later user turns, dangling calls)
    stuck: dict[str, tuple[int, int]] = field(default_factory=dict)
    stuck_by_turns: Counter[int] = field(default_factory=Counter)
    #: (kind, template) -> error outputs
    messages: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: kind -> [error outputs, dangling calls]
    kinds: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def totals(self) -> dict[str, int]:
        names = ("threads", "unrecognised_threads", "calls", "outputs", "error_outputs", "threadfix_outputs",
                 "dangling_calls", "stuck_threads", "refused_threads", "repaired_threads", "undated_threads",
                 "unreadable")
        return {name: getattr(self, name) for name in names}


def _day(n: int) -> str:
    return (FIRST_DAY + timedelta(days=n)).isoformat()


def _stamp(n: int, rng: random.Random) -> str:
    moment = datetime(FIRST_DAY.year, FIRST_DAY.month, FIRST_DAY.day, tzinfo=timezone.utc) + timedelta(days=n)
    return (moment + timedelta(seconds=rng.randrange(86400))).isoformat().replace("+00:00", "Z")


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        n=rng.randrange(1, 100000), id=f"key_{rng.randrange(16**8):08x}", host=f"api{rng.randrange(50)}.example.com",
        path=f"/srv/data/{rng.choice(['a', 'b', 'c'])}/file{rng.randrange(1000)}.txt",
        uuid="%08x-%04x-%04x-%04x-%012x" % tuple(rng.randrange(16**k) for k in (8, 4, 4, 4, 12)),
    )


# --------------------------------------------------------------------------- planning


def plan_thread(rng: random.Random, number: int, dialect: str, *, hostile: bool = False) -> ThreadPlan:
    rounds: list[RoundPlan] = []
    count = rng.randint(1, 4)
    counter = 0
    for r in range(count):
        calls = []
        last = r == count - 1
        for _ in range(rng.randint(1, 3)):
            counter += 1
            call_id = f"call_{number}_{counter}"
            roll = rng.random()
            tool = rng.choice(TOOLS)
            if roll < 0.55:
                calls.append(CallPlan(call_id, tool, "ok", text=_fill(rng.choice(SUCCESS), rng)))
            elif roll < 0.80:
                kind = rng.choice(sorted(ERRORS))
                template = rng.choice(ERRORS[kind])
                calls.append(CallPlan(call_id, tool, "error", kind, _fill(template, rng), template))
            elif roll < 0.85:
                calls.append(CallPlan(call_id, tool, "threadfix", "aborted"))
            elif roll < 0.95:
                calls.append(CallPlan(call_id, tool, "dangling", "aborted"))
            elif dialect != "anthropic":
                calls.append(CallPlan(call_id, tool, "malformed", "malformed_arguments"))
            else:
                calls.append(CallPlan(call_id, tool, "dangling", "aborted"))
        if last and rng.random() < 0.15:
            # cut off mid-call: one call, the turn's last, nothing after it
            counter += 1
            calls = [CallPlan(f"call_{number}_{counter}", rng.choice(TOOLS), "truncated", "truncated")]
        rounds.append(RoundPlan(calls, text_after=rng.random() < 0.4 and calls[0].fate != "truncated"))
    if hostile:
        rounds[0].calls[0] = CallPlan(
            f"call_{number}_evil", HOSTILE_TOOL, "error", "timeout",
            HOSTILE_MESSAGE, "hostile")
    day0 = rng.randrange(0, 6) if rng.random() < 0.85 else None
    return ThreadPlan(f"t{number}", dialect, rounds, day0, item_times=day0 is not None and rng.random() < 0.5,
                      orphan=rng.random() < 0.05)


# --------------------------------------------------------------------------- truth


def count(plan: ThreadPlan, truth: Truth) -> None:
    truth.threads += 1
    last_round = len(plan.rounds) - 1
    thread_day = None
    if plan.day0 is not None:
        thread_day = _day(plan.day0 + (last_round if plan.item_times else 0))
        truth.days[thread_day]["threads"] += 1
    else:
        truth.undated_threads += 1
    first_dangling: int | None = None
    dangling = 0
    repaired = False
    for r, round_ in enumerate(plan.rounds):
        day = _day(plan.day0 + r) if plan.item_times else thread_day
        for call in round_.calls:
            tool = truth.tools[call.tool]
            tool.calls += 1
            truth.calls += 1
            if day:
                truth.days[day]["calls"] += 1
            if call.fate in ("ok", "error", "threadfix"):
                tool.outputs += 1
                truth.outputs += 1
            if call.fate in ("error", "threadfix"):
                tool.error_outputs += 1
                tool.kinds[call.kind] += 1
                truth.error_outputs += 1
                truth.kinds[call.kind][0] += 1
                if day:
                    truth.days[day]["error_outputs"] += 1
                if call.fate == "error":
                    truth.messages[(call.kind, call.template)] += 1
            if call.fate == "threadfix":
                truth.threadfix_outputs += 1
                repaired = True
            if call.fate in ("dangling", "truncated", "malformed"):
                tool.dangling_calls += 1
                tool.kinds[call.kind] += 1
                truth.dangling_calls += 1
                truth.kinds[call.kind][1] += 1
                dangling += 1
                if day:
                    truth.days[day]["dangling_calls"] += 1
                if first_dangling is None:
                    first_dangling = r
    if plan.orphan:
        truth.outputs += 1
        truth.tools["(no call)"].outputs += 1
    if repaired:
        truth.repaired_threads += 1
    if dangling:
        truth.stuck_threads += 1
        turns = last_round - first_dangling
        truth.stuck[plan.thread_id] = (turns, dangling)
        truth.stuck_by_turns[min(turns, 10)] += 1
        if thread_day:
            truth.days[thread_day]["stuck_threads"] += 1
    if dangling or plan.orphan:
        truth.refused_threads += 1


# --------------------------------------------------------------------------- writing


def _arguments(call: CallPlan) -> str:
    return '{"q": "x", "n": ' if call.fate == "malformed" else '{"q": "x"}'


def _threadfix_payload(call: CallPlan) -> str:
    return orjson.dumps({"error": {"kind": "aborted", "cause": "thread_ended", "tool": call.tool,
                                   "message": THREADFIX_TEXT}, "written_by": "threadfix"}).decode()


def _output_text(call: CallPlan) -> str:
    return _threadfix_payload(call) if call.fate == "threadfix" else call.text


def _answered(round_: RoundPlan) -> list[CallPlan]:
    return [call for call in round_.calls if call.fate in ("ok", "error", "threadfix")]


def render(plan: ThreadPlan, rng: random.Random) -> dict[str, Any]:
    """The thread as a JSONL line's object in its dialect."""
    items: list[Any] = []
    writer = {"openai-responses": _responses, "openai-chat": _chat, "anthropic": _anthropic}[plan.dialect]
    for r, round_ in enumerate(plan.rounds):
        stamp = _stamp(plan.day0 + r, rng) if plan.item_times else None
        start = len(items)
        writer(items, r, round_, plan)
        if stamp is not None:
            for item in items[start:]:
                item["created_at"] = stamp
    thread: dict[str, Any] = {"id": plan.thread_id}
    if plan.day0 is not None and not plan.item_times:
        thread["created_at"] = _stamp(plan.day0, rng)
    thread["items" if plan.dialect == "openai-responses" else "messages"] = items
    return thread


def _responses(items: list[Any], r: int, round_: RoundPlan, plan: ThreadPlan) -> None:
    items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"step {r}"}]})
    for call in round_.calls:
        items.append({"type": "function_call", "id": f"fc_{call.call_id}", "call_id": call.call_id, "name": call.tool,
                      "arguments": _arguments(call), "status": "incomplete" if call.fate == "truncated" else "completed"})
    for call in _answered(round_):
        items.append({"type": "function_call_output", "call_id": call.call_id, "output": _output_text(call)})
    if plan.orphan and r == 0:
        items.append({"type": "function_call_output", "call_id": "call_orphan", "output": "late result"})
    if round_.text_after:
        items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]})


def _chat(items: list[Any], r: int, round_: RoundPlan, plan: ThreadPlan) -> None:
    items.append({"role": "user", "content": f"step {r}"})
    message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": call.call_id, "type": "function", "function": {"name": call.tool, "arguments": _arguments(call)}}
        for call in round_.calls]}
    if round_.calls[0].fate == "truncated":
        message["finish_reason"] = "length"
    items.append(message)
    for call in _answered(round_):
        items.append({"role": "tool", "tool_call_id": call.call_id, "content": _output_text(call)})
    if plan.orphan and r == 0:
        items.append({"role": "tool", "tool_call_id": "call_orphan", "content": "late result"})
    if round_.text_after:
        items.append({"role": "assistant", "content": "done"})


def _anthropic(items: list[Any], r: int, round_: RoundPlan, plan: ThreadPlan) -> None:
    items.append({"role": "user", "content": f"step {r}"})
    message: dict[str, Any] = {"role": "assistant", "content": [
        {"type": "tool_use", "id": call.call_id, "name": call.tool, "input": {"q": "x"}} for call in round_.calls]}
    message["stop_reason"] = "max_tokens" if round_.calls[0].fate == "truncated" else "tool_use"
    items.append(message)
    results = [{"type": "tool_result", "tool_use_id": call.call_id, "content": _output_text(call),
                **({"is_error": True} if call.fate in ("error", "threadfix") else {})} for call in _answered(round_)]
    if plan.orphan and r == 0:
        results.append({"type": "tool_result", "tool_use_id": "call_orphan", "content": "late result"})
    if results:
        items.append({"role": "user", "content": results})
    if round_.text_after:
        items.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})


# --------------------------------------------------------------------------- stores


def write_store(folder: Path, threads: int, seed: int = 7, *, hostile: bool = False, broken: bool = True) -> Truth:
    """Write ``threads`` threads spread over one JSONL file per dialect (plus an unrecognised one and,
    when ``broken``, a line that is not JSON) and return what a report over ``folder`` must say."""
    rng = random.Random(seed)
    truth = Truth()
    folder.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[bytes]] = {dialect: [] for dialect in DIALECTS}
    for number in range(threads):
        dialect = DIALECTS[number % len(DIALECTS)]
        plan = plan_thread(rng, number, dialect, hostile=hostile and number == 1)
        count(plan, truth)
        lines[dialect].append(orjson.dumps(render(plan, rng)))
    for dialect, content in lines.items():
        if broken and dialect == "openai-chat":
            content.insert(min(2, len(content)), b'{"id": "broken", "messages": [')
            truth.unreadable += 1
        (folder / f"{dialect}.jsonl").write_bytes(b"\n".join(content) + b"\n")
    (folder / "notes.json").write_bytes(orjson.dumps({"id": "notes", "items": [{"note": "not a chat"}]}))
    truth.threads += 1
    truth.unrecognised_threads += 1
    truth.undated_threads += 1
    return truth
