"""Print what the reliability campaign did (trials, faults, inputs), the figures the README quotes."""

from __future__ import annotations

from tests.reliability.harness import FIGURES


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if FIGURES:
        terminalreporter.section("reliability figures")
        for what, count in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{count:>9,}  {what}")
