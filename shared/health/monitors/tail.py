"""``monitor xid --follow``: tail growing kernel logs, surviving truncation and rotation.

``Tail`` keeps the open file, its inode and the offset read so far. Each ``read`` returns the
complete lines appended since the last one (a trailing partial line waits for its newline). When
the path is a new file (rotation: the inode changed) the rest of the old file is read first, then
the new one from its start; when the file shrank below the offset (``truncate``, ``> kern.log``)
it is read again from the start. A path that is missing for a while (between rename and re-create)
yields nothing. The loop is ``agent.poll``, so ``--interval``/``--for`` bound it as for the other
monitors, in the caller's thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO

from shared import errors, files
from shared.health import event as hevent
from shared.health import kernlog
from shared.health.monitors import agent


class Tail:
    """New complete lines of one path, across truncation and rotation."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: IO[bytes] | None = None
        self.inode: int | None = None
        self.partial = b""

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def _drain(self) -> bytes:
        return b"" if self.handle is None else self.handle.read()

    def read(self) -> list[str]:
        data = b""
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return self._split(self._drain())  # rotated away: finish the old file, wait for the new
        if self.handle is not None and status.st_ino != self.inode:
            data += self._drain()  # rotated: the old file's rest first
            self.close()
            self.partial, data = self.partial + data, b""
            if self.partial and not self.partial.endswith(b"\n"):
                self.partial += b"\n"  # a line cut by rotation still ends there
        if self.handle is None:
            self.handle = files.open_binary(self.path)
            self.inode = status.st_ino
        elif status.st_size < self.handle.tell():
            self.handle.seek(0)  # truncated: read it again from the start
            self.partial = b""
        return self._split(data + self._drain())

    def _split(self, data: bytes) -> list[str]:
        *lines, self.partial = (self.partial + data).split(b"\n")
        return [line.decode("utf-8", "replace") for line in lines]


class XidFollower:
    """One node's log: a ``Tail`` plus the scanner's state (bus id → GPU, started messages, line numbers)."""

    def __init__(self, node: str, path: Path, *, boot_time: datetime | None, now: datetime) -> None:
        self.node, self.tail = node, Tail(path)
        self.scanner = kernlog.Scanner(node, boot_time=boot_time, year=now.year)
        self.number = 0

    def read(self, now: datetime) -> list[hevent.HealthEvent]:
        out = []
        for line in self.tail.read():
            self.number += 1
            out += self.scanner.scan(self.number, line, now=now)
        return out


def follow_xid(
    *,
    file: str | None,
    node: str | None,
    node_root: Path | None,
    boot_time: datetime | None,
    interval: float,
    duration: float | None,
    dry_run: bool,
    cluster: agent.Connection,
    emit: Callable[[list[hevent.HealthEvent]], None],
    now: Callable[[], datetime],
) -> list[hevent.HealthEvent]:
    """Read each log from its start, then every ``interval`` the lines appended; publish and emit each batch."""
    start = now()
    if node_root is not None:
        if not node_root.is_dir():
            raise errors.NotFound("node root not found", where=str(node_root))
        logs = [(p.parent.name, p) for p in sorted(node_root.glob("*/kern.log"))]
    else:
        if file in (None, "-"):
            raise errors.InvalidInput("--follow needs --file or --node-root (not stdin)", where="--follow")
        if not node:
            raise errors.InvalidInput("--node is required with --file", where="--node")
        path = Path(str(file))
        if not path.exists():
            raise errors.InvalidInput("file does not exist", where=str(path))
        logs = [(node, path)]
    followers = [XidFollower(name, path, boot_time=boot_time, now=start) for name, path in logs]
    publish = agent.publisher(cluster, dry_run)
    seen: list[hevent.HealthEvent] = []

    def sink(events: list[hevent.HealthEvent]) -> None:
        publish(events)
        seen.extend(events)
        emit(events)

    try:
        agent.poll(
            lambda moment: [e for f in followers for e in f.read(moment)],
            interval=interval,
            duration=duration,
            sink=sink,
            now=now,
        )
    finally:
        for follower in followers:
            follower.tail.close()
    return seen
