"""Deletion as the control plane performs it: finalizers, owner cascades, namespace teardown.

A real cluster spreads this over the API server (deletionTimestamp, finalizers), the garbage
collector (ownerReferences) and the namespace controller. The emulator does it synchronously
inside the delete request, so a test sees the end state as soon as the call returns, while
objects that carry finalizers still wait, with a deletionTimestamp, for their owner to release them.

Propagation policies (``kubernetes:pkg/controller/garbagecollector``): ``Background`` removes the
owner, then its dependents; ``Foreground`` deletes the dependents first and keeps the owner —
terminating, with the ``foregroundDeletion`` finalizer — until every dependent whose reference
has ``blockOwnerDeletion`` is gone (one held by a finalizer holds the owner too); ``Orphan``
strips the owner's reference from the dependents at once, even while other finalizers hold the
owner. An object that already carries the ``orphan`` or ``foregroundDeletion`` finalizer is
deleted with that policy when none is given. Dependents whose owners never existed are the
collector's background sweep (:mod:`shared.sim.apiserver.controllers.garbage`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from shared.sim.apiserver import resources, store

logger = logging.getLogger(__name__)

ORPHAN = "Orphan"
FOREGROUND = "Foreground"
BACKGROUND = "Background"
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
_NAMESPACES = ("", "namespaces")
_CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


class Collector:
    """Removes objects and everything that depends on them. Call with the store lock held."""

    def __init__(self, *, objects: store.Store, table: resources.ResourceTable, now: Callable[[], str]) -> None:
        self.store = objects
        self.table = table
        self.now = now

    def delete(self, resource: resources.Resource, obj: dict[str, Any], *, policy: str | None) -> dict[str, Any]:
        """Delete ``obj`` now, or mark it terminating if finalizers hold it; returns its last state."""
        md = obj["metadata"]
        if resource.group_resource == _NAMESPACES:
            return self._terminate_namespace(resource, obj)
        uid = md.get("uid", "")
        finalizers = list(md.get("finalizers") or [])
        if policy is None and ORPHAN_FINALIZER in finalizers:
            policy = ORPHAN
        elif policy is None and FOREGROUND_FINALIZER in finalizers:
            policy = FOREGROUND
        if policy == ORPHAN:
            self._cascade(uid, ORPHAN)
            finalizers = [f for f in finalizers if f != ORPHAN_FINALIZER]
        elif policy == FOREGROUND:
            self._cascade(uid, FOREGROUND)
            finalizers = [f for f in finalizers if f != FOREGROUND_FINALIZER]
            if self._blocking(uid):
                finalizers.append(FOREGROUND_FINALIZER)
        if not finalizers:
            md.pop("finalizers", None)
            return self.release(resource, obj, policy=BACKGROUND if policy == FOREGROUND else policy)
        return self._terminating(resource, obj, finalizers)

    def _terminating(self, resource: resources.Resource, obj: dict[str, Any], finalizers: list[str]) -> dict[str, Any]:
        """Keep ``obj`` with a deletionTimestamp until its ``finalizers`` are gone."""
        md = obj["metadata"]
        changed = md.get("finalizers") != finalizers
        md["finalizers"] = finalizers
        if not md.get("deletionTimestamp"):
            md["deletionTimestamp"] = self.now()
            md["deletionGracePeriodSeconds"] = 0
            if resource.generation:
                md["generation"] = int(md.get("generation", 1)) + 1
            changed = True
        if changed:
            self.store.put(resource, obj)
        return obj

    def _blocking(self, uid: str) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        """Dependents still present whose reference to ``uid`` has blockOwnerDeletion."""
        found = []
        for gr, key in self.store.dependents(uid):
            entry = self.store.get(gr, *key)
            if entry is None:
                continue
            refs = entry.object()["metadata"].get("ownerReferences") or []
            if any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in refs):
                found.append((gr, key))
        return found

    def _owner_released(self, ref: dict[str, Any], namespace: str) -> None:
        """A dependent is gone: finish its owner's foreground deletion if nothing blocks it now."""
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        owner_r = self.table.by_kind(group, str(ref.get("kind", "")))
        if owner_r is None:
            return
        entry = self.store.get(owner_r.group_resource, namespace if owner_r.namespaced else "", str(ref.get("name")))
        if entry is None or entry.uid != ref.get("uid"):
            return
        owner = entry.object()
        finalizers = list(owner["metadata"].get("finalizers") or [])
        if FOREGROUND_FINALIZER not in finalizers or self._blocking(entry.uid):
            return
        finalizers.remove(FOREGROUND_FINALIZER)
        if finalizers:
            self._terminating(owner_r, owner, finalizers)
        else:
            owner["metadata"].pop("finalizers", None)
            self.release(owner_r, owner, policy=BACKGROUND)

    def release(
        self, resource: resources.Resource, obj: dict[str, Any], *, policy: str | None = None
    ) -> dict[str, Any]:
        """Remove an object whose finalizers are all gone, then collect what hung off it."""
        md = obj["metadata"]
        if resource.group_resource == _CRDS:
            self._drop_custom_resources(obj)
        self.store.remove(resource, obj)
        self._cascade(md.get("uid", ""), policy or BACKGROUND)
        for ref in md.get("ownerReferences") or []:
            if ref.get("blockOwnerDeletion"):
                self._owner_released(ref, md.get("namespace", ""))
        if resource.namespaced:
            self._finish_namespace(md.get("namespace", ""))
        return obj

    def _cascade(self, uid: str, policy: str) -> None:
        for gr, (namespace, name) in self.store.dependents(uid):
            entry = self.store.get(gr, namespace, name)
            dependent_resource = self.table.by_group_resource(*gr)
            if entry is None or dependent_resource is None:
                continue
            dependent = entry.object()
            refs = dependent["metadata"].get("ownerReferences") or []
            remaining = [r for r in refs if r.get("uid") != uid]
            alive = [r for r in remaining if self._exists(r, namespace)]
            if policy == ORPHAN or alive:
                dependent["metadata"]["ownerReferences"] = alive
                if not alive:
                    dependent["metadata"].pop("ownerReferences")
                self.store.put(dependent_resource, dependent)
            elif not dependent["metadata"].get("deletionTimestamp"):
                logger.debug("garbage-collecting %s %s/%s", gr[1], namespace, name)
                # In a foreground deletion, a dependent with dependents of its own is deleted in
                # the foreground too, so the whole chain blocks the owner.
                chained = policy == FOREGROUND and self.store.dependents(entry.uid)
                self.delete(dependent_resource, dependent, policy=FOREGROUND if chained else BACKGROUND)

    def _exists(self, ref: dict[str, Any], namespace: str) -> bool:
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        owner = self.table.by_kind(group, str(ref.get("kind", "")))
        if owner is None:
            return False
        entry = self.store.get(owner.group_resource, namespace if owner.namespaced else "", str(ref.get("name")))
        return entry is not None and entry.uid == ref.get("uid")

    def _drop_custom_resources(self, crd: dict[str, Any]) -> None:
        spec = crd.get("spec") or {}
        gr = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
        resource = self.table.by_group_resource(*gr)
        if resource is not None:
            for entry in list(self.store.scan(gr, None)):
                self.store.remove(resource, entry.object())
        self.table.unregister_crd(crd["metadata"]["name"])

    # ------------------------------------------------------------ namespaces
    def _terminate_namespace(self, resource: resources.Resource, ns: dict[str, Any]) -> dict[str, Any]:
        md = ns["metadata"]
        name = md["name"]
        if not md.get("deletionTimestamp"):
            md["deletionTimestamp"] = self.now()
            ns.setdefault("status", {})["phase"] = "Terminating"
            self.store.put(resource, ns)
        for gr in self.store.group_resources():
            row = self.table.by_group_resource(*gr)
            if row is None or not row.namespaced:
                continue
            for entry in list(self.store.scan(gr, name)):
                current = self.store.get(gr, entry.namespace, entry.name)
                if current is not None and not current.object()["metadata"].get("deletionTimestamp"):
                    self.delete(row, current.object(), policy=BACKGROUND)
        self._finish_namespace(name)
        remaining = self.store.get(_NAMESPACES, "", name)
        return remaining.object() if remaining else ns

    def _finish_namespace(self, name: str) -> None:
        """Remove a terminating namespace once nothing is left in it."""
        entry = self.store.get(_NAMESPACES, "", name)
        if entry is None:
            return
        ns = entry.object()
        if not ns["metadata"].get("deletionTimestamp") or ns["metadata"].get("finalizers"):
            return
        for gr in self.store.group_resources():
            row = self.table.by_group_resource(*gr)
            if row is not None and row.namespaced and next(self.store.scan(gr, name), None) is not None:
                return
        ns_resource = self.table.by_group_resource(*_NAMESPACES)
        assert ns_resource is not None
        ns.setdefault("spec", {})["finalizers"] = []
        self.store.remove(ns_resource, ns)
