"""What the workload controllers share: their context, pod summaries and small rules.

The context (:class:`Context`) is the cluster a controller works on and the services the manager
gives it (requeues, timers, Events, the pods it owns); :class:`PodInfo` is what a controller
reads of a pod; the rest are the small rules of ``kubernetes:pkg/controller`` several controllers
apply (int-or-percent scaling, controller references, conditions). The names a controller hashes
are in :mod:`.hashes`.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from shared.sim.apiserver import api as api_mod
from shared.sim.apiserver import apierrors, resources, scheduler, vclock
from shared.sim.apiserver.controllers import hashes
from shared.sim.apiserver.store import Entry, Store

logger = logging.getLogger(__name__)

Key = tuple[str, str]


# ------------------------------------------------------------------ time
def epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def rfc3339(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ------------------------------------------------------------------ int-or-percent
def scaled(value: Any, total: int, *, round_up: bool, default: int | str) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: an int, or a percentage of ``total``."""
    if value is None:
        value = default
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        try:
            percent = int(text[:-1])
        except ValueError:
            return 0
        exact = percent * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    try:
        return int(text)
    except ValueError:
        return 0


# ------------------------------------------------------------------ objects
def controller_ref(owner: Mapping[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """``metav1.NewControllerRef``: controller and blockOwnerDeletion set."""
    md = owner["metadata"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def object_ref(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The ObjectReference an Event's involvedObject carries."""
    md = obj["metadata"]
    ref = {
        "kind": obj.get("kind", ""),
        "name": md.get("name", ""),
        "uid": md.get("uid", ""),
        "apiVersion": obj.get("apiVersion", ""),
        "resourceVersion": md.get("resourceVersion", ""),
    }
    if md.get("namespace"):
        ref["namespace"] = md["namespace"]
    return ref


def without_zeros(status: Mapping[str, Any], *, keep: Iterable[str] = ()) -> dict[str, Any]:
    """Drop the ``omitempty`` fields that are zero, as the Go types serialise them."""
    kept = set(keep)
    return {k: v for k, v in status.items() if k in kept or v not in (0, None, "", [], {})}


def equal_ignoring(a: Mapping[str, Any], b: Mapping[str, Any], label: str) -> bool:
    """Templates equal once ``label`` is dropped from both (``EqualIgnoreHash``)."""

    def strip(template: Mapping[str, Any]) -> bytes:
        t = copy.deepcopy(dict(template))
        labels = (t.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop(label, None)
            if not labels:
                t["metadata"].pop("labels")
        if t.get("metadata") == {}:
            t.pop("metadata")
        return hashes.canonical(t)

    return strip(a) == strip(b)


def set_condition(conditions: list[dict[str, Any]], new: dict[str, Any]) -> list[dict[str, Any]]:
    """``SetDeploymentCondition``: unchanged when status and reason match; the transition time kept
    when only the reason changes; the condition moved to the end otherwise."""
    current = next((c for c in conditions if c.get("type") == new["type"]), None)
    if current is not None and current.get("status") == new["status"] and current.get("reason") == new["reason"]:
        return conditions
    if current is not None and current.get("status") == new["status"]:
        new = {**new, "lastTransitionTime": current.get("lastTransitionTime", new.get("lastTransitionTime"))}
    return [c for c in conditions if c.get("type") != new["type"]] + [new]


def condition_of(obj: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return None


# ------------------------------------------------------------------ pods
@dataclass(frozen=True)
class PodInfo:
    """What a controller reads of one of its pods."""

    namespace: str
    name: str
    uid: str
    rv: int
    labels: Mapping[str, str]
    node: str
    """``spec.nodeName``, or the node a DaemonSet pinned the pod to by affinity (``GetTargetNodeName``)."""
    bound: bool
    phase: str
    ready: bool
    ready_since: float | None
    deleting: bool
    created: float
    controller_uid: str

    @property
    def key(self) -> Key:
        return (self.namespace, self.name)

    @property
    def running_and_ready(self) -> bool:
        return self.phase == "Running" and self.ready and not self.deleting

    @property
    def active(self) -> bool:
        """``controller.IsPodActive``: not finished and not being deleted."""
        return self.phase not in ("Succeeded", "Failed") and not self.deleting

    def available(self, min_ready: int, now: float) -> bool:
        """``podutil.IsPodAvailable``: Ready, and for ``min_ready`` seconds (the real check is strict;
        at the exact moment a timer fires here it counts, so a paused clock need not overshoot)."""
        if not self.ready:
            return False
        if min_ready <= 0:
            return True
        return self.ready_since is not None and self.ready_since + min_ready <= now

    def available_at(self, min_ready: int) -> float | None:
        """When a ready pod becomes available (None: not ready)."""
        if not self.ready or self.ready_since is None:
            return None
        return self.ready_since + min_ready


def pod_info(entry: Entry) -> PodInfo:
    pod = entry.object()
    md, status = pod["metadata"], pod.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    is_ready = ready is not None and ready.get("status") == "True"
    owner = controller_of(pod)
    spec = pod.get("spec") or {}
    node = str(spec.get("nodeName") or "")
    return PodInfo(
        namespace=entry.namespace,
        name=entry.name,
        uid=entry.uid,
        rv=entry.rv,
        labels=dict(md.get("labels") or {}),
        node=node or _pinned_node(spec),
        bound=bool(node),
        phase=str(status.get("phase") or "Pending"),
        ready=is_ready,
        ready_since=epoch(ready.get("lastTransitionTime")) if is_ready and ready is not None else None,
        deleting=bool(md.get("deletionTimestamp")),
        created=epoch(md.get("creationTimestamp")) or 0.0,
        controller_uid=str((owner or {}).get("uid") or ""),
    )


def _seeded_suffix(rest: str) -> bool:
    return rest.isdigit() or (len(rest) == 5 and all(c in "0123456789abcdef" for c in rest))


def _pinned_node(spec: Mapping[str, Any]) -> str:
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for expr in term.get("matchFields") or []:
            if (
                expr.get("key") == "metadata.name"
                and expr.get("operator") == "In"
                and len(expr.get("values") or []) == 1
            ):
                return str(expr["values"][0])
    return ""


def pod_from_template(
    template: Mapping[str, Any], *, namespace: str, owner: dict[str, Any], generate_name: str = "", name: str = ""
) -> dict[str, Any]:
    """``controller.GetPodFromTemplate``: the template's labels, annotations, finalizers and spec."""
    meta = dict(template.get("metadata") or {})
    md: dict[str, Any] = {"namespace": namespace, "ownerReferences": [owner]}
    if name:
        md["name"] = name
    else:
        md["generateName"] = generate_name
    for key in ("labels", "annotations", "finalizers"):
        if meta.get(key):
            md[key] = copy.deepcopy(meta[key])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": copy.deepcopy(template.get("spec") or {})}


# ------------------------------------------------------------------ context
@dataclass
class Context:
    """The cluster a controller works on, and the few services the manager gives it."""

    api: api_mod.Api
    clock: vclock.VirtualClock
    nodes: Callable[[], Mapping[str, scheduler.NodeView]]
    """The current nodes, as the kubelet's informer holds them."""
    requeue: Callable[[str, Key], None]
    """Mark (controller, key) for another look on the next pass."""
    record: Callable[..., None]
    """``record(obj, type=, reason=, message=, component=)``: an Event about ``obj``."""
    static_pods: set[Key] = field(default_factory=set)
    """Pods the simulator installed as-is (``seed``), whose status the kubelet leaves alone; an
    installer adds a pod here before creating it."""
    static_workloads: set[tuple[str, str, str]] = field(default_factory=set)
    """(plural, namespace, name) of workloads installed as-is: no controller touches them."""
    _pods: dict[Key, PodInfo] = field(default_factory=dict)
    _timers: set[tuple[str, Key, float]] = field(default_factory=set)

    @property
    def store(self) -> Store:
        return self.api.store

    def live(self, gr: tuple[str, str], key: Key) -> tuple[resources.Resource, Entry] | None:
        """The resource and stored entry a reconcile works on; None when the kind is not served (its
        CRD is not installed), the object is gone, or it is being deleted (garbage collection owns it)."""
        r = self.api.table.by_group_resource(*gr)
        entry = self.store.get(gr, *key)
        if r is None or entry is None or entry.object()["metadata"].get("deletionTimestamp"):
            return None
        return r, entry

    def resource(self, group: str, plural: str) -> resources.Resource:
        found = self.api.table.by_group_resource(group, plural)
        assert found is not None, (group, plural)
        return found

    def now(self) -> float:
        return self.clock.time()

    def later(self, controller: str, key: Key, when: float) -> None:
        """Look at ``key`` again at virtual time ``when`` (once per controller, key and moment)."""
        mark = (controller, key, round(when, 3))
        if mark in self._timers:
            return
        self._timers.add(mark)

        def again() -> None:
            self._timers.discard(mark)
            self.requeue(controller, key)

        self.clock.call_at(when, again)

    def reset(self) -> None:
        self._pods.clear()
        self._timers.clear()

    def installed(self, plural: str, entry: Entry) -> bool:
        """True for a workload installed as-is, which its controller must leave alone.

        Known either because the installer said so (``static_workloads``) or because a static
        pod is (or is about to be) one of its pods — in its namespace, named as ``seed`` names
        them, ``<workload>-<5 hex digits>`` or ``<workload>-<ordinal>``; in the second case
        whatever a controller made for it before (ReplicaSets, pods, revisions) is deleted.
        """
        mark = (plural, entry.namespace, entry.name)
        if mark in self.static_workloads:
            return True
        prefix = f"{entry.name}-"
        if not any(
            ns == entry.namespace and name.startswith(prefix) and _seeded_suffix(name[len(prefix) :])
            for ns, name in list(self.static_pods)
        ):
            return False
        self.static_workloads.add(mark)
        for gr, (ns, name) in self.store.dependents(entry.uid):
            r = self.api.table.by_group_resource(*gr)
            if r is not None and not (gr == ("", "pods") and (ns, name) in self.static_pods):
                self.delete(r, ns, name)
        return True

    def forget_pod(self, key: Key) -> None:
        self._pods.pop(key, None)

    def pod(self, entry: Entry) -> PodInfo:
        cached = self._pods.get((entry.namespace, entry.name))
        if cached is not None and cached.rv == entry.rv:
            return cached
        info = pod_info(entry)
        self._pods[(entry.namespace, entry.name)] = info
        return info

    def owned(self, uid: str, gr: tuple[str, str]) -> list[Entry]:
        """Current objects of ``gr`` that list ``uid`` among their owners."""
        found = []
        for dep_gr, (ns, name) in self.store.dependents(uid):
            if dep_gr == gr:
                entry = self.store.get(gr, ns, name)
                if entry is not None:
                    found.append(entry)
        return found

    def pods_of(self, uid: str) -> list[PodInfo]:
        """Pods whose controller is ``uid`` (``ControllerRefManager`` without adoption)."""
        return [p for p in (self.pod(e) for e in self.owned(uid, ("", "pods"))) if p.controller_uid == uid]

    # -------------------------------------------------------------- writes
    def create(self, r: resources.Resource, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.api.create(r, namespace, body)

    def delete(self, r: resources.Resource, namespace: str, name: str, uid: str | None = None) -> bool:
        options: dict[str, Any] = {"propagationPolicy": "Background"}
        if uid:
            options["preconditions"] = {"uid": uid}
        try:
            self.api.delete(r, namespace, name, options)
        except apierrors.ApiError as exc:
            logger.debug("%s %s/%s not deleted: %s", r.plural, namespace, name, exc)
            return False
        return True

    def write_status(self, r: resources.Resource, obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any] | None:
        """``UpdateStatus`` with the resourceVersion read (a 409 means someone wrote first: look again)."""
        md = obj["metadata"]
        body = {**obj, "status": status}
        try:
            return self.api.update(r, md.get("namespace"), md["name"], body, sub="status")
        except apierrors.ApiError as exc:
            logger.debug("%s %s/%s status not written: %s", r.plural, md.get("namespace"), md["name"], exc)
            if exc.code == 409:
                self.requeue(r.plural, (md.get("namespace", ""), md["name"]))
            return None

    def update(self, r: resources.Resource, obj: dict[str, Any]) -> dict[str, Any] | None:
        md = obj["metadata"]
        try:
            return self.api.update(r, md.get("namespace"), md["name"], obj)
        except apierrors.ApiError as exc:
            logger.debug("%s %s/%s not updated: %s", r.plural, md.get("namespace"), md["name"], exc)
            if exc.code == 409:
                self.requeue(r.plural, (md.get("namespace", ""), md["name"]))
            return None
