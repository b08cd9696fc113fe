"""The circuit breaker's stored window and the GPU node count its threshold comes from.

The window is a ConfigMap key, and a ConfigMap holds 1 MiB: at the fleet sizes the architecture
notes describe (25,000 nodes in a window of 50 % of 50,000) the old ISO-time encoding no longer
fit, and a write the API server refuses would fail every admission. The count was listed once per
process, so a fleet that grew kept the threshold of the day the controller started.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from shared import clock, nodes
from shared.health import breaker, controller, settings
from shared.kube import informer, rest
from tests import waiting


@pytest.fixture()
def api(gpu_sim: Any, api_client: Any) -> Iterator[Any]:
    gpu_sim.add_gpu_nodes(4)
    controller.ensure_namespace(api_client, "nvsentinel")
    yield api_client


def _breaker(api: Any, *, node_cache: informer.Informer | None = None, **fields: Any) -> breaker.ConfigMapBreaker:
    return breaker.ConfigMapBreaker(
        api,
        namespace="nvsentinel",
        settings=settings.CircuitBreaker(**fields),
        gpu_node_label="nvidia.com/gpu.present=true",
        now=clock.for_api_client(api).now,
        node_cache=node_cache,
    )


def _stored_window(api: Any) -> str:
    cm = rest.get(api, rest.core_path("configmaps", "nvsentinel", breaker.NAME))
    return str(cm["data"]["window"])


def test_the_window_is_stored_compactly_and_older_iso_times_are_still_read() -> None:
    window = {"node-b": 1_764_000_000_123, "node-a": 1_764_000_001_000}
    text = breaker.encode_window(window)
    assert text == '{"node-a":1764000001000,"node-b":1764000000123}'
    assert breaker.decode_window(text) == window
    legacy = '{"node-a": "2025-11-24T16:00:01.000000Z", "node-b": 7, "node-c": "not a time", "node-d": true}'
    assert breaker.decode_window(legacy) == {"node-a": 1_764_000_001_000, "node-b": 7}
    assert breaker.decode_window("[1, 2]") == {} == breaker.decode_window("{") == breaker.decode_window(None)


def test_a_window_that_would_not_fit_its_configmap_trips_and_keeps_what_fits(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    two = len(breaker.encode_window({"node-000": 1_764_000_000_000, "node-001": 1_764_000_000_000}))
    monkeypatch.setattr(breaker, "WINDOW_MAX_BYTES", two + 10)  # room for two entries, not three
    b = _breaker(api, percentage=100)
    assert [b.reserve(n).admitted for n in ("node-000", "node-001")] == [True, True]
    assert b.reserve("node-000").admitted  # a node already in the window is admitted again
    assert not b.reserve("node-002").admitted
    status = b.status()
    assert status.state == breaker.TRIPPED and sorted(status.recent) == ["node-000", "node-001"]
    assert len(_stored_window(api)) <= breaker.WINDOW_MAX_BYTES


def test_without_an_informer_the_gpu_count_is_listed_again_after_a_minute(
    api: Any, gpu_sim: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = _breaker(api, percentage=50)
    assert b.gpu_nodes() == 4 and b.status().threshold == 2
    gpu_sim.add_gpu_nodes(4)
    assert b.gpu_nodes() == 4  # within the minute: the count listed before
    monkeypatch.setattr(breaker, "GPU_COUNT_SECONDS", 0.0)
    assert b.gpu_nodes() == 8 and b.status().threshold == 4


def test_with_the_node_informer_a_growing_fleet_raises_the_threshold_without_a_list(api: Any, gpu_sim: Any) -> None:
    cache = informer.Informer(api, rest.core_path("nodes"))
    b = _breaker(api, node_cache=cache, percentage=50)
    stop = threading.Event()
    thread = cache.start(stop)
    try:
        assert cache.wait_synced(60)
        assert b.gpu_nodes() == 4
        gpu_sim.audit.clear()
        gpu_sim.add_gpu_nodes(6)
        waiting.until(lambda: b.gpu_nodes() == 10, what="the informer to see the new nodes")
        assert b.status().threshold == 5
        assert not [r for r in gpu_sim.audit.records() if r.verb == "list" and r.resource == "nodes"]
    finally:
        stop.set()
        thread.join(10)


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("nvidia.com/gpu.present=true", {"nvidia.com/gpu.present": "true"}, True),
        ("nvidia.com/gpu.present==true", {"nvidia.com/gpu.present": "false"}, False),
        ("nvidia.com/gpu.present", {"nvidia.com/gpu.present": ""}, True),
        ("nvidia.com/gpu.present", {"other": "true"}, False),
        ("", {}, True),
    ],
)
def test_the_simple_gpu_selectors_are_matched_in_memory(selector: str, labels: dict[str, str], matches: bool) -> None:
    match = breaker._label_match(selector)
    assert match is not None and match({"metadata": {"labels": labels}}) is matches


def test_any_other_gpu_selector_is_left_to_the_api_server_also_with_an_informer(api: Any, gpu_sim: Any) -> None:
    """Set-based and negated selectors are not parsed here: the count comes from a list the API
    server filters (a wrong count would move the breaker's threshold), the informer unused."""
    selector = "nvidia.com/gpu.present in (true),!nvsentinel.test/excluded"
    assert breaker._label_match(selector) is None
    nodes.update(api, "node-000", lambda node: nodes.set_map(nodes.labels(node), {"nvsentinel.test/excluded": ""}))
    cache = informer.Informer(api, rest.core_path("nodes"))
    b = breaker.ConfigMapBreaker(
        api,
        namespace="nvsentinel",
        settings=settings.CircuitBreaker(percentage=50),
        gpu_node_label=selector,
        now=clock.for_api_client(api).now,
        node_cache=cache,
    )
    stop = threading.Event()
    thread = cache.start(stop)
    try:
        assert cache.wait_synced(60)
        gpu_sim.audit.clear()
        assert b.gpu_nodes() == 3 and b.status().threshold == 2  # half of 3, rounded up
        lists = [r for r in gpu_sim.audit.records() if r.verb == "list" and r.resource == "nodes"]
        assert lists, "counted without asking the API server"
    finally:
        stop.set()
        thread.join(10)
