"""The Deployment controller (``kubernetes:pkg/controller/deployment/``), one sync at a time.

A Deployment owns ReplicaSets named ``<deployment>-<pod-template-hash>``: the hash of the pod
template (and ``status.collisionCount``), also added as the ``pod-template-hash`` label to the
ReplicaSet's selector, template and labels; each carries a controller reference
(blockOwnerDeletion) and the annotations ``deployment.kubernetes.io/revision``,
``desired-replicas`` and ``max-replicas`` (the revision goes on the Deployment too). The
ReplicaSet whose template equals the Deployment's (ignoring the hash label) is the new one; all
others are old.

Each sync does what ``rolloutRolling`` does: scale the new ReplicaSet up within ``maxSurge``
(``NewRSNewReplicas``), else scale old ones down within ``maxUnavailable`` (unhealthy replicas
first, then oldest first), else — once complete — delete old ReplicaSets beyond
``revisionHistoryLimit``; ``Recreate`` scales the old ones to zero and waits for their pods to
go before scaling the new one up. Then the status of ``syncRolloutStatus``: ``observedGeneration``,
``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``,
``unavailableReplicas`` (zero fields omitted, as the Go type does), conditions ``Available``
(``MinimumReplicasAvailable`` / ``MinimumReplicasUnavailable``) and ``Progressing``
(``NewReplicaSetCreated``, ``FoundNewReplicaSet``, ``ReplicaSetUpdated``,
``NewReplicaSetAvailable``, ``ProgressDeadlineExceeded`` after ``progressDeadlineSeconds``,
``DeploymentPaused`` / ``DeploymentResumed``) with the real messages. Events
``ScalingReplicaSet`` (``Scaled up replica set x-7d9 from 0 to 3``) from ``deployment-controller``.

Defaults the API server would fill are assumed when absent: strategy ``RollingUpdate`` with
25 % / 25 %, ``revisionHistoryLimit`` 10, ``progressDeadlineSeconds`` 600. The pure rules are in
:mod:`.deploymentrules`, the status and its conditions in :mod:`.deploymentstatus`.

Not modelled: proportional scaling of several active ReplicaSets during a rollout (a scale
change mid-rollout converges through the rolling steps instead), rollback annotations,
adopting ReplicaSets by selector, ``revision-history``.
"""

from __future__ import annotations

import copy
from typing import Any

from shared.sim.apiserver import apierrors, patchtypes
from shared.sim.apiserver.controllers import deploymentstatus, hashes, kit
from shared.sim.apiserver.controllers.deploymentrules import (
    COMPONENT,
    DEFAULT_HISTORY,
    DESIRED,
    HASH_LABEL,
    MAX,
    PLURAL,
    REVISION,
    SKIP_COPY,
    ReplicaSet,
    calculate_status,
    complete,
    condition,
    deadline,
    max_surge,
    max_unavailable,
    new_replicas,
    replicas_of,
    rolling,
)


class DeploymentController:
    """``syncDeployment``: one look at one Deployment, its ReplicaSets and their status."""

    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx

    # -------------------------------------------------------------- entry
    def reconcile(self, key: kit.Key) -> None:
        ctx = self.ctx
        d_r = ctx.resource("apps", PLURAL)
        entry = ctx.store.get(d_r.group_resource, *key)
        if entry is None or ctx.installed(PLURAL, entry):
            return
        d = entry.object()
        selector = (d.get("spec") or {}).get("selector") or {}
        if d["metadata"].get("deletionTimestamp") or not (
            selector.get("matchLabels") or selector.get("matchExpressions")
        ):
            return
        rs_r = ctx.resource("apps", "replicasets")
        rss = [
            ReplicaSet(e.object())
            for e in ctx.owned(entry.uid, rs_r.group_resource)
            if (kit.controller_of(e.object()) or {}).get("uid") == entry.uid
        ]
        rss = [rs for rs in rss if not rs.obj["metadata"].get("deletionTimestamp")]
        written = deploymentstatus.paused_condition(self.ctx, d)
        if written is None:
            return
        d = written
        if (d.get("spec") or {}).get("paused"):
            self._sync_paused(d, rss)
        elif rolling(d):
            self._rolling(d, rss)
        else:
            self._recreate(d, rss)

    # -------------------------------------------------------------- strategies
    def _rolling(self, d: dict[str, Any], rss: list[ReplicaSet]) -> None:
        found = self._new_rs(d, rss, create=True)
        if found is None:
            return
        d, new = found
        olds = [rs for rs in rss if rs.name != new.name]
        all_rss = [*olds, new]
        if self._reconcile_new(d, all_rss, new) or self._reconcile_old(d, all_rss, olds, new):
            deploymentstatus.sync_rollout_status(self.ctx, d, all_rss, new)
            return
        if complete(d, d.get("status") or {}):
            self._cleanup(d, olds)
        deploymentstatus.sync_rollout_status(self.ctx, d, all_rss, new)

    def _recreate(self, d: dict[str, Any], rss: list[ReplicaSet]) -> None:
        found = self._new_rs(d, rss, create=False)
        new = found[1] if found is not None else None
        if found is not None:
            d = found[0]
        olds = [rs for rs in rss if new is None or rs.name != new.name]
        all_rss = [*olds, *([new] if new is not None else [])]
        scaled_down = False
        for rs in olds:
            if rs.replicas > 0:
                scaled_down |= self._scale(rs, 0, d)
        if scaled_down or any(rs.status("replicas") > 0 for rs in olds):
            deploymentstatus.sync_rollout_status(self.ctx, d, all_rss, new)
            return
        if new is None:
            created = self._new_rs(d, rss, create=True)
            if created is None:
                return
            d, new = created
            all_rss = [*olds, new]
        if new.replicas != replicas_of(d):
            self._scale(new, replicas_of(d), d)
        elif complete(d, d.get("status") or {}):
            self._cleanup(d, olds)
        deploymentstatus.sync_rollout_status(self.ctx, d, all_rss, new)

    def _sync_paused(self, d: dict[str, Any], rss: list[ReplicaSet]) -> None:
        found = self._new_rs(d, rss, create=False)
        new = found[1] if found is not None else None
        if found is not None:
            d = found[0]
        active = [rs for rs in rss if rs.replicas > 0]
        if new is not None and all(rs.name == new.name for rs in active) and new.replicas != replicas_of(d):
            self._scale(new, replicas_of(d), d)
        status = kit.without_zeros(calculate_status(d, rss, new, self.ctx.api.now()))
        if status != (d.get("status") or {}):
            self.ctx.write_status(self.ctx.resource("apps", PLURAL), d, status)

    # -------------------------------------------------------------- the new ReplicaSet
    def _new_rs(
        self, d: dict[str, Any], rss: list[ReplicaSet], *, create: bool
    ) -> tuple[dict[str, Any], ReplicaSet] | None:
        """The new ReplicaSet (created when asked and missing), with the Deployment as now written."""
        ctx = self.ctx
        template = (d.get("spec") or {}).get("template") or {}
        matching = sorted(
            (rs for rs in rss if kit.equal_ignoring(rs.template, template, HASH_LABEL)), key=lambda rs: rs.created
        )
        existing = matching[0] if matching else None
        revision = max((rs.revision for rs in rss if rs is not existing), default=0) + 1
        now = ctx.api.now()
        if existing is not None:
            d = self._adopt_revision(d, existing, revision, now)
            return d, existing
        if not create:
            return None
        return self._create_rs(d, rss, template, revision, now)

    def _adopt_revision(self, d: dict[str, Any], rs: ReplicaSet, revision: int, now: str) -> dict[str, Any]:
        ctx = self.ctx
        annotations = dict(rs.obj["metadata"].get("annotations") or {})
        wanted = {
            **{k: v for k, v in (d["metadata"].get("annotations") or {}).items() if k not in SKIP_COPY},
            **annotations,
        }
        if rs.revision < revision:
            wanted[REVISION] = str(revision)
        min_ready = (d.get("spec") or {}).get("minReadySeconds") or 0
        if wanted != annotations or (rs.obj.get("spec") or {}).get("minReadySeconds", 0) != min_ready:
            body = copy.deepcopy(rs.obj)
            body["metadata"]["annotations"] = wanted
            body["spec"]["minReadySeconds"] = min_ready
            updated = ctx.update(ctx.resource("apps", "replicasets"), body)
            if updated is not None:
                rs.obj = updated
        d = self._set_revision(d, str(rs.revision))
        if deadline(d) is not None and kit.condition_of(d, "Progressing") is None:
            status = copy.deepcopy(d.get("status") or {})
            status["conditions"] = kit.set_condition(
                list(status.get("conditions") or []),
                condition("Progressing", "True", "FoundNewReplicaSet", f'Found new replica set "{rs.name}"', now),
            )
            d = ctx.write_status(ctx.resource("apps", PLURAL), d, status) or d
        return d

    def _create_rs(
        self, d: dict[str, Any], rss: list[ReplicaSet], template: dict[str, Any], revision: int, now: str
    ) -> tuple[dict[str, Any], ReplicaSet] | None:
        ctx = self.ctx
        rs_r = ctx.resource("apps", "replicasets")
        md = d["metadata"]
        collisions = (d.get("status") or {}).get("collisionCount")
        pod_hash = hashes.template_hash(template, collisions)
        rs_template = copy.deepcopy(template)
        rs_template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
        selector = copy.deepcopy((d.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        replicas = new_replicas(d, [*rss], None)
        annotations = {k: v for k, v in (md.get("annotations") or {}).items() if k not in SKIP_COPY}
        annotations.update(
            {REVISION: str(revision), DESIRED: str(replicas_of(d)), MAX: str(replicas_of(d) + max_surge(d))}
        )
        name = f"{md['name']}-{pod_hash}"
        body = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": md["namespace"],
                "labels": dict(rs_template["metadata"]["labels"]),
                "annotations": annotations,
                "ownerReferences": [kit.controller_ref(d, "apps/v1", "Deployment")],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": (d.get("spec") or {}).get("minReadySeconds") or 0,
                "selector": selector,
                "template": rs_template,
            },
        }
        try:
            created = ctx.create(rs_r, md["namespace"], body)
        except apierrors.ApiError as exc:
            if exc.code == 409:
                return self._collision(d, name, template)
            status = copy.deepcopy(d.get("status") or {})
            status["conditions"] = kit.set_condition(
                list(status.get("conditions") or []),
                condition("ReplicaFailure", "True", "FailedCreate", exc.message, now),
            )
            ctx.write_status(ctx.resource("apps", PLURAL), d, status)
            return None
        new = ReplicaSet(created)
        if replicas > 0:
            ctx.record(
                d,
                type="Normal",
                reason="ScalingReplicaSet",
                message=f"Scaled up replica set {name} from 0 to {replicas}",
                component=COMPONENT,
            )
        d = self._set_revision(d, str(revision))
        if deadline(d) is not None:
            status = copy.deepcopy(d.get("status") or {})
            status["conditions"] = kit.set_condition(
                list(status.get("conditions") or []),
                condition("Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{name}"', now),
            )
            d = ctx.write_status(ctx.resource("apps", PLURAL), d, status) or d
        return d, new

    def _collision(
        self, d: dict[str, Any], name: str, template: dict[str, Any]
    ) -> tuple[dict[str, Any], ReplicaSet] | None:
        """A ReplicaSet of that name exists: ours with this template (use it), or a hash collision
        (bump ``status.collisionCount`` so the next sync picks another name)."""
        ctx = self.ctx
        found = ctx.store.get(("apps", "replicasets"), d["metadata"]["namespace"], name)
        if found is not None:
            obj = found.object()
            ours = (kit.controller_of(obj) or {}).get("uid") == d["metadata"]["uid"]
            if ours and kit.equal_ignoring((obj.get("spec") or {}).get("template") or {}, template, HASH_LABEL):
                return d, ReplicaSet(obj)
        status = copy.deepcopy(d.get("status") or {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        ctx.write_status(ctx.resource("apps", PLURAL), d, status)
        return None

    def _set_revision(self, d: dict[str, Any], revision: str) -> dict[str, Any]:
        if (d["metadata"].get("annotations") or {}).get(REVISION) == revision:
            return d
        try:
            return self.ctx.api.patch(
                self.ctx.resource("apps", PLURAL),
                d["metadata"]["namespace"],
                d["metadata"]["name"],
                patchtypes.MERGE,
                {"metadata": {"annotations": {REVISION: revision}}},
            )
        except apierrors.ApiError:
            return d

    # -------------------------------------------------------------- scaling
    def _scale(self, rs: ReplicaSet, count: int, d: dict[str, Any]) -> bool:
        """``scaleReplicaSetAndRecordEvent``: True when the size changed."""
        annotations = rs.obj["metadata"].get("annotations") or {}
        desired, most = str(replicas_of(d)), str(replicas_of(d) + max_surge(d))
        size_changes = rs.replicas != count
        if not size_changes and annotations.get(DESIRED) == desired and annotations.get(MAX) == most:
            return False
        before = rs.replicas
        try:
            rs.obj = self.ctx.api.patch(
                self.ctx.resource("apps", "replicasets"),
                rs.obj["metadata"]["namespace"],
                rs.name,
                patchtypes.MERGE,
                {"metadata": {"annotations": {DESIRED: desired, MAX: most}}, "spec": {"replicas": count}},
            )
        except apierrors.ApiError:
            return False
        if size_changes:
            way = "up" if before < count else "down"
            self.ctx.record(
                d,
                type="Normal",
                reason="ScalingReplicaSet",
                message=f"Scaled {way} replica set {rs.name} from {before} to {count}",
                component=COMPONENT,
            )
        return size_changes

    def _reconcile_new(self, d: dict[str, Any], all_rss: list[ReplicaSet], new: ReplicaSet) -> bool:
        desired = replicas_of(d)
        if new.replicas == desired:
            return False
        if new.replicas > desired:
            return self._scale(new, desired, d)
        return self._scale(new, new_replicas(d, all_rss, new), d)

    def _reconcile_old(
        self, d: dict[str, Any], all_rss: list[ReplicaSet], olds: list[ReplicaSet], new: ReplicaSet
    ) -> bool:
        if sum(rs.replicas for rs in olds) == 0:
            return False
        min_available = replicas_of(d) - max_unavailable(d)
        new_unavailable = new.replicas - new.status("availableReplicas")
        most = sum(rs.replicas for rs in all_rss) - min_available - new_unavailable
        if most <= 0:
            return False
        olds = sorted(olds, key=lambda rs: rs.created)
        cleaned = 0
        for rs in olds:  # cleanupUnhealthyReplicas
            if cleaned >= most:
                break
            unhealthy = rs.replicas - rs.status("availableReplicas")
            if rs.replicas == 0 or unhealthy <= 0:
                continue
            down = min(most - cleaned, unhealthy)
            self._scale(rs, rs.replicas - down, d)
            cleaned += down
        available = sum(rs.status("availableReplicas") for rs in all_rss)
        scaled = 0
        if available > min_available:  # scaleDownOldReplicaSetsForRollingUpdate
            total = available - min_available
            for rs in olds:
                if scaled >= total:
                    break
                if rs.replicas == 0:
                    continue
                down = min(rs.replicas, total - scaled)
                self._scale(rs, rs.replicas - down, d)
                scaled += down
        return cleaned + scaled > 0

    def _cleanup(self, d: dict[str, Any], olds: list[ReplicaSet]) -> None:
        """``cleanupDeployment``: old, empty ReplicaSets beyond ``revisionHistoryLimit``, oldest revision first."""
        limit = int((d.get("spec") or {}).get("revisionHistoryLimit", DEFAULT_HISTORY))
        extra = len(olds) - limit
        if extra <= 0:
            return
        rs_r = self.ctx.resource("apps", "replicasets")
        for rs in sorted(olds, key=lambda r: (r.revision, r.created))[:extra]:
            generation = int(rs.obj["metadata"].get("generation") or 1)
            if (
                rs.status("replicas")
                or rs.replicas
                or generation > rs.status("observedGeneration")
                or rs.obj["metadata"].get("deletionTimestamp")
            ):
                continue
            self.ctx.delete(rs_r, rs.obj["metadata"]["namespace"], rs.name, rs.obj["metadata"]["uid"])
