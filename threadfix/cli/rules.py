"""``threadfix rules``."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from threadfix.cli import app
from threadfix.cli.options import check_format, command_settings, format_option, takes_global_options

FORMATS = ("text", "json")


@app.command()
@takes_global_options(jobs=False)
def rules(
    code: Annotated[Optional[str], typer.Argument(metavar="CODE", help="A rule's code (TF001) or name (dangling-call): print its documentation.", show_default=False)] = None,
    output_format: format_option(FORMATS) = "text",
) -> None:
    """List lint rules (code, name, severity, fix), or print one rule's documentation.

    \b
    Exit codes:
      0    done
      2    usage error (an unknown rule)
    """
    import orjson

    from threadfix import rules as registry

    check_format(output_format, FORMATS)
    command_settings("rules")
    chosen = [registry.get(code)] if code is not None else list(registry.all_rules())
    if output_format == "json":
        records = [{"code": r.code, "name": r.name, "severity": r.severity.value, "fix": r.fix.value,
                    "summary": r.summary, **({"doc": r.doc()} if code is not None else {})} for r in chosen]
        sys.stdout.buffer.write(orjson.dumps(records[0] if code is not None else records, option=orjson.OPT_INDENT_2) + b"\n")
        return
    if code is not None:
        rule = chosen[0]
        sys.stdout.write(f"{rule.code} {rule.name} ({rule.severity}, fix: {rule.fix})\n\n{rule.doc()}\n")
        return
    width = max(len(r.name) for r in chosen)
    sys.stdout.write(f"{'code':<6} {'name':<{width}} {'severity':<8} {'fix':<9} summary\n")
    for rule in chosen:
        sys.stdout.write(f"{rule.code:<6} {rule.name:<{width}} {rule.severity.value:<8} {rule.fix.value:<9} "
                         f"{rule.summary}\n")
