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
(Warning) on the request when its status says so; on a node, ``ValidationPassed`` when a pass lifts
the gate, ``ValidationFailed`` (Warning) when a failed request keeps it gated and ``NodeReturned``
when deleting the request lifts it.
"""

from __future__ import annotations

from typing import Any

from shared import errors, nodes
from shared.kube import events as kube_events
from shared.lifecycle import groups, models, resource, sessions
from shared.lifecycle.attempts import delete_decided, running
from shared.lifecycle.settle import finalize, settle
from shared.lifecycle.stepcontext import (
    FAILED,
    PASSED,
    STARTED,
    Context,
    Phase,
    Progress,
    finish,
    readiness_failures,
    seconds_since,
    stamp,
    tests_of,
)

__all__ = ["Context", "Progress", "step"]


def step(ctx: Context, name: str) -> Progress:
    """Advance the request by one step; safe to repeat after any crash."""
    vr, metadata = resource.get(ctx.api, name)
    if vr.deleting:
        return finalize(ctx, vr)
    status = vr.status.model_copy(deep=True)
    if status.phase in models.TERMINAL:
        settle(ctx, vr)
        return Progress(status.phase, status.message or "")
    now = stamp(ctx.clock)
    if status.phase is None:
        metadata = resource.set_finalizer(ctx.api, name, present=True)["metadata"]
        status.phase, status.startTime = Phase.PENDING, now
    try:
        tests = tests_of(ctx, vr)
    except errors.InvalidInput as exc:
        finish(status, Phase.FAILED, exc.line(), now)
        tests = []
    if status.phase is Phase.PENDING:
        _pending(ctx, vr, status, tests, now)
    if status.phase is Phase.RUNNING:
        running(ctx, vr, status, now)
    if status != vr.status:  # an unchanged status is not written: no churn for watchers, no needless 409s
        written = resource.write_status(ctx.api, name, status, metadata)
        _announce(ctx, written, vr.status, status)
    delete_decided(ctx, vr.status, status)
    if status.phase in models.TERMINAL:
        settle(ctx, vr.model_copy(update={"status": status}))
        return Progress(
            status.phase, status.message or "", ended=True, seconds=seconds_since(status.startTime, ctx.clock.now())
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


# ------------------------------------------------------------ Pending
def _pending(ctx: Context, vr: models.ValidationRequest, status: models.Status, tests: list[str], now: str) -> None:
    present, waiting = _join(ctx, vr, status, tests)
    if not present:
        finish(status, Phase.SUCCEEDED, "every node was deleted", now)
        return
    if waiting:
        status.message = "waiting: " + "; ".join(waiting)
        return
    plan = groups.build(present, tests, ctx.cfg, now=now)
    status.skipped.tests = sorted(set(status.skipped.tests) | set(plan.skipped_tests))
    status.testGroups = plan.groups
    if not plan.groups:
        finish(status, Phase.SUCCEEDED, "no test left to run", now)
        return
    if any(g.phase is Phase.FAILED for g in plan.groups):
        finish(
            status,
            Phase.FAILED,
            "batch minimum not met: " + ", ".join(g.name for g in plan.groups if g.phase is Phase.FAILED),
            now,
        )
        return
    for name in present:
        nodes.update(ctx.api, name, lambda node: sessions.write(node, sessions.read(node)[0], vr.name))
    status.phase, status.message = Phase.RUNNING, "starting"


def _join(
    ctx: Context, vr: models.ValidationRequest, status: models.Status, tests: list[str]
) -> tuple[list[str], list[str]]:
    """Every node joins the request's session and is gated: (nodes present, why the request waits)."""

    def join(node: nodes.Node) -> bool:
        entries, active = sessions.read(node)
        gated = sessions.apply_gate(node, ctx.cfg.schedulingGate)
        return sessions.write(node, sessions.join(entries, vr.name, tests), active) or gated

    present, waiting = [], []
    for name in vr.spec.node_names():
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
        unready = readiness_failures(ctx, node)
        if unready:
            waiting.append(f"{name} not ready: {', '.join(unready)}")
    return present, waiting
