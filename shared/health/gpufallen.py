"""A GPU lost without an Xid line → HealthEvents (upstream's ``SysLogsGPUFallenOff``).

A GPU that drops off PCIe before the driver has it does not get an Xid 79; the kernel log says so
in other words (reference/samples/xid lines 25, 29–34 and 41–43):

- ``NVRM: The NVIDIA GPU 0000:b3:00.0`` / ``NVRM: (PCI ID: 10de:26b5) installed in this system
  has`` / ``NVRM: fallen off the bus and is not responding to commands.`` — one journal record
  with newlines, or three kernel-log lines; upstream matches the record, ``Tracker`` joins the
  lines (the start line must be followed within ``CONTINUATION`` lines);
- ``NVRM: GPU 0000:a1:00.0: GPU has fallen off the bus.`` — the driver's line after an Xid 79 on the
  same bus (then it is the Xid's echo and not a second event) or alone;
- ``NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)`` and ``rm_init_adapter
  failed`` — the driver cannot bring the GPU up; it retries and logs again, so one event per bus
  until the module is loaded again (``NVRM: loading NVIDIA``, a new boot).

All are fatal, RESTART_BM, as upstream's fallen-off event; error codes ``GPU_FALLEN_OFF_BUS`` (as
upstream) and ``RM_INIT_ADAPTER_FAILED``. The PCI entity uses the Xid lines' form
(``0000:b3:00``, the function dropped) so the analyzer sees one GPU in both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CHECK = "SysLogsGPUFallenOff"
FALLEN, INIT_FAILED = "GPU_FALLEN_OFF_BUS", "RM_INIT_ADAPTER_FAILED"
CONTINUATION = 3
"""Lines after ``The NVIDIA GPU …`` within which the ``fallen off the bus`` line must come."""
ECHO_LINES = 5
"""A ``GPU has fallen off the bus`` line this close after an Xid 79 of the same bus is its echo."""

_BDF = r"(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)"
_START = re.compile(rf"NVRM: The NVIDIA GPU {_BDF}")
_PCI_ID = re.compile(r"PCI ID: (?P<id>[0-9a-fA-F]{4}:[0-9a-fA-F]{4})")
_NOT_RESPONDING = re.compile(r"fallen off the bus and is not responding to commands")
_SHORT = re.compile(rf"NVRM: GPU {_BDF}: GPU has fallen off the bus")
_INIT = re.compile(rf"NVRM: GPU {_BDF}: (?:RmInitAdapter failed|rm_init_adapter failed)")
_MODULE_LOAD = re.compile(r"NVRM: loading NVIDIA")
_XID = re.compile(r"NVRM: Xid ")


def bus(pci: str) -> str:
    """``0000:B3:00.0`` → ``0000:b3:00``: the form Xid lines name a GPU by."""
    return pci.split(".")[0].lower()


@dataclass(frozen=True)
class Lost:
    """One lost GPU: its bus, the PCI device id when logged, the error code and the line it started on."""

    pci: str
    code: str
    line_number: int
    text: str
    pci_id: str = ""


@dataclass
class _Open:
    pci: str
    line_number: int
    lines: list[str]
    pci_id: str = ""


@dataclass
class Tracker:
    """Stateful over one log: a started multi-line message, recent Xid 79 buses, buses failed to init."""

    pending: _Open | None = None
    xid79: dict[str, int] = field(default_factory=dict)
    init_failed: set[str] = field(default_factory=set)

    def saw_xid(self, number: int, code: int, pci: str) -> None:
        if code == 79:
            self.xid79[bus(pci)] = number

    def feed(self, number: int, line: str) -> Lost | None:
        """The lost GPU line ``number`` completes, or None."""
        line = line.rstrip("\n")
        if _MODULE_LOAD.search(line):
            self.init_failed.clear()
        if _XID.search(line):
            return None  # an Xid line is the Xid parser's, as upstream
        if self._continues(number, line):
            return self._finish(line)
        return self._short(number, line) or self._init_failed(number, line)

    def _continues(self, number: int, line: str) -> bool:
        """Whether ``line`` starts or continues a ``The NVIDIA GPU …`` message."""
        if m := _START.search(line):
            self.pending = _Open(bus(m["pci"]), number, [line])
            return True
        if self.pending is None:
            return False
        if number - self.pending.line_number > CONTINUATION:
            self.pending = None
            return False
        self.pending.lines.append(line)
        return True

    def _finish(self, line: str) -> Lost | None:
        assert self.pending is not None
        if pid := _PCI_ID.search(line):
            self.pending.pci_id = pid["id"]
        if not _NOT_RESPONDING.search(line):
            return None
        done, self.pending = self.pending, None
        return Lost(done.pci, FALLEN, done.line_number, "\n".join(done.lines), done.pci_id)

    def _short(self, number: int, line: str) -> Lost | None:
        m = _SHORT.search(line)
        if m is None:
            return None
        pci = bus(m["pci"])
        seen = self.xid79.get(pci)
        return None if seen is not None and number - seen <= ECHO_LINES else Lost(pci, FALLEN, number, line)

    def _init_failed(self, number: int, line: str) -> Lost | None:
        m = _INIT.search(line)
        if m is None or bus(m["pci"]) in self.init_failed:
            return None
        self.init_failed.add(bus(m["pci"]))
        return Lost(bus(m["pci"]), INIT_FAILED, number, line)
