"""The core/v1 kinds other than Pod: Namespace, ConfigMap, Secret, Node, Service, ServiceAccount.

Texts and order from ``pkg/apis/core/validation/validation.go`` (1.34). Node taint errors sit under
``metadata.taints[i]``: upstream validates ``node.Spec.Taints`` with the metadata path, and clients
see that path. Left out (accepted as sent): Node status, Service IP formats, external traffic and
load-balancer fields beyond the defaults, Event bodies, ``data`` of dockercfg Secrets beyond "is it
a JSON object".
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.validation import formats, gojson, meta

MAX_DATA_BYTES = 1024 * 1024
TAINT_FIELDS: tuple[meta.GoField, ...] = (
    ("key", "Key", ""),
    ("value", "Value", ""),
    ("effect", "Effect", ""),
    ("timeAdded", "TimeAdded", None),
)
_SERVICE_PORT_FIELDS: tuple[meta.GoField, ...] = (
    ("name", "Name", ""),
    ("protocol", "Protocol", ""),
    ("appProtocol", "AppProtocol", None),
    ("port", "Port", 0),
    ("targetPort", "TargetPort", 0),
    ("nodePort", "NodePort", 0),
)
_SESSION_AFFINITIES = ("ClientIP", "None")
_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")


# ------------------------------------------------------------ Namespace
def namespace(obj: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_label)
    for name in (obj.get("spec") or {}).get("finalizers") or []:
        errors += [apierrors.invalid_value("spec.finalizers", name, m) for m in formats.qualified_name(str(name))]
        errors += meta.kube_finalizer(str(name), "spec.finalizers")
    return errors


def namespace_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta_update(obj.get("metadata") or {})


# ------------------------------------------------------------ ConfigMap and Secret
def _decoded(value: Any) -> bytes:
    """A Secret or binaryData value as the bytes the server holds (the decoder checked the base64)."""
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return str(value).encode()


def _decoded_size(value: Any) -> int:
    return len(_decoded(value))


def config_map(obj: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain)
    data = obj.get("data") or {}
    binary = obj.get("binaryData") or {}
    total = 0
    for key, value in data.items():
        errors += [apierrors.invalid_value(f"data[{key}]", key, m) for m in formats.config_map_key(str(key))]
        if key in binary:
            errors.append(apierrors.invalid_value(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(value).encode())
    for key, value in binary.items():
        errors += [apierrors.invalid_value(f"binaryData[{key}]", key, m) for m in formats.config_map_key(str(key))]
        total += _decoded_size(value)
    if total > MAX_DATA_BYTES:
        errors.append(apierrors.too_long("[]", MAX_DATA_BYTES))
    return errors


def _immutable_data(obj: Mapping[str, Any], old: Mapping[str, Any], parts: tuple[str, ...]) -> list[FieldError]:
    if old.get("immutable") is not True:
        return []
    detail = "field is immutable when `immutable` is set"
    errors = []
    if obj.get("immutable") is not True:
        errors.append(apierrors.forbidden("immutable", detail))
    for part in parts:
        if (obj.get(part) or {}) != (old.get(part) or {}):
            errors.append(apierrors.forbidden(part, detail))
    return errors


def config_map_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {})
    errors += _immutable_data(obj, old, ("data", "binaryData"))
    return errors + config_map(obj)


def secret(obj: Mapping[str, Any]) -> list[FieldError]:
    md = obj.get("metadata") or {}
    errors = meta.object_meta(md, formats.name_is_dns_subdomain)
    data: Mapping[str, Any] = obj.get("data") or {}
    total = 0
    for key, value in data.items():
        errors += [apierrors.invalid_value(f"data[{key}]", key, m) for m in formats.config_map_key(str(key))]
        total += _decoded_size(value)
    if total > MAX_DATA_BYTES:
        errors.append(apierrors.too_long("data", MAX_DATA_BYTES))
    check = _SECRET_TYPES.get(obj.get("type") or "")
    return errors + (check(md, data) if check is not None else [])


def _service_account_token(md: Mapping[str, Any], data: Mapping[str, Any]) -> list[FieldError]:
    if (md.get("annotations") or {}).get("kubernetes.io/service-account.name"):
        return []
    return [apierrors.required("metadata.annotations[kubernetes.io/service-account.name]", "")]


def _docker_config(key: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], list[FieldError]]:
    """The check of a dockercfg Secret: ``key`` present and a JSON object."""

    def check(md: Mapping[str, Any], data: Mapping[str, Any]) -> list[FieldError]:
        if key not in data:
            return [apierrors.required(f"data[{key}]", "")]
        problem = gojson.unmarshal_map_error(_decoded(data[key]))
        return [apierrors.invalid_value(f"data[{key}]", "<secret contents redacted>", problem)] if problem else []

    return check


def _basic_auth(md: Mapping[str, Any], data: Mapping[str, Any]) -> list[FieldError]:
    if "username" not in data and "password" not in data:
        return [apierrors.required("data[username]", ""), apierrors.required("data[password]", "")]
    return []


def _ssh_auth(md: Mapping[str, Any], data: Mapping[str, Any]) -> list[FieldError]:
    return [] if data.get("ssh-privatekey") else [apierrors.required("data[ssh-privatekey]", "")]


def _tls(md: Mapping[str, Any], data: Mapping[str, Any]) -> list[FieldError]:
    return [apierrors.required(f"data[{k}]", "") for k in ("tls.crt", "tls.key") if k not in data]


_SECRET_TYPES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], list[FieldError]]] = {
    "kubernetes.io/service-account-token": _service_account_token,
    "kubernetes.io/dockercfg": _docker_config(".dockercfg"),
    "kubernetes.io/dockerconfigjson": _docker_config(".dockerconfigjson"),
    "kubernetes.io/basic-auth": _basic_auth,
    "kubernetes.io/ssh-auth": _ssh_auth,
    "kubernetes.io/tls": _tls,
}
"""What each well-known Secret type requires of its metadata and data (``ValidateSecret``)."""


def secret_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {})
    errors += meta.immutable("type", obj.get("type"), old.get("type"))
    errors += _immutable_data(obj, old, ("data",))
    return errors + secret(obj)


# ------------------------------------------------------------ Node
def taints(values: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(values if isinstance(values, list) else []):
        taint = taint if isinstance(taint, Mapping) else {}
        at = f"{path}[{i}]"
        key, value, effect = str(taint.get("key") or ""), str(taint.get("value") or ""), taint.get("effect") or ""
        errors += meta.label_key(key, f"{at}.key")
        problems = formats.label_value(value)
        if problems:
            errors.append(apierrors.invalid_value(f"{at}.value", value, ";".join(problems)))
        if not effect:
            errors.append(apierrors.required(f"{at}.effect", ""))
        elif effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            errors.append(
                apierrors.not_supported(f"{at}.effect", effect, ("NoSchedule", "PreferNoSchedule", "NoExecute"))
            )
        if (effect, key) in seen:
            shown = meta.internal_json(taint, TAINT_FIELDS)
            errors.append(
                FieldError(
                    at, "FieldValueDuplicate", f"Duplicate value: {shown}: taints must be unique by key and effect pair"
                )
            )
            continue
        seen.add((effect, key))
    return errors


def node(obj: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain)
    return errors + taints((obj.get("spec") or {}).get("taints"), "metadata.taints")


def node_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {})
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if old_spec.get("podCIDRs") and spec.get("podCIDRs") != old_spec.get("podCIDRs"):
        errors.append(
            apierrors.forbidden("spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid')
        )
    if old_spec.get("providerID") and spec.get("providerID") != old_spec.get("providerID"):
        errors.append(
            apierrors.forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid')
        )
    return errors + taints(spec.get("taints"), "metadata.taints")


# ------------------------------------------------------------ Service
def _headless(spec: Mapping[str, Any]) -> bool:
    return spec.get("clusterIP") == "None"


def service(obj: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns1035_label)
    spec = obj.get("spec") or {}
    kind = spec.get("type") or ""
    ports = [p if isinstance(p, Mapping) else {} for p in spec.get("ports") or []]
    if not ports and not _headless(spec) and kind != "ExternalName":
        errors.append(apierrors.required("spec.ports", ""))
    if kind in ("LoadBalancer", "NodePort") and _headless(spec):
        errors.append(
            apierrors.invalid_value("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services")
        )
    if kind == "ExternalName":
        errors += _external_name(spec)
    errors += _service_ports(ports)
    if spec.get("selector") is not None:
        errors += meta.labels(spec.get("selector"), "spec.selector")
    errors += meta.required_choice("spec.sessionAffinity", spec.get("sessionAffinity"), _SESSION_AFFINITIES)
    errors += meta.required_choice("spec.type", spec.get("type"), _SERVICE_TYPES)
    if kind == "ClusterIP":
        errors += [
            apierrors.forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
            for i, port in enumerate(ports)
            if port.get("nodePort")
        ]
    return errors + _duplicate_ports(ports)


def _external_name(spec: Mapping[str, Any]) -> list[FieldError]:
    name = str(spec.get("externalName") or "").removesuffix(".")
    if not name:
        return [apierrors.required("spec.externalName", "")]
    return [apierrors.invalid_value("spec.externalName", name, m) for m in formats.dns1123_subdomain(name)]


def _service_ports(ports: list[Mapping[str, Any]]) -> list[FieldError]:
    """Each port: a name (required when there are several, unique), number, protocol, target port."""
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"spec.ports[{i}]"
        name = str(port.get("name") or "")
        if len(ports) > 1 and not name:
            errors.append(apierrors.required(f"{at}.name", ""))
        elif name:
            errors += [apierrors.invalid_value(f"{at}.name", name, m) for m in formats.dns1123_label(name)]
            if name in names:
                errors.append(apierrors.duplicate(f"{at}.name", name))
            names.add(name)
        number = port.get("port") or 0
        errors += [apierrors.invalid_value(f"{at}.port", number, m) for m in formats.port_number(int(number))]
        errors += meta.required_choice(f"{at}.protocol", port.get("protocol"), ("SCTP", "TCP", "UDP"))
        errors += _port_num_or_name(port.get("targetPort"), f"{at}.targetPort")
    return errors


def _duplicate_ports(ports: list[Mapping[str, Any]]) -> list[FieldError]:
    """No two ports with the same protocol and number, shown as the internal ServicePort type."""
    errors: list[FieldError] = []
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol"), port.get("port"))
        if key in seen:
            shown = meta.internal_json({"protocol": key[0], "port": key[1]}, _SERVICE_PORT_FIELDS)
            errors.append(FieldError(f"spec.ports[{i}]", "FieldValueDuplicate", f"Duplicate value: {shown}"))
        seen.add(key)
    return errors


def _port_num_or_name(value: Any, field: str) -> list[FieldError]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        return [apierrors.invalid_value(field, value, m) for m in formats.port_number(value)]
    return [apierrors.invalid_value(field, value, m) for m in formats.port_name(str(value))]


def service_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors = meta.object_meta_update(obj.get("metadata") or {})
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if "ExternalName" not in (spec.get("type"), old_spec.get("type")) and not (_headless(spec) and _headless(old_spec)):
        new_ips, old_ips = list(spec.get("clusterIPs") or []), list(old_spec.get("clusterIPs") or [])
        if len(new_ips) == len(old_ips):
            for i, ip in enumerate(old_ips):
                if ip != new_ips[i]:
                    errors.append(apierrors.invalid_value(f"spec.clusterIPs[{i}]", new_ips, "may not change once set"))
        elif len(old_ips) > len(new_ips):
            if not new_ips:
                errors.append(
                    apierrors.invalid_value("spec.clusterIPs[0]", new_ips, "primary clusterIP can not be unset")
                )
            elif new_ips[0] != old_ips[0]:
                errors.append(apierrors.invalid_value("spec.clusterIPs[0]", new_ips, "may not change once set"))
    return errors + service(obj)


# ------------------------------------------------------------ ServiceAccount and the rest
def service_account(obj: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta(obj.get("metadata") or {}, formats.name_is_dns_subdomain)


def service_account_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    return meta.object_meta_update(obj.get("metadata") or {}) + service_account(obj)
