"""The defaults a real 1.34 server writes into built-in objects, which clients read back.

Two kinds, applied at different moments as upstream does:

- scheme defaults (``k8s.io/kubernetes:pkg/apis/*/v1/defaults.go``), applied whenever a body is
  decoded — on create and on every update or patch — so a PUT that omits a defaulted field
  compares equal to the stored object: :func:`scheme`;
- what happens only on create: admission plugins (ServiceAccount, Priority,
  DefaultTolerationSeconds), the Job's generated selector, a Service's cluster IP and node ports,
  a Pod's initial status: :func:`on_create`.

A pod spec's own defaults, in a Pod or a template, are in :mod:`.poddefaults`. Left out: the
ServiceAccount token volume (``kube-api-access-*``) the admission plugin mounts, PVC template
defaults, and PriorityClass objects (only the two built-in classes are known).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Callable, Mapping
from typing import Any

from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.validation import autoscaling, dra, poddefaults, pods, quantity
from shared.sim.apiserver.validation.poddefaults import child, default

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORTS = (30000, 32767)
DEFAULT_TOLERATION_SECONDS = 300
SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


# ------------------------------------------------------------ workloads
def _deployment(obj: dict[str, Any], version: str) -> None:
    spec = child(obj, "spec")
    default(spec, "replicas", 1)
    strategy = child(spec, "strategy")
    default(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = child(strategy, "rollingUpdate")
        default(rolling, "maxUnavailable", "25%")
        default(rolling, "maxSurge", "25%")
    default(spec, "revisionHistoryLimit", 10)
    default(spec, "progressDeadlineSeconds", 600)
    poddefaults.template(spec.get("template"), kind="Deployment", version=version)


def _daemonset(obj: dict[str, Any], version: str) -> None:
    spec = child(obj, "spec")
    strategy = child(spec, "updateStrategy")
    default(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = child(strategy, "rollingUpdate")
        default(rolling, "maxUnavailable", 1)
        default(rolling, "maxSurge", 0)
    default(spec, "revisionHistoryLimit", 10)
    poddefaults.template(spec.get("template"), kind="DaemonSet", version=version)


def _statefulset(obj: dict[str, Any], version: str) -> None:
    spec = child(obj, "spec")
    default(spec, "podManagementPolicy", "OrderedReady")
    strategy = child(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        child(strategy, "rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        default(strategy["rollingUpdate"], "partition", 0)
    retention = child(spec, "persistentVolumeClaimRetentionPolicy")
    default(retention, "whenDeleted", "Retain")
    default(retention, "whenScaled", "Retain")
    default(spec, "replicas", 1)
    default(spec, "revisionHistoryLimit", 10)
    poddefaults.template(spec.get("template"), kind="StatefulSet", version=version)


def _replicaset(obj: dict[str, Any], version: str) -> None:
    spec = child(obj, "spec")
    default(spec, "replicas", 1)
    poddefaults.template(spec.get("template"), kind="ReplicaSet", version=version)


def _job(obj: dict[str, Any], version: str) -> None:
    spec = child(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    default(spec, "parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = pods.MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    md = child(obj, "metadata")
    if tpl_labels and not md.get("labels"):
        md["labels"] = dict(tpl_labels)
    default(spec, "completionMode", "NonIndexed")
    default(spec, "suspend", False)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
    poddefaults.template(spec.get("template"), kind="Job", version=version)


def _service(obj: dict[str, Any], version: str) -> None:
    spec = child(obj, "spec")
    default(spec, "sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client = (spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}
        if client.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    default(spec, "type", "ClusterIP")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            default(port, "protocol", "TCP")
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
    "Pod": lambda obj, version: poddefaults.pod(obj, version=version),
    "Deployment": _deployment,
    "DaemonSet": _daemonset,
    "StatefulSet": _statefulset,
    "ReplicaSet": _replicaset,
    "Job": _job,
    "Service": _service,
    "RoleBinding": _binding,
    "ClusterRoleBinding": _binding,
    "Secret": _secret,
    "HorizontalPodAutoscaler": autoscaling.defaults,
    "DeviceClass": dra.device_class_defaults,
    "ResourceClaim": dra.resource_claim_defaults,
    "ResourceClaimTemplate": dra.resource_claim_template_defaults,
    "ResourceSlice": dra.resource_slice_defaults,
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
    spec = child(obj, "spec")
    uid = obj["metadata"]["uid"]
    kind = spec.get("type")
    if kind == "ExternalName":
        return
    if not spec.get("clusterIP"):
        spec["clusterIP"] = spec["clusterIPs"][0] if spec.get("clusterIPs") else cluster_ip(uid)
    default(spec, "clusterIPs", [spec["clusterIP"]])
    default(spec, "ipFamilies", ["IPv4"])
    headless_without_selector = spec["clusterIP"] == "None" and not spec.get("selector")
    default(spec, "ipFamilyPolicy", "RequireDualStack" if headless_without_selector else "SingleStack")
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
        default(spec, "preemptionPolicy", policy)
    else:
        default(spec, "priority", 0)
    default(spec, "preemptionPolicy", "PreemptLowerPriority")
    _default_tolerations(spec)
    obj["status"] = {"phase": "Pending", "qosClass": _qos(spec)}


def _generate_job_selector(obj: dict[str, Any]) -> None:
    """The Job strategy's generated selector and template labels (unless ``manualSelector``)."""
    spec = obj["spec"]
    if spec.get("manualSelector"):
        return
    md = obj["metadata"]
    tpl = child(spec, "template")
    tpl_labels = child(child(tpl, "metadata"), "labels")
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        tpl_labels.setdefault(key, md["name"])
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        tpl_labels.setdefault(key, md["uid"])
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    spec["selector"] = selector
    child(selector, "matchLabels").setdefault("batch.kubernetes.io/controller-uid", md["uid"])


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
        child(obj["metadata"], "annotations")["deprecated.daemonset.template.generation"] = "1"
    elif kind == "HorizontalPodAutoscaler":
        autoscaling.zero_status(child(obj, "status"))
    elif kind == "ResourceClaim":
        child(obj, "status")


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
            child(child(obj, "metadata"), "annotations")["deprecated.daemonset.template.generation"] = generation


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
        _keep_node_ports(spec, old)


def _keep_node_ports(spec: dict[str, Any], old: dict[str, Any]) -> None:
    """A port without a node port keeps the one it had (matched by port and protocol)."""
    previous = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old.get("ports") or []}
    for port in spec.get("ports") or []:
        if isinstance(port, dict) and not port.get("nodePort"):
            kept = previous.get((port.get("port"), port.get("protocol")))
            if kept:
                port["nodePort"] = kept
