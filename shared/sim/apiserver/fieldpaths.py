"""Field sets as structured-merge-diff sees them: paths into an object, and their ``FieldsV1`` form.

A path is a tuple of steps: a field name (``f``), a keyed list item by its merge keys (``k``), a set
item by its value (``v``), a plain list index (``i``), or the item itself (``.``). :func:`field_set`
lists the leaves a configuration sets (what an applier owns; ``apiVersion``, ``kind`` and the
server-owned metadata are never owned); :func:`value_at`, :func:`remove_at` and :func:`merge` read,
drop and merge along paths as the list types say. :mod:`shared.sim.apiserver.managedfields` keeps the
managers' entries and runs Update and Apply with these.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

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
ITEM = ("f", ".")  # FieldsV1's "." — the list item (or map) itself


def field_set(obj: Any, list_types: ListTypes, *, prefix: Path = (), names: tuple[str, ...] = ()) -> set[Path]:
    """Every leaf a configuration sets, as paths (the fields an applier would own)."""
    out: set[Path] = set()
    _collect(obj, prefix, names, list_types, out, root=not prefix)
    return out


def _collect(
    value: Any, path: Path, names: tuple[str, ...], list_types: ListTypes, out: set[Path], *, root: bool
) -> None:
    if isinstance(value, dict):
        _collect_map(value, path, names, list_types, out, root=root)
    elif isinstance(value, list):
        _collect_list(value, path, names, list_types, out)
    else:
        out.add(path)


def _collect_map(
    value: dict[str, Any], path: Path, names: tuple[str, ...], list_types: ListTypes, out: set[Path], *, root: bool
) -> None:
    if not value and path:
        out.add(path)
    in_metadata = len(path) == 1 and path[0] == ("f", "metadata")
    for key, item in value.items():
        if (root and key in _UNOWNED_ROOT) or (in_metadata and key in _UNOWNED_META):
            continue
        _collect(item, (*path, ("f", key)), (*names, key), list_types, out, root=False)


def _collect_list(value: list[Any], path: Path, names: tuple[str, ...], list_types: ListTypes, out: set[Path]) -> None:
    kind, keys = list_types(names)
    if kind == "atomic" or not value:
        out.add(path)
        return
    for index, item in enumerate(value):
        item_path = (*path, _item_step(kind, keys, item, index))
        out.add((*item_path, ITEM))
        if kind == "map" and isinstance(item, dict):
            for key, sub in item.items():
                _collect(sub, (*item_path, ("f", key)), (*names, key), list_types, out, root=False)


def _item_step(kind: str, keys: tuple[str, ...], item: Any, index: int) -> Step:
    if kind == "map" and isinstance(item, dict) and keys:
        return ("k", json.dumps({k: item.get(k) for k in keys if k in item}, sort_keys=True, separators=(",", ":")))
    if kind == "set":
        return ("v", json.dumps(item, sort_keys=True, separators=(",", ":")))
    return ("i", index)


def to_fields_v1(fields: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(fields, key=sort_key):
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
    if step == ITEM:
        return "."
    return f"{kind}:{value}"


def _decode(key: str) -> Step | None:
    if key == ".":
        return ITEM
    kind, _, value = key.partition(":")
    if kind == "i":
        return ("i", int(value)) if value.isdigit() else None
    if kind in ("f", "k", "v"):
        return (kind, value)
    return None


def sort_key(path: Path) -> tuple[str, ...]:
    return tuple(f"{k}:{v}" for k, v in path)


# ------------------------------------------------------------------ reading values at paths
def value_at(obj: Any, path: Path, list_types: ListTypes) -> tuple[bool, Any]:
    """(found, value) of the field a path names in ``obj``."""
    node = obj
    names: tuple[str, ...] = ()
    for step in path:
        kind, value = step
        if step == ITEM:
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
    if path[-1] == ITEM:
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


def under(path: Path, prefix: Path) -> bool:
    return len(path) > len(prefix) and path[: len(prefix)] == prefix


def pretty(path: Path) -> str:
    """``.spec.replicas``, ``.spec.containers[name="app"].image`` as conflict messages print paths."""
    text = ""
    for kind, value in path:
        if (kind, value) == ITEM:
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


def iter_paths(fields: set[Path]) -> Iterator[str]:
    for path in sorted(fields, key=sort_key):
        yield pretty(path)
