"""Regenerates ``data/openapi-1.34.json``: the Kubernetes 1.34 schemas of the kinds the emulator serves.

The source is the JSON-schema rendering of the Kubernetes 1.34 OpenAPI definitions shipped by the
PyPI package ``kubernetes-validate`` (Apache-2.0, a test dependency). This module turns it back into
OpenAPI v3 component schemas, as kube-apiserver publishes them under ``components.schemas``: the
``"null"`` alternatives JSON schema added to every type are dropped, ``$ref`` points at
``#/components/schemas/<name>`` (wrapped in a one-element ``allOf`` when the field carries its own
description, as kube-openapi writes it), the ``enum`` the converter pinned on ``apiVersion``/``kind``
is removed, and descriptions and every ``x-kubernetes-*`` extension are kept. Only the served kinds
(:data:`KINDS`), their lists and what they reference are written. The server never imports this
module; it reads the generated file (:mod:`shared.sim.apiserver.kinds`).

Run ``.venv/bin/python -m shared.sim.apiserver.schemagen`` after changing :data:`KINDS`;
tests/sim/test_schemagen.py fails while the file and its source disagree.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata, resources
from pathlib import Path
from typing import Any

PACKAGE = "kubernetes-validate"
SOURCE = "kubernetes-json-schema/v1.34.0-local/_definitions.json"
OUTPUT = Path(__file__).parent / "data" / "openapi-1.34.json"

# (group, version, kind) of every kind served, or about to be: each gets its schema and its List's.
KINDS: tuple[tuple[str, str, str], ...] = (
    ("", "v1", "Binding"),
    ("", "v1", "ConfigMap"),
    ("", "v1", "Endpoints"),
    ("", "v1", "Event"),
    ("", "v1", "LimitRange"),
    ("", "v1", "Namespace"),
    ("", "v1", "Node"),
    ("", "v1", "Pod"),
    ("", "v1", "ResourceQuota"),
    ("", "v1", "Secret"),
    ("", "v1", "Service"),
    ("", "v1", "ServiceAccount"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    ("apps", "v1", "ControllerRevision"),
    ("apps", "v1", "DaemonSet"),
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
    ("authentication.k8s.io", "v1", "SelfSubjectReview"),
    ("authentication.k8s.io", "v1", "TokenRequest"),
    ("authentication.k8s.io", "v1", "TokenReview"),
    ("authorization.k8s.io", "v1", "LocalSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "v1", "SubjectAccessReview"),
    ("autoscaling", "v1", "HorizontalPodAutoscaler"),
    ("autoscaling", "v1", "Scale"),
    ("autoscaling", "v2", "HorizontalPodAutoscaler"),
    ("batch", "v1", "CronJob"),
    ("batch", "v1", "Job"),
    ("coordination.k8s.io", "v1", "Lease"),
    ("events.k8s.io", "v1", "Event"),
    ("networking.k8s.io", "v1", "Ingress"),
    ("networking.k8s.io", "v1", "NetworkPolicy"),
    ("policy", "v1", "Eviction"),
    ("policy", "v1", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io", "v1", "Role"),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
    ("resource.k8s.io", "v1", "DeviceClass"),
    ("resource.k8s.io", "v1", "ResourceClaim"),
    ("resource.k8s.io", "v1", "ResourceClaimTemplate"),
    ("resource.k8s.io", "v1", "ResourceSlice"),
    ("scheduling.k8s.io", "v1", "PriorityClass"),
)

# What every group-version document references besides its kinds (error bodies, delete options,
# patch bodies, watch events) and what the discovery documents answer with.
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
COMMON: tuple[str, ...] = (
    _META + "APIGroup",
    _META + "APIGroupList",
    _META + "APIResourceList",
    _META + "APIVersions",
    _META + "DeleteOptions",
    _META + "Patch",
    _META + "Status",
    _META + "WatchEvent",
    "io.k8s.apimachinery.pkg.version.Info",
)

_REF = "#/$defs/"
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def source_text() -> tuple[str, str]:
    """The installed package's 1.34 definitions file and the package version (ImportError if absent)."""
    import kubernetes_validate  # type: ignore[import-untyped]

    text = resources.files(kubernetes_validate).joinpath(SOURCE).read_text(encoding="utf-8")
    return text, metadata.version(PACKAGE)


def _ref(target: str) -> str:
    if not target.startswith(_REF):
        raise ValueError(f"unexpected reference {target!r}")
    return "#/components/schemas/" + target[len(_REF) :]


def _schema(node: dict[str, Any], *, top_level_kind: bool = False) -> dict[str, Any]:
    """One JSON-schema node as OpenAPI v3 writes it."""
    out = {key: _keyword(key, value, top_level_kind=top_level_kind) for key, value in node.items()}
    if "$ref" in out and len(out) > 1:
        # kube-openapi never gives a $ref siblings: the field's own description sits beside an allOf.
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def _keyword(key: str, value: Any, *, top_level_kind: bool) -> Any:
    """One keyword's value, converted: a single type, references renamed, subschemas in turn."""
    if key == "type":
        kinds = [value] if isinstance(value, str) else [t for t in value if t != "null"]
        if len(kinds) != 1:
            raise ValueError(f"unexpected type {value!r}")
        return kinds[0]
    if key == "$ref":
        return _ref(value)
    if key == "properties":
        return {name: _property(name, sub, top_level_kind=top_level_kind) for name, sub in value.items()}
    if key in ("items", "additionalProperties") and isinstance(value, dict):
        return _schema(value)
    if key in _SCHEMA_LISTS:
        return [_schema(sub) for sub in value]
    return value


def _property(name: str, sub: dict[str, Any], *, top_level_kind: bool) -> dict[str, Any]:
    converted = _schema(sub)
    if top_level_kind and name in ("apiVersion", "kind"):
        converted.pop("enum", None)  # the converter's pin; kube-openapi declares a plain string
    return converted


def _references(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value[len(_REF) :])
            elif key == "properties":
                for sub in value.values():
                    _references(sub, found)
            else:
                _references(value, found)
    elif isinstance(node, list):
        for item in node:
            _references(item, found)


def _gvks(schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(g["group"], g["version"], g["kind"]) for g in schema.get("x-kubernetes-group-version-kind") or []]


def select(defs: dict[str, Any]) -> list[str]:
    """The definition names to keep: the served kinds, their lists, :data:`COMMON`, and their closure."""
    wanted = set(KINDS) | {(g, v, k + "List") for g, v, k in KINDS}
    roots = {name for name, schema in defs.items() if any(gvk in wanted for gvk in _gvks(schema))}
    found_kinds = {gvk for name in roots for gvk in _gvks(defs[name]) if gvk in wanted}
    missing = sorted(gvk for gvk in KINDS if gvk not in found_kinds)
    if missing:
        raise ValueError(f"kinds absent from the source: {missing}")
    todo = [*sorted(roots), *COMMON]
    keep: set[str] = set()
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        refs: set[str] = set()
        _references(defs[name], refs)
        todo.extend(refs - keep)
    return sorted(keep)


def generate(text: str, version: str) -> str:
    """The data file's text for the definitions ``text`` of ``kubernetes-validate`` ``version``."""
    defs: dict[str, Any] = json.loads(text)["$defs"]
    lines = [
        "{",
        '"header": '
        + json.dumps(
            {
                "kubernetes": "1.34",
                "source": f"{PACKAGE} {version} (Apache-2.0): kubernetes_validate/{SOURCE}",
                "generator": "python -m shared.sim.apiserver.schemagen",
            },
            sort_keys=True,
        )
        + ",",
        '"schemas": {',
    ]
    names = select(defs)
    for i, name in enumerate(names):
        schema = _schema(defs[name], top_level_kind="x-kubernetes-group-version-kind" in defs[name])
        comma = "," if i < len(names) - 1 else ""
        lines.append(json.dumps(name) + ": " + json.dumps(schema, separators=(",", ":"), ensure_ascii=False) + comma)
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"


def main() -> int:
    try:
        text, version = source_text()
    except ImportError:
        print(f"{PACKAGE} is not installed: pip install -e '.[test]'", file=sys.stderr)
        return 1
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(generate(text, version), encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
