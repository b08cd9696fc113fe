"""The StatefulSet controller (``kubernetes:pkg/controller/statefulset/stateful_set_control.go``).

Pods ``<sts>-<ordinal>`` for ordinals ``spec.ordinals.start`` … ``start + replicas - 1``, each
labelled ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
``controller-revision-hash`` (the name of the ControllerRevision it was made from), with
``hostname`` = pod name and ``subdomain`` = ``serviceName``. ``OrderedReady`` (the default)
creates one pod at a time, each only once all lower ordinals are Running and available, and
removes surplus pods highest ordinal first, one at a time; ``Parallel`` does both at once.
Failed or finished pods are deleted and made again.

Revisions: the ControllerRevision of the current template is ``updateRevision``
(``<sts>-<hash>``, FNV-1 of the revision data and the collision count); ``currentRevision`` is
what the pods ran before. ``RollingUpdate`` (default, ``partition`` 0) replaces pods at or above
the partition that are not at ``updateRevision``, highest ordinal first, one at a time once all
pods are healthy; pods below the partition are made from ``currentRevision``. When every pod is
updated and ready, ``currentRevision`` becomes ``updateRevision`` (``completeRollingUpdate``).
Status: ``observedGeneration``, ``replicas``, ``readyReplicas``, ``currentReplicas``,
``updatedReplicas``, ``availableReplicas``, ``currentRevision``, ``updateRevision``,
``collisionCount``. Events ``SuccessfulCreate`` (``create Pod web-0 in StatefulSet web
successful``) / ``SuccessfulDelete`` from ``statefulset-controller``.

Not modelled: PersistentVolumeClaims from ``volumeClaimTemplates`` (PVCs are not served),
``maxUnavailable``, ``persistentVolumeClaimRetentionPolicy``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.controllers import hashes, history, kit

COMPONENT = "statefulset-controller"
PLURAL = "statefulsets"
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
HASH_LABEL = "controller.kubernetes.io/hash"


def ordinal(sts_name: str, pod_name: str) -> int | None:
    prefix, _, tail = pod_name.rpartition("-")
    return int(tail) if prefix == sts_name and tail.isdigit() else None


def revision_template(revision: dict[str, Any]) -> dict[str, Any]:
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return dict(template)


@dataclass(frozen=True)
class _Plan:
    """What a StatefulSet's spec asks of its pods (with the API server's defaults when absent)."""

    start: int
    replicas: int
    ordered: bool
    """``podManagementPolicy`` OrderedReady: one pod at a time."""
    min_ready: int
    rolling: bool
    partition: int
    """Ordinals from ``start + partition`` up get ``updateRevision``."""

    @classmethod
    def of(cls, spec: dict[str, Any]) -> _Plan:
        replicas = int(spec.get("replicas", 1))
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        return cls(
            start=int((spec.get("ordinals") or {}).get("start") or 0),
            replicas=replicas,
            ordered=spec.get("podManagementPolicy", "OrderedReady") != "Parallel",
            min_ready=int(spec.get("minReadySeconds") or 0),
            rolling=rolling,
            partition=int((strategy.get("rollingUpdate") or {}).get("partition") or 0) if rolling else replicas,
        )

    @property
    def wanted(self) -> range:
        return range(self.start, self.start + self.replicas)


class StatefulSetController:
    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx

    def reconcile(self, key: kit.Key) -> None:
        ctx = self.ctx
        sts_r = ctx.resource("apps", PLURAL)
        entry = ctx.store.get(sts_r.group_resource, *key)
        if entry is None or ctx.installed(PLURAL, entry):
            return
        sts = entry.object()
        if sts["metadata"].get("deletionTimestamp"):
            return
        spec = sts.get("spec") or {}
        old_status = sts.get("status") or {}
        collisions = int(old_status.get("collisionCount") or 0)
        template = spec.get("template") or {}
        data = hashes.template_patch(template)
        revs = history.ensure(
            ctx,
            sts,
            kind="StatefulSet",
            name_hash=hashes.revision_hash(data, collisions),
            labels={
                **((template.get("metadata") or {}).get("labels") or {}),
                HASH_LABEL: hashes.revision_hash(data, collisions),
            },
        )
        if revs is None:
            ctx.write_status(sts_r, sts, {**old_status, "collisionCount": collisions + 1})
            return
        update = revs.current
        current = next((r for r in revs.all if r["metadata"]["name"] == old_status.get("currentRevision")), update)
        self._pods(sts, current, update)
        pods = ctx.pods_of(entry.uid)
        live = {p.labels.get(REVISION_LABEL, "") for p in pods}
        keep = {current["metadata"]["name"], update["metadata"]["name"]}
        history.truncate(ctx, sts, revs.all, live | keep, update["metadata"]["name"])
        self._status(sts, pods, current["metadata"]["name"], update["metadata"]["name"], collisions)

    # -------------------------------------------------------------- pods
    def _pods(self, sts: dict[str, Any], current: dict[str, Any], update: dict[str, Any]) -> None:
        """One step of ``updateStatefulSet``: make missing pods, then remove surplus ones, then
        replace one outdated pod — each phase, under ``OrderedReady``, ending the step when it acted."""
        plan = _Plan.of(sts.get("spec") or {})
        by_ordinal: dict[int, kit.PodInfo] = {}
        for pod in self.ctx.pods_of(sts["metadata"]["uid"]):
            index = ordinal(sts["metadata"]["name"], pod.name)
            if index is not None:
                by_ordinal[index] = pod
        if self._fill(sts, plan, by_ordinal, current, update) or self._condemn(sts, plan, by_ordinal):
            return
        if plan.rolling and all(by_ordinal[i].running_and_ready for i in plan.wanted if i in by_ordinal):
            self._roll(sts, plan, by_ordinal, update["metadata"]["name"])

    def _fill(
        self,
        sts: dict[str, Any],
        plan: _Plan,
        by_ordinal: dict[int, kit.PodInfo],
        current: dict[str, Any],
        update: dict[str, Any],
    ) -> bool:
        """Replace finished pods and make missing ones, lowest ordinal first; True: wait for them."""
        now = self.ctx.now()
        for index in plan.wanted:
            found = by_ordinal.get(index)
            if found is not None and found.phase in ("Failed", "Succeeded") and not found.deleting:
                self._delete(sts, found)
                by_ordinal.pop(index)
                found = None
            if found is None:
                revision = current if plan.rolling and index < plan.start + plan.partition else update
                self._create(sts, index, revision)
                if plan.ordered:
                    return True
            elif self._waits_for(sts, plan, found, now):
                return True
        return False

    def _waits_for(self, sts: dict[str, Any], plan: _Plan, pod: kit.PodInfo, now: float) -> bool:
        """``OrderedReady`` goes on only past a Running, available pod (looking again when it will be)."""
        if not plan.ordered or (pod.running_and_ready and pod.available(plan.min_ready, now)):
            return False
        if (due := pod.available_at(plan.min_ready)) is not None and due > now:
            self.ctx.later(PLURAL, (sts["metadata"]["namespace"], sts["metadata"]["name"]), due)
        return True

    def _condemn(self, sts: dict[str, Any], plan: _Plan, by_ordinal: dict[int, kit.PodInfo]) -> bool:
        """Delete pods beyond the wanted ordinals, highest first; True: wait for them to go."""
        for index in sorted((i for i in by_ordinal if i not in plan.wanted), reverse=True):
            pod = by_ordinal[index]
            if not pod.deleting:
                self._delete(sts, pod)
            if plan.ordered:
                return True
        return False

    def _roll(self, sts: dict[str, Any], plan: _Plan, by_ordinal: dict[int, kit.PodInfo], name: str) -> None:
        """``RollingUpdate``: delete the highest outdated pod at or above the partition, once every
        higher one is updated and ready."""
        for index in sorted((i for i in plan.wanted if i >= plan.start + plan.partition), reverse=True):
            target = by_ordinal.get(index)
            if target is None:
                return
            if target.labels.get(REVISION_LABEL) != name and not target.deleting:
                self._delete(sts, target)
                return
            if not target.running_and_ready:
                return

    def _create(self, sts: dict[str, Any], index: int, revision: dict[str, Any]) -> None:
        ctx = self.ctx
        md, spec = sts["metadata"], sts.get("spec") or {}
        name = f"{md['name']}-{index}"
        template = revision_template(revision)
        meta = template.setdefault("metadata", {})
        meta["labels"] = {
            **(meta.get("labels") or {}),
            POD_NAME_LABEL: name,
            POD_INDEX_LABEL: str(index),
            REVISION_LABEL: revision["metadata"]["name"],
        }
        body = kit.pod_from_template(
            template, namespace=md["namespace"], owner=kit.controller_ref(sts, "apps/v1", "StatefulSet"), name=name
        )
        body["spec"]["hostname"] = name
        if spec.get("serviceName"):
            body["spec"]["subdomain"] = spec["serviceName"]
        try:
            ctx.create(ctx.resource("", "pods"), md["namespace"], body)
        except apierrors.ApiError as exc:
            ctx.record(
                sts,
                type="Warning",
                reason="FailedCreate",
                message=f"create Pod {name} in StatefulSet {md['name']} failed error: {exc.message}",
                component=COMPONENT,
            )
            return
        ctx.record(
            sts,
            type="Normal",
            reason="SuccessfulCreate",
            message=f"create Pod {name} in StatefulSet {md['name']} successful",
            component=COMPONENT,
        )

    def _delete(self, sts: dict[str, Any], pod: kit.PodInfo) -> None:
        if self.ctx.delete(self.ctx.resource("", "pods"), pod.namespace, pod.name, pod.uid):
            self.ctx.record(
                sts,
                type="Normal",
                reason="SuccessfulDelete",
                message=f"delete Pod {pod.name} in StatefulSet {sts['metadata']['name']} successful",
                component=COMPONENT,
            )

    # -------------------------------------------------------------- status
    def _status(self, sts: dict[str, Any], pods: list[kit.PodInfo], current: str, update: str, collisions: int) -> None:
        ctx = self.ctx
        spec = sts.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = ctx.now()
        counted = [p for p in pods if not p.deleting]
        status: dict[str, Any] = {
            "observedGeneration": int(sts["metadata"].get("generation") or 1),
            "replicas": len(counted),
            "readyReplicas": sum(1 for p in counted if p.running_and_ready),
            "currentReplicas": sum(1 for p in counted if p.labels.get(REVISION_LABEL) == current),
            "updatedReplicas": sum(1 for p in counted if p.labels.get(REVISION_LABEL) == update),
            "availableReplicas": sum(1 for p in counted if p.running_and_ready and p.available(min_ready, now)),
            "currentRevision": current,
            "updateRevision": update,
            "collisionCount": collisions,
        }
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if (
            rolling
            and status["updatedReplicas"] == status["replicas"]
            and status["readyReplicas"] == status["replicas"]
        ):
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = update
        old = sts.get("status") or {}
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        status = kit.without_zeros(status, keep=("replicas", "availableReplicas", "collisionCount"))
        if status != old:
            ctx.write_status(ctx.resource("apps", PLURAL), sts, status)
