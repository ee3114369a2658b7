"""What ``pip install threadfix`` asks for: nothing it would have to build from source.

hyperscan (lint's one-pass text scan, ``threadfix.rules.marks``) is asked for only where hyperscan 0.9 publishes
wheels for the Pythons threadfix runs on; elsewhere pip would fetch its source and fail to build it without the
C library, so the whole install would fail. The rules test each output themselves when it is absent.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

PROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
REQUIREMENTS = {Requirement(line).name: Requirement(line) for line in PROJECT["project"]["dependencies"]}


def _platform(system: str, machine: str, python: str = "3.12") -> dict[str, str]:
    return {"platform_system": system, "platform_machine": machine, "python_version": python}


@pytest.mark.parametrize("where", [
    _platform("Linux", "x86_64"), _platform("Linux", "aarch64"), _platform("Windows", "AMD64"),
    _platform("Darwin", "arm64"), _platform("Linux", "x86_64", "3.11"), _platform("Linux", "x86_64", "3.14"),
])
def test_hyperscan_is_asked_for_where_its_wheels_are(where: dict[str, str]) -> None:
    assert REQUIREMENTS["hyperscan"].marker.evaluate(where)


@pytest.mark.parametrize("where", [
    _platform("Darwin", "x86_64"),  # wheels only for macOS 13 and later
    _platform("Linux", "armv7l"), _platform("Linux", "ppc64le"), _platform("Linux", "s390x"),
    _platform("Windows", "ARM64"), _platform("FreeBSD", "amd64"),
    _platform("Linux", "x86_64", "3.15"),  # no wheel published yet
])
def test_hyperscan_is_not_asked_for_where_pip_would_build_it(where: dict[str, str]) -> None:
    assert not REQUIREMENTS["hyperscan"].marker.evaluate(where)


def test_no_command_line_framework_is_a_dependency() -> None:
    """The command line is argparse (``threadfix.cli.parser``): typer and its click cost every run 30-40 ms."""
    assert not {"typer", "click"} & REQUIREMENTS.keys()


def test_the_license_is_an_spdx_expression() -> None:
    """setuptools deprecates the table form (``{ text = ... }``) and stops building it in February 2027."""
    assert PROJECT["project"]["license"] == "MIT"
    assert any(req.startswith("setuptools>=77") for req in PROJECT["build-system"]["requires"])
