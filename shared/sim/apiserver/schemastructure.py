"""The structural-schema rules a CRD's openAPIV3Schema must meet, with the server's paths and texts.

apiextensions-apiserver:pkg/apiserver/schema/validation.go (``validateStructuralInvariants``: every
node typed unless int-or-string or preserve-unknown, array items given, no additionalProperties at the
root, metadata at the root limited to name and generateName, embedded resources typed as objects;
``validateNestedValueValidation``: what allOf/anyOf/oneOf/not may not say) and complete.go (fields
named in those must exist on the structural spine). ``schemacheck`` sorts these by text, as the
server does, and runs them first.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import apierrors, openapivalidate
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemanode import Node

_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("externalDocs", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def as_list(raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key)
    return value if isinstance(value, list) else []


def as_dict(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key)
    return value if isinstance(value, dict) else {}


def is_set(raw: dict[str, Any], key: str) -> bool:
    """Whether a keyword differs from its Go zero value (nil pointer, "", false, empty list/map)."""
    value = raw.get(key)
    return value is not None and value is not False and value not in ("", [], {})


def _given(raw: dict[str, Any], key: str) -> bool:
    """Whether a keyword of a nested value validation is set (Go: non-nil pointer, non-empty string/list, true)."""
    value = raw.get(key)
    if key in ("additionalProperties", "default", "externalDocs", "x-kubernetes-list-type", "x-kubernetes-map-type"):
        return value is not None
    return is_set(raw, key)


def _nested(raw: Any, path: str, level: str, *, skip_any_of: bool = False) -> list[FieldError]:
    """validateNestedValueValidation: what allOf/anyOf/oneOf/not may not say."""
    if not isinstance(raw, dict):
        return []
    errors = _value_validation(raw, path, level, skip_any_of=skip_any_of, skip_first_all_of=False)
    errors += _nested(raw.get("items"), f"{path}.items", level)
    for key, sub in as_dict(raw, "properties").items():
        errors += _nested(sub, f"{path}.properties[{key}]", "field")
    for key, why in _NESTED_FORBIDDEN:
        if _given(raw, key):
            errors.append(apierrors.forbidden(f"{path}.{key}", why))
    if "metadata" in as_dict(raw, "properties"):
        errors.append(apierrors.forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))
    return errors


_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


def _value_validation(
    raw: dict[str, Any], path: str, level: str, *, skip_any_of: bool, skip_first_all_of: bool
) -> list[FieldError]:
    errors: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(as_list(raw, "anyOf")):
            errors += _nested(sub, f"{path}.anyOf[{i}]", level)
    for i, sub in enumerate(as_list(raw, "allOf")):
        errors += _nested(sub, f"{path}.allOf[{i}]", level, skip_any_of=skip_first_all_of and i == 0)
    for i, sub in enumerate(as_list(raw, "oneOf")):
        errors += _nested(sub, f"{path}.oneOf[{i}]", level)
    if isinstance(raw.get("not"), dict):
        errors += _nested(raw["not"], f"{path}.not", level)
    pattern = raw.get("pattern")
    if isinstance(pattern, str) and pattern:
        _, problem = openapivalidate.compile_pattern(pattern)
        if problem is not None:
            detail = f"must be a valid regular expression, but isn't: error parsing regexp: {problem}"
            errors.append(apierrors.invalid_value(f"{path}.pattern", pattern, detail))
    return errors


def _structural(node: Node, path: str, level: str) -> list[FieldError]:
    raw = node.raw
    errors = _children(node, path, level)
    if node.int_or_string and node.preserve_unknown:
        detail = "must be false if x-kubernetes-int-or-string is true"
        errors.append(apierrors.invalid_value(f"{path}.x-kubernetes-preserve-unknown-fields", True, detail))
    if node.int_or_string and node.embedded:
        detail = "must be false if x-kubernetes-int-or-string is true"
        errors.append(apierrors.invalid_value(f"{path}.x-kubernetes-embedded-resource", True, detail))
    all_of = raw.get("allOf")
    first = all_of[0] if isinstance(all_of, list) and all_of and isinstance(all_of[0], dict) else {}
    errors += _value_validation(
        raw,
        path,
        level,
        skip_any_of=raw.get("anyOf") == _INT_OR_STRING,
        skip_first_all_of=first.get("anyOf") == _INT_OR_STRING,
    )
    errors += _type_errors(node, path, level)
    errors += _resource_fields(node, path, level)
    if node.embedded and not node.preserve_unknown and not node.properties:
        why = "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
        errors.append(apierrors.required(f"{path}.properties", why))
    return errors


def _children(node: Node, path: str, level: str) -> list[FieldError]:
    """Array items given; items, properties and additionalProperties structural in turn."""
    errors: list[FieldError] = []
    if node.type == "array" and node.items is None:
        errors.append(apierrors.required(f"{path}.items", "must be specified"))
    if node.items is not None:
        errors += _structural(node.items, f"{path}.items", "item")
    for key, sub in node.properties.items():
        errors += _structural(sub, f"{path}.properties[{key}]", "field")
    if node.additional_allows is not None:
        if level == "root":
            errors.append(apierrors.forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if node.additional is not None:
            errors += _structural(node.additional, f"{path}.additionalProperties", "field")
    return errors


_EMPTY_TYPE = {"root": "must not be empty at the root", "item": "must not be empty for specified array items"}


def _type_errors(node: Node, path: str, level: str) -> list[FieldError]:
    """Every node typed (an embedded resource as an object, the root as an object)."""
    errors: list[FieldError] = []
    if node.embedded and node.type != "object":
        why = "must be object if x-kubernetes-embedded-resource is true"
        errors.append(
            apierrors.invalid_value(f"{path}.type", node.type, why)
            if node.type
            else apierrors.required(f"{path}.type", why)
        )
    elif not node.type and not node.int_or_string and not node.preserve_unknown:
        why = _EMPTY_TYPE.get(level, "must not be empty for specified object fields")
        errors.append(apierrors.required(f"{path}.type", why))
    if node.embedded and node.additional_allows is not None:
        why = "must not be used if x-kubernetes-embedded-resource is set"
        errors.append(apierrors.forbidden(f"{path}.additionalProperties", why))
    if level == "root" and node.type and node.type != "object":
        errors.append(apierrors.invalid_value(f"{path}.type", node.type, "must be object at the root"))
    return errors


def _resource_fields(node: Node, path: str, level: str) -> list[FieldError]:
    """At the root and in embedded resources: kind and apiVersion strings, metadata an object (only
    name and generateName specified at the root)."""
    errors: list[FieldError] = []
    check_metadata = level == "root" or node.embedded
    for key in ("kind", "apiVersion"):
        typed = node.properties.get(key)
        if typed is not None and check_metadata and typed.type != "string":
            errors.append(apierrors.invalid_value(f"{path}.properties[{key}].type", typed.type, "must be string"))
    meta = node.properties.get("metadata")
    if meta is not None:
        where = f"{path}.properties[metadata]"
        if check_metadata and meta.type != "object":
            errors.append(apierrors.invalid_value(f"{where}.type", meta.type, "must be object"))
        if level == "root" and not _only_names(meta.raw):
            why = "must not specify anything other than name and generateName, but metadata is implicitly specified"
            errors.append(apierrors.forbidden(where, why))
    return errors


def _only_names(raw: dict[str, Any]) -> bool:
    props: dict[str, Any] = raw["properties"] if isinstance(raw.get("properties"), dict) else {}
    names = set(props or {})
    rest = {k: v for k, v in raw.items() if k not in ("type", "default", "properties")}
    if names and not names <= {"name", "generateName"}:
        return False
    return not any(is_set(rest, k) for k in rest)


def _complete(raw: Any, spine: Node | None, s_path: str, v_path: str) -> list[FieldError]:
    """complete.go: every field a nested value validation names exists on the structural spine."""
    if not isinstance(raw, dict):
        return []
    if spine is None:
        return [apierrors.required(s_path, f"because it is defined in {v_path}")]
    errors: list[FieldError] = []
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(as_list(raw, key)):
            errors += _complete_nested(sub, spine, s_path, f"{v_path}.{key}[{i}]")
    if isinstance(raw.get("not"), dict):
        errors += _complete_nested(raw["not"], spine, s_path, f"{v_path}.not")
    return errors


def _complete_nested(raw: Any, spine: Node, s_path: str, v_path: str) -> list[FieldError]:
    if not isinstance(raw, dict):
        return []
    errors = _complete(raw, spine, s_path, v_path)
    if isinstance(raw.get("items"), dict):
        if spine.items is None:
            errors.append(apierrors.required(f"{s_path}.items", f"because it is defined in {v_path}.items"))
        else:
            errors += _complete_nested(raw["items"], spine.items, f"{s_path}.items", f"{v_path}.items")
    for key, sub in as_dict(raw, "properties").items():
        target = spine.properties.get(key)
        if target is None:
            errors.append(
                apierrors.required(
                    f"{s_path}.properties[{key}]", f"because it is defined in {v_path}.properties[{key}]"
                )
            )
        else:
            errors += _complete_nested(sub, target, f"{s_path}.properties[{key}]", f"{v_path}.properties[{key}]")
    return errors


def _complete_spine(node: Node, path: str) -> list[FieldError]:
    errors = _complete(node.raw, node, path, path)
    for key, sub in node.properties.items():
        errors += _complete_spine(sub, f"{path}.properties[{key}]")
    if node.items is not None:
        errors += _complete_spine(node.items, f"{path}.items")
    if node.additional is not None:
        errors += _complete_spine(node.additional, f"{path}.additionalProperties")
    return errors


def structural_errors(node: Node, path: str) -> list[FieldError]:
    """Every structural-rule violation under ``node`` (the schema root), sorted as the server sorts them."""
    return sorted(_structural(node, path, "root") + _complete_spine(node, path), key=lambda e: e.text())
