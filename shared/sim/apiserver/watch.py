"""Watch streams: the events a client sees after a resourceVersion, filtered as the server does.

Without a resourceVersion (or with "0") a watch first replays the current objects as ADDED; with
one, it continues from there, and answers an ERROR event carrying a 410 Status when that version
was compacted away (clients then list again). Selector watches see an object that stops
matching as DELETED and one that starts matching as ADDED. Optional BOOKMARK events carry the
latest resourceVersion so a client can resume cheaply. The stream ends at ``timeoutSeconds``;
a dropped-watch fault ends it abruptly instead (:class:`Dropped`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from shared.sim.apiserver import readviews, resources, selectors, store

BOOKMARK_INTERVAL = 1.0
"""Seconds between BOOKMARK events on an idle watch (a real server sends them about once a minute)."""
POLL = 0.5
"""Longest wait between checks for the end of the stream; events themselves wake watchers at once."""


INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Dropped(Exception):
    """The stream must end without its closing chunk (an injected fault or a server shutdown)."""


@dataclass(frozen=True)
class WatchRequest:
    resource: resources.Resource
    namespace: str | None
    labels: tuple[selectors.Requirement, ...]
    fields: tuple[selectors.FieldTerm, ...]
    resource_version: str | None
    timeout: float
    bookmarks: bool
    initial_events: bool = False
    """``sendInitialEvents=true``: a streaming list — every current object as ADDED, then a BOOKMARK
    annotated ``k8s.io/initial-events-end``, whatever the resourceVersion (client-go's watch-list
    informers, helm 4's waiter, start this way instead of LIST + WATCH)."""


def _line(kind: str, raw: bytes) -> bytes:
    return b'{"type":"' + kind.encode() + b'","object":' + raw + b"}\n"


def _gone(rv: int) -> bytes:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"too old resource version: {rv}",
        "reason": "Expired",
        "code": 410,
    }
    return _line("ERROR", json.dumps(status).encode())


class Stream:
    """One watch; iterate it to get the encoded event lines."""

    def __init__(
        self,
        objects: store.Store,
        req: WatchRequest,
        *,
        should_drop: Callable[[], bool],
        bookmark_interval: float = BOOKMARK_INTERVAL,
        views: readviews.Views = readviews.STORED,
    ) -> None:
        self.store = objects
        self.req = req
        self.should_drop = should_drop
        self.bookmark_interval = bookmark_interval
        self.views = views

    def _matches(self, entry: store.Entry | None) -> bool:
        if entry is None:
            return False
        if self.req.namespace is not None and entry.namespace != self.req.namespace:
            return False
        return selectors.match_labels(self.req.labels, entry.labels) and selectors.match_fields(
            self.req.fields, entry.fields
        )

    def _raw(self, entry: store.Entry) -> bytes:
        r = self.req.resource
        if self.views.applies(r):  # the object as a read shows it (clock-driven fields, another API shape)
            return self.views.raw(r, entry)
        if r.storage_version and r.storage_version != r.version:
            obj = entry.object()
            obj["apiVersion"] = r.group_version
            return store.encode(obj)
        return entry.raw

    def _translate(self, event: store.Event) -> bytes | None:
        now, before = self._matches(event.entry), self._matches(event.previous)
        if event.type == "ADDED":
            kind = "ADDED" if now else None
        elif event.type == "DELETED":
            kind = "DELETED" if before or now else None
        elif now and before:
            kind = "MODIFIED"
        elif now:
            kind = "ADDED"
        elif before:
            kind = "DELETED"
        else:
            kind = None
        return _line(kind, self._raw(event.entry)) if kind else None

    def _bookmark(self, rv: int, *, initial_end: bool = False) -> bytes:
        r = self.req.resource
        meta: dict[str, object] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        obj = {"kind": r.kind, "apiVersion": r.group_version, "metadata": meta}
        return _line("BOOKMARK", json.dumps(obj).encode())

    def __iter__(self) -> Iterator[bytes]:
        deadline = time.monotonic() + self.req.timeout
        cursor, initial, expired = self._start()
        if expired:
            yield _gone(cursor)
            return
        for entry in initial:
            yield _line("ADDED", self._raw(entry))
        if self.req.initial_events:
            yield self._bookmark(cursor, initial_end=True)
        yield from self._follow(cursor, deadline)

    def _start(self) -> tuple[int, list[store.Entry], bool]:
        """Where the watch starts, the objects it reports first as ADDED, and whether its
        resourceVersion is older than the store keeps (410 Gone)."""
        with self.store.lock:
            rv_text = self.req.resource_version
            if rv_text in (None, "", "0") or self.req.initial_events:
                gr, namespace = self.req.resource.group_resource, self.req.namespace
                initial = [e for e in self.store.scan(gr, namespace) if self._matches(e)]
                return self.store.resource_version, initial, False
            try:
                cursor = int(str(rv_text))
            except ValueError:
                cursor = -1
            return cursor, [], cursor < self.store.compacted

    def _follow(self, cursor: int, deadline: float) -> Iterator[bytes]:
        """The events after ``cursor`` until the deadline, with bookmarks when asked for."""
        gr = self.req.resource.group_resource
        next_bookmark = time.monotonic() + self.bookmark_interval
        while True:
            if self.should_drop():
                raise Dropped()
            now = time.monotonic()
            if now >= deadline:
                break
            with self.store.lock:
                latest = self.store.resource_version
                try:
                    events = self.store.events_after(cursor, gr)
                except store.Compacted:
                    yield _gone(cursor)
                    return
            cursor = max(cursor, latest)
            for event in events:
                line = self._translate(event)
                if line is not None:
                    yield line
            if self.req.bookmarks and now >= next_bookmark:
                yield self._bookmark(cursor)
                next_bookmark = now + self.bookmark_interval
            if not events:
                self._wait(cursor, now=now, deadline=deadline, next_bookmark=next_bookmark)
        if self.req.bookmarks:
            yield self._bookmark(cursor)

    def _wait(self, cursor: int, *, now: float, deadline: float, next_bookmark: float) -> None:
        """Sleep until an event, the next bookmark, the deadline or the next drop check."""
        wait = min(deadline - now, POLL, max(0.0, next_bookmark - now) if self.req.bookmarks else POLL)
        self.store.wait(cursor, max(wait, 0.0), self.req.resource.group_resource)
