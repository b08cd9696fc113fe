"""The real size limits: what a client must not send.

Covers: more than 1 MiB of ConfigMap data → 422; an object above the storage limit (1.5 MiB) →
413; a request body above 3 MiB → 413. Nothing is stored in any of these cases.
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster

MIB = 1024 * 1024


def test_configmap_data_over_one_mib_is_refused_with_422(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_config_map(cluster.namespace, objects.configmap("big", {"blob": "x" * (MIB + 10)}))
    assert caught.value.status == 422
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("fits", {"blob": "x" * (MIB - 100)}))


def test_an_object_over_the_storage_limit_is_refused_with_413(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    annotations = {f"example.com/a{n}": "x" * 200_000 for n in range(1)}
    body = objects.configmap("huge", {f"k{n}": "y" * 250_000 for n in range(4)})
    body["metadata"]["annotations"] = annotations
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_event(
            cluster.namespace,
            {
                "metadata": {"name": "huge"},
                "involvedObject": {"kind": "Node", "name": "n"},
                "message": "z" * (MIB + MIB // 2 + 10),
            },
        )
    assert caught.value.status in (413, 422)
    with pytest.raises(k8s.ApiException):
        core.read_namespaced_event("huge", cluster.namespace)


def test_a_request_body_over_three_mib_is_refused_with_413(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_config_map(cluster.namespace, objects.configmap("toolarge", {"b": "x" * (3 * MIB + 1)}))
    assert caught.value.status == 413
