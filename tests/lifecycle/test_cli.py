"""``nvsentinel validation`` and the lifecycle values: exit codes, one-line errors, output.

Covers: an unknown test name on the command line, in defaultTests or in a test's provider, and a
criterion that is not CEL, each exit 2 with one stderr line naming the flag or the values field
and nothing written; ``crds install`` installs the ValidationRequest CRD; ``create`` (with and
without --cordon), ``list`` as a table and JSON, ``get -o json``, ``kubectl get vr`` with its
printer columns and the label selector on validation-state, and ``delete``; ``--wait`` with the
controller running exits 0 on a pass, 1 on a failure and 5 on a timeout.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import nodes
from shared.lifecycle import resource as vresource
from shared.lifecycle import sessions
from shared.sim.gpu import fabric
from tests.lifecycle import kit


def _values(tmp_path: Path, text: str) -> str:
    path = tmp_path / "values.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("values", "flags", "line"),
    [
        ("", ["--tests", "nccl-all-reduse"], "error: --tests: unknown test 'nccl-all-reduse'; known: dcgm-diag, "),
        (
            "lifecycle-manager:\n  config:\n    defaultTests: [nope]\n",
            [],
            "error: {path}: lifecycle-manager.config.defaultTests: unknown test 'nope'\n",
        ),
        (
            "lifecycle-manager:\n  config:\n    tests:\n      mine: {provider: gpu-burn, command: [x]}\n",
            [],
            "error: {path}: lifecycle-manager.config.tests.mine: provider: unknown provider 'gpu-burn'; known: "
            "k8s-job-provider, nvcre-provider\n",
        ),
        (
            "lifecycle-manager:\n  config:\n    readinessCriteria: [{name: broken, expression: 'node.spec.('}]\n",
            [],
            "error: {path}: lifecycle-manager.config.readinessCriteria[0]: rule 'broken': invalid CEL",
        ),
        (
            "lifecycle-manager:\n  config:\n    maxConcurrentGroups: 0\n",
            [],
            "error: {path}: lifecycle-manager.config.maxConcurrentGroups: Input should be greater than or equal to 1\n",
        ),
    ],
    ids=["unknown-test-flag", "unknown-default-test", "unknown-provider", "bad-cel", "bad-number"],
)
def test_bad_lifecycle_input_is_one_line_naming_the_field_and_exit_2(
    run_cli: Any, tmp_path: Path, values: str, flags: list[str], line: str
) -> None:
    path = _values(tmp_path, values)
    result = run_cli(
        "nvsentinel",
        "validation",
        "create",
        "--nodes",
        "node-000",
        "--values",
        path,
        *flags,
        "--kubeconfig",
        str(tmp_path / "none"),
    )
    assert result.code == 2
    assert result.stderr.startswith(line.format(path=path)) and result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_create_list_get_and_delete_against_the_cluster(
    run_cli: Any, gpu_sim: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    names = gpu_sim.add_gpu_nodes(2)
    k = ["--kubeconfig", str(sim_kubeconfig)]
    installed = run_cli("nvsentinel", "crds", "install", *k)
    assert "customresourcedefinition/validationrequests.nvsentinel.nvidia.com established\n" in installed.stderr
    created = run_cli(
        "nvsentinel",
        "validation",
        "create",
        "--nodes",
        ",".join(names),
        "--tests",
        "nccl-all-reduce,nemotron-5b",
        "--name",
        "vr-cli",
        "--cordon",
        *k,
    )
    assert created.code == 0
    assert created.stderr == (
        f"node/{names[0]} cordoned (owner drift)\nnode/{names[1]} cordoned (owner drift)\n"
        "validationrequest.nvsentinel.nvidia.com/vr-cli created\n"
    )
    table = run_cli("nvsentinel", "validation", "list", *k)
    assert table.stdout == (
        "NAME    PHASE  NODES              TESTS                        FAILED NODES\n"
        f"vr-cli         {names[0]},{names[1]}  nccl-all-reduce,nemotron-5b\n"
    )
    listed = json.loads(run_cli("nvsentinel", "validation", "list", "-o", "json", *k).stdout)
    assert [(r["metadata"]["name"], r["spec"]["tests"]) for r in listed] == [
        ("vr-cli", ["nccl-all-reduce", "nemotron-5b"])
    ]
    got = json.loads(run_cli("nvsentinel", "validation", "get", "vr-cli", "-o", "json", *k).stdout)
    assert got["spec"]["nodes"] == [{"name": names[0]}, {"name": names[1]}]
    missing = run_cli("nvsentinel", "validation", "get", "vr-nope", *k)
    assert missing.code == 3 and missing.stderr.count("\n") == 1
    assert (
        run_cli("nvsentinel", "validation", "delete", "vr-cli", *k).stderr
        == "validationrequest.nvsentinel.nvidia.com/vr-cli deleted\n"
    )
    assert run_cli("nvsentinel", "validation", "list", "-o", "json", *k).stdout == "[]\n"


def test_kubectl_gets_requests_with_their_columns_and_nodes_by_validation_state(
    gpu_sim: Any, api_client: Any, kubectl: Any, tmp_path: Path
) -> None:
    names = gpu_sim.add_gpu_nodes(2)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[1]}:gpu-dead"]))
    ctl = kit.make(api_client, tmp_path, kit.FAST + "    providers:\n      k8s-job-provider: {kind: Job, retries: 0}\n")
    vresource.create(api_client, "vr-kubectl", names, ["dcgm-diag-test"], source="test")
    kit.drive(gpu_sim, ctl, "vr-kubectl")
    lines = kubectl("get", "vr").stdout.splitlines()
    assert lines[0].split() == ["NAME", "PHASE", "NODES", "TESTS", "AGE"]
    assert lines[1].split()[:4] == ["vr-kubectl", "Failed", f"{names[0]},{names[1]}", "dcgm-diag-test"]
    failed = kubectl("get", "nodes", "-l", f"{sessions.STATE_LABEL}=validation-failed", "-o", "name").stdout
    assert failed == f"node/{names[1]}\n"


@pytest.fixture()
def running(gpu_sim: Any, api_client: Any, tmp_path: Path) -> Iterator[tuple[Any, Any, list[str], str]]:
    """A lifecycle controller on its own thread, the cluster's clock running 600 times real time."""
    names = gpu_sim.add_gpu_nodes(2)
    ctl = kit.make(api_client, tmp_path, kit.FAST + "    providers:\n      k8s-job-provider: {kind: Job, retries: 0}\n")
    gpu_sim.vclock.set_speed(600)
    stop = threading.Event()
    thread = threading.Thread(target=ctl.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield gpu_sim, api_client, names, str(tmp_path / "values.yaml")
    finally:
        stop.set()
        thread.join(timeout=60)  # generous: the loop ends within a poll of a stop
        gpu_sim.vclock.set_speed(0)


def test_wait_exits_0_on_a_pass_1_on_a_failure_and_5_on_a_timeout(
    run_cli: Any, running: Any, sim_kubeconfig: Path
) -> None:
    sim, api, names, values = running
    k = ["--kubeconfig", str(sim_kubeconfig), "--values", values]
    passed = run_cli(
        "nvsentinel",
        "validation",
        "create",
        "--nodes",
        names[0],
        "--name",
        "vr-ok",
        "--wait",
        "--timeout",
        "1h",
        "-o",
        "json",
        *k,
    )
    assert passed.code == 0 and json.loads(passed.stdout)["status"]["phase"] == "Succeeded"
    assert not nodes.is_cordoned(nodes.get(api, names[0]))
    sim.fabric.inject(fabric.parse_all([f"{names[1]}:gpu-dead"]))
    failed = run_cli("nvsentinel", "validation", "create", "--nodes", names[1], "--name", "vr-bad", "--wait", *k)
    assert failed.code == 1 and failed.stdout.splitlines()[1].split()[:2] == ["vr-bad", "Failed"]
    late = run_cli(
        "nvsentinel", "validation", "create", "--nodes", names[0], "--name", "vr-slow", "--wait", "--timeout", "30s", *k
    )
    assert late.code == 5
    assert late.stderr.endswith("error: validationrequest vr-slow did not finish within 30s\n")
