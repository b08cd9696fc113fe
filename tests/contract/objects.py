"""Small builders for the objects the contract tests create (plain dicts, as users write them)."""

from __future__ import annotations

import json
from typing import Any

CRD_GROUP = "contract.example.com"


def pod(
    name: str, *, node: str | None = None, labels: dict[str, str] | None = None, containers: tuple[str, ...] = ("main",)
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": c, "image": "busybox"} for c in containers]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def node(name: str, *, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}}


def configmap(name: str, data: dict[str, str] | None = None, *, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
        "data": data or {},
    }


def crd(
    plural: str,
    kind: str,
    *,
    scope: str = "Namespaced",
    status: bool = True,
    columns: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    if status:
        version["subresources"] = {"status": {}}
    if columns:
        version["additionalPrinterColumns"] = columns
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{CRD_GROUP}"},
        "spec": {
            "group": CRD_GROUP,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "shortNames": [f"{kind.lower()[:3]}x"]},
            "versions": [version],
        },
    }


def raw_patch(api: Any, path: str, body: Any, content_type: str, query: list[tuple[str, str]] | None = None) -> Any:
    """PATCH with an explicit content type (client 35's typed methods pick it themselves)."""
    return api.call_api(
        path,
        "PATCH",
        query_params=query or [],
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
        response_type="object",
        _return_http_data_only=True,
    )


def request(
    api: Any,
    method: str,
    path: str,
    body: Any = None,
    *,
    content_type: str = "application/json",
    query: list[tuple[str, str]] | None = None,
) -> tuple[int, Any, Any]:
    """Any request through the official client, answering (status, body, headers) — the typed
    methods drop response headers, and ``Warning`` headers are what some tests are about."""
    data, status, headers = api.call_api(
        path,
        method,
        query_params=query or [],
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
        response_type="object",
        _return_http_data_only=False,
    )
    return status, data, headers


def raw_request(
    api: Any, method: str, path: str, raw: bytes, *, content_type: str, query: str = ""
) -> tuple[int, Any, Any]:
    """Send bytes exactly as given (the client re-encodes any JSON body it is handed), through
    the client's own connection pool, TLS settings and credentials."""
    headers = {"Content-Type": content_type, "Accept": "application/json"}
    api.update_params_for_auth(headers, [], ["BearerToken"])
    url = api.configuration.host + path + (f"?{query}" if query else "")
    answer = api.rest_client.pool_manager.request(method, url, body=raw, headers=headers)
    text = answer.data.decode()
    return answer.status, json.loads(text) if text.startswith("{") else text, answer.headers
