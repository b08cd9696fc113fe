"""Certification objects in the cluster (raw JSON through ``shared.kube.rest``) and in files.

The CRD is generated from the pydantic models (``shared.kube.crds``). Status is written through
the status subresource with the resourceVersion just read, so a stale writer gets a 409 instead
of clobbering a newer step. Loading a file compiles every threshold, so a bad key or expression
is invalid input before anything runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from shared import errors, grammars
from shared.certify import catalog, inputcheck, models, thresholds
from shared.kube import crds, jobs, listing, rest
from shared.kube import errors as kube_errors
from shared.kube.api import KubeApi

RESOURCE = crds.Resource.of(
    models.Certification,
    plural="certifications",
    scope="Namespaced",
    short_names=("cert",),
    categories=("nvcre",),
    columns=(
        crds.PrinterColumn("Phase", ".status.phase"),
        crds.PrinterColumn("Categories", ".spec.categories[*].variant"),
        crds.PrinterColumn("Message", ".status.message", priority=1),
        crds.PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ),
)


class CrdMissing(kube_errors.UnservedResource):
    """The cluster does not serve one of our kinds: its CRD is not installed (a ``NotFound``, exit 3)."""


def missing_crd_message(definition: crds.Resource) -> str:
    return f"the CRD {definition.name} is not installed in this cluster; install it with: nvcrectl crds install"


@contextlib.contextmanager
def crd_required(definition: crds.Resource) -> Iterator[None]:
    """Inside, a 404 for the type itself (not an object) becomes one line naming the CRD and the fix."""
    try:
        yield
    except CrdMissing:
        raise
    except kube_errors.UnservedResource:
        raise CrdMissing(missing_crd_message(definition)) from None


def validate(cert: models.Certification, *, where: str) -> None:
    """Target names and images pass their grammars, every category exists in the catalog and every
    threshold compiles and binds something (InvalidInput otherwise).

    A category's own threshold must name a metric that category measures. A global one binds the
    categories that measure its key (``runner``), so it must name a metric at least one category
    of the spec measures that has no map of its own; otherwise it would bind nothing, silently.
    """
    images = {"spec.image": cert.spec.image}
    images |= {
        f"spec.categories[{i}].options.image": c.options.image for i, c in enumerate(cert.spec.categories) if c.options
    }
    inputcheck.check(cert.spec.target, images, where=where)
    entries = catalog.load()
    thresholds.compile_all(cert.spec.thresholds, where=f"{where}: spec.thresholds")
    inheriting: list[catalog.Entry] = []
    for i, category in enumerate(cert.spec.categories):
        entry = entries.find(category.domain, category.variant, where=f"{where}: spec.categories[{i}]")
        own = category.options.thresholds if category.options is not None else None
        if own is None:
            inheriting.append(entry)
            continue
        at = f"{where}: spec.categories[{i}].options.thresholds"
        thresholds.compile_all(own, where=at)
        thresholds.require_measured(own, measures=entry.metrics, category=f"category {entry.key}", where=at)
    if cert.spec.thresholds and inheriting:
        measured = {metric for entry in inheriting for metric in entry.metrics}
        names = ("category " if len(inheriting) == 1 else "categories ") + ", ".join(e.key for e in inheriting)
        thresholds.require_measured(
            cert.spec.thresholds, measures=sorted(measured), category=names, where=f"{where}: spec.thresholds"
        )


def from_document(doc: Any, *, where: str) -> models.Certification:
    if not isinstance(doc, dict) or doc.get("kind") != models.KIND:
        raise errors.InvalidInput(f"expected a {models.KIND} document", where=where)
    try:
        cert = models.Certification.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = ".".join(str(p) for p in first["loc"])
        raise errors.InvalidInput(f"{path}: {first['msg']}", where=where) from None
    if not cert.name:
        raise errors.InvalidInput("metadata.name is required", where=where)
    problem = grammars.dns_subdomain_problems(cert.name)
    if problem:  # the API server's rule for the object's name, checked before anything is created
        raise errors.InvalidInput(f"metadata.name: invalid name {cert.name!r}: {'; '.join(problem)}", where=where)
    validate(cert, where=where)
    return cert


def load_file(path: Path) -> models.Certification:
    from shared import yamlio

    return from_document(yamlio.load_file(path), where=str(path))


def get(api: KubeApi, namespace: str, name: str) -> tuple[models.Certification, dict[str, Any]]:
    """The parsed object and its raw metadata (resourceVersion, uid)."""
    with crd_required(RESOURCE):
        raw = rest.get(api, RESOURCE.path(namespace, name), what=RESOURCE.what(name, namespace))
    return models.Certification.model_validate(raw), raw["metadata"]


def list_all(api: KubeApi, namespace: str | None) -> list[models.Certification]:
    with crd_required(RESOURCE):
        items = rest.list_items(api, RESOURCE.path(namespace))
    return [models.Certification.model_validate(i) for i in items]


def list_readable(api: KubeApi, namespace: str | None) -> listing.Listing[models.Certification]:
    """Like ``list_all``, but an object that does not parse is skipped and named, not fatal."""
    with crd_required(RESOURCE):
        items = rest.list_items(api, RESOURCE.path(namespace))
    return listing.parse(items, models.Certification, what=RESOURCE.what)


def create(api: KubeApi, cert: models.Certification, namespace: str) -> dict[str, Any]:
    body = cert.creation_document(namespace)
    with crd_required(RESOURCE):
        return rest.create(api, RESOURCE.path(namespace), body, what=RESOURCE.what(cert.name, namespace))


def write_status(
    api: KubeApi, namespace: str, name: str, status: models.CertificationStatus, metadata: dict[str, Any]
) -> dict[str, Any]:
    """PUT the status with the resourceVersion read (409 when someone wrote since)."""
    with crd_required(RESOURCE):
        return RESOURCE.write_status(
            api, name=name, namespace=namespace, resource_version=metadata["resourceVersion"], status=status
        )


def delete(api: KubeApi, namespace: str, name: str) -> bool:
    """Delete the object; its Jobs go with it (owner references, background propagation)."""
    with crd_required(RESOURCE):
        return jobs.delete(api, RESOURCE.path(namespace, name), what=RESOURCE.what(name, namespace))
