#!/usr/bin/env python3
"""Write a deterministic synthetic thread store for threadfix's benchmarks.

One seeded pass writes the same conversations three ways, so every storage path is measured on the
same data:

  threads.jsonl   one thread per line: {"id", "created_at", "items": [...]}
  threads.sqlite  threads(id TEXT PRIMARY KEY, updated_at TEXT, items TEXT): one row per thread
  items.sqlite    items(id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, created_at TEXT,
                  data TEXT), indexed on (thread_id, position): one row per item, the rows of ~64
                  concurrently active threads interleaved the way a live app appends them
  manifest.json   the ground truth: every dangling call (thread, call_id, tool), counts of threads,
                  items, calls and outputs, calls per tool, and error outputs per kind x tool

Items follow the OpenAI Responses format: message (input_text / output_text), reasoning (summary,
sometimes an opaque base64 encrypted_content), function_call (call_id, name, arguments as a JSON
string, status) and function_call_output (a string, sometimes a list of input_text parts). Threads
average ~40 items and ~20 KB with a heavy tail of MB-sized ones; ~3 % are stuck with dangling calls
(most at the end, some in the middle); ~5 % of outputs are realistic failures (timeouts, rate
limits, tracebacks...), labelled with threadfix's failure-kind values.

The same seed and size give the same bytes. Data goes to a fresh temporary directory unless --out
names one, and never inside the repository.

  python benchmarks/generate.py --mb 5            # quick
  python benchmarks/generate.py                   # default, 50 MB of JSONL
  python benchmarks/generate.py --mb 1000 --out DIR
"""

from __future__ import annotations

import argparse
import base64
import functools
import gc
import itertools
import multiprocessing
import os
import platform
import queue
import random
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from array import array
from multiprocessing.connection import Connection
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator

import orjson

MB = 1_000_000
SIZES_MB = {"quick": 5, "default": 50, "large": 1000}
DEFAULT_SEED = 20250101
FORMAT_VERSION = 1

JSONL_NAME = "threads.jsonl"
THREADS_DB_NAME = "threads.sqlite"
ITEMS_DB_NAME = "items.sqlite"
MANIFEST_NAME = "manifest.json"
DATA_FILES = (JSONL_NAME, THREADS_DB_NAME, ITEMS_DB_NAME, MANIFEST_NAME)

STUCK_RATE = 0.03        # threads with at least one dangling call
ERROR_RATE = 0.05        # outputs that report a failure
HUGE_RATE = 0.003        # threads in the MB-sized tail
PARTS_RATE = 0.08        # outputs stored as a list of input_text parts instead of a string
ACTIVE_THREADS = 64      # threads appending to items.sqlite at the same time
BATCH_THREADS = 32       # threads per worker task
START_EPOCH = 1_735_689_600  # 2025-01-01T00:00:00Z: fixed, so the bytes never depend on the clock

REPO_ROOT = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------------------- corpus
VOCAB = """the of and to a in is that for it as with was on be by this are from at or an have not
function call output tool thread error file path value result return data request response model
token user assistant system message reasoning summary should would could there which python json
sqlite repair lint report scan index query table column row test build deploy cache retry timeout
config server client branch commit merge review schema migrate worker queue batch stream""".split()
NON_ASCII = ("café", "naïve", "Zürich", "São Paulo", "東京", "数据", "ошибка", "🙂", "—", "“quoted”",
             "λ", "½", "façade", "Ångström", "résumé", "Kraków")
LOCATIONS = ("Paris, France", "São Paulo", "Zürich", "東京", "Austin, TX", "Reykjavík", "Lagos")


class Rng(random.Random):
    """random.Random with cheaper randint and choice.

    The stock ones cost ~0.7 us each through _randbelow; generation makes millions of such draws,
    and a float-based pick is just as deterministic (its tiny bias does not matter here).
    """

    def randint(self, a: int, b: int) -> int:
        return a + int(self.random() * (b - a + 1))

    def choice(self, seq):
        return seq[int(self.random() * len(seq))]


@dataclass(frozen=True, slots=True)
class Corpus:
    """Long texts that items slice from: slicing is what makes MB-per-second generation possible."""

    prose: str
    code: str
    blob: str
    words: tuple[str, ...]
    idents: tuple[str, ...]


def build_corpus(seed: int) -> Corpus:
    """Build the texts once per run from the seed (so they are part of what the seed fixes)."""
    r = Rng(seed ^ 0x7F4A7C15)
    fake = ["".join(r.choices("abcdefghijklmnopqrstuvwxyz", k=r.randint(3, 10))) for _ in range(2500)]
    words = tuple(VOCAB * 12 + fake)  # real words are the common ones
    idents = tuple(f"{r.choice(words)}_{r.choice(words)}" for _ in range(600))
    return Corpus(_prose(r, words), _code(r, words, idents), base64.b64encode(r.randbytes(1_500_000)).decode(),
                  words, idents)


def _prose(r: random.Random, words: tuple[str, ...]) -> str:
    """Sentences and paragraphs with quotes, inline code, lists and ~1 % non-ASCII words."""
    out: list[str] = []
    for n in range(30_000):
        sentence = r.choices(words, k=r.randint(5, 18))
        for i in range(len(sentence)):
            x = r.random()
            if x < 0.01:
                sentence[i] = r.choice(NON_ASCII)
            elif x < 0.02:
                sentence[i] = f'"{sentence[i]}"'
            elif x < 0.027:
                sentence[i] = f"`{sentence[i]}()`"
        sentence[0] = sentence[0].capitalize()
        out.append(" ".join(sentence) + r.choice((". ", ". ", ". ", "? ", ": ")))
        if n % 7 == 6:
            out.append(r.choice(("\n\n", "\n\n", "\n- ", "\n\n1. ")))
    return "".join(out)


def _code(r: random.Random, words: tuple[str, ...], idents: tuple[str, ...]) -> str:
    """Code, command output, JSON lines and Windows paths: newlines, tabs, quotes and backslashes."""
    lines: list[str] = []
    for _ in range(40_000):
        a, b, c = r.choice(idents), r.choice(idents), r.choice(words)
        pad = "    " * r.randint(0, 3)
        x = r.random()
        if x < 0.22:
            lines.append(f'{pad}{a} = {b}("{c}", {r.randint(0, 999)})')
        elif x < 0.34:
            lines.append(f"{pad}if {a} is not None:\treturn {b}.get('{c}')")
        elif x < 0.46:
            lines.append(f'{pad}print(f"{{{a}}}: \\"{c}\\" -> {{{b}!r}}\\n")')
        elif x < 0.58:
            lines.append(f"-rw-r--r--  1 dev  staff  {r.randint(80, 99999):>6} Mar {r.randint(1, 28):>2} "
                         f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d} src/{a}/{b}.py")
        elif x < 0.68:
            lines.append(orjson.dumps({a: c, b: [r.randint(0, 99), round(r.random(), 4)], "ok": x < 0.6}).decode())
        elif x < 0.76:
            lines.append(f"C:\\Users\\{a}\\AppData\\{b}.log\t{r.randint(0, 10**6)}")
        elif x < 0.86:
            lines.append(f"2025-03-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:"
                         f"{r.randint(0, 59):02d}Z INFO {a}: {c} took {r.randint(1, 900)} ms")
        elif x < 0.93:
            lines.append(f"src/{a}.py:{r.randint(1, 900)}:{r.randint(1, 80)}: {c} {b}")
        else:
            lines.append(f"{pad}# {c} {b} {r.choice(NON_ASCII) if x > 0.99 else c}")
    return "\n".join(lines)


def _cut(r: random.Random, src: str, n: int) -> str:
    """A slice of about n characters; several slices joined when n is larger than half the source."""
    n = max(1, n)
    half = len(src) // 2
    if n <= half:
        start = int(r.random() * (len(src) - n))
        return src[start:start + n]
    return "\n".join(_cut(r, src, min(half, n - k)) for k in range(0, n, half))


def _file_text(r: random.Random, src: str, n: int) -> str:
    """About n characters from a line start on, as reading a file or running a command gives them: a slice that
    starts mid-line can open with a word like "error:" or "timeout", which reads as a failure to anyone (report
    counts it so)."""
    text = _cut(r, src, n + 80)
    start = text.find("\n") + 1
    return text[start:start + n] if 0 < start < len(text) else text[:n]


# ------------------------------------------------------------------------------------ failures
# Failure texts per kind; the kind names are threadfix.failures.kinds.Kind values, so the manifest
# can be compared with `threadfix report` counts by kind x tool.
def _fail_timeout(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    ms = r.choice((10_000, 30_000, 60_000, 120_000))
    if tool == "shell":
        return _codex_shell(r, _cut(r, c.code, r.randint(40, 600)) + f"\ncommand timed out after {ms} ms",
                            124, ms / 1000)
    return r.choice((
        f"Error: tool call timed out after {ms // 1000}s",
        "TimeoutError: The read operation timed out",
        orjson.dumps({"error": {"code": "timeout", "message": f"upstream did not answer within {ms} ms"}}).decode(),
    ))


def _fail_rate_limited(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    wait = r.randint(2, 60)
    return r.choice((
        f"Error code: 429 - {{'error': {{'message': 'Rate limit reached for requests. Please try again in {wait}s.', "
        f"'type': 'rate_limit_error'}}}}",
        orjson.dumps({"error": {"code": "rate_limited", "message": "Too many requests", "retry_after": wait}}).decode(),
        f"HTTP 429 Too Many Requests: retry after {wait} seconds",
    ))


def _fail_terminal_error(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    return _codex_shell(r, _cut(r, c.code, r.randint(100, 2000)) + "\nerror: process exited with status 1",
                        r.choice((1, 2)), round(r.random() * 9, 1))


def _fail_execution(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    if tool == "apply_patch":
        path = args.get("path", "src/app.py")
        return f"error: patch failed: {path}:{r.randint(1, 400)}\nerror: {path}: patch does not apply"
    frame = r.choice(c.idents)
    error = r.choice((f"KeyError: '{r.choice(c.words)}'", "ZeroDivisionError: division by zero",
                      f"ValueError: invalid literal for int() with base 10: '{r.choice(c.words)}'"))
    return (f"Traceback (most recent call last):\n  File \"/srv/tools/{tool}.py\", line {r.randint(10, 400)}, in run\n"
            f"    result = {frame}(**arguments)\n  File \"/srv/tools/{tool}.py\", line {r.randint(10, 400)}, "
            f"in {frame}\n    raise\n{error}")


def _fail_not_found(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    if tool == "shell":
        return _codex_shell(r, f"bash: line 1: {r.choice(c.words)}: command not found", 127, 0.0)
    if tool == "get_weather":
        return f"HTTP 404 Not Found: no location matches {args.get('location', '?')!r}"
    return f"FileNotFoundError: [Errno 2] No such file or directory: '{args.get('path', 'src/main.py')}'"


def _fail_permission_denied(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    return r.choice((
        f"PermissionError: [Errno 13] Permission denied: '{args.get('path', '/etc/shadow')}'",
        "HTTP 403 Forbidden: this key may not call this endpoint",
        orjson.dumps({"error": {"code": "permission_denied",
                                "message": "writes are not allowed in the read-only sandbox"}}).decode(),
    ))


def _fail_network_error(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    return r.choice(("ConnectionResetError: [Errno 104] Connection reset by peer",
                     "httpx.ConnectError: [Errno -3] Temporary failure in name resolution"))


def _fail_service_unavailable(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    return r.choice(("HTTP 503 Service Unavailable: the upstream is overloaded, try again later",
                     orjson.dumps({"error": {"code": "service_unavailable", "message": "backend is down"}}).decode()))


def _fail_invalid_arguments(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    return r.choice(("Error: invalid arguments: missing required property 'path'",
                     orjson.dumps({"error": {"code": "invalid_arguments",
                                             "message": "'end_line' must be >= 'start_line'"}}).decode()))


def _fail_unauthorized(r: random.Random, c: Corpus, tool: str, args: dict) -> str:
    return r.choice(("HTTP 401 Unauthorized: invalid API key",
                     orjson.dumps({"error": {"code": "unauthorized", "message": "the API key has expired"}}).decode()))


def _labelled(kind: str, tool: str, text: str) -> str:
    """The kind a careful reader gives the failure text drawn for ``kind``, by the corpus's labelling rules
    (tests/failures/corpus/README.md): a shell's "command not found" is a terminal failure, and an uncaught
    exception is labelled by its words (a ``KeyError`` is a missing thing, an "invalid literal" bad input)."""
    if kind == "not_found" and tool == "shell":
        return "terminal_error"
    if kind == "execution":
        if "\nKeyError: " in text:
            return "not_found"
        if "\nValueError: invalid literal" in text:
            return "invalid_arguments"
    return kind


FailText = Callable[[random.Random, Corpus, str, dict], str]
FAILURES: dict[str, FailText] = {
    "timeout": _fail_timeout, "rate_limited": _fail_rate_limited, "execution": _fail_execution,
    "terminal_error": _fail_terminal_error,
    "not_found": _fail_not_found, "permission_denied": _fail_permission_denied,
    "network_error": _fail_network_error, "service_unavailable": _fail_service_unavailable,
    "invalid_arguments": _fail_invalid_arguments, "unauthorized": _fail_unauthorized,
}


def _codex_shell(r: random.Random, text: str, exit_code: int, seconds: float) -> str:
    """The JSON string Codex-style agents store as a shell call's output."""
    return orjson.dumps({"output": text, "metadata": {"exit_code": exit_code, "duration_seconds": seconds}}).decode()


# --------------------------------------------------------------------------------------- tools
@dataclass(frozen=True, slots=True)
class Tool:
    """A function tool: how its arguments and successful outputs look, and how it tends to fail."""

    name: str
    weight: int
    arguments: Callable[[random.Random, Corpus, float], dict]
    output: Callable[[random.Random, Corpus, dict, int], str]
    failures: tuple[tuple[str, int], ...]


def _path(r: random.Random, c: Corpus) -> str:
    return "src/" + "/".join(r.choices(c.idents, k=r.randint(1, 3))) + r.choice((".py", ".ts", ".md", ".json"))


def _shell_args(r: random.Random, c: Corpus, v: float) -> dict:
    w = r.choice(c.words)
    cmd = r.choice((f'rg -n "{w}" src/', f"python -m pytest -q tests/test_{w}.py", f"sed -n '1,200p' {_path(r, c)}",
                    "git diff --stat", f"ls -la src/{r.choice(c.idents)}"))
    if r.random() < 0.2:
        cmd = "cat > patch.py <<'EOF'\n" + _cut(r, c.code, int(300 * v) + 20) + "\nEOF\npython patch.py"
    return {"command": ["bash", "-lc", cmd], "workdir": "/home/dev/project", "timeout_ms": r.choice((10_000, 60_000))}


def _shell_output(r: random.Random, c: Corpus, args: dict, n: int) -> str:
    text = _file_text(r, c.code, n)  # whole lines, as a command prints them
    return _codex_shell(r, text, 0, round(r.random() * 5, 1)) if r.random() < 0.5 else text


def _read_args(r: random.Random, c: Corpus, v: float) -> dict:
    start = r.randint(1, 400)
    return {"path": _path(r, c), "start_line": start, "end_line": start + r.randint(20, 400)}


def _patch_args(r: random.Random, c: Corpus, v: float) -> dict:
    body = _cut(r, c.code, int(r.lognormvariate(6.2, 0.9) * v) + 20).replace("\n", "\n+")
    path = _path(r, c)
    return {"path": path, "input": f"*** Begin Patch\n*** Update File: {path}\n@@\n+{body}\n*** End Patch"}


def _search_output(r: random.Random, c: Corpus, args: dict, n: int) -> str:
    k = max(1, min(10, n // 400))
    hits = [{"title": _cut(r, c.prose, 60).strip(), "url": f"https://example.org/{r.choice(c.idents)}",
             "snippet": _cut(r, c.prose, n // k)} for _ in range(k)]
    return orjson.dumps({"results": hits}).decode()


def _weather_output(r: random.Random, c: Corpus, args: dict, n: int) -> str:
    return orjson.dumps({"location": args["location"], "temperature": round(r.uniform(-10, 35), 1),
                         "unit": args["unit"], "conditions": r.choice(("sunny", "rain", "fog", "snow"))}).decode()


def _sql_args(r: random.Random, c: Corpus, v: float) -> dict:
    cols = ", ".join(r.sample(c.idents, r.randint(2, 8)))
    return {"sql": f"SELECT {cols} FROM events WHERE created_at > '2025-01-01' AND note LIKE '%\\_%' ESCAPE '\\' "
                   f"LIMIT {r.choice((10, 100, 1000))}"}


def _sql_output(r: random.Random, c: Corpus, args: dict, n: int) -> str:
    cols = r.sample(c.idents, 3)
    rows = [[r.randint(0, 10**6), r.choice(c.words), _cut(r, c.prose, 40)] for _ in range(max(1, n // 70))]
    return orjson.dumps({"columns": cols, "rows": rows}).decode()


TOOLS: tuple[Tool, ...] = (
    Tool("shell", 34, _shell_args, _shell_output,
         (("timeout", 3), ("terminal_error", 4), ("not_found", 1), ("permission_denied", 1))),
    Tool("read_file", 20, _read_args, lambda r, c, a, n: _file_text(r, c.code, n),
         (("not_found", 5), ("permission_denied", 2), ("invalid_arguments", 1))),
    Tool("apply_patch", 12, _patch_args,
         lambda r, c, a, n: f"Success. Updated the following files:\nM {a['path']}\n",
         (("execution", 4), ("invalid_arguments", 2), ("permission_denied", 1))),
    Tool("web_search", 13, lambda r, c, v: {"query": " ".join(r.choices(c.words, k=r.randint(2, 7))),
                                            "max_results": r.choice((5, 10))}, _search_output,
         (("rate_limited", 4), ("network_error", 2), ("service_unavailable", 2), ("timeout", 2))),
    Tool("sql_query", 11, _sql_args, _sql_output,
         (("execution", 4), ("timeout", 2), ("permission_denied", 1), ("invalid_arguments", 1))),
    Tool("get_weather", 10, lambda r, c, v: {"location": r.choice(LOCATIONS), "unit": r.choice("cf")},
         _weather_output,
         (("rate_limited", 3), ("service_unavailable", 2), ("unauthorized", 2), ("not_found", 1),
          ("network_error", 1))),
)
TOOL_CUM_WEIGHTS = tuple(itertools.accumulate(t.weight for t in TOOLS))


# -------------------------------------------------------------------------------------- threads
@dataclass(slots=True)
class Thread:
    """One generated conversation, with what the manifest needs to know about it."""

    id: str
    created_at: int
    items: list[dict] = field(default_factory=list)
    times: list[int] = field(default_factory=list)
    tool_of: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)          # call_id -> failure kind
    dangling: list[tuple[str, str]] = field(default_factory=list)  # (call_id, where)


class ThreadMaker:
    """Make thread number ``index`` from its own RNG.

    A thread depends only on (seed, index): workers can make threads in any order and the store is
    the same, and a smaller store is a prefix of a larger one.
    """

    def __init__(self, seed: int, index: int, corpus: Corpus) -> None:
        self.r = Rng(seed * 2**32 + index)
        self.c = corpus
        self.created_at = START_EPOCH + index * 37 + self.r.randint(0, 36)
        self._now = self.created_at

    def make(self) -> Thread:
        """One thread: optional system prompt, user turns, agent steps with tool calls; maybe stuck."""
        r = self.r
        t = Thread(self._id("conv_"), self.created_at)
        huge = r.random() < HUGE_RATE
        verbosity = r.uniform(2.5, 4.5) if huge else r.lognormvariate(-0.72, 0.5)
        steps = r.randint(150, 450) if huge else max(1, int(r.lognormvariate(2.3, 0.75)))
        reasoning = r.random() < 0.6
        encrypted = reasoning and r.random() < 0.5
        stuck = r.random() < STUCK_RATE
        if r.random() < 0.6:
            self._add(t, self._message(r.choice(("system", "developer")), r.randint(300, 3000)), 0)
        self._add(t, self._message("user", int(r.lognormvariate(4.8, 1.0) * verbosity) + 5), 0)
        for s in range(steps):
            if reasoning and r.random() < 0.6:
                self._add(t, self._reasoning(verbosity, encrypted), 3)
            if r.random() < 0.65:
                self._tool_step(t, verbosity, huge)
            else:
                self._add(t, self._message("assistant", int(r.lognormvariate(5.6, 0.9) * verbosity) + 5), 8)
                if s < steps - 1 and r.random() < 0.7:
                    self._add(t, self._message("user", int(r.lognormvariate(4.6, 1.0) * verbosity) + 5), 300)
        if t.items[-1]["type"] != "message":
            self._add(t, self._message("assistant", int(r.lognormvariate(5.6, 0.9) * verbosity) + 5), 8)
        if stuck:
            self._make_stuck(t, verbosity, reasoning, encrypted)
        return t

    # --- items
    def _add(self, t: Thread, item: dict, max_wait: int) -> None:
        self._now += int(self.r.random() * max_wait) + 1
        t.items.append(item)
        t.times.append(self._now)

    def _id(self, prefix: str) -> str:
        return prefix + format(self.r.getrandbits(128), "032x")

    def _call_id(self) -> str:
        return "call_" + base64.b64encode(self.r.randbytes(18), b"Xz").decode()

    def _message(self, role: str, n: int) -> dict:
        if role != "assistant":
            return {"type": "message", "id": self._id("msg_"), "role": role,
                    "content": [{"type": "input_text", "text": _cut(self.r, self.c.prose, n)}]}
        return {"type": "message", "id": self._id("msg_"), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": self._answer(n), "annotations": []}]}

    def _answer(self, n: int) -> str:
        """Assistant prose, sometimes with a fenced code block (more escapes, JSON-in-strings)."""
        r = self.r
        if n < 300 or r.random() < 0.6:
            return _cut(r, self.c.prose, n)
        return (_cut(r, self.c.prose, n // 2) + "\n\n```python\n" + _cut(r, self.c.code, n // 2) + "\n```\n")

    def _reasoning(self, verbosity: float, encrypted: bool) -> dict:
        r = self.r
        summary = [] if r.random() < 0.15 else [
            {"type": "summary_text", "text": _cut(r, self.c.prose, int(r.lognormvariate(5.0, 0.7) * verbosity) + 20)}]
        item = {"type": "reasoning", "id": self._id("rs_"), "summary": summary}
        if encrypted:
            item["encrypted_content"] = "gAAAAA" + _cut(r, self.c.blob, r.randint(500, 3000))
        return item

    def _call(self, t: Thread, verbosity: float) -> tuple[dict, Tool, dict]:
        tool = self.r.choices(TOOLS, cum_weights=TOOL_CUM_WEIGHTS)[0]
        args = tool.arguments(self.r, self.c, verbosity)
        item = {"type": "function_call", "id": self._id("fc_"), "call_id": self._call_id(), "name": tool.name,
                "arguments": orjson.dumps(args).decode(), "status": "completed"}
        t.tool_of[item["call_id"]] = tool.name
        return item, tool, args

    def _output(self, t: Thread, call: dict, tool: Tool, args: dict, verbosity: float, huge: bool) -> dict:
        r = self.r
        if r.random() < ERROR_RATE:
            kind = r.choices([k for k, _ in tool.failures], [w for _, w in tool.failures])[0]
            text = FAILURES[kind](r, self.c, tool.name, args)
            t.failed[call["call_id"]] = _labelled(kind, tool.name, text)
        else:
            n = min(int(r.lognormvariate(5.35, 1.25) * verbosity) + 10, 400_000 if huge else 60_000)
            text = tool.output(r, self.c, args, n)
        output: str | list = text
        if r.random() < PARTS_RATE:
            output = [{"type": "input_text", "text": text}]
        return {"type": "function_call_output", "id": self._id("fco_"), "call_id": call["call_id"], "output": output}

    def _tool_step(self, t: Thread, verbosity: float, huge: bool, cut: str = "") -> list[dict]:
        """1 call, or 2-4 parallel ones, then their outputs in completion order.

        ``cut`` makes a stuck turn: "all" writes no output, "some" only part of a parallel turn's.
        Returns the calls left without an output.
        """
        r = self.r
        k = 1 if r.random() < 0.8 else r.choice((2, 2, 3, 4))
        calls = [self._call(t, verbosity) for _ in range(k)]
        for item, _, _ in calls:
            self._add(t, item, 2)
        answered = k if not cut else (r.randint(1, k - 1) if cut == "some" and k > 1 else 0)
        done = calls[:answered]
        order = list(done)
        if len(order) > 1:
            r.shuffle(order)
        for item, tool, args in order:
            self._add(t, self._output(t, item, tool, args, verbosity, huge), 20)
        return [item for item, _, _ in calls[len(done):]]

    # --- stuck threads
    def _make_stuck(self, t: Thread, verbosity: float, reasoning: bool, encrypted: bool) -> None:
        """Leave calls without outputs: 70 % an interrupted last turn, 30 % outputs lost mid-thread."""
        r = self.r
        outputs = [i for i, it in enumerate(t.items) if it["type"] == "function_call_output"]
        if r.random() < 0.7 or len(outputs) < 2:
            if t.items[-1]["type"] == "message" and t.items[-1]["role"] == "assistant" and r.random() < 0.5:
                self._add(t, self._message("user", int(r.lognormvariate(4.6, 1.0) * verbosity) + 5), 300)
            if reasoning:
                self._add(t, self._reasoning(verbosity, encrypted), 3)
            missing = self._tool_step(t, verbosity, False, "all" if r.random() < 0.75 else "some")
            t.dangling.extend((c["call_id"], "end") for c in missing)
            return
        lost = r.sample(outputs[:-1], min(len(outputs) - 1, 1 if r.random() < 0.75 else 2))
        for i in sorted(lost, reverse=True):
            call_id = t.items[i]["call_id"]
            t.failed.pop(call_id, None)
            t.dangling.append((call_id, "middle"))
            del t.items[i]
            del t.times[i]


# -------------------------------------------------------------------------------------- writers
@functools.lru_cache(maxsize=1024)
def _day(days: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(days * 86400))


def iso(ts: int) -> str:
    """UTC ISO-8601 text, the way apps commonly store timestamps in SQLite (fast: days are cached)."""
    days, s = divmod(ts, 86400)
    return f"{_day(days)}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"


def _new_db(path: Path) -> sqlite3.Connection:
    """An empty database tuned for a one-off bulk load: no journal, no fsync until the end."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    return con


def _finish_db(con: sqlite3.Connection) -> None:
    """Commit and leave the default rollback journal, as an app's database would have."""
    con.execute("COMMIT")
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()


class ThreadsDb:
    """threads.sqlite: one row per thread, items as one JSON array (TEXT)."""

    def __init__(self, path: Path) -> None:
        self.con = _new_db(path)
        self.con.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, updated_at TEXT, items TEXT)")
        self.con.execute("BEGIN")
        self.rows: list[tuple[str, str, bytes]] = []
        self.pending = 0

    def add(self, thread_id: str, updated_at: str, array_json: bytes) -> None:
        self.rows.append((thread_id, updated_at, array_json))
        self.pending += len(array_json)
        if self.pending > 16 * MB or len(self.rows) >= 500:
            self.flush()

    def flush(self) -> None:
        # CAST keeps the column TEXT (JSON functions refuse BLOBs) without decoding the bytes in Python.
        self.con.executemany("INSERT INTO threads VALUES (?, ?, CAST(? AS TEXT))", self.rows)
        self.rows.clear()
        self.pending = 0

    def close(self) -> None:
        self.flush()
        _finish_db(self.con)


class ItemsDb:
    """items.sqlite: one row per item, rows of ~64 active threads interleaved like a live store.

    Each new thread joins a window of active threads; random active threads then append 1-4 items
    at a time until one finishes and frees its slot. The window keeps memory at ~64 threads.
    """

    def __init__(self, path: Path, seed: int) -> None:
        self.con = _new_db(path)
        self.con.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, thread_id TEXT, position INTEGER, "
                         "created_at TEXT, data TEXT)")
        self.con.execute("BEGIN")
        self.r = Rng(seed + 1)
        self.active: list[list] = []   # [thread_id, parts, times, next position]
        self.rows: list[tuple[str, int, str, bytes]] = []

    def add(self, thread_id: str, times: list[int], parts: list[bytes]) -> None:
        self.active.append([thread_id, parts, times, 0])
        self._drain(ACTIVE_THREADS - 1)

    def _drain(self, keep: int) -> None:
        r, active, rows = self.r, self.active, self.rows
        while len(active) > keep:
            j = int(r.random() * len(active))
            a = active[j]
            tid, parts, times, pos = a
            end = min(pos + 1 + int(r.random() * 4), len(parts))
            for p in range(pos, end):
                rows.append((tid, p, iso(times[p]), parts[p]))
            a[3] = end
            if end == len(parts):
                active[j] = active[-1]
                active.pop()
            if len(rows) >= 20_000:
                self.flush()

    def flush(self) -> None:
        self.con.executemany("INSERT INTO items (thread_id, position, created_at, data) "
                             "VALUES (?, ?, ?, CAST(? AS TEXT))", self.rows)
        self.rows.clear()

    def close(self) -> None:
        self._drain(0)
        self.flush()
        self.con.execute("CREATE INDEX items_thread_position ON items (thread_id, position)")
        _finish_db(self.con)


def _write_sqlite(conn: Connection, out_dir: str, seed: int) -> None:
    """Child process: write both SQLite stores from the batches the parent forwards."""
    gc.disable()  # see _init_worker
    threads_db = ThreadsDb(Path(out_dir) / THREADS_DB_NAME)
    items_db = ItemsDb(Path(out_dir) / ITEMS_DB_NAME, seed)
    while (message := conn.recv()) is not None:
        jsonl, threads, spans, times = message
        data, span, when = memoryview(jsonl), memoryview(spans).cast("q"), memoryview(times).cast("q")
        k = 0
        for thread_id, n_items in threads:
            stamps = when[k:k + n_items].tolist()
            parts = [data[span[2 * i]:span[2 * i + 1]] for i in range(k, k + n_items)]
            # the items array runs from the "[" before the first item to the "]" after the last
            threads_db.add(thread_id, iso(stamps[-1]), data[span[2 * k] - 1:span[2 * (k + n_items) - 1] + 1])
            items_db.add(thread_id, stamps, parts)
            k += n_items
    threads_db.close()
    items_db.close()
    conn.send("done")


class SqliteSink:
    """Hand batches to a child process that writes both SQLite files, so they use another core.

    A thread sends them through a queue of a few batches: sending straight from the main loop would
    block it until the child had read each batch, and the stages would take turns instead of running
    side by side. The bounded queue keeps the parent from running ahead, so memory stays flat.
    """

    def __init__(self, out_dir: Path, seed: int) -> None:
        ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_write_sqlite, args=(child, str(out_dir), seed), daemon=True)
        self.proc.start()
        child.close()
        self.queue: queue.Queue = queue.Queue(maxsize=8)
        self.broken = False
        self.sender = threading.Thread(target=self._send_all, daemon=True)
        self.sender.start()

    def send(self, batch: Batch, take: int) -> None:
        """Forward the first ``take`` threads of a batch."""
        if self.broken:
            self._fail()
        n_items = sum(n for _, _, n, _ in batch.threads[:take])
        self.queue.put((batch.jsonl, [(tid, n) for tid, _, n, _ in batch.threads[:take]],
                        batch.spans[:16 * n_items], batch.times[:8 * n_items]))

    def _send_all(self) -> None:
        while True:
            message = self.queue.get()
            if self.broken:
                continue  # drain, so the main loop never blocks on a dead child
            try:
                self.conn.send(message)
            except (BrokenPipeError, ConnectionResetError):
                self.broken = True
            if message is None:
                return

    def _fail(self) -> None:
        self.proc.join(5)
        raise SystemExit(f"generate: error: the SQLite writer process stopped (exit code {self.proc.exitcode})")

    def close(self) -> None:
        """Wait for the child to commit and index."""
        self.queue.put(None)
        self.sender.join()
        try:
            self.conn.recv()
        except EOFError:
            self._fail()
        if self.broken:
            self._fail()
        self.proc.join()


def thread_facts(t: Thread) -> tuple:
    """What the manifest counts about one thread, small enough to send back from a worker."""
    types: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    outputs: Counter[str] = Counter()
    for it in t.items:
        kind = it["type"]
        types[kind] += 1
        if kind == "function_call":
            calls[it["name"]] += 1
        elif kind == "function_call_output":
            outputs[t.tool_of[it["call_id"]]] += 1
    errors = [(kind, t.tool_of[call_id]) for call_id, kind in t.failed.items()]
    dangling = [(call_id, t.tool_of[call_id], where) for call_id, where in t.dangling]
    return types, calls, outputs, errors, dangling


class Tally:
    """Counts and ground truth for the manifest, kept small: no per-item state survives a thread."""

    def __init__(self) -> None:
        self.types: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self.outputs: Counter[str] = Counter()
        self.errors: Counter[tuple[str, str]] = Counter()
        self.dangling: list[dict] = []
        self.sizes = array("q")
        self.lengths = array("q")

    def add(self, thread_id: str, n_items: int, line_bytes: int, facts: tuple) -> None:
        types, calls, outputs, errors, dangling = facts
        self.sizes.append(line_bytes)
        self.lengths.append(n_items)
        self.types.update(types)
        self.calls.update(calls)
        self.outputs.update(outputs)
        self.errors.update(errors)
        self.dangling.extend({"thread": thread_id, "call_id": call_id, "tool": tool, "where": where}
                             for call_id, tool, where in dangling)

    def manifest(self) -> dict:
        n = len(self.sizes)
        by_kind_tool: dict[str, dict[str, int]] = {}
        for (kind, tool), k in sorted(self.errors.items()):
            by_kind_tool.setdefault(kind, {})[tool] = k
        errors_by_tool = Counter()
        for (_, tool), k in self.errors.items():
            errors_by_tool[tool] += k
        return {
            "counts": {
                "threads": n, "items": sum(self.lengths), "messages": self.types["message"],
                "reasoning": self.types["reasoning"], "function_calls": self.types["function_call"],
                "function_call_outputs": self.types["function_call_output"],
                "error_outputs": sum(self.errors.values()), "dangling_calls": len(self.dangling),
                "stuck_threads": len({d["thread"] for d in self.dangling}),
            },
            "calls_by_tool": dict(sorted(self.calls.items())),
            "outputs_by_tool": dict(sorted(self.outputs.items())),
            "errors_by_tool": dict(sorted(errors_by_tool.items())),
            "errors_by_kind": {kind: sum(v.values()) for kind, v in by_kind_tool.items()},
            "errors_by_kind_tool": by_kind_tool,
            "thread_bytes": _spread(self.sizes),
            "thread_items": _spread(self.lengths),
            "dangling": self.dangling,
        }


def _spread(values: array) -> dict:
    s = sorted(values)
    n = len(s)
    if not n:
        return {}
    return {"mean": round(sum(s) / n, 1), "p50": s[n // 2], "p90": s[int(n * 0.9)], "p99": s[int(n * 0.99)],
            "max": s[-1]}


# ---------------------------------------------------------------------------------------- driver
def check_outside_repo(path: Path) -> Path:
    """Refuse a data path inside the repository: benchmark data must never end up in a commit."""
    resolved = path.expanduser().resolve()
    if resolved == REPO_ROOT or REPO_ROOT in resolved.parents:
        raise SystemExit(f"generate: error: {path} is inside the repository; use a directory outside it "
                         "(the default is a fresh temporary directory)")
    return resolved


# ------------------------------------------------------------------------------ other dialects
#: the dialects the same threads are also written in, each from the Responses items (see to_dialect)
DIALECTS = ("openai-responses", "openai-chat", "anthropic", "langchain", "pydantic-ai", "gemini", "bedrock", "ai-sdk")
DIALECTS_DIR = "dialects"
#: threads in each dialect's folder of small files (one JSON document each)
FOLDER_FILES = 1000


def _text_of(content: object) -> str:
    """A message's or an output's text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or () if isinstance(part, dict))


def _turns(items: list[dict]) -> Iterator[tuple[str, object]]:
    """The Responses items as turns: ("system"|"user"|"assistant", text), ("calls", [call...]) for a run of calls,
    ("output", item); reasoning is left out (no other dialect stores it in this form)."""
    calls: list[dict] = []
    for item in items:
        kind = item["type"]
        if kind == "function_call":
            calls.append(item)
            continue
        if calls:
            yield "calls", calls
            calls = []
        if kind == "message":
            role = item["role"]
            yield ("system" if role == "developer" else role), _text_of(item["content"])
        elif kind == "function_call_output":
            yield "output", item
    if calls:
        yield "calls", calls


def _add_to_turn(out: list[dict], who: str, blocks: str, speaker: str, block: dict) -> None:
    """``block`` at the end of the last message when ``speaker`` wrote it, else in a new message of theirs."""
    if out and out[-1][who] == speaker:
        out[-1][blocks].append(block)
    else:
        out.append({who: speaker, blocks: [block]})


def _chat(items: list[dict]) -> list[dict]:
    out: list[dict] = []
    for kind, value in _turns(items):
        if kind == "calls":
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c["call_id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in value]})
        elif kind == "output":
            out.append({"role": "tool", "tool_call_id": value["call_id"], "content": _text_of(value["output"])})
        else:
            out.append({"role": kind, "content": value})
    return out


def _anthropic(items: list[dict]) -> list[dict]:
    """Messages API turns: a model turn's text and tool_use blocks in one assistant message, the results and the
    next user text in one user message (roles alternate); system prompts live outside the messages."""
    out: list[dict] = []
    add = functools.partial(_add_to_turn, out, "role", "content")
    for kind, value in _turns(items):
        if kind == "calls":
            for c in value:
                add("assistant", {"type": "tool_use", "id": c["call_id"], "name": c["name"],
                                  "input": orjson.loads(c["arguments"])})
        elif kind == "output":
            add("user", {"type": "tool_result", "tool_use_id": value["call_id"], "content": _text_of(value["output"])})
        elif kind == "assistant" and out and out[-1]["content"][-1]["type"] == "tool_use":
            # text after tool_use is refused (tool_use ends a turn): the model's words after calls that never got
            # their results are a turn of their own
            out.append({"role": "assistant", "content": [{"type": "text", "text": value or "."}]})
        elif kind != "system":
            add(kind, {"type": "text", "text": value or "."})
    return out


def _langchain(items: list[dict]) -> list[dict]:
    """langchain-core's plain message dicts (``message.model_dump()``, LangGraph thread state)."""
    out: list[dict] = []
    roles = {"system": "system", "user": "human", "assistant": "ai"}
    for kind, value in _turns(items):
        if kind == "calls":
            out.append({"type": "ai", "content": "", "tool_calls": [
                {"name": c["name"], "args": orjson.loads(c["arguments"]), "id": c["call_id"], "type": "tool_call"}
                for c in value]})
        elif kind == "output":
            out.append({"type": "tool", "content": _text_of(value["output"]), "tool_call_id": value["call_id"],
                        "status": "success"})
        else:
            out.append({"type": roles[kind], "content": value})
    return out


def _pydantic_ai(items: list[dict]) -> list[dict]:
    """``ModelMessagesTypeAdapter`` JSON: requests (prompts, tool returns) and responses (text, tool calls)."""
    out: list[dict] = []
    names: dict[str, str] = {}
    add = functools.partial(_add_to_turn, out, "kind", "parts")
    for kind, value in _turns(items):
        if kind == "calls":
            for c in value:
                names[c["call_id"]] = c["name"]
                add("response", {"part_kind": "tool-call", "tool_name": c["name"], "args": c["arguments"],
                                 "tool_call_id": c["call_id"]})
        elif kind == "output":
            call_id = value["call_id"]
            add("request", {"part_kind": "tool-return", "tool_name": names.get(call_id, "tool"),
                            "content": _text_of(value["output"]), "tool_call_id": call_id})
        elif kind == "assistant" and out and out[-1]["parts"][-1]["part_kind"] == "tool-call":
            # as in Anthropic (where pydantic-ai's threads are also sent), words after calls that never got their
            # results are a response of their own, not text after the calls in the same response
            out.append({"kind": "response", "parts": [{"part_kind": "text", "content": value}]})
        elif kind == "assistant":
            add("response", {"part_kind": "text", "content": value})
        else:
            add("request", {"part_kind": "system-prompt" if kind == "system" else "user-prompt", "content": value})
    return out


def _gemini(items: list[dict]) -> list[dict]:
    """``generateContent`` contents: the model's words and calls in one model content, the responses (and the next
    user words) in one user content; calls and responses carry ids, a response's text under ``result`` (as Google
    ADK writes it: neither the API's ``output`` nor its ``error``, since the items do not say which it was);
    system instructions live outside."""
    out: list[dict] = []
    add = functools.partial(_add_to_turn, out, "role", "parts")
    names: dict[str, str] = {}
    for kind, value in _turns(items):
        if kind == "calls":
            for c in value:
                names[c["call_id"]] = c["name"]
                add("model", {"functionCall": {"id": c["call_id"], "name": c["name"], "args": orjson.loads(c["arguments"])}})
        elif kind == "output":
            call_id = value["call_id"]
            add("user", {"functionResponse": {"id": call_id, "name": names.get(call_id, "tool"),
                                              "response": {"result": _text_of(value["output"])}}})
        elif kind != "system":
            add("model" if kind == "assistant" else "user", {"text": value or "."})
    return out


def _bedrock(items: list[dict]) -> list[dict]:
    """Converse messages: ContentBlocks of one member each, roles alternating as in _anthropic (the model's words
    after calls that never got their results are a message of their own, which repair's results then separate);
    results carry no ``status`` (the items do not say whether a call failed)."""
    out: list[dict] = []
    add = functools.partial(_add_to_turn, out, "role", "content")
    for kind, value in _turns(items):
        if kind == "calls":
            for c in value:
                add("assistant", {"toolUse": {"toolUseId": c["call_id"], "name": c["name"],
                                              "input": orjson.loads(c["arguments"])}})
        elif kind == "output":
            add("user", {"toolResult": {"toolUseId": value["call_id"], "content": [{"text": _text_of(value["output"])}]}})
        elif kind == "assistant" and out and "toolUse" in out[-1]["content"][-1]:
            out.append({"role": "assistant", "content": [{"text": value or "."}]})
        elif kind != "system":
            add(kind, {"text": value or "."})
    return out


def _ai_sdk(items: list[dict]) -> list[dict]:
    """``UIMessage[]`` as ``useChat`` stores them (AI SDK 5): each tool call a ``tool-<name>`` part of the assistant's
    message, holding its output once it came (``output-available``), else still ``input-available``."""
    out: list[dict] = []
    parts: dict[str, dict] = {}
    for kind, value in _turns(items):
        if kind == "system":
            continue
        role = "user" if kind == "user" else "assistant"
        if not out or out[-1]["role"] != role:
            out.append({"id": f"msg-{len(out)}", "role": role, "parts": []})
        if kind == "calls":
            out[-1]["parts"].append({"type": "step-start"})
            for c in value:
                part = {"type": f"tool-{c['name']}", "toolCallId": c["call_id"], "state": "input-available",
                        "input": orjson.loads(c["arguments"])}
                parts[c["call_id"]] = part
                out[-1]["parts"].append(part)
        elif kind == "output":
            part = parts.get(value["call_id"])
            if part is not None:
                part["state"], part["output"] = "output-available", _text_of(value["output"])
        else:
            out[-1]["parts"].append({"type": "text", "text": value})
    return out


_CONVERTERS: dict[str, Callable[[list[dict]], list[dict]]] = {
    "openai-responses": lambda items: items, "openai-chat": _chat, "anthropic": _anthropic, "langchain": _langchain,
    "pydantic-ai": _pydantic_ai, "gemini": _gemini, "bedrock": _bedrock, "ai-sdk": _ai_sdk,
}


def to_dialect(name: str, items: list[dict]) -> list[dict]:
    """A generated thread's Responses items as the same conversation in dialect ``name``: the same calls (ids,
    names, arguments) and the same outputs, so the manifest's dangling calls are the same calls in every dialect."""
    return _CONVERTERS[name](items)


def dialect_jsonl(data: Path, name: str) -> Path:
    return data / DIALECTS_DIR / f"{name}.jsonl"


def dialect_folder(data: Path, name: str) -> Path:
    return data / DIALECTS_DIR / name


def write_dialects(data: Path, names: tuple[str, ...] = DIALECTS, folder_files: int = FOLDER_FILES) -> None:
    """Write threads.jsonl again in each dialect: ``dialects/<name>.jsonl`` (one thread a line, ``{"id",
    "created_at", "messages"}``) and ``dialects/<name>/`` (the first ``folder_files`` threads, one JSON document
    each: the message list, as an app that keeps a file per conversation writes it). Idempotent: a dialect
    whose files exist is left as it is."""
    unknown = set(names) - set(_CONVERTERS)
    if unknown:
        raise SystemExit(f"generate: error: unknown dialect(s) {', '.join(sorted(unknown))}; known: {', '.join(DIALECTS)}")
    (data / DIALECTS_DIR).mkdir(exist_ok=True)
    for name in names:
        jsonl, folder = dialect_jsonl(data, name), dialect_folder(data, name)
        if jsonl.exists() and folder.exists():
            continue
        partial, folder_partial = jsonl.with_name(jsonl.name + ".part"), folder.with_name(folder.name + ".parts")
        shutil.rmtree(folder_partial, ignore_errors=True)
        folder_partial.mkdir()
        with open(data / JSONL_NAME, "rb") as source, open(partial, "wb") as sink:
            for number, line in enumerate(source):
                thread = orjson.loads(line)
                messages = to_dialect(name, thread["items"])
                sink.write(orjson.dumps({"id": thread["id"], "created_at": thread["created_at"],
                                         "messages": messages}) + b"\n")
                if number < folder_files:
                    (folder_partial / f"{number:05d}-{thread['id']}.json").write_bytes(orjson.dumps(messages))
        partial.replace(jsonl)
        shutil.rmtree(folder, ignore_errors=True)
        folder_partial.replace(folder)


def prepare_out(out: str | None) -> Path:
    """A fresh temp dir by default; an existing directory only if empty or holding an earlier store."""
    if out is None:
        return Path(tempfile.mkdtemp(prefix="threadfix-bench-"))
    path = check_outside_repo(Path(out))
    if path.exists() and any(p.name not in DATA_FILES for p in path.iterdir()):
        raise SystemExit(f"generate: error: {path} holds other files; pass an empty or new directory")
    path.mkdir(parents=True, exist_ok=True)
    return path


_corpus: Corpus | None = None
_corpus_seed: int | None = None


def _use_corpus(seed: int) -> Corpus:
    """Build the corpus once per process (workers forked after the build inherit it)."""
    global _corpus, _corpus_seed
    if _corpus is None or _corpus_seed != seed:
        _corpus, _corpus_seed = build_corpus(seed), seed
    return _corpus


@dataclass(frozen=True, slots=True)
class Batch:
    """Consecutive threads as their JSONL bytes, plus where each item sits in those bytes.

    A batch crosses process boundaries as a few large buffers: pickling the ~1,500 small objects
    of its items one by one cost about as much as making them.
    """

    jsonl: bytes
    threads: list[tuple]  # (thread_id, line_bytes, n_items, facts) per thread
    spans: bytes          # array("q"): start and end offset of every item in jsonl
    times: bytes          # array("q"): created_at of every item


def _init_worker() -> None:
    """Turn off the cyclic GC in a worker.

    Making a thread allocates thousands of dicts that refcounting frees at once (they hold no
    cycles); the collector's passes over them cost ~25 % of the generation time.
    """
    gc.disable()


def make_batch(seed: int, start: int, count: int) -> Batch:
    """Make and encode threads start..start+count-1 (runs in a worker)."""
    corpus = _use_corpus(seed)
    out = bytearray()
    threads, spans, times = [], array("q"), array("q")
    dumps = orjson.dumps
    for index in range(start, start + count):
        t = ThreadMaker(seed, index, corpus).make()
        line_start = len(out)
        out += b'{"id":"%s","created_at":%d,"items":[' % (t.id.encode(), t.created_at)
        for k, item in enumerate(t.items):
            if k:
                out += b","
            spans.append(len(out))
            out += dumps(item)
            spans.append(len(out))
        out += b"]}\n"
        times.extend(t.times)
        threads.append((t.id, len(out) - line_start, len(t.items), thread_facts(t)))
    return Batch(bytes(out), threads, spans.tobytes(), times.tobytes())


def batches(seed: int, workers: int, limit: int | None) -> Iterator[Batch]:
    """Yield batches in thread order, made by a pool of workers a few batches ahead.

    At most 2 batches per worker are in flight, so memory stays bounded however large the store.
    The caller stops iterating when it has enough; work still in flight is then dropped.
    """
    _use_corpus(seed)
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    pool = ctx.Pool(workers, initializer=_init_worker)
    in_flight: deque = deque()
    try:
        next_index = 0
        while True:
            while len(in_flight) < 2 * workers and (limit is None or next_index < limit):
                count = BATCH_THREADS if limit is None else min(BATCH_THREADS, limit - next_index)
                in_flight.append(pool.apply_async(make_batch, (seed, next_index, count)))
                next_index += count
            if not in_flight:
                return
            yield in_flight.popleft().get()
    finally:
        # When the caller stops early, the few batches still in flight are waited for and the pool is closed as
        # after normal work: Pool.terminate(), which leaving a ``with`` block calls, once hung the generator for
        # good, its task handler waiting for a queue lock with the workers gone.
        for result in in_flight:
            result.wait()
        pool.close()
        pool.join()


def _take(batch: Batch, written: int, limit_bytes: int | None) -> int:
    """How many of the batch's threads to keep: all, or up to the one that reaches the size limit."""
    if limit_bytes is None:
        return len(batch.threads)
    for k, (_, line_bytes, _, _) in enumerate(batch.threads):
        written += line_bytes
        if written >= limit_bytes:
            return k + 1
    return len(batch.threads)


def generate(out_dir: Path, mb: float | None = None, threads: int | None = None, seed: int = DEFAULT_SEED,
             progress: Callable[[str], None] | None = None, workers: int | None = None) -> dict:
    """Write the three stores and the manifest into out_dir; return the manifest.

    Stops after ``threads`` threads, or once the JSONL reaches ``mb`` megabytes (10^6 bytes).
    Worker processes make the threads and a child writes the SQLite files; the bytes written do not
    depend on how many workers there are.
    """
    if (mb is None) == (threads is None):
        raise ValueError("pass exactly one of mb, threads")
    t0 = time.perf_counter()
    workers = workers or max(1, min(4, os.cpu_count() or 1))
    tally = Tally()
    limit_bytes = int(mb * MB) if mb is not None else None
    written = 0
    next_note = t0 + 5
    (out_dir / MANIFEST_NAME).unlink(missing_ok=True)  # a manifest marks a complete store
    sqlite_sink = SqliteSink(out_dir, seed)
    with open(out_dir / JSONL_NAME, "wb") as jsonl:
        for batch in batches(seed, workers, threads):
            take = _take(batch, written, limit_bytes)
            size = sum(line_bytes for _, line_bytes, _, _ in batch.threads[:take])
            jsonl.write(memoryview(batch.jsonl)[:size])
            sqlite_sink.send(batch, take)
            for thread_id, line_bytes, n_items, facts in batch.threads[:take]:
                tally.add(thread_id, n_items, line_bytes, facts)
            written += size
            if progress and time.perf_counter() > next_note:
                next_note += 5
                progress(f"{len(tally.sizes):,} threads, {written / MB:,.0f} MB, {time.perf_counter() - t0:.0f} s")
            if take < len(batch.threads) or (limit_bytes is not None and written >= limit_bytes):
                break
    sqlite_sink.close()
    manifest = {
        "format_version": FORMAT_VERSION, "generator": "benchmarks/generate.py", "seed": seed,
        "requested": {"mb": mb, "threads": threads},
        "jsonl_bytes": written,
        "files": {"jsonl": JSONL_NAME, "threads_db": THREADS_DB_NAME, "items_db": ITEMS_DB_NAME},
        "file_bytes": {name: (out_dir / name).stat().st_size for name in (JSONL_NAME, THREADS_DB_NAME, ITEMS_DB_NAME)},
        "items_db_active_threads": ACTIVE_THREADS,
        **tally.manifest(),
        "seconds": round(time.perf_counter() - t0, 2),
        "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
    }
    (out_dir / MANIFEST_NAME).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    return manifest


def summary(m: dict) -> str:
    """A few lines on what was written, for people (stderr)."""
    c, tb, ti = m["counts"], m["thread_bytes"], m["thread_items"]
    total = sum(m["file_bytes"].values())
    return "\n".join((
        f"threads {c['threads']:,}  items {c['items']:,}  calls {c['function_calls']:,}  "
        f"outputs {c['function_call_outputs']:,}  error outputs {c['error_outputs']:,}",
        f"stuck threads {c['stuck_threads']:,}  dangling calls {c['dangling_calls']:,}",
        f"bytes/thread mean {tb['mean']:,.0f}  p50 {tb['p50']:,}  p99 {tb['p99']:,}  max {tb['max']:,}; "
        f"items/thread mean {ti['mean']:.1f}  max {ti['max']:,}",
        f"JSONL {m['jsonl_bytes'] / MB:,.1f} MB, all files {total / MB:,.1f} MB in {m['seconds']:.1f} s "
        f"({m['jsonl_bytes'] / MB / m['seconds']:,.0f} MB/s JSONL, {total / MB / m['seconds']:,.0f} MB/s written)",
    ))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--mb", type=float, help="stop once the JSONL reaches N MB (default 50)")
    size.add_argument("--size", choices=sorted(SIZES_MB), help="quick = 5 MB, default = 50 MB, large = 1000 MB")
    size.add_argument("--threads", type=int, help="write exactly N threads")
    ap.add_argument("--out", help="output directory (default: a fresh temporary directory)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--dialects", nargs="?", const=",".join(DIALECTS), default="",
                    help="also write the threads in these dialects (comma-separated; alone: all of "
                         f"{', '.join(DIALECTS)}), each as JSONL and as a folder of {FOLDER_FILES:,} small files")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    mb = None if a.threads else (a.mb if a.mb is not None else SIZES_MB[a.size or "default"])
    out = prepare_out(a.out)
    print(f"writing to {out}", file=sys.stderr)
    m = generate(out, mb=mb, threads=a.threads, seed=a.seed, progress=lambda s: print("  " + s, file=sys.stderr))
    print(summary(m), file=sys.stderr)
    if a.dialects:
        write_dialects(out, tuple(n.strip() for n in a.dialects.split(",") if n.strip()))
        print(f"  dialects: {a.dialects}", file=sys.stderr)
    print(out)


if __name__ == "__main__":
    main()
