"""Checks on a custom resource beyond its schema keywords: list-type uniqueness and embedded objects.

``x-kubernetes-list-type: set`` items and ``map`` keys must be unique
(apiextensions-apiserver:pkg/apiserver/schema/listtype/validation.go: only the first repeat of a value
is reported, a map list reports the key fields). Objects marked ``x-kubernetes-embedded-resource``
need ``apiVersion`` and ``kind`` and valid metadata (pkg/apiserver/schema/objectmeta/validation.go);
of ObjectMeta's rules the name, label and annotation ones are modelled. Also the name texts of
apimachinery:pkg/util/validation/validation.go that CRD checks reuse.
"""

from __future__ import annotations

import json
import re
from typing import Any

from shared.sim.apiserver import apierrors, selectors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.openapivalidate import go_value
from shared.sim.apiserver.schemanode import Node

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def dns1035_label(value: str) -> list[str]:
    """apimachinery IsDNS1035Label: the reasons ``value`` is not a DNS-1035 label."""
    found = []
    if len(value) > 63:
        found.append("must be no more than 63 characters")
    if not _DNS1035.match(value):
        found.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic"
            " character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for"
            " validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    return found


def dns1123_subdomain(value: str) -> list[str]:
    """apimachinery IsDNS1123Subdomain."""
    found = []
    if len(value) > 253:
        found.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        found.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must"
            " start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is"
            " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return found


# --- list types ------------------------------------------------------------------------------------------


def _go_json(value: Any) -> str:
    """encoding/json of a decoded value: sorted keys, integral floats without a fraction."""

    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
            return int(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v

    return json.dumps(norm(value), separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _identity(value: Any) -> tuple[str, Any]:
    """How Go tells set items apart: compound values by JSON, scalars by type and value."""
    if isinstance(value, dict | list):
        return ("json", _go_json(value))
    return (type(value).__name__, value)


def _repeats(values: list[Any]) -> list[int]:
    seen: dict[tuple[str, Any], int] = {}
    repeats = []
    for i, value in enumerate(values):
        key = _identity(value)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            repeats.append(i)
    return repeats


def _duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, "FieldValueDuplicate", f"Duplicate value: {go_value(value)}")


_UNSPECIFIED = object()
_LABEL_KEY = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
    " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
    " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start"
    " and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for"
    " validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_LABEL_KEY = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
    " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
    " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _list_map(path: str, node: Node, items: list[Any]) -> list[FieldError]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            detail = "must be an object for an array of list-type map"
            return [FieldError(f"{path}[{i}]", "FieldValueInvalid", f"Invalid value: {go_value(item)}: {detail}")]
    if len(items) <= 1:
        return []
    if len(node.map_keys) == 1:
        key = node.map_keys[0]
        keys = [item.get(key, _UNSPECIFIED) if isinstance(item, dict) else _UNSPECIFIED for item in items]
        marked = [("unspecified", None) if k is _UNSPECIFIED else k for k in keys]
        return [_duplicate(f"{path}[{i}]", {} if keys[i] is _UNSPECIFIED else {key: keys[i]}) for i in _repeats(marked)]
    composite = [{k: item[k] for k in node.map_keys if k in item} if isinstance(item, dict) else {} for item in items]
    return [_duplicate(f"{path}[{i}]", composite[i]) for i in _repeats(composite)]


def _lists(path: str | None, node: Node, value: Any) -> list[FieldError]:
    if isinstance(value, list):
        return _list_items(path or "", node, value)
    if isinstance(value, dict):
        return _list_fields(path, node, value)
    return []


def _list_items(where: str, node: Node, value: list[Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    if node.list_type == "set":
        errors += [_duplicate(f"{where}[{i}]", value[i]) for i in _repeats(value)]
    elif node.list_type == "map":
        errors += _list_map(where, node, value)
    if node.items is not None:
        for i, item in enumerate(value):
            errors += _lists(f"{where}[{i}]", node.items, item)
    return errors


def _list_fields(path: str | None, node: Node, value: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    if node.additional is not None:
        for key, item in value.items():
            errors += _lists(f"{path or ''}[{key}]", node.additional, item)
    for key, item in value.items():
        sub = node.properties.get(key)
        if sub is not None:
            errors += _lists(f"{path}.{key}" if path else key, sub, item)
    return errors


def list_errors(root: Node, obj: Any) -> list[FieldError]:
    """Duplicate set items and map-list keys anywhere in ``obj``."""
    return _lists(None, root, obj) if isinstance(obj, dict) else []


# --- embedded resources ----------------------------------------------------------------------------------


def _metadata(path: str, meta: Any) -> list[FieldError]:
    if not isinstance(meta, dict):
        return [apierrors.invalid_value(path, meta, "json: cannot unmarshal into Go value of type v1.ObjectMeta")]
    errors: list[FieldError] = []
    name = meta.get("name") or "fakename"
    if isinstance(name, str):
        errors += _name_errors(f"{path}.name", name)
    labels = meta.get("labels")
    if isinstance(labels, dict):
        errors += _label_errors(f"{path}.labels", labels)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and sum(len(str(k)) + len(str(v)) for k, v in annotations.items()) > 262144:
        errors.append(apierrors.too_long(f"{path}.annotations", 262144))
    return errors


def _name_errors(path: str, name: str) -> list[FieldError]:
    """What every object name must meet (a path segment: not ``.``, ``..``, nor containing / or %)."""
    errors = [apierrors.invalid_value(path, name, why) for bad, why in _BAD_NAMES if name == bad]
    errors += [apierrors.invalid_value(path, name, f"may not contain '{char}'") for char in ("/", "%") if char in name]
    return errors


_BAD_NAMES = ((".", "may not be '.'"), ("..", "may not be '..'"))


def _label_errors(path: str, labels: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    for key, value in labels.items():
        if not selectors.valid_label_key(str(key)):
            errors.append(apierrors.invalid_value(path, key, _LABEL_KEY))
        if not isinstance(value, str) or not selectors.valid_label_value(value):
            errors.append(apierrors.invalid_value(path, value, _LABEL_VALUE))
    return errors


def _embedded(path: str, obj: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    prefix = f"{path}." if path else ""
    for key in ("apiVersion", "kind"):
        if key not in obj:
            errors.append(apierrors.required(prefix + key))
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            if not isinstance(value, str):
                errors.append(apierrors.invalid_value(prefix + key, value, "must be a string"))
            elif not value:
                errors.append(apierrors.required(prefix + key))
            elif key == "apiVersion" and value.count("/") > 1:
                errors.append(apierrors.invalid_value(prefix + key, value, f"unexpected GroupVersion string: {value}"))
            elif key == "kind" and dns1035_label(value.lower()):
                detail = "may have mixed case, but should otherwise match: " + ",".join(dns1035_label(value.lower()))
                errors.append(apierrors.invalid_value(prefix + key, value, detail))
        elif key == "metadata":
            errors += _metadata(prefix + "metadata", value)
    return errors


def _embedded_walk(path: str, node: Node | None, value: Any) -> list[FieldError]:
    if node is None:
        return []
    errors: list[FieldError] = []
    if isinstance(value, dict):
        if node.embedded:
            errors += _embedded(path, value)
        for key, item in value.items():
            sub = node.properties.get(key)
            if sub is not None:
                errors += _embedded_walk(f"{path}.{key}" if path else key, sub, item)
            elif node.additional_allows is not None:
                errors += _embedded_walk(f"{path}[{key}]", node.additional, item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            errors += _embedded_walk(f"{path}[{i}]", node.items, item)
    return errors


def embedded_errors(root: Node, obj: Any) -> list[FieldError]:
    """Problems of the objects under ``x-kubernetes-embedded-resource`` nodes (the root is not one)."""
    if not isinstance(obj, dict):
        return []
    errors: list[FieldError] = []
    for key, item in obj.items():
        sub = root.properties.get(key)
        if sub is not None:
            errors += _embedded_walk(key, sub, item)
    return errors
