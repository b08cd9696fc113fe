"""The controller manager: routes the store's events to the controllers that care, and runs them.

Like kube-controller-manager's informers and work queues, but on one thread: :meth:`Manager.handle`
turns each store event into keys marked for a look (a pod's event marks the ReplicaSet,
DaemonSet or StatefulSet that controls it; a ReplicaSet's marks its Deployment; a node's marks
every DaemonSet), and :meth:`Manager.reconcile` gives each marked key one sync. The driver (the
kubelet loop) calls ``handle`` for every event, ``reconcile`` after them, and ``relist`` after a
restart or a compacted history; timers set by the controllers run on the virtual clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Protocol

from shared.sim.apiserver import api as api_mod
from shared.sim.apiserver import apierrors, readviews, scheduler, store, vclock
from shared.sim.apiserver.controllers import (
    daemonsets,
    deployments,
    garbage,
    heartbeats,
    kit,
    recorder,
    replicasets,
    statefulsets,
)

logger = logging.getLogger(__name__)

_WORKLOADS: dict[tuple[str, str], str] = {
    ("apps", "deployments"): "deployments",
    ("apps", "replicasets"): "replicasets",
    ("apps", "daemonsets"): "daemonsets",
    ("apps", "statefulsets"): "statefulsets",
}
_ORDER = ("gc", "deployments", "replicasets", "daemonsets", "statefulsets", "nodes", "events")


class Reconciler(Protocol):
    """An operator's controller (JobSet, TrainJob, MPIJob …), registered with :meth:`Manager.register`."""

    def reconcile(self, key: kit.Key) -> None: ...

    def reset(self) -> None: ...


class Manager:
    def __init__(
        self,
        *,
        api: api_mod.Api,
        clock: vclock.VirtualClock,
        nodes: Callable[[], Mapping[str, scheduler.NodeView]],
        static_pods: set[kit.Key],
        static_workloads: set[tuple[str, str, str]],
        node_down: Callable[[str], bool],
    ) -> None:
        self.recorder = recorder.Recorder(api, clock)
        self.ctx = kit.Context(
            api=api,
            clock=clock,
            nodes=nodes,
            requeue=self.requeue,
            record=self.recorder.event,
            static_pods=static_pods,
            static_workloads=static_workloads,
        )
        self.deployments = deployments.DeploymentController(self.ctx)
        self.replicasets = replicasets.ReplicaSetController(self.ctx)
        self.daemonsets = daemonsets.DaemonSetController(self.ctx)
        self.statefulsets = statefulsets.StatefulSetController(self.ctx)
        self.heartbeats = heartbeats.Heartbeats(self.ctx, is_down=node_down)
        self.dangling = garbage.Dangling(self.ctx)
        self.ttl = garbage.EventTTL(self.ctx)
        self._dirty: dict[str, set[kit.Key]] = {name: set() for name in _ORDER}
        self._gc: set[tuple[tuple[str, str], kit.Key]] = set()
        self._owners: dict[str, tuple[str, kit.Key]] = {}  # workload uid -> (plural, key)
        self._daemonsets: set[kit.Key] = set()
        self._kinds: dict[tuple[str, str], str] = {}  # an operator's group/resource -> its controller's name
        self._reconcilers: dict[str, Reconciler] = {}

    def register(self, name: str, gr: tuple[str, str], reconciler: Reconciler) -> None:
        """Run ``reconciler`` for each object of ``gr`` that changes, and again whenever one of the
        objects it controls (by ownerReference) changes; after the built-in controllers, in
        registration order."""
        self._kinds[gr] = name
        self._reconcilers[name] = reconciler
        self._dirty.setdefault(name, set())

    def register_views(self, views: readviews.Views) -> None:
        node_view, lease_view = self.heartbeats.views()
        views.register("", "nodes", node_view)
        views.register("coordination.k8s.io", "leases", lease_view)

    def reset(self) -> None:
        for keys in self._dirty.values():
            keys.clear()
        self._gc.clear()
        self._owners.clear()
        self._daemonsets.clear()
        self.ctx.reset()
        self.recorder.reset()
        self.daemonsets.reset()
        self.heartbeats.reset()
        self.ttl.reset()
        for reconciler in self._reconcilers.values():
            reconciler.reset()

    def requeue(self, controller: str, key: kit.Key) -> None:
        self._dirty.setdefault(controller, set()).add(key)

    # -------------------------------------------------------------- events in
    def handle(self, gr: tuple[str, str], kind: str, entry: store.Entry, previous: store.Entry | None) -> None:
        key = (entry.namespace, entry.name)
        plural = _WORKLOADS.get(gr) or self._kinds.get(gr)
        if plural is not None:
            self._workload_event(plural, kind, entry)
        elif gr == ("", "nodes"):
            self._dirty["daemonsets"].update(self._daemonsets)
            self._node_event(kind, entry)
        elif gr == ("", "events"):
            self._ttl_event(kind, entry)
        if gr == ("", "pods") and kind == "DELETED":
            self.ctx.forget_pod(key)
        for uid in entry.owners:  # a dependent changed: its controller looks again
            owner = self._owners.get(uid)
            if owner is not None:
                self._dirty[owner[0]].add(owner[1])
        if kind != "DELETED" and entry.owners and (previous is None or previous.owners != entry.owners):
            self._gc.add((gr, key))

    def _workload_event(self, plural: str, kind: str, entry: store.Entry) -> None:
        """A workload changed: its controller looks at it, and its dependents' events find it."""
        key = (entry.namespace, entry.name)
        if kind == "DELETED":
            self._owners.pop(entry.uid, None)
            self._daemonsets.discard(key)
            return
        self._owners[entry.uid] = (plural, key)
        if plural == "daemonsets":
            self._daemonsets.add(key)
        self._dirty[plural].add(key)

    def _ttl_event(self, kind: str, entry: store.Entry) -> None:
        """An Event written or gone: the TTL controller counts from its last write."""
        if kind == "DELETED":
            self.ttl.forget((entry.namespace, entry.name))
        else:
            self.ttl.written(entry)

    def _node_event(self, kind: str, entry: store.Entry) -> None:
        hb = self.heartbeats
        if kind == "DELETED":
            hb.down.pop(entry.name, None)
            return
        view = self.ctx.nodes().get(entry.name)
        unreachable = view is not None and any(t.get("key") == heartbeats.UNREACHABLE for t in view.taints)
        if entry.name in hb.down or unreachable:
            self._dirty["nodes"].add(("", entry.name))

    def relist(self) -> None:
        """Look at everything again (after a restart or a compacted history)."""
        s = self.ctx.store
        for gr, plural in (*_WORKLOADS.items(), *self._kinds.items()):
            for entry in list(s.scan(gr, None)):
                self._owners[entry.uid] = (plural, (entry.namespace, entry.name))
                self._dirty[plural].add((entry.namespace, entry.name))
                if plural == "daemonsets":
                    self._daemonsets.add((entry.namespace, entry.name))
        for entry in list(s.scan(("", "events"), None)):
            self.ttl.relisted(entry)
        for entry in list(s.scan(("", "nodes"), None)):
            self._node_event("ADDED", entry)
        self._gc.update(self.dangling.sweep())

    # -------------------------------------------------------------- work
    def pending(self) -> bool:
        return bool(self._gc) or any(self._dirty.values())

    def reconcile(self) -> None:
        """One sync for every key marked so far (keys marked meanwhile wait for the next pass)."""
        gc, self._gc = self._gc, set()
        for gr, key in sorted(gc):
            self._run("gc", gr, key)
        for name in (*_ORDER[1:], *self._reconcilers):
            keys, self._dirty[name] = self._dirty[name], set()
            for key in sorted(keys):
                self._run(name, None, key)

    def _sync(self, name: str, key: kit.Key) -> None:
        if name == "deployments":
            self.deployments.reconcile(key)
        elif name == "replicasets":
            self.replicasets.reconcile(key)
        elif name == "daemonsets":
            self.daemonsets.reconcile(key)
        elif name == "statefulsets":
            self.statefulsets.reconcile(key)
        elif name == "nodes":
            self.heartbeats.check(key[1])
        elif name == "events":
            self.ttl.expire(key)
        elif name in self._reconcilers:
            self._reconcilers[name].reconcile(key)

    def _run(self, name: str, gr: tuple[str, str] | None, key: kit.Key) -> None:
        try:
            if gr is not None:
                self.dangling.check(gr, key)
            else:
                self._sync(name, key)
        except apierrors.ApiError as exc:
            logger.debug("%s %s/%s: %s", name, *key, exc)
