"""Node heartbeats, computed when read, and the node lifecycle controller that watches them.

A real kubelet renews its Lease (``kube-node-lease/<node>``, ``leaseDurationSeconds`` 40) every
10 s — 0.25 of the duration, ``nodeLeaseRenewIntervalFraction`` — and re-posts its node status,
moving ``lastHeartbeatTime`` of the conditions it owns (Ready, MemoryPressure, DiskPressure,
PIDPressure), every ``nodeStatusReportFrequency`` (5 min) when nothing changed. Writing those
would cost 1,000 writes a second for 10,000 nodes at speed 60, so here they are computed on read
instead: a read (GET, LIST, the object in a watch event) shows the stored time advanced by
whole intervals up to now — or up to the moment the node went down. Nothing is written, so
the resourceVersion a read carries is the stored one, and a client that updates an object it
read gets no spurious 409; a renewal makes no watch event (a real one would). A client that
writes these fields moves the base the intervals count from. How a list is rendered from the
stored bytes, and kept while it stays right, is :mod:`.heartbeatbytes`.

The node lifecycle controller (``kubernetes:pkg/controller/nodelifecycle``): once a node's
heartbeats stop (its kubelet is down — a reboot, or :meth:`Heartbeats.stop`) for the grace
period, it writes what the real one does: the kubelet's conditions ``Unknown`` with reason
``NodeStatusUnknown`` and message ``Kubelet stopped posting node status.``, and the taints
``node.kubernetes.io/unreachable`` NoSchedule and NoExecute in place of ``not-ready`` (an Event
``NodeNotReady`` when it was Ready). When the kubelet is back, it posts Ready again, its Lease
renews, and the unreachable taints go. Evicting pods after the taints' 300 s tolerations is not
modelled.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from shared.sim.apiserver import apierrors, store
from shared.sim.apiserver.controllers import heartbeatbytes, kit

logger = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-node-lease"
RENEW_INTERVAL = 10.0
"""Seconds between Lease renewals: 0.25 × leaseDurationSeconds (40)."""
REPORT_INTERVAL = 300.0
"""Seconds between status posts of a quiet node (``nodeStatusReportFrequency``)."""
GRACE_PERIOD = 50.0
"""``--node-monitor-grace-period``: kube-controller-manager's default since 1.32 (40 s before),
raised to exceed the kubelet's 40 s lease duration so that one late renewal does not flip a
node to Unknown."""
KUBELET_CONDITIONS = {
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
}
"""The conditions a kubelet owns, with what it posts when healthy."""
UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
UNKNOWN_REASON = "NodeStatusUnknown"
UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
_NODES = ("", "nodes")


@lru_cache(maxsize=4096)
def micro_time(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@lru_cache(maxsize=4096)
def seconds_time(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Heartbeats:
    """The read views of nodes and node Leases, and the node lifecycle controller."""

    def __init__(self, ctx: kit.Context, *, is_down: Callable[[str], bool]) -> None:
        self.ctx = ctx
        self.is_down = is_down
        self.enabled = False
        """Heartbeats run with the kubelets; with them off, nodes read as a test wrote them."""
        self.down: dict[str, float] = {}
        """Node -> the virtual time its kubelet stopped posting."""
        self._lease_memos: dict[str, heartbeatbytes.Memo] = {}
        self._node_memos: dict[str, heartbeatbytes.Memo] = {}
        self._keys_seen: list[tuple[str, str]] | None = None
        self._names: set[str] = set()

    def reset(self) -> None:
        self.down.clear()
        self._lease_memos.clear()
        self._node_memos.clear()

    def _until(self, node: str) -> float:
        now = self.ctx.now()
        return min(now, self.down.get(node, now))

    # -------------------------------------------------------------- read views
    def lease_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        md, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        if not self._beats_for_lease(md.get("namespace", ""), md.get("name", "")) or not spec.get("renewTime"):
            return obj
        base = heartbeatbytes.parse(str(spec["renewTime"]))
        if base is not None:
            spec["renewTime"] = micro_time(heartbeatbytes.advanced(base, self._until(md["name"]), RENEW_INTERVAL))
        return obj

    def lease_raw(self, entry: store.Entry) -> bytes:
        return self.lease_raws([entry])[0]

    def lease_raws(self, entries: list[store.Entry]) -> list[bytes]:
        """The node Leases as a list sends them; each rendering is kept for as long as it is
        right (until the next renewal or write), so a list costs a lookup and a comparison per Lease."""
        if not self.enabled:
            return [e.raw for e in entries]
        now, down, memos, nodes = self.ctx.now(), self.down, self._lease_memos, self._node_names()
        out = []
        for e in entries:
            if e.namespace != LEASE_NAMESPACE or e.name not in nodes:
                out.append(e.raw)
                continue
            until = min(now, down[e.name]) if e.name in down else now
            memo = memos.get(e.name)
            if memo is None or memo.rv != e.rv or not memo.lo <= until < memo.hi:
                memo = heartbeatbytes.render(
                    e,
                    [heartbeatbytes.lease_slot(e.raw)] if memo is None or memo.rv != e.rv else memo.slots,
                    until,
                    RENEW_INTERVAL,
                    micro_time,
                )
                memos[e.name] = memo
            out.append(memo.text)
        return out

    def _node_names(self) -> set[str]:
        """The nodes' names, rebuilt only when a node was added or removed."""
        keys = self.ctx.store.keys(_NODES)
        if keys is not self._keys_seen:
            self._keys_seen = keys
            self._names = {name for _, name in keys}
        return self._names

    def _beats_for_lease(self, namespace: str, name: str) -> bool:
        return self.enabled and namespace == LEASE_NAMESPACE and self.ctx.store.get(("", "nodes"), "", name) is not None

    def node_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        if not self.enabled:
            return obj
        until = self._until(str((obj.get("metadata") or {}).get("name", "")))
        for condition in (obj.get("status") or {}).get("conditions") or []:
            if condition.get("type") not in KUBELET_CONDITIONS or condition.get("status") == "Unknown":
                continue
            base = heartbeatbytes.parse(str(condition.get("lastHeartbeatTime") or ""))
            if base is not None:
                condition["lastHeartbeatTime"] = seconds_time(heartbeatbytes.advanced(base, until, REPORT_INTERVAL))
        return obj

    def node_raw(self, entry: store.Entry) -> bytes:
        return self.node_raws([entry])[0]

    def node_raws(self, entries: list[store.Entry]) -> list[bytes]:
        """The nodes as a list sends them, each rendering kept for as long as it is right."""
        if not self.enabled:
            return [e.raw for e in entries]
        now, down, memos = self.ctx.now(), self.down, self._node_memos
        out = []
        for e in entries:
            until = min(now, down[e.name]) if e.name in down else now
            memo = memos.get(e.name)
            if memo is None or memo.rv != e.rv or not memo.lo <= until < memo.hi:
                slots = (
                    heartbeatbytes.heartbeat_slots(e.raw, owned=KUBELET_CONDITIONS)
                    if memo is None or memo.rv != e.rv
                    else memo.slots
                )
                memo = heartbeatbytes.render(e, slots, until, REPORT_INTERVAL, seconds_time)
                memos[e.name] = memo
            out.append(memo.text)
        return out

    def views(self) -> tuple[Any, Any]:
        """(node view, lease view), for :class:`shared.sim.apiserver.readviews.Views`."""
        return (
            _View(self.node_object, self.node_raw, self.node_raws),
            _View(self.lease_object, self.lease_raw, self.lease_raws),
        )

    def last_heartbeat(self, node: dict[str, Any]) -> float | None:
        """When the node last showed life: its Lease renewal or Ready heartbeat, as a read shows them."""
        name = node["metadata"]["name"]
        times = []
        lease = self.ctx.store.get(("coordination.k8s.io", "leases"), LEASE_NAMESPACE, name)
        if lease is not None:
            renew = self.lease_object(lease.object()).get("spec", {}).get("renewTime")
            times.append(heartbeatbytes.parse(str(renew or "")))
        for condition in (self.node_object(copy.deepcopy(node)).get("status") or {}).get("conditions") or []:
            if condition.get("type") == "Ready":
                times.append(heartbeatbytes.parse(str(condition.get("lastHeartbeatTime") or "")))
        found = [t for t in times if t is not None]
        return max(found) if found else None

    # -------------------------------------------------------------- the kubelet going and coming
    def stop(self, name: str) -> None:
        """The node's kubelet stopped posting (from now): the lifecycle controller will notice."""
        if name not in self.down:
            self.down[name] = self.ctx.now()
        self.check(name)

    def check(self, name: str) -> None:
        """Level-based: mark a silent node Unknown once the grace period passed, or bring a
        node whose kubelet is back to Ready."""
        found = self.ctx.store.get(("", "nodes"), "", name)
        if found is None:
            self.down.pop(name, None)
            return
        node = found.object()
        if name in self.down and not self.is_down(name):
            self.down.pop(name)
            self._back(node)
            return
        if name not in self.down:
            if self.enabled and _shows_unreachable(node):
                self._back(node)
            return
        last = self.last_heartbeat(node)
        due = (last if last is not None else self.down[name]) + GRACE_PERIOD
        if self.ctx.now() < due:
            self.ctx.later("nodes", ("", name), due)
            return
        if not _shows_unreachable(node):
            self._unknown(node)

    def _unknown(self, node: dict[str, Any]) -> None:
        """What the node lifecycle controller writes for a node that stopped posting."""
        ctx = self.ctx
        nodes_r = ctx.resource("", "nodes")
        name = node["metadata"]["name"]
        now = ctx.api.now()
        shown = self.node_object(copy.deepcopy(node))
        was_ready = False
        conditions = []
        for condition in (shown.get("status") or {}).get("conditions") or []:
            if condition.get("type") in KUBELET_CONDITIONS and condition.get("status") != "Unknown":
                was_ready |= condition.get("type") == "Ready" and condition.get("status") == "True"
                condition = {
                    **condition,
                    "status": "Unknown",
                    "reason": UNKNOWN_REASON,
                    "message": UNKNOWN_MESSAGE,
                    "lastTransitionTime": now,
                }
            conditions.append(condition)
        taints = [
            t for t in (node.get("spec") or {}).get("taints") or [] if t.get("key") not in (NOT_READY, UNREACHABLE)
        ]
        taints += [
            {"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": now},
            {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": now},
        ]
        if self._write(nodes_r, node, taints, conditions) and was_ready:
            ctx.record(
                {**node, "metadata": {**node["metadata"], "uid": name}},
                type="Normal",
                reason="NodeNotReady",
                message=f"Node {name} status is now: NodeNotReady",
                component="node-controller",
            )

    def _back(self, node: dict[str, Any]) -> None:
        """The kubelet is back: it posts its conditions healthy and renews its Lease; the
        lifecycle controller lifts the unreachable taints."""
        ctx = self.ctx
        name = node["metadata"]["name"]
        now = ctx.api.now()
        conditions = []
        for condition in (node.get("status") or {}).get("conditions") or []:
            healthy = KUBELET_CONDITIONS.get(str(condition.get("type")))
            if healthy is not None and condition.get("reason") == UNKNOWN_REASON:
                status, reason, message = healthy
                condition = {
                    "type": condition["type"],
                    "status": status,
                    "reason": reason,
                    "message": message,
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            conditions.append(condition)
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("key") != UNREACHABLE]
        self._write(ctx.resource("", "nodes"), node, taints, conditions)
        leases = ctx.resource("coordination.k8s.io", "leases")
        lease = ctx.store.get(leases.group_resource, LEASE_NAMESPACE, name)
        if lease is not None:
            body = lease.object()
            body.setdefault("spec", {})["renewTime"] = micro_time(ctx.now())
            ctx.update(leases, body)

    def _write(
        self, nodes_r: Any, node: dict[str, Any], taints: list[dict[str, Any]], conditions: list[dict[str, Any]]
    ) -> bool:
        """The conditions (a status update, as the kubelet or the controller posts them), then the
        taints (the controller's separate tainting pass): two writes, as on a real cluster."""
        name = node["metadata"]["name"]
        spec = dict(node.get("spec") or {})
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        try:
            written = node
            status = {**(node.get("status") or {}), "conditions": conditions}
            if status != (node.get("status") or {}):
                written = self.ctx.api.update(nodes_r, None, name, {**node, "status": status}, sub="status")
            if spec != (node.get("spec") or {}):
                self.ctx.api.update(nodes_r, None, name, {**written, "spec": spec})
        except apierrors.ApiError as exc:
            logger.debug("node %s not written: %s", name, exc)
            self.ctx.requeue("nodes", ("", name))
            return False
        return True


def _shows_unreachable(node: dict[str, Any]) -> bool:
    return any(t.get("key") == UNREACHABLE for t in (node.get("spec") or {}).get("taints") or [])


class _View:
    def __init__(
        self,
        obj: Callable[[dict[str, Any]], dict[str, Any]],
        raw: Callable[[store.Entry], bytes],
        raws: Callable[[list[store.Entry]], list[bytes]],
    ) -> None:
        self.object = obj
        self.raw = raw
        self.raws = raws
