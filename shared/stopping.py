"""Stopping a long-running command the way Kubernetes stops a pod: on SIGTERM (or Ctrl-C).

The kubelet sends SIGTERM on every rollout, drain and scale-down and waits the pod's grace
period before SIGKILL. A controller that dies of the signal (exit 143) leaves its Lease held until
it expires and may stop between two writes of one step; one that sets a stop flag instead
finishes the write in hand, lets go of its Leases and exits 0. The handler only sets the flag:
whatever runs checks it at its next safe point. SIGINT is taken over too, even when the shell
started the command in the background with SIGINT ignored, so ``kill -INT`` works as Ctrl-C does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def on_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """Set ``stop`` on SIGTERM or SIGINT while inside; the previous handlers come back after.

    Signals reach the main thread only, so elsewhere (a test running a command on a thread)
    this does nothing and the caller's own ``stop`` is the only way out."""

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.signal(sig, on_signal) for sig in SIGNALS}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
