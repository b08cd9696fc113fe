"""What the real server refuses in a CRD's openAPIV3Schema, with its field paths and texts.

Mirrors apiextensions-apiserver:pkg/apis/apiextensions/validation/validation.go
(``validateCustomResourceDefinitionValidation``: root restrictions with the status subresource, the
structural-schema rules of pkg/apiserver/schema/validation.go and complete.go, defaults checked by
pkg/apiserver/schema/defaulting/validation.go, then ``ValidateCustomResourceDefinitionOpenAPISchema``
node by node: unsupported keywords, additionalProperties beside properties, list and map types,
x-kubernetes-validations entries, and CEL compilation when the schema is otherwise sound).
Structural errors are sorted by their text, as the server sorts them. Where Go walks a map of
properties (random order), this walks them in document order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import apierrors, crdrules, openapivalidate, schemalists, schemaprune, schemastructure
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemanode import Node, read
from shared.sim.apiserver.schemastructure import as_list, is_set

_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_ROOT_WITH_STATUS = frozenset(
    {
        "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "required",
        "items", "properties", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    }
)  # fmt: skip
_UNSUPPORTED = (
    ("id", "id is not supported"),
    ("additionalItems", "additionalItems is not supported"),
    ("patternProperties", "patternProperties is not supported"),
    ("definitions", "definitions is not supported"),
    ("dependencies", "dependencies is not supported"),
    ("$ref", "$ref is not supported"),
)
_META = ("metadata", "kind", "apiVersion")
_UNSET: tuple[Any, ...] = (None, "", {}, [])


# --- defaults (pkg/apiserver/schema/defaulting/validation.go) -----------------------------------------


def _defaults(node: Node, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if node.has_default:
        pruned = schemaprune.pruned_copy(node.default, node)
        if not openapivalidate.same(pruned, node.default):
            errors.append(apierrors.invalid_value(f"{path}.default", node.default, "must not have unknown fields"))
        else:
            errors += openapivalidate.validate(node, node.default, prefix=f"{path}.default")
    if node.items is not None:
        errors += _defaults(node.items, f"{path}.items")
    for key, sub in node.properties.items():
        errors += _defaults(sub, f"{path}.properties[{key}]")
    return errors  # additionalProperties are not followed: defaults are forbidden there


# --- per-node OpenAPI checks (ValidateCustomResourceDefinitionOpenAPISchema) ---------------------------


@dataclass(frozen=True)
class _Site:
    """Where the walk is: the node's path, its structural node, and what its ancestors impose."""

    path: str
    spine: Node | None = None
    no_defaults: str | None = None  # why a default is forbidden here (None: it is not)
    in_meta: bool = False
    uncorrelatable: str | None = None  # the path below which oldSelf cannot be correlated
    root: bool = False


class _Walk:
    def __init__(self, *, celable: bool) -> None:
        self.celable = celable
        self.schema_errors: list[FieldError] = []
        self.cel_errors: list[FieldError] = []

    def node(self, raw: Any, site: _Site) -> None:
        if not isinstance(raw, dict):
            return
        before = len(self.schema_errors)
        self.schema_errors += _keyword_errors(raw, site)
        self._additional(raw, site)
        self._properties(raw, site)
        path, no_defaults = site.path, site.no_defaults
        self.node(raw.get("not"), _Site(f"{path}.not", no_defaults=no_defaults))
        for key in ("allOf", "oneOf", "anyOf"):
            for i, sub in enumerate(as_list(raw, key)):
                self.node(sub, _Site(f"{path}.{key}[{i}]", no_defaults=no_defaults))
        self._items(raw, site)
        if raw.get("x-kubernetes-preserve-unknown-fields") is False:
            where = f"{path}.x-kubernetes-preserve-unknown-fields"
            self.schema_errors.append(apierrors.invalid_value(where, False, "must be true or undefined"))
        self.schema_errors += schemalists.list_and_map_errors(raw, path)
        for i, rule in enumerate(as_list(raw, "x-kubernetes-validations")):
            if isinstance(rule, dict):
                self.schema_errors += _rule_errors(rule, f"{path}.x-kubernetes-validations[{i}]", site.spine)
        spine = site.spine
        if self.celable and spine is not None and spine.rules and len(self.schema_errors) == before:
            self.cel_errors += crdrules.compile_node(
                spine, path, uncorrelatable=site.uncorrelatable, resource_root=site.root
            )

    def _additional(self, raw: dict[str, Any], site: _Site) -> None:
        extra = raw.get("additionalProperties")
        if extra is None:
            return
        if _properties_of(raw) and (extra is False or isinstance(extra, dict)):
            why = "additionalProperties and properties are mutual exclusive"
            self.schema_errors.append(apierrors.forbidden(f"{site.path}.additionalProperties", why))
        no_defaults = "inside additionalProperties applying to object metadata" if site.in_meta else site.no_defaults
        sub = _Site(
            f"{site.path}.additionalProperties",
            spine=site.spine.additional if site.spine else None,
            no_defaults=no_defaults,
            in_meta=site.in_meta,
            uncorrelatable=site.uncorrelatable,
        )
        self.node(extra, sub)

    def _properties(self, raw: dict[str, Any], site: _Site) -> None:
        granular = raw.get("x-kubernetes-map-type") in (None, "granular", "atomic")
        resource = site.root or raw.get("x-kubernetes-embedded-resource") is True
        for key, sub in _properties_of(raw).items():
            in_meta, no_defaults = site.in_meta, site.no_defaults
            if resource and key in _META:
                in_meta = True
                if site.root:
                    no_defaults = f"in top-level {key}"
            child = _Site(
                f"{site.path}.properties[{key}]",
                spine=site.spine.properties.get(key) if site.spine else None,
                no_defaults=no_defaults,
                in_meta=in_meta,
                uncorrelatable=site.uncorrelatable if granular or site.uncorrelatable is not None else site.path,
            )
            self.node(sub, child)

    def _items(self, raw: dict[str, Any], site: _Site) -> None:
        items = raw.get("items")
        if not isinstance(items, dict):
            return
        keyed = raw.get("x-kubernetes-list-type") == "map"
        child = _Site(
            f"{site.path}.items",
            spine=site.spine.items if site.spine else None,
            no_defaults=site.no_defaults,
            in_meta=site.in_meta,
            uncorrelatable=site.uncorrelatable if keyed or site.uncorrelatable is not None else site.path,
        )
        self.node(items, child)


def _properties_of(raw: dict[str, Any]) -> dict[str, Any]:
    return raw["properties"] if isinstance(raw.get("properties"), dict) else {}


def _keyword_errors(raw: dict[str, Any], site: _Site) -> list[FieldError]:
    """A node's own keywords: known types, defaults where allowed, no unsupported keyword."""
    path = site.path
    errors: list[FieldError] = []
    kind = raw.get("type")
    if isinstance(kind, str) and kind and kind not in _TYPES and kind != "null":
        errors.append(apierrors.not_supported(f"{path}.type", kind, _TYPES))
    if "default" in raw and raw["default"] is not None and site.no_defaults is not None:
        errors.append(apierrors.forbidden(f"{path}.default", f"must not be set {site.no_defaults}".rstrip()))
    errors += [apierrors.forbidden(f"{path}.{key}", why) for key, why in _UNSUPPORTED if raw.get(key) not in _UNSET]
    if kind == "null":
        errors.append(apierrors.forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(raw.get("items"), list):
        errors.append(apierrors.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if site.in_meta and raw.get("x-kubernetes-embedded-resource") is True:
        why = "must not be used inside of resource meta"
        errors.append(apierrors.forbidden(f"{path}.x-kubernetes-embedded-resource", why))
    if raw.get("uniqueItems") is True:
        why = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        errors.append(apierrors.forbidden(f"{path}.uniqueItems", why))
    return errors


def _rule_errors(rule: dict[str, Any], where: str, spine: Node | None) -> list[FieldError]:
    """One x-kubernetes-validations entry's own fields (compiling it is ``crdrules``')."""
    errors = _rule_message_errors(rule, where)
    expression = str(rule.get("messageExpression") or "")
    if expression and not expression.strip():
        why = "messageExpression must be non-empty if specified"
        errors.append(apierrors.required(f"{where}.messageExpression", why))
    reason = rule.get("reason")
    if reason is not None and reason not in crdrules.REASONS:
        errors.append(apierrors.not_supported(f"{where}.reason", reason, crdrules.REASONS))
    return errors + _field_path_errors(str(rule.get("fieldPath") or ""), f"{where}.fieldPath", spine)


def _rule_message_errors(rule: dict[str, Any], where: str) -> list[FieldError]:
    """The rule given, and a message (one line) where the rule spans lines; the first problem only."""
    text, message = str(rule.get("rule") or "").strip(), str(rule.get("message") or "")
    if not text:
        return [apierrors.required(f"{where}.rule", "rule is not specified")]
    if message and not message.strip():
        return [apierrors.invalid_value(f"{where}.message", message, "message must be non-empty if specified")]
    if re.search(r"[\n\r]", message.strip()):
        return [apierrors.invalid_value(f"{where}.message", message, "message must not contain line breaks")]
    if re.search(r"[\n\r]", text) and not message.strip():
        return [apierrors.required(f"{where}.message", "message must be specified if rule contains line breaks")]
    return []


def _field_path_errors(field_path: str, where: str, spine: Node | None) -> list[FieldError]:
    errors: list[FieldError] = []
    if field_path and not field_path.strip():
        errors.append(apierrors.invalid_value(where, field_path, "fieldPath must be non-empty if specified"))
    if "\n" in field_path or "\r" in field_path:
        errors.append(apierrors.invalid_value(where, field_path, "fieldPath must not contain line breaks"))
    if field_path.strip() and spine is not None and crdrules.normalize_field_path(field_path, spine) is None:
        errors.append(apierrors.invalid_value(where, field_path, "fieldPath must be a valid path"))
    return errors


def schema_errors(raw: dict[str, Any], path: str, *, status_enabled: bool = False) -> tuple[Node, list[FieldError]]:
    """The node tree of ``raw`` and every error the server refuses it with (rules compiled when sound)."""
    node = read(raw)
    errors: list[FieldError] = []
    if status_enabled:
        if raw.get("type") not in (None, "", "object"):
            why = 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'
            errors.append(apierrors.invalid_value(f"{path}.type", raw.get("type"), why))
        elif any(is_set(raw, k) for k in raw if k not in _ROOT_WITH_STATUS):
            allowed = (
                "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength"
            )
            allowed += (
                " Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example"
            )
            allowed += " XPreserveUnknownFields XValidations]"
            why = f"only {allowed} fields are allowed at the root of the schema if the status subresource is enabled"
            errors.append(apierrors.invalid_value(path, raw, why))
    if raw.get("nullable") is True:
        errors.append(apierrors.forbidden(f"{path}.nullable", "nullable cannot be true at the root"))
    structural = schemastructure.structural_errors(node, path)
    errors += structural
    celable = not structural
    if celable:
        defaults = _defaults(node, path)
        errors += defaults
        celable = not defaults
    walk = _Walk(celable=celable)
    walk.node(raw, _Site(path, spine=node, root=True))
    errors += walk.schema_errors + walk.cel_errors
    if not walk.schema_errors and celable:
        crdrules.mark_ruled(node)
    return node, errors
