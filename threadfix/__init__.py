"""threadfix: make stored LLM chat threads continuable again, and see what failed.

The command line is a thin layer over this library: a batch job imports the same functions and gets the
same results, as plain data (msgspec Structs), with nothing printed.

Repair (a dry run here; drop ``dry_run`` to write, atomically, with an undo journal)::

    from threadfix import RepairRun, RunOptions

    run = RepairRun("chats/", RunOptions(dry_run=True, min_age="10m"))
    for outcome in run.threads():          # ThreadOutcome: address, status, plan.edits
        print(outcome.address, outcome.status, len(outcome.plan.edits))
    for problem in run.result.problems:    # Problem: where, message, exit_code (never mixed in above)
        print("could not read", problem.where, problem.message)
    print(run.result.changed, "of", run.result.threads, "threads;", "exit", int(run.result.exit_code()))

Paths are one ``str`` or ``Path`` (never iterated as characters) or a list of them; a path may be a JSON or
JSONL file, a SQLite database, or a folder of them. Options are checked when built: ``min_age`` takes seconds
or a duration string (``"10m"``), and a bad value raises ``ValueError``/``TypeError`` at once.
``RepairRun.outcomes()`` yields outcomes and problems in read order, for those who want both in one stream
(tell them apart with ``isinstance``).

Lint::

    from threadfix import LintOptions, LintRun

    run = LintRun("chats.jsonl", LintOptions(select=("TF0",), min_age="10m"))
    for result in run.results():           # ThreadResult (its findings) or Problem
        ...
    print(run.summary.findings, int(run.summary.exit_code()))

Report: ``report_paths(paths, min_age=..., leave_tools=...)`` returns a :class:`Report` (totals, tools,
clusters, stuck threads). Undo: ``undo_journal(journal, dry_run=False)`` yields an :class:`UndoOutcome` per thread.
One thread in memory: ``repair_items(items, dialect)``, ``lint_items(items, dialect)``, ``plan_repair``.
Errors a caller can act on are :class:`ThreadfixError` (``InputError``, ``StoreError``, ``BusyError``,
``ConfigError``), each with ``where``, ``message`` and ``exit_code`` (:class:`ExitCode`).
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    # repair
    "RepairRun": "threadfix.batch",
    "RunOptions": "threadfix.batch",
    "RunResult": "threadfix.batch",
    "ThreadOutcome": "threadfix.batch",
    "Problem": "threadfix.batch",
    "scan": "threadfix.batch",
    "RepairOptions": "threadfix.repair",
    "plan_repair": "threadfix.repair",
    "repair_items": "threadfix.repair",
    "StoreOptions": "threadfix.stores",
    # lint
    "LintRun": "threadfix.lint",
    "LintOptions": "threadfix.lint",
    "LintSummary": "threadfix.lint",
    "ThreadResult": "threadfix.lint",
    "lint_items": "threadfix.lint",
    "Finding": "threadfix.model",
    "Severity": "threadfix.model",
    # report
    "Report": "threadfix.report",
    "build_report": "threadfix.report",
    "report_paths": "threadfix.report",
    # undo
    # (not ``undo``: that name is the submodule threadfix.undo as soon as anything imports it)
    "undo_journal": "threadfix.undo:undo",
    "UndoOutcome": "threadfix.undo",
    # failures
    "Kind": "threadfix.failures",
    "classify": "threadfix.failures",
    # errors
    "ExitCode": "threadfix.errors",
    "ThreadfixError": "threadfix.errors",
    "InputError": "threadfix.errors",
    "StoreError": "threadfix.errors",
    "BusyError": "threadfix.errors",
    "ConfigError": "threadfix.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):  # imports stay lazy so that `threadfix --help` starts fast
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'threadfix' has no attribute {name!r}")
    import importlib

    module, _, attribute = module.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
