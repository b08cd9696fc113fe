"""The simulated cluster's virtual clock, and the timers that run on it.

Virtual time runs ``speed`` times faster than real time from an anchor, so an hour of
certification takes a minute at the default speed of 60. Tests pause it (speed 0) and move it
with :meth:`VirtualClock.advance`, which is how they assert exact virtual durations without
sleeping. The API server stamps objects and the HTTP ``Date`` header with it, and serves it at
``/sim/v1/clock`` for the product's clock abstraction (:mod:`shared.clock`).

Timers are kept here but fired by whoever drives the simulation (the kubelet loop): this module
starts no thread of its own.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

DEFAULT_SPEED = 60.0
"""Virtual seconds per real second for ``serve``: one virtual minute per real second."""


@dataclass(order=True)
class Timer:
    """One pending call; cancelled timers stay in the heap and are skipped when due."""

    due: float
    seq: int
    action: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """Epoch seconds that run ``speed`` times real time; thread-safe."""

    def __init__(
        self,
        *,
        speed: float = 1.0,
        start: float | None = None,
        real: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._real = real
        self._wall = wall
        self._lock = threading.Lock()
        self._speed = speed
        self._anchor_real = real()
        self._anchor_virtual = wall() if start is None else start
        self._timers: list[Timer] = []
        self._seq = itertools.count()

    # ------------------------------------------------------------ reading
    @property
    def speed(self) -> float:
        return self._speed

    def time(self) -> float:
        """Virtual seconds since the epoch."""
        with self._lock:
            return self._anchor_virtual + (self._real() - self._anchor_real) * self._speed

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), UTC)

    def real_seconds_until(self, when: float) -> float:
        """Real seconds until virtual ``when`` at the current speed (infinite when paused)."""
        left = when - self.time()
        if left <= 0:
            return 0.0
        return left / self._speed if self._speed > 0 else float("inf")

    # ------------------------------------------------------------ changing
    def _reanchor(self) -> None:
        now_real = self._real()
        self._anchor_virtual += (now_real - self._anchor_real) * self._speed
        self._anchor_real = now_real

    def set_speed(self, speed: float) -> None:
        if speed < 0:
            raise ValueError("speed must be >= 0")
        with self._lock:
            self._reanchor()
            self._speed = speed

    def advance(self, seconds: float) -> None:
        """Jump forward; due timers fire when the simulation loop next looks at them."""
        if seconds < 0:
            raise ValueError("virtual time only moves forward")
        with self._lock:
            self._reanchor()
            self._anchor_virtual += seconds

    def reset(self, *, speed: float = 1.0) -> None:
        """Back to wall time at ``speed``, with no timers (a fresh cluster)."""
        with self._lock:
            self._anchor_real = self._real()
            self._anchor_virtual = self._wall()
            self._speed = speed
            self._timers.clear()

    # ------------------------------------------------------------ timers
    def call_at(self, when: float, action: Callable[[], None]) -> Timer:
        timer = Timer(when, next(self._seq), action)
        with self._lock:
            heapq.heappush(self._timers, timer)
        return timer

    def call_later(self, delay: float, action: Callable[[], None]) -> Timer:
        return self.call_at(self.time() + max(delay, 0.0), action)

    def next_due(self) -> float | None:
        with self._lock:
            while self._timers and self._timers[0].cancelled:
                heapq.heappop(self._timers)
            return self._timers[0].due if self._timers else None

    def pop_due(self) -> Timer | None:
        """The earliest timer whose time has come, removed from the heap; None when none is due."""
        now = self.time()
        with self._lock:
            while self._timers and (self._timers[0].cancelled or self._timers[0].due <= now):
                timer = heapq.heappop(self._timers)
                if not timer.cancelled:
                    return timer
            return None
