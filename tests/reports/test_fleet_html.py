"""``nvsentinel nodes --html``: the fleet by rack, its rows those of ``nodes -o json``.

Covers: on the simulated cluster (6 nodes in 3 racks) quarantine holds one node for an Xid 79 and
someone cordoned another by hand; the page's JSON block equals ``nodes -o json`` (which now names
each node's rack and validation state), the chart stacks the racks by state, the table lists
exactly the nodes that are not healthy, and headless Chromium loads it with no console error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from shared import clock, htmlpage
from shared.health import config, controller, resource
from shared.health import event as hevent
from tests.health.test_offline import SEED_VALUES
from tests.health.test_quarantine_sim import xid79
from tests.reports.test_certification_html import open_in_chromium


def test_the_fleet_page_of_a_cluster_with_a_quarantined_and_a_cordoned_node(
    run_cli: Any, gpu_sim: Any, api_client: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    names = gpu_sim.add_gpu_nodes(6, racks=3)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    values = tmp_path / "values.yaml"
    values.write_text(SEED_VALUES + "  circuitBreaker: {enabled: false}\n")
    clk = clock.for_api_client(api_client)
    ctl = controller.Controller(api_client, config.load(values, enforce=True), namespace="nvsentinel", clk=clk)
    resource.publish(api_client, [hevent.parse(xid79(names[0], stamp=hevent.format_time(clk.now())))], now=clk.now)
    ctl.reconcile_once()
    k8s.CoreV1Api(api_client).patch_node(names[5], {"spec": {"unschedulable": True}})  # `kubectl cordon`

    html = tmp_path / "fleet.html"
    shown = run_cli("nvsentinel", "nodes", "-o", "json", "--html", str(html), "-k", str(sim_kubeconfig))
    assert shown.code == 0, shown.stderr
    rows = json.loads(shown.stdout)
    assert {r["node"]: r["rack"] for r in rows} == dict(
        zip(names, ["rack-0"] * 2 + ["rack-1"] * 2 + ["rack-2"] * 2, strict=True)
    )
    page = html.read_text(encoding="utf-8")
    assert htmlpage.embedded_data(page) == rows
    [figure] = [json.loads(f) for f in re.findall(r"var f=(\{.*?\});Plotly\.newPlot", page)]
    stacked = {t["name"]: t["y"] for t in figure["data"]}
    assert stacked == {"healthy": [1, 2, 1], "quarantined": [1, 0, 0], "cordoned": [0, 0, 1]}
    held = re.findall(r"<tr><td>(node-\d+)</td>", page)
    assert held == [names[0], names[5]]
    assert "GPU fatal error ruleset" in page

    browsed = open_in_chromium(page, tmp_path)
    assert browsed.errors == []
    assert browsed.charts == 1 and browsed.colours >= 8
