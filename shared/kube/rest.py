"""Raw JSON reads and writes through the official client's transport.

Reading a thousand Nodes through the client's generated models costs seconds of deserialisation;
the domain code only needs plain data, so these calls ask the same ``ApiClient`` (same
authentication, TLS and retries) for the JSON body and parse it once. Lists are paged with
``limit``/``continue`` so a large cluster is never fetched in one response. Every failure is mapped
by ``shared.kube.errors`` and transient ones are retried by ``shared.kube.retry``.

A page of 500 Pods decodes into some 150,000 dicts, lists and strings; the cyclic garbage collector
would traverse them (and everything else alive) again and again while they are built, doubling or
tripling the decoding time. Decoded JSON holds no reference cycles, so ``decode`` pauses the
collector for the parse (``collector_paused``, which a caller streaming pages may hold around its
own projection of each page too); reference counting still frees everything as usual.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator
from typing import Any

from shared.kube import retry
from shared.kube.api import KubeApi

PAGE_SIZE = 500
_AUTH = ["BearerToken"]
_JSON = {"Accept": "application/json", "Content-Type": "application/json"}
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
"""What ``kubectl get`` asks for: the server's Table, or the plain list where it has no printer."""


def _request(
    api: KubeApi,
    method: str,
    path: str,
    *,
    query: dict[str, Any] | None = None,
    body: Any = None,
    what: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    def call() -> Any:
        response = api.call_api(
            path,
            method,
            query_params=list((query or {}).items()),
            header_params={**_JSON, **(headers or {})},
            body=body,
            auth_settings=_AUTH,
            _return_http_data_only=True,
            _preload_content=False,
            _request_timeout=30,
        )
        data = response.data
        return decode(data) if data else None

    return retry.call(call, what=what or path)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (and back on after, if it was on): for work
    that builds many objects and no reference cycles, such as decoding JSON or projecting each
    decoded page to the few fields a caller keeps. Reference counting still frees what is dropped."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def decode(data: bytes | str) -> Any:
    """``json.loads`` with the collector paused: a JSON document has no cycles to find, and tracing
    the objects while they are built is most of the cost of a large page."""
    with collector_paused():
        return json.loads(data)


def get(api: KubeApi, path: str, *, what: str | None = None) -> dict[str, Any]:
    """One object (or any JSON document) at ``path``."""
    result: dict[str, Any] = _request(api, "GET", path, what=what)
    return result


def collection_version(api: KubeApi, path: str, *, what: str | None = None) -> str | None:
    """The collection's current resourceVersion, where a watch of it starts: a list of one item,
    so a collection of 30,000 objects costs what one of them does."""
    page: dict[str, Any] = _request(api, "GET", path, query={"limit": 1}, what=what)
    version = (page.get("metadata") or {}).get("resourceVersion")
    return str(version) if version else None


def list_items(
    api: KubeApi, path: str, *, label_selector: str | None = None, field_selector: str | None = None
) -> list[dict[str, Any]]:
    """Every item of a collection, fetched page by page."""
    return list(iter_items(api, path, label_selector=label_selector, field_selector=field_selector))


def iter_items(
    api: KubeApi, path: str, *, label_selector: str | None = None, field_selector: str | None = None
) -> Iterator[dict[str, Any]]:
    """``list_items`` one page at a time: counting or projecting 10,000 Nodes never holds them all."""
    for page in iter_pages(api, path, label_selector=label_selector, field_selector=field_selector):
        yield from page.get("items") or []


def iter_pages(
    api: KubeApi,
    path: str,
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
    table: bool = False,
) -> Iterator[dict[str, Any]]:
    """The list responses themselves, ``limit``/``continue``: the first one's resourceVersion is the
    version of the whole (consistent) list, where a watch of it starts.

    ``table``: each page as the server prints it, a ``meta.k8s.io/v1`` Table of the columns ``kubectl
    get`` shows and no objects (``includeObject=None``), a few dozen bytes an object where the object
    is kilobytes. A server that cannot print the resource answers with the plain list (the Accept
    header allows both), so a caller checks each page's ``kind``."""
    token: str | None = None
    headers = {"Accept": TABLE_ACCEPT} if table else None
    while True:
        query: dict[str, Any] = {"limit": PAGE_SIZE, "includeObject": "None"} if table else {"limit": PAGE_SIZE}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        if token:
            query["continue"] = token
        page: dict[str, Any] = _request(api, "GET", path, query=query, headers=headers)
        yield page
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return


def create(api: KubeApi, path: str, body: dict[str, Any], *, what: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = _request(api, "POST", path, body=body, what=what)
    return result


def replace(api: KubeApi, path: str, body: dict[str, Any], *, what: str | None = None) -> dict[str, Any]:
    """PUT with the body's resourceVersion: a stale one is a 409 for the caller's retry loop."""
    result: dict[str, Any] = _request(api, "PUT", path, body=body, what=what)
    return result


def core_path(resource: str, namespace: str | None = None, name: str | None = None) -> str:
    base = f"/api/v1/namespaces/{namespace}/{resource}" if namespace else f"/api/v1/{resource}"
    return f"{base}/{name}" if name else base


def group_path(group: str, version: str, resource: str, namespace: str | None = None, name: str | None = None) -> str:
    base = f"/apis/{group}/{version}"
    base = f"{base}/namespaces/{namespace}/{resource}" if namespace else f"{base}/{resource}"
    return f"{base}/{name}" if name else base


def delete(api: KubeApi, path: str, *, propagation: str = "Background", what: str | None = None) -> bool:
    """DELETE ``path`` with a propagation policy (a Job's pods go with it); True when it existed.

    An object already gone is success for an idempotent controller, so NotFound returns False.
    """
    from shared import errors

    body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
    try:
        _request(api, "DELETE", path, body=body, what=what)
    except errors.NotFound:
        return False
    return True


def apply(
    api: KubeApi, path: str, body: dict[str, Any], *, field_manager: str, force: bool = True, what: str | None = None
) -> dict[str, Any]:
    """Server-side apply of ``body`` at ``path``: creates or updates in one request.

    ``force`` takes over fields another manager owns, as ``kubectl apply --server-side
    --force-conflicts`` does; without it such a field is a 409 naming the manager.
    """
    query = {"fieldManager": field_manager, **({"force": "true"} if force else {})}
    result: dict[str, Any] = _request(
        api, "PATCH", path, query=query, body=body, what=what, headers={"Content-Type": "application/apply-patch+yaml"}
    )
    return result
