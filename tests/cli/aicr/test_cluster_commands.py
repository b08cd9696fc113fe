"""``aicr snapshot``, ``aicr validate`` and ``aicr diff`` against the simulated cluster, end to end.

Covers: two snapshots of an unchanged cluster are identical; cm:// round trip; validate green on a
healthy install and red, with the object and reason, for a crash-looping pod whose phase is Running, an
older chart version, a missing CRD and an unavailable deployment; --wait times out with exit 5; diff
finds a taint with its node and exits 1 only with --fail-on-drift; a recipe as diff baseline; an
unreachable API exits 6 naming the server; a token without rights exits 4; a bad snapshot file exits 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from tests.validate import install


@pytest.fixture()
def recipe_file(tmp_path: Path) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(yamlio.dumps(install.recipe_document()))
    return path


def test_two_snapshots_of_an_unchanged_cluster_are_identical(
    run_cli,
    sim_kubeconfig: Path,
    api_client: Any,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    install.install(api_client)
    first = run_cli("aicr", "snapshot", "--kubeconfig", str(sim_kubeconfig))
    second = run_cli("aicr", "snapshot", "--kubeconfig", str(sim_kubeconfig))
    assert first.code == 0, first.stderr
    assert first.stdout == second.stdout
    doc = yamlio.loads(first.stdout)
    assert doc["kind"] == "Snapshot"
    flat = {
        f"{m['type']}.{s['subtype']}.{k}": v
        for m in doc["measurements"]
        for s in m["subtypes"]
        for k, v in s["data"].items()
    }
    assert flat["K8s.helm.widgets/widget-operator.version"] == "v1.2.3"
    assert flat["K8s.image.widgets/Deployment/widget-operator/manager"] == "example.com/widget-operator:1.2.3"
    assert flat[f"K8s.crd.{install.CRD_NAME}"] == "established"


def test_a_snapshot_round_trips_through_a_configmap(
    run_cli,
    sim_kubeconfig: Path,
    recipe_file: Path,  # type: ignore[no-untyped-def]
    api_client: Any,
) -> None:
    install.install(api_client)
    kc = ["--kubeconfig", str(sim_kubeconfig)]
    assert run_cli("aicr", "snapshot", "-o", "cm://default/golden", *kc).code == 0
    assert run_cli("aicr", "snapshot", "-o", "cm://default/golden", *kc).code == 0  # update in place
    result = run_cli("aicr", "diff", "--baseline", "cm://default/golden", "--target", "cm://default/golden", *kc)
    assert result.code == 0 and yamlio.loads(result.stdout)["summary"]["total"] == 0
    validated = run_cli("aicr", "validate", "--recipe", str(recipe_file), "--snapshot", "cm://default/golden", *kc)
    assert validated.code == 0, validated.stdout


def test_validate_passes_a_healthy_install(
    run_cli,
    sim_kubeconfig: Path,
    recipe_file: Path,  # type: ignore[no-untyped-def]
    api_client: Any,
) -> None:
    install.install(api_client)
    result = run_cli("aicr", "validate", "--recipe", str(recipe_file), "--kubeconfig", str(sim_kubeconfig))
    assert result.code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "PASSED: 5 of 5 checks passed"


@pytest.mark.parametrize(
    ("breakage", "failing"),
    [
        (
            {"crashloop": True},
            "pod widget-operator-7d9f8-abcde container manager waiting: CrashLoopBackOff (phase Running)",
        ),
        (
            {"chart_version": "v1.1.0"},
            "release widgets/widget-operator runs chart version v1.1.0, the recipe pins v1.2.3",
        ),
        ({"crd": False}, f"CRD {install.CRD_NAME} does not exist"),
        ({"ready": False}, "0 of 1 replicas ready"),
    ],
    ids=["crashloop-while-running", "old-chart", "missing-crd", "unavailable"],
)
def test_validate_catches_each_breakage_with_its_reason(
    run_cli,
    sim_kubeconfig: Path,
    recipe_file: Path,  # type: ignore[no-untyped-def]
    api_client: Any,
    breakage: dict[str, Any],
    failing: str,
) -> None:
    install.install(api_client, **breakage)
    result = run_cli(
        "aicr", "validate", "--recipe", str(recipe_file), "--kubeconfig", str(sim_kubeconfig), "--format", "json"
    )
    assert result.code == 1
    report = json.loads(result.stdout)
    assert report["reportFormat"] == "CTRF"
    failed = [t for t in report["results"]["tests"] if t["status"] == "failed"]
    assert [t["message"] for t in failed] == [failing]
    assert report["results"]["summary"]["failed"] == 1


def test_validate_wait_times_out_with_exit_5(
    run_cli,
    sim_kubeconfig: Path,
    recipe_file: Path,  # type: ignore[no-untyped-def]
    api_client: Any,
) -> None:
    install.install(api_client, ready=False)
    result = run_cli(
        "aicr",
        "validate",
        "--recipe",
        str(recipe_file),
        "--kubeconfig",
        str(sim_kubeconfig),
        "--wait",
        "--timeout",
        "1ms",
    )
    assert result.code == 5
    assert result.stderr.splitlines()[-1].startswith("error: timed out after ")


def test_diff_finds_a_taint_and_fails_only_when_asked(
    run_cli,
    sim_kubeconfig: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    kubectl,
    api_client: Any,
) -> None:
    from shared.kube import rest

    for name in ("node-000", "node-001"):
        rest.create(api_client, rest.core_path("nodes"), {"metadata": {"name": name}})
    kc = ["--kubeconfig", str(sim_kubeconfig)]
    baseline = tmp_path / "baseline.yaml"
    assert run_cli("aicr", "snapshot", "-o", str(baseline), *kc).code == 0
    kubectl("taint", "node", "node-000", "nvidia.com/gpu-unhealthy=xid-79:NoSchedule")
    relaxed = run_cli("aicr", "diff", "--baseline", str(baseline), *kc, "--format", "json")
    assert relaxed.code == 0
    changes = json.loads(relaxed.stdout)["changes"]
    taint = [c for c in changes if c["path"].startswith("NodeTopology.taint.")]
    assert taint == [
        {
            "kind": "added",
            "path": "NodeTopology.taint.nvidia.com/gpu-unhealthy=xid-79:NoSchedule",
            "target": "node-000",
            "nodes": ["node-000"],
        }
    ]
    strict = run_cli("aicr", "diff", "--baseline", str(baseline), *kc, "--fail-on-drift")
    assert strict.code == 1
    waived = run_cli("aicr", "diff", "--baseline", str(baseline), *kc, "--fail-on-drift", "--ignore", "NodeTopology.*")
    assert waived.code == 0


def test_diff_against_a_recipe_reports_the_chart_drift(
    run_cli,
    sim_kubeconfig: Path,
    recipe_file: Path,  # type: ignore[no-untyped-def]
    api_client: Any,
) -> None:
    install.install(api_client, chart_version="v1.1.0")
    result = run_cli(
        "aicr",
        "diff",
        "--baseline",
        str(recipe_file),
        "--kubeconfig",
        str(sim_kubeconfig),
        "--fail-on-drift",
        "--format",
        "json",
    )
    assert result.code == 1
    assert json.loads(result.stdout)["changes"] == [
        {
            "kind": "modified",
            "path": "K8s.helm.widgets/widget-operator.version",
            "baseline": "v1.2.3",
            "target": "v1.1.0",
        }
    ]


def test_an_unreachable_api_exits_6_naming_the_server(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from shared.sim.apiserver import kubeconfig

    config = tmp_path / "kc"
    kubeconfig.write(config, "https://127.0.0.1:9", "token", user="nobody", namespace="default", ca_pem=None)
    result = run_cli("aicr", "snapshot", "--kubeconfig", str(config))
    assert result.code == 6
    assert "127.0.0.1" in result.stderr.splitlines()[-1]


def test_a_token_without_rights_exits_4(run_cli, sim_identity, recipe_file: Path) -> None:  # type: ignore[no-untyped-def]
    config = sim_identity("default", "nobody")
    result = run_cli("aicr", "validate", "--recipe", str(recipe_file), "--kubeconfig", str(config))
    assert result.code == 4
    assert result.stderr.splitlines()[-1].startswith("error: ")


def test_a_bad_snapshot_file_exits_2(run_cli, sim_kubeconfig: Path, recipe_file: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "snap.yaml"
    bad.write_text("kind: Snapshot\nmeasurements: {not: a list}\n")
    result = run_cli(
        "aicr", "validate", "--recipe", str(recipe_file), "--snapshot", str(bad), "--kubeconfig", str(sim_kubeconfig)
    )
    assert result.code == 2
    assert result.stderr.startswith(f"error: {bad}")


def test_recipe_and_bundle_read_their_inputs_from_configmaps(
    run_cli,
    sim_kubeconfig: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    team_shared: Path,
) -> None:
    kc = ["--kubeconfig", str(sim_kubeconfig)]
    snapshot_file = team_shared / "research/aicr-golden/inputs/snapshot-old-k8s-gb200.yaml"
    from shared import refs
    from shared.kube.client import LazyClient

    api = LazyClient(kubeconfig=sim_kubeconfig)
    refs.write_text("cm://default/old-cluster", snapshot_file.read_text(), component="snapshot", api=api)
    from_cm = run_cli(
        "aicr",
        "recipe",
        "--snapshot",
        "cm://default/old-cluster",
        "--intent",
        "training",
        *kc,
        "-o",
        str(tmp_path / "recipe.yaml"),
    )
    from_file = run_cli("aicr", "recipe", "--snapshot", str(snapshot_file), "--intent", "training")
    assert from_cm.code == 0, from_cm.stderr
    assert (tmp_path / "recipe.yaml").read_text() == from_file.stdout
    assert run_cli("aicr", "snapshot", *kc, "-o", "cm://default/live").code == 0
    recipe_text = (tmp_path / "recipe.yaml").read_text()
    refs.write_text("cm://default/recipe", recipe_text, component="recipe", api=api)
    api.close()
    bundled = run_cli(
        "aicr",
        "bundle",
        "--recipe",
        "cm://default/recipe",
        *kc,
        "--deployer",
        "helmfile",
        "-o",
        str(tmp_path / "bundle"),
    )
    assert bundled.code == 0, bundled.stderr
    assert (tmp_path / "bundle" / "recipe.yaml").read_text() == recipe_text
