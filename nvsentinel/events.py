"""``nvsentinel events publish|list|prune``: HealthEvents in the cluster."""

from __future__ import annotations

from typing import Annotated

import typer

from nvsentinel import _options as opt
from shared import cli
from shared import output as out

app = typer.Typer(help="Publish, list and prune HealthEvents.", no_args_is_help=True)
COLUMNS = (
    out.Column.key("NODE", "node"),
    out.Column.key("CHECK", "checkName"),
    out.Column.key("CODES", "errorCode"),
    out.Column.key("ACTION", "recommendedAction"),
    out.Column.key("PHASE", "phase"),
)
WIDE_COLUMNS = tuple(
    out.Column.key(key.upper(), key)
    for key in (
        "name",
        "node",
        "agent",
        "checkName",
        "errorCode",
        "isFatal",
        "isHealthy",
        "recommendedAction",
        "phase",
        "generatedTimestamp",
    )
)


@app.command("publish")
def publish(
    source: Annotated[str, typer.Option("--file", "-f", help="JSON event, JSON array or NDJSON; - for stdin.")],
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Publish events; duplicates (same id, else same node/agent/check/codes/entities/time) once."""
    from shared.health import service

    result = service.publish(opt.cluster(kubeconfig, context), source)
    out.message(f"published {result['published']} event(s), {result['duplicates']} duplicate(s) skipped")


@app.command(
    "list",
    epilog=cli.examples(
        "nvsentinel events list --since 1h",
        "nvsentinel events list --node gpu-node-07 --fatal -o wide",
        "nvsentinel events list --check SysLogsXIDError --phase Quarantined,Blocked -o json",
    ),
)
def list_(
    node: Annotated[str | None, typer.Option("--node", help="Only this node's events.", show_default=False)] = None,
    check: Annotated[
        str | None, typer.Option("--check", help="Only this checkName, e.g. SysLogsXIDError.", show_default=False)
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only this agent, e.g. syslog-health-monitor.", show_default=False)
    ] = None,
    fatal: Annotated[
        bool | None,
        typer.Option("--fatal/--not-fatal", help="Only fatal (or only non-fatal) events.", show_default=False),
    ] = None,
    phase: Annotated[
        str | None,
        typer.Option(
            "--phase",
            help="Only these outcomes, comma-separated, e.g. Quarantined,Blocked; Pending: not processed yet.",
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", help="Only events generated in this last span of cluster time, e.g. 1h, 30m.", show_default=False
        ),
    ] = None,
    after: Annotated[
        str | None,
        typer.Option(
            "--after",
            help="Only events generated at or after this RFC 3339 time, e.g. 2026-01-01T00:00:00Z.",
            show_default=False,
        ),
    ] = None,
    output: opt.Output = "table",
    strict: opt.Strict = False,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Stored events, oldest first, with what fault quarantine did (PHASE); the filters combine.

    An event that cannot be read is skipped with a warning naming it."""
    from shared.health import service
    from shared.kube import listing

    chosen = opt.chosen_format(output)
    skipped: list[listing.Skipped] = []
    rows = service.list_events(
        opt.cluster(kubeconfig, context),
        node=node,
        check=check,
        agent=agent,
        fatal=fatal,
        phase=phase,
        since=since,
        after=after,
        skipped=skipped,
    )
    for left_out in skipped:
        out.warning(f"skipping {left_out.what}: {left_out.reason}")
    out.emit(rows, chosen, table=out.Table(rows, COLUMNS), wide=out.Table(rows, WIDE_COLUMNS))
    return 1 if strict and skipped else 0


@app.command("prune")
def prune(
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than", help="Age, e.g. 720h (default: nvsentinel.retention of the values).", show_default=False
        ),
    ] = None,
    values: opt.Values = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Delete processed events older than the retention."""
    from shared.operate import service

    names = service.prune(opt.cluster(kubeconfig, context), older_than, values, dry_run)
    out.message(f"{'would delete' if dry_run else 'deleted'} {len(names)} event(s)")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="events")
