"""``make test-under-load``'s runner (tests/underload.py): busy loops for the length of a command.

Covers: the busy loops spin while the command runs and are gone when it returns, and its exit status
is the runner's; they are stopped when the command fails, when the runner is interrupted (Ctrl-C)
or terminated; a runner killed outright leaves loops that end by themselves; a call without a
command is refused. The runner is started as ``make test-under-load`` starts it: a subprocess.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import underload, waiting

ROOT = Path(__file__).resolve().parent.parent
UNDER_LOAD = (sys.executable, "-m", "tests.underload", "--busy")

_REPORT = (
    "import os, pathlib, sys, time\n"
    "pids = os.environ['UNDERLOAD_BUSY_PIDS'].split()\n"
    "alive = [p for p in pids if pathlib.Path('/proc', p).is_dir()]\n"
    "pathlib.Path(sys.argv[1]).write_text(' '.join(alive))\n"
    "if sys.argv[2] == 'wait':\n"
    "    time.sleep(600)\n"  # until the test signals the runner
    "sys.exit(int(sys.argv[2]))\n"
)
"""The command under load: writes which busy loops it saw alive, then exits with the status asked
for, or waits to be interrupted."""


def _alive(pid: int) -> bool:
    """A process that still runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _children(parent: int) -> list[int]:
    """The pids of ``parent``'s live children."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(errors="replace").rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _runner(report: Path, status: str, *, busy: int = 2) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*UNDER_LOAD, str(busy), "--", sys.executable, "-c", _REPORT, str(report), status],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )


def _loops(report: Path) -> list[int]:
    """The busy loops' pids, once the command has written them."""
    text = waiting.until(lambda: report.exists() and report.read_text(), what="the command's report")
    return [int(pid) for pid in text.split()]


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")


@pytest.mark.parametrize("status", ["0", "3"], ids=["passing", "failing"])
def test_the_busy_loops_spin_while_the_command_runs_and_stop_after_it(tmp_path: Path, status: str) -> None:
    report = tmp_path / "report"
    runner = _runner(report, status)
    _, err = runner.communicate(timeout=waiting.REAL_SECONDS)
    assert runner.returncode == int(status), err
    seen = _loops(report)
    assert len(seen) == 2  # both were alive while the command ran
    assert not [pid for pid in seen if _alive(pid)]
    assert "busy loops stopped" in err


@pytest.mark.parametrize(("sig", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "term"])
def test_an_interrupted_or_terminated_runner_stops_its_busy_loops(
    tmp_path: Path, sig: signal.Signals, expected: int
) -> None:
    report = tmp_path / "report"
    runner = _runner(report, "wait")
    try:
        seen = _loops(report)
        assert all(_alive(pid) for pid in seen)
        runner.send_signal(sig)
        runner.communicate(timeout=waiting.REAL_SECONDS)
        assert runner.returncode == expected
        assert not [pid for pid in seen if _alive(pid)]
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
        runner.stderr.close()  # type: ignore[union-attr]  # not communicate(): an orphaned command may hold it


def test_busy_loops_outliving_a_killed_runner_end_by_themselves(tmp_path: Path) -> None:
    report = tmp_path / "report"
    runner = _runner(report, "wait")
    seen = _loops(report)
    command = [pid for pid in _children(runner.pid) if pid not in seen]
    assert len(command) == 1
    runner.kill()  # no finally runs: the loops find themselves orphaned
    os.kill(command[0], signal.SIGKILL)  # the command, orphaned too, would hold the pipe for minutes
    runner.communicate(timeout=waiting.REAL_SECONDS)  # its stderr closes when the last loop has ended
    waiting.until(lambda: not [pid for pid in seen if _alive(pid)], what="the orphaned busy loops to end")


def test_a_call_without_a_command_is_refused() -> None:
    with pytest.raises(SystemExit) as refused:
        underload.main(["--busy", "1"])
    assert refused.value.code == 2
