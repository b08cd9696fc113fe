"""kubectl, unchanged, against the target: the commands operators type, with their effects checked.

Covers: get (with server-side columns), get -o yaml/jsonpath, describe, label, annotate, cordon,
uncordon, taint and untaint, apply -f (twice: create then unchanged), apply of a custom resource
with printer columns, a CRD created after kubectl cached discovery, drain (evicts exactly the pods of
that node), wait, create --dry-run=server, delete. Runs the pinned kubectl 1.34 that ``make setup`` installs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster


@pytest.fixture()
def node(cluster: Cluster) -> str:
    core = k8s.CoreV1Api(cluster.api)
    name = cluster.name("kubectl-node")
    core.create_node(objects.node(name, labels={"kubernetes.io/hostname": name}))
    cluster.cleanup.append(lambda: core.delete_node(name))
    return name


def test_get_prints_server_side_columns_and_yaml(cluster_kubectl: Any, node: str) -> None:
    table = cluster_kubectl("get", "node", node).stdout.splitlines()
    assert table[0].split()[:2] == ["NAME", "STATUS"]
    assert table[1].split()[0] == node
    as_yaml = cluster_kubectl("get", "node", node, "-o", "yaml").stdout
    assert f"name: {node}" in as_yaml and "kind: Node" in as_yaml


def test_label_annotate_and_select_by_label(cluster_kubectl: Any, node: str) -> None:
    cluster_kubectl("label", "node", node, "pool=contract")
    cluster_kubectl("annotate", "node", node, "example.com/note=hello")
    names = cluster_kubectl("get", "nodes", "-l", "pool=contract", "-o", "jsonpath={.items[*].metadata.name}")
    assert names.stdout.split() == [node]
    note = cluster_kubectl("get", "node", node, "-o", "jsonpath={.metadata.annotations.example\\.com/note}")
    assert note.stdout == "hello"
    cluster_kubectl("label", "node", node, "pool-")
    assert "pool" not in cluster_kubectl("get", "node", node, "-o", "jsonpath={.metadata.labels}").stdout


def test_cordon_taint_untaint_uncordon(cluster: Cluster, cluster_kubectl: Any, node: str) -> None:
    core = k8s.CoreV1Api(cluster.api)
    cluster_kubectl("cordon", node)
    cluster_kubectl("taint", "node", node, "gpu=bad:NoSchedule")
    spec = core.read_node(node).spec
    assert spec.unschedulable is True
    assert [(t.key, t.value, t.effect) for t in spec.taints] == [("gpu", "bad", "NoSchedule")]
    cluster_kubectl("taint", "node", node, "gpu-")
    cluster_kubectl("uncordon", node)
    spec = core.read_node(node).spec
    assert not spec.unschedulable and not spec.taints


def test_describe_shows_the_node_and_its_pods(cluster: Cluster, cluster_kubectl: Any, node: str) -> None:
    k8s.CoreV1Api(cluster.api).create_namespaced_pod(cluster.namespace, objects.pod("described", node=node))
    text = cluster_kubectl("describe", "node", node).stdout
    assert f"Name:               {node}" in text
    assert "described" in text


def test_drain_evicts_exactly_the_pods_of_that_node(cluster: Cluster, cluster_kubectl: Any, node: str) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_pod(cluster.namespace, objects.pod("on-node", node=node))
    core.create_namespaced_pod(cluster.namespace, objects.pod("elsewhere", node="some-other-node"))
    done = cluster_kubectl("drain", node, "--force", "--ignore-daemonsets", "--timeout=120s")
    assert f"node/{node} drained" in done.stdout
    left = [p.metadata.name for p in core.list_namespaced_pod(cluster.namespace).items]
    assert left == ["elsewhere"]
    assert core.read_node(node).spec.unschedulable is True


def test_apply_creates_then_reports_unchanged(cluster: Cluster, cluster_kubectl: Any) -> None:
    manifest = json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"k": "v"}}
    )
    first = cluster_kubectl("apply", "-f", "-", input=manifest)
    assert "configmap/applied created" in first.stdout
    second = cluster_kubectl("apply", "-f", "-", input=manifest)
    assert "configmap/applied unchanged" in second.stdout
    changed = cluster_kubectl("apply", "-f", "-", input=manifest.replace('"v"', '"w"'))
    assert "configmap/applied configured" in changed.stdout
    data = k8s.CoreV1Api(cluster.api).read_namespaced_config_map("applied", cluster.namespace).data
    assert data == {"k": "w"}


def test_custom_resources_print_their_columns(cluster: Cluster, cluster_kubectl: Any) -> None:
    from tests.contract.test_custom_resources import install_crd

    install_crd(cluster, "probes", "Probe", columns=[{"name": "Phase", "type": "string", "jsonPath": ".status.phase"}])
    manifest = json.dumps(
        {"apiVersion": f"{objects.CRD_GROUP}/v1", "kind": "Probe", "metadata": {"name": "p1"}, "spec": {}}
    )
    cluster_kubectl("apply", "-f", "-", input=manifest)
    cluster_kubectl(
        "patch",
        f"probes.{objects.CRD_GROUP}",
        "p1",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Passed"}}',
    )
    lines = cluster_kubectl("get", f"probes.{objects.CRD_GROUP}").stdout.splitlines()
    assert lines[0].split()[:2] == ["NAME", "PHASE"]
    assert lines[1].split()[:2] == ["p1", "Passed"]


def test_kubectl_sees_a_crd_created_after_it_cached_discovery(
    cluster: Cluster, cluster_kubectl: Any, tmp_path: Any
) -> None:
    from tests.contract.test_custom_resources import install_crd

    if cluster.sim is not None:
        cluster.sim.advance(3600)  # answers now dated ahead of the wall clock, as at --speed 60 after a minute
    cache = f"--cache-dir={tmp_path / 'kube-cache'}"
    cluster_kubectl(cache, "get", "configmaps")  # discovery is now cached on disk
    install_crd(cluster, "latecomers", "Latecomer")
    # The server's Cache-Control (no-cache, private) makes kubectl revalidate its cached discovery.
    listed = cluster_kubectl(cache, "get", f"latecomers.{objects.CRD_GROUP}", check=False)
    assert listed.returncode == 0, listed.stderr


def test_wait_returns_when_the_condition_holds(cluster: Cluster, cluster_kubectl: Any, node: str) -> None:
    cluster.require_sim("the test sets node conditions itself")
    k8s.CoreV1Api(cluster.api).patch_node_status(
        node, {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    )
    done = cluster_kubectl("wait", "--for=condition=Ready", f"node/{node}", "--timeout=60s")
    assert "condition met" in done.stdout


def test_server_dry_run_and_delete(cluster: Cluster, cluster_kubectl: Any) -> None:
    manifest = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "maybe"}})
    cluster_kubectl("apply", "--dry-run=server", "-f", "-", input=manifest)
    core = k8s.CoreV1Api(cluster.api)
    assert "maybe" not in {c.metadata.name for c in core.list_namespaced_config_map(cluster.namespace).items}
    cluster_kubectl("apply", "-f", "-", input=manifest)
    cluster_kubectl("delete", "configmap", "maybe")
    assert "maybe" not in {c.metadata.name for c in core.list_namespaced_config_map(cluster.namespace).items}
