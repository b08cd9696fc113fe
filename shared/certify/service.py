"""What the ``nvcrectl`` commands call: one function per command, taking a client factory.

Running holds a Lease named after the Certification (``shared.kube.leases``), so of two runners
exactly one steps the run; the other waits and takes over when the holder stops renewing. Time
comes from the cluster's clock (``shared.clock``), so a simulated cluster's virtual time works.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared import errors
from shared.certify import catalog, isolate, leasing, models, resource, runner
from shared.kube import listing
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
    backend: str | None = None,
    platform: str | None = None,
    on_progress: Callable[[str], None] | None = None,
    on_status: Callable[[models.Certification], None] | None = None,
) -> RunResult:
    """Create the Certification (or resume one); with ``wait`` run it here to its end.
    ``strategy``, ``backend`` and ``platform`` go into a new object's spec."""
    _check_run_flags(strategy=strategy, backend=backend, platform=platform, new=cert_file is not None)
    loaded = resource.load_file(cert_file) if cert_file is not None else None  # invalid input before the cluster
    client = api()
    if loaded is not None:
        cert = loaded
        if strategy is not None:
            cert.spec.strategy = strategy
        if backend is not None:
            cert.spec = cert.spec.model_copy(update={"backend": backend})  # one of BACKENDS, checked above
        if platform is not None:
            cert.spec.platform = platform
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


def run_document(
    client: KubeApi,
    document: dict[str, Any],
    *,
    namespace: str,
    timeout: float | None,
    where: str,
    on_progress: Callable[[str], None] | None = None,
) -> RunResult:
    """Create a Certification from ``document`` (checked as a file is) and run it here to its end.

    The one call another tool makes into the engine (``aicr validate --phase performance``): the
    same CRD, the same runner and Lease as ``nvcrectl certification run --wait``."""
    cert = resource.from_document(document, where=where)
    resource.create(client, cert, namespace)
    return drive(client, namespace=namespace, name=cert.name, timeout=timeout, on_progress=on_progress)


def _check_run_flags(*, strategy: str | None, backend: str | None, platform: str | None, new: bool) -> None:
    """InvalidInput for a flag value no run takes, before anything is read or created."""
    from shared.certify.workloads import backends, platforms

    if strategy is not None and strategy not in isolate.STRATEGIES:
        raise errors.InvalidInput(
            f"unknown strategy {strategy!r}; known: {', '.join(isolate.STRATEGIES)}", where="--strategy"
        )
    if backend is not None and backend not in backends.BACKENDS:
        raise errors.InvalidInput(
            f"unknown backend {backend!r}; known: auto, {', '.join(backends.BACKENDS)}", where="--backend"
        )
    known = (*platforms.PLATFORMS, platforms.NONE)
    if platform is not None and platform not in known:
        raise errors.InvalidInput(f"unknown platform {platform!r}; known: {', '.join(known)}", where="--platform")
    if (backend or platform) and not new:
        raise errors.InvalidInput("--backend and --platform apply to a new run (with --cert-file)")


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


def list_certifications(api: ApiFactory, *, namespace: str | None) -> listing.Listing[models.Certification]:
    """Every readable Certification of ``namespace`` (all with None); the unreadable ones named."""
    return resource.list_readable(api(), namespace)


def watch(
    api: ApiFactory, *, namespace: str, name: str, stop: threading.Event | None = None
) -> Iterator[models.Certification]:
    """The Certification as it is, then after each change, ending once it has finished
    (Succeeded or Failed) or is deleted. NotFound when it does not exist when the watch starts."""
    from shared.kube import follow

    seen = False
    with resource.crd_required(resource.RESOURCE):
        for kind, obj in follow.follow(api(), resource.RESOURCE.path(namespace), stop=stop):
            if kind == follow.SYNCED:
                if not seen:
                    raise errors.NotFound(f"certification {namespace}/{name} not found")
                continue
            if (obj.get("metadata") or {}).get("name") != name:
                continue
            if kind == follow.DELETED:
                return
            seen = True
            cert = models.Certification.model_validate(obj)
            yield cert
            if cert.status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED):
                return


def delete(api: ApiFactory, *, namespace: str, name: str) -> None:
    """NotFound when there is no such object; CrdMissing when the cluster has no such kind (a 404
    to a DELETE says neither, so the kind is read to tell which)."""
    client = api()
    if not resource.delete(client, namespace, name):
        resource.list_all(client, namespace)  # raises CrdMissing when the CRD is not installed
        raise errors.NotFound(f"certification {namespace}/{name} not found")


def catalog_entries() -> list[catalog.Entry]:
    return catalog.load().entries


def results_file(path: Path, data: Any) -> None:
    from shared import files, output

    files.atomic_write_text(path, output.to_json(data))


def html_report(api: ApiFactory, path: Path, cert: models.Certification) -> None:
    """Write the HTML report; racks come from the nodes' labels (a node gone since is 'unknown')."""
    from shared import files
    from shared.certify import htmlreport
    from shared.kube import rest

    try:
        racks = htmlreport.racks_of(rest.list_items(api(), rest.core_path("nodes")))
    except errors.Unauthorized:
        racks = {}  # a reader allowed Certifications but not nodes still gets the report, without racks
    files.atomic_write_text(path, htmlreport.render(cert, racks))


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
