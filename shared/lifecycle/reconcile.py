"""One reconcile step of a ValidationRequest (research/nvsentinel.md §7.4), level-based and resumable.

A step reads the request, moves it on by what the cluster shows, writes its status once with the
resourceVersion it read, and then settles the nodes of a request that just ended. Phases:
``"" → Pending → Running → Succeeded | Failed``.

- Pending: every node joins its session and is gated (``sessions``); the request waits while a
  node runs another request or fails a readiness criterion; then the groups are built
  (``groups``) and every node is marked active.
- Running: a running attempt fails on a deleted node (NodeDeleted), a readiness violation
  (NodeReadinessViolation), the provider's failed condition (TestFailed) or its timeout
  (TestTimeout); a failed group is retried while ``len(attempts) <= retries``. A decided attempt's
  object is deleted after the status recording the verdict is written. Pending groups start
  up to ``maxConcurrentGroups``, never two on one node, none after a failure.
- The end: a pass removes the request (and failed entries with the same tests) from each node's
  session; the nodes a failed group blames keep a failed entry and stay gated. A node whose
  session is empty has the lifecycle's gate lifted.
- Deleted (finalizer): running attempt objects go, every node leaves the session, the gate is
  lifted where the session is empty, the finalizer is dropped.

Settling nodes is idempotent (it writes nothing when the node already says so), so a controller
killed between the status write and the node writes finishes the job on its next pass.

Events (``shared.kube.events``): ``ValidationStarted``, ``ValidationPassed`` and ``ValidationFailed``
(Warning) on the request when its status says so; on a node, ``NodeReturned`` when the gate is
lifted and ``ValidationFailed`` (Warning) when a failed request keeps it gated.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared import cel, errors, nodes
from shared.clock import Clock
from shared.kube import events as kube_events
from shared.lifecycle import criteria, groups, models, providers, resource, sessions, settings

logger = logging.getLogger(__name__)
Phase = models.Phase
Reason = models.FailureReason

COMPONENT = "nvsentinel-lifecycle-manager"
STARTED, PASSED, FAILED, RETURNED = "ValidationStarted", "ValidationPassed", "ValidationFailed", "NodeReturned"


@dataclass(frozen=True)
class Context:
    api: Any
    cfg: settings.Configuration
    readiness: dict[str, cel.Program]
    clock: Clock
    events: kube_events.Recorder = field(default=None)  # type: ignore[assignment]  # set in __post_init__

    def __post_init__(self) -> None:
        if self.events is None:
            recorder = kube_events.Recorder(self.api, component=COMPONENT, now=self.clock.now)
            object.__setattr__(self, "events", recorder)


@dataclass(frozen=True)
class Progress:
    phase: str | None
    note: str
    ended: bool = False
    """The request reached its verdict in this step."""
    seconds: float | None = None


def _stamp(clock: Clock) -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(start: str | None, end: datetime) -> float:
    try:
        return (end - datetime.fromisoformat(str(start).replace("Z", "+00:00"))).total_seconds()
    except ValueError:
        return 0.0


def tests_of(ctx: Context, vr: models.ValidationRequest) -> list[str]:
    return settings.resolve_tests(ctx.cfg, vr.spec.tests, where=f"validationrequest {vr.name}: spec.tests")


def step(ctx: Context, name: str) -> Progress:
    """Advance the request by one step; safe to repeat after any crash."""
    vr, metadata = resource.get(ctx.api, name)
    if vr.deleting:
        return _finalize(ctx, vr)
    status = vr.status.model_copy(deep=True)
    if status.phase in models.TERMINAL:
        settle(ctx, vr)
        return Progress(status.phase, status.message or "")
    now = _stamp(ctx.clock)
    if status.phase is None:
        metadata = resource.set_finalizer(ctx.api, name, present=True)["metadata"]
        status.phase, status.startTime = Phase.PENDING, now
    try:
        tests = tests_of(ctx, vr)
    except errors.InvalidInput as exc:
        _end(status, Phase.FAILED, exc.line(), now)
        tests = []
    if status.phase is Phase.PENDING:
        _pending(ctx, vr, status, tests, now)
    if status.phase is Phase.RUNNING:
        _running(ctx, vr, status, now)
    if status != vr.status:  # an unchanged status is not written: no churn for watchers, no needless 409s
        written = resource.write_status(ctx.api, name, status, metadata)
        _announce(ctx, written, vr.status, status)
    _delete_decided(ctx, vr.status, status)
    if status.phase in models.TERMINAL:
        settle(ctx, vr.model_copy(update={"status": status}))
        return Progress(
            status.phase, status.message or "", ended=True, seconds=_seconds(status.startTime, ctx.clock.now())
        )
    return Progress(status.phase, status.message or "")


def _announce(ctx: Context, obj: dict[str, Any], before: models.Status, after: models.Status) -> None:
    """The request's Event for a phase it just reached (its status is written: the verdict is real)."""
    if after.phase is before.phase:
        return
    if after.phase is Phase.RUNNING:
        nodes_ = sorted({n for g in after.testGroups for n in g.nodes})
        tests = sorted({t for g in after.testGroups for t in g.tests})
        ctx.events.normal(
            obj,
            STARTED,
            f"validating {kube_events.listing(nodes_)} with {kube_events.listing(tests)} "
            f"in {len(after.testGroups)} group(s)",
        )
    elif after.phase is Phase.SUCCEEDED:
        ctx.events.normal(obj, PASSED, after.message or "passed")
    elif after.phase is Phase.FAILED:
        ctx.events.warning(obj, FAILED, after.message or "failed")


def _end(status: models.Status, phase: Phase, message: str, now: str) -> None:
    status.phase, status.completionTime, status.message = phase, now, message
    status.conditions = [
        models.Condition(
            type=t,
            status="True" if t == phase.value else "False",
            reason="Validation" + phase.value if t == phase.value else "",
            message=message if t == phase.value else "",
            lastTransitionTime=now,
        )
        for t in (Phase.SUCCEEDED.value, Phase.FAILED.value)
    ]


def _node(api: Any, name: str) -> nodes.Node | None:
    try:
        return nodes.get(api, name)
    except errors.NotFound:
        return None


def _unready(ctx: Context, node: nodes.Node) -> list[str]:
    return criteria.failing(ctx.readiness, node, now=ctx.clock.now())


# ------------------------------------------------------------ Pending
def _pending(ctx: Context, vr: models.ValidationRequest, status: models.Status, tests: list[str], now: str) -> None:
    present, waiting = [], []
    for name in vr.spec.node_names():

        def join(node: nodes.Node) -> bool:
            entries, active = sessions.read(node)
            gated = sessions.apply_gate(node, ctx.cfg.schedulingGate)
            return sessions.write(node, sessions.join(entries, vr.name, tests), active) or gated

        try:
            node = nodes.update(ctx.api, name, join)
        except errors.NotFound:
            if name not in status.skipped.nodes:
                status.skipped.nodes.append(name)
            continue
        present.append(name)
        _, active = sessions.read(node)
        if active not in (None, vr.name):
            waiting.append(f"{name} runs {active}")
        unready = _unready(ctx, node)
        if unready:
            waiting.append(f"{name} not ready: {', '.join(unready)}")
    if not present:
        _end(status, Phase.SUCCEEDED, "every node was deleted", now)
        return
    if waiting:
        status.message = "waiting: " + "; ".join(waiting)
        return
    plan = groups.build(present, tests, ctx.cfg, now=now)
    status.skipped.tests = sorted(set(status.skipped.tests) | set(plan.skipped_tests))
    status.testGroups = plan.groups
    if not plan.groups:
        _end(status, Phase.SUCCEEDED, "no test left to run", now)
        return
    if any(g.phase is Phase.FAILED for g in plan.groups):
        _end(
            status,
            Phase.FAILED,
            "batch minimum not met: " + ", ".join(g.name for g in plan.groups if g.phase is Phase.FAILED),
            now,
        )
        return
    for name in present:
        nodes.update(ctx.api, name, lambda node: sessions.write(node, sessions.read(node)[0], vr.name))
    status.phase, status.message = Phase.RUNNING, "starting"


# ------------------------------------------------------------ Running
def _attempt_name(request: str, index: int, attempt: int) -> str:
    base = re.sub(r"[^a-z0-9-]", "-", request.lower())[:40].strip("-")
    return f"{base}-g{index}-a{attempt}"


def _minimum_lost(ctx: Context, group: models.TestGroup, status: models.Status) -> bool:
    """Drop tests whose batch minimum the group's remaining nodes no longer meet; True when one must fail."""
    fail = False
    for test in list(group.tests):
        spec = ctx.cfg.tests.get(test)
        if spec is None or len(group.nodes) >= spec.minimumNodesPerBatch:
            continue
        if spec.batchFailurePolicy == "ignore":
            group.tests.remove(test)
            status.skipped.tests = sorted({*status.skipped.tests, test})
        else:
            fail = True
    return fail


def _judge(
    ctx: Context, group: models.TestGroup, provider: providers.Provider, found: dict[str, nodes.Node | None]
) -> tuple[Reason | None, list[str], str] | None:
    """The attempt's verdict: None while it runs; (None, [], msg) on a pass; else the failure."""
    attempt = group.attempts[-1]
    gone = [n for n in group.nodes if found.get(n) is None]
    if gone:
        return Reason.NODE_DELETED, gone, "deleted: " + ", ".join(gone)
    unready = {n: _unready(ctx, found[n] or {}) for n in group.nodes}
    bad = sorted(n for n, why in unready.items() if why)
    if bad:
        return Reason.NODE_READINESS_VIOLATION, bad, "; ".join(f"{n}: {', '.join(unready[n])}" for n in bad)
    try:
        outcome = provider.outcome(ctx.api, attempt.objectName)
    except errors.NotFound:
        return Reason.TEST_FAILED, list(group.nodes), f"{attempt.objectName} was deleted"
    if outcome is not None and outcome.passed:
        return None, [], outcome.message
    spec = ctx.cfg.providers[group.provider]
    if _seconds(attempt.startTime, ctx.clock.now()) >= spec.timeoutSeconds:
        return Reason.TEST_TIMEOUT, list(group.nodes), f"no verdict within {spec.timeoutSeconds}s"
    if outcome is not None:
        return Reason.TEST_FAILED, outcome.failed_nodes or list(group.nodes), outcome.message
    return None


def _running(ctx: Context, vr: models.ValidationRequest, status: models.Status, now: str) -> None:
    wanted = sorted({n for g in status.testGroups for n in g.nodes})
    found = {n: _node(ctx.api, n) for n in wanted}
    for group in status.testGroups:
        if group.phase is not Phase.RUNNING:
            continue
        provider = providers.for_group(ctx.cfg, group.provider)
        verdict = _judge(ctx, group, provider, found)
        if verdict is None:
            continue
        reason, failed, message = verdict
        attempt = group.attempts[-1]
        attempt.phase = Phase.SUCCEEDED if reason is None else Phase.FAILED
        attempt.failureReason, attempt.failedNodes, attempt.endTime = reason, sorted(failed), now
        attempt.message = message or None
        if reason is None:
            group.phase = Phase.SUCCEEDED
            continue
        logger.info(
            "%s attempt %d: %s %s", group.name, len(group.attempts), reason.value, message, extra={"subject": vr.name}
        )
        if reason is Reason.NODE_DELETED and _drop_deleted(ctx, group, status, failed) is not None:
            continue
        retries = ctx.cfg.providers[group.provider].retries
        group.phase = Phase.PENDING if len(group.attempts) <= retries else Phase.FAILED
    _start(ctx, vr, status, found, now)
    running = [g for g in status.testGroups if g.phase is Phase.RUNNING]
    pending = [g for g in status.testGroups if g.phase is Phase.PENDING]
    failed_groups = [g for g in status.testGroups if g.phase is Phase.FAILED]
    if not running and (not pending or failed_groups):
        if failed_groups and set(status.skipped.nodes) != set(vr.spec.node_names()):
            _end(
                status,
                Phase.FAILED,
                "failed: "
                + ", ".join(
                    f"{g.name} ({g.attempts[-1].failureReason or 'failed'}: {', '.join(g.attempts[-1].failedNodes)})"
                    for g in failed_groups
                ),
                now,
            )
        else:
            _end(
                status,
                Phase.SUCCEEDED,
                "every test passed on "
                + ", ".join(sorted({n for g in status.testGroups for n in g.nodes} - set(status.skipped.nodes))),
                now,
            )
        return
    status.message = (
        "running: " + ", ".join(f"{g.name} (attempt {len(g.attempts)})" for g in running)
        if running
        else "waiting for nodes to be ready"
    )


def _drop_deleted(ctx: Context, group: models.TestGroup, status: models.Status, gone: list[str]) -> Phase | None:
    """Skip deleted nodes of ``group``; the phase that decides the group then (set on it), else None."""
    group.nodes = [n for n in group.nodes if n not in gone]
    status.skipped.nodes = sorted({*status.skipped.nodes, *gone})
    if not group.nodes:  # nothing left to validate (a minimum is about a batch, not an empty one)
        decided = Phase.SUCCEEDED
    elif _minimum_lost(ctx, group, status):
        decided = Phase.FAILED
    elif not group.tests:
        decided = Phase.SUCCEEDED
    else:
        return None
    group.phase = decided
    return decided


def _start(
    ctx: Context, vr: models.ValidationRequest, status: models.Status, found: dict[str, nodes.Node | None], now: str
) -> None:
    if any(g.phase is Phase.FAILED for g in status.testGroups):
        return
    busy = {n for g in status.testGroups if g.phase is Phase.RUNNING for n in g.nodes}
    count = sum(1 for g in status.testGroups if g.phase is Phase.RUNNING)
    for index, group in enumerate(status.testGroups):
        if group.phase is not Phase.PENDING or count >= ctx.cfg.maxConcurrentGroups or busy & set(group.nodes):
            continue
        gone = [n for n in group.nodes if found.get(n) is None]
        decided = _drop_deleted(ctx, group, status, gone) if gone else None
        if decided is Phase.FAILED:
            return
        if decided is not None:
            continue
        if any(_unready(ctx, found[n] or {}) for n in group.nodes):
            continue
        name = _attempt_name(vr.name, index, len(group.attempts) + 1)
        provider = providers.for_group(ctx.cfg, group.provider)
        provider.start(
            ctx.api,
            providers.Attempt(name=name, request=vr.name, group=group, nodes=[found[n] or {} for n in group.nodes]),
        )
        group.attempts.append(models.Attempt(objectName=name, startTime=now))
        group.phase = Phase.RUNNING
        busy |= set(group.nodes)
        count += 1


def _delete_decided(ctx: Context, before: models.Status, after: models.Status) -> None:
    """Delete the objects of attempts decided in this step — after the verdict is written, so a
    crash in between leaves a finished object behind rather than a verdict read off a missing one."""
    running = {a.objectName for g in before.testGroups for a in g.attempts if a.phase is Phase.RUNNING}
    for group in after.testGroups:
        for attempt in group.attempts:
            if attempt.objectName in running and attempt.phase is not Phase.RUNNING:
                with contextlib.suppress(errors.NotFound):
                    providers.for_group(ctx.cfg, group.provider).delete(ctx.api, attempt.objectName)


# ------------------------------------------------------------ the end
def blamed(vr: models.ValidationRequest) -> set[str]:
    """Nodes a failed request keeps: those its failed groups blame (all of a group's when it names none)."""
    if vr.status.phase is not Phase.FAILED:
        return set()
    failed = [g for g in vr.status.testGroups if g.phase is Phase.FAILED]
    if not failed:
        return set(vr.spec.node_names())
    out: set[str] = set()
    for g in failed:
        last = g.attempts[-1] if g.attempts else None
        out |= set(last.failedNodes) if last is not None and last.failedNodes else set(g.nodes)
    return out


def settle(ctx: Context, vr: models.ValidationRequest) -> None:
    """Bring the nodes of an ended request in line with its verdict (idempotent)."""
    try:
        tests = tests_of(ctx, vr)
    except errors.InvalidInput:
        tests = sorted(set(vr.spec.tests))
    keep = blamed(vr)
    for name in vr.spec.node_names():
        outcome: list[str] = []

        def mutate(node: nodes.Node, name: str = name, outcome: list[str] = outcome) -> bool:
            outcome.clear()
            entries, active = sessions.read(node)
            if active != vr.name and not any(e.name == vr.name for e in entries):
                return False
            entries = (
                sessions.failed(entries, vr.name, tests) if name in keep else sessions.passed(entries, vr.name, tests)
            )
            active = None if active == vr.name else active
            changed = sessions.write(node, entries, active)
            if not entries and active is None and sessions.release_gate(node, ctx.cfg.schedulingGate):
                outcome.append(RETURNED)
                changed = True
            elif name in keep and changed:
                outcome.append(FAILED)
            return changed

        try:
            written = nodes.update(ctx.api, name, mutate)
        except errors.NotFound:
            continue
        if outcome == [RETURNED]:
            ctx.events.normal(written, RETURNED, f"validation {vr.name} cleared the node: scheduling gate lifted")
        elif outcome == [FAILED]:
            ctx.events.warning(written, FAILED, f"validation {vr.name} failed: the node stays gated")


def _finalize(ctx: Context, vr: models.ValidationRequest) -> Progress:
    for group in vr.status.testGroups:  # every attempt's: one decided just before a crash may linger
        for attempt in group.attempts:
            if attempt.objectName:
                with contextlib.suppress(errors.NotFound, errors.InvalidInput):
                    providers.for_group(ctx.cfg, group.provider).delete(ctx.api, attempt.objectName)
    for name in vr.spec.node_names():
        lifted: list[bool] = []

        def mutate(node: nodes.Node, lifted: list[bool] = lifted) -> bool:
            entries, active = sessions.read(node)
            entries = sessions.left(entries, vr.name)
            active = None if active == vr.name else active
            changed = sessions.write(node, entries, active)
            lifted[:] = [not entries and active is None and sessions.release_gate(node, ctx.cfg.schedulingGate)]
            return changed or lifted[0]

        try:
            written = nodes.update(ctx.api, name, mutate)
        except errors.NotFound:
            continue
        if lifted == [True]:
            ctx.events.normal(written, RETURNED, f"validation {vr.name} was deleted: scheduling gate lifted")
    with contextlib.suppress(errors.NotFound):
        resource.set_finalizer(ctx.api, vr.name, present=False)
    return Progress(vr.status.phase, "deleted")
