"""The call behind ``aicr validate``: load the recipe, then run each phase asked for against the cluster.

Validation's own entry point, so measuring stays in ``shared.snapshot`` and validating here, and
the dependency runs one way: validation uses the snapshot package (to load documents, to measure
the live cluster when no snapshot is given, and, in ``cluster``, to read Helm releases); the
snapshot package never imports validation. The command opens its ``ClusterAccess`` from here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared.snapshot.service import ClusterAccess

if TYPE_CHECKING:
    from shared.recipe import models
    from shared.recipe.snapshot import Snapshot
    from shared.validate.phases import PhaseResult, Report

__all__ = ["ClusterAccess", "html_report", "validate"]  # the command opens its ClusterAccess from here


def validate(
    *,
    recipe: str,
    snapshot: str | None,
    access: ClusterAccess,
    wait: bool,
    timeout: float | None,
    data_dir: Path | None = None,
    phases: list[str] | None = None,
    no_cluster: bool = False,
    namespace: str = "default",
    on_progress: Callable[[str], None] | None = None,
) -> Report:
    """Each phase asked for (default: deployment), in order, a failed one leaving the later ones
    skipped; with ``no_cluster`` only the plan, nothing read from the cluster.

    deployment: the driver the recipe pins and its constraints, node by node where they concern
    nodes, against the snapshot (live when none), then the components' asserts, live (``wait``
    repeats them until they pass or ``timeout``); performance: the certification the recipe's
    block names, run here in ``namespace``; conformance: the block's checks against the API."""
    from shared.snapshot import service as snapshots
    from shared.validate import checks
    from shared.validate import phases as phase_mod

    chosen = phases or [phase_mod.DEPLOYMENT]
    loaded = snapshots.load_recipe(recipe, access)
    driver = snapshots.pinned_driver(loaded, data_dir=data_dir)
    if no_cluster:
        return phase_mod.plan(loaded, chosen, driver=driver)
    # A snapshot file is read (and refused when it is bad) before anything connects to the cluster,
    # so a missing or malformed file is named rather than hidden behind a missing kubeconfig.
    given = (
        snapshots.load_snapshot(snapshot, access) if snapshot is not None and phase_mod.DEPLOYMENT in chosen else None
    )
    report = phase_mod.Report()
    for phase in chosen:
        if any(p.status == checks.FAILED for p in report.phases):
            report.phases.append(phase_mod.skipped(phase, loaded, "skipped: an earlier phase failed"))
            continue
        report.phases.append(
            _run_phase(
                phase,
                loaded,
                access=access,
                given=given,
                driver=driver,
                wait=wait,
                timeout=timeout,
                namespace=namespace,
                where=recipe,
                on_progress=on_progress,
            )
        )
    return report


def html_report(path: Path, document: dict[str, Any], *, recipe: str) -> None:
    """Write ``aicr validate --html``: the page draws the CTRF document ``-o json`` prints, so the two
    never disagree; the plotting library is loaded on this path only."""
    from shared import files
    from shared.validate import htmlreport

    files.atomic_write_text(path, htmlreport.render(document, recipe=recipe))


def _run_phase(
    phase: str,
    recipe: models.RecipeResult,
    *,
    access: ClusterAccess,
    given: Snapshot | None,
    driver: str | None,
    wait: bool,
    timeout: float | None,
    namespace: str,
    where: str,
    on_progress: Callable[[str], None] | None,
) -> PhaseResult:
    from shared import clock
    from shared.snapshot import service as snapshots
    from shared.validate import conformance, performance, run
    from shared.validate import phases as phase_mod
    from shared.validate.cluster import ClusterView

    ticks = clock.for_api_client(access.api)  # virtual time on the simulator, wall time elsewhere
    start = ticks.monotonic()
    if phase == phase_mod.DEPLOYMENT:
        measured = given if given is not None else snapshots.take(access)
        outcome = run.validate(
            recipe,
            measured,
            api=access.api,
            driver=driver,
            wait=wait,
            timeout=timeout,
            now=ticks.monotonic,
            sleep=ticks.sleep,
        )
        return phase_mod.PhaseResult(
            phase, outcome.results, seconds=outcome.seconds, rounds=outcome.rounds, timed_out=outcome.timed_out
        )
    block = phase_mod.block(recipe, phase)
    if block is None or not block.checks:
        return phase_mod.PhaseResult(phase, note=f"the recipe has no validation.{phase} checks")
    if phase == phase_mod.PERFORMANCE:
        results, timed_out = performance.run(
            block, api=access.api, namespace=namespace, where=where, on_progress=on_progress
        )
        return phase_mod.PhaseResult(phase, results, seconds=ticks.monotonic() - start, timed_out=timed_out)
    results = conformance.run(block, recipe, ClusterView(access.api))
    return phase_mod.PhaseResult(phase, results, seconds=ticks.monotonic() - start)
