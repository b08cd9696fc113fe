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

from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import apierrors, crdparts, schemacheck
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.crdinvariants import dns1035_label, dns1123_subdomain
from shared.sim.apiserver.openapivalidate import same

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


_DECODES_FROM: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "bool": bool,
    "array": list,
    "schemas": list,
    "strings": list,
    "object": dict,
    "schema": dict,
    "schema-map": dict,
    "schema|array": (dict, list),
    "schema|bool": (dict, bool),
}


def _fits(kind: str, value: Any) -> bool:
    if value is None or kind == "any":
        return True
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "int":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    return isinstance(value, _DECODES_FROM.get(kind, (dict, bool)))


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
        for sub, sub_path in _subschemas(kind, value, f"{path}.{key}"):
            _schema_problems(sub, sub_path, f"{go_path}.{key}", unknown, wrong)


def _subschemas(kind: str, value: Any, path: str) -> list[tuple[Any, str]]:
    """The schemas inside a keyword's value, with their paths."""
    if kind in ("schema", "schema|bool", "schema|array") and isinstance(value, dict):
        return [(value, path)]
    if (kind == "schema|array" and isinstance(value, list)) or kind == "schemas":
        return [(sub, f"{path}[{i}]") for i, sub in enumerate(value)]
    if kind == "schema-map":
        return [(sub, f"{path}.{name}") for name, sub in value.items()]
    return []


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
    return schemacheck.schema_errors(schema, path, status_enabled=status)[1]


def crd_errors(crd: dict[str, Any], *, old: dict[str, Any] | None) -> list[FieldError]:
    """The 422 causes a real server refuses ``crd`` with (``old``: the stored CRD on update)."""
    meta: dict[str, Any] = crd["metadata"] if isinstance(crd.get("metadata"), dict) else {}
    spec: dict[str, Any] = crd["spec"] if isinstance(crd.get("spec"), dict) else {}
    names = _defaulted_names(spec)
    group = str(spec.get("group") or "")
    scope = str(spec.get("scope") or "")
    versions = _versions(spec)
    lifted = _Lifted.of(versions)
    errors = _name_errors(meta, names, group, old)
    errors += crdparts.group_errors(group)
    errors += crdparts.scope_errors(scope)
    errors += _required_schemas(versions, lifted)
    for i, version in enumerate(versions):
        errors += _version_errors(version, f"spec.versions[{i}]", lifted)
    errors += _version_list_errors(versions)
    errors += [apierrors.required(f"spec.names.{key}") for key in _REQUIRED_NAMES if not names.get(key)]
    errors += crdparts.name_errors(names, "spec.names")
    errors += _lifted_errors(versions, lifted)
    errors += crdparts.conversion_errors(spec.get("conversion"))
    errors += _policy_errors(meta, spec, versions, old)
    if old is not None:
        errors += _immutable_errors(old, group=group, scope=scope, names=names)
    return errors


_REQUIRED_NAMES = ("plural", "singular", "kind", "listKind")


def _defaulted_names(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec.names`` with ``singular`` and ``listKind`` defaulted from the kind, as the server does first."""
    names: dict[str, Any] = dict(spec["names"]) if isinstance(spec.get("names"), dict) else {}
    if names.get("kind"):
        names.setdefault("singular", str(names["kind"]).lower())
        names.setdefault("listKind", f"{names['kind']}List")
    return names


@dataclass(frozen=True)
class _Lifted:
    """Which per-version parts every version shares (the v1 conversion lifts those to the spec)."""

    schemas: bool
    schema: Any
    subresources: bool
    subresource: Any
    columns: bool
    column: Any

    @classmethod
    def of(cls, versions: list[dict[str, Any]]) -> _Lifted:
        schemas, schema = _shared(versions, "schema")
        subresources, subresource = _shared(versions, "subresources")
        columns, column = _shared(versions, "additionalPrinterColumns")
        return cls(schemas, schema, subresources, subresource, columns, column)


def _name_errors(
    meta: dict[str, Any], names: dict[str, Any], group: str, old: dict[str, Any] | None
) -> list[FieldError]:
    name = str(meta.get("name") or "")
    errors: list[FieldError] = []
    if not name:
        errors.append(apierrors.required("metadata.name", "name or generateName is required"))
    else:
        reasons = dns1123_subdomain(name)
        if name != f"{names.get('plural', '')}.{group}":
            reasons = [*reasons, 'must be spec.names.plural+"."+spec.group']
        errors += [apierrors.invalid_value("metadata.name", name, why) for why in reasons]
    if old is not None and name != str(_dict(old.get("metadata")).get("name") or ""):
        errors.append(apierrors.invalid_value("metadata.name", name, "field is immutable"))
    return errors


def _required_schemas(versions: list[dict[str, Any]], lifted: _Lifted) -> list[FieldError]:
    if lifted.schemas and isinstance(lifted.schema, dict) and lifted.schema.get("openAPIV3Schema") is not None:
        return []
    return [
        apierrors.required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required")
        for i, version in enumerate(versions)
        if not isinstance(version.get("schema"), dict) or version["schema"].get("openAPIV3Schema") is None
    ]


def _version_errors(version: dict[str, Any], where: str, lifted: _Lifted) -> list[FieldError]:
    """One version's name and deprecation, and its schema, subresources and columns unless shared."""
    errors: list[FieldError] = []
    vname = str(version.get("name") or "")
    if reasons := dns1035_label(vname):
        errors.append(apierrors.invalid_value(f"{where}.name", vname, ",".join(reasons)))
    warning = version.get("deprecationWarning")
    if warning is not None and not version.get("deprecated"):
        why = "can only be set for deprecated versions"
        errors.append(apierrors.invalid_value(f"{where}.deprecationWarning", warning, why))
    subresources = lifted.subresource if lifted.subresources else version.get("subresources")
    if not lifted.schemas:
        schema = _dict(version.get("schema")).get("openAPIV3Schema")
        status = isinstance(subresources, dict) and "status" in subresources
        errors += _schema_errors(schema, f"{where}.schema.openAPIV3Schema", status=status)
    if not lifted.subresources:
        errors += crdparts.subresource_errors(version.get("subresources"), f"{where}.subresources")
    if not lifted.columns:
        errors += crdparts.column_errors(version.get("additionalPrinterColumns"), f"{where}.additionalPrinterColumns")
    return errors


def _version_list_errors(versions: list[dict[str, Any]]) -> list[FieldError]:
    """Version names unique, exactly one storage version, and the first version's name (``spec.version``)."""
    errors: list[FieldError] = []
    names = [str(v.get("name") or "") for v in versions]
    if len(set(names)) != len(names):
        errors.append(apierrors.invalid_value("spec.versions", versions, "must contain unique version names"))
    if _storage_count(versions) != 1:
        why = "must have exactly one version marked as storage version"
        errors.append(apierrors.invalid_value("spec.versions", versions, why))
    if versions and (reasons := dns1035_label(names[0])):
        errors.append(apierrors.invalid_value("spec.version", versions[0].get("name") or "", ",".join(reasons)))
    return errors


def _storage_count(versions: list[dict[str, Any]]) -> int:
    return sum(1 for v in versions if v.get("storage") is True)


def _lifted_errors(versions: list[dict[str, Any]], lifted: _Lifted) -> list[FieldError]:
    """The shared schema, subresources and columns, checked once where the conversion put them."""
    errors: list[FieldError] = []
    if lifted.schemas and isinstance(lifted.schema, dict):
        any_status = any(isinstance(v.get("subresources"), dict) and "status" in v["subresources"] for v in versions)
        schema = lifted.schema.get("openAPIV3Schema")
        errors += _schema_errors(schema, "spec.validation.openAPIV3Schema", status=any_status)
    if lifted.subresources:
        errors += crdparts.subresource_errors(lifted.subresource, "spec.subresources")
    if lifted.columns:
        errors += crdparts.column_errors(lifted.column, "spec.additionalPrinterColumns")
    return errors


def _policy_errors(
    meta: dict[str, Any], spec: dict[str, Any], versions: list[dict[str, Any]], old: dict[str, Any] | None
) -> list[FieldError]:
    """A stored version on create, approval of protected groups, and no new ``preserveUnknownFields``."""
    errors: list[FieldError] = []
    if old is None and _storage_count(versions) == 0:
        errors.append(apierrors.invalid_value("status.storedVersions", [], "must have at least one stored version"))
    annotations: dict[str, Any] = meta["annotations"] if isinstance(meta.get("annotations"), dict) else {}
    if crdparts.protected(str(spec.get("group") or "")) and crdparts.APPROVAL not in annotations:
        why = f'protected groups must have approval annotation "{crdparts.APPROVAL}", see {crdparts.APPROVAL_LINK}'
        errors.append(apierrors.required(f"metadata.annotations[{crdparts.APPROVAL}]", why))
    was_preserving = _dict(_dict(old).get("spec")).get("preserveUnknownFields") is True
    if spec.get("preserveUnknownFields") is True and not was_preserving:
        why = "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        errors.append(apierrors.invalid_value("spec.preserveUnknownFields", True, why))
    return errors


def _immutable_errors(old: dict[str, Any], *, group: str, scope: str, names: dict[str, Any]) -> list[FieldError]:
    """Group and plural never change; scope and kind not once the CRD is Established."""
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
    return [
        apierrors.invalid_value(where, new or "", "field is immutable")
        for where, new, previous in immutable
        if new != previous
    ]


def schema_path(crd: dict[str, Any], index: int) -> str:
    """Where errors of version ``index``'s schema are reported (see the module docstring)."""
    shared, _ = _shared(_versions(_dict(crd.get("spec"))), "schema")
    return "spec.validation.openAPIV3Schema" if shared else f"spec.versions[{index}].schema.openAPIV3Schema"
