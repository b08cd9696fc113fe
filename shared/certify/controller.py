"""``nvcrectl controller``: the in-cluster runner of Certifications and WorkloadRuns, with leader election.

Level-based: every pass lists the Certifications of its namespace and moves each unfinished one
by one ``runner.step``; the objects' status is the whole memory, so a pass after a restart (or on
another replica) continues exactly where the last one stopped. Two leases keep it safe:

- a leader Lease (``LEADER_LEASE``): of several controller replicas only the holder reconciles;
- the run's own Lease, named after the Certification, the one ``run --wait`` holds: the controller
  steps a run only while it holds that lease, so it never races a CLI runner, and it takes over a
  run whose holder (CLI or controller) stopped renewing once that lease expires. WorkloadRuns
  follow the same model with their own Lease (``workload.lease_name``).

The loop is ``shared.kube.leaderloop.LeaderLoop`` with ``leasing.SETTINGS``; time comes from the
cluster's clock, so it runs in the simulated cluster's virtual time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from shared import clock, errors, metrics
from shared.certify import leasing, models, resource, runner, workload
from shared.kube import events as kube_events
from shared.kube import leases, listing
from shared.kube.api import KubeApi
from shared.kube.leaderloop import LeaderLoop

logger = logging.getLogger(__name__)

LEADER_LEASE = "nvcrectl-controller"
COMPONENT = "nvcrectl-controller"
"""The component of the Events it records on Certifications."""

RUNS = metrics.counter(
    "nvcrectl_certifications_total", "Certifications this controller ran to a verdict, by phase.", ["phase"]
)
DURATION = metrics.histogram(
    "nvcrectl_certification_duration_seconds",
    "Cluster seconds from a Certification's start to its verdict, by phase.",
    ["phase"],
)
STEPS = metrics.counter("nvcrectl_reconcile_steps_total", "Runner steps taken on Certifications.")
STEP_ERRORS = metrics.counter("nvcrectl_step_errors_total", "Runner steps that failed and will be retried.")
PASS_ERRORS = metrics.counter("nvcrectl_pass_errors_total", "Controller passes that failed and were retried.")
UNREADABLE = metrics.counter(
    "nvcrectl_unreadable_objects_total", "Certifications and WorkloadRuns skipped because they do not parse."
)
LEADER = metrics.gauge("nvcrectl_leader", "1 while this replica holds the controller Lease.")


def _seconds_between(start: str | None, end: str | None) -> float | None:
    try:
        return (
            datetime.fromisoformat(str(end).replace("Z", "+00:00"))
            - datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        ).total_seconds()
    except ValueError:
        return None


@dataclass
class Controller:
    """One replica: ``reconcile`` is one pass; ``run`` loops until ``stop`` is set."""

    api: KubeApi
    namespace: str
    identity: str
    clock: clock.Clock = field(default=clock.WALL)
    holding: set[str] = field(default_factory=set)
    """Runs whose lease this replica holds, released when it stops."""
    events: kube_events.Recorder | None = None
    """Its Event recorder (one per replica, so repeats aggregate); made in ``__post_init__`` when not given."""
    seen: leases.Observer = field(default_factory=leasing.observer)
    """The run Leases it saw others hold, so it takes one over only after a real-time minimum too."""
    unreadable: set[listing.Skipped] = field(default_factory=set)
    """The objects it warned about as unreadable, so each is named once, not every pass."""

    def __post_init__(self) -> None:
        if self.events is None:
            self.events = kube_events.Recorder(self.api, component=COMPONENT, now=self.clock.now)

    def leader(self) -> bool:
        return self._take(LEADER_LEASE)

    def _take(self, lease: str) -> bool:
        duration = leasing.SETTINGS.lease_seconds
        return leases.try_acquire(
            self.api,
            self.namespace,
            lease,
            identity=self.identity,
            duration=duration,
            now=self.clock.now,
            observer=self.seen,
        )

    def reconcile(self) -> list[str]:
        """Take or renew the leader Lease and, when it is ours, one pass (``reconcile_leading``)."""
        leading = self.leader()
        LEADER.set(1 if leading else 0)
        return self.reconcile_leading() if leading else []

    def reconcile_leading(self) -> list[str]:
        """One pass over the unfinished Certifications and WorkloadRuns; returns what each step did."""
        notes = []
        try:
            found = resource.list_readable(self.api, self.namespace)
        except errors.NotFound:
            found = listing.Listing()  # the Certification CRD is not installed: only WorkloadRuns to run
        self._warn_unreadable(found.skipped)
        certs = found.items
        for cert in certs:
            if cert.status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED):
                self._let_go(cert.name)
                continue
            if not self._take(cert.name):
                continue  # someone (run --wait, another replica) holds it; taken over when it expires
            self.holding.add(cert.name)
            try:
                progress = runner.step(
                    self.api, namespace=self.namespace, name=cert.name, clock=self.clock, events=self.events
                )
            except errors.NotFound:
                self._let_go(cert.name)  # deleted while we looked
                continue
            except errors.Unavailable as exc:  # a conflict or a flaky API: the next pass retries
                STEP_ERRORS.inc()
                logger.warning("step of %s failed: %s", cert.name, exc, extra={"subject": cert.name})
                continue
            STEPS.inc()
            notes.append(f"{cert.name}: {progress.note}")
            if progress.done:
                self._record_verdict(cert.name, progress.phase)
                self._let_go(cert.name)
        return notes + self._reconcile_workloads()

    def _reconcile_workloads(self) -> list[str]:
        """One step of every unfinished WorkloadRun whose Lease this replica holds or can take."""
        try:
            readable = workload.list_readable(self.api, self.namespace)
        except errors.NotFound:
            return []  # the WorkloadRun CRD is not installed: nothing to run
        self._warn_unreadable(readable.skipped)
        notes = []
        for found in readable.items:
            lease = workload.lease_name(found.name)
            if workload.finished(found):
                self._let_go(lease)
                continue
            if not self._take(lease):
                continue
            self.holding.add(lease)
            try:
                done = workload.step(self.api, namespace=self.namespace, name=found.name, clock=self.clock)
            except errors.NotFound:
                self._let_go(lease)
                continue
            except errors.Unavailable as exc:
                STEP_ERRORS.inc()
                logger.warning("step of workloadrun %s failed: %s", found.name, exc, extra={"subject": found.name})
                continue
            STEPS.inc()
            notes.append(f"workloadrun {found.name}: {done.status.phase or 'Pending'}: {done.status.message or ''}")
            if workload.finished(done):
                self._let_go(lease)
        return notes

    def _warn_unreadable(self, skipped: list[listing.Skipped]) -> None:
        """One warning per object that does not parse (stored under an older CRD, or written by hand),
        once per problem, not every pass: the others still run, as kubectl still lists them."""
        for item in skipped:
            if item not in self.unreadable:
                self.unreadable.add(item)
                UNREADABLE.inc()
                logger.warning("skipping %s: %s", item.what, item.reason, extra={"subject": item.what})

    def _record_verdict(self, name: str, phase: str | None) -> None:
        label = str(phase or "Unknown")
        RUNS.inc(phase=label)
        try:
            done, _ = resource.get(self.api, self.namespace, name)
        except errors.ToolError:
            return
        seconds = _seconds_between(done.status.startTime, done.status.completionTime)
        if seconds is not None:
            DURATION.observe(seconds, phase=label)

    def loop(self, on_note: Callable[[str], None] | None = None) -> LeaderLoop:
        """This replica on the leader loop: the leader Lease, a pass every ``poll_seconds`` of cluster
        time, the run Leases it holds given up on stop."""
        say = on_note or logger.info

        def one_pass() -> None:
            for note in self.reconcile_leading():
                say(note)

        return LeaderLoop.of(
            self,
            lease=LEADER_LEASE,
            settings=leasing.SETTINGS,
            reconcile=one_pass,
            on_leading=lambda leading: LEADER.set(1 if leading else 0),
            on_error=_failed_pass,
            on_stop=self.let_go_of_runs,
        )

    def run(self, stop: threading.Event, on_note: Callable[[str], None] | None = None) -> None:
        """Lead and reconcile until ``stop``; give every Lease up at the end."""
        self.loop(on_note).run(stop)

    def let_go_of_runs(self) -> None:
        """Give up the Lease of every run this replica holds, so another runner need not wait."""
        for name in sorted(self.holding):
            self._let_go(name)

    def release(self) -> None:
        """Give up the run Leases and the leader Lease (a replica embedded in another loop, stopping)."""
        self.let_go_of_runs()
        leases.release(self.api, self.namespace, LEADER_LEASE, identity=self.identity)

    def _let_go(self, name: str) -> None:
        if name in self.holding:
            leases.release(self.api, self.namespace, name, identity=self.identity)
            self.holding.discard(name)


def serve(
    client: KubeApi,
    *,
    namespace: str,
    stop: threading.Event | None = None,
    on_note: Callable[[str], None] | None = None,
) -> None:
    """Run a replica on this client until ``stop`` is set (or the process is interrupted)."""
    replica = Controller(client, namespace, leasing.identity(), clock.for_api_client(client))
    (on_note or logger.info)(
        f"controller {replica.identity}: reconciling certifications and workloadruns in {namespace}"
    )
    replica.run(stop or threading.Event(), on_note)


def _failed_pass(exc: errors.ToolError) -> None:
    PASS_ERRORS.inc()
    logger.warning("pass failed, retrying: %s", exc.line())
