"""batch/v1 Job, as ``pkg/apis/batch/validation/validation.go`` (1.34) judges it.

The selector and the template labels are generated on create unless ``manualSelector`` is set
(:mod:`.defaulting`); a hand-written selector without it is refused as "not auto-generated".
The template must restart ``OnFailure`` or ``Never``. On update the selector, completions (an
Indexed Job may change them together with parallelism), completionMode and the template are
fixed — except the scheduling directives of a suspended Job that never started. Pod failure
and success policies are checked only for being immutable; CronJobs are not served.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, meta, pods

_GENERATED = (
    ("controller-uid", "uid"),
    ("job-name", "name"),
    ("batch.kubernetes.io/controller-uid", "uid"),
    ("batch.kubernetes.io/job-name", "name"),
)
MAX_INDEXED_PARALLELISM = 100000


def _has_label(tpl_labels: Mapping[str, Any], key: str, expected: str) -> list[FieldError]:
    field = f"spec.template.metadata.labels[{key}]"
    if key not in tpl_labels:
        return [apierrors.required(field, f"must be '{expected}'")]
    if tpl_labels[key] != expected:
        return [apierrors.invalid_value(field, dict(tpl_labels), f"must be '{expected}'")]
    return []


def _generated_selector(obj: Mapping[str, Any], *, prefixed: bool) -> list[FieldError]:
    spec = obj.get("spec") or {}
    if spec.get("manualSelector") or spec.get("selector") is None:
        return []
    md = obj.get("metadata") or {}
    ids = {"uid": str(md.get("uid") or ""), "name": str(md.get("name") or "")}
    tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    errors: list[FieldError] = []
    expected: dict[str, str] = {}
    for key, source in _GENERATED:
        if key.startswith("batch.") and not prefixed:
            continue
        errors += _has_label(tpl_labels, key, ids[source])
        expected[key] = ids[source]
    if not meta.label_selector(spec["selector"], "spec.selector") and not meta.selector_matches(
        spec["selector"], expected
    ):
        errors.append(
            FieldError(
                "spec.selector",
                "FieldValueInvalid",
                f"Invalid value: {meta.selector_json(spec['selector'])}: `selector` not auto-generated",
            )
        )
    return errors


def _spec(spec: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateJobSpec``."""
    errors: list[FieldError] = []
    for part in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        errors += meta.nonnegative(f"spec.{part}", spec.get(part))
    errors += _completion_mode(spec)
    errors += _replacement_policy(spec)
    errors += pods.template(spec.get("template"), "spec.template")
    errors += _template_restart(spec)
    selector = spec.get("selector")
    if selector is None:
        return [*errors, apierrors.required("spec.selector", "")]
    selector_errors = meta.label_selector(selector, "spec.selector")
    errors += selector_errors
    tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not selector_errors and not meta.selector_matches(selector, tpl_labels):
        errors.append(
            apierrors.invalid_value(
                "spec.template.metadata.labels", tpl_labels, "`selector` does not match template `labels`"
            )
        )
    return errors


def _completion_mode(spec: Mapping[str, Any]) -> list[FieldError]:
    """A known mode; Indexed needs completions and caps parallelism."""
    mode = spec.get("completionMode")
    if mode is None:
        return []
    if mode not in ("NonIndexed", "Indexed"):
        return [apierrors.not_supported("spec.completionMode", mode, ("NonIndexed", "Indexed"))]
    errors: list[FieldError] = []
    if mode == "Indexed":
        if spec.get("completions") is None:
            errors.append(apierrors.required("spec.completions", "when completion mode is Indexed"))
        parallelism = spec.get("parallelism")
        if isinstance(parallelism, int) and parallelism > MAX_INDEXED_PARALLELISM:
            errors.append(
                apierrors.invalid_value(
                    "spec.parallelism",
                    parallelism,
                    f"must be less than or equal to {MAX_INDEXED_PARALLELISM} when completion mode is Indexed",
                )
            )
    return errors


def _replacement_policy(spec: Mapping[str, Any]) -> list[FieldError]:
    """``podReplacementPolicy``: only ``Failed`` next to a pod failure policy."""
    replacement = spec.get("podReplacementPolicy")
    if replacement is None:
        return []
    allowed = ("Failed",) if spec.get("podFailurePolicy") is not None else ("Failed", "TerminatingOrFailed")
    if replacement in allowed:
        return []
    return [apierrors.not_supported("spec.podReplacementPolicy", replacement, allowed)]


def _template_restart(spec: Mapping[str, Any]) -> list[FieldError]:
    """A Job's pods end: ``OnFailure`` or ``Never``, and only ``Never`` with a pod failure policy."""
    restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") or ""
    if restart in ("Always", ""):
        return [apierrors.required("spec.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"')]
    if restart not in ("OnFailure", "Never"):
        return [apierrors.not_supported("spec.template.spec.restartPolicy", restart, ("OnFailure", "Never"))]
    if spec.get("podFailurePolicy") is not None and restart != "Never":
        return [
            apierrors.invalid_value(
                "spec.template.spec.restartPolicy",
                restart,
                'only "Never" is supported when podFailurePolicy is specified',
            )
        ]
    return []


def job(obj: Mapping[str, Any], *, prefixed: bool = True) -> list[FieldError]:
    """``ValidateJob``; ``prefixed``: the ``batch.kubernetes.io/`` labels are required too."""
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    errors = meta.object_meta(md, formats.name_is_dns_subdomain)
    errors += _generated_selector(obj, prefixed=prefixed)
    errors += _spec(spec)
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0:
        hostname = f"{md.get('name', '')}-{completions - 1}"
        if formats.dns1123_label(hostname):
            errors.append(
                apierrors.invalid_value(
                    "metadata.name",
                    md.get("name", ""),
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return errors


def _template_update(spec: Mapping[str, Any], old_spec: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    new_tpl = dict(spec.get("template") or {})
    old_tpl = dict(old_spec.get("template") or {})
    suspended_never_started = old_spec.get("suspend") is True and not (old.get("status") or {}).get("startTime")
    if suspended_never_started:
        # Scheduling directives of a Job that has not started may change (AllowMutableSchedulingDirectives).
        new_md, old_md = dict(new_tpl.get("metadata") or {}), dict(old_tpl.get("metadata") or {})
        for key in ("labels", "annotations"):
            old_md.pop(key, None)
            new_md.pop(key, None)
        new_spec, old_spec_tpl = dict(new_tpl.get("spec") or {}), dict(old_tpl.get("spec") or {})
        for key in ("nodeSelector", "tolerations", "schedulingGates"):
            old_spec_tpl.pop(key, None)
            new_spec.pop(key, None)
        for side in (new_spec, old_spec_tpl):
            affinity = dict(side.get("affinity") or {})
            affinity.pop("nodeAffinity", None)
            side["affinity"] = affinity
        new_tpl = {**new_tpl, "metadata": new_md, "spec": new_spec}
        old_tpl = {**old_tpl, "metadata": old_md, "spec": old_spec_tpl}
    if meta.semantic(new_tpl) == meta.semantic(old_tpl):
        return []
    return [apierrors.invalid_value("spec.template", spec.get("template"), meta.IMMUTABLE)]


def _completions_update(spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[FieldError]:
    new, was = spec.get("completions"), old_spec.get("completions")
    if spec.get("completionMode") != "Indexed":
        return meta.immutable("spec.completions", new, was)
    if new == was or new is None:
        return []
    if new != spec.get("parallelism"):
        return [
            apierrors.invalid_value("spec.completions", new, "can only be modified in tandem with spec.parallelism")
        ]
    return []


def job_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """The strategy's ``ValidateJob`` then ``ValidateJobUpdate`` (so spec errors come twice)."""
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    old_labels = ((old_spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    errors = job(obj, prefixed="batch.kubernetes.io/controller-uid" in old_labels)
    errors += meta.object_meta_update(obj.get("metadata") or {})
    errors += _spec(spec)
    errors += _completions_update(spec, old_spec)
    if meta.semantic(spec.get("selector")) != meta.semantic(old_spec.get("selector")):
        selector = spec.get("selector")
        errors.append(
            FieldError(
                "spec.selector", "FieldValueInvalid", f"Invalid value: {meta.selector_json(selector)}: {meta.IMMUTABLE}"
            )
        )
    errors += _template_update(spec, old_spec, old)
    for part in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"):
        if meta.semantic(spec.get(part)) != meta.semantic(old_spec.get(part)):
            errors += meta.immutable(f"spec.{part}", spec.get(part), old_spec.get(part))
    return errors
