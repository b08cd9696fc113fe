"""The defaults a real 1.34 server writes into built-in objects, which clients read back.

Two kinds, applied at different moments as upstream does:

- scheme defaults (``k8s.io/kubernetes:pkg/apis/*/v1/defaults.go``), applied whenever a body is
  decoded — on create and on every update or patch — so a PUT that omits a defaulted field
  compares equal to the stored object: :func:`scheme`;
- what happens only on create: admission plugins (ServiceAccount, Priority,
  DefaultTolerationSeconds), the Job's generated selector, a Service's cluster IP and node ports,
  a Pod's initial status: :func:`on_create`.

Quantities in container resources are stored canonical (``2000m`` → ``2``). Left out: the
ServiceAccount token volume (``kube-api-access-*``) the admission plugin mounts, PVC template
defaults, and PriorityClass objects (only the two built-in classes are known).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Callable, Mapping
from typing import Any

from shared.sim.apiserver import apierrors
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.validation import pods, quantity

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORTS = (30000, 32767)
DEFAULT_TOLERATION_SECONDS = 300
SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_VOLUME_MODES = ("secret", "configMap", "downwardAPI", "projected")


def _default(obj: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` when absent; ``null``, ``""`` and ``[]`` count as absent, as they decode to Go's zero."""
    if obj.get(key) is None or obj[key] == "" or obj[key] == []:
        obj[key] = value


def _child(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """The object under ``key``, created when absent or ``null``."""
    if not isinstance(obj.get(key), dict):
        obj[key] = {}
    child: dict[str, Any] = obj[key]
    return child


# ------------------------------------------------------------ pod specs
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
        _default(handler["httpGet"], "path", "/")
        _default(handler["httpGet"], "scheme", "HTTP")


def _container(c: dict[str, Any], *, kind: str, version: str) -> None:
    _default(c, "imagePullPolicy", _pull_policy(str(c.get("image") or "")))
    _default(c, "terminationMessagePath", "/dev/termination-log")
    _default(c, "terminationMessagePolicy", "File")
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            _default(port, "protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        p = c.get(probe)
        if isinstance(p, dict):
            for key, value in (
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ):
                _default(p, key, value)
            _handler(p)
    for hook in ((c.get("lifecycle") or {}) if isinstance(c.get("lifecycle"), dict) else {}).values():
        _handler(hook)
    for var in c.get("env") or []:
        field_ref = ((var or {}).get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            _default(field_ref, "apiVersion", "v1")
    res = c.get("resources")
    if isinstance(res, dict):
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
    _default(spec, "dnsPolicy", "ClusterFirst")
    _default(spec, "restartPolicy", "Always")
    _child(spec, "securityContext")
    _default(spec, "terminationGracePeriodSeconds", 30)
    _default(spec, "schedulerName", "default-scheduler")
    if spec.get("serviceAccount") and not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    for part in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(part) or []:
            if isinstance(c, dict):
                _container(c, kind=kind, version=version)
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if not any(k != "name" for k in volume):
            volume["emptyDir"] = {}
        for source in _VOLUME_MODES:
            if isinstance(volume.get(source), dict):
                _default(volume[source], "defaultMode", 420)
        if isinstance(volume.get("hostPath"), dict):
            _default(volume["hostPath"], "type", "")


def pod(obj: dict[str, Any], *, version: str) -> None:
    """``SetDefaults_Pod``: requests default to limits, service links on, host ports on hostNetwork."""
    spec = _child(obj, "spec")
    pod_spec(spec, kind="Pod", version=version)
    for part in ("containers", "initContainers"):
        for c in spec.get(part) or []:
            res = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and res.get("limits"):
                requests = _child(res, "requests")
                for name, value in res["limits"].items():
                    requests.setdefault(name, value)
            if spec.get("hostNetwork") and isinstance(c, dict):
                for port in c.get("ports") or []:
                    if isinstance(port, dict) and not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    _default(spec, "enableServiceLinks", True)


def template(tpl: Any, *, kind: str, version: str) -> None:
    if isinstance(tpl, dict):
        pod_spec(_child(tpl, "spec"), kind=kind, version=version)


# ------------------------------------------------------------ workloads
def _deployment(obj: dict[str, Any], version: str) -> None:
    spec = _child(obj, "spec")
    _default(spec, "replicas", 1)
    strategy = _child(spec, "strategy")
    _default(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _child(strategy, "rollingUpdate")
        _default(rolling, "maxUnavailable", "25%")
        _default(rolling, "maxSurge", "25%")
    _default(spec, "revisionHistoryLimit", 10)
    _default(spec, "progressDeadlineSeconds", 600)
    template(spec.get("template"), kind="Deployment", version=version)


def _daemonset(obj: dict[str, Any], version: str) -> None:
    spec = _child(obj, "spec")
    strategy = _child(spec, "updateStrategy")
    _default(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _child(strategy, "rollingUpdate")
        _default(rolling, "maxUnavailable", 1)
        _default(rolling, "maxSurge", 0)
    _default(spec, "revisionHistoryLimit", 10)
    template(spec.get("template"), kind="DaemonSet", version=version)


def _statefulset(obj: dict[str, Any], version: str) -> None:
    spec = _child(obj, "spec")
    _default(spec, "podManagementPolicy", "OrderedReady")
    strategy = _child(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        _child(strategy, "rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        _default(strategy["rollingUpdate"], "partition", 0)
    retention = _child(spec, "persistentVolumeClaimRetentionPolicy")
    _default(retention, "whenDeleted", "Retain")
    _default(retention, "whenScaled", "Retain")
    _default(spec, "replicas", 1)
    _default(spec, "revisionHistoryLimit", 10)
    template(spec.get("template"), kind="StatefulSet", version=version)


def _replicaset(obj: dict[str, Any], version: str) -> None:
    spec = _child(obj, "spec")
    _default(spec, "replicas", 1)
    template(spec.get("template"), kind="ReplicaSet", version=version)


def _job(obj: dict[str, Any], version: str) -> None:
    spec = _child(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _default(spec, "parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = pods.MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    md = _child(obj, "metadata")
    if tpl_labels and not md.get("labels"):
        md["labels"] = dict(tpl_labels)
    _default(spec, "completionMode", "NonIndexed")
    _default(spec, "suspend", False)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
    template(spec.get("template"), kind="Job", version=version)


def _service(obj: dict[str, Any], version: str) -> None:
    spec = _child(obj, "spec")
    _default(spec, "sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client = (spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}
        if client.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    _default(spec, "type", "ClusterIP")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            _default(port, "protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
    kind = spec["type"]
    if (kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and spec.get("externalIPs"))) and not spec.get(
        "externalTrafficPolicy"
    ):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and kind in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def _binding(obj: dict[str, Any], version: str) -> None:
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = "rbac.authorization.k8s.io"
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = "rbac.authorization.k8s.io"


def _secret(obj: dict[str, Any], version: str) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


_SCHEME: dict[str, Callable[[dict[str, Any], str], None]] = {
    "Pod": lambda obj, version: pod(obj, version=version),
    "Deployment": _deployment,
    "DaemonSet": _daemonset,
    "StatefulSet": _statefulset,
    "ReplicaSet": _replicaset,
    "Job": _job,
    "Service": _service,
    "RoleBinding": _binding,
    "ClusterRoleBinding": _binding,
    "Secret": _secret,
}


def scheme(kind: str, obj: dict[str, Any], *, version: str) -> None:
    """The scheme defaults of ``kind``, in place (idempotent)."""
    apply = _SCHEME.get(kind)
    if apply is not None:
        apply(obj, version)


# ------------------------------------------------------------ create only
def _hash(uid: str, salt: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{uid}/{salt}".encode()).digest()[:8], "big")


def cluster_ip(uid: str) -> str:
    """An address of the service range for a new Service (not .0 or .1, which ``kubernetes`` holds)."""
    size = SERVICE_CIDR.num_addresses - 3
    return str(SERVICE_CIDR.network_address + 2 + _hash(uid, "ip") % size)


def node_port(uid: str, index: int) -> int:
    low, high = NODE_PORTS
    return low + _hash(uid, f"port{index}") % (high - low + 1)


def _allocate_service(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec")
    uid = obj["metadata"]["uid"]
    kind = spec.get("type")
    if kind == "ExternalName":
        return
    if not spec.get("clusterIP"):
        spec["clusterIP"] = spec["clusterIPs"][0] if spec.get("clusterIPs") else cluster_ip(uid)
    _default(spec, "clusterIPs", [spec["clusterIP"]])
    _default(spec, "ipFamilies", ["IPv4"])
    headless_without_selector = spec["clusterIP"] == "None" and not spec.get("selector")
    _default(spec, "ipFamilyPolicy", "RequireDualStack" if headless_without_selector else "SingleStack")
    if kind in ("NodePort", "LoadBalancer"):
        for i, port in enumerate(spec.get("ports") or []):
            if isinstance(port, dict) and not port.get("nodePort"):
                port["nodePort"] = node_port(uid, i)


def _qos(spec: dict[str, Any]) -> str:
    requests: dict[str, quantity.Quantity] = {}
    limits: dict[str, quantity.Quantity] = {}
    guaranteed = True
    for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        res = (c or {}).get("resources") or {}
        found = set()
        for part, into in (("requests", requests), ("limits", limits)):
            for name, value in (res.get(part) or {}).items():
                if name not in ("cpu", "memory"):
                    continue
                q = quantity.parse(value)
                if q.value == 0:
                    continue
                base = into.get(name)
                into[name] = q if base is None else quantity.Quantity(base.value + q.value, q.format)
                if part == "limits":
                    found.add(name)
        if found != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    equal = all(name in limits and limits[name].value == q.value for name, q in requests.items())
    if guaranteed and len(requests) == len(limits) and equal:
        return "Guaranteed"
    return "Burstable"


def _default_tolerations(spec: dict[str, Any]) -> None:
    """DefaultTolerationSeconds: tolerate not-ready and unreachable nodes for 300 s (create and update)."""
    tolerations = spec.get("tolerations") or []
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not _tolerates(tolerations, key):
            tolerations.append(
                {
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                }
            )
    spec["tolerations"] = tolerations


def _tolerates(tolerations: list[Any], key: str) -> bool:
    return any(
        (t.get("key") == key or not t.get("key")) and t.get("effect") in ("NoExecute", None, "")
        for t in tolerations
        if isinstance(t, dict)
    )


def _admit_pod(obj: dict[str, Any], priorities: Mapping[str, tuple[int, str]]) -> None:
    """ServiceAccount and Priority admission: a named PriorityClass must exist (403 otherwise) and
    gives the pod its value and preemption policy (plugin/pkg/admission/priority/admission.go)."""
    spec = obj["spec"]
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"] = "default"
    name = spec.get("priorityClassName")
    if name:
        known = priorities.get(name) or (
            (SYSTEM_PRIORITIES[name], "PreemptLowerPriority") if name in SYSTEM_PRIORITIES else None
        )
        if known is None:
            raise ApiError(
                403,
                "Forbidden",
                f'pods "{obj["metadata"]["name"]}" is forbidden: no PriorityClass with name {name} was found',
                details={"name": obj["metadata"]["name"], "group": "", "kind": "pods"},
            )
        spec["priority"], policy = known
        _default(spec, "preemptionPolicy", policy)
    else:
        _default(spec, "priority", 0)
    _default(spec, "preemptionPolicy", "PreemptLowerPriority")
    _default_tolerations(spec)
    obj["status"] = {"phase": "Pending", "qosClass": _qos(spec)}


def _generate_job_selector(obj: dict[str, Any]) -> None:
    """The Job strategy's generated selector and template labels (unless ``manualSelector``)."""
    spec = obj["spec"]
    if spec.get("manualSelector"):
        return
    md = obj["metadata"]
    tpl = _child(spec, "template")
    tpl_labels = _child(_child(tpl, "metadata"), "labels")
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        tpl_labels.setdefault(key, md["name"])
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        tpl_labels.setdefault(key, md["uid"])
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    spec["selector"] = selector
    _child(selector, "matchLabels").setdefault("batch.kubernetes.io/controller-uid", md["uid"])


def on_create(
    kind: str, obj: dict[str, Any], *, version: str, priorities: Mapping[str, tuple[int, str]] | None = None
) -> None:
    """Scheme defaults, then what admission and the create strategy add for ``kind``."""
    scheme(kind, obj, version=version)
    if kind == "Pod":
        _admit_pod(obj, priorities or {})
    elif kind == "Service":
        _allocate_service(obj)
    elif kind == "Job":
        _generate_job_selector(obj)
    elif kind == "DaemonSet":
        _child(obj["metadata"], "annotations")["deprecated.daemonset.template.generation"] = "1"


def on_update(kind: str, obj: dict[str, Any], old: dict[str, Any]) -> None:
    """What the update strategies carry over from the stored object before validating."""
    spec, old_spec = obj.get("spec"), old.get("spec") or {}
    if kind == "Pod" and isinstance(spec, dict):
        # Priority keeps what it set on create; DefaultTolerationSeconds admits updates too.
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                spec[key] = old_spec[key]
        _default_tolerations(spec)
    elif kind == "Service" and isinstance(spec, dict) and spec.get("type") != "ExternalName":
        _keep_service_allocations(spec, old_spec)
    elif kind == "DaemonSet" and isinstance(spec, dict):
        generation = ((old.get("metadata") or {}).get("annotations") or {}).get(
            "deprecated.daemonset.template.generation"
        )
        if generation is not None:
            if json.dumps(spec.get("template"), sort_keys=True) != json.dumps(old_spec.get("template"), sort_keys=True):
                generation = str(int(generation) + 1)
            _child(_child(obj, "metadata"), "annotations")["deprecated.daemonset.template.generation"] = generation


def _keep_service_allocations(spec: dict[str, Any], old: dict[str, Any]) -> None:
    """``patchAllocatedValues`` and ``normalizeClusterIPs`` of the Service REST update."""
    if old.get("type") == "ExternalName":
        return
    same_ips = spec.get("clusterIPs") == old.get("clusterIPs")
    if not spec.get("clusterIP"):
        spec["clusterIP"] = old.get("clusterIP")
    if not spec.get("clusterIPs") and old.get("clusterIPs"):
        spec["clusterIPs"] = old["clusterIPs"]
    elif spec.get("clusterIP") != old.get("clusterIP") and same_ips:
        spec["clusterIPs"] = [spec["clusterIP"]]
    for key in ("ipFamilies", "ipFamilyPolicy"):
        if spec.get(key) is None and old.get(key) is not None:
            spec[key] = old[key]
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        previous = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old.get("ports") or []}
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                kept = previous.get((port.get("port"), port.get("protocol")))
                if kept:
                    port["nodePort"] = kept
