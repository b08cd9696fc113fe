"""What the ``nvcrectl`` commands call: one function per command, taking a client factory.

Running holds a Lease named after the Certification (``shared.kube.leases``), so of two runners
exactly one steps the run; the other waits and takes over when the holder stops renewing. Time
comes from the cluster's clock (``shared.clock``), so a simulated cluster's virtual time works.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared import errors
from shared.certify import catalog, isolate, leasing, models, render, resource, runner
from shared.kube.api import ApiFactory, KubeApi

logger = logging.getLogger(__name__)


def install_crds(api: ApiFactory) -> list[str]:
    from shared.certify import workload
    from shared.kube import crds

    client = api()
    for definition in (resource.RESOURCE, workload.RESOURCE):
        crds.install(client, definition)
    return [resource.RESOURCE.name, workload.RESOURCE.name]


@dataclass(frozen=True)
class RunResult:
    cert: models.Certification
    timed_out: bool
    waited: bool


def run(
    api: ApiFactory,
    *,
    cert_file: Path | None,
    resume: str | None,
    namespace: str,
    wait: bool,
    timeout: float | None,
    strategy: str | None,
    on_progress: Callable[[str], None] | None = None,
    on_status: Callable[[models.Certification], None] | None = None,
) -> RunResult:
    """Create the Certification (or resume one); with ``wait`` run it here to its end."""
    if strategy is not None and strategy not in isolate.STRATEGIES:
        raise errors.InvalidInput(
            f"unknown strategy {strategy!r}; known: {', '.join(isolate.STRATEGIES)}", where="--strategy"
        )
    loaded = resource.load_file(cert_file) if cert_file is not None else None  # invalid input before the cluster
    client = api()
    if loaded is not None:
        cert = loaded
        if strategy is not None:
            cert.spec.strategy = strategy
        resource.create(client, cert, namespace)
        name = cert.name
    elif resume:
        name = resume
    else:
        raise errors.InvalidInput("give --cert-file FILE or --resume NAME")
    if not wait:
        cert, _ = resource.get(client, namespace, name)
        return RunResult(cert, timed_out=False, waited=False)
    return drive(client, namespace=namespace, name=name, timeout=timeout, on_progress=on_progress, on_status=on_status)


def drive(
    client: KubeApi,
    *,
    namespace: str,
    name: str,
    timeout: float | None,
    on_progress: Callable[[str], None] | None = None,
    me: str | None = None,
    on_status: Callable[[models.Certification], None] | None = None,
) -> RunResult:
    """Hold the Lease and step the run until it ends (or ``timeout`` seconds of cluster time pass),
    a step every ``leasing.SETTINGS.poll_seconds`` of cluster time (``leasing.drive``).

    ``on_progress`` gets each new note; ``on_status`` the object after every step (the live display).
    """
    from shared import clock
    from shared.kube import events

    ticker = clock.for_api_client(client)
    recorder = events.Recorder(client, component=runner.COMPONENT, now=ticker.now)

    def step() -> leasing.Turn:
        progress = runner.step(client, namespace=namespace, name=name, clock=ticker, events=recorder)
        if on_status is not None:
            on_status(resource.get(client, namespace, name)[0])
        return leasing.Turn(None if progress.done else progress.note, progress.done)

    timed_out = leasing.drive(
        client,
        namespace=namespace,
        lease=name,
        clock=ticker,
        step=step,
        timeout=timeout,
        me=me,
        on_progress=on_progress,
    )
    cert, _ = resource.get(client, namespace, name)
    return RunResult(cert, timed_out=timed_out, waited=True)


def get(api: ApiFactory, *, namespace: str, name: str) -> models.Certification:
    return resource.get(api(), namespace, name)[0]


def list_certifications(api: ApiFactory, *, namespace: str | None) -> list[models.Certification]:
    return resource.list_all(api(), namespace)


def delete(api: ApiFactory, *, namespace: str, name: str) -> None:
    if not resource.delete(api(), namespace, name):
        raise errors.NotFound(f"certification {namespace}/{name} not found")


def catalog_entries() -> list[catalog.Entry]:
    return catalog.load().entries


@dataclass(frozen=True)
class PlannedCategory:
    category: str
    strategy: str
    nodes: int
    groups: list[list[str]]
    jobs: list[dict[str, Any]]
    estimated_rounds_if_one_fault: int
    estimated_node_minutes: float


def render_plan(
    api: ApiFactory, *, cert_file: Path, strategy: str | None, variant: str = "job"
) -> list[PlannedCategory]:
    """The first round of every category as Jobs (``variant`` mpi: MPIJobs for real clusters with
    the MPI operator), plus what isolating one faulty node would cost."""
    from shared.certify.isolate import model as iso_model
    from shared.certify.isolate import trial
    from shared.kube import rest

    if variant not in render.VARIANTS:
        raise errors.InvalidInput(
            f"unknown variant {variant!r}; known: {', '.join(render.VARIANTS)}", where="--variant"
        )
    cert = resource.load_file(cert_file)
    nodes = render.target_nodes(rest.list_items(api(), rest.core_path("nodes")), cert.spec.target)
    if not nodes:
        raise errors.NotFound("no node matches spec.target")
    chosen = strategy or cert.spec.strategy or isolate.DEFAULT
    plans = []
    for i, category in enumerate(cert.spec.categories):
        entry = catalog.load().find(category.domain, category.variant)
        options = cert.spec.options_for(category)
        groups = render.first_round(entry, options, nodes)
        by_name = {n.name: n for n in nodes}
        make = render.RENDERERS[variant]
        docs = [
            make(
                render.Group(
                    cert=cert,
                    uid=None,
                    entry=entry,
                    options=options,
                    name=render.job_name(cert.name, i, 1, j),
                    nodes=[by_name[n] for n in g],
                )
            )
            for j, g in enumerate(groups)
        ]
        rounds, minutes = 1, iso_model.node_minutes(groups)
        if entry.scope is catalog.Scope.GROUP and len(nodes) > 1:
            topo = render.topology(nodes)
            done = trial.run(
                isolate.STRATEGIES[chosen], topo, trial.Oracle(hard=frozenset({nodes[-1].name})), first=groups
            )
            rounds = len(done.history)
            minutes = iso_model.node_minutes([t.nodes for r in done.history for t in r.tests])
        plans.append(PlannedCategory(category.key, chosen, len(nodes), groups, docs, rounds, minutes))
    return plans


def results_file(path: Path, data: Any) -> None:
    from shared import files, output

    files.atomic_write_text(path, output.to_json(data))


def parse_results(kind: str, path: Path) -> Any:
    """Parse a pasted log; InvalidInput when the file is unreadable or empty."""
    from shared import files
    from shared.certify import results

    text = files.read_text(path)
    if not text.strip():
        raise errors.InvalidInput("empty file", where=str(path))
    try:
        parser = catalog.Parser(kind)
    except ValueError:
        raise errors.InvalidInput(f"unknown kind {kind!r}; one of: nccl, dcgm, training", where="--kind") from None
    return results.parse(parser, text)
