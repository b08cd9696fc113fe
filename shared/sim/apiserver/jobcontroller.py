"""The Job controller's writes: create the pods a Job needs, delete what a failed Job leaves, and
keep the Job's status, in virtual time (backoff after failures, ``activeDeadlineSeconds``).

Level-based: ``reconcile`` re-reads the Job and its pods (through the store's owner index) every
time, so calling it twice does nothing twice. Decisions are in :mod:`shared.sim.apiserver.jobs`.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime
from typing import Any

from shared.sim.apiserver import apierrors, jobs, patchtypes
from shared.sim.apiserver.host import JobHost

logger = logging.getLogger(__name__)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class JobController:
    def __init__(self, sim: JobHost) -> None:
        self.sim = sim
        self._timers: set[tuple[str, str, float]] = set()

    def reset(self) -> None:
        self._timers.clear()

    def _later(self, key: tuple[str, str], when: float) -> None:
        """Look at the Job again at virtual time ``when`` (once per Job and moment)."""
        mark = (key[0], key[1], round(when, 3))
        if mark in self._timers:
            return
        self._timers.add(mark)

        def again() -> None:
            self._timers.discard(mark)
            self.sim.kubelet.dirty_jobs.add(key)

        self.sim.vclock.call_at(when, again)

    def _pods(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        found = []
        for gr, (ns, name) in self.sim.store.dependents(job["metadata"]["uid"]):
            if gr == ("", "pods"):
                entry = self.sim.store.get(gr, ns, name)
                if entry is not None:
                    found.append(entry.object())
        return found

    def _suffix(self) -> str:
        return "".join(self.sim.api.rng.choice(_ALPHABET) for _ in range(5))

    def reconcile(self, key: tuple[str, str]) -> None:
        job_r = self.sim.table.by_group_resource("batch", "jobs")
        pods_r = self.sim.table.by_group_resource("", "pods")
        assert job_r is not None and pods_r is not None
        entry = self.sim.store.get(job_r.group_resource, *key)
        if entry is None:
            return
        job = entry.object()
        if job["metadata"].get("deletionTimestamp"):
            return
        census = jobs.Census.of(self._pods(job))
        done = jobs.finished(job)
        if done is not None:
            if done == "Failed":
                for pod in census.active:
                    self._delete(pods_r, pod)
            return
        self._stop_if_suspended(job, census, pods_r)
        now = self.sim.vclock.time()
        decided = jobs.verdict(job, census, deadline_passed=self._deadline_passed(job, key, now))
        if decided is not None and decided[0] == "Failed":
            for pod in census.active:
                self._delete(pods_r, pod)
            census.active = []
        elif decided is None:
            self._create(job, census, pods_r, key, now)
        status = jobs.status(job, census, now=self.sim.api.now(), decided=decided)
        if status != {k: v for k, v in (job.get("status") or {}).items()}:
            self.sim.api.patch(
                job_r,
                key[0],
                key[1],
                patchtypes.JSON_PATCH,
                [{"op": "add", "path": "/status", "value": status}],
                sub="status",
            )

    def _stop_if_suspended(self, job: dict[str, Any], census: jobs.Census, pods_r: Any) -> None:
        """A suspended Job's pods are terminated (new ones are made when it is resumed)."""
        if (job.get("spec") or {}).get("suspend"):
            for pod in census.active:
                self._delete(pods_r, pod)
            census.active = []

    def _deadline_passed(self, job: dict[str, Any], key: tuple[str, str], now: float) -> bool:
        """Whether ``activeDeadlineSeconds`` has run out; if not yet, look again when it does."""
        started = (job.get("status") or {}).get("startTime")
        deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
        if deadline is None or not started:
            return False
        due = _epoch(started) + float(deadline)
        if now < due:
            self._later(key, due)
        return now >= due

    def _create(self, job: dict[str, Any], census: jobs.Census, pods_r: Any, key: tuple[str, str], now: float) -> None:
        indexes = jobs.wanted_indexes(job, census)
        if not indexes:
            return
        failures = len(census.failed)
        if failures:
            last = max((_finished_at(p) for p in census.failed), default=now)
            ready_at = last + jobs.backoff(failures)
            if ready_at > now:
                self._later(key, ready_at)
                return
        for index in indexes:
            pod = jobs.pod_for(job, index, self._suffix())
            try:
                self.sim.api.create(pods_r, key[0], pod)
            except apierrors.ApiError as exc:
                logger.debug("job %s/%s: pod not created: %s", *key, exc)

    def _delete(self, pods_r: Any, pod: dict[str, Any]) -> None:
        with contextlib.suppress(apierrors.ApiError):
            self.sim.api.delete(
                pods_r, pod["metadata"]["namespace"], pod["metadata"]["name"], {"propagationPolicy": "Background"}
            )


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _finished_at(pod: dict[str, Any]) -> float:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        finished = ((status.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if finished:
            return _epoch(finished)
    return 0.0
