"""The chart's Grafana dashboard and PrometheusRule alerts, and a real controller's scrape.

Covers: both are off by default and one value away each; the dashboard ConfigMap carries the
label Grafana's sidecar picks up, and its JSON loads into grafana-foundation-sdk's Dashboard
model with every panel's queries as Prometheus queries; every dashboard query and alert
expression names only metrics the code declares (histograms by their ``_bucket`` series), and
every declared nvsentinel/nvcrectl metric is on the dashboard; the queries and the alerts pass
``promtool check rules`` (the queries as recording rules, Grafana's ``$__rate_interval`` read as
5m); the alert thresholds are values; and a controller running against the simulated cluster,
after a storm that trips the breaker, serves a ``/metrics`` that prometheus_client's parser reads
with the storm's counts in it and on which ``promtool check metrics`` finds nothing (while it
does flag a counter without ``_total``).
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from shared import metrics, yamlio
from shared.chart import manifests

ON = "observability.grafanaDashboard.enabled=true,observability.prometheusRule.enabled=true"
ALERTS = {
    "NVSentinelCircuitBreakerTripped",
    "NVSentinelQuarantinedNodesHigh",
    "NVSentinelEventToCordonLatencyHigh",
    "NVSentinelPassErrorsRising",
    "NVSentinelRuleEvaluationErrors",
    "NVSentinelNoLeader",
    "NvcrectlNoLeader",
}
_METRIC = re.compile(r"\b((?:nvsentinel|nvcrectl)_[a-z0-9_]+)")


def render(*sets: str) -> list[dict[str, Any]]:
    return manifests.render(manifests.Request(set_values=sets, namespace="nvsentinel"))


def _one(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def _dashboard(*sets: str) -> dict[str, Any]:
    cm = _one(render(ON, *sets), "ConfigMap", "nvsentinel-grafana-dashboard")
    doc: dict[str, Any] = json.loads(cm["data"]["nvsentinel.json"])
    return doc


def _rules(*sets: str) -> dict[str, Any]:
    spec: dict[str, Any] = _one(render(ON, *sets), "PrometheusRule", "nvsentinel-alerts")["spec"]
    return spec


def _declared() -> dict[str, metrics.Declared]:
    """Every metric the programs declare: importing their modules declares them."""
    import shared.certify.controller
    import shared.health.controller
    import shared.health.monitors.agent
    import shared.lifecycle.controller  # noqa: F401

    return {n: m for n, m in metrics.declared().items() if n.startswith(("nvsentinel_", "nvcrectl_"))}


def _series(declared: dict[str, metrics.Declared]) -> dict[str, str]:
    """Series name → the declared metric it belongs to (a histogram's _bucket, _sum, _count)."""
    out = {}
    for name, metric in declared.items():
        out[name] = name
        if metric.kind == "histogram":
            out |= {f"{name}{suffix}": name for suffix in ("_bucket", "_sum", "_count")}
    return out


def _queries(dashboard: dict[str, Any]) -> list[str]:
    panels = [p for top in dashboard["panels"] for p in (top, *top.get("panels", []))]
    return [t["expr"] for p in panels for t in p.get("targets", [])]


def test_both_are_off_by_default_and_one_value_away() -> None:
    default = render()
    assert not [o for o in default if o["kind"] == "PrometheusRule"]
    assert not [o for o in default if manifests.component(o) in ("nvsentinel-dashboard", "nvsentinel-alerts")]
    on = render(ON)
    cm = _one(on, "ConfigMap", "nvsentinel-grafana-dashboard")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert manifests.component(cm) == "nvsentinel-dashboard"
    rule = _one(on, "PrometheusRule", "nvsentinel-alerts")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert {o["metadata"]["name"] for o in manifests.for_program("nvsentinel", on)} >= {
        "nvsentinel-grafana-dashboard",
        "nvsentinel-alerts",
    }
    labelled = _one(
        render(ON, "observability.prometheusRule.labels.release=kps"), "PrometheusRule", "nvsentinel-alerts"
    )
    assert labelled["metadata"]["labels"]["release"] == "kps"


def test_the_dashboard_loads_into_grafanas_model_with_prometheus_queries() -> None:
    from grafana_foundation_sdk.cog import encoder, plugins
    from grafana_foundation_sdk.models import dashboard, prometheus

    plugins.register_default_plugins()
    doc = _dashboard()
    model = dashboard.Dashboard.from_json(doc)
    assert model.uid == doc["uid"] and model.title == doc["title"]
    assert model.panels is not None
    rows = [p for p in model.panels if isinstance(p, dashboard.RowPanel)]
    panels = [p for p in model.panels if isinstance(p, dashboard.Panel)]
    assert len(rows) == 4 and len(panels) == len(doc["panels"]) - len(rows)
    for panel in panels:
        assert panel.type_val in ("stat", "timeseries") and panel.targets, panel.title
        for target in panel.targets:
            assert isinstance(target, prometheus.Dataquery), panel.title
            assert target.expr and target.ref_id
    # the model writes back what it read: no field of ours was dropped as unknown
    again = json.loads(json.dumps(model, cls=encoder.JSONEncoder))
    assert _queries(again) == _queries(doc)
    assert [p["title"] for p in again["panels"]] == [p["title"] for p in doc["panels"]]


def test_every_query_and_alert_names_only_declared_metrics_and_every_metric_is_shown() -> None:
    declared = _declared()
    series = _series(declared)
    queries = _queries(_dashboard())
    expressions = [r["expr"] for g in _rules()["groups"] for r in g["rules"]]
    for text in queries + expressions:
        named = _METRIC.findall(text)
        assert named, f"no metric in {text!r}"
        unknown = [n for n in named if n not in series]
        assert not unknown, f"{text!r} names undeclared {unknown}"
    shown = {series[n] for q in queries for n in _METRIC.findall(q)}
    assert sorted(set(declared) - shown) == []


def _promtool(promtool: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(promtool), *args], input=stdin, capture_output=True, text=True, timeout=120, check=False)


def test_the_alerts_and_the_dashboard_queries_pass_promtool(promtool_binary: Path, tmp_path: Path) -> None:
    spec = _rules()
    assert {r["alert"] for g in spec["groups"] for r in g["rules"]} == ALERTS
    alerts = tmp_path / "alerts.yaml"
    alerts.write_text(yamlio.dumps(spec))
    done = _promtool(promtool_binary, "check", "rules", str(alerts))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in done.stdout
    queries = [q.replace("$__rate_interval", "5m") for q in _queries(_dashboard())]
    recording = {
        "groups": [
            {"name": "dashboard", "rules": [{"record": f"dashboard:q{i}", "expr": q} for i, q in enumerate(queries)]}
        ]
    }
    path = tmp_path / "queries.yaml"
    path.write_text(yamlio.dumps(recording))
    done = _promtool(promtool_binary, "check", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_broken_expression_fails_promtool(promtool_binary: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yamlio.dumps({"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "sum(rate(x[5m])"}]}]}))
    assert _promtool(promtool_binary, "check", "rules", str(path)).returncode != 0


def test_alert_thresholds_are_values() -> None:
    exprs = {
        r["alert"]: r["expr"]
        for g in _rules(
            "observability.prometheusRule.quarantinedShare=0.25,observability.prometheusRule.cordonLatencySeconds=15,"
            "observability.prometheusRule.passErrors=9"
        )["groups"]
        for r in g["rules"]
    }
    assert exprs["NVSentinelQuarantinedNodesHigh"].endswith("> 0.25")
    assert exprs["NVSentinelEventToCordonLatencyHigh"].endswith("> 15")
    assert exprs["NVSentinelPassErrorsRising"].endswith("> 9")


STORM_NODES = 6


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return str(answer.read().decode())


def _sample(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


def _storm(gpu_sim: Any, api_client: Any, tmp_path: Path) -> tuple[str, str, Any]:
    """A controller on its leader loop with the endpoint up; a storm of fatal Xid events on most
    nodes: the scrape before, the scrape once every event is processed, and one event of it."""
    from shared import clock
    from shared.health import config, controller, resource
    from shared.health import event as hevent
    from tests.health.test_offline import SEED_VALUES
    from tests.health.test_quarantine_sim import xid79

    _declared()  # the nvcrectl_ series too, as `nvsentinel run` serves them with its lifecycle controller
    names = gpu_sim.add_gpu_nodes(STORM_NODES + 2)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    values = tmp_path / "values.yaml"
    values.write_text(SEED_VALUES)
    ctl = controller.Controller(
        api_client, config.load(values, enforce=True), namespace="nvsentinel", clk=clock.for_api_client(api_client)
    )
    # the gauges are process-wide: start them as a fresh process would, whatever ran before in this one
    for state in controller.BREAKER_STATES:
        controller.BREAKER.set(0, state=state)
    controller.GPU_NODES.set(0)
    controller.QUARANTINED.set(0)
    server = metrics.serve("127.0.0.1:0", prefixes=("nvsentinel_", "nvcrectl_"))
    assert server is not None
    url = f"http://127.0.0.1:{server.address[1]}/metrics"
    before = _scrape(url)
    stop = threading.Event()
    worker = threading.Thread(target=ctl.run, args=(stop,), name="test-controller")
    worker.start()
    try:
        storm = [hevent.parse(xid79(n)) for n in names[:STORM_NODES]]
        resource.publish(api_client, storm, now=clock.WALL.now)
        deadline = time.monotonic() + 120  # generous real time: the condition, not the speed, is tested
        while time.monotonic() < deadline and any(not s.phase for s in resource.list_events(api_client)):
            stop.wait(0.1)
        assert all(s.phase for s in resource.list_events(api_client))
        # the gauges are read back from the cluster at the end of each pass that processed events:
        # wait for the pass after the storm's last event (a deadline, not a sleep, bounds the wait)
        text = _scrape(url)
        while time.monotonic() < deadline and _sample(text, "nvsentinel_breaker_state", state="TRIPPED") != 1:
            stop.wait(0.1)
            text = _scrape(url)
    finally:
        stop.set()
        worker.join(timeout=30)
        server.stop()
    assert not worker.is_alive()
    return before, text, storm[0]


# The leader loop leaves a watch generator suspended when an event wakes it (``break`` inside
# ``for kind, obj in changes`` in shared/kube/leaderloop.py), so the watch's TLS socket is closed
# only by the garbage collector, which Python reports as an unraisable ResourceWarning at a random
# moment. A storm wakes the watch many times, so this test meets it; only that report is ignored.
@pytest.mark.filterwarnings("ignore:Exception ignored in. <ssl.SSLSocket:pytest.PytestUnraisableExceptionWarning")
def test_a_running_controllers_scrape_after_a_storm_passes_promtool(
    gpu_sim: Any, api_client: Any, tmp_path: Path, promtool_binary: Path
) -> None:
    before, text, one = _storm(gpu_sim, api_client, tmp_path)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert "process_cpu_seconds" in families and "python_info" in families
    assert {"nvcrectl_leader", "nvcrectl_certification_duration_seconds"} <= set(families)
    assert families["nvsentinel_event_to_cordon_seconds"].type == "histogram"
    processed = sum(
        _sample(text, "nvsentinel_events_processed_total", phase=p)
        - _sample(before, "nvsentinel_events_processed_total", phase=p)
        for p in ("Quarantined", "Blocked")
    )
    assert processed == STORM_NODES
    fatal = {"agent": one.agent, "check": one.checkName, "fatal": "true"}
    assert (
        _sample(text, "nvsentinel_health_events_total", **fatal)
        - _sample(before, "nvsentinel_health_events_total", **fatal)
        == STORM_NODES
    )
    # SEED_VALUES' breaker admits half of the GPU nodes: the storm trips it
    assert _sample(text, "nvsentinel_breaker_state", state="TRIPPED") == 1
    assert _sample(text, "nvsentinel_breaker_state", state="CLOSED") == 0
    assert _sample(text, "nvsentinel_gpu_nodes") == STORM_NODES + 2
    assert _sample(text, "nvsentinel_quarantined_nodes") == (STORM_NODES + 2) // 2
    assert _sample(text, "nvsentinel_event_to_cordon_seconds_count") > _sample(
        before, "nvsentinel_event_to_cordon_seconds_count"
    )
    assert _sample(text, "nvsentinel_leader") == 1
    lint = _promtool(promtool_binary, "check", "metrics", stdin=text)
    assert lint.returncode == 0 and lint.stdout + lint.stderr == "", lint.stdout + lint.stderr


def test_promtool_check_metrics_does_find_a_counter_without_total(promtool_binary: Path) -> None:
    bad = "# HELP demo_requests Requests.\n# TYPE demo_requests counter\ndemo_requests 1\n"
    lint = _promtool(promtool_binary, "check", "metrics", stdin=bad)
    assert lint.returncode != 0 and "_total" in lint.stdout + lint.stderr
