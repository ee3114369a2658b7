"""Suite-wide settings: hypothesis profiles (``ci`` is the default and deterministic;
THREADFIX_HYPOTHESIS=thorough for many more, freshly random examples)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# CI replays the same examples every run (a red build always means a change broke something); the
# thorough profile explores new ones and is where new counterexamples are found.
settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("THREADFIX_HYPOTHESIS", "ci"))


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="Also run the long campaigns (tests marked slow).")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` are deselected unless ``--run-slow`` is given, so CI stays fast."""
    if config.getoption("--run-slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
