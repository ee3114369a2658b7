"""threadfix: make stored LLM chat threads continuable again, and see what failed.

The command line is a thin layer over this library; a batch job can import the same functions::

    from threadfix import RepairRun, RunOptions
    run = RepairRun(["chats/"], RunOptions(dry_run=True, min_age=0))
    for outcome in run.outcomes():
        ...
    print(run.result.changed)

``lint_items``/``LintRun``, ``report_paths``/``build_report`` and ``classify`` are the other entry points.
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "RepairRun": "threadfix.batch",
    "RunOptions": "threadfix.batch",
    "RepairOptions": "threadfix.repair",
    "StoreOptions": "threadfix.stores",
    "plan_repair": "threadfix.repair",
    "repair_items": "threadfix.repair",
    "undo": "threadfix.undo",
    "Kind": "threadfix.failures",
    "classify": "threadfix.failures",
    "scan": "threadfix.batch",
    "LintRun": "threadfix.lint",
    "LintOptions": "threadfix.lint",
    "lint_items": "threadfix.lint",
    "build_report": "threadfix.report",
    "report_paths": "threadfix.report",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):  # imports stay lazy so that `threadfix --help` starts fast
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(module), name)
