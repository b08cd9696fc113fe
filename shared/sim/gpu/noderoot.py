"""The files a node agent reads on the host, kept per node under ``--node-root DIR``.

Layout (what nvsentinel's monitors read with ``--node-root DIR``)::

    DIR/<node>/kern.log                          kernel log, dmesg -T style lines, appended
    DIR/<node>/dcgm-health.json                  `dcgmi health -c -j`, rewritten on every change
    DIR/<node>/proc/driver/nvidia/version        the loaded kernel module's version
    DIR/<node>/sys/class/infiniband/<dev>/ports/1/{state,phys_state,rate,link_layer}
    DIR/<node>/sys/class/infiniband/<dev>/ports/1/counters/<counter>

Xid lines copy the shape of the real ones in reference/samples/xid (``[Fri Apr  5 21:29:39 2024]
NVRM: Xid (PCI:0000:a1:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.``),
stamped with virtual time, each preceded once per boot by the ``NVRM: GPU at PCI:…: GPU-<uuid>``
line that maps the bus id to the GPU. Counters are cumulative and reset only by a reboot.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shared import files
from shared.sim.gpu import fabric, stages

logger = logging.getLogger(__name__)

COUNTERS = (
    "link_downed",
    "symbol_error",
    "link_error_recovery",
    "port_rcv_errors",
    "port_xmit_discards",
    "excessive_buffer_overrun_errors",
    "local_link_integrity_errors",
    "port_rcv_data",
    "port_xmit_data",
)
_MODULE = (
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {v}  Release Build  "
    "(dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025"
)


def stamp(epoch: float) -> str:
    """``[Fri Apr  5 21:29:39 2024]``: dmesg -T's timestamp (day of month padded with a space)."""
    moment = datetime.fromtimestamp(epoch, UTC)
    return f"[{moment:%a %b} {moment.day:2d} {moment:%H:%M:%S %Y}]"


def xid_line(epoch: float, pci: str, code: int, message: str) -> str:
    return f"{stamp(epoch)} NVRM: Xid (PCI:{pci}): {code}, pid='<unknown>', name=<unknown>, {message}"


class NodeRoot:
    """Writes and keeps the per-node files; a no-op when no folder was given."""

    def __init__(self, root: Path | None, fabric_model: fabric.Fabric, *, now: Callable[[], float]) -> None:
        self.root = root
        self.fabric = fabric_model
        self.now = now
        self._lock = threading.Lock()
        self._counters: dict[tuple[str, int], dict[str, int]] = {}
        self._announced: set[tuple[str, int, int]] = set()  # (node, boot, gpu) "GPU at" printed
        self._nic_seen: dict[tuple[str, int], float] = {}

    def folder(self, node: str) -> Path:
        assert self.root is not None
        return self.root / node

    # ------------------------------------------------------------ events
    def boot(self, node: fabric.Node) -> None:
        """A fresh boot: counters reset, module banner logged, every file rewritten."""
        if self.root is None:
            return
        with self._lock:
            for i in range(node.profile.nic.count):
                self._counters[(node.name, i)] = dict.fromkeys(COUNTERS, 0)
                self._nic_seen[(node.name, i)] = 1.0
        self.append(node.name, [f"{stamp(self.now())} {_MODULE.format(v=node.driver)}"])
        self.refresh({node.name})

    def driver_loaded(self, node: fabric.Node) -> None:
        if self.root is None:
            return
        self.append(node.name, [f"{stamp(self.now())} {_MODULE.format(v=node.driver)}"])
        self._write(self.folder(node.name) / "proc/driver/nvidia/version", self._version_text(node))

    def xid(self, node_name: str, gpu: int, code: int) -> None:
        node = self.fabric.node(node_name)
        if self.root is None or node is None:
            return
        effects = stages.faults()
        pci = node.profile.gpu.pciBusIds[gpu % len(node.profile.gpu.pciBusIds)]
        now = self.now()
        lines = []
        key = (node_name, node.boot, gpu)
        with self._lock:
            first = key not in self._announced
            self._announced.add(key)
        if first:
            lines.append(f"{stamp(now)} NVRM: GPU at PCI:{pci}: {node.gpu_uuids[gpu]}")
        lines.append(xid_line(now, pci, code, effects.xidMessages.get(code, effects.defaultXidMessage)))
        if code == 79:
            lines.append(f"{stamp(now)} NVRM: GPU {pci}.0: GPU has fallen off the bus.")
        self.append(node_name, lines)

    def append(self, node: str, lines: list[str]) -> None:
        if self.root is None:
            return
        path = self.folder(node) / "kern.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, path.open("a", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))

    def refresh(self, nodes: set[str]) -> None:
        """Rewrite health JSON and sysfs of ``nodes`` from the fabric's current faults."""
        if self.root is None:
            return
        for name in sorted(nodes):
            node = self.fabric.node(name)
            if node is None:
                continue
            folder = self.folder(name)
            self._write(folder / "dcgm-health.json", json.dumps(self.health(name), indent=2) + "\n")
            self._write(folder / "proc/driver/nvidia/version", self._version_text(node))
            for i, dev in enumerate(node.nic_names()):
                self._write_port(folder / "sys/class/infiniband" / dev / "ports" / "1", node, i)

    # ------------------------------------------------------------ contents
    def health(self, name: str) -> dict[str, Any]:
        """``dcgmi health -c -j``: overall and per-GPU health, one entry per watch with an incident."""
        node = self.fabric.nodes[name]
        effects = stages.faults()
        incidents: dict[int, dict[str, list[tuple[str, str, str]]]] = {}

        def add(gpu: int, system: str, level: str, code: str, message: str) -> None:
            incidents.setdefault(gpu, {}).setdefault(system, []).append((level, code, message))

        for gpu in self.fabric.dead_gpus(name):
            add(gpu, "PCIe system", "Failure", "DCGM_FR_GPU_LOST", f"GPU {gpu} is lost: it has fallen off the bus")
        for gpu, code in self.fabric.xids(name):
            level = "Failure" if code in effects.fatalXids else "Warning"
            add(gpu, "Driver system", level, "DCGM_FR_XID_ERROR", f"Detected XID {code} for GPU {gpu}")
        for gpu in self.fabric.hot_gpus(name):
            add(
                gpu,
                "Thermal system",
                "Warning",
                "DCGM_FR_THERMAL_VIOLATIONS",
                f"Thermal violations totaling 12.5 seconds for GPU {gpu}",
            )
        gpus: dict[str, Any] = {}
        worst_overall = "Healthy"
        for gpu in range(node.profile.gpu.count):
            systems = incidents.get(gpu, {})
            worst = _worst([level for entries in systems.values() for level, _, _ in entries])
            worst_overall = _worst([worst_overall, worst])
            children: dict[str, Any] = {"Overall Health": {"value": worst}}
            for system, entries in sorted(systems.items()):
                children[system] = {
                    "children": {level: {"value": message, "error_code": code} for level, code, message in entries}
                }
            gpus[f"GPU ID: {gpu}"] = {"children": children}
        return {
            "header": ["Health Monitor Report"],
            "body": {"Overall Health": {"value": worst_overall}, "GPU": {"children": gpus}},
        }

    def _version_text(self, node: fabric.Node) -> str:
        return (
            f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {node.driver}  Release Build  "
            "(dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025\n"
            "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"
        )

    def _write_port(self, folder: Path, node: fabric.Node, nic: int) -> None:
        factor = 0.0 if node.rebooting else self.fabric.nic_factor(node.name, nic)
        with self._lock:
            counters = self._counters.setdefault((node.name, nic), dict.fromkeys(COUNTERS, 0))
            before = self._nic_seen.get((node.name, nic), 1.0)
            if factor < before:  # a degradation that just arrived leaves its marks in the counters
                counters["symbol_error"] += int(1000 * (before - factor))
                counters["link_error_recovery"] += 1
                if factor == 0.0:
                    counters["link_downed"] += 1
            self._nic_seen[(node.name, nic)] = factor
            snapshot = dict(counters)
        up = factor > 0
        rate = node.profile.nic.rateGbps
        self._write(folder / "state", "4: ACTIVE\n" if up else "1: DOWN\n")
        self._write(folder / "phys_state", "5: LinkUp\n" if up else "3: Disabled\n")
        self._write(
            folder / "rate",
            f"{node.profile.nic.rateText}\n" if factor >= 1 or not up else f"{rate * factor:g} Gb/sec (degraded)\n",
        )
        self._write(folder / "link_layer", f"{node.profile.nic.linkLayer}\n")
        for counter, value in snapshot.items():
            self._write(folder / "counters" / counter, f"{value}\n")

    def _write(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        files.atomic_write_text(path, text)


def _worst(levels: list[str]) -> str:
    order = {"Healthy": 0, "Warning": 1, "Failure": 2}
    return max(levels, key=lambda level: order[level], default="Healthy")
