"""apps/v1 workloads: Deployment, ReplicaSet, DaemonSet, StatefulSet (``pkg/apis/apps/validation``).

The selector is required (a DaemonSet without one only fails to match its template, as upstream),
must not be empty, must match the template's labels, and cannot change after create (the check
the apps/v1 strategies add, ``pkg/registry/apps/*/strategy.go``). A StatefulSet's spec may change
only in the fields its 1.34 message lists; its template's pod spec is not validated upstream, so
not here either. Status subresource writes are not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, meta, pods

_ROLLING: tuple[meta.GoField, ...] = (("maxUnavailable", "MaxUnavailable", 0), ("maxSurge", "MaxSurge", 0))
_STS_ROLLING: tuple[meta.GoField, ...] = (("partition", "Partition", 0), ("maxUnavailable", "MaxUnavailable", None))


def _strategy_json(strategy: Any, rolling: tuple[meta.GoField, ...]) -> str:
    return meta.internal_json(
        strategy,
        (("type", "Type", ""), ("rollingUpdate", "RollingUpdate", None)),
        {"rollingUpdate": lambda r: meta.internal_json(r, rolling)},
    )


STATEFULSET_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)
_STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def _int_or_percent(value: Any, field: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        return [apierrors.invalid_value(field, value, m) for m in formats.percent(value)]
    return meta.nonnegative(field, value)


def _percent_value(value: Any) -> int:
    if isinstance(value, str):
        return int(value[:-1]) if not formats.percent(value) else 0
    return int(value or 0) if not isinstance(value, bool) else 0


def _not_over_100(value: Any, field: str) -> list[FieldError]:
    if isinstance(value, str) and not formats.percent(value) and int(value[:-1]) > 100:
        return [apierrors.invalid_value(field, value, "must not be greater than 100%")]
    return []


def _selector(spec: Mapping[str, Any], what: str) -> tuple[list[FieldError], bool]:
    """Selector errors, and whether it parses (``LabelSelectorAsSelector`` succeeds)."""
    selector = spec.get("selector")
    if selector is None:
        return [apierrors.required("spec.selector", "")], True
    errors = meta.label_selector(selector, "spec.selector")
    parses = not errors
    if meta.selector_is_empty(selector):
        errors.append(_invalid_selector(spec, f"empty selector is invalid for {what}"))
    return errors, parses


def _template_labels_match(spec: Mapping[str, Any]) -> list[FieldError]:
    selector = spec.get("selector")
    tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if selector is not None and meta.selector_is_empty(selector):
        return []
    if meta.selector_matches(selector, tpl_labels):
        return []
    return [
        apierrors.invalid_value(
            "spec.template.metadata.labels", tpl_labels, "`selector` does not match template `labels`"
        )
    ]


def _replica_template(spec: Mapping[str, Any], kind: str) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet``."""
    errors = _template_labels_match(spec)
    errors += pods.template(spec.get("template"), "spec.template")
    return errors + _always_restarting_template(spec, kind)


def _invalid_selector(spec: Mapping[str, Any], detail: str) -> FieldError:
    body = f"Invalid value: {meta.selector_json(spec.get('selector'))}"
    return FieldError("spec.selector", "FieldValueInvalid", f"{body}: {detail}" if detail else body)


# ------------------------------------------------------------ Deployment
def _deployment_strategy(strategy: Any) -> list[FieldError]:
    strategy = strategy if isinstance(strategy, Mapping) else {}
    kind = strategy.get("type")
    if kind == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            return [
                apierrors.forbidden(
                    "spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"
                )
            ]
        return []
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if rolling is None:
            return [apierrors.required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")]
        path = "spec.strategy.rollingUpdate"
        unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
        errors = _int_or_percent(unavailable, f"{path}.maxUnavailable") + _int_or_percent(surge, f"{path}.maxSurge")
        if _percent_value(unavailable) == 0 and _percent_value(surge) == 0:
            errors.append(
                apierrors.invalid_value(f"{path}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
            )
        return errors + _not_over_100(unavailable, f"{path}.maxUnavailable")
    shown = _strategy_json(strategy, _ROLLING)
    return [
        FieldError(
            "spec.strategy",
            "FieldValueNotSupported",
            f'Unsupported value: {shown}: supported values: "Recreate", "RollingUpdate"',
        )
    ]


def deployment(obj: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain) + _deployment_spec(obj)


def _deployment_spec(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors = meta.nonnegative("spec.replicas", spec.get("replicas"))
    selector_errors, parses = _selector(spec, "deployment")
    errors += selector_errors
    if parses:
        errors += _replica_template(spec, "ReplicaSet")
    else:
        errors.append(_invalid_selector(spec, "invalid label selector"))
    errors += _deployment_strategy(spec.get("strategy"))
    errors += meta.nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    errors += meta.nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        errors += meta.nonnegative("spec.progressDeadlineSeconds", deadline)
        if deadline <= int(spec.get("minReadySeconds") or 0):
            errors.append(
                apierrors.invalid_value(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    return errors


def _selector_unchanged(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    new_sel, old_sel = (obj.get("spec") or {}).get("selector"), (old.get("spec") or {}).get("selector")
    if meta.semantic(new_sel) == meta.semantic(old_sel):
        return []
    return [
        FieldError(
            "spec.selector", "FieldValueInvalid", f"Invalid value: {meta.selector_json(new_sel)}: {meta.IMMUTABLE}"
        )
    ]


def deployment_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {}) + _deployment_spec(obj)
    return errors + _selector_unchanged(obj, old)


# ------------------------------------------------------------ ReplicaSet
def _replicaset_spec(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors = meta.nonnegative("spec.replicas", spec.get("replicas"))
    errors += meta.nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    selector_errors, parses = _selector(spec, "deployment")  # sic: upstream names the Deployment here
    errors += selector_errors
    if parses:
        errors += _replica_template(spec, "ReplicaSet")
    else:
        errors.append(_invalid_selector(spec, "invalid label selector"))
    return errors


def replicaset(obj: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain) + _replicaset_spec(obj)


def replicaset_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {}) + _replicaset_spec(obj)
    return errors + _selector_unchanged(obj, old)


# ------------------------------------------------------------ DaemonSet
def _daemonset_strategy(strategy: Any) -> list[FieldError]:
    strategy = strategy if isinstance(strategy, Mapping) else {}
    kind = strategy.get("type")
    if kind == "OnDelete":
        return []
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if rolling is None:
            return [apierrors.required("spec.updateStrategy.rollingUpdate", "")]
        path = "spec.updateStrategy.rollingUpdate"
        unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
        errors = _int_or_percent(unavailable, f"{path}.maxUnavailable") + _int_or_percent(surge, f"{path}.maxSurge")
        errors += _not_over_100(unavailable, f"{path}.maxUnavailable") + _not_over_100(surge, f"{path}.maxSurge")
        has_unavailable, has_surge = _percent_value(unavailable) != 0, _percent_value(surge) != 0
        if has_unavailable and has_surge:
            errors.append(
                apierrors.invalid_value(f"{path}.maxSurge", surge, "may not be set when maxUnavailable is non-zero")
            )
        elif not has_unavailable and not has_surge:
            errors.append(apierrors.required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
        return errors
    shown = _strategy_json(strategy, _ROLLING)
    return [
        FieldError(
            "spec.updateStrategy",
            "FieldValueNotSupported",
            f'Unsupported value: {shown}: supported values: "RollingUpdate", "OnDelete"',
        )
    ]


def _daemonset_spec(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    errors = meta.label_selector(selector, "spec.selector")
    tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not errors and not meta.selector_matches(selector, tpl_labels):
        errors.append(
            apierrors.invalid_value(
                "spec.template.metadata.labels", tpl_labels, "`selector` does not match template `labels`"
            )
        )
    if selector is not None and meta.selector_is_empty(selector):
        errors.append(_invalid_selector(spec, "empty selector is invalid for daemonset"))
    errors += pods.template(spec.get("template"), "spec.template")
    errors += _always_restarting_template(spec, "DaemonSet")
    errors += meta.nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    errors += _daemonset_strategy(spec.get("updateStrategy"))
    return errors + meta.nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))


def daemonset(obj: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain) + _daemonset_spec(obj)


def daemonset_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {}) + _daemonset_spec(obj)
    return errors + _selector_unchanged(obj, old)


# ------------------------------------------------------------ StatefulSet
def _statefulset_spec(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errors: list[FieldError] = []
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        errors.append(apierrors.required("spec.podManagementPolicy", ""))
    elif policy not in ("OrderedReady", "Parallel"):
        errors.append(
            apierrors.invalid_value("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    errors += _statefulset_strategy(spec.get("updateStrategy") or {})
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, Mapping):
        errors += [
            apierrors.not_supported(
                f"spec.persistentVolumeClaimRetentionPolicy.{part}", retention.get(part) or "", ("Retain", "Delete")
            )
            for part in ("whenDeleted", "whenScaled")
            if retention.get(part) not in ("Retain", "Delete")
        ]
    errors += meta.nonnegative("spec.replicas", spec.get("replicas"))
    errors += meta.nonnegative("spec.minReadySeconds", spec.get("minReadySeconds"))
    selector_errors, parses = _selector(spec, "statefulset")
    errors += selector_errors
    if not parses:
        errors.append(_invalid_selector(spec, ""))
    else:
        errors += _template_labels_match(spec)
        md = (spec.get("template") or {}).get("metadata") or {}
        errors += meta.labels(md.get("labels"), "spec.template.labels")
        errors += meta.annotation_keys(md.get("annotations"), "spec.template.annotations")
    return errors + _always_restarting_template(spec, "StatefulSet")


def _statefulset_strategy(strategy: Mapping[str, Any]) -> list[FieldError]:
    kind = strategy.get("type") or ""
    if not kind:
        return [apierrors.required("spec.updateStrategy", "")]
    if kind == "OnDelete":
        if strategy.get("rollingUpdate") is None:
            return []
        return [
            meta.invalid_internal(
                "spec.updateStrategy.rollingUpdate",
                strategy["rollingUpdate"],
                "only allowed for updateStrategy 'RollingUpdate'",
                _STS_ROLLING,
            )
        ]
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate") or {}
        return meta.nonnegative("spec.updateStrategy.rollingUpdate.partition", rolling.get("partition"))
    shown = _strategy_json(strategy, _STS_ROLLING)
    return [
        FieldError(
            "spec.updateStrategy", "FieldValueInvalid", f"Invalid value: {shown}: must be 'RollingUpdate' or 'OnDelete'"
        )
    ]


def _always_restarting_template(spec: Mapping[str, Any], kind: str) -> list[FieldError]:
    """The template of a workload whose pods run forever: ``restartPolicy: Always`` and no deadline."""
    errors: list[FieldError] = []
    tpl_spec = (spec.get("template") or {}).get("spec") or {}
    restart = tpl_spec.get("restartPolicy")
    if restart != "Always":
        errors.append(apierrors.not_supported("spec.template.spec.restartPolicy", restart or "", ("Always",)))
    if tpl_spec.get("activeDeadlineSeconds") is not None:
        errors.append(
            apierrors.forbidden(
                "spec.template.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported"
            )
        )
    return errors


def statefulset(obj: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_label) + _statefulset_spec(obj)


def statefulset_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {}) + _statefulset_spec(obj)
    fixed = {k: v for k, v in (obj.get("spec") or {}).items() if k not in _STATEFULSET_MUTABLE}
    was = {k: v for k, v in (old.get("spec") or {}).items() if k not in _STATEFULSET_MUTABLE}
    if meta.semantic(fixed) != meta.semantic(was):
        errors.append(apierrors.forbidden("spec", STATEFULSET_FORBIDDEN))
    return errors
