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
from typing import Any

from shared.sim.apiserver import apierrors, crdrules, openapivalidate, schemastructure
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.schemanode import Node, read
from shared.sim.apiserver.schemastructure import as_dict, as_list, is_set

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


# --- defaults (pkg/apiserver/schema/defaulting/validation.go) -----------------------------------------


def _defaults(node: Node, path: str) -> list[FieldError]:
    from shared.sim.apiserver import structural

    errors: list[FieldError] = []
    if node.has_default:
        pruned = structural.pruned_copy(node.default, node)
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


class _Walk:
    def __init__(self, *, celable: bool) -> None:
        self.celable = celable
        self.schema_errors: list[FieldError] = []
        self.cel_errors: list[FieldError] = []

    def node(
        self,
        raw: Any,
        path: str,
        *,
        root: bool = False,
        spine: Node | None = None,
        no_defaults: str | None = None,
        in_meta: bool = False,
        uncorrelatable: str | None = None,
    ) -> None:
        if not isinstance(raw, dict):
            return
        before = len(self.schema_errors)
        add = self.schema_errors.append
        kind = raw.get("type")
        if isinstance(kind, str) and kind and kind not in _TYPES and kind != "null":
            add(apierrors.not_supported(f"{path}.type", kind, _TYPES))
        if "default" in raw and raw["default"] is not None and no_defaults is not None:
            add(apierrors.forbidden(f"{path}.default", f"must not be set {no_defaults}".rstrip()))
        for key, why in _UNSUPPORTED:
            if raw.get(key) not in (None, "", {}, []):
                add(apierrors.forbidden(f"{path}.{key}", why))
        if kind == "null":
            add(apierrors.forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
        if isinstance(raw.get("items"), list):
            add(apierrors.forbidden(f"{path}.items", "items must be a schema object and not an array"))
        if in_meta and raw.get("x-kubernetes-embedded-resource") is True:
            add(
                apierrors.forbidden(
                    f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"
                )
            )
        if raw.get("uniqueItems") is True:
            why = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
            add(apierrors.forbidden(f"{path}.uniqueItems", why))
        props: dict[str, Any] = raw["properties"] if isinstance(raw.get("properties"), dict) else {}
        extra = raw.get("additionalProperties")
        if extra is not None:
            if props and (extra is False or isinstance(extra, dict)):
                add(
                    apierrors.forbidden(
                        f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"
                    )
                )
            sub_no_defaults = "inside additionalProperties applying to object metadata" if in_meta else no_defaults
            self.node(
                extra,
                f"{path}.additionalProperties",
                spine=spine.additional if spine else None,
                no_defaults=sub_no_defaults,
                in_meta=in_meta,
                uncorrelatable=uncorrelatable,
            )
        map_type = raw.get("x-kubernetes-map-type")
        for key, sub in props.items():
            sub_uncorrelatable = uncorrelatable
            if map_type not in (None, "granular", "atomic") and sub_uncorrelatable is None:
                sub_uncorrelatable = path
            sub_meta, sub_no_defaults = in_meta, no_defaults
            if (root or raw.get("x-kubernetes-embedded-resource") is True) and key in _META:
                sub_meta = True
                if root:
                    sub_no_defaults = f"in top-level {key}"
            self.node(
                sub,
                f"{path}.properties[{key}]",
                spine=spine.properties.get(key) if spine else None,
                no_defaults=sub_no_defaults,
                in_meta=sub_meta,
                uncorrelatable=sub_uncorrelatable,
            )
        self.node(raw.get("not"), f"{path}.not", no_defaults=no_defaults)
        for key in ("allOf", "oneOf", "anyOf"):
            for i, sub in enumerate(as_list(raw, key)):
                self.node(sub, f"{path}.{key}[{i}]", no_defaults=no_defaults)
        list_type = raw.get("x-kubernetes-list-type")
        items = raw.get("items")
        if isinstance(items, dict):
            sub_uncorrelatable = uncorrelatable
            if list_type != "map" and sub_uncorrelatable is None:
                sub_uncorrelatable = path
            self.node(
                items,
                f"{path}.items",
                spine=spine.items if spine else None,
                no_defaults=no_defaults,
                in_meta=in_meta,
                uncorrelatable=sub_uncorrelatable,
            )
        if raw.get("x-kubernetes-preserve-unknown-fields") is False:
            add(
                apierrors.invalid_value(
                    f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"
                )
            )
        self._list_and_map_types(raw, path)
        self._rules_meta(raw, path, spine)
        if self.celable and spine is not None and spine.rules and len(self.schema_errors) == before:
            self.cel_errors += crdrules.compile_node(spine, path, uncorrelatable=uncorrelatable, resource_root=root)

    def _list_and_map_types(self, raw: dict[str, Any], path: str) -> None:
        add = self.schema_errors.append
        kind = raw.get("type") if isinstance(raw.get("type"), str) else ""
        map_type = raw.get("x-kubernetes-map-type")
        if map_type is not None and kind != "object":
            why = "must be object if x-kubernetes-map-type is specified"
            add(apierrors.invalid_value(f"{path}.type", kind, why) if kind else apierrors.required(f"{path}.type", why))
        if map_type is not None and map_type not in ("atomic", "granular"):
            add(apierrors.not_supported(f"{path}.x-kubernetes-map-type", map_type, ("atomic", "granular")))
        list_type = raw.get("x-kubernetes-list-type")
        items = raw.get("items") if isinstance(raw.get("items"), dict) else None
        if list_type is not None and kind != "array":
            why = "must be array if x-kubernetes-list-type is specified"
            add(apierrors.invalid_value(f"{path}.type", kind, why) if kind else apierrors.required(f"{path}.type", why))
        elif list_type == "set" and items is not None:
            item_type = items.get("type")
            if item_type == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
                why = "must be atomic as item of a list with x-kubernetes-list-type=set"
                add(
                    apierrors.invalid_value(
                        f"{path}.items.x-kubernetes-list-type", items.get("x-kubernetes-list-type"), why
                    )
                )
            if item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
                why = "must be atomic as item of a list with x-kubernetes-list-type=set"
                add(
                    apierrors.invalid_value(
                        f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-list-type"), why
                    )
                )
        if list_type is not None and list_type not in ("atomic", "set", "map"):
            add(apierrors.not_supported(f"{path}.x-kubernetes-list-type", list_type, ("atomic", "set", "map")))
        keys = [k for k in as_list(raw, "x-kubernetes-list-map-keys") if isinstance(k, str)]
        if keys:
            why = "must be map if x-kubernetes-list-map-keys is non-empty"
            if list_type is None:
                add(apierrors.required(f"{path}.x-kubernetes-list-type", why))
            elif list_type != "map":
                add(apierrors.invalid_value(f"{path}.x-kubernetes-list-type", list_type, why))
        if list_type == "map":
            if not keys:
                add(
                    apierrors.required(
                        f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"
                    )
                )
            if "items" not in raw:
                add(apierrors.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
            if items is not None and items.get("type") != "object":
                why = "must be object if parent array's x-kubernetes-list-type is map"
                add(apierrors.invalid_value(f"{path}.items.type", items.get("type", ""), why))
            if items is not None and items.get("type") == "object":
                item_props = as_dict(items, "properties")
                seen: set[str] = set()
                for key in keys:
                    if key in item_props:
                        if as_dict(item_props, key).get("type") in ("array", "object"):
                            why = "must be a scalar type if parent array's x-kubernetes-list-type is map"
                            add(apierrors.invalid_value(f"{path}.items.properties[{key}].type", "object", why))
                    else:
                        add(
                            apierrors.invalid_value(
                                f"{path}.x-kubernetes-list-map-keys",
                                keys,
                                "entries must all be names of item properties",
                            )
                        )
                    if key in seen:
                        add(
                            apierrors.invalid_value(
                                f"{path}.x-kubernetes-list-map-keys", keys, "must not contain duplicate entries"
                            )
                        )
                    seen.add(key)
        if list_type in ("set", "map") and items is not None:
            if items.get("nullable") is True:
                add(
                    apierrors.forbidden(
                        f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"
                    )
                )
            if list_type == "map":
                item_props = as_dict(items, "properties")
                required = as_list(items, "required")
                for key in keys:
                    sub = item_props.get(key)
                    if not isinstance(sub, dict):
                        continue
                    if key not in required and sub.get("default") is None:
                        why = (
                            "this property is in x-kubernetes-list-map-keys, so it must have a default or be a"
                            " required property"
                        )
                        add(apierrors.required(f"{path}.items.properties[{key}].default", why))
                    if sub.get("nullable") is True:
                        why = "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                        add(apierrors.forbidden(f"{path}.items.properties[{key}].nullable", why))

    def _rules_meta(self, raw: dict[str, Any], path: str, spine: Node | None) -> None:
        add = self.schema_errors.append
        for i, rule in enumerate(as_list(raw, "x-kubernetes-validations")):
            if not isinstance(rule, dict):
                continue
            where = f"{path}.x-kubernetes-validations[{i}]"
            text, message = str(rule.get("rule") or "").strip(), str(rule.get("message") or "")
            if not text:
                add(apierrors.required(f"{where}.rule", "rule is not specified"))
            elif message and not message.strip():
                add(apierrors.invalid_value(f"{where}.message", message, "message must be non-empty if specified"))
            elif re.search(r"[\n\r]", message.strip()):
                add(apierrors.invalid_value(f"{where}.message", message, "message must not contain line breaks"))
            elif re.search(r"[\n\r]", text) and not message.strip():
                add(apierrors.required(f"{where}.message", "message must be specified if rule contains line breaks"))
            expression = str(rule.get("messageExpression") or "")
            if expression and not expression.strip():
                add(
                    apierrors.required(f"{where}.messageExpression", "messageExpression must be non-empty if specified")
                )
            reason = rule.get("reason")
            if reason is not None and reason not in crdrules.REASONS:
                add(apierrors.not_supported(f"{where}.reason", reason, crdrules.REASONS))
            field_path = str(rule.get("fieldPath") or "")
            if field_path and not field_path.strip():
                add(
                    apierrors.invalid_value(
                        f"{where}.fieldPath", field_path, "fieldPath must be non-empty if specified"
                    )
                )
            if "\n" in field_path or "\r" in field_path:
                add(apierrors.invalid_value(f"{where}.fieldPath", field_path, "fieldPath must not contain line breaks"))
            if field_path.strip() and spine is not None and crdrules.normalize_field_path(field_path, spine) is None:
                add(apierrors.invalid_value(f"{where}.fieldPath", field_path, "fieldPath must be a valid path"))


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
    walk.node(raw, path, root=True, spine=node)
    errors += walk.schema_errors + walk.cel_errors
    if not walk.schema_errors and celable:
        crdrules.mark_ruled(node)
    return node, errors
