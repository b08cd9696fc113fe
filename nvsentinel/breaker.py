"""``nvsentinel breaker status|reset``: the circuit breaker's ConfigMap."""

from __future__ import annotations

from typing import Annotated

import typer

from nvsentinel import _options as opt
from shared import output as out

app = typer.Typer(help="The fault-quarantine circuit breaker.", no_args_is_help=True)
COLUMNS = (
    out.Column.key("STATUS", "status"),
    out.Column.key("RECENT", "recentQuarantines"),
    out.Column.key("THRESHOLD", "threshold"),
    out.Column.key("GPU NODES", "gpuNodes"),
    out.Column.key("WINDOW", "window"),
)


def _show(data: dict[str, object], output: out.Format) -> None:
    out.emit(data, output, table=out.Table([data], COLUMNS))


@app.command("status")
def status(
    output: opt.Output = "table",
    values: opt.Values = None,
    namespace: opt.Namespace = "nvsentinel",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """CLOSED or TRIPPED, quarantines in the window, and the threshold."""
    from shared.operate import service

    chosen = opt.chosen_format(output)
    _show(service.breaker_status(opt.cluster(kubeconfig, context, namespace), values), chosen)


@app.command("reset")
def reset(
    output: opt.Output = "table",
    values: opt.Values = None,
    namespace: opt.Namespace = "nvsentinel",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm.")] = False,
) -> None:
    """Close the breaker and empty its window."""
    from shared import errors
    from shared.operate import service

    chosen = opt.chosen_format(output)
    if not yes:
        raise errors.InvalidInput("resetting the breaker resumes quarantines; confirm with --yes")
    _show(service.breaker_status(opt.cluster(kubeconfig, context, namespace), values, reset=True), chosen)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="breaker")
