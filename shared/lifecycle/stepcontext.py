"""What every phase of a ValidationRequest's reconcile step works with (:mod:`shared.lifecycle.reconcile`).

The step's ``Context`` (API, configuration, readiness programs, clock, Event recorder), what a step
reports (``Progress``), the Event reasons, and the few status operations every phase shares:
ending the request with a verdict, and a node's failing readiness criteria.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from shared import cel, errors, nodes
from shared.clock import Clock
from shared.kube import events as kube_events
from shared.kube.api import KubeApi
from shared.lifecycle import criteria, models, settings

Phase = models.Phase
Reason = models.FailureReason

COMPONENT = "nvsentinel-lifecycle-manager"
STARTED, PASSED, FAILED, RETURNED = "ValidationStarted", "ValidationPassed", "ValidationFailed", "NodeReturned"


@dataclass(frozen=True)
class Context:
    api: KubeApi
    cfg: settings.Configuration
    readiness: dict[str, cel.Program]
    clock: Clock
    events: kube_events.Recorder = field(default=None)  # type: ignore[assignment]  # set in __post_init__
    notify: Callable[[str, str, str], None] = field(default=lambda outcome, node, message: None)
    """Tells people (outcome, node, message) through nvsentinel's notification sinks: a failed
    validation keeps a repaired node out of service, which someone should hear about."""

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


def stamp(clock: Clock) -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds_since(start: str | None, end: datetime) -> float:
    try:
        return (end - datetime.fromisoformat(str(start).replace("Z", "+00:00"))).total_seconds()
    except ValueError:
        return 0.0


def tests_of(ctx: Context, vr: models.ValidationRequest) -> list[str]:
    return settings.resolve_tests(ctx.cfg, vr.spec.tests, where=f"validationrequest {vr.name}: spec.tests")


def finish(status: models.Status, phase: Phase, message: str, now: str, *, reason: str | None = None) -> None:
    """End the request with its verdict: phase, completion time, message and both conditions (the
    true one's reason ``reason``, by default ``Validation<phase>``)."""
    status.phase, status.completionTime, status.message = phase, now, message
    status.conditions = [
        models.Condition(
            type=t,
            status="True" if t == phase.value else "False",
            reason=(reason or "Validation" + phase.value) if t == phase.value else "",
            message=message if t == phase.value else "",
            lastTransitionTime=now,
        )
        for t in (Phase.SUCCEEDED.value, Phase.FAILED.value)
    ]


def node_or_none(api: KubeApi, name: str) -> nodes.Node | None:
    try:
        return nodes.get(api, name)
    except errors.NotFound:
        return None


def readiness_failures(ctx: Context, node: nodes.Node) -> list[str]:
    """The readiness criteria ``node`` fails now (none: it is ready)."""
    return criteria.failing(ctx.readiness, node, now=ctx.clock.now())
