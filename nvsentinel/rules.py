"""``nvsentinel rules check|replay``: lint a values file; see what it would have quarantined."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvsentinel import _options as opt

app = typer.Typer(help="Check and replay fault-quarantine rule sets.", no_args_is_help=True)
ValuesFile = Annotated[Path, typer.Option("--values", "-f", help="values.yaml in NVSentinel's layout.")]


@app.command("check")
def check(values: ValuesFile) -> int:
    """Syntax, unknown fields, duplicate names, fields a HealthEvent or Node lacks; exit 1 on any."""
    from shared import output as out
    from shared.health import service

    problems = service.check_rules(values)
    for line in problems:
        out.error_line(f"error: {line}")
    if not problems:
        out.message(f"{values}: ok")
    return 1 if problems else 0


@app.command("replay")
def replay(
    values: ValuesFile,
    events: Annotated[str, typer.Option("--events", help="Recorded events (JSON, array or NDJSON; - for stdin).")],
    nodes_file: Annotated[
        Path | None,
        typer.Option("--nodes", help="Node list (kubectl get nodes -o json) for Node rules.", show_default=False),
    ] = None,
    output: opt.Output = "table",
) -> None:
    """Which nodes each rule set would have quarantined, in the order the events arrived."""
    from shared.health import service

    result = service.replay(values, events, nodes_file)
    held = result["quarantined"]
    opt.emit(
        result,
        output,
        headers=["NODE", "CORDONED", "RULE SETS"],
        rows=[[h["node"], h["cordoned"], ", ".join(h["ruleSets"])] for h in held],
        wide_headers=["NODE", "CHECK", "PHASE", "RULE SETS"],
        wide_rows=[[e["node"], e["checkName"], e["phase"], ", ".join(e["ruleSets"])] for e in result["events"]],
    )


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="rules")
