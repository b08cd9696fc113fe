"""One leader-elected controller loop, and ``ControllerSettings``: every timing it keeps, documented.

A controller replica runs ``LeaderLoop.run`` until a stop is asked: it takes or renews a Lease
(``shared.kube.leases``), and only while it holds it runs a pass, then waits for the next one,
polling (every ``poll_seconds`` of cluster time) or watching (until a change in a collection
wakes it). ``wake`` cuts the wait short. On stop it lets go of what its passes hold and then of
the Lease, so a standby replica takes over at once instead of waiting for the Lease to expire.

It survives what a real API server does to long-running clients: a watch cut short (a restart,
a load balancer's idle timeout) is resumed from the last resourceVersion it saw; a 410 lists
again at once; a failed pass (429, 5xx, an outage, a 409 that outlived its retries) is retried
after a backoff that doubles with each failure in a row, with jitter so replicas of many
controllers do not retry in lockstep, and never sooner than the server's ``Retry-After``. Refused
credentials (401/403) are fatal: after one fresh read of the kubeconfig (a rotated token) a
second refusal in a row ends ``run`` with the ``Unauthorized`` error (exit 4), because retrying
a wrong token or a missing permission only floods the server and the log.

Level-based: a pass reads everything it needs from the cluster and its progress lives on the
objects, so the loop carries nothing between passes but the Lease, and a replica started after a
crash, or a standby that takes an expired Lease over, resumes where the objects say. Cluster
seconds follow the cluster's clock (``shared.clock``: virtual time on the simulated cluster);
real seconds are the machine's. A controller makes its loop with ``LeaderLoop.of(self, ...)``: the
client, namespace, identity and clock are the replica's (``Replica``). Base layer: what a pass
does, what it holds besides the Lease, its metrics and its log lines belong to the controller that
runs on the loop.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared import clock, errors
from shared.clock import Clock
from shared.kube import client as kube_client
from shared.kube import errors as kube_errors
from shared.kube import leases, rest, retry, watch
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)


class ControllerSettings(BaseModel):
    """The timings of one leader-elected controller; the defaults are a poll-driven controller's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lease_seconds: int = Field(
        60,
        ge=1,
        description="Cluster seconds a Lease lasts unrenewed (default 60); renewed every pass. A replica "
        "silent this long is taken for dead and a standby takes over, so it must outlast the longest "
        "pass, yet stay short enough that work does not stall long behind a dead leader.",
    )
    poll_seconds: float = Field(
        10.0,
        gt=0,
        description="Cluster seconds between passes of a polling loop (default 10): short next to the "
        "work polled (tests and workloads take minutes), long enough not to load the API server.",
    )
    watch_seconds: int | None = Field(
        None,
        ge=1,
        description="Seconds one watch lasts (its server-side timeout) in a watching loop; unset (the "
        "default) means the loop polls. A watching loop reacts to a change at once; when a watch ends "
        "without one, the loop renews its Lease and passes again, so this bounds how stale a pass gets.",
    )
    slice_seconds: float = Field(
        1.0,
        gt=0,
        description="Cluster seconds of the longest single sleep of a poll (default 1), so a stop or a "
        "wake is honoured within about this long.",
    )
    min_wait_seconds: float = Field(
        0.0,
        ge=0,
        description="Real seconds a poll lasts at least (default 0: no floor). On a simulated cluster "
        "whose clock runs hundreds of times faster than real time, a poll of cluster seconds would "
        "otherwise become a busy loop competing with the other controllers for the interpreter.",
    )
    standby_seconds: float | None = Field(
        None,
        gt=0,
        description="Real seconds a replica that is not the leader waits before trying the Lease again; "
        "unset (the default): as long as a poll. Real time, so a watching controller's standby takes "
        "over within about this long after the Lease expires, whatever the cluster's clock does.",
    )
    min_real_lease_seconds: float = Field(
        2.0,
        ge=0,
        description="Real seconds a standby must have seen the holder's Lease unrenewed before it takes "
        "over (default 2), besides the Lease's own expiry in cluster seconds: on a simulated cluster "
        "whose clock runs fast, a busy holder would otherwise lose its Lease between two renewals.",
    )
    retry_seconds: float | None = Field(
        None,
        gt=0,
        description="Real seconds to wait after a failed pass before the next attempt; unset (the "
        "default): as long as a poll. Short, because the next pass redoes only what did not happen. "
        "Doubled for each further failure in a row (with jitter), up to max_backoff_seconds.",
    )
    max_backoff_seconds: float = Field(
        30.0,
        gt=0,
        description="Real seconds the wait after failures in a row grows to at most (default 30): an "
        "outage is then polled twice a minute, and the first pass after it comes within that long.",
    )

    @model_validator(mode="after")
    def _watching_waits_in_real_time(self) -> ControllerSettings:
        if self.watch_seconds is not None and (self.standby_seconds is None or self.retry_seconds is None):
            raise ValueError("a watching loop has no poll to wait: set standby_seconds and retry_seconds")
        return self


@dataclass(frozen=True)
class Watch:
    """What a watching loop waits on: a collection, and which of its changes calls for a pass."""

    path: str
    wakes: Callable[[str, dict[str, Any]], bool]
    """(event type, object) → True when the change needs a pass (e.g. an unprocessed object)."""


def _nothing(*_args: object) -> None:
    return None


class Replica(Protocol):
    """A controller replica as its loop needs it: its cluster, namespace, name and clock."""

    @property
    def api(self) -> KubeApi: ...

    @property
    def namespace(self) -> str: ...

    @property
    def identity(self) -> str: ...

    @property
    def clock(self) -> Clock: ...


class Hooks(TypedDict, total=False):
    """The optional parts of a ``LeaderLoop``, by field name."""

    watch: Watch | None
    on_leading: Callable[[bool], None]
    on_error: Callable[[errors.ToolError], None]
    on_stop: Callable[[], None]
    on_restart: Callable[[str, str], None]


@dataclass
class LeaderLoop:
    """One replica's loop: hold the Lease ``namespace/lease``, pass, wait; ``run`` until ``stop``."""

    api: KubeApi
    namespace: str
    lease: str
    identity: str
    clock: clock.Clock
    settings: ControllerSettings
    reconcile: Callable[[], object]
    """One pass; its result is ignored, a ToolError it raises is ``on_error``'s."""
    watch: Watch | None = None
    """Required when ``settings.watch_seconds`` is set, ignored otherwise."""
    on_leading: Callable[[bool], None] = _nothing
    """Told after every attempt on the Lease whether this replica leads, and False at the end."""
    on_error: Callable[[errors.ToolError], None] = _nothing
    """Told of a failed pass (a conflict, an unreachable API server); the loop then retries."""
    on_stop: Callable[[], None] = _nothing
    """Lets go of what the passes hold (their own Leases), before the loop gives its Lease up."""
    on_restart: Callable[[str, str], None] = _nothing
    """Told (resource, reason) when a watch had to start again: ``dropped`` (cut mid-stream,
    resumed from its last resourceVersion) or ``expired`` (410: listed again)."""
    leading: bool = field(default=False, init=False)
    failures: int = field(default=0, init=False)
    """Failed turns in a row: the backoff's exponent."""
    _reread_credentials: bool = field(default=False, init=False, repr=False)
    _led: bool = field(default=False, init=False, repr=False)
    _observer: leases.Observer = field(init=False, repr=False)
    _watching: tuple[Watch, int] | None = field(default=None, init=False, repr=False)
    _woken: threading.Event = field(default_factory=threading.Event, init=False, repr=False)

    @classmethod
    def of(
        cls,
        replica: Replica,
        *,
        lease: str,
        settings: ControllerSettings,
        reconcile: Callable[[], object],
        **hooks: Unpack[Hooks],
    ) -> LeaderLoop:
        """``replica``'s loop on the Lease ``lease`` in its namespace, under its identity and clock."""
        return cls(
            api=replica.api,
            namespace=replica.namespace,
            lease=lease,
            identity=replica.identity,
            clock=replica.clock,
            settings=settings,
            reconcile=reconcile,
            **hooks,
        )

    def __post_init__(self) -> None:
        self._observer = leases.Observer(self.settings.min_real_lease_seconds)
        if self.settings.watch_seconds is not None:
            if self.watch is None:
                raise ValueError("a watching loop needs the Watch it waits on")
            self._watching = (self.watch, self.settings.watch_seconds)

    def wake(self) -> None:
        """Cut the current wait short: the next pass starts within ``slice_seconds`` of a poll, or at
        the next change a watch sees (at once when woken during the pass)."""
        self._woken.set()

    def run(self, stop: threading.Event) -> None:
        """Lead and pass until ``stop`` is set; then let go of everything held."""
        try:
            while not stop.is_set():
                self.turn(stop)
        finally:
            self._let_go()

    def turn(self, stop: threading.Event) -> None:
        """One round: the Lease, and as its holder a pass and the wait for the next one.

        Raises ``Unauthorized`` when the credentials are refused twice in a row."""
        try:
            self.leading = leases.try_acquire(
                self.api,
                self.namespace,
                self.lease,
                identity=self.identity,
                duration=self.settings.lease_seconds,
                now=self.clock.now,
                observer=self._observer,
            )
            self.on_leading(self.leading)
            self._led = self._led or self.leading
            if not self.leading:
                self._succeeded()
                self._wait(stop, self.settings.standby_seconds)
                return
            if self._watching is None:
                self.reconcile()
                self._succeeded()
                self._poll(stop)
            else:
                self._pass_and_watch(stop, *self._watching)
                self._succeeded()
        except kube_errors.Expired:
            if self._watching is not None:
                self.on_restart(_resource(self._watching[0]), "expired")
            return  # the watch's resourceVersion is too old: list again at once
        except errors.Unauthorized as exc:
            self._refused(exc)
        except errors.ToolError as exc:
            self.failures += 1
            self.on_error(exc)
            self._back_off(stop, exc)

    def _succeeded(self) -> None:
        self.failures = 0
        self._reread_credentials = False

    def _refused(self, exc: errors.Unauthorized) -> None:
        """Read the credentials again once (a rotated token); refused again, give up."""
        if self._reread_credentials or not kube_client.reload_credentials(self.api):
            raise exc
        self._reread_credentials = True
        logger.warning("credentials refused (%s); read them again and retry once", exc.line())

    def _back_off(self, stop: threading.Event, exc: errors.ToolError) -> None:
        """After a failure: a poll (a polling loop's first failure), or real seconds that double
        with each failure in a row, and at least what the server asked for in ``Retry-After``."""
        retry_after = exc.retry_after if isinstance(exc, kube_errors.Throttled) else None
        base = self.settings.retry_seconds
        if base is None and self.failures == 1 and retry_after is None:
            self._poll(stop)
            return
        pause = backoff_seconds(self.failures, self.settings, retry_after=retry_after)
        stop.wait(pause)

    def _pass_and_watch(self, stop: threading.Event, watching: Watch, seconds: int) -> None:
        """Read the collection's resourceVersion, pass, then watch from that version for up to
        ``seconds``: what changed during the pass wakes the next one at once, and a watch cut
        short is resumed from the last version it saw rather than listed again."""
        version = rest.collection_version(self.api, watching.path, what=watching.path.rsplit("/", 1)[-1])
        self.reconcile()
        deadline = time.monotonic() + seconds
        while not (stop.is_set() or self._woken.is_set()):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            changes = watch.events(
                self.api, watching.path, resource_version=version, timeout_seconds=max(1, math.ceil(left))
            )
            with contextlib.closing(iter(changes)) as stream:
                if any(stop.is_set() or self._woken.is_set() or watching.wakes(kind, obj) for kind, obj in stream):
                    break
            version = changes.version
            if not changes.broken:
                break  # the server ended it at its timeout: time for the next pass
            self.on_restart(_resource(watching), "dropped")
        self._woken.clear()

    def _wait(self, stop: threading.Event, real_seconds: float | None) -> None:
        """``real_seconds`` of real time, or as long as a poll when None."""
        if real_seconds is None:
            self._poll(stop)
        else:
            stop.wait(real_seconds)

    def _poll(self, stop: threading.Event) -> None:
        """``poll_seconds`` of cluster time in slices, and at least ``min_wait_seconds`` of real time."""
        poll, piece = self.settings.poll_seconds, self.settings.slice_seconds
        waited, floor = 0.0, time.monotonic() + self.settings.min_wait_seconds
        while waited < poll and not stop.is_set() and not self._woken.is_set():
            self.clock.sleep(min(piece, poll - waited))
            waited += piece
        stop.wait(max(0.0, floor - time.monotonic()))
        self._woken.clear()

    def _let_go(self) -> None:
        """What the passes hold, then the Lease (if ours); a failure only makes the next holder
        wait for the Lease to expire, so it is logged and the stop goes on."""
        try:
            if self._led:  # passes ran, so they may hold something
                self.on_stop()
            if self.leading:
                leases.release(self.api, self.namespace, self.lease, identity=self.identity)
        except errors.ToolError as exc:
            logger.warning("letting go of lease %s/%s failed: %s", self.namespace, self.lease, exc.line())
        finally:
            self.leading = False
            self.on_leading(False)


def backoff_seconds(failures: int, settings: ControllerSettings, *, retry_after: float | None = None) -> float:
    """Real seconds to wait after ``failures`` failed turns in a row: ``retry_seconds`` doubled per
    further failure, half of it random, capped at ``max_backoff_seconds``; never below the
    server's Retry-After (capped the same way)."""
    base = settings.retry_seconds or settings.poll_seconds
    cap = max(base, settings.max_backoff_seconds)
    policy = retry.RetryPolicy(base_delay=base, max_delay=cap, jitter=0.5)
    pause = retry.delay_for(max(1, failures), policy, unit=random.random())
    if retry_after is not None:
        pause = max(pause, min(retry_after, cap))
    return pause


def _resource(watching: Watch) -> str:
    """The watched collection's resource name (the last part of its path), for metrics."""
    return watching.path.rstrip("/").rsplit("/", 1)[-1]
