"""Coverage-guided fuzzing of every loader and command with atheris (nightly; CI replays the corpus).

Each input is a file's bytes plus one selector byte (which suffix, or stdin). ``one_input`` runs
``repair --dry-run``, ``lint`` and ``report`` on it through the CLI's real entry point and raises when
threadfix prints a traceback, an internal error, or an error line not of the form
``threadfix: error: <where>: <what>``. Run it (pip install atheris) with a scratch folder first, so
that libFuzzer writes what it finds there and not into the seed corpus::

    python tests/reliability/fuzz_loaders.py -max_total_time=3600 -artifact_prefix=fuzz-scratch/ \
        fuzz-scratch/ tests/reliability/nasty/

A crash it finds goes into ``tests/reliability/nasty/`` with its expectation, where CI replays it.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SUFFIXES = (".json", ".jsonl", ".txt", "-")
FOLDER = Path(tempfile.mkdtemp(prefix="threadfix-fuzz-"))


def one_input(data: bytes) -> None:
    """Throw one input at every reader; raise on anything but clean one-line errors."""
    from tests.reliability.harness import cli

    suffix = SUFFIXES[data[0] % len(SUFFIXES)] if data else ".json"
    body = data[1:]
    if suffix == "-":
        runs = [cli("repair", "--dry-run", "--min-age", "0", "-", stdin=body)]
    else:
        path = FOLDER / f"input{suffix}"
        path.write_bytes(body)
        runs = [cli("repair", "--dry-run", "--min-age", "0", str(path)), cli("lint", str(path)),
                cli("report", str(path))]
    for ran in runs:
        ran.errors()  # asserts: no traceback, every stderr line threadfix's, error lines well formed
        if "internal error" in ran.stderr or ran.code not in (0, 1, 2):
            raise AssertionError(f"exit {ran.code}: {ran.stderr[-300:]}")


def main() -> None:
    import atheris

    with atheris.instrument_imports(include=["threadfix"]):  # before anything imports threadfix
        import threadfix.cli.commands  # noqa: F401
        import threadfix.lint  # noqa: F401
        import threadfix.report  # noqa: F401
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
