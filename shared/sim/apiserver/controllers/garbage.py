"""The garbage collector's background sweep, and the Event time-to-live.

Deleting an owner cascades at once (:mod:`shared.sim.apiserver.collector`). What is left for the
collector's background loop (``kubernetes:pkg/controller/garbagecollector`` ``attemptToDeleteItem``)
is an object whose ownerReferences name owners that do not exist — matched by uid, looked up in
the object's own namespace (a namespaced owner of a cluster-scoped object cannot exist): when
none of its owners exists it is deleted (``Orphan`` when it carries the ``orphan`` finalizer,
``Foreground`` with ``foregroundDeletion``, else ``Background``); when some do, the references to
the missing ones are removed. A reference to a kind the server does not serve is left alone, as
the real collector keeps retrying it rather than deleting.

Events live one hour after they were last written (``kube-apiserver --event-ttl``, default 1h),
in cluster time; after a restart the age is taken from the Event's own timestamps.
"""

from __future__ import annotations

import logging
from typing import Any

from shared.sim.apiserver import apierrors, store
from shared.sim.apiserver.controllers import kit

logger = logging.getLogger(__name__)

EVENT_TTL = 3600.0


class Dangling:
    """Deletes (or trims the references of) objects whose owners are gone."""

    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx

    def _owner_exists(self, ref: dict[str, Any], namespace: str) -> bool | None:
        """True/False when the owner's existence can be told; None for a kind not served."""
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        owner = self.ctx.api.table.by_kind(group, str(ref.get("kind", "")))
        if owner is None:
            return None
        if owner.namespaced and not namespace:
            return False  # a cluster-scoped object cannot have a namespaced owner
        found = self.ctx.store.get(owner.group_resource, namespace if owner.namespaced else "", str(ref.get("name")))
        return found is not None and found.uid == ref.get("uid")

    def check(self, gr: tuple[str, str], key: kit.Key) -> None:
        ctx = self.ctx
        entry = ctx.store.get(gr, *key)
        r = ctx.api.table.by_group_resource(*gr)
        if entry is None or r is None or not entry.owners:
            return
        obj = entry.object()
        md = obj["metadata"]
        refs = list(md.get("ownerReferences") or [])
        verdicts = [self._owner_exists(ref, entry.namespace) for ref in refs]
        if all(v is not False for v in verdicts):
            return
        kept = [ref for ref, v in zip(refs, verdicts, strict=True) if v is not False]
        try:
            if kept:
                md["ownerReferences"] = kept
                ctx.api.update(r, entry.namespace or None, entry.name, obj)
                return
            if md.get("deletionTimestamp"):
                return
            finalizers = md.get("finalizers") or []
            policy = (
                "Orphan"
                if "orphan" in finalizers
                else "Foreground"
                if "foregroundDeletion" in finalizers
                else "Background"
            )
            logger.debug("garbage-collecting %s %s/%s: its owners are gone", gr[1], *key)
            ctx.api.delete(
                r,
                entry.namespace or None,
                entry.name,
                {"propagationPolicy": policy, "preconditions": {"uid": entry.uid}},
            )
        except apierrors.ApiError as exc:  # a conflicting write makes its own event, and a new look
            logger.debug("%s %s/%s not collected: %s", gr[1], *key, exc)

    def sweep(self) -> list[tuple[tuple[str, str], kit.Key]]:
        """Every object with owners (a relist after a restart)."""
        found: set[tuple[tuple[str, str], kit.Key]] = set()
        for uid in self.ctx.store.owners():
            found.update(self.ctx.store.dependents(uid))
        return sorted(found)


class EventTTL:
    """Deletes each Event an hour after its last write."""

    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx
        self._due: dict[kit.Key, tuple[int, float]] = {}  # key -> (resourceVersion written, expiry)

    def reset(self) -> None:
        self._due.clear()

    def written(self, entry: store.Entry, *, at: float | None = None) -> None:
        """Note a write of an Event (at ``at``, default now) and look again when it expires."""
        when = (self.ctx.now() if at is None else at) + EVENT_TTL
        key = (entry.namespace, entry.name)
        self._due[key] = (entry.rv, when)
        self.ctx.later("events", key, when)

    def relisted(self, entry: store.Entry) -> None:
        event = entry.object()
        stamps = [
            event.get("lastTimestamp"),
            event.get("eventTime"),
            (event.get("series") or {}).get("lastObservedTime"),
            event["metadata"].get("creationTimestamp"),
        ]
        times = [t for t in (kit.epoch(str(s)) for s in stamps if s) if t is not None]
        self.written(entry, at=max(times) if times else None)

    def forget(self, key: kit.Key) -> None:
        self._due.pop(key, None)

    def expire(self, key: kit.Key) -> None:
        ctx = self.ctx
        due = self._due.get(key)
        entry = ctx.store.get(("", "events"), *key)
        if entry is None:
            self._due.pop(key, None)
            return
        if due is None or due[0] != entry.rv or ctx.now() < due[1]:
            return  # written again since: that write set its own expiry
        self._due.pop(key, None)
        ctx.delete(ctx.resource("", "events"), key[0], key[1], entry.uid)
