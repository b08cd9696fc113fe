"""The list-type and map-type rules one node of a CRD's openAPIV3Schema must meet.

apiextensions-apiserver:pkg/apis/apiextensions/validation/validation.go
(``ValidateCustomResourceDefinitionOpenAPISchema``, the ``x-kubernetes-map-type``,
``x-kubernetes-list-type`` and ``x-kubernetes-list-map-keys`` checks), in the order the server
makes them: the map type, the list type (with a set's items atomic), the map keys (named item
properties of scalar type, no repeats), then what set and map items may not be (nullable, a key
neither defaulted nor required). ``schemacheck`` calls :func:`list_and_map_errors` per node.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemastructure import as_dict, as_list

_LIST_TYPES = ("atomic", "set", "map")
_SET_ITEM = "must be atomic as item of a list with x-kubernetes-list-type=set"


def list_and_map_errors(raw: dict[str, Any], path: str) -> list[FieldError]:
    kind: str = raw["type"] if isinstance(raw.get("type"), str) else ""
    list_type = raw.get("x-kubernetes-list-type")
    items = raw.get("items") if isinstance(raw.get("items"), dict) else None
    keys = [k for k in as_list(raw, "x-kubernetes-list-map-keys") if isinstance(k, str)]
    errors = _map_type(raw.get("x-kubernetes-map-type"), path, kind)
    errors += _list_type(list_type, path, kind, items)
    if keys and list_type != "map":
        why = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errors.append(apierrors.required(f"{path}.x-kubernetes-list-type", why))
        else:
            errors.append(apierrors.invalid_value(f"{path}.x-kubernetes-list-type", list_type, why))
    if list_type == "map":
        errors += _map_list(raw, path, keys, items)
    if list_type in ("set", "map") and items is not None:
        errors += _keyed_items(list_type, path, keys, items)
    return errors


def _typed(path: str, kind: str, why: str) -> FieldError:
    return apierrors.invalid_value(f"{path}.type", kind, why) if kind else apierrors.required(f"{path}.type", why)


def _map_type(map_type: Any, path: str, kind: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if map_type is not None and kind != "object":
        errors.append(_typed(path, kind, "must be object if x-kubernetes-map-type is specified"))
    if map_type is not None and map_type not in ("atomic", "granular"):
        errors.append(apierrors.not_supported(f"{path}.x-kubernetes-map-type", map_type, ("atomic", "granular")))
    return errors


def _list_type(list_type: Any, path: str, kind: str, items: dict[str, Any] | None) -> list[FieldError]:
    errors: list[FieldError] = []
    if list_type is not None and kind != "array":
        errors.append(_typed(path, kind, "must be array if x-kubernetes-list-type is specified"))
    elif list_type == "set" and items is not None:
        item_type = items.get("type")
        if item_type == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
            where = f"{path}.items.x-kubernetes-list-type"
            errors.append(apierrors.invalid_value(where, items.get("x-kubernetes-list-type"), _SET_ITEM))
        if item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
            # The server shows the item's list type here, not its map type.
            where = f"{path}.items.x-kubernetes-map-type"
            errors.append(apierrors.invalid_value(where, items.get("x-kubernetes-list-type"), _SET_ITEM))
    if list_type is not None and list_type not in _LIST_TYPES:
        errors.append(apierrors.not_supported(f"{path}.x-kubernetes-list-type", list_type, _LIST_TYPES))
    return errors


def _map_list(raw: dict[str, Any], path: str, keys: list[str], items: dict[str, Any] | None) -> list[FieldError]:
    """A list of type map: keys given, items given and objects, each key a scalar item property."""
    errors: list[FieldError] = []
    if not keys:
        where = f"{path}.x-kubernetes-list-map-keys"
        errors.append(apierrors.required(where, "must not be empty if x-kubernetes-list-type is map"))
    if "items" not in raw:
        errors.append(apierrors.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
    if items is not None and items.get("type") != "object":
        why = "must be object if parent array's x-kubernetes-list-type is map"
        errors.append(apierrors.invalid_value(f"{path}.items.type", items.get("type", ""), why))
    if items is not None and items.get("type") == "object":
        errors += _map_keys(path, keys, as_dict(items, "properties"))
    return errors


def _map_keys(path: str, keys: list[str], item_props: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    where = f"{path}.x-kubernetes-list-map-keys"
    for key in keys:
        if key not in item_props:
            errors.append(apierrors.invalid_value(where, keys, "entries must all be names of item properties"))
        elif as_dict(item_props, key).get("type") in ("array", "object"):
            why = "must be a scalar type if parent array's x-kubernetes-list-type is map"
            errors.append(apierrors.invalid_value(f"{path}.items.properties[{key}].type", "object", why))
        if key in seen:
            errors.append(apierrors.invalid_value(where, keys, "must not contain duplicate entries"))
        seen.add(key)
    return errors


def _keyed_items(list_type: str, path: str, keys: list[str], items: dict[str, Any]) -> list[FieldError]:
    """Items of a set or map list are never null, and a map's keys always have a value."""
    errors: list[FieldError] = []
    if items.get("nullable") is True:
        why = f"cannot be nullable when x-kubernetes-list-type is {list_type}"
        errors.append(apierrors.forbidden(f"{path}.items.nullable", why))
    if list_type != "map":
        return errors
    item_props = as_dict(items, "properties")
    required = as_list(items, "required")
    for key in keys:
        sub = item_props.get(key)
        if not isinstance(sub, dict):
            continue
        if key not in required and sub.get("default") is None:
            why = "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
            errors.append(apierrors.required(f"{path}.items.properties[{key}].default", why))
        if sub.get("nullable") is True:
            why = "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
            errors.append(apierrors.forbidden(f"{path}.items.properties[{key}].nullable", why))
    return errors
