"""The objects a fresh simulated cluster starts with, and the ones each plain node brings.

What ``kube-apiserver`` and its bootstrap controllers create before anyone else writes: the
default namespaces, the bootstrap RBAC policy (``cluster-admin``, ``system:basic-user``,
``system:discovery``, ..., from :mod:`shared.sim.apiserver.rbac`) and the two system priority
classes; then, per node, what its kubelet registers: the Node (a ready, GPU-less one here; GPU
nodes are :mod:`shared.sim.gpu.gpunodes`') and its heartbeat Lease in ``kube-node-lease``.
:class:`shared.sim.server.SimServer` writes them through the API verbs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from shared.sim.apiserver import api, rbac, resources

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40
"""``leaseDurationSeconds`` of a kubelet's node Lease."""
SYSTEM_PRIORITY_CLASSES = (("system-node-critical", 2000001000), ("system-cluster-critical", 2000000000))


def bootstrap(verbs: api.Api, resource: Callable[[str, str], resources.Resource]) -> None:
    """Create the namespaces, RBAC policy and priority classes every cluster starts with."""
    ns = resource("", "namespaces")
    for name in DEFAULT_NAMESPACES:
        verbs.create(ns, None, {"metadata": {"name": name}})
    # The bootstrap policy every cluster starts with (cluster-admin, system:basic-user,
    # system:discovery, ...): kubectl auth can-i --list shows it as on a real cluster.
    roles = resource("rbac.authorization.k8s.io", "clusterroles")
    for role in rbac.BOOTSTRAP_CLUSTER_ROLES:
        verbs.create(roles, None, json.loads(json.dumps(role)))
    bindings = resource("rbac.authorization.k8s.io", "clusterrolebindings")
    for binding in rbac.BOOTSTRAP_CLUSTER_ROLE_BINDINGS:
        verbs.create(bindings, None, json.loads(json.dumps(binding)))
    priorities = resource("scheduling.k8s.io", "priorityclasses")
    for name, value in SYSTEM_PRIORITY_CLASSES:
        verbs.create(
            priorities,
            None,
            {
                "metadata": {"name": name},
                "value": value,
                "description": f"Used for system critical pods that must run in the {name.split('-')[1]}.",
            },
        )


def node_lease(node: dict[str, Any], renew: str) -> dict[str, Any]:
    """The heartbeat Lease of ``node`` (as created), owned by it, last renewed at ``renew``."""
    name = node["metadata"]["name"]
    return {
        "metadata": {
            "name": name,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}],
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": renew},
    }


def plain_node(name: str, index: int, now: str) -> dict[str, Any]:
    """A ready, schedulable, GPU-less node, as a kubelet would register it."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": "64", "memory": "512Gi", "pods": "110"},
            "allocatable": {"cpu": "63", "memory": "500Gi", "pods": "110"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{index // 250}.{index % 250 + 1}"},
                {"type": "Hostname", "address": name},
            ],
            # Every field the official client's V1NodeSystemInfo requires, or it refuses the node.
            "nodeInfo": {
                "kubeletVersion": "v1.34.2-sim",
                "kubeProxyVersion": "v1.34.2-sim",
                "osImage": "Simulated Linux",
                "architecture": "amd64",
                "operatingSystem": "linux",
                "containerRuntimeVersion": "sim://1",
                "kernelVersion": "6.1.0-sim",
                "bootID": f"boot-{name}",
                "machineID": f"machine-{name}",
                "systemUUID": f"uuid-{name}",
            },
        },
    }
