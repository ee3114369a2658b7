"""``threadfix rules``."""

from __future__ import annotations

import sys

from threadfix.cli.options import add_format, add_global_options, check_format, command_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

    from threadfix.cli.parser import Parser

USAGE = "threadfix rules [OPTIONS] [CODE]"
HELP = """List lint rules (code, name, severity, fix), or print one rule's documentation.

Exit codes:
  0    done
  2    usage error (an unknown rule)
"""
FORMATS = ("text", "json")


def arguments(parser: Parser) -> None:
    parser.add_argument("code", nargs="?", metavar="CODE",
                        help="A rule's code (TF001) or name (dangling-call): print its documentation.")
    add_format(parser, FORMATS)
    add_global_options(parser, jobs=False)


def run(args: Namespace) -> int:
    import orjson

    from threadfix import rules as registry

    code, output_format = args.code, args.output_format
    check_format(output_format, FORMATS)
    command_settings("rules")
    chosen = [registry.get(code)] if code is not None else list(registry.all_rules())
    if output_format == "json":
        records = [{"code": r.code, "name": r.name, "severity": r.severity.value, "fix": r.fix.value,
                    "summary": r.summary, **({"doc": r.doc()} if code is not None else {})} for r in chosen]
        sys.stdout.buffer.write(orjson.dumps(records[0] if code is not None else records, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    if code is not None:
        rule = chosen[0]
        sys.stdout.write(f"{rule.code} {rule.name} ({rule.severity}, fix: {rule.fix})\n\n{rule.doc()}\n")
        return 0
    width = max(len(r.name) for r in chosen)
    sys.stdout.write(f"{'code':<6} {'name':<{width}} {'severity':<8} {'fix':<9} summary\n")
    for rule in chosen:
        sys.stdout.write(f"{rule.code:<6} {rule.name:<{width}} {rule.severity.value:<8} {rule.fix.value:<9} "
                         f"{rule.summary}\n")
    return 0
