"""DaemonSets, run by the simulated controller manager, over HTTP in virtual time.

Covers: one pod per node, pinned with node affinity ``metadata.name In [node]``, carrying the
tolerations the controller adds and the ``controller-revision-hash`` / ``pod-template-generation``
labels, with a ControllerRevision ``<ds>-<hash>`` holding the template; status fields; a
nodeSelector limits the nodes and follows label changes; untolerated taints (NoSchedule keeps a
running pod, NoExecute removes it) and cordoned nodes; new nodes get a pod, removed ones lose
it; a template change rolls the pods one node at a time onto a new revision; ``kubectl rollout
status daemonset/x`` finishes. Reference: kubernetes:pkg/controller/daemon/ (daemon_controller.go,
update.go, util/daemonset_util.go), kubectl:pkg/polymorphichelpers/rollout_status.go.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from shared.sim import SimServer
from tests.sim import workloadkit as kit
from tests.sim.workloadkit import cluster_nodes_fixture  # noqa: F401 - the fixture

HASH = "controller-revision-hash"


def _create(api: Any, body: dict[str, Any]) -> Any:
    return k8s.AppsV1Api(api).create_namespaced_daemon_set("default", body)


def _read(api: Any, name: str) -> Any:
    return k8s.AppsV1Api(api).read_namespaced_daemon_set(name, "default")


def _nodes_of(api: Any, app: str) -> list[str]:
    return sorted(p.spec.node_name for p in kit.pods(api, f"app={app}"))


def test_a_daemonset_runs_one_pinned_pod_per_node(sim: SimServer, api_client: Any, cluster_nodes: list[str]) -> None:
    _create(api_client, kit.daemonset("agent"))
    sim.advance(kit.POD_START + 1)
    pods = kit.pods(api_client, "app=agent")
    assert sorted(p.spec.node_name for p in pods) == cluster_nodes
    (revision,) = k8s.AppsV1Api(api_client).list_namespaced_controller_revision("default").items
    pod_hash = revision.metadata.labels[HASH]
    assert revision.metadata.name == f"agent-{pod_hash}" and revision.revision == 1
    assert revision.data["spec"]["template"]["$patch"] == "replace"
    assert revision.data["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert (
        revision.metadata.owner_references[0].kind == "DaemonSet" and revision.metadata.owner_references[0].controller
    )
    for pod in pods:
        assert pod.metadata.generate_name == "agent-" and len(pod.metadata.name) == len("agent-") + 5
        assert pod.metadata.labels[HASH] == pod_hash and pod.metadata.labels["pod-template-generation"] == "1"
        (term,) = (
            pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
        )
        assert [(f.key, f.operator, f.values) for f in term.match_fields] == [
            ("metadata.name", "In", [pod.spec.node_name])
        ]
        tolerated = {(t.key, t.effect) for t in pod.spec.tolerations}
        assert tolerated >= {
            ("node.kubernetes.io/not-ready", "NoExecute"),
            ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/disk-pressure", "NoSchedule"),
            ("node.kubernetes.io/memory-pressure", "NoSchedule"),
            ("node.kubernetes.io/pid-pressure", "NoSchedule"),
            ("node.kubernetes.io/unschedulable", "NoSchedule"),
        }
        assert kit.ready(pod) and pod.metadata.owner_references[0].block_owner_deletion
    status = _read(api_client, "agent").status
    assert (status.desired_number_scheduled, status.current_number_scheduled, status.number_ready) == (3, 3, 3)
    assert (status.updated_number_scheduled, status.number_available, status.number_misscheduled) == (3, 3, 0)
    assert status.number_unavailable is None and status.observed_generation == 1
    created = [
        e.message for e in kit.events(api_client, kind="DaemonSet", name="agent") if e.reason == "SuccessfulCreate"
    ]
    assert sorted(created) == sorted(f"Created pod: {p.metadata.name}" for p in pods)


def test_a_node_selector_picks_the_nodes_and_follows_their_labels(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.patch_node(cluster_nodes[1], {"metadata": {"labels": {"gpu": "yes"}}})
    body = kit.daemonset("plugin")
    body["spec"]["template"]["spec"]["nodeSelector"] = {"gpu": "yes"}
    _create(api_client, body)
    sim.advance(kit.POD_START + 1)
    assert _nodes_of(api_client, "plugin") == [cluster_nodes[1]]
    core.patch_node(cluster_nodes[2], {"metadata": {"labels": {"gpu": "yes"}}})
    core.patch_node(cluster_nodes[1], {"metadata": {"labels": {"gpu": None}}})
    sim.advance(kit.POD_START + 1)
    assert _nodes_of(api_client, "plugin") == [cluster_nodes[2]]
    assert _read(api_client, "plugin").status.desired_number_scheduled == 1


def test_taints_and_cordons_decide_where_pods_run(sim: SimServer, api_client: Any, cluster_nodes: list[str]) -> None:
    core = k8s.CoreV1Api(api_client)
    core.patch_node(
        cluster_nodes[0], {"spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}}
    )
    core.patch_node(cluster_nodes[1], {"spec": {"unschedulable": True}})  # DaemonSet pods tolerate a cordon
    _create(api_client, kit.daemonset("agent"))
    sim.advance(kit.POD_START + 1)
    assert _nodes_of(api_client, "agent") == cluster_nodes[1:]
    core.patch_node(cluster_nodes[2], {"spec": {"taints": [{"key": "maint", "effect": "NoSchedule"}]}})
    sim.advance(1)
    assert _nodes_of(api_client, "agent") == cluster_nodes[1:]  # a running pod stays on NoSchedule
    status = _read(api_client, "agent").status
    assert (status.desired_number_scheduled, status.number_misscheduled) == (1, 1)
    core.patch_node(cluster_nodes[2], {"spec": {"taints": [{"key": "maint", "effect": "NoExecute"}]}})
    sim.advance(1)
    assert _nodes_of(api_client, "agent") == [cluster_nodes[1]]
    deleted = [
        e.message for e in kit.events(api_client, kind="DaemonSet", name="agent") if e.reason == "SuccessfulDelete"
    ]
    assert len(deleted) == 1


def test_new_nodes_get_a_pod_and_removed_nodes_lose_theirs(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.daemonset("agent"))
    sim.advance(kit.POD_START + 1)
    (added,) = sim.add_nodes(1)
    sim.advance(kit.POD_START + 1)
    assert _nodes_of(api_client, "agent") == [*cluster_nodes, added]
    k8s.CoreV1Api(api_client).delete_node(cluster_nodes[0])
    sim.advance(1)
    assert _nodes_of(api_client, "agent") == [*cluster_nodes[1:], added]
    assert _read(api_client, "agent").status.number_available == 3


def test_a_template_change_rolls_one_node_at_a_time_onto_a_new_revision(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    apps = k8s.AppsV1Api(api_client)
    _create(api_client, kit.daemonset("agent"))
    sim.advance(kit.POD_START + 1)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.28"}]}}}}
    apps.patch_namespaced_daemon_set("agent", "default", patch)
    sim.kubelet.settle()
    revisions = sorted(apps.list_namespaced_controller_revision("default").items, key=lambda r: r.revision)
    assert [r.revision for r in revisions] == [1, 2]
    new_hash = revisions[1].metadata.labels[HASH]
    pods = kit.pods(api_client, "app=agent")
    assert sum(1 for p in pods if p.metadata.labels[HASH] != new_hash) == 2  # maxUnavailable 1: one node at a time
    for _ in range(4):
        sim.advance(kit.POD_START + 1)
    pods = kit.pods(api_client, "app=agent")
    assert sorted(p.spec.node_name for p in pods) == cluster_nodes
    assert all(p.metadata.labels[HASH] == new_hash and p.spec.containers[0].image == "nginx:1.28" for p in pods)
    assert all(p.metadata.labels["pod-template-generation"] == "2" for p in pods)
    status = _read(api_client, "agent").status
    assert (status.observed_generation, status.updated_number_scheduled, status.number_available) == (2, 3, 3)


def test_kubectl_rollout_status_finishes(
    sim: SimServer, kubectl: Any, cluster_nodes: list[str], tmp_path: Path
) -> None:
    body = kit.daemonset("agent", updateStrategy={"type": "RollingUpdate"})
    kubectl("apply", "-f", str(kit.manifest(tmp_path, body)))
    done: list[Any] = []
    watcher = threading.Thread(
        target=lambda: done.append(kubectl("rollout", "status", "daemonset/agent", "--timeout=120s", check=False))
    )
    watcher.start()
    for _ in range(10):
        if done:
            break
        sim.advance(1)
        watcher.join(timeout=0.5)
    watcher.join(timeout=150)  # kubectl's own --timeout ends it first
    (result,) = done
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == 'daemon set "agent" successfully rolled out'
