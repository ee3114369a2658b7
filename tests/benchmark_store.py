"""The benchmark scripts (benchmarks/generate.py, floors.py, run.py) as modules, for tests that check fast
paths on the same realistic threads the benchmarks measure, and the runner's own logic."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def script(stem: str) -> ModuleType:
    """``benchmarks/<stem>.py`` as a module, loaded once (they are scripts, not part of a package, and import
    each other by name as when run from their folder)."""
    name = f"threadfix_benchmark_{stem}"
    if name not in sys.modules:
        if str(BENCHMARKS) not in sys.path:
            sys.path.insert(0, str(BENCHMARKS))
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{stem}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up while being built
        spec.loader.exec_module(module)
    return sys.modules[name]


def generator() -> ModuleType:
    """benchmarks/generate.py."""
    return script("generate")
