"""``nvsentinel nodes [release NODE]``: quarantine state per node; undo what nvsentinel owns."""

from __future__ import annotations

from typing import Annotated

import typer

from nvsentinel import _options as opt
from shared import output as out

app = typer.Typer(help="Quarantine state of nodes.", invoke_without_command=True)
COLUMNS = (
    out.Column.key("NODE", "node"),
    out.Column.key("QUARANTINED", "quarantined"),
    out.Column.key("CORDONED", "cordoned"),
    out.Column.key("STATE", "state", wide=True),
    out.Column.key("CAUSES", "causes"),
    out.Column.key("CONDITIONS", "conditions", wide=True),
)


@app.callback()
def show(
    ctx: typer.Context, output: opt.Output = "table", kubeconfig: opt.Kubeconfig = None, context: opt.Context = None
) -> None:
    """Per node: quarantined, cordoned, the rule sets holding it, failing conditions."""
    if ctx.invoked_subcommand is not None:
        return
    from shared.health import service

    chosen = opt.chosen_format(output)
    rows = service.node_table(opt.cluster(kubeconfig, context))
    out.emit(rows, chosen, table=out.Table(rows, COLUMNS))


@app.command("release")
def release(
    node: Annotated[str, typer.Argument(help="Node name.")],
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
