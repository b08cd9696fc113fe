"""``nvcrectl`` end to end, in-process: exit codes, stdout and the one stderr line.

Covers: ``catalog list``; ``results parse`` of a real sample (exit 0 whatever the verdict) and of
an empty file (exit 2); a certification file with an unknown threshold key or bad CEL refused with
exit 2 before the cluster is contacted; ``crds install`` then ``certification run --wait`` on the
simulated cluster (exit 1 for a slow NIC, with the node in the report), ``report`` of the failed
run (exit 1, ``--results-file``), ``list``, ``get``, ``render`` and ``delete``; ``render -o json``
prints the same TrainingRuntime and TrainJob as ``render -o yaml`` (the table is the plan);
``results parse -o table``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.sim import SimServer
from shared.sim.gpu import fabric
from tests.conftest import TEAM_SHARED

CERT = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}}}
spec:
  maxBytes: 1G
  thresholds: {{{thresholds}}}
  categories:
    - {{domain: communication, variant: nccl-all-reduce}}
"""


def _file(tmp_path: Path, name: str = "rack-7", thresholds: str = "busBandwidthGBps: 'value >= 300'") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(CERT.format(name=name, thresholds=thresholds), encoding="utf-8")
    return path


def test_catalog_list_shows_every_category(run_cli: Any) -> None:
    result = run_cli("nvcrectl", "catalog", "list")
    assert result.code == 0
    assert "nccl-all-reduce" in result.stdout and "dcgm-l4" in result.stdout and "nemotron5-56b" in result.stdout


def test_results_parse_of_a_real_sample_exits_0_with_a_verdict(run_cli: Any) -> None:
    sample = TEAM_SHARED / "reference/samples/nccl/gcp-a3mega-h100-2node-allreduce.txt"
    if not sample.is_file():
        pytest.skip("reference samples absent")
    result = run_cli("nvcrectl", "results", "parse", "--kind", "nccl", str(sample))
    assert result.code == 0
    data = json.loads(result.stdout)
    assert data["verdict"] in ("pass", "fail") and data["rows"]


def test_results_parse_of_an_empty_file_exits_2(run_cli: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("", encoding="utf-8")
    result = run_cli("nvcrectl", "results", "parse", "--kind", "dcgm", str(empty))
    assert (result.code, result.stderr) == (2, f"error: {empty}: empty file\n")


@pytest.mark.parametrize(
    ("thresholds", "message"),
    [
        ("bandwidth: 'value > 1'", "unknown threshold key(s) ['bandwidth']"),
        ("busBandwidthGBps: 'value >= '", "rule 'busBandwidthGBps': invalid CEL at line 1, column 7"),
    ],
    ids=["unknown-key", "bad-cel"],
)
def test_a_bad_threshold_exits_2_before_the_cluster_is_contacted(
    run_cli: Any, tmp_path: Path, thresholds: str, message: str
) -> None:
    result = run_cli(
        "nvcrectl",
        "certification",
        "run",
        "--cert-file",
        str(_file(tmp_path, thresholds=thresholds)),
        "--kubeconfig",
        str(tmp_path / "missing"),
    )
    assert result.code == 2
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_run_wait_report_list_get_render_and_delete_on_the_simulated_cluster(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    gpu_sim.add_gpu_nodes(8, racks=2)
    gpu_sim.fabric.inject(fabric.parse_all(["node-002:nic=0.4"]))
    gpu_sim.vclock.set_speed(600)  # the runner waits on the cluster's clock; let it run fast (72 h: 7 real minutes)
    kube = ("--kubeconfig", str(sim_kubeconfig))
    assert (
        run_cli("nvcrectl", "crds", "install", *kube).stdout
        == "customresourcedefinition/certifications.nvcre.nvidia.com installed\n"
        "customresourcedefinition/workloadruns.nvcre.nvidia.com installed\n"
    )
    cert = _file(tmp_path)
    rendered = run_cli("nvcrectl", "certification", "render", "--cert-file", str(cert), *kube)
    assert rendered.code == 0 and "communication/nccl-all-reduce" in rendered.stdout
    ran = run_cli("nvcrectl", "certification", "run", "--cert-file", str(cert), "--wait", "--timeout", "72h", *kube)
    assert ran.code == 1, ran.stderr
    assert "node-002" in ran.stdout and "ThresholdViolation" in ran.stdout
    results = tmp_path / "results.json"
    reported = run_cli(
        "nvcrectl", "certification", "report", "rack-7", "-o", "json", "--results-file", str(results), *kube
    )
    assert reported.code == 1
    assert json.loads(reported.stdout)["categories"][0]["failedNodes"][0]["name"] == "node-002"
    assert json.loads(results.read_text(encoding="utf-8"))["passed"] is False
    listed = run_cli("nvcrectl", "certification", "list", *kube)
    assert listed.stdout.splitlines()[1].split()[:3] == ["default", "rack-7", "Failed"]
    assert "kind: Certification" in run_cli("nvcrectl", "certification", "get", "rack-7", *kube).stdout
    assert run_cli("nvcrectl", "certification", "delete", "rack-7", *kube).code == 0
    assert run_cli("nvcrectl", "certification", "get", "rack-7", *kube).code == 3
    again = run_cli("nvcrectl", "certification", "delete", "rack-7", *kube)
    assert (again.code, again.stderr) == (3, "error: certification default/rack-7 not found\n")


def test_render_prints_the_same_runtime_and_trainjob_as_json_and_as_yaml(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    gpu_sim.add_gpu_nodes(4)
    args = ("nvcrectl", "certification", "render", "-f", str(_file(tmp_path)), "-k", str(sim_kubeconfig))
    as_json, as_yaml = run_cli(*args, "-o", "json"), run_cli(*args, "-o", "yaml")
    assert (as_json.code, as_yaml.code) == (0, 0), as_json.stderr + as_yaml.stderr
    jobs = json.loads(as_json.stdout)
    assert jobs == yamlio.loads(as_yaml.stdout, source="render -o yaml")
    assert [job["kind"] for job in jobs] == ["TrainingRuntime", "TrainJob"]
    assert jobs[1]["metadata"]["name"] == "rack-7-c0-r1-g0"
    table = run_cli(*args).stdout.splitlines()
    assert table[0].split()[:3] == ["CATEGORY", "NODES", "GROUPS"]
    assert table[1].split()[:2] == ["communication/nccl-all-reduce", "4"]


def test_results_parse_as_a_table_lists_the_verdict_then_measurements(run_cli: Any) -> None:
    sample = TEAM_SHARED / "reference/samples/nccl/gcp-a3mega-h100-2node-allreduce.txt"
    if not sample.is_file():
        pytest.skip("reference samples absent")
    table = run_cli("nvcrectl", "results", "parse", "--kind", "nccl", str(sample), "-o", "table").stdout.splitlines()
    assert table[0].split() == ["FIELD", "VALUE"]
    assert table[1].split()[0] == "verdict" and table[2].split()[0] == "busBandwidthGBps"
