"""InfiniBand/RoCE ports in a sysfs tree → unhealthy HealthEvents (upstream's nic-health-monitor).

Reads ``<sysfs>/class/infiniband/<dev>/ports/<n>/{state,phys_state,link_layer,counters/*}``
(research §8.3). Per port, two checks named after the link layer (``InfiniBand…`` or, for RoCE,
``Ethernet…``), agent ``nic-health-monitor``, componentClass NIC, entity ``{NIC, <dev>}`` plus
``{NIC_PORT, <dev>/<n>}``:

- ``…StateCheck``: the port is not ACTIVE / LinkUp → fatal, REPLACE_VM (as upstream);
- ``…DegradationCheck``: an error counter grew since the last read. A growth of ``link_downed``,
  ``excessive_buffer_overrun_errors``, ``local_link_integrity_errors`` or ``rnr_nak_retry_err`` is
  fatal (REPLACE_VM) upstream; any other error counter is non-fatal degradation (NONE). Upstream
  uses rate thresholds over a 1 s poll; a one-shot read has no rate, so any growth counts.

- ``…LinkRateCheck``: the port is up but its ``rate`` is below nominal. Nominal is the fastest rate
  this port has reported (kept in the monitor's memory, so a state file carries it across runs and
  reboots) or the fastest of its peers on the node with the same link layer — a port that comes up
  degraded on the first read is still caught. Below ``FATAL_RATE_FRACTION`` of nominal the link is
  as good as lost: fatal, REPLACE_VM, like a port that went down; above it, non-fatal (NONE). The
  event is reported on every read while the port is slow, so the memory keeps the condition open
  and publishes the healthy event only when the rate is back.

The first read of a port only records its counters (nothing to compare with); a counter that went
down (reboot, reset) is a new baseline, not an error. Traffic counters are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from shared import errors, files
from shared.health import event as hevent
from shared.health.monitors import memory

AGENT, COMPONENT = "nic-health-monitor", "NIC"
FATAL_RATE_FRACTION = 0.5
"""A port slower than this share of its nominal rate is fatal (jobs crawl at that speed)."""
RATE_CODE = "LINK_RATE_DEGRADED"
_RATE = re.compile(r"^\s*(?P<gbps>\d+(?:\.\d+)?) Gb/sec")
FATAL_COUNTERS = frozenset(
    {"link_downed", "excessive_buffer_overrun_errors", "local_link_integrity_errors", "rnr_nak_retry_err"}
)
IGNORED_COUNTERS = frozenset(
    {
        "port_rcv_data",
        "port_xmit_data",
        "port_rcv_packets",
        "port_xmit_packets",
        "unicast_rcv_packets",
        "unicast_xmit_packets",
        "multicast_rcv_packets",
        "multicast_xmit_packets",
        "port_xmit_wait",
    }
)


@dataclass(frozen=True)
class Port:
    device: str
    port: str
    state: str  # "ACTIVE", "DOWN", … (sysfs "4: ACTIVE")
    phys_state: str  # "LinkUp", "Disabled", …
    link_layer: str
    counters: dict[str, int] = field(default_factory=dict)
    rate: str = ""
    """sysfs ``rate`` as written, e.g. ``400 Gb/sec (4X NDR)``; empty when the file is missing."""

    @property
    def gbps(self) -> float | None:
        m = _RATE.match(self.rate)
        return float(m["gbps"]) if m else None

    @property
    def up(self) -> bool:
        return self.state == "ACTIVE" and self.phys_state in ("LinkUp", "")

    @property
    def family(self) -> str:
        return "Ethernet" if self.link_layer.lower() == "ethernet" else "InfiniBand"


def _value(path: Path) -> str:
    """``4: ACTIVE`` → ``ACTIVE``; a missing file reads as empty."""
    try:
        text = files.read_text(path).strip()
    except errors.InvalidInput:
        return ""
    return text.split(":", 1)[1].strip() if ":" in text else text


def _raw(path: Path) -> str:
    try:
        return files.read_text(path).strip()
    except errors.InvalidInput:
        return ""


def read_ports(sysfs: Path) -> list[Port]:
    """Every port of every RDMA device under ``sysfs/class/infiniband``, sorted."""
    ports = []
    for folder in sorted((sysfs / "class" / "infiniband").glob("*/ports/*")):
        counters: dict[str, int] = {}
        for counter in sorted((folder / "counters").glob("*")):
            try:
                counters[counter.name] = int(files.read_text(counter).split()[0])
            except (errors.InvalidInput, ValueError, IndexError):
                continue
        ports.append(
            Port(
                device=folder.parent.parent.name,
                port=folder.name,
                state=_value(folder / "state"),
                phys_state=_value(folder / "phys_state"),
                counters=counters,
                link_layer=_value(folder / "link_layer") or "InfiniBand",
                rate=_raw(folder / "rate"),
            )
        )
    return ports


def _entities(port: Port) -> list[hevent.Entity]:
    return [
        hevent.Entity(entityType="NIC", entityValue=port.device),
        hevent.Entity(entityType="NIC_PORT", entityValue=f"{port.device}/{port.port}"),
    ]


def _event(
    port: Port, node: str, check: str, *, fatal: bool, message: str, codes: list[str], now: datetime
) -> hevent.HealthEvent:
    action = hevent.RecommendedAction.REPLACE_VM if fatal else hevent.RecommendedAction.NONE
    return hevent.HealthEvent(
        agent=AGENT,
        componentClass=COMPONENT,
        checkName=f"{port.family}{check}",
        isFatal=fatal,
        isHealthy=False,
        message=message,
        recommendedAction=action,
        errorCode=codes,
        entitiesImpacted=_entities(port),
        generatedTimestamp=now,
        nodeName=node,
        metadata={"port": port.port, "linkLayer": port.link_layer},
    )


def events(ports: list[Port], *, node: str, now: datetime, mem: memory.Memory) -> list[hevent.HealthEvent]:
    """Unhealthy events of one read; updates the counters kept in ``mem``."""
    out = []
    for port in ports:
        if not port.up:
            out.append(
                _event(
                    port,
                    node,
                    "StateCheck",
                    fatal=True,
                    codes=[f"PORT_{port.state or 'UNKNOWN'}"],
                    now=now,
                    message=f"{port.device} port {port.port} is {port.state or 'unknown'}"
                    f" ({port.phys_state or 'unknown'})",
                )
            )
        slow = _rate_event(port, ports, node=node, now=now, mem=mem)
        if slow is not None:
            out.append(slow)
        slot = f"{node}|{port.device}/{port.port}"
        before = mem.counters.get(slot)
        mem.counters[slot] = dict(port.counters)
        if before is None:
            continue
        grown = {
            name: value - before[name]
            for name, value in sorted(port.counters.items())
            if name not in IGNORED_COUNTERS and name in before and value > before[name]
        }
        if grown:
            fatal = any(name in FATAL_COUNTERS for name in grown)
            detail = ", ".join(f"{name} +{delta}" for name, delta in grown.items())
            out.append(
                _event(
                    port,
                    node,
                    "DegradationCheck",
                    fatal=fatal,
                    codes=sorted(grown),
                    now=now,
                    message=f"{port.device} port {port.port} error counters grew: {detail}",
                )
            )
    return out


def _rate_event(
    port: Port, ports: list[Port], *, node: str, now: datetime, mem: memory.Memory
) -> hevent.HealthEvent | None:
    """``…LinkRateCheck`` when ``port`` is up and slower than nominal; remembers the port's best rate."""
    gbps = port.gbps
    if gbps is None or not port.up:
        return None
    slot = f"{node}|{port.device}/{port.port}|rate"
    best = max(gbps, mem.counters.get(slot, {}).get("bestMbps", 0) / 1000)
    mem.counters[slot] = {"bestMbps": round(best * 1000)}
    peers = [p.gbps for p in ports if p.up and p.link_layer == port.link_layer and p.gbps is not None]
    nominal = max([best, *[g for g in peers if g is not None]])
    if gbps >= nominal:
        return None
    share = gbps / nominal
    return _event(
        port,
        node,
        "LinkRateCheck",
        fatal=share < FATAL_RATE_FRACTION,
        codes=[RATE_CODE],
        now=now,
        message=f"{port.device} port {port.port} runs at {gbps:g} Gb/sec, "
        f"{share:.0%} of its nominal {nominal:g} Gb/sec",
    )


def seen(ports: list[Port]) -> set[str]:
    """Entity strings read this time, so a vanished device is not declared recovered."""
    return {f"NIC_PORT={p.device}/{p.port}" for p in ports}
