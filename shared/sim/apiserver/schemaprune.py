"""Pruning and defaulting of a custom resource by its CRD's structural schema, as a 1.34 server does.

apiextensions-apiserver:pkg/apiserver/schema/pruning/algorithm.go (unknown fields dropped and
reported), schema/defaulting/prunenulls.go (nulls the schema neither allows nor defaults dropped),
schema/objectmeta/coerce.go (ObjectMeta's own fields kept, at the root and under embedded resources)
and schema/defaulting/algorithm.go (defaults applied). Only the tree walks live here:
:class:`shared.sim.apiserver.structural.StructuralSchema` calls them in the server's order, and
``schemacheck`` prunes a default with :func:`pruned_copy` to check it for unknown fields.
"""

from __future__ import annotations

import copy
from typing import Any

from shared.sim.apiserver.schemanode import Node

# ObjectMeta's JSON fields (k8s.io/apimachinery/pkg/apis/meta/v1 types.go); any other key under a
# resource's metadata is unknown to the strict decoder and dropped.
OBJECT_META_FIELDS = (
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields",
)  # fmt: skip
_NESTED_META_FIELDS = {
    "ownerReferences": ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"),
    "managedFields": ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"),
}
META_KEYS = frozenset({"apiVersion", "kind", "metadata"})


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _allowed(node: Node, key: str) -> tuple[bool, Node | None]:
    """Whether the object schema ``node`` keeps ``key``, and the schema of its value (None: any)."""
    sub = node.properties.get(key)
    if sub is not None:
        return True, sub
    return node.additional_allows is not None, node.additional


# --- pruning (pkg/apiserver/schema/pruning/algorithm.go) ------------------------------------------------


def prune(value: Any, node: Node | None, path: str, found: list[str], *, embedded: bool = False) -> None:
    """Drop, in place, what ``node`` does not know below ``value``; the dropped paths go to ``found``."""
    if node is not None and node.preserve_unknown:
        _skip_prune(value, node, path, found, embedded=embedded)
    elif isinstance(value, dict):
        _prune_object(value, node, path, found, embedded=embedded)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            prune(item, node.items if node is not None else None, f"{path}[{i}]", found)


def _prune_object(value: dict[str, Any], node: Node | None, path: str, found: list[str], *, embedded: bool) -> None:
    for key in list(value):
        if node is None:
            known, sub = False, None
        elif (node.embedded or embedded) and key in META_KEYS:
            continue
        else:
            known, sub = _allowed(node, key)
        if known:
            prune(value[key], sub, _key(path, key), found)
        else:
            found.append(_key(path, key))
            del value[key]


def _skip_prune(value: Any, node: Node | None, path: str, found: list[str], *, embedded: bool = False) -> None:
    """Below x-kubernetes-preserve-unknown-fields: unknown keys stay, known ones are pruned by their schema."""
    if node is None:
        return
    if isinstance(value, dict):
        for key in list(value):
            if (node.embedded or embedded) and key in META_KEYS:
                continue
            known, sub = _allowed(node, key)
            if known:
                prune(value[key], sub, _key(path, key), found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _skip_prune(item, node.items, f"{path}[{i}]", found)


def drop_nulls(value: Any, node: Node | None) -> None:
    """PruneNonNullableNullsWithoutDefaults: a null the schema neither allows nor defaults goes."""
    if isinstance(value, dict):
        for key in list(value):
            sub = node.child(key) if node is not None else None
            if value[key] is None and sub is not None and not sub.nullable and not sub.has_default:
                del value[key]
            else:
                drop_nulls(value[key], sub)
    elif isinstance(value, list):
        for item in value:
            drop_nulls(item, node.items if node is not None else None)


def strip_meta(meta: dict[str, Any], path: str, found: list[str]) -> None:
    """Keep ObjectMeta's fields (the strict decoder reports the rest, in document order)."""
    for key in list(meta):
        if key not in OBJECT_META_FIELDS:
            found.append(f"{path}.{key}")
            del meta[key]
        elif key in _NESTED_META_FIELDS and isinstance(meta[key], list):
            _strip_nested(meta[key], _NESTED_META_FIELDS[key], f"{path}.{key}", found)


def _strip_nested(entries: list[Any], fields: tuple[str, ...], path: str, found: list[str]) -> None:
    """ownerReferences and managedFields entries keep their own struct's fields."""
    for i, entry in enumerate(entries):
        if isinstance(entry, dict):
            for inner in list(entry):
                if inner not in fields:
                    found.append(f"{path}[{i}].{inner}")
                    del entry[inner]


def embedded_meta(value: Any, node: Node | None, path: str, found: list[str]) -> None:
    """objectmeta.Coerce below the root: metadata of embedded resources is ObjectMeta too."""
    if node is None:
        return
    if isinstance(value, dict):
        if node.embedded and isinstance(value.get("metadata"), dict):
            strip_meta(value["metadata"], _key(path, "metadata"), found)
        for key, item in value.items():
            if node.embedded and key in META_KEYS:
                continue
            known, sub = _allowed(node, key)
            if known:
                embedded_meta(item, sub, _key(path, key), found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            embedded_meta(item, node.items, f"{path}[{i}]", found)


def pruned_copy(value: Any, node: Node) -> Any:
    """``value`` pruned by ``node`` (a copy): how a default is checked for unknown fields."""
    result = copy.deepcopy(value)
    prune(result, node, "", [], embedded=node.embedded)
    return result


# --- defaulting (pkg/apiserver/schema/defaulting/algorithm.go) ------------------------------------------


def _null_defaulted(value: Any, node: Node | None) -> Any:
    """A null where ``node`` allows none becomes its default (a copy); anything else stays."""
    if value is None and node is not None and not node.nullable and node.has_default:
        return copy.deepcopy(node.default)
    return value


def default(value: Any, node: Node | None) -> None:
    """Apply the defaults of ``node`` below ``value``, in place."""
    if node is None:
        return
    if isinstance(value, dict):
        _default_object(value, node)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = _null_defaulted(item, node.items)
            default(value[i], node.items)


def _default_object(value: dict[str, Any], node: Node) -> None:
    for key, sub in node.properties.items():
        if sub.has_default and (key not in value or (value[key] is None and not sub.nullable)):
            value[key] = copy.deepcopy(sub.default)
    for key in list(value):
        known = node.properties.get(key)
        if known is not None:
            default(value[key], known)
        elif node.additional_allows is not None:
            value[key] = _null_defaulted(value[key], node.additional)
            default(value[key], node.additional)
