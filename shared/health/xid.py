"""Xid kernel-log lines → HealthEvents, as upstream's syslog-health-monitor reports them.

Reads every line style of reference/samples/xid: ``dmesg -T`` stamps (``[Fri Apr  5 21:29:39
2024]``), uptime stamps (``[31543.449440]``, turned into wall time with ``boot_time``), syslog and
journal prefixes (``Dec  2 11:38:27 host kernel:``, the year taken from ``year``), and bare lines
(stamped ``now``). Only GPU ``NVRM: Xid (...)`` lines are events; ``NVRM: GPU at PCI:…: GPU-<uuid>``
lines map a bus id to its GPU for later events; everything else is another parser's
(``shared.health.kernlog`` runs this one beside the SXid and lost-GPU ones) or kernel noise. The
recommended action comes from NVIDIA's Xid catalogue (package data, ``rules/xid-catalog.json``)
through upstream's bucket mapping (research §8.2); isFatal is action ≠ NONE, as upstream.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any

from shared.health import event as hevent

AGENT, CHECK, COMPONENT = "syslog-health-monitor", "SysLogsXIDError", "GPU"
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?(?P<pci>[^)]*?)(?: GPU-I:\w+)?\): (?P<code>\d+), (?P<rest>.*)$")
_GPU_AT = re.compile(r"NVRM: GPU at (?:PCI:)?(?P<pci>[0-9a-fA-F:.]+): (?P<uuid>GPU-[\w-]+)")
_PID = re.compile(r"^pid=(?P<pid>'<unknown>'|\d+), (?:name=(?P<name>.*?), )?")
_DMESG_T = re.compile(r"^\[(?P<stamp>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]")
_UPTIME = re.compile(r"\[\s*(?P<secs>\d+\.\d+)\]")
_SYSLOG = re.compile(r"^(?P<stamp>[A-Z][a-z]{2} [ \d]?\d \d\d:\d\d:\d\d) ")
_ISO = re.compile(r"^(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)")
_GPC_TPC = re.compile(r"\(GPC (?P<gpc>\d+), TPC (?P<tpc>\d+)")
_TO_NONE = {"RESTART_APP", "IGNORE", "XID_154_EVAL", "NONE"}
_TO_RESET = {"WORKFLOW_XID_48", "RESET_GPU", "RESET_FABRIC"}


@functools.cache
def catalogue() -> dict[int, dict[str, str]]:
    text = resources.files("shared.health").joinpath("rules/xid-catalog.json").read_text(encoding="utf-8")
    return {int(k): v for k, v in json.loads(text)["xids"].items()}


def action_for(code: int) -> tuple[hevent.RecommendedAction, str]:
    """(action, the catalogue's bucket) for an Xid; unknown codes → CONTACT_SUPPORT."""
    bucket = (catalogue().get(code) or {}).get("immediate", "") or "UNKNOWN_XID"
    if bucket in _TO_NONE:
        return hevent.RecommendedAction.NONE, bucket
    if bucket in _TO_RESET:
        return hevent.RecommendedAction.COMPONENT_RESET, bucket
    if bucket in hevent.RecommendedAction.__members__:
        return hevent.RecommendedAction[bucket], bucket
    return hevent.RecommendedAction.CONTACT_SUPPORT, bucket


@dataclass(frozen=True)
class XidLine:
    line_number: int
    code: int
    pci: str
    pid: str
    message: str
    when: datetime | None


@dataclass
class Parser:
    """Stateful over one log: remembers bus id → GPU UUID."""

    boot_time: datetime | None = None
    year: int | None = None
    gpus: dict[str, str] = field(default_factory=dict)

    def stamp(self, line: str) -> datetime | None:
        if m := _DMESG_T.match(line):
            return datetime.strptime(" ".join(m["stamp"].split()), "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC)
        if m := _ISO.match(line):
            text = m["stamp"].replace(",", ".").replace("Z", "+00:00")
            moment = datetime.fromisoformat(text)
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        if (m := _SYSLOG.match(line)) and self.year is not None:
            return datetime.strptime(f"{self.year} {' '.join(m['stamp'].split())}", "%Y %b %d %H:%M:%S").replace(
                tzinfo=UTC
            )
        if (m := _UPTIME.search(line.split("NVRM:", 1)[0])) and self.boot_time is not None:
            return self.boot_time + timedelta(seconds=float(m["secs"]))
        return None

    def feed(self, number: int, line: str) -> XidLine | None:
        line = line.rstrip("\n")
        if m := _GPU_AT.search(line):
            self.gpus[_bus(m["pci"])] = m["uuid"]
            return None
        m = _XID.search(line)
        if m is None:
            return None
        rest, pid = m["rest"], ""
        if p := _PID.match(rest):
            pid = "" if p["pid"].startswith("'") else p["pid"]
            rest = rest[p.end() :]
        return XidLine(number, int(m["code"]), m["pci"], pid, rest, self.stamp(line))


def _bus(pci: str) -> str:
    """``0000:a1:00.0`` and ``0000:a1:00`` name the same GPU."""
    return pci.split(".")[0].lower()


def parse_lines(lines: Iterable[str], parser: Parser) -> Iterator[XidLine]:
    for number, line in enumerate(lines, start=1):
        found = parser.feed(number, line)
        if found is not None:
            yield found


def to_event(xid: XidLine, *, node: str, parser: Parser, now: datetime, raw: str = "") -> hevent.HealthEvent:
    action, bucket = action_for(xid.code)
    entities = [hevent.Entity(entityType="PCI", entityValue=xid.pci)]
    uuid = parser.gpus.get(_bus(xid.pci))
    if uuid:
        entities.append(hevent.Entity(entityType="GPU_UUID", entityValue=uuid))
    metadata: dict[str, Any] = {"resolution": bucket}
    if xid.pid:
        metadata["pid"] = xid.pid
    if raw:
        metadata["JOURNAL_MESSAGE"] = raw.rstrip("\n")
    if where := _GPC_TPC.search(xid.message):  # Xid 13's engine unit: the analyzer tells GPU from app faults
        metadata["gpcTpc"] = f"{where['gpc']}/{where['tpc']}"
    mnemonic = (catalogue().get(xid.code) or {}).get("mnemonic", "")
    if mnemonic:
        metadata["mnemonic"] = mnemonic
    return hevent.HealthEvent(
        agent=AGENT,
        componentClass=COMPONENT,
        checkName=CHECK,
        isFatal=action != 0,
        isHealthy=False,
        message=xid.message,
        recommendedAction=action,
        errorCode=[str(xid.code)],
        entitiesImpacted=entities,
        metadata=metadata,
        generatedTimestamp=xid.when or now,
        nodeName=node,
    )


def events_from_text(
    text: str, *, node: str, now: datetime, boot_time: datetime | None = None, year: int | None = None
) -> list[hevent.HealthEvent]:
    """Every Xid event of a kernel log, in order."""
    parser = Parser(boot_time=boot_time, year=year if year is not None else now.year)
    lines = text.splitlines()
    return [
        to_event(x, node=node, parser=parser, now=now, raw=lines[x.line_number - 1]) for x in parse_lines(lines, parser)
    ]
