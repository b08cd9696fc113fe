"""Dynamic resource allocation (resource.k8s.io/v1) and HorizontalPodAutoscalers (autoscaling/v2 and
v1), through the official client and the pinned kubectl, as a 1.34 server serves them.

Covers: discovery (scope, short names, subresources, v2 preferred over v1); a DeviceClass and a
ResourceSlice created, read, patched (generation counted) and listed, slices selected by
``spec.nodeName`` and ``spec.driver``; a ResourceClaim's defaults, its status written only through
``/status``, its immutable spec, a watch on claims; an HPA's defaults (minReplicas 1, the 80% CPU
target), the same object read through v1 (``targetCPUUtilizationPercentage``, the other metrics
kept in the round-trip annotation and restored by a v1 write), 422s for a bad HPA and a bad slice;
``fieldValidation=Strict`` refusing an undeclared field; ``kubectl get hpa`` columns and
``kubectl api-resources --api-group=resource.k8s.io``. Cluster-scoped objects get unique names
and are deleted afterwards, so the suite also runs on a shared real cluster.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import watch

from tests.contract import objects
from tests.contract.conftest import Cluster

DRIVER = "gpu.example.com"


def _class(cluster: Cluster) -> str:
    api = k8s.ResourceV1Api(cluster.api)
    name = cluster.name("contract-gpu")
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    api.create_device_class(body)
    cluster.cleanup.append(lambda: api.delete_device_class(name))
    return name


def _slice(cluster: Cluster, node: str, *, driver: str = DRIVER) -> str:
    api = k8s.ResourceV1Api(cluster.api)
    name = cluster.name("contract-slice")
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "H100"}}}],
        },
    }
    api.create_resource_slice(body)
    cluster.cleanup.append(lambda: api.delete_resource_slice(name))
    return name


def _claim(name: str, device_class: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}},
    }


def _hpa(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, **spec},
    }


# ---------------------------------------------------------------- discovery
def test_discovery_serves_dra_and_both_autoscaling_versions(cluster: Cluster) -> None:
    groups = {g.name: g for g in k8s.ApisApi(cluster.api).get_api_versions().groups}
    assert groups["resource.k8s.io"].preferred_version.version == "v1"
    autoscaling = groups["autoscaling"]
    assert autoscaling.preferred_version.version == "v2"
    assert {"v1", "v2"} <= {v.version for v in autoscaling.versions}
    found = {r.name: r for r in k8s.ResourceV1Api(cluster.api).get_api_resources().resources}
    assert not found["deviceclasses"].namespaced and not found["resourceslices"].namespaced
    assert found["resourceclaims"].namespaced and found["resourceclaimtemplates"].namespaced
    assert "resourceclaims/status" in found and "resourceslices/status" not in found
    hpa = {r.name: r for r in k8s.AutoscalingV2Api(cluster.api).get_api_resources().resources}
    assert hpa["horizontalpodautoscalers"].short_names == ["hpa"]
    assert "horizontalpodautoscalers/status" in hpa
    assert "all" in (hpa["horizontalpodautoscalers"].categories or [])


# ---------------------------------------------------------------- resource.k8s.io/v1
def test_device_class_and_slices_are_cluster_scoped_and_count_generations(cluster: Cluster) -> None:
    api = k8s.ResourceV1Api(cluster.api)
    name = _class(cluster)
    made = api.read_device_class(name)
    assert made.metadata.generation == 1 and made.metadata.namespace is None
    patched = api.patch_device_class(name, {"spec": {"selectors": [{"cel": {"expression": "true"}}]}})
    assert patched.metadata.generation == 2
    assert patched.spec.selectors[0].cel.expression == "true"
    node = cluster.name("dra-node")
    slice_name = _slice(cluster, node)
    stored = api.read_resource_slice(slice_name)
    assert (stored.spec.driver, stored.spec.node_name, stored.metadata.generation) == (DRIVER, node, 1)
    assert stored.spec.devices[0].attributes["model"].string == "H100"


def test_resource_slices_are_selected_by_node_name_and_driver(cluster: Cluster) -> None:
    api = k8s.ResourceV1Api(cluster.api)
    node_a, node_b = cluster.name("dra-a"), cluster.name("dra-b")
    on_a, on_b = _slice(cluster, node_a), _slice(cluster, node_b)
    other = _slice(cluster, node_a, driver="nic.example.com")
    by_node = api.list_resource_slice(field_selector=f"spec.nodeName={node_a}").items
    assert sorted(s.metadata.name for s in by_node) == sorted([on_a, other])
    both = api.list_resource_slice(field_selector=f"spec.nodeName={node_a},spec.driver={DRIVER}").items
    assert [s.metadata.name for s in both] == [on_a]
    assert on_b in {s.metadata.name for s in api.list_resource_slice(field_selector=f"spec.driver={DRIVER}").items}
    with pytest.raises(k8s.ApiException) as caught:
        api.list_resource_slice(field_selector="spec.pool.name=x")
    assert caught.value.status == 400


def test_a_resource_claim_is_defaulted_and_its_status_is_written_through_the_subresource(cluster: Cluster) -> None:
    api = k8s.ResourceV1Api(cluster.api)
    device_class = _class(cluster)
    made = api.create_namespaced_resource_claim(cluster.namespace, _claim("train", device_class))
    exactly = made.spec.devices.requests[0].exactly
    assert (exactly.allocation_mode, exactly.count) == ("ExactCount", 1)
    assert made.status.allocation is None
    # The main endpoint keeps status as it was; /status writes it.
    allocation = {
        "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0"}]},
    }
    ignored = api.patch_namespaced_resource_claim("train", cluster.namespace, {"status": {"allocation": allocation}})
    assert ignored.status.allocation is None
    written = api.patch_namespaced_resource_claim_status(
        "train", cluster.namespace, {"status": {"allocation": allocation}}
    )
    assert written.status.allocation.devices.results[0].device == "gpu-0"
    assert api.read_namespaced_resource_claim_status("train", cluster.namespace).status.allocation is not None


def test_a_resource_claim_spec_is_immutable(cluster: Cluster) -> None:
    api = k8s.ResourceV1Api(cluster.api)
    device_class = _class(cluster)
    api.create_namespaced_resource_claim(cluster.namespace, _claim("fixed", device_class))
    change = {"spec": {"devices": {"requests": [{"name": "other", "exactly": {"deviceClassName": device_class}}]}}}
    with pytest.raises(k8s.ApiException) as caught:
        api.patch_namespaced_resource_claim("fixed", cluster.namespace, change)
    body = json.loads(caught.value.body)
    assert (caught.value.status, body["reason"]) == (422, "Invalid")
    assert any(c["field"] == "spec" and "field is immutable" in c["message"] for c in body["details"]["causes"])


def test_a_claim_without_exactly_or_first_available_is_refused(cluster: Cluster) -> None:
    body = {"metadata": {"name": "empty"}, "spec": {"devices": {"requests": [{"name": "gpu"}]}}}
    with pytest.raises(k8s.ApiException) as caught:
        k8s.ResourceV1Api(cluster.api).create_namespaced_resource_claim(cluster.namespace, body)
    causes = json.loads(caught.value.body)["details"]["causes"]
    assert caught.value.status == 422
    assert {"field": "spec.devices.requests[0]", "reason": "FieldValueRequired"}.items() <= causes[0].items()


def test_a_watch_on_resource_claims_sees_them_come_and_go(cluster: Cluster) -> None:
    api = k8s.ResourceV1Api(cluster.api)
    device_class = _class(cluster)
    start = api.list_namespaced_resource_claim(cluster.namespace).metadata.resource_version
    api.create_namespaced_resource_claim(cluster.namespace, _claim("watched", device_class))
    api.delete_namespaced_resource_claim("watched", cluster.namespace)
    # The client's watch names the model V1ResourceClaim, which it ships as ResourceV1ResourceClaim.
    w = watch.Watch(return_type="ResourceV1ResourceClaim")
    seen = []
    for event in w.stream(
        api.list_namespaced_resource_claim, cluster.namespace, resource_version=start, timeout_seconds=10
    ):
        seen.append((event["type"], event["object"].metadata.name, event["object"].kind))
        if len(seen) == 2:
            break
    w.stop()
    assert seen == [("ADDED", "watched", "ResourceClaim"), ("DELETED", "watched", "ResourceClaim")]


def test_a_slice_without_driver_pool_or_node_is_refused(cluster: Cluster) -> None:
    body = {"metadata": {"name": cluster.name("bad-slice")}, "spec": {"pool": {"name": "p"}}}
    with pytest.raises(k8s.ApiException) as caught:
        k8s.ResourceV1Api(cluster.api).create_resource_slice(body)
    assert caught.value.status == 422
    fields = {c["field"] for c in json.loads(caught.value.body)["details"]["causes"]}
    assert {"spec.driver", "spec.pool.resourceSliceCount", "spec"} <= fields


def test_strict_field_validation_refuses_an_undeclared_device_class_field(cluster: Cluster) -> None:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": cluster.name("strict")},
        "spec": {"selector": [{"cel": {"expression": "true"}}]},
    }
    with pytest.raises(k8s.ApiException) as caught:
        objects.request(
            cluster.api, "POST", "/apis/resource.k8s.io/v1/deviceclasses", body, query=[("fieldValidation", "Strict")]
        )
    assert caught.value.status == 400
    assert 'unknown field "spec.selector"' in json.loads(caught.value.body)["message"]


# ---------------------------------------------------------------- autoscaling
def test_an_hpa_is_defaulted_and_reads_the_same_through_v1(cluster: Cluster) -> None:
    v2, v1 = k8s.AutoscalingV2Api(cluster.api), k8s.AutoscalingV1Api(cluster.api)
    made = v2.create_namespaced_horizontal_pod_autoscaler(cluster.namespace, _hpa("web", maxReplicas=5))
    assert made.spec.min_replicas == 1
    cpu = made.spec.metrics[0]
    assert (cpu.type, cpu.resource.name, cpu.resource.target.average_utilization) == ("Resource", "cpu", 80)
    old = v1.read_namespaced_horizontal_pod_autoscaler("web", cluster.namespace)
    assert old.api_version == "autoscaling/v1"
    assert (old.spec.min_replicas, old.spec.max_replicas, old.spec.target_cpu_utilization_percentage) == (1, 5, 80)
    assert old.status.desired_replicas == 0
    listed = v1.list_namespaced_horizontal_pod_autoscaler(cluster.namespace).items
    assert [h.spec.target_cpu_utilization_percentage for h in listed] == [80]


def test_v1_keeps_the_metrics_it_cannot_say_in_an_annotation(cluster: Cluster) -> None:
    v2, v1 = k8s.AutoscalingV2Api(cluster.api), k8s.AutoscalingV1Api(cluster.api)
    memory = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}},
    }
    cpu = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
    v2.create_namespaced_horizontal_pod_autoscaler(
        cluster.namespace, _hpa("mixed", maxReplicas=4, metrics=[memory, cpu])
    )
    old = v1.read_namespaced_horizontal_pod_autoscaler("mixed", cluster.namespace)
    assert old.spec.target_cpu_utilization_percentage == 60
    kept = json.loads(old.metadata.annotations["autoscaling.alpha.kubernetes.io/metrics"])
    assert kept == [{"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "1Gi"}}]
    # A v1 client edits what it knows and writes the object back: nothing else is lost.
    old.spec.target_cpu_utilization_percentage = 70
    v1.replace_namespaced_horizontal_pod_autoscaler("mixed", cluster.namespace, old)
    now = v2.read_namespaced_horizontal_pod_autoscaler("mixed", cluster.namespace)
    by_name = {m.resource.name: m.resource.target for m in now.spec.metrics}
    assert by_name["memory"].average_value == "1Gi" and by_name["cpu"].average_utilization == 70
    assert "autoscaling.alpha.kubernetes.io/metrics" not in (now.metadata.annotations or {})


def test_an_hpa_status_is_written_through_the_subresource(cluster: Cluster) -> None:
    v2, v1 = k8s.AutoscalingV2Api(cluster.api), k8s.AutoscalingV1Api(cluster.api)
    v2.create_namespaced_horizontal_pod_autoscaler(cluster.namespace, _hpa("scaled", maxReplicas=3))
    current = {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}
    status = {"status": {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [current]}}
    written = v2.patch_namespaced_horizontal_pod_autoscaler_status("scaled", cluster.namespace, status)
    assert (written.status.current_replicas, written.status.desired_replicas) == (2, 3)
    old = v1.read_namespaced_horizontal_pod_autoscaler("scaled", cluster.namespace)
    assert (old.status.current_replicas, old.status.current_cpu_utilization_percentage) == (2, 42)


def test_a_bad_hpa_is_refused_with_the_fields_named(cluster: Cluster) -> None:
    body = _hpa("bad", minReplicas=3, maxReplicas=2)
    body["spec"]["scaleTargetRef"] = {"kind": "Deployment"}
    with pytest.raises(k8s.ApiException) as caught:
        k8s.AutoscalingV2Api(cluster.api).create_namespaced_horizontal_pod_autoscaler(cluster.namespace, body)
    assert caught.value.status == 422
    causes = {c["field"]: c["message"] for c in json.loads(caught.value.body)["details"]["causes"]}
    assert causes["spec.maxReplicas"] == "Invalid value: 2: must be greater than or equal to `minReplicas`"
    assert causes["spec.scaleTargetRef.name"] == "Required value"


# ---------------------------------------------------------------- kubectl
def test_kubectl_gets_hpas_with_their_columns(cluster: Cluster, cluster_kubectl: Any) -> None:
    k8s.AutoscalingV2Api(cluster.api).create_namespaced_horizontal_pod_autoscaler(
        cluster.namespace, _hpa("web", maxReplicas=7)
    )
    lines = cluster_kubectl("get", "hpa").stdout.splitlines()
    assert lines[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert lines[1].split()[:6] == ["web", "Deployment/web", "cpu:", "<unknown>/80%", "1", "7"]
    as_json = json.loads(cluster_kubectl("get", "hpa", "web", "-o", "json").stdout)
    assert as_json["apiVersion"] == "autoscaling/v2"


def test_kubectl_lists_the_dra_resources(cluster_kubectl: Any) -> None:
    lines = cluster_kubectl("api-resources", "--api-group=resource.k8s.io", "--no-headers").stdout.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines}
    assert rows["deviceclasses"] == ["resource.k8s.io/v1", "false", "DeviceClass"]
    assert rows["resourceclaims"] == ["resource.k8s.io/v1", "true", "ResourceClaim"]
    assert rows["resourceclaimtemplates"] == ["resource.k8s.io/v1", "true", "ResourceClaimTemplate"]
    assert rows["resourceslices"] == ["resource.k8s.io/v1", "false", "ResourceSlice"]


def test_kubectl_applies_and_gets_a_claim_template(cluster: Cluster, cluster_kubectl: Any) -> None:
    device_class = _class(cluster)
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "per-pod"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}}},
    }
    cluster_kubectl("apply", "-f", "-", input=json.dumps(template))
    made = k8s.ResourceV1Api(cluster.api).read_namespaced_resource_claim_template("per-pod", cluster.namespace)
    assert made.spec.spec.devices.requests[0].exactly.count == 1
    assert cluster_kubectl("get", "resourceclaimtemplates").stdout.split()[:3] == ["NAME", "AGE", "per-pod"]


def test_a_watch_and_a_write_through_v1_agree(cluster: Cluster) -> None:
    """A v1 watcher sees a v2 write in the v1 shape."""
    v2, v1 = k8s.AutoscalingV2Api(cluster.api), k8s.AutoscalingV1Api(cluster.api)
    start = v1.list_namespaced_horizontal_pod_autoscaler(cluster.namespace).metadata.resource_version
    seen: list[Any] = []
    done = threading.Event()

    def follow() -> None:
        w = watch.Watch()
        for event in w.stream(
            v1.list_namespaced_horizontal_pod_autoscaler, cluster.namespace, resource_version=start, timeout_seconds=10
        ):
            seen.append(event["object"])
            break
        w.stop()
        done.set()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    cpu = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 55}}}
    v2.create_namespaced_horizontal_pod_autoscaler(cluster.namespace, _hpa("watched", maxReplicas=2, metrics=[cpu]))
    assert done.wait(30)
    assert seen[0].api_version == "autoscaling/v1" and seen[0].spec.target_cpu_utilization_percentage == 55
