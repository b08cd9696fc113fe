"""shared/metrics.py: the registry, its text exposition (parsed back), and the loopback endpoint.

Covers: counters, gauges and histograms with labels render in the Prometheus text format and parse
back to the same values (escaping included); misuse is refused (wrong labels, a counter going down,
one name registered twice differently); the address parser defaults to loopback; the endpoint
serves /metrics and /healthz over 127.0.0.1 and its thread is gone after stop; and each controller
moves its named metrics (nvsentinel on the simulated cluster, nvcrectl on a stub runner).
"""

from __future__ import annotations

import re
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shared import errors, metrics

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def parse(text: str) -> tuple[dict[str, str], dict[tuple[str, frozenset[tuple[str, str]]], float]]:
    """The text format back into {name: type} and {(sample name, labels): value}; fails on a bad line."""
    types: dict[str, str] = {}
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge", "histogram")
            types[name] = kind
            continue
        if line.startswith("# HELP "):
            continue
        match = _SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, _, body, value = match.groups()
        labels = []
        rest = body or ""
        while rest:
            lab = _LABEL.match(rest)
            assert lab, f"bad labels in {line!r}"
            raw = lab.group(2).replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
            labels.append((lab.group(1), raw))
            rest = rest[lab.end() :]
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        assert name in types or base in types, f"sample {name} before its TYPE line"
        samples[(name, frozenset(labels))] = float(value)
    return types, samples


def test_counters_gauges_and_histograms_parse_back() -> None:
    reg = metrics.Registry()
    c = reg.counter("demo_events_total", "Events.\nSecond line.", ["phase"])
    g = reg.gauge("demo_nodes", "Nodes.")
    h = reg.histogram("demo_seconds", "Durations.", ["kind"], buckets=[1, 10])
    c.inc(phase="Quarantined")
    c.inc(2, phase='we"ird\\\nname')
    g.set(3)
    g.dec()
    for v in (0.5, 5, 50):
        h.observe(v, kind="a")
    types, samples = parse(reg.exposition())
    assert types == {"demo_events_total": "counter", "demo_nodes": "gauge", "demo_seconds": "histogram"}
    assert samples[("demo_events_total", frozenset({("phase", "Quarantined")}))] == 1
    assert samples[("demo_events_total", frozenset({("phase", 'we"ird\\\nname')}))] == 2
    assert samples[("demo_nodes", frozenset())] == 2
    a = ("kind", "a")
    assert samples[("demo_seconds_bucket", frozenset({a, ("le", "1")}))] == 1
    assert samples[("demo_seconds_bucket", frozenset({a, ("le", "10")}))] == 2
    assert samples[("demo_seconds_bucket", frozenset({a, ("le", "+Inf")}))] == 3
    assert samples[("demo_seconds_sum", frozenset({a}))] == 55.5
    assert samples[("demo_seconds_count", frozenset({a}))] == 3
    assert "# HELP demo_events_total Events.\\nSecond line.\n" in reg.exposition()


def test_an_unlabelled_counter_shows_zero_before_its_first_increment() -> None:
    reg = metrics.Registry()
    reg.counter("demo_total", "x")
    assert parse(reg.exposition())[1] == {("demo_total", frozenset()): 0.0}


def test_misuse_is_refused() -> None:
    reg = metrics.Registry()
    c = reg.counter("demo_total", "x", ["a"])
    assert reg.counter("demo_total", "x", ["a"]) is c
    with pytest.raises(ValueError, match="labels"):
        c.inc(b="1")
    with pytest.raises(ValueError, match="only goes up"):
        c.inc(-1, a="1")
    with pytest.raises(ValueError, match="already registered"):
        reg.gauge("demo_total", "x", ["a"])
    with pytest.raises(ValueError, match="invalid"):
        reg.counter("bad-name", "x")
    with pytest.raises(ValueError, match="le"):
        reg.histogram("demo_seconds", "x", ["le"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (":9090", ("127.0.0.1", 9090)),
        ("9090", ("127.0.0.1", 9090)),
        ("0.0.0.0:8080", ("0.0.0.0", 8080)),
        ("[::1]:0", ("::1", 0)),
    ],
)
def test_addresses_default_to_loopback(text: str, expected: tuple[str, int]) -> None:
    assert metrics.parse_address(text) == expected


@pytest.mark.parametrize("text", ["host:port", "127.0.0.1:70000", ""])
def test_a_bad_address_is_invalid_input(text: str) -> None:
    with pytest.raises(errors.InvalidInput):
        metrics.parse_address(text)


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, "", ""


def test_the_endpoint_serves_metrics_over_loopback_and_stops() -> None:
    reg = metrics.Registry()
    reg.counter("demo_total", "x").inc(4)
    reg.counter("other_total", "y").inc()
    before = set(threading.enumerate())
    server = metrics.serve(":0", reg, prefixes=("demo_",))
    assert server is not None
    try:
        host, port = server.address
        assert host == "127.0.0.1"
        status, ctype, body = _get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and ctype == metrics.CONTENT_TYPE
        assert parse(body)[1] == {("demo_total", frozenset()): 4.0}
        assert _get(f"http://127.0.0.1:{port}/healthz")[::2] == (200, "ok\n")
        assert _get(f"http://127.0.0.1:{port}/nope")[0] == 404
    finally:
        server.stop()
    # A request's handler thread may still be closing its socket after the client read the answer:
    # wait for the condition (every thread the server started has ended), not for one instant.
    deadline = time.monotonic() + 30
    while [t for t in threading.enumerate() if t not in before and t.is_alive()] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [t for t in threading.enumerate() if t not in before and t.is_alive()] == []
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_no_address_starts_nothing() -> None:
    assert metrics.serve(None) is None and metrics.serve("") is None


def test_a_port_in_use_is_unavailable() -> None:
    with metrics.MetricsServer(":0", metrics.Registry()) as first, pytest.raises(errors.Unavailable):
        metrics.MetricsServer(f"127.0.0.1:{first.address[1]}")


def _value(name: str, **labels: str) -> float:
    return parse(metrics.REGISTRY.exposition())[1].get((name, frozenset(labels.items())), 0.0)


def test_nvsentinel_moves_its_metrics(gpu_sim: Any, api_client: Any, tmp_path: Path) -> None:
    from shared import clock
    from shared.health import config, controller, resource
    from shared.health import event as hevent
    from tests.health.test_offline import SEED_VALUES
    from tests.health.test_quarantine_sim import xid79

    names = gpu_sim.add_gpu_nodes(2)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    values = tmp_path / "values.yaml"
    values.write_text(SEED_VALUES)
    ctl = controller.Controller(
        api_client, config.load(values, enforce=True), namespace="nvsentinel", clk=clock.for_api_client(api_client)
    )
    processed = _value("nvsentinel_events_processed_total", phase="Quarantined")
    matched = _value("nvsentinel_rule_evaluations_total", result="matched")
    resource.publish(api_client, [hevent.parse(xid79(names[0]))], now=clock.WALL.now)
    ctl.reconcile_once()
    assert _value("nvsentinel_events_processed_total", phase="Quarantined") == processed + 1
    assert _value("nvsentinel_rule_evaluations_total", result="matched") == matched + 1
    assert _value("nvsentinel_quarantined_nodes") == 1
    assert _value("nvsentinel_breaker_tripped") == 0
    assert "nvsentinel_rule_evaluation_errors_total" in metrics.REGISTRY.names()


def test_nvcrectl_moves_its_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    from shared.certify import controller, models, runner, workload
    from shared.certify import resource as cresource
    from shared.kube import leases
    from tests.certify import clusterkit

    cert = clusterkit.certification("c1")
    done = cert.model_copy(
        update={
            "status": models.CertificationStatus(
                phase=models.Phase.FAILED, startTime="2026-01-01T00:00:00Z", completionTime="2026-01-01T00:20:00Z"
            )
        }
    )
    monkeypatch.setattr(leases, "try_acquire", lambda *a, **k: True)
    monkeypatch.setattr(leases, "release", lambda *a, **k: None)
    monkeypatch.setattr(cresource, "list_all", lambda api, ns: [cert])
    monkeypatch.setattr(workload, "list_all", lambda api, ns: [])
    monkeypatch.setattr(cresource, "get", lambda api, ns, name: (done, "1"))
    monkeypatch.setattr(runner, "step", lambda *a, **k: runner.Progress(True, "Failed", "verdict"))
    runs = _value("nvcrectl_certifications_total", phase="Failed")
    count = _value("nvcrectl_certification_duration_seconds_count", phase="Failed")
    total = _value("nvcrectl_certification_duration_seconds_sum", phase="Failed")
    assert controller.Controller(None, "default", "me").reconcile() == ["c1: verdict"]
    assert _value("nvcrectl_certifications_total", phase="Failed") == runs + 1
    assert _value("nvcrectl_certification_duration_seconds_count", phase="Failed") == count + 1
    assert _value("nvcrectl_certification_duration_seconds_sum", phase="Failed") == total + 1200
    assert _value("nvcrectl_leader") == 1
