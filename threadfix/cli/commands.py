"""Importing this module imports every command's module (for tools that instrument them all at once)."""

import importlib

from threadfix.cli import COMMANDS

for _name in COMMANDS:
    importlib.import_module(f"threadfix.cli.{_name}")
