"""One reconcile step of a Certification: read it, move it one step on, record the step.

Level-based and resumable (STYLE rule 5): the object's status is the whole memory. A step reads
the Certification, then does at most one of: initialise the plan; launch pending groups and
collect finished ones; plan the next isolation round or close the category; close the run — and
writes the status once, with the resourceVersion it read. A group's workload (TrainJob, MPIJob or
Job, by the backend chosen at the first step: ``shared.certify.workloads``) has a deterministic name
and is created before the status says so, so a runner killed between the two finds it on the next
step (AlreadyExists is adoption, not a re-run); a group recorded as finished is never run again.
It never touches node state.

Once a step's status is written, the Certification gets an Event (``shared.kube.events``) for what
changed: ``CertificationStarted``, ``IsolationRoundStarted``, ``IsolationFinished``,
``CertificationPassed`` or ``CertificationFailed`` (Warning, naming the suspect nodes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shared import errors
from shared.certify import catalog, isolate, models, render, resource, results, stalls, thresholds
from shared.certify.isolate import model as iso
from shared.certify.workloads import backends, launch, platforms
from shared.clock import Clock
from shared.kube import events as kube_events
from shared.kube import rest
from shared.kube.api import KubeApi

Phase = models.Phase

COMPONENT = "nvcrectl"
"""The Events' component when ``nvcrectl certification run --wait`` steps the run itself."""
STARTED, PASSED, FAILED = "CertificationStarted", "CertificationPassed", "CertificationFailed"
ROUND_STARTED, ISOLATED = "IsolationRoundStarted", "IsolationFinished"


@dataclass(frozen=True)
class Progress:
    done: bool
    phase: str | None
    note: str


def _stamp(clock: Clock) -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def _terminal(phase: Phase | None) -> bool:
    return phase in (Phase.SUCCEEDED, Phase.FAILED)


def _condition(status: models.CertificationStatus, kind: str, reason: str, message: str, when: str) -> None:
    """InProgress / Succeeded / Failed are exclusive: exactly one is True."""
    status.conditions = [
        models.Condition(
            type=t,
            status="True" if t == kind else "False",
            reason=reason if t == kind else "",
            message=message if t == kind else "",
            lastTransitionTime=when,
        )
        for t in ("InProgress", "Succeeded", "Failed")
    ]


def step(
    api: KubeApi,
    *,
    namespace: str,
    name: str,
    clock: Clock,
    strategy: str | None = None,
    events: kube_events.Recorder | None = None,
) -> Progress:
    """Advance the Certification by one step; idempotent, safe to repeat after any crash.

    ``events`` is the caller's recorder (one per controller, so repeats aggregate); without one the
    step records as ``nvcrectl``."""
    cert, metadata = resource.get(api, namespace, name)
    status = cert.status.model_copy(deep=True)
    if _terminal(status.phase):
        return Progress(True, status.phase, status.message or "")
    now = _stamp(clock)
    note = _advance(api, cert, metadata, status, now=now, strategy=strategy)
    written = resource.write_status(api, namespace, name, status, metadata)
    _announce(events or kube_events.Recorder(api, component=COMPONENT, now=clock.now), written, cert.status, status)
    return Progress(_terminal(status.phase), status.phase, note)


def _announce(
    events: kube_events.Recorder,
    obj: dict[str, Any],
    before: models.CertificationStatus,
    after: models.CertificationStatus,
) -> None:
    """The Events for what one written step changed: a start, an isolation round, a verdict."""
    if after.phase is Phase.RUNNING and before.phase is not Phase.RUNNING:
        targets = after.categoryStatuses[0].nodes if after.categoryStatuses else []
        categories = [f"{c.domain}/{c.variant}" for c in after.categoryStatuses]
        left_out = f"; cordoned, left out: {kube_events.listing(after.leftOut)}" if after.leftOut else ""
        events.normal(
            obj,
            STARTED,
            f"certifying {len(targets)} node(s) ({kube_events.listing(targets)}) "
            f"in {kube_events.listing(categories)}{left_out}",
        )
    earlier = {(c.domain, c.variant): c for c in before.categoryStatuses}
    for cs in after.categoryStatuses:
        old = earlier.get((cs.domain, cs.variant))
        rounds_before = len(old.rounds) if old else 0
        if len(cs.rounds) > max(rounds_before, 1):
            last = cs.rounds[-1]
            events.normal(
                obj,
                ROUND_STARTED,
                f"{cs.domain}/{cs.variant}: round {last.round} ({last.stage}, {len(last.groups)} group(s))",
            )
        if _terminal(cs.status) and not (old and _terminal(old.status)) and len(cs.rounds) > 1:
            suspects = [f.name for f in cs.failedNodes]
            events.normal(
                obj,
                ISOLATED,
                f"{cs.domain}/{cs.variant}: "
                + (f"suspects {kube_events.listing(suspects)}" if suspects else cs.message or "no node blamed"),
            )
    if not _terminal(after.phase) or _terminal(before.phase):
        return
    if after.phase is Phase.SUCCEEDED:
        events.normal(obj, PASSED, after.message or "passed")
        return
    suspects = sorted({f"{f.name} ({f.reason.value})" for c in after.categoryStatuses for f in c.failedNodes})
    links = [
        f"{'+'.join(f.sideA)} | {'+'.join(f.sideB)}" for c in after.categoryStatuses for f in c.infrastructureFaults
    ]
    detail = f"; suspect nodes: {kube_events.listing(suspects)}" if suspects else ""
    detail += f"; links between: {kube_events.listing(links, most=2)}" if links else ""
    events.warning(obj, FAILED, (after.message or "failed") + detail)


def _advance(
    api: KubeApi,
    cert: models.Certification,
    metadata: dict[str, Any],
    status: models.CertificationStatus,
    *,
    now: str,
    strategy: str | None,
) -> str:
    if not status.categoryStatuses:
        return _initialise(api, cert, status, now=now, strategy=strategy)
    nodes = {n.name: n for n in render.describe(_candidate_nodes(api, cert.spec.target))}
    where = platforms.resolve(status.platform or platforms.NONE, status.gpu or "unknown")
    for index, cs in enumerate(status.categoryStatuses):
        if not _terminal(cs.status):
            return _category_step(api, cert, metadata, index, cs, nodes, where, now=now)
    failed = [c for c in status.categoryStatuses if c.status is Phase.FAILED]
    status.phase = Phase.FAILED if failed else Phase.SUCCEEDED
    status.completionTime = now
    status.message = (
        "categories failed: " + ", ".join(f"{c.domain}/{c.variant}" for c in failed)
        if failed
        else "all certification categories completed successfully"
    )
    _condition(
        status, status.phase.value, "CategoryFailed" if failed else "AllCategoriesSucceeded", status.message, now
    )
    return status.message


def _candidate_nodes(api: KubeApi, target: models.TargetSpec) -> list[dict[str, Any]]:
    """The nodes the target's ``nodeSelector`` selects, filtered by the server: a run on 64 nodes of
    a 10,000-node cluster reads 64 nodes a step, not 10,000. The rest of the target (expressions,
    names, taints) is matched here, on what comes back."""
    selector = ",".join(f"{key}={value}" for key, value in sorted(target.nodeSelector.items())) or None
    return rest.list_items(api, rest.core_path("nodes"), label_selector=selector)


def _initialise(
    api: KubeApi, cert: models.Certification, status: models.CertificationStatus, *, now: str, strategy: str | None
) -> str:
    status.startTime = now
    try:
        resource.validate(cert, where=f"certification {cert.namespace}/{cert.name}")
        chosen = strategy or cert.spec.strategy or isolate.DEFAULT
        if chosen not in isolate.STRATEGIES:
            raise errors.InvalidInput(f"unknown strategy {chosen!r}; known: {', '.join(isolate.STRATEGIES)}")
    except errors.InvalidInput as exc:
        status.phase, status.message, status.completionTime = Phase.FAILED, exc.message, now
        _condition(status, "Failed", "ValidationFailed", exc.message, now)
        return exc.message
    every_node = _candidate_nodes(api, cert.spec.target)
    targets = render.target_nodes(every_node, cert.spec.target)
    cordoned = render.cordoned_left_out(every_node, cert.spec.target)
    skipped = f"; cordoned, left out: {', '.join(cordoned)}" if cordoned else ""
    if not targets:
        status.phase, status.completionTime, status.leftOut = Phase.FAILED, now, cordoned
        status.message = "no node matches spec.target" + skipped
        _condition(status, "Failed", "WaitingForNodes", status.message, now)
        return status.message
    try:
        picked = [n for n in every_node if n["metadata"]["name"] in {t.name for t in targets}]
        where = platforms.choose(picked, cert.spec.platform)
        served = launch.served(api)
        entries = catalog.load()
        chosen_backends = [
            backends.pick(
                entries.find(c.domain, c.variant), served, cert.spec.backend, compute_domain=where.compute_domain
            )
            for c in cert.spec.categories
        ]
    except (errors.InvalidInput, backends.BackendMissing) as exc:
        reason = "ValidationFailed" if isinstance(exc, errors.InvalidInput) else "WorkloadBackendMissing"
        status.phase, status.message, status.completionTime = Phase.FAILED, exc.message, now
        _condition(status, "Failed", reason, exc.message, now)
        return exc.message
    status.phase = Phase.RUNNING
    status.leftOut = cordoned
    status.platform, status.gpu = where.name, where.gpu
    status.categoryStatuses = [
        models.CategoryStatus(
            domain=c.domain, variant=c.variant, strategy=chosen, backend=b, nodes=[t.name for t in targets]
        )
        for c, b in zip(cert.spec.categories, chosen_backends, strict=True)
    ]
    status.message = f"{len(targets)} node(s), {len(cert.spec.categories)} categor(y/ies){skipped}"
    _condition(status, "InProgress", "Running", status.message, now)
    return status.message


def _groups(cert: str, index: int, number: int, groups: Sequence[Sequence[str]]) -> list[models.GroupRun]:
    return [
        models.GroupRun(name=f"r{number}-g{i}", nodes=list(g), job=render.job_name(cert, index, number, i))
        for i, g in enumerate(groups)
    ]


def _category_step(
    api: KubeApi,
    cert: models.Certification,
    metadata: dict[str, Any],
    index: int,
    cs: models.CategoryStatus,
    nodes: dict[str, render.TargetNode],
    where: platforms.Platform,
    *,
    now: str,
) -> str:
    category = cert.spec.categories[index]
    entry = catalog.load().find(category.domain, category.variant)
    options = cert.spec.options_for(category)
    # A global threshold binds only the categories that measure its key (dcgm reports no bandwidth).
    limits = thresholds.compile_all(
        {k: v for k, v in (options.thresholds or {}).items() if k in entry.metrics}, where=f"spec.categories[{index}]"
    )
    targets = [nodes[n] for n in cs.nodes if n in nodes]
    if cs.backend is None:  # a status written before backends: its groups ran as Indexed Jobs
        cs.status, cs.completionTime = Phase.FAILED, now
        cs.message = "started by an earlier nvcrectl (one Job per group, no launcher): run it again"
        return f"{cs.domain}/{cs.variant}: {cs.message}"
    if not cs.rounds:
        cs.status, cs.startTime = Phase.RUNNING, now
        if options.testScale is models.TestScale.DIAGNOSE and entry.scope is catalog.Scope.GROUP:
            plan = _decide(cs, options, targets)
            assert isinstance(plan, iso.Plan)  # an empty history always gives a plan
            stage, groups = plan.stage, [list(g) for g in plan.groups]
        else:
            stage, groups = (
                (options.testScale or models.TestScale.FULL_SCALE).value,
                render.first_round(entry, options, targets),
            )
        cs.rounds.append(models.Round(round=1, stage=stage, groups=_groups(cert.name, index, 1, groups)))
        return f"{cs.domain}/{cs.variant}: round 1 planned ({len(groups)} group(s))"
    current = cs.rounds[-1]
    running = sum(1 for g in current.groups if g.phase is Phase.RUNNING)
    backend = backends.BACKENDS[cs.backend]
    for group in current.groups:
        work = render.Group(
            cert=cert,
            uid=metadata.get("uid"),
            entry=entry,
            options=options,
            name=group.job,
            nodes=[nodes[n] for n in group.nodes if n in nodes],
        )
        if group.phase is Phase.RUNNING:
            _collect(api, cert, entry, options, limits, group, backend.watch(work), now=now)
        elif group.phase is Phase.PENDING and (not options.maxConcurrent or running < options.maxConcurrent):
            launch.create(api, backend.render(work, where), namespace=cert.namespace)
            group.phase, group.startTime = Phase.RUNNING, now
            running += 1
    _trim_details(cs)
    if any(not _terminal(g.phase) for g in current.groups):
        return f"{cs.domain}/{cs.variant}: round {current.round}: {running} group(s) running"
    if entry.scope is catalog.Scope.NODE or (all(g.passed for g in current.groups) and len(cs.rounds) == 1):
        return _close(
            cs,
            limits,
            iso.Verdict(
                faulty={g.nodes[0]: g.message or "" for g in current.groups if not g.passed and len(g.nodes) == 1},
                message="" if all(g.passed for g in current.groups) else "failed on its own node",
            ),
            now=now,
        )
    decision = _decide(cs, options, targets)
    if isinstance(decision, iso.Verdict):
        return _close(cs, limits, decision, now=now)
    number = current.round + 1
    cs.rounds.append(
        models.Round(round=number, stage=decision.stage, groups=_groups(cert.name, index, number, decision.groups))
    )
    return f"{cs.domain}/{cs.variant}: isolation round {number} ({decision.stage}, {len(decision.groups)} group(s))"


DETAILED_PASSING_GROUPS = 48
"""Passing groups per category whose curves are kept; a failing group always keeps its own."""


def _trim_details(cs: models.CategoryStatus) -> None:
    """Keep the object far below the 1.5 MiB limit at a thousand nodes: a thousand passing groups'
    sweeps say no more in a chart than the first few dozen, a failing group's sweep is evidence."""
    detailed = (g for r in cs.rounds for g in r.groups if g.detail is not None and g.passed)
    for kept, group in enumerate(detailed, start=1):
        if kept > DETAILED_PASSING_GROUPS:
            group.detail = None


def _decide(
    cs: models.CategoryStatus, options: models.CategoryOptions, targets: list[render.TargetNode]
) -> iso.Decision:
    history = [
        iso.RoundResult(r.stage, tuple(iso.Test(tuple(g.nodes), bool(g.passed)) for g in r.groups)) for r in cs.rounds
    ]
    settings = iso.Settings(min_group_size=options.minGroupSize or 2)
    return isolate.STRATEGIES[cs.strategy or isolate.DEFAULT](render.topology(targets), history, settings)


def _collect(
    api: KubeApi,
    cert: models.Certification,
    entry: catalog.Entry,
    options: models.CategoryOptions,
    limits: thresholds.Thresholds,
    group: models.GroupRun,
    watch: backends.Watch,
    *,
    now: str,
) -> None:
    try:
        end = launch.ended(api, watch, cert.namespace)
    except errors.NotFound:
        group.phase, group.passed, group.endTime = Phase.FAILED, False, now
        group.reason = models.FailureReason.WORKLOAD
        group.message = f"the {watch.kind} was deleted before it finished"
        return
    if end is None:
        stalls.check(api, namespace=cert.namespace, entry=entry, options=options, group=group, watch=watch, now=now)
        return
    outcome = results.evaluate(
        entry.parser, end.log, job_failed=end.failed, nodes=group.nodes, thresholds=limits, hosts=end.hosts
    )
    group.phase = Phase.SUCCEEDED if outcome.passed else Phase.FAILED
    group.passed, group.endTime, group.measurements = outcome.passed, now, outcome.measurements
    group.reason = models.FailureReason.TIMEOUT if end.deadline and not outcome.passed else outcome.reason
    group.message, group.hardwareNodes, group.detail = outcome.message, outcome.hardware_nodes, outcome.detail


def _failed_node(
    node: str, groups: list[models.GroupRun], limits: thresholds.Thresholds, verdict: iso.Verdict
) -> models.FailedNode:
    """The blamed node with the evidence that names it: the figure shown is that node's own measurement.

    Of the failed groups the node was in, the ones the isolation verdict cites for it (``evidence``)
    come first; a value is shown only from one of those that broke a threshold, never from a group
    where another member may have been the cause.
    """
    failing = sorted((g for g in groups if not g.passed and node in g.nodes), key=lambda g: len(g.nodes))
    named = {tuple(g) for g in verdict.evidence.get(node, ())}
    own = [g for g in failing if tuple(g.nodes) in named]
    hardware = next((g for g in failing if node in g.hardwareNodes), None)
    evidence = hardware or next(iter(own), None) or (failing[0] if failing else None)
    reason = evidence.reason if evidence and evidence.reason else models.FailureReason.WORKLOAD
    value = None
    for group in own:
        violation = limits.check(group.measurements) if group.reason is models.FailureReason.THRESHOLD else None
        if violation:
            value = violation.value
            break
    message = evidence.message if evidence and evidence.message else verdict.faulty[node]
    return models.FailedNode(name=node, reason=reason, message=message, value=value)


def _close(cs: models.CategoryStatus, limits: thresholds.Thresholds, verdict: iso.Verdict, *, now: str) -> str:
    first = cs.rounds[0].groups
    for key in sorted({k for g in first for k in g.measurements}):
        cs.measurements[key] = min(g.measurements[key] for g in first if key in g.measurements)
    all_groups = [g for r in cs.rounds for g in r.groups]
    for node in sorted(verdict.faulty):
        cs.failedNodes.append(_failed_node(node, all_groups, limits, verdict))
    for side_a, side_b in verdict.infrastructure:
        cs.infrastructureFaults.append(
            models.InfrastructureFault(
                sideA=list(side_a),
                sideB=list(side_b),
                message="groups spanning both sides fail while each side passes on its own",
            )
        )
    first_failed = any(not g.passed for g in first)
    failed = bool(cs.failedNodes or cs.infrastructureFaults or first_failed)
    cs.status, cs.completionTime = (Phase.FAILED if failed else Phase.SUCCEEDED), now
    if cs.startTime:
        from datetime import datetime

        fmt = "%Y-%m-%dT%H:%M:%SZ"
        cs.runtimeSeconds = (datetime.strptime(now, fmt) - datetime.strptime(cs.startTime, fmt)).total_seconds()
    if cs.failedNodes or cs.infrastructureFaults:
        cs.message = verdict.message or "isolation complete"
    elif first_failed:
        cs.message = f"the run failed but isolation blamed no node or link ({verdict.message})"
    else:
        cs.message = "passed"
    return f"{cs.domain}/{cs.variant}: {cs.status.value}: {cs.message}"
