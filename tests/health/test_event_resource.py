"""The HealthEvent custom resource comes from the one HealthEvent model.

Covers: every field of ``HealthEvent`` is in the CRD's spec schema and nothing else is, the enums
by name and the time as a string (the wire shape); an event published and read back is the same
event, with the server checking it against that schema; listing again validates only the events
written since (a new resourceVersion), and what it returns is what a fresh parse gives.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from shared.health import event as hevent
from shared.health import resource
from shared.kube import crds


def test_the_crd_spec_is_the_event_models_wire_shape() -> None:
    spec = crds.document(resource.RESOURCE)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert list(spec["properties"]) == list(hevent.HealthEvent.model_fields)
    assert spec["properties"]["recommendedAction"]["enum"] == list(hevent.RecommendedAction.__members__)
    assert spec["properties"]["recommendedAction"]["default"] == "NONE"
    assert spec["properties"]["processingStrategy"]["enum"] == list(hevent.ProcessingStrategy.__members__)
    assert spec["properties"]["generatedTimestamp"] == {"type": "string", "nullable": True}
    assert spec["required"] == ["agent", "checkName", "nodeName"]


def test_a_published_event_reads_back_as_the_same_event(api_client: Any) -> None:
    resource.install(api_client)
    sent = hevent.parse(
        {
            "agent": "gpu-health-monitor",
            "checkName": "GpuXidError",
            "nodeName": "node-001",
            "isFatal": True,
            "recommendedAction": "RESTART_BM",
            "errorCode": ["79"],
            "entitiesImpacted": [{"entityType": "GPU", "entityValue": "0"}],
            "processingStrategy": "STORE_ONLY",
        }
    )
    moment = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)
    published = resource.publish(api_client, [sent, sent], now=lambda: moment)
    assert (len(published.created), len(published.duplicates)) == (1, 1)
    (stored,) = resource.list_events(api_client)
    assert stored.event == sent.model_copy(update={"generatedTimestamp": moment})
    assert stored.phase is None and stored.name == published.created[0]


def test_listing_again_validates_only_what_was_written_since(api_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    resource.install(api_client)
    events = [
        hevent.parse({"agent": "a", "checkName": "GpuXidError", "nodeName": f"memo-{n}", "isFatal": True})
        for n in range(3)
    ]
    resource.publish(api_client, events, now=lambda: datetime(2026, 3, 1, tzinfo=UTC))
    mine = f"{resource.NODE_LABEL} in (memo-0,memo-1,memo-2)"
    first = resource.list_events(api_client, selector=mine)
    parses: list[object] = []
    real = hevent.HealthEvent.model_validate

    def counted(data: Any, **kwargs: Any) -> hevent.HealthEvent:
        parses.append(data)
        return real(data, **kwargs)

    monkeypatch.setattr(hevent.HealthEvent, "model_validate", counted)
    assert resource.list_events(api_client, selector=mine) == first
    assert parses == []
    resource.set_status(api_client, first[0].name, resource.Status(phase="Quarantined"))
    again = {s.name: s for s in resource.list_events(api_client, selector=mine)}
    assert len(parses) == 1  # the one written since: a new resourceVersion
    assert again[first[0].name].status.phase == "Quarantined" and again[first[0].name].phase == "Quarantined"
    assert again[first[1].name] == first[1]


def test_a_kept_parse_is_used_only_for_the_same_content(api_client: Any) -> None:
    """Another cluster (or a simulated one with the same seed) may repeat a uid and resourceVersion."""
    resource.install(api_client)
    sent = hevent.parse({"agent": "a", "checkName": "GpuXidError", "nodeName": "twin-0", "isFatal": True})
    resource.publish(api_client, [sent], now=lambda: datetime(2026, 3, 1, tzinfo=UTC))
    selector = f"{resource.NODE_LABEL}=twin-0"
    (stored,) = resource.list_events(api_client, selector=selector)
    other = stored.event.model_copy(update={"nodeName": "elsewhere", "isFatal": False})
    for key, (spec, status, _, parsed_status) in list(resource._PARSED.items()):
        if spec.get("nodeName") == "twin-0":  # the same key, held for another cluster's event
            resource._PARSED[key] = ({**spec, "nodeName": "elsewhere"}, status, other, parsed_status)
    (again,) = resource.list_events(api_client, selector=selector)
    assert again.event == stored.event and again.event.nodeName == "twin-0"
