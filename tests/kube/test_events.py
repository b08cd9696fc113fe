"""The Event recorder (``shared.kube.events``) against the simulated API server over real HTTP.

Covers: the Event's shape as client-go's legacy recorder writes it (``client-go:tools/record/event.go``
``makeEvent``: ``<name>.<hex nanoseconds>``, the object's namespace or ``default`` for a cluster-scoped
one, ``involvedObject`` with the object's real uid, source and reporting fields, ``eventTime`` null),
accepted under ``fieldValidation=Strict`` without warnings; timestamps and names from the given clock
(virtual time); a repeat within 10 minutes is one PATCH of ``count`` and ``lastTimestamp``
(``events_cache.go`` EventCorrelator), a repeat after the window, another message or another object is
a new Event, an Event deleted meanwhile is created again; Events at one paused instant get distinct
names; best effort: a 403 (an identity without events permission) and a server failing past the
retries return False and log one warning, later failures only at debug; mistakes in the caller (type,
reason, an object without uid) raise; names always fit 253 characters (property).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.kube import client, events, rest, retry
from shared.sim import SimServer

T0 = datetime(2031, 3, 1, 12, 0, 0, 250_000, tzinfo=UTC)
"""Later than any other clock of the test run: names come from a counter that never goes back."""
T0_NANOS = 1930132800_250_000_000
AUDIT_SECONDS = 60.0
FAST = retry.RetryPolicy(attempts=3, base_delay=0.0, max_delay=0.0, jitter=0.0)


class Ticker:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


@pytest.fixture()
def node(api_client: Any) -> dict[str, Any]:
    return rest.create(
        api_client,
        rest.core_path("nodes"),
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node-7"}},
    )


@pytest.fixture()
def config_map(api_client: Any) -> dict[str, Any]:
    return rest.create(
        api_client,
        rest.core_path("configmaps", "default"),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"}},
    )


def recorder(api: Any, ticker: Ticker, **kwargs: Any) -> events.Recorder:
    return events.Recorder(api, component="unit-controller", now=ticker.now, instance="unit-pod-0", **kwargs)


def stored(api: Any, namespace: str = "default") -> list[dict[str, Any]]:
    return rest.list_items(api, rest.core_path("events", namespace))


def event_requests(sim: SimServer, count: int) -> list[tuple[str, int]]:
    """The writes to events (reads by the test left out), once ``count`` are in the audit: the server
    appends a request's line after it has answered, so the last one may lag behind the answer."""
    deadline = time.monotonic() + AUDIT_SECONDS
    while True:
        found = [
            (r.verb, r.code) for r in sim.audit.records() if r.resource == "events" and r.verb not in ("get", "list")
        ]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def test_an_event_about_a_node_is_written_as_client_gos_recorder_writes_it(
    sim: SimServer, api_client: Any, node: dict[str, Any]
) -> None:
    assert recorder(api_client, Ticker()).warning(node, "DrainFailed", "eviction refused")
    [event] = stored(api_client)
    meta = event["metadata"]
    assert meta["namespace"] == "default"
    assert re.fullmatch(r"gpu-node-7\.[0-9a-f]{16}", meta["name"])
    assert 0 <= int(meta["name"].split(".")[1], 16) - T0_NANOS < 1_000_000  # T0, or just after an earlier name
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Node",
        "name": "gpu-node-7",
        "uid": node["metadata"]["uid"],
        "resourceVersion": node["metadata"]["resourceVersion"],
    }
    assert {k: event.get(k) for k in ("type", "reason", "message", "count", "eventTime")} == {
        "type": "Warning",
        "reason": "DrainFailed",
        "message": "eviction refused",
        "count": 1,
        "eventTime": None,
    }
    assert event["source"] == {"component": "unit-controller", "host": "unit-pod-0"}
    assert (event["reportingComponent"], event["reportingInstance"]) == ("unit-controller", "unit-pod-0")
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2031-03-01T12:00:00Z"
    assert event_requests(sim, 1) == [("create", 201)]
    assert [r.warnings for r in sim.audit.records() if r.resource == "events" and r.verb == "create"] == [()]


def test_the_written_event_passes_strict_field_validation(api_client: Any, node: dict[str, Any]) -> None:
    """``fieldValidation=Strict`` turns an unknown or duplicate field into a 400 (apiserver:
    ``pkg/endpoints/handlers/create.go``): a copy of our Event must be accepted as it is."""
    recorder(api_client, Ticker()).normal(node, "NodeQuarantined", "cordoned")
    [event] = stored(api_client)
    copy = {k: v for k, v in event.items() if k != "metadata"}
    copy["metadata"] = {"name": event["metadata"]["name"] + "-copy", "namespace": "default"}
    response = api_client.call_api(
        rest.core_path("events", "default"),
        "POST",
        query_params=[("fieldValidation", "Strict")],
        header_params={"Accept": "application/json", "Content-Type": "application/json"},
        body=copy,
        auth_settings=["BearerToken"],
        _return_http_data_only=False,
        _preload_content=False,
    )
    body, status, headers = response
    body.read()
    body.release_conn()
    assert status == 201
    assert "Warning" not in headers


def test_an_event_about_a_namespaced_object_goes_to_its_namespace(
    api_client: Any, config_map: dict[str, Any], sim: SimServer
) -> None:
    rest.create(
        api_client,
        rest.core_path("namespaces"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    )
    pod = rest.create(
        api_client,
        rest.core_path("pods", "team"),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "trainer", "namespace": "team"},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        },
    )
    listed = rest.list_items(api_client, rest.core_path("pods", "team"))[0]
    for field in ("kind", "apiVersion"):  # list items carry neither
        listed.pop(field, None)
    assert recorder(api_client, Ticker()).normal(listed, "Evicted", "evicted", kind="Pod", api_version="v1")
    [event] = stored(api_client, "team")
    assert event["involvedObject"]["namespace"] == "team"
    assert event["involvedObject"]["uid"] == pod["metadata"]["uid"]
    assert stored(api_client) == []


def test_a_repeat_within_ten_minutes_patches_count_and_last_timestamp(
    sim: SimServer, api_client: Any, node: dict[str, Any]
) -> None:
    ticker = Ticker()
    rec = recorder(api_client, ticker)
    rec.normal(node, "AwaitingPodCompletion", "Waiting for following pods to finish: [team/job]")
    ticker.advance(30)
    rec.normal(node, "AwaitingPodCompletion", "Waiting for following pods to finish: [team/job]")
    ticker.advance(9 * 60)  # 9m30s after the first: still within 10 minutes of the last record
    rec.normal(node, "AwaitingPodCompletion", "Waiting for following pods to finish: [team/job]")
    [event] = stored(api_client)
    assert event["count"] == 3
    assert (event["firstTimestamp"], event["lastTimestamp"]) == ("2031-03-01T12:00:00Z", "2031-03-01T12:09:30Z")
    assert event_requests(sim, 3) == [("create", 201), ("patch", 200), ("patch", 200)]


@pytest.mark.parametrize(
    ("later", "reason", "message", "other_object"),
    [
        (601, "DrainStarted", "moving 1 pod(s)", False),
        (1, "DrainStarted", "moving 2 pod(s)", False),
        (1, "DrainCompleted", "moving 1 pod(s)", False),
        (1, "DrainStarted", "moving 1 pod(s)", True),
    ],
    ids=["after-the-window", "another-message", "another-reason", "another-object"],
)
def test_anything_but_a_recent_identical_repeat_is_a_new_event(
    sim: SimServer,
    api_client: Any,
    node: dict[str, Any],
    config_map: dict[str, Any],
    later: float,
    reason: str,
    message: str,
    other_object: bool,
) -> None:
    ticker = Ticker()
    rec = recorder(api_client, ticker)
    rec.normal(node, "DrainStarted", "moving 1 pod(s)")
    ticker.advance(later)
    rec.normal(config_map if other_object else node, reason, message)
    assert sorted(e["count"] for e in stored(api_client)) == [1, 1]
    assert event_requests(sim, 2) == [("create", 201), ("create", 201)]


def test_an_event_deleted_meanwhile_is_created_again(sim: SimServer, api_client: Any, node: dict[str, Any]) -> None:
    ticker = Ticker()
    rec = recorder(api_client, ticker)
    rec.normal(node, "NodeQuarantined", "cordoned")
    [first] = stored(api_client)
    rest.delete(api_client, rest.core_path("events", "default", first["metadata"]["name"]))
    ticker.advance(5)
    assert rec.normal(node, "NodeQuarantined", "cordoned")
    [again] = stored(api_client)
    assert again["count"] == 1 and again["metadata"]["name"] != first["metadata"]["name"]
    assert [v for v, _ in event_requests(sim, 4)] == ["create", "delete", "patch", "create"]


def test_events_at_one_paused_instant_get_distinct_names(api_client: Any, node: dict[str, Any]) -> None:
    ticker = Ticker()  # never advanced: a paused virtual clock
    first, second = recorder(api_client, ticker), recorder(api_client, ticker)
    for rec in (first, second):
        assert rec.normal(node, "DrainStarted", "moving 1 pod(s)")
        assert rec.normal(node, "DrainCompleted", "no pod left to move")
    names = [e["metadata"]["name"] for e in stored(api_client)]
    assert len(set(names)) == 4


def test_timestamps_follow_the_clusters_virtual_clock(sim: SimServer, api_client: Any, node: dict[str, Any]) -> None:
    from shared import clock

    sim.vclock.set_speed(0)
    sim.advance(3600 * 24 * 3)  # three virtual days ahead of the wall clock
    virtual = clock.for_api_client(api_client, max_age=0)
    events.Recorder(api_client, component="unit-controller", now=virtual.now).normal(node, "NodeReturned", "back")
    [event] = stored(api_client)
    assert event["firstTimestamp"] == sim.vclock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    assert datetime.fromisoformat(event["firstTimestamp"]) > datetime.now(UTC) + timedelta(days=2)


# ------------------------------------------------------------------ best effort
@pytest.fixture()
def no_events_identity(sim_identity: Callable[[str, str], Path]) -> Iterator[Any]:
    """A ServiceAccount that may do nothing at all (every request is a real 403)."""
    api = client.new_client(kubeconfig=sim_identity("default", "no-events"))
    try:
        yield api
    finally:
        client.close(api)


def test_a_forbidden_event_returns_false_and_warns_once(
    sim: SimServer, no_events_identity: Any, node: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    rec = recorder(no_events_identity, Ticker(), policy=FAST)
    with caplog.at_level(logging.DEBUG, logger="shared.kube.events"):
        assert rec.warning(node, "RemediationFailed", "no automatic remediation") is False
        assert rec.warning(node, "RemediationFailed", "no automatic remediation") is False
    levels = [r.levelname for r in caplog.records if r.name == "shared.kube.events"]
    assert levels == ["WARNING", "DEBUG"]
    assert "RemediationFailed" in caplog.records[0].getMessage()
    assert "forbidden" in caplog.records[0].getMessage()
    assert event_requests(sim, 2) == [("create", 403), ("create", 403)]


def test_a_server_failing_past_the_retries_returns_false_and_a_later_success_warns_anew(
    sim: SimServer, api_client: Any, node: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    rec = recorder(api_client, Ticker(), policy=FAST)
    sim.faults.inject(500, verb="create", resource="events", count=3)
    with caplog.at_level(logging.WARNING, logger="shared.kube.events"):
        assert rec.normal(node, "DrainStarted", "moving 1 pod(s)") is False
        assert rec.normal(node, "DrainStarted", "moving 1 pod(s)") is True  # the server answers again
        sim.faults.inject(500, verb="create", resource="events", count=3)
        assert rec.normal(node, "DrainCompleted", "no pod left to move") is False
    assert [r.levelname for r in caplog.records] == ["WARNING", "WARNING"]
    assert [c for v, c in event_requests(sim, 7)] == [500, 500, 500, 201, 500, 500, 500]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"type": "Error", "reason": "DrainFailed"}, "type must be one of Normal, Warning"),
        ({"type": "Normal", "reason": "drain_failed"}, "UpperCamelCase"),
        ({"type": "Normal", "reason": "Drain Failed"}, "UpperCamelCase"),
    ],
    ids=["type", "snake-reason", "spaced-reason"],
)
def test_mistakes_in_the_caller_raise(api_client: Any, node: dict[str, Any], kwargs: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        recorder(api_client, Ticker()).record(node, message="m", **kwargs)


def test_an_object_without_uid_is_refused_rather_than_given_one(api_client: Any) -> None:
    made_up = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node-7"}}
    with pytest.raises(ValueError, match="uid"):
        recorder(api_client, Ticker()).normal(made_up, "NodeQuarantined", "cordoned")


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", fullmatch=True)


@given(
    name=st.lists(_LABEL, min_size=1, max_size=6).map(".".join).filter(lambda n: len(n) <= 253),
    nanos=st.integers(min_value=1 << 60, max_value=(1 << 64) - 1),
)
def test_an_event_name_is_always_a_dns_subdomain_of_at_most_253_characters(name: str, nanos: int) -> None:
    made = events.event_name(name, nanos)
    assert len(made) <= 253
    assert made.endswith(f".{nanos:016x}")
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", made)


@pytest.mark.parametrize(
    ("items", "text"),
    [([], ""), (["a"], "a"), (list("abcde"), "a, b, c, d, e"), (list("abcdefg"), "a, b, c, d, e and 2 more")],
    ids=["none", "one", "five", "seven"],
)
def test_a_listing_names_a_few_and_counts_the_rest(items: list[str], text: str) -> None:
    assert events.listing(items) == text
