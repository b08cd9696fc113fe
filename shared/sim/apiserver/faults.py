"""Fault injection on the API itself: latency, 409 storms, 429/5xx, dropped watches, outages.

Controllers must survive an API server that is slow, busy, briefly gone, or that loses a watch;
these faults let tests and rehearsals provoke each case on purpose. Rates draw from a seeded
random source so a run can be repeated; one-shot rules ("fail the next 2 PATCHes of nodes with
409") make a test exact. ``kill_after_writes`` makes every write of one identity after the K-th
vanish without an answer, as if that client had died mid-way: the hook for "a controller killed
after its k-th write resumes without doing anything twice" tests. ``stored_error_rate`` answers a
write 500 *after* storing it, as a real server does when etcd commits but the answer times out
("etcdserver: request timed out"): the client cannot tell it from a write that never happened, so
its retry must read first and find the change done.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from shared.sim.apiserver.apierrors import ApiError

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
STORED_ERROR_MESSAGE = "Internal error occurred: etcdserver: request timed out"
"""What kube-apiserver answers when etcd took the write but did not confirm it in time."""


@dataclass
class FaultSettings:
    """What is currently injected; every field off by default."""

    latency_ms: float = 0.0
    conflict_rate: float = 0.0  # probability a write answers 409 Conflict
    error_rate: float = 0.0  # probability a request answers 500
    throttle_rate: float = 0.0  # probability a request answers 429 with Retry-After
    stored_error_rate: float = 0.0  # probability a write is stored and then answered 500
    down_until: float = 0.0  # time.monotonic() until which connections are cut
    kill_after_writes: int | None = None
    kill_identity: str | None = None

    def public(self) -> dict[str, Any]:
        out = asdict(self)
        out["down_seconds_left"] = max(0.0, round(self.down_until - time.monotonic(), 3))
        del out["down_until"]
        return out


@dataclass
class Rule:
    """A one-shot failure for the next ``count`` requests that match."""

    status: int
    verb: str | None = None
    resource: str | None = None
    name: str | None = None
    count: int = 1


@dataclass
class Decision:
    """What the handler must do with one request."""

    delay: float = 0.0
    error: ApiError | None = None
    drop: bool = False  # close the connection without an answer
    after_store: ApiError | None = None  # store the write, then answer this instead of success


def error_for(status: int, *, resource: str = "", name: str = "") -> ApiError:
    if status == 409:
        return ApiError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {resource} "{name}": the object has '
            "been modified; please apply your changes to the latest version and try again",
        )
    if status == 429:
        return ApiError(
            429,
            "TooManyRequests",
            "the server has received too many requests and has asked us to try again later",
            details={"retryAfterSeconds": 1},
            headers={"Retry-After": "1"},
        )
    if status == 503:
        return ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request")
    if status == 504:
        return ApiError(504, "Timeout", "the server was unable to return a response in the time allotted")
    return ApiError(status, "InternalError", "Internal error occurred: injected fault")


@dataclass
class Faults:
    """The live fault configuration of one server; thread-safe."""

    rng: random.Random = field(default_factory=random.Random)
    settings: FaultSettings = field(default_factory=FaultSettings)
    rules: list[Rule] = field(default_factory=list)
    watch_epoch: int = 0  # bumped to cut every open watch
    _writes: dict[str, int] = field(default_factory=dict)
    _delayed: list[float] = field(default_factory=lambda: [0, 0.0])  # requests delayed, seconds in all
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def configure(
        self,
        *,
        latency_ms: float | None = None,
        conflict_rate: float | None = None,
        error_rate: float | None = None,
        throttle_rate: float | None = None,
        stored_error_rate: float | None = None,
        down_seconds: float | None = None,
        kill_after_writes: int | None = None,
        kill_identity: str | None = None,
        drop_watches: bool = False,
    ) -> None:
        """Change the given settings only; ``down_seconds`` cuts connections from now on."""
        with self._lock:
            s = self.settings
            for name, value in (
                ("latency_ms", latency_ms),
                ("conflict_rate", conflict_rate),
                ("error_rate", error_rate),
                ("throttle_rate", throttle_rate),
                ("stored_error_rate", stored_error_rate),
            ):
                if value is not None:
                    if value < 0 or (name != "latency_ms" and value > 1):
                        raise ValueError(f"{name} out of range: {value}")
                    setattr(s, name, float(value))
            if down_seconds is not None:
                s.down_until = time.monotonic() + down_seconds
                self.watch_epoch += 1
            if kill_after_writes is not None:
                s.kill_after_writes = kill_after_writes
                s.kill_identity = kill_identity
                self._writes.pop(kill_identity or "", None)
            if drop_watches:
                self.watch_epoch += 1

    def inject(
        self,
        status: int,
        *,
        verb: str | None = None,
        resource: str | None = None,
        name: str | None = None,
        count: int = 1,
    ) -> None:
        """Fail the next ``count`` matching requests with ``status``."""
        with self._lock:
            self.rules.append(Rule(status, verb, resource, name, count))

    def drop_watches(self) -> None:
        """Cut every open watch now, without a closing chunk (clients see a broken stream)."""
        with self._lock:
            self.watch_epoch += 1

    def clear(self) -> None:
        with self._lock:
            self.settings = FaultSettings()
            self.rules.clear()
            self._writes.clear()
            self._delayed = [0, 0.0]

    def record_delay(self, seconds: float) -> None:
        """The handler held one request back ``seconds`` (injected latency)."""
        with self._lock:
            self._delayed = [self._delayed[0] + 1, self._delayed[1] + seconds]

    def delayed(self) -> tuple[int, float]:
        """(requests held back, seconds in all) since the last :meth:`clear`: what latency was
        applied, which tests assert instead of timing requests on a machine of unknown speed."""
        with self._lock:
            return int(self._delayed[0]), self._delayed[1]

    def is_down(self) -> bool:
        return time.monotonic() < self.settings.down_until

    def decide(self, *, user: str, verb: str, resource: str, name: str) -> Decision:
        """Roll the dice for one resource request."""
        with self._lock:
            s = self.settings
            decision = Decision(delay=s.latency_ms / 1000.0)
            if time.monotonic() < s.down_until:
                decision.drop = True
                return decision
            if verb in WRITE_VERBS and s.kill_after_writes is not None and s.kill_identity in (None, "", user):
                done = self._writes.get(user, 0) + 1
                self._writes[user] = done
                if done > s.kill_after_writes:
                    decision.drop = True
                    return decision
            for rule in self.rules:
                if (
                    rule.count > 0
                    and rule.verb in (None, verb)
                    and rule.resource in (None, resource)
                    and rule.name in (None, name)
                ):
                    rule.count -= 1
                    decision.error = error_for(rule.status, resource=resource, name=name)
                    break
            self.rules = [r for r in self.rules if r.count > 0]
            if decision.error is None:
                self._roll(decision, verb=verb, resource=resource, name=name)
            return decision

    def _roll(self, decision: Decision, *, verb: str, resource: str, name: str) -> None:
        """The rate-driven faults, at most one per request (the caller holds the lock)."""
        s = self.settings
        if s.error_rate and self.rng.random() < s.error_rate:
            decision.error = error_for(500)
        elif s.throttle_rate and self.rng.random() < s.throttle_rate:
            decision.error = error_for(429)
        elif verb in ("update", "patch") and s.conflict_rate and self.rng.random() < s.conflict_rate:
            decision.error = error_for(409, resource=resource, name=name)
        elif verb in WRITE_VERBS and s.stored_error_rate and self.rng.random() < s.stored_error_rate:
            decision.after_store = ApiError(500, "InternalError", STORED_ERROR_MESSAGE)
