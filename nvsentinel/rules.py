"""``nvsentinel rules check|replay``: lint a values file; see what it would have quarantined."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvsentinel import _options as opt
from shared import output as out

app = typer.Typer(help="Check and replay fault-quarantine rule sets.", no_args_is_help=True)
HELD_COLUMNS = (
    out.Column.key("NODE", "node"),
    out.Column.key("CORDONED", "cordoned"),
    out.Column.key("RULE SETS", "ruleSets"),
)
EVENT_COLUMNS = (
    out.Column.key("NODE", "node"),
    out.Column.key("CHECK", "checkName"),
    out.Column.key("PHASE", "phase"),
    out.Column.key("RULE SETS", "ruleSets"),
)
ValuesFile = Annotated[Path, typer.Option("--values", "-f", help="values.yaml in NVSentinel's layout.")]


@app.command("check")
def check(values: ValuesFile) -> int:
    """Syntax, unknown fields, duplicate names, fields a HealthEvent or Node lacks; exit 1 on any."""
    from shared.operate import service

    problems = service.check_rules(values)
    out.error_lines(problems)
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
    from shared.operate import service

    chosen = opt.chosen_format(output)
    result = service.replay(values, events, nodes_file)
    held, seen = out.Table(result["quarantined"], HELD_COLUMNS), out.Table(result["events"], EVENT_COLUMNS)
    out.emit(result, chosen, table=held, wide=seen)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="rules")
