"""Hardware fault specs: the text a user types after ``--fault`` / ``inject`` / ``clear``.

Grammar (one spec = one target and one or more faults, comma-separated)::

    SPEC   := NODE ":" FAULT ("," FAULT)*  |  RACK "/" RACK ":" "link=" FRACTION
    FAULT  := "nic" [INDEX] "=" FRACTION        every NIC (or NIC INDEX) at that share of nominal
            | "gpu-dead" [INDEX]                a GPU is gone (default GPU 0)
            | "flaky=" FRACTION                 each workload on the node crashes with that chance
            | "xid" [INDEX] "=" CODE            an Xid line on GPU INDEX (default 0)
            | "thermal" [INDEX]                 GPUs (or GPU INDEX) throttle
            | "stall"                           a training run on the node hangs after half its steps
    INDEX  := "[" digits "]"

``clear`` takes the same targets with the values left out: ``node-007`` (everything),
``node-007:nic``, ``node-007:nic[3]``, ``rack-0/rack-1:link``. Parsing is pure and total: every
problem is a ``ValueError`` naming the spec, and ``str(fault)`` prints a spec that parses back to
the same fault (a property test holds it to that).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    NIC = "nic"
    GPU_DEAD = "gpu-dead"
    FLAKY = "flaky"
    LINK = "link"
    XID = "xid"
    THERMAL = "thermal"
    STALL = "stall"


_INDEXED = frozenset({Kind.NIC, Kind.GPU_DEAD, Kind.XID, Kind.THERMAL})
_VALUED = frozenset({Kind.NIC, Kind.FLAKY, Kind.LINK, Kind.XID})
_NAME = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"
_NAME_RE = re.compile(rf"^{_NAME}\Z")
_FAULT_RE = re.compile(r"^(?P<kind>[a-z-]+)(\[(?P<index>\d+)\])?(=(?P<value>[^=]*))?\Z")


@dataclass(frozen=True, order=True)
class Fault:
    """One fault on a node (``node``) or on the link between two racks (``racks``)."""

    kind: Kind
    node: str = ""
    racks: tuple[str, str] | None = None
    index: int | None = None
    value: float | None = None

    def target(self) -> str:
        return f"{self.racks[0]}/{self.racks[1]}" if self.racks else self.node

    def __str__(self) -> str:
        text = f"{self.target()}:{self.kind.value}"
        if self.index is not None:
            text += f"[{self.index}]"
        if self.value is not None:
            text += f"={int(self.value)}" if self.kind is Kind.XID else f"={self.value:g}"
        return text


@dataclass(frozen=True)
class Selector:
    """What ``clear`` removes: every fault of a target, or of one kind (and index) there."""

    node: str = ""
    racks: tuple[str, str] | None = None
    kind: Kind | None = None
    index: int | None = None

    def matches(self, fault: Fault) -> bool:
        if self.racks is not None:
            if fault.racks is None or frozenset(fault.racks) != frozenset(self.racks):
                return False
        elif fault.node != self.node:
            return False
        if self.kind is not None and fault.kind is not self.kind:
            return False
        return self.index is None or fault.index == self.index


def _split_target(spec: str) -> tuple[str, tuple[str, str] | None, str]:
    target, sep, rest = spec.strip().partition(":")
    if "/" in target:
        left, _, right = target.partition("/")
        for rack in (left, right):
            if not _NAME_RE.match(rack):
                raise ValueError(f"{spec!r}: {rack!r} is not a rack name")
        if left == right:
            raise ValueError(f"{spec!r}: a link joins two different racks")
        return "", (left, right), rest if sep else ""
    if not _NAME_RE.match(target):
        raise ValueError(f"{spec!r}: {target!r} is not a node name")
    return target, None, rest if sep else ""


def _fraction(spec: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{spec!r}: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{spec!r}: {text} must be between 0 and 1")
    return value


def _one(spec: str, node: str, racks: tuple[str, str] | None, part: str) -> Fault:
    match = _FAULT_RE.match(part.strip())
    if match is None:
        raise ValueError(f"{spec!r}: cannot read fault {part!r}")
    try:
        kind = Kind(match["kind"])
    except ValueError:
        raise ValueError(
            f"{spec!r}: unknown fault {match['kind']!r}; known: {', '.join(k.value for k in Kind)}"
        ) from None
    if (kind is Kind.LINK) != (racks is not None):
        raise ValueError(f"{spec!r}: link faults take RACK/RACK, every other fault a node")
    index = int(match["index"]) if match["index"] is not None else None
    if index is not None and kind not in _INDEXED:
        raise ValueError(f"{spec!r}: {kind.value} takes no [index]")
    raw = match["value"]
    if kind in _VALUED and raw is None:
        raise ValueError(f"{spec!r}: {kind.value} needs a value ({kind.value}=...)")
    if kind not in _VALUED and raw is not None:
        raise ValueError(f"{spec!r}: {kind.value} takes no value")
    value: float | None = None
    if kind is Kind.XID:
        assert raw is not None
        if not raw.isdigit() or not 1 <= int(raw) <= 999:
            raise ValueError(f"{spec!r}: an Xid code is a number from 1 to 999")
        value = float(int(raw))
    elif raw is not None:
        value = _fraction(spec, raw)
    return Fault(kind=kind, node=node, racks=racks, index=index, value=value)


def parse(spec: str) -> list[Fault]:
    """The faults one spec names; ValueError when it is not a valid spec."""
    node, racks, rest = _split_target(spec)
    if not rest:
        raise ValueError(f"{spec!r}: expected TARGET:FAULT, e.g. node-007:nic=0.4")
    return [_one(spec, node, racks, part) for part in rest.split(",")]


def parse_selector(spec: str) -> Selector:
    """What ``clear SPEC`` removes; ValueError when it is not a valid target."""
    node, racks, rest = _split_target(spec)
    if not rest:
        return Selector(node=node, racks=racks)
    match = _FAULT_RE.match(rest.strip())
    if match is None or match["value"] is not None:
        raise ValueError(f"{spec!r}: clear takes TARGET[:KIND[INDEX]], without a value")
    try:
        kind = Kind(match["kind"])
    except ValueError:
        raise ValueError(f"{spec!r}: unknown fault {match['kind']!r}") from None
    return Selector(
        node=node, racks=racks, kind=kind, index=int(match["index"]) if match["index"] is not None else None
    )
