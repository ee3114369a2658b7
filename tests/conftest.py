"""Suite-wide settings: hypothesis profiles (``ci`` is the default and deterministic;
THREADFIX_HYPOTHESIS=thorough for many more, freshly random examples), ``--run-slow``, two worker processes
when pytest-xdist is installed, and the reliability figures gathered from every worker."""

from __future__ import annotations

import os
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings

# CI replays the same examples every run (a red build always means a change broke something); the
# thorough profile explores new ones and is where new counterexamples are found.
settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("THREADFIX_HYPOTHESIS", "ci"))

#: CI's machine has two cores: one process leaves one idle while most tests wait on their own CPU work
DEFAULT_WORKERS = 2
#: the reliability figures the workers counted (``tests/reliability/harness.py`` counts them in each process)
WORKER_FIGURES: Counter = Counter()


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="Also run the long campaigns (tests marked slow).")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """``python -m pytest`` runs on two workers when pytest-xdist is there (``-n 0``: one process). Runs before
    xdist's own hook, which turns the worker count into its workers; without xdist nothing changes."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is not None or config.getoption("usepdb") or config.getoption("collectonly"):
        return
    if len(os.sched_getaffinity(0)) >= DEFAULT_WORKERS:
        config.option.numprocesses = DEFAULT_WORKERS
        if config.option.dist == "no":
            # a file's tests on one worker: its module fixtures and the libraries it imports are set up once
            # (no file holds more than a few percent of the suite, so neither worker is left waiting long)
            config.option.dist = "loadfile"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` are deselected unless ``--run-slow`` is given, so CI stays fast."""
    if config.getoption("--run-slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def _figures() -> Counter:
    """This process's reliability figures (none when no reliability test ran here)."""
    harness = sys.modules.get("tests.reliability.harness")
    return harness.FIGURES if harness is not None else Counter()


def pytest_sessionfinish(session):
    """A worker hands its figures to the controller, which prints them."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["reliability_figures"] = dict(_figures())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    WORKER_FIGURES.update(getattr(node, "workeroutput", {}).get("reliability_figures", {}))


def pytest_terminal_summary(terminalreporter):
    """What the reliability campaign did (trials, faults, inputs): the figures tests/reliability/README.md quotes."""
    figures = _figures() + WORKER_FIGURES
    if figures:
        terminalreporter.section("reliability figures")
        for what, count in sorted(figures.items()):
            terminalreporter.write_line(f"{count:>9,}  {what}")
