"""An informer: one collection kept in memory by a list and then a watch, with indexes.

A controller that reads every Node each pass pays for the whole cluster each pass: at 10,000
nodes that is twenty pages to fetch and decode, whatever the pass does, and the server pays for
serialising them. An informer (client-go's name) lists once, page by page with ``limit`` and
``continue``, then watches from the list's resourceVersion and applies each change, so a pass
reads memory and the cost of keeping it current is one decoded object per change: it grows with
the writes, not with the cluster. Indexes map a key to the objects having it (``add_index``:
"nodes holding a quarantine cause"), kept up to date on every change, so a pass that needs a few
of 10,000 nodes reads only those.

The cache trails the server by the watch's delay; it is a filter and a count, not a source of
truth: a caller that acts on an object reads it fresh (``shared.nodes.update`` does). ``current``
is None until the first list is in and while the stream is broken (after a failed list or
watch, until the next one works), so callers fall back to listing then and never act on a cache
they know to be stale. A watch that ends is resumed from the last resourceVersion seen; a 410
(``Expired``) lists again. ``metadata.managedFields`` is dropped from stored objects: it is the
largest part of a real Node and nothing here reads it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from shared import errors
from shared.kube import errors as kube_errors
from shared.kube import rest, watch
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

Object = dict[str, Any]
IndexFunc = Callable[[Object], Iterable[str]]
"""The keys an object is indexed under (none: it is in no bucket of that index)."""

RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
"""Waits before listing again after failures in a row (the last one repeats)."""


def _name(obj: Object) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name', '')}" if namespace else str(meta.get("name", ""))


def _slim(obj: Object) -> Object:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return obj


class Store:
    """The objects by name (``namespace/name`` when namespaced) and the indexes over them.

    Readers get their own lists (``items``, ``by_index``), so a change applied meanwhile never
    breaks their iteration; the objects themselves are shared and must not be changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, Object] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indexes: dict[str, dict[str, set[str]]] = {}
        self._keys: dict[str, dict[str, tuple[str, ...]]] = {}  # index → object name → its keys

    def add_index(self, index: str, func: IndexFunc) -> None:
        """Index every object (present and future) by ``func``; adding the same index again replaces it."""
        with self._lock:
            self._indexers[index] = func
            self._indexes[index], self._keys[index] = {}, {}
            for name, obj in self._objects.items():
                self._index_one(index, name, obj)

    def _keys_of(self, index: str, obj: Object) -> tuple[str, ...]:
        try:
            return tuple(dict.fromkeys(self._indexers[index](obj)))
        except Exception:  # an index function that fails on an odd object must not stop the watch
            logger.warning("index %s failed on %s", index, _name(obj), exc_info=True)
            return ()

    def _index_one(self, index: str, name: str, obj: Object | None) -> None:
        buckets, keys = self._indexes[index], self._keys[index]
        for key in keys.pop(name, ()):
            bucket = buckets.get(key)
            if bucket is not None:
                bucket.discard(name)
                if not bucket:
                    del buckets[key]
        if obj is None:
            return
        new = self._keys_of(index, obj)
        if new:
            keys[name] = new
            for key in new:
                buckets.setdefault(key, set()).add(name)

    def put(self, obj: Object) -> None:
        name = _name(obj)
        obj = _slim(obj)
        with self._lock:
            self._objects[name] = obj
            for index in self._indexers:
                self._index_one(index, name, obj)

    def delete(self, obj: Object) -> None:
        name = _name(obj)
        with self._lock:
            self._objects.pop(name, None)
            for index in self._indexers:
                self._index_one(index, name, None)

    def replace(self, objects: Iterable[Object]) -> None:
        """Everything at once, after a (re)list: objects gone from the cluster go from here too."""
        fresh = {_name(o): _slim(o) for o in objects}
        with self._lock:
            self._objects = fresh
            for index in self._indexers:
                self._indexes[index], self._keys[index] = {}, {}
                for name, obj in fresh.items():
                    self._index_one(index, name, obj)

    def get(self, name: str) -> Object | None:
        with self._lock:
            return self._objects.get(name)

    def items(self) -> list[Object]:
        with self._lock:
            return list(self._objects.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._objects)

    def by_index(self, index: str, key: str) -> list[Object]:
        """The objects ``index`` files under ``key``, in name order; KeyError for an unknown index."""
        with self._lock:
            names = sorted(self._indexes[index].get(key, ()))
            return [self._objects[n] for n in names]

    def count(self, index: str, key: str) -> int:
        with self._lock:
            return len(self._indexes[index].get(key, ()))


class Informer:
    """``path``'s objects kept current on a daemon thread (``start``) until ``stop`` is set."""

    def __init__(self, api: KubeApi, path: str, *, label_selector: str | None = None, watch_seconds: int = 30) -> None:
        self.api = api
        self.path = path
        self.label_selector = label_selector
        self.watch_seconds = watch_seconds
        self.store = Store()
        self._healthy = threading.Event()
        self._synced_once = threading.Event()
        self._thread: threading.Thread | None = None
        self.lists = 0
        """Lists done so far: one, unless the watch expired or failed (a measure of what it costs)."""

    def add_index(self, index: str, func: IndexFunc) -> None:
        self.store.add_index(index, func)

    def current(self) -> Store | None:
        """The store when it can be trusted (listed, and the stream not known broken), else None."""
        return self.store if self._healthy.is_set() else None

    def starting(self) -> bool:
        """True until the first list is in: a caller that can wait (a gauge, a collection) waits,
        rather than listing everything itself while the informer does the same."""
        return not self._synced_once.is_set()

    def wait_synced(self, timeout: float) -> bool:
        """True once the first list is in (``timeout`` real seconds at most)."""
        return self._synced_once.wait(timeout)

    def start(self, stop: threading.Event) -> threading.Thread:
        thread = threading.Thread(target=self.run, args=(stop,), name=f"informer{self.path}", daemon=True)
        self._thread = thread
        thread.start()
        return thread

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self, stop: threading.Event) -> None:
        """List, then watch, again and again until ``stop``; failures wait and list again."""
        failures = 0
        while not stop.is_set():
            try:
                version = self._list()
                failures = 0
                self._watch(version, stop)
            except errors.ToolError as exc:
                self._healthy.clear()
                wait = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                failures += 1
                logger.debug("informer %s: %s; listing again in %.1fs", self.path, exc.line(), wait)
                stop.wait(wait)
        self._healthy.clear()

    def _list(self) -> str | None:
        started = time.monotonic()
        items: list[Object] = []
        version: str | None = None
        for page in rest.iter_pages(self.api, self.path, label_selector=self.label_selector):
            if version is None:
                version = (page.get("metadata") or {}).get("resourceVersion")
            items.extend(page.get("items") or [])
        self.store.replace(items)
        self.lists += 1
        logger.info(
            "listed %d object(s) of %s in %.1fs; watching from here",
            len(items),
            self.path,
            time.monotonic() - started,
            extra={"subject": "informer"},
        )
        self._healthy.set()
        self._synced_once.set()
        return version

    def _watch(self, version: str | None, stop: threading.Event) -> None:
        """Apply changes until the stream is expired (return: list again) or ``stop``."""
        while not stop.is_set():
            changes = watch.events(
                self.api,
                self.path,
                resource_version=version,
                timeout_seconds=self.watch_seconds,
                label_selector=self.label_selector,
            )
            try:
                with contextlib.closing(iter(changes)) as stream:
                    for kind, obj in stream:
                        if kind in ("ADDED", "MODIFIED"):
                            self.store.put(obj)
                        elif kind == "DELETED":
                            self.store.delete(obj)
                        if stop.is_set():
                            return
            except kube_errors.Expired:
                return
            version = changes.version
