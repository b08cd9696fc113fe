"""Where documents (snapshots, recipes) are read from and written to: a file or ``cm://NAMESPACE/NAME``.

Base layer beside ``yamlio`` and ``files``; the cluster is reached through ``shared.kube`` only when a
reference names a ConfigMap, and only through the client factory the caller passes.

A ConfigMap holds the document under ``snapshot.<format>`` with a ``format`` key, as upstream AICR
writes it, so both tools read each other's. Writes are conflict-safe: read, replace with the
resourceVersion just read, and on a 409 read again (``shared.kube.retry``); creating races are
resolved the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared import errors, files, yamlio
from shared.kube.api import ApiFactory

CM_SCHEME = "cm://"
_CM = re.compile(r"^cm://([a-z0-9]([-a-z0-9]*[a-z0-9])?)/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$")
DATA_KEY = "snapshot.yaml"


@dataclass(frozen=True)
class ConfigMapRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{CM_SCHEME}{self.namespace}/{self.name}"


def parse(reference: str) -> Path | ConfigMapRef:
    """A path, or a ConfigMap reference when it starts with ``cm://``."""
    if not reference.startswith(CM_SCHEME):
        return Path(reference)
    match = _CM.match(reference)
    if not match:
        raise errors.InvalidInput("expected cm://NAMESPACE/NAME with Kubernetes names", where=reference)
    return ConfigMapRef(match.group(1), match.group(3))


def read_document(reference: str, *, api: ApiFactory) -> tuple[Any, str]:
    """(parsed document, where it came from) for a file or a ConfigMap."""
    text, where = read_text(reference, api=api)
    return yamlio.loads(text, source=where), where


def read_text(reference: str, *, api: ApiFactory) -> tuple[str, str]:
    """(document text, where it came from) for a file or a ConfigMap."""
    target = parse(reference)
    if isinstance(target, Path):
        return yamlio.read_text(target), str(target)
    from shared.kube import rest

    cm = rest.get(api(), rest.core_path("configmaps", target.namespace, target.name), what=str(target))
    data = cm.get("data") or {}
    fmt = data.get("format", "yaml")
    key = (
        f"snapshot.{fmt}"
        if f"snapshot.{fmt}" in data
        else next((k for k in sorted(data) if k.startswith("snapshot.")), None)
    )
    if key is None:
        raise errors.InvalidInput("ConfigMap holds no snapshot.yaml or snapshot.json key", where=str(target))
    return str(data[key]), f"{target} {key}"


def check_writable(reference: str) -> None:
    """Refuse, before any work, a file reference ``write_text`` would refuse (a ConfigMap is checked when written)."""
    target = parse(reference)
    if isinstance(target, Path):
        files.check_output(target, probe=True)


def write_text(reference: str, text: str, *, api: ApiFactory, component: str) -> None:
    """Write a document to a file (atomically) or create/update a ConfigMap."""
    target = parse(reference)
    if isinstance(target, Path):
        files.atomic_write_text(target, text)
        return
    from shared.kube import errors as kube_errors
    from shared.kube import rest, retry

    client = api()
    path = rest.core_path("configmaps", target.namespace, target.name)
    labels = {"app.kubernetes.io/name": "aicr", "app.kubernetes.io/component": component}

    def upsert() -> None:
        try:
            current = rest.get(client, path, what=str(target))
        except errors.NotFound:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": target.name, "namespace": target.namespace, "labels": labels},
                "data": {DATA_KEY: text, "format": "yaml"},
            }
            try:
                rest.create(client, rest.core_path("configmaps", target.namespace), body, what=str(target))
            except kube_errors.AlreadyExists as exc:  # someone created it meanwhile: update instead
                raise kube_errors.Conflict(str(exc), where=str(target)) from exc
            return
        current.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
        current["data"] = {**(current.get("data") or {}), DATA_KEY: text, "format": "yaml"}
        rest.replace(client, path, current, what=str(target))

    retry.call(upsert, what=str(target))
