"""``nvsentinel rules check|replay``: lint a values file; see what it would have quarantined."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvsentinel import _options as opt
from shared import cli
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


@app.command(
    "check",
    epilog=cli.examples(
        "nvsentinel rules check -f values.yaml",
        "# the chart's values file, as helm would install it",
        "nvsentinel rules check -f deploy/helm/dsx-cluster-tools/values.yaml",
    ),
)
def check(values: ValuesFile) -> int:
    """What would fail at load or run time, each with file:line:column and rule set; exit 1 on any.

    YAML, unknown keys, enum values, duplicate names, durations, label selectors and label
    keys/values, CEL syntax and types (unknown functions and fields, an enum compared with its
    name, a string compared with an int, ...), and one evaluation of each rule on a sample input."""
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
    """Which nodes each rule set would have quarantined, in the order the events arrived.

    Without --nodes, the circuit breaker takes the nodes the events name as the whole fleet (a
    warning says so): its threshold is then smaller than the cluster's."""
    from shared.operate import service

    chosen = opt.chosen_format(output)
    result = service.replay(values, events, nodes_file)
    if nodes_file is None:
        count = len({e["node"] for e in result["events"]})
        out.warning(
            f"no --nodes: the circuit breaker counts the {count} node(s) the events name as the cluster's GPU nodes;"
            " give --nodes (kubectl get nodes -o json) to size it as the cluster is"
        )
    held, seen = out.Table(result["quarantined"], HELD_COLUMNS), out.Table(result["events"], EVENT_COLUMNS)
    out.emit(result, chosen, table=held, wide=seen)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="rules")
