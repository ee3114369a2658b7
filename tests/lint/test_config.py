"""Settings files: found from the current folder up, every key checked, unknown ones refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from threadfix import config
from threadfix.errors import ConfigError
from threadfix.lint import LintOptions
from threadfix.model import Severity


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_pyproject_table_is_read_into_lint_options(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", """
[project]
name = "x"

[tool.threadfix.lint]
select = ["TF0", "secret-in-output"]
ignore = ["TF007"]
fail-on = "error"
min-age = "10m"
oversized-bytes = 200_000
stuck-turns = 2
retry-storm = 4
scan-chars = 1000
""")
    found = config.load(start=tmp_path)
    assert found.path == tmp_path / "pyproject.toml"
    options = LintOptions(**found.section("lint"))
    assert options == LintOptions(select=("TF0", "secret-in-output"), ignore=("TF007",), fail_on=Severity.ERROR,
                                  min_age=600.0, oversized_bytes=200_000, stuck_turns=2, retry_storm=4, scan_chars=1000)


def test_found_from_a_subfolder_and_threadfix_toml_wins(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.threadfix.lint]\nstuck-turns = 2\n")
    write(tmp_path / "threadfix.toml", "[lint]\nstuck-turns = 3\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert config.load(start=deep).section("lint") == {"stuck_turns": 3}


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    write(tmp_path / "threadfix.toml", "[lint]\nretry-storm = 5\n")
    write(tmp_path / "sub" / "pyproject.toml", "[tool.black]\nline-length = 100\n")
    assert config.find(tmp_path / "sub") == tmp_path / "threadfix.toml"


def test_no_file_gives_no_settings(tmp_path: Path) -> None:
    found = config.load(start=tmp_path)  # the temporary folder's parents hold no settings file
    assert found.path is None and found.section("lint") == {}


@pytest.mark.parametrize(("text", "message"), [
    ("[tool.threadfix.lint]\nselct = ['TF0']\n", "unknown [tool.threadfix.lint] key 'selct' (did you mean 'select'?)"),
    ("[tool.threadfix.lnt]\nselect = ['TF0']\n", "unknown table [tool.threadfix.lnt] (did you mean 'lint'?)"),
    ("[tool.threadfix]\nlint = 3\n", "[tool.threadfix.lint] must be a table"),
    ("[tool.threadfix.lint]\noversized-bytes = 'big'\n", "[tool.threadfix.lint] oversized-bytes must be an integer of at least 1, not 'big'"),
    ("[tool.threadfix.lint]\nstuck-turns = true\n", "stuck-turns must be an integer of at least 1, not True"),
    ("[tool.threadfix.lint]\nretry-storm = 1\n", "retry-storm must be an integer of at least 2, not 1"),
    ("[tool.threadfix.lint]\nfail-on = 'fatal'\n", "fail-on must be one of error, warning, info, not 'fatal'"),
    ("[tool.threadfix.lint]\nselect = 'TF0'\n", "select must be a list of strings"),
    ("[tool.threadfix.lint]\nignore = ['TF999']\n", "[tool.threadfix.lint] ignore: 'TF999' matches no rule code or name"),
    ("[tool.threadfix.lint]\nmin-age = 'soon'\n", "[tool.threadfix.lint] min-age: not a duration: 'soon'"),
    ("[tool.threadfix.lint\n", "not valid TOML"),
])
def test_bad_settings_are_refused_by_name(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "pyproject.toml", text)
    with pytest.raises(ConfigError) as caught:
        config.load(path)
    assert message in caught.value.message
    assert caught.value.where == str(path)


def test_threadfix_toml_names_its_tables_without_the_tool_prefix(tmp_path: Path) -> None:
    path = write(tmp_path / "threadfix.toml", "[lint]\nfail_on = 'error'\n")
    with pytest.raises(ConfigError, match=r"unknown \[lint\] key 'fail_on' \(did you mean 'fail-on'\?\)"):
        config.load(path)


def test_an_explicit_pyproject_without_the_table_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    with pytest.raises(ConfigError, match=r"has no \[tool.threadfix\] table"):
        config.load(path)


def test_every_lint_key_sets_a_lint_option() -> None:
    """(The keys every store-reading command shares set the store and run options: tests/cli/test_settings.py.)"""
    fields = set(LintOptions.__struct_fields__)
    elsewhere = {"max-doc-mb", "busy-timeout", "jobs", "color"}
    assert {key.field for key in config.SECTIONS["lint"].values() if key.name not in elsewhere} <= fields
