"""nvsentinel refuses unusable input files with one stderr line naming the file and exit 2.

Covers: ``monitor dcgm --state`` holding binary data, text that is not UTF-8, or JSON that is not
an object; ``monitor dcgm --file`` missing or a directory; ``monitor xid --file`` not UTF-8;
``events publish`` from JSON nested past the layer's limit (before any cluster is contacted). None
prints a traceback or anything on stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import files

DCGM = '{"gpus": []}\n'


def _refused(result: Any, path: Path, message: str) -> None:
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == f"error: {path}: {message}\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"re\0ported": {}}', "binary data: NUL byte at offset 4 (line 1)"),
        (b'{\n"reported": "\xc3("}', "not UTF-8 text: byte 0xc3 at offset 15 (line 2)"),
        (b"[]", "monitor state must be a JSON object"),
    ],
    ids=["binary", "not-utf8", "a-list"],
)
def test_monitor_state_that_cannot_be_used_exits_2(run_cli: Any, tmp_path: Path, content: bytes, message: str) -> None:
    state, dcgm = tmp_path / "state.json", tmp_path / "dcgm.json"
    state.write_bytes(content)
    dcgm.write_text(DCGM)
    args = ("--node", "n1", "--file", str(dcgm), "--state", str(state), "--dry-run")
    _refused(run_cli("nvsentinel", "monitor", "dcgm", *args), state, message)


@pytest.mark.parametrize(
    ("make", "message"), [("absent", "file does not exist"), ("folder", "is a directory, expected a file")]
)
def test_a_dcgm_file_that_is_missing_or_a_directory_exits_2(
    run_cli: Any, tmp_path: Path, make: str, message: str
) -> None:
    dcgm = tmp_path / "dcgm.json"
    if make == "folder":
        dcgm.mkdir()
    _refused(run_cli("nvsentinel", "monitor", "dcgm", "--node", "n1", "--file", str(dcgm), "--dry-run"), dcgm, message)


def test_a_kernel_log_that_is_not_utf8_exits_2(run_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_bytes(b"ok\nNVRM: Xid (PCI:0000:17:00): 79, \xff\n")
    result = run_cli("nvsentinel", "monitor", "xid", "--node", "n1", "--file", str(log), "--dry-run")
    _refused(result, log, "not UTF-8 text: byte 0xff at offset 35 (line 2)")


def test_events_nested_past_the_limit_exit_2_before_any_cluster_is_asked(run_cli: Any, tmp_path: Path) -> None:
    events = tmp_path / "events.json"
    depth = files.MAX_NESTING + 1
    events.write_text("[" * depth + "]" * depth)
    result = run_cli("nvsentinel", "events", "publish", "-f", str(events), "--kubeconfig", str(tmp_path / "none"))
    _refused(result, events, f"JSON nested deeper than {files.MAX_NESTING} levels")
