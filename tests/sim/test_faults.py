"""Injected API faults, seen through the real client.

Covers: kill-after-writes makes an identity's later writes vanish unanswered and unapplied while
other identities carry on; a conflict rate of 1 turns every patch into 409 but leaves reads
alone; one-shot rules fire exactly their count; latency holds back each request (as the server
records it); clearing restores normal service.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from shared.kube import client
from shared.kube import errors as kube_errors
from shared.sim import SimServer


def _cm(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {}}


def test_writes_after_the_kth_vanish_for_that_identity_only(
    sim: SimServer, api_client: Any, sim_identity: Callable[[str, str], Path]
) -> None:
    robot = k8s.CoreV1Api(client.new_client(kubeconfig=sim_identity("default", "robot")))
    k8s.RbacAuthorizationV1Api(api_client).create_cluster_role_binding(
        {
            "metadata": {"name": "robot-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        }
    )
    sim.faults.configure(kill_after_writes=2, kill_identity="system:serviceaccount:default:robot")
    robot.create_namespaced_config_map("default", _cm("w1"))
    robot.create_namespaced_config_map("default", _cm("w2"))
    with pytest.raises(Exception) as caught:  # the urllib3 class varies; its mapping is what counts
        robot.create_namespaced_config_map("default", _cm("w3"))
    assert isinstance(kube_errors.from_exception(caught.value), kube_errors.ConnectionFailed)
    admin = k8s.CoreV1Api(api_client)
    names = {c.metadata.name for c in admin.list_namespaced_config_map("default").items}
    assert {"w1", "w2"} <= names and "w3" not in names
    admin.create_namespaced_config_map("default", _cm("admin-still-writes"))
    assert robot.list_namespaced_config_map("default").items  # reads still work


def test_a_conflict_rate_of_one_fails_every_patch_but_no_read(sim: SimServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map("default", _cm("c"))
    sim.faults.configure(conflict_rate=1.0)
    for _ in range(3):
        with pytest.raises(k8s.ApiException) as caught:
            core.patch_namespaced_config_map("c", "default", {"data": {"a": "1"}})
        assert caught.value.status == 409
    assert core.read_namespaced_config_map("c", "default").data in (None, {})
    sim.faults.clear()
    core.patch_namespaced_config_map("c", "default", {"data": {"a": "1"}})


def test_one_shot_rules_fire_exactly_their_count(sim: SimServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)
    sim.faults.inject(503, verb="list", resource="configmaps", count=2)
    for _ in range(2):
        with pytest.raises(k8s.ApiException) as caught:
            core.list_namespaced_config_map("default")
        assert caught.value.status == 503
    core.list_namespaced_config_map("default")
    core.list_namespaced_secret("default")


def test_latency_delays_each_request(sim: SimServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client)
    core.list_namespace()
    assert sim.faults.delayed() == (0, 0.0)
    sim.faults.configure(latency_ms=150)
    core.list_namespace()
    core.list_node()
    # What the server applied, not how long the requests took (that is the machine's business).
    requests, seconds = sim.faults.delayed()
    assert requests == 2 and seconds == pytest.approx(0.3)
    sim.faults.clear()
    core.list_namespace()
    assert sim.faults.delayed() == (0, 0.0)
