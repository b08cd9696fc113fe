"""``make demo``: docs/demo.py walks the whole life of a cluster, exits 0 and leaves nothing running.

The walk runs as ``make demo`` runs it (the virtual environment's Python, a subprocess, its own
temporary directory). Every process it starts inherits a marker in its environment; afterwards no
process carrying the marker may be alive — also after a Ctrl-C in the middle of the walk, while
the simulated cluster, ``nvsentinel run`` and a monitor are running in the background.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "docs" / "demo.py"
MARKER = "DEMO_TEST_MARKER"
WALK_SECONDS = 900
"""Real seconds the walk may take: about a minute on an idle machine; generous, so that only a hung
walk reaches it, also on a busy one (the walk's own waits are for conditions: docs/demo.py)."""

pytestmark = [pytest.mark.slow]


def _environment(tmp_path: Path) -> tuple[dict[str, str], str]:
    token = uuid.uuid4().hex
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONUNBUFFERED="1")
    env[MARKER] = token
    return env, f"{MARKER}={token}"


def _marked(tag: str) -> list[str]:
    """Command lines of live processes whose environment carries ``tag``."""
    found = []
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if tag.encode() in environ and state != "Z":
                found.append(f"{entry.name}: {cmdline.strip()}")
        return found
    listing = subprocess.run(
        ["ps", "eww", "-A", "-o", "pid=,command="], capture_output=True, text=True, check=True
    ).stdout
    return [line.strip() for line in listing.splitlines() if tag in line.split()]


def _survivors(tag: str) -> list[str]:
    """What is still alive after a grace (a killed process may take a moment to go, longer on a
    busy machine): generous real time, ended as soon as none is left."""
    deadline = time.monotonic() + WALK_SECONDS / 10
    while (left := _marked(tag)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.mark.timeout(WALK_SECONDS + 120)
def test_demo_walks_the_lifecycle_exits_0_and_leaves_no_process(tmp_path: Path) -> None:
    env, tag = _environment(tmp_path)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(DEMO)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WALK_SECONDS,
        check=False,
    )
    elapsed = time.monotonic() - started
    output = proc.stdout + proc.stderr
    try:
        assert proc.returncode == 0, output[-4000:]
        assert not _survivors(tag), _survivors(tag)
        # The steps the walk promises, each seen in the real programs' output.
        for expected in (
            "PASSED:",  # aicr validate
            "node-005  ThresholdViolation",  # certification names the 40 % NIC
            "Quarantined by NIC health monitor fatal error ruleset: subject=node-005",  # monitor mode
            "Quarantined by GPU fatal error ruleset: subject=node-002",  # enforcing, the seed's rule set
            "evicted tenant-a/trainer",  # drain
            "created RebootNode maintenance-node-002-",  # remediation
            "takes the node over",  # quarantine hands over to validation
            "Succeeded: every test passed on node-002",  # pass
            "node-002: schedulable, taints: none",  # the quarantine taint went with the gate
            "node-002 condition SysLogsXIDError=False (ValidationPassed): ValidationRequest node-002-validation-",
            "k8saas.nvidia.com/uncordon-by=NVSentinel",  # written once the node is really uncordoned
            "change(s):",  # drift
            "after-driver-upgrade  Succeeded  node-001",  # re-certification
            "No drift between cm://default/golden and live cluster.",
        ):
            assert expected in output, f"missing {expected!r} in the demo's output:\n{output[-4000:]}"
        assert "$ nvsentinel run -f nvsentinel-values.yaml --enforce" in output
        assert "$ nvsentinel monitor xid --node-root nodes --follow" in output
        print(f"demo walk: {elapsed:.0f} s")
    finally:
        for line in _marked(tag):
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)


@pytest.mark.timeout(WALK_SECONDS + 120)
def test_ctrl_c_in_the_middle_stops_every_background_program(tmp_path: Path) -> None:
    env, tag = _environment(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, str(DEMO)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("=== 13."):  # the cluster, nvsentinel run and the xid monitor are running
                break
        assert seen and seen[-1].startswith("=== 13."), "".join(seen[-40:])
        assert len(_marked(tag)) >= 4, _marked(tag)  # the demo and its three background programs
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=WALK_SECONDS / 10)
        assert proc.returncode == 130, "".join(seen[-20:]) + rest
        assert "demo: interrupted" in rest
        assert not _survivors(tag), _survivors(tag)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for line in _marked(tag):
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)
