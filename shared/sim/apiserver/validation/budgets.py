"""policy/v1 PodDisruptionBudget and coordination.k8s.io/v1 Lease: the few rules they carry.

PodDisruptionBudget (``pkg/apis/policy/validation``): at most one of minAvailable and
maxUnavailable, each a non-negative integer or a percentage up to 100%, a valid selector, a known
unhealthyPodEvictionPolicy. Lease (``pkg/apis/coordination/validation``): a positive duration,
non-negative transitions, a preferred holder only with a strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, meta

_PDB_FIELDS: tuple[meta.GoField, ...] = (
    ("minAvailable", "MinAvailable", None),
    ("selector", "Selector", None),
    ("maxUnavailable", "MaxUnavailable", None),
    ("unhealthyPodEvictionPolicy", "UnhealthyPodEvictionPolicy", None),
)


def _int_or_percent(value: Any, field: str) -> list[FieldError]:
    if isinstance(value, str):
        errors = [apierrors.invalid_value(field, value, m) for m in formats.percent(value)]
        if not errors and int(value[:-1]) > 100:
            errors.append(apierrors.invalid_value(field, value, "must not be greater than 100%"))
        return errors
    return meta.nonnegative(field, value)


def pod_disruption_budget(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errors.append(
            FieldError(
                "spec",
                "FieldValueInvalid",
                f"Invalid value: {meta.internal_json(spec, _PDB_FIELDS, {'selector': meta.selector_json})}: "
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    for part in ("minAvailable", "maxUnavailable"):
        if spec.get(part) is not None:
            errors += _int_or_percent(spec[part], f"spec.{part}")
    errors += meta.label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        errors.append(
            apierrors.not_supported("spec.unhealthyPodEvictionPolicy", policy, ("AlwaysAllow", "IfHealthyBudget"))
        )
    return errors + meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain)


def pod_disruption_budget_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    return pod_disruption_budget(obj) + meta.object_meta_update(obj.get("metadata") or {})


def lease(obj: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain, kube=False)
    spec = obj.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errors.append(apierrors.invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errors.append(
            apierrors.invalid_value("spec.leaseTransitions", transitions, "must be greater than or equal to 0")
        )
    if spec.get("preferredHolder") and not spec.get("strategy"):
        errors.append(apierrors.forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return errors


def lease_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta_update(obj.get("metadata") or {}, kube=False) + lease(obj)
