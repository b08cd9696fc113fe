"""What the Node objects say: per-pool facts, GPU-node aggregates and per-value node lists.

Three views of the same nodes, each for a reader:

- aggregates (``OS.release.ID``, ``GPU.smi.driver`` …) over the GPU nodes, for recipe constraints;
  when nodes disagree the value lists every distinct value joined by ``MULTI`` and a constraint must
  hold for each;
- node pools (``K8s.nodepool.<pool>/kernel`` …), for people;
- value → nodes (``NodeTopology.kernel.<version>: node-000,node-003``, and the same for the OS image,
  container runtime, kubelet and GPU driver), so a diff and a recipe's node pins can name the nodes
  a change or a failure concerns.

Only scheduling-relevant labels are kept, and never a label whose value is a timestamp, so an
unchanged cluster measures the same.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shared.recipe.snapshot import MULTI_VALUE_SEPARATOR

MULTI = MULTI_VALUE_SEPARATOR
POOL_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "oci.oraclecloud.com/node-pool-id",
    "node.kubernetes.io/instance-type",
)
_LABEL_PREFIXES = ("nvidia.com/", "topology.kubernetes.io/", "node-role.kubernetes.io/", "feature.node.kubernetes.io/")
_LABEL_NAMES = ("node.kubernetes.io/instance-type", "kubernetes.io/arch", "kubernetes.io/os", *POOL_LABELS)
_GPU_PRESENT = "nvidia.com/gpu.present"
_GPU_PRODUCT = "nvidia.com/gpu.product"
_GPU_COUNT = "nvidia.com/gpu.count"
_GPU_CLIQUE = "nvidia.com/gpu.clique"
_OS_PATTERNS = [
    (re.compile(r"ubuntu\s+(\d+\.\d+)", re.I), "ubuntu"),
    (re.compile(r"red hat enterprise linux\D*(\d+(?:\.\d+)?)", re.I), "rhel"),
    (re.compile(r"amazon linux\s+(\d+)", re.I), "amzn"),
    (re.compile(r"container-optimized os(?:\D*(\d+))?", re.I), "cos"),
    (re.compile(r"bottlerocket\D*(\d+\.\d+)?", re.I), "bottlerocket"),
]


TopologyData = dict[str, dict[str, str]]
"""``NodeTopology`` subtype → value → the nodes that have it (comma-joined)."""

NODE_FACTS = ("kernel", "os-image", "container-runtime", "kubelet", "driver")
"""The per-node facts listed value → nodes under ``NodeTopology.<fact>`` (``driver``: GPU nodes only)."""


def _labels(node: dict[str, Any]) -> dict[str, str]:
    return dict((node.get("metadata") or {}).get("labels") or {})


def _name(node: dict[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _info(node: dict[str, Any]) -> dict[str, str]:
    return dict(((node.get("status") or {}).get("nodeInfo")) or {})


def is_gpu_node(node: dict[str, Any]) -> bool:
    labels = _labels(node)
    capacity = (node.get("status") or {}).get("capacity") or {}
    return labels.get(_GPU_PRESENT) == "true" or str(capacity.get("nvidia.com/gpu", "0")) not in ("0", "")


def pool_of(node: dict[str, Any]) -> str:
    return _pool(_labels(node))


def os_release(os_image: str) -> tuple[str, str]:
    """(ID, VERSION_ID) as /etc/os-release would say, from the kubelet's ``osImage``."""
    for pattern, os_id in _OS_PATTERNS:
        match = pattern.search(os_image)
        if match:
            return os_id, (match.group(1) or "") if match.groups() else ""
    return (os_image.split()[0].lower() if os_image else "unknown"), ""


def driver_version(labels: dict[str, str]) -> str | None:
    """The GPU driver version from GPU feature discovery's labels (``580.105.08``)."""
    parts = [labels.get(f"nvidia.com/cuda.driver.{p}") for p in ("major", "minor", "rev")]
    if not parts[0]:
        return labels.get("nvidia.com/cuda.driver-version.full")
    return ".".join(p for p in parts if p)


def cuda_version(labels: dict[str, str]) -> str | None:
    major, minor = labels.get("nvidia.com/cuda.runtime.major"), labels.get("nvidia.com/cuda.runtime.minor")
    if major:
        return f"{major}.{minor or 0}"
    return labels.get("nvidia.com/cuda.runtime-version.full")


def _joined(values: Iterable[str | None]) -> str:
    distinct = sorted({v for v in values if v})
    return MULTI.join(distinct)


def _facts(node: dict[str, Any]) -> dict[str, str]:
    info, labels = _info(node), _labels(node)
    os_id, os_version = os_release(info.get("osImage", ""))
    facts = {
        "kernel": info.get("kernelVersion", ""),
        "os-image": info.get("osImage", ""),
        "os-id": os_id,
        "os-version": os_version,
        "container-runtime": info.get("containerRuntimeVersion", ""),
        "kubelet": info.get("kubeletVersion", ""),
    }
    if is_gpu_node(node):
        facts["gpu-product"] = labels.get(_GPU_PRODUCT, "")
        facts["gpus-per-node"] = labels.get(_GPU_COUNT) or str(
            ((node.get("status") or {}).get("capacity") or {}).get("nvidia.com/gpu", "")
        )
        facts["driver"] = driver_version(labels) or ""
        facts["cuda"] = cuda_version(labels) or ""
    return facts


@dataclass(frozen=True)
class _Node:
    """What the three views read of one node, read once: 10,000 nodes are measured three ways."""

    name: str
    labels: dict[str, str]
    gpu: bool
    facts: dict[str, str]
    taints: list[dict[str, Any]]


def _read(nodes: list[dict[str, Any]]) -> list[_Node]:
    return [
        _Node(_name(n), _labels(n), is_gpu_node(n), _facts(n), list((n.get("spec") or {}).get("taints") or []))
        for n in nodes
    ]


def measure(nodes: list[dict[str, Any]]) -> tuple[dict[str, str], dict[tuple[str, str], dict[str, str]], TopologyData]:
    """``pools``, ``aggregates`` and ``topology`` of the same nodes, each node read once."""
    read = _read(nodes)
    return _pools(read), _aggregates(read), _topology(read)


def aggregates(nodes: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, str]]:
    """(type, subtype) → data for the cluster-wide values recipes constrain."""
    return _aggregates(_read(nodes))


def _aggregates(nodes: list[_Node]) -> dict[tuple[str, str], dict[str, str]]:
    gpu_nodes = [n for n in nodes if n.gpu] or nodes
    facts = [n.facts for n in gpu_nodes]
    all_facts = [n.facts for n in nodes]

    def pick(rows: list[dict[str, str]], key: str) -> str:
        return _joined(r.get(key) for r in rows)

    out: dict[tuple[str, str], dict[str, str]] = {
        ("OS", "release"): {"ID": pick(facts, "os-id"), "VERSION_ID": pick(facts, "os-version")},
        ("OS", "sysctl"): {"/proc/sys/kernel/osrelease": pick(facts, "kernel")},
        ("K8s", "node"): {
            "kernel-version": pick(all_facts, "kernel"),
            "os-image": pick(all_facts, "os-image"),
            "container-runtime-version": pick(all_facts, "container-runtime"),
            "kubelet-version": pick(all_facts, "kubelet"),
        },
    }
    gpu_facts = [n.facts for n in gpu_nodes if n.gpu]
    if gpu_facts:
        cliques = {n.labels.get(_GPU_CLIQUE) for n in gpu_nodes if n.labels.get(_GPU_CLIQUE)}
        out[("GPU", "smi")] = {
            "gpu.model": pick(gpu_facts, "gpu-product"),
            "gpu-count": pick(gpu_facts, "gpus-per-node"),
            "driver": pick(gpu_facts, "driver"),
            "cuda-version": pick(gpu_facts, "cuda"),
        }
        out[("GPU", "topology")] = {
            "gpu-nodes": str(len(gpu_facts)),
            "cliques": str(len(cliques)),
            "gpus": str(sum(int(f["gpus-per-node"] or 0) for f in gpu_facts if f["gpus-per-node"].isdigit())),
        }
    return {key: {k: v for k, v in data.items() if v} for key, data in out.items()}


def pools(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """``<pool>/<fact>`` → value (distinct values joined when a pool is mixed)."""
    return _pools(_read(nodes))


def _pool(labels: dict[str, str]) -> str:
    return next((labels[k] for k in POOL_LABELS if labels.get(k)), "default")


def _pools(nodes: list[_Node]) -> dict[str, str]:
    grouped: dict[str, list[dict[str, str]]] = defaultdict(list)
    for node in nodes:
        grouped[_pool(node.labels)].append(node.facts)
    data: dict[str, str] = {}
    for pool in sorted(grouped):
        rows = grouped[pool]
        data[f"{pool}/nodes"] = str(len(rows))
        for key in ("kernel", "os-image", "container-runtime", "kubelet", "gpu-product", "gpus-per-node", "driver"):
            value = _joined(r.get(key) for r in rows)
            if value:
                data[f"{pool}/{key}"] = value
    return data


def _relevant_label(key: str) -> bool:
    if key.endswith("timestamp") or key == "kubernetes.io/hostname":
        return False
    return key.startswith(_LABEL_PREFIXES) or key in _LABEL_NAMES or "rack" in key


def _by_value(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    nodes: dict[str, set[str]] = defaultdict(set)
    for key, node in pairs:
        nodes[key].add(node)
    return {k: ",".join(sorted(nodes[k])) for k in sorted(nodes)}


def topology(nodes: list[dict[str, Any]]) -> TopologyData:
    """NodeTopology subtypes: value → the nodes that have it."""
    return _topology(_read(nodes))


def _topology(nodes: list[_Node]) -> TopologyData:
    relevant: dict[str, bool] = {}  # label keys repeat on every node: each is judged once
    pairs = []
    for n in nodes:
        for k, v in n.labels.items():
            keep = relevant.get(k)
            if keep is None:
                keep = relevant[k] = _relevant_label(k)
            if keep:
                pairs.append((f"{k}={v}", n.name))
    labels = _by_value(pairs)
    taints = _by_value(
        (f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}", n.name) for n in nodes for t in n.taints
    )
    out = {"label": labels, "taint": taints}
    for fact in NODE_FACTS:
        out[fact] = _by_value((n.facts[fact], n.name) for n in nodes if n.facts.get(fact))
    out["summary"] = {
        "node-count": str(len(nodes)),
        "gpu-node-count": str(sum(1 for n in nodes if n.gpu)),
        "label-count": str(len(labels)),
        "taint-count": str(len(taints)),
    }
    return out
