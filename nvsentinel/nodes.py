"""``nvsentinel nodes [release NODE]``: quarantine state per node; undo what nvsentinel owns."""

from __future__ import annotations

import typer

from nvsentinel import _options as opt
from shared import cli
from shared import output as out

app = typer.Typer(
    help="Quarantine state of nodes.",
    invoke_without_command=True,
    epilog=cli.examples("nvsentinel nodes", "nvsentinel nodes -o wide", "nvsentinel nodes release gpu-node-07"),
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
    ctx: typer.Context, output: opt.Output = "table", kubeconfig: opt.Kubeconfig = None, context: opt.Context = None
) -> None:
    """Per node: quarantined, cordoned, what a person must do, the rule sets holding it, failing conditions."""
    if ctx.invoked_subcommand is not None:
        return
    from shared.health import service

    chosen = opt.chosen_format(output)
    rows = service.node_table(opt.cluster(kubeconfig, context))
    columns: tuple[out.Column, ...] = COLUMNS
    if any(r["action"] for r in rows):  # a node waits for a person: say what, beside its state
        columns = (*COLUMNS[:4], ACTION, *COLUMNS[4:])
    out.emit(rows, chosen, table=out.Table(rows, columns))


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
