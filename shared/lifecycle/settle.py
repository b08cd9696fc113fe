"""The end of a ValidationRequest (:mod:`shared.lifecycle.reconcile`): its nodes settled by the verdict.

A pass removes the request (and failed entries with the same tests) from each node's session; the
nodes a failed group blames keep a failed entry and stay gated. A node whose session is empty has
the lifecycle's gate lifted. A deleted request (finalizer): running attempt objects go, every node
leaves the session, the gate is lifted where the session is empty, the finalizer is dropped. Both
are idempotent: a controller killed half-way finishes the job on its next pass.
"""

from __future__ import annotations

import contextlib

from shared import errors, nodes
from shared.lifecycle import models, providers, resource, sessions
from shared.lifecycle.stepcontext import FAILED, RETURNED, Context, Phase, Progress, tests_of


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


def finalize(ctx: Context, vr: models.ValidationRequest) -> Progress:
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
