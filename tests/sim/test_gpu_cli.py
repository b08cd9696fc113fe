"""``python -m shared.sim`` for part 2: a GPU cluster served from the command line.

Covers: serve --gpu/--racks/--fault/--node-root/--speed registers labelled GPU nodes, serves the
janitor CRDs and writes node files; inject, clear and clock change a running server and print
JSON; a bad fault spec is invalid input (exit 2) before anything starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from shared.sim import control
from shared.sim.apiserver import kubeconfig


def _sim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shared.sim", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ),
        check=False,
    )


def test_a_gpu_cluster_served_from_the_command_line_can_be_faulted_and_repaired(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "shared.sim",
            "serve",
            "--port",
            "0",
            "--kubeconfig-out",
            str(config),
            "--nodes",
            "4",
            "--racks",
            "2",
            "--gpu",
            "gb200",
            "--speed",
            "0",
            "--fault",
            "node-001:nic=0.4",
            "--node-root",
            str(tmp_path / "nodes"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("ready https://127.0.0.1:")
        target = kubeconfig.read(config)
        node = control.api_request(target, "GET", "/api/v1/nodes/node-003")
        labels = node["metadata"]["labels"]
        assert (
            labels["nvidia.com/gpu.product"],
            labels["nvidia.com/gpu.count"],
            labels["nvidia.com/gpu.clique"],
            labels["topology.kubernetes.io/rack"],
        ) == ("NVIDIA-GB200", "4", "rack-1", "rack-1")
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "4"
        crd = control.api_request(
            target, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rebootnodes.janitor.dgxc.nvidia.com"
        )
        assert crd["spec"]["scope"] == "Cluster"
        assert (tmp_path / "nodes/node-001/sys/class/infiniband/mlx5_0/ports/1/rate").read_text().startswith("160")
        injected = _sim("inject", "--kubeconfig", str(config), "node-002:xid=79", "rack-0/rack-1:link=0.3")
        assert injected.returncode == 0, injected.stderr
        assert json.loads(injected.stdout)["faults"] == [
            "node-001:nic=0.4",
            "node-002:xid=79",
            "rack-0/rack-1:link=0.3",
        ]
        assert "Xid (PCI:0008:06:00): 79" in (tmp_path / "nodes/node-002/kern.log").read_text()
        cleared = _sim("clear", "--kubeconfig", str(config), "node-001", "rack-0/rack-1:link")
        assert json.loads(cleared.stdout)["faults"] == ["node-002:xid=79"]
        before = json.loads(_sim("clock", "--kubeconfig", str(config)).stdout)
        after = json.loads(_sim("clock", "--kubeconfig", str(config), "--advance", "3600").stdout)
        assert before["speed"] == 0 and after["now"][:13] != before["now"][:13]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        process.communicate(timeout=10)


def test_a_bad_fault_spec_is_invalid_input(tmp_path: Path) -> None:
    done = _sim("serve", "--kubeconfig-out", str(tmp_path / "k"), "--fault", "node-1:nic=2")
    assert done.returncode == 2 and "between 0 and 1" in done.stderr
