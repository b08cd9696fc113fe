"""``aicr validate --phase``: the recipe's validation block, phase by phase, on the simulated cluster.

Covers: --phase is parsed (all = every phase, in running order; an unknown one exits 2 naming it);
--no-cluster prints the plan of every phase asked for, nothing run, against a cluster that does not
exist; performance runs the certification the recipe names (nccl-all-reduce-bw >= 300) through the
certification engine, in process, and a NIC at 40 % on one node fails it naming that node, with
the Certification left in the cluster as nvcrectl leaves one; conformance judges the listed checks
from the API (the seeded install meets gang scheduling and accelerator metrics; a check the API
cannot judge is skipped with its reason; a missing CRD fails naming it); a failed phase leaves the
later ones skipped; the CTRF report carries each phase's status; the deployment block's
Deployment.<component>.version constraints hold the Helm release.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import errors, yamlio
from shared.sim import SimServer, recipevalues
from shared.sim.gpu import fabric, helmseed
from shared.validate import phases

TRAINING = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ([], ["deployment"]),
        (["conformance", "deployment"], ["deployment", "conformance"]),
        (["all"], ["deployment", "performance", "conformance"]),
        (["performance", "all"], ["deployment", "performance", "conformance"]),
    ],
    ids=["default", "running-order", "all", "all-and-one"],
)
def test_phases_are_parsed_into_running_order(given: list[str], expected: list[str]) -> None:
    assert phases.parse(given) == expected


def test_an_unknown_phase_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(errors.InvalidInput, match="unknown phase 'readiness'; known: deployment, performance"):
        phases.parse(["readiness"])


@pytest.fixture()
def training_recipe(run_cli: Any, tmp_path: Path) -> Path:
    recipe = tmp_path / "recipe.yaml"
    assert run_cli("aicr", "recipe", *TRAINING, "-o", str(recipe)).code == 0
    return recipe


def test_no_cluster_prints_every_phases_plan_without_a_cluster(
    run_cli: Any, training_recipe: Path, tmp_path: Path
) -> None:
    result = run_cli(
        "aicr",
        "validate",
        "-r",
        str(training_recipe),
        "--phase",
        "all",
        "--no-cluster",
        "-t",
        "json",
        "--kubeconfig",
        str(tmp_path / "absent"),
    )
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)["results"]
    assert {t["status"] for t in report["tests"]} == {"skipped"}
    by_phase = {p: [t["name"] for t in report["tests"] if t["suite"][0] == p] for p in phases.PHASES}
    assert by_phase["performance"] == ["performance: nccl-all-reduce-bw >= 300"]
    assert "gpu-operator: driver 580.105.08 on every GPU node" in by_phase["deployment"]
    assert by_phase["conformance"][:2] == ["conformance: platform-health", "conformance: gpu-operator-health"]
    assert set(report["extra"]["phases"]) == set(phases.PHASES)


def _seed(sim: SimServer, recipe: Path, **options: Any) -> None:
    document = yamlio.load_file(recipe)
    helmseed.seed(sim, document, breaks=options.get("breaks", {}), kernels={}, values=recipevalues.merged(document))


@pytest.fixture()
def seeded(
    gpu_sim: SimServer, training_recipe: Path, tmp_path: Path, run_cli: Any
) -> tuple[SimServer, Path, list[str]]:
    gpu_sim.add_gpu_nodes(8, racks=2, gpu="h100")
    kubeconfig = gpu_sim.write_kubeconfig(tmp_path / "kubeconfig")
    kc = ["--kubeconfig", str(kubeconfig)]
    assert run_cli("nvcrectl", "crds", "install", *kc).code == 0
    return gpu_sim, training_recipe, kc


def _patient(recipe: Path) -> Path:
    """The recipe with a performance timeout of 72 h of cluster time: at 600x that is 7 real
    minutes, so a busy machine slows the run without failing it."""
    document = yamlio.load_file(recipe)
    document["validation"]["performance"]["timeout"] = "72h"
    out = recipe.with_name("patient.yaml")
    out.write_text(json.dumps(document), encoding="utf-8")
    return out


def test_performance_with_a_slow_nic_fails_naming_that_node(seeded: Any, run_cli: Any) -> None:
    sim, recipe, kc = seeded
    _seed(sim, recipe)
    recipe = _patient(recipe)
    sim.fabric.inject(fabric.parse_all(["node-005:nic=0.4"]))
    sim.vclock.set_speed(600)  # the engine waits on the cluster's clock; let it run fast
    result = run_cli("aicr", "validate", "-r", str(recipe), "--phase", "performance", "-t", "json", *kc)
    assert result.code == 1, result.stderr
    report = json.loads(result.stdout)["results"]
    assert report["extra"]["phases"] == {
        "performance": {"status": "failed", "tests": 1, "passed": 0, "failed": 1, "skipped": 0}
    }
    (test,) = report["tests"]
    assert test["name"] == "performance: nccl-all-reduce-bw >= 300" and test["status"] == "failed"
    assert test["extra"]["nodes"] == ["node-005"]
    assert "node-005: ThresholdViolation" in test["message"]
    listed = run_cli("nvcrectl", "certification", "list", *kc).stdout.splitlines()
    assert len(listed) == 2 and listed[1].split()[1].startswith("aicr-performance-") and "Failed" in listed[1]


def test_performance_on_healthy_nodes_passes_with_the_measured_bandwidth(seeded: Any, run_cli: Any) -> None:
    sim, recipe, kc = seeded
    _seed(sim, recipe)
    recipe = _patient(recipe)
    sim.vclock.set_speed(600)
    result = run_cli("aicr", "validate", "-r", str(recipe), "--phase", "performance", *kc)
    assert result.code == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if "nccl-all-reduce-bw" in x)
    assert "PASSED" in line and "busBandwidthGBps" in line
    assert "performance: PASSED (1 passed, 0 failed, 0 skipped)" in result.stdout


def _with_conformance(recipe: Path, checks: list[str]) -> Path:
    document = yamlio.load_file(recipe)
    document["validation"]["conformance"]["checks"] = checks
    out = recipe.with_name("conformance.yaml")
    out.write_text(json.dumps(document), encoding="utf-8")
    return out


CONFORMANCE = [
    "platform-health",
    "gpu-operator-health",
    "accelerator-metrics",
    "gang-scheduling",
    "cluster-autoscaling",
]


def test_conformance_judges_the_listed_checks_from_the_api(seeded: Any, run_cli: Any) -> None:
    sim, recipe, kc = seeded
    _seed(sim, recipe)
    chosen = _with_conformance(recipe, CONFORMANCE)
    result = run_cli("aicr", "validate", "-r", str(chosen), "--phase", "conformance", "-t", "json", *kc)
    assert result.code == 0, result.stdout
    tests = {t["name"].removeprefix("conformance: "): t for t in json.loads(result.stdout)["results"]["tests"]}
    assert list(tests) == CONFORMANCE
    assert {n: t["status"] for n, t in tests.items()} == {
        "platform-health": "passed",
        "gpu-operator-health": "passed",
        "accelerator-metrics": "passed",
        "gang-scheduling": "passed",
        "cluster-autoscaling": "skipped",
    }
    assert "not judged from the API" in tests["cluster-autoscaling"]["message"]
    table = run_cli("aicr", "validate", "-r", str(chosen), "--phase", "conformance", *kc).stdout.splitlines()
    assert table[-2:] == [
        "PASSED: 4 of 5 checks passed, 1 skipped",
        "  conformance: PASSED (4 passed, 0 failed, 1 skipped)",
    ]


def test_dra_support_and_pod_autoscaling_pass_where_their_components_are_seeded(seeded: Any, run_cli: Any) -> None:
    """The simulated server serves resource.k8s.io/v1 and autoscaling/v2 as a 1.34 server does, so
    these two checks judge the recipe's DRA driver and prometheus-adapter like the others."""
    sim, recipe, kc = seeded
    _seed(sim, recipe)
    chosen = _with_conformance(recipe, ["dra-support", "pod-autoscaling"])
    result = run_cli("aicr", "validate", "-r", str(chosen), "--phase", "conformance", "-t", "json", *kc)
    tests = {t["name"].removeprefix("conformance: "): t for t in json.loads(result.stdout)["results"]["tests"]}
    assert {n: (t["status"], t.get("message", "")) for n, t in tests.items()} == {
        "dra-support": ("passed", ""),
        "pod-autoscaling": ("passed", ""),
    }
    assert result.code == 0, result.stdout


def test_conformance_fails_a_missing_crd_and_an_unknown_check_naming_them(seeded: Any, run_cli: Any) -> None:
    sim, recipe, kc = seeded
    _seed(sim, recipe, breaks={"kai-scheduler": "missing-crd"})
    chosen = _with_conformance(recipe, ["gang-scheduling", "gang-sheduling"])
    result = run_cli("aicr", "validate", "-r", str(chosen), "--phase", "conformance", "-t", "json", *kc)
    assert result.code == 1
    tests = json.loads(result.stdout)["results"]["tests"]
    assert [t["status"] for t in tests] == ["failed", "failed"]
    assert "CRD queues.scheduling.run.ai does not exist" in tests[0]["message"]
    assert tests[1]["message"].startswith("unknown conformance check; known: accelerator-metrics,")


def test_a_failed_phase_leaves_the_later_ones_skipped(seeded: Any, run_cli: Any) -> None:
    sim, recipe, kc = seeded
    document = yamlio.load_file(recipe)
    helmseed.seed(sim, document, breaks={}, kernels={}, values=recipevalues.merged(document), driver="570.158.01")
    result = run_cli("aicr", "validate", "-r", str(recipe), "--phase", "all", "-t", "json", *kc)
    assert result.code == 1
    report = json.loads(result.stdout)["results"]
    assert {p: s["status"] for p, s in report["extra"]["phases"].items()} == {
        "deployment": "failed",
        "performance": "skipped",
        "conformance": "skipped",
    }
    later = [t for t in report["tests"] if t["suite"][0] != "deployment"]
    assert later and all(t["message"] == "skipped: an earlier phase failed" for t in later)
    assert run_cli("nvcrectl", "certification", "list", *kc).stdout.count("aicr-performance-") == 0


def test_the_deployment_blocks_version_constraint_holds_the_helm_release(
    seeded: Any, run_cli: Any, tmp_path: Path
) -> None:
    sim, recipe, kc = seeded
    _seed(sim, recipe)
    document = yamlio.load_file(recipe)
    document["validation"]["deployment"]["constraints"] = [
        {"name": "Deployment.gpu-operator.version", "value": ">= v24.6.0"},
        {"name": "Deployment.gpu-operator.version", "value": ">= v26.1.0"},
        {"name": "Deployment.no-such.version", "value": ">= 1.0"},
    ]
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps(document), encoding="utf-8")
    result = run_cli("aicr", "validate", "-r", str(strict), "-t", "json", *kc)
    assert result.code == 1
    tests = {t["name"]: t for t in json.loads(result.stdout)["results"]["tests"]}
    assert tests["gpu-operator: Deployment.gpu-operator.version >= v24.6.0"]["status"] == "passed"
    newer = tests["gpu-operator: Deployment.gpu-operator.version >= v26.1.0"]
    assert (newer["status"], newer["message"]) == ("failed", "release runs v25.10.1; the recipe asks >= v26.1.0")
    assert tests["(deployment): Deployment.no-such.version >= 1.0"]["status"] == "failed"
