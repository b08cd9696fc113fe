"""Waiting in tests for a condition, never for a length of time.

A test that sleeps and hopes the work is done passes on a fast machine and fails on a busy one; a
test that watches for a state that lasts only a moment (a node NotReady during a 3-minute reboot
that the simulated cluster's clock runs in 3 real seconds) can miss it. ``until`` polls a condition
that stays true once reached, with a deadline in generous real time: it is there only so that a
broken test ends, and it says what it waited for. What happens in the simulated cluster's time is
waited for the same way: the condition is the state it leaves behind, whatever the clock's speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

REAL_SECONDS = 120.0
"""The default real-time deadline: far beyond what any condition takes on an idle machine (well
under a second to a few seconds), so that only a broken test reaches it, also on a loaded one."""

INTERVAL = 0.02
"""Real seconds between two looks: short, as a look is cheap next to what it waits for."""


def until(condition: Callable[[], T], *, what: str, seconds: float = REAL_SECONDS, interval: float = INTERVAL) -> T:
    """Poll ``condition`` until it returns something true, and return that; fail the test
    (AssertionError naming ``what`` and the last value) after ``seconds`` of real time."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds:g} real seconds waiting for {what} (last: {value!r})")
        time.sleep(interval)
