"""``threadfix lint``."""

from __future__ import annotations

import sys

from threadfix.cli import State, describe_store, error_line, note, stdout_is_terminal, use_color
from threadfix.cli.options import (add_format, add_global_options, add_min_age, add_paths, add_settings_options,
                                   add_store_options, add_waiting_options, check_format, command_settings, one_stdin,
                                   option_value, store_options)
from threadfix.cli.values import by_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

    from threadfix.cli.parser import Parser

USAGE = "threadfix lint [OPTIONS] PATH..."
HELP = """Find what is wrong or risky in stored threads: dangling calls, outputs a provider refuses, errors the
model cannot act on, oversized outputs, leaked secrets and stack traces. Reads only.

One line per finding on stdout (`address#item: CODE message (rule-name)`), a summary on stderr.
`threadfix rules` lists the rules; `threadfix rules CODE` explains one. Settings come from
`[tool.threadfix.lint]` (and `[tool.threadfix]`) in pyproject.toml or `[lint]` in threadfix.toml;
options override them.

Exit codes:
  0    no finding at or above --fail-on
  1    findings at or above --fail-on (warning unless told)
  2    usage error, or some input could not be read (the rest is still linted)
  75   a database was locked past --busy-timeout: retry
  130  interrupted
"""
FORMATS = {"text": "one line per finding", "json": "", "jsonl": "", "github": "workflow annotations",
           "sarif": "2.1.0"}


def arguments(parser: Parser) -> None:
    add_paths(parser)
    parser.add_argument("--select", action="append", metavar="RULES", help=(
        "Run only these rules: codes by prefix (TF0, TF201) or names, comma-separated or repeated. Default: all."))
    parser.add_argument("--ignore", action="append", metavar="RULES", help=(
        "Leave out these rules (codes by prefix or names). The more specific of --select and --ignore wins."))
    parser.add_argument("--fail-on", metavar="SEVERITY", help=(
        "Exit 1 when a finding is at least this severe: error, warning or info. Default: warning."))
    parser.add_argument("--exit-zero", action="store_true",
                        help="Exit 0 even with findings (errors reading input still exit 2).")
    add_format(parser, FORMATS)
    add_min_age(parser, "0", "lint reads only: it reports what is stored now; give repair's 10m to see what repair "
                             "would touch")
    add_waiting_options(parser, answer=True)
    parser.add_argument("--oversized-bytes", metavar="BYTES", type=by_key("oversized-bytes", "lint"), help=(
        "Outputs larger than this many bytes are oversized (TF203); at least 1. Default: 100000."))
    add_settings_options(parser)
    add_store_options(parser)
    add_global_options(parser, jobs=True)


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    """``--select TF0,TF2`` and ``--select TF0 --select TF2`` alike."""
    if values is None:
        return None
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


#: the formats whose answer for paths that all name nothing is made without the library (SARIF's lists every rule)
ANSWERED_WITHOUT_THE_LIBRARY = ("text", "json", "jsonl", "github")


def run(args: Namespace) -> int:
    from threadfix import config as settings
    from threadfix.given import names_nothing

    check_format(args.output_format, tuple(FORMATS))
    one_stdin(args.paths)
    found = command_settings("lint", args.config, args.isolated)
    keys = settings.SECTIONS["lint"]
    given = {"select": _split(args.select), "ignore": _split(args.ignore), "oversized_bytes": args.oversized_bytes,
             "fail_on": None if args.fail_on is None else keys["fail-on"].read(args.fail_on, "--fail-on"),
             "min_age": option_value("min-age", args.min_age),
             "leave_tools": option_value("leave-tools", args.leave_tool, "--leave-tool"),
             "answer_waiting": args.answer_waiting or None}
    if (args.output_format in ANSWERED_WITHOUT_THE_LIBRARY and None is args.dialect is args.select is args.ignore
            and all(map(names_nothing, args.paths)) and (args.output_format != "json" or all(map(_utf8, _answer_words(args.paths))))):
        # every option the run checks before its read is checked (--dialect, --select and --ignore by the
        # registries: left to the run); what is left is what the run says of a read of nothing (issue #28)
        return _nothing_there(args.paths, args.output_format)
    from threadfix.batch import Problem
    from threadfix.cli.progress import progress_line
    from threadfix.lint import LintOptions, LintRun
    from threadfix.render.lint import FORMATTERS, summary_line

    lint_fields = set(LintOptions.__struct_fields__)
    values = {k: v for k, v in found.items() if k in lint_fields} | {k: v for k, v in given.items() if v is not None}
    options = LintOptions(**values)

    with progress_line("linting") as progress:
        lint_run = LintRun(args.paths, options, store_options(args, found), progress=progress, jobs=State.jobs,
                           on_store=describe_store)
        formatter = FORMATTERS[args.output_format](sys.stdout.buffer, lint_run.rules)
        formatter.color = use_color(stdout_is_terminal())
        formatter.start()
        for result in lint_run.results():
            if isinstance(result, Problem):
                error_line(result.where, result.message)
            else:
                formatter.thread(result)
        formatter.finish(lint_run.summary)
    note(summary_line(lint_run.summary))
    return int(lint_run.summary.exit_code(options.fail_on, args.exit_zero))


def _utf8(spec: str) -> bool:
    """Whether ``spec`` is text JSON can carry (a path the system gave as undecodable bytes holds surrogates)."""
    try:
        spec.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _answer_words(paths: list[str]) -> list[str]:
    """Each path and what the answer says of it (a symbolic link's target is words of the system's too)."""
    from threadfix.given import nothing_there

    return [*paths, *map(nothing_there, paths)]


def _nothing_there(paths: list[str], output_format: str) -> int:
    """What a run whose every path names nothing prints, byte for byte, and its exit status, without the library:
    the read's line for each path, the JSON format's document (the other formats print nothing on stdout for a run
    with no finding), then the summary line."""
    from threadfix.errors import ExitCode
    from threadfix.given import nothing_there
    from threadfix.render.lint_summary import JSON_END, JSON_START, JSON_SUMMARY, nothing_read, problem_fields

    reasons = [nothing_there(spec) for spec in paths]
    for spec, why in zip(paths, reasons):
        error_line(spec, why)
    line, fields = nothing_read([problem_fields(spec, why, int(ExitCode.ERROR)) for spec, why in zip(paths, reasons)])
    if output_format == "json":
        import json

        document = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))  # (what orjson writes of it)
        sys.stdout.buffer.write(JSON_START + JSON_SUMMARY + document.encode("utf-8") + JSON_END)
        sys.stdout.buffer.flush()
    note(line)
    return int(ExitCode.ERROR)
