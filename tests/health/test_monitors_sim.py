"""The dcgm and nic monitors against the simulated cluster's node root, faults and API.

Covers: ``gpu-dead`` and ``thermal`` faults become GpuPcieWatch (fatal) and GpuThermalWatch
(non-fatal) events on the right node and GPU; a repair publishes the healthy event quarantine's
un-quarantine path needs; ``nic[0]=0.0`` takes port mlx5_0 down (fatal) and its clearing brings a
healthy event; a port at 40 % of its rate is fatal and stays so while slow, the counters' one-off
growth recovers alone, the restored rate brings the healthy event; a port slow from the first read
is caught by its peers and a state file keeps what was reported; a run that publishes creates
HealthEvent resources once, not again on a repeat.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared.health import resource
from shared.health.monitors import agent, memory
from shared.sim.gpu import fabric
from shared.sim.gpu.faultspec import Kind, Selector

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture()
def cluster(gpu_sim: Any, tmp_path: Path) -> Iterator[tuple[Any, list[str], Path]]:
    names = gpu_sim.add_gpu_nodes(4)
    yield gpu_sim, names, tmp_path / "nodes"


def rows(events: list[Any]) -> list[tuple[str, str, str, bool, bool]]:
    return [(e.nodeName, e.checkName, e.entitiesImpacted[-1].entityValue, e.isFatal, e.isHealthy) for e in events]


def dcgm_read(root: Path, mem: memory.Memory) -> list[Any]:
    found = agent.targets(node=None, path=None, node_root=root, relative=agent.DCGM_FILE, flag="--file")
    return agent.dcgm_once(found, mem, NOW)


def nic_read(root: Path, mem: memory.Memory) -> list[Any]:
    return agent.nic_once(agent.targets(node=None, path=None, node_root=root, relative="sys", flag="--sysfs"), mem, NOW)


def test_gpu_dead_and_thermal_faults_become_dcgm_events_and_a_repair_a_healthy_one(cluster: Any) -> None:
    sim, names, root = cluster
    mem = memory.Memory()
    assert dcgm_read(root, mem) == []  # a healthy cluster reports nothing
    sim.fabric.inject(fabric.parse_all([f"{names[3]}:gpu-dead[2]", f"{names[1]}:thermal[5]"]))
    events = dcgm_read(root, mem)
    assert rows(events) == [
        (names[1], "GpuThermalWatch", "5", False, False),
        (names[3], "GpuPcieWatch", "2", True, False),
    ]
    assert [e.recommendedAction.name for e in events] == ["CONTACT_SUPPORT", "RESTART_BM"]
    assert events[1].errorCode == ["DCGM_FR_GPU_LOST"] and events[1].agent == "gpu-health-monitor"
    assert dcgm_read(root, mem) == []  # nothing new
    sim.fabric.clear_for_repair(names[3], [Kind.GPU_DEAD.value], gpu=2)
    assert rows(dcgm_read(root, mem)) == [(names[3], "GpuPcieWatch", "2", False, True)]


def test_a_nic_down_fault_is_a_fatal_port_event_and_its_clearing_a_healthy_one(cluster: Any) -> None:
    sim, names, root = cluster
    mem = memory.Memory()
    assert nic_read(root, mem) == []  # baseline of every port of every node
    sim.fabric.inject(fabric.parse_all([f"{names[2]}:nic[0]=0.0"]))
    events = nic_read(root, mem)
    assert rows(events) == [
        (names[2], "InfiniBandStateCheck", "mlx5_0/1", True, False),
        (names[2], "InfiniBandDegradationCheck", "mlx5_0/1", True, False),
    ]
    assert {e.recommendedAction.name for e in events} == {"REPLACE_VM"}
    assert "link_downed +1" in events[1].message
    sim.fabric.remove(Selector(node=names[2], kind=Kind.NIC))
    assert rows(nic_read(root, mem)) == [
        (names[2], "InfiniBandDegradationCheck", "mlx5_0/1", False, True),
        (names[2], "InfiniBandStateCheck", "mlx5_0/1", False, True),
    ]


def test_a_nic_at_40_percent_stays_unhealthy_while_degraded_and_recovers_when_restored(cluster: Any) -> None:
    sim, names, root = cluster
    mem = memory.Memory()
    nic_read(root, mem)
    sim.fabric.inject(fabric.parse_all([f"{names[0]}:nic[3]=0.4"]))
    rate, counters = nic_read(root, mem)
    assert rows([rate, counters]) == [
        (names[0], "InfiniBandLinkRateCheck", "mlx5_3/1", True, False),
        (names[0], "InfiniBandDegradationCheck", "mlx5_3/1", False, False),
    ]
    assert "160 Gb/sec, 40% of its nominal 400 Gb/sec" in rate.message
    assert (rate.recommendedAction.name, rate.errorCode) == ("REPLACE_VM", ["LINK_RATE_DEGRADED"])
    assert counters.errorCode == ["link_error_recovery", "symbol_error"]
    # the counters stopped growing, the link is still slow: only the counter check recovers
    assert rows(nic_read(root, mem)) == [(names[0], "InfiniBandDegradationCheck", "mlx5_3/1", False, True)]
    assert nic_read(root, mem) == []
    sim.fabric.remove(Selector(node=names[0], kind=Kind.NIC))
    assert rows(nic_read(root, mem)) == [(names[0], "InfiniBandLinkRateCheck", "mlx5_3/1", False, True)]


def test_a_port_that_comes_up_slow_is_caught_by_its_peers_and_a_state_file_keeps_its_best_rate(
    cluster: Any, tmp_path: Path
) -> None:
    sim, names, root = cluster
    sim.fabric.inject(fabric.parse_all([f"{names[1]}:nic[0]=0.75"]))
    state = tmp_path / "nic-state.json"
    first = memory.Memory(state)
    assert rows([e for e in nic_read(root, first) if e.checkName.endswith("LinkRateCheck")]) == [
        (names[1], "InfiniBandLinkRateCheck", "mlx5_0/1", False, False)  # 75 %: slow, not lost
    ]
    first.save()
    assert nic_read(root, memory.Memory(state)) == []  # a new run remembers it reported this


def test_the_cli_publishes_dcgm_events_once_with_a_state_file(
    cluster: Any, run_cli: Any, api_client: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    sim, names, root = cluster
    resource.install(api_client)
    sim.fabric.inject(fabric.parse_all([f"{names[3]}:gpu-dead"]))
    args = (
        "nvsentinel",
        "monitor",
        "dcgm",
        "--node-root",
        str(root),
        "--state",
        str(tmp_path / "s.json"),
        "--kubeconfig",
        str(sim_kubeconfig),
    )
    first = run_cli(*args)
    assert first.code == 0, first.stderr
    assert [json.loads(line)["checkName"] for line in first.stdout.splitlines()] == ["GpuPcieWatch"]
    assert run_cli(*args).stdout == ""
    stored = resource.list_events(api_client, node=names[3])
    assert [(s.event.checkName, s.event.isFatal) for s in stored] == [("GpuPcieWatch", True)]
