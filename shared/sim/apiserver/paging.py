"""A list's page: stored entries matched by selectors, cut by ``limit``, resumed by ``continue``.

Selectors match the small per-entry indexes the store keeps, so no object is decoded to be
filtered out. A continue token carries the key to resume after and the resourceVersion of the
first page; once the store has compacted past it the token is refused with 410 Gone, as on a real
server. Parsing selectors is the caller's.

A page costs its own length, not the collection's: the scan stops at the first match past
``limit``. ``remainingItemCount`` is what etcd answers cheaply, so a real server sets it only when
no selector filters the list; here it is counted from the sorted keys by bisection, and left unset
(None) with selectors, as there.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from shared.sim.apiserver import apierrors, resources, selectors, store


@dataclass(frozen=True)
class ListResult:
    items: list[store.Entry]
    resource_version: int
    continue_token: str
    remaining: int | None


def page(
    objects: store.Store,
    r: resources.Resource,
    ns: str | None,
    *,
    labels: tuple[selectors.Requirement, ...],
    fields: tuple[selectors.FieldTerm, ...],
    limit: int,
    continue_token: str | None,
) -> ListResult:
    """Matching entries in key order; ``limit`` and ``continue`` page through them."""
    after = None
    if continue_token:
        after, token_rv = _decode_continue(continue_token)
        if token_rv < objects.compacted:
            raise apierrors.gone(
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter."
            )
    with objects.lock:
        rv = objects.resource_version
        scan = objects.scan(r.group_resource, ns if r.namespaced else None, after)
        items: list[store.Entry] = []
        more = False
        for entry in scan:
            if (labels and not selectors.match_labels(labels, entry.labels)) or (
                fields and not selectors.match_fields(fields, entry.fields)
            ):
                continue
            if limit and len(items) >= limit:
                more = True
                break
            items.append(entry)
        if not more:
            return ListResult(items, rv, "", 0)
        last = (items[-1].namespace, items[-1].name)
        where = ns if r.namespaced else None
        remaining = None if labels or fields else objects.count_after(r.group_resource, where, last)
    return ListResult(items, rv, _encode_continue(last, rv), remaining)


def _encode_continue(after: tuple[str, str], rv: int) -> str:
    raw = json.dumps({"v": "sim/1", "rv": rv, "start": list(after)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[tuple[str, str], int]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        start = data["start"]
        return (str(start[0]), str(start[1])), int(data["rv"])
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise apierrors.bad_request(f"continue key is not valid: {token!r}") from exc
