"""What the JobSet controller decides, as pure functions: child names and labels, the Jobs and the
headless Service it creates, and the JobSet's status.

From kubernetes-sigs/jobset v0.12.0 ``pkg/controllers/jobset_controller.go`` (``constructJob``,
``labelAndAnnotateObject``, ``createHeadlessSvcIfNotExist``), ``depends_on.go``, ``success_policy.go``
and ``failure_policy.go`` (research/workloads.md §2.2–2.4). Left out: exclusive placement, the
pod webhook's priority label, volume claim policies' PVCs, elastic JobSets and in-place restarts.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.sim.operators import jobsetcrd

_P = "jobset.sigs.k8s.io/"
JOBSET_NAME = _P + "jobset-name"
JOBSET_UID = _P + "jobset-uid"
REPLICATED_JOB = _P + "replicatedjob-name"
REPLICATED_JOB_REPLICAS = _P + "replicatedjob-replicas"
GLOBAL_REPLICAS = _P + "global-replicas"
JOB_INDEX = _P + "job-index"
JOB_GLOBAL_INDEX = _P + "job-global-index"
JOB_KEY = _P + "job-key"
GROUP_NAME = _P + "group-name"
GROUP_REPLICAS = _P + "group-replicas"
JOB_GROUP_INDEX = _P + "job-group-index"
RESTART_ATTEMPT = _P + "restart-attempt"
COORDINATOR = _P + "coordinator"

FAILED_JOBS = ("FailedJobs", "jobset failed due to one or more job failures")
MAX_RESTARTS = ("ReachedMaxRestarts", "jobset failed due to reaching max number of restarts")
FAIL_ACTION = ("FailJobSetFailurePolicyAction", "jobset failed due to executing FailJobSet action")
COMPLETED = ("AllJobsCompleted", "jobset completed successfully")
SUSPENDED = ("SuspendedJobs", "jobset is suspended")
RESUMED = ("ResumeJobs", "jobset is resumed")


def replicated_jobs(js: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list((js.get("spec") or {}).get("replicatedJobs") or [])


def replicas(rjob: Mapping[str, Any]) -> int:
    return int(rjob.get("replicas", 1))


def job_name(js_name: str, rjob: str, index: int) -> str:
    return f"{js_name}-{rjob}-{index}"


def subdomain(js: Mapping[str, Any]) -> str:
    """``network.subdomain``, else the JobSet's name: the headless Service and every pod's subdomain."""
    network = (js.get("spec") or {}).get("network") or {}
    return str(network.get("subdomain") or js["metadata"]["name"])


def dns_hostnames(js: Mapping[str, Any]) -> bool:
    network = (js.get("spec") or {}).get("network") or {}
    return bool(network.get("enableDNSHostnames", True))


def suspended(js: Mapping[str, Any]) -> bool:
    return bool((js.get("spec") or {}).get("suspend"))


def restarts(js: Mapping[str, Any]) -> int:
    return int((js.get("status") or {}).get("restarts", 0))


def condition(obj: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def is_true(obj: Mapping[str, Any], kind: str) -> bool:
    found = condition(obj, kind)
    return found is not None and found.get("status") == "True"


def finished(js: Mapping[str, Any]) -> bool:
    return is_true(js, "Completed") or is_true(js, "Failed")


# ------------------------------------------------------------------ children
def _indexes(js: Mapping[str, Any], rjob_name: str, job_index: int) -> dict[str, str]:
    """global-replicas, job-global-index, group-replicas and job-group-index of one child Job."""
    rjobs = replicated_jobs(js)
    total = sum(replicas(r) for r in rjobs)
    mine = next(r for r in rjobs if r["name"] == rjob_name)
    group = mine.get("groupName", "default")
    before = sum(replicas(r) for r in rjobs[: rjobs.index(mine)])
    in_group = [r for r in rjobs if r.get("groupName", "default") == group]
    before_in_group = sum(replicas(r) for r in in_group[: in_group.index(mine)])
    return {
        GLOBAL_REPLICAS: str(total),
        JOB_GLOBAL_INDEX: str(before + job_index),
        GROUP_NAME: str(group),
        GROUP_REPLICAS: str(sum(replicas(r) for r in in_group)),
        JOB_GROUP_INDEX: str(before_in_group + job_index),
    }


def job_key(namespace: str, name: str) -> str:
    """SHA1 of ``<ns>/<job>``: the label exclusive placement selects on."""
    return hashlib.sha1(f"{namespace}/{name}".encode()).hexdigest()  # an identifier, as upstream


def coordinator_endpoint(js: Mapping[str, Any]) -> str | None:
    coordinator = (js.get("spec") or {}).get("coordinator")
    if not coordinator:
        return None
    name = js["metadata"]["name"]
    job = job_name(name, coordinator["replicatedJob"], int(coordinator.get("jobIndex", 0)))
    return f"{job}-{int(coordinator.get('podIndex', 0))}.{subdomain(js)}"


def child_labels(js: Mapping[str, Any], rjob: Mapping[str, Any], index: int) -> dict[str, str]:
    """The labels (and, identically, annotations) JobSet puts on a child Job and its pod template."""
    md = js["metadata"]
    name = job_name(md["name"], rjob["name"], index)
    labels = {
        JOBSET_NAME: md["name"],
        JOBSET_UID: md["uid"],
        REPLICATED_JOB: rjob["name"],
        REPLICATED_JOB_REPLICAS: str(replicas(rjob)),
        JOB_INDEX: str(index),
        RESTART_ATTEMPT: str(restarts(js)),
        JOB_KEY: job_key(md["namespace"], name),
        **_indexes(js, rjob["name"], index),
    }
    endpoint = coordinator_endpoint(js)
    if endpoint is not None:
        labels[COORDINATOR] = endpoint
    return labels


def _label(meta: dict[str, Any], labels: Mapping[str, str]) -> None:
    meta["labels"] = {**(meta.get("labels") or {}), **labels}
    meta["annotations"] = {**(meta.get("annotations") or {}), **labels}


def owner_ref(js: Mapping[str, Any]) -> dict[str, Any]:
    md = js["metadata"]
    return {
        "apiVersion": f"{jobsetcrd.GROUP}/{jobsetcrd.VERSION}",
        "kind": jobsetcrd.KIND,
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def child_job(js: Mapping[str, Any], rjob: Mapping[str, Any], index: int) -> dict[str, Any]:
    """``constructJob``: the template's Job with JobSet's labels, the subdomain and the suspend flag."""
    template = copy.deepcopy(rjob.get("template") or {})
    meta = dict(template.get("metadata") or {})
    spec = template.get("spec") or {}
    md: dict[str, Any] = {
        "name": job_name(js["metadata"]["name"], rjob["name"], index),
        "namespace": js["metadata"]["namespace"],
        "ownerReferences": [owner_ref(js)],
    }
    for key in ("labels", "annotations"):
        if meta.get(key):
            md[key] = dict(meta[key])
    labels = child_labels(js, rjob, index)
    _label(md, labels)
    pod_meta = spec.setdefault("template", {}).setdefault("metadata", {})
    _label(pod_meta, labels)
    if dns_hostnames(js):
        spec["template"].setdefault("spec", {})["subdomain"] = subdomain(js)
    spec["suspend"] = suspended(js)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": spec}


def headless_service(js: Mapping[str, Any]) -> dict[str, Any]:
    network = (js.get("spec") or {}).get("network") or {}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": subdomain(js),
            "namespace": js["metadata"]["namespace"],
            "ownerReferences": [owner_ref(js)],
        },
        "spec": {
            "clusterIP": "None",
            "selector": {JOBSET_NAME: js["metadata"]["name"]},
            "publishNotReadyAddresses": bool(network.get("publishNotReadyAddresses", True)),
        },
    }


# ------------------------------------------------------------------ child Jobs as the controller sees them
def job_finished(job: Mapping[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` once the Job has that condition True, else None."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def job_ready(job: Mapping[str, Any]) -> bool:
    """All the Job's pods pass readiness (or succeeded): ``ready + succeeded >= min(parallelism, completions)``."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    want = min(int(spec.get("parallelism", 1)), int(spec.get("completions", spec.get("parallelism", 1))))
    return int(status.get("ready", 0)) + int(status.get("succeeded", 0)) >= want


@dataclass
class Children:
    """The JobSet's Jobs, sorted as ``getChildJobs`` sorts them."""

    active: list[dict[str, Any]] = field(default_factory=list)
    successful: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    previous: list[dict[str, Any]] = field(default_factory=list)
    """Jobs of an earlier attempt (restart-attempt below status.restarts): to delete."""

    @classmethod
    def of(cls, js: Mapping[str, Any], jobs: list[dict[str, Any]]) -> Children:
        out = cls()
        attempt = restarts(js)
        for job in sorted(jobs, key=lambda j: j["metadata"]["name"]):
            label = (job["metadata"].get("labels") or {}).get(RESTART_ATTEMPT, "0")
            if not str(label).isdigit() or int(label) < attempt:
                out.previous.append(job)
            elif job["metadata"].get("deletionTimestamp"):
                continue
            elif job_finished(job) == "Failed":
                out.failed.append(job)
            elif job_finished(job) == "Complete":
                out.successful.append(job)
            else:
                out.active.append(job)
        return out

    def names(self) -> set[str]:
        return {j["metadata"]["name"] for j in (*self.active, *self.successful, *self.failed, *self.previous)}


def _rjob_of(job: Mapping[str, Any]) -> str:
    return str((job["metadata"].get("labels") or {}).get(REPLICATED_JOB, ""))


def replicated_status(js: Mapping[str, Any], children: Children) -> list[dict[str, Any]]:
    """``status.replicatedJobsStatus``: per replicatedJob, how many Jobs are ready, succeeded, failed,
    active and suspended."""
    out = []
    for rjob in replicated_jobs(js):
        name = rjob["name"]
        active = [j for j in children.active if _rjob_of(j) == name]
        out.append(
            {
                "name": name,
                "ready": sum(1 for j in active if not (j.get("spec") or {}).get("suspend") and job_ready(j)),
                "succeeded": sum(1 for j in children.successful if _rjob_of(j) == name),
                "failed": sum(1 for j in children.failed if _rjob_of(j) == name),
                "active": sum(1 for j in active if int((j.get("status") or {}).get("active", 0)) > 0),
                "suspended": sum(1 for j in active if (j.get("spec") or {}).get("suspend")),
            }
        )
    return out


def dependencies_met(js: Mapping[str, Any], rjob: Mapping[str, Any], statuses: list[dict[str, Any]]) -> bool:
    """``dependsOn``: every named replicatedJob reached its status (Ready: all its Jobs ready, succeeded
    or failed; Complete: all succeeded) — ``depends_on.go``."""
    counts = {s["name"]: s for s in statuses}
    sizes = {r["name"]: replicas(r) for r in replicated_jobs(js)}
    for dep in rjob.get("dependsOn") or []:
        status = counts.get(dep["name"])
        want = sizes.get(dep["name"], 0)
        if status is None:
            return False
        if dep.get("status") == "Ready" and status["ready"] + status["succeeded"] + status["failed"] != want:
            return False
        if dep.get("status") == "Complete" and status["succeeded"] != want:
            return False
    return True


def in_order_blocked(js: Mapping[str, Any], rjob: Mapping[str, Any], statuses: list[dict[str, Any]]) -> bool:
    """``startupPolicy: InOrder``: a replicatedJob starts once every one before it has all Jobs ready."""
    policy = ((js.get("spec") or {}).get("startupPolicy") or {}).get("startupPolicyOrder")
    if policy != "InOrder":
        return False
    counts = {s["name"]: s for s in statuses}
    for before in replicated_jobs(js):
        if before["name"] == rjob["name"]:
            return False
        status = counts.get(before["name"], {})
        if status.get("ready", 0) + status.get("succeeded", 0) < replicas(before):
            return True
    return False


def succeeded(js: Mapping[str, Any], children: Children) -> bool:
    """``successPolicy``: All — every Job of the target replicatedJobs succeeded; Any — one did."""
    policy = (js.get("spec") or {}).get("successPolicy") or {}
    targets = set(policy.get("targetReplicatedJobs") or []) or {r["name"] for r in replicated_jobs(js)}
    done = sum(1 for j in children.successful if _rjob_of(j) in targets)
    if policy.get("operator", "All") == "Any":
        return done >= 1
    return done >= sum(replicas(r) for r in replicated_jobs(js) if r["name"] in targets)


def first_failed(children: Children) -> dict[str, Any]:
    """The failed Job whose Failed condition is oldest (the name breaks ties)."""

    def when(job: dict[str, Any]) -> tuple[str, str]:
        stamp = next(
            (
                c.get("lastTransitionTime", "")
                for c in (job.get("status") or {}).get("conditions") or []
                if c.get("type") == "Failed"
            ),
            "",
        )
        return str(stamp), job["metadata"]["name"]

    return min(children.failed, key=when)


def with_first_failed(message: str, job: str) -> str:
    return f"{message} (first failed job: {job})"


def failure_action(js: Mapping[str, Any], job: Mapping[str, Any]) -> tuple[str, str]:
    """(action, rule name) of the first failure-policy rule matching the failed ``job``; the default
    action is RestartJobSet (``failure_policy.go``)."""
    policy = (js.get("spec") or {}).get("failurePolicy") or {}
    failed: dict[str, Any] = next(
        (c for c in (job.get("status") or {}).get("conditions") or [] if c.get("type") == "Failed"), {}
    )
    for rule in policy.get("rules") or []:
        targets = rule.get("targetReplicatedJobs") or []
        reasons = rule.get("onJobFailureReasons") or []
        if targets and _rjob_of(job) not in targets:
            continue
        if reasons and failed.get("reason") not in reasons:
            continue
        patterns = rule.get("onJobFailureMessagePatterns") or []
        if patterns and not any(_matches(p, str(failed.get("message", ""))) for p in patterns):
            continue
        return str(rule.get("action", "RestartJobSet")), str(rule.get("name", ""))
    return "RestartJobSet", ""


def _matches(pattern: str, text: str) -> bool:
    import re

    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False
