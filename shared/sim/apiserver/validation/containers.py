"""Containers of a pod spec, as ``pkg/apis/core/validation/validation.go`` judges them.

Covered: names, images, ports (names, numbers, protocols, host port conflicts), env names, volume
mounts against the pod's volumes, pull and termination message policies, resources (requests ≤
limits, the extended-resource and hugepages rules), probes and lifecycle handlers, and which of
these an init container may carry (``restartPolicy: Always`` makes it a sidecar). The pod-level
rules that call these are in :mod:`.pods`. Left out (accepted as sent): security contexts, env
``valueFrom``, resize policies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc", "sleep")


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


def _exec_action(action: Mapping[str, Any], path: str) -> list[FieldError]:
    return [] if action.get("command") else [apierrors.required(f"{path}.command", "")]


def _http_get_action(action: Mapping[str, Any], path: str) -> list[FieldError]:
    errors = [] if action.get("path") else [apierrors.required(f"{path}.path", "")]
    errors += _port_num_or_name(action.get("port", 0), f"{path}.port")
    if action.get("scheme") not in ("HTTP", "HTTPS"):
        errors.append(apierrors.not_supported(f"{path}.scheme", action.get("scheme", ""), ("HTTP", "HTTPS")))
    return errors


def _tcp_socket_action(action: Mapping[str, Any], path: str) -> list[FieldError]:
    return _port_num_or_name(action.get("port", 0), f"{path}.port")


def _grpc_action(action: Mapping[str, Any], path: str) -> list[FieldError]:
    return _port_num_or_name(int(action.get("port") or 0), f"{path}.port")


_ACTION_CHECKS: dict[str, Callable[[Mapping[str, Any], str], list[FieldError]]] = {
    "exec": _exec_action,
    "httpGet": _http_get_action,
    "tcpSocket": _tcp_socket_action,
    "grpc": _grpc_action,
}
"""The checks of each handler type's action (``sleep`` has none), keyed by its field."""


def _handler(handler: Any, path: str) -> list[FieldError]:
    """``validateHandler``: exactly one handler type, the first one set judged, any other refused."""
    handler = handler if isinstance(handler, Mapping) else {}
    errors: list[FieldError] = []
    chosen = ""
    for kind in _HANDLERS:
        action = handler.get(kind)
        if action is None:
            continue
        if chosen:
            errors.append(apierrors.forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        chosen = kind
        check = _ACTION_CHECKS.get(kind)
        if check is not None:
            errors += check(action if isinstance(action, Mapping) else {}, f"{path}.{kind}")
    if not chosen:
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
        errors += meta.required_choice(f"{at}.protocol", port.get("protocol"), _PROTOCOLS)
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
    errors += meta.required_choice(
        f"{path}.terminationMessagePolicy", c.get("terminationMessagePolicy"), _TERMINATION_MESSAGE_POLICIES
    )
    errors += _ports(c.get("ports"), f"{path}.ports")
    errors += _env(c.get("env"), f"{path}.env")
    errors += _mounts(c.get("volumeMounts"), volumes, f"{path}.volumeMounts")
    errors += meta.required_choice(f"{path}.imagePullPolicy", c.get("imagePullPolicy"), _PULL_POLICIES)
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


def _hooks_and_probes(c: Mapping[str, Any], at: str) -> list[FieldError]:
    """The lifecycle hooks and the liveness, readiness and startup probes of one container."""
    errors = _lifecycle(c["lifecycle"], f"{at}.lifecycle") if c.get("lifecycle") is not None else []
    errors += _probe(c.get("livenessProbe"), f"{at}.livenessProbe", single_success=True)
    errors += _probe(c.get("readinessProbe"), f"{at}.readinessProbe", single_success=False, readiness=True)
    errors += _probe(c.get("startupProbe"), f"{at}.startupProbe", single_success=True)
    return errors


def regular_containers(items: list[Mapping[str, Any]], volumes: set[str], path: str) -> list[FieldError]:
    """``validateContainers``: at least one, unique names, no ``restartPolicy``, no host port twice."""
    if not items:
        return [apierrors.required(path, "")]
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, c in enumerate(items):
        at = f"{path}[{i}]"
        errors += _container_common(c, volumes, at)
        name = str(c.get("name") or "")
        if name in names:
            errors.append(apierrors.duplicate(f"{at}.name", name))
        names.add(name)
        errors += _hooks_and_probes(c, at)
        if c.get("restartPolicy") is not None:
            errors.append(apierrors.forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    return errors + _host_port_conflicts(items, path)


def init_containers(
    inits: list[Mapping[str, Any]], regular: list[Mapping[str, Any]], volumes: set[str], path: str
) -> list[FieldError]:
    """``validateInitContainers``: names unique among all containers; hooks and probes only on a
    sidecar (``restartPolicy: Always``)."""
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
            errors += _hooks_and_probes(c, at)
            continue
        errors += [
            apierrors.forbidden(f"{at}.{part}", "may not be set for init containers without restartPolicy=Always")
            for part in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
            if c.get(part) is not None
        ]
    return errors
