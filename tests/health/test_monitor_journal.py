"""The xid monitor reading the systemd journal (``journalctl -k -o json`` and the export format).

Covers: a journal built from reference/samples/xid (each line's kernel message as journald keeps
it, without the log's own stamp) gives, in both formats, the events EXPECTED.tsv lists — stamped
with the records' __REALTIME_TIMESTAMP and the GPU UUIDs learnt from earlier records; byte-array
and binary-field messages; non-kernel records are ignored; the node defaults to _HOSTNAME; the
CLI reads a file or stdin and refuses bad input naming the place (exit 2).
"""

from __future__ import annotations

import csv
import io
import json
import struct
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.health import gpufallen, kernlog, xid
from shared.health.monitors import journal

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def kernel_message(line: str) -> str:
    """What journald stores for a kernel line: the message without dmesg/syslog/uptime stamps."""
    return line[line.index("NVRM:") :] if "NVRM:" in line else line


def samples(team_shared: Path) -> tuple[list[str], list[dict[str, str]]]:
    folder = team_shared / "reference/samples/xid"
    lines = (folder / "kernel-log-lines.txt").read_text().splitlines()
    with (folder / "EXPECTED.tsv").open() as handle:
        expected = [r for r in csv.DictReader(handle, delimiter="\t") if r["is_xid"] == "1"]
    return lines, expected


def records(lines: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        out.append(
            {
                "__REALTIME_TIMESTAMP": str(int((START + timedelta(seconds=i)).timestamp() * 1_000_000)),
                "_TRANSPORT": "kernel",
                "SYSLOG_IDENTIFIER": "kernel",
                "PRIORITY": "3",
                "_HOSTNAME": "gpu-node-7",
                "MESSAGE": kernel_message(line),
            }
        )
        if i == 2:  # other services' records in between are not kernel messages
            out.append(
                {
                    "__REALTIME_TIMESTAMP": "1",
                    "_TRANSPORT": "syslog",
                    "SYSLOG_IDENTIFIER": "sshd",
                    "_HOSTNAME": "gpu-node-7",
                    "MESSAGE": "NVRM: Xid (PCI:0000:99:00): 79, spoofed",
                }
            )
    return out


def as_json(items: list[dict[str, Any]]) -> bytes:
    lines = []
    for i, item in enumerate(items):
        if i == 1:  # journalctl writes a message that is not valid UTF-8 as an array of bytes
            item = {**item, "MESSAGE": list(item["MESSAGE"].encode())}
        lines.append(json.dumps(item))
    return ("\n".join(lines) + "\n").encode()


def as_export(items: list[dict[str, Any]]) -> bytes:
    out = b""
    for i, item in enumerate(items):
        for key, value in item.items():
            data = str(value).encode()
            if key == "MESSAGE" and i % 2:  # the binary-safe field form
                out += key.encode() + b"\n" + struct.pack("<Q", len(data)) + data + b"\n"
            else:
                out += key.encode() + b"=" + data + b"\n"
        out += b"\n"
    return out


def summary(events: list[Any]) -> list[tuple[str, str, str, str]]:
    return [
        (e.errorCode[0], e.entitiesImpacted[0].entityValue, e.metadata.get("pid", ""), e.message[:70].rstrip())
        for e in events
    ]


@pytest.mark.parametrize("encode", [as_json, as_export], ids=["journal-json", "journal-export"])
def test_a_journal_of_the_samples_gives_the_expected_events(team_shared: Path, encode: Any) -> None:
    lines, expected = samples(team_shared)
    items = records(lines)
    data = encode(items)
    parsed = journal.parse(data, None, source="dump")
    assert len(parsed) == len(lines)
    events = journal.events(parsed, node=None, now=START)
    xids = [e for e in events if e.checkName == xid.CHECK]
    assert summary(xids) == [
        (r["xid_code"], r["pci_bus_id"], r["pid"], r["message_excerpt"].rstrip()) for r in expected
    ]
    # the GPU the driver could not bring up (lines 29-34) and the one fallen off the bus without an Xid (41-43)
    lost = [(e.checkName, e.errorCode, e.entitiesImpacted[0].entityValue) for e in events if e not in xids]
    assert lost == [
        (gpufallen.CHECK, [gpufallen.INIT_FAILED], "0000:0a:00"),
        (gpufallen.CHECK, [gpufallen.FALLEN], "0000:b3:00"),
    ]
    by_line = {int(r["line_number"]): r for r in expected}
    first = by_line[min(by_line)]
    assert events[0].generatedTimestamp == START + timedelta(seconds=int(first["line_number"]) - 1)
    assert {e.nodeName for e in events} == {"gpu-node-7"}
    assert {(e.agent, e.componentClass) for e in events} == {(xid.AGENT, xid.COMPONENT)}
    text_events = kernlog.events_from_text("\n".join(lines), node="gpu-node-7", now=START)
    assert [e.entitiesImpacted for e in events] == [e.entitiesImpacted for e in text_events]  # GPU UUIDs too
    assert [e.recommendedAction for e in events] == [e.recommendedAction for e in text_events]


def test_a_record_without_a_host_needs_the_node_flag() -> None:
    data = json.dumps({"MESSAGE": "NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."}).encode()
    with pytest.raises(errors.InvalidInput, match="--node"):
        journal.events(journal.parse(data, "journal-json", source="d"), node=None, now=START)
    (event,) = journal.events(journal.parse(data, "journal-json", source="d"), node="n1", now=START)
    assert (event.nodeName, event.errorCode, event.generatedTimestamp) == ("n1", ["79"], START)


def test_cli_reads_a_journal_file_and_stdin(
    run_cli: Any, team_shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines, expected = samples(team_shared)
    dump = tmp_path / "kernel.json"
    dump.write_bytes(as_json(records(lines)))
    done = run_cli("nvsentinel", "monitor", "xid", "--journal", "--file", str(dump), "--dry-run", "-o", "json")
    assert done.code == 0, done.stderr
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [p["errorCode"] for p in printed if p["checkName"] == xid.CHECK] == [[r["xid_code"]] for r in expected]
    assert [p["checkName"] for p in printed].count(gpufallen.CHECK) == 2
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(as_export(records(lines)))))
    piped = run_cli(
        "nvsentinel",
        "monitor",
        "xid",
        "--format",
        "journal-export",
        "--file",
        "-",
        "--node",
        "n2",
        "--dry-run",
        "-o",
        "json",
    )
    assert piped.code == 0, piped.stderr
    assert [json.loads(line)["nodeName"] for line in piped.stdout.splitlines()] == ["n2"] * (len(expected) + 2)


@pytest.mark.parametrize(
    ("args", "content", "message"),
    [
        (["--journal"], b'{"MESSAGE": "x"}\nnot json\n', "line 2: not a journal JSON record"),
        (["--format", "journal-export"], b"MESSAGE\n\x05\x00", "field 'MESSAGE' has no value"),
        (["--format", "journal-export"], b"MESSAGE\n" + struct.pack("<Q", 50) + b"short\n", "cut short"),
        (["--format", "syslog"], b"", "--format"),
    ],
    ids=["bad-json", "missing-length", "short-binary", "unknown-format"],
)
def test_cli_refuses_bad_journal_input_with_one_line(
    run_cli: Any, tmp_path: Path, args: list[str], content: bytes, message: str
) -> None:
    dump = tmp_path / "dump"
    dump.write_bytes(content)
    done = run_cli("nvsentinel", "monitor", "xid", *args, "--file", str(dump), "--node", "n", "--dry-run")
    assert done.code == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
