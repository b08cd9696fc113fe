"""The one clock of the project: every window, timeout and timestamp a controller uses.

A 5-minute breaker window or a 24-hour analyzer rule must behave the same on a real cluster and
on the simulated one, whose time runs faster than ours (or is paused and stepped by a test). So
controllers never call ``time`` or ``datetime.now`` directly; they take a :class:`Clock`:

- :class:`WallClock` is real time (the default, and what a real cluster gets);
- :class:`ClusterClock` follows the cluster's own clock where the cluster publishes one, and
  falls back to wall time where it does not. The simulated cluster publishes its virtual time at
  ``GET /sim/v1/clock`` (``{"now": RFC 3339 with microseconds, "speed": virtual seconds per real
  second}``); a real API server has no such path and answers 404 (or 403), which settles it: wall
  time, for the life of the object.

This module does not import ``kubernetes`` (only ``shared/kube/`` may): :func:`for_api_client`
calls ``call_api`` on the client object it is given. It never imports the simulator either.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

logger = logging.getLogger(__name__)

CLOCK_PATH = "/sim/v1/clock"
"""Where a simulated cluster publishes its virtual time; no real API server serves it."""
DEFAULT_MAX_AGE = 0.25
"""Real seconds a reading of the cluster's clock is extrapolated before it is read again."""
SLEEP_SLICE = 0.05
"""Longest real pause inside ``ClusterClock.sleep``, so a jump of virtual time ends it promptly."""


class Clock(Protocol):
    """What controllers ask of time. ``now`` is timezone-aware UTC."""

    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class WallClock:
    """Real time."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


WALL = WallClock()


@dataclass(frozen=True)
class Reading:
    """The cluster's time at one moment, how fast it runs, and where it stops until it is read again.

    ``until`` is set by a simulated cluster whose clock waits for its own work (a timer due then):
    extrapolation stops there, so a reader never runs ahead of what the cluster has done.
    """

    now: datetime
    speed: float
    until: datetime | None = None


class NoClusterClock(Exception):
    """The cluster publishes no clock (a real cluster): use wall time."""


Fetch = Callable[[], Reading]
"""Reads the cluster's clock; raises :class:`NoClusterClock` when there is none, anything else
when the read failed this time."""


class ClusterClock:
    """The cluster's clock, extrapolated between reads; wall time when the cluster has none.

    A failed read (network, 5xx) keeps extrapolating the last reading, or uses wall time until a
    first reading succeeds, so a flaky API never stops a controller's clock. Virtual time that
    goes backwards (a simulator reset) is clamped in ``monotonic``.
    """

    def __init__(
        self,
        fetch: Fetch,
        *,
        max_age: float = DEFAULT_MAX_AGE,
        wall: Clock = WALL,
        real: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._max_age = max_age
        self._wall = wall
        self._real = real
        self._lock = threading.Lock()
        self._reading: Reading | None = None
        self._read_at = 0.0
        self._tried_at = float("-inf")  # last attempt, failed or not: failures are retried at max_age pace
        self._absent = False
        self._last_mono = float("-inf")

    @property
    def is_virtual(self) -> bool:
        """True once the cluster answered with a clock of its own."""
        return self._reading is not None and not self._absent

    def refresh(self) -> None:
        """Read the cluster's clock now (tests call it right after moving virtual time)."""
        with self._lock:
            self._tried_at = self._real()
        try:
            reading = self._fetch()
        except NoClusterClock:
            with self._lock:
                self._absent = True
            logger.debug("the cluster publishes no clock; using wall time")
            return
        except Exception as exc:  # any transport failure: keep the last reading
            logger.debug("reading the cluster clock failed: %s", exc)
            return
        with self._lock:
            self._reading, self._read_at = reading, self._real()

    def _current(self) -> tuple[Reading | None, float]:
        with self._lock:
            absent, reading, read_at, tried_at = self._absent, self._reading, self._read_at, self._tried_at
        if absent:
            return None, 0.0
        if self._real() - max(read_at, tried_at) >= self._max_age:
            self.refresh()
            with self._lock:
                if self._absent:
                    return None, 0.0
                reading, read_at = self._reading, self._read_at
        return reading, read_at

    def now(self) -> datetime:
        reading, read_at = self._current()
        if reading is None:
            return self._wall.now()
        elapsed = (self._real() - read_at) * reading.speed
        moment = datetime.fromtimestamp(reading.now.timestamp() + elapsed, UTC)
        return moment if reading.until is None else min(moment, max(reading.until, reading.now))

    def monotonic(self) -> float:
        value = self.now().timestamp()
        with self._lock:
            self._last_mono = max(self._last_mono, value)
            return self._last_mono

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of cluster time (returns early when virtual time jumps past it)."""
        reading, _ = self._current()
        if reading is None:
            self._wall.sleep(seconds)
            return
        deadline = self.now().timestamp() + seconds
        while True:
            self.refresh()
            left = deadline - self.now().timestamp()
            if left <= 0:
                return
            speed = self._reading.speed if self._reading else 1.0
            time.sleep(min(left / speed, SLEEP_SLICE) if speed > 0 else SLEEP_SLICE)


def parse_reading(data: Any) -> Reading:
    """A clock answer ``{"now": "...Z", "speed": 60.0}`` (and optionally ``"until": "...Z"``) as a
    Reading; ValueError when malformed."""
    if not isinstance(data, dict) or not isinstance(data.get("now"), str):
        raise ValueError(f"not a clock reading: {data!r}")
    until = data.get("until")
    if until is not None and not isinstance(until, str):
        raise ValueError(f"not a clock reading: {data!r}")
    return Reading(
        now=_stamp(data["now"]), speed=float(data.get("speed", 1.0)), until=None if until is None else _stamp(until)
    )


def _stamp(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class ApiCaller(Protocol):
    """What the clock needs of a cluster client: ``shared.kube.api.KubeApi.call_api``, any signature.

    Restated here because the clock sits below the Kubernetes layer (it is a leaf every package may
    use); every ``KubeApi`` is one.
    """

    def call_api(self, *args: Any, **kwargs: Any) -> Any: ...


def fetch_with(api_client: ApiCaller) -> Fetch:
    """A reader of ``CLOCK_PATH`` through an official ``kubernetes`` ApiClient."""

    def fetch() -> Reading:
        try:
            data = api_client.call_api(
                CLOCK_PATH,
                "GET",
                auth_settings=["BearerToken"],
                response_type="object",
                _return_http_data_only=True,
                _request_timeout=5,
            )
        except Exception as exc:
            if getattr(exc, "status", None) in (403, 404):
                raise NoClusterClock from exc
            raise
        return parse_reading(data)

    return fetch


def for_api_client(api_client: ApiCaller, *, max_age: float = DEFAULT_MAX_AGE) -> ClusterClock:
    """The clock controllers should use against the cluster ``api_client`` talks to."""
    return ClusterClock(fetch_with(api_client), max_age=max_age)
