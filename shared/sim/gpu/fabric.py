"""The GPU fabric model: nodes, racks, NVLink domains, NICs, faults, and the bandwidth they allow.

This is the one place that decides what a workload would measure on a set of nodes, so the
kubelet's logs, the node-root files and the tests all agree. Formulas (docs/sim.md has them with
their defaults):

- a group inside one NVLink domain (one node for H100/A100, one rack for GB200) runs at the
  profile's ``nvlinkBusGBps`` times the slowest member's thermal factor;
- a group spanning domains runs at ``networkBusGBps`` times the slowest member's factor
  (its slowest NIC times its thermal factor) times the worst rack-to-rack link it crosses;
- both are scaled by the collective's share (all-reduce 1.0, all-gather 0.95, alltoall 0.6);
- on a managed service's machine (:mod:`.providers`) a run whose pods did not ask for the fast
  transport crosses nodes over sockets instead, at the machine's ``socketBusGBps``;
- a dead GPU in the group crashes the run, and each flaky member crashes it with its
  probability, drawn from the seeded random source in node order.

Fault state is the list of active :class:`faultspec.Fault` records; everything else is derived
from it, so ``inject`` and ``clear`` cannot leave a half-applied effect behind.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from shared.sim.gpu import faultspec, stages
from shared.sim.gpu.faultspec import Fault, Kind, Selector

DEFAULT_DRIVER = "570.158.01"
DEFAULT_CUDA = "12.8"
_UUIDS = uuid.UUID("6c1b0e2a-8f7d-4b7e-9a51-5f3a7d2c9e10")


@dataclass
class Node:
    """One GPU node's hardware as the model sees it."""

    name: str
    index: int
    rack: str
    profile: stages.Profile
    driver: str = DEFAULT_DRIVER
    boot: int = 0
    rebooting: bool = False
    gpu_uuids: list[str] = field(default_factory=list)

    @property
    def clique(self) -> str:
        return self.rack if self.profile.cliquePerRack else self.name

    def nic_names(self) -> list[str]:
        return [f"{self.profile.nic.device}_{i}" for i in range(self.profile.nic.count)]


@dataclass(frozen=True)
class Crash:
    """Why a run crashed: the node, the GPU (for a dead one) and the fault kind."""

    node: str
    kind: Kind
    gpu: int | None = None


def gpu_uuid(node: str, index: int) -> str:
    """Stable across restarts, so snapshots and remediation objects can name GPUs."""
    return "GPU-" + str(uuid.uuid5(_UUIDS, f"{node}/{index}"))


def rack_names(count: int) -> list[str]:
    return [f"rack-{i}" for i in range(count)]


class Fabric:
    """Nodes and active faults; thread-safe. Listeners hear which nodes a change touched."""

    def __init__(self, *, seed: int | None = None) -> None:
        self.lock = threading.RLock()
        self.nodes: dict[str, Node] = {}
        self.faults: list[Fault] = []
        self.rng = random.Random(seed)
        self.listeners: list[Callable[[set[str]], None]] = []
        self.xid_listeners: list[Callable[[str, int, int], None]] = []

    # ------------------------------------------------------------ nodes
    def add_nodes(self, names: list[str], *, racks: int, profile: stages.Profile) -> list[Node]:
        """Spread ``names`` over ``racks`` racks in contiguous blocks (rack-0 gets the first ones)."""
        racks = max(1, min(racks, len(names) or 1))
        added = []
        with self.lock:
            for i, name in enumerate(names):
                rack = f"rack-{i * racks // len(names)}"
                node = Node(
                    name=name,
                    index=len(self.nodes),
                    rack=rack,
                    profile=profile,
                    gpu_uuids=[gpu_uuid(name, g) for g in range(profile.gpu.count)],
                )
                self.nodes[name] = node
                added.append(node)
        return added

    def clear(self) -> None:
        with self.lock:
            self.nodes.clear()
            self.faults.clear()

    def node(self, name: str) -> Node | None:
        return self.nodes.get(name)

    def racks(self) -> list[str]:
        return sorted({n.rack for n in self.nodes.values()})

    # ------------------------------------------------------------ faults
    def check(self, fault: Fault) -> None:
        """ValueError when ``fault`` names a node, rack or index this cluster does not have."""
        if fault.racks is not None:
            missing = [r for r in fault.racks if r not in self.racks()]
            if missing:
                raise ValueError(f"{fault}: no rack {missing[0]!r} (racks: {', '.join(self.racks())})")
            return
        node = self.nodes.get(fault.node)
        if node is None:
            raise ValueError(f"{fault}: no GPU node {fault.node!r}")
        limit = node.profile.nic.count if fault.kind is Kind.NIC else node.profile.gpu.count
        if fault.index is not None and fault.index >= limit:
            raise ValueError(f"{fault}: index {fault.index} out of range (0-{limit - 1})")

    def inject(self, faults: Iterable[Fault]) -> None:
        """Apply faults (a new value replaces the same kind on the same target and index)."""
        touched: set[str] = set()
        xids: list[Fault] = []
        with self.lock:
            for fault in faults:
                self.check(fault)
                self.faults = [f for f in self.faults if not _same_slot(f, fault)]
                self.faults.append(fault)
                touched.update(self._nodes_of(fault))
                if fault.kind is Kind.XID:
                    xids.append(fault)
        for fault in xids:
            for listener in self.xid_listeners:
                listener(fault.node, fault.index or 0, int(fault.value or 0))
        self._changed(touched)

    def remove(self, selector: Selector) -> list[Fault]:
        """Remove the faults ``selector`` matches; returns them."""
        with self.lock:
            gone = [f for f in self.faults if selector.matches(f)]
            self.faults = [f for f in self.faults if not selector.matches(f)]
        self._changed({n for f in gone for n in self._nodes_of(f)})
        return gone

    def clear_for_repair(self, node: str, kinds: Iterable[str], gpu: int | None = None) -> list[Fault]:
        """Remove the ``kinds`` a reboot (``gpu`` None) or one GPU's reset clears."""
        wanted = {Kind(k) for k in kinds}
        with self.lock:
            gone = [
                f
                for f in self.faults
                if f.node == node
                and f.kind in wanted
                and (
                    gpu is None
                    or (f.index if f.index is not None else _default_index(f)) == gpu
                    or (f.kind is Kind.THERMAL and f.index is None)
                )
            ]
            self.faults = [f for f in self.faults if f not in gone]
        self._changed({node})
        return gone

    def _nodes_of(self, fault: Fault) -> set[str]:
        if fault.racks is None:
            return {fault.node}
        return {n.name for n in self.nodes.values() if n.rack in fault.racks}

    def _changed(self, nodes: set[str]) -> None:
        if nodes:
            for listener in self.listeners:
                listener(nodes)

    def of_node(self, name: str, kind: Kind | None = None) -> list[Fault]:
        with self.lock:
            return [f for f in self.faults if f.node == name and (kind is None or f.kind is kind)]

    # ------------------------------------------------------------ derived hardware state
    def nic_factor(self, name: str, nic: int) -> float:
        values = [f.value for f in self.of_node(name, Kind.NIC) if f.value is not None and f.index in (None, nic)]
        return min(values, default=1.0)

    def dead_gpus(self, name: str) -> list[int]:
        return sorted({f.index or 0 for f in self.of_node(name, Kind.GPU_DEAD)})

    def hot_gpus(self, name: str) -> list[int]:
        node = self.nodes[name]
        hot: set[int] = set()
        for f in self.of_node(name, Kind.THERMAL):
            hot.update(range(node.profile.gpu.count) if f.index is None else {f.index})
        return sorted(hot)

    def xids(self, name: str) -> list[tuple[int, int]]:
        """(gpu index, code) of every Xid fault still active on the node."""
        return sorted((f.index or 0, int(f.value or 0)) for f in self.of_node(name, Kind.XID))

    def flaky(self, name: str) -> float:
        return max((f.value or 0.0 for f in self.of_node(name, Kind.FLAKY)), default=0.0)

    def link_factor(self, racks: set[str]) -> float:
        with self.lock:
            values = [
                f.value for f in self.faults if f.racks is not None and f.value is not None and set(f.racks) <= racks
            ]
        return min(values, default=1.0)

    def thermal_factor(self, name: str, *, compute: bool) -> float:
        if not self.hot_gpus(name):
            return 1.0
        effects = stages.faults().thermal
        return effects.computeFactor if compute else effects.bandwidthFactor

    def network_factor(self, name: str) -> float:
        node = self.nodes[name]
        nics = min(self.nic_factor(name, i) for i in range(node.profile.nic.count))
        return nics * self.thermal_factor(name, compute=False)

    # ------------------------------------------------------------ the model
    def spans_domains(self, names: list[str]) -> bool:
        return len({self.nodes[n].clique for n in names}) > 1

    def busbw(
        self,
        names: list[str],
        binary: str,
        *,
        through_nics: bool = False,
        socket: bool = False,
        rails: float = 1.0,
    ) -> float:
        """Plateau bus bandwidth (GB/s) of ``binary`` on exactly these nodes.

        ``socket``: the run crosses nodes over NET/Socket (its pods did not ask for the fast
        transport), at the machine's ``socketBusGBps`` — TCP on the host interface, which the
        RDMA NICs' faults do not touch. ``rails``: the share of each node's GPUs (and so of its
        rail-aligned NICs) the run uses, below 1 when fewer ranks than GPUs run per node.
        """
        if not names:
            raise ValueError("a group needs at least one node")
        profile = self.nodes[names[0]].profile
        share = stages.workloads().nccl.collectives[binary].bandwidth
        if through_nics or self.spans_domains(names):
            link = self.link_factor({self.nodes[n].rack for n in names})
            machine = profile.machine
            if socket and machine is not None:
                return machine.network.socketBusGBps * share * link
            slowest = min(self.network_factor(n) for n in names)
            return profile.bandwidth.networkBusGBps * share * slowest * link * min(1.0, rails)
        slowest = min(self.thermal_factor(n, compute=False) for n in names)
        return profile.bandwidth.nvlinkBusGBps * share * slowest

    def stalled(self, names: list[str]) -> str | None:
        """The first node (by name) whose ``stall`` fault hangs a training run on these nodes."""
        return next((n for n in sorted(names) if self.of_node(n, Kind.STALL)), None)

    def crash(self, names: list[str], *, dead_gpus: bool = True) -> Crash | None:
        """Whether a run on these nodes crashes, and why (draws the flaky dice in node order).
        ``dead_gpus=False`` for diagnostics, which report a dead GPU instead of dying of it."""
        for name in sorted(names) if dead_gpus else ():
            dead = self.dead_gpus(name)
            if dead:
                return Crash(name, Kind.GPU_DEAD, dead[0])
        for name in sorted(names):
            chance = self.flaky(name)
            if chance > 0 and self.rng.random() < chance:
                return Crash(name, Kind.FLAKY)
        return None


def _default_index(fault: Fault) -> int | None:
    return 0 if fault.kind in (Kind.GPU_DEAD, Kind.XID) else None


def _same_slot(a: Fault, b: Fault) -> bool:
    if a.kind is not b.kind or a.index != b.index:
        return False
    if a.racks is not None or b.racks is not None:
        return a.racks is not None and b.racks is not None and frozenset(a.racks) == frozenset(b.racks)
    if a.kind is Kind.XID:
        return False  # every Xid is its own event, even a repeat of the same code
    return a.node == b.node


def parse_all(specs: Iterable[str]) -> list[Fault]:
    """Every fault of several specs; ValueError on the first bad one."""
    return [fault for spec in specs for fault in faultspec.parse(spec)]
