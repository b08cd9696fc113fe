"""Kernel-log lines → every HealthEvent the syslog health monitor reports, in line order.

Upstream's syslog-health-monitor runs one handler per check over each journal line; ``Scanner``
does the same over a kernel log, a followed file or journal records: ``SysLogsXIDError``
(``shared.health.xid``), ``SysLogsSXIDError`` (``shared.health.sxid``) and
``SysLogsGPUFallenOff`` (``shared.health.gpufallen``). One scanner per node keeps what the lines
before told (bus id → GPU, a message started on an earlier line, recent Xid 79s), so it is fed
the lines in order and lives as long as the log is read.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from shared.health import event as hevent
from shared.health import gpufallen, sxid, xid


class Scanner:
    """One node's log, line by line; ``boot_time`` and ``year`` complete stamps that lack them."""

    def __init__(self, node: str, *, boot_time: datetime | None = None, year: int | None = None) -> None:
        self.node = node
        self.xid = xid.Parser(boot_time=boot_time, year=year)
        self.lost = gpufallen.Tracker()

    def scan(self, number: int, line: str, *, now: datetime, when: datetime | None = None) -> list[hevent.HealthEvent]:
        """The events line ``number`` completes; ``when`` (a journal record's time) beats the line's stamp."""
        line = line.rstrip("\n")
        found = self.xid.feed(number, line)
        if found is not None:
            self.lost.saw_xid(number, found.code, found.pci)
            if when is not None:
                found = xid.XidLine(found.line_number, found.code, found.pci, found.pid, found.message, when)
            return [xid.to_event(found, node=self.node, parser=self.xid, now=now, raw=line)]
        switch = sxid.parse(line)
        if switch is not None:
            return [self._sxid(switch, line, when or self.xid.stamp(line) or now)]
        lost = self.lost.feed(number, line)
        if lost is not None:
            start = lost.text.split("\n", 1)[0]
            return [self._lost(lost, when or self.xid.stamp(start) or self.xid.stamp(line) or now)]
        return []

    def _sxid(self, found: sxid.SXidLine, line: str, at: datetime) -> hevent.HealthEvent:
        action = sxid.action_for(found)
        return hevent.HealthEvent(
            agent=xid.AGENT,
            componentClass=xid.COMPONENT,
            checkName=sxid.CHECK,
            isFatal=action != hevent.RecommendedAction.NONE,
            isHealthy=False,
            message=found.message,
            recommendedAction=action,
            errorCode=[str(found.code)],
            entitiesImpacted=sxid.entities(found),
            metadata={"severity": "Fatal" if found.fatal else "Non-fatal", "JOURNAL_MESSAGE": line},
            generatedTimestamp=at,
            nodeName=self.node,
        )

    def _lost(self, found: gpufallen.Lost, at: datetime) -> hevent.HealthEvent:
        entities = [hevent.Entity(entityType="PCI", entityValue=found.pci)]
        if found.pci_id:
            entities.append(hevent.Entity(entityType="PCI_ID", entityValue=found.pci_id))
        uuid = self.xid.gpus.get(found.pci)
        if uuid:
            entities.append(hevent.Entity(entityType="GPU_UUID", entityValue=uuid))
        message = (
            "GPU has fallen off the bus"
            if found.code == gpufallen.FALLEN
            else "the driver could not initialise the GPU (RmInitAdapter failed)"
        )
        return hevent.HealthEvent(
            agent=xid.AGENT,
            componentClass=xid.COMPONENT,
            checkName=gpufallen.CHECK,
            isFatal=True,
            isHealthy=False,
            message=message,
            recommendedAction=hevent.RecommendedAction.RESTART_BM,
            errorCode=[found.code],
            entitiesImpacted=entities,
            metadata={"JOURNAL_MESSAGE": found.text, "PCI_ADDRESS": found.pci},
            generatedTimestamp=at,
            nodeName=self.node,
        )


def events(
    lines: Iterable[str], *, node: str, now: datetime, boot_time: datetime | None = None, year: int | None = None
) -> list[hevent.HealthEvent]:
    """Every event of a kernel log's lines, in order."""
    scanner = Scanner(node, boot_time=boot_time, year=year if year is not None else now.year)
    return [e for number, line in enumerate(lines, start=1) for e in scanner.scan(number, line, now=now)]


def events_from_text(
    text: str, *, node: str, now: datetime, boot_time: datetime | None = None, year: int | None = None
) -> list[hevent.HealthEvent]:
    return events(text.splitlines(), node=node, now=now, boot_time=boot_time, year=year)
