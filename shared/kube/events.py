"""core/v1 Events about the objects our controllers act on, written as client-go's legacy recorder writes them.

Operators follow a controller in ``kubectl get events`` and in the Events section of ``kubectl
describe``, which lists the ``core/v1`` Events whose ``involvedObject`` matches the object's kind,
name, namespace and uid (``kubectl:pkg/describe/describe.go`` ``searchEvents``). So the reference
is taken from the real object (its uid, never a made-up one), and the Event is shaped like the ones
``client-go:tools/record/event.go`` ``makeEvent`` produces: in the object's namespace (``default``
for a cluster-scoped object), named ``<object name>.<hex nanoseconds>``, with ``source.component``
and ``reportingComponent`` the component, ``source.host`` and ``reportingInstance`` this replica
(the pod's host name), first/last timestamps, ``count`` 1 and ``eventTime`` null.

Repeats are aggregated as ``client-go:tools/record/events_cache.go``'s EventCorrelator does: the
same (component, instance, object, type, reason, message) seen again within ``WINDOW`` of its last
record is a strategic-merge PATCH of ``count`` + 1 and ``lastTimestamp`` on the Event written
before, not a new object; the memory is this process's (a restarted controller writes a fresh
Event), and an Event gone meanwhile (expired after the server's ``--event-ttl``) is created anew.
The "combined from similar events" collapsing of client-go is left out.

Events are best-effort: a refusal (403, a terminating namespace) or a server still failing after a
few quick retries is logged once at warning level and swallowed, so the work the Event describes
never fails for it. Time comes from the caller's clock (``shared.clock``), so on the simulated
cluster timestamps and names follow virtual time.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from shared import clock, errors
from shared.kube import errors as kube_errors
from shared.kube import rest, retry
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

NORMAL, WARNING = "Normal", "Warning"
TYPES = (NORMAL, WARNING)
DEFAULT_NAMESPACE = "default"
"""Where Events about cluster-scoped objects (Nodes, our cluster-scoped resources) go, as client-go's."""
WINDOW = timedelta(minutes=10)
"""A repeat later than this after the last record starts a new Event."""
CACHE_SIZE = 4096
"""Events remembered for aggregation (client-go's ``maxLruCacheEntries``); the oldest is forgotten first."""
MAX_MESSAGE = 1024
"""Longest message written; longer ones are cut (events.k8s.io's limit for ``note``)."""
POLICY = retry.RetryPolicy(attempts=6, base_delay=0.2, max_delay=2.0)
"""An Event is not worth holding a controller's pass for long, but one lost to an API server restart
leaves operators blind to what happened: tries for about five seconds (a short outage, a burst of
429s), then give up."""
ATTEMPTS_ON_NAME_CLASH = 3
_REASON = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_NAME_TAIL = 17  # "." and 16 hex digits
_MAX_NAME = 253
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_JSON = "application/json"
_STRATEGIC = "application/strategic-merge-patch+json"


class _Nanos:
    """Nanoseconds for Event names, strictly increasing in this process: a paused (virtual) clock must not
    give two Events about one object the same name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def __call__(self, moment: datetime) -> int:
        exact = (moment - _EPOCH) // timedelta(microseconds=1) * 1000
        with self._lock:
            self._last = max(exact, self._last + 1)
            return self._last


_nanos = _Nanos()


class _Warnings:
    """Which failures were already logged at warning level, for every recorder of one API client: a
    controller with several recorders and no permission for Events says so once per namespace, not once
    per recorder. Any Event written through that client makes the next failure worth a warning again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[tuple[int, str, str]] = set()

    def first(self, api: KubeApi, kind: str, namespace: str) -> bool:
        mark = (id(api), kind, namespace)
        with self._lock:
            fresh = mark not in self._seen
            self._seen.add(mark)
            return fresh

    def clear(self, api: KubeApi) -> None:
        with self._lock:
            self._seen = {m for m in self._seen if m[0] != id(api)}


_warnings = _Warnings()


@dataclass(frozen=True)
class Reference:
    """``involvedObject``: which object an Event is about."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""
    resource_version: str = ""

    def document(self) -> dict[str, str]:
        out = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name, "uid": self.uid}
        if self.namespace:
            out["namespace"] = self.namespace
        if self.resource_version:
            out["resourceVersion"] = self.resource_version
        return out


def reference(obj: Mapping[str, Any], *, kind: str | None = None, api_version: str | None = None) -> Reference:
    """The reference to ``obj`` as read from the API; ``kind``/``api_version`` fill in what list items lack.

    Raises ValueError when the object has no name or uid (not an object read from a server) or no kind."""
    meta = obj.get("metadata") or {}
    found_kind, found_version = obj.get("kind") or kind, obj.get("apiVersion") or api_version
    name, uid = meta.get("name"), meta.get("uid")
    if not (found_kind and found_version and name and uid):
        raise ValueError(f"not a stored object (kind, apiVersion, name and uid needed): {found_kind}/{name}")
    return Reference(
        api_version=str(found_version),
        kind=str(found_kind),
        name=str(name),
        uid=str(uid),
        namespace=str(meta.get("namespace") or ""),
        resource_version=str(meta.get("resourceVersion") or ""),
    )


def listing(items: Iterable[str], *, most: int = 5) -> str:
    """``a, b, c and 4 more``: a message names a few objects, never hundreds."""
    shown = list(items)
    if len(shown) <= most:
        return ", ".join(shown)
    return f"{', '.join(shown[:most])} and {len(shown) - most} more"


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def event_name(object_name: str, nanos: int) -> str:
    """``<object name>.<hex nanoseconds>`` (``%v.%x`` in client-go), the object's part cut to fit 253 characters."""
    head = object_name[: _MAX_NAME - _NAME_TAIL].rstrip(".-")
    return f"{head}.{nanos:x}"


@dataclass
class _Seen:
    namespace: str
    name: str
    count: int
    last: datetime


Key = tuple[str, ...]


class Recorder:
    """Writes Events for one component of one replica; thread-safe, one per controller.

    ``now`` is the controller's clock (``Clock.now``); ``instance`` defaults to the host name, which is
    the pod's name in a cluster."""

    def __init__(
        self,
        api: KubeApi,
        *,
        component: str,
        now: Callable[[], datetime] = clock.WALL.now,
        instance: str | None = None,
        policy: retry.RetryPolicy = POLICY,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api = api
        self.component = component
        self.now = now
        self.instance = instance if instance is not None else socket.gethostname()
        self.policy = policy
        self.sleep = sleep
        self._lock = threading.Lock()
        self._seen: collections.OrderedDict[Key, _Seen] = collections.OrderedDict()
        self._local = threading.local()

    # ------------------------------------------------------------ the API
    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the Events this thread records until the block ends, then write them; an error
        in the block drops them. For a step that is redone when the write recording its progress
        fails: its Events are redone with it, so each is written once (nested blocks join the
        outer one)."""
        if getattr(self._local, "held", None) is not None:
            yield
            return
        self._local.held = []
        try:
            yield
        except BaseException:
            self._local.held = None
            raise
        pending, self._local.held = self._local.held, None
        for obj, fields in pending:
            self.record(obj, **fields)

    def normal(self, obj: Mapping[str, Any], reason: str, message: str, **ref: str) -> bool:
        return self.record(obj, type=NORMAL, reason=reason, message=message, **ref)

    def warning(self, obj: Mapping[str, Any], reason: str, message: str, **ref: str) -> bool:
        return self.record(obj, type=WARNING, reason=reason, message=message, **ref)

    def record(
        self,
        obj: Mapping[str, Any],
        *,
        type: str,
        reason: str,
        message: str,
        kind: str | None = None,
        api_version: str | None = None,
    ) -> bool:
        """Record one Event about ``obj`` (an object as read from the API); True when it was written.

        Never raises for the API's answer (see the module docstring). Raises ValueError for a type
        other than Normal/Warning, a reason that is not UpperCamelCase, or an object without uid: those
        are mistakes in the caller."""
        held: list[tuple[Mapping[str, Any], dict[str, Any]]] | None = getattr(self._local, "held", None)
        if held is not None:
            held.append(
                (obj, {"type": type, "reason": reason, "message": message, "kind": kind, "api_version": api_version})
            )
            return True
        if type not in TYPES:
            raise ValueError(f"event type must be one of {', '.join(TYPES)}, not {type!r}")
        if not _REASON.match(reason):
            raise ValueError(f"event reason must be UpperCamelCase: {reason!r}")
        ref = reference(obj, kind=kind, api_version=api_version)
        message = message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."
        namespace = ref.namespace or DEFAULT_NAMESPACE
        moment = self.now()
        key: Key = (
            self.component,
            self.instance,
            ref.api_version,
            ref.kind,
            ref.namespace,
            ref.name,
            ref.uid,
            type,
            reason,
            message,
        )
        try:
            written = self._write(key, ref, namespace, type=type, reason=reason, message=message, moment=moment)
        except errors.ToolError as exc:
            self._failed(exc, namespace, reason, ref)
            return False
        _warnings.clear(self.api)  # the API takes Events again: warn anew about the next failure
        with self._lock:
            self._seen[key] = written
            self._seen.move_to_end(key)
            while len(self._seen) > CACHE_SIZE:
                self._seen.popitem(last=False)
        return True

    # ------------------------------------------------------------ writing
    def _write(
        self, key: Key, ref: Reference, namespace: str, *, type: str, reason: str, message: str, moment: datetime
    ) -> _Seen:
        with self._lock:
            seen = self._seen.get(key)
        stamp = _stamp(moment)
        if seen is not None and moment - seen.last <= WINDOW:
            patch = {"count": seen.count + 1, "lastTimestamp": stamp, "message": message}
            try:
                self._call(
                    "PATCH", rest.core_path("events", seen.namespace, seen.name), patch, _STRATEGIC, what=seen.name
                )
                return _Seen(seen.namespace, seen.name, seen.count + 1, moment)
            except errors.NotFound:
                pass  # expired or deleted meanwhile: a new one
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "", "namespace": namespace},
            "involvedObject": ref.document(),
            "reason": reason,
            "message": message,
            "source": {"component": self.component, "host": self.instance},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": type,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
        }
        for attempt in range(ATTEMPTS_ON_NAME_CLASH):
            body["metadata"]["name"] = event_name(ref.name, _nanos(moment))
            try:
                self._call("POST", rest.core_path("events", namespace), body, _JSON, what=body["metadata"]["name"])
                break
            except kube_errors.AlreadyExists:
                if self._is_ours(namespace, body):
                    break  # a retry of a create the server stored but did not answer: done
                if attempt == ATTEMPTS_ON_NAME_CLASH - 1:
                    raise  # another writer names Events at the same instant: give this one up
        return _Seen(namespace, body["metadata"]["name"], 1, moment)

    def _is_ours(self, namespace: str, body: dict[str, Any]) -> bool:
        """Whether the Event already stored under ``body``'s name is this very one."""
        name = body["metadata"]["name"]
        try:
            found = rest.get(self.api, rest.core_path("events", namespace, name), what=f"event {name}")
        except errors.NotFound:
            return False
        same = ("involvedObject", "reason", "message", "source", "firstTimestamp", "type")
        return all(found.get(k) == body.get(k) for k in same)

    def _call(self, method: str, path: str, body: dict[str, Any], content_type: str, *, what: str) -> None:
        def once() -> None:
            response = self.api.call_api(
                path,
                method,
                header_params={"Accept": _JSON, "Content-Type": content_type},
                body=body,
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _preload_content=False,
                _request_timeout=30,
            )
            response.data  # noqa: B018  # read to the end: the connection goes back to the pool

        retry.call(once, policy=self.policy, what=f"event {what}", sleep=self.sleep)

    def _failed(self, exc: errors.ToolError, namespace: str, reason: str, ref: Reference) -> None:
        """Warn once per kind of failure and namespace until an Event is written again; debug after."""
        first = _warnings.first(self.api, type(exc).__name__, namespace)
        logger.log(
            logging.WARNING if first else logging.DEBUG,
            "event %s about %s %s not recorded in namespace %s: %s",
            reason,
            ref.kind,
            ref.name,
            namespace,
            exc.line(),
            extra={"subject": ref.name},
        )
