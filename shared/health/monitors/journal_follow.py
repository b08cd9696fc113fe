"""``monitor xid --journal --follow``: the journal read continuously, as upstream's monitor reads journald.

Two sources of ``journalctl -k -o json`` lines, one record per line:

- a file something appends to (``journalctl -k -f -o json >> kernel.json``, a log shipper's
  spool): followed with ``tail.Tail``, so truncation and rotation lose no record and repeat none;
- this host's journal: ``journalctl -k -f -o json`` run for as long as the monitor runs, its
  output read without blocking (``PipeLines``) at every poll.

The export format cannot be followed (a binary field may hold empty lines, so a record's end is
known only from its length); ``--format journal-export`` with ``--follow`` is refused. A line that
is not a JSON record in a live stream is logged and skipped — the rest of the stream is still
good — where a one-shot read refuses the whole file. Every record goes through the node's
``kernlog.Scanner``, as a kernel log does.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Protocol

from shared import errors
from shared.health import event as hevent
from shared.health import kernlog
from shared.health.monitors import agent, journal, tail

logger = logging.getLogger(__name__)
HOST_COMMAND = ("journalctl", "-k", "-f", "-o", "json", "--no-pager", "--lines", "all")


class Lines(Protocol):
    """Where followed lines come from: ``tail.Tail`` (a file) or ``PipeLines`` (a process)."""

    def read(self) -> list[str]: ...

    def close(self) -> None: ...


class PipeLines:
    """Complete lines a child process wrote since the last ``read``, never waiting for more."""

    def __init__(self, command: Sequence[str]) -> None:
        self.process = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.stream: IO[bytes] = self.process.stdout  # type: ignore[assignment]
        os.set_blocking(self.stream.fileno(), False)
        self.partial = b""

    def read(self) -> list[str]:
        chunks = []
        while True:
            try:
                chunk = os.read(self.stream.fileno(), 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        *lines, self.partial = (self.partial + b"".join(chunks)).split(b"\n")
        return [line.decode("utf-8", "replace") for line in lines]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stream.close()


class JournalFollower:
    """Records from ``lines`` → events, one scanner per node (``--node``, else the record's host)."""

    def __init__(
        self, lines: Lines, *, source: str, node: str | None, boot_time: datetime | None, now: datetime
    ) -> None:
        self.lines, self.source, self.node = lines, source, node
        self.boot_time, self.year = boot_time, now.year
        self.scanners: dict[str, kernlog.Scanner] = {}
        self.number = 0

    def read(self, now: datetime) -> list[hevent.HealthEvent]:
        out: list[hevent.HealthEvent] = []
        for raw in self.lines.read():
            self.number += 1
            try:
                record = journal.json_record(raw, number=self.number, source=self.source)
            except errors.InvalidInput as exc:
                logger.warning("skipped: %s", exc.line(), extra={"subject": "journal"})
                continue
            if record is None:
                continue
            name = self.node or record.host
            if not name:
                logger.warning(
                    "skipped record %d: no _HOSTNAME and no --node", self.number, extra={"subject": "journal"}
                )
                continue
            scanner = self.scanners.setdefault(name, kernlog.Scanner(name, boot_time=self.boot_time, year=self.year))
            for line in record.message.splitlines() or [""]:
                out += scanner.scan(self.number, line, now=now, when=record.when)
        return out


def open_source(file: str | None, *, command: Sequence[str] = HOST_COMMAND) -> tuple[Lines, str]:
    """The followed lines and their name: ``file``, or this host's ``journalctl -k -f``."""
    if file == "-":
        raise errors.InvalidInput("--follow reads a file or this host's journal, not stdin", where="--file")
    if file is not None:
        path = Path(file)
        if not path.is_file():
            raise errors.InvalidInput("file does not exist", where=file)
        return tail.Tail(path), file
    if shutil.which(command[0]) is None:
        raise errors.NotFound(f"{command[0]} is not installed; pass the journal with --file", where="--journal")
    return PipeLines(command), command[0]


def follow(
    lines: Lines,
    *,
    source: str,
    node: str | None,
    boot_time: datetime | None,
    interval: float,
    duration: float | None,
    dry_run: bool,
    cluster: agent.Connection,
    emit: Callable[[list[hevent.HealthEvent]], None],
    now: Callable[[], datetime],
) -> list[hevent.HealthEvent]:
    """Read the records there are, then every ``interval`` the new ones; publish and emit each batch."""
    follower = JournalFollower(lines, source=source, node=node, boot_time=boot_time, now=now())
    publish = agent.publisher(cluster, dry_run)
    seen: list[hevent.HealthEvent] = []

    def sink(events: list[hevent.HealthEvent]) -> None:
        publish(events)
        seen.extend(events)
        emit(events)

    try:
        agent.poll(follower.read, interval=interval, duration=duration, sink=sink, now=now)
    finally:
        lines.close()
    return seen
