"""``nvcrectl controller``: run Certifications and WorkloadRuns created without ``--wait`` (the in-cluster way)."""

from __future__ import annotations

import typer

from nvcre import _options as opt


def controller(
    namespace: opt.Namespace = "default",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
) -> None:
    """Reconcile the namespace's Certifications and WorkloadRuns until interrupted; one replica leads (a Lease)."""
    from shared import metrics, output
    from shared.certify import controller as loop
    from shared.kube.client import LazyClient

    server = metrics.serve(metrics_addr, prefixes=("nvcrectl_",))
    try:
        with LazyClient(kubeconfig=kubeconfig, context=context) as api:
            try:
                loop.serve(api(), namespace=namespace, on_note=output.message)
            except KeyboardInterrupt:
                return
    finally:
        if server is not None:
            server.stop()


def register(app: typer.Typer) -> None:
    app.command("controller")(controller)
