"""The Running phase of a ValidationRequest (:mod:`shared.lifecycle.reconcile`): judging, retrying, starting attempts.

A running attempt fails on a deleted node (NodeDeleted), a readiness violation
(NodeReadinessViolation), the provider's failed condition (TestFailed) or its timeout
(TestTimeout); a failed group is retried while ``len(attempts) <= retries``. Deleted nodes are
skipped, and a group whose remaining nodes no longer meet a test's batch minimum fails (or drops
the test, by its ``batchFailurePolicy``). Pending groups start up to ``maxConcurrentGroups``, never
two on one node, none after a failure. A decided attempt's object is deleted after the status
recording the verdict is written (``delete_decided``); what it measured is kept first
(``evidence``). A provider whose CRD is not installed fails the request (reason
``ProviderNotInstalled``) instead of leaving it without a phase, retried forever.
"""

from __future__ import annotations

import contextlib
import logging
import re

from shared import errors, nodes
from shared.kube import errors as kube_errors
from shared.lifecycle import models, providers
from shared.lifecycle.stepcontext import (
    Context,
    Phase,
    Reason,
    finish,
    node_or_none,
    readiness_failures,
    seconds_since,
)

logger = logging.getLogger(__name__)

PROVIDER_MISSING = "ProviderNotInstalled"
"""The Failed condition's reason when a group's provider kind is not served (its CRD is missing)."""


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


Verdict = tuple[Reason | None, list[str], str]
"""(failure reason or None for a pass, the nodes blamed, the message)."""


def _nodes_lost(ctx: Context, group: models.TestGroup, found: dict[str, nodes.Node | None]) -> Verdict | None:
    """The group's failure when a node is deleted or violates a readiness criterion, else None."""
    gone = [n for n in group.nodes if found.get(n) is None]
    if gone:
        return Reason.NODE_DELETED, gone, "deleted: " + ", ".join(gone)
    unready = {n: readiness_failures(ctx, found[n] or {}) for n in group.nodes}
    bad = sorted(n for n, why in unready.items() if why)
    if bad:
        return Reason.NODE_READINESS_VIOLATION, bad, "; ".join(f"{n}: {', '.join(unready[n])}" for n in bad)
    return None


def _judge(
    ctx: Context, group: models.TestGroup, provider: providers.Provider, found: dict[str, nodes.Node | None]
) -> Verdict | None:
    """The attempt's verdict: None while it runs; (None, [], msg) on a pass; else the failure."""
    lost = _nodes_lost(ctx, group, found)
    if lost is not None:
        return lost
    attempt = group.attempts[-1]
    try:
        outcome = provider.outcome(ctx.api, attempt.objectName)
    except errors.NotFound:
        return Reason.TEST_FAILED, list(group.nodes), f"{attempt.objectName} was deleted"
    if outcome is not None and outcome.passed:
        return None, [], outcome.message
    spec = ctx.cfg.providers[group.provider]
    if seconds_since(attempt.startTime, ctx.clock.now()) >= spec.timeoutSeconds:
        return Reason.TEST_TIMEOUT, list(group.nodes), f"no verdict within {spec.timeoutSeconds}s"
    if outcome is not None:
        return Reason.TEST_FAILED, outcome.failed_nodes or list(group.nodes), outcome.message
    return None


def running(ctx: Context, vr: models.ValidationRequest, status: models.Status, now: str) -> None:
    wanted = sorted({n for g in status.testGroups for n in g.nodes})
    found = {n: node_or_none(ctx.api, n) for n in wanted}
    for group in status.testGroups:
        if group.phase is not Phase.RUNNING:
            continue
        provider = providers.for_group(ctx.cfg, group.provider)
        verdict = _judge(ctx, group, provider, found)
        if verdict is None:
            continue
        reason, failed, message = verdict
        attempt = group.attempts[-1]
        attempt.evidence = _keep_evidence(ctx, provider, attempt.objectName, vr.name)
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
            finish(
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
            finish(
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


def _keep_evidence(ctx: Context, provider: providers.Provider, name: str, request: str) -> str | None:
    """The decided attempt's measurements saved before its object is deleted (None when gone or kept
    by no kind). A refusal (no RBAC for ConfigMaps there) is logged and costs the evidence, not the
    verdict: a request must not hang on its record."""
    try:
        return provider.keep_evidence(ctx.api, name, request=request)
    except errors.NotFound:
        return None
    except errors.Unauthorized as exc:
        logger.warning("evidence of %s not kept: %s", name, exc.line(), extra={"subject": request})
        return None


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
        if any(readiness_failures(ctx, found[n] or {}) for n in group.nodes):
            continue
        name = _attempt_name(vr.name, index, len(group.attempts) + 1)
        provider = providers.for_group(ctx.cfg, group.provider)
        try:
            provider.start(
                ctx.api,
                providers.Attempt(name=name, request=vr.name, group=group, nodes=[found[n] or {} for n in group.nodes]),
            )
        except kube_errors.UnservedResource as exc:  # its CRD is not installed: no attempt can ever start
            message = f"provider {group.provider!r} cannot run: {exc.message}"
            finish(status, Phase.FAILED, message, now, reason=PROVIDER_MISSING)
            return
        group.attempts.append(models.Attempt(objectName=name, startTime=now))
        group.phase = Phase.RUNNING
        busy |= set(group.nodes)
        count += 1


def delete_decided(ctx: Context, before: models.Status, after: models.Status) -> None:
    """Delete the objects of attempts decided in this step — after the verdict is written, so a
    crash in between leaves a finished object behind rather than a verdict read off a missing one."""
    running = {a.objectName for g in before.testGroups for a in g.attempts if a.phase is Phase.RUNNING}
    for group in after.testGroups:
        for attempt in group.attempts:
            if attempt.objectName in running and attempt.phase is not Phase.RUNNING:
                with contextlib.suppress(errors.NotFound):
                    providers.for_group(ctx.cfg, group.provider).delete(ctx.api, attempt.objectName)
