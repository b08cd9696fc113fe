"""The dcgm and nic monitors offline: parsing, upstream's names, memory and recoveries, the CLI.

Covers: ``dcgmi health -c -j`` incidents become one event per (watch, GPU) with upstream's
checkName/agent and mapped action; the real ``dcgmi diag -j`` sample; a repeated failure is
published once and a recovery is a healthy event (also across processes with a state file); a fake
sysfs tree's port states and counter growth; the polling loop is bounded by ``--for``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.health.monitors import agent, dcgm, memory, nic

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def health_doc(*incidents: tuple[int, str, str, str, str]) -> dict[str, Any]:
    """A ``dcgmi health -c -j`` document: (gpu, system, level, code, message) per incident."""
    gpus: dict[str, Any] = {f"GPU ID: {g}": {"children": {"Overall Health": {"value": "Healthy"}}} for g in range(2)}
    for gpu, system, level, code, message in incidents:
        gpus[f"GPU ID: {gpu}"]["children"][system] = {"children": {level: {"value": message, "error_code": code}}}
    return {
        "header": ["Health Monitor Report"],
        "body": {"Overall Health": {"value": "Failure"}, "GPU": {"children": gpus}},
    }


GPU_LOST = (1, "PCIe system", "Failure", "DCGM_FR_GPU_LOST", "GPU 1 is lost")
THERMAL = (0, "Thermal system", "Warning", "DCGM_FR_THERMAL_VIOLATIONS", "Thermal violations for GPU 0")
XID_79 = (0, "Driver system", "Failure", "DCGM_FR_XID_ERROR", "Detected XID 79 for GPU 0")
XID_13 = (1, "Driver system", "Warning", "DCGM_FR_XID_ERROR", "Detected XID 13 for GPU 1")


def summary(events: list[Any]) -> list[tuple[str, str, str, bool, bool, str]]:
    return [
        (e.nodeName, e.checkName, e.entitiesImpacted[-1].entityValue, e.isFatal, e.isHealthy, e.recommendedAction.name)
        for e in events
    ]


def test_health_incidents_become_one_event_per_watch_and_gpu_with_upstreams_names() -> None:
    events = dcgm.events(health_doc(GPU_LOST, THERMAL, XID_79, XID_13), node="n1", now=NOW)
    assert summary(events) == [
        ("n1", "GpuDriverWatch", "0", True, False, "RESTART_BM"),  # Xid 79 through the catalogue
        ("n1", "GpuThermalWatch", "0", False, False, "CONTACT_SUPPORT"),
        ("n1", "GpuDriverWatch", "1", False, False, "NONE"),  # a Warning is never fatal
        ("n1", "GpuPcieWatch", "1", True, False, "RESTART_BM"),
    ]
    assert {e.agent for e in events} == {"gpu-health-monitor"} and {e.componentClass for e in events} == {"GPU"}
    assert events[-1].errorCode == ["DCGM_FR_GPU_LOST"] and events[-1].entitiesImpacted[0].entityType == "GPU"


def test_the_real_dcgm_diag_sample_is_a_fatal_software_failure_on_gpu_0(team_shared: Path) -> None:
    path = team_shared / "reference/samples/dcgm/dcgm4.2.3-gb10-r1-j-software-fail.json"
    (event,) = dcgm.events(json.loads(path.read_text()), node="spark", now=NOW)
    assert (event.agent, event.checkName, event.isFatal, event.recommendedAction.name) == (
        "preflight-dcgm-diag",
        "DcgmDiagSoftware",
        True,
        "CONTACT_SUPPORT",
    )
    assert event.errorCode == ["29"] and event.entitiesImpacted[0].entityValue == "0"
    assert event.message.startswith("Persistence Mode: Persistence mode for GPU 0 is disabled")
    assert event.metadata["dcgmVersion"] == "4.2.3"


def test_a_document_that_is_neither_health_nor_diag_is_refused() -> None:
    with pytest.raises(errors.InvalidInput, match="not a `dcgmi health"):
        dcgm.events({"foo": 1}, node="n", now=NOW)


def test_a_repeated_failure_is_published_once_and_its_recovery_as_a_healthy_event(tmp_path: Path) -> None:
    mem = memory.Memory(tmp_path / "state.json")
    failing = dcgm.events(health_doc(GPU_LOST), node="n", now=NOW)
    assert summary(mem.changes("n", dcgm.AGENT, failing, now=NOW)) == [
        ("n", "GpuPcieWatch", "1", True, False, "RESTART_BM")
    ]
    assert mem.changes("n", dcgm.AGENT, failing, now=NOW) == []
    mem.save()
    later = memory.Memory(tmp_path / "state.json")  # a new process with the state file
    assert later.changes("n", dcgm.AGENT, dcgm.events(health_doc(GPU_LOST), node="n", now=NOW), now=NOW) == []
    (healed,) = later.changes("n", dcgm.AGENT, [], now=NOW)
    assert summary([healed]) == [("n", "GpuPcieWatch", "1", False, True, "NONE")]
    assert healed.errorCode == [] and healed.message == "GpuPcieWatch: no health failures"
    assert later.changes("n", dcgm.AGENT, [], now=NOW) == []


def test_another_nodes_recovery_is_not_inferred_from_this_nodes_read() -> None:
    mem = memory.Memory()
    mem.changes("a", dcgm.AGENT, dcgm.events(health_doc(GPU_LOST), node="a", now=NOW), now=NOW)
    assert mem.changes("b", dcgm.AGENT, [], now=NOW) == []


def make_port(sysfs: Path, dev: str, *, state: str = "4: ACTIVE", phys: str = "5: LinkUp", **counters: int) -> None:
    folder = sysfs / "class/infiniband" / dev / "ports/1"
    (folder / "counters").mkdir(parents=True, exist_ok=True)
    (folder / "state").write_text(state + "\n")
    (folder / "phys_state").write_text(phys + "\n")
    (folder / "link_layer").write_text("InfiniBand\n")
    for name, value in {"symbol_error": 0, "link_downed": 0, "port_rcv_data": 0, **counters}.items():
        (folder / "counters" / name).write_text(f"{value}\n")


def nic_read(sysfs: Path, mem: memory.Memory) -> list[Any]:
    return agent.nic_once([agent.Target("n", sysfs)], mem, NOW)


def test_nic_port_down_is_fatal_counter_growth_degrades_and_both_recover(tmp_path: Path) -> None:
    sysfs, mem = tmp_path / "sys", memory.Memory()
    make_port(sysfs, "mlx5_0")
    make_port(sysfs, "mlx5_1")
    assert nic_read(sysfs, mem) == []  # the first read is the baseline
    make_port(sysfs, "mlx5_0", state="1: DOWN", phys="3: Disabled")
    make_port(sysfs, "mlx5_1", symbol_error=50, port_rcv_data=10**9)  # traffic is not an error
    events = nic_read(sysfs, mem)
    assert summary(events) == [
        ("n", "InfiniBandStateCheck", "mlx5_0/1", True, False, "REPLACE_VM"),
        ("n", "InfiniBandDegradationCheck", "mlx5_1/1", False, False, "NONE"),
    ]
    assert events[1].errorCode == ["symbol_error"] and "symbol_error +50" in events[1].message
    # the port is still down (not re-published); the counters stopped growing (degradation recovered)
    assert summary(nic_read(sysfs, mem)) == [("n", "InfiniBandDegradationCheck", "mlx5_1/1", False, True, "NONE")]
    make_port(sysfs, "mlx5_0")
    assert summary(nic_read(sysfs, mem)) == [("n", "InfiniBandStateCheck", "mlx5_0/1", False, True, "NONE")]


def test_a_fatal_counter_growth_is_fatal_and_a_counter_reset_is_a_new_baseline(tmp_path: Path) -> None:
    sysfs, mem = tmp_path / "sys", memory.Memory()
    make_port(sysfs, "mlx5_0", link_downed=3, symbol_error=100)
    nic_read(sysfs, mem)
    make_port(sysfs, "mlx5_0", link_downed=4, symbol_error=100)
    assert summary(nic_read(sysfs, mem)) == [("n", "InfiniBandDegradationCheck", "mlx5_0/1", True, False, "REPLACE_VM")]
    make_port(sysfs, "mlx5_0")  # a reboot zeroed the counters
    assert summary(nic_read(sysfs, mem)) == [("n", "InfiniBandDegradationCheck", "mlx5_0/1", False, True, "NONE")]
    assert nic_read(sysfs, mem) == []


def test_a_vanished_nic_is_not_declared_recovered(tmp_path: Path) -> None:
    sysfs, mem = tmp_path / "sys", memory.Memory()
    make_port(sysfs, "mlx5_0", state="1: DOWN", phys="3: Disabled")
    assert len(nic_read(sysfs, mem)) == 1
    (sysfs / "class/infiniband/mlx5_0/ports/1/state").unlink()
    (sysfs / "class/infiniband/mlx5_0/ports/1/phys_state").unlink()
    for item in sorted((sysfs / "class/infiniband/mlx5_0").rglob("*"), reverse=True):
        item.unlink() if item.is_file() else item.rmdir()
    assert nic_read(sysfs, mem) == []


def test_polling_stops_when_its_duration_has_passed() -> None:
    reads: list[datetime] = []

    def read(now: datetime) -> list[Any]:
        reads.append(now)
        return []

    agent.poll(read, interval=0.02, duration=0.15, sink=lambda events: None)
    assert 2 <= len(reads) <= 10


def test_cli_dcgm_dry_run_prints_ndjson_and_a_table(run_cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "health.json"
    path.write_text(json.dumps(health_doc(GPU_LOST, THERMAL)))
    result = run_cli("nvsentinel", "monitor", "dcgm", "--file", str(path), "--node", "n1", "--dry-run")
    assert result.code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(e["checkName"], e["recommendedAction"]) for e in lines] == [
        ("GpuThermalWatch", "CONTACT_SUPPORT"),
        ("GpuPcieWatch", "RESTART_BM"),
    ]
    table = run_cli("nvsentinel", "monitor", "dcgm", "--file", str(path), "--node", "n1", "--dry-run", "-o", "table")
    assert table.stdout.splitlines()[0].split() == ["NODE", "CHECK", "ENTITY", "FATAL", "HEALTHY", "ACTION", "MESSAGE"]
    assert "GpuPcieWatch" in table.stdout


def test_cli_nic_with_a_state_file_reports_each_change_once(
    run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[Any] = []
    monkeypatch.setattr(agent, "publisher", lambda cluster, dry_run: published.extend)
    sysfs, state = tmp_path / "sys", tmp_path / "nic-state.json"
    make_port(sysfs, "mlx5_0")
    args = ("nvsentinel", "monitor", "nic", "--sysfs", str(sysfs), "--node", "n1", "--state", str(state))
    assert run_cli(*args).stdout == ""
    make_port(sysfs, "mlx5_0", state="1: DOWN", phys="3: Disabled", link_downed=1)
    first = [json.loads(line) for line in run_cli(*args).stdout.splitlines()]
    assert [(e["checkName"], e["isFatal"]) for e in first] == [
        ("InfiniBandStateCheck", True),
        ("InfiniBandDegradationCheck", True),
    ]
    make_port(sysfs, "mlx5_0", link_downed=1)
    healed = [json.loads(line) for line in run_cli(*args).stdout.splitlines()]
    assert [(e["checkName"], e["isHealthy"]) for e in healed] == [
        ("InfiniBandDegradationCheck", True),
        ("InfiniBandStateCheck", True),
    ]
    assert [e.isHealthy for e in published] == [False, False, True, True]


def test_a_dry_run_leaves_the_state_file_alone(run_cli: Any, tmp_path: Path) -> None:
    sysfs, state = tmp_path / "sys", tmp_path / "nic-state.json"
    make_port(sysfs, "mlx5_0", state="1: DOWN", phys="3: Disabled")
    args = ("nvsentinel", "monitor", "nic", "--sysfs", str(sysfs), "--node", "n1", "--state", str(state), "--dry-run")
    assert len(run_cli(*args).stdout.splitlines()) == 1
    assert not state.exists()
    assert len(run_cli(*args).stdout.splitlines()) == 1


def test_cli_refuses_a_missing_node_a_missing_file_and_for_without_interval(run_cli: Any, tmp_path: Path) -> None:
    assert run_cli("nvsentinel", "monitor", "dcgm", "--file", str(tmp_path / "x.json"), "--dry-run").code != 0
    missing = run_cli("nvsentinel", "monitor", "dcgm", "--file", str(tmp_path / "x.json"), "--node", "n", "--dry-run")
    assert (missing.code, missing.stderr) == (2, f"error: {tmp_path / 'x.json'}: file does not exist\n")
    looped = run_cli("nvsentinel", "monitor", "nic", "--node-root", str(tmp_path), "--for", "1s", "--dry-run")
    assert looped.code != 0 and "--for needs --interval" in looped.stderr


def test_a_roce_port_is_reported_under_the_ethernet_checks(tmp_path: Path) -> None:
    sysfs = tmp_path / "sys"
    make_port(sysfs, "mlx5_2", state="1: DOWN", phys="3: Disabled")
    (sysfs / "class/infiniband/mlx5_2/ports/1/link_layer").write_text("Ethernet\n")
    (port,) = nic.read_ports(sysfs)
    assert (port.state, port.phys_state, port.family, port.up) == ("DOWN", "Disabled", "Ethernet", False)
    (event,) = nic.events([port], node="n", now=NOW, mem=memory.Memory())
    assert (event.checkName, event.agent, event.componentClass) == ("EthernetStateCheck", "nic-health-monitor", "NIC")
