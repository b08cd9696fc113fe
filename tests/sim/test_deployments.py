"""Deployments and ReplicaSets, run by the simulated controller manager, over HTTP in virtual time.

Covers: a Deployment gets a ReplicaSet ``<deploy>-<pod-template-hash>`` (label on its selector,
template and pods, controller reference with blockOwnerDeletion, revision / desired / max
annotations) whose pods ``<rs>-<5 chars>`` run and stay Ready; the Deployment's status and
conditions through the rollout, with the real reasons and messages; a template change rolls out
a new ReplicaSet within maxSurge/maxUnavailable and ends with the old one at zero; Recreate;
scaling through ``spec.replicas`` and the scale subresource; a rollout that cannot progress
exceeds its deadline; a bare ReplicaSet keeps its count; deleting the Deployment takes its
ReplicaSets and pods; ``kubectl rollout status`` and ``kubectl wait --for=condition=Available``
finish. Reference: kubernetes:pkg/controller/deployment/ (sync.go, progress.go, rolling.go),
kubectl:pkg/polymorphichelpers/rollout_status.go.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from shared.sim import SimServer
from tests.sim import workloadkit as kit
from tests.sim.workloadkit import cluster_nodes_fixture  # noqa: F401 - the fixture

HASH = "pod-template-hash"


def _create(api: Any, body: dict[str, Any]) -> Any:
    return k8s.AppsV1Api(api).create_namespaced_deployment("default", body)


def _read(api: Any, name: str) -> Any:
    return k8s.AppsV1Api(api).read_namespaced_deployment(name, "default")


def _replicasets(api: Any, app: str) -> list[Any]:
    found = k8s.AppsV1Api(api).list_namespaced_replica_set("default", label_selector=f"app={app}").items
    return sorted(found, key=lambda rs: int(rs.metadata.annotations["deployment.kubernetes.io/revision"]))


def test_a_deployment_runs_its_pods_through_a_replicaset_named_by_the_template_hash(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.deployment("web"))
    sim.advance(kit.POD_START + 1)
    (rs,) = _replicasets(api_client, "web")
    pod_hash = rs.metadata.labels[HASH]
    assert rs.metadata.name == f"web-{pod_hash}" and len(pod_hash) >= 8
    assert set(pod_hash) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert rs.spec.selector.match_labels == {"app": "web", HASH: pod_hash}
    assert rs.spec.template.metadata.labels == {"app": "web", HASH: pod_hash}
    (owner,) = rs.metadata.owner_references
    deploy = _read(api_client, "web")
    assert (owner.kind, owner.name, owner.uid) == ("Deployment", "web", deploy.metadata.uid)
    assert owner.controller and owner.block_owner_deletion
    assert rs.metadata.annotations == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4",
    }
    assert deploy.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    pods = kit.pods(api_client, "app=web")
    assert len(pods) == 3 and all(kit.ready(p) for p in pods)
    assert sorted(p.spec.node_name for p in pods) == cluster_nodes  # spread, one replica per node
    for pod in pods:
        assert (
            pod.metadata.name.startswith(f"{rs.metadata.name}-") and len(pod.metadata.name) == len(rs.metadata.name) + 6
        )
        assert pod.metadata.labels[HASH] == pod_hash
        assert pod.metadata.owner_references[0].name == rs.metadata.name
        assert pod.spec.restart_policy == "Always" and pod.status.container_statuses[0].started
        assert {c.type for c in pod.status.conditions if c.status == "True"} >= {
            "Ready",
            "ContainersReady",
            "PodScheduled",
            "Initialized",
        }
    status = deploy.status
    assert (status.observed_generation, status.replicas, status.updated_replicas) == (1, 3, 3)
    assert (status.ready_replicas, status.available_replicas, status.unavailable_replicas) == (3, 3, None)
    available, progressing = kit.condition(deploy, "Available"), kit.condition(deploy, "Progressing")
    assert (available.status, available.reason, available.message) == (
        "True",
        "MinimumReplicasAvailable",
        "Deployment has minimum availability.",
    )
    assert (progressing.status, progressing.reason, progressing.message) == (
        "True",
        "NewReplicaSetAvailable",
        f'ReplicaSet "{rs.metadata.name}" has successfully progressed.',
    )
    assert (rs.status.replicas, rs.status.ready_replicas, rs.status.available_replicas) == (3, 3, 3)
    assert (rs.status.fully_labeled_replicas, rs.status.observed_generation) == (3, 1)
    sim.advance(3600)  # long-running pods stay up
    assert all(kit.ready(p) for p in kit.pods(api_client, "app=web"))


def test_before_its_pods_are_ready_a_deployment_is_progressing_but_unavailable(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.deployment("web"))
    sim.kubelet.settle()  # pods created and bound, not yet running (the clock has not moved)
    deploy = _read(api_client, "web")
    (rs,) = _replicasets(api_client, "web")
    assert (deploy.status.replicas, deploy.status.updated_replicas, deploy.status.unavailable_replicas) == (3, 3, 3)
    assert deploy.status.available_replicas is None
    available, progressing = kit.condition(deploy, "Available"), kit.condition(deploy, "Progressing")
    assert (available.status, available.reason, available.message) == (
        "False",
        "MinimumReplicasUnavailable",
        "Deployment does not have minimum availability.",
    )
    assert (progressing.status, progressing.reason, progressing.message) == (
        "True",
        "ReplicaSetUpdated",
        f'ReplicaSet "{rs.metadata.name}" is progressing.',
    )


def test_a_template_change_rolls_out_a_new_replicaset_within_surge_and_unavailability(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.deployment("web", replicas=4))
    sim.advance(kit.POD_START + 1)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.28"}]}}}}
    k8s.AppsV1Api(api_client).patch_namespaced_deployment("web", "default", patch)
    sim.kubelet.settle()
    old, new = _replicasets(api_client, "web")
    # maxSurge and maxUnavailable are 25 % of 4: one pod above, one below the desired count.
    assert (old.spec.replicas, new.spec.replicas) == (3, 2)
    deploy = _read(api_client, "web")
    assert deploy.status.observed_generation == 2 and deploy.status.updated_replicas == 2
    assert deploy.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    assert new.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    for _ in range(8):
        sim.advance(kit.POD_START + 1)
        old, new = _replicasets(api_client, "web")
        assert old.spec.replicas + new.spec.replicas <= 5
        assert (old.status.available_replicas or 0) + (new.status.available_replicas or 0) >= 3
    assert (old.spec.replicas, new.spec.replicas) == (0, 4)
    pods = kit.pods(api_client, "app=web")
    assert len(pods) == 4 and {p.spec.containers[0].image for p in pods} == {"nginx:1.28"}
    assert all(p.metadata.labels[HASH] == new.metadata.labels[HASH] for p in pods)
    deploy = _read(api_client, "web")
    assert (deploy.status.replicas, deploy.status.updated_replicas, deploy.status.available_replicas) == (4, 4, 4)
    assert kit.condition(deploy, "Progressing").reason == "NewReplicaSetAvailable"
    messages = [e.message for e in kit.events(api_client, kind="Deployment", name="web")]
    assert f"Scaled up replica set {new.metadata.name} from 0 to 1" in messages
    assert f"Scaled down replica set {old.metadata.name} from 4 to 3" in messages
    assert messages[-1] == f"Scaled down replica set {old.metadata.name} from 1 to 0"
    assert all(
        e.source.component == "deployment-controller" for e in kit.events(api_client, kind="Deployment", name="web")
    )


def test_recreate_removes_the_old_pods_before_the_new_ones_start(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.deployment("db", replicas=2, strategy={"type": "Recreate"}))
    sim.advance(kit.POD_START + 1)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "postgres:17"}]}}}}
    k8s.AppsV1Api(api_client).patch_namespaced_deployment("db", "default", patch)
    sim.kubelet.settle()
    images = {p.spec.containers[0].image for p in kit.pods(api_client, "app=db")}
    assert images == {"postgres:17"}  # the old pods went first; the new ones exist only now
    sim.advance(kit.POD_START + 1)
    deploy = _read(api_client, "db")
    assert (deploy.status.updated_replicas, deploy.status.available_replicas) == (2, 2)


def test_scaling_through_the_spec_and_the_scale_subresource(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    apps = k8s.AppsV1Api(api_client)
    _create(api_client, kit.deployment("web", replicas=2))
    sim.advance(kit.POD_START + 1)
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 5}})
    sim.advance(kit.POD_START + 1)
    assert len(kit.pods(api_client, "app=web")) == 5
    assert apps.read_namespaced_deployment_scale("web", "default").status.replicas == 5
    apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 1}})
    sim.advance(1)
    assert len(kit.pods(api_client, "app=web")) == 1
    deploy = _read(api_client, "web")
    assert (deploy.status.observed_generation, deploy.status.replicas, deploy.status.available_replicas) == (3, 1, 1)
    (rs,) = _replicasets(api_client, "web")
    assert rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"] == "1"


def test_a_rollout_that_cannot_progress_exceeds_its_deadline(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    body = kit.deployment("stuck", replicas=2, progressDeadlineSeconds=30)
    body["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "none"}
    _create(api_client, body)
    sim.advance(20)
    assert kit.condition(_read(api_client, "stuck"), "Progressing").status == "True"
    sim.advance(15)
    deploy = _read(api_client, "stuck")
    (rs,) = _replicasets(api_client, "stuck")
    progressing = kit.condition(deploy, "Progressing")
    assert (progressing.status, progressing.reason, progressing.message) == (
        "False",
        "ProgressDeadlineExceeded",
        f'ReplicaSet "{rs.metadata.name}" has timed out progressing.',
    )
    assert kit.condition(deploy, "Available").status == "False"


def test_a_replicaset_on_its_own_keeps_its_count(sim: SimServer, api_client: Any, cluster_nodes: list[str]) -> None:
    apps = k8s.AppsV1Api(api_client)
    body = {
        "metadata": {"name": "cache"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "cache"}}, "template": kit.template("cache")},
    }
    apps.create_namespaced_replica_set("default", body)
    sim.advance(kit.POD_START + 1)
    pods = kit.pods(api_client, "app=cache")
    assert len(pods) == 2 and all(p.metadata.generate_name == "cache-" for p in pods)
    k8s.CoreV1Api(api_client).delete_namespaced_pod(pods[0].metadata.name, "default")
    sim.advance(kit.POD_START + 1)
    again = kit.pods(api_client, "app=cache")
    assert len(again) == 2 and pods[0].metadata.name not in {p.metadata.name for p in again}
    rs = apps.read_namespaced_replica_set("cache", "default")
    assert (rs.status.replicas, rs.status.ready_replicas, rs.status.available_replicas) == (2, 2, 2)
    reasons = [(e.reason, e.message) for e in kit.events(api_client, kind="ReplicaSet", name="cache")]
    assert ("SuccessfulCreate", f"Created pod: {pods[1].metadata.name}") in reasons
    apps.patch_namespaced_replica_set_scale("cache", "default", {"spec": {"replicas": 0}})
    sim.advance(1)
    assert kit.pods(api_client, "app=cache") == []
    assert apps.read_namespaced_replica_set("cache", "default").status.replicas == 0


def test_deleting_a_deployment_takes_its_replicasets_and_pods(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    _create(api_client, kit.deployment("web", replicas=2))
    sim.advance(kit.POD_START + 1)
    k8s.AppsV1Api(api_client).delete_namespaced_deployment("web", "default")
    sim.advance(1)
    assert _replicasets(api_client, "web") == [] and kit.pods(api_client, "app=web") == []


def test_kubectl_rollout_status_and_wait_finish(
    sim: SimServer, kubectl: Any, cluster_nodes: list[str], tmp_path: Path
) -> None:
    kubectl("apply", "-f", str(kit.manifest(tmp_path, kit.deployment("web"))))
    done: list[Any] = []
    watcher = threading.Thread(
        target=lambda: done.append(kubectl("rollout", "status", "deployment/web", "--timeout=120s", check=False))
    )
    watcher.start()
    for _ in range(10):  # let kubectl see the rollout waiting, then move time on
        if done:
            break
        sim.advance(1)
        watcher.join(timeout=0.5)
    watcher.join(timeout=150)  # kubectl's own --timeout ends it first
    (result,) = done
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == 'deployment "web" successfully rolled out'
    waited = kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=60s")
    assert waited.stdout.strip() == "deployment.apps/web condition met"
