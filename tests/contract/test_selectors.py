"""Lists filtered by label and field selectors, and paged with limit/continue.

Covers: label selector operators (=, ==, !=, in, notin, exists, !exists); field selectors on
metadata.name, metadata.namespace, spec.nodeName, status.phase, spec.unschedulable and
involvedObject.*; several terms at once; unknown field labels and bad syntax → 400; pages that
together hold every item exactly once.
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster

LABELLED = {"a": {"tier": "gpu", "pool": "x"}, "b": {"tier": "cpu", "pool": "y"}, "c": {"tier": "gpu"}, "d": {}}


@pytest.fixture()
def labelled(cluster: Cluster) -> k8s.CoreV1Api:
    core = k8s.CoreV1Api(cluster.api)
    for name, labels in LABELLED.items():
        core.create_namespaced_config_map(cluster.namespace, objects.configmap(name, labels=labels))
    return core


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("tier=gpu", {"a", "c"}),
        ("tier==gpu", {"a", "c"}),
        ("tier!=gpu", {"b", "d"}),
        ("tier in (cpu, gpu)", {"a", "b", "c"}),
        ("tier notin (gpu)", {"b", "d"}),
        ("pool", {"a", "b"}),
        ("!pool", {"c", "d"}),
        ("tier=gpu,!pool", {"c"}),
        ("tier in (gpu),pool notin (y)", {"a", "c"}),
    ],
    ids=["equals", "double-equals", "not-equals", "in", "notin", "exists", "not-exists", "and", "set-and-set"],
)
def test_label_selectors_select_exactly_the_matching_objects(
    labelled: k8s.CoreV1Api, cluster: Cluster, selector: str, expected: set[str]
) -> None:
    found = labelled.list_namespaced_config_map(cluster.namespace, label_selector=selector).items
    assert {o.metadata.name for o in found} - {"kube-root-ca.crt"} == expected


def test_a_malformed_label_selector_is_a_400(labelled: k8s.CoreV1Api, cluster: Cluster) -> None:
    with pytest.raises(k8s.ApiException) as caught:
        labelled.list_namespaced_config_map(cluster.namespace, label_selector="tier in (gpu")
    assert caught.value.status == 400


def test_field_selectors_filter_pods_by_node_and_phase(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    for name, node in (("p1", "node-a"), ("p2", "node-b"), ("p3", "node-a")):
        core.create_namespaced_pod(cluster.namespace, objects.pod(name, node=node))
    on_a = core.list_namespaced_pod(cluster.namespace, field_selector="spec.nodeName=node-a").items
    assert sorted(p.metadata.name for p in on_a) == ["p1", "p3"]
    not_a = core.list_namespaced_pod(cluster.namespace, field_selector="spec.nodeName!=node-a").items
    assert [p.metadata.name for p in not_a] == ["p2"]
    pending_on_b = core.list_namespaced_pod(
        cluster.namespace, field_selector="spec.nodeName=node-b,status.phase=Pending"
    ).items
    assert [p.metadata.name for p in pending_on_b] == ["p2"]
    by_name = core.list_pod_for_all_namespaces(
        field_selector=f"metadata.name=p3,metadata.namespace={cluster.namespace}"
    )
    assert [p.metadata.name for p in by_name.items] == ["p3"]


def test_nodes_can_be_selected_by_unschedulable(cluster: Cluster) -> None:
    sim = cluster.require_sim("creates and cordons nodes")
    core = k8s.CoreV1Api(cluster.api)
    sim.add_nodes(3)
    core.patch_node("node-001", {"spec": {"unschedulable": True}})
    cordoned = core.list_node(field_selector="spec.unschedulable=true").items
    assert [n.metadata.name for n in cordoned] == ["node-001"]
    assert len(core.list_node(field_selector="spec.unschedulable=false").items) == 2


def test_events_can_be_selected_by_involved_object(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    for n, target in enumerate(("gpu-1", "gpu-2", "gpu-1")):
        core.create_namespaced_event(
            cluster.namespace,
            {
                "metadata": {"name": f"ev-{n}"},
                "reason": "Xid",
                "message": "x",
                "type": "Warning",
                "involvedObject": {"kind": "Node", "name": target},
            },
        )
    found = core.list_namespaced_event(
        cluster.namespace, field_selector="involvedObject.kind=Node,involvedObject.name=gpu-1"
    ).items
    assert sorted(e.metadata.name for e in found) == ["ev-0", "ev-2"]


def test_an_unsupported_field_label_is_a_400(cluster: Cluster) -> None:
    with pytest.raises(k8s.ApiException) as caught:
        k8s.CoreV1Api(cluster.api).list_namespaced_pod(cluster.namespace, field_selector="spec.image=x")
    assert caught.value.status == 400


def test_limit_and_continue_page_through_every_item_once(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    names = {f"page-{n:02d}" for n in range(11)}
    for name in names:
        core.create_namespaced_config_map(cluster.namespace, objects.configmap(name, labels={"paged": "yes"}))
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = core.list_namespaced_config_map(cluster.namespace, label_selector="paged=yes", limit=4, _continue=token)
        pages += 1
        seen += [o.metadata.name for o in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count is None or page.metadata.remaining_item_count > 0
    assert pages == 3
    assert sorted(seen) == sorted(names)


def test_remaining_item_count_is_exact_without_selectors_and_unset_with_one(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    for n in range(7):
        core.create_namespaced_config_map(cluster.namespace, objects.configmap(f"left-{n}", labels={"paged": "yes"}))
    total = len(core.list_namespaced_config_map(cluster.namespace).items)  # a real namespace has its CA too
    page = core.list_namespaced_config_map(cluster.namespace, limit=3)
    assert page.metadata.remaining_item_count == total - 3
    second = core.list_namespaced_config_map(cluster.namespace, limit=3, _continue=page.metadata._continue)
    assert second.metadata.remaining_item_count == total - 6  # total >= 7: a third page follows
    filtered = core.list_namespaced_config_map(cluster.namespace, label_selector="paged=yes", limit=3)
    assert filtered.metadata._continue
    assert filtered.metadata.remaining_item_count is None
