"""``nvcrectl controller``: run Certifications and WorkloadRuns created without ``--wait`` (the in-cluster way).

SIGTERM (what the kubelet sends a pod it stops) and Ctrl-C end the loop the same way: the loop
stops, the replica gives up its run Leases and the leader Lease (holderIdentity cleared, so the
next replica need not wait for them to expire) and the program exits 0.
"""

from __future__ import annotations

import threading

import typer

from nvcre import _options as opt


def controller(
    namespace: opt.Namespace = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
) -> None:
    """Reconcile the namespace's Certifications and WorkloadRuns until SIGTERM or Ctrl-C (then give up
    its Leases and exit 0); one replica leads (a Lease)."""
    namespace = opt.namespace_or_context(namespace, kubeconfig, context)
    from shared import metrics, output, stopping
    from shared.certify import controller as loop
    from shared.kube.client import LazyClient

    stop = threading.Event()
    server = metrics.serve(metrics_addr, prefixes=("nvcrectl_",))
    try:
        with LazyClient(kubeconfig=kubeconfig, context=context) as api, stopping.on_signals(stop):
            loop.serve(api(), namespace=namespace, stop=stop, on_note=output.message)
        output.message("controller stopped; leases released")
    finally:
        if server is not None:
            server.stop()


def register(app: typer.Typer) -> None:
    app.command("controller")(controller)
