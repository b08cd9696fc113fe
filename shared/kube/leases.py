"""Leases (coordination.k8s.io/v1): who holds a piece of work, taken over when the holder dies.

Used for leader election of controllers and for "whoever runs this Certification". Holding is
optimistic: an update carries the resourceVersion just read, so of two contenders exactly one wins
and the other sees a conflict. A lease whose holder has not renewed within its duration is expired
and may be taken. Times come from the caller's clock (``shared.clock``), so virtual time works.

An ``Observer`` adds what client-go's leader election does: a contender also counts, on its own
monotonic clock, how long it has seen the same record unrenewed, and takes over only after a
minimum of real time as well. On a real cluster the lease duration is the longer bound; on a
simulated cluster whose clock runs hundreds of times faster, a 15-second lease lasts milliseconds
of real time, and without the real-time margin a busy machine's holder would lose it between two
renewals and leaders would flap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from shared import errors
from shared.kube import errors as kube_errors
from shared.kube import rest
from shared.kube.api import KubeApi

_MICRO = "%Y-%m-%dT%H:%M:%S.%fZ"


def _path(namespace: str, name: str | None = None) -> str:
    return rest.group_path("coordination.k8s.io", "v1", "leases", namespace, name)


def _format(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_MICRO)


def _parse(text: str | None) -> datetime | None:
    if not text:
        return None
    for fmt in (_MICRO, "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class Holding:
    """The lease as last read: who holds it and until when."""

    holder: str | None
    renewed: datetime | None
    duration: int

    def expired(self, now: datetime) -> bool:
        return self.renewed is None or now >= self.renewed + timedelta(seconds=self.duration)


def read(api: KubeApi, namespace: str, name: str) -> Holding | None:
    try:
        lease = rest.get(api, _path(namespace, name), what=f"lease {namespace}/{name}")
    except errors.NotFound:
        return None
    spec = lease.get("spec") or {}
    return Holding(
        spec.get("holderIdentity"), _parse(spec.get("renewTime")), int(spec.get("leaseDurationSeconds") or 0)
    )


@dataclass
class Observer:
    """One contender's memory of the records it saw: each (lease, holder, renewTime) and the
    monotonic time it was first seen. A record unchanged for less than ``min_real_seconds`` is
    not taken over, whatever the lease's own clock says."""

    min_real_seconds: float
    monotonic: Callable[[], float] = time.monotonic
    _seen: dict[str, tuple[tuple[object, ...], float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def unchanged_long_enough(self, lease: str, record: tuple[object, ...]) -> bool:
        now = self.monotonic()
        with self._lock:
            seen = self._seen.get(lease)
            if seen is None or seen[0] != record:
                self._seen[lease] = (record, now)
                return self.min_real_seconds <= 0
            return now - seen[1] >= self.min_real_seconds


def try_acquire(
    api: KubeApi,
    namespace: str,
    name: str,
    *,
    identity: str,
    duration: int,
    now: Callable[[], datetime],
    observer: Observer | None = None,
) -> bool:
    """Take or renew the lease for ``identity``; False when someone else holds an unexpired one
    (or, with an ``observer``, one it has not yet seen unrenewed for its real-time minimum).

    One attempt, no retry on conflict: losing a race means someone else just took or renewed it.
    """
    moment = now()
    spec = {"holderIdentity": identity, "leaseDurationSeconds": duration, "renewTime": _format(moment)}
    try:
        current = rest.get(api, _path(namespace, name), what=f"lease {namespace}/{name}")
    except errors.NotFound:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {**spec, "acquireTime": _format(moment), "leaseTransitions": 0},
        }
        try:
            rest.create(api, _path(namespace), body, what=f"lease {namespace}/{name}")
        except (kube_errors.AlreadyExists, kube_errors.Conflict):
            return False
        return True
    old = current.get("spec") or {}
    holding = Holding(
        old.get("holderIdentity"), _parse(old.get("renewTime")), int(old.get("leaseDurationSeconds") or 0)
    )
    if holding.holder not in (None, "", identity):
        if not holding.expired(moment):
            return False
        record = (holding.holder, old.get("renewTime"), (current.get("metadata") or {}).get("resourceVersion"))
        if observer is not None and not observer.unchanged_long_enough(f"{namespace}/{name}", record):
            return False
    new_spec = {**old, **spec}
    if holding.holder != identity:
        new_spec["acquireTime"] = _format(moment)
        new_spec["leaseTransitions"] = int(old.get("leaseTransitions") or 0) + 1
    current["spec"] = new_spec
    try:
        rest.replace(api, _path(namespace, name), current, what=f"lease {namespace}/{name}")
    except kube_errors.Conflict:
        return False
    return True


def release(api: KubeApi, namespace: str, name: str, *, identity: str) -> None:
    """Give the lease up (if still ours) so the next holder need not wait for it to expire."""
    try:
        current = rest.get(api, _path(namespace, name), what=f"lease {namespace}/{name}")
    except errors.NotFound:
        return
    if (current.get("spec") or {}).get("holderIdentity") != identity:
        return
    current["spec"]["holderIdentity"] = None
    current["spec"]["renewTime"] = None
    try:
        rest.replace(api, _path(namespace, name), current, what=f"lease {namespace}/{name}")
    except kube_errors.Conflict:
        return
