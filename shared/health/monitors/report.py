"""How a monitor run is shown: the record of each event and the columns of its table.

A monitor's events print as NDJSON (one ``HealthEvent.wire()`` per line, as they are found), as
YAML or JSON, or as a table. The Xid monitor read once shows one row per event (the Xid, the
NVSwitch SXid or the lost GPU's code first);
followed, and for the other monitors, a row says which check and entity failed or recovered. The
tables are declared here, next to the monitors, and laid out by ``shared.output``.
"""

from __future__ import annotations

from typing import Any

from shared import output
from shared.health import event as hevent

MESSAGE_WIDTH = 60
"""Characters of an event's message a table shows; the data formats carry it whole."""


def _code(event: hevent.HealthEvent) -> str:
    """An Xid's number; ``SXid:<n>`` for an NVSwitch error; the code of a GPU lost without an Xid."""
    code = event.errorCode[0] if event.errorCode else ""
    return f"SXid:{code}" if event.checkName == "SysLogsSXIDError" else code


XID_COLUMNS = (
    output.Column("NODE", lambda e: e.nodeName),
    output.Column("XID", _code),
    output.Column("ACTION", lambda e: e.recommendedAction.name),
    output.Column("MESSAGE", lambda e: e.message[:MESSAGE_WIDTH]),
)
EVENT_COLUMNS = (
    output.Column("NODE", lambda e: e.nodeName),
    output.Column("CHECK", lambda e: e.checkName),
    output.Column("ENTITY", lambda e: e.entitiesImpacted[-1].entityValue if e.entitiesImpacted else ""),
    output.Column("FATAL", lambda e: e.isFatal),
    output.Column("HEALTHY", lambda e: e.isHealthy),
    output.Column("ACTION", lambda e: e.recommendedAction.name),
    output.Column("MESSAGE", lambda e: e.message[:MESSAGE_WIDTH]),
)


def record(event: hevent.HealthEvent) -> dict[str, Any]:
    """An event as the data formats print it: the wire form HealthEvent resources hold."""
    return event.wire()


def xid_columns(*, follow: bool) -> tuple[output.Column, ...]:
    """The Xid table for a single read; a followed log shows the event table, as the polling monitors do."""
    return EVENT_COLUMNS if follow else XID_COLUMNS
