"""The ``nvsentinel monitor`` commands behind their flags: run a monitor and show its events.

``nvsentinel/monitor.py`` declares the flags, builds the request and calls one function here per
kind of monitor, with the output format it has already checked (so a bad ``-o`` is refused before
anything is read or published). The events go through ``shared.output.Stream``: NDJSON as they are
found with ``-o json``, a table or document at the end otherwise, with the columns ``report``
declares. Reading, memory and publishing stay with the monitors (``syslog``, ``agent``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from shared import output
from shared.health.monitors import agent, report, syslog

if TYPE_CHECKING:
    from shared.metrics import MetricsServer

MONITOR_PREFIX = "nvsentinel_monitor_"


@contextlib.contextmanager
def serving_metrics(address: str | None) -> Iterator[MetricsServer | None]:
    """``--metrics-addr``: the monitor's own metrics (``nvsentinel_monitor_*``) while it runs; nothing
    without it (and prometheus_client is then not even imported)."""
    if not address:
        yield None
        return
    from shared import metrics

    server = metrics.serve(address, prefixes=(MONITOR_PREFIX,))
    try:
        yield server
    finally:
        if server is not None:
            server.stop()


def xid(request: syslog.XidRequest, *, fmt: output.Format, cluster: agent.Connection) -> None:
    """``monitor xid``: the Xid events of a kernel log read once, followed, or of the journal."""
    stream = output.Stream(fmt, record=report.record)
    syslog.run(request, cluster=cluster, emit=stream.add)
    stream.close(columns=report.xid_columns(follow=request.follow))


def poll(kind: agent.Kind, request: agent.PollRequest, *, fmt: output.Format, cluster: agent.Connection) -> None:
    """``monitor dcgm|nic|csp``: the events of each poll, as they change."""
    stream = output.Stream(fmt, record=report.record)
    agent.run(kind, request, cluster=cluster, emit=stream.add)
    stream.close(columns=report.EVENT_COLUMNS)
