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
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.controllers import history, kit

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
        data = kit.template_patch(template)
        revs = history.ensure(
            ctx,
            sts,
            kind="StatefulSet",
            name_hash=kit.revision_hash(data, collisions),
            labels={
                **((template.get("metadata") or {}).get("labels") or {}),
                HASH_LABEL: kit.revision_hash(data, collisions),
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
        ctx = self.ctx
        md, spec = sts["metadata"], sts.get("spec") or {}
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        replicas = int(spec.get("replicas", 1))
        ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        min_ready = int(spec.get("minReadySeconds") or 0)
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0) if rolling else replicas
        now = ctx.now()
        by_ordinal: dict[int, kit.PodInfo] = {}
        for pod in ctx.pods_of(md["uid"]):
            index = ordinal(md["name"], pod.name)
            if index is not None:
                by_ordinal[index] = pod
        wanted = range(start, start + replicas)
        for index in wanted:
            found = by_ordinal.get(index)
            if found is not None and found.phase in ("Failed", "Succeeded") and not found.deleting:
                self._delete(sts, found)
                by_ordinal.pop(index)
                found = None
            if found is None:
                revision = current if rolling and index < start + partition else update
                self._create(sts, index, revision)
                if ordered:
                    return
                continue
            if ordered and not (found.running_and_ready and found.available(min_ready, now)):
                if (due := found.available_at(min_ready)) is not None and due > now:
                    ctx.later(PLURAL, (md["namespace"], md["name"]), due)
                return
        for index in sorted((i for i in by_ordinal if i not in wanted), reverse=True):  # condemned
            pod = by_ordinal[index]
            if pod.deleting:
                if ordered:
                    return
                continue
            self._delete(sts, pod)
            if ordered:
                return
        if not rolling or any(not by_ordinal[i].running_and_ready for i in wanted if i in by_ordinal):
            return
        name = update["metadata"]["name"]
        for index in sorted((i for i in wanted if i >= start + partition), reverse=True):
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
