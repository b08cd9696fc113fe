"""What the Deployment controller decides without writing: its names, sizes and status.

The annotations and labels it writes, a working copy of an owned ReplicaSet, and the pure rules
of ``kubernetes:pkg/controller/deployment/util/deployment_util.go`` — ``ResolveFenceposts``
(maxSurge rounded up, maxUnavailable rounded down, never both 0), ``NewRSNewReplicas``,
``calculateStatus`` with its Available condition, ``DeploymentComplete`` and
``DeploymentProgressing``. Absent fields read as the API server's defaults would fill them:
strategy ``RollingUpdate`` with 25 % / 25 %, ``progressDeadlineSeconds`` 600,
``revisionHistoryLimit`` 10. The controller that acts on them is :mod:`.deployments`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver.controllers import kit

COMPONENT = "deployment-controller"
PLURAL = "deployments"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
SKIP_COPY = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        "deployment.kubernetes.io/revision-history",
        DESIRED,
        MAX,
        "deprecated.deployment.rollback.to",
    }
)
"""The Deployment's annotations its ReplicaSets do not copy (``annotationsToSkip``)."""
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
