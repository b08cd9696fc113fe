"""The status a Deployment sync writes: counts, and the Progressing and ReplicaFailure conditions.

``syncRolloutStatus`` and ``checkPausedConditions`` of ``kubernetes:pkg/controller/deployment/``:
``Progressing`` is ``NewReplicaSetAvailable`` once the rollout is complete, ``ReplicaSetUpdated``
while it moves, ``ProgressDeadlineExceeded`` when nothing moved for ``progressDeadlineSeconds``
(the Deployment is looked at again a second after that deadline would pass), and
``DeploymentPaused`` / ``DeploymentResumed`` when ``spec.paused`` flips; ``ReplicaFailure``
mirrors the first failing ReplicaSet's. The counts and the Available condition come from
:func:`.deploymentrules.calculate_status`.
"""

from __future__ import annotations

import copy
from typing import Any

from shared.sim.apiserver.controllers import kit
from shared.sim.apiserver.controllers.deploymentrules import (
    PLURAL,
    ReplicaSet,
    calculate_status,
    complete,
    condition,
    deadline,
    progressing,
)


def paused_condition(ctx: kit.Context, d: dict[str, Any]) -> dict[str, Any] | None:
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
    now = ctx.api.now()
    wanted = (
        condition("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now)
        if paused
        else condition("Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", now)
    )
    status = copy.deepcopy(d.get("status") or {})
    status["conditions"] = kit.set_condition(list(status.get("conditions") or []), wanted)
    return ctx.write_status(ctx.resource("apps", PLURAL), d, status)


def sync_rollout_status(ctx: kit.Context, d: dict[str, Any], all_rss: list[ReplicaSet], new: ReplicaSet | None) -> None:
    """``syncRolloutStatus``: write the status when it changed, and look again at the deadline."""
    now_text = ctx.api.now()
    status = calculate_status(d, all_rss, new, now_text)
    limit = deadline(d)
    conditions = list(status["conditions"])
    if limit is None:
        conditions = [c for c in conditions if c.get("type") != "Progressing"]
    else:
        conditions = _progress(ctx, d, status, conditions, new, limit, now_text)
    status["conditions"] = _replica_failure(conditions, all_rss, now_text)
    status = kit.without_zeros(status)
    if status != (d.get("status") or {}):
        ctx.write_status(ctx.resource("apps", PLURAL), d, status)
    _requeue_stuck(ctx, d, status, limit)


def _progress(
    ctx: kit.Context,
    d: dict[str, Any],
    status: dict[str, Any],
    conditions: list[dict[str, Any]],
    new: ReplicaSet | None,
    limit: int,
    now_text: str,
) -> list[dict[str, Any]]:
    """The Progressing condition, unless the rollout was already seen complete."""
    current = kit.condition_of(d, "Progressing")
    done = (
        status["replicas"] == status["updatedReplicas"]
        and current is not None
        and current.get("reason") == "NewReplicaSetAvailable"
    )
    if done:
        return conditions
    subject = f'ReplicaSet "{new.name}"' if new is not None else f'Deployment "{d["metadata"]["name"]}"'
    if complete(d, status):
        return kit.set_condition(
            conditions,
            condition(
                "Progressing", "True", "NewReplicaSetAvailable", f"{subject} has successfully progressed.", now_text
            ),
        )
    if progressing(d, status):
        wanted = condition("Progressing", "True", "ReplicaSetUpdated", f"{subject} is progressing.", now_text)
        if current is not None:
            if current.get("status") == "True":
                wanted["lastTransitionTime"] = current.get("lastTransitionTime", now_text)
            conditions = [c for c in conditions if c.get("type") != "Progressing"]
        return kit.set_condition(conditions, wanted)
    if _timed_out(ctx, conditions, limit):
        return kit.set_condition(
            conditions,
            condition(
                "Progressing", "False", "ProgressDeadlineExceeded", f"{subject} has timed out progressing.", now_text
            ),
        )
    return conditions


def _replica_failure(
    conditions: list[dict[str, Any]], all_rss: list[ReplicaSet], now_text: str
) -> list[dict[str, Any]]:
    """The first ReplicaSet's ReplicaFailure condition, or none."""
    failures = [
        c
        for rs in all_rss
        if (c := kit.condition_of(rs.obj, "ReplicaFailure")) is not None and c.get("status") == "True"
    ]
    if not failures:
        return [c for c in conditions if c.get("type") != "ReplicaFailure"]
    failure = failures[0]
    return kit.set_condition(
        conditions,
        condition("ReplicaFailure", "True", str(failure.get("reason", "")), str(failure.get("message", "")), now_text),
    )


def _timed_out(ctx: kit.Context, conditions: list[dict[str, Any]], limit: int) -> bool:
    """``DeploymentTimedOut``: no progress recorded for ``progressDeadlineSeconds``."""
    current = next((c for c in conditions if c.get("type") == "Progressing"), None)
    if current is None or current.get("reason") == "NewReplicaSetAvailable":
        return False
    if current.get("reason") == "ProgressDeadlineExceeded":
        return True
    since = kit.epoch(current.get("lastUpdateTime"))
    return since is not None and since + limit < ctx.now()


def _requeue_stuck(ctx: kit.Context, d: dict[str, Any], status: dict[str, Any], limit: int | None) -> None:
    """``requeueStuckDeployment``: look again a second after the deadline would pass."""
    current = next((c for c in status.get("conditions") or [] if c.get("type") == "Progressing"), None)
    if limit is None or current is None or complete(d, status):
        return
    if current.get("reason") in ("NewReplicaSetAvailable", "ProgressDeadlineExceeded"):
        return
    since = kit.epoch(current.get("lastUpdateTime"))
    if since is not None:
        key = (d["metadata"]["namespace"], d["metadata"]["name"])
        ctx.later(PLURAL, key, since + limit + 1)
