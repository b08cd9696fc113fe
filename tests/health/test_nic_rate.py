"""The NIC monitor's link-rate check over a hand-made sysfs tree, and the ``rate`` parser.

Covers: a port that slows down is reported on its first slow read and not again while slow, a
change across the fatal fraction is a new event, the restored rate is the healthy event; a down
port is the state check's, not the rate check's; the ``rate`` text parser never crashes and reads
back any rate it is given.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.health.monitors import agent, memory, nic

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def port(sysfs: Path, dev: str, rate: str, *, state: str = "4: ACTIVE") -> None:
    folder = sysfs / "class/infiniband" / dev / "ports/1"
    (folder / "counters").mkdir(parents=True, exist_ok=True)
    (folder / "state").write_text(state + "\n")
    (folder / "phys_state").write_text(("5: LinkUp" if "ACTIVE" in state else "3: Disabled") + "\n")
    (folder / "link_layer").write_text("Ethernet\n")
    (folder / "rate").write_text(rate + "\n")


def read(sysfs: Path, mem: memory.Memory) -> list[tuple[str, bool, bool]]:
    events = agent.nic_once([agent.Target("n", sysfs)], mem, NOW)
    return [(e.checkName, e.isFatal, e.isHealthy) for e in events]


def test_a_slow_port_stays_reported_until_its_rate_is_back(tmp_path: Path) -> None:
    sysfs, mem = tmp_path / "sys", memory.Memory()
    port(sysfs, "mlx5_0", "200 Gb/sec (4X HDR)")
    assert read(sysfs, mem) == []
    port(sysfs, "mlx5_0", "150 Gb/sec (3X HDR)")  # no peer: the port's own best rate is nominal
    assert read(sysfs, mem) == [("EthernetLinkRateCheck", False, False)]
    assert read(sysfs, mem) == []  # still slow: nothing new, and no recovery either
    port(sysfs, "mlx5_0", "50 Gb/sec (1X HDR)")
    assert read(sysfs, mem) == [("EthernetLinkRateCheck", True, False)]  # below half: fatal now
    port(sysfs, "mlx5_0", "200 Gb/sec (4X HDR)")
    assert read(sysfs, mem) == [("EthernetLinkRateCheck", False, True)]


def test_a_down_port_is_the_state_checks_not_the_rate_checks(tmp_path: Path) -> None:
    sysfs, mem = tmp_path / "sys", memory.Memory()
    port(sysfs, "mlx5_0", "200 Gb/sec (4X HDR)")
    port(sysfs, "mlx5_1", "10 Gb/sec", state="1: DOWN")
    assert read(sysfs, mem) == [("EthernetStateCheck", True, False)]


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=40))
def test_the_rate_parser_never_crashes(text: str) -> None:
    gbps = nic.Port("d", "1", "ACTIVE", "LinkUp", "Ethernet", rate=text).gbps
    assert gbps is None or gbps >= 0


@settings(max_examples=300, deadline=None)
@given(
    gbps=st.integers(1, 3200) | st.sampled_from([2.5, 12.5, 53.125]),
    tail=st.sampled_from(["", " (4X NDR)", " (degraded)"]),
)
def test_the_rate_parser_reads_back_any_rate(gbps: float, tail: str) -> None:
    assert nic.Port("d", "1", "ACTIVE", "LinkUp", "InfiniBand", rate=f"{gbps:g} Gb/sec{tail}").gbps == gbps
