"""From a Certification to concrete work: target nodes, the first round's groups, and the base shapes.

The base shape of a group (``job``) is an Indexed batch/v1 Job: completions = parallelism = group
size, each pod pinned by required node affinity on ``kubernetes.io/hostname`` (a nodeSelector for
one node), all of the node's GPUs, the run's validation-gate taints tolerated, ``restartPolicy:
Never`` and ``backoffLimit: 0`` (a failed run is a result, not something to retry),
``activeDeadlineSeconds`` = timeoutPerJob. It runs as it is only for single-node tests and
WorkloadRuns; the backends (``shared.certify.workloads``) take the command, image, resources and
tolerations from it for TrainJobs and MPIJobs. Target nodes match as the API server matches labels
(``shared.kube.labelselector``). Pure functions of plain data: no API calls here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared import durations, errors
from shared.certify import catalog, models
from shared.certify.isolate import model as iso
from shared.kube import jobs, labelselector

HOSTNAME = jobs.HOSTNAME
RACK = "topology.kubernetes.io/rack"
CLIQUE = "nvidia.com/gpu.clique"
GPU_COUNT = "nvidia.com/gpu.count"
INDEX_ANNOTATION = jobs.INDEX_ANNOTATION
CERT_LABEL = "nvcre.nvidia.com/certification"
GROUP_ANNOTATION = "nvcre.nvidia.com/group-nodes"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True)
class TargetNode:
    name: str
    gpus: int
    rack: str
    clique: str


def seconds(duration: str, *, where: str | None = None) -> float:
    """``1h30m`` → 5400.0 (upstream's pattern); InvalidInput (naming ``where``) otherwise."""
    return durations.parse(duration, where=where)


_NODE_SELECTOR_OPERATORS: dict[str, labelselector.Operator] = {
    "In": "in",
    "NotIn": "notin",
    "Exists": "exists",
    "DoesNotExist": "!",
}
"""A NodeSelectorRequirement's operators as label-selector requirements (Gt and Lt are not taken)."""


def _matches(node: dict[str, Any], target: models.TargetSpec) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    name = node["metadata"]["name"]
    if target.nodeNames and name not in target.nodeNames:
        return False
    return _labels_match(labels, target) and _taints_match(node, target)


def _labels_match(labels: Mapping[str, str], target: models.TargetSpec) -> bool:
    """``nodeSelector`` (each key equal) and then ``matchExpressions``, in order; an unknown operator
    is InvalidInput when its turn comes."""
    equal = [labelselector.Requirement(k, "=", (v,)) for k, v in target.nodeSelector.items()]
    if not labelselector.matches(equal, labels):
        return False
    for req in target.matchExpressions:
        op = _NODE_SELECTOR_OPERATORS.get(req.operator)
        if op is None:
            raise errors.InvalidInput(f"unknown operator {req.operator!r}", where="spec.target.matchExpressions")
        if not labelselector.Requirement(req.key, op, tuple(req.values)).matches(labels):
            return False
    return True


def _taints_match(node: dict[str, Any], target: models.TargetSpec) -> bool:
    taints = list((node.get("spec") or {}).get("taints") or [])
    if (node.get("spec") or {}).get("unschedulable"):
        # The node lifecycle controller taints a cordoned node so; a selector on it opts cordoned nodes in.
        # Without one a cordoned node is left out: its pods would never schedule and the group would hang.
        if not any(sel.key == UNSCHEDULABLE_TAINT for sel in target.taintSelectors):
            return False
        taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"})
    return all(
        any(
            t.get("key") == sel.key
            and (sel.value is None or t.get("value") == sel.value)
            and (sel.effect is None or t.get("effect") == sel.effect)
            for t in taints
        )
        for sel in target.taintSelectors
    )


def target_nodes(nodes: list[dict[str, Any]], target: models.TargetSpec) -> list[TargetNode]:
    """The nodes a certification runs on, sorted by name (its topology from the node labels)."""
    return describe([node for node in nodes if _matches(node, target)])


def cordoned_left_out(nodes: list[dict[str, Any]], target: models.TargetSpec) -> list[str]:
    """Cordoned nodes the target would select if they were not cordoned, for the run's message."""
    open_target = target.model_copy(
        update={"taintSelectors": [*target.taintSelectors, models.TaintSelector(key=UNSCHEDULABLE_TAINT)]}
    )
    return sorted(
        n["metadata"]["name"]
        for n in nodes
        if (n.get("spec") or {}).get("unschedulable") and _matches(n, open_target) and not _matches(n, target)
    )


def describe(nodes: list[dict[str, Any]]) -> list[TargetNode]:
    """Nodes as certification sees them (GPU count, rack, clique from labels), sorted by name."""
    out = []
    for node in nodes:
        labels = node["metadata"].get("labels") or {}
        name = node["metadata"]["name"]
        out.append(
            TargetNode(
                name=name,
                gpus=int(labels.get(GPU_COUNT) or 8),
                rack=labels.get(RACK, "unknown"),
                clique=labels.get(CLIQUE, name),
            )
        )
    return sorted(out, key=lambda n: n.name)


def topology(nodes: list[TargetNode]) -> list[iso.Node]:
    """Isolation domains: the NVLink clique when cliques span nodes, else the rack."""
    multi = len({n.clique for n in nodes}) < len(nodes)
    return [iso.Node(n.name, n.clique if multi else n.rack) for n in nodes]


def first_round(entry: catalog.Entry, options: models.CategoryOptions, nodes: list[TargetNode]) -> list[list[str]]:
    """The category's own partition (upstream §3.1): per node, per domain, or chunks of nodesPerJob."""
    names = [n.name for n in nodes]
    if entry.scope is catalog.Scope.NODE or options.testScale is models.TestScale.INTRA_NODE:
        return [[n] for n in names]
    if options.testScale is models.TestScale.INTRA_RACK:
        return [list(g) for g in iso.by_domain(topology(nodes)).values()]
    size = min(options.nodesPerJob or len(names), len(names))
    return [list(g) for g in iso.chunks(names, size)]


def job_name(cert: str, category: int, round_number: int, group: int) -> str:
    return f"{cert[:36]}-c{category}-r{round_number}-g{group}"


@dataclass(frozen=True)
class Group:
    """One group's work, as every renderer takes it."""

    cert: models.Certification
    uid: str | None
    """The Certification's uid: what is rendered is owned by it (None for a dry render: no owner)."""
    entry: catalog.Entry
    options: models.CategoryOptions
    """The category's effective options (``CertificationSpec.options_for``)."""
    name: str
    """The name of the object rendered (``job_name``)."""
    nodes: list[TargetNode]


def job(group: Group) -> dict[str, Any]:
    """The Job of one group (docs/formats.md)."""
    cert, entry, options, nodes = group.cert, group.entry, group.options, group.nodes
    gpus = options.gpusPerNode or min(n.gpus for n in nodes)
    timeout = seconds(options.timeoutPerJob or entry.defaults.get("timeoutPerJob", "1h"))
    values: dict[str, Any] = {"gpus": gpus, "timeout": int(timeout)}
    for key in ("maxBytes", "numIterations", "maxSteps"):
        if getattr(options, key) is not None:
            values[key] = getattr(options, key)
    names = [n.name for n in nodes]
    container: dict[str, Any] = {
        "name": "main",
        "image": options.image or entry.image,
        "command": entry.argv(values),
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
    }
    if options.resources is not None:
        container["resources"]["limits"].update(options.resources.limits)
        if options.resources.requests:
            container["resources"]["requests"] = dict(options.resources.requests)
    if entry.env:
        container["env"] = [{"name": k, "value": v} for k, v in sorted(entry.env.items())]
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container], **jobs.placement(names)}
    tolerations = [
        {
            "key": t.key,
            "operator": "Equal" if t.value is not None else "Exists",
            **({"value": t.value} if t.value is not None else {}),
            **({"effect": t.effect} if t.effect else {}),
        }
        for t in cert.spec.target.taintSelectors
    ]
    if tolerations:
        pod["tolerations"] = tolerations
    metadata: dict[str, Any] = {
        "name": group.name,
        "namespace": cert.namespace,
        "labels": {CERT_LABEL: cert.name},
        "annotations": {GROUP_ANNOTATION: ",".join(names)},
    }
    if group.uid:
        metadata["ownerReferences"] = [
            {
                "apiVersion": models.API_VERSION,
                "kind": models.KIND,
                "name": cert.name,
                "uid": group.uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return jobs.indexed(metadata=metadata, pod=pod, pods=len(names), deadline_seconds=int(timeout))


MPI_API_VERSION = "kubeflow.org/v2beta1"
GROUP_LABEL = "nvcre.nvidia.com/group"
MPI_ROLE = "training.kubeflow.org/job-role"
"""The MPI Operator's role label (launcher, worker): the workers' anti-affinity selects workers only;
selecting the launcher too would keep it off every node a worker holds (the rule is symmetric)."""


def mpijob(group: Group) -> dict[str, Any]:
    """The group as a kubeflow.org/v2beta1 MPIJob: for real clusters with the MPI operator, where
    mpirun reaches the workers over its own ssh instead of one pod per node running the test.

    The base of the ``mpijob`` backend (``shared.certify.workloads.backends``), which sets the
    platform's image, mpirun command and worker resources on it. The launcher runs the catalog's
    command (``mpirun … <test>``) with no GPU; one worker per node of the group (required node
    affinity on the group's hostnames plus anti-affinity between the workers) holds the GPUs and
    runs sshd; ``slotsPerWorker`` is the GPUs per node, so mpirun starts one rank per GPU. A
    category whose command is not an mpirun (DCGM, training) keeps its Job.
    """
    base = job(group)
    command = base["spec"]["template"]["spec"]["containers"][0]["command"]
    if "mpirun" not in command:
        return base
    pod = base["spec"]["template"]["spec"]
    main = pod["containers"][0]
    names = [n.name for n in group.nodes]
    gpus = int(main["resources"]["limits"]["nvidia.com/gpu"])
    labels = {**base["metadata"]["labels"], GROUP_LABEL: group.name}
    tolerations = {"tolerations": pod["tolerations"]} if "tolerations" in pod else {}
    launcher = {
        "name": "launcher",
        "image": main["image"],
        "command": command,
        **({"env": main["env"]} if "env" in main else {}),
    }
    worker = {
        "name": "worker",
        "image": main["image"],
        "command": ["/usr/sbin/sshd", "-De"],
        "resources": main["resources"],
    }
    worker_pod = {
        "containers": [worker],
        **tolerations,
        "affinity": {
            "nodeAffinity": jobs.node_affinity(names),
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {GROUP_LABEL: group.name, MPI_ROLE: "worker"}},
                        "topologyKey": HOSTNAME,
                    }
                ]
            },
        },
    }
    return {
        "apiVersion": MPI_API_VERSION,
        "kind": "MPIJob",
        "metadata": {**base["metadata"], "labels": labels},
        "spec": {
            "slotsPerWorker": gpus,
            "mpiImplementation": "OpenMPI",
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {
                "cleanPodPolicy": "Running",
                "backoffLimit": 0,
                "activeDeadlineSeconds": base["spec"]["activeDeadlineSeconds"],
            },
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "Never",
                    "template": {"metadata": {"labels": labels}, "spec": {"containers": [launcher], **tolerations}},
                },
                "Worker": {
                    "replicas": len(names),
                    "restartPolicy": "Never",
                    "template": {"metadata": {"labels": labels}, "spec": worker_pod},
                },
            },
        },
    }
