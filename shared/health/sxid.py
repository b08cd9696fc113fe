"""NVSwitch SXid kernel-log lines → HealthEvents (upstream's syslog-health-monitor, ``SysLogsSXIDError``).

The NVSwitch driver logs ``nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 43
egress non-posted PRIV error (First)``: the switch, its bus id, the SXid, the driver's severity,
the NVLink port and a message. Follow-up lines of the same error (``..., Data {0x0, ...}``,
``..., Severity 0 Engine instance 43 ...``) carry no severity and are not events — upstream's
pattern skips them too. Severity is the line's own word, as upstream: ``Fatal`` → CONTACT_SUPPORT,
``Non-fatal`` → NONE. The Fabric Manager user guide lists SXids that are harmless (appendix D.4,
``BENIGN``); those are reported as NONE even when a driver marks them fatal. Entities are the
switch, its PCI address and the link; upstream also maps the link to a GPU through ``lsnvlink``
topology, which a kernel log alone does not give (docs/compatibility.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.health import event as hevent

CHECK = "SysLogsSXIDError"
_SXID = re.compile(
    r"nvidia-nvswitch(?P<switch>\d+): SXid \(PCI:(?P<pci>[0-9a-fA-F:.]+)\): (?P<code>\d+), "
    r"(?P<severity>Fatal|Non-fatal), (?:Link (?P<link>\d+) ?)?(?P<message>.*)$"
)
BENIGN = frozenset(
    {11012, 11021, 11022, 11023, 12021, 12023, 15008, 15011, 19049, 19055, 19057, 19059, 19062, 19065}
    | {19068, 19071, 22013, 24001, 24002, 24003}
)
"""SXids the Fabric Manager user guide (appendix D.4) calls harmless: no action, whatever the line says."""


@dataclass(frozen=True)
class SXidLine:
    switch: int
    pci: str
    code: int
    fatal: bool
    link: int | None
    message: str


def parse(line: str) -> SXidLine | None:
    """The SXid of one kernel-log line, or None for any other line (follow-up lines included)."""
    m = _SXID.search(line.rstrip("\n"))
    if m is None:
        return None
    return SXidLine(
        switch=int(m["switch"]),
        pci=m["pci"],
        code=int(m["code"]),
        fatal=m["severity"] == "Fatal",
        link=None if m["link"] is None else int(m["link"]),
        message=m["message"].strip(),
    )


def render(found: SXidLine) -> str:
    """The driver's line for ``found`` (without a time stamp): ``parse(render(x)) == x``."""
    link = "" if found.link is None else f"Link {found.link} "
    severity = "Fatal" if found.fatal else "Non-fatal"
    return f"nvidia-nvswitch{found.switch}: SXid (PCI:{found.pci}): {found.code}, {severity}, {link}{found.message}"


def action_for(found: SXidLine) -> hevent.RecommendedAction:
    if found.code in BENIGN or not found.fatal:
        return hevent.RecommendedAction.NONE
    return hevent.RecommendedAction.CONTACT_SUPPORT


def entities(found: SXidLine) -> list[hevent.Entity]:
    out = [
        hevent.Entity(entityType="NVSWITCH", entityValue=str(found.switch)),
        hevent.Entity(entityType="PCI", entityValue=found.pci),
    ]
    if found.link is not None:
        out.append(hevent.Entity(entityType="NVLINK", entityValue=str(found.link)))
    return out
