"""``nvsentinel run``: the controllers (conditions, fault quarantine, breaker), with leader election."""

from __future__ import annotations

from typing import Annotated

import typer

from nvsentinel import _options as opt
from shared import cli


def run(
    values: opt.Values = None,
    namespace: opt.Namespace = "nvsentinel",
    enforce: Annotated[
        bool | None,
        typer.Option(
            "--enforce/--monitor",
            help="Cordon and taint (overrides global.dryRun); default: the values' setting (monitor).",
            show_default=False,
        ),
    ] = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
    install: Annotated[
        bool,
        typer.Option(
            "--install/--no-install",
            help="Install the CRDs and create the namespace first; the chart's pods pass --no-install.",
        ),
    ] = True,
) -> None:
    """Watch HealthEvents and act on them until SIGTERM or Ctrl-C, then give up the Leases and exit 0.

    Values that `rules check` refuses are refused first (exit 2). Survives dropped watches,
    throttling, server errors and outages (retried with backoff); exits 4 when the cluster refuses
    the credentials twice in a row (the kubeconfig is read again once)."""
    from shared import metrics, output
    from shared.operate import service

    server = metrics.serve(metrics_addr, prefixes=("nvsentinel_", "nvcrectl_"))
    try:
        service.run(opt.cluster(kubeconfig, context, namespace), values, enforce, install=install)
        output.message("controllers stopped; leases released")
    finally:
        if server is not None:
            server.stop()


def register(root: typer.Typer) -> None:
    root.command(
        "run",
        epilog=cli.examples(
            "# monitor mode: conditions and annotations only",
            "nvsentinel run -f values.yaml",
            "# cordon and taint, with metrics for Prometheus",
            "nvsentinel run -f values.yaml --enforce --metrics-addr 0.0.0.0:2112",
        ),
    )(run)
