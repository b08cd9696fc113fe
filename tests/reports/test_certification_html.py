"""``nvcrectl certification report --html``: one self-contained page, its numbers those of ``-o json``.

Covers: a certification run on the simulated cluster (8 nodes in 2 racks, one NIC at 40 %, one dead
GPU) gives a page whose JSON block equals ``report -o json``; the page loads nothing from the network;
it holds the charts the issue lists (bandwidth per node by rack with the threshold line, bandwidth over
message size on a log axis, the DCGM grid, the isolation trail); and in a real headless Chromium it
loads with no console error and its first chart area is drawn in at least 8 distinct colours.
A training run draws its step time and TFLOP/s per GPU over steps, one line per group, from the same
numbers. The curves a run keeps are bounded, so a thousand-node certification stays below the object limit.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from shared import htmlpage
from shared.certify import htmlreport, models, runner
from shared.sim import SimServer
from shared.sim.gpu import fabric
from tests import browser
from tests.certify import clusterkit as kit

LIMIT = {"busBandwidthGBps": "value >= 300"}


def _report(run_cli: Any, gpu_sim: SimServer, api_client: Any, sim_kubeconfig: Path, tmp_path: Path) -> tuple[str, Any]:
    gpu_sim.add_gpu_nodes(8, racks=2)
    gpu_sim.fabric.inject(fabric.parse_all(["node-002:nic=0.4", "node-006:gpu-dead[3]"]))
    cert = kit.certification("rack-pair", thresholds=LIMIT)
    cert.spec.categories.append(models.Category(domain="diagnostics", variant="dcgm-l1"))
    kit.create(api_client, cert)
    finished = kit.drive(gpu_sim, api_client, "rack-pair")
    assert finished.status.phase is models.Phase.FAILED
    html = tmp_path / "report.html"
    result = run_cli(
        "nvcrectl", "certification", "report", "rack-pair", "-o", "json", "--html", str(html), "-k", str(sim_kubeconfig)
    )
    assert result.code == 1, result.stderr
    return html.read_text(encoding="utf-8"), json.loads(result.stdout)


def test_the_report_of_a_run_on_the_simulated_cluster(
    run_cli: Any, gpu_sim: SimServer, api_client: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    page, as_json = _report(run_cli, gpu_sim, api_client, sim_kubeconfig, tmp_path)
    _numbers_are_the_json_reports(page, as_json)
    _loads_nothing_from_the_network_and_draws_every_chart(page)
    shown = open_in_chromium(page, tmp_path)
    assert shown.errors == []
    assert shown.charts == 3
    assert shown.colours >= 8


def _numbers_are_the_json_reports(page: str, as_json: Any) -> None:
    assert htmlpage.embedded_data(page) == as_json
    [nccl, dcgm] = as_json["categories"]
    # the slow NIC by its bandwidth; the dead GPU kills NCCL on its node too (hardware)
    assert {f["name"]: f["reason"] for f in nccl["failedNodes"]} == {
        "node-002": "ThresholdViolation",
        "node-006": "HardwareFailureDetected",
    }
    assert [f["name"] for f in dcgm["failedNodes"]] == ["node-006"]
    curves = [g["detail"]["curve"] for r in nccl["rounds"] for g in r["groups"] if "detail" in g]
    assert curves and all(c[0]["bytes"] < c[-1]["bytes"] for c in curves)
    failing = [g for r in dcgm["rounds"] for g in r["groups"] if g["nodes"] == ["node-006"]]
    assert failing[0]["detail"]["failedGpus"].keys() == {"3"}


def _loads_nothing_from_the_network_and_draws_every_chart(page: str) -> None:
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|@import", page)
    figures = [json.loads(f) for f in re.findall(r"var f=(\{.*?\});Plotly\.newPlot", page)]
    titles = [f["layout"]["title"]["text"] for f in figures]
    assert titles == [
        "communication/nccl-all-reduce: bus bandwidth per node, by rack",
        "communication/nccl-all-reduce: bus bandwidth over message size, per group",
        "diagnostics/dcgm-l1: dcgmi diag per node and GPU (red: failed)",
    ]
    by_rack, curves, grid = figures
    assert [t["name"] for t in by_rack["data"]] == ["rack-0", "rack-1", "no measurement"]
    assert by_rack["data"][-1]["x"] == ["node-006"]  # its dead GPU crashed every run it was in
    assert by_rack["layout"]["shapes"][0]["y0"] == 300
    assert curves["layout"]["xaxis"]["type"] == "log"
    cell = grid["data"][0]["z"][grid["data"][0]["y"].index("node-006")]
    assert cell == [0, 0, 0, 1, 0, 0, 0, 0]
    assert page.count('class="group failed"') >= 1 and "isolation trail" in page


class Shown:
    def __init__(self, errors: list[str], charts: int, colours: int) -> None:
        self.errors, self.charts, self.colours = errors, charts, colours


def open_in_chromium(page: str, tmp_path: Path) -> Shown:
    """Load the page headless (file://, no server), collect console errors, count the first chart's colours."""
    chromium = browser.executable()
    if chromium is None:
        pytest.skip("no chromium: `make setup` installs Debian's chromium when run as root")
    from PIL import Image
    from playwright.sync_api import sync_playwright

    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    errors: list[str] = []
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium, args=list(browser.ARGS), headless=True)
        try:
            tab = instance.new_page(viewport={"width": 1280, "height": 900})
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto(path.as_uri(), wait_until="load")
            tab.wait_for_selector(".chart .main-svg", timeout=60_000)
            charts = tab.locator(".chart").count()
            drawn = tab.locator(".chart").first.screenshot()
        finally:
            instance.close()
    colours = len(Image.open(io.BytesIO(drawn)).convert("RGB").getcolors(maxcolors=1 << 24) or [])
    return Shown(errors, charts, colours)


def test_a_thousand_passing_groups_keep_only_a_few_dozen_curves() -> None:
    curve = models.GroupDetail(curve=[models.SizePoint(bytes=1 << i, busBandwidthGBps=float(i)) for i in range(24)])
    groups = [
        models.GroupRun(name=f"g{i}", nodes=[f"node-{i:04d}"], job=f"j{i}", passed=i != 7, detail=curve)
        for i in range(1000)
    ]
    cs = models.CategoryStatus(domain="communication", variant="nccl-all-reduce")
    cs.rounds = [models.Round(round=1, stage="full-scale", groups=groups)]
    runner._trim_details(cs)
    kept = [g for g in groups if g.detail is not None]
    assert len(kept) == runner.DETAILED_PASSING_GROUPS + 1
    assert groups[7].detail is not None  # the failing group keeps its evidence
    assert len(cs.model_dump_json()) < 1_500_000 // 4


def test_a_threshold_line_is_drawn_only_for_a_plain_bound() -> None:
    assert htmlreport.bound("value >= 300") == 300.0
    assert htmlreport.bound(" value > 12.5 ") == 12.5
    assert htmlreport.bound("value >= 300 && value < 900") is None


def test_a_training_run_draws_step_time_and_tflops_over_steps(
    run_cli: Any, gpu_sim: SimServer, api_client: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    gpu_sim.add_gpu_nodes(4)
    cert = kit.certification("train", domain="training", variant="nemotron5-8b", maxSteps=20, timeoutPerJob="6h")
    kit.create(api_client, cert)
    assert kit.drive(gpu_sim, api_client, "train", seconds=300).status.phase is models.Phase.SUCCEEDED
    html = tmp_path / "train.html"
    result = run_cli(
        "nvcrectl", "certification", "report", "train", "-o", "json", "--html", str(html), "-k", str(sim_kubeconfig)
    )
    assert result.code == 0, result.stderr
    page, as_json = html.read_text(encoding="utf-8"), json.loads(result.stdout)
    assert htmlpage.embedded_data(page) == as_json
    [training] = as_json["categories"]
    logged = [g for r in training["rounds"] for g in r["groups"] if g.get("detail", {}).get("steps")]
    assert logged, "the run's steps reach the report"
    [figure] = [json.loads(f) for f in re.findall(r"var f=(\{.*?\});Plotly\.newPlot", page)]
    assert figure["layout"]["title"]["text"] == "training/nemotron5-8b: step time and TFLOP/s per GPU over steps"
    step_times = [t for t in figure["data"] if t["name"].endswith("step time")]
    assert len(step_times) == len(logged)
    steps = logged[0]["detail"]["steps"]
    assert step_times[0]["x"] == [s["step"] for s in steps]
    assert step_times[0]["y"] == [s["stepTimeSec"] for s in steps]
    tflops = [t for t in figure["data"] if t["name"].endswith("TFLOP/s per GPU")]
    assert len(tflops) == len(logged) and all(t["yaxis"] == "y2" for t in tflops)  # on the right-hand axis
    assert open_in_chromium(page, tmp_path).errors == []
