"""rbac.authorization.k8s.io/v1 objects, as ``pkg/apis/rbac/validation/validation.go`` judges them.

Names are URL path segments (anything without ``/`` or ``%``, not ``.`` or ``..``); every rule
needs verbs, resource rules an API group and a resource; a namespaced rule cannot name
non-resource URLs; bindings need a valid roleRef that never changes and subjects of a known kind.
Privilege escalation (a user granting what they do not hold) is RBAC's business, not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, meta

GROUP = "rbac.authorization.k8s.io"
_REF_FIELDS: tuple[meta.GoField, ...] = (("apiGroup", "APIGroup", ""), ("kind", "Kind", ""), ("name", "Name", ""))


def _rule(rule: Any, path: str, *, namespaced: bool) -> list[FieldError]:
    rule = rule if isinstance(rule, Mapping) else {}
    errors: list[FieldError] = []
    if not rule.get("verbs"):
        errors.append(apierrors.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            errors.append(
                apierrors.invalid_value(
                    f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"
                )
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errors.append(
                apierrors.invalid_value(
                    f"{path}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errors
    if not rule.get("apiGroups"):
        errors.append(apierrors.required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        errors.append(apierrors.required(f"{path}.resources", "resource rules must supply at least one resource"))
    return errors


def role(obj: Mapping[str, Any], *, namespaced: bool) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.path_segment_name)
    for i, rule in enumerate(obj.get("rules") or []):
        errors += _rule(rule, f"rules[{i}]", namespaced=namespaced)
    return errors


def role_update(obj: Mapping[str, Any], old: Mapping[str, Any], *, namespaced: bool) -> list[FieldError]:
    return role(obj, namespaced=namespaced) + meta.object_meta_update(obj.get("metadata") or {})


def _subject(subject: Any, path: str, *, namespaced: bool) -> list[FieldError]:
    subject = subject if isinstance(subject, Mapping) else {}
    errors: list[FieldError] = []
    name, kind, group = str(subject.get("name") or ""), subject.get("kind") or "", subject.get("apiGroup") or ""
    if not name:
        errors.append(apierrors.required(f"{path}.name", ""))
    if kind == "ServiceAccount":
        if name:
            errors += [
                apierrors.invalid_value(f"{path}.name", name, m) for m in formats.name_is_dns_subdomain(name, False)
            ]
        if group:
            errors.append(apierrors.not_supported(f"{path}.apiGroup", group, ("",)))
        if not namespaced and not subject.get("namespace"):
            errors.append(apierrors.required(f"{path}.namespace", ""))
    elif kind in ("User", "Group"):
        if group != GROUP:
            errors.append(apierrors.not_supported(f"{path}.apiGroup", group, (GROUP,)))
    else:
        errors.append(apierrors.not_supported(f"{path}.kind", kind, ("ServiceAccount", "User", "Group")))
    return errors


def binding(obj: Mapping[str, Any], *, namespaced: bool) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.path_segment_name)
    raw = obj.get("roleRef")
    ref: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if ref.get("apiGroup") != GROUP:
        errors.append(apierrors.not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", (GROUP,)))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        errors.append(apierrors.not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    name = str(ref.get("name") or "")
    if not name:
        errors.append(apierrors.required("roleRef.name", ""))
    else:
        errors += [apierrors.invalid_value("roleRef.name", name, m) for m in formats.path_segment_name(name, False)]
    for i, subject in enumerate(obj.get("subjects") or []):
        errors += _subject(subject, f"subjects[{i}]", namespaced=namespaced)
    return errors


def binding_update(obj: Mapping[str, Any], old: Mapping[str, Any], *, namespaced: bool) -> list[FieldError]:
    errors = binding(obj, namespaced=namespaced) + meta.object_meta_update(obj.get("metadata") or {})
    if meta.semantic(obj.get("roleRef")) != meta.semantic(old.get("roleRef")):
        errors.append(meta.invalid_internal("roleRef", obj.get("roleRef") or {}, "cannot change roleRef", _REF_FIELDS))
    return errors
