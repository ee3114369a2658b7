"""A stand-in for the app that owns the threads, run as a separate interpreter by the reliability tests.

It reads one JSON command per line on stdin and answers one JSON line on stdout:

- ``{"op": "append", "path": P, "mode": "reopen"|"keep", "kind": "thread"|"item", "seed": S,
  "min_ms": A, "max_ms": B}`` starts appending lines to ``P`` in the background with ``O_APPEND``, one
  whole line per ``write``, every A-B ms. ``reopen`` opens and closes the file for every line (a logger
  that reopens); ``keep`` opens it once and keeps the descriptor across whatever happens to the path
  (a long-lived log handle). Answers ``{"ok": true}`` once the first line is written.
- ``{"op": "rewrite", "path": P, "mode": "rename"|"inplace", "seed": S, "min_ms": A, "max_ms": B}`` keeps
  a one-document JSON thread and writes it out again with one more item every A-B ms: through a temp file
  and ``rename`` (the safe way), or truncating the file in place (the common way).
- ``{"op": "stop"}`` stops appending (or rewriting) and answers ``{"written": N}``: lines 0..N-1 were written.
- ``{"op": "sessions", "folder": F, "count": N, "tool_ms": T}`` plays N tool calls one after another,
  each in its own item-per-line JSONL file: a user message, a function call, then T ms later the
  call's real output (the tool "ran" for T ms), then reads the file back as an app would before its next
  model request. Answers ``{"done": N, "duplicates": D}``: D calls had two outputs at that moment.

Every line it writes is self-identifying (``app_seq``), so a test can tell exactly which were lost,
duplicated or torn.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time


def app_line(kind: str, seq: int) -> bytes:
    """The ``seq``-th line the app writes: a whole thread (one per line) or one item of a thread."""
    if kind == "thread":
        items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"app {seq}"}]},
                 {"type": "function_call", "call_id": f"call_app_{seq}", "name": "shell", "arguments": "{}"}]
        if seq % 3:  # two in three are healthy; the others dangle and are repaired like any thread
            items.append({"type": "function_call_output", "call_id": f"call_app_{seq}", "output": "ok"})
        value = {"id": f"app-{seq}", "app_seq": seq, "items": items}
    else:
        value = {"type": "message", "role": "user", "app_seq": seq,
                 "content": [{"type": "input_text", "text": f"app {seq}"}]}
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


class Writer(threading.Thread):
    """Writes line after line (``step``) at random intervals until told to stop."""

    def __init__(self, path: str, seed: int, min_ms: float, max_ms: float, delay_ms: float = 0) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.random = random.Random(seed)
        self.delays = (min_ms / 1000, max_ms / 1000)
        self.delay = delay_ms / 1000
        self.written = 0
        self.first = threading.Event()
        self.halt = threading.Event()

    def run(self) -> None:
        try:
            if self.delay:
                self.halt.wait(self.random.uniform(0, self.delay))
            self.begin()
            while True:
                self.step(self.written)
                self.written += 1
                self.first.set()
                if self.halt.wait(self.random.uniform(*self.delays)):
                    break
        finally:
            self.end()
            self.first.set()

    def begin(self) -> None:
        pass

    def step(self, seq: int) -> None:
        raise NotImplementedError

    def end(self) -> None:
        pass


class Appender(Writer):
    def __init__(self, *args, mode: str, kind: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.mode, self.kind = mode, kind
        self.fd: int | None = None

    def begin(self) -> None:
        if self.mode == "keep":
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def step(self, seq: int) -> None:
        line = app_line(self.kind, seq)
        if self.fd is not None:
            os.write(self.fd, line)
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def end(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


class DocumentWriter(Writer):
    """An app that keeps a JSON thread in memory and saves the whole document after each new item."""

    def __init__(self, *args, mode: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.mode = mode
        with open(self.path, "rb") as handle:
            self.document = json.load(handle)

    def step(self, seq: int) -> None:
        self.document["items"].append(json.loads(app_line("item", seq)))
        data = json.dumps(self.document, indent=2).encode() + b"\n"
        if self.mode == "rename":
            temp = f"{self.path}.app-tmp"
            with open(temp, "wb") as handle:
                handle.write(data)
            os.replace(temp, self.path)
        else:
            with open(self.path, "wb") as handle:
                handle.write(data)


def play_sessions(folder: str, count: int, tool_ms: float) -> int:
    """Returns how many times the app, right after writing a call's output, found a second one."""
    duplicates = 0
    for n in range(count):
        path = os.path.join(folder, f"session-{n:04d}.jsonl")
        call = {"type": "function_call", "call_id": f"call_{n}", "name": "shell", "arguments": "{}"}
        output = {"type": "function_call_output", "call_id": f"call_{n}", "output": f"done {n}"}
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"run {n}"}]}
        for item in (user, call):
            _append(path, item)
        time.sleep(tool_ms / 1000)
        _append(path, output)
        with open(path, "rb") as handle:
            answers = [json.loads(line) for line in handle if line.strip()]
        duplicates += sum(1 for item in answers if item.get("type") == "function_call_output"
                          and item.get("call_id") == f"call_{n}") > 1
    return duplicates


def _append(path: str, item: dict) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, json.dumps(item).encode() + b"\n")
    finally:
        os.close(fd)


def answer(value: dict) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def main() -> None:
    writer: Writer | None = None
    for text in sys.stdin:
        command = json.loads(text)
        op = command["op"]
        timing = {"seed": command.get("seed", 0), "min_ms": command.get("min_ms", 1),
                  "max_ms": command.get("max_ms", 10), "delay_ms": command.get("delay_ms", 0)}
        if op in ("append", "rewrite"):
            if op == "append":
                writer = Appender(command["path"], mode=command["mode"], kind=command.get("kind", "thread"), **timing)
            else:
                writer = DocumentWriter(command["path"], mode=command["mode"], **timing)
            writer.start()
            if not timing["delay_ms"]:
                writer.first.wait()
            answer({"ok": True})
        elif op == "stop":
            assert writer is not None
            writer.halt.set()
            writer.join()
            answer({"written": writer.written})
            writer = None
        elif op == "sessions":
            duplicates = play_sessions(command["folder"], command["count"], command["tool_ms"])
            answer({"done": command["count"], "duplicates": duplicates})


if __name__ == "__main__":
    main()
