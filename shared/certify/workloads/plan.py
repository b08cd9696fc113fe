"""``certification render`` with a backend and a platform: the first round's objects as a run
would create them on this cluster.

The first round's groups and what isolating one faulty node would cost; each group is rendered
as its backend does (TrainingRuntime + TrainJob, MPIJob, or a Job) with the platform's overrides.
The backend is the one a run would choose (``backends.pick`` over what the cluster serves; trainjob
when it serves no operator, so the plan shows what to install for); the platform is what the
target nodes say. ``spec.backend`` and ``spec.platform`` of the file, then the flags, override.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared import errors
from shared.certify import catalog, isolate, models, render, resource
from shared.certify.workloads import backends, launch, platforms
from shared.kube.api import ApiFactory


@dataclass(frozen=True)
class PlannedCategory:
    category: str
    strategy: str
    nodes: int
    groups: list[list[str]]
    jobs: list[dict[str, Any]]
    estimated_rounds_if_one_fault: int
    estimated_node_minutes: float


def _first_round(
    cert: models.Certification, nodes: list[render.TargetNode], strategy: str | None
) -> list[PlannedCategory]:
    """The first round's groups of every category, and what isolating one faulty node would cost;
    ``jobs`` is filled by ``render_plan``."""
    from shared.certify.isolate import model as iso_model
    from shared.certify.isolate import trial

    chosen = strategy or cert.spec.strategy or isolate.DEFAULT
    plans = []
    for category in cert.spec.categories:
        entry = catalog.load().find(category.domain, category.variant)
        groups = render.first_round(entry, cert.spec.options_for(category), nodes)
        rounds, minutes = 1, iso_model.node_minutes(groups)
        if entry.scope is catalog.Scope.GROUP and len(nodes) > 1:
            topo = render.topology(nodes)
            done = trial.run(
                isolate.STRATEGIES[chosen], topo, trial.Oracle(hard=frozenset({nodes[-1].name})), first=groups
            )
            rounds = len(done.history)
            minutes = iso_model.node_minutes([t.nodes for r in done.history for t in r.tests])
        plans.append(PlannedCategory(category.key, chosen, len(nodes), groups, [], rounds, minutes))
    return plans


def render_plan(
    api: ApiFactory, *, cert_file: Path, strategy: str | None, backend: str | None, platform: str | None
) -> list[PlannedCategory]:
    from shared.kube import rest

    if backend is not None and backend not in backends.BACKENDS:
        raise errors.InvalidInput(
            f"unknown backend {backend!r}; known: {', '.join(backends.BACKENDS)}", where="--backend"
        )
    cert = resource.load_file(cert_file)
    raw = rest.list_items(api(), rest.core_path("nodes"))
    targets = render.target_nodes(raw, cert.spec.target)
    if not targets:
        raise errors.NotFound("no node matches spec.target")
    plans = _first_round(cert, targets, strategy)
    served = launch.served(api())
    explicit = backend or cert.spec.backend
    platform = platform if platform is not None else cert.spec.platform
    picked = [n for n in raw if n["metadata"]["name"] in {t.name for t in targets}]
    where = platforms.choose(picked, platform)
    by_name = {n.name: n for n in targets}
    out = []
    for i, (plan, category) in enumerate(zip(plans, cert.spec.categories, strict=True)):
        entry = catalog.load().find(category.domain, category.variant)
        chosen = _backend(entry, served, explicit)
        docs = []
        for j, names in enumerate(plan.groups):
            group = render.Group(
                cert=cert,
                uid=None,
                entry=entry,
                options=cert.spec.options_for(category),
                name=render.job_name(cert.name, i, 1, j),
                nodes=[by_name[n] for n in names],
            )
            rendered = backends.BACKENDS[chosen].render(group, where)
            # One runtime and one ComputeDomain per category: shown once, with its first group.
            docs += [d for d in rendered if j == 0 or d["kind"] not in ("TrainingRuntime", "ComputeDomain")]
        out.append(dataclasses.replace(plan, jobs=docs))
    return out


def _backend(entry: catalog.Entry, served: set[str], explicit: str | None) -> str:
    """What a run would use; rendering shows it even when the cluster lacks the operator (the run
    then fails saying so), so only an impossible choice is refused here."""
    if explicit is not None:
        every = set(backends.OPERATORS)
        try:
            return backends.pick(entry, every, explicit)
        except errors.InvalidInput as exc:
            raise errors.InvalidInput(exc.message, where="--backend") from None
    try:
        return backends.pick(entry, served)
    except backends.BackendMissing:
        return backends.DEFAULT
