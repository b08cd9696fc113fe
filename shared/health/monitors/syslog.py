"""The syslog health monitor: events from kernel logs, read once, followed, or from the journal.

``nvsentinel monitor xid`` is upstream's syslog-health-monitor: checks ``SysLogsXIDError``,
``SysLogsSXIDError`` (NVSwitch) and ``SysLogsGPUFallenOff`` (``shared.health.kernlog``). One
request chooses the source: a kernel log (``--file``, stdin, or every ``DIR/<node>/kern.log`` of a
node root) read once; the same logs followed as they grow (``--follow``, ``tail.follow_xid``); or
a systemd journal dump (``--journal``, ``journal``). Every path parses lines with
``shared.health.kernlog``, publishes through ``agent.publisher`` (nothing with ``dry_run``) and hands
each batch to the caller's ``emit`` as it is found. How the events are printed is the caller's
(``report`` has the tables); this module never writes to stdout.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from shared import clock, durations, errors, files
from shared.health import event as hevent
from shared.health.monitors import agent

InputFormat = Literal["text", "journal-json", "journal-export"]
INPUT_FORMATS: tuple[str, ...] = ("text", "journal-json", "journal-export")
FOLLOW_INTERVAL = "1s"
"""How often ``--follow`` looks for appended lines when no ``--interval`` is given."""


class XidRequest(BaseModel):
    """What ``monitor xid`` was asked to read, flags as typed (checked by ``run``)."""

    model_config = ConfigDict(frozen=True)

    file: str | None = None
    node: str | None = None
    node_root: Path | None = None
    boot_time: str | None = None
    dry_run: bool = False
    follow: bool = False
    interval: str | None = None
    duration: str | None = None
    journal: bool = False
    input_format: str = "text"


def run(
    request: XidRequest, *, cluster: agent.Connection, emit: Callable[[list[hevent.HealthEvent]], None]
) -> list[hevent.HealthEvent]:
    """Read, publish and ``emit`` the Xid events ``request`` asks for; all of them, in order.

    InvalidInput for flags that do not go together (named by the flag) and for a file that cannot
    be read (missing, a directory, too large, not UTF-8). ``cluster`` is used only to publish.
    """
    if request.input_format not in INPUT_FORMATS:
        raise errors.InvalidInput(
            f"unknown input format {request.input_format!r} ({', '.join(INPUT_FORMATS)})", where="--format"
        )
    if (request.journal or request.input_format != "text") and request.follow:
        return _follow_journal(request, cluster=cluster, emit=emit)
    if request.journal or request.input_format != "text":
        events = _counting_errors(_journal_events, request)
    elif request.follow:
        return _follow(request, cluster=cluster, emit=emit)
    else:
        if request.interval is not None or request.duration is not None:
            raise errors.InvalidInput("--interval and --for need --follow", where="--follow")
        events = _counting_errors(_log_events, request)
    agent.publisher(cluster, request.dry_run)(events)
    emit(events)
    return events


def _counting_errors(
    read: Callable[[XidRequest], list[hevent.HealthEvent]], request: XidRequest
) -> list[hevent.HealthEvent]:
    """``read(request)``, a failure counted into ``nvsentinel_monitor_read_errors_total{monitor="xid"}``."""
    try:
        return read(request)
    except errors.ToolError:
        agent.READ_ERRORS.inc(monitor="xid")
        raise


def _boot(request: XidRequest) -> datetime | None:
    """``--boot-time`` as an aware time; exit 2 naming the flag for anything but RFC 3339."""
    if not request.boot_time:
        return None
    try:
        boot = datetime.fromisoformat(request.boot_time.replace("Z", "+00:00"))
    except ValueError:
        raise errors.InvalidInput(
            f"invalid time {request.boot_time!r}: expected RFC 3339, e.g. 2026-01-01T00:00:00Z", where="--boot-time"
        ) from None
    if boot.tzinfo is None:
        raise errors.InvalidInput(
            f"invalid time {request.boot_time!r}: give the offset, e.g. 2026-01-01T00:00:00Z", where="--boot-time"
        )
    return boot


def _log_events(request: XidRequest) -> list[hevent.HealthEvent]:
    """Every event of one kernel log (``--file``, stdin) or of each ``DIR/<node>/kern.log``."""
    from shared.health import kernlog

    boot, now = _boot(request), clock.WALL.now()
    sources: list[tuple[str, str]] = []
    if request.node_root is not None:
        if not request.node_root.is_dir():  # as the other monitors: not an empty cluster
            raise errors.NotFound("node root not found", where=str(request.node_root))
        logs = sorted(request.node_root.glob("*/kern.log"))
        for log in logs:
            agent.check_node(log.parent.name, where=str(log.parent))
        sources = [(log.parent.name, files.read_text(log)) for log in logs]
    else:
        if not request.node:
            raise errors.InvalidInput("--node is required with --file", where="--node")
        agent.check_node(request.node)
        file = request.file
        text = files.read_stdin(where="-") if file in (None, "-") else files.read_text(Path(str(file)))
        sources = [(request.node, text)]
    return [e for name, text in sources for e in kernlog.events_from_text(text, node=name, now=now, boot_time=boot)]


def _journal_events(request: XidRequest) -> list[hevent.HealthEvent]:
    """``--journal``: the dump from --file, stdin (-) or this host's journalctl, parsed to Xid events."""
    from shared.health.monitors import journal

    if request.node_root is not None:
        raise errors.InvalidInput("--journal reads --file or stdin, not --node-root", where="--node-root")
    if request.file == "-":
        data, source = files.read_stdin_bytes(), files.STDIN
    elif request.file is not None:
        data, source = files.read_bytes(Path(request.file)), request.file
    else:
        data, source = journal.read_host(), "journalctl"
    fmt: Any = None if request.input_format == "text" else request.input_format
    parsed = journal.parse(data, fmt, source=source)
    return journal.events(parsed, node=request.node, now=clock.WALL.now(), boot_time=_boot(request))


def _follow_journal(
    request: XidRequest, *, cluster: agent.Connection, emit: Callable[[list[hevent.HealthEvent]], None]
) -> list[hevent.HealthEvent]:
    """``--journal --follow``: journal JSON records from a growing file or ``journalctl -k -f``."""
    from shared.health.monitors import journal_follow

    if request.input_format == "journal-export":
        raise errors.InvalidInput(
            "--follow reads journal-json (journalctl -k -f -o json); the export format cannot be followed",
            where="--format",
        )
    if request.node_root is not None:
        raise errors.InvalidInput("--journal reads --file or this host's journal, not --node-root", where="--node-root")
    lines, source = journal_follow.open_source(request.file)
    return journal_follow.follow(
        lines,
        source=source,
        node=request.node,
        boot_time=_boot(request),
        interval=durations.parse(request.interval or FOLLOW_INTERVAL, where="--interval"),
        duration=None if request.duration is None else durations.parse(request.duration, where="--for"),
        dry_run=request.dry_run,
        cluster=cluster,
        emit=emit,
        now=clock.WALL.now,
    )


def _follow(
    request: XidRequest, *, cluster: agent.Connection, emit: Callable[[list[hevent.HealthEvent]], None]
) -> list[hevent.HealthEvent]:
    """``--follow``: the logs from their start, then every interval the lines appended."""
    from shared.health.monitors import tail

    return tail.follow_xid(
        file=request.file,
        node=request.node,
        node_root=request.node_root,
        boot_time=_boot(request),
        interval=durations.parse(request.interval or FOLLOW_INTERVAL, where="--interval"),
        duration=None if request.duration is None else durations.parse(request.duration, where="--for"),
        dry_run=request.dry_run,
        cluster=cluster,
        emit=emit,
        now=clock.WALL.now,
    )
