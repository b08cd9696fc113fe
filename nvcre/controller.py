"""``nvcrectl controller``: run Certifications and WorkloadRuns created without ``--wait`` (the in-cluster way).

SIGTERM (what the kubelet sends a pod it stops) and Ctrl-C end the loop the same way: the loop
stops, the replica gives up its run Leases and the leader Lease (holderIdentity cleared, so the
next replica need not wait for them to expire) and the program exits 0.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import typer

from nvcre import _options as opt


@contextmanager
def _stopped_by_signals(stop: threading.Event) -> Iterator[None]:
    """Set ``stop`` on SIGTERM or SIGINT while inside; the previous handlers come back after."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def controller(
    namespace: opt.Namespace = "default",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    metrics_addr: opt.MetricsAddr = None,
) -> None:
    """Reconcile the namespace's Certifications and WorkloadRuns until SIGTERM or Ctrl-C (then give up
    its Leases and exit 0); one replica leads (a Lease)."""
    from shared import metrics, output
    from shared.certify import controller as loop
    from shared.kube.client import LazyClient

    stop = threading.Event()
    server = metrics.serve(metrics_addr, prefixes=("nvcrectl_",))
    try:
        with LazyClient(kubeconfig=kubeconfig, context=context) as api, _stopped_by_signals(stop):
            loop.serve(api(), namespace=namespace, stop=stop, on_note=output.message)
        output.message("controller stopped; leases released")
    finally:
        if server is not None:
            server.stop()


def register(app: typer.Typer) -> None:
    app.command("controller")(controller)
