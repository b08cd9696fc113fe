"""The scheme defaults of a pod spec, wherever it sits: in a Pod or in a workload's template.

``SetDefaults_PodSpec``, ``SetDefaults_Container`` and what they reach (ports, probes, handlers,
env field references, volumes) from ``k8s.io/kubernetes:pkg/apis/core/v1/defaults.go``, and
``SetDefaults_Pod`` for a Pod itself; container resource quantities are stored canonical
(``2000m`` → ``2``), and one upstream cannot parse is a 400. The other kinds' defaults, and what
happens only on create, are in :mod:`.defaulting`.
"""

from __future__ import annotations

from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.validation import quantity

_VOLUME_MODES = ("secret", "configMap", "downwardAPI", "projected")
_PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))


def default(obj: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` when absent; ``null``, ``""`` and ``[]`` count as absent, as they decode to Go's zero."""
    if obj.get(key) is None or obj[key] == "" or obj[key] == []:
        obj[key] = value


def child(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """The object under ``key``, created when absent or ``null``."""
    if not isinstance(obj.get(key), dict):
        obj[key] = {}
    found: dict[str, Any] = obj[key]
    return found


def _pull_policy(image: str) -> str:
    """Always for ``:latest`` or no tag and no digest, else IfNotPresent (``SetDefaults_Container``);
    a reference upstream cannot parse (empty, upper-case repository) has no tag."""
    name, at, _ = image.partition("@")
    last = name.rpartition("/")[2]
    tag = last.rpartition(":")[2] if ":" in last else ""
    repository = name[: len(name) - len(tag) - 1] if tag else name
    if not repository or repository != repository.lower():
        return "IfNotPresent"
    return "Always" if (tag or ("" if at else "latest")) == "latest" else "IfNotPresent"


def _handler(handler: Any) -> None:
    if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
        default(handler["httpGet"], "path", "/")
        default(handler["httpGet"], "scheme", "HTTP")


def _container(c: dict[str, Any], *, kind: str, version: str) -> None:
    default(c, "imagePullPolicy", _pull_policy(str(c.get("image") or "")))
    default(c, "terminationMessagePath", "/dev/termination-log")
    default(c, "terminationMessagePolicy", "File")
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            default(port, "protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        p = c.get(probe)
        if isinstance(p, dict):
            for key, value in _PROBE_DEFAULTS:
                default(p, key, value)
            _handler(p)
    for hook in ((c.get("lifecycle") or {}) if isinstance(c.get("lifecycle"), dict) else {}).values():
        _handler(hook)
    for var in c.get("env") or []:
        field_ref = ((var or {}).get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            default(field_ref, "apiVersion", "v1")
    _canonical_resources(c.get("resources"), kind=kind, version=version)


def _canonical_resources(res: Any, *, kind: str, version: str) -> None:
    if not isinstance(res, dict):
        return
    for part in ("limits", "requests"):
        values = res.get(part)
        if isinstance(values, dict):
            res[part] = {k: _canonical(v, kind=kind, version=version) for k, v in values.items()}


def _canonical(value: Any, *, kind: str, version: str) -> str:
    try:
        return quantity.normalize(value)
    except quantity.QuantityError as exc:
        raise apierrors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {exc}') from exc


def pod_spec(spec: dict[str, Any], *, kind: str, version: str) -> None:
    """``SetDefaults_PodSpec`` and what it reaches (containers, ports, probes, volumes)."""
    default(spec, "dnsPolicy", "ClusterFirst")
    default(spec, "restartPolicy", "Always")
    child(spec, "securityContext")
    default(spec, "terminationGracePeriodSeconds", 30)
    default(spec, "schedulerName", "default-scheduler")
    if spec.get("serviceAccount") and not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    for part in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(part) or []:
            if isinstance(c, dict):
                _container(c, kind=kind, version=version)
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            _volume(volume)


def _volume(volume: dict[str, Any]) -> None:
    """A volume with no source is an emptyDir; file modes and the hostPath type get their defaults."""
    if not any(k != "name" for k in volume):
        volume["emptyDir"] = {}
    for source in _VOLUME_MODES:
        if isinstance(volume.get(source), dict):
            default(volume[source], "defaultMode", 420)
    if isinstance(volume.get("hostPath"), dict):
        default(volume["hostPath"], "type", "")


def pod(obj: dict[str, Any], *, version: str) -> None:
    """``SetDefaults_Pod``: requests default to limits, service links on, host ports on hostNetwork."""
    spec = child(obj, "spec")
    pod_spec(spec, kind="Pod", version=version)
    for part in ("containers", "initContainers"):
        for c in spec.get(part) or []:
            res = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and res.get("limits"):
                requests = child(res, "requests")
                for name, value in res["limits"].items():
                    requests.setdefault(name, value)
            if spec.get("hostNetwork") and isinstance(c, dict):
                for port in c.get("ports") or []:
                    if isinstance(port, dict) and not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    default(spec, "enableServiceLinks", True)


def template(tpl: Any, *, kind: str, version: str) -> None:
    if isinstance(tpl, dict):
        pod_spec(child(tpl, "spec"), kind=kind, version=version)
