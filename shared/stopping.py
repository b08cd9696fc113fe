"""Stopping a long-running command the way Kubernetes stops a pod: on SIGTERM (or Ctrl-C).

The kubelet sends SIGTERM on every rollout, drain and scale-down and waits the pod's grace
period before SIGKILL. A controller that dies of the signal (exit 143) leaves its Lease held until
it expires and may stop between two writes of one step; one that sets a stop flag instead
finishes the write in hand, lets go of its Leases and exits 0. The handler only sets the flag:
whatever runs checks it at its next safe point.

SIGINT is Ctrl-C, and it is taken over only when it arrives: a shell without job control (a CI
script, ``cmd &`` in a script) starts background commands with SIGINT ignored so that a Ctrl-C
meant for the script does not stop them, and every program here keeps that choice, the one-shot
commands (Python keeps an inherited ignore) and the long-running ones alike. SIGTERM always stops
a long-running command; it is what ``kill`` sends and what the kubelet sends a pod.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _kept_ignored(sig: signal.Signals) -> bool:
    return sig == signal.SIGINT and signal.getsignal(sig) is signal.SIG_IGN


@contextmanager
def on_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """Set ``stop`` on SIGTERM or SIGINT while inside; the previous handlers come back after.

    An ignored SIGINT stays ignored (see the module's docstring). Signals reach the main thread
    only, so elsewhere (a test running a command on a thread) this does nothing and the caller's
    own ``stop`` is the only way out."""

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.signal(sig, on_signal) for sig in SIGNALS if not _kept_ignored(sig)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
