"""Kernel messages from the systemd journal, for the xid monitor (``monitor xid --journal``).

Hosts that keep no kern.log have the kernel ring buffer only in the journal. Two of journalctl's
output formats are read, from a file or stdin:

- ``journal-json`` (``journalctl -k -o json``): one JSON object per line; ``MESSAGE`` is a string,
  or an array of byte values when the message is not UTF-8;
- ``journal-export`` (``journalctl -k -o export``, the journal export format): records separated
  by an empty line, each field ``NAME=value`` on one line, or — for values with newlines or binary
  data — ``NAME``, a newline, the length as 64-bit little-endian, the bytes and a newline.

Without ``--file`` on a host, ``journalctl -k -o json`` is run once. Only kernel records count
(``_TRANSPORT=kernel`` or ``SYSLOG_IDENTIFIER=kernel``; a record with neither is taken as one, as
in a filtered export). The record's ``__REALTIME_TIMESTAMP`` is the event's time — more exact than
any stamp inside the message — and ``_HOSTNAME`` names the node when ``--node`` is not given.
Every message then goes through the same Xid parser as a kernel log, so both inputs give the same
events.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from shared import errors
from shared.health import event as hevent
from shared.health import kernlog

Format = Literal["journal-json", "journal-export"]
FORMATS: tuple[str, ...] = ("journal-json", "journal-export")
JOURNALCTL_TIMEOUT = 60.0


@dataclass(frozen=True)
class Record:
    """One kernel message of the journal."""

    message: str
    when: datetime | None
    host: str


def detect(data: bytes) -> Format:
    """JSON records start with ``{``; anything else is read as the export format."""
    return "journal-json" if data.lstrip()[:1] == b"{" else "journal-export"


def _text(value: object) -> str:
    if isinstance(value, list):  # journalctl -o json writes non-UTF-8 messages as byte arrays
        try:
            return bytes(int(b) & 0xFF for b in value).decode("utf-8", "replace")
        except (TypeError, ValueError):
            return ""
    return "" if value is None else str(value)


def _record(fields: dict[str, str]) -> Record | None:
    transport, ident = fields.get("_TRANSPORT"), fields.get("SYSLOG_IDENTIFIER")
    if (transport or ident) and transport != "kernel" and ident != "kernel":
        return None
    if "MESSAGE" not in fields:
        return None
    when = None
    stamp = fields.get("__REALTIME_TIMESTAMP", "")
    if stamp.isdigit():
        when = datetime.fromtimestamp(int(stamp) / 1_000_000, UTC)
    return Record(fields["MESSAGE"], when, fields.get("_HOSTNAME", ""))


def json_record(raw: bytes | str, *, number: int, source: str) -> Record | None:
    """One line of ``journalctl -o json``: its kernel record, None for another service's or a blank line."""
    if not raw.strip():
        return None
    try:
        obj = json.loads(raw)
    except ValueError:
        raise errors.InvalidInput(
            f"line {number}: not a journal JSON record (journalctl -o json)", where=source
        ) from None
    if not isinstance(obj, dict):
        raise errors.InvalidInput(f"line {number}: a journal JSON record is an object", where=source)
    return _record({str(k): _text(v) for k, v in obj.items()})


def parse_json(data: bytes, *, source: str) -> Iterator[Record]:
    for number, raw in enumerate(data.splitlines(), start=1):
        record = json_record(raw, number=number, source=source)
        if record is not None:
            yield record


def parse_export(data: bytes, *, source: str) -> Iterator[Record]:
    for fields in _export_entries(data, source=source):
        record = _record(fields)
        if record is not None:
            yield record


def _export_entries(data: bytes, *, source: str) -> Iterator[dict[str, str]]:
    """Each entry's fields, in order: an entry ends at an empty line or at the end of the data."""
    fields: dict[str, str] = {}
    pos, line_number = 0, 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            end = len(data)
        line = data[pos:end]
        line_number += 1
        pos = end + 1
        if not line:
            if fields:
                yield fields
            fields = {}
            continue
        name, eq, value = line.partition(b"=")
        if not eq:
            value, pos = _binary_value(data, pos, name=name.decode("utf-8", "replace"), line=line_number, source=source)
            line_number += value.count(b"\n") + 1
        fields[name.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    if fields:
        yield fields


def _binary_value(data: bytes, pos: int, *, name: str, line: int, source: str) -> tuple[bytes, int]:
    """A binary field's value at ``pos`` and the position after it.

    After ``NAME\\n`` come a 64-bit little-endian length, the data and ``\\n``.
    """
    if pos + 8 > len(data):
        raise errors.InvalidInput(f"line {line}: field {name!r} has no value (journal export format)", where=source)
    (size,) = struct.unpack("<Q", data[pos : pos + 8])
    start = pos + 8
    if start + size > len(data) or data[start + size : start + size + 1] not in (b"\n", b""):
        raise errors.InvalidInput(f"line {line}: field {name!r} is cut short (journal export format)", where=source)
    return data[start : start + size], start + size + 1


def parse(data: bytes, fmt: Format | None, *, source: str) -> list[Record]:
    """Kernel records of a journal dump, in order (``fmt`` None: detected)."""
    chosen = fmt or detect(data)
    return list(parse_json(data, source=source) if chosen == "journal-json" else parse_export(data, source=source))


def read_host() -> bytes:
    """``journalctl -k -o json`` on this host (the current boot's kernel messages)."""
    binary = shutil.which("journalctl")
    if binary is None:
        raise errors.NotFound("journalctl is not installed; pass the journal with --file", where="--journal")
    try:
        done = subprocess.run(
            [binary, "-k", "-o", "json", "--no-pager"], capture_output=True, timeout=JOURNALCTL_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise errors.Unavailable(
            f"journalctl did not answer within {JOURNALCTL_TIMEOUT:.0f}s", where="--journal"
        ) from None
    if done.returncode != 0:
        first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[0]
        raise errors.Unavailable(f"journalctl exited {done.returncode}: {first}", where="--journal")
    return done.stdout


def events(
    records: list[Record], *, node: str | None, now: datetime, boot_time: datetime | None = None
) -> list[hevent.HealthEvent]:
    """The records' events (Xid, SXid, fallen off the bus), in order; one scanner per node."""
    scanners: dict[str, kernlog.Scanner] = {}
    out = []
    for number, record in enumerate(records, start=1):
        name = node or record.host
        if not name:
            raise errors.InvalidInput(f"record {number} has no _HOSTNAME; name the node with --node", where="--node")
        scanner = scanners.setdefault(name, kernlog.Scanner(name, boot_time=boot_time, year=now.year))
        for line in record.message.splitlines() or [""]:
            out += scanner.scan(number, line, now=now, when=record.when)
    return out
