#!/usr/bin/env python3
"""Run one command; print its wall time, CPU time, peak RSS and exit status as one JSON line.

    python benchmarks/measure.py [--timeout S] [--stdout FILE] [--stderr FILE] -- CMD [ARG...]

run.py starts every case through this helper instead of spawning it itself. On Linux a process
that execs straight from a vfork (as subprocess and posix_spawn do) is charged its parent's peak
RSS, so a command spawned from the runner, which may hold a generator's buffers, would report the
runner's peak instead of its own. Spawned from this small process, a command's peak is its own
(or this helper's ~10 MB, below any Python process's). The peak is the largest of the command and
the children it waited for (wait4 semantics), not their sum.

Only the standard library's os, sys, time and signal are imported, so this process stays small.
"""

import os
import signal
import sys
import time


def parse(argv: list[str]) -> tuple[float, str, str, list[str]]:
    """Options before "--", the command after it."""
    if "--" not in argv:
        raise SystemExit("usage: measure.py [--timeout S] [--stdout FILE] [--stderr FILE] -- CMD [ARG...]")
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1:]
    values = {"--timeout": "0", "--stdout": os.devnull, "--stderr": os.devnull}
    for i in range(0, len(opts), 2):
        if opts[i] not in values or i + 1 >= len(opts):
            raise SystemExit(f"measure.py: unknown or incomplete option {opts[i]!r}")
        values[opts[i]] = opts[i + 1]
    if not cmd:
        raise SystemExit("measure.py: no command after --")
    return float(values["--timeout"]), values["--stdout"], values["--stderr"], cmd


def measure(timeout: float, stdout: str, stderr: str, cmd: list[str]) -> dict:
    """Spawn cmd in its own process group, wait for it, and report what wait4 says about it."""
    out_flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, stdout, out_flags, 0o644),
               (os.POSIX_SPAWN_OPEN, 2, stderr, out_flags, 0o644)]
    timed_out = []

    def kill_group(signum: int, frame: object) -> None:
        timed_out.append(True)
        os.killpg(pid, signal.SIGKILL)  # the whole group: --jobs workers too

    t0 = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=actions, setpgroup=0)
    if timeout > 0:
        signal.signal(signal.SIGALRM, kill_group)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    signal.setitimer(signal.ITIMER_REAL, 0)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_rss_kb": usage.ru_maxrss,
            "rc": os.waitstatus_to_exitcode(status), "timed_out": bool(timed_out)}


def main() -> None:
    try:
        result = measure(*parse(sys.argv[1:]))
    except OSError as e:  # the command could not be started: say so as JSON, for run.py
        import json
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        sys.exit(1)
    print("{" + ", ".join(f'"{k}": {str(v).lower() if isinstance(v, bool) else v}' for k, v in result.items()) + "}")


if __name__ == "__main__":
    main()
