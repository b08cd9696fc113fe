"""The ReplicaSet controller (``kubernetes:pkg/controller/replicaset/replica_set.go``).

Keeps ``spec.replicas`` active pods (not finished, not being deleted) controlled by the
ReplicaSet: creates the missing ones from the template (``generateName: <rs>-``, so names are
``<rs>-<5 chars>``; at most 500 per pass, the real burst limit) and deletes the surplus, the least
useful first (unscheduled, then pending, then not ready, then the newest). Status as the real
``calculateStatus``: ``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``,
``availableReplicas`` (ready for ``minReadySeconds``), ``observedGeneration`` and a
``ReplicaFailure`` condition while creating pods fails. Events ``SuccessfulCreate`` /
``SuccessfulDelete`` / ``FailedCreate`` from ``replicaset-controller``.

Not modelled: adopting or releasing pods by selector (only pods whose controller reference
names the ReplicaSet count), the expectations cache (reads here are never stale).
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.controllers import kit

COMPONENT = "replicaset-controller"
PLURAL = "replicasets"
BURST = 500
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def deletion_order(pod: kit.PodInfo) -> tuple[Any, ...]:
    """``controller.ActivePods`` order: the pod to delete first sorts first."""
    return (
        pod.bound,
        _PHASE_RANK.get(pod.phase, 1),
        pod.ready,
        -(pod.ready_since or 0.0),
        -pod.created,
    )


def status_of(rs: dict[str, Any], pods: list[kit.PodInfo], now: float, failure: str | None) -> dict[str, Any]:
    spec = rs.get("spec") or {}
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    old = rs.get("status") or {}
    conditions = [c for c in old.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
    current_failure = kit.condition_of(rs, "ReplicaFailure")
    if failure is not None:
        conditions.append(
            current_failure
            or {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": failure,
                "lastTransitionTime": kit.rfc3339(now),
            }
        )
    status: dict[str, Any] = {
        "replicas": len(pods),
        "fullyLabeledReplicas": sum(1 for p in pods if all(p.labels.get(k) == v for k, v in template_labels.items())),
        "readyReplicas": sum(1 for p in pods if p.ready),
        "availableReplicas": sum(1 for p in pods if p.available(min_ready, now)),
        "observedGeneration": int(rs["metadata"].get("generation") or 1),
        "conditions": conditions,
    }
    return kit.without_zeros(status, keep=("replicas",))


class ReplicaSetController:
    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx

    def reconcile(self, key: kit.Key) -> None:
        ctx = self.ctx
        rs_r = ctx.resource("apps", PLURAL)
        entry = ctx.store.get(rs_r.group_resource, *key)
        if entry is None:
            return
        rs = entry.object()
        spec = rs.get("spec") or {}
        pods = [p for p in ctx.pods_of(entry.uid) if p.active]
        failure: str | None = None
        if not rs["metadata"].get("deletionTimestamp"):
            want = int(spec.get("replicas", 1))
            if len(pods) < want:
                failure = self._create(rs, want - len(pods))
                pods = [p for p in ctx.pods_of(entry.uid) if p.active]
            elif len(pods) > want:
                self._delete(rs, sorted(pods, key=deletion_order)[: len(pods) - want])
                pods = [p for p in ctx.pods_of(entry.uid) if p.active]
        now = ctx.now()
        status = status_of(rs, pods, now, failure)
        if status != (rs.get("status") or {}):
            ctx.write_status(rs_r, rs, status)
        min_ready = int(spec.get("minReadySeconds") or 0)
        for pod in pods:
            due = pod.available_at(min_ready)
            if min_ready and due is not None and due > now:
                ctx.later(PLURAL, key, due)

    def _create(self, rs: dict[str, Any], count: int) -> str | None:
        ctx = self.ctx
        pods_r = ctx.resource("", "pods")
        md = rs["metadata"]
        template = (rs.get("spec") or {}).get("template") or {}
        owner = kit.controller_ref(rs, "apps/v1", "ReplicaSet")
        for _ in range(min(count, BURST)):
            body = kit.pod_from_template(
                template, namespace=md["namespace"], owner=owner, generate_name=f"{md['name']}-"
            )
            try:
                created = ctx.create(pods_r, md["namespace"], body)
            except apierrors.ApiError as exc:
                message = f"Error creating: {exc.message}"
                ctx.record(rs, type="Warning", reason="FailedCreate", message=message, component=COMPONENT)
                return message
            ctx.record(
                rs,
                type="Normal",
                reason="SuccessfulCreate",
                message=f"Created pod: {created['metadata']['name']}",
                component=COMPONENT,
            )
        return None

    def _delete(self, rs: dict[str, Any], pods: list[kit.PodInfo]) -> None:
        pods_r = self.ctx.resource("", "pods")
        for pod in pods:
            if self.ctx.delete(pods_r, pod.namespace, pod.name, pod.uid):
                self.ctx.record(
                    rs,
                    type="Normal",
                    reason="SuccessfulDelete",
                    message=f"Deleted pod: {pod.name}",
                    component=COMPONENT,
                )
