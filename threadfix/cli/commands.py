"""Importing this module registers every command on the app (one module per command)."""

from threadfix.cli import dialects, lint, repair, report, rules, undo  # noqa: F401
