"""Pod specs, as ``pkg/apis/core/validation/validation.go`` judges them in Pods and in templates.

Covered: volumes (names), restartPolicy, dnsPolicy, nodeSelector, tolerations, service account,
node and host names, activeDeadlineSeconds, readiness and scheduling gates, priority class and
preemption policy; the containers through :mod:`.containers`; on create the Pod-only rules; on
update the "pod updates may not change fields other than" rule. Left out (accepted as sent):
affinity and topology spread terms, security contexts, volume sources beyond their names, DNS
config beyond its nameservers, sysctls, overhead. The spec diff that follows the update refusal
is the emulator's own summary, not Go's ``cmp.Diff``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import containers, formats, meta

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
UPDATABLE_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
MAX_INT32 = 2**31 - 1


def _volumes(volumes: Any, path: str) -> tuple[set[str], list[FieldError]]:
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        name = str((volume if isinstance(volume, Mapping) else {}).get("name") or "")
        at = f"{path}[{i}].name"
        problems = (
            [apierrors.required(at, "")]
            if not name
            else [apierrors.invalid_value(at, name, m) for m in formats.dns1123_label(name)]
        )
        if name in names:
            problems.append(apierrors.duplicate(at, name))
        if problems:
            errors += problems
        else:
            names.add(name)
    return names, errors


def tolerations(values: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, tol in enumerate(values if isinstance(values, list) else []):
        tol = tol if isinstance(tol, Mapping) else {}
        at = f"{path}[{i}]"
        key, op = str(tol.get("key") or ""), tol.get("operator") or ""
        value, effect = str(tol.get("value") or ""), tol.get("effect") or ""
        if key:
            errors += meta.label_key(key, f"{at}.key")
        if not key and op != "Exists":
            errors.append(
                apierrors.invalid_value(
                    f"{at}.operator",
                    op,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            errors.append(
                apierrors.invalid_value(
                    f"{at}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"
                )
            )
        if op in ("Equal", ""):
            problems = formats.label_value(value)
            if problems:
                errors.append(apierrors.invalid_value(f"{at}.operator", value, ";".join(problems)))
        elif op == "Exists":
            if value:
                errors.append(
                    apierrors.invalid_value(f"{at}.operator", value, "value must be empty when `operator` is 'Exists'")
                )
        else:
            errors.append(apierrors.not_supported(f"{at}.operator", op, ("Equal", "Exists")))
        if effect and effect not in _TAINT_EFFECTS:
            errors.append(apierrors.not_supported(f"{at}.effect", effect, _TAINT_EFFECTS))
    return errors


# ------------------------------------------------------------ the spec
def spec(s: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidatePodSpec`` (after defaulting), in the order upstream reports."""
    errors: list[FieldError] = []
    if s.get("terminationGracePeriodSeconds") is None:
        errors.append(apierrors.required(f"{path}.terminationGracePeriodSeconds", ""))
    volumes, volume_errors = _volumes(s.get("volumes"), f"{path}.volumes")
    errors += volume_errors
    regular = [c if isinstance(c, Mapping) else {} for c in s.get("containers") or []]
    inits = [c if isinstance(c, Mapping) else {} for c in s.get("initContainers") or []]
    errors += containers.regular_containers(regular, volumes, f"{path}.containers")
    errors += containers.init_containers(inits, regular, volumes, f"{path}.initContainers")
    errors += meta.required_choice(f"{path}.restartPolicy", s.get("restartPolicy"), _RESTART_POLICIES)
    errors += meta.required_choice(f"{path}.dnsPolicy", s.get("dnsPolicy"), _DNS_POLICIES)
    errors += meta.labels(s.get("nodeSelector"), f"{path}.nodeSelector")
    errors += _dns_config(s, path)
    errors += _readiness_gates(s.get("readinessGates"), f"{path}.readinessGates")
    errors += _scheduling_gates(s.get("schedulingGates"), f"{path}.schedulingGates")
    errors += _names(
        s, path, ("serviceAccountName", "nodeName"), lambda name: formats.name_is_dns_subdomain(name, False)
    )
    deadline = s.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= MAX_INT32:
        errors.append(
            apierrors.invalid_value(
                f"{path}.activeDeadlineSeconds", deadline, formats.inclusive_range_error(1, MAX_INT32)
            )
        )
    errors += _names(s, path, ("hostname", "subdomain"), formats.dns1123_label)
    errors += tolerations(s.get("tolerations"), f"{path}.tolerations")
    return errors + _priority(s, path)


def _dns_config(s: Mapping[str, Any], path: str) -> list[FieldError]:
    """``dnsPolicy: None`` needs a ``dnsConfig`` with at least one nameserver."""
    if s.get("dnsPolicy") != "None" or (s.get("dnsConfig") or {}).get("nameservers"):
        return []
    if s.get("dnsConfig") is None:
        return [apierrors.required(f"{path}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None")]
    return [
        apierrors.required(
            f"{path}.dnsConfig.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is None"
        )
    ]


def _readiness_gates(gates: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, gate in enumerate(gates or []):
        kind = str((gate or {}).get("conditionType") or "")
        errors += [apierrors.invalid_value(f"{path}[{i}].conditionType", kind, m) for m in formats.qualified_name(kind)]
    return errors


def _scheduling_gates(gates: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates or []):
        name = str((gate or {}).get("name") or "")
        errors += [apierrors.invalid_value(f"{path}[{i}]", name, m) for m in formats.qualified_name(name)]
        if name in seen:
            errors.append(apierrors.duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return errors


def _names(
    s: Mapping[str, Any], path: str, parts: tuple[str, ...], rule: Callable[[str], list[str]]
) -> list[FieldError]:
    """Each of ``parts`` that is set, judged by ``rule``."""
    return [
        apierrors.invalid_value(f"{path}.{part}", s[part], m)
        for part in parts
        if s.get(part)
        for m in rule(str(s[part]))
    ]


def _priority(s: Mapping[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if s.get("priorityClassName"):
        name = str(s["priorityClassName"])
        errors += [
            apierrors.invalid_value(f"{path}.priorityClassName", name, m) for m in formats.dns1123_subdomain(name)
        ]
    preemption = s.get("preemptionPolicy")
    if preemption is not None and preemption not in _PREEMPTION_POLICIES:
        errors.append(apierrors.not_supported(f"{path}.preemptionPolicy", preemption, _PREEMPTION_POLICIES))
    return errors


def _image_whitespace(containers: Any, path: str) -> list[FieldError]:
    errors = []
    for i, c in enumerate(containers if isinstance(containers, list) else []):
        image = str((c or {}).get("image") or "")
        if image != image.strip():
            errors.append(
                apierrors.invalid_value(f"{path}[{i}].image", image, "must not have leading or trailing whitespace")
            )
    return errors


def template(tpl: Any, path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: labels, annotations and the spec of a workload's template."""
    tpl = tpl if isinstance(tpl, Mapping) else {}
    md = tpl.get("metadata") or {}
    s = tpl.get("spec") or {}
    errors = meta.labels(md.get("labels"), f"{path}.labels")
    errors += meta.annotation_keys(md.get("annotations"), f"{path}.annotations")
    errors += spec(s, f"{path}.spec")
    if s.get("ephemeralContainers"):
        errors.append(
            apierrors.forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template")
        )
    return errors


def _metadata_and_spec(pod: Mapping[str, Any]) -> list[FieldError]:
    md = pod.get("metadata") or {}
    s = pod.get("spec") or {}
    errors = meta.object_meta(md, formats.name_is_dns_subdomain)
    errors += spec(s, "spec")
    errors += _image_whitespace(s.get("containers"), "spec.containers")
    errors += _image_whitespace(s.get("initContainers"), "spec.initContainers")
    return errors


def create(pod: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodCreate``."""
    s = pod.get("spec") or {}
    errors = _metadata_and_spec(pod)
    if s.get("ephemeralContainers"):
        errors.append(apierrors.forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if s.get("nodeName") and s.get("schedulingGates"):
        errors.append(apierrors.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errors


def update(pod: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodUpdate``: only images, activeDeadlineSeconds, added tolerations, removed
    scheduling gates and a negative grace period set to 1 may change."""
    errors = meta.object_meta_update(pod.get("metadata") or {})
    errors += _metadata_and_spec(pod)
    new_spec: dict[str, Any] = json.loads(json.dumps(pod.get("spec") or {}))
    old_spec: dict[str, Any] = old.get("spec") or {}
    for check in (_image_changes, _deadline_change):
        found, final = check(new_spec, old_spec)
        errors += found
        if final:
            return errors
    errors += _only_added_tolerations(new_spec.get("tolerations") or [], old_spec.get("tolerations") or [])
    errors += _only_removed_gates(new_spec.get("schedulingGates") or [], old_spec.get("schedulingGates") or [])
    _copy_or_drop(new_spec, old_spec, "activeDeadlineSeconds")
    _copy_or_drop(new_spec, old_spec, "tolerations")
    _copy_or_drop(new_spec, old_spec, "schedulingGates")
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and new_spec.get("terminationGracePeriodSeconds") == 1:
        new_spec["terminationGracePeriodSeconds"] = old_grace
    if meta.semantic(new_spec) != meta.semantic(old_spec):
        detail = "pod updates may not change fields other than " + ",".join(UPDATABLE_FIELDS)
        errors.append(apierrors.forbidden("spec", f"{detail}\n{_diff(old_spec, new_spec)}"))
    return errors


def _image_changes(new_spec: dict[str, Any], old_spec: Mapping[str, Any]) -> tuple[list[FieldError], bool]:
    """Images may change (and stay required): each is set back to the old one in ``new_spec`` for
    the comparison that follows. True when a container was added or removed, which ends the check."""
    errors: list[FieldError] = []
    for part in ("containers", "initContainers"):
        new_list, old_list = new_spec.get(part) or [], old_spec.get(part) or []
        if len(new_list) != len(old_list):
            errors.append(apierrors.forbidden(f"spec.{part}", "pod updates may not add or remove containers"))
            return errors, True
        for i, c in enumerate(new_list):
            if not c.get("image"):
                errors.append(apierrors.required(f"spec.{part}[{i}].image", ""))
            c["image"] = old_list[i].get("image")
    return errors, False


def _deadline_change(new_spec: dict[str, Any], old_spec: Mapping[str, Any]) -> tuple[list[FieldError], bool]:
    """``activeDeadlineSeconds`` may be set or lowered, never raised or unset; True when a refused
    value ends the check."""
    deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if deadline is None:
        if old_deadline is None:
            return [], False
        return [
            apierrors.invalid_value(
                "spec.activeDeadlineSeconds", "null", "must not update from a positive integer to nil value"
            )
        ], False
    if not 0 <= deadline <= MAX_INT32:
        return [
            apierrors.invalid_value("spec.activeDeadlineSeconds", deadline, formats.inclusive_range_error(0, MAX_INT32))
        ], True
    if old_deadline is not None and old_deadline < deadline:
        return [
            apierrors.invalid_value(
                "spec.activeDeadlineSeconds", deadline, "must be less than or equal to previous value"
            )
        ], True
    return [], False


def _copy_or_drop(new: dict[str, Any], old: Mapping[str, Any], key: str) -> None:
    if key in old:
        new[key] = old[key]
    else:
        new.pop(key, None)


def _only_added_tolerations(new: list[Any], old: list[Any]) -> list[FieldError]:
    for existing in old:
        base = {k: v for k, v in (existing or {}).items() if k != "tolerationSeconds"}
        if not any({k: v for k, v in (t or {}).items() if k != "tolerationSeconds"} == base for t in new):
            return [
                apierrors.forbidden(
                    "spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"
                )
            ]
    return tolerations(new, "spec.tolerations")


def _only_removed_gates(new: list[Any], old: list[Any]) -> list[FieldError]:
    before = {str((g or {}).get("name")) for g in old}
    return [
        apierrors.forbidden(
            f"spec.schedulingGates[{i}].name", f"only deletion is allowed, but found new scheduling gate '{name}'"
        )
        for i, name in enumerate(str((g or {}).get("name")) for g in new)
        if name not in before
    ]


def _diff(old: Any, new: Any, path: str = "spec") -> str:
    """Which fields differ, one ``-``/``+`` pair per leaf (a summary in place of Go's cmp.Diff)."""
    lines: list[str] = []

    def walk(a: Any, b: Any, at: str) -> None:
        if a == b:
            return
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for key in list(dict.fromkeys([*a, *b])):
                walk(a.get(key), b.get(key), f"{at}.{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{at}[{i}]")
        else:
            lines.append(f"- {at}: {json.dumps(a, sort_keys=True)}")
            lines.append(f"+ {at}: {json.dumps(b, sort_keys=True)}")

    walk(meta.semantic(old), meta.semantic(new), path)
    return "\n".join(lines)
