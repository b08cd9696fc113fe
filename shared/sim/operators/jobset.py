"""The JobSet controller: a headless Service and one batch/v1 Job per replicatedJob replica, ordered
by ``dependsOn``/``startupPolicy``, and the JobSet's success, failure, restarts, suspension and TTL.

Level-based like the upstream reconciler (kubernetes-sigs/jobset v0.12.0
``pkg/controllers/jobset_controller.go``): each call re-reads the JobSet and its Jobs (through the
store's owner index) and does what is missing. Decisions are in :mod:`.jobsetjobs`; the pods come
from the simulator's Job controller. A finished JobSet deletes its still-active Jobs (the sshd
workers of an MPI run) and, with ``ttlSecondsAfterFinished``, itself.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from shared.sim.apiserver import apierrors, resources
from shared.sim.apiserver.controllers import kit
from shared.sim.operators import jobsetcrd
from shared.sim.operators import jobsetjobs as rules

logger = logging.getLogger(__name__)

NAME = "jobsets"
GR = (jobsetcrd.GROUP, jobsetcrd.PLURAL)
_JOBS = ("batch", "jobs")
_COMPONENT = "jobset-controller-manager"


class JobSetController:
    def __init__(self, ctx: kit.Context) -> None:
        self.ctx = ctx

    def reset(self) -> None:
        """Nothing cached between syncs."""

    def _resource(self) -> resources.Resource | None:
        return self.ctx.api.table.by_group_resource(*GR)

    def reconcile(self, key: kit.Key) -> None:
        found = self.ctx.live(GR, key)
        if found is None:
            return
        r, entry = found
        js = entry.object()
        jobs = [e.object() for e in self.ctx.owned(entry.uid, _JOBS)]
        children = rules.Children.of(js, [j for j in jobs if (kit.controller_of(j) or {}).get("uid") == entry.uid])
        for job in children.previous:
            self._delete_job(job)
        if rules.finished(js):
            for job in children.active:
                self._delete_job(job)
            self._expire(js, key)
            return
        status = copy.deepcopy(js.get("status") or {})
        status.setdefault("restarts", 0)
        status.setdefault("restartsCountTowardsMax", 0)
        status["replicatedJobsStatus"] = rules.replicated_status(js, children)
        if children.failed:
            self._fail_or_restart(js, children, status)
        elif rules.succeeded(js, children):
            self._finish(js, status, "Completed", *rules.COMPLETED, event="Normal")
        else:
            self._suspend_or_resume(js, children, status)
            self._start(js, children, status)
        self._write(r, js, status)
        if rules.finished({"status": status}):
            for job in children.active:
                self._delete_job(job)

    # -------------------------------------------------------------- outcomes
    def _fail_or_restart(self, js: dict[str, Any], children: rules.Children, status: dict[str, Any]) -> None:
        first = rules.first_failed(children)
        name = first["metadata"]["name"]
        policy = (js.get("spec") or {}).get("failurePolicy")
        if policy is None:
            reason, message = rules.FAILED_JOBS
        else:
            action, _ = rules.failure_action(js, first)
            counts = not action.endswith("IgnoreMaxRestarts")
            if action == "FailJobSet":
                reason, message = rules.FAIL_ACTION
            elif counts and status["restartsCountTowardsMax"] >= int(policy.get("maxRestarts", 0)):
                reason, message = rules.MAX_RESTARTS
            else:
                status["restarts"] += 1
                status["restartsCountTowardsMax"] += 1 if counts else 0
                self.ctx.record(
                    js,
                    type="Warning",
                    reason="Restarting",
                    message=f"restarting jobset, attempt {status['restarts']}",
                    component=_COMPONENT,
                )
                return
        self._finish(js, status, "Failed", reason, rules.with_first_failed(message, name), event="Warning")

    def _finish(
        self, js: dict[str, Any], status: dict[str, Any], kind: str, reason: str, message: str, *, event: str
    ) -> None:
        _set_condition(status, kind, "True", reason, message, self.ctx.api.now())
        status["terminalState"] = kind
        self.ctx.record(js, type=event, reason=reason, message=message, component=_COMPONENT)

    def _suspend_or_resume(self, js: dict[str, Any], children: rules.Children, status: dict[str, Any]) -> None:
        stop = rules.suspended(js)
        now = self.ctx.api.now()
        if stop:
            _set_condition(status, "Suspended", "True", *rules.SUSPENDED, now)
        elif rules.is_true({"status": status}, "Suspended"):
            _set_condition(status, "Suspended", "False", *rules.RESUMED, now)
        jobs_r = self.ctx.resource(*_JOBS)
        for job in children.active:
            if bool((job.get("spec") or {}).get("suspend")) != stop:
                job["spec"]["suspend"] = stop
                self.ctx.update(jobs_r, job)

    def _start(self, js: dict[str, Any], children: rules.Children, status: dict[str, Any]) -> None:
        """The headless Service, then every Job not there yet whose ordering allows it."""
        ns = js["metadata"]["namespace"]
        if rules.dns_hostnames(js) and self.ctx.store.get(("", "services"), ns, rules.subdomain(js)) is None:
            self._create(self.ctx.resource("", "services"), ns, rules.headless_service(js))
        statuses = status["replicatedJobsStatus"]
        existing = children.names()
        jobs_r = self.ctx.resource(*_JOBS)
        for rjob in rules.replicated_jobs(js):
            if not rules.dependencies_met(js, rjob, statuses) or rules.in_order_blocked(js, rjob, statuses):
                continue
            for index in range(rules.replicas(rjob)):
                if rules.job_name(js["metadata"]["name"], rjob["name"], index) not in existing:
                    self._create(jobs_r, ns, rules.child_job(js, rjob, index))

    # -------------------------------------------------------------- writes
    def _create(self, r: resources.Resource, ns: str, body: dict[str, Any]) -> None:
        try:
            self.ctx.create(r, ns, body)
        except apierrors.ApiError as exc:
            logger.debug("jobset: %s %s/%s not created: %s", r.plural, ns, body["metadata"]["name"], exc)

    def _delete_job(self, job: dict[str, Any]) -> None:
        if job["metadata"].get("deletionTimestamp"):
            return
        md = job["metadata"]
        try:
            self.ctx.api.delete(
                self.ctx.resource(*_JOBS), md["namespace"], md["name"], {"propagationPolicy": "Foreground"}
            )
        except apierrors.ApiError as exc:
            logger.debug("jobset: job %s/%s not deleted: %s", md["namespace"], md["name"], exc)

    def _write(self, r: resources.Resource, js: dict[str, Any], status: dict[str, Any]) -> None:
        status = kit.without_zeros(status)  # restarts, terminalState … are omitempty
        if status != (js.get("status") or {}):
            self.ctx.write_status(r, js, status)

    def _expire(self, js: dict[str, Any], key: kit.Key) -> None:
        """``ttlSecondsAfterFinished``: delete the finished JobSet that long after its terminal condition."""
        ttl = (js.get("spec") or {}).get("ttlSecondsAfterFinished")
        ended = rules.condition(js, "Completed") or rules.condition(js, "Failed") or {}
        since = kit.epoch(ended.get("lastTransitionTime"))
        if ttl is None or since is None:
            return
        due = since + int(ttl)
        if self.ctx.now() < due:
            self.ctx.later(NAME, key, due)
            return
        r = self._resource()
        if r is not None:
            self.ctx.delete(r, key[0], key[1], js["metadata"]["uid"])


def _set_condition(status: dict[str, Any], kind: str, value: str, reason: str, message: str, now: str) -> None:
    """JobSet's ``updateCondition``: a new type is added only when True; an existing one changes only
    when its status flips."""
    conditions = status.setdefault("conditions", [])
    for i, current in enumerate(conditions):
        if current.get("type") == kind:
            if current.get("status") != value:
                conditions[i] = _condition(kind, value, reason, message, now)
            return
    if value == "True":
        conditions.append(_condition(kind, value, reason, message, now))


def _condition(kind: str, value: str, reason: str, message: str, now: str) -> dict[str, str]:
    return {"type": kind, "status": value, "reason": reason, "message": message, "lastTransitionTime": now}
