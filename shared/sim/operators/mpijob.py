"""The MPI Operator's controller: an MPIJob's Service, ConfigMap, Secret, worker Pods and launcher Job,
created in that order each sync until the launcher finishes, and the MPIJob's status.

kubeflow/mpi-operator v0.8.0 ``pkg/controller/mpi_job_controller.go`` ``syncHandler`` and
``updateMPIJobStatus`` (research/workloads.md §3.2–3.3). The launcher Job alone decides the outcome:
Complete → ``Succeeded`` (MPIJobSucceeded), Failed → ``Failed`` with the Job's reason and message
(``BackoffLimitExceeded/<pod reason>`` and ``: <pod message>`` from the last failed launcher pod).
An evicted worker fails the MPIJob (``MPIJobEvicted``, ``<n>/<total> workers are evicted``); other
worker failures show only through mpirun failing in the launcher. ``Running`` needs a Running
launcher pod and every worker Running. An invalid MPIJob gets a ``ValidationError`` Event and nothing else.
"""

from __future__ import annotations

import logging
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.controllers import kit
from shared.sim.operators import mpicrd, mpispec, webhooks

logger = logging.getLogger(__name__)

NAME = "mpijobs"
GR = (mpicrd.GROUP, mpicrd.PLURAL)
_PODS, _JOBS = ("", "pods"), ("batch", "jobs")
_COMPONENT = "mpi-job-controller"


def _conditions_true(status: dict[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def _set(status: dict[str, Any], kind: str, value: str, reason: str, message: str, now: str) -> bool:
    """mpi-operator's ``setCondition``: nothing after Failed; Succeeded/Failed turn Running (and an
    earlier Failed) False; the transition time is kept while the status stays."""
    conditions = list(status.get("conditions") or [])
    if _conditions_true(status, "Failed"):
        return False
    current = next((c for c in conditions if c.get("type") == kind), None)
    if current is not None and current.get("status") == value and current.get("reason") == reason:
        return False
    since = current["lastTransitionTime"] if current is not None and current.get("status") == value else now
    kept = []
    for c in conditions:
        if c.get("type") == kind or {kind, c.get("type")} == {"Running", "Restarting"}:
            continue
        if kind in ("Failed", "Succeeded") and c.get("type") in ("Running", "Failed"):
            c = {**c, "status": "False"}
        kept.append(c)
    new = {
        "type": kind,
        "status": value,
        "reason": reason,
        "message": message,
        "lastUpdateTime": now,
        "lastTransitionTime": since,
    }
    status["conditions"] = [*kept, new]
    return True


class MPIJobController:
    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx

    def reset(self) -> None:
        """Nothing cached between syncs."""

    def reconcile(self, key: kit.Key) -> None:
        found = self.ctx.live(GR, key)
        if found is None:
            return
        r, entry = found
        stored = entry.object()
        job = mpispec.defaulted(stored)
        errors = mpispec.validation_errors(job)
        if errors:
            message = f"Found validation errors: {webhooks.aggregate(errors)}"[:1024]
            self._event(stored, "Warning", "ValidationError", message)
            return
        status: dict[str, Any] = dict(stored.get("status") or {})
        now = self.ctx.api.now()
        if not status.get("conditions"):
            message = f"MPIJob {_who(job)} is created."
            _set(status, "Created", "True", "MPIJobCreated", message, now)
            self._event(stored, "Normal", "MPIJobCreated", message)
        policy = job["spec"]["runPolicy"]
        finished = _conditions_true(status, "Succeeded") or _conditions_true(status, "Failed")
        if finished and status.get("completionTime"):
            if policy.get("cleanPodPolicy") in ("All", "Running"):
                self._delete_workers(job, running_only=policy["cleanPodPolicy"] == "Running")
                status["replicaStatuses"] = {**(status.get("replicaStatuses") or {}), mpispec.WORKER: {}}
            self._write(r, stored, status)
            return
        suspended = bool(policy.get("suspend"))
        if not status.get("startTime") and not suspended:
            status["startTime"] = now
        launcher, workers = self._children(job, suspended=suspended)
        self._suspension(stored, status, suspended, now)
        self._launcher_status(stored, job, status, launcher, now)
        self._worker_status(stored, job, status, launcher, workers, now)
        self._write(r, stored, status)

    def _children(self, job: dict[str, Any], *, suspended: bool) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """Service, ConfigMap, Secret, workers and launcher, each created when missing, until the
        launcher has finished; then the launcher's suspension made the MPIJob's."""
        md = job["metadata"]
        launcher = self._launcher(job)
        workers: list[dict[str, Any]] = []
        if launcher is None or _job_finished(launcher) is None:
            self._ensure(("", "services"), job, mpispec.service(job))
            self._keep_config(job)
            if self.ctx.store.get(("", "secrets"), md["namespace"], f"{md['name']}-ssh") is None:
                self._create(("", "secrets"), job, mpispec.ssh_secret(job))
            if not suspended:
                workers = self._workers(job)
            at_startup = job["spec"]["launcherCreationPolicy"] == "AtStartup"
            if launcher is None and (at_startup or all(_ready(w) for w in workers)):
                launcher = self._create(_JOBS, job, mpispec.launcher_job(job))
        if launcher is not None and bool((launcher.get("spec") or {}).get("suspend")) != suspended:
            launcher["spec"]["suspend"] = suspended
            self.ctx.update(self.ctx.resource(*_JOBS), launcher)
        if suspended:
            self._delete_workers(job, running_only=False)
        return launcher, workers

    # -------------------------------------------------------------- children
    def _owned(self, gr: tuple[str, str], ns: str, name: str, uid: str) -> dict[str, Any] | None:
        found = self.ctx.store.get(gr, ns, name)
        if found is None:
            return None
        obj = found.object()
        return obj if (kit.controller_of(obj) or {}).get("uid") == uid else None

    def _create(self, gr: tuple[str, str], job: dict[str, Any], body: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return self.ctx.create(self.ctx.resource(*gr), job["metadata"]["namespace"], body)
        except apierrors.ApiError as exc:
            logger.debug("mpijob: %s %s not created: %s", gr[1], body["metadata"]["name"], exc)
            return None

    def _ensure(self, gr: tuple[str, str], job: dict[str, Any], body: dict[str, Any]) -> None:
        if self.ctx.store.get(gr, job["metadata"]["namespace"], body["metadata"]["name"]) is None:
            self._create(gr, job, body)

    def _keep_config(self, job: dict[str, Any]) -> None:
        md = job["metadata"]
        running = [
            p.name
            for p in self.ctx.pods_of(md["uid"])
            if p.phase == "Running" and p.labels.get(mpispec.JOB_ROLE) == "worker"
        ]
        wanted = mpispec.config_map(job, mpispec.config_data(job, running))
        current = self._owned(("", "configmaps"), md["namespace"], wanted["metadata"]["name"], md["uid"])
        if current is None:
            self._ensure(("", "configmaps"), job, wanted)
        elif current.get("data") != wanted["data"]:
            current["data"] = wanted["data"]
            self.ctx.update(self.ctx.resource("", "configmaps"), current)

    def _workers(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        md = job["metadata"]
        out = []
        for index in range(mpispec.worker_count(job)):
            name = mpispec.worker_name(job, index)
            found = self.ctx.store.get(_PODS, md["namespace"], name)
            pod = found.object() if found is not None else self._create(_PODS, job, mpispec.worker_pod(job, index))
            if pod is not None:
                out.append(pod)
        return out

    def _delete_workers(self, job: dict[str, Any], *, running_only: bool) -> None:
        md = job["metadata"]
        for index in range(mpispec.worker_count(job)):
            pod = self._owned(_PODS, md["namespace"], mpispec.worker_name(job, index), md["uid"])
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                continue
            if running_only and (pod.get("status") or {}).get("phase") not in ("Running", "Pending", None):
                continue
            self.ctx.delete(self.ctx.resource(*_PODS), md["namespace"], pod["metadata"]["name"])

    def _launcher(self, job: dict[str, Any]) -> dict[str, Any] | None:
        md = job["metadata"]
        return self._owned(_JOBS, md["namespace"], mpispec.launcher_name(job), md["uid"])

    # -------------------------------------------------------------- status
    def _suspension(self, stored: dict[str, Any], status: dict[str, Any], suspended: bool, now: str) -> None:
        if suspended:
            if _set(status, "Suspended", "True", "MPIJobSuspended", "MPIJob suspended", now):
                self._event(stored, "Normal", "MPIJobSuspended", "MPIJob suspended")
        elif any(c.get("type") == "Suspended" for c in status.get("conditions") or []) and _set(
            status, "Suspended", "False", "MPIJobResumed", "MPIJob resumed", now
        ):
            self._event(stored, "Normal", "MPIJobResumed", "MPIJob resumed")
            status["startTime"] = now

    def _launcher_pods(self, launcher: dict[str, Any] | None) -> list[dict[str, Any]]:
        if launcher is None:
            return []
        return [e.object() for e in self.ctx.owned(launcher["metadata"]["uid"], _PODS)]

    def _launcher_status(
        self,
        stored: dict[str, Any],
        job: dict[str, Any],
        status: dict[str, Any],
        launcher: dict[str, Any] | None,
        now: str,
    ) -> None:
        """The launcher Job decides: Complete → Succeeded, Failed → Failed with its reason."""
        replicas = dict(status.get("replicaStatuses") or {})
        replicas.pop(mpispec.LAUNCHER, None)
        if launcher is not None:
            pods = self._launcher_pods(launcher)
            counts = {"failed": int((launcher.get("status") or {}).get("failed", 0))}
            outcome = _job_finished(launcher)
            if outcome == "Complete":
                counts["succeeded"] = 1
                message = f"MPIJob {_who(job)} successfully completed."
                self._event(stored, "Normal", "MPIJobSucceeded", message)
                status.setdefault("completionTime", (launcher.get("status") or {}).get("completionTime") or now)
                _set(status, "Succeeded", "True", "MPIJobSucceeded", message, now)
            elif outcome == "Failed":
                reason, message = _failure(launcher, pods, _who(job))
                self._event(stored, "Warning", reason, message)
                status.setdefault("completionTime", now)
                _set(status, "Failed", "True", reason, message, now)
            else:
                counts["active"] = _running(pods)
            replicas[mpispec.LAUNCHER] = {k: v for k, v in counts.items() if v}
        status["replicaStatuses"] = replicas

    def _worker_status(
        self,
        stored: dict[str, Any],
        job: dict[str, Any],
        status: dict[str, Any],
        launcher: dict[str, Any] | None,
        workers: list[dict[str, Any]],
        now: str,
    ) -> None:
        """Worker counts; an evicted worker fails the MPIJob; Running once launcher and workers run."""
        phases = [(w.get("status") or {}).get("phase") for w in workers]
        counts = {
            "active": phases.count("Running"),
            "failed": phases.count("Failed"),
            "succeeded": phases.count("Succeeded"),
        }
        status["replicaStatuses"][mpispec.WORKER] = {k: v for k, v in counts.items() if v}
        evicted = sum(
            1
            for w in workers
            if (w.get("status") or {}).get("phase") == "Failed" and (w.get("status") or {}).get("reason") == "Evicted"
        )
        if evicted:
            message = f"{evicted}/{len(workers)} workers are evicted"
            _set(status, "Failed", "True", "MPIJobEvicted", message, now)
            self._event(stored, "Warning", "MPIJobEvicted", message)
        if job["spec"]["runPolicy"].get("suspend"):
            _set(status, "Running", "False", "MPIJobSuspended", f"MPIJob {_who(job)} is suspended.", now)
        elif (
            launcher is not None
            and _running(self._launcher_pods(launcher)) >= 1
            and counts["active"] == len(workers)
            and _set(status, "Running", "True", "MPIJobRunning", f"MPIJob {_who(job)} is running.", now)
        ):
            self._event(stored, "Normal", "MPIJobRunning", f"MPIJob {_who(job)} is running")

    def _event(self, obj: dict[str, Any], kind: str, reason: str, message: str) -> None:
        self.ctx.record(obj, type=kind, reason=reason, message=message, component=_COMPONENT)

    def _write(self, r: Any, stored: dict[str, Any], status: dict[str, Any]) -> None:
        status = {k: v for k, v in status.items() if v not in (None, [], {})}
        if status != (stored.get("status") or {}):
            self.ctx.write_status(r, stored, status)


def _job_finished(job: dict[str, Any]) -> str | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def _who(job: dict[str, Any]) -> str:
    return f"{job['metadata']['namespace']}/{job['metadata']['name']}"


def _running(pods: list[dict[str, Any]]) -> int:
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _failure(launcher: dict[str, Any], pods: list[dict[str, Any]], who: str) -> tuple[str, str]:
    """``updateMPIJobFailedStatus``: the launcher Job's Failed reason and message, with the last failed
    launcher pod's reason and message appended after BackoffLimitExceeded."""
    failed: dict[str, Any] = next(
        (c for c in (launcher.get("status") or {}).get("conditions") or [] if c.get("type") == "Failed"), {}
    )
    reason = str(failed.get("reason") or "MPIJobFailed")
    message = str(failed.get("message") or f"MPIJob {who} has failed")
    if reason == "BackoffLimitExceeded":
        dead = [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]
        if dead:
            last = max(dead, key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
            reason += "/" + str((last.get("status") or {}).get("reason") or "")
            message = (message + ": " + str((last.get("status") or {}).get("message") or ""))[:1024]
    return reason, message
