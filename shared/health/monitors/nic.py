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

The first read of a port only records its counters (nothing to compare with); a counter that went
down (reboot, reset) is a new baseline, not an error. Traffic counters are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from shared import errors, files
from shared.health import event as hevent
from shared.health.monitors import memory

AGENT, COMPONENT = "nic-health-monitor", "NIC"
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


def seen(ports: list[Port]) -> set[str]:
    """Entity strings read this time, so a vanished device is not declared recovered."""
    return {f"NIC_PORT={p.device}/{p.port}" for p in ports}
