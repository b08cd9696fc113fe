"""The DaemonSet controller (``kubernetes:pkg/controller/daemon/``).

One pod per node that should run it (``NodeShouldRunDaemonPod``): the template's nodeSelector and
required node affinity match the node, and the pod — with the tolerations the controller adds
(``not-ready`` and ``unreachable`` NoExecute, ``disk-pressure``, ``memory-pressure``,
``pid-pressure``, ``unschedulable`` NoSchedule, ``network-unavailable`` for hostNetwork) —
tolerates the node's NoSchedule and NoExecute taints. A node that only gained an untolerated
NoSchedule taint keeps its pod (counted as misscheduled); an untolerated NoExecute taint, or a
node that stopped matching, loses it; a pod whose node is gone is deleted (the pod garbage
collector's part). Pods are ``<ds>-<5 chars>`` (``generateName``), not bound by the controller but
pinned to their node with required node affinity ``metadata.name In [node]`` (replacing the
template's terms) and placed by the scheduler; labels ``controller-revision-hash`` (the current
ControllerRevision's hash) and ``pod-template-generation``. Failed pods are deleted and replaced,
with a per-node backoff.

``RollingUpdate`` (default ``maxUnavailable`` 1) deletes old pods while at most ``maxUnavailable``
nodes lack an available updated pod; ``OnDelete`` replaces pods only when they are deleted.
Status as ``updateDaemonSetStatus``: ``desiredNumberScheduled``, ``currentNumberScheduled``,
``numberMisscheduled``, ``numberReady`` (always present), ``updatedNumberScheduled``,
``numberAvailable``, ``numberUnavailable``, ``observedGeneration`` (zeros of the optional ones
omitted). Events ``SuccessfulCreate`` / ``SuccessfulDelete`` / ``FailedDaemonPod`` from
``daemonset-controller``.

Not modelled: ``maxSurge`` (a surge rollout proceeds as a ``maxUnavailable`` one).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors, scheduler
from shared.sim.apiserver.controllers import hashes, history, kit

COMPONENT = "daemonset-controller"
PLURAL = "daemonsets"
HASH_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
_BACKOFF_START, _BACKOFF_MAX = 1.0, 900.0


def _toleration(key: str, effect: str) -> dict[str, str]:
    return {"key": key, "operator": "Exists", "effect": effect}


DEFAULT_TOLERATIONS = (
    _toleration("node.kubernetes.io/not-ready", "NoExecute"),
    _toleration("node.kubernetes.io/unreachable", "NoExecute"),
    _toleration("node.kubernetes.io/disk-pressure", "NoSchedule"),
    _toleration("node.kubernetes.io/memory-pressure", "NoSchedule"),
    _toleration("node.kubernetes.io/pid-pressure", "NoSchedule"),
    _toleration("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_TOLERATION = _toleration("node.kubernetes.io/network-unavailable", "NoSchedule")


def with_tolerations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``AddOrUpdateDaemonPodTolerations``: the template's tolerations plus the DaemonSet defaults."""
    found = [dict(t) for t in spec.get("tolerations") or []]
    wanted = [*DEFAULT_TOLERATIONS, *([NETWORK_TOLERATION] if spec.get("hostNetwork") else [])]
    for tol in wanted:
        if not any(t.get("key") == tol["key"] and t.get("effect") == tol["effect"] for t in found):
            found.append(dict(tol))
    return found


def should_run(template: Mapping[str, Any], node: scheduler.NodeView) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (should run a pod there, may keep a running one)."""
    spec = dict(template.get("spec") or {})
    if spec.get("nodeName") and spec["nodeName"] != node.name:
        return False, False
    pod = {"spec": {**spec, "tolerations": with_tolerations(spec)}}
    if not scheduler.matches_affinity(pod, node):
        return False, False
    tolerations = pod["spec"]["tolerations"]
    untolerated = [
        t
        for t in node.taints
        if t.get("effect") in ("NoSchedule", "NoExecute") and not scheduler.tolerated(t, tolerations)
    ]
    if untolerated:
        return False, not any(t.get("effect") == "NoExecute" for t in untolerated)
    return True, True


def template_generation(ds: Mapping[str, Any]) -> str:
    annotations = ds["metadata"].get("annotations") or {}
    return str(annotations.get(TEMPLATE_GENERATION) or ds["metadata"].get("generation") or 1)


def updated(pod: kit.PodInfo, pod_hash: str, generation: str) -> bool:
    """``IsPodUpdated``: the revision hash matches, or the (legacy) template generation does."""
    return pod.labels.get(HASH_LABEL) == pod_hash or pod.labels.get(GENERATION_LABEL) == generation


def pinned(affinity: Mapping[str, Any] | None, node: str) -> dict[str, Any]:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: required terms replaced by ``metadata.name In [node]``."""
    found = copy.deepcopy(dict(affinity or {}))
    node_affinity = found.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    }
    return found


class DaemonSetController:
    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx
        self._backoff: dict[tuple[str, str], tuple[float, float]] = {}  # (ds uid, node) -> (delay, not before)

    def reset(self) -> None:
        self._backoff.clear()

    def reconcile(self, key: kit.Key) -> None:
        ctx = self.ctx
        ds_r = ctx.resource("apps", PLURAL)
        entry = ctx.store.get(ds_r.group_resource, *key)
        if entry is None or ctx.installed(PLURAL, entry):
            return
        ds = entry.object()
        if ds["metadata"].get("deletionTimestamp"):
            return
        template = (ds.get("spec") or {}).get("template") or {}
        collisions = (ds.get("status") or {}).get("collisionCount")
        pod_hash = hashes.template_hash(template, collisions)
        labels = {**(template.get("metadata") or {}).get("labels", {}), HASH_LABEL: pod_hash}
        revs = history.ensure(
            ctx, ds, kind="DaemonSet", name_hash=pod_hash, labels=labels, annotations=ds["metadata"].get("annotations")
        )
        if revs is None:
            status = copy.deepcopy(ds.get("status") or {})
            status["collisionCount"] = int(collisions or 0) + 1
            ctx.write_status(ds_r, ds, status)
            return
        current_hash = str((revs.current["metadata"].get("labels") or {}).get(HASH_LABEL) or pod_hash)
        generation = template_generation(ds)
        nodes = ctx.nodes()
        self._manage(ds, nodes, current_hash, generation)
        strategy = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate":
            self._rolling_update(ds, nodes, current_hash, generation)
        pods = ctx.pods_of(entry.uid)
        live = {p.labels.get(HASH_LABEL, "") for p in pods if not p.deleting}
        in_use = {
            r["metadata"]["name"] for r in revs.all if (r["metadata"].get("labels") or {}).get(HASH_LABEL) in live
        }
        history.truncate(ctx, ds, revs.all, in_use, revs.current["metadata"]["name"])
        self._status(ds, nodes, pods, current_hash, generation)

    # -------------------------------------------------------------- pods
    def _by_node(self, uid: str) -> dict[str, list[kit.PodInfo]]:
        found: dict[str, list[kit.PodInfo]] = {}
        for pod in self.ctx.pods_of(uid):
            found.setdefault(pod.node, []).append(pod)
        for pods in found.values():
            pods.sort(key=lambda p: (p.phase != "Running", p.created, p.name))
        return found

    def _manage(
        self, ds: dict[str, Any], nodes: Mapping[str, scheduler.NodeView], pod_hash: str, generation: str
    ) -> None:
        ctx = self.ctx
        template = (ds.get("spec") or {}).get("template") or {}
        uid = ds["metadata"]["uid"]
        by_node = self._by_node(uid)
        create: list[str] = []
        delete: list[kit.PodInfo] = []
        now = ctx.now()
        for name, node in sorted(nodes.items()):
            run, keep = should_run(template, node)
            pods = [p for p in by_node.get(name, []) if not p.deleting]
            if run and not pods:
                create.append(name)
            elif keep:
                running = []
                for pod in pods:
                    if pod.phase == "Failed":
                        if self._backing_off(ds, name, now):
                            continue
                        ctx.record(
                            ds,
                            type="Warning",
                            reason="FailedDaemonPod",
                            message=f"Found failed daemon pod {pod.namespace}/{pod.name} on node {name}, "
                            "will try to kill it",
                            component=COMPONENT,
                        )
                        delete.append(pod)
                    elif pod.phase == "Succeeded":
                        delete.append(pod)
                    else:
                        running.append(pod)
                delete += running[1:]  # no surge: keep the oldest
            else:
                delete += pods
        for name, pods in by_node.items():  # pods whose node is gone
            if name not in nodes:
                delete += [p for p in pods if not p.deleting]
        self._delete(ds, delete)
        self._create(ds, create, pod_hash, generation)

    def _backing_off(self, ds: dict[str, Any], node: str, now: float) -> bool:
        key = (ds["metadata"]["uid"], node)
        delay, not_before = self._backoff.get(key, (0.0, 0.0))
        if now < not_before:
            self.ctx.later(PLURAL, (ds["metadata"]["namespace"], ds["metadata"]["name"]), not_before)
            return True
        delay = min(max(delay * 2, _BACKOFF_START), _BACKOFF_MAX)
        self._backoff[key] = (delay, now + delay)
        return False

    def _create(self, ds: dict[str, Any], nodes: list[str], pod_hash: str, generation: str) -> None:
        ctx = self.ctx
        pods_r = ctx.resource("", "pods")
        md = ds["metadata"]
        template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
        meta = template.setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), GENERATION_LABEL: generation, HASH_LABEL: pod_hash}
        spec = template.setdefault("spec", {})
        spec["tolerations"] = with_tolerations(spec)
        owner = kit.controller_ref(ds, "apps/v1", "DaemonSet")
        for node in nodes:
            body = kit.pod_from_template(
                template, namespace=md["namespace"], owner=owner, generate_name=f"{md['name']}-"
            )
            body["spec"]["affinity"] = pinned(spec.get("affinity"), node)
            try:
                created = ctx.create(pods_r, md["namespace"], body)
            except apierrors.ApiError as exc:
                ctx.record(
                    ds,
                    type="Warning",
                    reason="FailedCreate",
                    message=f"Error creating: {exc.message}",
                    component=COMPONENT,
                )
                return
            ctx.record(
                ds,
                type="Normal",
                reason="SuccessfulCreate",
                message=f"Created pod: {created['metadata']['name']}",
                component=COMPONENT,
            )

    def _delete(self, ds: dict[str, Any], pods: list[kit.PodInfo]) -> None:
        pods_r = self.ctx.resource("", "pods")
        for pod in pods:
            if self.ctx.delete(pods_r, pod.namespace, pod.name, pod.uid):
                self.ctx.record(
                    ds,
                    type="Normal",
                    reason="SuccessfulDelete",
                    message=f"Deleted pod: {pod.name}",
                    component=COMPONENT,
                )

    # -------------------------------------------------------------- rolling update
    def _rolling_update(
        self, ds: dict[str, Any], nodes: Mapping[str, scheduler.NodeView], pod_hash: str, generation: str
    ) -> None:
        ctx = self.ctx
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        desired = sum(1 for node in nodes.values() if should_run(template, node)[0])
        rolling_update = (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
        # Both 0 resolves to 1; a surge-only rollout (maxUnavailable 0) proceeds one node at a time here.
        most = max(kit.scaled(rolling_update.get("maxUnavailable"), desired, round_up=True, default=1), 1)
        now = ctx.now()
        unavailable = 0
        replace: list[kit.PodInfo] = []
        candidates: list[kit.PodInfo] = []
        for _node, pods in sorted(self._by_node(ds["metadata"]["uid"]).items()):
            live = [p for p in pods if not p.deleting]
            new = [p for p in live if updated(p, pod_hash, generation)]
            old = [p for p in live if not updated(p, pod_hash, generation)]
            if len(new) > 1 or len(old) > 1 or (new and old) or not live:
                unavailable += 1
            elif new:
                if not new[0].available(min_ready, now):
                    unavailable += 1
            elif not old[0].available(min_ready, now):
                replace.append(old[0])
            elif unavailable < most:
                candidates.append(old[0])
        room = min(max(most - unavailable, 0), len(candidates))
        self._delete(ds, replace + candidates[:room])

    # -------------------------------------------------------------- status
    def _status(
        self,
        ds: dict[str, Any],
        nodes: Mapping[str, scheduler.NodeView],
        pods: list[kit.PodInfo],
        pod_hash: str,
        generation: str,
    ) -> None:
        ctx = self.ctx
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        by_node: dict[str, list[kit.PodInfo]] = {}
        for pod in pods:
            if not pod.deleting:
                by_node.setdefault(pod.node, []).append(pod)
        now = ctx.now()
        desired = current = misscheduled = ready = available = updated_count = 0
        for name, node in nodes.items():
            run, _ = should_run(template, node)
            on_node = sorted(by_node.get(name, []), key=lambda p: (p.phase != "Running", p.created, p.name))
            if not run:
                misscheduled += 1 if on_node else 0
                continue
            desired += 1
            if not on_node:
                continue
            current += 1
            pod = on_node[0]
            if pod.ready:
                ready += 1
                available += self._available(ds, pod, min_ready, now)
            if updated(pod, pod_hash, generation):
                updated_count += 1
        old = ds.get("status") or {}
        status: dict[str, Any] = {
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": int(ds["metadata"].get("generation") or 1),
            "updatedNumberScheduled": updated_count,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
            "collisionCount": old.get("collisionCount"),
            "conditions": old.get("conditions"),
        }
        status = kit.without_zeros(
            status, keep=("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")
        )
        if status != old:
            ctx.write_status(ctx.resource("apps", PLURAL), ds, status)

    def _available(self, ds: dict[str, Any], pod: kit.PodInfo, min_ready: int, now: float) -> bool:
        """Whether a ready pod is available; if not yet, look again when it will be."""
        if pod.available(min_ready, now):
            return True
        if (due := pod.available_at(min_ready)) is not None:
            self.ctx.later(PLURAL, (ds["metadata"]["namespace"], ds["metadata"]["name"]), due)
        return False
