"""The fault-quarantine controller: HealthEvent objects in, node conditions and quarantine out.

Level-based and resumable (STYLE rule 5): a pass lists the HealthEvents without ``status.phase``,
groups them by node, and processes each node's events in order (generatedTimestamp, then name) on
a pool of workers — ordered per node, parallel across nodes. Each event: condition or Event, then
the quarantine step inside one conflict-safe node update, a Kubernetes Event about what it did to
the node (``shared.health.kevents``), then the outcome in ``status``. Killed
between the node write and the status write, the next run redoes the event, finds its cause already
recorded and changes nothing: no action happens twice. ``run`` puts it on the leader loop
(``shared.kube.leaderloop``: a Lease, and a watch of HealthEvents between passes, ``SETTINGS``);
only the leader acts. Nodes run on
``nvsentinel.workers`` threads with the circuit breaker enabled too: a node's first quarantine
reserves a breaker slot before the node write and releases it when the write fails or is not
needed, so the breaker's count stays exact; the pass hands the breaker its node order (first
event first), so which nodes get its last slots is what one-at-a-time processing — and ``rules
replay`` — gives, whatever the thread timing.
"""

from __future__ import annotations

import collections
import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast

from shared import clock, errors, metrics, nodes
from shared.health import analyzer, conditions, config, followup, garbage, kevents, notify, quarantine, resource
from shared.health import breaker as hbreaker
from shared.health import event as hevent
from shared.kube import errors as kube_errors
from shared.kube import events as kube_events
from shared.kube import informer, rest
from shared.kube.api import KubeApi
from shared.kube.leaderloop import ControllerSettings, LeaderLoop, Watch

logger = logging.getLogger(__name__)

LEASE_NAME = "nvsentinel-fault-quarantine"
SETTINGS = ControllerSettings(lease_seconds=15, watch_seconds=1, standby_seconds=1.0, retry_seconds=0.5)
"""Quarantine must answer a fault within seconds, so: a 15-second Lease (a dead leader is replaced
quickly), a watch that wakes the loop on any unprocessed HealthEvent (a watch of one second, so a
stop or a lost Lease is noticed within a second), a standby that tries the Lease every real second,
and a failed pass retried after half a second."""
GAUGE_REFRESH_SECONDS = 30.0
"""Quarantined-node and breaker gauges are re-read after a pass that processed events, else this often."""

EVENTS = metrics.counter("nvsentinel_events_processed_total", "HealthEvents processed, by outcome phase.", ["phase"])
HEALTH_EVENTS = metrics.counter(
    "nvsentinel_health_events_total",
    "HealthEvents the controller took up, by agent, check and fatal (true, false).",
    ["agent", "check", "fatal"],
)
EVALUATIONS = metrics.counter(
    "nvsentinel_rule_evaluations_total",
    "Rule-set evaluations of unhealthy events, by result (matched, not_matched).",
    ["result"],
)
EVAL_ERRORS = metrics.counter(
    "nvsentinel_rule_evaluation_errors_total",
    "CEL rules that failed to evaluate (counted as not matching), by rule set name.",
    ["rule_set"],
)
QUARANTINE_ACTIONS = metrics.counter(
    "nvsentinel_quarantine_actions_total",
    "Quarantine decisions that changed a node or were refused, by action "
    "(enforced: cordon or taints, recorded: monitor mode, released, blocked: the breaker refused).",
    ["action"],
)
EVENT_TO_CORDON = metrics.histogram(
    "nvsentinel_event_to_cordon_seconds",
    "Cluster seconds from a HealthEvent's generatedTimestamp to the node write that cordoned the node.",
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800),
)
PASS_ERRORS = metrics.counter("nvsentinel_pass_errors_total", "Controller passes that failed and were retried.")
QUARANTINED = metrics.gauge("nvsentinel_quarantined_nodes", "Nodes holding at least one nvsentinel cause.")
GPU_NODES = metrics.gauge("nvsentinel_gpu_nodes", "Nodes carrying the GPU node label (the breaker's fleet).")
BREAKER = metrics.gauge(
    "nvsentinel_breaker_state",
    "The circuit breaker's state: 1 on the current state's series, 0 on the other.",
    ["state"],
)
BREAKER_RECENT = metrics.gauge(
    "nvsentinel_breaker_recent_quarantines", "Unique nodes quarantined within the breaker's window."
)
BREAKER_THRESHOLD = metrics.gauge(
    "nvsentinel_breaker_threshold", "Quarantines within the window that trip the breaker (its binding bound)."
)
FOLLOWUPS = metrics.counter(
    "nvsentinel_followup_outcomes_total",
    "Drain and remediation states reached by quarantining events, by step (drain, remediation) and state.",
    ["step", "state"],
)
ANALYZER_EVENTS = metrics.counter(
    "nvsentinel_analyzer_events_total",
    "Derived HealthEvents the health-events analyzer published, by check.",
    ["check"],
)
LEADER = metrics.gauge("nvsentinel_leader", "1 while this replica holds the fault-quarantine Lease.")
BREAKER_STATES = (hbreaker.CLOSED, hbreaker.TRIPPED)
WATCH_RESTARTS = metrics.watch_restarts("nvsentinel")
"""Reasons: ``dropped`` (cut mid-stream, resumed from the last resourceVersion), ``expired`` (410: listed again)."""


class _CountingEngine:
    """The rule engine, counting each decision into the metrics; everything else is delegated."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._names = [rs.spec.name for rs in getattr(inner, "rule_sets", [])]

    def decide(self, event_value: Any, node: dict[str, Any] | None) -> Any:
        decision = self._inner.decide(event_value, node)
        EVALUATIONS.inc(result="matched" if decision.matched else "not_matched")
        for problem in decision.errors:
            EVAL_ERRORS.inc(rule_set=self._rule_set_of(problem))
        return decision

    def _rule_set_of(self, problem: str) -> str:
        """An evaluation error reads ``<rule set name>: <message>``; the longest name that fits wins."""
        fits = [n for n in self._names if problem.startswith(f"{n}: ")]
        return max(fits, key=len) if fits else "unknown"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Slot:
    """The breaker as one event's quarantine step sees it: remembers a slot it newly reserved.

    ``nodes.update`` may run the step several times (409s); the first admission is kept, so the
    retries neither reserve twice nor lose the slot."""

    def __init__(self, inner: hbreaker.ConfigMapBreaker) -> None:
        self.inner = inner
        self.node: str | None = None

    def allow(self, node: str) -> bool:
        if self.node == node:
            return True
        admission = self.inner.reserve(node)
        if admission.new:
            self.node = node
        return admission.admitted

    def release(self) -> None:
        if self.node is not None:
            self.inner.release(self.node)
            self.node = None


@dataclass
class PassResult:
    """What one pass did, by outcome phase."""

    phases: dict[str, int] = field(default_factory=dict)
    followups: dict[str, int] = field(default_factory=dict)
    """Drain and remediation states reached this pass (``drain:Succeeded``, ``remediation:InProgress``)."""

    @property
    def processed(self) -> int:
        return sum(self.phases.values())


QUARANTINE_ROUNDS = 4
"""Quarantine passes over newly arrived events before the drain and remediation step of a pass."""


class Controller:
    def __init__(
        self,
        api: KubeApi,
        cfg: config.Config,
        *,
        namespace: str,
        clk: clock.Clock,
        identity: str | None = None,
        node_cache: informer.Informer | None = None,
    ) -> None:
        """``node_cache``: the process's node informer (``shared.kube.informer``), which the gauges and
        the garbage collection read instead of listing every node; without one they list."""
        self.api = api
        self.node_cache = node_cache
        if node_cache is not None:
            garbage.index_nodes(node_cache)
        self.cfg = cfg
        self.namespace = namespace
        self.clock = clk
        self.identity = identity or f"{socket.gethostname()}-{id(self):x}"
        fq = cfg.fq
        self.breaker = hbreaker.ConfigMapBreaker(
            api,
            namespace=namespace,
            settings=fq.circuitBreaker,
            gpu_node_label=fq.gpuNodeLabel,
            now=clk.now,
            node_cache=node_cache,
        )
        self.quarantiner = quarantine.Quarantiner(
            engine=cast(Any, _CountingEngine(cfg.engine)),
            dry_run=cfg.dry_run,
            label_prefix=fq.labelPrefix,
            skip_labels=[(s.key, s.value) for s in fq.skipNodeLabels],
            breaker=self.breaker,
            now=clk.now,
            hand_off=fq.validation.enabled,
        )
        self.notifier = notify.Notifier(cfg.settings.nvsentinel.notifications, now=clk.now)
        self.followup = followup.FollowUp(api, cfg, clk=clk, notifier=self.notifier)
        self.events = kube_events.Recorder(api, component=kevents.QUARANTINE, now=clk.now)
        self.collector = garbage.Collector(api, cfg.settings.nvsentinel, now=clk.now, cache=node_cache)
        self._breaker_announced = False
        self.analyzer = analyzer.Analyzer(cfg.settings.analyzer, now=clk.now)
        self._gauges_at: float | None = None
        self.stopping = threading.Event()
        """Set when the loop is asked to stop: a pass finishes the event in hand and no more."""

    # ------------------------------------------------------------ one pass
    def reconcile_once(self) -> PassResult:
        result = PassResult()
        tried: set[str] = set()
        for _ in range(QUARANTINE_ROUNDS):
            if self.stopping.is_set():
                break
            everything = resource.list_events(self.api)
            pending = [s for s in everything if not s.phase]
            # a node with an event that failed this pass waits for the next pass, keeping its order
            held = {s.event.nodeName for s in pending if s.name in tried}
            fresh = [s for s in pending if s.name not in tried and s.event.nodeName not in held]
            self._analyze(fresh, everything)
            by_node: dict[str, list[resource.Stored]] = collections.defaultdict(list)
            for stored in fresh:
                by_node[stored.event.nodeName].append(stored)
                tried.add(stored.name)
            if not by_node:
                break
            # events published during the pass (a storm arrives over seconds) are quarantined
            # before any drain: a cordon protects new work at once, a drain can wait a pass
            self._quarantine_pass(by_node, result)
        result.followups = self.followup.run_once()
        self._announce_breaker(result)
        self.collector.maybe_run()
        for key, count in result.followups.items():
            step, _, state = key.partition(":")
            FOLLOWUPS.inc(count, step=step, state=state)
        self._refresh_gauges(force=result.processed > 0)
        return result

    def _announce_breaker(self, result: PassResult) -> None:
        """One notification when quarantines start being refused, not one per refused node; a pass
        that quarantines again (the breaker let it) makes the next trip worth announcing."""
        blocked = result.phases.get("Blocked", 0)
        if blocked and not self._breaker_announced:
            self._breaker_announced = True
            settings = self.breaker.settings
            self.notifier.notify(
                notify.BREAKER_TRIPPED,
                "circuit-breaker",
                f"circuit breaker TRIPPED: {blocked} quarantine(s) refused this pass "
                f"(limit {settings.threshold(self.breaker.gpu_nodes())} per {settings.duration})",
                refused=blocked,
            )
        elif not blocked and result.phases.get("Quarantined", 0):
            self._breaker_announced = False

    def _refresh_gauges(self, *, force: bool) -> None:
        """Quarantined nodes and breaker state, read back from the cluster (the objects are the truth)."""
        now = time.monotonic()
        if not force and self._gauges_at is not None and now - self._gauges_at < GAUGE_REFRESH_SECONDS:
            return
        if self.node_cache is not None and self.node_cache.starting():
            return  # the informer is listing the nodes: the pass after it has them counts
        self._gauges_at = now
        try:
            # the informer's index when there is one (no request); else page by page, since at
            # 10,000 nodes the full list would dominate the controller's memory
            QUARANTINED.set(sum(1 for _ in garbage.holding_nodes(self.api, self.node_cache)))
            status = self.breaker.status()
            for state in BREAKER_STATES:
                BREAKER.set(1 if status.state == state else 0, state=state)
            BREAKER_RECENT.set(len(status.recent))
            BREAKER_THRESHOLD.set(status.threshold)
            GPU_NODES.set(status.gpu_nodes)
        except errors.ToolError as exc:
            logger.debug("metrics refresh failed: %s", exc.line())

    def _analyze(self, pending: list[resource.Stored], everything: list[resource.Stored]) -> None:
        """Publish the analyzer's derived events and recoveries; they are processed in the next pass like any event.

        A derived event's name follows from its trigger (a recovery's from the condition's end), so
        re-analysing after a restart publishes nothing new."""
        history = [s.event for s in everything]
        derived = self.analyzer.analyze([s.event for s in pending], history)
        if derived:
            created = resource.publish(self.api, derived, now=self.clock.now).created
            for name in created:
                logger.info("analyzer published %s", name, extra={"subject": "analyzer"})
            names = set(created)
            for ev in derived:
                if resource.object_name(ev) in names:
                    ANALYZER_EVENTS.inc(check=ev.checkName)

    def _quarantine_pass(self, by_node: dict[str, list[resource.Stored]], result: PassResult) -> None:
        workers = min(self.cfg.settings.nvsentinel.workers, len(by_node))
        # by_node keeps the order of each node's first event; the executor starts nodes in that
        # order, so a node waiting on the breaker only ever waits for nodes already running.
        self.breaker.begin_pass(list(by_node))
        try:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nvsentinel-node") as pool:
                for phases in pool.map(self._process_node, by_node.values()):
                    for phase in phases:
                        result.phases[phase] = result.phases.get(phase, 0) + 1
                        EVENTS.inc(phase=phase)
        finally:
            self.breaker.end_pass()

    def _process_node(self, events: list[resource.Stored]) -> list[str]:
        done = []
        try:
            for stored in events:
                if self.stopping.is_set():
                    break  # the rest waits for the next leader; what was written stays consistent
                try:
                    done.append(self._process(stored))
                except errors.ToolError as exc:
                    logger.warning(
                        "event %s not processed: %s", stored.name, exc.line(), extra={"subject": stored.event.nodeName}
                    )
                    break  # keep this node's order: retry the rest in the next pass
        finally:
            self.breaker.finished(events[0].event.nodeName)
        return done

    def _process(self, stored: resource.Stored) -> str:
        ev = stored.event
        now = self.clock.now()
        HEALTH_EVENTS.inc(agent=ev.agent, check=ev.checkName, fatal="true" if ev.isFatal else "false")
        try:
            conditions.record(self.api, ev, now=now)
        except errors.NotFound:
            resource.set_status(
                self.api, stored.name, resource.Status(phase="NodeNotFound", processedAt=hevent.format_time(now))
            )
            return "NodeNotFound"
        ev_cel = ev.cel_value()
        box: list[quarantine.Outcome] = []
        slot = _Slot(self.breaker)

        def mutate(node: nodes.Node) -> bool:
            outcome = self.quarantiner.apply(node, ev, ev_cel, event_name=stored.name, breaker=slot)
            box[:] = [outcome]
            return outcome.changed

        try:
            written = nodes.update(self.api, ev.nodeName, mutate)
        except errors.ToolError:
            slot.release()  # the node was not written: its slot goes back
            raise
        outcome = box[-1]
        if outcome.phase != "Quarantined":
            slot.release()  # a retried write found the node already held, or nothing to do
        elif outcome.changed and ev.generatedTimestamp is not None and quarantine.is_enforced(written, ev):
            # cluster time: on the simulated clock a storm's latency is what it would be in production
            EVENT_TO_CORDON.observe(max(0.0, (self.clock.now() - ev.generatedTimestamp).total_seconds()))
        if outcome.phase in ("Quarantined", "UnQuarantined", "Blocked", "AwaitingValidation") and outcome.changed:
            logger.info(
                "%s by %s", outcome.phase, ", ".join(outcome.rule_sets) or ev.checkName, extra={"subject": ev.nodeName}
            )
        resource.set_status(
            self.api,
            stored.name,
            resource.Status(
                phase=outcome.phase,
                ruleSets=outcome.rule_sets,
                message=outcome.message,
                processedAt=hevent.format_time(self.clock.now()),
            ),
        )
        # told once the outcome is stored: a failed status write redoes the event, and its Event
        # and notification with it, so they are not said twice
        self._announce(written, ev, outcome)
        return outcome.phase

    def _announce(self, node: nodes.Node, ev: hevent.HealthEvent, outcome: quarantine.Outcome) -> None:
        """The Event about a quarantine decision that changed (or was refused to change) the node."""
        what, matched = kevents.cause(ev), kevents.rules(outcome.rule_sets)
        facts = {"checkName": ev.checkName, "agent": ev.agent, "recommendedAction": ev.recommendedAction.name}
        action = {"Blocked": "blocked", "UnQuarantined": "released"}.get(outcome.phase)
        if outcome.phase == "Quarantined":
            action = "enforced" if quarantine.is_enforced(node, ev) else "recorded"
        if action is not None:
            QUARANTINE_ACTIONS.inc(action=action)
        if outcome.phase == "Quarantined" and quarantine.is_enforced(node, ev):
            said = f"{what}: {matched} matched: {kevents.applied(node)}"
            self.events.normal(node, kevents.NODE_QUARANTINED, said)
            self.notifier.notify(
                notify.QUARANTINED, ev.nodeName, said, enforced=True, ruleSets=outcome.rule_sets, **facts
            )
        elif outcome.phase == "Quarantined":
            said = f"{what}: {matched} matched; monitor mode, not cordoned"
            self.events.normal(node, kevents.QUARANTINE_SKIPPED, said)
            self.notifier.notify(
                notify.QUARANTINED, ev.nodeName, said, enforced=False, ruleSets=outcome.rule_sets, **facts
            )
        elif outcome.phase == "Blocked":
            settings = self.breaker.settings
            limit = settings.threshold(self.breaker.gpu_nodes())
            self.events.warning(
                node,
                kevents.QUARANTINE_SKIPPED,
                f"{what}: {matched} matched, but the circuit breaker is TRIPPED "
                f"({limit} quarantine(s) per {settings.duration}); not cordoned",
            )
        elif outcome.phase == "UnQuarantined":
            said = f"healthy {what} from {ev.agent} cleared the last cause: released"
            self.events.normal(node, kevents.NODE_UNQUARANTINED, said)
            self.notifier.notify(notify.RELEASED, ev.nodeName, said, **facts)

    # ------------------------------------------------------------ the loop
    def loop(self) -> LeaderLoop:
        """This replica on the leader loop, woken by any HealthEvent still to be processed."""
        return LeaderLoop.of(
            self,
            lease=LEASE_NAME,
            settings=SETTINGS,
            reconcile=self.reconcile_once,
            watch=Watch(resource.RESOURCE.path(), _unprocessed),
            on_leading=lambda leading: LEADER.set(1 if leading else 0),
            on_error=_failed_pass,
            on_restart=_restarted,
        )

    def run(self, stop: threading.Event) -> None:
        """Until ``stop``: hold the Lease, reconcile, wait for a HealthEvent change. A stop asked
        during a pass ends it after the event in hand (its node write and status write done)."""
        self.stopping = stop
        try:
            self.loop().run(stop)
        finally:
            self.notifier.close()


def _unprocessed(kind: str, obj: dict[str, Any]) -> bool:
    """A HealthEvent added or changed without an outcome: the next pass is due."""
    return kind in ("ADDED", "MODIFIED") and not (obj.get("status") or {}).get("phase")


def _restarted(resource_name: str, reason: str) -> None:
    WATCH_RESTARTS.inc(resource=resource_name, reason=reason)


def _failed_pass(exc: errors.ToolError) -> None:
    PASS_ERRORS.inc()
    logger.warning("pass failed, retrying: %s", exc.line())


def ensure_namespace(api: KubeApi, namespace: str) -> None:
    try:
        rest.create(
            api,
            rest.core_path("namespaces"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            what=f"namespace {namespace}",
        )
    except kube_errors.AlreadyExists:
        return
