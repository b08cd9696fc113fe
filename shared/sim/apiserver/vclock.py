"""The simulated cluster's virtual clock, and the timers that run on it.

Virtual time runs ``speed`` times faster than real time from an anchor, so an hour of
certification takes a minute at the default speed of 60. Tests pause it (speed 0) and move it
with :meth:`VirtualClock.advance`, which is how they assert exact virtual durations without
sleeping. The API server stamps objects and the HTTP ``Date`` header with it, and serves it at
``/sim/v1/clock`` for the product's clock abstraction (:mod:`shared.clock`).

Timers are kept here but fired by whoever drives the simulation (the kubelet loop, through
:meth:`VirtualClock.fire_due`): this module starts no thread of its own.

The clock waits for the loop that drives it. On a real cluster a pod that is due to start does
start before its own deadline runs out; here the loop that starts pods runs in real time, and on
a busy machine it runs late while virtual time, ``speed`` times faster, would run on. So while a
loop drives the clock (:meth:`VirtualClock.drive`), virtual time as read by everybody is held at
the earliest *hold*:

- a timer that is due and not yet fired (one being fired holds the clock at the moment it fired:
  its action sees its own due time as now, and what it schedules counts from there);
- a write the loop has not handled yet (:meth:`VirtualClock.queued` when the store takes it,
  :meth:`VirtualClock.done` once the loop has handled every write up to it).

Real time spent held is dropped, not caught up later: once the loop is through, the clock runs on
from where it waited, at ``speed``. So timers fire in due order, each at its own time; nobody
ever reads a time T while a timer due before T is unfired or a write made before T is unhandled;
and a machine that is slow only makes virtual time slower, never the cluster out of order.

:meth:`VirtualClock.advance` is kept exact: the seconds it adds are owed, not dropped. Held at a
timer, the clock goes on to the next hold as soon as the loop has fired it, until the whole
advance is spent; at speed 0 it then stands exactly ``seconds`` later. Without a driving loop (the
kubelet stopped) nothing holds the clock: it runs free, and due timers wait for whoever fires them.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import math
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
    clock: VirtualClock | None = field(default=None, compare=False, repr=False)

    def cancel(self) -> None:
        """Never fire; a clock held at this timer runs on from where it waited."""
        if self.clock is None:
            self.cancelled = True
        else:
            self.clock.cancel(self)


class VirtualClock:
    """Epoch seconds that run ``speed`` times real time, held by due work while driven; thread-safe."""

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
        self._owed = 0.0  # advanced but not reached yet: a hold was in the way
        self._timers: list[Timer] = []
        self._seq = itertools.count()
        self._driven = False
        self._firing: float | None = None  # the moment of the timer whose action is running
        self._work: collections.deque[tuple[int, float]] = collections.deque()  # (write, when) unhandled

    # ------------------------------------------------------------ reading
    @property
    def speed(self) -> float:
        return self._speed

    @property
    def driven(self) -> bool:
        return self._driven

    def time(self) -> float:
        """Virtual seconds since the epoch, never past the earliest hold while driven."""
        with self._lock:
            return self._settle()

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), UTC)

    def held_until(self) -> float | None:
        """The latest time the clock can reach before the loop does more work (None: no limit).

        What a reader that extrapolates between reads (the product's ``ClusterClock``) must stop at.
        """
        with self._lock:
            moment = self._settle()
            hold = self._hold()
            return None if math.isinf(hold) else max(hold, moment)

    def real_seconds_until(self, when: float) -> float:
        """Real seconds until virtual ``when`` at the current speed (infinite when paused)."""
        left = when - self.time()
        if left <= 0:
            return 0.0
        return left / self._speed if self._speed > 0 else float("inf")

    # ------------------------------------------------------------ holding (call with the lock held)
    def _hold(self) -> float:
        """The earliest hold: an unfired timer, the one firing, an unhandled write; inf when free."""
        if not self._driven:
            return math.inf
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        hold = self._timers[0].due if self._timers else math.inf
        if self._firing is not None:
            hold = min(hold, self._firing)
        if self._work:
            hold = min(hold, self._work[0][1])
        return hold

    def _settle(self, *, anchor: bool = False) -> float:
        """The current virtual time; re-anchors when a hold stopped the clock, an advance is owed,
        or ``anchor`` asks (before a change of speed, or of holds that may lie in the past).

        Called before every change of the holds, speed or anchor, so the piecewise clock it
        computes lazily is the one that ran: held from the moment it reached a hold until now.
        A hold before the anchor (a timer set for a moment already past) holds where the clock is.
        """
        now_real = self._real()
        base = self._anchor_virtual
        running = base + self._owed + (now_real - self._anchor_real) * self._speed
        hold = max(self._hold(), base)
        if running <= hold and self._owed == 0.0 and not anchor:
            return running  # the common case: free, nothing to re-anchor
        if base + self._owed >= hold:  # the owed advance alone reaches the hold: real time is dropped
            moment = hold
            self._owed = base + self._owed - hold
        else:
            moment = min(running, hold)
            self._owed = 0.0
        self._anchor_virtual, self._anchor_real = moment, now_real
        return moment

    # ------------------------------------------------------------ changing
    def set_speed(self, speed: float) -> None:
        if speed < 0:
            raise ValueError("speed must be >= 0")
        with self._lock:
            self._settle(anchor=True)
            self._speed = speed

    def advance(self, seconds: float) -> None:
        """Move forward ``seconds``; held by due timers, it reaches the end once the loop fired them."""
        if seconds < 0:
            raise ValueError("virtual time only moves forward")
        with self._lock:
            self._settle(anchor=True)
            self._owed += seconds
            self._settle()

    def reset(self, *, speed: float = 1.0) -> None:
        """Back to wall time at ``speed``, with no timers or pending work (a fresh cluster)."""
        with self._lock:
            self._anchor_real = self._real()
            self._anchor_virtual = self._wall()
            self._owed = 0.0
            self._speed = speed
            self._timers.clear()
            self._work.clear()
            self._firing = None

    def drive(self, on: bool) -> None:
        """A loop starts (True) or stops (False) driving the clock; only a driven clock is held."""
        with self._lock:
            self._settle(anchor=True)  # timers already past hold the clock where it is, not before
            self._driven = on
            self._work.clear()

    # ------------------------------------------------------------ work of the loop
    def queued(self, seq: int) -> None:
        """Write ``seq`` (increasing) was made now; the clock holds here until :meth:`done` covers it."""
        with self._lock:
            if not self._driven:
                return
            moment = self._settle()
            if not self._work or self._work[-1][1] < moment:
                self._work.append((seq, moment))
            else:  # same moment as the last one: one hold, the later write's number
                self._work[-1] = (seq, moment)

    def done(self, seq: int) -> None:
        """The loop handled every write up to ``seq``: their holds are released."""
        with self._lock:
            self._settle()
            while self._work and self._work[0][0] <= seq:
                self._work.popleft()

    # ------------------------------------------------------------ timers
    def call_at(self, when: float, action: Callable[[], None]) -> Timer:
        timer = Timer(when, next(self._seq), action, clock=self)
        with self._lock:
            self._settle(anchor=True)  # a moment already past then holds the clock where it is
            heapq.heappush(self._timers, timer)
        return timer

    def call_later(self, delay: float, action: Callable[[], None]) -> Timer:
        with self._lock:
            when = self._settle() + max(delay, 0.0)
        return self.call_at(when, action)

    def cancel(self, timer: Timer) -> None:
        """``timer`` never fires (:meth:`Timer.cancel`)."""
        with self._lock:
            self._settle()  # the time held so far stays held: settle before the hold goes
            timer.cancelled = True

    def next_due(self) -> float | None:
        with self._lock:
            while self._timers and self._timers[0].cancelled:
                heapq.heappop(self._timers)
            return self._timers[0].due if self._timers else None

    def fire_due(self) -> int:
        """Fire every due timer, earliest first, each with the clock held at its moment; how many.

        A timer's action may schedule more (at its own moment or later): those fire in this call
        too once due, in order, so an owed :meth:`advance` is worked through timer by timer.
        """
        fired = 0
        while True:
            with self._lock:
                now = self._settle()
                timer = None
                while self._timers and (self._timers[0].cancelled or self._timers[0].due <= now):
                    candidate = heapq.heappop(self._timers)
                    if not candidate.cancelled:
                        timer = candidate
                        break
                if timer is None:
                    return fired
                self._firing = now
            try:
                timer.action()
            finally:
                with self._lock:
                    self._settle()
                    self._firing = None
            fired += 1
