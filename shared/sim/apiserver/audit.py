"""A record of every API request: who, which verb, on what, and the answer.

Later issues use it to prove least privilege: run a controller with a ServiceAccount token, then
compare what it did (``python -m shared.sim audit``) with what its Role grants. The record is
bounded so a long-running demo server does not grow without limit.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

DEFAULT_CAPACITY = 100_000


@dataclass(frozen=True)
class Record:
    """One request. ``resource`` is ``plural`` or ``plural/subresource``."""

    identity: str
    verb: str
    group: str
    resource: str
    namespace: str
    name: str
    code: int
    warnings: tuple[str, ...] = ()
    """The ``Warning`` headers the answer carried (unknown fields dropped under Warn, ...)."""
    stored: bool = False
    """A write that reached the store: answered 2xx, or stored and then answered with an injected
    500 (``stored_error_rate``). What "done" means when counting a client's actions."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class AuditLog:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._records: deque[Record] = deque(maxlen=capacity)
        self._lock = threading.Lock()

    def add(self, record: Record) -> None:
        with self._lock:
            self._records.append(record)

    def records(self, *, identity: str | None = None) -> list[Record]:
        with self._lock:
            return [r for r in self._records if identity is None or r.identity == identity]

    def permissions(self, *, identity: str) -> list[tuple[str, str, str, str]]:
        """The distinct (verb, group, resource, namespace) an identity used: what its Role must grant."""
        return sorted({(r.verb, r.group, r.resource, r.namespace) for r in self.records(identity=identity)})

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
