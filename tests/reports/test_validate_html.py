"""``aicr validate --html``: the gate as a page whose numbers are the CTRF report of ``-t json``.

Covers: on a simulated cluster seeded from the recipe with another driver on every node, validate
exits 1; the page's JSON block equals the CTRF document printed beside it; the chart stacks each
component's checks by status; the failed driver check is listed with every node it names; headless
Chromium loads the page with no console error and a chart drawn in at least 8 colours.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from shared import htmlpage, yamlio
from shared.sim import SimServer, recipevalues
from shared.sim.gpu import helmseed
from tests.reports.test_certification_html import open_in_chromium

SEED = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "inference", "--platform", "dynamo"]


def test_the_validation_page_of_a_cluster_on_another_driver(run_cli: Any, gpu_sim: SimServer, tmp_path: Path) -> None:
    names = gpu_sim.add_gpu_nodes(4, racks=1, gpu="h100")
    recipe = tmp_path / "recipe.yaml"
    assert run_cli("aicr", "recipe", *SEED, "-o", str(recipe)).code == 0
    document = yamlio.load_file(recipe)
    helmseed.seed(gpu_sim, document, breaks={}, kernels={}, values=recipevalues.merged(document), driver="570.158.01")
    kubeconfig = gpu_sim.write_kubeconfig(tmp_path / "kubeconfig")
    html = tmp_path / "validate.html"
    result = run_cli("aicr", "validate", "-r", str(recipe), "-k", str(kubeconfig), "-t", "json", "--html", str(html))
    assert result.code == 1, result.stderr
    ctrf = json.loads(result.stdout)
    page = html.read_text(encoding="utf-8")
    assert htmlpage.embedded_data(page) == ctrf
    [figure] = [json.loads(f) for f in re.findall(r"var f=(\{.*?\});Plotly\.newPlot", page)]
    stacked = {t["name"]: dict(zip(t["y"], t["x"], strict=True)) for t in figure["data"]}
    failed = [t for t in ctrf["results"]["tests"] if t["status"] == "failed"]
    assert sum(stacked["failed"].values()) == len(failed) >= 1
    driver = next(t for t in failed if "570.158.01" in t.get("message", ""))
    assert driver["extra"]["nodes"] == names
    assert ", ".join(names) in page

    shown = open_in_chromium(page, tmp_path)
    assert shown.errors == []
    assert shown.charts == 1 and shown.colours >= 8
