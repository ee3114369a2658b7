"""The benchmark store generator (benchmarks/generate.py), imported by tests that check fast paths on the
same realistic threads the benchmarks measure."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_NAME = "threadfix_benchmark_generate"


def generator() -> ModuleType:
    """benchmarks/generate.py as a module (it is a script, not part of a package)."""
    if _NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(_NAME, BENCHMARKS / "generate.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module  # its dataclasses look their module up while being built
        spec.loader.exec_module(module)
    return sys.modules[_NAME]
