"""Server-side apply and field ownership: ``metadata.managedFields`` as a real server keeps it.

Every write records which manager set which fields. An *Update* (POST, PUT, a non-apply PATCH)
gives its manager the fields it changed and takes them from everyone else; an *Apply* makes the
applier own exactly the fields of its configuration, refuses (409 ``Conflict``, one
``FieldManagerConflict`` cause per field) to change a field another manager owns with a
different value unless ``force=true``, and removes the fields it applied before and no longer
applies when nobody else owns them — which is what lets ``kubectl apply --server-side`` and helm 4
delete a field by dropping it from the manifest.

Field sets are kept as Python sets of paths (:mod:`shared.sim.apiserver.fieldpaths`) and written as
``FieldsV1`` (``f:<field>``, ``k:{"<key>":…}`` for items of keyed lists, ``v:<value>`` for set items,
``.`` for an item itself).
What is modelled of structured-merge-diff (sigs.k8s.io/structured-merge-diff/v4): keyed lists
by their merge keys, sets, atomic lists and maps; ``apiVersion``, ``kind``, ``metadata.name``,
``namespace``, ``uid``, ``resourceVersion``, ``generation``, ``creationTimestamp`` and
``managedFields`` are never owned; ``status`` is reset on the main endpoint of a resource with a
status subresource and only ``status`` is kept on ``/status``. Not modelled: version conversion
of field sets (the simulator serves one schema per version) and unions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.fieldpaths import (
    ListTypes,
    Path,
    field_set,
    from_fields_v1,
    merge,
    pretty,
    remove_at,
    sort_key,
    to_fields_v1,
    under,
    value_at,
)


@dataclass
class Entry:
    manager: str
    operation: str  # "Apply" | "Update"
    api_version: str
    time: str
    fields: set[Path]
    subresource: str = ""

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": to_fields_v1(self.fields),
        }
        if self.subresource:
            doc["subresource"] = self.subresource
        return doc


# ------------------------------------------------------------------ the two operations
def entries_of(obj: dict[str, Any]) -> list[Entry]:
    out = []
    for doc in (obj.get("metadata") or {}).get("managedFields") or []:
        if not isinstance(doc, dict) or (not doc.get("manager") and not doc.get("fieldsV1")):
            continue
        out.append(
            Entry(
                manager=str(doc.get("manager", "")),
                operation=str(doc.get("operation", "Update")),
                api_version=str(doc.get("apiVersion", "")),
                time=str(doc.get("time", "")),
                fields=from_fields_v1(doc.get("fieldsV1") or {}),
                subresource=str(doc.get("subresource", "")),
            )
        )
    return out


def _identity(entry: Entry) -> tuple[Any, ...]:
    """An entry as the server compares it after decoding: times as instants, not as text
    (the Python client writes ``+00:00`` where the server wrote ``Z``)."""
    moment = entry.time.replace("Z", "+00:00")
    try:
        instant: Any = datetime.fromisoformat(moment).timestamp()
    except ValueError:
        instant = entry.time
    return (entry.manager, entry.operation, entry.api_version, instant, entry.subresource, frozenset(entry.fields))


def store_entries(obj: dict[str, Any], entries: list[Entry]) -> None:
    kept = [e for e in entries if e.fields]
    if kept:
        obj.setdefault("metadata", {})["managedFields"] = [e.document() for e in kept]
    else:
        obj.get("metadata", {}).pop("managedFields", None)


def changed_paths(old: Any, new: Any, list_types: ListTypes) -> tuple[set[Path], set[Path]]:
    """(set or changed, removed) leaf paths from ``old`` to ``new``."""
    new_fields = field_set(new, list_types)
    old_fields = field_set(old, list_types) if old is not None else set()
    changed = {
        p for p in new_fields if p not in old_fields or value_at(old, p, list_types) != value_at(new, p, list_types)
    }
    return changed, old_fields - new_fields


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    api_version: str,
    now: str,
    list_types: ListTypes,
    subresource: str = "",
) -> None:
    """An Update by ``manager``: it owns what it changed; nobody owns what was removed. In place."""
    entries = entries_of(old) if old is not None else []
    if old is not None and "managedFields" in (new.get("metadata") or {}):
        sent = entries_of(new)
        if [_identity(e) for e in sent] != [_identity(e) for e in entries]:
            entries = sent  # the client rewrote managedFields itself (e.g. to reset them)
    bare_old = _without_managed(old)
    bare_new = _without_managed(new)
    changed, removed = changed_paths(bare_old, bare_new, list_types)
    if not changed and not removed:
        store_entries(new, entries)
        return
    for entry in entries:
        entry.fields -= changed | removed
    mine = _entry(entries, manager, "Update", subresource, api_version)
    mine.fields |= changed
    mine.time = now
    mine.api_version = api_version
    store_entries(new, entries)


def apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    *,
    manager: str,
    api_version: str,
    now: str,
    force: bool,
    list_types: ListTypes,
    subresource: str = "",
) -> dict[str, Any]:
    """The object after ``manager`` applies ``config`` (409 on conflicts unless ``force``)."""
    entries = entries_of(live) if live is not None else []
    applied = field_set(config, list_types)
    base = _without_managed(live) if live is not None else {}
    conflicts: list[tuple[str, Path]] = []
    for entry in entries:
        if entry.manager == manager and entry.operation == "Apply" and entry.subresource == subresource:
            continue
        for path in sorted(entry.fields & applied, key=sort_key):
            if value_at(base, path, list_types) != value_at(config, path, list_types):
                conflicts.append((entry.manager, path))
    if conflicts and not force:
        raise _conflict_error(conflicts, api_version)
    taken = {p for _, p in conflicts}
    for entry in entries:
        entry.fields -= taken
    mine = _entry(entries, manager, "Apply", subresource, api_version)
    before = set(mine.fields)
    merged: dict[str, Any] = merge(base, config, list_types)
    others = set().union(*(e.fields for e in entries if e is not mine))
    for path in sorted(before - applied, key=lambda p: -len(p)):
        if path not in others and not any(under(path, a) or under(a, path) for a in applied):
            remove_at(merged, path, list_types)
    if applied != before or merged != base or taken or not mine.time:
        mine.time = now  # a repeated apply that changes nothing leaves the object as it was
    mine.fields = applied
    mine.api_version = api_version
    store_entries(merged, entries)
    return merged


def _entry(entries: list[Entry], manager: str, operation: str, subresource: str, api_version: str) -> Entry:
    for entry in entries:
        if entry.manager == manager and entry.operation == operation and entry.subresource == subresource:
            return entry
    entry = Entry(manager, operation, api_version, "", set(), subresource)
    entries.append(entry)
    return entry


def _without_managed(obj: dict[str, Any] | None) -> dict[str, Any]:
    if obj is None:
        return {}
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta.pop("managedFields", None)
    out["metadata"] = meta
    return out


def _conflict_error(conflicts: list[tuple[str, Path]], api_version: str) -> ApiError:
    """409 as apimachinery:pkg/util/managedfields/internal/conflict.go words it."""
    by_manager: dict[str, list[str]] = {}
    for manager, path in conflicts:
        by_manager.setdefault(manager, []).append(pretty(path))
    count = len(conflicts)
    if count == 1:
        manager, path = conflicts[0]
        message = f'Apply failed with 1 conflict: conflict with "{manager}" using {api_version}: {pretty(path)}'
    else:
        parts = []
        for manager, paths in by_manager.items():
            parts.append(f'conflicts with "{manager}" using {api_version}:\n' + "\n".join(f"- {p}" for p in paths))
        message = f"Apply failed with {count} conflicts: " + "\n".join(parts)
    causes = [
        {"reason": "FieldManagerConflict", "message": f'conflict with "{m}" using {api_version}', "field": pretty(p)}
        for m, p in conflicts
    ]
    return ApiError(409, "Conflict", message, details={"causes": causes})


def manager_from_user_agent(user_agent: str) -> str:
    """The default manager: the User-Agent up to its first ``/`` (apiserver ``prefixFromUserAgent``)."""
    return user_agent.split("/", 1)[0][:128]
