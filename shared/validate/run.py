"""One validation: constraints against a snapshot, then every component's asserts, optionally waiting.

With ``wait`` the whole round is repeated until every check passes or the timeout runs out; progress
goes to the log (stderr). The clock and the pause are parameters so tests run in virtual time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from shared import durations
from shared.kube.api import KubeApi
from shared.recipe import models
from shared.recipe.snapshot import Snapshot
from shared.validate import checks
from shared.validate.cluster import ClusterView

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 600.0
POLL_SECONDS = 5.0


def parse_duration(text: str, *, where: str = "--timeout") -> float:
    """Seconds in ``30s``, ``5m``, ``1h``, ``500ms``."""
    return durations.parse(text, where=where)


@dataclass
class Outcome:
    results: list[checks.Check] = field(default_factory=list)
    rounds: int = 0
    seconds: float = 0.0
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.results)

    @property
    def failures(self) -> list[checks.Check]:
        return [c for c in self.results if not c.passed]


def recipe_timeout(recipe: models.RecipeResult) -> float:
    """The longest timeout any component's asserts ask for, else the default."""
    found = [
        parse_duration(r.healthCheckAsserts.timeout, where=f"component {r.name} healthCheckAsserts.timeout")
        for r in recipe.componentRefs
        if r.healthCheckAsserts and r.healthCheckAsserts.timeout
    ]
    return max(found, default=DEFAULT_TIMEOUT_SECONDS)


def component_checks(recipe: models.RecipeResult, view: ClusterView) -> list[checks.Check]:
    """Every check of every component, in deployment order."""
    out: list[checks.Check] = []
    refs = {r.name: r for r in recipe.componentRefs}
    for name in recipe.deploymentOrder or sorted(refs):
        ref = refs[name]
        namespace = ref.namespace or "default"
        if ref.source and ref.version and ref.type != "Kustomize":
            out.append(checks.chart_check(ref, view.chart_version(namespace, ref.name)))
        asserts = ref.healthCheckAsserts
        if asserts is None or asserts.is_empty():
            out.append(checks.Check(name, "health asserts", checks.SKIPPED, "the recipe defines none"))
            continue
        for workload in asserts.workloads:
            ns = workload.namespace or namespace
            out.extend(checks.workload_check(name, ns, workload, view.workloads(workload.kind, ns)))
        for pods in asserts.pods:
            ns = pods.namespace or namespace
            out.append(checks.pod_states_check(name, ns, pods, view.pods(ns, pods.selector)))
        for crd in asserts.crds:
            out.append(checks.crd_check(name, crd, view.crd(crd)))
    return out


def validate(
    recipe: models.RecipeResult,
    snapshot: Snapshot,
    *,
    api: KubeApi,
    driver: str | None = None,
    wait: bool = False,
    timeout: float | None = None,
    now: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    poll: float = POLL_SECONDS,
) -> Outcome:
    """Run the checks once, or until they pass when ``wait``; never writes to the cluster.

    ``driver`` is the GPU driver the recipe pins (``shared.snapshot.pins.pinned_driver``): every
    GPU node must run it."""
    constraint_checks = checks.node_checks(recipe, snapshot, driver=driver)
    constraint_checks += checks.deployment_block_checks(recipe, snapshot)
    limit = recipe_timeout(recipe) if timeout is None else timeout
    start = now()
    outcome = Outcome()
    while True:
        outcome.rounds += 1
        outcome.results = constraint_checks + component_checks(recipe, ClusterView(api))
        outcome.seconds = now() - start
        if outcome.passed or not wait:
            return outcome
        if outcome.seconds + poll > limit:
            outcome.timed_out = True
            return outcome
        failing = outcome.failures
        logger.info(
            "waiting for %d failing check(s), first: %s: %s %s",
            len(failing),
            failing[0].component,
            failing[0].name,
            failing[0].message,
            extra={"elapsed": f"{outcome.seconds:.0f}s"},
        )
        sleep(poll)
