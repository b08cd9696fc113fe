"""Discovery documents: what kubectl and client-go read to map names to resources.

kubectl finds every resource through ``/api`` and ``/apis`` (names, short names, scope, verbs,
subresources); without these a client cannot even map ``kubectl get no``. OpenAPI v3 (schemas,
and the ``fieldValidation`` parameter kubectl looks for) is :mod:`shared.sim.apiserver.openapi`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from shared.sim.apiserver import resources
from shared.sim.apiserver.apierrors import ApiError

VERSION = {
    "major": "1",
    "minor": "34",
    "gitVersion": "v1.34.2-sim",
    "gitCommit": "sim",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.23",
    "compiler": "gc",
    "platform": "linux/amd64",
}


HEALTH_PATHS = ("/healthz", "/livez", "/readyz")


def is_non_resource(path: str) -> bool:
    """Paths served outside the resource URLs (discovery, /version, health, /openapi): every path but
    resource URLs under /api and /apis. RBAC authorizes them as non-resource URLs."""
    if path in ("/version", *HEALTH_PATHS, "/api", "/apis") or path.startswith("/openapi"):
        return True
    segments = path.strip("/").split("/")
    return (segments[0] == "api" and len(segments) == 2) or (segments[0] == "apis" and len(segments) in (2, 3))


def document(table: resources.ResourceTable, path: str) -> dict[str, Any] | None:
    """The discovery document (or version) a GET of ``path`` answers with; None when ``path`` is not
    a discovery path, a 404 when it names a group or version nobody serves."""
    if path == "/version":
        return VERSION
    if path in ("/api", "/apis"):
        return api_versions() if path == "/api" else group_list(table)
    segments = path.strip("/").split("/")
    if segments[0] == "api" and len(segments) == 2:
        answer = resource_list(table, "", segments[1])
    elif segments[0] == "apis" and len(segments) == 2:
        answer = group(table, segments[1])
    elif segments[0] == "apis" and len(segments) == 3:
        answer = resource_list(table, segments[1], segments[2])
    else:
        return None
    if answer is None:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    return answer


def _versions(table: resources.ResourceTable) -> dict[str, list[str]]:
    """group → versions, preferred first (the storage version of a CRD, else the first declared)."""
    out: dict[str, list[str]] = {}
    for row in table:
        if row.group:
            versions = out.setdefault(row.group, [])
            if row.version not in versions:
                if row.storage_version == row.version:
                    versions.insert(0, row.version)
                else:
                    versions.append(row.version)
    return out


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "versions": [{"groupVersion": f"{name}/{v}", "version": v} for v in versions],
        "preferredVersion": {"groupVersion": f"{name}/{versions[0]}", "version": versions[0]},
    }


def api_versions() -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
    }


def group_list(table: resources.ResourceTable) -> dict[str, Any]:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(g, v) for g, v in sorted(_versions(table).items())],
    }


def group(table: resources.ResourceTable, name: str) -> dict[str, Any] | None:
    versions = _versions(table).get(name)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def resource_list(table: resources.ResourceTable, group_name: str, version: str) -> dict[str, Any] | None:
    rows = [r for r in table if r.group == group_name and r.version == version]
    if not rows:
        return None
    out: list[dict[str, Any]] = []
    for r in sorted(rows, key=lambda x: x.plural):
        entry: dict[str, Any] = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        entry["storageVersionHash"] = hashlib.sha256(f"{r.group}/{r.plural}".encode()).hexdigest()[:12]
        out.append(entry)
        for sub in sorted(r.subresources):
            item: dict[str, Any] = {
                "name": f"{r.plural}/{sub}",
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": list(resources.SUBRESOURCE_VERBS.get(sub, ("get",))),
            }
            if sub in resources.SUBRESOURCE_KINDS:
                sub_group, sub_version, sub_kind = resources.SUBRESOURCE_KINDS[sub]
                item.update(group=sub_group, version=sub_version, kind=sub_kind)
            out.append(item)
    gv = f"{group_name}/{version}" if group_name else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}
