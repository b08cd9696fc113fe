"""Waiting in tests for a condition, never for a length of time.

A test that sleeps and hopes the work is done passes on a fast machine and fails on a busy one; a
test that watches for a state that lasts only a moment (a node NotReady during a 3-minute reboot
that the simulated cluster's clock runs in 3 real seconds) can miss it. ``until`` polls a condition
that stays true once reached, with a deadline in generous real time: it is there only so that a
broken test ends, and it says what it waited for. When the wait is for something that happens in
the simulated cluster's time, pass ``clock`` and ``cluster_seconds`` as well: the wait then also
ends once that much cluster time has passed, however fast or slow the machine runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")

REAL_SECONDS = 120.0
"""The default real-time deadline: far beyond what any condition takes on an idle machine (well
under a second to a few seconds), so that only a broken test reaches it, also on a loaded one."""

INTERVAL = 0.02
"""Real seconds between two looks: short, as a look is cheap next to what it waits for."""


class Monotonic(Protocol):
    """A clock that tells elapsed seconds (``shared.clock.Clock``, a simulated cluster's clock)."""

    def monotonic(self) -> float: ...


def until(
    condition: Callable[[], T],
    *,
    what: str,
    seconds: float = REAL_SECONDS,
    clock: Monotonic | None = None,
    cluster_seconds: float | None = None,
    interval: float = INTERVAL,
) -> T:
    """Poll ``condition`` until it returns something true, and return that.

    Fails the test (AssertionError naming ``what`` and the last value) after ``seconds`` of real
    time, or after ``cluster_seconds`` of ``clock``'s time when both are given, whichever is first.
    """
    real_deadline = time.monotonic() + seconds
    cluster_deadline = None if clock is None or cluster_seconds is None else clock.monotonic() + cluster_seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > real_deadline:
            raise AssertionError(f"timed out after {seconds:g} real seconds waiting for {what} (last: {value!r})")
        if cluster_deadline is not None and clock is not None and clock.monotonic() > cluster_deadline:
            raise AssertionError(
                f"{what} did not happen within {cluster_seconds:g} seconds of cluster time (last: {value!r})"
            )
        time.sleep(interval)
