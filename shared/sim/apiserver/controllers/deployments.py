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
25 % / 25 %, ``revisionHistoryLimit`` 10, ``progressDeadlineSeconds`` 600.

Not modelled: proportional scaling of several active ReplicaSets during a rollout (a scale
change mid-rollout converges through the rolling steps instead), rollback annotations,
adopting ReplicaSets by selector, ``revision-history``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import api as api_mod
from shared.sim.apiserver import apierrors
from shared.sim.apiserver.controllers import kit

COMPONENT = "deployment-controller"
PLURAL = "deployments"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
_SKIP_COPY = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        "deployment.kubernetes.io/revision-history",
        DESIRED,
        MAX,
        "deprecated.deployment.rollback.to",
    }
)
DEFAULT_DEADLINE = 600
DEFAULT_HISTORY = 10
NO_DEADLINE = 2**31 - 1


@dataclass
class ReplicaSet:
    """A working copy of one owned ReplicaSet (spec changes are applied to it as they are written)."""

    obj: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def replicas(self) -> int:
        return int((self.obj.get("spec") or {}).get("replicas", 1))

    def status(self, field: str) -> int:
        return int((self.obj.get("status") or {}).get(field) or 0)

    @property
    def revision(self) -> int:
        value = (self.obj["metadata"].get("annotations") or {}).get(REVISION, "0")
        return int(value) if str(value).isdigit() else 0

    @property
    def created(self) -> float:
        return kit.epoch(self.obj["metadata"].get("creationTimestamp")) or 0.0

    @property
    def template(self) -> dict[str, Any]:
        return dict((self.obj.get("spec") or {}).get("template") or {})


# ------------------------------------------------------------------ pure rules
def replicas_of(d: dict[str, Any]) -> int:
    return int((d.get("spec") or {}).get("replicas", 1))


def rolling(d: dict[str, Any]) -> bool:
    return bool(((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate")


def fenceposts(d: dict[str, Any]) -> tuple[int, int]:
    """``ResolveFenceposts``: (maxSurge rounded up, maxUnavailable rounded down); never both 0."""
    rolling_update = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas_of(d)
    surge = kit.scaled(rolling_update.get("maxSurge"), desired, round_up=True, default="25%")
    unavailable = kit.scaled(rolling_update.get("maxUnavailable"), desired, round_up=False, default="25%")
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: dict[str, Any]) -> int:
    return fenceposts(d)[0] if rolling(d) else 0


def max_unavailable(d: dict[str, Any]) -> int:
    desired = replicas_of(d)
    if not rolling(d) or desired == 0:
        return 0
    return min(fenceposts(d)[1], desired)


def deadline(d: dict[str, Any]) -> int | None:
    value = (d.get("spec") or {}).get("progressDeadlineSeconds", DEFAULT_DEADLINE)
    return None if value is None or int(value) == NO_DEADLINE else int(value)


def new_replicas(d: dict[str, Any], all_rss: list[ReplicaSet], new: ReplicaSet | None) -> int:
    """``NewRSNewReplicas``: how far the new ReplicaSet may grow now."""
    desired = replicas_of(d)
    if not rolling(d):
        return desired
    current_new = new.replicas if new is not None else 0
    rolling_update = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    surge = kit.scaled(rolling_update.get("maxSurge"), desired, round_up=True, default="25%")
    current = sum(rs.replicas for rs in all_rss)
    most = desired + surge
    if current >= most:
        return current_new
    return current_new + min(most - current, desired - current_new)


def calculate_status(d: dict[str, Any], all_rss: list[ReplicaSet], new: ReplicaSet | None, now: str) -> dict[str, Any]:
    """``calculateStatus``: counts from the ReplicaSets, and the Available condition."""
    old = d.get("status") or {}
    available = sum(rs.status("availableReplicas") for rs in all_rss)
    total = sum(rs.replicas for rs in all_rss)
    status: dict[str, Any] = {
        "observedGeneration": int(d["metadata"].get("generation") or 1),
        "replicas": sum(rs.status("replicas") for rs in all_rss),
        "updatedReplicas": new.status("replicas") if new is not None else 0,
        "readyReplicas": sum(rs.status("readyReplicas") for rs in all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(total - available, 0),
    }
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    conditions = [dict(c) for c in old.get("conditions") or []]
    if available >= replicas_of(d) - max_unavailable(d):
        wanted = condition("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now)
    else:
        wanted = condition(
            "Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", now
        )
    status["conditions"] = kit.set_condition(conditions, wanted)
    return status


def condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def complete(d: dict[str, Any], status: dict[str, Any]) -> bool:
    """``DeploymentComplete``."""
    desired = replicas_of(d)
    return (
        int(status.get("updatedReplicas") or 0) == desired
        and int(status.get("replicas") or 0) == desired
        and int(status.get("availableReplicas") or 0) == desired
        and int(status.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 1)
    )


def progressing(d: dict[str, Any], new: dict[str, Any]) -> bool:
    """``DeploymentProgressing``: any progress since the status last written."""
    old = d.get("status") or {}

    def n(s: dict[str, Any], f: str) -> int:
        return int(s.get(f) or 0)

    return (
        n(new, "updatedReplicas") > n(old, "updatedReplicas")
        or n(new, "replicas") - n(new, "updatedReplicas") < n(old, "replicas") - n(old, "updatedReplicas")
        or n(new, "readyReplicas") > n(old, "readyReplicas")
        or n(new, "availableReplicas") > n(old, "availableReplicas")
    )


class DeploymentController:
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
        written = self._paused_condition(d)
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
            self._sync_rollout_status(d, all_rss, new)
            return
        if complete(d, d.get("status") or {}):
            self._cleanup(d, olds)
        self._sync_rollout_status(d, all_rss, new)

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
            self._sync_rollout_status(d, all_rss, new)
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
        self._sync_rollout_status(d, all_rss, new)

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
            **{k: v for k, v in (d["metadata"].get("annotations") or {}).items() if k not in _SKIP_COPY},
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
        pod_hash = kit.template_hash(template, collisions)
        rs_template = copy.deepcopy(template)
        rs_template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
        selector = copy.deepcopy((d.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        replicas = new_replicas(d, [*rss], None)
        annotations = {k: v for k, v in (md.get("annotations") or {}).items() if k not in _SKIP_COPY}
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
                api_mod.MERGE,
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
                api_mod.MERGE,
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

    # -------------------------------------------------------------- status
    def _paused_condition(self, d: dict[str, Any]) -> dict[str, Any] | None:
        """``checkPausedConditions``: the Deployment as now written; None when the write failed."""
        if deadline(d) is None:
            return d
        current = kit.condition_of(d, "Progressing")
        if current is not None and current.get("reason") == "ProgressDeadlineExceeded":
            return d
        paused = bool((d.get("spec") or {}).get("paused"))
        shown = current is not None and current.get("reason") == "DeploymentPaused"
        if paused == shown:
            return d
        now = self.ctx.api.now()
        wanted = (
            condition("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now)
            if paused
            else condition("Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", now)
        )
        status = copy.deepcopy(d.get("status") or {})
        status["conditions"] = kit.set_condition(list(status.get("conditions") or []), wanted)
        written = self.ctx.write_status(self.ctx.resource("apps", PLURAL), d, status)
        return written

    def _sync_rollout_status(self, d: dict[str, Any], all_rss: list[ReplicaSet], new: ReplicaSet | None) -> None:
        ctx = self.ctx
        now_text = ctx.api.now()
        status = calculate_status(d, all_rss, new, now_text)
        limit = deadline(d)
        conditions = list(status["conditions"])
        if limit is None:
            conditions = [c for c in conditions if c.get("type") != "Progressing"]
        current = kit.condition_of(d, "Progressing")
        done = (
            status["replicas"] == status["updatedReplicas"]
            and current is not None
            and current.get("reason") == "NewReplicaSetAvailable"
        )
        subject = f'ReplicaSet "{new.name}"' if new is not None else f'Deployment "{d["metadata"]["name"]}"'
        if limit is not None and not done:
            if complete(d, status):
                conditions = kit.set_condition(
                    conditions,
                    condition(
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable",
                        f"{subject} has successfully progressed.",
                        now_text,
                    ),
                )
            elif progressing(d, status):
                wanted = condition("Progressing", "True", "ReplicaSetUpdated", f"{subject} is progressing.", now_text)
                if current is not None:
                    if current.get("status") == "True":
                        wanted["lastTransitionTime"] = current.get("lastTransitionTime", now_text)
                    conditions = [c for c in conditions if c.get("type") != "Progressing"]
                conditions = kit.set_condition(conditions, wanted)
            elif self._timed_out(conditions, limit):
                conditions = kit.set_condition(
                    conditions,
                    condition(
                        "Progressing",
                        "False",
                        "ProgressDeadlineExceeded",
                        f"{subject} has timed out progressing.",
                        now_text,
                    ),
                )
        failures = [
            c
            for rs in all_rss
            if (c := kit.condition_of(rs.obj, "ReplicaFailure")) is not None and c.get("status") == "True"
        ]
        if failures:
            failure = failures[0]
            conditions = kit.set_condition(
                conditions,
                condition(
                    "ReplicaFailure", "True", str(failure.get("reason", "")), str(failure.get("message", "")), now_text
                ),
            )
        else:
            conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        status["conditions"] = conditions
        status = kit.without_zeros(status)
        if status != (d.get("status") or {}):
            ctx.write_status(ctx.resource("apps", PLURAL), d, status)
        self._requeue_stuck(d, status, limit)

    def _timed_out(self, conditions: list[dict[str, Any]], limit: int) -> bool:
        """``DeploymentTimedOut``: no progress recorded for ``progressDeadlineSeconds``."""
        current = next((c for c in conditions if c.get("type") == "Progressing"), None)
        if current is None or current.get("reason") == "NewReplicaSetAvailable":
            return False
        if current.get("reason") == "ProgressDeadlineExceeded":
            return True
        since = kit.epoch(current.get("lastUpdateTime"))
        return since is not None and since + limit < self.ctx.now()

    def _requeue_stuck(self, d: dict[str, Any], status: dict[str, Any], limit: int | None) -> None:
        """``requeueStuckDeployment``: look again a second after the deadline would pass."""
        current = next((c for c in status.get("conditions") or [] if c.get("type") == "Progressing"), None)
        if limit is None or current is None or complete(d, status):
            return
        if current.get("reason") in ("NewReplicaSetAvailable", "ProgressDeadlineExceeded"):
            return
        since = kit.epoch(current.get("lastUpdateTime"))
        if since is not None:
            key = (d["metadata"]["namespace"], d["metadata"]["name"])
            self.ctx.later(PLURAL, key, since + limit + 1)
