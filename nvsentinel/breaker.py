"""``nvsentinel breaker status|reset``: the circuit breaker's ConfigMap."""

from __future__ import annotations

from typing import Annotated

import typer

from nvsentinel import _options as opt

app = typer.Typer(help="The fault-quarantine circuit breaker.", no_args_is_help=True)


def _show(data: dict[str, object], output: str) -> None:
    opt.emit(
        data,
        output,
        headers=["STATUS", "RECENT", "THRESHOLD", "GPU NODES", "WINDOW"],
        rows=[[data["status"], data["recentQuarantines"], data["threshold"], data["gpuNodes"], data["window"]]],
    )


@app.command("status")
def status(
    output: opt.Output = "table",
    values: opt.Values = None,
    namespace: opt.Namespace = "nvsentinel",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """CLOSED or TRIPPED, quarantines in the window, and the threshold."""
    from shared.health import service

    _show(service.breaker_status(opt.cluster(kubeconfig, context, namespace), values), output)


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
    from shared.health import service

    if not yes:
        raise errors.InvalidInput("resetting the breaker resumes quarantines; confirm with --yes")
    _show(service.breaker_status(opt.cluster(kubeconfig, context, namespace), values, reset=True), output)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="breaker")
