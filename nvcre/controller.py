"""``nvcrectl controller``: run Certifications created without ``--wait`` (the in-cluster way)."""

from __future__ import annotations

import typer

from nvcre import _options as opt


def controller(namespace: opt.Namespace = "default", kubeconfig: opt.Kubeconfig = None,
               context: opt.Context = None) -> None:
    """Reconcile the namespace's Certifications until interrupted; one replica leads (a Lease)."""
    from shared import output
    from shared.certify import controller as loop
    from shared.kube.client import LazyClient

    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        try:
            loop.serve(api(), namespace=namespace, on_note=output.message)
        except KeyboardInterrupt:
            return


def register(app: typer.Typer) -> None:
    app.command("controller")(controller)
