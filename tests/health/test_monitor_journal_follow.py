"""``monitor xid --journal --follow``: journal JSON records read as they are appended.

Covers: records appended to a file are read once each, a record cut mid-line waits for its
newline, a line that is not a record is skipped and the stream goes on, truncation and rotation
lose nothing and repeat nothing; the events are the same as a one-shot read gives (SXid and a
fallen-off GPU included); a child process's output (``journalctl -k -f`` on a host) is read
without blocking; the CLI follows a file and prints what is in it.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared.health.monitors import journal, journal_follow, tail

NOW = datetime(2026, 1, 1, tzinfo=UTC)
MESSAGES = [
    "NVRM: Xid (PCI:0000:a1:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "nvidia-nvswitch2: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 28 LTSSM Fault Up",
    "NVRM: The NVIDIA GPU 0000:b3:00.0",
    "NVRM: (PCI ID: 10de:26b5) installed in this system has",
    "NVRM: fallen off the bus and is not responding to commands.",
    "NVRM: Xid (PCI:0000:a1:00): 48, pid=12, name=python, DBE",
]


def record(i: int, message: str) -> str:
    fields = {"MESSAGE": message, "_TRANSPORT": "kernel", "_HOSTNAME": "gpu-7"}
    fields["__REALTIME_TIMESTAMP"] = str(1_767_225_600_000_000 + i * 1_000_000)
    return json.dumps(fields) + "\n"


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def codes(follower: journal_follow.JournalFollower) -> list[str]:
    return [e.errorCode[0] for e in follower.read(NOW)]


def make(path: Path) -> journal_follow.JournalFollower:
    return journal_follow.JournalFollower(tail.Tail(path), source=str(path), node=None, boot_time=None, now=NOW)


def test_appended_records_are_read_once_and_a_bad_line_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "kernel.json"
    path.write_text(record(0, MESSAGES[0]))
    follower = make(path)
    try:
        assert codes(follower) == ["79"]
        assert codes(follower) == []
        line = record(1, MESSAGES[1])
        append(path, line[:25])
        assert codes(follower) == []  # half a record waits for its newline
        with caplog.at_level(logging.WARNING):
            append(path, line[25:] + "not json\n" + "".join(record(i, MESSAGES[i]) for i in (2, 3, 4)))
            assert codes(follower) == ["20034", "GPU_FALLEN_OFF_BUS"]
        assert "line 3: not a journal JSON record" in caplog.text
        path.write_text(record(5, MESSAGES[5]))  # truncated, rewritten shorter
        assert codes(follower) == ["48"]
        append(path, record(6, MESSAGES[0]))
        path.rename(tmp_path / "kernel.json.1")  # rotated before the next read
        path.write_text(record(7, MESSAGES[1]))
        assert codes(follower) == ["79", "20034"]
    finally:
        follower.lines.close()


def test_followed_records_give_the_events_of_a_one_shot_read(tmp_path: Path) -> None:
    text = "".join(record(i, m) for i, m in enumerate(MESSAGES))
    once = journal.events(journal.parse(text.encode(), "journal-json", source="d"), node=None, now=NOW)
    path = tmp_path / "kernel.json"
    path.write_text("")
    follower = make(path)
    followed = []
    try:
        for i, message in enumerate(MESSAGES):
            append(path, record(i, message))
            followed += follower.read(NOW)
    finally:
        follower.lines.close()
    assert [e.wire() for e in followed] == [e.wire() for e in once]
    assert [e.checkName for e in once] == [
        "SysLogsXIDError",
        "SysLogsSXIDError",
        "SysLogsGPUFallenOff",
        "SysLogsXIDError",
    ]


def test_a_child_process_output_is_read_without_blocking(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        f"sys.stdout.write({record(0, MESSAGES[0])!r} + {record(1, MESSAGES[1])[:20]!r})\n"
        "sys.stdout.flush()\n"
        "time.sleep(600)\n"
    )
    lines = journal_follow.PipeLines([sys.executable, "-c", script])
    follower = journal_follow.JournalFollower(lines, source="child", node="n", boot_time=None, now=NOW)
    try:
        found: list[str] = []
        deadline = time.monotonic() + 60  # generous: the child only has to start
        while not found and time.monotonic() < deadline:
            found = codes(follower)  # returns at once even while the child is silent
            time.sleep(0.02)
        assert found == ["79"]
        assert codes(follower) == []  # the cut record waits, and reading does not block
    finally:
        lines.close()
    assert lines.process.poll() is not None


def test_cli_follows_a_journal_file(run_cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "kernel.json"
    path.write_text("".join(record(i, m) for i, m in enumerate(MESSAGES)))
    args = ("nvsentinel", "monitor", "xid", "--journal", "--follow", "--file", str(path), "--dry-run")
    result = run_cli(*args, "--interval", "50ms", "--for", "100ms", "-o", "json")
    assert result.code == 0, result.stderr
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(p["nodeName"], p["errorCode"]) for p in printed] == [
        ("gpu-7", ["79"]),
        ("gpu-7", ["20034"]),
        ("gpu-7", ["GPU_FALLEN_OFF_BUS"]),
        ("gpu-7", ["48"]),
    ]
    refused = run_cli("nvsentinel", "monitor", "xid", "--format", "journal-export", "--follow", "--file", str(path))
    assert refused.code == 2 and "cannot be followed" in refused.stderr
