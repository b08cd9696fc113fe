"""The suite started with SIGINT ignored (the background of a script without job control) still
tests Ctrl-C: the programs it starts get SIGINT as a terminal would send it, and stop with 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests import waiting

ROOT = Path(__file__).resolve().parent.parent
K = "130-nvsentinel"
"""The quickest of the Ctrl-C cases (a program blocked reading stdin)."""


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_ctrl_c_tests_pass_when_the_suite_inherits_sigint_ignored(tmp_path: Path) -> None:
    # Its own --basetemp: without one, pytest's start-up first deletes the old numbered directories
    # of earlier sessions under the shared temporary root, minutes of work on a busy machine.
    inner = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'inner'}"]
    done = subprocess.run(
        [*inner, "tests/cli/test_exit_codes.py", "-k", K],
        cwd=ROOT,
        preexec_fn=_ignoring_sigint,  # only a signal disposition: safe before exec
        env={**os.environ, "PYTEST_ADDOPTS": ""},
        capture_output=True,
        text=True,
        timeout=waiting.REAL_SECONDS * 5,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "1 passed" in done.stdout
