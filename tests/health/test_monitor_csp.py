"""The csp monitor against a local metadata endpoint (http.server on 127.0.0.1, stopped at teardown).

Covers: a scheduled maintenance within the 30-minute lead is one fatal CSPMaintenance event with
the endpoint's recommended action, published once; one further away is not yet news; once the
maintenance is completed (after the 15-minute delay) or cancelled or gone, a healthy event; other
nodes' entries are skipped; an unreachable or non-JSON endpoint is a clear error; the CLI;
``--node-ready-timeout 0`` sends the healthy event without asking the cluster, which the default
asks (and an unreachable cluster then holds the event back).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.health.monitors import agent, csp, memory

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)


class Endpoint:
    """What the fake metadata server answers; ``body`` is JSON-encoded unless it is bytes."""

    def __init__(self) -> None:
        self.body: Any = {"events": []}
        self.status = 200
        self.url = ""


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = state.body if isinstance(state.body, bytes) else json.dumps(state.body).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="csp-endpoint", daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/maintenance"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        assert not thread.is_alive()


def maintenance(
    status: str = "PENDING",
    start: datetime = NOW + timedelta(minutes=10),
    *,
    node: str = "n1",
    action: str = "RESTART_VM",
    end: datetime | None = None,
) -> dict[str, Any]:
    return {
        "eventId": f"ev-{node}",
        "nodeName": node,
        "resourceType": "gce_instance",
        "resourceId": f"i-{node}",
        "status": status,
        "maintenanceType": "SCHEDULED",
        "recommendedAction": action,
        "scheduledStartTime": start.isoformat(),
        "scheduledEndTime": (end or start + timedelta(hours=1)).isoformat(),
    }


def summary(events: list[Any]) -> list[tuple[str, str, bool, bool, str, str]]:
    return [(e.nodeName, e.checkName, e.isFatal, e.isHealthy, e.recommendedAction.name, e.message) for e in events]


def test_scheduled_maintenance_is_fatal_once_then_healthy_after_the_delay(endpoint: Endpoint) -> None:
    mem = memory.Memory()
    endpoint.body = {"events": [maintenance(start=NOW + timedelta(hours=2))]}
    assert csp.once(endpoint.url, "n1", mem, NOW) == []  # not within 30 minutes yet
    endpoint.body = {"events": [maintenance(), maintenance(node="n2")]}
    (fatal,) = csp.once(endpoint.url, "n1", mem, NOW)
    assert summary([fatal]) == [("n1", "CSPMaintenance", True, False, "RESTART_VM", "CSP maintenance scheduled")]
    assert (fatal.agent, fatal.componentClass, fatal.entitiesImpacted[0].entityValue) == (
        "csp-health-monitor",
        "gce_instance",
        "i-n1",
    )
    assert fatal.activation()["processingStrategy"] == 1
    assert csp.once(endpoint.url, "n1", mem, NOW) == []  # published once
    endpoint.body = {"events": [maintenance("ONGOING")]}
    assert csp.once(endpoint.url, "n1", mem, NOW + timedelta(minutes=20)) == []
    done = NOW + timedelta(minutes=70)
    endpoint.body = [maintenance("COMPLETED", end=done)]
    assert csp.once(endpoint.url, "n1", mem, done + timedelta(minutes=5)) == []  # healthy 15 min after the end
    (healthy,) = csp.once(endpoint.url, "n1", mem, done + timedelta(minutes=16))
    assert summary([healthy]) == [("n1", "CSPMaintenance", False, True, "NONE", "CSP maintenance completed")]


def test_cancelled_or_vanished_maintenance_recovers_and_an_old_completed_one_is_no_news(endpoint: Endpoint) -> None:
    mem = memory.Memory()
    endpoint.body = {"events": [maintenance(action="SOMETHING_ELSE")]}
    (fatal,) = csp.once(endpoint.url, "n1", mem, NOW)
    assert fatal.recommendedAction.name == "NONE"  # unknown action → NONE, as upstream
    endpoint.body = {"events": [maintenance("CANCELLED")]}
    assert [e.isHealthy for e in csp.once(endpoint.url, "n1", mem, NOW)] == [True]
    endpoint.body = {"events": [maintenance("COMPLETED", end=NOW - timedelta(minutes=1))]}
    assert csp.once(endpoint.url, "n1", memory.Memory(), NOW) == []


def test_a_bad_endpoint_is_a_clear_error(endpoint: Endpoint, tmp_path: Path) -> None:
    endpoint.body = b"<html>no</html>"
    with pytest.raises(errors.InvalidInput, match="not JSON: Expecting value at column 1") as refused:
        csp.once(endpoint.url, "n1", memory.Memory(), NOW)
    assert refused.value.where == f"{endpoint.url}:1"
    endpoint.body = b'{"events": []}\xff'
    with pytest.raises(errors.InvalidInput, match="not UTF-8 text: byte 0xff at offset 14"):
        csp.once(endpoint.url, "n1", memory.Memory(), NOW)
    endpoint.body, endpoint.status = {"events": []}, 503
    with pytest.raises(errors.Unavailable, match="HTTP 503"):
        csp.once(endpoint.url, "n1", memory.Memory(), NOW)
    endpoint.body, endpoint.status = {"events": "x"}, 200
    with pytest.raises(errors.InvalidInput, match="events"):
        csp.once(endpoint.url, "n1", memory.Memory(), NOW)


def test_cli_csp_dry_run_json_table_and_polling(run_cli: Any, endpoint: Endpoint) -> None:
    soon = datetime.now(UTC) + timedelta(minutes=5)
    endpoint.body = {"events": [maintenance(start=soon, action="REPLACE_VM")]}
    result = run_cli("nvsentinel", "monitor", "csp", "--url", endpoint.url, "--node", "n1", "--dry-run")
    assert result.code == 0, result.stderr
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert (line["agent"], line["checkName"], line["isFatal"], line["recommendedAction"]) == (
        "csp-health-monitor",
        "CSPMaintenance",
        True,
        "REPLACE_VM",
    )
    table = run_cli(
        "nvsentinel",
        "monitor",
        "csp",
        "--url",
        endpoint.url,
        "--node",
        "n1",
        "--dry-run",
        "--interval",
        "50ms",
        "--for",
        "200ms",
        "-o",
        "table",
    )
    assert table.code == 0, table.stderr
    assert table.stdout.count("CSPMaintenance") == 1  # polled, reported once
    missing = run_cli("nvsentinel", "monitor", "csp", "--url", endpoint.url, "--dry-run")
    assert missing.code != 0 and "--node" in missing.stderr
    down = run_cli("nvsentinel", "monitor", "csp", "--url", "http://127.0.0.1:9/x", "--node", "n1", "--dry-run")
    assert down.code != 0 and "unreachable" in down.stderr


def set_ready(api: Any, node: str, ready: bool) -> None:
    from shared import nodes

    def mutate(n: dict[str, Any]) -> bool:
        for c in n["status"]["conditions"]:
            if c["type"] == "Ready":
                c["status"] = "True" if ready else "False"
                c["reason"] = "KubeletReady" if ready else "KubeletNotReady"
        return True

    nodes.update(api, node, mutate, status=True)


def test_the_healthy_event_waits_until_the_node_is_ready_again(
    endpoint: Endpoint, gpu_sim: Any, api_client: Any
) -> None:
    (node,) = gpu_sim.add_gpu_nodes(1)
    mem = memory.Memory()
    ready = lambda name: csp.node_ready(api_client, name)  # noqa: E731 - the cluster's answer, per poll
    endpoint.body = {"events": [maintenance(node=node)]}
    assert [e.isFatal for e in csp.once(endpoint.url, node, mem, NOW, ready=ready)] == [True]
    done = NOW + timedelta(minutes=70)
    endpoint.body = {"events": [maintenance("COMPLETED", node=node, end=done)]}
    set_ready(api_client, node, False)  # still rebooting
    assert csp.once(endpoint.url, node, mem, done + timedelta(minutes=16), ready=ready) == []
    assert csp.once(endpoint.url, node, mem, done + timedelta(minutes=30), ready=ready) == []
    set_ready(api_client, node, True)
    (healthy,) = csp.once(endpoint.url, node, mem, done + timedelta(minutes=31), ready=ready)
    assert summary([healthy]) == [(node, "CSPMaintenance", False, True, "NONE", "CSP maintenance completed")]
    assert csp.once(endpoint.url, node, mem, done + timedelta(minutes=32), ready=ready) == []


def test_a_node_not_ready_past_the_timeout_gets_no_healthy_event(
    endpoint: Endpoint, gpu_sim: Any, api_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    (node,) = gpu_sim.add_gpu_nodes(1)
    mem = memory.Memory()
    ready = lambda name: csp.node_ready(api_client, name)  # noqa: E731
    endpoint.body = {"events": [maintenance(node=node)]}
    csp.once(endpoint.url, node, mem, NOW, ready=ready)
    done = NOW + timedelta(minutes=70)
    endpoint.body = {"events": [maintenance("COMPLETED", node=node, end=done)]}
    set_ready(api_client, node, False)
    first = done + timedelta(minutes=16)
    assert csp.once(endpoint.url, node, mem, first, ready=ready) == []
    assert csp.once(endpoint.url, node, mem, first + timedelta(minutes=59), ready=ready) == []
    assert "no healthy event" not in caplog.text
    assert csp.once(endpoint.url, node, mem, first + timedelta(minutes=61), ready=ready) == []
    assert "no healthy event is sent" in caplog.text
    set_ready(api_client, node, True)  # too late: people decide
    assert csp.once(endpoint.url, node, mem, first + timedelta(minutes=62), ready=ready) == []


def test_an_unknown_readiness_is_not_ready_and_a_bad_timeout_is_refused(endpoint: Endpoint, run_cli: Any) -> None:
    def broken(name: str) -> bool:
        raise errors.Unavailable("connection refused", where="https://127.0.0.1:9")

    mem = memory.Memory()
    endpoint.body = {"events": [maintenance()]}
    csp.once(endpoint.url, "n1", mem, NOW, ready=broken)
    endpoint.body = {"events": [maintenance("CANCELLED")]}
    assert csp.once(endpoint.url, "n1", mem, NOW, ready=broken) == []
    assert [e.isHealthy for e in csp.once(endpoint.url, "n1", mem, NOW, ready=lambda name: True)] == [True]
    bad = run_cli(
        "nvsentinel",
        "monitor",
        "csp",
        "--url",
        endpoint.url,
        "--node",
        "n1",
        "--dry-run",
        "--node-ready-timeout",
        "soon",
    )
    assert bad.code == 2 and "--node-ready-timeout" in bad.stderr


def test_a_zero_ready_timeout_sends_the_healthy_event_without_asking_the_cluster(
    endpoint: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[Any] = []
    monkeypatch.setattr(agent, "publisher", lambda cluster, dry_run: published.extend)
    base = agent.PollRequest(url=endpoint.url, node="n1", state=tmp_path / "csp.json")

    class Cluster:  # no kubeconfig anywhere: asking whether the Node is Ready fails
        kubeconfig = tmp_path / "missing-kubeconfig"
        context = None

    def poll(ready_timeout: str | None) -> list[Any]:
        request = base.model_copy(update={"ready_timeout": ready_timeout})
        return agent.run("csp", request, cluster=Cluster(), emit=lambda batch: None)

    endpoint.body = {"events": [maintenance(start=datetime.now(UTC) + timedelta(minutes=5))]}
    assert [e.isFatal for e in poll(None)] == [True]
    endpoint.body = {"events": [maintenance("CANCELLED")]}
    assert poll(None) == []  # the default waits for a Ready it cannot learn
    (healthy,) = poll("0")
    assert (healthy.isHealthy, healthy.message) == (True, "CSP maintenance completed")
    assert [e.isHealthy for e in published] == [False, True]
