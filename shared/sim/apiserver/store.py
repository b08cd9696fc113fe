"""The versioned object store under the emulator: etcd's part of a real control plane.

Objects are kept serialized (JSON bytes) beside a small index (labels, selectable field values,
owner uids), because that is what makes the performance targets cheap: a list joins stored bytes
without decoding them, a read decodes one fresh copy (so no caller can mutate stored state), and
100,000 pods fit in a few hundred MiB. Every write takes the next global resourceVersion and
appends one event to a bounded history that watches read from; history older than the window is
compacted, which is what makes a stale watch answer 410 Gone.

This module knows nothing of API semantics (defaults, finalizers, RBAC): see :mod:`shared.sim.apiserver.api`.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import podprint, resources, selectors

GroupResource = tuple[str, str]
Key = tuple[str, str]  # (namespace or "", name)

DEFAULT_HISTORY = 20_000
"""Events kept for watches; a watch older than this window gets 410 (etcd compacts similarly)."""


def encode(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored object version; immutable, so readers never need the lock after a lookup."""

    raw: bytes
    rv: int
    uid: str
    namespace: str
    name: str
    labels: Mapping[str, str]
    fields: Mapping[str, str]
    owners: tuple[str, ...]
    printed: podprint.Printed | None = None
    """A Pod's Table row without its ages, printed once when it is written, so that listing pods
    as a Table decodes none of them."""

    def object(self) -> dict[str, Any]:
        """A fresh, caller-owned copy of the object."""
        value: dict[str, Any] = json.loads(self.raw)
        return value


@dataclass(frozen=True, slots=True)
class Event:
    """One change, as a watch sees it; ``previous`` lets a selector watch see objects leave it."""

    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    group_resource: GroupResource
    entry: Entry
    previous: Entry | None


class Compacted(Exception):
    """The requested resourceVersion is older than the kept history."""


@dataclass(frozen=True)
class Alias:
    """A resource served over another one's stored objects, as a real server configures two REST
    endpoints on one etcd prefix (events.k8s.io/v1 Events over core/v1 Events).

    Reads through the alias (``get``, ``scan``) see objects in its shape (``from_storage``), so
    verbs that read, change and write back (update, patch) work in that shape;
    ``to_storage(obj, previous, check=)`` turns an object written through the alias into the
    stored shape (``previous`` is the stored object it replaces, None on create) and, when
    ``check``, may refuse it with an API error; ``fields`` maps the alias's field-selector labels
    to the target's. Watches follow the target's events, in the stored shape.
    """

    target: resources.Resource
    to_storage: Callable[..., dict[str, Any]]
    from_storage: Callable[[dict[str, Any]], dict[str, Any]]
    fields: Mapping[str, str]

    def read(self, entry: Entry) -> Entry:
        """``entry`` as the alias shows it."""
        raw = encode(self.from_storage(entry.object()))
        labels, fields, owners = entry.labels, entry.fields, entry.owners
        return Entry(raw, entry.rv, entry.uid, entry.namespace, entry.name, labels, fields, owners, entry.printed)


class Store:
    """Objects by group/resource and namespace/name, one resourceVersion counter, an event log."""

    def __init__(self, *, history: int = DEFAULT_HISTORY) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.history = history
        self._rv = 0
        self._compacted = 0
        self._buckets: dict[GroupResource, dict[Key, Entry]] = {}
        self._sorted: dict[GroupResource, list[Key]] = {}
        self._events: list[Event] = []
        self._dependents: dict[str, set[tuple[GroupResource, Key]]] = {}
        # One condition per group/resource, so a write wakes only the watches of its kind.
        self._conditions: dict[GroupResource, threading.Condition] = {}
        self._latest: dict[GroupResource, int] = {}
        self._aliases: dict[GroupResource, Alias] = {}
        self._alias_fields: dict[GroupResource, dict[str, str]] = {}
        self.closed = False
        self.on_write: Callable[[int], None] | None = None
        """Told each write's resourceVersion, under the store's lock: the virtual clock holds at a
        write until the simulation loop has handled it (:mod:`shared.sim.apiserver.vclock`)."""

    def alias(self, resource: resources.Resource, alias: Alias) -> None:
        """Serve ``resource`` over ``alias.target``'s objects (call before any object is stored)."""
        with self.lock:
            self._aliases[resource.group_resource] = alias
            self._alias_fields.setdefault(alias.target.group_resource, {}).update(alias.fields)

    def canonical(self, gr: GroupResource) -> GroupResource:
        """Where the objects of ``gr`` are stored (itself, unless it is an alias)."""
        alias = self._aliases.get(gr)
        return alias.target.group_resource if alias is not None else gr

    # ------------------------------------------------------------ reads
    @property
    def resource_version(self) -> int:
        return self._rv

    @property
    def compacted(self) -> int:
        return self._compacted

    def get(self, gr: GroupResource, namespace: str, name: str) -> Entry | None:
        alias = self._aliases.get(gr)
        bucket = self._buckets.get(gr if alias is None else alias.target.group_resource)
        found = bucket.get((namespace, name)) if bucket else None
        return alias.read(found) if alias is not None and found is not None else found

    def keys(self, gr: GroupResource) -> list[Key]:
        """Keys in etcd order (namespace, then name); cached until an object is added or removed."""
        gr = self.canonical(gr)
        with self.lock:
            cached = self._sorted.get(gr)
            if cached is None:
                cached = sorted(self._buckets.get(gr, {}))
                self._sorted[gr] = cached
            return cached

    def scan(self, gr: GroupResource, namespace: str | None, after: Key | None = None) -> Iterator[Entry]:
        """Entries in key order, optionally in one namespace and after a key (pagination)."""
        keys = self.keys(gr)
        alias = self._aliases.get(gr)
        bucket = self._buckets.get(self.canonical(gr), {})
        start = 0
        if namespace is not None:
            start = bisect.bisect_left(keys, (namespace, ""))
        if after is not None:
            start = max(start, bisect.bisect_right(keys, after))
        for index in range(start, len(keys)):  # by index: a page must not copy the rest of the keys
            key = keys[index]
            if namespace is not None and key[0] != namespace:
                break
            entry = bucket.get(key)
            if entry is not None:
                yield entry if alias is None else alias.read(entry)

    def count_after(self, gr: GroupResource, namespace: str | None, after: Key) -> int:
        """How many keys follow ``after`` (in ``namespace`` when given): a list's remainingItemCount."""
        keys = self.keys(gr)
        start = bisect.bisect_right(keys, after)
        end = len(keys) if namespace is None else bisect.bisect_left(keys, (namespace + "\0", ""))
        return max(0, end - start)

    def dependents(self, uid: str) -> list[tuple[GroupResource, Key]]:
        with self.lock:
            return sorted(self._dependents.get(uid, ()))

    def owners(self) -> list[str]:
        """Every uid some stored object names as its owner."""
        with self.lock:
            return list(self._dependents)

    def group_resources(self) -> list[GroupResource]:
        with self.lock:
            return [gr for gr, bucket in self._buckets.items() if bucket]

    def count(self, gr: GroupResource) -> int:
        return len(self._buckets.get(self.canonical(gr), {}))

    # ------------------------------------------------------------ writes
    def _index(self, resource: resources.Resource, obj: dict[str, Any], rv: int) -> Entry:
        md = obj["metadata"]
        md["resourceVersion"] = str(rv)
        owners = tuple(ref.get("uid", "") for ref in md.get("ownerReferences") or ())
        fields = selectors.field_values(resource, obj)
        for label, target in self._alias_fields.get(resource.group_resource, {}).items():
            fields[label] = fields.get(target, "")
        return Entry(
            raw=encode(obj),
            rv=rv,
            uid=md.get("uid", ""),
            namespace=md.get("namespace", ""),
            name=md["name"],
            labels=dict(md.get("labels") or {}),
            fields=fields,
            owners=owners,
            printed=podprint.printed(obj) if resource.kind == "Pod" and not resource.group else None,
        )

    def _link(self, gr: GroupResource, entry: Entry, *, add: bool) -> None:
        key = (gr, (entry.namespace, entry.name))
        for owner in entry.owners:
            if add:
                self._dependents.setdefault(owner, set()).add(key)
            else:
                deps = self._dependents.get(owner)
                if deps is not None:
                    deps.discard(key)
                    if not deps:
                        del self._dependents[owner]

    def _append(self, event: Event) -> None:
        self._events.append(event)
        if len(self._events) > 2 * self.history:
            self._drop(len(self._events) - self.history)
        self._latest[event.group_resource] = event.rv
        if self.on_write is not None:
            self.on_write(event.rv)
        condition = self._conditions.get(event.group_resource)
        if condition is not None:
            condition.notify_all()
        self.changed.notify_all()

    def _drop(self, count: int) -> None:
        if count <= 0:
            return
        self._compacted = self._events[count - 1].rv
        del self._events[:count]

    def put(self, resource: resources.Resource, obj: dict[str, Any]) -> Entry:
        """Store a new version of ``obj`` (stamping its resourceVersion) and emit ADDED/MODIFIED."""
        with self.lock:
            alias = self._aliases.get(resource.group_resource)
            if alias is not None:
                resource = self._store_through(alias, obj)
            gr = resource.group_resource
            bucket = self._buckets.setdefault(gr, {})
            key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            previous = bucket.get(key)
            self._rv += 1
            entry = self._index(resource, obj, self._rv)
            bucket[key] = entry
            if previous is None:
                self._sorted.pop(gr, None)
            else:
                self._link(gr, previous, add=False)
            self._link(gr, entry, add=True)
            self._append(Event(self._rv, "ADDED" if previous is None else "MODIFIED", gr, entry, previous))
            return entry

    def _store_through(self, alias: Alias, obj: dict[str, Any], *, check: bool = True) -> resources.Resource:
        """Convert ``obj`` (in place) to the stored shape of the resource ``alias`` stands for."""
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        previous = self._buckets.get(alias.target.group_resource, {}).get(key)
        converted = alias.to_storage(obj, previous.object() if previous is not None else None, check=check)
        if converted is not obj:
            obj.clear()
            obj.update(converted)
        return alias.target

    def remove(self, resource: resources.Resource, obj: dict[str, Any]) -> Entry:
        """Remove an object; its DELETED event carries ``obj`` with a new resourceVersion."""
        with self.lock:
            alias = self._aliases.get(resource.group_resource)
            if alias is not None:
                resource = self._store_through(alias, obj, check=False)
            gr = resource.group_resource
            key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            previous = self._buckets[gr].pop(key)
            self._sorted.pop(gr, None)
            self._link(gr, previous, add=False)
            self._rv += 1
            entry = self._index(resource, obj, self._rv)
            self._append(Event(self._rv, "DELETED", gr, entry, previous))
            return entry

    # ------------------------------------------------------------ watch support
    def events_after(self, rv: int, gr: GroupResource | None = None) -> list[Event]:
        """Events newer than ``rv``; raises :class:`Compacted` when some were already dropped."""
        if gr is not None:
            gr = self.canonical(gr)
        with self.lock:
            if rv < self._compacted:
                raise Compacted(rv)
            start = bisect.bisect_right(self._events, rv, key=lambda e: e.rv)
            events = self._events[start:]
        return [e for e in events if gr is None or e.group_resource == gr]

    def wait(self, rv: int, timeout: float, gr: GroupResource | None = None) -> bool:
        """Block until something newer than ``rv`` is written (of ``gr``, if given), the store
        closes, or ``timeout`` passes; True when there is something new."""
        if gr is not None:
            gr = self.canonical(gr)
        with self.lock:
            if gr is None:
                if self._rv > rv or self.closed:
                    return True
                self.changed.wait(timeout)
                return self._rv > rv
            if self._latest.get(gr, 0) > rv or self.closed:
                return True
            condition = self._conditions.setdefault(gr, threading.Condition(self.lock))
            condition.wait(timeout)
            return self._latest.get(gr, 0) > rv

    def wake(self) -> None:
        """Wake every waiter (shutdown, dropped watches)."""
        with self.lock:
            self.changed.notify_all()
            for condition in self._conditions.values():
                condition.notify_all()

    def compact(self, keep: int = 0) -> None:
        """Drop all but the last ``keep`` events (tests use it to provoke 410 Gone)."""
        with self.lock:
            self._drop(len(self._events) - keep)
            if keep == 0:
                self._compacted = self._rv

    # ------------------------------------------------------------ persistence and reset
    def clear(self) -> None:
        with self.lock:
            self._buckets.clear()
            self._sorted.clear()
            self._dependents.clear()
            self._events.clear()
            self._compacted = self._rv
            self._latest.clear()
        self.wake()

    def dump(self) -> dict[str, Any]:
        """Everything needed to restart with the same objects and resourceVersions."""
        with self.lock:
            return {
                "resourceVersion": self._rv,
                "objects": [[list(gr), e.object()] for gr, b in self._buckets.items() for e in b.values()],
            }

    def load(self, state: Mapping[str, Any], table: resources.ResourceTable) -> None:
        """Restore a :meth:`dump`; objects keep their resourceVersions, no events are replayed."""
        with self.lock:
            self.clear()
            for (group, plural), obj in state.get("objects", []):
                resource = table.by_group_resource(group, plural)
                if resource is None:
                    continue
                rv = int(obj["metadata"].get("resourceVersion") or 0)
                entry = self._index(resource, obj, rv)
                self._buckets.setdefault((group, plural), {})[(entry.namespace, entry.name)] = entry
                self._link((group, plural), entry, add=True)
            self._rv = max(self._rv, int(state.get("resourceVersion", 0)))
            self._compacted = self._rv
            self._sorted.clear()
