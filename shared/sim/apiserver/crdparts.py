"""Checks of a CustomResourceDefinition's parts, each on its own: group, scope, names, scale
subresource, printer columns, conversion.

apiextensions-apiserver:pkg/apis/apiextensions/validation/validation.go
(``ValidateCustomResourceDefinitionSpec`` and the helpers it calls per part). What ties the parts
together (which version's schema, subresources and columns are shared and so checked once under
``spec.``, storage versions, updates) is :func:`shared.sim.apiserver.crdcheck.crd_errors`.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.crdinvariants import dns1035_label, dns1123_subdomain

APPROVAL = "api-approved.kubernetes.io"
APPROVAL_LINK = "https://github.com/kubernetes/enhancements/pull/1111"
_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
_SCOPES = ("Cluster", "Namespaced")
_STRATEGIES = ("None", "Webhook")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def group_errors(group: str) -> list[FieldError]:
    if not group:
        return [apierrors.required("spec.group")]
    if reasons := dns1123_subdomain(group):
        return [apierrors.invalid_value("spec.group", group, ",".join(reasons))]
    if "." not in group:
        return [apierrors.invalid_value("spec.group", group, "should be a domain with at least one dot")]
    return []


def scope_errors(scope: str) -> list[FieldError]:
    if not scope:
        return [apierrors.required("spec.scope")]
    if scope not in _SCOPES:
        return [apierrors.not_supported("spec.scope", scope, _SCOPES)]
    return []


def conversion_errors(conversion: Any) -> list[FieldError]:
    """The strategy, and a webhook's client config when the strategy is Webhook (nothing more is checked)."""
    if not isinstance(conversion, dict):
        return []
    strategy = str(conversion.get("strategy") or "")
    if not strategy:
        return [apierrors.required("spec.conversion.strategy")]
    if strategy not in _STRATEGIES:
        return [apierrors.not_supported("spec.conversion.strategy", strategy, _STRATEGIES)]
    if strategy == "Webhook" and not _dict(conversion.get("webhook")).get("clientConfig"):
        return [apierrors.required("spec.conversion.webhookClientConfig", "required when strategy is set to Webhook")]
    return []


def _json_path(value: str, path: str) -> list[FieldError]:
    if not value:
        return [apierrors.invalid_value(path, value, "must not be empty")]
    if not value.startswith("."):
        return [apierrors.invalid_value(path, value, "must be a simple json path starting with .")]
    return []


def subresource_errors(sub: Any, path: str) -> list[FieldError]:
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


def column_errors(columns: Any, path: str) -> list[FieldError]:
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


def name_errors(names: dict[str, Any], path: str) -> list[FieldError]:
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


def protected(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))
