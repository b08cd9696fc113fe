"""Node-root files and repair: what nvsentinel's monitors read, and the janitor that answers them.

Covers: the Xid lines we write are the real samples' lines (same timestamp, bus id and code give
the same text); injecting faults updates kern.log, dcgm-health.json and the InfiniBand sysfs
tree, and clearing them restores it; RebootNode takes a node NotReady then Ready with a new
bootID, clears gpu-dead/xid/thermal but keeps NIC faults, and reports NodeReady=True (False for
an unknown node); GPUReset clears one GPU's faults and reports Complete=True.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from shared.sim import SimServer
from shared.sim.gpu import fabric, noderoot, stages

JANITOR = ("janitor.dgxc.nvidia.com", "v1alpha1")


def _sample_lines(team_shared: Path) -> list[str]:
    return (team_shared / "reference/samples/xid/kernel-log-lines.txt").read_text().splitlines()


def test_our_xid_lines_are_the_real_kernel_lines(team_shared: Path) -> None:
    lines = _sample_lines(team_shared)
    moment = datetime(2024, 4, 5, 21, 29, 39, tzinfo=UTC).timestamp()
    messages = stages.faults().xidMessages
    assert noderoot.xid_line(moment, "0000:a1:00", 79, messages[79]) == lines[23]
    for number, code in ((32, 48), (33, 64)):  # syslog-prefixed samples: compare from "NVRM:" on
        ours = noderoot.xid_line(moment, "0000:07:00", code, messages[code])
        assert ours[ours.index("NVRM:") :] == lines[number - 1][lines[number - 1].index("NVRM:") :]
    assert noderoot.stamp(datetime(2024, 8, 5, 3, 54, 13, tzinfo=UTC).timestamp()) == lines[15][:26]


def _files(root: Path, node: str) -> tuple[str, dict[str, Any], Path]:
    folder = root / node
    return (
        (folder / "kern.log").read_text(),
        json.loads((folder / "dcgm-health.json").read_text()),
        folder / "sys/class/infiniband",
    )


def test_node_files_follow_faults_as_they_come_and_go(gpu_sim: SimServer) -> None:
    (node,) = gpu_sim.add_gpu_nodes(1)
    root = gpu_sim.noderoot.root
    assert root is not None
    log, health, ib = _files(root, node)
    assert "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01" in log
    assert health["body"]["Overall Health"]["value"] == "Healthy"
    assert (ib / "mlx5_3/ports/1/state").read_text() == "4: ACTIVE\n"
    gpu_sim.fabric.inject(fabric.parse_all([f"{node}:xid[2]=79", f"{node}:nic[3]=0", f"{node}:thermal[1]"]))
    log, health, ib = _files(root, node)
    uuid = gpu_sim.fabric.nodes[node].gpu_uuids[2]
    assert f"NVRM: GPU at PCI:0000:0b:00: {uuid}" in log
    assert "NVRM: Xid (PCI:0000:0b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." in log
    gpus = health["body"]["GPU"]["children"]
    assert health["body"]["Overall Health"]["value"] == "Failure"
    assert gpus["GPU ID: 2"]["children"]["Driver system"]["children"]["Failure"]["error_code"] == "DCGM_FR_XID_ERROR"
    assert gpus["GPU ID: 1"]["children"]["Overall Health"]["value"] == "Warning"
    assert gpus["GPU ID: 0"]["children"] == {"Overall Health": {"value": "Healthy"}}
    assert (ib / "mlx5_3/ports/1/state").read_text() == "1: DOWN\n"
    assert (ib / "mlx5_3/ports/1/counters/link_downed").read_text() == "1\n"
    assert (ib / "mlx5_2/ports/1/state").read_text() == "4: ACTIVE\n"
    gpu_sim.fabric.remove(fabric.faultspec.parse_selector(f"{node}:nic"))
    assert (ib / "mlx5_3/ports/1/state").read_text() == "4: ACTIVE\n"
    assert (ib / "mlx5_3/ports/1/counters/link_downed").read_text() == "1\n"  # counters only reset at boot


def _reboot(api_client: Any, name: str, node: str) -> None:
    k8s.CustomObjectsApi(api_client).create_cluster_custom_object(
        *JANITOR,
        "rebootnodes",
        {"apiVersion": "/".join(JANITOR), "kind": "RebootNode", "metadata": {"name": name}, "spec": {"nodeName": node}},
    )


def _conditions(api_client: Any, plural: str, name: str) -> dict[str, str]:
    obj = k8s.CustomObjectsApi(api_client).get_cluster_custom_object(*JANITOR, plural, name)
    return {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}


def _ready(api_client: Any, node: str) -> tuple[str, str]:
    found = k8s.CoreV1Api(api_client).read_node(node)
    ready = next(c.status for c in found.status.conditions if c.type == "Ready")
    return ready, found.status.node_info.boot_id


def test_a_reboot_takes_the_node_down_and_back_clearing_what_a_reboot_clears(
    gpu_sim: SimServer, api_client: Any
) -> None:
    (node,) = gpu_sim.add_gpu_nodes(1)
    gpu_sim.fabric.inject(
        fabric.parse_all([f"{node}:gpu-dead[1]", f"{node}:xid=48", f"{node}:thermal", f"{node}:nic[0]=0.5"])
    )
    _, boot_before = _ready(api_client, node)
    _reboot(api_client, "fix-it", node)
    timings = stages.repair().reboot
    gpu_sim.advance(timings.signalSeconds + 1)
    assert _ready(api_client, node)[0] == "False"
    taints = k8s.CoreV1Api(api_client).read_node(node).spec.taints
    assert {t.key for t in taints} == {"node.kubernetes.io/not-ready"}
    assert _conditions(api_client, "rebootnodes", "fix-it") == {"NodeReady": "Unknown", "SignalSent": "True"}
    gpu_sim.advance(timings.downSeconds)
    ready, boot_after = _ready(api_client, node)
    assert ready == "True" and boot_after != boot_before
    assert not k8s.CoreV1Api(api_client).read_node(node).spec.taints
    assert _conditions(api_client, "rebootnodes", "fix-it")["NodeReady"] == "True"
    assert [str(f) for f in gpu_sim.fabric.faults] == [f"{node}:nic[0]=0.5"]
    root = gpu_sim.noderoot.root
    assert root is not None
    health = json.loads((root / node / "dcgm-health.json").read_text())
    assert health["body"]["Overall Health"]["value"] == "Healthy"
    assert (root / node / "kern.log").read_text().count("loading NVIDIA UNIX Open Kernel Module") == 2


def test_a_reboot_of_an_unknown_node_reports_node_not_found(gpu_sim: SimServer, api_client: Any) -> None:
    _reboot(api_client, "ghost", "node-404")
    gpu_sim.advance(1)
    assert _conditions(api_client, "rebootnodes", "ghost") == {"NodeReady": "False"}


def test_a_gpu_reset_clears_that_gpus_faults_and_completes(gpu_sim: SimServer, api_client: Any) -> None:
    (node,) = gpu_sim.add_gpu_nodes(1)
    gpu_sim.fabric.inject(fabric.parse_all([f"{node}:xid[3]=95", f"{node}:xid[4]=95"]))
    uuid = gpu_sim.fabric.nodes[node].gpu_uuids[3]
    k8s.CustomObjectsApi(api_client).create_cluster_custom_object(
        *JANITOR,
        "gpuresets",
        {
            "apiVersion": "/".join(JANITOR),
            "kind": "GPUReset",
            "metadata": {"name": "r3"},
            "spec": {"nodeName": node, "gpuUUID": uuid},
        },
    )
    gpu_sim.advance(1)
    assert _conditions(api_client, "gpuresets", "r3") == {"Complete": "Unknown"}
    gpu_sim.advance(stages.repair().gpuReset.seconds)
    assert _conditions(api_client, "gpuresets", "r3") == {"Complete": "True"}
    assert gpu_sim.fabric.xids(node) == [(4, 95)]
