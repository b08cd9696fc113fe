"""``monitor xid --follow``: lines appended later, partial lines, truncation, rotation, the CLI bound by ``--for``."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared.health.monitors import tail
from tests import waiting

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def xid_line(code: int, second: int = 39) -> str:
    return f"[Fri Apr  5 21:29:{second:02d} 2024] NVRM: Xid (PCI:0000:a1:00): {code}, pid=12, name=python, boom.\n"


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def codes(follower: tail.XidFollower) -> list[str]:
    return [e.errorCode[0] for e in follower.read(NOW)]


def test_appended_lines_are_read_once_and_a_partial_line_waits_for_its_newline(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text("kernel: noise\n" + xid_line(79))
    follower = tail.XidFollower("n1", log, boot_time=None, now=NOW)
    try:
        assert codes(follower) == ["79"]
        assert codes(follower) == []
        line = xid_line(48)
        append(log, line[:30])
        assert codes(follower) == []
        append(log, line[30:] + xid_line(13))
        assert codes(follower) == ["48", "13"]
    finally:
        follower.tail.close()


def test_truncation_and_rotation_lose_no_line_and_repeat_none(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(xid_line(79) + xid_line(48))
    follower = tail.XidFollower("n1", log, boot_time=None, now=NOW)
    try:
        assert codes(follower) == ["79", "48"]
        log.write_text(xid_line(13))  # truncated and rewritten, shorter
        assert codes(follower) == ["13"]
        append(log, xid_line(31))  # written after the last read, then rotated
        log.rename(tmp_path / "kern.log.1")
        assert codes(follower) == ["31"]  # the old file's rest, while the path is missing
        log.write_text(xid_line(94))
        append(tmp_path / "kern.log.1", xid_line(95))  # late write to the rotated file
        assert codes(follower) == ["95", "94"]
        assert codes(follower) == []
    finally:
        follower.tail.close()


def _opened(path: Path) -> bool:
    """Whether this process holds ``path`` open (the follower opens it at its first read)."""
    fds = Path("/proc/self/fd")
    targets = []
    for fd in fds.iterdir() if fds.is_dir() else []:
        try:
            targets.append(fd.readlink())
        except OSError:
            continue  # closed meanwhile
    return path.resolve() in targets


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="sees the follower's open file in /proc/self/fd")
def test_cli_follow_prints_lines_appended_while_it_runs(run_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(xid_line(79))

    def later() -> None:
        # Once the follower has the file open (its first read), append: the line comes while it runs.
        waiting.until(lambda: _opened(log), what="the follower to open the log")
        append(log, xid_line(48))

    writer = threading.Thread(target=later)
    writer.start()
    try:
        result = run_cli(
            "nvsentinel",
            "monitor",
            "xid",
            "--file",
            str(log),
            "--node",
            "n1",
            "--dry-run",
            "--follow",
            "--interval",
            "50ms",
            "--for",
            "3s",  # real time left after the append (a few ms after the first read) for a read or more
        )
    finally:
        writer.join()
    assert result.code == 0, result.stderr
    assert [json.loads(line)["errorCode"] for line in result.stdout.splitlines()] == [["79"], ["48"]]
    refused = run_cli("nvsentinel", "monitor", "xid", "--file", str(log), "--node", "n1", "--for", "1s")
    assert refused.code != 0 and "--follow" in refused.stderr
    stdin = run_cli("nvsentinel", "monitor", "xid", "--node", "n1", "--follow", "--for", "1s", "--dry-run")
    assert stdin.code != 0 and "not stdin" in stdin.stderr
