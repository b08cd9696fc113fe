"""shared/metrics.py: declarations, the exposition (parsed by prometheus_client's own parser), the endpoint.

Covers: counters, gauges and histograms with labels render and parse back to the same values
(escaping included); misuse and names against Prometheus' conventions are refused at declaration;
declaring a name twice returns the first metric; the address parser defaults to loopback; the
endpoint serves /metrics (GET and HEAD, text 0.0.4 or OpenMetrics by Accept), the process
collectors and /healthz over 127.0.0.1, only the metrics under its prefixes, and its thread is
gone after stop; declaring does not import prometheus_client; each controller moves its named
metrics (nvsentinel on the simulated cluster, nvcrectl on a stub runner); rule errors count by
rule set name; the analyzer's derived events count once.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families

from shared import errors, metrics

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> tuple[dict[str, str], Samples]:
    """The text format back into {family: type} and {(sample name, labels): value}."""
    types: dict[str, str] = {}
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return types, samples


_counter_no = iter(range(10**9))


def _fresh(stem: str) -> str:
    """A name no other test declared: the declarations are process-wide, as in a controller."""
    return f"test_{stem}_{next(_counter_no)}"


def test_counters_gauges_and_histograms_parse_back() -> None:
    c = metrics.counter(_fresh("events") + "_total", "Events.\nSecond line.", ["phase"])
    g = metrics.gauge(_fresh("nodes"), "Nodes.")
    h = metrics.histogram(_fresh("wait") + "_seconds", "Durations.", ["kind"], buckets=[1, 10])
    c.inc(phase="Quarantined")
    c.inc(2, phase='we"ird\\\nname')
    g.set(3)
    g.dec()
    for v in (0.5, 5, 50):
        h.observe(v, kind="a")
    text = metrics.exposition(prefixes=("test_",))
    types, samples = parse(text)
    assert types[c.name.removesuffix("_total")] == "counter"
    assert types[g.name] == "gauge" and types[h.name] == "histogram"
    assert samples[(c.name, frozenset({("phase", "Quarantined")}))] == 1
    assert samples[(c.name, frozenset({("phase", 'we"ird\\\nname')}))] == 2
    assert samples[(g.name, frozenset())] == 2
    a = ("kind", "a")
    assert samples[(f"{h.name}_bucket", frozenset({a, ("le", "1.0")}))] == 1
    assert samples[(f"{h.name}_bucket", frozenset({a, ("le", "10.0")}))] == 2
    assert samples[(f"{h.name}_bucket", frozenset({a, ("le", "+Inf")}))] == 3
    assert samples[(f"{h.name}_sum", frozenset({a}))] == 55.5
    assert samples[(f"{h.name}_count", frozenset({a}))] == 3
    assert f"# HELP {c.name} Events.\\nSecond line.\n" in text
    assert "_created" not in text
    assert c.value(phase="Quarantined") == 1 and h.value(kind="a") == 3


@given(st.text(max_size=40), st.floats(min_value=0, max_value=1e12, allow_nan=False))
def test_any_label_value_and_amount_parse_back(value: str, amount: float) -> None:
    c = metrics.counter("test_property_total", "Any label value.", ["v"])
    before = c.value(v=value)
    c.inc(amount, v=value)
    samples = parse(metrics.exposition(prefixes=("test_property_",)))[1]
    assert samples[("test_property_total", frozenset({("v", value)}))] == pytest.approx(before + amount)


def test_an_unlabelled_counter_shows_zero_before_its_first_increment() -> None:
    c = metrics.counter(_fresh("unused") + "_total", "x")  # declared, never touched
    assert parse(metrics.exposition(prefixes=(c.name,)))[1] == {(c.name, frozenset()): 0.0}
    assert c.value() == 0


def test_misuse_and_names_against_the_conventions_are_refused() -> None:
    name = _fresh("demo") + "_total"
    c = metrics.counter(name, "x", ["a"])
    assert metrics.counter(name, "x", ["a"]) is c
    assert metrics.declared()[name] is c
    with pytest.raises(ValueError, match="labels"):
        c.inc(b="1")
    with pytest.raises(ValueError, match="only goes up"):
        c.inc(-1, a="1")
    with pytest.raises(ValueError, match="already registered"):
        metrics.counter(name, "x", ["b"])
    with pytest.raises(ValueError, match="invalid"):
        metrics.counter("bad-name_total", "x")
    with pytest.raises(ValueError, match="le"):
        metrics.histogram(_fresh("h") + "_seconds", "x", ["le"])
    with pytest.raises(ValueError, match="must end in _total"):
        metrics.counter(_fresh("events"), "x")
    with pytest.raises(ValueError, match="must not end in _total"):
        metrics.gauge(_fresh("g") + "_total", "x")
    with pytest.raises(ValueError, match="base unit"):
        metrics.histogram(_fresh("latency"), "x")


def test_the_watch_restart_counters_are_declared_for_both_programs() -> None:
    for program in ("nvsentinel", "nvcrectl"):
        found = metrics.declared()[f"{program}_watch_restarts_total"]
        assert isinstance(found, metrics.Counter) and found.labels == ("resource", "reason")
        assert metrics.watch_restarts(program) is found


def test_declaring_and_importing_the_controllers_loads_no_prometheus_client() -> None:
    probe = (
        "import sys\n"
        "import shared.metrics, shared.health.controller, shared.certify.controller, shared.lifecycle.controller\n"
        "import shared.health.monitors.agent\n"
        "print('prometheus_client' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


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


def _request(url: str, method: str = "GET", accept: str | None = None) -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(url, method=method, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), ""


def test_the_endpoint_serves_metrics_over_loopback_and_stops() -> None:
    mine = metrics.counter("demoendpoint_total", "x")
    mine.inc(4)
    metrics.counter("otherendpoint_total", "y").inc()
    before = set(threading.enumerate())
    server = metrics.serve(":0", prefixes=("demoendpoint_",))
    assert server is not None
    try:
        host, port = server.address
        assert host == "127.0.0.1"
        url = f"http://127.0.0.1:{port}/metrics"
        status, headers, body = _request(url)
        assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
        types, samples = parse(body)
        assert samples[("demoendpoint_total", frozenset())] == 4.0
        assert not any(name.startswith("otherendpoint") for name in types)
        assert "process_cpu_seconds_total" in body and "python_info" in body
        head = _request(url, "HEAD")
        assert head[0] == 200 and head[2] == "" and int(head[1]["Content-Length"]) > len("demoendpoint_total 4.0")
        assert head[1]["Content-Type"] == headers["Content-Type"]
        status, headers, om = _request(url, accept="application/openmetrics-text; version=1.0.0")
        assert headers["Content-Type"].startswith("application/openmetrics-text")
        assert om.endswith("# EOF\n")
        families = {f.name: f for f in openmetrics_families(om)}
        assert families["demoendpoint"].samples[0].value == 4.0
        assert _request(f"http://127.0.0.1:{port}/healthz")[::2] == (200, "ok\n")
        assert _request(f"http://127.0.0.1:{port}/nope")[0] == 404
        assert _request(url, "POST")[0] == 405
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
    with metrics.MetricsServer(":0") as first, pytest.raises(errors.Unavailable):
        metrics.MetricsServer(f"127.0.0.1:{first.address[1]}")


def _value(name: str, **labels: str) -> float:
    return parse(metrics.exposition())[1].get((name, frozenset(labels.items())), 0.0)


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
    event = hevent.parse(xid79(names[0]))
    seen = {"agent": event.agent, "check": event.checkName, "fatal": "true"}
    processed = _value("nvsentinel_events_processed_total", phase="Quarantined")
    matched = _value("nvsentinel_rule_evaluations_total", result="matched")
    health = _value("nvsentinel_health_events_total", **seen)
    enforced = _value("nvsentinel_quarantine_actions_total", action="enforced")
    latencies = _value("nvsentinel_event_to_cordon_seconds_count")
    resource.publish(api_client, [event], now=clock.WALL.now)
    ctl.reconcile_once()
    assert _value("nvsentinel_events_processed_total", phase="Quarantined") == processed + 1
    assert _value("nvsentinel_rule_evaluations_total", result="matched") == matched + 1
    assert _value("nvsentinel_health_events_total", **seen) == health + 1
    assert _value("nvsentinel_quarantine_actions_total", action="enforced") == enforced + 1
    assert _value("nvsentinel_event_to_cordon_seconds_count") == latencies + 1
    assert _value("nvsentinel_quarantined_nodes") == 1
    assert _value("nvsentinel_gpu_nodes") == 2
    assert _value("nvsentinel_breaker_state", state="CLOSED") == 1
    assert _value("nvsentinel_breaker_state", state="TRIPPED") == 0
    assert "nvsentinel_rule_evaluation_errors_total" in metrics.declared()


def test_rule_evaluation_errors_are_counted_by_rule_set_name() -> None:
    from shared.health import controller

    class Decision:
        matched: list[str] = []
        errors = ["GPU fatal: no such key", "GPU fatal error ruleset: no such key", "gone: x"]

    class Spec:
        def __init__(self, name: str) -> None:
            self.name = name

    class RuleSet:
        def __init__(self, name: str) -> None:
            self.spec = Spec(name)

    class Engine:
        rule_sets = [RuleSet("GPU fatal"), RuleSet("GPU fatal error ruleset")]

        def decide(self, event_value: Any, node: Any) -> Decision:
            return Decision()

    counted = controller._CountingEngine(Engine())
    before = {n: controller.EVAL_ERRORS.value(rule_set=n) for n in ("GPU fatal", "GPU fatal error ruleset", "unknown")}
    counted.decide({}, None)
    assert controller.EVAL_ERRORS.value(rule_set="GPU fatal") == before["GPU fatal"] + 1
    assert controller.EVAL_ERRORS.value(rule_set="GPU fatal error ruleset") == before["GPU fatal error ruleset"] + 1
    assert controller.EVAL_ERRORS.value(rule_set="unknown") == before["unknown"] + 1


def test_nvcrectl_moves_its_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    from shared.certify import controller, models, runner, workload
    from shared.certify import resource as cresource
    from shared.kube import leases, listing
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
    monkeypatch.setattr(cresource, "list_readable", lambda api, ns: listing.Listing([cert]))
    monkeypatch.setattr(workload, "list_readable", lambda api, ns: listing.Listing())
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


def test_the_analyzers_derived_events_are_counted_once_by_check(gpu_sim: Any, api_client: Any, tmp_path: Path) -> None:
    from datetime import timedelta

    from shared import clock
    from shared.health import config, controller, resource
    from shared.health import event as hevent
    from tests.health.test_analyzer import RULES

    [node] = gpu_sim.add_gpu_nodes(1)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    path = tmp_path / "hsettings.yaml"
    path.write_text(RULES + "node-drainer: {enabled: false}\nfault-remediation: {enabled: false}\n")
    clk = clock.for_api_client(api_client, max_age=0)
    ctl = controller.Controller(api_client, config.load(path, enforce=True), namespace="nvsentinel", clk=clk)
    now = clk.now()
    stamps = [hevent.format_time(now - timedelta(minutes=m)) for m in (3, 2, 1)]
    xid13 = {"agent": "syslog-health-monitor", "checkName": "SysLogsXIDError", "componentClass": "NIC"}
    events = [hevent.parse({**xid13, "errorCode": ["13"], "nodeName": node, "generatedTimestamp": t}) for t in stamps]
    before = controller.ANALYZER_EVENTS.value(check="RepeatedXid")
    resource.publish(api_client, events, now=clk.now)
    for _ in range(3):  # a re-analysis publishes nothing new and counts nothing
        ctl.reconcile_once()
    assert controller.ANALYZER_EVENTS.value(check="RepeatedXid") == before + 1


@given(
    st.sampled_from(["", "127.0.0.1", "0.0.0.0", "[::1]", "localhost", "10.1.2.3"]),
    st.integers(min_value=0, max_value=65535),
)
def test_any_host_and_port_parse_back_with_loopback_as_the_default(host: str, port: int) -> None:
    assert metrics.parse_address(f"{host}:{port}") == (host.strip("[]") or "127.0.0.1", port)
    assert metrics.parse_address(str(port)) == ("127.0.0.1", port)


@given(st.text(max_size=30))
def test_any_address_text_parses_or_is_invalid_input_naming_the_flag(text: str) -> None:
    try:
        host, port = metrics.parse_address(text)
    except errors.InvalidInput as exc:
        assert exc.where == "--metrics-addr"
    else:
        assert 0 <= port <= 65535 and host
