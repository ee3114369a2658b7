"""Run threadfix on a real pseudo-terminal and read back what a person would see on the screen."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SGR = re.compile(r"\x1b\[[0-9;]*m")
_TOKEN = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\r|\n|[^\x1b\r\n]")


def run_on_pty(args: list[str], *, cwd: Path, columns: int = 80, env: dict[str, str] | None = None,
               stdout_on_pty: bool = True, stderr_on_pty: bool = True,
               timeout: float = 60.0) -> tuple[bytes, bytes, int]:
    """``python -m threadfix ARGS`` with stderr and stdout (unless told) on one terminal of ``columns``.

    Returns the raw bytes the terminal received, the bytes of the stream that is a pipe (empty when both are
    on the terminal), and the exit code.
    """
    assert stdout_on_pty or stderr_on_pty, "one of the streams must be on the terminal"
    leader, follower = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color",
                   "XDG_STATE_HOME": str(cwd / ".state"), **(env or {})}
    for name in ("COLUMNS", "LINES"):
        environment.pop(name, None)
    if env is None or "NO_COLOR" not in env:
        environment.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "threadfix", *args], cwd=cwd, env=environment,
                               stdin=subprocess.DEVNULL,
                               stderr=follower if stderr_on_pty else subprocess.PIPE,
                               stdout=follower if stdout_on_pty else subprocess.PIPE)
    os.close(follower)
    pipe = process.stdout if process.stdout is not None else process.stderr
    piped: list[bytes] = []
    drain = threading.Thread(target=lambda: piped.append(pipe.read() if pipe is not None else b""), daemon=True)
    drain.start()  # read beside the terminal, so that a full pipe never stalls the child
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    drain.join(timeout)
    return b"".join(chunks), b"".join(piped), process.wait(timeout)


def screen(raw: bytes) -> list[str]:
    """The lines a terminal shows after ``raw``: carriage returns, erasures and overwrites applied, colour
    codes dropped. (The pty turns ``\\n`` into ``\\r\\n``.) A line longer than the screen stays one line here:
    callers check widths themselves."""
    lines: list[list[str]] = [[]]
    column = 0
    for token in _TOKEN.findall(SGR.sub("", raw.decode("utf-8", "replace"))):
        line = lines[-1]
        if token == "\n":
            lines.append([])
            column = 0
        elif token == "\r":
            column = 0
        elif token in ("\x1b[2K", "\x1b[K", "\x1b[0K"):
            del line[column if token != "\x1b[2K" else 0:]
        elif token.startswith("\x1b"):
            continue
        else:
            if column < len(line):
                line[column] = token
            else:
                line.extend(" " * (column - len(line)))
                line.append(token)
            column += 1
    shown = ["".join(line).rstrip() for line in lines]
    while shown and not shown[-1]:
        shown.pop()
    return shown
