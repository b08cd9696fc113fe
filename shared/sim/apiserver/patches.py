"""The three patch formats (and a simplified apply), as pure functions over plain data.

- JSON merge patch (RFC 7386): maps merge, ``null`` deletes, lists replace.
- Strategic merge patch: like merge patch, but the lists Kubernetes declares with a patch merge
  key (containers by ``name``, conditions by ``type``, ...) merge element by element, ``finalizers``
  merge as a set, and the ``$patch``/``$retainKeys``/``$deleteFromPrimitiveList`` directives work.
  Lists without a declared strategy replace, exactly as on a real server: ``spec.taints`` and
  ``tolerations`` replace, which is what ``kubectl taint NODE key-`` relies on to remove a taint.
- JSON patch (RFC 6902): add, remove, replace, move, copy, test.

Every function returns a new document and never mutates its inputs, so a failed patch cannot
leave a half-changed object behind.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

# Lists that merge by a key (from the patchMergeKey tags of the Kubernetes API types).
MERGE_KEYS: dict[str, str] = {
    "conditions": "type",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "addresses": "type",
    "hostAliases": "ip",
    "podIPs": "ip",
    "hostIPs": "ip",
    "resourceClaims": "name",
    "topologySpreadConstraints": "topologyKey",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
}
# Lists of scalars that merge as sets.
SET_LISTS = frozenset({"finalizers"})
_DIRECTIVE = "$patch"
_RETAIN = "$retainKeys"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"


class PatchError(ValueError):
    """A patch that cannot be applied; the server answers 422 (or 400 for a malformed one)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":  # containers' ports merge by containerPort, services' by port
        sample = next((i for i in items if isinstance(i, dict)), {})
        return "containerPort" if "containerPort" in sample else "port"
    return MERGE_KEYS.get(field)


def _merge_list(field: str, live: list[Any], patch: list[Any]) -> list[Any]:
    if any(isinstance(i, dict) and i.get(_DIRECTIVE) == "replace" and len(i) == 1 for i in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and i.get(_DIRECTIVE) == "replace")]
    if field in SET_LISTS:
        return copy.deepcopy(live) + [copy.deepcopy(v) for v in patch if v not in live]
    key = _merge_key(field, live + patch)
    if key is None or not all(isinstance(i, dict) for i in patch):
        return [_strip(i) for i in patch]
    out = copy.deepcopy(live)
    for item in patch:
        if key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {key}")
        index = next((n for n, cur in enumerate(out) if isinstance(cur, dict) and cur.get(key) == item[key]), None)
        if item.get(_DIRECTIVE) == "delete":
            if index is not None:
                out.pop(index)
        elif index is None:
            out.append(_strip(item))
        else:
            out[index] = strategic_merge(out[index], item)
    return out


def _strip(value: Any) -> Any:
    """Remove directive keys from data that is inserted as a whole."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def strategic_merge(target: Any, patch: Any) -> Any:
    """Strategic merge patch for built-in kinds (see the module docstring for the rules)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    directive = patch.get(_DIRECTIVE)
    if directive == "replace":
        return _strip(patch)
    if directive == "delete":
        return None
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {directive}")
    out = copy.deepcopy(target)
    for key, value in patch.items():
        _merge_field(out, key, value)
    retain = patch.get(_RETAIN)
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _merge_field(out: dict[str, Any], key: str, value: Any) -> None:
    """One key of a strategic merge patch, applied to ``out`` in place."""
    if key.startswith(_DELETE_PRIMITIVE):
        name = key[len(_DELETE_PRIMITIVE) :]
        if isinstance(out.get(name), list) and isinstance(value, list):
            out[name] = [v for v in out[name] if v not in value]
    elif key.startswith("$"):
        return
    elif value is None:
        out.pop(key, None)
    elif isinstance(value, list):
        current = out.get(key)
        out[key] = _merge_list(key, current if isinstance(current, list) else [], value)
    elif isinstance(value, dict):
        merged = strategic_merge(out.get(key), value)
        if merged is None:
            out.pop(key, None)
        else:
            out[key] = merged
    else:
        out[key] = value


# ---------------------------------------------------------------- JSON patch (RFC 6902)


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, *, insert: bool) -> int:
    if token == "-" and insert:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not insert):
        raise PatchError(f"array index {index} out of range")
    return index


def _resolve(doc: Any, tokens: list[str]) -> Any:
    current = doc
    for token in tokens:
        if isinstance(current, dict):
            if token not in current:
                raise PatchError(f"path /{'/'.join(tokens)} does not exist")
            current = current[token]
        elif isinstance(current, list):
            current = current[_index(current, token, insert=False)]
        else:
            raise PatchError(f"path /{'/'.join(tokens)} does not exist")
    return current


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _resolve(doc, tokens[:-1])
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, tokens[-1], insert=True), value)
    else:
        raise PatchError(f"cannot add at /{'/'.join(tokens)}")
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _resolve(doc, tokens[:-1])
    if isinstance(parent, dict):
        if tokens[-1] not in parent:
            raise PatchError(f"unable to remove nonexistent key: {tokens[-1]}")
        return parent.pop(tokens[-1])
    if isinstance(parent, list):
        return parent.pop(_index(parent, tokens[-1], insert=False))
    raise PatchError(f"cannot remove /{'/'.join(tokens)}")


def json_patch(doc: Any, operations: Any) -> Any:
    """Apply an RFC 6902 operation list; any failing operation fails the whole patch."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid operation {op!r}")
        name, tokens = op["op"], _pointer(op["path"])
        if name in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"operation {name} at {op['path']} needs a value")
        operation = _OPERATIONS.get(name) if isinstance(name, str) else None
        if operation is None:
            raise PatchError(f"unknown operation {name!r}")
        doc = operation(doc, tokens, op)
    return doc


def _op_add(doc: Any, tokens: list[str], op: dict[str, Any]) -> Any:
    return _add(doc, tokens, copy.deepcopy(op["value"]))


def _op_remove(doc: Any, tokens: list[str], op: dict[str, Any]) -> Any:
    _remove(doc, tokens)
    return doc


def _op_replace(doc: Any, tokens: list[str], op: dict[str, Any]) -> Any:
    _resolve(doc, tokens)  # must exist
    if tokens:
        _remove(doc, tokens)
    return _add(doc, tokens, copy.deepcopy(op["value"]))


def _op_move(doc: Any, tokens: list[str], op: dict[str, Any]) -> Any:
    source = _pointer(op.get("from", ""))
    if tokens[: len(source)] == source and tokens != source:
        raise PatchError("cannot move a value into one of its children")
    value = copy.deepcopy(_resolve(doc, source))
    _remove(doc, source)
    return _add(doc, tokens, value)


def _op_copy(doc: Any, tokens: list[str], op: dict[str, Any]) -> Any:
    value = copy.deepcopy(_resolve(doc, _pointer(op.get("from", ""))))
    return _add(doc, tokens, value)


def _op_test(doc: Any, tokens: list[str], op: dict[str, Any]) -> Any:
    if _resolve(doc, tokens) != op["value"]:
        raise PatchError(f"testing value {op['path']} failed")
    return doc


_OPERATIONS: dict[str, Callable[[Any, list[str], dict[str, Any]], Any]] = {
    "add": _op_add,
    "remove": _op_remove,
    "replace": _op_replace,
    "move": _op_move,
    "copy": _op_copy,
    "test": _op_test,
}


def apply(live: Any, applied: Any, *, strategic: bool) -> Any:
    """Simplified server-side apply: the applied configuration merged over the live object.

    Fields a manager stops applying are not removed (no managedFields are tracked); nothing
    outside the applied configuration is ever touched, so an apply cannot corrupt an object.
    """
    if strategic:
        return strategic_merge(live, applied)
    return merge_patch(live, applied)
