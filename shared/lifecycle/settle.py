"""The end of a ValidationRequest (:mod:`shared.lifecycle.reconcile`): its nodes settled by the verdict.

A pass removes the request (and failed entries with the same tests) from each node's session; the
nodes a failed group blames keep a failed entry and stay gated. A node whose session is empty has
the lifecycle's gate lifted; a repaired node's recorded fault conditions are set False just before,
and its labels say it is back in service (``repaired``). Each node gets one Event for the verdict:
``ValidationPassed`` (the gate lifted, the conditions cleared) or ``ValidationFailed`` (Warning).
A deleted request (finalizer): running attempt objects go, every node leaves the session, the gate
is lifted where the session is empty (``NodeReturned``; a repaired node's conditions stay True,
nothing having vouched for the repair), the finalizer is dropped. Both are idempotent: a
controller killed half-way finishes the job on its next pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from shared import errors, nodes
from shared.health import notify
from shared.lifecycle import models, providers, repaired, resource, sessions
from shared.lifecycle.stepcontext import (
    FAILED,
    PASSED,
    RETURNED,
    Context,
    Phase,
    Progress,
    node_or_none,
    stamp,
    tests_of,
)


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


Change = Callable[[nodes.Node, str], tuple[bool, str | None]]
"""(node, its name) → (whether the node changed, the Event reason the change reached or None)."""


def _each_node(ctx: Context, vr: models.ValidationRequest, change: Change) -> Iterator[tuple[nodes.Node, str | None]]:
    """``change`` every node of the request, each in one conflict-safe write (``nodes.update``, which
    may run it again on a 409: the last run counts); yields the node as written and the reason
    reached. A node deleted meanwhile is passed over."""
    for name in vr.spec.node_names():
        reached: list[str | None] = [None]

        def mutate(node: nodes.Node, name: str = name, reached: list[str | None] = reached) -> bool:
            changed, reached[0] = change(node, name)
            return changed

        try:
            written = nodes.update(ctx.api, name, mutate)
        except errors.NotFound:
            continue
        yield written, reached[0]


def _returns(node: nodes.Node, vr: models.ValidationRequest, tests: list[str]) -> bool:
    """Whether settling ``vr`` as passed on ``node`` empties its session, so the gate will be lifted."""
    entries, active = sessions.read(node)
    if active != vr.name and not any(e.name == vr.name for e in entries):
        return False
    return not sessions.passed(entries, vr.name, tests) and active in (None, vr.name)


def settle(ctx: Context, vr: models.ValidationRequest) -> None:
    """Bring the nodes of an ended request in line with its verdict (idempotent)."""
    try:
        tests = tests_of(ctx, vr)
    except errors.InvalidInput:
        tests = sorted(set(vr.spec.tests))
    keep = blamed(vr)
    now = stamp(ctx.clock)
    cleared: dict[str, list[str]] = {}
    for name in vr.spec.node_names():  # the conditions first: they never lag behind a schedulable node
        node = node_or_none(ctx.api, name)
        if name not in keep and node is not None and repaired.read(node) is not None and _returns(node, vr, tests):
            with contextlib.suppress(errors.NotFound):
                cleared[name] = repaired.clear_conditions(ctx.api, name, request=vr.name, stamp=now)

    def change(node: nodes.Node, name: str) -> tuple[bool, str | None]:
        entries, active = sessions.read(node)
        if active != vr.name and not any(e.name == vr.name for e in entries):
            return False, None
        entries = sessions.failed(entries, vr.name, tests) if name in keep else sessions.passed(entries, vr.name, tests)
        active = None if active == vr.name else active
        changed = sessions.write(node, entries, active)
        if not entries and active is None and _lift(ctx, node, now):
            return True, PASSED
        return changed, FAILED if name in keep and changed else None

    for written, reason in _each_node(ctx, vr, change):
        name = written["metadata"]["name"]
        if reason == PASSED:
            ctx.events.normal(written, PASSED, _passed(vr.name, written, cleared.get(name)))
        elif reason == FAILED:
            said = f"validation {vr.name} failed: the node stays gated"
            ctx.events.warning(written, FAILED, said)
            ctx.notify(notify.VALIDATION_FAILED, name, said)


def _passed(request: str, written: nodes.Node, cleared: list[str] | None) -> str:
    """The Event on a node whose gate a pass lifted: what it cleared, and a cordon someone else set,
    which stays (theirs to lift), so no one reads "gate lifted" as "schedulable"."""
    also = f"; {', '.join(cleared)} set False" if cleared else ""
    if nodes.is_cordoned(written):
        also += "; the node stays cordoned (not by nvsentinel)"
    return f"validation {request} passed: scheduling gate lifted{also}"


def _lift(ctx: Context, node: nodes.Node, stamp: str) -> bool:
    """A passed node's gate lifted and the repair's marks gone; True when the node changed. The
    marks go also when the gate held nothing of ours (a person's cordon was all there was)."""
    lifted = sessions.release_gate(node, ctx.cfg.schedulingGate)
    return repaired.returned(node, stamp=stamp) or lifted


def finalize(ctx: Context, vr: models.ValidationRequest) -> Progress:
    for group in vr.status.testGroups:  # every attempt's: one decided just before a crash may linger
        for attempt in group.attempts:
            if attempt.objectName:
                with contextlib.suppress(errors.NotFound, errors.InvalidInput):
                    providers.for_group(ctx.cfg, group.provider).delete(ctx.api, attempt.objectName)

    def leave(node: nodes.Node, _name: str) -> tuple[bool, str | None]:
        entries, active = sessions.read(node)
        entries = sessions.left(entries, vr.name)
        active = None if active == vr.name else active
        changed = sessions.write(node, entries, active)
        lifted = not entries and active is None and sessions.release_gate(node, ctx.cfg.schedulingGate)
        if lifted:  # schedulable again, though nothing vouched for the repair: its conditions stay
            repaired.returned(node, stamp=stamp(ctx.clock))
        return changed or lifted, RETURNED if lifted else None

    for written, reason in _each_node(ctx, vr, leave):
        if reason == RETURNED:
            ctx.events.normal(written, RETURNED, f"validation {vr.name} was deleted: scheduling gate lifted")
    with contextlib.suppress(errors.NotFound):
        resource.set_finalizer(ctx.api, vr.name, present=False)
    return Progress(vr.status.phase, "deleted")
