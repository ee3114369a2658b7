"""Importing this module registers every command on the app (one module per command)."""

from threadfix.cli import _register

_register()
