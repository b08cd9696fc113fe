"""What the control plane needs of the server that hosts it, as protocols.

:class:`shared.sim.server.SimServer` builds the HTTP handler (:mod:`shared.sim.apiserver.exchange`
and the modules on it) and the Job controller (:mod:`shared.sim.apiserver.jobcontroller`) with
itself as their host: they reach the store, the API, RBAC, faults, the audit log and the clocks
through it. Typed against these protocols rather than SimServer, the control plane does not depend
on the module that wires it (and the GPU side): nothing in apiserver/ imports above it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from shared.sim.apiserver import api, audit, faults, identities, podlogs, rbac, resources, store, vclock


class WatchSettings(Protocol):
    @property
    def bookmark_interval(self) -> float: ...

    @property
    def max_watch_seconds(self) -> float: ...


class Host(Protocol):
    """The server an HTTP request is answered for."""

    @property
    def vclock(self) -> vclock.VirtualClock: ...

    @property
    def clock(self) -> Callable[[], datetime]: ...

    @property
    def table(self) -> resources.ResourceTable: ...

    @property
    def store(self) -> store.Store: ...

    @property
    def api(self) -> api.Api: ...

    @property
    def identities(self) -> identities.Identities: ...

    @property
    def authorizer(self) -> rbac.Authorizer: ...

    @property
    def faults(self) -> faults.Faults: ...

    @property
    def audit(self) -> audit.AuditLog: ...

    @property
    def logs(self) -> podlogs.PodLogs: ...

    @property
    def settings(self) -> WatchSettings: ...

    @property
    def closing(self) -> bool: ...

    def control(self, method: str, path: str, query: dict[str, str], raw: bytes, token: str | None) -> tuple[int, Any]:
        """Answer one of the simulator's own endpoints (:data:`shared.sim.apiserver.handler.CONTROL_PREFIX`)."""
        ...

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        """Count an open connection (so stopping the server can close it), or forget it."""
        ...


class JobQueue(Protocol):
    @property
    def dirty_jobs(self) -> set[tuple[str, str]]:
        """The Jobs (namespace, name) to reconcile on the next pass."""
        ...


class JobHost(Protocol):
    """The server the Job controller writes through."""

    @property
    def vclock(self) -> vclock.VirtualClock: ...

    @property
    def table(self) -> resources.ResourceTable: ...

    @property
    def store(self) -> store.Store: ...

    @property
    def api(self) -> api.Api: ...

    @property
    def kubelet(self) -> JobQueue: ...
