"""JobSet's admission webhooks: ``mjobset.kb.io`` fills the defaults, ``vjobset.kb.io`` refuses what
the controller could not run.

From kubernetes-sigs/jobset ``pkg/webhooks/jobset_webhook.go`` (research/workloads.md §2.1).
Defaults: ``successPolicy {operator: All}``, ``startupPolicy {startupPolicyOrder: AnyOrder}``, per
replicatedJob ``completionMode: Indexed`` and pod ``restartPolicy: OnFailure``, ``network
{enableDNSHostnames: true, publishNotReadyAddresses: true}``, failure-policy rules named
``failurePolicyRule<i>``. On create it checks dependsOn (not on the first replicatedJob, only on an
earlier one), the subdomain, group names and the lengths of the Job and pod names it will generate,
success- and failure-policy targets; on update the replicatedJobs are immutable (pod labels,
annotations, nodeSelector, tolerations and scheduling gates may change while suspended). Left out:
``managedBy`` format checks and the coordinator's index checks.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.validation import formats
from shared.sim.operators import jobsetcrd, jobsetjobs, webhooks

VALIDATOR = "vjobset.kb.io"
_MAX_INT32 = 2**31 - 1
_TOO_LONG = formats.max_len_error(formats.DNS1123_LABEL_MAX)
_GROUP_TOO_LONG = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
_JOB_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
_POD_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
_SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"
_RULE_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?\Z")
_JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
_SUSPEND_MUTABLE = ("nodeSelector", "tolerations", "schedulingGates")


def _dns1035(value: str, too_long: str) -> list[str]:
    return [too_long if m == _TOO_LONG else m for m in formats.dns1035_label(value)]


def _rules(policy: dict[str, Any], names: list[str]) -> list[str]:
    errors: list[str] = []
    seen: dict[str, list[int]] = {}
    for index, rule in enumerate(policy.get("rules") or []):
        name = str(rule.get("name", ""))
        if not 1 <= len(name) <= 128:
            errors.append(
                f"invalid failure policy rule name of length {len(name)}, the rule name must be at least 1 "
                "characters long and at most 128 characters long"
            )
        seen.setdefault(name, []).append(index)
        if not _RULE_NAME.match(name):
            errors.append(
                f"invalid failure policy rule name '{name}', a failure policy rule name must start with an "
                "alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', "
                "and must end with an alphanumeric character or '_'"
            )
        for target in rule.get("targetReplicatedJobs") or []:
            if target not in names:
                errors.append(
                    f"invalid replicatedJob name '{target}' in failure policy does not appear in .spec.ReplicatedJobs"
                )
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in _JOB_FAILURE_REASONS:
                errors.append(
                    f"invalid job failure reason '{reason}' in failure policy is not a recognized job failure reason"
                )
    for name, indexes in seen.items():
        if len(indexes) > 1:
            shown = "[" + " ".join(str(i) for i in indexes) + "]"
            errors.append(f"rule names are not unique, rules with indices {shown} all have the same name '{name}'")
    return errors


def create_errors(js: dict[str, Any]) -> list[str]:
    """``ValidateCreate``'s errors, in its order."""
    spec = js.get("spec") or {}
    rjobs = jobsetjobs.replicated_jobs(js)
    names = [r["name"] for r in rjobs]
    errors: list[str] = []
    if rjobs and rjobs[0].get("dependsOn") is not None:
        errors.append("DependsOn can't be set for the first ReplicatedJob")
    subdomain = str((spec.get("network") or {}).get("subdomain") or "")
    if subdomain:
        errors += formats.dns1123_subdomain(subdomain)
        errors += _dns1035(subdomain, _SUBDOMAIN_TOO_LONG)
    seen: list[str] = []
    for rjob in rjobs:
        job_spec = (rjob.get("template") or {}).get("spec") or {}
        parallelism = int(job_spec.get("parallelism", 1))
        if parallelism * jobsetjobs.replicas(rjob) > _MAX_INT32:
            limit = f"must not exceed {_MAX_INT32} for replicatedJob '{rjob['name']}'"
            errors.append(f"the product of replicas and parallelism {limit}")
        errors += _dns1035(str(rjob.get("groupName", "default")), _GROUP_TOO_LONG)
        longest_job = jobsetjobs.job_name(js["metadata"]["name"], rjob["name"], jobsetjobs.replicas(rjob) - 1)
        errors += _dns1035(longest_job, _JOB_TOO_LONG)
        if job_spec.get("completionMode") == "Indexed" and job_spec.get("completions") is not None:
            longest_pod = f"{longest_job}-{int(job_spec['completions']) - 1}-abcde"
            errors += _dns1035(longest_pod, _POD_TOO_LONG)
        seen.append(rjob["name"])
        depends = rjob.get("dependsOn") or []
        if depends and depends[0].get("name") not in seen[:-1]:
            errors.append(f"replicatedJob: {rjob['name']} cannot depend on replicatedJob: {depends[0].get('name')}")
    for target in (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or []:
        if target not in names:
            errors.append(f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs")
    if spec.get("failurePolicy") is not None:
        errors += _rules(spec["failurePolicy"], names)
    return errors


def _munged(spec: dict[str, Any], old: dict[str, Any], *, suspended: bool) -> list[dict[str, Any]]:
    """The new replicatedJobs with what a suspended JobSet may change taken from the old ones."""
    new_rjobs = copy.deepcopy(spec.get("replicatedJobs") or [])
    old_rjobs = (old.get("spec") or {}).get("replicatedJobs") or []
    if not suspended:
        return new_rjobs
    for new, previous in zip(new_rjobs, old_rjobs, strict=False):
        pod = new.setdefault("template", {}).setdefault("spec", {}).setdefault("template", {})
        old_pod = ((previous.get("template") or {}).get("spec") or {}).get("template") or {}
        for key in ("labels", "annotations"):
            pod.setdefault("metadata", {})[key] = (old_pod.get("metadata") or {}).get(key)
        for key in _SUSPEND_MUTABLE:
            pod.setdefault("spec", {})[key] = (old_pod.get("spec") or {}).get(key)
    return new_rjobs


def _normal(value: Any) -> Any:
    """Drop empty values, so an absent field equals a null or empty one (Go's zero values)."""
    if isinstance(value, dict):
        kept = {k: _normal(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [], "")}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


class JobSetWebhook(webhooks.Webhook):
    group_resource = (jobsetcrd.GROUP, jobsetcrd.PLURAL)

    def default(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("successPolicy", {"operator": "All"})
        spec.setdefault("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
        for rjob in spec.get("replicatedJobs") or []:
            job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
            job_spec.setdefault("completionMode", "Indexed")
            pod = job_spec.setdefault("template", {}).setdefault("spec", {})
            if not pod.get("restartPolicy"):
                pod["restartPolicy"] = "OnFailure"
        network = spec.get("network")
        if not isinstance(network, dict):
            network = spec["network"] = {}
        network.setdefault("enableDNSHostnames", True)
        network.setdefault("publishNotReadyAddresses", True)
        for index, rule in enumerate((spec.get("failurePolicy") or {}).get("rules") or []):
            if not rule.get("name"):
                rule["name"] = f"failurePolicyRule{index}"

    def check(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if old is None:
            errors = create_errors(obj)
            if errors:
                raise webhooks.deny(VALIDATOR, "\n".join(errors))
            return
        spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
        suspended = bool(old_spec.get("suspend")) or bool(spec.get("suspend"))
        changed = []
        new_rjobs = _munged(spec, old, suspended=suspended)
        if _normal(new_rjobs) != _normal(old_spec.get("replicatedJobs") or []):
            changed.append(apierrors.invalid_value("spec.replicatedJobs", new_rjobs, "field is immutable"))
        if spec.get("managedBy") != old_spec.get("managedBy"):
            changed.append(apierrors.invalid_value("spec.managedBy", spec.get("managedBy"), "field is immutable"))
        if changed:
            raise webhooks.deny(VALIDATOR, webhooks.aggregate(changed))
