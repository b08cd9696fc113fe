"""Validation phases as upstream names them: deployment, then performance, then conformance.

``deployment`` is the recipe's pins, constraints and every component's health (``run``);
``performance`` the certification its ``validation.performance`` block names (``performance``);
``conformance`` the checks its ``validation.conformance`` block lists, against the API
(``conformance``). As upstream, a failed phase leaves the later ones skipped, and a phase's status
is failed when any check failed, skipped when it has no check or skipped every one, else passed.
``plan`` says what each phase would run without reading the cluster (``--no-cluster``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shared import errors
from shared.recipe import models
from shared.validate import checks, conformance, performance

DEPLOYMENT, PERFORMANCE, CONFORMANCE = "deployment", "performance", "conformance"
PHASES = (DEPLOYMENT, PERFORMANCE, CONFORMANCE)
ALL = "all"


def parse(names: list[str]) -> list[str]:
    """The phases asked for, in running order; ``all`` is every one. InvalidInput names a bad one."""
    chosen: set[str] = set()
    for name in names:
        if name == ALL:
            chosen.update(PHASES)
        elif name in PHASES:
            chosen.add(name)
        else:
            raise errors.InvalidInput(f"unknown phase {name!r}; known: {', '.join((*PHASES, ALL))}", where="--phase")
    return [p for p in PHASES if p in chosen] or [DEPLOYMENT]


@dataclass
class PhaseResult:
    name: str
    results: list[checks.Check] = field(default_factory=list)
    seconds: float = 0.0
    rounds: int = 0
    timed_out: bool = False
    note: str = ""

    @property
    def status(self) -> str:
        if any(c.status == checks.FAILED for c in self.results):
            return checks.FAILED
        if all(c.status == checks.SKIPPED for c in self.results):
            return checks.SKIPPED
        return checks.PASSED


@dataclass
class Report:
    """Every phase asked for, in order; ``passed`` when none failed."""

    phases: list[PhaseResult] = field(default_factory=list)
    planned: bool = False

    @property
    def results(self) -> list[checks.Check]:
        return [c for p in self.phases for c in p.results]

    @property
    def failures(self) -> list[checks.Check]:
        return [c for c in self.results if not c.passed]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def timed_out(self) -> bool:
        return any(p.timed_out for p in self.phases)

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.phases)


def block(recipe: models.RecipeResult, phase: str) -> models.ValidationPhase | None:
    return getattr(recipe.validation, phase, None) if recipe.validation is not None else None


def skipped(phase: str, recipe: models.RecipeResult, reason: str) -> PhaseResult:
    """A phase not run: each of its checks skipped with ``reason``."""
    names = [c.name for c in plan_phase(phase, recipe, driver=None)]
    return PhaseResult(phase, [checks.Check(phase, n, checks.SKIPPED, reason) for n in names], note=reason)


def plan_phase(phase: str, recipe: models.RecipeResult, *, driver: str | None) -> list[checks.Check]:
    if phase == PERFORMANCE:
        return performance.plan(block(recipe, phase))
    if phase == CONFORMANCE:
        return conformance.plan(block(recipe, phase))
    out = []
    if driver:
        out.append(checks.Check("gpu-operator", f"driver {driver} on every GPU node", checks.SKIPPED))
    out += [checks.Check("(constraints)", f"{c.name} {c.value}", checks.SKIPPED) for c in recipe.constraints]
    deployment = block(recipe, DEPLOYMENT)
    out += [
        checks.Check(
            c.name.split(".")[1] if c.name.count(".") >= 2 else "(deployment)", f"{c.name} {c.value}", checks.SKIPPED
        )
        for c in (deployment.constraints if deployment is not None else None) or []
    ]
    refs = {r.name: r for r in recipe.componentRefs}
    for name in recipe.deploymentOrder or sorted(refs):
        ref = refs[name]
        if ref.source and ref.version and ref.type != "Kustomize":
            out.append(checks.Check(name, f"chart {ref.chart or ref.name} {ref.version}", checks.SKIPPED))
        asserts = ref.healthCheckAsserts
        if asserts is not None and not asserts.is_empty():
            out.append(checks.Check(name, "health asserts", checks.SKIPPED))
    return [checks.Check(c.component, c.name, checks.SKIPPED, "not run (--no-cluster)") for c in out]


def plan(recipe: models.RecipeResult, phases: list[str], *, driver: str | None) -> Report:
    """What each phase would check, nothing read from the cluster."""
    return Report([PhaseResult(p, plan_phase(p, recipe, driver=driver)) for p in phases], planned=True)
