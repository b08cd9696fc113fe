"""Server-side apply and field ownership: ``metadata.managedFields`` as a real server keeps it.

Every write records which manager set which fields. An *Update* (POST, PUT, a non-apply PATCH)
gives its manager the fields it changed and takes them from everyone else; an *Apply* makes the
applier own exactly the fields of its configuration, refuses (409 ``Conflict``, one
``FieldManagerConflict`` cause per field) to change a field another manager owns with a
different value unless ``force=true``, and removes the fields it applied before and no longer
applies when nobody else owns them — which is what lets ``kubectl apply --server-side`` and helm 4
delete a field by dropping it from the manifest.

Field sets are kept as Python sets of paths and written as ``FieldsV1`` (``f:<field>``,
``k:{"<key>":…}`` for items of keyed lists, ``v:<value>`` for set items, ``.`` for an item itself).
What is modelled of structured-merge-diff (sigs.k8s.io/structured-merge-diff/v4): keyed lists
by their merge keys, sets, atomic lists and maps; ``apiVersion``, ``kind``, ``metadata.name``,
``namespace``, ``uid``, ``resourceVersion``, ``generation``, ``creationTimestamp`` and
``managedFields`` are never owned; ``status`` is reset on the main endpoint of a resource with a
status subresource and only ``status`` is kept on ``/status``. Not modelled: version conversion
of field sets (the simulator serves one schema per version) and unions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.sim.apiserver.apierrors import ApiError

Step = tuple[str, Any]
"""One path element: ("f", name) | ("k", key-dict as sorted JSON) | ("v", value as JSON) | ("i", index)."""
Path = tuple[Step, ...]
ListType = tuple[str, tuple[str, ...]]
"""("map", merge keys) | ("set", ()) | ("atomic", ())."""
ListTypes = Callable[[tuple[str, ...]], ListType]
"""The list type of the list at a path of field names (indexes left out)."""

_UNOWNED_ROOT = frozenset({"apiVersion", "kind"})
_UNOWNED_META = frozenset(
    {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}
)
_ITEM = ("f", ".")  # FieldsV1's "." — the list item (or map) itself


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


# ------------------------------------------------------------------ field sets
def field_set(obj: Any, list_types: ListTypes, *, prefix: Path = (), names: tuple[str, ...] = ()) -> set[Path]:
    """Every leaf a configuration sets, as paths (the fields an applier would own)."""
    out: set[Path] = set()
    _collect(obj, prefix, names, list_types, out, root=not prefix)
    return out


def _collect(
    value: Any, path: Path, names: tuple[str, ...], list_types: ListTypes, out: set[Path], *, root: bool
) -> None:
    if isinstance(value, dict):
        if not value and path:
            out.add(path)
        for key, item in value.items():
            if root and key in _UNOWNED_ROOT:
                continue
            if len(path) == 1 and path[0] == ("f", "metadata") and key in _UNOWNED_META:
                continue
            _collect(item, (*path, ("f", key)), (*names, key), list_types, out, root=False)
        return
    if isinstance(value, list):
        kind, keys = list_types(names)
        if kind == "atomic" or not value:
            out.add(path)
            return
        for index, item in enumerate(value):
            step = _item_step(kind, keys, item, index)
            item_path = (*path, step)
            out.add((*item_path, _ITEM))
            if kind == "map" and isinstance(item, dict):
                for key, sub in item.items():
                    _collect(sub, (*item_path, ("f", key)), (*names, key), list_types, out, root=False)
        return
    out.add(path)


def _item_step(kind: str, keys: tuple[str, ...], item: Any, index: int) -> Step:
    if kind == "map" and isinstance(item, dict) and keys:
        return ("k", json.dumps({k: item.get(k) for k in keys if k in item}, sort_keys=True, separators=(",", ":")))
    if kind == "set":
        return ("v", json.dumps(item, sort_keys=True, separators=(",", ":")))
    return ("i", index)


def to_fields_v1(fields: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(fields, key=_sort_key):
        node = tree
        for step in path:
            node = node.setdefault(_encode(step), {})
    return tree


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    if not tree and prefix:
        out.add(prefix)
    for key, sub in tree.items():
        step = _decode(key)
        if step is None:
            continue
        out |= from_fields_v1(sub, (*prefix, step))
    return out


def _encode(step: Step) -> str:
    kind, value = step
    if step == _ITEM:
        return "."
    return f"{kind}:{value}"


def _decode(key: str) -> Step | None:
    if key == ".":
        return _ITEM
    kind, _, value = key.partition(":")
    if kind == "i":
        return ("i", int(value)) if value.isdigit() else None
    if kind in ("f", "k", "v"):
        return (kind, value)
    return None


def _sort_key(path: Path) -> tuple[str, ...]:
    return tuple(f"{k}:{v}" for k, v in path)


# ------------------------------------------------------------------ reading values at paths
def value_at(obj: Any, path: Path, list_types: ListTypes) -> tuple[bool, Any]:
    """(found, value) of the field a path names in ``obj``."""
    node = obj
    names: tuple[str, ...] = ()
    for step in path:
        kind, value = step
        if step == _ITEM:
            return True, node
        if kind == "f":
            if not isinstance(node, dict) or value not in node:
                return False, None
            node = node[value]
            names = (*names, value)
        elif kind in ("k", "v", "i"):
            if not isinstance(node, list):
                return False, None
            found = _find_item(node, step, list_types(names))
            if found is None:
                return False, None
            node = node[found]
    return True, node


def _find_item(items: list[Any], step: Step, list_type: ListType) -> int | None:
    kind, value = step
    list_kind, keys = list_type
    for index, item in enumerate(items):
        if _item_step(list_kind, keys, item, index) == step:
            return index
    if kind == "i" and isinstance(value, int) and value < len(items):
        return value
    return None


def remove_at(obj: Any, path: Path, list_types: ListTypes) -> None:
    """Drop the field (or list item) at ``path`` from ``obj``, in place; absent is fine."""
    if not path:
        return
    if path[-1] == _ITEM:
        path = path[:-1]
    parent_found, parent = value_at(obj, path[:-1], list_types)
    if not parent_found:
        return
    kind, value = path[-1]
    if kind == "f" and isinstance(parent, dict):
        parent.pop(value, None)
    elif isinstance(parent, list):
        names = tuple(v for k, v in path[:-1] if k == "f")
        index = _find_item(parent, path[-1], list_types(names))
        if index is not None:
            del parent[index]


# ------------------------------------------------------------------ merging an applied configuration
def merge(live: Any, config: Any, list_types: ListTypes, names: tuple[str, ...] = ()) -> Any:
    """The configuration merged over the live object: maps by key, keyed lists by their keys,
    sets by value, anything else replaced. Returns new data; inputs are not changed."""
    if isinstance(config, dict) and isinstance(live, dict):
        out = dict(live)
        for key, value in config.items():
            out[key] = merge(live.get(key), value, list_types, (*names, key))
        return out
    if isinstance(config, list) and isinstance(live, list):
        kind, keys = list_types(names)
        if kind == "map":
            result = list(live)
            for index, item in enumerate(config):
                step = _item_step(kind, keys, item, index)
                at = _find_item(result, step, (kind, keys))
                if at is None:
                    result.append(item)
                else:
                    result[at] = merge(result[at], item, list_types, names)
            return result
        if kind == "set":
            result = list(live)
            for item in config:
                if item not in result:
                    result.append(item)
            return result
    return json.loads(json.dumps(config))


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
        for path in sorted(entry.fields & applied, key=_sort_key):
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
        if path not in others and not any(_under(path, a) or _under(a, path) for a in applied):
            remove_at(merged, path, list_types)
    if applied != before or merged != base or taken or not mine.time:
        mine.time = now  # a repeated apply that changes nothing leaves the object as it was
    mine.fields = applied
    mine.api_version = api_version
    store_entries(merged, entries)
    return merged


def _under(path: Path, prefix: Path) -> bool:
    return len(path) > len(prefix) and path[: len(prefix)] == prefix


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


def pretty(path: Path) -> str:
    """``.spec.replicas``, ``.spec.containers[name="app"].image`` as conflict messages print paths."""
    text = ""
    for kind, value in path:
        if (kind, value) == _ITEM:
            continue
        if kind == "f":
            text += f".{value}"
        elif kind == "k":
            keys = json.loads(value)
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        elif kind == "v":
            text += f"[={value}]"
        else:
            text += f"[{value}]"
    return text


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


def iter_paths(fields: set[Path]) -> Iterator[str]:
    for path in sorted(fields, key=_sort_key):
        yield pretty(path)
