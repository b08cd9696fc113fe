"""``nvsentinel run``: the controllers (conditions, fault quarantine, breaker), with leader election."""

from __future__ import annotations

from typing import Annotated

import typer

from nvsentinel import _options as opt


def run(values: opt.Values = None, namespace: opt.Namespace = "nvsentinel",
        enforce: Annotated[bool | None, typer.Option("--enforce/--monitor", help="Cordon and taint (overrides "
                                                     "global.dryRun); default: the values' setting (monitor).",
                                                     show_default=False)] = None,
        kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Watch HealthEvents and act on them until interrupted."""
    from shared.health import service

    service.run(opt.cluster(kubeconfig, context, namespace), values, enforce)


def register(root: typer.Typer) -> None:
    root.command("run")(run)
