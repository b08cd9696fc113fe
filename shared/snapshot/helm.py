"""Helm 3 releases as Helm itself stores them: one Secret per revision.

Secret ``sh.helm.release.v1.<name>.v<revision>`` (type ``helm.sh/release.v1``, label ``owner=helm``)
holds ``data.release``: base64 (the Secret encoding) of base64 of gzip of the release JSON. Only the
newest revision of each release describes what is installed.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from dataclasses import dataclass
from typing import Any

SECRET_TYPE = "helm.sh/release.v1"
LABEL_SELECTOR = "owner=helm"


@dataclass(frozen=True)
class Release:
    name: str
    namespace: str
    revision: int
    status: str
    chart: str
    version: str
    app_version: str


def decode(secret: dict[str, Any]) -> Release | None:
    """The release in one Helm release Secret, or None when it is not one (or is unreadable)."""
    if secret.get("type") != SECRET_TYPE:
        return None
    raw = (secret.get("data") or {}).get("release")
    if not raw:
        return None
    try:
        payload = base64.b64decode(base64.b64decode(raw))
        if payload[:2] == b"\x1f\x8b":
            payload = gzip.decompress(payload)
        doc = json.loads(payload)
    except (binascii.Error, OSError, EOFError, zlib.error, ValueError):
        return None
    chart = ((doc.get("chart") or {}).get("metadata")) or {}
    return Release(
        name=str(doc.get("name", "")),
        namespace=str(doc.get("namespace", (secret.get("metadata") or {}).get("namespace", ""))),
        revision=int(doc.get("version", 0)),
        status=str((doc.get("info") or {}).get("status", "unknown")),
        chart=str(chart.get("name", "")),
        version=str(chart.get("version", "")),
        app_version=str(chart.get("appVersion", "")),
    )


def encode(release: dict[str, Any]) -> str:
    """The ``data.release`` value Helm writes for a release document (for fixtures and the simulator)."""
    inner = base64.b64encode(gzip.compress(json.dumps(release).encode(), mtime=0))
    return base64.b64encode(inner).decode()


def current(secrets: list[dict[str, Any]]) -> list[Release]:
    """The newest revision of every release, sorted by namespace and name."""
    newest: dict[tuple[str, str], Release] = {}
    for secret in secrets:
        release = decode(secret)
        if release is None:
            continue
        key = (release.namespace, release.name)
        if key not in newest or release.revision > newest[key].revision:
            newest[key] = release
    return [newest[k] for k in sorted(newest)]
