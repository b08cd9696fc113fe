"""``certification render`` with a backend and a platform: the first round's objects as a run
would create them on this cluster.

The groups and isolation estimates are ``service.render_plan``'s; this module swaps each group's
Job for what the backend renders (TrainingRuntime + TrainJob, MPIJob, or a Job) with the
platform's overrides. The backend defaults to what the cluster serves (discovery of API groups),
trainjob when discovery cannot answer; the platform to what the target nodes say.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from shared import errors
from shared.certify import catalog, render, resource, service
from shared.certify.workloads import backends, platforms
from shared.kube.api import ApiFactory


def served_groups(api: ApiFactory) -> set[str]:
    """The API groups the cluster serves (empty when discovery fails)."""
    from shared.kube import rest

    try:
        found = rest.get(api(), "/apis")
    except errors.ToolError:
        return set()
    return {str(g.get("name")) for g in found.get("groups") or []}


def render_plan(
    api: ApiFactory, *, cert_file: Path, strategy: str | None, backend: str | None, platform: str | None
) -> list[service.PlannedCategory]:
    from shared.kube import rest

    chosen = backend or backends.choose(served_groups(api))
    if chosen not in backends.BACKENDS:
        raise errors.InvalidInput(
            f"unknown backend {chosen!r}; known: {', '.join(backends.BACKENDS)}", where="--backend"
        )
    plans = service.render_plan(api, cert_file=cert_file, strategy=strategy, variant="job")
    cert = resource.load_file(cert_file)
    raw = rest.list_items(api(), rest.core_path("nodes"))
    targets = render.target_nodes(raw, cert.spec.target)
    picked = [n for n in raw if n["metadata"]["name"] in {t.name for t in targets}]
    detected = platforms.detect(picked)
    where = detected if platform is None else platforms.resolve(platform, detected.gpu)
    by_name = {n.name: n for n in targets}
    out = []
    for i, (plan, category) in enumerate(zip(plans, cert.spec.categories, strict=True)):
        entry = catalog.load().find(category.domain, category.variant)
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
