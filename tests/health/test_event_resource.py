"""The HealthEvent custom resource comes from the one HealthEvent model.

Covers: every field of ``HealthEvent`` is in the CRD's spec schema and nothing else is, the enums
by name and the time as a string (the wire shape); an event published and read back is the same
event, with the server checking it against that schema.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

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
