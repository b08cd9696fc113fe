"""Lists and watches as the handler answers them: the request a query asks for, the bytes that go out.

A list is assembled from the stored JSON of its items (no decode and re-encode of 10,000 objects)
unless the items must be converted to the requested version or are computed on read; a watch's
query becomes a :class:`shared.sim.apiserver.watch.WatchRequest` (selectors, timeout capped by the
server's setting, ``sendInitialEvents`` checked). Reading the store and streaming are
:mod:`shared.sim.apiserver.api` and :mod:`shared.sim.apiserver.watch`; tables are
:mod:`shared.sim.apiserver.tables`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from shared.sim.apiserver import api, apierrors, paging, queryparams, resources, routes, selectors, store, watch


def list_meta(result: paging.ListResult) -> dict[str, Any]:
    """A list's metadata: its resourceVersion, and where the next page starts."""
    meta: dict[str, Any] = {"resourceVersion": str(result.resource_version)}
    if result.continue_token:
        meta["continue"] = result.continue_token
        if result.remaining is not None:
            meta["remainingItemCount"] = result.remaining
    return meta


def items_json(apis: api.Api, r: resources.Resource, entries: list[store.Entry]) -> list[bytes]:
    """The items as the version ``r`` serves: stored bytes, unless converted or computed on read."""
    if r.storage_version and r.storage_version != r.version:
        return [json.dumps(apis.as_version(r, e.object())).encode() for e in entries]
    if apis.views.applies(r):  # objects computed on read (heartbeats, events.k8s.io)
        return apis.views.raws(r, entries)
    return [e.raw for e in entries]


def list_json(r: resources.Resource, meta: dict[str, Any], items: list[bytes]) -> bytes:
    head = json.dumps(
        {"kind": f"{r.kind}List", "apiVersion": r.group_version, "metadata": meta}, separators=(",", ":")
    ).encode()
    return head[:-1] + b',"items":[' + b",".join(items) + b"]}"


def watch_request(route: routes.Route, query: dict[str, str], *, max_seconds: float) -> watch.WatchRequest:
    """What a watch asks for; a 400 for a selector or timeout that does not parse."""
    r = route.resource
    try:
        labels = selectors.parse_labels(query.get("labelSelector"))
        fields = selectors.parse_fields(query.get("fieldSelector"), r)
        timeout = float(query.get("timeoutSeconds") or max_seconds)
    except (selectors.SelectorError, ValueError) as exc:
        raise apierrors.bad_request(str(exc)) from exc
    timeout = min(timeout, max_seconds)
    initial = queryparams.watch_list(query)
    return watch.WatchRequest(
        resource=r,
        namespace=route.namespace,
        labels=labels,
        fields=fields,
        resource_version=query.get("resourceVersion"),
        timeout=timeout,
        bookmarks=queryparams.flag(query, "allowWatchBookmarks"),
        initial_events=initial,
    )


def table_event(line: bytes, as_table: Callable[[dict[str, Any]], dict[str, Any]]) -> bytes:
    """A watch event line with its object shown as a table (``as=Table``); bookmarks and errors as they are."""
    event = json.loads(line)
    if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
        event["object"] = as_table(event["object"])
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"
