"""What ``nvsentinel validation`` calls: one function per command, each opening its own client.

Test names are checked against the lifecycle configuration of ``--values`` (the embedded defaults
otherwise) before anything is written, so a typo is invalid input, not a request that fails later.
``--wait`` only watches: the lifecycle controller (``nvsentinel run``) does the work, and time is
the cluster's (virtual on the simulated cluster).

Here rather than in ``shared.lifecycle`` because it reads what spans packages: the whole values
file (``config``, health's sections included, as every ``--values`` is read) and aicr's drift
reports (``shared.snapshot.diff``) for ``--nodes-from``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shared import clock, errors, grammars, nodes
from shared.kube import listing
from shared.kube.api import KubeApi
from shared.lifecycle import models, resource, sessions, settings

if TYPE_CHECKING:
    from shared.kube.client import LazyClient

POLL_SECONDS = 5.0
"""Cluster seconds between looks at a request while waiting."""


@dataclass(frozen=True)
class Created:
    request: models.ValidationRequest
    cordoned: list[str]
    timed_out: bool = False
    waited: bool = False


def _client(kubeconfig: Path | None, context: str | None) -> LazyClient:
    from shared.kube import client

    return client.LazyClient(kubeconfig=kubeconfig, context=context)


def configuration(values_file: Path | None) -> settings.Configuration:
    """The lifecycle configuration of ``values_file`` (checked whole) with the catalog's tests added."""
    from shared.operate import config

    return settings.with_catalog(config.load(values_file).lifecycle.config)


def drift_nodes(path: Path) -> list[str]:
    """The nodes a DriftReport (``aicr diff -t yaml|json``) names in its changes."""
    from pydantic import ValidationError

    from shared import yamlio
    from shared.snapshot import diff

    try:
        report = diff.DriftReport.model_validate(yamlio.load_file(path))
    except ValidationError as exc:
        raise errors.from_validation(exc, where=f"{path}: not a DriftReport:") from None
    names = sorted({n for change in report.changes for n in change.nodes or []})
    check_names(names, where=str(path))
    return names


def check_names(names: list[str], *, where: str) -> None:
    """Every name a node may have, or exit 2 naming where it came from: a name goes into an API
    path, so ``../x`` would address another resource."""
    for name in names:
        problem = grammars.node_name(name)
        if problem is not None:
            raise errors.InvalidInput(problem, where=where)


def split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def cordon(api: KubeApi, names: list[str], *, owner: str) -> list[str]:
    """Cordon each node on ``owner``'s account; returns those this call cordoned (someone else's stays)."""
    done = []

    def mutate(node: nodes.Node) -> bool:
        if nodes.claim_cordon(node, owner) != "cordoned":
            return False
        done.append(node["metadata"]["name"])
        return True

    for name in names:
        nodes.update(api, name, mutate)
    return sorted(set(done))


def create(
    *,
    kubeconfig: Path | None,
    context: str | None,
    node_names: list[str],
    tests: list[str],
    name: str | None,
    cordon_owner: str | None,
    values_file: Path | None,
    wait: bool,
    timeout: float | None,
) -> Created:
    cfg = configuration(values_file)
    chosen = settings.resolve_tests(cfg, tests, where="--tests") if tests else []
    if not node_names:
        raise errors.InvalidInput(
            "give the nodes to validate (--nodes a,b or --nodes-from drift.yaml)", where="--nodes"
        )
    with _client(kubeconfig, context) as lazy:
        api = lazy()
        for node in node_names:
            nodes.get(api, node)  # NotFound before anything is written
        installed(api)
        ticker = clock.for_api_client(api)
        if name is None:
            seed = ",".join([*node_names, "|", *chosen, "|", ticker.now().isoformat()])
            name = f"vr-{hashlib.sha256(seed.encode()).hexdigest()[:10]}"
        cordoned = cordon(api, node_names, owner=cordon_owner) if cordon_owner else []
        resource.create(api, name, sorted(set(node_names)), chosen, source="cli")
        if not wait:
            return Created(resource.get(api, name)[0], cordoned)
        vr, timed_out = _wait(api, name, ticker, timeout)
        return Created(vr, cordoned, timed_out=timed_out, waited=True)


def installed(api: KubeApi) -> None:
    """NotFound, saying what to do, when the cluster does not serve ValidationRequests."""
    try:
        resource.list_all(api)
    except errors.NotFound:
        raise errors.NotFound(
            "the ValidationRequest CRD is not installed; run `nvsentinel crds install`", where=resource.RESOURCE.name
        ) from None


def _wait(api: KubeApi, name: str, ticker: clock.Clock, timeout: float | None) -> tuple[models.ValidationRequest, bool]:
    start = ticker.monotonic()
    while True:
        vr, _ = resource.get(api, name)
        if vr.status.phase in models.TERMINAL and _settled(api, vr):
            return vr, False
        if timeout is not None and ticker.monotonic() - start >= timeout:
            return vr, True
        ticker.sleep(POLL_SECONDS)


def _settled(api: KubeApi, vr: models.ValidationRequest) -> bool:
    """The controller writes the verdict first and settles the nodes after it (so a restart between
    the two finishes the job); ``--wait`` returns once no node is still held by the request, so a
    passed node is back in service when the command says so."""
    for name in vr.spec.node_names():
        try:
            _, active = sessions.read(nodes.get(api, name))
        except errors.NotFound:
            continue
        if active == vr.name:
            return False
    return True


def list_requests(*, kubeconfig: Path | None, context: str | None) -> listing.Listing[models.ValidationRequest]:
    """Every readable ValidationRequest, oldest first, and the malformed ones, named."""
    with _client(kubeconfig, context) as lazy:
        return resource.list_readable(lazy())


def get(*, kubeconfig: Path | None, context: str | None, name: str) -> models.ValidationRequest:
    with _client(kubeconfig, context) as lazy:
        return resource.get(lazy(), name)[0]


def delete(*, kubeconfig: Path | None, context: str | None, names: list[str]) -> None:
    with _client(kubeconfig, context) as lazy:
        api = lazy()
        for name in names:
            if not resource.delete(api, name):
                raise errors.NotFound(f"validationrequest {name} not found")


def cordon_nodes(*, kubeconfig: Path | None, context: str | None, names: list[str], owner: str) -> list[str]:
    check_names(names, where="NODES")
    with _client(kubeconfig, context) as lazy:
        return cordon(lazy(), names, owner=owner)
