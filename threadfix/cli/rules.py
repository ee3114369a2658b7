"""``threadfix rules``."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from threadfix.cli import app
from threadfix.cli.options import check_format


@app.command()
def rules(
    code: Annotated[Optional[str], typer.Argument(help="A rule's code (TF001) or name (dangling-call): print its documentation.", show_default=False)] = None,
    output_format: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
) -> None:
    """List lint rules (code, name, severity, fix), or print one rule's documentation."""
    import orjson

    from threadfix import rules as registry

    check_format(output_format, ("text", "json"))
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
