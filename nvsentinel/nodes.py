"""``nvsentinel nodes [release NODE]``: quarantine state per node; undo what nvsentinel owns."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nvsentinel import _options as opt
from shared import cli
from shared import output as out

if TYPE_CHECKING:
    from shared.health.service import Cluster

app = typer.Typer(
    help="Quarantine state of nodes.",
    invoke_without_command=True,
    epilog=cli.examples(
        "nvsentinel nodes",
        "nvsentinel nodes -o wide",
        "# follow quarantines as they happen (Ctrl-C stops)",
        "nvsentinel nodes --watch",
        "nvsentinel nodes release gpu-node-07",
    ),
)
COLUMNS = (
    out.Column.key("NODE", "node"),
    out.Column.key("QUARANTINED", "quarantined"),
    out.Column.key("CORDONED", "cordoned"),
    out.Column.key("STATE", "state", wide=True),
    out.Column.key("CAUSES", "causes"),
    out.Column.key("CONDITIONS", "conditions", wide=True),
)
ACTION = out.Column.key("ACTION", "action")
"""What a person must do for a node (CONTACT_SUPPORT, ...); shown only when some node needs one."""


@app.callback()
def show(
    ctx: typer.Context,
    output: opt.Output = "table",
    html: Annotated[Path | None, opt.html_report("the fleet by rack")] = None,
    watch: opt.Watch = False,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Per node: quarantined, cordoned, what a person must do, the rule sets holding it, failing conditions."""
    if ctx.invoked_subcommand is not None:
        return
    from shared.operate import fleet

    chosen = opt.chosen_format(output)
    out.check_destination(html)
    cluster = opt.cluster(kubeconfig, context)
    if watch:
        if html is not None:
            from shared import errors

            raise errors.InvalidInput("--html writes one page; it cannot follow --watch", where="--html")
        _watch(chosen, cluster)
        return
    rows = fleet.rows(cluster)
    if html is not None:
        fleet.html_report(cluster, html, rows)
    columns: tuple[out.Column, ...] = COLUMNS
    if any(r["action"] for r in rows):  # a node waits for a person: say what, beside its state
        columns = (*COLUMNS[:4], ACTION, *COLUMNS[4:])
    out.emit(rows, chosen, table=out.Table(rows, columns))


def _watch(chosen: out.Format, cluster: Cluster) -> None:
    """The table kept up to date (every column, ACTION included, so a redraw never changes shape)."""
    from shared import watchview
    from shared.health import service

    if chosen not in (out.Format.TABLE, out.Format.WIDE):
        from shared import errors

        raise errors.InvalidInput("--watch shows a table: use -o table or -o wide", where="--output")
    wide = chosen is out.Format.WIDE
    columns = [c for c in (*COLUMNS[:4], ACTION, *COLUMNS[4:]) if wide or not c.wide]
    with watchview.WatchView([c.header for c in columns]) as view, contextlib.suppress(KeyboardInterrupt):
        for rows in service.watch_node_table(cluster):
            view.show({row["node"]: [c.cell(row) for c in columns] for row in rows})


@app.command("release")
def release(
    node: opt.NodeName,
    values: opt.Values = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Undo every cordon, taint, label and annotation nvsentinel owns on NODE (nothing else)."""
    from shared.operate import service

    changed = service.release_node(opt.cluster(kubeconfig, context), node, values)
    out.message(f"node/{node} {'released' if changed else 'holds nothing of nvsentinel'}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="nodes")
