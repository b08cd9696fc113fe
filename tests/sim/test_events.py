"""Events: core/v1 and events.k8s.io/v1 over the same objects, their expiry, and the controllers'.

Covers: a core Event reads through events.k8s.io with ``regarding``/``note``/
``reportingController`` and the ``deprecated*`` mirrors (same uid and resourceVersion), and one
written through events.k8s.io reads as core; field selectors in both vocabularies; the
events.k8s.io/v1 validation a real server applies on create and update (422 with the real
texts); Events expire an hour after their last write, in cluster time; the Deployment and
ReplicaSet controllers record ``ScalingReplicaSet`` / ``SuccessfulCreate`` as client-go's
recorder does, a repeat counting up; ``kubectl get events`` and ``kubectl events`` list them.
Reference: kubernetes:pkg/apis/events/v1/conversion.go, pkg/apis/core/validation/events.go,
client-go:tools/record/event.go.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from shared.sim import SimServer
from tests.sim import workloadkit as kit
from tests.sim.workloadkit import cluster_nodes_fixture  # noqa: F401 - the fixture

EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


def _raw(api: Any, path: str, query: list[tuple[str, str]] | None = None) -> Any:
    response = api.call_api(
        path, "GET", query_params=query or [], auth_settings=["BearerToken"], _preload_content=False
    )[0]
    return json.loads(response.data)


def _core_event(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "trainer", "uid": "u-1", "apiVersion": "v1"},
        "reason": "BackOff",
        "message": "Back-off restarting failed container",
        "source": {"component": "kubelet", "host": "node-000"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:05:00Z",
        "count": 4,
        "type": "Warning",
        **extra,
    }


def _new_event(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/checker",
        "reportingInstance": "checker-7f9",
        "action": "Check",
        "reason": "Checked",
        "regarding": {"kind": "Node", "name": "node-001", "apiVersion": "v1"},
        "note": "GPU 3 passed",
        "type": "Normal",
        **extra,
    }


def test_a_core_event_reads_through_events_k8s_io_with_its_fields_mapped(sim: SimServer, api_client: Any) -> None:
    core = k8s.CoreV1Api(api_client).create_namespaced_event("default", _core_event("trainer.1"))
    new = _raw(api_client, f"{EVENTS_V1}/trainer.1")
    assert new["apiVersion"] == "events.k8s.io/v1" and new["kind"] == "Event"
    assert new["metadata"]["uid"] == core.metadata.uid
    assert new["metadata"]["resourceVersion"] == core.metadata.resource_version
    assert new["regarding"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "trainer",
        "uid": "u-1",
        "apiVersion": "v1",
    }
    assert new["note"] == "Back-off restarting failed container"
    assert new["deprecatedSource"] == {"component": "kubelet", "host": "node-000"}
    assert (new["deprecatedFirstTimestamp"], new["deprecatedLastTimestamp"], new["deprecatedCount"]) == (
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:05:00Z",
        4,
    )
    assert not {"involvedObject", "message", "source", "count", "firstTimestamp"} & set(new)
    listed = _raw(api_client, EVENTS_V1)
    assert listed["kind"] == "EventList" and [e["note"] for e in listed["items"]] == [new["note"]]


def test_an_event_written_through_events_k8s_io_reads_as_core(sim: SimServer, api_client: Any) -> None:
    created = k8s.EventsV1Api(api_client).create_namespaced_event("default", _new_event("node-001.check"))
    assert (created.regarding.name, created.note, created.reporting_controller) == (
        "node-001",
        "GPU 3 passed",
        "example.com/checker",
    )
    core = k8s.CoreV1Api(api_client).read_namespaced_event("node-001.check", "default")
    assert (core.involved_object.kind, core.involved_object.name, core.message) == ("Node", "node-001", "GPU 3 passed")
    assert (core.reporting_component, core.reporting_instance, core.action) == (
        "example.com/checker",
        "checker-7f9",
        "Check",
    )
    assert core.event_time == datetime(2026, 1, 1, tzinfo=UTC) and core.count is None
    by_core = k8s.CoreV1Api(api_client).list_namespaced_event("default", field_selector="involvedObject.name=node-001")
    assert [e.metadata.name for e in by_core.items] == ["node-001.check"]
    for selector in ("regarding.name=node-001", "reportingController=example.com/checker", "regarding.kind=Node"):
        found = _raw(api_client, EVENTS_V1, [("fieldSelector", selector)])
        assert [e["metadata"]["name"] for e in found["items"]] == ["node-001.check"], selector
    assert _raw(api_client, EVENTS_V1, [("fieldSelector", "regarding.name=other")])["items"] == []


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"eventTime": None}, 'Event.events.k8s.io "bad" is invalid: eventTime: Required value'),
        (
            {"reportingController": None, "reportingInstance": None},
            'Event.events.k8s.io "bad" is invalid: [reportingController: Required value, '
            "reportingInstance: Required value]",
        ),
        ({"action": None}, 'Event.events.k8s.io "bad" is invalid: action: Required value'),
        ({"type": "Odd"}, 'Event.events.k8s.io "bad" is invalid: type: Invalid value: "": has invalid value: Odd'),
        ({"deprecatedCount": 3}, 'Event.events.k8s.io "bad" is invalid: count: Invalid value: "": needs to be unset'),
        (
            {"series": {"count": 1, "lastObservedTime": "2026-01-01T00:00:00.000000Z"}},
            'Event.events.k8s.io "bad" is invalid: series.count: Invalid value: "": should be at least 2',
        ),
    ],
    ids=["no-event-time", "no-reporter", "no-action", "bad-type", "deprecated-count", "short-series"],
)
def test_events_k8s_io_refuses_what_its_validation_refuses(
    sim: SimServer, api_client: Any, changes: dict[str, Any], message: str
) -> None:
    body = {k: v for k, v in {**_new_event("bad"), **changes}.items() if v is not None}
    with pytest.raises(ApiException) as caught:
        k8s.EventsV1Api(api_client).create_namespaced_event("default", body)
    assert caught.value.status == 422
    answer = json.loads(caught.value.body)
    assert (answer["reason"], answer["message"]) == ("Invalid", message)
    assert answer["details"]["group"] == "events.k8s.io"


def test_an_event_s_note_cannot_change_through_events_k8s_io(sim: SimServer, api_client: Any) -> None:
    events = k8s.EventsV1Api(api_client)
    events.create_namespaced_event("default", _new_event("fixed"))
    with pytest.raises(ApiException) as caught:
        events.patch_namespaced_event("fixed", "default", {"note": "something else"})
    assert caught.value.status == 422
    assert json.loads(caught.value.body)["message"] == (
        'Event.events.k8s.io "fixed" is invalid: message: Invalid value: "something else": field is immutable'
    )
    series = {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}}
    patched = events.patch_namespaced_event("fixed", "default", series)
    assert patched.series.count == 2 and patched.note == "GPU 3 passed"


def test_events_expire_an_hour_after_their_last_write(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_event("default", _core_event("old"))
    core.create_namespaced_event("default", _core_event("touched"))
    sim.advance(1800)
    core.patch_namespaced_event("touched", "default", {"count": 5})
    sim.advance(1799)
    assert {e.metadata.name for e in core.list_namespaced_event("default").items} >= {"old", "touched"}
    sim.advance(2)
    names = {e.metadata.name for e in core.list_namespaced_event("default").items}
    assert "old" not in names and "touched" in names
    sim.advance(1800)
    assert "touched" not in {e.metadata.name for e in core.list_namespaced_event("default").items}


def test_controllers_record_events_as_the_legacy_recorder_does(
    sim: SimServer, api_client: Any, cluster_nodes: list[str]
) -> None:
    apps = k8s.AppsV1Api(api_client)
    apps.create_namespaced_deployment("default", kit.deployment("web", replicas=1))
    sim.advance(kit.POD_START + 1)
    for replicas in (2, 1, 2):
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": replicas}})
        sim.advance(60)
    (rs,) = apps.list_namespaced_replica_set("default").items
    deploy = apps.read_namespaced_deployment("web", "default")
    scaled = kit.events(api_client, kind="Deployment", name="web")
    counts = {e.message: e.count for e in scaled}
    assert counts == {
        f"Scaled up replica set {rs.metadata.name} from 0 to 1": 1,
        f"Scaled up replica set {rs.metadata.name} from 1 to 2": 2,
        f"Scaled down replica set {rs.metadata.name} from 2 to 1": 1,
    }
    repeated = next(e for e in scaled if e.count == 2)
    assert (repeated.last_timestamp - repeated.first_timestamp).total_seconds() == 120
    first = scaled[0]
    assert first.metadata.name.startswith("web.") and int(first.metadata.name.split(".", 1)[1], 16) > 0
    assert (first.type, first.reason, first.source.component) == (
        "Normal",
        "ScalingReplicaSet",
        "deployment-controller",
    )
    assert (first.reporting_component, first.reporting_instance, first.event_time) == (
        "deployment-controller",
        "",
        None,
    )
    assert (first.involved_object.kind, first.involved_object.uid) == ("Deployment", deploy.metadata.uid)
    created = kit.events(api_client, kind="ReplicaSet", name=rs.metadata.name)
    assert {e.reason for e in created} == {"SuccessfulCreate", "SuccessfulDelete"}
    assert all(e.source.component == "replicaset-controller" for e in created)


def test_kubectl_lists_events(sim: SimServer, kubectl: Any, api_client: Any, cluster_nodes: list[str]) -> None:
    k8s.AppsV1Api(api_client).create_namespaced_deployment("default", kit.deployment("web", replicas=1))
    sim.advance(kit.POD_START + 1)
    listed = kubectl("get", "events")
    # The server's Event table, as kubectl prints it on a real cluster (Name is a wide-only column).
    assert listed.stdout.split("\n")[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert "deployment/web" in listed.stdout
    shown = kubectl("events", "--for", "deployment/web")
    assert "ScalingReplicaSet" in shown.stdout and "Scaled up replica set web-" in shown.stdout
    described = kubectl("describe", "deployment", "web")
    assert "ScalingReplicaSet" in described.stdout
