"""What the real server checks on a CustomResourceDefinition create or update.

apiextensions-apiserver:pkg/apis/apiextensions/validation/validation.go
(``ValidateCustomResourceDefinition`` / ``...Update``) run on the internal form the v1 object converts
to: ``singular`` and ``listKind`` defaulted, ``status.storedVersions`` set to the storage version,
``spec.version`` set to the first version, and per-version schemas, subresources and printer
columns that are identical across versions moved to ``spec.validation``/``spec.subresources``/
``spec.additionalPrinterColumns`` (v1 conversion.go) — so a single-version CRD's schema errors read
``spec.validation.openAPIV3Schema...``. Before that, decoding: ``decode_problems`` gives the unknown
JSONSchemaProps keywords (strict/warn field validation) and the first keyword of the wrong JSON type
(a 400, not a 422). Conversion webhooks are checked only for their required parts.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.crdinvariants import dns1035_label, dns1123_subdomain
from shared.sim.apiserver.openapivalidate import same
from shared.sim.apiserver.structural import SchemaError, StructuralSchema

_APPROVAL = "api-approved.kubernetes.io"
_APPROVAL_LINK = "https://github.com/kubernetes/enhancements/pull/1111"
_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")

# JSONSchemaProps' JSON fields and the JSON kinds each decodes from (apis/apiextensions/v1/types_jsonschema.go).
_PROPS: dict[str, tuple[str, str]] = {
    "id": ("string", "string"), "$schema": ("string", "v1.JSONSchemaURL"), "$ref": ("string", "string"),
    "description": ("string", "string"), "type": ("string", "string"), "format": ("string", "string"),
    "title": ("string", "string"), "default": ("any", ""), "maximum": ("number", "float64"),
    "exclusiveMaximum": ("bool", "bool"), "minimum": ("number", "float64"), "exclusiveMinimum": ("bool", "bool"),
    "maxLength": ("int", "int64"), "minLength": ("int", "int64"), "pattern": ("string", "string"),
    "maxItems": ("int", "int64"), "minItems": ("int", "int64"), "uniqueItems": ("bool", "bool"),
    "multipleOf": ("number", "float64"), "enum": ("array", "[]v1.JSON"), "maxProperties": ("int", "int64"),
    "minProperties": ("int", "int64"), "required": ("strings", "[]string"), "items": ("schema|array", ""),
    "allOf": ("schemas", "[]v1.JSONSchemaProps"), "oneOf": ("schemas", "[]v1.JSONSchemaProps"),
    "anyOf": ("schemas", "[]v1.JSONSchemaProps"), "not": ("schema", "v1.JSONSchemaProps"),
    "properties": ("schema-map", "map[string]v1.JSONSchemaProps"), "additionalProperties": ("schema|bool", ""),
    "patternProperties": ("schema-map", "map[string]v1.JSONSchemaProps"), "dependencies": ("object", ""),
    "additionalItems": ("schema|bool", ""), "definitions": ("schema-map", "map[string]v1.JSONSchemaProps"),
    "externalDocs": ("object", "v1.ExternalDocumentation"), "example": ("any", ""), "nullable": ("bool", "bool"),
    "x-kubernetes-preserve-unknown-fields": ("bool", "bool"), "x-kubernetes-embedded-resource": ("bool", "bool"),
    "x-kubernetes-int-or-string": ("bool", "bool"), "x-kubernetes-list-map-keys": ("strings", "[]string"),
    "x-kubernetes-list-type": ("string", "string"), "x-kubernetes-map-type": ("string", "string"),
    "x-kubernetes-validations": ("array", "v1.ValidationRules"),
}  # fmt: skip


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {value}" if isinstance(value, float) and not value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _fits(kind: str, value: Any) -> bool:
    if value is None or kind == "any":
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "int":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind in ("array", "schemas", "strings"):
        return isinstance(value, list)
    if kind in ("object", "schema", "schema-map"):
        return isinstance(value, dict)
    if kind == "schema|array":
        return isinstance(value, dict | list)
    return isinstance(value, dict | bool)  # schema|bool


def _schema_problems(raw: Any, path: str, go_path: str, unknown: list[str], wrong: list[str]) -> None:
    if not isinstance(raw, dict):
        return
    for key, value in raw.items():
        spec = _PROPS.get(key)
        if spec is None:
            unknown.append(f"{path}.{key}")
            continue
        kind, go_type = spec
        if not _fits(kind, value):
            shown = go_type or {
                "schema|array": "v1.JSONSchemaPropsOrArray",
                "schema|bool": "v1.JSONSchemaPropsOrBool",
            }.get(kind, "")
            where = f"JSONSchemaProps.{go_path}.{key}"
            wrong.append(f"json: cannot unmarshal {_json_kind(value)} into Go struct field {where} of type {shown}")
            continue
        if kind == "strings" and any(not isinstance(v, str) for v in value):
            wrong.append(
                f"json: cannot unmarshal number into Go struct field JSONSchemaProps.{go_path}.{key} of type string"
            )
        if kind in ("schema", "schema|bool", "schema|array") and isinstance(value, dict):
            _schema_problems(value, f"{path}.{key}", f"{go_path}.{key}", unknown, wrong)
        elif (kind == "schema|array" and isinstance(value, list)) or kind == "schemas":
            for i, sub in enumerate(value):
                _schema_problems(sub, f"{path}.{key}[{i}]", f"{go_path}.{key}", unknown, wrong)
        elif kind == "schema-map":
            for name, sub in value.items():
                _schema_problems(sub, f"{path}.{key}.{name}", f"{go_path}.{key}", unknown, wrong)


def decode_problems(crd: dict[str, Any]) -> tuple[list[str], str | None]:
    """(unknown schema keywords as strict decoding names them, the decode error a mistyped one causes)."""
    unknown: list[str] = []
    wrong: list[str] = []
    for i, version in enumerate(_versions(_dict(crd.get("spec")))):
        schema = _dict(version.get("schema")).get("openAPIV3Schema")
        base = f"spec.versions[{i}].schema.openAPIV3Schema"
        _schema_problems(schema, base, "spec.versions.schema.openAPIV3Schema", unknown, wrong)
    return unknown, (wrong[0] if wrong else None)


def _versions(spec: dict[str, Any]) -> list[dict[str, Any]]:
    versions = spec.get("versions")
    return [_dict(v) for v in versions] if isinstance(versions, list) else []


def _shared(versions: list[dict[str, Any]], key: str) -> tuple[bool, Any]:
    """Whether every version carries the same ``key`` (the v1 conversion then lifts it to the spec)."""
    if not versions:
        return False, None
    first = versions[0].get(key)
    return all(same(v.get(key), first) for v in versions), first


def _schema_errors(schema: Any, path: str, *, status: bool) -> list[FieldError]:
    if not isinstance(schema, dict):
        return []
    try:
        StructuralSchema.compile(schema, path=path, status_enabled=status)
    except SchemaError as refused:
        return refused.errors
    return []


def _json_path(value: str, path: str) -> list[FieldError]:
    if not value:
        return [apierrors.invalid_value(path, value, "must not be empty")]
    if not value.startswith("."):
        return [apierrors.invalid_value(path, value, "must be a simple json path starting with .")]
    return []


def _subresources(sub: Any, path: str) -> list[FieldError]:
    scale = _dict(sub).get("scale")
    if not isinstance(scale, dict):
        return []
    errors: list[FieldError] = []
    for key, under in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
        value = str(scale.get(key) or "")
        if not value:
            errors.append(apierrors.required(f"{path}.scale.{key}"))
        elif bad := _json_path(value, f"{path}.scale.{key}"):
            errors += bad
        elif not value.startswith(under):
            errors.append(
                apierrors.invalid_value(
                    f"{path}.scale.{key}", value, f"should be a json path under {under.rstrip('.')}"
                )
            )
    selector = scale.get("labelSelectorPath")
    if isinstance(selector, str) and selector:
        if bad := _json_path(selector, f"{path}.scale.labelSelectorPath"):
            errors += bad
        elif not selector.startswith((".spec.", ".status.")):
            errors.append(
                apierrors.invalid_value(
                    f"{path}.scale.labelSelectorPath", selector, "should be a json path under either .spec or .status"
                )
            )
    return errors


def _columns(columns: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, entry in enumerate(columns if isinstance(columns, list) else []):
        col = _dict(entry)
        where = f"{path}[{i}]"
        if not col.get("name"):
            errors.append(apierrors.required(f"{where}.name"))
        kind = col.get("type") or ""
        if not kind:
            errors.append(apierrors.required(f"{where}.type", f"must be one of {','.join(_COLUMN_TYPES)}"))
        elif kind not in _COLUMN_TYPES:
            errors.append(apierrors.invalid_value(f"{where}.type", kind, f"must be one of {','.join(_COLUMN_TYPES)}"))
        fmt = col.get("format") or ""
        if fmt and fmt not in _COLUMN_FORMATS:
            errors.append(
                apierrors.invalid_value(f"{where}.format", fmt, f"must be one of {','.join(_COLUMN_FORMATS)}")
            )
        json_path = str(col.get("jsonPath") or "")
        if not json_path:
            errors.append(apierrors.required(f"{where}.JSONPath"))
        else:
            errors += _json_path(json_path, f"{where}.JSONPath")
    return errors


def _names(names: dict[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in ("plural", "singular"):
        value = str(names.get(key) or "")
        if value and (why := dns1035_label(value)):
            errors.append(apierrors.invalid_value(f"{path}.{key}", value, ",".join(why)))
    for key in ("kind", "listKind"):
        value = str(names.get(key) or "")
        if value and (why := dns1035_label(value.lower())):
            errors.append(
                apierrors.invalid_value(
                    f"{path}.{key}", value, "may have mixed case, but should otherwise match: " + ",".join(why)
                )
            )
    for i, short in enumerate(_list(names.get("shortNames"))):
        if why := dns1035_label(str(short)):
            errors.append(apierrors.invalid_value(f"{path}.shortNames[{i}]", short, ",".join(why)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errors.append(
            apierrors.invalid_value(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same")
        )
    for i, category in enumerate(_list(names.get("categories"))):
        if why := dns1035_label(str(category)):
            errors.append(apierrors.invalid_value(f"{path}.categories[{i}]", category, ",".join(why)))
    return errors


def _protected(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


def crd_errors(crd: dict[str, Any], *, old: dict[str, Any] | None) -> list[FieldError]:
    """The 422 causes a real server refuses ``crd`` with (``old``: the stored CRD on update)."""
    meta: dict[str, Any] = crd["metadata"] if isinstance(crd.get("metadata"), dict) else {}
    spec: dict[str, Any] = crd["spec"] if isinstance(crd.get("spec"), dict) else {}
    names: dict[str, Any] = dict(spec["names"]) if isinstance(spec.get("names"), dict) else {}
    if names.get("kind"):
        names.setdefault("singular", str(names["kind"]).lower())
        names.setdefault("listKind", f"{names['kind']}List")
    group = str(spec.get("group") or "")
    versions = _versions(spec)
    errors: list[FieldError] = []

    name = str(meta.get("name") or "")
    if not name:
        errors.append(apierrors.required("metadata.name", "name or generateName is required"))
    else:
        for why in [
            *dns1123_subdomain(name),
            *([] if name == f"{names.get('plural', '')}.{group}" else ['must be spec.names.plural+"."+spec.group']),
        ]:
            errors.append(apierrors.invalid_value("metadata.name", name, why))
    if old is not None and name != str(_dict(old.get("metadata")).get("name") or ""):
        errors.append(apierrors.invalid_value("metadata.name", name, "field is immutable"))

    if not group:
        errors.append(apierrors.required("spec.group"))
    elif reasons := dns1123_subdomain(group):
        errors.append(apierrors.invalid_value("spec.group", group, ",".join(reasons)))
    elif "." not in group:
        errors.append(apierrors.invalid_value("spec.group", group, "should be a domain with at least one dot"))
    scope = str(spec.get("scope") or "")
    if not scope:
        errors.append(apierrors.required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errors.append(apierrors.not_supported("spec.scope", scope, ("Cluster", "Namespaced")))

    schemas_shared, shared_schema = _shared(versions, "schema")
    subresources_shared, shared_subresources = _shared(versions, "subresources")
    columns_shared, shared_columns = _shared(versions, "additionalPrinterColumns")
    if not (schemas_shared and isinstance(shared_schema, dict) and shared_schema.get("openAPIV3Schema") is not None):
        for i, version in enumerate(versions):
            if not isinstance(version.get("schema"), dict) or version["schema"].get("openAPIV3Schema") is None:
                errors.append(apierrors.required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"))
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        vname = str(version.get("name") or "")
        unique = unique and vname not in seen
        seen.add(vname)
        if reasons := dns1035_label(vname):
            errors.append(apierrors.invalid_value(f"spec.versions[{i}].name", vname, ",".join(reasons)))
        where = f"spec.versions[{i}]"
        warning = version.get("deprecationWarning")
        if warning is not None and not version.get("deprecated"):
            errors.append(
                apierrors.invalid_value(
                    f"{where}.deprecationWarning", warning, "can only be set for deprecated versions"
                )
            )
        status = isinstance(
            (shared_subresources if subresources_shared else version.get("subresources")), dict
        ) and "status" in ((shared_subresources if subresources_shared else version.get("subresources")) or {})
        if not schemas_shared:
            schema = (
                (version.get("schema") or {}).get("openAPIV3Schema")
                if isinstance(version.get("schema"), dict)
                else None
            )
            errors += _schema_errors(schema, f"{where}.schema.openAPIV3Schema", status=status)
        if not subresources_shared:
            errors += _subresources(version.get("subresources"), f"{where}.subresources")
        if not columns_shared:
            errors += _columns(version.get("additionalPrinterColumns"), f"{where}.additionalPrinterColumns")
    storage = sum(1 for v in versions if v.get("storage") is True)
    if not unique:
        errors.append(apierrors.invalid_value("spec.versions", versions, "must contain unique version names"))
    if storage != 1:
        errors.append(
            apierrors.invalid_value(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    if versions and (reasons := dns1035_label(str(versions[0].get("name") or ""))):
        errors.append(apierrors.invalid_value("spec.version", versions[0].get("name") or "", ",".join(reasons)))

    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errors.append(apierrors.required(f"spec.names.{key}"))
    errors += _names(names, "spec.names")
    if schemas_shared and isinstance(shared_schema, dict):
        any_status = any(isinstance(v.get("subresources"), dict) and "status" in v["subresources"] for v in versions)
        errors += _schema_errors(
            shared_schema.get("openAPIV3Schema"), "spec.validation.openAPIV3Schema", status=any_status
        )
    if subresources_shared:
        errors += _subresources(shared_subresources, "spec.subresources")
    if columns_shared:
        errors += _columns(shared_columns, "spec.additionalPrinterColumns")
    conversion: dict[str, Any] | None = spec["conversion"] if isinstance(spec.get("conversion"), dict) else None
    if conversion is not None:
        strategy = str(conversion.get("strategy") or "")
        if not strategy:
            errors.append(apierrors.required("spec.conversion.strategy"))
        elif strategy not in ("None", "Webhook"):
            errors.append(apierrors.not_supported("spec.conversion.strategy", strategy, ("None", "Webhook")))
        elif strategy == "Webhook" and not _dict(conversion.get("webhook")).get("clientConfig"):
            errors.append(
                apierrors.required("spec.conversion.webhookClientConfig", "required when strategy is set to Webhook")
            )

    if old is None and storage == 0:
        errors.append(apierrors.invalid_value("status.storedVersions", [], "must have at least one stored version"))
    annotations: dict[str, Any] = meta["annotations"] if isinstance(meta.get("annotations"), dict) else {}
    if _protected(group) and _APPROVAL not in annotations:
        why = f'protected groups must have approval annotation "{_APPROVAL}", see {_APPROVAL_LINK}'
        errors.append(apierrors.required(f"metadata.annotations[{_APPROVAL}]", why))
    was_preserving = _dict(_dict(old).get("spec")).get("preserveUnknownFields") is True
    if spec.get("preserveUnknownFields") is True and not was_preserving:
        why = "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        errors.append(apierrors.invalid_value("spec.preserveUnknownFields", True, why))

    if old is not None:
        old_spec: dict[str, Any] = old["spec"] if isinstance(old.get("spec"), dict) else {}
        old_names: dict[str, Any] = old_spec["names"] if isinstance(old_spec.get("names"), dict) else {}
        established = any(
            c.get("type") == "Established" and c.get("status") == "True"
            for c in _list(_dict(old.get("status")).get("conditions"))
            if isinstance(c, dict)
        )
        immutable = [
            ("spec.group", group, old_spec.get("group")),
            ("spec.names.plural", names.get("plural"), old_names.get("plural")),
        ]
        if established:
            immutable[:0] = [
                ("spec.scope", scope, old_spec.get("scope")),
                ("spec.names.kind", names.get("kind"), old_names.get("kind")),
            ]
        for where, new, previous in immutable:
            if new != previous:
                errors.append(apierrors.invalid_value(where, new or "", "field is immutable"))
    return errors


def schema_path(crd: dict[str, Any], index: int) -> str:
    """Where errors of version ``index``'s schema are reported (see the module docstring)."""
    shared, _ = _shared(_versions(_dict(crd.get("spec"))), "schema")
    return "spec.validation.openAPIV3Schema" if shared else f"spec.versions[{index}].schema.openAPIV3Schema"
