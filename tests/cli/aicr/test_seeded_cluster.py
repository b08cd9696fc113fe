"""The recipe → install → validate → drift loop on a simulated GPU cluster seeded from a real recipe.

Covers: the seed example's recipe installed (as Helm 3 would leave it) validates green, all its
components' asserts included; each breakage the simulator can make — a crash-looping pod whose phase
is Running, an older chart, a missing CRD, an unavailable workload, a node with an older kernel — is
caught with its object and reason; the seed installs the driver the recipe pins, and a cluster seeded
with another driver fails validate naming every node; a driver upgrade on two nodes shows exactly the
changed fields and those nodes in diff, and fails the gate with --fail-on-drift; against the recipe
as baseline, a driver or kernel off the recipe on some nodes is drift naming just those nodes (and
validate names them too); --wait succeeds once a broken workload recovers, in the cluster's virtual
time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.sim import SimServer, recipevalues
from shared.sim.gpu import fabriccontrol, helmseed

SEED = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "inference", "--platform", "dynamo"]


@pytest.fixture()
def cluster(gpu_sim: SimServer, tmp_path: Path, run_cli) -> Iterator[tuple[SimServer, Path, Path]]:  # type: ignore[no-untyped-def]
    gpu_sim.add_gpu_nodes(8, racks=2, gpu="h100")
    recipe = tmp_path / "recipe.yaml"
    assert run_cli("aicr", "recipe", *SEED, "-o", str(recipe)).code == 0
    yield gpu_sim, recipe, gpu_sim.write_kubeconfig(tmp_path / "kubeconfig")


def _seed(sim: SimServer, recipe: Path, **options: Any) -> None:
    """As ``python -m shared.sim seed --recipe`` does: each component with its merged values."""
    document = yamlio.load_file(recipe)
    helmseed.seed(
        sim,
        document,
        breaks=options.get("breaks", {}),
        kernels=options.get("kernels", {}),
        values=recipevalues.merged(document),
        driver=options.get("driver"),
    )


def _failed(result: Any) -> list[str]:
    report = json.loads(result.stdout)
    return [f"{t['name']}: {t['message']}" for t in report["results"]["tests"] if t["status"] == "failed"]


def test_the_seed_recipe_installed_as_helm_would_validates_green(cluster, run_cli) -> None:  # type: ignore[no-untyped-def]
    sim, recipe, kubeconfig = cluster
    _seed(sim, recipe)
    result = run_cli("aicr", "validate", "--recipe", str(recipe), "--kubeconfig", str(kubeconfig), "-t", "json")
    assert result.code == 0, _failed(result)
    summary = json.loads(result.stdout)["results"]["summary"]
    assert summary["failed"] == 0 and summary["passed"] > 50


@pytest.mark.parametrize(
    ("options", "component", "expected"),
    [
        ({"breaks": {"gpu-operator": "crashloop"}}, "gpu-operator", "waiting: CrashLoopBackOff (phase Running)"),
        ({"breaks": {"cert-manager": "old-chart"}}, "cert-manager", "runs chart version"),
        ({"breaks": {"kai-scheduler": "missing-crd"}}, "kai-scheduler", "does not exist"),
        ({"breaks": {"nvsentinel": "unavailable"}}, "nvsentinel", "replicas ready"),
        (
            {"kernels": {"node-003": "6.5.0-1019-aws"}},
            "(constraints)",
            "OS.sysctl./proc/sys/kernel/osrelease >= 6.8: kernel 6.5.0-1019-aws on node-003 does not satisfy "
            "the recipe's OS.sysctl./proc/sys/kernel/osrelease >= 6.8",
        ),
    ],
    ids=["crashloop", "old-chart", "missing-crd", "unavailable", "old-kernel"],
)
def test_each_breakage_is_caught_with_its_reason(
    cluster,
    run_cli,
    options: dict[str, Any],  # type: ignore[no-untyped-def]
    component: str,
    expected: str,
) -> None:
    sim, recipe, kubeconfig = cluster
    _seed(sim, recipe, **options)
    result = run_cli("aicr", "validate", "--recipe", str(recipe), "--kubeconfig", str(kubeconfig), "-t", "json")
    assert result.code == 1
    failures = _failed(result)
    assert failures and all(f.startswith(f"{component}: ") for f in failures), failures
    assert any(expected in f for f in failures), failures


def test_a_driver_upgrade_shows_exactly_the_changed_fields_and_fails_the_gate(cluster, run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sim, recipe, kubeconfig = cluster
    _seed(sim, recipe)
    kc = ["--kubeconfig", str(kubeconfig)]
    baseline = tmp_path / "golden.yaml"
    assert run_cli("aicr", "snapshot", *kc, "-o", str(baseline)).code == 0
    before = yamlio.load_file(baseline)
    old = next(s["data"]["driver"] for m in before["measurements"] for s in m["subtypes"] if s["subtype"] == "smi")
    fabriccontrol.upgrade_driver(sim, "580.126.09", ["node-001", "node-002"])
    result = run_cli("aicr", "diff", "--baseline", str(baseline), *kc, "--fail-on-drift", "-t", "json")
    assert result.code == 1
    changes = {c["path"]: c for c in json.loads(result.stdout)["changes"]}
    assert old == "580.105.08"  # the seed installed the driver the recipe pins
    assert changes["GPU.smi.driver"]["target"] == "580.105.08 | 580.126.09"
    new_driver = [c for p, c in changes.items() if p.startswith(("NodeTopology.driver.580.126", "NodeTopology.label"))]
    assert new_driver and all(c["nodes"] == ["node-001", "node-002"] for c in new_driver)
    assert sorted(changes) == [
        "GPU.driver.daemonset.image",
        "GPU.smi.driver",
        "K8s.image.gpu-operator/DaemonSet/nvidia-driver-daemonset/main",
        "K8s.nodepool.p5.48xlarge/driver",
        "NodeTopology.driver.580.105.08",
        "NodeTopology.driver.580.126.09",
        "NodeTopology.label.nvidia.com/cuda.driver.minor=105",
        "NodeTopology.label.nvidia.com/cuda.driver.minor=126",
        "NodeTopology.label.nvidia.com/cuda.driver.rev=08",
        "NodeTopology.label.nvidia.com/cuda.driver.rev=09",
        "NodeTopology.summary.label-count",
    ]


def test_wait_passes_once_the_broken_workload_recovers(cluster, run_cli) -> None:  # type: ignore[no-untyped-def]
    sim, recipe, kubeconfig = cluster
    _seed(sim, recipe, breaks={"nvsentinel": "unavailable"})
    assert run_cli("aicr", "validate", "--recipe", str(recipe), "--kubeconfig", str(kubeconfig)).code == 1
    sim.vclock.set_speed(60)  # one virtual minute per real second: --wait polls every 5 virtual seconds
    repair = threading.Timer(0.5, lambda: _seed(sim, recipe))  # the same install, healthy this time
    repair.start()
    try:
        result = run_cli(
            "aicr", "validate", "--recipe", str(recipe), "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "10m"
        )
    finally:
        repair.join()
    assert result.code == 0, result.stdout
    assert "waiting for" in result.stderr


def test_a_cluster_seeded_with_another_driver_fails_validate_naming_every_node(cluster, run_cli) -> None:  # type: ignore[no-untyped-def]
    sim, recipe, kubeconfig = cluster
    _seed(sim, recipe, driver="570.158.01")
    result = run_cli("aicr", "validate", "--recipe", str(recipe), "--kubeconfig", str(kubeconfig), "-t", "json")
    assert result.code == 1
    failed = [t for t in json.loads(result.stdout)["results"]["tests"] if t["status"] == "failed"]
    assert [t["name"] for t in failed] == ["gpu-operator: driver 580.105.08 on every GPU node"]
    assert failed[0]["message"] == "driver 570.158.01 on node-000..node-007 does not match the recipe's 580.105.08"
    assert failed[0]["extra"]["nodes"] == [f"node-{i:03d}" for i in range(8)]


def test_a_driver_upgrade_on_some_nodes_names_only_those_in_validate_and_diff(cluster, run_cli) -> None:  # type: ignore[no-untyped-def]
    sim, recipe, kubeconfig = cluster
    _seed(sim, recipe)
    kc = ["--kubeconfig", str(kubeconfig)]
    assert run_cli("aicr", "diff", "--baseline", str(recipe), *kc, "--fail-on-drift").code == 0
    fabriccontrol.upgrade_driver(sim, "580.126.09", ["node-002", "node-005", "node-006"])
    table = run_cli("aicr", "validate", "--recipe", str(recipe), *kc)
    assert table.code == 1
    assert "driver 580.126.09 on node-002, node-005..node-006 does not match the recipe's 580.105.08" in table.stdout
    drift = run_cli("aicr", "diff", "--baseline", str(recipe), *kc, "--fail-on-drift", "-t", "json")
    assert drift.code == 1
    assert json.loads(drift.stdout)["changes"] == [
        {
            "kind": "modified",
            "path": "GPU.smi.driver",
            "baseline": "580.105.08",
            "target": "580.126.09",
            "nodes": ["node-002", "node-005", "node-006"],
        }
    ]


def test_a_kernel_below_the_recipe_is_drift_from_the_recipe_naming_the_node(cluster, run_cli) -> None:  # type: ignore[no-untyped-def]
    sim, recipe, kubeconfig = cluster
    _seed(sim, recipe, kernels={"node-004": "6.5.0-1019-aws"})
    drift = run_cli("aicr", "diff", "--baseline", str(recipe), "--kubeconfig", str(kubeconfig), "-t", "json")
    assert drift.code == 0  # a report, not a gate, without --fail-on-drift
    assert json.loads(drift.stdout)["changes"] == [
        {
            "kind": "modified",
            "path": "OS.sysctl./proc/sys/kernel/osrelease",
            "baseline": ">= 6.8",
            "target": "6.5.0-1019-aws",
            "nodes": ["node-004"],
        }
    ]
