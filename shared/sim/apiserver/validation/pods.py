"""Pod specs, as ``pkg/apis/core/validation/validation.go`` judges them in Pods and in templates.

Covered: containers (names, images, ports, env names, volume mounts, pull policy, resources with
requests ≤ limits and the extended-resource rules, probes and lifecycle handlers, restartPolicy
on init and regular containers), volumes (names), restartPolicy, dnsPolicy, nodeSelector,
tolerations, service account, node and host names, activeDeadlineSeconds, image pull secrets,
scheduling gates; on create the Pod-only rules; on update the "pod updates may not change fields
other than" rule. Left out (accepted as sent): affinity and topology spread terms, security
contexts, volume sources beyond their names, env ``valueFrom``, DNS config, sysctls, overhead.
The spec diff that follows the update refusal is the emulator's own summary, not Go's ``cmp.Diff``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, meta, quantity

_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = _CONTAINER_RESOURCES | frozenset(
    {
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "requests.storage",
    }
)
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc", "sleep")
UPDATABLE_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
MAX_INT32 = 2**31 - 1


# ------------------------------------------------------------ resources
def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    return not is_native(name) and not name.startswith("requests.") and not formats.qualified_name(f"requests.{name}")


def overcommit_allowed(name: str) -> bool:
    return is_native(name) and not _is_hugepages(name)


def _resource_name(name: str, field: str) -> list[FieldError]:
    errors = [apierrors.invalid_value(field, name, m) for m in formats.qualified_name(name)]
    if errors:
        return errors
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not _is_hugepages(name):
            errors.append(apierrors.invalid_value(field, name, "must be a standard resource type or fully qualified"))
        if name not in _CONTAINER_RESOURCES and not _is_hugepages(name):
            errors.append(apierrors.invalid_value(field, name, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended(name):
        errors.append(apierrors.invalid_value(field, name, "doesn't follow extended resource name standard"))
    return errors


def _quantity_value(name: str, q: quantity.Quantity, field: str) -> list[FieldError]:
    errors = []
    if q.value < 0:
        errors.append(apierrors.invalid_value(field, str(q), "must be greater than or equal to 0"))
    if is_extended(name) and q.value.denominator != 1:
        errors.append(apierrors.invalid_value(field, str(q), "must be an integer"))
    return errors


def resources(reqs: Any, path: str) -> list[FieldError]:
    """``ValidateContainerResourceRequirements``; quantities were parsed (and canonicalized) already."""
    errors: list[FieldError] = []
    reqs = reqs if isinstance(reqs, Mapping) else {}
    limits = {str(k): quantity.parse(v) for k, v in (reqs.get("limits") or {}).items()}
    requests = {str(k): quantity.parse(v) for k, v in (reqs.get("requests") or {}).items()}
    huge = False
    cpu_or_memory = False
    for name, q in limits.items():
        field = f"{path}.limits[{name}]"
        errors += _resource_name(name, field) + _quantity_value(name, q, field)
        huge = huge or _is_hugepages(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    for name, q in requests.items():
        field = f"{path}.requests[{name}]"
        errors += _resource_name(name, field) + _quantity_value(name, q, field)
        limit = limits.get(name)
        if limit is not None:
            if q.value != limit.value and not overcommit_allowed(name):
                errors.append(
                    apierrors.invalid_value(f"{path}.requests", str(q), f"must be equal to {name} limit of {limit}")
                )
            elif q.value > limit.value:
                errors.append(
                    apierrors.invalid_value(
                        f"{path}.requests", str(q), f"must be less than or equal to {name} limit of {limit}"
                    )
                )
        elif not overcommit_allowed(name):
            errors.append(apierrors.required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
        huge = huge or _is_hugepages(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if huge and not cpu_or_memory:
        errors.append(apierrors.forbidden(path, "HugePages require cpu or memory"))
    return errors


# ------------------------------------------------------------ containers
def _port_num_or_name(value: Any, field: str) -> list[FieldError]:
    if isinstance(value, int) and not isinstance(value, bool):
        return [apierrors.invalid_value(field, value, m) for m in formats.port_number(value)]
    if isinstance(value, str):
        return [apierrors.invalid_value(field, value, m) for m in formats.port_name(value)]
    return []


def _handler(handler: Any, path: str) -> list[FieldError]:
    handler = handler if isinstance(handler, Mapping) else {}
    errors: list[FieldError] = []
    count = 0
    for kind in _HANDLERS:
        action = handler.get(kind)
        if action is None:
            continue
        if count:
            errors.append(apierrors.forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        action = action if isinstance(action, Mapping) else {}
        if kind == "exec" and not action.get("command"):
            errors.append(apierrors.required(f"{path}.exec.command", ""))
        elif kind == "httpGet":
            if not action.get("path"):
                errors.append(apierrors.required(f"{path}.httpGet.path", ""))
            errors += _port_num_or_name(action.get("port", 0), f"{path}.httpGet.port")
            if action.get("scheme") not in ("HTTP", "HTTPS"):
                errors.append(
                    apierrors.not_supported(f"{path}.httpGet.scheme", action.get("scheme", ""), ("HTTP", "HTTPS"))
                )
        elif kind == "tcpSocket":
            errors += _port_num_or_name(action.get("port", 0), f"{path}.tcpSocket.port")
        elif kind == "grpc":
            errors += _port_num_or_name(int(action.get("port") or 0), f"{path}.grpc.port")
    if not count:
        errors.append(apierrors.required(path, "must specify a handler type"))
    return errors


def _probe(probe: Any, path: str, *, single_success: bool, readiness: bool = False) -> list[FieldError]:
    if not isinstance(probe, Mapping):
        return []
    errors = _handler(probe, path)
    for part in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        errors += meta.nonnegative(f"{path}.{part}", probe.get(part, 0))
    grace = probe.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace <= 0:
        errors.append(apierrors.invalid_value(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than 0"))
    if single_success and probe.get("successThreshold", 1) != 1:
        errors.append(apierrors.invalid_value(f"{path}.successThreshold", probe.get("successThreshold"), "must be 1"))
    if readiness and grace is not None:
        errors.append(
            apierrors.invalid_value(
                f"{path}.terminationGracePeriodSeconds", grace, "must not be set for readinessProbes"
            )
        )
    return errors


def _lifecycle(lifecycle: Any, path: str) -> list[FieldError]:
    lifecycle = lifecycle if isinstance(lifecycle, Mapping) else {}
    errors: list[FieldError] = []
    for hook in ("postStart", "preStop"):
        if lifecycle.get(hook) is not None:
            errors += _handler(lifecycle[hook], f"{path}.{hook}")
    return errors


def _ports(ports: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        port = port if isinstance(port, Mapping) else {}
        at = f"{path}[{i}]"
        name = str(port.get("name") or "")
        if name:
            problems = formats.port_name(name)
            if problems:
                errors += [apierrors.invalid_value(f"{at}.name", name, m) for m in problems]
            elif name in names:
                errors.append(apierrors.duplicate(f"{at}.name", name))
            else:
                names.add(name)
        number = port.get("containerPort") or 0
        if not number:
            errors.append(apierrors.required(f"{at}.containerPort", ""))
        else:
            errors += [apierrors.invalid_value(f"{at}.containerPort", number, m) for m in formats.port_number(number)]
        if port.get("hostPort"):
            hp = port["hostPort"]
            errors += [apierrors.invalid_value(f"{at}.hostPort", hp, m) for m in formats.port_number(hp)]
        protocol = port.get("protocol") or ""
        if not protocol:
            errors.append(apierrors.required(f"{at}.protocol", ""))
        elif protocol not in _PROTOCOLS:
            errors.append(apierrors.not_supported(f"{at}.protocol", protocol, _PROTOCOLS))
    return errors


def _env(env: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, var in enumerate(env if isinstance(env, list) else []):
        name = str((var if isinstance(var, Mapping) else {}).get("name") or "")
        if not name:
            errors.append(apierrors.required(f"{path}[{i}].name", ""))
        elif "=" in name or any(not (32 <= ord(c) < 127) for c in name):
            errors.append(
                apierrors.invalid_value(
                    f"{path}[{i}].name",
                    name,
                    "a valid environment variable name must consist only of printable ASCII characters other than '='",
                )
            )
    return errors


def _mounts(mounts: Any, volumes: set[str], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, mount in enumerate(mounts if isinstance(mounts, list) else []):
        mount = mount if isinstance(mount, Mapping) else {}
        at = f"{path}[{i}]"
        name, mount_path = str(mount.get("name") or ""), str(mount.get("mountPath") or "")
        if not name:
            errors.append(apierrors.required(f"{at}.name", ""))
        if name not in volumes:
            errors.append(apierrors.field_not_found(f"{at}.name", name))
        if not mount_path:
            errors.append(apierrors.required(f"{at}.mountPath", ""))
        if mount_path in seen:
            errors.append(apierrors.invalid_value(f"{at}.mountPath", mount_path, "must be unique"))
        seen.add(mount_path)
    return errors


def _container_common(c: Mapping[str, Any], volumes: set[str], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    name = str(c.get("name") or "")
    if not name:
        errors.append(apierrors.required(f"{path}.name", ""))
    else:
        errors += [apierrors.invalid_value(f"{path}.name", name, m) for m in formats.dns1123_label(name)]
    if not c.get("image"):
        errors.append(apierrors.required(f"{path}.image", ""))
    policy = c.get("terminationMessagePolicy") or ""
    if not policy:
        errors.append(apierrors.required(f"{path}.terminationMessagePolicy", ""))
    elif policy not in _TERMINATION_MESSAGE_POLICIES:
        errors.append(
            apierrors.not_supported(f"{path}.terminationMessagePolicy", policy, _TERMINATION_MESSAGE_POLICIES)
        )
    errors += _ports(c.get("ports"), f"{path}.ports")
    errors += _env(c.get("env"), f"{path}.env")
    errors += _mounts(c.get("volumeMounts"), volumes, f"{path}.volumeMounts")
    pull = c.get("imagePullPolicy") or ""
    if not pull:
        errors.append(apierrors.required(f"{path}.imagePullPolicy", ""))
    elif pull not in _PULL_POLICIES:
        errors.append(apierrors.not_supported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES))
    errors += resources(c.get("resources"), f"{path}.resources")
    return errors


def _host_port_conflicts(containers: list[Mapping[str, Any]], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        for pi, port in enumerate(c.get("ports") or []):
            host = (port or {}).get("hostPort") or 0
            if not host:
                continue
            key = f"{port.get('protocol', '')}/{port.get('hostIP', '')}/{host}"
            if key in seen:
                errors.append(apierrors.duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return errors


def _containers(containers: list[Mapping[str, Any]], volumes: set[str], path: str) -> list[FieldError]:
    if not containers:
        return [apierrors.required(path, "")]
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, c in enumerate(containers):
        at = f"{path}[{i}]"
        errors += _container_common(c, volumes, at)
        name = str(c.get("name") or "")
        if name in names:
            errors.append(apierrors.duplicate(f"{at}.name", name))
        names.add(name)
        if c.get("lifecycle") is not None:
            errors += _lifecycle(c["lifecycle"], f"{at}.lifecycle")
        errors += _probe(c.get("livenessProbe"), f"{at}.livenessProbe", single_success=True)
        errors += _probe(c.get("readinessProbe"), f"{at}.readinessProbe", single_success=False, readiness=True)
        errors += _probe(c.get("startupProbe"), f"{at}.startupProbe", single_success=True)
        if c.get("restartPolicy") is not None:
            errors.append(apierrors.forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    return errors + _host_port_conflicts(containers, path)


def _init_containers(
    inits: list[Mapping[str, Any]], regular: list[Mapping[str, Any]], volumes: set[str], path: str
) -> list[FieldError]:
    errors: list[FieldError] = []
    names = {str(c.get("name") or "") for c in regular}
    for i, c in enumerate(inits):
        at = f"{path}[{i}]"
        errors += _container_common(c, volumes, at)
        restart = c.get("restartPolicy")
        if restart is not None and restart != "Always":
            errors.append(apierrors.not_supported(f"{at}.restartPolicy", restart, ("Always",)))
        name = str(c.get("name") or "")
        if name in names:
            errors.append(apierrors.duplicate(f"{at}.name", name))
        elif name:
            names.add(name)
        errors += _host_port_conflicts([c], path)
        if restart == "Always":
            if c.get("lifecycle") is not None:
                errors += _lifecycle(c["lifecycle"], f"{at}.lifecycle")
            errors += _probe(c.get("livenessProbe"), f"{at}.livenessProbe", single_success=True)
            errors += _probe(c.get("readinessProbe"), f"{at}.readinessProbe", single_success=False, readiness=True)
            errors += _probe(c.get("startupProbe"), f"{at}.startupProbe", single_success=True)
        else:
            for part in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if c.get(part) is not None:
                    errors.append(
                        apierrors.forbidden(
                            f"{at}.{part}", "may not be set for init containers without restartPolicy=Always"
                        )
                    )
    return errors


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
    containers = [c if isinstance(c, Mapping) else {} for c in s.get("containers") or []]
    inits = [c if isinstance(c, Mapping) else {} for c in s.get("initContainers") or []]
    errors += _containers(containers, volumes, f"{path}.containers")
    errors += _init_containers(inits, containers, volumes, f"{path}.initContainers")
    restart = s.get("restartPolicy") or ""
    if not restart:
        errors.append(apierrors.required(f"{path}.restartPolicy", ""))
    elif restart not in _RESTART_POLICIES:
        errors.append(apierrors.not_supported(f"{path}.restartPolicy", restart, _RESTART_POLICIES))
    dns = s.get("dnsPolicy") or ""
    if not dns:
        errors.append(apierrors.required(f"{path}.dnsPolicy", ""))
    elif dns not in _DNS_POLICIES:
        errors.append(apierrors.not_supported(f"{path}.dnsPolicy", dns, _DNS_POLICIES))
    errors += meta.labels(s.get("nodeSelector"), f"{path}.nodeSelector")
    if dns == "None" and not (s.get("dnsConfig") or {}).get("nameservers"):
        if s.get("dnsConfig") is None:
            errors.append(apierrors.required(f"{path}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None"))
        else:
            errors.append(
                apierrors.required(
                    f"{path}.dnsConfig.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is None"
                )
            )
    for i, gate in enumerate(s.get("readinessGates") or []):
        kind = str((gate or {}).get("conditionType") or "")
        at = f"{path}.readinessGates[{i}].conditionType"
        errors += [apierrors.invalid_value(at, kind, m) for m in formats.qualified_name(kind)]
    seen_gates: set[str] = set()
    for i, gate in enumerate(s.get("schedulingGates") or []):
        name = str((gate or {}).get("name") or "")
        errors += [
            apierrors.invalid_value(f"{path}.schedulingGates[{i}]", name, m) for m in formats.qualified_name(name)
        ]
        if name in seen_gates:
            errors.append(apierrors.duplicate(f"{path}.schedulingGates[{i}]", name))
        seen_gates.add(name)
    for part, rule in (
        ("serviceAccountName", formats.name_is_dns_subdomain),
        ("nodeName", formats.name_is_dns_subdomain),
    ):
        if s.get(part):
            errors += [apierrors.invalid_value(f"{path}.{part}", s[part], m) for m in rule(str(s[part]), False)]
    deadline = s.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= MAX_INT32:
        errors.append(
            apierrors.invalid_value(
                f"{path}.activeDeadlineSeconds", deadline, formats.inclusive_range_error(1, MAX_INT32)
            )
        )
    for part in ("hostname", "subdomain"):
        if s.get(part):
            errors += [
                apierrors.invalid_value(f"{path}.{part}", s[part], m) for m in formats.dns1123_label(str(s[part]))
            ]
    errors += tolerations(s.get("tolerations"), f"{path}.tolerations")
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
    for part in ("containers", "initContainers"):
        new_list, old_list = new_spec.get(part) or [], old_spec.get(part) or []
        if len(new_list) != len(old_list):
            errors.append(apierrors.forbidden(f"spec.{part}", "pod updates may not add or remove containers"))
            return errors
        for i, c in enumerate(new_list):
            if not c.get("image"):
                errors.append(apierrors.required(f"spec.{part}[{i}].image", ""))
            c["image"] = old_list[i].get("image")
    deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        if not 0 <= deadline <= MAX_INT32:
            errors.append(
                apierrors.invalid_value(
                    "spec.activeDeadlineSeconds", deadline, formats.inclusive_range_error(0, MAX_INT32)
                )
            )
            return errors
        if old_deadline is not None and old_deadline < deadline:
            errors.append(
                apierrors.invalid_value(
                    "spec.activeDeadlineSeconds", deadline, "must be less than or equal to previous value"
                )
            )
            return errors
    elif old_deadline is not None:
        errors.append(
            apierrors.invalid_value(
                "spec.activeDeadlineSeconds", "null", "must not update from a positive integer to nil value"
            )
        )
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
