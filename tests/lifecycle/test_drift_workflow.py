"""The CI workflow of docs/workflows.md, drift → re-certification, run with the real commands.

Covers, as subprocesses against the simulated cluster (its clock running 600 times real time):
``aicr snapshot`` takes the golden baseline; ``python -m shared.sim upgrade-driver`` upgrades one
node in place; ``aicr diff --fail-on-drift`` exits 1 and its report names that node;
``nvsentinel validation create --nodes-from drift.json --cordon --wait`` cordons exactly that node
(owner drift), the lifecycle controller of ``nvsentinel run`` takes the cordon over, the
certification engine it runs certifies the node, and the command exits 0; the node is
schedulable again with no ownership annotation left, and the untouched node was never cordoned.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from shared import nodes
from shared.lifecycle import resource as vresource

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env, check=False)


def test_a_driver_upgrade_fails_the_drift_gate_and_the_upgraded_node_is_recertified_and_returned(
    gpu_sim: Any, api_client: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    names = gpu_sim.add_gpu_nodes(2)
    gpu_sim.vclock.set_speed(600)
    kc = ["--kubeconfig", str(sim_kubeconfig)]
    baseline, drift = tmp_path / "baseline.yaml", tmp_path / "drift.json"
    assert _run(str(BIN / "aicr"), "snapshot", *kc, "-o", str(baseline)).returncode == 0
    upgraded = _run(
        sys.executable, "-m", "shared.sim", "upgrade-driver", "--version", "580.105.08", "--nodes", names[1], *kc
    )
    assert upgraded.returncode == 0, upgraded.stderr
    gate = _run(
        str(BIN / "aicr"), "diff", "--baseline", str(baseline), *kc, "--fail-on-drift", "-t", "json", "-o", str(drift)
    )
    assert gate.returncode == 1, gate.stderr
    assert sorted({n for c in json.loads(drift.read_text())["changes"] for n in c.get("nodes") or []}) == [names[1]]
    missing = _run(str(BIN / "nvsentinel"), "validation", "create", "--nodes-from", str(drift), "--cordon", *kc)
    assert (missing.returncode, missing.stderr) == (
        3,
        "error: validationrequests.nvsentinel.nvidia.com: the "
        "ValidationRequest CRD is not installed; run `nvsentinel crds "
        "install`\n",
    )
    assert not nodes.is_cordoned(nodes.get(api_client, names[1]))  # nothing written
    assert _run(str(BIN / "nvsentinel"), "crds", "install", *kc).returncode == 0
    controller = subprocess.Popen(
        [str(BIN / "nvsentinel"), "run", *kc], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        recertified = _run(
            str(BIN / "nvsentinel"),
            "validation",
            "create",
            "--nodes-from",
            str(drift),
            "--tests",
            "dcgm-diag",
            "--cordon",
            "--name",
            "recert-driver",
            "--wait",
            "--timeout",
            "2h",
            "-o",
            "json",
            *kc,
            timeout=240,
        )
    finally:
        controller.send_signal(signal.SIGINT)
        try:
            _, controller_log = controller.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            controller.kill()
            _, controller_log = controller.communicate()
        gpu_sim.vclock.set_speed(0)
    assert recertified.returncode == 0, recertified.stderr + controller_log
    assert recertified.stderr.startswith(f"node/{names[1]} cordoned (owner drift)\n")
    vr = json.loads(recertified.stdout)
    assert vr["status"]["phase"] == "Succeeded"
    assert [(g["tests"], g["nodes"], g["provider"]) for g in vr["status"]["testGroups"]] == [
        (["dcgm-diag"], [names[1]], "nvcre-provider")
    ]
    for name in names:
        node = nodes.get(api_client, name)
        assert not nodes.is_cordoned(node) and nodes.cordon_owner(node) is None
    assert vresource.get(api_client, "recert-driver")[0].status.phase == "Succeeded"
    assert controller.returncode == 0, controller_log
