"""The Job controller's decisions, as pure functions: which pods to create, and the Job's status.

Follows batch/v1 where our programs look: ``completionMode: Indexed`` gives each pod the
annotation and label ``batch.kubernetes.io/job-completion-index``, the env
``JOB_COMPLETION_INDEX`` and the hostname ``<job>-<index>``; a Job is Complete when every index
(or ``completions`` pods) succeeded, Failed with ``BackoffLimitExceeded`` when more pods failed
than ``backoffLimit`` allows, or ``DeadlineExceeded`` past ``activeDeadlineSeconds``. Like the
real controller it first sets the interim conditions (``SuccessCriteriaMet`` / ``FailureTarget``)
and then the terminal one. ``restartPolicy: OnFailure`` is treated as Never (a failed container
fails its pod). Pod creation backs off 10 s after a failure, doubling, up to 6 minutes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

INDEX = "batch.kubernetes.io/job-completion-index"
JOB_NAME = "batch.kubernetes.io/job-name"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
BACKOFF_BASE, BACKOFF_MAX = 10.0, 360.0


@dataclass
class Census:
    """The Job's pods, counted the way its status reports them."""

    active: list[dict[str, Any]] = field(default_factory=list)
    succeeded: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, pods: list[dict[str, Any]]) -> Census:
        census = cls()
        for pod in pods:
            phase = (pod.get("status") or {}).get("phase")
            if phase == "Succeeded":
                census.succeeded.append(pod)
            elif phase == "Failed":
                census.failed.append(pod)
            elif not pod["metadata"].get("deletionTimestamp"):
                census.active.append(pod)
        return census

    def ready(self) -> int:
        return sum(
            1
            for p in self.active
            if any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        )


def index_of(pod: dict[str, Any]) -> int | None:
    value = (pod["metadata"].get("annotations") or {}).get(INDEX)
    return int(value) if value is not None and str(value).isdigit() else None


def indexed(job: dict[str, Any]) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def finished(job: dict[str, Any]) -> str | None:
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def ranges(indexes: list[int]) -> str:
    """``0-3,5``: the completedIndexes format."""
    parts: list[str] = []
    for i in sorted(set(indexes)):
        if parts and parts[-1].split("-")[-1] == str(i - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{i}"
        else:
            parts.append(str(i))
    return ",".join(parts)


def backoff(failures: int) -> float:
    return 0.0 if failures <= 0 else min(BACKOFF_BASE * 2 ** (failures - 1), BACKOFF_MAX)


def wanted_indexes(job: dict[str, Any], census: Census) -> list[int | None]:
    """The pods to create now: indexes for an Indexed Job, ``None`` per pod otherwise."""
    spec = job.get("spec") or {}
    completions, parallelism = int(spec.get("completions", 1)), int(spec.get("parallelism", 1))
    room = parallelism - len(census.active)
    if room <= 0 or spec.get("suspend"):
        return []
    if indexed(job):
        done = {index_of(p) for p in census.succeeded}
        running = {index_of(p) for p in census.active}
        todo = [i for i in range(completions) if i not in done and i not in running]
        return list(todo[:room])
    left = completions - len(census.succeeded) - len(census.active)
    return [None] * max(0, min(room, left))


def pod_for(job: dict[str, Any], index: int | None, suffix: str) -> dict[str, Any]:
    """A new pod from the Job's template, owned by the Job."""
    md = job["metadata"]
    template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    name = md["name"]
    labels = {
        **(meta.get("labels") or {}),
        JOB_NAME: name,
        "job-name": name,
        CONTROLLER_UID: md["uid"],
        "controller-uid": md["uid"],
    }
    annotations = dict(meta.get("annotations") or {})
    pod_name = f"{name}-{suffix}"
    if index is not None:
        labels[INDEX] = str(index)
        annotations[INDEX] = str(index)
        pod_name = f"{name}-{index}-{suffix}"
        spec.setdefault("hostname", f"{name}-{index}")
        for container in spec.get("containers") or []:
            env = [e for e in container.get("env") or [] if e.get("name") != "JOB_COMPLETION_INDEX"]
            env.append(
                {
                    "name": "JOB_COMPLETION_INDEX",
                    "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX}']"}},
                }
            )
            container["env"] = env
    spec.setdefault("restartPolicy", "Never")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name,
            "namespace": md["namespace"],
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": name,
                    "uid": md["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


def _condition(kind: str, reason: str, message: str, now: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": message,
        "lastProbeTime": now,
        "lastTransitionTime": now,
    }


def verdict(job: dict[str, Any], census: Census, *, deadline_passed: bool) -> tuple[str, str, str] | None:
    """(Complete|Failed, reason, message) once the Job is decided, else None."""
    spec = job.get("spec") or {}
    completions = int(spec.get("completions", 1))
    if len(census.failed) > int(spec.get("backoffLimit", 6)):
        return "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
    if deadline_passed:
        return "Failed", "DeadlineExceeded", "Job was active longer than specified deadline"
    if indexed(job):
        done = {index_of(p) for p in census.succeeded}
        if all(i in done for i in range(completions)):
            return "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
    elif len(census.succeeded) >= completions:
        return "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
    return None


def status(job: dict[str, Any], census: Census, *, now: str, decided: tuple[str, str, str] | None) -> dict[str, Any]:
    old = job.get("status") or {}
    new: dict[str, Any] = {
        "active": len(census.active),
        "succeeded": len(census.succeeded),
        "failed": len(census.failed),
        "ready": census.ready(),
        "startTime": old.get("startTime") or now,
        "uncountedTerminatedPods": {},
        "terminating": 0,
    }
    if indexed(job):
        done = ranges([i for i in (index_of(p) for p in census.succeeded) if i is not None])
        if done:
            new["completedIndexes"] = done
    conditions = list(old.get("conditions") or [])
    if decided is not None:
        kind, reason, message = decided
        interim = "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget"
        conditions = [c for c in conditions if c.get("type") not in (interim, kind)]
        conditions += [_condition(interim, reason, message, now), _condition(kind, reason, message, now)]
        new["active"] = 0
        if kind == "Complete":
            new["completionTime"] = now
    if conditions:
        new["conditions"] = conditions
    return new
